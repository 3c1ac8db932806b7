"""A test Kubernetes API server: real HTTP on 127.0.0.1, in a background thread.

It speaks enough of the apiserver's REST API for dradash's capture and its tests: ``/version``,
legacy discovery (``/api``, ``/api/v1``, ``/apis``, ``/apis/{group}``, ``/apis/{group}/{version}``),
cluster-wide and per-namespace lists with ``limit``/``continue`` pagination, GET of one object,
``SelfSubjectAccessReview`` and bearer-token authentication. Errors are ``Status`` objects worded
as a real apiserver words them. Faults (403, hidden kinds, 429/5xx, expired continue tokens, slow
answers) can be switched on before or during use.

Simplifications, on purpose:

- ``fieldSelector``, ``labelSelector``, ``resourceVersion`` and ``watch`` are ignored: a list
  always answers every object of the kind (in the namespace).
- The objects never change, so a continue token is an offset into the sorted list.
- resource.k8s.io objects given as ``resource.k8s.io/v1`` are served under every configured
  version with only ``apiVersion`` rewritten (no shape conversion); objects given in an older
  version (v1beta1, v1beta2) are served under that version only.
- ``events.k8s.io/v1`` is discovered but only serves objects given in that apiVersion (core/v1
  Events are not converted).

    with KubeAPIServer(fixture_objects()) as api:
        path = api.kubeconfig(tmp_path / "kubeconfig")
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from dradash.demo.cluster import build

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "upstream"
RESOURCE_GROUP = "resource.k8s.io"
USER = "system:serviceaccount:dradash:dradash"
REDACTED_SECRET = "s3cr3t-value-that-must-never-be-stored"  # env values put into the fixture pods


@dataclass(frozen=True)
class Resource:
    plural: str
    kind: str
    namespaced: bool
    short: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ("get", "list", "watch")


CORE_RESOURCES = [
    Resource("configmaps", "ConfigMap", True, ("cm",)),
    Resource("events", "Event", True, ("ev",)),
    Resource("namespaces", "Namespace", False, ("ns",)),
    Resource("nodes", "Node", False, ("no",)),
    Resource("persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",)),
    Resource("pods", "Pod", True, ("po",)),
    Resource("secrets", "Secret", True),
    Resource("serviceaccounts", "ServiceAccount", True, ("sa",)),
    Resource("services", "Service", True, ("svc",)),
]
GROUP_RESOURCES: dict[str, dict[str, list[Resource]]] = {
    "apps": {
        "v1": [
            Resource("daemonsets", "DaemonSet", True, ("ds",)),
            Resource("deployments", "Deployment", True, ("deploy",)),
            Resource("replicasets", "ReplicaSet", True, ("rs",)),
            Resource("statefulsets", "StatefulSet", True, ("sts",)),
        ]
    },
    "batch": {
        "v1": [Resource("cronjobs", "CronJob", True, ("cj",)), Resource("jobs", "Job", True)]
    },
    "scheduling.k8s.io": {"v1": [Resource("priorityclasses", "PriorityClass", False, ("pc",))]},
    "events.k8s.io": {"v1": [Resource("events", "Event", True, ("ev",))]},
    "authorization.k8s.io": {
        "v1": [
            Resource("selfsubjectaccessreviews", "SelfSubjectAccessReview", False, (), ("create",))
        ]
    },
}
DRA_RESOURCES = [
    Resource("deviceclasses", "DeviceClass", False),
    Resource("resourceclaims", "ResourceClaim", True),
    Resource("resourceclaimtemplates", "ResourceClaimTemplate", True),
    Resource("resourceslices", "ResourceSlice", False),
]
DEVICE_TAINT_RULES = Resource("devicetaintrules", "DeviceTaintRule", False)
DEVICE_TAINT_RULE_VERSIONS = ("v1", "v1beta2", "v1alpha3")
SCHEDULING_GROUP = "scheduling.k8s.io"
# Gangs (GenericWorkload): scheduling.k8s.io/v1alpha1 (1.35) served Workloads only.
WORKLOADS = Resource("workloads", "Workload", True)
PODGROUPS = Resource("podgroups", "PodGroup", True)
# Status reasons by HTTP status, as the apiserver words them.
STATUS_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    410: "Expired",
    429: "TooManyRequests",
    500: "InternalError",
    502: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
STATUS_MESSAGES = {
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: etcdserver: request timed out",
    502: "Internal error occurred: bad gateway",
    503: "The server is currently unable to handle the request",
    504: "Timeout: request did not complete within requested timeout - context deadline exceeded",
}
EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


def status_object(code: int, message: str, reason: str | None = None, **details: Any) -> dict:
    """A ``Status`` of kind Failure, as the apiserver sends with every error."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason or STATUS_REASONS.get(code, "InternalError"),
        "code": code,
    }
    if details:
        body["details"] = details
    return body


