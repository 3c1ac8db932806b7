"""The recorded upstream allocator corpora (shared/oracle, README there) as bundles a user could
import: each line's cluster, one pending Pod that uses the line's pending claims, and a
SnapshotInfo stating the line's server version and feature gates. ``differences`` compares what
dradash's explanation of the Pod says, node by node, with what Kubernetes' allocator decided."""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from dradash.dra.cel.quantity import Quantity
from dradash.dra.kinds import KINDS

DATA = Path(__file__).parent / "dra" / "data"
CORPORA = {36: DATA / "oracle-cases-1.36.jsonl.gz", 37: DATA / "oracle-cases-1.37.jsonl.gz"}
# The recordings' releases: v0.36.2, and 1.37 development code (README).
SERVER_VERSIONS = {36: "v1.36.2", 37: "v1.37.0"}
# structured.Features fields of a line and the feature gates that set them.
GATES = {
    "PrioritizedList": ("DRAPrioritizedList",),
    "AdminAccess": ("DRAAdminAccess",),
    "DeviceTaints": ("DRADeviceTaints",),
    "PartitionableDevices": ("DRAPartitionableDevices",),
    "ConsumableCapacity": ("DRAConsumableCapacity",),
    "DeviceBindingAndStatus": ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
    "ListTypeAttributes": ("DRAListTypeAttributes",),
    "FractionalCapacityRange": ("DRAFractionalCapacityRange",),
}
POD = ("default", "oracle-pod")


@cache
def corpus(release: int) -> dict[str, dict[str, Any]]:
    with gzip.open(CORPORA[release], "rt", encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh]
    return {c["name"]: c for c in cases}


def feature_gates(features: dict[str, bool]) -> dict[str, bool]:
    return {gate: on for field, on in features.items() for gate in GATES[field]}


def bundle(case: dict[str, Any], release: int) -> dict[str, Any]:
    """The line as one JSON List: its objects, the Pod, and its SnapshotInfo."""
    given = case["input"]
    claims = given["claims"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": POD[1],
            "namespace": POD[0],
            "uid": f"pod-{case['name']}",
            "creationTimestamp": "2026-11-20T10:00:00Z",
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"claims": [{"name": f"c{i}"} for i in range(len(claims))]},
                }
            ],
            "resourceClaims": [
                {"name": f"c{i}", "resourceClaimName": c["metadata"]["name"]}
                for i, c in enumerate(claims)
            ],
        },
        "status": {"phase": "Pending"},
    }
    info = {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "snapshot"},
        "spec": {
            "cluster": f"oracle-{release}",
            "serverVersion": SERVER_VERSIONS[release],
            "featureGates": feature_gates(given["features"]),
            # Every kind listed (a capture's export): what the bundle lacks, the cluster lacks.
            "kinds": {kind: {"status": "ok"} for kind in KINDS},
        },
    }
    items = [
        info,
        *given["nodes"],
        *given["resourceSlices"],
        *given["deviceClasses"],
        *given["deviceTaintRules"],
        *given["allocatedClaims"],
        *claims,
        pod,
    ]
    return {"apiVersion": "v1", "kind": "List", "items": items}


def stable(case: dict[str, Any]) -> bool:
    """Upstream's ``stable`` implementation ran (Go map order: the device choice is one of
    several valid ones, only the outcome is compared)."""
    f = case["input"]["features"]
    return not (f["ConsumableCapacity"] or f["DeviceBindingAndStatus"] or f["ListTypeAttributes"])


# DynamicResources' PreFilter stops the scheduler before the library runs, with its own texts
# (dra-reference §5), where the recording (the library alone) has the library's: each of
# dradash's PreFilter messages, and what the library says for the same request.
PREFILTER = [
    (
        re.compile(r"request (?P<request>\S+): device class (?P<cls>\S+) does not exist"),
        r"claim \S+, request {request}: could not retrieve device class {cls}: ",
    ),
    (
        re.compile(
            r"resource claim (?P<claim>\S+), request (?P<request>\S+): has subrequests, but the "
            r"DRAPrioritizedList feature is disabled"
        ),
        r"claim {claim}, request {request}: has subrequests, but the DRAPrioritizedList feature "
        r"is disabled",
    ),
]


def same_error(mine: str, recorded: str) -> bool:
    """The same error, or PreFilter's message for the error the library recorded."""
    if mine == recorded:
        return True
    for pattern, library in PREFILTER:
        found = pattern.fullmatch(mine)
        names = {k: re.escape(v) for k, v in found.groupdict().items()} if found else {}
        if found and re.match(library.format(**names), recorded):
            return True
    return False


def comparable(r: dict[str, Any]) -> tuple[Any, ...]:
    """A device result as compared with the recording (share IDs are random upstream: only
    whether one was set; consumed capacity as quantities)."""
    consumed = r.get("consumedCapacity") or {}
    return (
        r["request"],
        r["driver"],
        r["pool"],
        r["device"],
        bool(r.get("adminAccess")),
        "shareID" in r,
        tuple(sorted((k, Quantity.parse(v)._value.normalize()) for k, v in consumed.items())),
    )


def differences(case: dict[str, Any], explanation: dict[str, Any]) -> list[str]:
    """Where the explain API's answer (``nodes`` and, on ``node``, ``allocation``) differs from
    the recording, one line each. Every recorded node must be answered unless the explanation
    says its node list is incomplete (a fit found, the rest not needed)."""
    problems = []
    answered = {n["node"]: n for n in explanation["nodes"]}
    for expected in case["expect"]["nodes"]:
        got = answered.get(expected["node"])
        if got is None:
            if explanation.get("nodes_complete", True):
                problems.append(f"{expected['node']}: not answered")
            continue
        mine = (got["outcome"], got.get("error") or "")
        theirs = (expected["outcome"], expected["error"])
        if mine[0] != theirs[0] or not same_error(mine[1], theirs[1]):
            problems.append(f"{expected['node']}: {mine}, recorded {theirs}")
    node = explanation.get("node")
    recorded = {n["node"]: n for n in case["expect"]["nodes"]}.get(node or "")
    if explanation.get("allocatable") and recorded is not None and not stable(case):
        mine = [[comparable(r) for r in a["devices"]["results"]] for a in explanation["allocation"]]
        theirs = [[comparable(r) for r in a] for a in recorded["allocations"] or []]
        if mine != theirs:
            problems.append(f"{node}: allocated {mine}, recorded {theirs}")
    return problems
