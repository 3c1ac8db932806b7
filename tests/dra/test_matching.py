"""Selectors over a snapshot's devices: the allocator's order of class and request selectors,
errors, nearest misses, and grouping by projection giving the same answers as one by one."""

from __future__ import annotations

import pytest

from dradash.demo import cluster as demo
from dradash.dra import matching
from dradash.dra.cel import CelEvalError, cel_device, compile_selector
from dradash.dra.state import ClusterState

EXPRESSIONS = [
    "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'",
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('45Gi')) >= 0",
    "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')"
    " && device.attributes['gpu.nvidia.com'].index == 0",
    "device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'"
    " && device.attributes['gpu.example.com'].index < 4",
    "device.attributes['gpu.nvidia.com'].?profile.orValue('') == '1g.10gb'",
    "'gpu.nvidia.com' in device.attributes && device.driver == 'gpu.nvidia.com'",
    "cel.bind(a, device.attributes['gpu.nvidia.com'], a.?type.orValue('') == 'mig')",
    "device.attributes['gpu.example.com'].exists(k, k == 'uuid')",
]


@pytest.fixture(scope="module")
def state() -> ClusterState:
    return ClusterState.build(demo.build())


def one_by_one(state: ClusterState, expression: str) -> list[tuple[bool | None, bool]]:
    program = compile_selector(expression)
    out = []
    for device in sorted(state.devices.values(), key=lambda d: d.key):
        try:
            out.append((program.matches(cel_device(matching.device_input(device))), False))
        except CelEvalError:
            out.append((None, True))
    return out


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_grouping_by_projection_answers_like_evaluating_each_device(
    state: ClusterState, expression: str
) -> None:
    evaluation = matching.evaluate(state, expression)
    grouped = [(r.verdict.matches, r.verdict.error is not None) for r in evaluation.rows]
    assert grouped == one_by_one(state, expression)
    assert len(evaluation.rows) == len(state.devices) == 37


def test_counts_and_states(state: ClusterState) -> None:
    evaluation = matching.evaluate(state, EXPRESSIONS[0])
    # MIG devices carry their parent's productName too.
    assert evaluation.summary == {"matched": 17, "unmatched": 4, "errors": 16, "unknown": 0}
    nodes = {r.device.slice.node_name for r in evaluation.matching}
    assert nodes == {"h100-node-01", "h100-mig-node-01"}
    # The example driver's GPUs have no gpu.nvidia.com attributes at all: an empty map,
    # whose productName is "no such key", which would abort scheduling.
    messages = [m for m, _ in evaluation.error_groups]
    assert messages == ["CEL runtime error: no such key: productName"]


def test_a_device_class_applies_its_selectors_first(state: ClusterState) -> None:
    evaluation = matching.evaluate(state, EXPRESSIONS[0], device_class="gpu.nvidia.com")
    assert evaluation.summary == {"matched": 8, "unmatched": 29, "errors": 0, "unknown": 0}
    assert len(evaluation.excluded) == 25  # 16 example GPUs and 9 MIG devices
    assert {r.device.name for r in evaluation.nearest_misses} == {f"gpu-{i}" for i in range(4)}


def test_the_a100_index_selector_errors_only_where_the_first_clause_holds(
    state: ClusterState,
) -> None:
    evaluation = matching.evaluate(state, EXPRESSIONS[2], device_class="gpu.nvidia.com")
    assert [(m, len(rows)) for m, rows in evaluation.error_groups] == [
        ("CEL runtime error: no such key: index", 4)
    ]
    assert {r.device.slice.node_name for r in evaluation.by_state("error")} == {"a100-node-01"}
    assert evaluation.summary["matched"] == 0


def test_nearest_misses_come_first_and_name_the_failing_clause(state: ClusterState) -> None:
    evaluation = matching.evaluate(state, EXPRESSIONS[3], device_class="gpu.example.com")
    misses = evaluation.nearest_misses
    assert [r.verdict.failed_clauses for r in misses][:1] == [
        ["device.attributes['gpu.example.com'].index < 4"]
    ]
    assert len(evaluation.matching) == 8  # index 0..3 on two nodes


def test_an_unknown_class_is_refused(state: ClusterState) -> None:
    with pytest.raises(matching.UnknownDeviceClass, match="device class nope does not exist"):
        matching.evaluate(state, "true", device_class="nope")


def test_a_compile_error_gives_no_rows(state: ClusterState) -> None:
    evaluation = matching.evaluate(state, "device.attributes[")
    assert "Syntax error" in (evaluation.compile_error or "")
    assert evaluation.rows == []


def test_devices_of_stale_slices_are_not_evaluated() -> None:
    def slice_(name: str, generation: int, devices: list[str]) -> dict[str, object]:
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "n1",
                "pool": {"name": "n1", "generation": generation, "resourceSliceCount": 1},
                "devices": [{"name": d} for d in devices],
            },
        }

    evaluation = matching.evaluate_slices(
        [slice_("old", 1, ["gpu-0", "gpu-1"]), slice_("new", 2, ["gpu-0"])], "true"
    )
    assert [r.device.name for r in evaluation.rows] == ["gpu-0"]
    assert evaluation.rows[0].device.slice.name == "new"


def test_key_attributes_pick_what_tells_devices_apart(state: ClusterState) -> None:
    device = state.devices[("gpu.nvidia.com", "h100-mig-node-01", "gpu-0-mig-1g10gb-19-0")]
    assert matching.key_attributes(device) == [
        ("productName", "NVIDIA H100 80GB HBM3"),
        ("type", "mig"),
        ("profile", "1g.10gb"),
        ("architecture", "Hopper"),
    ]
