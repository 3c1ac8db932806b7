"""Read bundles: what ``kubectl get … -o json|yaml`` prints, JSON arrays, single objects, YAML
streams, plus an optional ``dradash.io/v1 SnapshotInfo``; and write them back.

Parsing is all-or-nothing: any problem raises BundleError naming the file and the problem.
With ``skip_invalid``, an object that is invalid on its own (ObjectError) is left out and
recorded in ``Bundle.refused`` instead; a file that cannot be read still refuses the bundle.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson
import yaml

from dradash.dra import validation
from dradash.dra.gc import gc_paused
from dradash.dra.kinds import (
    KINDS,
    REFUSED_KINDS,
    RESOURCE_GROUP,
    RESOURCE_VERSIONS,
    ObjectKey,
    UnsupportedVersion,
    kind_of,
    object_key,
    split_api_version,
)
from dradash.dra.redact import redact
from dradash.dra.words import plural

INFO_API_VERSION = "dradash.io/v1"
INFO_KIND = "SnapshotInfo"
# Fields of SnapshotInfo.spec and the types they must have.
INFO_FIELDS: dict[str, type | tuple[type, ...]] = {
    "cluster": str,
    "capturedAt": str,
    "serverVersion": str,
    "apiVersions": list,
    "kinds": dict,  # {"Pod": {"status": "ok", "message": ""}, ...}
    "ignored": dict,  # {"apps/v1 Deployment": 2}
    # The cluster's feature gates where they differ from its version's defaults, as given to
    # kube-scheduler (--feature-gates): {"DRADeviceTaints": true}. dradash judges by them.
    "featureGates": dict,
    # Objects left out of an import with skip_invalid (see REFUSED_FIELDS), the first
    # MAX_REFUSED of them, and how many there were in all.
    "refused": list,
    "refusedCount": int,
}
# A feature gate's name: an identifier (pkg/features), at most 100 characters; at most 500 gates.
GATE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{0,99}")
MAX_GATES = 500
# How a kind fared when the snapshot was taken. "not-served": an optional kind the cluster does
# not serve (DeviceTaintRule before 1.35; Workload and PodGroup without the GenericWorkload
# gate); the last three make a snapshot partial.
KIND_STATUSES = ("ok", "absent", "not-served", "forbidden", "not-found", "error")
PROBLEM_STATUSES = frozenset({"forbidden", "not-found", "error"})


def kind_statuses(
    counts: Counter[str], given: dict[str, dict[str, Any]] | None, *, listed: bool = False
) -> dict[str, dict[str, Any]]:
    """Per kind dradash reads, what a snapshot of these objects records (Snapshot.kinds,
    SnapshotMeta.kinds): the status given (by a capture, or a bundle's SnapshotInfo), else "ok"
    or "absent" by its count. An "absent" that was given, or found by a source that lists every
    kind (``listed``: a capture, the demo), gets ``"listed": true``: someone listed the kind and
    found none, which proves there are none (SnapshotMeta.unproven); an "absent" only counted (a
    bundle without the kind) proves nothing."""
    kinds: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        entry = (given or {}).get(kind) or {}
        status = entry.get("status") or ("ok" if counts[kind] else "absent")
        kinds[kind] = {"status": status, "count": counts[kind], "message": entry.get("message", "")}
        if status == "absent" and (entry.get("status") or listed):
            kinds[kind]["listed"] = True
    return kinds


# Kinds whose apiVersion may be left out: each has a single stable version (not Workload and
# PodGroup, whose shape differs between scheduling.k8s.io versions).
DEFAULT_API_VERSIONS = {
    "Pod": "v1",
    "Node": "v1",
    "Namespace": "v1",
    "Job": "batch/v1",
    "PriorityClass": "scheduling.k8s.io/v1",
}


class BundleError(ValueError):
    def __init__(self, filename: str, problem: str) -> None:
        super().__init__(f"{filename}: {problem}")
        self.filename = filename
        self.problem = problem


class ObjectError(BundleError):
    """A problem of one object that leaves the rest of its file readable (an invalid object, one
    without a name, a Secret): refuses the bundle, or with skip_invalid only the object.

    ``where`` is its place in the file ("document 1, List item 3"), ``detail`` the problem
    without it, ``identity`` its kind, namespace and name as far as they can be read.
    """

    def __init__(
        self, filename: str, where: str, detail: str, obj: Any = None, *, problem: str = ""
    ) -> None:
        super().__init__(filename, problem or f"{where}: {detail}")
        self.where = where
        self.detail = detail
        self.identity = _identity(obj)


# What Bundle.refused (and Snapshot.refused, SnapshotInfo refused) records of each object left
# out, and the longest text each field keeps.
REFUSED_FIELDS = {
    "file": 1000,
    "location": 200,
    "kind": 253,
    "namespace": 253,
    "name": 253,
    "problem": 1000,
}
# How many refused objects are recorded one by one; beyond, they are only counted.
MAX_REFUSED = 1000
# The most a count may be (the database keeps 32-bit counts).
MAX_COUNT = 2**31 - 1


def _identity(obj: Any) -> dict[str, str]:
    """Kind, namespace and name of what may be an object, "" for what cannot be read."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    found = {
        "kind": obj.get("kind") if isinstance(obj, dict) else None,
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
    }
    return {
        k: _storable(_shown(v), REFUSED_FIELDS[k]) if isinstance(v, str) else ""
        for k, v in found.items()
    }


