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

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dradash.dra import allocator
from dradash.dra.allocator.scheduler import allocation_allows
from dradash.dra.fields import text
from dradash.dra.objects import Node, Pod, PodGroup, ResourceClaim
from dradash.dra.state import ClusterState, _time

# Members placed in one replay at most: a search per member, like a Pod's own verdict. Beyond
# this, whether the rest fit is unknown (and said so).
MEMBER_LIMIT = 256

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
    tried: bool = True  # False past MEMBER_LIMIT, or where a search ran out of its budget


@dataclass
class Gang:
    group: PodGroup
    members: list[Pod]  # Pods that name the group and may still run, in the scheduler's order
    min_count: int  # 1 for a basic group
    # scheduled · waiting · fits · does-not-fit · unknown (the replay stopped at MEMBER_LIMIT,
    # or a search ran out of its budget) · basic (not a gang: each Pod is scheduled alone)
    state: str
    placements: list[Placement] = field(default_factory=list)
    gated: int = 0  # members not on a node that wait for scheduling gates: not in the queue
    unproven: list[str] = field(default_factory=list)  # kinds whose absence leaves it unknown

    @property
    def queued(self) -> int:
        """Members the scheduler may try: on a node, or waiting in its queue (not gated)."""
        return len(self.members) - self.gated

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
    """The scheduler waits until minCount members are in its queue ("waiting for minCount pods
    from a gang to appear in scheduling queue"; a gated Pod is not in it), unless the group
    was scheduled before; then it places the members in one cycle."""
    pods = members(group)
    gang = group.policy == "gang"
    need = (group.min_count or 1) if gang else 1
    if missing := state.meta.unproven("Pod"):  # its members are unknown, not missing
        return Gang(group, pods, need, "unknown", unproven=missing)
    pending = [p for p in pods if not p.node_name]
    gated = [p for p in pending if p.scheduling_gates]
    bound = [Placement(p, p.node_name, bound=True) for p in pods if p.node_name]
    if not gang:
        return Gang(group, pods, need, "basic", bound)
    if not pending:
        return Gang(group, pods, need, "scheduled", bound)
    if len(pods) - len(gated) < need and not group.scheduled:
        return Gang(group, pods, need, "waiting", bound, len(gated))
    queued = [p for p in pending if not p.scheduling_gates]
    order = {id(p): i for i, p in enumerate(pods)}
    placements = sorted(bound + replay(state, queued), key=lambda p: order[id(p.pod)])
    result = Gang(group, pods, need, "fits", placements, len(gated))
    if result.fit < need:
        untried = any(not p.tried for p in placements)
        result.state = "unknown" if untried else "does-not-fit"
    return result


def replay(state: ClusterState, pending: list[Pod], *, empty: bool = False) -> list[Placement]:
    """Place these Pods one after another, each seeing what the earlier ones were given.

    One allocator holds the snapshot's allocations and, as members are placed, theirs; each
    member is allocated on the nodes it may use in name order until one fits. The first
    member that fits nowhere gets the allocator's whole explanation (its funnel, with what
    the earlier members hold). ``empty``: on the cluster as built, every device free."""
    cycle = _Cycle(state, empty)
    return [
        cycle.place(pod) if i < MEMBER_LIMIT else Placement(pod, None, tried=False)
        for i, pod in enumerate(pending)
    ]


