"""Feature gates a bundle states (SnapshotInfo ``featureGates``): validated, stored with the
snapshot, exported again, shown, and judged by instead of the version's defaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from dradash.dra.allocator import Features
from dradash.dra.allocator.features import unmodelled_gates, with_gates
from dradash.snapshots.models import Snapshot
from tests.gated_cluster import OBJECTS
from tests.snapshots.test_commands import snapshot_info
from tests.stored import import_analysed

pytestmark = pytest.mark.django_db


def import_with(gates: dict[str, Any] | None, tmp_path: Path) -> Snapshot:
    spec: dict[str, Any] = {"serverVersion": "v1.35.3"}
    if gates is not None:
        spec["featureGates"] = gates
    files = [("info.json", snapshot_info(**spec))]
    files.append(("objects.json", json.dumps({"kind": "List", "items": OBJECTS}).encode()))
    return import_analysed(files=files)


def explanation(api_client: Any, snapshot: Snapshot) -> dict[str, Any]:
    url = f"/api/v1/snapshots/{snapshot.pk}/claims/ml/slice-of-gpu/explain"
    response = api_client.get(url)
    assert response.status_code == 200
    return response.json()


def test_the_stated_gates_decide_the_verdict(api_client: Any, tmp_path: Path) -> None:
    default = explanation(api_client, import_with(None, tmp_path))
    assert default["allocatable"] is False  # 1.35 defaults: partitionable devices are off
    assert default["reason"] == "feature-disabled"
    gated = import_with({"DRAPartitionableDevices": True}, tmp_path)
    assert gated.feature_gates == {"DRAPartitionableDevices": True}
    on = explanation(api_client, gated)
    assert on["allocatable"] is True
    assert on["node"] == "node-1"
    assert [r["device"] for r in on["allocation"][0]["devices"]["results"]] == ["gpu-0-mig-1g"]


def test_gates_are_shown_exported_and_read_back(
    api_client: Any, client_logged_in: Any, tmp_path: Path
) -> None:
    snapshot = import_with({"DRAPartitionableDevices": True, "SomeOtherGate": False}, tmp_path)
    body = api_client.get(f"/api/v1/snapshots/{snapshot.pk}/").json()
    assert body["feature_gates"] == {"DRAPartitionableDevices": True, "SomeOtherGate": False}
    page = client_logged_in.get(f"/snapshots/{snapshot.pk}/").content.decode()
    assert "DRAPartitionableDevices=true" in page
    out = tmp_path / "export.json"
    call_command("export_bundle", str(snapshot.pk), "--output", str(out))
    call_command("import_bundle", str(out))
    again = Snapshot.objects.order_by("-pk").first()
    assert again is not None and again.pk != snapshot.pk
    assert again.feature_gates == snapshot.feature_gates


@pytest.mark.parametrize(
    "gates",
    [
        {"DRAPartitionableDevices": "true"},
        {"not a gate": True},
        {f"G{i}": True for i in range(501)},
    ],
)
def test_bad_gates_are_refused_and_nothing_is_stored(gates: dict[str, Any], tmp_path: Path) -> None:
    bad = tmp_path / "info.json"
    bad.write_bytes(snapshot_info(featureGates=gates))
    with pytest.raises(CommandError, match="featureGates"):
        call_command("import_bundle", str(bad))
    assert not Snapshot.objects.exists()


def test_gates_map_onto_the_allocators_features() -> None:
    base = Features.for_version("v1.35.0")
    assert not base.partitionable_devices and not base.binding_conditions
    on = with_gates(base, {"DRAPartitionableDevices": True, "DRAListTypeAttributes": True})
    assert on.partitionable_devices and on.list_type_attributes
    # DeviceBindingAndStatus needs both gates: one alone keeps the other's default (off in 1.35)
    assert not with_gates(base, {"DRADeviceBindingConditions": True}).binding_conditions
    both = {"DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": True}
    assert with_gates(base, both).binding_conditions
    newest = Features()
    assert not with_gates(newest, {"DRAResourceClaimDeviceStatus": False}).binding_conditions
    assert with_gates(newest, {"DRAFractionalCapacityRange": True}).fractional_capacity_range
    assert unmodelled_gates({"DRAAdminAccess": True, "InPlacePodVerticalScaling": True}) == [
        "InPlacePodVerticalScaling"
    ]