class _Reply(Exception):
    """Raised inside the handler to answer with a status and a JSON body at once."""

    def __init__(self, code: int, body: dict, headers: dict[str, str] | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.body = body
        self.headers = headers or {}


@dataclass
class _Fault:
    prefix: str
    times: int
    status: int = 0
    retry_after: int | None = None
    seconds: float = 0.0


class KubeAPIServer:
    """A threaded HTTP server that answers like a kube-apiserver. Use as a context manager."""

    def __init__(
        self,
        objects: list[dict] | None = None,
        *,
        token: str = "test-token",
        version: str = "v1.36.1",
        resource_versions: tuple[str, ...] = ("v1", "v1beta2", "v1beta1"),
        page_delay: float = 0.0,
        device_taint_rules: bool | tuple[str, ...] | None = None,
        workload_versions: tuple[str, ...] = (),
    ) -> None:
        """``objects`` defaults to fixture_objects().

        ``device_taint_rules``: None serves devicetaintrules in the configured resource.k8s.io
        versions that have it upstream (v1, v1beta2, v1alpha3; never v1beta1); True in every
        configured version; False in none; a tuple in those versions.

        ``workload_versions``: the scheduling.k8s.io versions that serve workloads and podgroups
        (GenericWorkload on), e.g. ("v1alpha2",) for 1.36, ("v1beta1", "v1alpha3") for 1.37;
        v1alpha1 serves workloads only. None by default, as the gate is off by default. A
        Workload or PodGroup is served under every one of them that serves its kind, with only
        ``apiVersion`` rewritten.
        """
        self.token = token
        self.version = version
        self.resource_versions = tuple(resource_versions)
        self.page_delay = page_delay
        self.device_taint_rules = device_taint_rules
        self.workload_versions = tuple(workload_versions)
        self.requests: list[tuple[str, str, dict]] = []
        self.url = ""
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._forbidden: set[tuple[str, str]] = set()
        self._hidden: set[tuple[str, str]] = set()
        self._fails: list[_Fault] = []
        self._slows: list[_Fault] = []
        self._expire: dict[str, int] = {}
        self._rv = 1000
        self._discovery = self._build_discovery()
        # (group, version, plural) -> [(namespace, name, item without kind/apiVersion)], sorted
        self._lists: dict[tuple[str, str, str], list[tuple[str, str, dict]]] = {}
        self._load(fixture_objects() if objects is None else objects)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> KubeAPIServer:
        server = self

        class Handler(_Handler):
            api = server

        self._stopped.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> KubeAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def kubeconfig(self, path: str | Path, context: str = "test") -> Path:
        """Write a kubeconfig for this server (bearer token, ``context`` current); return path."""
        path = Path(path)
        if path.is_dir():
            path = path / "kubeconfig"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "test-cluster", "cluster": {"server": self.url}}],
            "users": [{"name": "test-user", "user": {"token": self.token}}],
            "contexts": [
                {"name": context, "context": {"cluster": "test-cluster", "user": "test-user"}}
            ],
            "current-context": context,
        }
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return path

    # --- faults ------------------------------------------------------------------------------

    def forbid(self, plural: str, group: str = "") -> None:
        """Lists and gets of that resource answer 403 Forbidden; SSAR says not allowed."""
        with self._lock:
            self._forbidden.add((group, plural))

    def hide(self, plural: str, group: str = "") -> None:
        """The resource is not served: absent from discovery and 404 on list/get."""
        with self._lock:
            self._hidden.add((group, plural))

    def fail(
        self, path_prefix: str, status: int, times: int = 1, retry_after: int | None = None
    ) -> None:
        """The next ``times`` requests whose path starts with the prefix answer ``status``."""
        with self._lock:
            self._fails.append(_Fault(path_prefix, times, status, retry_after))

    def expire_continue(self, plural: str, times: int = 1) -> None:
        """The next ``times`` list requests of that resource carrying a continue token get 410."""
        with self._lock:
            self._expire[plural] = self._expire.get(plural, 0) + times

    def slow(self, path_prefix: str, seconds: float, times: int = 1) -> None:
        """Delay the answer to the next ``times`` requests whose path starts with the prefix."""
        with self._lock:
            self._slows.append(_Fault(path_prefix, times, seconds=seconds))

    def reset_faults(self) -> None:
        with self._lock:
            self._forbidden.clear()
            self._hidden.clear()
            self._fails.clear()
            self._slows.clear()
            self._expire.clear()

    # --- helpers for tests -------------------------------------------------------------------

    def paths(self) -> list[str]:
        with self._lock:
            return [path for _, path, _ in self.requests]

    def _take(self, faults: list[_Fault], path: str) -> _Fault | None:
        with self._lock:
            for fault in faults:
                if fault.times > 0 and path.startswith(fault.prefix):
                    fault.times -= 1
                    return fault
        return None

    # --- the object store --------------------------------------------------------------------

    def _build_discovery(self) -> dict[tuple[str, str], list[Resource]]:
        found: dict[tuple[str, str], list[Resource]] = {("", "v1"): list(CORE_RESOURCES)}
        for group, versions in GROUP_RESOURCES.items():
            for version, resources in versions.items():
                found[(group, version)] = list(resources)
        for version in self.resource_versions:
            rules = self.device_taint_rules
            if rules is None:
                has_rules = version in DEVICE_TAINT_RULE_VERSIONS
            elif isinstance(rules, tuple):
                has_rules = version in rules
            else:
                has_rules = rules
            extra = [DEVICE_TAINT_RULES] if has_rules else []
            found[(RESOURCE_GROUP, version)] = sorted(DRA_RESOURCES + extra, key=lambda r: r.plural)
        for version in self.workload_versions:
            gangs = [PODGROUPS, WORKLOADS] if version != "v1alpha1" else [WORKLOADS]
            found.setdefault((SCHEDULING_GROUP, version), []).extend(gangs)
        return found

    def _resource(self, group: str, version: str, plural: str) -> Resource | None:
        """The served resource, or None (unknown group/version/plural, or hidden)."""
        if (group, plural) in self._hidden:
            return None
        for res in self._discovery.get((group, version), []):
            if res.plural == plural:
                return res
        return None

    def _load(self, objects: Iterable[dict]) -> None:
        by_kind: dict[tuple[str, str], Resource] = {}
        for (group, _version), resources in self._discovery.items():
            for res in resources:
                by_kind.setdefault((group, res.kind), res)
        by_kind.setdefault((RESOURCE_GROUP, "DeviceTaintRule"), DEVICE_TAINT_RULES)
        for obj in objects:
            api_version = obj.get("apiVersion", "")
            group, _, version = api_version.rpartition("/")
            res = by_kind.get((group, obj.get("kind", "")))
            if group == SCHEDULING_GROUP and obj.get("kind") in ("Workload", "PodGroup"):
                served = res is not None and version in self.workload_versions
                if not served or res not in self._discovery[(group, version)]:
                    # A cluster without GenericWorkload, or serving other versions, has none
                    # of these (the demo's 1.36 gang, on a 1.37 or a 1.35 test server).
                    continue
            if res is None:
                raise ValueError(f"the test API server does not serve {api_version} {obj['kind']}")
            item = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
            meta = item["metadata"] = dict(item.get("metadata") or {})
            if res.namespaced:
                meta.setdefault("namespace", "default")
            else:
                meta.pop("namespace", None)
            meta.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL, f"{api_version}/{meta}")))
            meta.setdefault("creationTimestamp", "2026-11-28T09:00:00Z")
            self._rv += 1
            meta.setdefault("resourceVersion", str(self._rv))
            if group == RESOURCE_GROUP and version == "v1":
                versions = self.resource_versions
            elif res in (WORKLOADS, PODGROUPS):
                versions = tuple(
                    v for v in self.workload_versions if res in self._discovery[(group, v)]
                )
            else:
                versions = (version,)
            entry = (meta.get("namespace", ""), meta["name"], item)
            for v in versions:
                self._lists.setdefault((group, v, res.plural), []).append(entry)
        for entries in self._lists.values():
            entries.sort(key=lambda e: (e[0], e[1]))

    # --- request handling (called from handler threads) --------------------------------------

    def handle(self, method: str, raw_path: str, headers: Any, body: bytes) -> tuple[int, dict]:
        split = urlsplit(raw_path)
        path = split.path.rstrip("/") or "/"
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        with self._lock:
            self.requests.append((method, path, query))
        if headers.get("Authorization", "") != f"Bearer {self.token}":
            raise _Reply(401, status_object(401, "Unauthorized"))
        fault = self._take(self._fails, path)
        if fault is not None:
            extra = {}
            details = {}
            if fault.retry_after is not None:
                extra["Retry-After"] = str(fault.retry_after)
                details["retryAfterSeconds"] = fault.retry_after
            message = STATUS_MESSAGES.get(fault.status, f"injected failure {fault.status}")
            raise _Reply(fault.status, status_object(fault.status, message, **details), extra)
        slow = self._take(self._slows, path)
        if slow is not None:
            self._stopped.wait(slow.seconds)
        if method == "POST":
            return self._post(path, body)
        if method != "GET":
            raise _Reply(
                405, status_object(405, f"method {method} not allowed", "MethodNotAllowed")
            )
        return self._get(path, query)

    def _get(self, path: str, query: dict[str, str]) -> tuple[int, dict]:
        parts = path.strip("/").split("/")
        if path == "/version":
            major, minor = self.version.lstrip("v").split(".")[:2]
            return 200, {
                "major": major,
                "minor": minor,
                "emulationMajor": major,
                "emulationMinor": minor,
                "minCompatibilityMajor": major,
                "minCompatibilityMinor": str(max(int(minor) - 1, 0)),
                "gitVersion": self.version,
                "gitCommit": "0123456789abcdef0123456789abcdef01234567",
                "gitTreeState": "clean",
                "buildDate": "2026-11-12T10:00:00Z",
                "goVersion": "go1.25.5",
                "compiler": "gc",
                "platform": "linux/amd64",
            }
        if path == "/api":
            return 200, {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}
                ],
            }
        if path == "/apis":
            return 200, {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [self._group(g) for g in self._groups()],
            }
        if parts[0] == "api" and len(parts) >= 2:
            if parts[1] != "v1":
                raise self._not_found()
            return self._resources("", "v1", parts[2:], query)
        if parts[0] == "apis" and len(parts) == 2:
            if parts[1] not in self._groups():
                raise self._not_found()
            return 200, {"kind": "APIGroup", "apiVersion": "v1", **self._group(parts[1])}
        if parts[0] == "apis" and len(parts) >= 3:
            if (parts[1], parts[2]) not in self._discovery:
                raise self._not_found()
            return self._resources(parts[1], parts[2], parts[3:], query)
        raise self._not_found()

    def _groups(self) -> list[str]:
        return list(dict.fromkeys(g for g, _ in self._discovery if g))

    def _group(self, group: str) -> dict:
        versions = [
            {"groupVersion": f"{group}/{v}", "version": v} for g, v in self._discovery if g == group
        ]
        return {"name": group, "versions": versions, "preferredVersion": versions[0]}

    def _resources(
        self, group: str, version: str, rest: list[str], query: dict[str, str]
    ) -> tuple[int, dict]:
        group_version = f"{group}/{version}" if group else version
        if not rest:
            with self._lock:
                hidden = set(self._hidden)
            resources = []
            for res in self._discovery[(group, version)]:
                if (group, res.plural) in hidden:
                    continue
                entry: dict[str, Any] = {
                    "name": res.plural,
                    "singularName": res.kind.lower(),
                    "namespaced": res.namespaced,
                    "kind": res.kind,
                    "verbs": list(res.verbs),
                }
                if res.short:
                    entry["shortNames"] = list(res.short)
                resources.append(entry)
                if res.kind in ("Pod", "ResourceClaim", "Job", "Node", "Namespace", "PodGroup"):
                    resources.append(
                        {
                            "name": f"{res.plural}/status",
                            "singularName": "",
                            "namespaced": res.namespaced,
                            "kind": res.kind,
                            "verbs": ["get", "patch", "update"],
                        }
                    )
            return 200, {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": group_version,
                "resources": resources,
            }
        namespace = ""
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        if len(rest) > 2:
            raise self._not_found()
        res = self._resource(group, version, rest[0])
        if res is None or (namespace and not res.namespaced) or "list" not in res.verbs:
            raise self._not_found()
        verb = "get" if len(rest) == 2 else "list"
        with self._lock:
            forbidden = (group, res.plural) in self._forbidden
        if forbidden:
            where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
            qualified = f"{res.plural}.{group}" if group else res.plural
            name = f' "{rest[1]}"' if verb == "get" else ""
            message = (
                f'{qualified}{name} is forbidden: User "{USER}" cannot {verb} resource '
                f'"{res.plural}" in API group "{group}" {where}'
            )
            raise _Reply(403, status_object(403, message, group=group, kind=res.plural))
        entries = self._lists.get((group, version, res.plural), [])
        if namespace:
            entries = [e for e in entries if e[0] == namespace]
        if verb == "get":
            for _, name, item in entries:
                if name == rest[1]:
                    return 200, {"kind": res.kind, "apiVersion": group_version, **item}
            message = f'{res.plural}{"." + group if group else ""} "{rest[1]}" not found'
            raise _Reply(404, status_object(404, message, name=rest[1], group=group))
        return 200, self._list(res, group_version, entries, query)

    def _list(self, res: Resource, group_version: str, entries: list, query: dict) -> dict:
        if self.page_delay:
            self._stopped.wait(self.page_delay)
        start = 0
        token = query.get("continue") or ""
        if token:
            with self._lock:
                expire = self._expire.get(res.plural, 0)
                if expire:
                    self._expire[res.plural] = expire - 1
            if expire:
                raise _Reply(410, status_object(410, EXPIRED_MESSAGE, "Expired"))
            try:
                state = json.loads(base64.urlsafe_b64decode(token.encode()))
                start = int(state["start"])
            except (ValueError, KeyError, TypeError) as e:
                raise _Reply(
                    400, status_object(400, f"continue key is not valid: {e}", "BadRequest")
                ) from e
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            limit = 0
        end = start + limit if limit > 0 else len(entries)
        metadata: dict[str, Any] = {"resourceVersion": str(self._rv)}
        if end < len(entries):
            state = {"rv": self._rv, "start": end, "r": res.plural}
            metadata["continue"] = base64.urlsafe_b64encode(json.dumps(state).encode()).decode()
            metadata["remainingItemCount"] = len(entries) - end
        return {
            "kind": f"{res.kind}List",
            "apiVersion": group_version,
            "metadata": metadata,
            "items": [item for _, _, item in entries[start:end]],
        }

    def _post(self, path: str, body: bytes) -> tuple[int, dict]:
        if path != "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
            raise self._not_found()
        try:
            review = json.loads(body or b"{}")
            attrs = review["spec"]["resourceAttributes"]
        except (ValueError, KeyError, TypeError) as e:
            raise _Reply(400, status_object(400, f"invalid SelfSubjectAccessReview: {e}")) from e
        group, plural = attrs.get("group", ""), attrs.get("resource", "")
        with self._lock:
            denied = (group, plural) in self._forbidden or plural in ("secrets", "configmaps")
        status: dict[str, Any] = {"allowed": not denied}
        if not denied:
            status["reason"] = (
                'RBAC: allowed by ClusterRoleBinding "dradash" of ClusterRole "dradash"'
            )
        return 201, {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "spec": review["spec"],
            "status": status,
        }

    @staticmethod
    def _not_found() -> _Reply:
        return _Reply(404, status_object(404, "the server could not find the requested resource"))


