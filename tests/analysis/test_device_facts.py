"""What a device row shows is stored once for all the snapshots that show the device unchanged
(DeviceFacts), so a capture of a cluster writes the facts of what changed, and the facts go
when the last snapshot showing them does."""

from __future__ import annotations

from typing import Any

import pytest

from dradash.analysis.models import DeviceFacts, DeviceRow
from dradash.analysis.services import analysis_run, device_facts_prune, snapshot_device_facts
from dradash.clusters.services import snapshots_retain
from dradash.snapshots.models import Snapshot

pytestmark = pytest.mark.django_db


def _rows(snapshot: Any) -> dict[tuple[str, str, str], DeviceRow]:
    rows = DeviceRow.objects.filter(snapshot=snapshot).select_related("facts")
    return {(r.driver, r.pool, r.device): r for r in rows}


def test_snapshots_share_the_facts_of_unchanged_devices_only(demo):
    earlier, later = (_rows(s) for s in demo)
    same = changed = 0
    for key, row in later.items():
        before = earlier.get(key)
        if before is None:
            continue
        if before.facts.data == row.facts.data:
            assert before.facts_id == row.facts_id  # written once, shown by both
            same += 1
        else:
            assert before.facts_id != row.facts_id
            changed += 1
    assert same and changed  # the demo's later snapshot changed some devices, not all
    stored = DeviceFacts.objects.count()
    assert stored == len({r.facts_id for r in [*earlier.values(), *later.values()]})
    assert stored < len(earlier) + len(later)


def test_analysing_a_snapshot_again_writes_no_facts(demo):
    before = set(DeviceFacts.objects.values_list("id", flat=True))
    analysis_run(demo[1].pk)
    assert set(DeviceFacts.objects.values_list("id", flat=True)) == before


def test_lists_filtered_by_class_and_attribute_show_only_the_snapshots_devices(api_client, demo):
    earlier, later = demo
    row = DeviceRow.objects.filter(snapshot=later).exclude(classes="").first()
    device_class = row.class_list[0]
    # A string attribute its devices share ("model": "LATEST-GPU-MODEL").
    name, value = next(
        (n, v["string"])
        for n, v in sorted(row.facts.data["attributes"].items())
        if "string" in v and n != "uuid"
    )
    query = {"device_class": device_class, "attribute": f"{name}={value}"}
    for snapshot in (earlier, later):
        answer = api_client.get(f"/api/v1/snapshots/{snapshot.pk}/devices/", query)
        wanted = [
            (r.driver, r.pool, r.device)
            for r in DeviceRow.objects.filter(
                snapshot=snapshot, classes__contains=f"\n{device_class}\n"
            ).select_related("facts")
            if r.facts.data["attributes"].get(name, {}).get("string") == value
        ]
        assert int(answer["X-Total-Count"]) == len(wanted) > 1
        assert [(d["driver"], d["pool"], d["device"]) for d in answer.json()] == wanted
    same = api_client.get(f"/api/v1/snapshots/{later.pk}/devices/", {**query, "state": row.status})
    assert {d["status"] for d in same.json()} == {row.status}


def test_deleting_a_snapshot_prunes_only_the_facts_no_other_shows(api_client, demo):
    earlier, later = demo
    kept = set(snapshot_device_facts([earlier.pk]))
    gone = set(snapshot_device_facts([later.pk])) - kept
    assert gone and kept
    facts = snapshot_device_facts([later.pk])
    later.delete()
    assert device_facts_prune(among=facts) == len(gone)
    assert set(DeviceFacts.objects.values_list("id", flat=True)) == kept
    assert device_facts_prune() == 0
    answer = api_client.get(f"/api/v1/snapshots/{earlier.pk}/devices/")
    assert len(answer.json()) == len(_rows(earlier))


def test_retention_prunes_the_facts_of_the_snapshots_it_deletes(demo):
    earlier, later = demo
    Snapshot.objects.filter(pk__in=[earlier.pk, later.pk]).update(source=Snapshot.Source.CAPTURE)
    cluster = earlier.cluster
    cluster.keep_last = 1
    cluster.save(update_fields=["keep_last"])
    assert snapshots_retain(cluster) == 1
    assert set(DeviceFacts.objects.values_list("id", flat=True)) == set(
        snapshot_device_facts([later.pk])
    )


def test_a_full_prune_finds_the_facts_of_snapshots_deleted_any_way(demo):
    earlier, later = demo
    earlier.cluster.delete()  # as the admin does: the rows go, the facts stay until beat prunes
    assert DeviceFacts.objects.exists()
    assert device_facts_prune() > 0
    assert not DeviceFacts.objects.exists()
