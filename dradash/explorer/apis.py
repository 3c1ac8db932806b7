"""Diagnosis, allocation explainer and findings as JSON (DESIGN "REST API")."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.analysis.apis import AnalysedApi
from dradash.analysis.filters import (
    DEVICE_STATES,
    ClaimFilter,
    DeviceFilter,
    PodFilter,
    openapi_parameters,
)
from dradash.analysis.models import ClaimVerdict
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
    @extend_schema(responses=DiagnosisSerializer)
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        detail = pod_detail(snapshot, namespace, name)
        if detail is None or not detail.verdict.uses_dra:
            raise Http404(f"No Pod using DRA named {namespace}/{name} in snapshot {snapshot_id}")
        return Response(_diagnosis(detail))


class ClaimDiagnosisApi(AnalysedApi):
    @extend_schema(responses=DiagnosisSerializer)
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        detail = claim_detail(snapshot, namespace, name)
        if detail is None:
            raise Http404(f"No ResourceClaim {namespace}/{name} in snapshot {snapshot_id}")
        return Response(_diagnosis(detail))


class ClaimExplainApi(AnalysedApi):
    @extend_schema(responses=ExplainSerializer)
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        try:
            found = claim_explanation(snapshot, namespace, name)
        except ClaimVerdict.DoesNotExist:
            raise Http404(
                f"No ResourceClaim {namespace}/{name} in snapshot {snapshot_id}"
            ) from None
        return Response(found)


class _ListPage(LimitOffsetPagination):
    default_limit = 100
    max_limit = 1000


def _page_of(name: str, fields: dict[str, Any]) -> Any:
    """A page of rows as LimitOffsetPagination answers: count, next, previous, results."""
    return inline_serializer(
        f"{name}Page",
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": inline_serializer(name, fields, many=True),
        },
    )


LIMIT_OFFSET = [
    OpenApiParameter("limit", int, description="rows per page (default 100, at most 1000)"),
    OpenApiParameter("offset", int, description="rows to skip"),
]


VERDICT_FIELDS = {
    "namespace": serializers.CharField(),
    "name": serializers.CharField(),
    "stage": serializers.CharField(),
    "reason": serializers.CharField(),
    "severity": serializers.ChoiceField(choices=["ok", "warning", "error"]),
    "summary": serializers.CharField(),
}


class _VerdictListApi(AnalysedApi):
    """A list of Pods or claims, filtered and sorted by the FilterSet its page uses."""

    filterset_class: type[Any]
    rows: Any  # (snapshot) -> QuerySet
    fields: tuple[str, ...]

    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        filterset = self.filterset_class(request.query_params, type(self).rows(snapshot))
        if not filterset.is_valid():
            raise serializers.ValidationError(filterset.errors)
        paginator = _ListPage()
        page = paginator.paginate_queryset(filterset.qs, request, view=self) or []
        return paginator.get_paginated_response([self.row(v) for v in page])

    def row(self, verdict: Any) -> dict[str, Any]:
        out = {name: getattr(verdict, name) for name in (*VERDICT_FIELDS, *self.fields)}
        return out


class PodListApi(_VerdictListApi):
    """Pods that use DRA, worst stage first: ?q= (name) &namespace= &phase= &node= &stage=
    &reason= &sort= (name, namespace, stage, reason, phase, node, owner; -column descending)
    &limit= &offset=, as on the Pods page."""

    filterset_class = PodFilter
    rows = staticmethod(pod_verdicts)
    fields = ("phase", "node", "owner", "claims")

    @extend_schema(
        parameters=[*openapi_parameters(PodFilter), *LIMIT_OFFSET],
        responses=_page_of(
            "PodVerdict",
            {
                **VERDICT_FIELDS,
                "phase": serializers.CharField(),
                "node": serializers.CharField(),
                "owner": serializers.CharField(),
                "claims": serializers.ListField(child=serializers.CharField()),
            },
        ),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        return super().get(request, snapshot_id)


class ClaimListApi(_VerdictListApi):
    """ResourceClaims, worst stage first: ?q= &namespace= &state= &device_class= &driver=
    &node= &stage= &reason= &sort= &limit= &offset=, as on the claims page."""

    filterset_class = ClaimFilter
    rows = staticmethod(claim_verdicts)
    fields = ("state", "template", "devices", "pods")

    def row(self, verdict: Any) -> dict[str, Any]:
        return {
            **super().row(verdict),
            "classes": verdict.class_list,
            "drivers": verdict.driver_list,
            "nodes": verdict.node_list,
        }

    @extend_schema(
        parameters=[*openapi_parameters(ClaimFilter), *LIMIT_OFFSET],
        responses=_page_of(
            "ClaimVerdict",
            {
                **VERDICT_FIELDS,
                "state": serializers.CharField(),
                "template": serializers.CharField(),
                "devices": serializers.IntegerField(),
                "pods": serializers.ListField(child=serializers.CharField()),
                "classes": serializers.ListField(child=serializers.CharField()),
                "drivers": serializers.ListField(child=serializers.CharField()),
                "nodes": serializers.ListField(child=serializers.CharField()),
            },
        ),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        return super().get(request, snapshot_id)


class FindingListApi(AnalysedApi):
    @extend_schema(responses=inline_serializer("Finding", FINDING_FIELDS, many=True))
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
    """Devices of the pools the allocator would use; ?driver= &pool= &device_class= &node=
    &state= (free, allocated, tainted, unusable) &attribute= (name or name=value) &q= filter as
    on the devices page."""

    @extend_schema(
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
    @extend_schema(responses=PoolSerializer)
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        return Response(list(pool_rows(snapshot).values_list("data", flat=True)))
