"""A 1.35 cluster whose answer depends on its feature gates (tests of SnapshotInfo featureGates
and of ``dradash why --feature-gates``)."""

from __future__ import annotations

# A 1.35 cluster whose scheduler runs with DRAPartitionableDevices on (alpha, off by default):
# a MIG partition that consumes counters is then allocatable.
POOL = {"name": "node-1", "generation": 1, "resourceSliceCount": 2}
COUNTERS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "node-1-counters"},
    "spec": {
        "driver": "gpu.nvidia.com",
        "nodeName": "node-1",
        "pool": POOL,
        "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}],
    },
}
DEVICES = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "node-1-devices"},
    "spec": {
        "driver": "gpu.nvidia.com",
        "nodeName": "node-1",
        "pool": POOL,
        "devices": [
            {
                "name": "gpu-0-mig-1g",
                "consumesCounters": [
                    {"counterSet": "gpu-0", "counters": {"memory": {"value": "10Gi"}}}
                ],
            }
        ],
    },
}
OBJECTS = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
    COUNTERS,
    DEVICES,
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "mig"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "slice-of-gpu", "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "mig", "exactly": {"deviceClassName": "mig"}}]}},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "ml"},
        "spec": {
            "containers": [
                {"name": "main", "image": "cuda", "resources": {"claims": [{"name": "g"}]}}
            ],
            "resourceClaims": [{"name": "g", "resourceClaimName": "slice-of-gpu"}],
        },
        "status": {"phase": "Pending"},
    },
]