class _Cycle:
    """One gang's scheduling cycle: an allocator state that grows as members are placed.

    The allocator only ever holds more as members are placed, so claims that did not fit on
    a node never will later in the cycle: such nodes are skipped (``failing``), and where no
    device a member was given is within a node's reach, for every gang of the snapshot
    (``hopeless``). A node with fewer devices than a request asks is not searched."""

    def __init__(self, state: ClusterState, empty: bool) -> None:
        self.state = state
        self.empty = empty
        self.features = allocator.Features.of(state)
        self.budget = allocator.SearchBudget.of(state)
        exclude = list(state.claims.values()) if empty else []
        self.lean = allocator.Allocator(state, self.features, exclude=exclude, budget=self.budget)
        self.assumed: list[tuple[str, dict[str, Any]]] = []
        self.allocated: dict[int, ResourceClaim] = {}  # claims allocated in the cycle, by id
        self.failing: dict[str, set[str]] = {}
        self.nowhere: set[str] = set()  # claims that fit on no node in this cycle
        # Nodes whose devices the cycle assumed; None once one that many nodes reach was.
        self.touched: set[str] | None = set()
        self.nodes_for: dict[str, list[Node]] = state.derived("gang-nodes", lambda _: {})
        self.hopeless: dict[str, set[str]] = state.derived(f"gang-hopeless:{empty}", lambda _: {})
        self.multiple = state.derived("gang-multi-allocatable", _multi_allocatable)
        self.explained = False

    def place(self, pod: Pod) -> Placement:
        unresolved = next((r.status for r in pod.claim_refs if r.claim is None), "")
        if unresolved:
            return Placement(pod, None, unresolved=unresolved)
        own = list(dict.fromkeys(pod.claims))
        claims = [
            self.allocated.get(id(c)) or (_unallocated(c) if self.empty and c.allocated else c)
            for c in own
        ]
        to_allocate = [(o, c) for o, c in zip(own, claims, strict=True) if not c.allocated]
        asks = [c for _, c in to_allocate]
        pinned = [c for c in claims if c.allocated]
        key = self._constraints(pod)
        spec = json.dumps([key, pod.namespace, [c.spec for c in asks]], sort_keys=True)
        if spec in self.nowhere and not pinned:
            return Placement(pod, None)
        failed = self.failing.setdefault(spec, set())
        known = self.hopeless.setdefault(spec, set())
        need = 0 if self.multiple else _largest_request(asks)
        nodes = (
            n
            for n in self.nodes_for[key]
            if n.name not in failed
            and n.name not in known
            and all(allocation_allows(c, n) for c in pinned)
            and (not need or sum(len(s.devices) for s in n.slices) >= need or failed.add(n.name))
        )
        node, allocations, timed_out = _place(self.lean, nodes, asks, failed)
        if self.touched is not None:
            known.update(failed - self.touched)
        if node is None:
            if not timed_out and not pinned:
                self.nowhere.add(spec)
            return self._breaking(Placement(pod, None, tried=not timed_out), claims)
        new = []
        for (original, claim), allocation in zip(to_allocate, allocations, strict=False):
            results = allocation.get("devices", {}).get("results", [])
            new += [(self._holder(pod, claim), r) for r in results]
            self.allocated[id(original)] = _allocated(claim, allocation)
        self._assume(new)
        return Placement(pod, node.name)

    @staticmethod
    def _holder(pod: Pod, claim: ResourceClaim) -> str:
        """Who holds a device the cycle gave a member, as "allocated to …" words it."""
        if pod.group is not None:
            return f"earlier members of gang {pod.group.ref}"
        return f"{claim.ref} (Pod {pod.name}, earlier in the cycle)"

    def _constraints(self, pod: Pod) -> str:
        """What decides the nodes a Pod may use; those nodes, once per snapshot."""
        key = json.dumps(
            [pod.spec.get(k) for k in ("nodeSelector", "affinity", "tolerations")]
            + [id(pod) if pod.extended is not None else 0],
            sort_keys=True,
        )
        if key not in self.nodes_for:
            self.nodes_for[key] = [
                n
                for n in sorted(self.state.nodes.values(), key=lambda n: n.name)
                if allocator.pod_node_problem(pod, n) is None
            ]
        return key

    def _breaking(self, placement: Placement, claims: list[ResourceClaim]) -> Placement:
        """The first member that fits nowhere: why, with its funnel. Where nothing was
        assumed yet, its own verdict's explanation says the same (and is shared with its
        like); on the cluster as built, nobody asks."""
        if self.explained or not placement.tried:
            return placement
        self.explained = True
        if self.assumed and not self.empty:
            placement.explanation = allocator.explain(
                self.state,
                claims,
                pod=placement.pod,
                features=self.features,
                budget=self.budget,
                assumed=list(self.assumed),
            )
        return placement

    def _assume(self, new: list[tuple[str, dict[str, Any]]]) -> None:
        self.lean.assume(new)
        self.assumed += new
        for _, r in new:
            key = (text(r.get("driver")), text(r.get("pool")), text(r.get("device")))
            device = self.state.devices.get(key)
            if self.touched is not None and device is not None and device.slice.node_name:
                self.touched.add(device.slice.node_name)
            else:
                self.touched = None


def _multi_allocatable(state: ClusterState) -> bool:
    """Whether a device may be allocated more than once (consumable capacity)."""
    return any(d.raw.get("allowMultipleAllocations") is True for d in state.devices.values())


def _largest_request(claims: list[ResourceClaim]) -> int:
    """The most devices one request needs (a firstAvailable request: its smallest
    alternative; allocationMode All: nothing known)."""
    need = 0
    for claim in claims:
        for request in claim.requests:
            counts = [spec.count for _, spec in request.alternatives]
            if counts and all(counts):
                need = max(need, min(counts))
    return need


def _place(
    lean: allocator.Allocator, nodes: Iterable[Node], claims: list[ResourceClaim], failed: set[str]
) -> tuple[Node | None, list[dict[str, Any]], bool]:
    """The first node where the claims fit, their allocations, and whether a search ran out
    (then where it would fit is unknown); nodes where they do not fit go to ``failed``. An
    error that stops the scheduling attempt (not one node's) stops here too: the member fits
    nowhere."""
    if not claims:
        return next(iter(nodes), None), [], False
    timed_out = False
    for node in nodes:
        outcome = lean.allocate(node, claims)
        if outcome.timed_out:
            timed_out = True
            continue
        if outcome.error is not None and not outcome.node_error:
            return None, [], False
        if outcome.allocations is not None:
            return node, outcome.allocations, False
        failed.add(node.name)
    return None, [], timed_out


def never_fits(state: ClusterState, gang: Gang) -> int | None:
    """How many members fit together if every device were free, where that is fewer than
    minCount (the gang can never start on this cluster as built); else None."""
    placements = replay(state, gang.members, empty=True)
    if any(p.unresolved or not p.tried for p in placements):
        return None  # a claim not created yet, or members not tried: not proven
    fit = sum(1 for p in placements if p.node)
    return fit if fit < gang.min_count else None


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
