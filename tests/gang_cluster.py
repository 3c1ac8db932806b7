"""A cluster with a gang that does not fit (KEP-4671 PodGroup, KEP-5729 claims for a PodGroup).

PodGroup ``ml/train`` (gang, minCount 4, from Workload ``train`` template ``workers``) has four
members, ``train-0`` … ``train-3`` (created in that order: the scheduler's order), each with a
claim of its own for one GPU, and all sharing the group's claim ``train-shared-xyz12`` (made
from template ``shared-tmpl`` for the group, allocated gpu-3 and reserved for the PodGroup).
Node ``node-1`` has four GPUs; the shared claim holds one, so three members fit together and
``train-3`` breaks the gang. ``solo`` is a Pod of no group, running with a GPU of ``node-2``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.dra.builders import (
    claim,
    consumer,
    core_event,
    device,
    device_class,
    group_claim,
    group_consumer,
    member,
    node,
    pod,
    pod_claim,
    podgroup,
    resource_slice,
    result,
    template,
    workload,
)

NS = "ml"
GROUP = "train"
CLASS = "gpu.example.com"
SHARED = "train-shared-xyz12"
MEMBERS = [f"train-{i}" for i in range(4)]
BREAKING = "train-3"


def objects() -> list[dict[str, Any]]:
    group = podgroup(
        GROUP,
        NS,
        min_count=4,
        claims=[pod_claim("shared", template="shared-tmpl")],
        workload=("train", "workers"),
        scheduled=False,
    )
    members = [
        member(
            pod(
                name,
                NS,
                claims=[
                    pod_claim("gpu", claim=f"{name}-gpu"),
                    pod_claim("shared", template="shared-tmpl"),
                ],
            ),
            GROUP,
            created=f"2026-11-20T10:0{i}:00Z",
        )
        for i, name in enumerate(MEMBERS)
    ]
    solo = pod(
        "solo",
        NS,
        claims=[pod_claim("gpu", claim="solo-gpu")],
        node_name="node-2",
        phase="Running",
    )
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        node("node-1"),
        node("node-2"),
        device_class(CLASS, f"device.driver == '{CLASS}'"),
        resource_slice(
            "node-1-gpus",
            pool="node-1",
            node_name="node-1",
            devices=[device(f"gpu-{i}") for i in range(4)],
        ),
        resource_slice("node-2-gpus", pool="node-2", node_name="node-2", devices=[device("gpu-0")]),
        workload("train", NS),
        template("shared-tmpl", NS),
        group,
        group_claim(
            group,
            "shared",
            SHARED,
            results=[result(device_name="gpu-3", pool="node-1")],
            reserved_for=[group_consumer(group)],
        ),
        *members,
        *(claim(f"{name}-gpu", NS) for name in MEMBERS),
        solo,
        claim(
            "solo-gpu",
            NS,
            results=[result(pool="node-2")],
            reserved_for=[consumer(solo)],
        ),
        core_event(
            "PodGroup",
            GROUP,
            NS,
            "FailedScheduling",
            "2026-11-20T10:05:00Z",
            "pod group is unschedulable",
        ),
    ]


def bundle(items: list[dict[str, Any]] | None = None) -> bytes:
    return json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": objects() if items is None else items}
    ).encode()