class _Handler(BaseHTTPRequestHandler):
    api: KubeAPIServer
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections
    disable_nagle_algorithm = True  # headers and body go out in two writes

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers: dict[str, str] = {}
        try:
            code, payload = self.api.handle(method, self.path, self.headers, body)
        except _Reply as reply:
            code, payload, headers = reply.code, reply.body, reply.headers
        except Exception as e:  # a bug in the test server: answer like an apiserver would
            code, payload = 500, status_object(500, f"test server error: {e!r}")
        data = json.dumps(payload, separators=(",", ":")).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Audit-Id", str(uuid.uuid4()))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


# --- the default cluster ---------------------------------------------------------------------


def _load_yaml(name: str) -> list[dict]:
    docs = []
    for doc in yaml.safe_load_all((FIXTURES / name).read_text(encoding="utf-8")):
        if not doc:
            continue
        docs.extend(doc["items"] if doc.get("kind") == "List" else [doc])
    return docs


def _secretive(pod: dict, index: int) -> None:
    """Give a DRA Pod what redaction must remove: env values, last-applied, managedFields."""
    meta = pod["metadata"]
    for ctr in pod["spec"]["containers"]:
        ctr["env"] = [
            {"name": "HF_TOKEN", "value": f"{REDACTED_SECRET}-{index}"},
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {
                "name": "DB_PASSWORD",
                "valueFrom": {"secretKeyRef": {"name": "db-credentials", "key": "password"}},
            },
        ]
    applied = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
        "spec": {"containers": pod["spec"]["containers"]},
    }
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(applied) + "\n",
    }
    meta["managedFields"] = [
        {
            "manager": "kubectl-client-side-apply",
            "operation": "Update",
            "apiVersion": "v1",
            "time": meta["creationTimestamp"],
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:containers": {f'k:{{"name":"{c["name"]}"}}': {}}}},
        }
        for c in pod["spec"]["containers"]
    ]
    if index == 0:
        pod["spec"]["initContainers"] = [
            {
                "name": "fetch-weights",
                "image": "busybox:1.36",
                "command": ["sh", "-c", "wget -q $WEIGHTS_URL"],
                "env": [{"name": "WEIGHTS_URL", "value": f"https://user:{REDACTED_SECRET}@x/w"}],
            }
        ]


