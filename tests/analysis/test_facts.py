"""What a device row shows (DeviceFacts) and a verdict's evidence and chain (VerdictFacts) are
stored once for all the snapshots that have them unchanged, so a capture of a cluster writes the
facts of what changed, and the facts go when the last snapshot showing them does."""

from __future__ import annotations

import importlib
import json
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from dradash.analysis.models import (
    DeviceFacts,
    DeviceRow,
    NodeRow,
    PodVerdict,
    PoolRow,
    RowFacts,
    VerdictFacts,
)
from dradash.analysis.services import analysis_run, facts_prune, snapshot_facts
from dradash.clusters.services import snapshots_retain
from dradash.demo.cluster import API_VERSIONS, SERVER_VERSION, build
from dradash.dra.bundle import parse_bundle
from dradash.snapshots.models import Snapshot
from dradash.snapshots.services import snapshot_store

pytestmark = pytest.mark.django_db


def _rows(snapshot: Any) -> dict[tuple[str, str, str], DeviceRow]:
    rows = DeviceRow.objects.filter(snapshot=snapshot).select_related("facts")
    return {(r.driver, r.pool, r.device): r for r in rows}


def _stored() -> dict[str, set[int]]:
    return {
        m._meta.label: set(m.objects.values_list("id", flat=True))
        for m in (DeviceFacts, VerdictFacts, RowFacts)
    }


def _facts(*snapshots: Any) -> dict[str, set[int]]:
    return {label: set(ids) for label, ids in snapshot_facts([s.pk for s in snapshots]).items()}


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


def test_changed_verdicts_get_facts_of_their_own(demo):
    earlier, later = (
        {
            (v.namespace, v.name): v
            for v in PodVerdict.objects.filter(snapshot=s).select_related("facts")
        }
        for s in demo
    )
    changed = 0
    for key, verdict in later.items():
        before = earlier.get(key)
        if before is None:
            continue
        if (before.detail, before.chain) == (verdict.detail, verdict.chain):
            assert before.facts_id == verdict.facts_id
        else:
            assert before.facts_id != verdict.facts_id
            changed += 1
    assert changed  # every Pod's chain holds an object the demo's later snapshot changed


def test_a_capture_of_an_unchanged_cluster_writes_no_facts(demo, analysed):
    later = demo[1]
    before = _stored()
    bundle = parse_bundle(
        [("demo.json", json.dumps(build(True)).encode())],
        max_bytes=settings.DRADASH_BUNDLE_MAX_BYTES,
    )
    with analysed():
        again = snapshot_store(
            cluster=later.cluster,
            objects=bundle.objects,
            source=Snapshot.Source.CAPTURE,
            captured_at=later.captured_at + timedelta(minutes=5),
            server_version=SERVER_VERSION,
            api_versions=API_VERSIONS,
        )
    assert _stored() == before
    assert _facts(again) == _facts(later)
    assert DeviceRow.objects.filter(snapshot=again).count() == len(_rows(later))


def test_analysing_a_snapshot_again_writes_no_facts(demo):
    before = _stored()
    analysis_run(demo[1].pk)
    assert _stored() == before


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
        # The same attribute named with its driver's domain: the same devices.
        qualified = {**query, "attribute": f"{row.driver}/{name}={value}"}
        again = api_client.get(f"/api/v1/snapshots/{snapshot.pk}/devices/", qualified)
        assert [(d["driver"], d["pool"], d["device"]) for d in again.json()] == wanted
    same = api_client.get(f"/api/v1/snapshots/{later.pk}/devices/", {**query, "state": row.status})
    assert {d["status"] for d in same.json()} == {row.status}


