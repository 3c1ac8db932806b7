"""Diagnosis, allocation explainer and findings as JSON (DESIGN "REST API")."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.api import BaseApi
from dradash.dra import allocator, inventory
from dradash.dra.chain import claim_chain, pod_chain
from dradash.dra.diagnosis import Diagnosis
from dradash.dra.findings import Finding
from dradash.dra.state import ClusterState
from dradash.explorer.forms import DEVICE_STATES, DeviceFilterForm
from dradash.explorer.selectors import (
    claim_diagnosis,
    claim_explanation,
    device_rows,
    object_findings,
    pod_diagnosis,
    pool_rows,
    snapshot_findings,
)
from dradash.snapshots.selectors import snapshot_list, snapshot_state

FINDING_FIELDS = {
    "code": serializers.CharField(),
    "severity": serializers.ChoiceField(choices=["error", "warning", "info"]),
    "message": serializers.CharField(),
    "objects": serializers.ListField(child=serializers.DictField()),
    "next_step": serializers.CharField(),
}
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


def _state(snapshot_id: int) -> ClusterState:
    return snapshot_state(get_object_or_404(snapshot_list(), pk=snapshot_id))


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "severity": f.severity,
        "message": f.message,
        "objects": f.objects,
        "next_step": f.next_step,
    }


def _diagnosis(d: Diagnosis, findings: list[Finding], chain: dict[str, Any]) -> dict[str, Any]:
    return {
        "stage": d.stage,
        "reason": d.reason,
        "summary": d.summary,
        "evidence": [e.as_dict() for e in d.evidence],
        "next_steps": d.next_steps,
        "findings": [_finding(f) for f in findings],
        "chain": chain,
    }


def explanation_dict(x: allocator.Explanation) -> dict[str, Any]:
    return {
        "allocatable": x.allocatable,
        "error": x.error,
        "node": x.node,
        "reason": x.reason,
        "requests": [
            {
                "name": r.name,
                "funnel": [{"step": step, "remaining": n} for step, n in r.funnel],
                "devices": [
                    {
                        "driver": d.driver,
                        "pool": d.pool,
                        "device": d.device,
                        "failed_step": d.failed_step,
                        "detail": d.detail,
                    }
                    for d in r.devices
                ],
            }
            for r in x.requests
        ],
    }


class PodDiagnosisApi(BaseApi):
    @extend_schema(responses=DiagnosisSerializer)
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        state = _state(snapshot_id)
        pod = state.pods.get((namespace, name))
        if pod is None or not pod.uses_dra:
            raise Http404(f"No Pod using DRA named {namespace}/{name} in snapshot {snapshot_id}")
        findings = object_findings(state, "Pod", namespace, name)
        return Response(_diagnosis(pod_diagnosis(state, pod), findings, pod_chain(state, pod)))


class ClaimDiagnosisApi(BaseApi):
    @extend_schema(responses=DiagnosisSerializer)
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        state = _state(snapshot_id)
        claim = state.claims.get((namespace, name))
        if claim is None:
            raise Http404(f"No ResourceClaim {namespace}/{name} in snapshot {snapshot_id}")
        findings = object_findings(state, "ResourceClaim", namespace, name)
        chain = claim_chain(state, claim)
        return Response(_diagnosis(claim_diagnosis(state, claim), findings, chain))


class ClaimExplainApi(BaseApi):
    @extend_schema(responses=ExplainSerializer)
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        state = _state(snapshot_id)
        claim = state.claims.get((namespace, name))
        if claim is None:
            raise Http404(f"No ResourceClaim {namespace}/{name} in snapshot {snapshot_id}")
        return Response(explanation_dict(claim_explanation(state, claim)))


class FindingListApi(BaseApi):
    @extend_schema(responses=inline_serializer("Finding", FINDING_FIELDS, many=True))
    def get(self, request: Request, snapshot_id: int) -> Response:
        return Response([_finding(f) for f in snapshot_findings(_state(snapshot_id))])


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


class DeviceListApi(BaseApi):
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
        state = _state(snapshot_id)
        form = DeviceFilterForm(request.query_params)
        if not form.is_valid():
            raise serializers.ValidationError(form.errors)
        return Response([row.as_dict() for row in device_rows(state, form.cleaned_data)])


class PoolListApi(BaseApi):
    @extend_schema(responses=PoolSerializer)
    def get(self, request: Request, snapshot_id: int) -> Response:
        return Response(pool_rows(_state(snapshot_id)))