@functools.cache
def _fixture_objects() -> tuple[dict, ...]:
    objects = build(later=False)
    pods = [o for o in objects if o["kind"] == "Pod"]
    for i, pod in enumerate(pods):
        _secretive(pod, i)
    first_pod = pods[0]
    ts = "2026-11-28T09:20:00Z"

    def meta(name: str, namespace: str | None = None, **extra: Any) -> dict:
        m: dict[str, Any] = {"name": name, "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, name))}
        if namespace:
            m["namespace"] = namespace
        return {**m, "creationTimestamp": ts, **extra}

    extra: list[dict] = []
    # A Pod that asks for a device through an extended resource (DRAExtendedResource, KEP-5004,
    # cf. dra-example-driver's extended-resource-request example): no spec.resourceClaims, only
    # status.extendedResourceClaimStatus and the claim the scheduler generated for it.
    ext_pod_meta = meta("cuda-extended", "extended-resource-request", labels={"app": "pod"})
    claim_name = "cuda-extended-extended-resources-x7k2p"
    extra.append(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": meta("extended-resource-request")}
    )
    extra.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": ext_pod_meta,
            "spec": {
                "containers": [
                    {
                        "name": "ctr0",
                        "image": "ubuntu:22.04",
                        "command": ["bash", "-c"],
                        "args": ["export; trap 'exit 0' TERM; sleep 9999 & wait"],
                        "resources": {"limits": {"nvidia.com/gpu": "1"}},
                    }
                ],
                "nodeName": "a100-node-01",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
            },
            "status": {
                "phase": "Running",
                "qosClass": "BestEffort",
                "extendedResourceClaimStatus": {
                    "resourceClaimName": claim_name,
                    "requestMappings": [
                        {
                            "containerName": "ctr0",
                            "resourceName": "nvidia.com/gpu",
                            "requestName": "container-0-request-0",
                        }
                    ],
                },
            },
        }
    )
    extra.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": meta(
                claim_name,
                "extended-resource-request",
                annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
                finalizers=["resource.kubernetes.io/delete-protection"],
                ownerReferences=[
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": ext_pod_meta["name"],
                        "uid": ext_pod_meta["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            ),
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "container-0-request-0",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "allocationMode": "ExactCount",
                                "count": 1,
                            },
                        }
                    ]
                }
            },
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {
                                "request": "container-0-request-0",
                                "driver": "gpu.nvidia.com",
                                "pool": "a100-node-01",
                                "device": "gpu-3",
                            }
                        ]
                    }
                },
                "reservedFor": [
                    {"resource": "pods", "name": ext_pod_meta["name"], "uid": ext_pod_meta["uid"]}
                ],
            },
        }
    )
    # An event about a ResourceClaim (captured) and events about things dradash leaves out.
    gen_claim = next(
        o for o in objects if o["kind"] == "ResourceClaim" and o["metadata"].get("ownerReferences")
    )
    for name, involved, reason, message, type_ in [
        (
            f"{gen_claim['metadata']['name']}.18a1b2c3d4e5f601",
            gen_claim,
            "ClaimAllocated",
            "allocated devices for the claim",
            "Normal",
        ),
    ]:
        extra.append(_event(name, involved, reason, message, type_, ts))
    # Non-DRA workloads: must not be captured, nor their events, nor the Job that owns one.
    extra.append({"apiVersion": "v1", "kind": "Namespace", "metadata": meta("web")})
    web = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta("frontend-6d4cf56db6-abcde", "web", labels={"app": "frontend"}),
        "spec": {
            "containers": [
                {
                    "name": "nginx",
                    "image": "nginx:1.27",
                    "env": [{"name": "API_KEY", "value": REDACTED_SECRET}],
                    "envFrom": [{"configMapRef": {"name": "app-config"}}],
                }
            ],
            "nodeName": "control-plane",
        },
        "status": {"phase": "Running", "qosClass": "BestEffort"},
    }
    report = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            "nightly-report-x9f2k",
            "web",
            ownerReferences=[
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "nightly-report",
                    "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, "nightly-report")),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        ),
        "spec": {"containers": [{"name": "report", "image": "python:3.13"}]},
        "status": {"phase": "Succeeded"},
    }
    extra += [web, report]
    extra.append(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta("nightly-report", "web"),
            "spec": {"completions": 1, "parallelism": 1, "template": {"spec": report["spec"]}},
            "status": {"succeeded": 1},
        }
    )
    extra.append(
        _event(
            "frontend-6d4cf56db6-abcde.18a1b2c3d4e5f602",
            web,
            "Pulled",
            'Container image "nginx:1.27" already present on machine',
            "Normal",
            ts,
        )
    )
    node = next(o for o in objects if o["kind"] == "Node")
    extra.append(
        _event(
            f"{node['metadata']['name']}.18a1b2c3d4e5f603",
            node,
            "NodeReady",
            f"Node {node['metadata']['name']} status is now: NodeReady",
            "Normal",
            ts,
        )
    )
    extra.append(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": meta("db-credentials", first_pod["metadata"]["namespace"]),
            "type": "Opaque",
            "data": {"password": base64.b64encode(REDACTED_SECRET.encode()).decode()},
        }
    )
    extra.append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta("app-config", "web"),
            "data": {"API_URL": "https://internal.example.com", "TOKEN": REDACTED_SECRET},
        }
    )
    # A DeviceTaintRule (the Kubernetes docs' example, device-taints.md).
    for rule in _load_yaml("k8s-website__docs__device-taints__devicetaintrule-v1.yaml"):
        rule["metadata"] = meta(rule["metadata"]["name"])
        extra.append(rule)
    return tuple(objects + extra)


