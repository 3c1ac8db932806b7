"""Gangs: the Pods of a PodGroup, placed together as kube-scheduler's pod group cycle places them.

A PodGroup with a ``gang`` policy (KEP-4671; scheduling.k8s.io/v1alpha2 in 1.36, v1beta1 in
1.37) is scheduled all or nothing: the scheduler waits until ``minCount`` member Pods exist
("waiting for minCount pods from a gang to appear in scheduling queue"), then tries the members
one after another in its queue's order (priority, highest first, then the time each was first
tried: creation time here), each through the usual Filter on every node, and *assumes* each
placement, so a later member sees the devices earlier ones were given. Nothing binds unless at
least ``minCount`` members were placed; otherwise the whole group is unschedulable ("pod group
is unschedulable"). Placements are greedy: a device choice made for an earlier member is never
revisited (kubernetes #138765), so a gang can fail where another split of the devices would fit.

``judge`` replays that cycle on a snapshot with one allocator state: members already on a node
keep what they hold, the others are allocated in order, on the first node (by name) where their
claims fit, with the devices earlier members were given held (``assumed``). A claim two members
share (the PodGroup's claim of KEP-5729, or one named by both) is allocated for the first and
only restricts the nodes of the later ones. The scheduler scores nodes where dradash takes the
first that fits, so which node a member lands on may differ; whether the gang fits can differ
only where the score would pick a node that leaves less room for the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dradash.dra import allocator
from dradash.dra.allocator.scheduler import allocation_allows
from dradash.dra.fields import text
from dradash.dra.objects import Pod, PodGroup, ResourceClaim
from dradash.dra.state import ClusterState, _time

# Members placed in one replay at most: a search per member, like a Pod's own verdict. Beyond
# this, whether the rest fit is unknown (and said so).
MEMBER_LIMIT = 256

WAITING_MESSAGE = "waiting for minCount pods from a gang to appear in scheduling queue"
UNSCHEDULABLE_MESSAGE = "pod group is unschedulable"
# DynamicResources' PreFilter while another member's allocation of a shared claim is in flight
# (kubernetes #137617, fixed in 1.37 by #137647): each retry of the gang fails on it again.
IN_PROGRESS_MESSAGE = "is in the process of being allocated"


@dataclass
class Placement:
    pod: Pod
    node: str | None  # where it runs or would go; None where it does not fit
    bound: bool = False  # on a node already
    explanation: allocator.Explanation | None = None  # the allocator's answer in the replay
    unresolved: str = ""  # a claim reference that does not resolve (PodClaimRef.status)
    tried: bool = True  # False past MEMBER_LIMIT


@dataclass
class Gang:
    group: PodGroup
    members: list[Pod]  # Pods that name the group and may still run, in the scheduler's order
    min_count: int  # 1 for a basic group
    # scheduled · waiting · fits · does-not-fit · unknown (the replay stopped at MEMBER_LIMIT)
    # · basic (not a gang: each Pod is scheduled alone)
    state: str
    placements: list[Placement] = field(default_factory=list)

    @property
    def fit(self) -> int:
        """Members placed or placeable together (all of them for a running group)."""
        return sum(1 for p in self.placements if p.node)

    @property
    def breaking(self) -> Placement | None:
        """The first member, in the scheduler's order, that does not fit with those before it."""
        return next((p for p in self.placements if p.tried and not p.node), None)

    @property
    def bound(self) -> int:
        return sum(1 for p in self.placements if p.bound)

    @property
    def stuck(self) -> bool:
        return self.state in ("waiting", "does-not-fit")


def members(group: PodGroup) -> list[Pod]:
    """The group's Pods that may still run, in the order the scheduler's queue pops them."""
    live = [p for p in group.pods if not p.finished and not p.deleting]
    return sorted(live, key=lambda p: (-p.priority, _time(p.created), p.name))


def judge(state: ClusterState, group: PodGroup) -> Gang:
    """The gang's state, computed once per snapshot."""
    return state.derived(f"gang:{group.namespace}/{group.name}", lambda s: _judge(s, group))  # type: ignore[no-any-return]


