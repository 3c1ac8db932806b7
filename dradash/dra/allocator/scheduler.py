"""The scheduler's checks around the allocator: which nodes a Pod may use (the default profile's
NodeUnschedulable, NodeName, TaintToleration and NodeAffinity filters), the node selector of an
already allocated claim (the DynamicResources plugin's Filter), and toleration of taints —
``Toleration.ToleratesTaint`` of core/v1, which ``resourceclaim.ToleratesTaint`` copies for
device taints: one rule for both."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dradash.dra.extended import allocatable_counts, pod_requests
from dradash.dra.fields import dig, mapping, mappings, text
from dradash.dra.nodes import node_selector_matches
from dradash.dra.objects import Device, Node, Pod, ResourceClaim

NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"
BLOCKING_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": NO_SCHEDULE}


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """Toleration.ToleratesTaint (core/v1) and resourceclaim.ToleratesTaint (devices): empty
    effect matches every effect, empty key (with Exists) every key, Exists every value."""
    effect = text(toleration.get("effect"))
    if effect and effect != text(taint.get("effect")):
        return False
    key = text(toleration.get("key"))
    if key and key != text(taint.get("key")):
        return False
    operator = text(toleration.get("operator"))
    if operator in ("", "Equal"):
        return text(toleration.get("value")) == text(taint.get("value"))
    return operator == "Exists"


def tolerated(tolerations: Iterable[dict[str, Any]], taint: dict[str, Any]) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def pod_node_problem(pod: Pod, node: Node) -> str | None:
    """Why the scheduler's node filters reject the node for the Pod, or None.

    In the order of the default profile: NodeUnschedulable, NodeName, TaintToleration,
    NodeAffinity (nodeSelector and required node affinity).
    """
    spec = pod.spec
    tolerations = mappings(spec.get("tolerations"))
    if node.unschedulable and not tolerated(tolerations, UNSCHEDULABLE_TAINT):
        return "node(s) were unschedulable"
    if pod.node_name and pod.node_name != node.name:
        return "node(s) didn't match the requested node name"
    for taint in node.taints:
        if text(taint.get("effect")) in (NO_SCHEDULE, NO_EXECUTE) and not tolerated(
            tolerations, taint
        ):
            return (
                f"node(s) had untolerated taint {{{text(taint.get('key'))}: "
                f"{text(taint.get('value'))}}}"
            )
    labels = node.labels
    selector = mapping(spec.get("nodeSelector"))
    required = dig(
        spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if any(labels.get(k) != v for k, v in selector.items()) or (
        isinstance(required, dict) and not node_selector_matches(required, node.name, labels)
    ):
        return "node(s) didn't match Pod's node affinity/selector"
    if pod.extended is not None and not pod.node_name:
        return _extended_resources_problem(pod, node)
    return None


def _extended_resources_problem(pod: Pod, node: Node) -> str | None:
    """NodeResourcesFit for the Pod's extended resources that DRA does not serve on the node:
    those its device plugin advertises must be free there (the Pods on the node use some); one
    the node does not advertise and no class maps does not fit (the DynamicResources plugin's
    "cannot fit resource" comes after NodeResourcesFit's message)."""
    split = pod.extended.split(node)
    if split.unfit:
        return f"Insufficient {split.unfit}"
    if not split.plugin:
        return None
    allocatable = allocatable_counts(node)
    used: dict[str, int] = {}
    for other in node.pods:
        if other is not pod and not other.finished:
            for name, n in pod_requests(other).items():
                used[name] = used.get(name, 0) + n
    for name, n in sorted(split.plugin.items()):
        if allocatable.get(name, 0) - used.get(name, 0) < n:
            return f"Insufficient {name}"
    return None


def allocation_allows(claim: ResourceClaim, node: Node) -> bool:
    """An allocated claim's status.allocation.nodeSelector (unset: every node)."""
    selector = claim.allocation_node_selector
    return selector is None or node_selector_matches(selector, node.name, node.labels)


def untolerated(
    taints: Iterable[dict[str, Any]], tolerations: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """taintPreventsAllocation: the first NoSchedule or NoExecute taint none of the
    tolerations tolerates, or None."""
    for taint in taints:
        if text(taint.get("effect")) in BLOCKING_EFFECTS and not tolerated(tolerations, taint):
            return taint
    return None


def blocking_taints(device: Device) -> list[dict[str, Any]]:
    """The device's taints (its own and DeviceTaintRules') that keep new claims away unless
    they tolerate them."""
    if not device.rule_taints and "taints" not in device.raw:
        return []
    return [t for t in device.taints if t.get("effect") in BLOCKING_EFFECTS]
