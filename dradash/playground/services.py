"""Evaluating a selector against a stored snapshot or inline ResourceSlices."""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from typing import Any

from django.conf import settings

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


def selector_evaluate(
    *,
    expression: str,
    snapshot: Snapshot | None = None,
    device_class: str | None = None,
    resource_slices: list[dict[str, Any]] | None = None,
) -> matching.Evaluation:
    """Over the devices of an analysed snapshot, or of inline slices. Raises
    matching.UnknownDeviceClass for a class the snapshot does not have, NotAnalysed for a
    snapshot whose analysis is not done."""
    limit = settings.DRADASH_SELECTOR_TIME_LIMIT
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
    return matching.evaluate_slices(resource_slices or [], expression, time_limit=limit)