def test_deleting_a_snapshot_prunes_only_the_facts_no_other_shows(api_client, demo):
    earlier, later = demo
    kept, facts = _facts(earlier), _facts(later)
    gone = {label: facts[label] - kept[label] for label in facts}
    assert all(gone.values()) and all(kept.values())
    later.delete()
    assert facts_prune(among=snapshot_facts([])) == 0
    assert facts_prune(among={k: sorted(v) for k, v in facts.items()}) == sum(
        len(ids) for ids in gone.values()
    )
    assert _stored() == kept
    assert facts_prune() == 0
    answer = api_client.get(f"/api/v1/snapshots/{earlier.pk}/devices/")
    assert len(answer.json()) == len(_rows(earlier))
    pod = PodVerdict.objects.filter(snapshot=earlier, stage="claim-unallocated").first()
    page = api_client.get(
        f"/api/v1/snapshots/{earlier.pk}/pods/{pod.namespace}/{pod.name}/diagnosis"
    )
    assert page.json()["evidence"]


def test_retention_prunes_the_facts_of_the_snapshots_it_deletes(demo):
    earlier, later = demo
    Snapshot.objects.filter(pk__in=[earlier.pk, later.pk]).update(source=Snapshot.Source.CAPTURE)
    cluster = earlier.cluster
    cluster.keep_last = 1
    cluster.save(update_fields=["keep_last"])
    assert snapshots_retain(cluster) == 1
    assert _stored() == _facts(later)


def test_a_full_prune_finds_the_facts_of_snapshots_deleted_any_way(demo):
    earlier, later = demo
    earlier.cluster.delete()  # as the admin does: the rows go, the facts stay until beat prunes
    assert all(_stored().values())
    assert facts_prune() > 0
    assert not any(_stored().values())


def test_rows_stored_with_plain_tokens_filter_the_same_once_migrated(api_client, demo, monkeypatch):
    """Migration 0013 turns the tokens stored before it into their keys, in SQL: the devices
    page's class, state and attribute filters find the same devices after it as before."""
    from dradash.analysis import services

    if connection.vendor != "postgresql":
        pytest.skip("the tokens column is PostgreSQL's")
    later = demo[1]
    row = DeviceRow.objects.filter(snapshot=later, status="free").exclude(classes="").first()
    name = next(n for n, v in sorted(row.data["attributes"].items()) if "string" in v)
    query = {"device_class": row.class_list[0], "state": "free", "attribute": name}
    url = f"/api/v1/snapshots/{later.pk}/devices/"
    keyed = api_client.get(url, query).json()
    assert keyed and len(keyed) < DeviceRow.objects.filter(snapshot=later).count()
    with monkeypatch.context() as patch:
        patch.setattr(services, "token_key", lambda token: token)  # as stored before 0013
        analysis_run(later.pk)
    plain = DeviceRow.objects.filter(snapshot=later).values_list("tokens", flat=True).first()
    assert any(token.startswith("status:") for token in plain)
    assert api_client.get(url, query).json() == []  # the filters look for keys
    migration = importlib.import_module("dradash.analysis.migrations.0013_token_keys")
    with connection.cursor() as cursor:
        cursor.execute(migration.REKEY)
    assert api_client.get(url, query).json() == keyed


def test_snapshots_share_the_facts_of_unchanged_nodes_and_pools(api_client, demo):
    earlier, later = demo
    for model, key in ((NodeRow, ("name",)), (PoolRow, ("driver", "pool"))):
        rows = [
            {tuple(getattr(r, k) for k in key): r for r in model.objects.filter(snapshot=s)}
            for s in demo
        ]
        shared = [k for k, r in rows[1].items() if k in rows[0] and r.data == rows[0][k].data]
        assert shared and all(rows[0][k].facts_id == rows[1][k].facts_id for k in shared)
    node = NodeRow.objects.filter(snapshot=later).select_related("facts").first()
    answer = api_client.get(f"/api/v1/snapshots/{later.pk}/nodes/{node.name}").json()
    assert answer["name"] == node.name and answer["pods"] == node.data["pods"]
    pools = api_client.get(f"/api/v1/snapshots/{earlier.pk}/pools/").json()
    assert pools == [
        p.data for p in PoolRow.objects.filter(snapshot=earlier).select_related("facts")
    ]
