"""Kubernetes' structured allocator, simulated on one snapshot, and why it decides as it does.

A port of ``k8s.io/dynamic-resource-allocation/structured`` whose files sit beside upstream's:

================  ==========================================================================
``features``      ``internal/types.go`` Features; ``allocator.go`` NewAllocator's choice of
                  implementation; the feature gates' defaults per Kubernetes version
``index``         the snapshot, indexed once: slices by node and pool, CEL inputs, taints,
                  AllocatedState (``allocatedstate.go``, the scheduler's allocated devices),
                  the selector verdicts of ``selectorsMatch``
``pools``         ``internal/incubating/pools_incubating.go`` (and the v0.34 GatherPools)
``search``        ``internal/incubating/allocator_incubating.go``: Allocate for one node
``budget``        the scheduler's filter timeout, as a budget of allocateOne calls
``constraints``   ``internal/incubating/constraint.go``
``consumable``    ``internal/incubating/consumable_capacity.go``
``scheduler``     kube-scheduler around the library: node filters, tolerations
``explain``       the DynamicResources plugin's PreFilter and Filter over every node the Pod
                  may use, and the funnel: how many devices are left after each step
================  ==========================================================================

``Allocator(state, features).allocate(node, claims)`` is the per-node ``Allocate`` of the
implementation upstream would pick (``Features.implementation``): ``incubating`` of v0.37 by
default, ``stable`` where its features are off; with ``skip_incomplete_pools`` off, the 1.34
rules. Function names in comments are upstream's. ``explain(state, claims, pod=…)`` answers for a
Pod's claims on every node it may use, with a funnel per request.
"""

from __future__ import annotations

from dradash.dra.allocator import budget
from dradash.dra.allocator.budget import TIMED_OUT, SearchBudget
from dradash.dra.allocator.constraints import lookup_attribute
from dradash.dra.allocator.consumable import quantity_of
from dradash.dra.allocator.explain import (
    STEP_REASONS,
    STEPS,
    DeviceCheck,
    Explanation,
    RequestExplanation,
    error_reason,
    explain,
    held_by,
)
from dradash.dra.allocator.features import NEWEST, Features, kubernetes_minor
from dradash.dra.allocator.pools import skipped_pool
from dradash.dra.allocator.scheduler import (
    BLOCKING_EFFECTS,
    blocking_taints,
    pod_node_problem,
    tolerated,
    tolerates,
    untolerated,
)
from dradash.dra.allocator.search import MAX_RESULTS, Allocation, Allocator, plan_claim

__all__ = [
    "BLOCKING_EFFECTS",
    "MAX_RESULTS",
    "NEWEST",
    "STEPS",
    "STEP_REASONS",
    "TIMED_OUT",
    "Allocation",
    "Allocator",
    "DeviceCheck",
    "Explanation",
    "Features",
    "RequestExplanation",
    "SearchBudget",
    "blocking_taints",
    "budget",
    "error_reason",
    "explain",
    "held_by",
    "kubernetes_minor",
    "lookup_attribute",
    "plan_claim",
    "pod_node_problem",
    "quantity_of",
    "skipped_pool",
    "tolerated",
    "tolerates",
    "untolerated",
]
