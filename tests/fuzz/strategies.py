"""Hypothesis strategies and settings shared by the fuzz tests.

Every test here runs a fixed set of examples (``derandomize``, no example database), so CI is
deterministic: a failure seen once is seen on every run until the code or Hypothesis changes.
"""

from __future__ import annotations

import copy
import json
import math
import os
import traceback
from collections import deque
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FIXTURES = Path(__file__).parent.parent / "fixtures" / "upstream"
NOT_MANIFESTS = {"INDEX.md", "selectors.txt", "NVIDIA_ATTRIBUTES.md"}
# Large files make mutation slow and add nothing the small ones lack.
MAX_FIXTURE_BYTES = 40_000


# DRADASH_FUZZ_SCALE=20 runs twenty times the examples, from a random seed: a longer hunt for
# bugs on a developer's machine. Unset (CI), every run tries the same examples.
SCALE = int(os.environ.get("DRADASH_FUZZ_SCALE") or 0)


def fuzz_settings(max_examples: int, **extra: Any) -> settings:
    """Deterministic settings: the same examples on every run, nothing stored between runs."""
    return settings(
        max_examples=max_examples * (SCALE or 1),
        deadline=None,
        derandomize=not SCALE,
        database=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture,
            HealthCheck.large_base_example,
        ],
        **extra,
    )


# --- bugs found and not fixed yet ----------------------------------------------------------

# (exception type, the innermost dradash function it escapes from) -> the xfail(strict=True)
# test that pins the bug with its smallest input. The property tests tolerate exactly these, so
# that they keep looking for new bugs; once a bug is fixed, its xfail test passes (a failure,
# as strict) and its entry here goes.
KNOWN_BUGS: dict[tuple[str, str], str] = {}