def _event(name: str, involved: dict, reason: str, message: str, type_: str, ts: str) -> dict:
    m = involved["metadata"]
    ns = m.get("namespace", "default")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, name)),
            "creationTimestamp": ts,
        },
        "involvedObject": {
            "apiVersion": involved["apiVersion"],
            "kind": involved["kind"],
            "name": m["name"],
            **({"namespace": m["namespace"]} if m.get("namespace") else {}),
            "uid": m["uid"],
        },
        "reason": reason,
        "message": message,
        "type": type_,
        "source": {"component": "test"},
        "firstTimestamp": ts,
        "lastTimestamp": ts,
        "count": 1,
    }


def fixture_objects() -> list[dict]:
    """A representative cluster (a fresh deep copy each call).

    The demo cluster's first snapshot (dradash/demo/cluster.py: Nodes, Namespaces, DeviceClasses,
    ResourceSlices, claims and templates, DRA Pods at every stage, Events about them, Jobs owning
    DRA Pods, a PriorityClass), with env values, last-applied annotations and managedFields on
    every DRA Pod; plus a Pod using an extended resource (DRA only through
    status.extendedResourceClaimStatus), an Event about a ResourceClaim, non-DRA Pods with their
    own Job and Events, a Node Event, one Secret, one ConfigMap and a DeviceTaintRule.
    """
    return copy.deepcopy(list(_fixture_objects()))


