"""A claim whose search for devices has no quick answer (benchmarks/allocator.py's attack: one
node, half its GPUs in group a and half in b, a claim for one more than a group has, all of one
group) is analysed in bounded time, with the verdict kube-scheduler would reach: the search on
the node gets the calls that stand for its 10 s filter timeout and no more."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from benchmarks.allocator import attack_bundle
from dradash.analysis.models import SnapshotAnalysis
from dradash.analysis.tasks import analyse_snapshot
from dradash.snapshots.services import bundle_import

pytestmark = pytest.mark.django_db

POD = "/pods/default/trainer"
CLAIM = "/claims/default/same-group"


def analysed_attack(devices: int, settings: Any) -> int:
    # The budget of calls decides, never the wall clock, however busy the machine is.
    settings.DRADASH_ALLOCATOR_SEARCH_SECONDS = 3600
    snapshot = bundle_import(files=[("attack.json", attack_bundle(devices))])
    analyse_snapshot.apply(args=[snapshot.pk])  # what the worker runs
    assert SnapshotAnalysis.objects.get(pk=snapshot.pk).status == "done"
    return int(snapshot.pk)


def test_60_devices_time_out_at_the_budget_as_the_scheduler_would(
    settings, api_client, client_logged_in
):
    snapshot = analysed_attack(60, settings)
    api = f"/api/v1/snapshots/{snapshot}"

    explained = api_client.get(f"{api}{CLAIM}/explain").json()
    assert (explained["allocatable"], explained["reason"]) == (None, "allocation-timeout")
    assert explained["error"] == "node gpu-worker: timed out trying to allocate devices"
    assert explained["nodes"] == [
        {
            "node": "gpu-worker",
            "outcome": "timeout",
            "error": "node gpu-worker: timed out trying to allocate devices",
        }
    ]
    assert [step["remaining"] for step in explained["requests"][0]["funnel"]][:4] == [60] * 4

    diagnosis = api_client.get(f"{api}{POD}/diagnosis").json()
    assert (diagnosis["stage"], diagnosis["reason"]) == ("claim-unallocated", "allocation-timeout")
    summary = diagnosis["summary"]
    # Stopped by its budget (2^20 calls), not by the clock; what was tried; the scheduler.
    assert "on node gpu-worker it did not finish within 1,048,576 allocateOne calls" in summary
    assert "1 node of the 1 the Pod may use searched, 1 timed out" in summary
    assert '"node gpu-worker: timed out trying to allocate devices"' in summary
    assert any("filterTimeout" in step for step in diagnosis["next_steps"])
    assert api_client.get(f"{api}{CLAIM}/diagnosis").json()["reason"] == "allocation-timeout"

    page = client_logged_in.get(
        reverse("claim-detail", args=[snapshot, "default", "same-group"])
    ).content.decode()
    assert "allocation-timeout" in page and "timeout" in page
    assert "did not finish within 1,048,576 allocateOne calls" in page


def test_36_devices_finish_within_the_budget_and_satisfy_no_constraint(settings, api_client):
    # 2^19 calls: Kubernetes 1.37's search (each set once) ends within its filter timeout.
    snapshot = analysed_attack(36, settings)
    api = f"/api/v1/snapshots/{snapshot}"
    explained = api_client.get(f"{api}{CLAIM}/explain").json()
    assert (explained["allocatable"], explained["reason"]) == (False, "constraint-unsatisfiable")
    assert [n["outcome"] for n in explained["nodes"]] == ["nofit"]
    diagnosis = api_client.get(f"{api}{POD}/diagnosis").json()
    assert diagnosis["reason"] == "constraint-unsatisfiable"
