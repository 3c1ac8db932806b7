"""The diff of two stored snapshots lists PodGroups and Workloads added, removed and changed,
as it lists other namespaced kinds."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from dradash.compare.selectors import snapshot_diff
from dradash.snapshots.services import bundle_import
from tests.kubeapi import GANG_NAMESPACE, gang_objects

pytestmark = pytest.mark.django_db


def store(objects: list[dict[str, Any]], name: str) -> Any:
    data = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}).encode()
    return bundle_import(files=[(f"{name}.json", data)], cluster_name="gangs")


def test_podgroups_added_removed_and_changed_are_listed(analysed: Any) -> None:
    before = gang_objects("v1beta1")
    after = copy.deepcopy(before)
    after = [
        o for o in after if not (o["kind"] == "PodGroup" and o["metadata"]["name"] == "group-2")
    ]
    group_1 = next(o for o in after if o["kind"] == "PodGroup")
    group_1["spec"]["schedulingPolicy"]["gang"]["minCount"] = 1  # mutable in v1beta1
    after.append(
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "group-3", "namespace": GANG_NAMESPACE},
            "spec": {"schedulingPolicy": {"basic": {}}},
        }
    )
    with analysed():
        old, new = store(before, "a"), store(after, "b")

    groups = snapshot_diff(old, new).kind("PodGroup")

    assert groups is not None
    assert [o.name for o in groups.added] == ["group-3"]
    assert [o.name for o in groups.removed] == ["group-2"]
    assert [o.name for o in groups.changed] == ["group-1"]
    assert snapshot_diff(old, new).kind("Workload") is not None