def _judge(state: ClusterState, group: PodGroup) -> Gang:
    pods = members(group)
    gang = group.policy == "gang"
    need = (group.min_count or 1) if gang else 1
    pending = [p for p in pods if not p.node_name]
    bound = [Placement(p, p.node_name, bound=True) for p in pods if p.node_name]
    if not gang:
        return Gang(group, pods, need, "basic", bound)
    if not pending:
        return Gang(group, pods, need, "scheduled", bound)
    if len(pods) < need and not group.scheduled:
        return Gang(group, pods, need, "waiting", bound)
    placements = bound + replay(state, pending)
    placements.sort(key=lambda p: pods.index(p.pod))
    result = Gang(group, pods, need, "fits", placements)
    if result.fit < need:
        untried = any(not p.tried for p in placements)
        result.state = "unknown" if untried else "does-not-fit"
    return result


def replay(state: ClusterState, pending: list[Pod], *, empty: bool = False) -> list[Placement]:
    """Place these Pods one after another, each seeing what the earlier ones were given.

    ``empty``: on the cluster as built, every device free (what no placement can beat)."""
    features = allocator.Features.of(state)
    budget = allocator.SearchBudget.of(state)
    assumed: list[tuple[str, dict[str, Any]]] = []
    allocated: dict[int, ResourceClaim] = {}  # claims allocated in the replay, by id
    out = []
    for i, pod in enumerate(pending):
        if i >= MEMBER_LIMIT:
            out.append(Placement(pod, None, tried=False))
            continue
        unresolved = next((r.status for r in pod.claim_refs if r.claim is None), "")
        if unresolved:
            out.append(Placement(pod, None, unresolved=unresolved))
            continue
        own = list(dict.fromkeys(pod.claims))
        claims = [
            allocated.get(id(c)) or (_unallocated(c) if empty and c.allocated else c) for c in own
        ]
        to_allocate = [(o, c) for o, c in zip(own, claims, strict=True) if not c.allocated]
        if not to_allocate:
            node = _first_node(state, pod, claims)
            out.append(Placement(pod, node))
            continue
        x = allocator.explain(
            state,
            claims,
            pod=pod,
            features=features,
            budget=budget,
            assumed=assumed,
            free_all=empty,
        )
        if not x.allocatable:
            out.append(Placement(pod, None, explanation=x))
            continue
        for (original, claim), allocation in zip(to_allocate, x.allocations, strict=False):
            results = allocation.get("devices", {}).get("results", [])
            assumed += [(f"{claim.ref} (gang member {pod.name})", r) for r in results]
            allocated[id(original)] = _allocated(claim, allocation)
        out.append(Placement(pod, x.node, explanation=x))
    return out


def never_fits(state: ClusterState, gang: Gang) -> int | None:
    """How many members fit together if every device were free, where that is fewer than
    minCount (the gang can never start on this cluster as built); else None."""
    placements = replay(state, gang.members, empty=True)
    if any(p.unresolved or not p.tried for p in placements):
        return None  # a claim not created yet, or members not tried: not proven
    fit = sum(1 for p in placements if p.node)
    return fit if fit < gang.min_count else None


def _first_node(state: ClusterState, pod: Pod, claims: list[ResourceClaim]) -> str | None:
    """A Pod whose claims are all allocated goes where every allocation allows it."""
    for node in sorted(state.nodes.values(), key=lambda n: n.name):
        if allocator.pod_node_problem(pod, node) is None and all(
            allocation_allows(c, node) for c in claims
        ):
            return node.name
    return None


def _allocated(claim: ResourceClaim, allocation: dict[str, Any]) -> ResourceClaim:
    """The claim as the replay leaves it: allocated, restricting its later users' nodes."""
    copy = ResourceClaim({**claim.raw, "status": {**claim.status, "allocation": allocation}})
    copy.pods = claim.pods
    return copy


def _unallocated(claim: ResourceClaim) -> ResourceClaim:
    status = {k: v for k, v in claim.status.items() if k not in ("allocation", "reservedFor")}
    copy = ResourceClaim({**claim.raw, "status": status})
    copy.pods = claim.pods
    return copy


def gangs(state: ClusterState) -> list[Gang]:
    """Every PodGroup's gang, in namespace and name order."""
    return [judge(state, g) for _, g in sorted(state.podgroups.items())]


def in_progress_events(pod: Pod) -> int:
    """How often the scheduler reported a shared claim's allocation in flight (#137617)."""
    return sum(
        e.count
        for e in pod.events
        if e.reason == "FailedScheduling" and IN_PROGRESS_MESSAGE in e.message
    )


def condition_text(group: PodGroup) -> str:
    c = group.scheduled_condition
    if c is None:
        return ""
    reason = text(c.get("reason"))
    message = text(c.get("message"))
    return f"{text(c.get('type'))}={text(c.get('status'))}" + (
        f" ({reason}{': ' + message if message else ''})" if reason or message else ""
    )
