"""Diagnosis, allocation explainer and findings as JSON (DESIGN "REST API")."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.analysis.apis import AnalysedApi
from dradash.analysis.filters import DEVICE_STATES, DeviceFilter
from dradash.analysis.models import ClaimVerdict
from dradash.analysis.selectors import (
    Detail,
    claim_detail,
    claim_explanation,
    device_rows,
    pod_detail,
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