def known_bug(exc: BaseException) -> str | None:
    """The xfail test that pins this exception's bug, if it is a known one."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/dradash/" in f.filename]
    if not frames:
        return None
    name = type(exc).__name__
    if any(c.__name__ == "DataError" for c in type(exc).__mro__):  # Django's or psycopg's
        name = "DataError"
    return KNOWN_BUGS.get((name, frames[-1].name))


# --- the corpus ---------------------------------------------------------------------------


@cache
def fixture_files() -> tuple[tuple[str, bytes], ...]:
    """Real manifests (name, bytes), small enough to mutate quickly, in a stable order."""
    return tuple(
        (p.name, p.read_bytes())
        for p in sorted(FIXTURES.iterdir())
        if p.name not in NOT_MANIFESTS and p.stat().st_size <= MAX_FIXTURE_BYTES
    )


@cache
def demo_bytes(later: bool = False) -> bytes:
    from dradash.demo import cluster as demo

    return json.dumps(demo.build(later)).encode()


@cache
def corpus_files() -> tuple[tuple[str, bytes], ...]:
    return (("demo.json", demo_bytes(False)), *fixture_files())


@cache
def corpus_documents() -> tuple[Any, ...]:
    """Every mapping document of the corpus that plain YAML reads (JSON is YAML too)."""
    docs: list[Any] = []
    for _, data in corpus_files():
        try:
            loaded = list(yaml.safe_load_all(data.decode()))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        docs.extend(d for d in loaded if isinstance(d, dict))
    return tuple(docs)


@cache
def demo_objects(later: bool = False) -> tuple[dict[str, Any], ...]:
    from dradash.demo import cluster as demo

    return tuple(demo.build(later))


@cache
def demo_slices() -> tuple[dict[str, Any], ...]:
    return tuple(o for o in demo_objects() if o.get("kind") == "ResourceSlice")


# --- values -------------------------------------------------------------------------------

HUGE_NUMBERS = [
    2**31,
    2**53 + 1,
    2**63,
    2**64,
    -(2**63) - 1,
    10**30,
    1e308,
    -1e308,
    5e-324,
    0.1,
    -0.0,
]
ODD_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "\u202e",
    "é",
    "💥",
    "{{ .Values.name }}",
    "../../etc/passwd",
    "<script>alert(1)</script>",
    "x" * 300,
    "1e400",
    "NaN",
    "null",
    "true",
    "-1",
    "2020-13-45T99:99:99Z",
    "resource.k8s.io/v1",
    "v1",
    "List",
    "PodList",
    "ResourceSlice",
    "ResourceClaim",
    "Pod",
    "Node",
    "DeviceClass",
    "Secret",
    "dradash.io/v1",
    "SnapshotInfo",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(HUGE_NUMBERS),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(ODD_STRINGS),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(st.text(max_size=10), st.sampled_from(ODD_STRINGS)), children, max_size=4
        ),
    ),
    max_leaves=12,
)
# Values that also include what JSON cannot hold: NaN and infinities.
any_values = st.one_of(json_values, st.sampled_from([math.nan, math.inf, -math.inf]))


# --- mutating parsed documents ----------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = (), limit: int = 3000) -> list[tuple[Any, ...]]:
    """Paths to every node of a JSON-like tree (the root is ``()``), breadth first."""
    paths = [prefix]
    queue = deque([(prefix, value)])
    while queue and len(paths) < limit:
        path, node = queue.popleft()
        children: list[tuple[Any, Any]] = []
        if isinstance(node, dict):
            children = list(node.items())
        elif isinstance(node, list):
            children = list(enumerate(node))
        for key, child in children:
            paths.append((*path, key))
            queue.append(((*path, key), child))
    return paths


def _get(root: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        root = root[key]
    return root


IDENTITY_KEYS = ["metadata", "name", "namespace", "kind", "apiVersion", "items", "spec", "status"]


def _keeps_identity(path: tuple[Any, ...]) -> bool:
    """A path inside an item of a List, but not to its kind, apiVersion, name or namespace."""
    if len(path) < 3 or path[0] != "items" or path[2] in ("kind", "apiVersion"):
        return False
    return path[2] != "metadata" or (len(path) > 3 and path[3] not in ("name", "namespace"))


@st.composite
def mutate(
    draw: st.DrawFn, doc: Any, *, max_mutations: int = 4, keep_identity: bool = False
) -> Any:
    """The document with a few random changes: values replaced by values of other types,
    keys deleted or renamed, containers nested in lists, lists emptied or duplicated.

    With ``keep_identity`` (for a List), every item keeps its kind, apiVersion and name, so the
    bundle mostly still imports and the pages of the changed objects can be looked at.
    """
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(min_value=1, max_value=max_mutations))):
        paths = _paths(doc, limit=20_000)
        if keep_identity:
            paths = [p for p in paths if _keeps_identity(p)]
        path = draw(st.sampled_from(paths))
        op = draw(
            st.sampled_from(
                ["replace", "replace", "delete", "wrap", "identity", "duplicate", "rename"]
            )
        )
        if not path:  # the root itself
            if op == "wrap":
                doc = [doc]
            elif op == "replace":
                doc = draw(any_values)
            continue
        parent, key = _get(doc, path[:-1]), path[-1]
        if op == "replace":
            parent[key] = draw(any_values)
        elif op == "delete":
            del parent[key]
        elif op == "wrap":
            parent[key] = [parent[key]]
        elif op == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
        elif op == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(IDENTITY_KEYS))] = parent.pop(key)
        elif op == "identity":
            node = parent[key]
            if isinstance(node, dict):
                node[draw(st.sampled_from(IDENTITY_KEYS))] = draw(any_values)
    return doc


_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _AliasDumper(_Dumper):
    """Writes anchors and aliases for values that appear twice (the default)."""


class _NoAliasDumper(_Dumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def serialize(doc: Any, how: str) -> bytes:
    """The document as bytes: JSON (NaN allowed), YAML block, flow or with anchors."""
    if how == "json":
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if how == "json-ascii":  # \u escapes: NUL and lone surrogates survive the UTF-8 check
        return json.dumps(doc).encode()
    if how == "yaml-stream" and isinstance(doc, list):
        text = yaml.dump_all(doc, Dumper=_NoAliasDumper, allow_unicode=True)
    elif how == "yaml-flow":
        text = yaml.dump(doc, Dumper=_NoAliasDumper, default_flow_style=True, allow_unicode=True)
    elif how == "yaml-aliases":
        if isinstance(doc, dict) and doc:  # share a value so the dumper writes an alias
            first = next(iter(doc))
            doc = {**doc, "shared": doc[first], "again": doc[first]}
        text = yaml.dump(doc, Dumper=_AliasDumper, allow_unicode=True)
    else:
        text = yaml.dump(doc, Dumper=_NoAliasDumper, allow_unicode=True)
    return text.encode("utf-8", "surrogatepass")


SERIALIZATIONS = ["json", "json-ascii", "yaml", "yaml-stream", "yaml-flow", "yaml-aliases"]


@st.composite
def mutated_documents(draw: st.DrawFn, *, max_mutations: int = 4) -> bytes:
    """A document of the corpus (or a kubectl-style List of a few), mutated and serialized."""
    docs = corpus_documents()
    if draw(st.booleans()):
        doc: Any = draw(st.sampled_from(docs))
    else:
        items = draw(st.lists(st.sampled_from(demo_objects()), min_size=1, max_size=6))
        doc = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}
    doc = draw(mutate(doc, max_mutations=max_mutations))
    try:
        return serialize(doc, draw(st.sampled_from(SERIALIZATIONS)))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        return json.dumps(doc, default=str).encode("utf-8", "surrogatepass")


@st.composite
def mutated_demo(draw: st.DrawFn, *, max_mutations: int = 3) -> bytes:
    """The demo bundle as a List with a few changes inside its objects (identities kept)."""
    items = list(demo_objects(draw(st.booleans())))
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}
    doc = draw(mutate(doc, max_mutations=max_mutations, keep_identity=True))
    try:
        return serialize(doc, draw(st.sampled_from(["json", "json-ascii", "yaml"])))
    except (yaml.YAMLError, ValueError, TypeError):
        return json.dumps(doc, default=str).encode("utf-8", "surrogatepass")


# --- mutating bytes ---------------------------------------------------------------------------


@st.composite
def truncated_files(draw: st.DrawFn) -> bytes:
    _, data = draw(st.sampled_from(corpus_files()))
    return data[: draw(st.integers(min_value=0, max_value=len(data)))]


@st.composite
def flipped_files(draw: st.DrawFn) -> bytes:
    _, data = draw(st.sampled_from(corpus_files()))
    buf = bytearray(data)
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        if not buf:
            break
        i = draw(st.integers(min_value=0, max_value=len(buf) - 1))
        op = draw(st.sampled_from(["set", "xor", "insert", "delete"]))
        byte = draw(st.sampled_from(b"{}[]:,\"'-&*!#|>\n\t \x00\xff\xc3\\"))
        if op == "set":
            buf[i] = byte
        elif op == "xor":
            buf[i] ^= 1 << draw(st.integers(min_value=0, max_value=7))
        elif op == "insert":
            buf.insert(i, byte)
        else:
            del buf[i]
    return bytes(buf)


def _nest(depth: int, open_: str, close: str, core: str = "1") -> bytes:
    return (open_ * depth + core + close * depth).encode()


SPECIAL_INPUTS: list[bytes] = [
    b"",
    b"   \n",
    b"\xef\xbb\xbf",
    b"# only a comment\n",
    b"---\n---\n",
    b"null",
    b"[]",
    b"{}",
    b"[[]]",
    b"[1, 2]",
    b'"a string"',
    b"42",
    b"NaN",
    b"-Infinity",
    b'{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "x": NaN}}',
    b'{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "x": 1e999}}',
    b'{"kind": "List", "items": [{"kind": "List", "items": []}]}',
    b'{"kind": "PodList", "apiVersion": "v1", "items": [[]]}',
    b'{"kind": "List", "apiVersion": "v1", "items": {"a": 1}}',
    b"{{- if .Values.enabled }}\nkind: Pod\n{{- end }}\n",
    b"a: &a [1]\nb: *a\n",
    b"a: &a [*a]\n",
    b"kind: Pod\napiVersion: v1\nmetadata:\n  name: !!binary aGk=\n",
    b"kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  x: !!python/object/apply:os.system [ls]\n",
    b"kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  x: .nan\n",
    b"kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  ? [a, b]\n  : c\n",
    b"kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  1: c\n",
    b"kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  x: 2001-12-14t21:59:43.10-05:00\n",
    b"kind: Pod\napiVersion: v1\nmetadata: {name: p, <<: {a: 1}}\n",
    b"kind: Pod\napiVersion: v1\nmetadata:\n  name: p\n  x: !!set {a, b}\n",
    _nest(5000, "[", "]"),
    _nest(5000, '{"a":', "}"),
    _nest(300, "[", "]"),
    _nest(5000, "- ", "", "x"),
    b"a: " + _nest(5000, "[", "]"),
    b"a:\n" + b"".join(b"  " * i + b"b:\n" for i in range(1, 400)),
]


def nested_lists(depth: int) -> bytes:
    obj: Any = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    for _ in range(depth):
        obj = {"apiVersion": "v1", "kind": "List", "items": [obj]}
    return json.dumps(obj).encode()


bundle_bytes = st.one_of(
    st.binary(max_size=400),
    st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.text(alphabet='{}[]:,"-&*!#|>\n\t 01aknd.', max_size=200).map(str.encode),
    st.sampled_from(SPECIAL_INPUTS),
    st.integers(min_value=1, max_value=250).map(nested_lists),
    truncated_files(),
    flipped_files(),
    mutated_documents(),
    mutated_documents(),
    mutated_documents(),
)