# What the database cannot hold in JSON text: NUL, and halves of surrogate pairs.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _storable(text: str, limit: int) -> str:
    """Text as a record may keep it: at most ``limit`` characters, nothing the database refuses."""
    text = _UNSTORABLE.sub("\ufffd", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def refused_entry(error: ObjectError) -> dict[str, str]:
    """How a refused object is recorded (REFUSED_FIELDS)."""
    return {
        "file": _storable(error.filename, REFUSED_FIELDS["file"]),
        "location": _storable(error.where, REFUSED_FIELDS["location"]),
        **error.identity,
        "problem": _storable(error.detail, REFUSED_FIELDS["problem"]),
    }


@dataclass
class Bundle:
    objects: dict[ObjectKey, dict[str, Any]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # SnapshotInfo.spec, {} when absent
    ignored: Counter[str] = field(default_factory=Counter)  # "apps/v1 Deployment" -> count
    info_file: str = ""  # the file the SnapshotInfo came from, "" when absent
    files: list[str] = field(default_factory=list)  # the names of the files read
    # With skip_invalid, the objects left out (refused_entry), the first MAX_REFUSED of them,
    # and how many there were.
    refused: list[dict[str, str]] = field(default_factory=list)
    refused_count: int = 0
    _origin: dict[ObjectKey, str] = field(default_factory=dict, repr=False)
    _ignored_seen: set[tuple[str, ...]] = field(default_factory=set, repr=False)
    _sink: Callable[[ObjectKey, dict[str, Any]], None] | None = field(default=None, repr=False)
    _fingerprints: dict[ObjectKey, bytes] = field(default_factory=dict, repr=False)
    _validate: bool = field(default=True, repr=False)

    @property
    def count(self) -> int:
        """How many objects dradash reads were found (kept, or handed to ``on_object``)."""
        return len(self._origin)

    def refuse(self, error: ObjectError) -> None:
        self.refused_count += 1
        if len(self.refused) < MAX_REFUSED:
            self.refused.append(refused_entry(error))


# What a file may be: its bytes, or a binary file object read from its current position (an
# upload in the database, a file on disk) that is then parsed without reading it whole.
Source = bytes | BinaryIO
# JSON files larger than this are parsed as a stream, one List item at a time, so that memory
# does not grow with the file; smaller ones (and all YAML) are read whole.
STREAM_OVER = 1_000_000
ObjectSink = Callable[[ObjectKey, dict[str, Any]], None]


def parse_bundle(
    files: Iterable[tuple[str, Source]],
    *,
    max_bytes: int,
    on_object: ObjectSink | None = None,
    stream_over: int = STREAM_OVER,
    validate: bool = True,
    skip_invalid: bool = False,
) -> Bundle:
    """Parse several files into one bundle. Raises BundleError.

    With ``skip_invalid``, an object invalid on its own (ObjectError) is recorded in
    ``Bundle.refused`` and left out instead of refusing the bundle.

    With ``on_object``, each object is handed to it once (its first occurrence) instead of being
    kept in ``Bundle.objects``: the caller stores it and lets it go, so that a large bundle is
    never all in memory. Objects that occur again are compared by a fingerprint.
    ``validate=False`` skips dradash.dra.validation: only to reproduce snapshots that versions
    before it stored (tests of how pages escape what such snapshots may hold).
    """
    bundle = Bundle()
    bundle._sink = on_object
    bundle._validate = validate
    info_from = ""
    for filename, source in files:
        bundle.files.append(filename)
        for where, obj in _file_objects(filename, source, max_bytes, stream_over):
            if isinstance(obj, ObjectError):  # not an object: _expand says why
                if not skip_invalid:
                    raise obj
                bundle.refuse(obj)
                continue
            if _is_info(obj):
                spec = _check_info(filename, where, obj)
                if info_from and spec != bundle.info:
                    raise BundleError(
                        filename,
                        f"{where}: a second, different SnapshotInfo (first in {info_from})",
                    )
                bundle.info, info_from = spec, filename
                bundle.info_file = filename
                continue
            try:
                _add(bundle, filename, where, obj)
            except ObjectError as exc:
                if not skip_invalid:
                    raise
                bundle.refuse(exc)
    return bundle


# What the readers of a file yield: each object with its place in the file, or in its place
# what is wrong with an item that is no object (refused by parse_bundle, or with skip_invalid
# left out): an exception raised inside a reader would end it.
FileItems = Iterator[tuple[str, dict[str, Any] | ObjectError]]


def _file_objects(filename: str, source: Source, max_bytes: int, stream_over: int) -> FileItems:
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        _check_size(filename, len(data), max_bytes)
        if not _looks_like_json(data[:65536]):
            return _YamlStream(filename, data, None, max_bytes).objects()
        if len(data) <= stream_over:
            return _objects(filename, data)
        source = io.BytesIO(data)
        del data
    head = source.read(stream_over + 1)
    if not _looks_like_json(head[:65536]):
        return _YamlStream(filename, head, source, max_bytes).objects()
    if len(head) <= stream_over:  # the whole file, and a small one
        _check_size(filename, len(head), max_bytes)
        return _objects(filename, head)
    return _JsonStream(filename, head, source, max_bytes).objects()


def _check_size(filename: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise BundleError(
            filename, f"file is {size:,} bytes, over the limit of {max_bytes:,} bytes"
        )


def _looks_like_json(head: bytes) -> bool:
    """Whether the text after leading # comment lines starts like JSON ("{" or "[")."""
    text = head.decode("utf-8-sig", errors="replace")
    while text.lstrip().startswith("#"):
        text = text.lstrip().partition("\n")[2]
    return text.lstrip()[:1] in ("{", "[")


def _add(bundle: Bundle, filename: str, where: str, obj: dict[str, Any]) -> None:
    kind_name = obj["kind"]
    name = obj["metadata"]["name"]
    if kind_name in REFUSED_KINDS:
        raise ObjectError(
            filename,
            where,
            f"{kind_name} {name!r}: dradash never stores Secrets or ConfigMaps; "
            "remove them from the bundle",
            obj,
        )
    try:
        kind = kind_of(obj)
    except UnsupportedVersion:
        kind = None  # e.g. classic DRA (resource.k8s.io/v1alpha2): counted, not read
    if kind is None:
        seen = (obj["apiVersion"], kind_name, str(obj["metadata"].get("namespace") or ""), name)
        if seen not in bundle._ignored_seen:  # the same object in two files counts once
            bundle._ignored_seen.add(seen)
            bundle.ignored[f"{obj['apiVersion']} {kind_name}"] += 1
        return
    for part in ("spec", "status"):
        if obj.get(part) is not None and not isinstance(obj[part], dict):
            raise ObjectError(filename, where, f"{kind_name} {name}: {part} is not a mapping", obj)
    key = object_key(kind, obj)
    redact(obj)  # before comparing: a copy that differs only in managedFields is the same
    if bundle._validate and (refused := validation.problems(obj)):
        path, problem = refused[0]
        namespace = f"{key[1]}/" if key[1] else ""
        more = f" (and {plural(len(refused) - 1, 'more problem')})" if len(refused) > 1 else ""
        raise ObjectError(
            filename,
            where,
            f"{obj['apiVersion']} {kind_name} {namespace}{_shown(name)[:100]} is "
            f"invalid, and the API server would refuse it: {path}: {problem}{more}",
            obj,
        )
    if bundle._sink is None:
        previous = bundle.objects.get(key)
        differs = previous is not None and previous != obj
    else:
        print_ = _fingerprint(obj)
        differs = bundle._fingerprints.setdefault(key, print_) != print_
        previous = obj if key in bundle._origin else None
    if differs:
        namespace = f"{key[1]}/" if key[1] else ""
        raise ObjectError(
            filename,
            where,
            f"{kind_name} {namespace}{name} differs from the one in "
            f"{bundle._origin[key]}; a bundle holds each object once",
            obj,
        )
    if bundle._sink is None:
        bundle.objects[key] = obj
    elif previous is None:
        bundle._sink(key, obj)
    bundle._origin.setdefault(key, filename)


# What the upload page tells people to run: a bundle of every kind dradash reads but gangs'.
EXPORT_COMMAND = (
    "kubectl get pods,nodes,namespaces,events,jobs,priorityclasses,resourceclaims,"
    "resourceclaimtemplates,resourceslices,deviceclasses -A -o json > bundle.json"
)
CLASSIC_DRA = f"{RESOURCE_GROUP}/v1alpha2"


def check_usable(bundle: Bundle) -> None:
    """Refuse (BundleError) a bundle that had objects but none dradash reads: each was ignored
    (a kind or API version it does not read) or, with skip_invalid, refused. Stored, it would be
    an empty snapshot whose only trace of them is a count. A bundle without any object (an empty
    List, a SnapshotInfo alone) is not refused: it says what it has."""
    if bundle.count or not (bundle.ignored or bundle.refused_count):
        return
    names = bundle.files[:3] + ([f"{len(bundle.files) - 3} more"] if len(bundle.files) > 3 else [])
    parts = ["no object in the bundle is one dradash reads, so there is nothing to import"]
    if bundle.ignored:
        shown = sorted(bundle.ignored.items())
        listed = [f"{n} × {key} ({_why_ignored(key)})" for key, n in shown[:10]]
        if len(shown) > 10:
            listed.append(f"{len(shown) - 10} more kinds")
        parts.append("Ignored: " + ", ".join(listed))
    if bundle.refused_count:
        first = bundle.refused[0]
        parts.append(
            f"Refused as invalid: {plural(bundle.refused_count, 'object')}, the first "
            f"({first['file']}, {first['location']}): {first['problem']}"
        )
    if any(_classic(key) for key in bundle.ignored):
        parts.append(
            f"{CLASSIC_DRA} is the API of classic DRA (Kubernetes 1.30 and earlier): "
            "structured parameters replaced it in Kubernetes 1.31, and 1.32 removed it. dradash "
            f"reads {_resource_versions()}. Export again from a cluster of Kubernetes 1.31 or "
            f"later: {EXPORT_COMMAND}"
        )
    elif bundle.ignored:
        parts.append(
            "dradash reads these kinds: "
            + ", ".join(KINDS)
            + f" (DRA's at {_resource_versions()}). Export them with: {EXPORT_COMMAND}"
        )
    raise BundleError(", ".join(names), ". ".join(parts))


def _resource_versions() -> str:
    *most, last = RESOURCE_VERSIONS
    return f"{RESOURCE_GROUP}/{', '.join(most)} and {last}"


def _classic(key: str) -> bool:
    """Whether objects counted in Bundle.ignored under ``key`` are of classic DRA."""
    api_version, _, name = key.partition(" ")
    return api_version == CLASSIC_DRA and RESOURCE_GROUP in getattr(KINDS.get(name), "groups", ())


def _why_ignored(key: str) -> str:
    """Why objects counted in Bundle.ignored under ``key`` ("apiVersion Kind") were not read."""
    api_version, _, name = key.partition(" ")
    kind = KINDS.get(name)
    if kind is None:
        return "a kind dradash does not read"
    group, version = split_api_version(api_version)
    if group not in kind.groups:
        return f"{name} of an API group dradash does not read"
    if _classic(key):
        return "classic DRA"
    prefix = f"{group}/" if group else ""
    return f"dradash reads {name} at {', '.join(prefix + v for v in kind.versions)}, not {version}"


def _fingerprint(obj: dict[str, Any]) -> bytes:
    """A digest equal for equal objects, whatever the order of their keys."""
    try:
        text = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # integers beyond 64 bits
        text = json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(text).digest()


def _is_info(obj: dict[str, Any]) -> bool:
    return obj.get("apiVersion") == INFO_API_VERSION and obj.get("kind") == INFO_KIND


def _check_info(filename: str, where: str, obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        raise BundleError(filename, f"{where}: SnapshotInfo has no spec mapping")
    for name, typ in INFO_FIELDS.items():
        if name in spec and spec[name] is not None and not isinstance(spec[name], typ):
            raise BundleError(filename, f"{where}: SnapshotInfo spec.{name} has the wrong type")
    unknown = sorted(set(spec) - set(INFO_FIELDS))
    if unknown:
        raise BundleError(filename, f"{where}: SnapshotInfo has unknown fields {unknown}")
    if not all(isinstance(v, str) for v in spec.get("apiVersions") or []):
        raise BundleError(filename, f"{where}: SnapshotInfo spec.apiVersions must be strings")
    for kind, entry in (spec.get("kinds") or {}).items():
        if not isinstance(entry, dict) or entry.get("status") not in KIND_STATUSES:
            raise BundleError(
                filename,
                f"{where}: SnapshotInfo spec.kinds.{kind} needs a status, one of "
                + ", ".join(KIND_STATUSES),
            )
        if not isinstance(entry.get("message", ""), str):
            raise BundleError(filename, f"{where}: SnapshotInfo spec.kinds.{kind}.message")
    for key, count in (spec.get("ignored") or {}).items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise BundleError(filename, f"{where}: SnapshotInfo spec.ignored.{key} is not a count")
    _check_refused(filename, where, spec)
    gates = spec.get("featureGates") or {}
    if len(gates) > MAX_GATES:
        raise BundleError(filename, f"{where}: SnapshotInfo spec.featureGates has over {MAX_GATES}")
    for gate, on in gates.items():
        if not GATE_NAME.fullmatch(gate) or not isinstance(on, bool):
            raise BundleError(
                filename,
                f"{where}: SnapshotInfo spec.featureGates: {gate[:100]!r} must be a feature gate's "
                "name with true or false",
            )
    for name, limit in INFO_MAX_LENGTHS.items():
        value = spec.get(name)
        if isinstance(value, str) and len(value) > limit:
            raise BundleError(
                filename,
                f"{where}: SnapshotInfo spec.{name} is {len(value):,} characters long, "
                f"over the limit of {limit}",
            )
        if isinstance(value, str) and _CONTROL.search(value):
            raise BundleError(filename, f"{where}: SnapshotInfo spec.{name} has control characters")
    for name in INFO_FIELDS:
        # The database cannot store NUL in text or JSON columns; no real value holds one.
        if any("\x00" in text for text in _texts(spec.get(name))):
            raise BundleError(
                filename, f"{where}: SnapshotInfo spec.{name} has a NUL character (\\u0000)"
            )
    return spec


def _check_refused(filename: str, where: str, spec: dict[str, Any]) -> None:
    """SnapshotInfo's refused (entries as refused_entry makes them) and refusedCount."""
    refused = spec.get("refused") or []
    if len(refused) > MAX_REFUSED:
        raise BundleError(
            filename, f"{where}: SnapshotInfo spec.refused has over {MAX_REFUSED:,} entries"
        )
    for position, entry in enumerate(refused):
        at = f"{where}: SnapshotInfo spec.refused[{position}]"
        if not isinstance(entry, dict):
            raise BundleError(filename, f"{at} is not a mapping")
        unknown = sorted(set(entry) - set(REFUSED_FIELDS))
        if unknown:
            raise BundleError(filename, f"{at} has unknown fields {unknown}")
        for name, limit in REFUSED_FIELDS.items():
            value = entry.get(name, "")
            if not isinstance(value, str) or len(value) > limit:
                raise BundleError(
                    filename, f"{at}.{name} must be text of at most {limit:,} characters"
                )
    count = spec.get("refusedCount")
    if count is not None and (isinstance(count, bool) or not len(refused) <= count <= MAX_COUNT):
        raise BundleError(
            filename,
            f"{where}: SnapshotInfo spec.refusedCount must be a count, at least the number of "
            "entries in spec.refused",
        )


# The longest values the database stores for these SnapshotInfo fields (a Kubernetes name is
# at most 253 characters; a server version such as "v1.34.1-gke.1234" far less than 64).
INFO_MAX_LENGTHS = {"cluster": 253, "serverVersion": 64, "capturedAt": 64}
# Kubernetes names are at most 253 characters (namespaces 63); the database holds 253.
MAX_NAME_LENGTH = 253
# Control characters (C0 and DEL): never part of a name; PostgreSQL cannot store NUL at all.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# A JSON or YAML escape that may stand for half of a surrogate pair (\ud800-\udfff).
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Python refuses to turn integers of more than 4,300 digits into text (and JSON).
MAX_INT_BITS = 14_000


def _texts(value: Any) -> Iterator[str]:
    """Every string in a (small) JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


# --- reading documents -------------------------------------------------------------------


# Deeper than any Kubernetes object; a limit keeps the parsers' recursion far from the stack's.
MAX_DEPTH = 200
TEMPLATE_HINT = "; it looks like a Helm or Go template: render it first"
# Text that starts like JSON but is not is tried as YAML (flow style) only up to this size.
YAML_FALLBACK_MAX = 1_000_000


def _objects(filename: str, data: bytes) -> FileItems:
    """(where, object) for every object of a JSON file read whole, Lists expanded. Text that
    only starts like JSON (YAML flow style, a template) is read as YAML."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BundleError(filename, f"not UTF-8 text (byte {exc.start})") from None
    body = text
    while body.lstrip().startswith("#"):
        body = body.lstrip().partition("\n")[2]
    with gc_paused():
        try:
            doc, checked = _json_document(
                filename, body, text.count("\n", 0, len(text) - len(body))
            )
        except _NotJson as exc:
            if len(body) > YAML_FALLBACK_MAX and "{{" not in text:
                raise exc.error from None
            try:  # YAML flow style, and templates like "{{- if … }}", also start with "{"
                items = list(_YamlStream(filename, data, None, len(data)).objects())
                # A problem of an object read as YAML is the problem of the file: most likely
                # it is JSON gone wrong (a trailing comma), which the JSON error points at.
                for _, item in items:
                    if isinstance(item, ObjectError):
                        raise item
                return iter(items)
            except BundleError as yaml_error:
                raise (yaml_error if "{{" in text else exc.error) from None
    return _json_objects(filename, text, doc, checked)


def _json_objects(filename: str, text: str, doc: Any, checked: bool) -> FileItems:
    where = "document 1"
    # Parsed JSON holds only what _check_plain accepts (_json_document refuses NaN and huge
    # integers, and tells when a number was out of range), but for escaped surrogates: text
    # read from UTF-8 holds none; only an escape such as "\ud800" can make one.
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    if not checked or surrogates:
        _check_plain(filename, where, doc, surrogates=surrogates)
    items = doc if isinstance(doc, list) else [doc]
    for position, item in enumerate(items, start=1):
        yield from _expand(filename, f"{where}, item {position}" if doc is items else where, item)


class _NotJson(Exception):
    def __init__(self, error: BundleError) -> None:
        self.error = error


def _json_document(filename: str, body: str, comment_lines: int) -> tuple[Any, bool]:
    """The JSON document, and whether it holds only what JSON can (else _check_plain must look
    at it: a number out of range, like 1e400, is read as infinity). Raises _NotJson when the
    text is no JSON (it may be YAML), BundleError when it is JSON that cannot be stored."""
    out_of_range: list[str] = []

    def number(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            out_of_range.append(literal)
        return value

    try:
        doc = json.loads(
            body,
            parse_constant=_refuse_constant,
            parse_float=number,
            object_pairs_hook=_unique_keys,
        )
        return doc, not out_of_range
    except _DuplicateKey:
        at, key, first = _first_duplicate(body)
        line, column = _line_column(body, at)
        raise BundleError(
            filename,
            _json_duplicate(
                "document 1", key, line + comment_lines, column, _line_column(body, first)[0]
            ),
        ) from None
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(body.rstrip()) or exc.msg.startswith("Unterminated string")
        raise _NotJson(
            BundleError(
                filename,
                f"{'truncated' if truncated else 'invalid'} JSON: {exc.msg} "
                f"at line {exc.lineno + comment_lines} column {exc.colno}"
                + _joined_hint(exc.msg, body, exc.pos),
            )
        ) from None
    except RecursionError:
        raise _NotJson(BundleError(filename, "JSON is nested too deeply")) from None
    except ValueError as exc:  # NaN or Infinity, which JSON does not have; huge integers
        if exc.args and exc.args[0] in _JSON_CONSTANTS:
            value = float(exc.args[0])  # nan, inf or -inf
            raise BundleError(filename, f"has a number JSON cannot hold ({value})") from None
        raise BundleError(filename, f"invalid JSON: {_value_problem(exc)}") from None


_JSON_CONSTANTS = ("NaN", "Infinity", "-Infinity")


class _DuplicateKey(Exception):
    """A JSON object has a key twice (_first_duplicate finds where)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object_pairs_hook: the object, refused when it has a key twice (json itself
    keeps the last value). Any hook makes json decode about half as slow again (a fifth of a
    large bundle's parse time), so it checks every object of files read whole (at most
    STREAM_OVER bytes), and of a stream the top-level object but its List items
    (_JsonStream._object)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]')
_COLON = re.compile(r"[ \t\n\r]*:")


def _first_duplicate(text: str, start: int = 0) -> tuple[int, str, int]:
    """Where the first key given twice in one object of the JSON value at ``start`` in ``text``
    is: its offset, the key, and the offset of its first occurrence. Only called once json
    found one (so the text is JSON up to there)."""
    stack: list[dict[str, int] | None] = []  # per open object its keys' offsets, None: array
    for match in _JSON_TOKEN.finditer(text, start):
        token = match.group()
        if token == "{":
            stack.append({})
        elif token == "[":
            stack.append(None)
        elif token in "}]":
            stack.pop()
        elif stack and (keys := stack[-1]) is not None and _COLON.match(text, match.end()):
            key = json.loads(token)
            if key in keys:
                return match.start(), key, keys[key]
            keys[key] = match.start()
    raise AssertionError("no key given twice")  # pragma: no cover - json found one


def _line_column(text: str, at: int) -> tuple[int, int]:
    """The line and column (from 1) of an offset in ``text``."""
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def _json_duplicate(where: str, key: str, line: int, column: int, first: int) -> str:
    return (
        f"{where} has the key {_shown(key)[:100]!r} twice in one object (again at line {line} "
        f"column {column}, first at line {first}): JSON readers keep only the last value, so "
        "the first would be lost without a word; remove one of them"
    )


def _joined_hint(message: str, text: str, at: int) -> str:
    """For JSON with more after its end that is JSON again: what it looks like."""
    if message != "Extra data" or text[at : at + 1] not in ("{", "["):
        return ""
    return (
        "; this is what two JSON files joined together look like (cat a.json b.json): "
        "upload them as separate files"
    )


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def _value_problem(exc: ValueError) -> str:
    """What a parser's ValueError means, in words."""
    message = str(exc.args[0]) if exc.args else str(exc)
    if "Exceeds the limit" in message and "digits" in message:
        return "a number is too large (an integer of more than 4,300 digits)"
    return message


# --- reading YAML as a stream -------------------------------------------------------------

# libyaml's parser where PyYAML has it (as CSafeLoader uses), else PyYAML's own.
if yaml.__with_libyaml__:
    _EventParser: Any = yaml.cyaml.CParser
else:  # pragma: no cover - PyYAML without libyaml

    class _EventParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):  # type: ignore[no-redef]
        def __init__(self, stream: Any) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)


_MAP_TAGS = (None, "!", "tag:yaml.org,2002:map")
_SEQ_TAGS = (None, "!", "tag:yaml.org,2002:seq")
_STR = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_VALUE_TAG = "tag:yaml.org,2002:value"
_NO_KEY: Any = object()  # a mapping's next event is a key
_MERGE: Any = object()  # the key <<


class _YamlText:
    """A YAML file for the parser, read a chunk at a time: decoded as UTF-8 (an error names the
    byte), counted against the size limit, and watched for what the messages and checks need:
    anything but white space, a template's "{{", an escape that may be half a surrogate pair."""

    def __init__(self, filename: str, head: bytes, rest: BinaryIO | None, max_bytes: int) -> None:
        self.filename = filename
        self.head = head
        self.at = 0  # in head
        self.rest = rest
        self.max_bytes = max_bytes
        self.read_bytes = 0
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.tail = ""  # the end of the text read last, for marks split between reads
        self.blank = True
        self.templated = False
        self.surrogates = False

    def read(self, size: int = -1) -> str:
        if self.at < len(self.head):  # what was read already (a file given whole), in chunks
            data = self.head[self.at : self.at + _CHUNK]
            self.at += len(data)
        else:
            data = self.rest.read(max(size, _CHUNK)) if self.rest is not None else b""
        self.read_bytes += len(data)
        _check_size(self.filename, self.read_bytes, self.max_bytes)
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            at = max(self.read_bytes - len(data) + exc.start, 0)
            raise BundleError(self.filename, f"not UTF-8 text (byte {at})") from None
        window = self.tail + text
        self.blank = self.blank and not text.strip()
        self.templated = self.templated or "{{" in window
        self.surrogates = self.surrogates or _SURROGATE_ESCAPE.search(window) is not None
        self.tail = window[-8:]
        return text

    def blank_to_the_end(self) -> bool:
        """Whether the whole file is white space (reading the rest while it is)."""
        while self.blank and self.read(_CHUNK):
            pass
        return self.blank


class _YamlStream(yaml.composer.Composer, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """One YAML file read as a stream of the parser's events, each document (and each item of a
    List, or of a top-level sequence) built into a value on its own, so that memory holds one
    object, not the file: what ``kubectl get … -o yaml`` prints is one List document.

    Aliases and nesting deeper than MAX_DEPTH are refused as their events arrive, before
    anything is built from them; the values are those of PyYAML's safe loader (its resolver
    and constructors; its composer for collections with tags of their own), timestamps kept as
    the strings Kubernetes sends.
    """

    def __init__(self, filename: str, head: bytes, rest: BinaryIO | None, max_bytes: int) -> None:
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self.filename = filename
        self.text = _YamlText(filename, head, rest, max_bytes)
        self.parser: Any = None  # made by objects(): PyYAML's own starts reading at once
        self.document = 0
        self.depth = 0

    # The source of events (the composer's too): the parser's, checked.
    def check_event(self, *choices: Any) -> bool:
        return bool(self.parser.check_event(*choices))

    def peek_event(self) -> Any:
        return self.parser.peek_event()

    def get_event(self) -> Any:
        event = self.parser.get_event()
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise BundleError(
                    self.filename,
                    f"document {self.document} is nested too deeply "
                    f"(more than {MAX_DEPTH} levels, at line {self._line(event)})",
                )
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            self.depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            raise BundleError(
                self.filename,
                f"document {self.document} uses YAML anchors or aliases "
                f"(line {self._line(event)}); expand them",
            )
        return event

    @staticmethod
    def _line(event: Any) -> int | str:
        return event.start_mark.line + 1 if event.start_mark else "?"

    def objects(self) -> FileItems:
        try:
            self.parser = _EventParser(self.text)
            found = yield from self._documents()
        except BundleError:
            raise
        except yaml.MarkedYAMLError as exc:
            if self.text.blank_to_the_end():  # white space YAML cannot start with, a tab
                raise BundleError(self.filename, "the file is empty") from None
            mark = exc.problem_mark
            at = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
            hint = TEMPLATE_HINT if self.text.templated else ""
            raise BundleError(
                self.filename, f"invalid YAML: {exc.problem or exc.context}{at}{hint}"
            ) from None
        except yaml.YAMLError as exc:
            raise BundleError(self.filename, f"invalid YAML: {exc}") from None
        except ValueError as exc:  # int() of a number of more than 4,300 digits
            raise BundleError(self.filename, f"invalid YAML: {_value_problem(exc)}") from None
        if not found:
            problem = "the file is empty" if self.text.blank else "no Kubernetes objects found"
            raise BundleError(self.filename, problem)

    def _documents(self) -> FileItems:
        """The objects of every document; returns whether any document was not empty."""
        found = False
        self.get_event()  # stream start
        while not self.check_event(yaml.StreamEndEvent):
            self.get_event()  # document start
            self.document += 1
            where = f"document {self.document}"
            root = self.peek_event()
            if isinstance(root, yaml.MappingStartEvent) and root.tag in _MAP_TAGS:
                found = True
                yield from self._mapping(where)
            elif isinstance(root, yaml.SequenceStartEvent) and root.tag in _SEQ_TAGS:
                found = True
                self.get_event()
                position = 0
                while not self.check_event(yaml.SequenceEndEvent):
                    position += 1
                    item = self._value(where, checked=True)
                    yield from _expand(self.filename, f"{where}, item {position}", item)
                self.get_event()
            elif isinstance(root, yaml.CollectionStartEvent):  # !!set, !!omap, …: no object
                raise BundleError(
                    self.filename,
                    f"{where} is not a Kubernetes object (a value tagged {root.tag}, "
                    "not a mapping)",
                )
            elif (value := self._value(where, checked=True)) is not None:
                found = True
                yield from _expand(self.filename, where, value)
            self.get_event()  # document end
        self.get_event()  # stream end
        return found

    def _value(self, where: str, *, checked: bool = False) -> Any:
        """The next node's value; ``checked`` for what JSON cannot hold."""
        value = self._build()
        # What the safe loader keeps per document, here per value: aliases are refused.
        self.anchors, self.constructed_objects = {}, {}
        if checked:
            _check_plain(self.filename, where, value, surrogates=self.text.surrogates)
        return value

    def _build(self) -> Any:
        """The next node's value, as PyYAML's safe loader constructs it, built straight from
        the events (its composer makes a node of every event first: four times slower). Plain
        mappings, sequences and scalars, merge keys (<<) included; a collection with a tag of
        its own (!!set, !!omap …) goes through the composer and constructor."""
        parser = self.parser
        stack: list[Any] = []  # the open collections, innermost last
        keys: list[Any] = []  # per open mapping, the key whose value comes next (or _NO_KEY)
        merges: list[list[Any] | None] = []  # per open mapping, what its << keys merge
        marks: list[Any] = []  # where each open collection starts
        while True:
            event = parser.peek_event()
            kind = type(event)
            mark = event.start_mark
            if kind is yaml.ScalarEvent:
                parser.get_event()
                value = self._scalar(event)
            elif kind is yaml.MappingStartEvent and event.tag in _MAP_TAGS:
                self.get_event()  # counts the depth
                stack.append({})
                keys.append(_NO_KEY)
                merges.append(None)
                marks.append(mark)
                continue
            elif kind is yaml.SequenceStartEvent and event.tag in _SEQ_TAGS:
                self.get_event()
                stack.append([])
                keys.append(_NO_KEY)
                merges.append(None)
                marks.append(mark)
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                self.get_event()
                value, merged, mark = stack.pop(), merges.pop(), marks.pop()
                keys.pop()
                if merged:  # merged keys first, the mapping's own win (flatten_mapping)
                    value = {k: v for source in merged for k, v in source.items()} | value
            else:  # an alias (refused), a collection with a tag of its own
                value = self.construct_document(self.compose_node(None, None))
            if not stack:
                return value
            top = stack[-1]
            if type(top) is list:
                top.append(value)
            elif keys[-1] is _NO_KEY:
                if not isinstance(value, Hashable):
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", marks[-1], "found unhashable key", mark
                    )
                if value in top:
                    raise self._duplicate(value, mark)
                keys[-1] = value
            elif keys[-1] is _MERGE:
                sources = value[::-1] if type(value) is list else [value]
                if not all(type(v) is dict for v in sources):
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        marks[-1],
                        "expected a mapping or list of mappings for merging",
                        mark,
                    )
                merges[-1] = (merges[-1] or []) + sources
                keys[-1] = _NO_KEY
            else:
                top[keys[-1]] = value
                keys[-1] = _NO_KEY

    def _duplicate(self, key: Any, mark: Any) -> BundleError:
        """The error for a key given twice in a mapping below the top of a document."""
        line = mark.line + 1 if mark else "?"
        return BundleError(
            self.filename,
            f"document {self.document} has the key {_shown(str(key))[:100]!r} twice in one "
            f"mapping (again at line {line}): YAML keeps only the last value, so the first would "
            "be lost without a word; remove one of them",
        )

    def flatten_mapping(self, node: Any) -> None:
        """PyYAML's, for mappings with a tag of their own (!!map): a key given twice is refused
        (as _build refuses it), before merge keys (<<) bring in theirs."""
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            # "=" (the value key) is the string "=" (flatten_mapping makes it one)
            is_value = key_node.tag == _VALUE_TAG
            key = key_node.value if is_value else self.construct_object(key_node)
            if isinstance(key, Hashable):
                if key in seen:
                    raise self._duplicate(key, key_node.start_mark)
                seen.add(key)
        super().flatten_mapping(node)

    def _scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR:
            return event.value
        if tag == _MERGE_TAG:
            return _MERGE
        if tag == _VALUE_TAG:  # "=" as a key is the string "=" (flatten_mapping)
            return event.value
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        return self.construct_object(node)

    def _mapping(self, where: str) -> FileItems:
        """A top-level mapping; its items one at a time when it is a List (as _JsonStream)."""
        head: dict[str, Any] = {}
        waiting: list[tuple[int, Any]] = []  # items without a kind, before the list's kind
        streamed = False
        lines: dict[str, int | str] = {}  # the line of each key
        self.get_event()
        while not self.check_event(yaml.MappingEndEvent):
            line = self._line(self.peek_event())
            key = self._value(where)
            if not isinstance(key, str):
                raise BundleError(self.filename, f"{where} has a key that is not a string: {key!r}")
            if key in lines:
                raise BundleError(self.filename, _concatenated(where, key, line, lines[key]))
            lines[key] = line
            items = self.peek_event()
            if (
                key == "items"
                and not streamed
                and isinstance(items, yaml.SequenceStartEvent)
                and items.tag in _SEQ_TAGS
            ):
                streamed = True
                self.get_event()
                position = 0
                while not self.check_event(yaml.SequenceEndEvent):
                    position += 1
                    item = self._value(where, checked=True)
                    if (
                        isinstance(item, dict)
                        and "kind" not in item
                        and not isinstance(head.get("kind"), str)
                    ):
                        waiting.append((position, item))
                        continue
                    yield from self._item(where, head, position, item)
                self.get_event()
            else:
                head[key] = self._value(where)
        self.get_event()
        _check_plain(self.filename, where, head, surrogates=self.text.surrogates)
        if not streamed:
            yield from _expand(self.filename, where, head)
            return
        kind = head.get("kind")
        if not (isinstance(kind, str) and kind.endswith("List")):
            raise BundleError(
                self.filename, f"{where} has items but is a {_shown(str(kind))[:100]}, not a List"
            )
        for position, item in waiting:
            yield from self._item(where, head, position, item)

    def _item(self, where: str, head: dict[str, Any], position: int, item: Any) -> FileItems:
        kind = head.get("kind") if isinstance(head.get("kind"), str) else "List"
        yield from _expand(self.filename, where, {**head, "kind": kind, "items": [item]}, position)


_YamlStream.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
)


def _concatenated(where: str, key: str, line: int | str, first: int | str) -> str:
    """The problem of a key given twice at the top of a YAML document: the mark of two files
    joined without `---` between them, the first file's objects about to be lost."""
    return (
        f"{where} has the key {_shown(key)[:100]!r} twice (again at line {line}, first at line "
        f"{first}): YAML keeps only the last value, so what came before would be lost. This is "
        "what two files joined without `---` between them look like (cat slices.yaml "
        "claims.yaml): put a line `---` between them, or upload them as separate files"
    )


def _expand(filename: str, where: str, item: Any, start: int = 1) -> FileItems:
    """The objects of one item: itself, or those of a List (numbered from ``start``); an
    ObjectError in place of one that is not a valid object."""
    if not isinstance(item, dict):
        what = f"a Kubernetes object (a {_type_name(item)}, not a mapping)"
        yield where, ObjectError(filename, where, f"not {what}", problem=f"{where} is not {what}")
        return
    kind = item.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(item.get("items"), list):
        # kubectl prints "List"; the API server prints typed lists ("ResourceSliceList")
        # whose items carry no kind or apiVersion of their own.
        item_kind = kind[: -len("List")]
        for position, sub in enumerate(item["items"], start=start):
            sub_where = f"{where}, {kind} item {position}"
            if isinstance(sub, dict) and item_kind and "kind" not in sub:
                sub = {"apiVersion": item.get("apiVersion"), "kind": item_kind, **sub}
            if isinstance(sub, dict) and isinstance(sub.get("items"), list):
                yield (
                    sub_where,
                    ObjectError(
                        filename,
                        sub_where,
                        "a list inside a list",
                        sub,
                        problem=f"{sub_where} is a list inside a list",
                    ),
                )
                continue
            yield from _expand(filename, sub_where, sub)
        return
    try:
        _check_object(filename, where, item)
    except ObjectError as exc:
        yield where, exc
        return
    yield where, item


def _check_object(filename: str, where: str, obj: dict[str, Any]) -> None:
    """Raises ObjectError when ``obj`` is no object dradash can key: without kind, apiVersion,
    metadata.name, or with names the API server refuses."""

    def refuse(detail: str) -> ObjectError:
        return ObjectError(filename, where, detail, obj)

    kind = obj.get("kind")
    if not isinstance(kind, str) or not kind:
        detail = "no kind; is it a Kubernetes object?"
        raise ObjectError(filename, where, detail, obj, problem=f"{where} has {detail}")
    if "apiVersion" not in obj and kind in DEFAULT_API_VERSIONS:
        # Hand-written manifests sometimes omit it; these kinds have only one.
        obj["apiVersion"] = DEFAULT_API_VERSIONS[kind]
    if _CONTROL.search(kind) or len(kind) > MAX_NAME_LENGTH:
        raise refuse(f"the kind {_shown(kind)[:100]} is not a kind")
    if not isinstance(obj.get("apiVersion"), str) or not obj["apiVersion"]:
        raise refuse(f"{kind} has no apiVersion")
    if _CONTROL.search(obj["apiVersion"]) or len(obj["apiVersion"]) > MAX_NAME_LENGTH:
        raise refuse(f"{kind} apiVersion {_shown(obj['apiVersion'])[:100]} is not an apiVersion")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise refuse(f"{kind} has no metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        hint = (
            " (only generateName, as in a manifest for kubectl create)"
            if "generateName" in meta
            else ""
        )
        raise refuse(f"{kind} has no metadata.name{hint}")
    namespace = meta.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise refuse(f"{kind} {name}: metadata.namespace is not a string")
    for part, value in (("name", name), ("namespace", namespace or "")):
        if _CONTROL.search(value):
            raise refuse(f"{kind} {_shown(name)[:100]}: metadata.{part} has control characters")
        if "/" in value or "%" in value or value in (".", ".."):
            # The API server refuses these in every name (ValidatePathSegmentName): they
            # would not survive as one segment of a URL.
            raise refuse(
                f"{kind} {_shown(name)[:100]}: metadata.{part} {_shown(value)[:100]} "
                "is not a valid Kubernetes name (it may not contain '/' or '%', nor be '.' or "
                "'..')"
            )
        if len(value) > MAX_NAME_LENGTH:
            raise refuse(
                f"{kind} {_shortened(name)}: metadata.{part} is {len(value):,} characters "
                f"long, over the limit of {MAX_NAME_LENGTH}"
            )
    if "{{" in name or "{{" in (namespace or ""):
        raise refuse(f"{kind} {name!r} has a template placeholder{TEMPLATE_HINT}")


def _check_plain(filename: str, where: str, doc: Any, *, surrogates: bool = False) -> None:
    """Refuse what JSON cannot hold (non-string keys, NaN, binary, sets) and deep nesting.

    With ``surrogates``, also text with a lone surrogate (from an escape such as "\\ud800"),
    which is no character and cannot be stored.
    """
    stack = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                raise BundleError(
                    filename, f"{where} is nested too deeply (more than {MAX_DEPTH} levels)"
                )
            if isinstance(value, dict):
                for key in value:
                    if not isinstance(key, str):
                        raise BundleError(
                            filename, f"{where} has a key that is not a string: {key!r}"
                        )
                    if surrogates and _SURROGATE.search(key):
                        raise _refused_at(filename, where, doc, key, _SURROGATE_PROBLEM)
                stack.extend((v, depth + 1) for v in value.values())
            else:
                stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, float):
            if not math.isfinite(value):
                problem = f"a number JSON cannot hold ({value})"
                raise _refused_at(filename, where, doc, value, problem)
        elif isinstance(value, str):
            if surrogates and _SURROGATE.search(value):
                raise _refused_at(filename, where, doc, value, _SURROGATE_PROBLEM)
        elif isinstance(value, int):
            if value.bit_length() > MAX_INT_BITS:  # YAML reads 0x… and 0b… of any length
                problem = "a number too large (an integer of more than 4,200 digits)"
                raise _refused_at(filename, where, doc, value, problem)
        elif value is not None:
            raise BundleError(
                filename, f"{where} has a value JSON cannot hold (a {_type_name(value)})"
            )


