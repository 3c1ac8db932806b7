"""The Kubernetes deployment grants exactly what a capture uses, and only to read."""

from __future__ import annotations

from pathlib import Path

import yaml

from dradash.kube.capture import capture
from dradash.kube.client import Kube, connect
from tests.kubeapi import KubeAPIServer

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"


def granted() -> tuple[set[tuple[str, str]], set[str]]:
    """(group, resource) pairs and verbs of the ClusterRole in rbac.yaml."""
    documents = list(yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()))
    (role,) = [d for d in documents if d["kind"] == "ClusterRole"]
    resources, verbs = set(), set()
    for rule in role["rules"]:
        verbs.update(rule["verbs"])
        resources.update((g, r) for g in rule["apiGroups"] for r in rule["resources"])
    return resources, verbs


def listed(api: KubeAPIServer) -> set[tuple[str, str]]:
    """(group, resource) of every list a capture requested."""
    out = set()
    for method, path, _ in api.requests:
        parts = path.strip("/").split("/")
        if method != "GET" or len(parts) < 3 or parts[0] not in ("api", "apis"):
            continue
        group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
        if rest and rest[0] == "namespaces" and len(rest) >= 3:
            rest = rest[2:]
        if len(rest) == 1:
            out.add((group, rest[0]))
    return out


def test_the_cluster_role_grants_exactly_the_lists_a_capture_makes(tmp_path: Path) -> None:
    with KubeAPIServer(workload_versions=("v1beta1",)) as api:  # podgroups, workloads too
        kube = Kube(connect(str(api.kubeconfig(tmp_path)), None, False))
        with kube:
            capture(kube)
        used = listed(api)
    resources, verbs = granted()
    assert used <= resources, f"the ClusterRole lacks {sorted(used - resources)}"
    # Namespaces are listed too; nothing is granted that a capture does not read.
    assert resources == used
    assert verbs == {"get", "list", "watch"}
    assert not {r for _, r in resources} & {"secrets", "configmaps"}


def test_every_manifest_is_valid_yaml_with_a_kind() -> None:
    for path in DEPLOY.glob("*.yaml"):
        for document in yaml.safe_load_all(path.read_text()):
            assert document.get("kind"), path.name
