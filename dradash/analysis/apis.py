"""The API's side of the stored analysis: until it is there, a snapshot's derived resources
answer 503 with the analysis's state, never a half answer."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import status
from rest_framework.exceptions import APIException

from dradash.analysis.models import SnapshotAnalysis
from dradash.analysis.selectors import snapshot_analysis
from dradash.api import BaseApi
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import snapshot_list


class AnalysisNotReady(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "analysis_not_ready"

    def __init__(self, analysis: SnapshotAnalysis) -> None:
        snapshot = analysis.snapshot_id
        if analysis.status == SnapshotAnalysis.Status.FAILED:
            retry = "will be retried" if analysis.retried else "is not retried by itself"
            detail = f"The analysis of snapshot {snapshot} failed and {retry}: {analysis.error}"
        else:
            detail = f"Snapshot {snapshot} is being analysed; try again in a few seconds."
        super().__init__({"detail": detail, "analysis": analysis.status})


class AnalysedApi(BaseApi):
    """An API view of one snapshot's stored analysis."""

    def analysed(self, snapshot_id: int) -> tuple[Snapshot, SnapshotAnalysis]:
        snapshot = get_object_or_404(snapshot_list(), pk=snapshot_id)
        analysis = snapshot_analysis(snapshot)
        if not analysis.done:
            raise AnalysisNotReady(analysis)
        return snapshot, analysis

    def handle_exception(self, exc: Exception):  # type: ignore[no-untyped-def]
        response = super().handle_exception(exc)
        if isinstance(exc, AnalysisNotReady):
            response["Retry-After"] = "5"
        return response