def legacy_v1beta1_objects() -> list[dict]:
    """dra-example-driver's legacy v1beta1 example (gpu-test1) and README ResourceSlice list."""
    objects = _load_yaml("dra-example-driver__legacy-v1beta1__gpu-test1.yaml")
    objects += _load_yaml(
        "dra-example-driver__legacy-v1beta1__README__resourceslice-list-8gpu.yaml"
    )
    return copy.deepcopy(objects)


GANG_FIXTURE = (
    "dra-example-driver__podgroup-resourceclaimtemplate__podgroup-resourceclaimtemplate.yaml"
)
GANG_NAMESPACE = "podgroup-resourceclaimtemplate"


def gang_objects(version: str = "v1alpha2") -> list[dict]:
    """Gangs sharing a claim, shaped as scheduling.k8s.io ``version`` serves them.

    dra-example-driver's podgroup-resourceclaimtemplate example (1.36: PodGroups group-1 and
    group-2 of minCount 2, each sharing a claim from template one-gpu, and their Deployments),
    plus what a cluster running it holds: a Workload ``training`` that group-1 is made from,
    group-1's generated claim (owned by the PodGroup, reserved for it), group-1's Pods (``-a``
    uses the claim, ``-b`` uses no DRA at all) and a Pod naming a PodGroup that does not exist.
    ``version``: v1alpha2 (1.36) as the example is written, or v1beta1 / v1alpha3 (1.37):
    ``spec.workloadRef`` instead of ``spec.podGroupTemplateRef``, PodGroupInitiallyScheduled
    instead of PodGroupScheduled.
    """
    objects = _load_yaml(GANG_FIXTURE)
    ns, ts = GANG_NAMESPACE, "2026-11-28T09:30:00Z"
    group_uid = str(uuid.uuid5(uuid.NAMESPACE_URL, "podgroup/group-1"))
    claim_name = "group-1-gpu-x7k2p"
    group_1 = next(
        o for o in objects if o["kind"] == "PodGroup" and o["metadata"]["name"] == "group-1"
    )
    group_1["metadata"]["uid"] = group_uid
    group_1["spec"]["podGroupTemplateRef"] = {
        "workload": {"workloadName": "training", "podGroupTemplateName": "workers"}
    }
    group_1["status"] = {
        "conditions": [
            {
                "type": "PodGroupScheduled",
                "status": "True",
                "reason": "Scheduled",
                "message": "",
                "lastTransitionTime": ts,
                "observedGeneration": 1,
            }
        ],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim_name}],
    }
    objects.append(
        {
            "apiVersion": "scheduling.k8s.io/v1alpha2",
            "kind": "Workload",
            "metadata": {"name": "training", "namespace": ns},
            "spec": {
                "controllerRef": {"apiGroup": "apps", "kind": "Deployment", "name": "group-1"},
                "podGroupTemplates": [
                    {
                        "name": "workers",
                        "schedulingPolicy": {"gang": {"minCount": 2}},
                        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                    }
                ],
            },
        }
    )
    objects.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": claim_name,
                "namespace": ns,
                "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                "ownerReferences": [
                    {
                        "apiVersion": "scheduling.k8s.io/v1alpha2",
                        "kind": "PodGroup",
                        "name": "group-1",
                        "uid": group_uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
                "finalizers": ["resource.kubernetes.io/delete-protection"],
            },
            "spec": {
                "devices": {
                    "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
                }
            },
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {
                                "request": "gpu",
                                "driver": "gpu.example.com",
                                "pool": "gpu-node-1",
                                "device": "gpu-0",
                            }
                        ]
                    }
                },
                "reservedFor": [
                    {
                        "apiGroup": "scheduling.k8s.io",
                        "resource": "podgroups",
                        "name": "group-1",
                        "uid": group_uid,
                    }
                ],
            },
        }
    )

    def pod(name: str, group: str, *, claim: bool) -> dict:
        spec: dict[str, Any] = {
            "schedulingGroup": {"podGroupName": group},
            "nodeName": "gpu-node-1",
            "containers": [{"name": "ctr0", "image": "ubuntu:22.04"}],
        }
        status: dict[str, Any] = {"phase": "Running"}
        if claim:
            spec["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
            status["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": claim_name}]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": ts},
            "spec": spec,
            "status": status,
        }

    objects += [
        pod("group-1-a", "group-1", claim=True),
        pod("group-1-b", "group-1", claim=False),
        pod("stray", "no-such-group", claim=False),
    ]
    if version != "v1alpha2":
        for obj in objects:
            if obj["kind"] in ("PodGroup", "Workload"):
                obj["apiVersion"] = f"scheduling.k8s.io/{version}"
            for ref in obj["metadata"].get("ownerReferences") or []:
                if ref["kind"] == "PodGroup":
                    ref["apiVersion"] = f"scheduling.k8s.io/{version}"
        template_ref = group_1["spec"].pop("podGroupTemplateRef")["workload"]
        group_1["spec"]["workloadRef"] = {
            "workloadName": template_ref["workloadName"],
            "templateName": template_ref["podGroupTemplateName"],
        }
        group_1["status"]["conditions"][0]["type"] = "PodGroupInitiallyScheduled"
    return copy.deepcopy(objects)
