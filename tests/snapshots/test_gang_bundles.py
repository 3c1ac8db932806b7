"""Workloads and PodGroups through import_bundle and export_bundle: stored, counted, exported
and read back to an identical snapshot; "not-served" (no GenericWorkload gate) keeps a snapshot
whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dradash.snapshots.models import Snapshot
from tests.kubeapi import gang_objects
from tests.snapshots.test_commands import run, snapshot_contents

pytestmark = pytest.mark.django_db

EXAMPLE = "dra-example-driver__podgroup-resourceclaimtemplate__podgroup-resourceclaimtemplate.yaml"
NS = "podgroup-resourceclaimtemplate"


def test_the_136_example_imports_with_its_podgroups_counted(fixtures_dir: Path) -> None:
    run("import_bundle", str(fixtures_dir / EXAMPLE), "--cluster", "gangs")

    snapshot = Snapshot.objects.get()
    assert snapshot.status == "complete"
    assert snapshot.kinds["PodGroup"]["status"] == "ok"
    assert snapshot.kinds["PodGroup"]["count"] == 2
    assert snapshot.kinds["Workload"]["status"] == "absent"
    assert snapshot.ignored == {"apps/v1 Deployment": 2}


@pytest.mark.parametrize("version", ["v1alpha2", "v1beta1"])
def test_export_then_import_keeps_workloads_and_podgroups(version: str, tmp_path: Path) -> None:
    info = {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "gangs"},
        "spec": {"cluster": "gangs", "capturedAt": "2026-11-28T09:40:00Z"},
    }
    source = tmp_path / "in.json"
    source.write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [info, *gang_objects(version)]})
    )
    run("import_bundle", str(source), "--cluster", "gangs")
    original = Snapshot.objects.get()
    exported = tmp_path / "out.json"
    run("export_bundle", str(original.pk), "-o", str(exported))

    items = json.loads(exported.read_text())["items"]
    group = next(o for o in items if o["kind"] == "PodGroup" and o["metadata"]["name"] == "group-1")
    assert group["apiVersion"] == f"scheduling.k8s.io/{version}"
    assert any(o["kind"] == "Workload" for o in items)
    run("import_bundle", str(exported))
    copy = Snapshot.objects.exclude(pk=original.pk).get()
    assert snapshot_contents(copy) == snapshot_contents(original)
    assert copy.kinds["PodGroup"]["count"] == 2
    assert copy.kinds["Workload"]["count"] == 1


def test_workloads_and_podgroups_not_served_leave_the_snapshot_whole(tmp_path: Path) -> None:
    why = "the GenericWorkload feature gate is off or the cluster is older than 1.36"
    info = {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "prod"},
        "spec": {
            "cluster": "prod",
            "capturedAt": "2026-11-01T08:00:00Z",
            "serverVersion": "v1.37.1",
            "kinds": {
                "PodGroup": {"status": "not-served", "message": why},
                "Workload": {"status": "not-served", "message": why},
            },
        },
    }
    source = tmp_path / "in.json"
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    source.write_text(json.dumps([info, node]))
    run("import_bundle", str(source))

    snapshot = Snapshot.objects.get()
    assert snapshot.status == "complete"
    assert snapshot.missing_kinds == {}
    assert snapshot.kinds["PodGroup"] == {"status": "not-served", "count": 0, "message": why}
