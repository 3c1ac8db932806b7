"""Evaluating a selector against a stored snapshot or inline ResourceSlices, within each user's
evaluation time."""

from __future__ import annotations

import contextlib
import gc
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.cache import cache

from dradash.analysis.models import SnapshotAnalysis
from dradash.analysis.selectors import snapshot_analysis
from dradash.dra import matching
from dradash.snapshots.models import Snapshot


class _Devices:
    """The device index (dradash.dra.matching.DeviceIndex, stored by the analysis) of the few
    snapshots used last, per process: the playground evaluates selectors over them again and
    again."""

    SIZE = 2

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: OrderedDict[int, matching.DeviceIndex] = OrderedDict()

    def get(self, snapshot: Snapshot, analysis: SnapshotAnalysis) -> matching.DeviceIndex:
        with self._lock:
            state = self._states.get(snapshot.pk)
            if state is not None:
                self._states.move_to_end(snapshot.pk)
                return state
        data = SnapshotAnalysis.objects.values_list("device_index", flat=True).get(pk=analysis.pk)
        state = matching.DeviceIndex.from_bytes(bytes(data), freeze=True)
        with self._lock:
            self._states[snapshot.pk] = state
            evicted = False
            while len(self._states) > self.SIZE:
                self._states.popitem(last=False)
                evicted = True
        if evicted:  # the collector may reclaim what the evicted index leaves behind
            gc.unfreeze()
        return state

    def clear(self) -> None:
        with self._lock:
            self._states.clear()
        gc.unfreeze()


snapshot_devices = _Devices()


class NotAnalysed(Exception):
    """The snapshot's devices are not indexed yet: its analysis is pending or failed."""

    def __init__(self, analysis: SnapshotAnalysis) -> None:
        self.analysis = analysis
        super().__init__(
            f"snapshot {analysis.snapshot_id} is being analysed; try again in a few seconds"
            if analysis.status == SnapshotAnalysis.Status.PENDING
            else f"the analysis of snapshot {analysis.snapshot_id} failed: {analysis.error}"
        )


class EvaluationRefused(Exception):
    """The user may not start another evaluation now: ``retry_after`` seconds, the message
    says why."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


# Below this, an evaluation could not get far: refuse it instead.
_SMALLEST_GRANT_MS = 100


@contextlib.contextmanager
def evaluation_time(user_id: int) -> Iterator[float]:
    """The seconds one evaluation by the user may run: DRADASH_SELECTOR_TIME_LIMIT, or what
    is left of their DRADASH_SELECTOR_SECONDS_PER_MINUTE (page and API together). Raises
    EvaluationRefused when nothing is left or when DRADASH_SELECTOR_CONCURRENCY of their
    evaluations run already, CacheUnavailable when the counters cannot be reached (the limits
    fail closed).

    The whole time limit is reserved before the evaluation starts, so that requests sent in
    parallel cannot spend more than the budget between them; what the evaluation did not use
    (wall-clock time) is given back when it ends."""
    limit_ms = settings.DRADASH_SELECTOR_TIME_LIMIT * 1000
    budget_ms = settings.DRADASH_SELECTOR_SECONDS_PER_MINUTE * 1000
    most = settings.DRADASH_SELECTOR_CONCURRENCY
    now = time.time()
    # "throttle_": keys the fail-safe cache refuses to forget (dradash.cache). The count of
    # running evaluations expires by itself (a process killed mid-evaluation cannot hold it).
    running = f"throttle_selector_running_{user_id}"
    cache.add(running, 0, timeout=settings.DRADASH_SELECTOR_TIME_LIMIT + 60)
    if cache.incr(running) > most:
        _give_back(running, 1)
        raise EvaluationRefused(
            f"You have {most} selector evaluations running, the most one user may run at once "
            "(the playground and the selector API together). Try again when one has finished.",
            retry_after=settings.DRADASH_SELECTOR_TIME_LIMIT,
        )
    try:
        key = f"throttle_selector_ms_{user_id}_{int(now // 60)}"
        cache.add(key, 0, timeout=120)
        before = cache.incr(key, limit_ms) - limit_ms
        granted = min(limit_ms, budget_ms - before)
        if granted < _SMALLEST_GRANT_MS:
            _give_back(key, limit_ms)
            retry_after = max(1, math.ceil(60 - now % 60))
            raise EvaluationRefused(
                "You have used your selector evaluation time: "
                f"{settings.DRADASH_SELECTOR_SECONDS_PER_MINUTE} s per minute, for the "
                f"playground and the selector API together. Try again in {retry_after} s.",
                retry_after=retry_after,
            )
        started = time.monotonic()
        try:
            yield granted / 1000
        finally:
            spent = math.ceil((time.monotonic() - started) * 1000)
            _give_back(key, limit_ms - min(spent, limit_ms))
    finally:
        _give_back(running, 1)


def _give_back(key: str, amount: int) -> None:
    if amount > 0:
        # ValueError: the counter has expired meanwhile; there is nothing to give back.
        with contextlib.suppress(ValueError):
            cache.incr(key, -amount)


def selector_evaluate(
    *,
    expression: str,
    snapshot: Snapshot | None = None,
    device_class: str | None = None,
    resource_slices: list[dict[str, Any]] | None = None,
    time_limit: float | None = None,
    server_version: str = "",
    feature_gates: dict[str, bool] | None = None,
) -> matching.Evaluation:
    """Over the devices of an analysed snapshot, or of inline slices, for at most
    ``time_limit`` seconds (DRADASH_SELECTOR_TIME_LIMIT). Raises matching.UnknownDeviceClass
    for a class the snapshot does not have, NotAnalysed for a snapshot whose analysis is not
    done. Inline slices are judged in the CEL environment of ``server_version`` (default: the
    newest release) with ``feature_gates``; a snapshot in its own."""
    limit = time_limit or settings.DRADASH_SELECTOR_TIME_LIMIT
    if snapshot is not None:
        analysis = snapshot_analysis(snapshot)
        if not analysis.done:
            raise NotAnalysed(analysis)
        return matching.evaluate(
            snapshot_devices.get(snapshot, analysis),
            expression,
            device_class=device_class,
            time_limit=limit,
        )
    return matching.evaluate_slices(
        resource_slices or [],
        expression,
        time_limit=limit,
        server_version=server_version,
        feature_gates=feature_gates,
    )
