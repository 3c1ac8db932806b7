"""Talk to a Kubernetes API server: connect from a kubeconfig or in-cluster, GET/POST raw JSON.

Everything comes back as plain dicts parsed from the JSON the server sent, never as client model
objects (those drop fields they do not know). Every request has a timeout; 429, 500, 502, 503,
504, connection errors, timeouts and answers cut off half-way (IncompleteRead) are retried with
exponential backoff and jitter (honouring a capped Retry-After); anything else that is not 2xx
raises KubeError at once. An answer is read up to MAX_RESPONSE_BYTES; an HTML page where JSON
was expected (a proxy's or a login page) is named as such.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import urllib3
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException
from kubernetes.config import ConfigException, incluster_config, kube_config

DEFAULT_TIMEOUT = 30.0
# One answer (a list page) is refused beyond this: a server sending without end must not exhaust
# the worker's memory. Pages of DRADASH_CAPTURE_PAGE_SIZE objects stay far below it.
MAX_RESPONSE_BYTES = 1 << 30
READ_CHUNK = 1 << 20
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
HTTP_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    502: "BadGateway",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class KubeError(Exception):
    """A request to the API server failed. ``status`` is the HTTP status, 0 when none came back.

    ``reason`` is the Status reason (Forbidden, NotFound, Expired, Unauthorized …) or one of
    ConfigError, ConnectionError, Timeout, TLSError, IncompleteRead, TooLarge, InvalidResponse;
    ``str()`` is the message, worded for a person.
    """

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message


def connect(kubeconfig_path: str | None, context: str | None, in_cluster: bool) -> ApiClient:
    """An ApiClient on a fresh Configuration (the client's global default is left alone).

    Raises KubeError (reason ConfigError) when the kubeconfig or the in-cluster service account
    cannot be loaded.
    """
    config = type.__call__(Configuration)  # a fresh one, not a copy of the global default
    try:
        if in_cluster:
            incluster_config.load_incluster_config(client_configuration=config)
        else:
            kube_config.load_kube_config(
                config_file=kubeconfig_path,
                context=context,
                client_configuration=config,
                persist_config=False,
            )
    except (ConfigException, OSError, ValueError, TypeError, KeyError) as e:
        where = (
            "the in-cluster service account" if in_cluster else _kubeconfig_name(kubeconfig_path)
        )
        raise KubeError(0, "ConfigError", f"cannot load {where}: {e}") from e
    # Kube does the retrying; urllib3 must raise at once instead of retrying on its own.
    config.retries = False
    return ApiClient(configuration=config)


def _kubeconfig_name(path: str | None) -> str:
    return f"kubeconfig {path}" if path else "the default kubeconfig (KUBECONFIG or ~/.kube/config)"


class Kube:
    """Raw JSON GET/POST against one API server, with timeouts and bounded retries.

    ``requests`` counts every HTTP request made, retries included.
    """

    def __init__(
        self,
        api_client: ApiClient,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 10.0,
        max_retry_after: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_client = api_client
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.sleep = sleep
        self.requests = 0

    @property
    def server(self) -> str:
        return str(self.api_client.configuration.host)

    def close(self) -> None:
        self.api_client.close()

    def __enter__(self) -> Kube:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path: str, query: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self.request("GET", path, query=query)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", path, body=body)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The parsed JSON answer. Raises KubeError."""
        what = f"{method} {path}"
        attempt = 0
        answered: KubeError | None = None  # the last error the server answered with
        while True:
            attempt += 1
            try:
                return self._once(method, path, query, body)
            except _Transient as e:
                if e.error.status:
                    answered = e.error
                if attempt > self.retries:
                    # A dropped connection after an answer says less than the answer did.
                    error = answered if answered is not None and not e.error.status else e.error
                    raise KubeError(
                        error.status,
                        error.reason,
                        f"{error.message} (gave up on {what} after {attempt} attempts)",
                    ) from None
                self.sleep(self._delay(attempt, e.retry_after))

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        delay = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
        return delay * random.uniform(0.5, 1.0)  # noqa: S311 (jitter, not crypto)

    def _once(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None,
        body: dict[str, Any] | None,
    ) -> dict[str, Any]:
        self.requests += 1
        server = self.server
        response = None
        try:
            response = self.api_client.call_api(
                path,
                method,
                query_params=[(k, v) for k, v in (query or {}).items() if v not in (None, "")],
                header_params={"Accept": "application/json", "Content-Type": "application/json"},
                body=body,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _request_timeout=self.timeout,
            )
            data = self._read(response, method, path)
        except (_Transient, KubeError):
            raise
        except ApiException as e:
            raise self._http_error(e, method, path) from None
        except urllib3.exceptions.SSLError as e:
            raise KubeError(0, "TLSError", f"TLS with {server} failed: {e}") from None
        except urllib3.exceptions.NewConnectionError as e:  # subclasses ConnectTimeoutError
            raise _Transient(
                KubeError(0, "ConnectionError", f"cannot reach {server}: {_connection_reason(e)}")
            ) from e
        except (urllib3.exceptions.TimeoutError, TimeoutError) as e:
            raise _Transient(
                KubeError(
                    0,
                    "Timeout",
                    f"{server} did not answer {method} {path} within {self.timeout:g} s",
                )
            ) from e
        except (urllib3.exceptions.HTTPError, OSError) as e:
            if (incomplete := _incomplete_read(e)) is not None:
                raise _Transient(self._cut_off(incomplete, method, path)) from e
            raise _Transient(
                KubeError(0, "ConnectionError", f"cannot reach {server}: {_connection_reason(e)}")
            ) from e
        finally:
            if response is not None:
                response.release_conn()
        try:
            parsed = json.loads(data)
        except ValueError as e:
            content_type = str(response.headers.get("Content-Type") or "")
            if _is_html(content_type, data):
                raise KubeError(
                    response.status,
                    "InvalidResponse",
                    f"{server} answered {method} {path} with an HTML page{_html_title(data)} "
                    f"(HTTP {response.status}, {content_type or 'no Content-Type'}), not JSON: "
                    "the address is not a Kubernetes API server, or a proxy or login page "
                    "answered in its place",
                ) from None
            raise KubeError(
                response.status,
                "InvalidResponse",
                f"{server} answered {method} {path} with something that is not JSON: {e}",
            ) from None
        if not isinstance(parsed, dict):
            raise KubeError(
                response.status,
                "InvalidResponse",
                f"{server} answered {method} {path} with a JSON {type(parsed).__name__}",
            )
        return parsed

    def _read(self, response: Any, method: str, path: str) -> bytes:
        """The whole body, at most MAX_RESPONSE_BYTES. Raises KubeError (TooLarge)."""
        chunks, total = [], 0
        while chunk := response.read(READ_CHUNK):
            total += len(chunk)
            if total > MAX_RESPONSE_BYTES:
                response.close()  # the rest is never read: the connection cannot be reused
                raise KubeError(
                    response.status,
                    "TooLarge",
                    f"{self.server} answered {method} {path} with more than "
                    f"{MAX_RESPONSE_BYTES >> 20} MiB; refused (lower DRADASH_CAPTURE_PAGE_SIZE "
                    "if the cluster's objects are that large)",
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _cut_off(self, incomplete: Any, method: str, path: str) -> KubeError:
        partial, expected = (
            getattr(incomplete, "partial", None),
            getattr(incomplete, "expected", None),
        )
        if isinstance(partial, bytes):
            partial = len(partial)
        got = (
            f" after {partial} bytes, {expected} more expected"
            if isinstance(partial, int) and isinstance(expected, int)
            else ""
        )
        return KubeError(
            0,
            "IncompleteRead",
            f"{self.server} broke off its answer to {method} {path}: the connection closed"
            f"{got} (IncompleteRead)",
        )

    def _http_error(self, e: ApiException, method: str, path: str) -> Exception:
        status = int(e.status or 0)
        body = e.body.decode("utf-8", "replace") if isinstance(e.body, bytes) else e.body
        message, reason = "", HTTP_REASONS.get(status, f"HTTP{status}")
        try:
            parsed = json.loads(body or "")
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("kind") == "Status":
            message = str(parsed.get("message") or "")
            reason = str(parsed.get("reason") or reason)
        elif body and _is_html(str((e.headers or {}).get("Content-Type") or ""), body):
            message = f"an HTML page{_html_title(body)}, not a Kubernetes Status"
        elif body:
            message = body.strip()[:300]
        server = self.server
        if status == 401:
            error = KubeError(
                401,
                "Unauthorized",
                f"the credentials were refused (401 Unauthorized) by {server}: the token or "
                "client certificate in the kubeconfig is not valid (expired, revoked, or for "
                "another cluster)",
            )
        elif status == 403:
            error = KubeError(403, reason, message or f"{method} {path} is forbidden (403)")
        else:
            error = KubeError(
                status,
                reason,
                f"{server} answered {method} {path} with {status} {reason}"
                + (f": {message}" if message else ""),
            )
        if status in RETRY_STATUSES:
            return _Transient(error, _retry_after(e.headers))
        return error


class _Transient(Exception):
    """A failure worth retrying; carries the KubeError to raise if retries run out."""

    def __init__(self, error: KubeError, retry_after: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after = retry_after


def _retry_after(headers: Any) -> float | None:
    if not headers:
        return None
    value = headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to backoff


def _incomplete_read(e: BaseException) -> BaseException | None:
    """The IncompleteRead inside urllib3's wrapping of ``e``, if the answer was cut off."""
    seen: set[int] = set()
    current: BaseException | None = e
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (http.client.IncompleteRead, urllib3.exceptions.IncompleteRead)):
            return current
        nested = [a for a in getattr(current, "args", ()) if isinstance(a, BaseException)]
        current = (nested[0] if nested else None) or current.__cause__ or current.__context__
    return None


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _is_html(content_type: str, body: bytes | str) -> bool:
    if "html" in content_type.lower():
        return True
    start = (body[:200] if isinstance(body, bytes) else body[:200].encode()).lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def _html_title(body: bytes | str) -> str:
    """' titled "…"' from an HTML page's <title>, or ""."""
    data = body if isinstance(body, bytes) else body.encode()
    match = _TITLE.search(data[:65536])
    if not match:
        return ""
    title = " ".join(match[1].decode("utf-8", "replace").split())[:100]
    return f' titled "{title}"' if title else ""


def _connection_reason(e: BaseException) -> str:
    """ "connection refused", "Name or service not known" … out of urllib3's wrapping."""
    seen: set[int] = set()
    current: BaseException | None = e
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, OSError) and current.strerror:
            return current.strerror
        current = getattr(current, "reason", None) or current.__cause__ or current.__context__
    text = str(e)
    if "Connection refused" in text:
        return "connection refused"
    return text.split(": ", 1)[-1] if ": " in text else text
