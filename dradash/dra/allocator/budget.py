"""How far the allocator's search may go: kube-scheduler's filter timeout, in allocateOne calls.

kube-scheduler's DynamicResources plugin gives each node's Allocate a context deadline,
``filterTimeout`` (gate DRASchedulerFilterTimeout, beta and on since 1.34; 10 s by default).
allocateOne counts each call (``Stats.NumAllocateOneInvocations``) and then checks the context
(``allocator_incubating.go``: "filter operation aborted: context deadline exceeded"); the plugin
turns that into the node's status "timed out trying to allocate devices" — since 1.36 an Error
that fails the whole scheduling attempt as ``node NAME: timed out trying to allocate devices``
(kubernetes PR #137607), before that one unschedulable node among the others. Before 1.34 there
is no deadline: the search runs to its end, however long.

The simulation stops where the scheduler's clock would, but counts instead of timing, so that a
verdict does not depend on the machine's speed: the search on one node gets ``FILTER_CALLS``
allocateOne calls. The figure: kube-scheduler's own FilterTimeout integration test
(``test/integration/dra``, 1.36) picks a search of 2^20 calls (21 devices asked of a node with
20, no constraint) as one that "takes a few seconds" without a timeout and runs into a 10 ms one,
so 10 s of the scheduler's search is at least 2^20 calls. A search the budget stops is rarely
near the edge: searches that run out double with every device (36 devices split in two groups by
a ``matchAttribute`` need 2^19 calls, 60 devices 2^31). A wall-clock safety net (``seconds``)
stops a search whose calls are unusually slow; it is named wherever it decides.

The scheduler filters nodes 16 at a time (its default parallelism) and, in 1.36+, gives up at the
first timeout. One analysis (everything explained on one snapshot) lets at most ``nodes`` (16)
searches run out of their budget. After that a search gets ``LEFTOVER_CALLS``, plenty for any
ordinary search (tens of calls); one that needs more is left unfinished and its node counts as
not searched, and so do the explanation's further nodes. A 5,000-node cluster whose every node
runs out costs 16 budgets, not 5,000, and its ordinary claims are still answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dradash.dra.state import ClusterState

FILTER_CALLS = 1 << 20  # allocateOne calls per node: at least 10 s of kube-scheduler's search
FILTER_SECONDS = 10.0  # the wall-clock safety net per node
PARALLELISM = 16  # kube-scheduler's default parallelism: nodes filtered at once
LEFTOVER_CALLS = 1 << 14  # per search, once ``nodes`` searches have run out

TIMED_OUT = "timed out trying to allocate devices"  # the DynamicResources plugin's status


def timeout_status(node: str, as_error: bool) -> str:
    """The node's status: an Error naming the node since 1.36, else Unschedulable."""
    return f"node {node}: {TIMED_OUT}" if as_error else TIMED_OUT


class Cancelled(Exception):
    """Whoever gave the budget gave up on the work (an analysis's time limit): stop it all."""


class Interrupted(Exception):
    """The search ran out of its budget (``by_clock``: of the wall-clock safety net)."""

    def __init__(self, calls: int, by_clock: bool) -> None:
        super().__init__(TIMED_OUT)
        self.calls = calls
        self.by_clock = by_clock


@dataclass
class SearchBudget:
    """What the searches of one analysis (or one explanation) may spend."""

    calls: int = FILTER_CALLS  # per node
    seconds: float = FILTER_SECONDS  # per node
    nodes: int = PARALLELISM  # searches that may run out, in all
    timed_out: int = 0  # searches that ran out so far
    cancelled: bool = False  # set from another thread: searches raise Cancelled

    @property
    def spent(self) -> bool:
        return self.timed_out >= self.nodes

    @property
    def node_calls(self) -> int:
        """The calls the next search gets."""
        return min(self.calls, LEFTOVER_CALLS) if self.spent else self.calls

    @classmethod
    def of(cls, state: ClusterState) -> SearchBudget:
        """The budget of everything explained on one snapshot's state (one analysis)."""
        budget: SearchBudget = state.derived("search-budget", lambda _: cls())
        return budget
