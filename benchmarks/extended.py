"""Time the analysis of Pods that ask for GPUs as an extended resource (issue 23).

    python -m benchmarks.extended [--profile large] [--pods 1000] [--plugin-every 10]

Generates the profile's synthetic cluster (``benchmarks.synthetic``), makes ``gpu.nvidia.com``
map ``nvidia.com/gpu`` (as NVIDIA's Helm chart does), lets every ``--plugin-every``-th GPU node
advertise ``nvidia.com/gpu: 8`` in its allocatable (a device plugin still serves it there, as
during a migration), and adds ``--pods`` pending Pods asking ``nvidia.com/gpu`` 1, 2, 4, 8 or 16
without any claim. Then times ``ClusterState.build`` and the whole analysis with and without
those Pods, and prints how their verdicts came out. Asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

from benchmarks.synthetic import PROFILES, generate_profile
from dradash.dra.analysis import analyse
from dradash.dra.state import ClusterState, SnapshotMeta

SIZES = (1, 2, 4, 8, 16)


def _pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"ext-{i}", "namespace": "extended", "uid": f"uid-ext-{i}"},
        "spec": {
            "containers": [
                {
                    "name": "cuda",
                    "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
                    "resources": {"limits": {"nvidia.com/gpu": str(SIZES[i % len(SIZES)])}},
                }
            ]
        },
        "status": {"phase": "Pending"},
    }


def with_extended(objects: list[dict[str, Any]], pods: int, every: int) -> list[dict[str, Any]]:
    out = []
    gpu_nodes = 0
    for obj in objects:
        if obj["kind"] == "DeviceClass" and obj["metadata"]["name"] == "gpu.nvidia.com":
            obj = {**obj, "spec": {**obj["spec"], "extendedResourceName": "nvidia.com/gpu"}}
        elif obj["kind"] == "Node" and obj["metadata"]["name"] != "control-plane-0":
            gpu_nodes += 1
            if every and gpu_nodes % every == 0:
                status = dict(obj.get("status") or {})
                status["allocatable"] = {**(status.get("allocatable") or {}), "nvidia.com/gpu": "8"}
                obj = {**obj, "status": status}
        out.append(obj)
    return out + [_pod(i) for i in range(pods)]


def _timed(label: str, fn: Any) -> Any:
    started = time.perf_counter()
    result = fn()
    print(f"{label:<44} {(time.perf_counter() - started) * 1000:>10,.1f} ms")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=sorted(PROFILES), default="large")
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--plugin-every", type=int, default=10)
    args = parser.parse_args()

    objects = generate_profile(args.profile)
    extended = with_extended(objects, args.pods, args.plugin_every)
    meta = SnapshotMeta(server_version="v1.37.0")
    print(f"synthetic-{args.profile} + {args.pods:,} Pods asking nvidia.com/gpu")
    base = _timed("ClusterState.build, without them", lambda: ClusterState.build(objects, meta))
    _timed("analyse, without them", lambda: analyse(base))
    state = _timed("ClusterState.build, with them", lambda: ClusterState.build(extended, meta))
    result = _timed("analyse, with them", lambda: analyse(state))
    verdicts = Counter(
        (r.diagnosis.stage, r.diagnosis.reason)
        for r in result.pods
        if r.pod.namespace == "extended" and r.diagnosis is not None
    )
    for (stage, reason), n in sorted(verdicts.items()):
        print(f"  {n:>6,}  {stage} / {reason}")
    plugin = sum(1 for f in result.findings if f.code == "extended-resource-device-plugin")
    print(f"  findings extended-resource-device-plugin: {plugin}")


if __name__ == "__main__":
    main()
