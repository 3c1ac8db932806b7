"""The diff of two synthetic clusters reads only the objects that differ, in a number of
queries that does not grow with them, and caps what it lists and reads: two unrelated clusters
get a page that says what it left out, not a worker that runs out of memory or time."""

from __future__ import annotations

import copy
import html as htmllib
import re
from typing import Any

import pytest
from django.db import connection
from django.db.models.functions import Length
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from benchmarks.synthetic import PROFILES, bundle_chunks, generate
from dradash.compare import selectors
from dradash.snapshots.models import ObjectBlob
from dradash.snapshots.selectors import snapshot_members
from dradash.snapshots.services import bundle_import

pytestmark = pytest.mark.django_db

SMALL = generate(**PROFILES["small"])  # 50 GPU nodes, 200 Pods and claims, 400 Events


def store(objects: list[dict[str, Any]], name: str) -> Any:
    data = "".join(bundle_chunks("small", objects)).encode()
    return bundle_import(files=[(f"{name}.json", data)], cluster_name="synthetic")


def later(failed: int) -> list[dict[str, Any]]:
    """The cluster a little later: ``failed`` running Pods failed, every Node posted a
    heartbeat (no change that counts), three Events recurred."""
    objects = copy.deepcopy(SMALL)
    running = [o for o in objects if o["kind"] == "Pod" and o["status"].get("phase") == "Running"]
    for pod in running[:failed]:
        pod["status"]["phase"] = "Failed"
    for obj in objects:
        if obj["kind"] == "Node":
            obj["metadata"]["resourceVersion"] = "2"
    for event in [o for o in objects if o["kind"] == "Event"][:3]:
        event["count"] = int(event.get("count") or 1) + 1
    return objects


def text(response: Any) -> str:
    assert response.status_code == 200, response.content[:300]
    words = re.sub(r"<[^>]+>", " ", htmllib.unescape(response.content.decode()))
    return re.sub(r"\s+", " ", words)


def diff_url(before: Any, after: Any) -> str:
    return reverse("snapshot-diff", args=[before.pk, after.pk])


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The blob ids whose stored JSON the diff reads."""
    ids: list[int] = []
    blob_rows = selectors.blob_rows

    def counted(wanted: Any, fields: tuple[str, ...]) -> Any:
        if "data" in fields:
            wanted = list(wanted)
            ids.extend(wanted)
        return blob_rows(wanted, fields)

    monkeypatch.setattr(selectors, "blob_rows", counted)
    return ids


def test_the_diff_reads_only_the_objects_that_differ(client_logged_in, analysed, read) -> None:
    with analysed():
        before, after = store(SMALL, "a"), store(later(failed=20), "b")

    page = text(client_logged_in.get(diff_url(before, after)))

    mine, theirs = snapshot_members.get(before), snapshot_members.get(after)
    assert sorted(read) == sorted(mine ^ theirs)  # 20 Pods, 51 Nodes, 3 Events, each twice
    assert len(read) == 2 * (20 + 51 + 3)
    # The kinds table: before, after, added, removed, changed, unchanged.
    assert "Pod 200 200 0 0 20 180" in page
    assert "Node 51 51 0 0 0 51" in page  # heartbeats alone: unchanged
    assert "Pods whose diagnosis stage changed (19)" in page  # from the stored verdicts
    assert "3 events recurred" in page
    assert "not compared" not in page


def test_the_number_of_queries_does_not_grow_with_the_changed_objects(
    client_logged_in, analysed
) -> None:
    with analysed():
        base = store(SMALL, "a")
        few, many = store(later(failed=5), "b"), store(later(failed=60), "c")
    queries = []
    for after in (few, many):
        with CaptureQueriesContext(connection) as captured:
            client_logged_in.get(diff_url(base, after))
        queries.append(len(captured))

    assert queries[0] == queries[1], queries
    assert queries[1] <= 30, queries


def test_two_unrelated_clusters_are_counted_in_full_and_listed_in_part(
    client_logged_in, analysed, read, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selectors, "LIST_LIMIT", 5)
    monkeypatch.setattr(selectors, "OVERVIEW_LIMIT", 3)
    with analysed():
        before, after = store(SMALL, "a"), store(generate(**PROFILES["small"], seed=1), "b")

    page = text(client_logged_in.get(diff_url(before, after)))
    filtered = text(client_logged_in.get(diff_url(before, after), {"kind": "Pod"}))

    # Counted in full (the kinds table: before, after, added, removed, changed, unchanged)...
    assert "Pod 200 200 200 200 0 0" in page
    assert "Event 400 400 400 400 0 0" in page
    assert "Pods using DRA created (200)" in page and "Pods using DRA deleted (200)" in page

    def count(title: str) -> int:
        found = re.search(re.escape(title) + r" \((\d+)\)", page)
        return int(found.group(1)) if found else 0

    # Every claim created and deleted is counted, under the code its status tells, though only
    # the first few are read into sentences.
    assert count("Claims allocated") + count("Claims created, not allocated") == 200
    assert count("Claims released") + count("Claims deleted, not allocated") == 200
    assert count("Claims allocated") > 5
    # ... listed in part, saying how many more there are...
    assert "… and 197 more: only Pod objects, up to 5 per list" in page
    assert "… and 195 more (the first 5 are listed)" in filtered
    # ... and read only where the sentences need the objects: Pods and Events added or removed
    # are known by their keys (and the shown Events by their detail).
    kinds = dict(ObjectBlob.objects.filter(id__in=read).values_list("id", "kind"))
    assert "Pod" not in kinds.values()
    assert sum(1 for kind in kinds.values() if kind == "Event") <= 2 * 5
    assert "not read" not in page


def test_a_diff_that_would_read_more_than_its_budget_reads_no_further_and_says_so(
    client_logged_in, analysed, read, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selectors, "READ_BUDGET", 100_000)
    relabelled = copy.deepcopy(SMALL)
    for obj in relabelled:
        obj["metadata"].setdefault("labels", {})["relabelled"] = "yes"
    with analysed():
        before, after = store(SMALL, "a"), store(relabelled, "b")

    page = text(client_logged_in.get(diff_url(before, after)))

    differ = snapshot_members.get(before) ^ snapshot_members.get(after)
    sizes = dict(ObjectBlob.objects.filter(id__in=differ).values_list("id", Length("data")))
    assert len(differ) == 2 * len(SMALL)  # every object changed
    # Reading stopped once past the budget (the part being read finished): far from all.
    assert 100_000 <= sum(sizes[i] for i in read) < sum(sizes.values()) / 4
    assert "These snapshots differ in more than one diff reads (97.7 KB of stored objects)" in (
        page
    )
    assert re.search(r"Event 400 400 0 0 0 \+ 400 not compared 0", page)
