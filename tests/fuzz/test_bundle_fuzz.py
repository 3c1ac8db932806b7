"""Fuzzing the bundle importer: bad input is refused with a BundleError, never anything else,
and an import stores a whole snapshot or nothing (DESIGN "Reliability and security").

Inputs: arbitrary bytes and text, real manifests from tests/fixtures/upstream and the demo bundle
cut short, with bytes flipped, or parsed, changed (values of other types, lists in lists, keys
renamed or dropped, NaN, huge numbers) and written back as JSON or YAML (block, flow, streams,
anchors and aliases), plus hand-picked nasties (deep nesting, templates, YAML tags).

Product bugs this found are pinned as ``xfail(strict=True)`` tests at the end, each with its
smallest input; the property tests tolerate exactly those bugs (``known_bug``) so that they keep
looking for new ones. When a bug is fixed its xfail test passes, fails as strict, and the entry
in KNOWN_BUGS (tests/fuzz/strategies.py) can go.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import psycopg
import pytest
from django.db import DataError, transaction
from django.urls import reverse
from hypothesis import event, given
from hypothesis import strategies as st

from dradash.clusters.models import Cluster
from dradash.dra.bundle import Bundle, BundleError, parse_bundle
from dradash.snapshots.models import ObjectBlob, Snapshot
from dradash.snapshots.selectors import snapshot_objects, state_cache
from dradash.snapshots.services import bundle_import, raw_json
from tests.fuzz.strategies import (
    bundle_bytes,
    corpus_files,
    demo_objects,
    fuzz_settings,
    known_bug,
    mutated_demo,
    mutated_documents,
)

MAX_BYTES = 10 * 1024 * 1024


def parse(data: bytes, name: str = "fuzz.yaml") -> Bundle:
    return parse_bundle([(name, data)], max_bytes=MAX_BYTES)


def parse_or_refuse(data: bytes, name: str = "fuzz.yaml") -> Bundle | None:
    """The bundle, or None when it is refused with a BundleError naming the file."""
    try:
        return parse(data, name)
    except BundleError as exc:
        assert str(exc).startswith(f"{name}: ")
        assert exc.problem
        return None


# --- pure: parse_bundle ---------------------------------------------------------------------


@fuzz_settings(max_examples=100)
@given(data=bundle_bytes)
def test_parse_bundle_returns_a_bundle_or_raises_bundle_error(data: bytes) -> None:
    try:
        bundle = parse_or_refuse(data)
    except Exception as exc:
        if known_bug(exc):
            event(f"known bug: {known_bug(exc)}")
            return
        raise
    event("parsed" if bundle is not None else "refused")
    if bundle is not None:
        for (kind, namespace, name), obj in bundle.objects.items():
            assert isinstance(obj, dict)
            assert isinstance(namespace, str)
            assert isinstance(name, str)
            assert name
            assert obj["kind"] == kind


@fuzz_settings(max_examples=60)
@given(
    files=st.lists(
        st.tuples(st.sampled_from(["a.json", "b.yaml", "c.yml"]), bundle_bytes),
        min_size=1,
        max_size=3,
    )
)
def test_several_files_make_one_bundle_or_one_bundle_error(files: list[tuple[str, bytes]]) -> None:
    try:
        parse_bundle(files, max_bytes=MAX_BYTES)
    except BundleError as exc:
        assert exc.filename in {name for name, _ in files}
    except Exception as exc:
        if not known_bug(exc):
            raise


@fuzz_settings(max_examples=50)
@given(data=st.sampled_from(corpus_files()).map(lambda f: f[1]), limit=st.integers(0, 50_000))
def test_the_size_limit_is_a_bundle_error(data: bytes, limit: int) -> None:
    try:
        parse_bundle([("big.json", data)], max_bytes=limit)
    except BundleError as exc:
        if len(data) > limit:
            assert "over the limit" in exc.problem


# --- with the database: bundle_import -------------------------------------------------------


def table_counts() -> tuple[int, int, int]:
    return Snapshot.objects.count(), ObjectBlob.objects.count(), Cluster.objects.count()


@contextmanager
def rolled_back() -> Iterator[None]:
    """Each example in a savepoint that is undone afterwards: the next starts from the same rows."""
    with transaction.atomic():
        state_cache.clear()
        yield
        transaction.set_rollback(True)
    state_cache.clear()


def snapshot_pages(
    snapshot: Snapshot, *, all_of: set[tuple[str, str, str]] = frozenset()
) -> list[str]:
    """The overview, the claim and pod lists, the first pod and claim, and those in ``all_of``."""
    pages = [
        reverse("snapshot-detail", args=[snapshot.pk]),
        reverse("claim-list", args=[snapshot.pk]),
        reverse("pod-list", args=[snapshot.pk]),
    ]
    rows = sorted(
        snapshot_objects(
            snapshot, kinds=["Pod", "ResourceClaim"], fields=("kind", "namespace", "name")
        )
    )
    first = {
        kind: next((r for r in rows if r[0] == kind), None) for kind in ("Pod", "ResourceClaim")
    }
    for row in rows:
        kind, namespace, name = row
        if (row in all_of or row == first[kind]) and "/" not in namespace + name:
            url_name = "pod-detail" if kind == "Pod" else "claim-detail"
            pages.append(reverse(url_name, args=[snapshot.pk, namespace, name]))
    return pages


@cache
def demo_originals() -> dict[tuple[str, str, str], list[str]]:
    """The demo's objects in both its snapshots, by (kind, namespace, name), as stored JSON."""
    originals: dict[tuple[str, str, str], list[str]] = {}
    for later in (False, True):
        bundle = parse(json.dumps(list(demo_objects(later))).encode(), "demo.json")
        for key, obj in bundle.objects.items():
            originals.setdefault(key, []).append(raw_json(obj))
    return originals


