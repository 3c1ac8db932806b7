"""Diagnosis, allocation explainer and findings as JSON (DESIGN "REST API")."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.analysis.apis import AnalysedApi
from dradash.analysis.filters import (
    CLAIM_STATES,
    DEVICE_STATES,
    STAGE_CHOICES,
    ClaimFilter,
    DeviceFilter,
    PodFilter,
)
from dradash.analysis.models import ClaimVerdict, PodVerdict
from dradash.analysis.selectors import (
    Detail,
    claim_detail,
    claim_explanation,
    claim_verdicts,
    device_rows,
    pod_detail,
    pod_verdicts,
    pool_rows,
    snapshot_findings,
    snapshot_search,
)
from dradash.dra import inventory

FINDING_FIELDS = {
    "code": serializers.CharField(),
    "severity": serializers.ChoiceField(choices=["error", "warning", "info"]),
    "message": serializers.CharField(),
    "objects": serializers.ListField(child=serializers.DictField()),
    "next_step": serializers.CharField(),
}
HistorySerializer = inline_serializer(
    "StageHistory",
    {
        "snapshot": serializers.IntegerField(),
        "captured_at": serializers.DateTimeField(),
        "stage": serializers.CharField(),
        "reason": serializers.CharField(),
    },
    many=True,
)


DiagnosisSerializer = inline_serializer(
    "Diagnosis",
    {
        "stage": serializers.CharField(),
        "reason": serializers.CharField(),
        "summary": serializers.CharField(),
        "evidence": serializers.ListField(child=serializers.DictField()),
        "next_steps": serializers.ListField(child=serializers.CharField()),
        "findings": inline_serializer("DiagnosisFinding", FINDING_FIELDS, many=True),
        "chain": serializers.DictField(),
        "history": HistorySerializer,
    },
)
ExplainSerializer = inline_serializer(
    "Explanation",
    {
        "allocatable": serializers.BooleanField(allow_null=True),
        "error": serializers.CharField(allow_null=True),
        "node": serializers.CharField(allow_null=True),
        "reason": serializers.CharField(allow_null=True),
        "requests": serializers.ListField(child=serializers.DictField()),
    },
)


def _diagnosis(detail: Detail) -> dict[str, Any]:
    """The diagnosis API's JSON: the same verdict, findings and chain as the object's page."""
    return {
        **detail.verdict.diagnosis(),
        "findings": [f.as_dict() for f in detail.findings],
        "chain": detail.chain,
        "history": detail.history.as_list(),
    }


class PodDiagnosisApi(AnalysedApi):
    @extend_schema(
        summary="Why a Pod does (not) get its devices",
        description="The verdict on a Pod that uses DRA, as its page shows it: the stage where "
        "it is stuck (or healthy), the reason, a one-sentence summary, the evidence and next "
        "steps, the findings about it and its claims, its object chain, and its stage in the "
        "cluster's other snapshots (newest first). 404 for a Pod that is not in the snapshot or "
        "does not use DRA; 503 while the snapshot is being analysed.",
        responses=DiagnosisSerializer,
    )
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        detail = pod_detail(snapshot, namespace, name)
        if detail is None or not detail.verdict.uses_dra:
            raise Http404(f"No Pod using DRA named {namespace}/{name} in snapshot {snapshot_id}")
        return Response(_diagnosis(detail))


class ClaimDiagnosisApi(AnalysedApi):
    @extend_schema(
        summary="Why a ResourceClaim is (not) allocated and in use",
        description="The verdict on a ResourceClaim, as its page shows it: stage, reason, "
        "summary, evidence, next steps, findings, object chain and its stage in the cluster's "
        "other snapshots. 404 for a claim that is not in the snapshot; 503 while the snapshot "
        "is being analysed.",
        responses=DiagnosisSerializer,
    )
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        detail = claim_detail(snapshot, namespace, name)
        if detail is None:
            raise Http404(f"No ResourceClaim {namespace}/{name} in snapshot {snapshot_id}")
        return Response(_diagnosis(detail))


class ClaimExplainApi(AnalysedApi):
    @extend_schema(
        summary="What the allocator would do with a claim",
        description="The allocation explainer: whether the scheduler's structured allocator "
        "could allocate the claim now (null when it would stop with an error), on which node, "
        "and per request the funnel of devices left after each check with the first check "
        "each device fails.",
        responses=ExplainSerializer,
    )
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        try:
            found = claim_explanation(snapshot, namespace, name)
        except ClaimVerdict.DoesNotExist:
            raise Http404(
                f"No ResourceClaim {namespace}/{name} in snapshot {snapshot_id}"
            ) from None
        return Response(found)


class FindingListApi(AnalysedApi):
    @extend_schema(
        summary="Problems in the snapshot",
        description="Findings: problems that do not block one Pod but matter (leaked claims, "
        "incomplete or stale pools, tainted devices, missing classes …), each with a code, "
        "severity, message, the objects it names and a next step.",
        responses=inline_serializer("Finding", FINDING_FIELDS, many=True),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        return Response([f.as_dict() for f in snapshot_findings(snapshot)])


DeviceSerializer = inline_serializer(
    "Device",
    {
        "driver": serializers.CharField(),
        "pool": serializers.CharField(),
        "device": serializers.CharField(),
        "node": serializers.CharField(allow_null=True),
        "allocated_to": serializers.CharField(allow_null=True),
        "taints": serializers.ListField(child=serializers.DictField()),
        "status": serializers.ChoiceField(choices=list(inventory.STATUSES)),
        "classes": serializers.ListField(child=serializers.CharField()),
        "claims": serializers.ListField(child=serializers.CharField()),
        "pods": serializers.ListField(child=serializers.CharField()),
        "attributes": serializers.DictField(child=serializers.DictField()),
        "capacity": serializers.DictField(child=serializers.DictField()),
        "consumes_counters": serializers.ListField(child=serializers.DictField()),
        "consumed_capacity": serializers.DictField(child=serializers.CharField()),
    },
    many=True,
)
PoolSerializer = inline_serializer(
    "Pool",
    {
        "driver": serializers.CharField(),
        "pool": serializers.CharField(),
        "generation": serializers.IntegerField(),
        "slices": serializers.IntegerField(),
        "resource_slice_count": serializers.IntegerField(),
        "complete": serializers.BooleanField(),
        "devices": serializers.IntegerField(),
        "allocated": serializers.IntegerField(),
        "valid": serializers.BooleanField(),
        "usable": serializers.BooleanField(),
        "problem": serializers.ChoiceField(choices=["incomplete", "invalid"], allow_null=True),
        "free": serializers.IntegerField(),
        "tainted": serializers.IntegerField(),
        "unusable": serializers.IntegerField(),
        "nodes": serializers.ListField(child=serializers.CharField()),
        "stale_slices": inline_serializer(
            "StaleSlice",
            {
                "name": serializers.CharField(),
                "generation": serializers.IntegerField(),
                "devices": serializers.IntegerField(),
            },
            many=True,
        ),
        "duplicate_devices": serializers.ListField(child=serializers.CharField()),
        "counter_sets": inline_serializer(
            "CounterSet",
            {
                "name": serializers.CharField(),
                "counters": inline_serializer(
                    "Counter",
                    {
                        "name": serializers.CharField(),
                        "total": serializers.CharField(),
                        "consumed": serializers.CharField(),
                    },
                    many=True,
                ),
            },
            many=True,
        ),
    },
    many=True,
)


class DeviceListApi(AnalysedApi):
    @extend_schema(
        summary="Devices of the snapshot",
        description="One row per device of the pools the allocator would use: where it is, "
        "who holds it, its taints, state, classes, attributes and capacity. Filters as on the "
        "devices page.",
        responses=DeviceSerializer,
        parameters=[
            OpenApiParameter("q", str, description="part of the device's or a claim's name"),
            OpenApiParameter("driver", str),
            OpenApiParameter("pool", str),
            OpenApiParameter("device_class", str, description="devices the class admits"),
            OpenApiParameter("node", str),
            OpenApiParameter("state", str, enum=[value for value, _ in DEVICE_STATES if value]),
            OpenApiParameter(
                "attribute",
                str,
                description="name or name=value; a name without domain is the driver's",
            ),
        ],
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        filterset = DeviceFilter(request.query_params, device_rows(snapshot))
        if not filterset.is_valid():
            raise serializers.ValidationError(filterset.errors)
        return Response(list(filterset.qs.values_list("data", flat=True)))


class PoolListApi(AnalysedApi):
    @extend_schema(
        summary="Pools of the snapshot",
        description="Every pool as the allocator gathers it from the ResourceSlices: "
        "generation, slices, completeness, devices allocated and free, stale slices, duplicate "
        "device names and shared counters; those that need attention first.",
        responses=PoolSerializer,
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        return Response(list(pool_rows(snapshot).values_list("data", flat=True)))


# --- the Pods and claims lists, and the search -----------------------------------------------

LIST_LIMIT = 1000  # rows per request at most; ?offset= pages on


def pod_row(v: PodVerdict) -> dict[str, Any]:
    return {
        "namespace": v.namespace,
        "name": v.name,
        "stage": v.stage or None,
        "reason": v.reason or None,
        "summary": v.summary,
        "phase": v.phase,
        "node": v.node or None,
        "owner": v.owner or None,
        "claims": v.claims,
    }


def claim_row(v: ClaimVerdict) -> dict[str, Any]:
    return {
        "namespace": v.namespace,
        "name": v.name,
        "stage": v.stage,
        "reason": v.reason,
        "summary": v.summary,
        "state": v.state,
        "template": v.template or None,
        "classes": v.class_list,
        "drivers": v.driver_list,
        "nodes": v.node_list,
        "devices": v.devices,
        "pods": v.pods,
    }


ROW_COMMON = {
    "namespace": serializers.CharField(),
    "name": serializers.CharField(),
    "stage": serializers.CharField(allow_null=True),
    "reason": serializers.CharField(allow_null=True),
    "summary": serializers.CharField(),
}
POD_ROW = {
    **ROW_COMMON,
    "phase": serializers.CharField(),
    "node": serializers.CharField(allow_null=True),
    "owner": serializers.CharField(allow_null=True),
    "claims": serializers.ListField(child=serializers.CharField()),
}
CLAIM_ROW = {
    **ROW_COMMON,
    "state": serializers.ChoiceField(choices=[value for value, _ in CLAIM_STATES]),
    "template": serializers.CharField(allow_null=True),
    "classes": serializers.ListField(child=serializers.CharField()),
    "drivers": serializers.ListField(child=serializers.CharField()),
    "nodes": serializers.ListField(child=serializers.CharField()),
    "devices": serializers.IntegerField(),
    "pods": serializers.ListField(child=serializers.CharField()),
}


# One class each (the search's answer holds them too): drf-spectacular names a component once.
PodRowSerializer = type(inline_serializer("PodRow", POD_ROW))
ClaimRowSerializer = type(inline_serializer("ClaimRow", CLAIM_ROW))


class PageSerializer(serializers.Serializer):
    limit = serializers.IntegerField(
        required=False, min_value=1, max_value=LIST_LIMIT, default=LIST_LIMIT
    )
    offset = serializers.IntegerField(required=False, min_value=0, default=0)


LIST_PARAMETERS = [
    OpenApiParameter("q", str, description="part of the name, or namespace/name"),
    OpenApiParameter("namespace", str),
    OpenApiParameter("stage", str, enum=[value for value, _ in STAGE_CHOICES]),
    OpenApiParameter("reason", str),
    OpenApiParameter("node", str),
    OpenApiParameter(
        "sort",
        str,
        description="a column, - first for descending (the page's column headers sort the "
        "same way); without it, worst stage first",
    ),
    OpenApiParameter("limit", int, description=f"rows, at most {LIST_LIMIT}"),
    OpenApiParameter("offset", int, description="rows to skip"),
]


def _page(request: Request, filterset: Any) -> list[Any]:
    if not filterset.is_valid():
        raise serializers.ValidationError(filterset.errors)
    page = PageSerializer(data=request.query_params)
    page.is_valid(raise_exception=True)
    start = page.validated_data["offset"]
    return list(filterset.qs[start : start + page.validated_data["limit"]])


class PodListApi(AnalysedApi):
    @extend_schema(
        summary="Pods that use DRA, worst first",
        description="The Pods list of the snapshot: each Pod's stage, reason and summary, "
        "phase, node, owner and claims; filtered and sorted as on the Pods page (worst stage "
        "first unless ?sort= says otherwise).",
        parameters=[
            *LIST_PARAMETERS,
            OpenApiParameter("phase", str),
        ],
        responses=PodRowSerializer(many=True),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        rows = _page(request, PodFilter(request.query_params, pod_verdicts(snapshot)))
        return Response([pod_row(v) for v in rows])


class ClaimListApi(AnalysedApi):
    @extend_schema(
        summary="ResourceClaims, worst first",
        description="The claims list of the snapshot: each claim's stage, reason and summary, "
        "state, classes, drivers, nodes, devices and the Pods using it; filtered and sorted "
        "as on the claims page.",
        parameters=[
            *LIST_PARAMETERS,
            OpenApiParameter("state", str, enum=[value for value, _ in CLAIM_STATES]),
            OpenApiParameter("device_class", str),
            OpenApiParameter("driver", str),
        ],
        responses=ClaimRowSerializer(many=True),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        rows = _page(request, ClaimFilter(request.query_params, claim_verdicts(snapshot)))
        return Response([claim_row(v) for v in rows])


SearchSerializer = inline_serializer(
    "SearchResult",
    {
        "query": serializers.CharField(),
        "pods": PodRowSerializer(many=True),
        "claims": ClaimRowSerializer(many=True),
        "nodes": inline_serializer(
            "NodeHit",
            {
                "name": serializers.CharField(),
                "devices": serializers.IntegerField(),
                "pods": serializers.IntegerField(),
            },
            many=True,
        ),
        "totals": inline_serializer(
            "SearchTotals",
            {
                "pods": serializers.IntegerField(),
                "claims": serializers.IntegerField(),
                "nodes": serializers.IntegerField(),
            },
        ),
    },
)


class SnapshotSearchApi(AnalysedApi):
    class QuerySerializer(serializers.Serializer):
        q = serializers.CharField(max_length=253 * 2 + 1, trim_whitespace=True)

        class Meta:
            ref_name = "SearchQuery"

    @extend_schema(
        summary="Find Pods, claims and nodes by name",
        description="What the search box of the snapshot's pages finds: Pods (those that do "
        "not use DRA too) and ResourceClaims whose name contains q (or namespace/name), worst "
        "stage first, and nodes with devices or Pods whose name contains q; the first 20 of "
        "each, and how many there are.",
        parameters=[QuerySerializer],
        responses=SearchSerializer,
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        params = self.QuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        found = snapshot_search(snapshot, params.validated_data["q"])
        return Response(
            {
                "query": found.query,
                "pods": [pod_row(v) for v in found.pods],
                "claims": [claim_row(v) for v in found.claims],
                "nodes": found.nodes,
                "totals": {
                    "pods": found.pod_total,
                    "claims": found.claim_total,
                    "nodes": found.node_total,
                },
            }
        )
