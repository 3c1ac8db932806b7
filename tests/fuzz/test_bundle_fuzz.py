"""Fuzzing the bundle importer: bad input is refused with a BundleError, never anything else,
and an import stores a whole snapshot or nothing (DESIGN "Reliability and security").

Inputs: arbitrary bytes and text, real manifests from tests/fixtures/upstream and the demo bundle
cut short, with bytes flipped, or parsed, changed (values of other types, lists in lists, keys
renamed or dropped, NaN, huge numbers) and written back as JSON or YAML (block, flow, streams,
anchors and aliases), plus hand-picked nasties (deep nesting, templates, YAML tags).

Product bugs this finds are pinned as ``xfail(strict=True)`` tests at the end, each with its
smallest input; the property tests tolerate exactly those bugs (``known_bug``) so that they keep
looking for new ones. When a bug is fixed its xfail test passes, fails as strict, and the entry
in KNOWN_BUGS (tests/fuzz/strategies.py) can go; the test stays, asserting the fixed behaviour.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import pytest
from django.db import transaction
from django.urls import reverse
from hypothesis import event, given
from hypothesis import strategies as st

from dradash.analysis.services import analysis_run
from dradash.clusters.models import Cluster
from dradash.dra.bundle import Bundle, BundleError, parse_bundle
from dradash.snapshots.models import ObjectBlob, Snapshot
from dradash.snapshots.selectors import snapshot_members, snapshot_objects
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
        snapshot_members.clear()
        yield
        transaction.set_rollback(True)
    snapshot_members.clear()


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
    analysis_run(snapshot.pk)  # what the analyse task does next: it must not fail either
    snapshot.refresh_from_db()
    stored = list(snapshot_objects(snapshot, fields=("kind", "namespace", "name")))
    assert snapshot.object_count == len(stored)
    changed = changed_objects(snapshot) if changed_pages else set()
    for url in snapshot_pages(snapshot, all_of=changed):
        response = client.get(url)
        assert response.status_code == 200, url
        assert b"Analysing this snapshot" not in response.content, url


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


# --- bugs found, fixed: each with its smallest input -----------------------------------------


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


def refused_import(files: list[tuple[str, bytes]]) -> BundleError:
    """Import that must be refused with a BundleError, storing nothing."""
    before = table_counts()
    with pytest.raises(BundleError) as excinfo:
        bundle_import(files=files)
    assert excinfo.value.filename in {name for name, _ in files}
    assert table_counts() == before
    return excinfo.value


def test_json_integer_over_4300_digits_is_refused() -> None:
    # json.loads raises ValueError("Exceeds the limit (4300 digits) …"); the handler meant for
    # NaN called float() on that message, which raised ValueError again.
    data = b'{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}, "x": 1'
    with pytest.raises(BundleError, match=r"^fuzz.json: .*number is too large"):
        parse(data + b"0" * 4300 + b"}", "fuzz.json")


def test_yaml_integer_over_4300_digits_is_refused() -> None:
    data = b"kind: Pod\napiVersion: v1\nmetadata: {name: p}\nx: 1" + b"0" * 4300 + b"\n"
    with pytest.raises(BundleError, match=r"^fuzz.yaml: .*number is too large"):
        parse(data)


@pytest.mark.django_db
def test_json_number_out_of_float_range_is_refused() -> None:
    # json.loads("1e400") is inf; storing it raised "Out of range float values are not JSON
    # compliant".
    data = b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "x": 1e400}'
    error = refused_import([("f.json", data)])
    assert "number JSON cannot hold (inf) in Pod p at x" in error.problem


@pytest.mark.django_db
def test_lone_surrogate_escape_is_refused() -> None:
    # A JSON \ud800 escape decodes to a lone surrogate, which text.encode() cannot encode.
    data = b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "\\ud800"}}'
    error = refused_import([("f.json", data)])
    assert "lone surrogate" in error.problem
    assert error.problem.endswith("in Pod p at metadata.uid")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        ({"name": "p\x00"}, "metadata.name has control characters"),  # PostgreSQL: no NUL
        ({"name": "p", "namespace": "\x00"}, "metadata.namespace has control characters"),
        ({"name": "p" * 254}, "metadata.name is 254 characters long"),  # varchar(253)
        ({"name": "p", "namespace": "n" * 254}, "metadata.namespace is 254 characters long"),
    ],
    ids=["nul-name", "nul-namespace", "long-name", "long-namespace"],
)
def test_object_identities_the_database_refuses_are_refused(
    metadata: dict[str, Any], problem: str
) -> None:
    error = refused_import([("f.json", json.dumps(pod(**metadata)).encode())])
    assert problem in error.problem


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"serverVersion": "v" * 65}, "spec.serverVersion is 65 characters long"),  # varchar(64)
        ({"apiVersions": ["\x00"]}, "spec.apiVersions has a NUL"),  # jsonb cannot hold \u0000
        ({"kinds": {"Pod": {"status": "ok", "message": "\x00"}}}, "spec.kinds has a NUL"),
        ({"ignored": {"\x00": 1}}, "spec.ignored has a NUL"),
        ({"cluster": "a\x00"}, "spec.cluster has control characters"),
    ],
    ids=["server-version", "api-versions", "kind-message", "ignored-key", "cluster"],
)
def test_snapshot_info_the_database_refuses_is_refused(spec: dict[str, Any], problem: str) -> None:
    error = refused_import([("info.json", info(**spec)), ("pod.json", POD)])
    assert error.filename == "info.json"
    assert problem in error.problem


@pytest.mark.django_db
def test_a_capture_time_with_an_offset_postgresql_refuses_is_stored_in_utc() -> None:
    # RFC 3339 allows offsets up to 23:59; PostgreSQL refused "time zone displacement out of
    # range" (over 15:59). The instant is stored in UTC.
    snapshot = bundle_import(
        files=[("info.json", info(capturedAt="2020-01-01T00:00:00-23:00")), ("pod.json", POD)]
    )
    snapshot.refresh_from_db()
    assert snapshot.captured_at.isoformat() == "2020-01-01T23:00:00+00:00"


@pytest.mark.django_db
def test_a_capture_time_that_is_no_real_date_is_refused() -> None:
    # parse_datetime returns None for text that does not look like a date (handled), but raises
    # ValueError for well-formed text that is no date ("month must be in 1..12").
    error = refused_import([("info.json", info(capturedAt="2020-13-01T00:00:00Z"))])
    assert "capturedAt '2020-13-01T00:00:00Z' is not a valid date" in error.problem


@pytest.mark.django_db
@pytest.mark.parametrize(
    "captured_at",
    ["0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00"],
    ids=["year-0-in-utc", "year-10000-in-utc"],
)
def test_a_capture_time_outside_sane_years_is_refused(
    client_logged_in: Any, captured_at: str
) -> None:
    # PostgreSQL stored the instant (0001-12-31 23:00 BC, 10000-01-01 00:30 UTC), but psycopg
    # could not read it back into a datetime: from then on every query that loads that Snapshot
    # row (home page, snapshot pages, GET /api/v1/snapshots/) raised DataError, a 500.
    error = refused_import([("info.json", info(capturedAt=captured_at)), ("pod.json", POD)])
    assert error.filename == "info.json"
    assert "capturedAt" in error.problem
    assert "out of range" in error.problem
    assert client_logged_in.get(reverse("home")).status_code == 200