def changed_objects(snapshot: Snapshot) -> set[tuple[str, str, str]]:
    """Stored objects that differ from (or are missing in) the demo's."""
    originals = demo_originals()
    return {
        (kind, namespace, name)
        for kind, namespace, name, data in snapshot_objects(
            snapshot, fields=("kind", "namespace", "name", "data")
        )
        if data not in originals.get((kind, namespace, name), [])
    }


def import_and_check(client: Any, data: bytes, *, changed_pages: bool = False) -> None:
    before = table_counts()
    try:
        snapshot = bundle_import(files=[("fuzz.json", data)], cluster_name="fuzz")
    except Exception as exc:
        if not (isinstance(exc, BundleError) or known_bug(exc)):
            raise
        event(f"refused: {known_bug(exc) or 'BundleError'}")
        assert table_counts() == before, "a refused bundle left rows behind"
        return
    assert Snapshot.objects.count() == before[0] + 1
    event("imported")
    snapshot.refresh_from_db()
    stored = list(snapshot_objects(snapshot, fields=("kind", "namespace", "name")))
    assert snapshot.object_count == len(stored)
    changed = changed_objects(snapshot) if changed_pages else set()
    for url in snapshot_pages(snapshot, all_of=changed):
        response = client.get(url)
        assert response.status_code == 200, url


@pytest.mark.django_db
@fuzz_settings(max_examples=25)
@given(data=st.one_of(mutated_documents(max_mutations=2), bundle_bytes))
def test_bundle_import_stores_a_whole_snapshot_or_nothing(
    client_logged_in: Any, data: bytes
) -> None:
    with rolled_back():
        import_and_check(client_logged_in, data)


@pytest.mark.django_db
@fuzz_settings(max_examples=25)
@given(data=mutated_demo())
def test_pages_of_a_changed_demo_render(client_logged_in: Any, data: bytes) -> None:
    """The demo with a few fields inside its objects changed: it imports (or is refused as a
    whole), and the overview, the lists and the page of every changed pod and claim render."""
    with rolled_back():
        import_and_check(client_logged_in, data, changed_pages=True)


# --- bugs found (xfail until fixed; see the module docstring) -------------------------------


def pod(**metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", **metadata}}


POD = b'{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}}'


def info(**spec: Any) -> bytes:
    obj = {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "i"},
        "spec": spec,
    }
    return json.dumps(obj).encode()


@pytest.mark.xfail(strict=True, raises=ValueError, reason="dra/bundle.py _documents: float(msg)")
def test_bug_json_integer_over_4300_digits() -> None:
    # json.loads raises ValueError("Exceeds the limit (4300 digits) …"); the handler meant for
    # NaN calls float() on that message, which raises ValueError again.
    parse_or_refuse(
        b'{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}, "x": 1'
        + b"0" * 4300
        + b"}"
    )


