"""Capture of a Kubernetes 1.37 cluster: DeviceTaintRules are GA and served in
resource.k8s.io/v1, so capture reads them there, and the snapshot's verdicts follow 1.37."""

from __future__ import annotations

from pathlib import Path

from dradash.dra.allocator import Features
from dradash.dra.state import ClusterState, SnapshotMeta
from tests.kube.test_capture import run
from tests.kubeapi import KubeAPIServer, fixture_objects


def test_a_137_cluster_serves_device_taint_rules_in_v1(tmp_path: Path) -> None:
    with KubeAPIServer(fixture_objects(), version="v1.37.1", device_taint_rules=("v1",)) as api:
        result = run(api, tmp_path)
        listed = [p for _, p, _ in api.requests if p.endswith("/devicetaintrules")]

    assert listed and all(p.startswith("/apis/resource.k8s.io/v1/") for p in listed)
    rule = result.objects[("DeviceTaintRule", "", "example")]
    assert rule["apiVersion"] == "resource.k8s.io/v1"
    assert result.kind_status["DeviceTaintRule"]["status"] == "ok"
    meta = SnapshotMeta(server_version=result.server_version)
    assert Features.for_version(meta.server_version) == Features()  # 1.37's rules
    state = ClusterState.build(result.objects.values(), meta)
    assert state.taint_rules["example"].taint["effect"] == "NoExecute"
    drivers = {d.driver for d in state.devices.values() if d.rule_taints}
    assert drivers <= {"dra.example.com"}  # the rule's selector
