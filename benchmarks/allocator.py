"""The allocator's search under attack: how long a snapshot's analysis takes when one claim's
search for devices has no quick answer (issue 22, item 5).

``attack(devices)`` is a 5 KB bundle: one node with ``devices`` GPUs in the shapes of the
dra-example-driver's ResourceSlices (``gpu.example.com``: index, uuid, model, driverVersion,
80Gi of memory), half of them with the attribute ``group=a`` and half ``group=b``, and a Pod
whose claim asks for one device more than a group has, all with the same ``group``
(``matchAttribute``). No set satisfies the constraint, and the depth-first search finds that out
only by trying the sets of one group: 2^19 allocateOne calls at 36 devices, 2^31 at 60.

``python -m benchmarks.allocator [--devices 36 60] [--version v1.35.0]`` analyses each bundle
(``dradash.dra.analysis.analyse``, what the analyse task computes) and prints the time, the
verdict and the allocator's answer on the node. It asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from dradash.dra import analysis, why
from dradash.dra.bundle import info_object

DRIVER = "gpu.example.com"
NODE = "gpu-worker"


def attack(devices: int) -> list[dict[str, Any]]:
    """The objects of the attack bundle."""
    half = devices // 2
    gpus = [
        {
            "name": f"gpu-{i}",
            "attributes": {
                "driverVersion": {"version": "1.0.0"},
                "index": {"int": i},
                "model": {"string": "LATEST-GPU-MODEL"},
                "uuid": {"string": f"gpu-{i:08x}-99e9-c746-8531-ffeb86328b39"},
                "group": {"string": "a" if i < half else "b"},
            },
            "capacity": {"memory": {"value": "80Gi"}},
        }
        for i in range(devices)
    ]
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}},
            "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{NODE}-{DRIVER}"},
            "spec": {
                "driver": DRIVER,
                "nodeName": NODE,
                "pool": {"name": NODE, "generation": 0, "resourceSliceCount": 1},
                "devices": gpus,
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "same-group", "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpus",
                            "exactly": {"deviceClassName": DRIVER, "count": half + 1},
                        }
                    ],
                    "constraints": [{"matchAttribute": f"{DRIVER}/group"}],
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "trainer", "namespace": "default"},
            "spec": {
                "containers": [
                    {
                        "name": "train",
                        "image": "ubuntu:22.04",
                        "resources": {"claims": [{"name": "gpus"}]},
                    }
                ],
                "resourceClaims": [{"name": "gpus", "resourceClaimName": "same-group"}],
            },
            "status": {"phase": "Pending"},
        },
    ]
    return objects


def attack_bundle(devices: int, server_version: str = "") -> bytes:
    """The attack as a bundle file (with a SnapshotInfo naming ``server_version`` if given)."""
    info = [info_object({"serverVersion": server_version})] if server_version else []
    return json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": info + attack(devices)}
    ).encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[36, 60])
    parser.add_argument("--version", default="", help="server version, e.g. v1.35.0")
    args = parser.parse_args(argv)
    for devices in args.devices:
        state = why.load([("attack.json", attack_bundle(devices, args.version))], max_bytes=1 << 20)
        started = time.perf_counter()
        result = analysis.analyse(state)
        seconds = time.perf_counter() - started
        claim = result.claims[0]
        x = claim.explanation
        nodes = ", ".join(f"{n.node}: {n.outcome}" for n in x.nodes)
        stopped = " (stopped by the wall clock)" if x.by_clock else ""
        print(
            f"{devices} devices: {seconds:.1f} s, {claim.diagnosis.stage}/"
            f"{claim.diagnosis.reason}, {nodes}{stopped}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