_SURROGATE_PROBLEM = "text with a lone surrogate (an escape such as \\ud800 that is no character)"


def _refused_at(filename: str, where: str, doc: Any, bad: Any, problem: str) -> BundleError:
    """The error for a bad value (or key) in a document, naming the object and field it is in."""
    path = _path_to(doc, bad)
    if path is None:  # not found again: cannot happen, but the problem stands
        return BundleError(filename, f"{where} has {problem}")
    owner, at = "", 0
    value = doc
    for index, step in enumerate(path):
        if isinstance(value, dict) and isinstance(value.get("kind"), str):
            meta = value.get("metadata")
            name = meta.get("name") if isinstance(meta, dict) else None
            if isinstance(name, str):
                owner, at = f"{_shown(value['kind'])} {_shown(name)}", index
        if index < len(path) - 1:
            value = value[step]
    field = _field_path(path[at:])
    if owner:
        return BundleError(filename, f"{where} has {problem} in {owner} at {field or '.'}")
    return BundleError(filename, f"{where} has {problem} at {field or '.'}")


def _path_to(doc: Any, bad: Any) -> list[str | int] | None:
    """The keys and indexes that lead to the value (or key) ``bad`` in ``doc``."""
    stack: list[tuple[Any, list[str | int]]] = [(doc, [])]
    while stack:
        value, path = stack.pop()
        if value is bad:
            return path
        if isinstance(value, dict):
            for key, item in value.items():
                if key is bad:
                    return [*path, key]
                stack.append((item, [*path, key]))
        elif isinstance(value, list):
            stack.extend((item, [*path, i]) for i, item in enumerate(value))
    return None


