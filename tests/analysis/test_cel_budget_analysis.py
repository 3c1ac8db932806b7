"""Issue 22 item 2: a DeviceClass of an uploaded bundle whose selector doubles a list by
concatenation took a Celery process to 2.7 GB. The analysis evaluates it with the same budget as
the playground: the claim's verdict is selector-error with the memory budget's message, and the
analysis's peak memory stays near the budget."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from dradash.analysis.models import ClaimVerdict
from dradash.dra.cel.budget import MEMORY_BUDGET
from tests.stored import import_analysed

pytestmark = pytest.mark.django_db

DRIVER = "gpu.example.com"
# 20 copies of a list of 10, five times over: 32 million elements (cel-go: lazy views).
DOUBLING = (
    "cel.bind(x0, lists.range(10), "
    + "".join(f"cel.bind(x{i + 1}, {' + '.join([f'x{i}'] * 20)}, " for i in range(5))
    + "size(x5) > 0"
    + ")" * 6
)


def bundle() -> bytes:
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n1-gpus"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "n1",
                "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(4)
                ],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": DOUBLING}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "claim", "namespace": "default"},
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "trainer", "namespace": "default", "uid": "u1"},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "claim"}],
            },
            "status": {"phase": "Pending"},
        },
    ]
    return json.dumps(objects).encode()


def test_a_class_selector_over_the_memory_budget_is_a_selector_error() -> None:
    data = bundle()
    tracemalloc.start()
    try:
        snapshot = import_analysed(files=[("bundle.json", data)], cluster_name="red-team")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    verdict = ClaimVerdict.objects.get(snapshot=snapshot, namespace="default", name="claim")
    assert (verdict.stage, verdict.reason) == ("claim-unallocated", "selector-error")
    assert "dradash's memory budget of 64 MiB" in json.dumps(verdict.detail) + verdict.summary
    assert peak < MEMORY_BUDGET + 32 * 1024 * 1024  # was 2.7 GB
