"""Time the analysis of gangs: PodGroups whose pending members are replayed together (issue 24).

    python -m benchmarks.gangs [--profile large] [--gangs 200] [--size 8] [--gpus 4]

Generates the profile's synthetic cluster (``benchmarks.synthetic``) and adds ``--gangs``
PodGroups (scheduling.k8s.io/v1beta1, gang minCount = ``--size``), each with ``--size`` pending
member Pods whose generated claims ask for ``--gpus`` whole GPUs (``gpu.nvidia.com``), as a
JobSet of training workers does. Then times ``ClusterState.build`` and the whole analysis with
and without them, and prints the gangs' states and the members' verdicts. Asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

from benchmarks.synthetic import PROFILES, generate_profile
from dradash.dra.analysis import analyse
from dradash.dra.state import ClusterState, SnapshotMeta

NS = "gangs"


def _gang(g: int, size: int, gpus: int) -> list[dict[str, Any]]:
    name = f"train-{g}"
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": size}}},
    }
    out: list[dict[str, Any]] = [group]
    for i in range(size):
        pod_name = f"{name}-{i}"
        claim_name = f"{pod_name}-gpus-x7k2p"
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": pod_name,
                    "namespace": NS,
                    "uid": f"uid-{pod_name}",
                    "creationTimestamp": f"2026-01-01T00:{g % 60:02d}:{i % 60:02d}Z",
                },
                "spec": {
                    "schedulingGroup": {"podGroupName": name},
                    "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "gpus"}],
                    "containers": [
                        {
                            "name": "worker",
                            "image": "train",
                            "resources": {"claims": [{"name": "gpus"}]},
                        }
                    ],
                },
                "status": {
                    "phase": "Pending",
                    "resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": claim_name}],
                },
            }
        )
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {
                    "name": claim_name,
                    "namespace": NS,
                    "uid": f"uid-{claim_name}",
                    "annotations": {"resource.kubernetes.io/pod-claim-name": "gpus"},
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "name": pod_name,
                            "uid": f"uid-{pod_name}",
                            "controller": True,
                        }
                    ],
                },
                "spec": _claim_spec(gpus),
            }
        )
    return out


def _claim_spec(gpus: int) -> dict[str, Any]:
    return {
        "devices": {
            "requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": gpus}}
            ]
        }
    }


def with_gangs(objects: list[dict[str, Any]], gangs: int, size: int, gpus: int) -> list[Any]:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpus", "namespace": NS},
        "spec": {"spec": _claim_spec(gpus)},
    }
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
    extra = [namespace, template]
    for g in range(gangs):
        extra += _gang(g, size, gpus)
    return objects + extra


def _timed(label: str, fn: Any) -> Any:
    started = time.perf_counter()
    result = fn()
    print(f"{label:<44} {(time.perf_counter() - started) * 1000:>10,.1f} ms")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=sorted(PROFILES), default="large")
    parser.add_argument("--gangs", type=int, default=200)
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--gpus", type=int, default=4)
    args = parser.parse_args()

    objects = generate_profile(args.profile)
    ganged = with_gangs(objects, args.gangs, args.size, args.gpus)
    meta = SnapshotMeta(server_version="v1.37.0")
    print(
        f"synthetic-{args.profile} + {args.gangs:,} gangs of {args.size} members "
        f"asking {args.gpus} GPUs each"
    )
    base = _timed("ClusterState.build, without them", lambda: ClusterState.build(objects, meta))
    _timed("analyse, without them", lambda: analyse(base))
    state = _timed("ClusterState.build, with them", lambda: ClusterState.build(ganged, meta))
    result = _timed("analyse, with them", lambda: analyse(state))
    states = Counter(r.gang.state for r in result.groups)
    print("  gangs: " + ", ".join(f"{n:,} {s}" for s, n in sorted(states.items())))
    verdicts = Counter(
        (r.diagnosis.stage, r.diagnosis.reason)
        for r in result.pods
        if r.pod.namespace == NS and r.diagnosis is not None
    )
    for (stage, reason), n in sorted(verdicts.items()):
        print(f"  {n:>6,}  {stage} / {reason}")
    codes = Counter(f.code for f in result.findings if f.code.startswith("gang-"))
    print("  findings: " + (", ".join(f"{c} {n}" for c, n in sorted(codes.items())) or "none"))


if __name__ == "__main__":
    main()