def _field_path(path: list[str | int]) -> str:
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            shown = step if _PLAIN_KEY.fullmatch(step) else json.dumps(step)
            text += f".{shown}" if text else shown
    return text


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_/-]+")


def _shortened(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _shown(text: str) -> str:
    """Text for a message: as it is, or as a JSON string when it holds what cannot be shown."""
    return json.dumps(text) if _CONTROL.search(text) or _SURROGATE.search(text) else text


def _type_name(value: Any) -> str:
    return {str: "string", int: "number", float: "number", bool: "boolean", list: "list"}.get(
        type(value), type(value).__name__
    )


# --- reading large JSON as a stream -------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_CHUNK = 1 << 20


class _JsonStream:
    """One JSON file read a window at a time: a List's items (or an array's) are decoded one by
    one with the json module's own decoder, so that memory holds one item, not the file.

    Accepts what _documents accepts as JSON (after leading # comment lines): an object, a List
    or typed list, or an array. Errors name the line and column in the whole file.
    """

    def __init__(self, filename: str, head: bytes, rest: BinaryIO, max_bytes: int) -> None:
        self.filename = filename
        self.rest = rest
        self.max_bytes = max_bytes
        self.read_bytes = 0
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.line = 1  # line of buf[0] in the file
        self.column = 0  # characters before buf[0] on that line
        self.out_of_range: list[str] = []
        self.json = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=self._number)
        # For the values of the top-level object but its List items: keys given twice refused.
        self.unique_json = json.JSONDecoder(
            parse_constant=_refuse_constant,
            parse_float=self._number,
            object_pairs_hook=_unique_keys,
        )
        self._feed(head)

    def _number(self, literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            self.out_of_range.append(literal)
        return value

    def _feed(self, data: bytes) -> None:
        self.read_bytes += len(data)
        _check_size(self.filename, self.read_bytes, self.max_bytes)
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            at = self.read_bytes - len(data) + exc.start
            raise BundleError(self.filename, f"not UTF-8 text (byte {at})") from None
        if self.pos:  # drop what was read, counting its lines
            done = self.buf[: self.pos]
            newlines = done.count("\n")
            if newlines:
                self.line += newlines
                self.column = len(done) - done.rindex("\n") - 1
            else:
                self.column += len(done)
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self.buf += text
        if not data:
            self.eof = True

    def _more(self, size: int = _CHUNK) -> bool:
        if self.eof:
            return False
        self._feed(self.rest.read(size))
        return True

    def _skip(self) -> str:
        """Skip white space (and # comment lines before the document); the next character."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def _here(self, at: int | None = None) -> tuple[int, int]:
        """The line and column (from 1) in the file of an offset in buf (the current one)."""
        line, column = _line_column(self.buf, self.pos if at is None else at)
        return self.line + line - 1, column + (self.column if line == 1 else 0)

    def _error(self, exc: json.JSONDecodeError) -> BundleError:
        truncated = self.eof and (
            exc.pos >= len(self.buf.rstrip()) or exc.msg.startswith("Unterminated string")
        )
        line = self.line + exc.lineno - 1
        column = exc.colno + (self.column if exc.lineno == 1 else 0)
        return BundleError(
            self.filename,
            f"{'truncated' if truncated else 'invalid'} JSON: {exc.msg} "
            f"at line {line} column {column}" + _joined_hint(exc.msg, self.buf, exc.pos),
        )

    def _value(self, where: str, *, unique: bool = False) -> Any:
        """Decode the value at the current position, reading more until it is whole; with
        ``unique``, refuse an object in it that has a key twice."""
        size = _CHUNK
        decoder = self.unique_json if unique else self.json
        while True:
            self._skip()
            start = self.pos
            del self.out_of_range[:]
            try:
                value, end = decoder.raw_decode(self.buf, start)
            except _DuplicateKey:
                at, key, first = _first_duplicate(self.buf, start)
                line, column = self._here(at)
                problem = _json_duplicate(where, key, line, column, self._here(first)[0])
                raise BundleError(self.filename, problem) from None
            except json.JSONDecodeError as exc:
                if self._more(size):
                    size *= 2
                    continue
                raise self._error(exc) from None
            except RecursionError:
                raise BundleError(self.filename, "JSON is nested too deeply") from None
            except ValueError as exc:
                if exc.args and exc.args[0] in _JSON_CONSTANTS:
                    number = float(exc.args[0])
                    raise BundleError(
                        self.filename, f"has a number JSON cannot hold ({number})"
                    ) from None
                raise BundleError(self.filename, f"invalid JSON: {_value_problem(exc)}") from None
            cut = end == len(self.buf) and not isinstance(value, dict | list)
            if cut and self._more(size):  # a number or literal that may go on in the next chunk
                continue
            surrogates = _SURROGATE_ESCAPE.search(self.buf, start, end) is not None
            self.pos = end
            if self.out_of_range or surrogates:
                _check_plain(self.filename, where, value, surrogates=surrogates)
            return value

    def _expect(self, chars: str) -> str:
        char = self._skip()
        if char and char in chars:
            self.pos += 1
            return char
        message = "Expecting value" if chars == "{[" else f"Expecting {chars[0]!r} delimiter"
        raise self._error(json.JSONDecodeError(message, self.buf, self.pos))

    def objects(self) -> FileItems:
        where = "document 1"
        while self._skip() == "#":  # leading comment lines
            while "\n" not in self.buf[self.pos :] and self._more():
                pass
            newline = self.buf.find("\n", self.pos)
            self.pos = len(self.buf) if newline < 0 else newline + 1
        opening = self._expect("{[")
        if opening == "[":
            position = 0
            if self._skip() == "]":
                self.pos += 1
            else:
                while True:
                    position += 1
                    item = self._value(where)
                    yield from _expand(self.filename, f"{where}, item {position}", item)
                    if self._expect(",]") == "]":
                        break
        else:
            yield from self._object(where)
        if self._skip():
            exc = json.JSONDecodeError("Extra data", self.buf, self.pos)
            raise self._error(exc)

    def _object(self, where: str) -> FileItems:
        """A top-level object; its items, when it is a List, one at a time."""
        head: dict[str, Any] = {}
        streamed = 0
        waiting: list[dict[str, Any]] = []  # items without a kind, before the list's kind
        lines: dict[str, int] = {}  # the line of each key
        if self._skip() == "}":
            self.pos += 1
        else:
            while True:
                self._skip()
                line, column = self._here()
                key = self._value(where)
                if not isinstance(key, str):
                    raise self._error(
                        json.JSONDecodeError(
                            "Expecting property name enclosed in double quotes", self.buf, self.pos
                        )
                    )
                if key in lines:
                    problem = _json_duplicate(where, key, line, column, lines[key])
                    raise BundleError(self.filename, problem)
                lines[key] = line
                self._expect(":")
                if key == "items" and self._skip() == "[" and "items" not in head:
                    self.pos += 1
                    if self._skip() == "]":
                        self.pos += 1
                        head["items"] = []
                    else:
                        while True:
                            streamed += 1
                            item = self._value(where)
                            if isinstance(item, dict) and "kind" not in item:
                                if not isinstance(head.get("kind"), str):
                                    waiting.append(item)
                                else:
                                    yield from self._item(head, streamed, item)
                            else:
                                yield from self._item(head, streamed, item)
                            if self._expect(",]") == "]":
                                break
                        head["items"] = None  # streamed
                else:
                    head[key] = self._value(where, unique=True)
                if self._expect(",}") == "}":
                    break
        if streamed:  # (not "items": null, which is no list)
            kind = head.get("kind")
            if not (isinstance(kind, str) and kind.endswith("List")):
                raise BundleError(
                    self.filename,
                    f"{where} has items but is a {_shown(str(kind))[:100]}, not a List",
                )
            for position, item in enumerate(waiting, start=streamed - len(waiting) + 1):
                yield from self._item(head, position, item)
            return
        yield from _expand(self.filename, where, head)

    def _item(self, head: dict[str, Any], position: int, item: Any) -> FileItems:
        kind = head.get("kind") if isinstance(head.get("kind"), str) else "List"
        yield from _expand(
            self.filename, "document 1", {**head, "kind": kind, "items": [item]}, position
        )


# --- writing -----------------------------------------------------------------------------


def info_object(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": INFO_API_VERSION,
        "kind": INFO_KIND,
        "metadata": {"name": spec.get("cluster") or "snapshot"},
        "spec": spec,
    }


def write_bundle(info: dict[str, Any], objects: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The bundle as chunks of JSON text: a kubectl-style List, SnapshotInfo first."""
    return write_bundle_json(info, (json.dumps(obj, ensure_ascii=False) for obj in objects))


def write_bundle_json(info: dict[str, Any], items: Iterable[str]) -> Iterator[str]:
    """The same bundle from its objects as JSON text: each of ``items`` the JSON of one object,
    or of several separated by commas (stored objects, written without parsing them again)."""
    yield '{"apiVersion":"v1","kind":"List","metadata":{},"items":[\n'
    yield json.dumps(info_object(info), ensure_ascii=False)
    for item in items:
        yield ",\n"
        yield item
    yield "\n]}\n"