@pytest.mark.xfail(strict=True, raises=ValueError, reason="yaml int() of > 4300 digits escapes")
def test_bug_yaml_integer_over_4300_digits() -> None:
    parse_or_refuse(b"kind: Pod\napiVersion: v1\nmetadata: {name: p}\nx: 1" + b"0" * 4300 + b"\n")


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, raises=ValueError, reason="services.raw_json: allow_nan=False")
def test_bug_json_number_out_of_float_range() -> None:
    # json.loads("1e400") is inf; parse_bundle accepts it (only NaN/Infinity literals are
    # refused), and storing it raises "Out of range float values are not JSON compliant".
    data = b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": 1e400}'
    with pytest.raises(BundleError):
        bundle_import(files=[("f.json", data)])


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, raises=UnicodeEncodeError, reason="services.snapshot_store")
def test_bug_lone_surrogate_escape() -> None:
    # A JSON \ud800 escape decodes to a lone surrogate, which text.encode() cannot encode.
    data = b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "\\ud800"}}'
    with pytest.raises(BundleError):
        bundle_import(files=[("f.json", data)])


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, raises=(DataError, psycopg.DataError), reason="_blobs_insert")
@pytest.mark.parametrize(
    "metadata",
    [
        {"name": "p\x00"},  # PostgreSQL text cannot hold NUL
        {"name": "p", "namespace": "\x00"},
        {"name": "p" * 254},  # ObjectBlob.name is varchar(253)
        {"name": "p", "namespace": "n" * 254},
    ],
    ids=["nul-name", "nul-namespace", "long-name", "long-namespace"],
)
def test_bug_database_refuses_object_identity(metadata: dict[str, Any]) -> None:
    with pytest.raises(BundleError):
        bundle_import(files=[("f.json", json.dumps(pod(**metadata)).encode())])


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, raises=(DataError, psycopg.DataError), reason="Snapshot columns")
@pytest.mark.parametrize(
    "spec",
    [
        {"serverVersion": "v" * 65},  # Snapshot.server_version is varchar(64)
        {"apiVersions": ["\x00"]},  # jsonb: unsupported Unicode escape sequence
        {"kinds": {"Pod": {"status": "ok", "message": "\x00"}}},
        {"ignored": {"\x00": 1}},
        {"cluster": "a\x00"},  # passes cluster_name_validator (\S), refused by PostgreSQL
        {"capturedAt": "2020-01-01T00:00:00-23:00"},  # time zone displacement out of range
    ],
    ids=["server-version", "api-versions", "kind-message", "ignored-key", "cluster", "tz"],
)
def test_bug_database_refuses_snapshot_info(spec: dict[str, Any]) -> None:
    with pytest.raises(BundleError):
        bundle_import(files=[("info.json", info(**spec)), ("pod.json", POD)])


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, raises=ValueError, reason="services._store_bundle parse_datetime")
def test_bug_captured_at_is_not_a_real_date() -> None:
    # parse_datetime returns None for text that does not look like a date (handled), but raises
    # ValueError for well-formed text that is no date ("month must be in 1..12").
    with pytest.raises(BundleError):
        bundle_import(files=[("info.json", info(capturedAt="2020-13-01T00:00:00Z"))])


@pytest.mark.django_db
@pytest.mark.xfail(strict=True, raises=DataError, reason="captured_at outside Python's years")
@pytest.mark.parametrize(
    "captured_at",
    ["0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00"],
    ids=["year-0-in-utc", "year-10000-in-utc"],
)
def test_bug_a_capture_time_outside_python_years_breaks_every_page(
    client_logged_in: Any, captured_at: str
) -> None:
    # PostgreSQL stores the instant (0001-12-31 23:00 BC, 10000-01-01 00:30 UTC), but psycopg
    # cannot read it back into a datetime: from then on every query that loads that Snapshot
    # row (home page, snapshot pages, GET /api/v1/snapshots/) raises DataError, a 500.
    try:
        bundle_import(files=[("info.json", info(capturedAt=captured_at)), ("pod.json", POD)])
    except BundleError:
        return  # refused: that is a fix too
    assert client_logged_in.get(reverse("home")).status_code == 200
