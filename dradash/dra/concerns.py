"""Which of a snapshot's findings concern a Pod or a claim, to show beside its verdict.

A finding concerns a Pod when it names the Pod, its claims or the templates they come from,
its Job or PodGroup, its node, the DeviceClasses of its extended resources, or devices its
requests could use: for claims still waiting, any finding about a pool holding devices that
pass their requests' selectors (whatever stops those later: an incomplete pool, a taint, a
holder); for allocated claims, the findings about the devices they hold and about their pools
as a whole (incomplete, stale, invalid), not those about other devices of the same pool. A
claim's are those naming the claim or its template, and those about its devices likewise. So
Pod ``render-farm-6`` of a Job that runs more Pods than there are devices, stuck because the
devices are held while four more sit in an incomplete pool, shows ``parallelism-exceeds-capacity``
(it names the Job) and ``pool-incomplete`` (it names that pool's slices).

``FindingIndex`` indexes the findings once by the objects they name (a slice also by its pool,
a finding about some devices by those devices), so that each verdict costs a lookup per object
it rests on, not a scan of every finding; what a shared explanation's requests could use is
read from its tally, computed once for all the Pods that share it, and the findings about
those pools are looked up once per explanation too (``about``'s ``shared``): a waiting claim
may use a device of every node, so looking its pools up again for each Pod would cost Pods ×
nodes (issue 28).
"""

from __future__ import annotations

from collections.abc import Iterable

from dradash.dra.allocator import Explanation
from dradash.dra.findings import Finding
from dradash.dra.objects import Pod, ResourceClaim
from dradash.dra.state import ClusterState

# (kind, namespace, name) of an object; and ("pool", driver, pool) for a finding about a pool
# as a whole, ("device", driver, pool, device) for one about a device, ("candidate", driver,
# pool) for both: what a claim waiting for devices of that pool looks up.
ObjectKey = tuple[str, ...]


def pool_key(driver: str, pool: str) -> ObjectKey:
    return ("pool", driver, pool)


def candidate_key(driver: str, pool: str) -> ObjectKey:
    return ("candidate", driver, pool)


class FindingIndex:
    """The findings' positions (in ``found``'s order) by the objects they name."""

    def __init__(self, state: ClusterState, found: list[Finding]) -> None:
        self.by_object: dict[ObjectKey, list[int]] = {}
        self._shared: dict[frozenset[ObjectKey], frozenset[int]] = {}
        for position, finding in enumerate(found):
            for o in finding.objects:
                key = (o.get("kind", ""), o.get("namespace", ""), o.get("name", ""))
                self._add(key, position)
                if key[0] != "ResourceSlice" or finding.devices:
                    continue
                if (s := state.slices.get(key[2])) is not None:
                    self._add(pool_key(s.driver, s.pool_name), position)
                    self._add(candidate_key(s.driver, s.pool_name), position)
            for driver, pool, device in finding.devices:
                self._add(("device", driver, pool, device), position)
                self._add(candidate_key(driver, pool), position)

    def _add(self, key: ObjectKey, position: int) -> None:
        positions = self.by_object.setdefault(key, [])
        if not positions or positions[-1] != position:
            positions.append(position)

    def about(
        self, keys: Iterable[ObjectKey], shared: frozenset[ObjectKey] = frozenset()
    ) -> list[int]:
        """The positions of the findings naming any of these objects or of those of ``shared``,
        in order, once each. ``shared`` is a set of keys many calls pass (an explanation's
        pools): its findings are looked up once, on its first call."""
        found: set[int] = set()
        for key in keys:
            positions = self.by_object.get(key)
            if positions:
                found.update(positions)
        if shared:
            found.update(self._about_shared(shared))
        return sorted(found)

    def _about_shared(self, keys: frozenset[ObjectKey]) -> frozenset[int]:
        # Keyed by the set itself: a frozenset keeps its hash, and the one the caller passes
        # again is found by identity, without comparing its members.
        positions = self._shared.get(keys)
        if positions is None:
            by_object = self.by_object
            positions = self._shared[keys] = frozenset(
                position for key in keys for position in by_object.get(key, ())
            )
        return positions


def explained_pools(
    x: Explanation | None, cache: dict[int, frozenset[ObjectKey]]
) -> frozenset[ObjectKey]:
    """The pools holding devices the explanation's requests could use (its tally: computed
    once per explanation, which many Pods share; ``FindingIndex.about``'s ``shared``)."""
    if x is None or not x.requests:
        return frozenset()
    pools = cache.get(id(x))
    if pools is None:
        pools = cache[id(x)] = frozenset(
            candidate_key(driver, pool)
            for r in x.requests
            for driver, pool in r.tally.candidate_pools
        )
    return pools


def claim_own_objects(claim: ResourceClaim) -> list[ObjectKey]:
    """The claim, its template, the devices it holds and their pools."""
    out: list[ObjectKey] = [claim.key]
    if claim.template is not None:
        out.append(claim.template.key)
    for r in claim.results:
        out += [("device", r.driver, r.pool, r.device_name), pool_key(r.driver, r.pool)]
    return out


def pod_objects(
    pod: Pod, explanation: Explanation | None, cache: dict[int, frozenset[ObjectKey]]
) -> list[ObjectKey]:
    """What a Pod's findings may name (module docstring)."""
    out = pod_own_objects(pod)
    out += explained_pools(explanation, cache)
    return out


def pod_own_objects(pod: Pod) -> list[ObjectKey]:
    """What a Pod's findings may name but the pools its explanation could use."""
    out: list[ObjectKey] = [pod.key]
    for ref in pod.claim_refs:
        if ref.template is not None:
            out.append(ref.template.key)
        if ref.claim is not None and not ref.claim.implicit:
            out += claim_own_objects(ref.claim)
    if pod.job is not None:
        out.append(pod.job.key)
    if pod.group_name:
        out.append(("PodGroup", pod.namespace, pod.group_name))
    if pod.node_name:
        out.append(("Node", "", pod.node_name))
    resources = pod.extended
    if resources is not None:
        out += [
            ("DeviceClass", "", resources.mapping[name].name)
            for name, n in resources.totals.items()
            if n and name in resources.mapping
        ]
    return out


def claim_objects(
    claim: ResourceClaim, explanation: Explanation | None, cache: dict[int, frozenset[ObjectKey]]
) -> list[ObjectKey]:
    """What a claim's findings may name (module docstring)."""
    out = claim_own_objects(claim)
    if not claim.allocated:
        out += explained_pools(explanation, cache)
    return out
