"""The home page and the snapshot header (issue 17 and 14): per snapshot, how many Pods are
stuck and at which stages; "captured" only when the bundle says when, else "imported at"."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from dradash.demo.cluster import build
from tests.stored import import_analysed

pytestmark = pytest.mark.django_db


def test_each_snapshot_shows_how_many_pods_are_stuck_and_where(client_logged_in, demo) -> None:
    html = client_logged_in.get(reverse("home")).content.decode()
    later = demo[-1].pk
    row = html[html.index(f">#{later}</a>") :]
    row = row[: row.index("</tr>")]
    assert '20 stuck</strong></a> <span class="muted">of 36</span>' in row
    for stage, n in (
        ("pod-pending", 3),
        # extended-resources/cuda-train-4gpu and the four gang members of llm-train among them
        ("claim-unallocated", 9),
        ("allocated-not-bound", 1),
        ("device-not-prepared", 2),
        ("workload-failing", 5),  # finetune/llama-eval-p3m7d (evicted) and llama-ft among them
    ):
        link = f"{reverse('pod-list', args=[later])}?stage={stage}"
        assert re.search(rf'href="{re.escape(link)}"><span [^>]*>{n} {stage}</span>', row), stage


def test_a_snapshot_still_being_analysed_says_so(client_logged_in, demo) -> None:
    from dradash.analysis.models import SnapshotAnalysis

    SnapshotAnalysis.objects.filter(pk=demo[-1].pk).update(status="pending")
    html = client_logged_in.get(reverse("home")).content.decode()
    assert "being analysed…" in html


def test_the_home_page_reads_a_fixed_number_of_queries(
    client_logged_in, demo, django_assert_max_num_queries
) -> None:
    with django_assert_max_num_queries(10):
        client_logged_in.get(reverse("home"))


def plain_bundle() -> bytes:
    return json.dumps({"kind": "List", "items": build(later=True)}).encode()


def test_a_bundle_without_a_capture_time_was_imported_not_captured(client_logged_in) -> None:
    snapshot = import_analysed(files=[("b.json", plain_bundle())], cluster_name="pasted")
    assert snapshot.captured_at_known is False
    html = client_logged_in.get(reverse("snapshot-detail", args=[snapshot.pk])).content.decode()
    nav = html[html.index('<div class="snapnav">') : html.index("</nav>", html.index("tabs"))]
    assert "imported at <time" in nav and "captured" not in nav
    home = client_logged_in.get(reverse("home")).content.decode()
    assert "imported at <time" in home


def test_a_bundle_with_its_capture_time_was_captured(client_logged_in, demo) -> None:
    info = {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "info"},
        "spec": {"cluster": "dated", "capturedAt": "2026-11-28T10:30:00Z"},
    }
    items = [*build(later=True), info]
    snapshot = import_analysed(files=[("b.json", json.dumps(items).encode())])
    assert snapshot.captured_at_known is True
    html = client_logged_in.get(reverse("snapshot-detail", args=[snapshot.pk])).content.decode()
    assert 'captured <time datetime="2026-11-28T10:30:00+00:00">2026-11-28 10:30:00 UTC' in html
    assert "imported at" not in html


def test_an_export_of_an_imported_bundle_claims_no_capture_time() -> None:
    from dradash.snapshots.services import snapshot_info

    snapshot = import_analysed(files=[("b.json", plain_bundle())])
    assert "capturedAt" not in snapshot_info(snapshot)
