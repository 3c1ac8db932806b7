"""The acceptance checklist and capacity outlook as JSON."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.api import BaseApi
from dradash.dra import capacity, checklist
from dradash.readiness.selectors import snapshot_capacity, snapshot_checklist
from dradash.snapshots.selectors import snapshot_list, snapshot_state

CheckItemSerializer = inline_serializer(
    "CheckItem",
    {
        "code": serializers.CharField(),
        "title": serializers.CharField(),
        "status": serializers.ChoiceField(choices=list(checklist.STATUSES)),
        "summary": serializers.CharField(),
        "evidence": serializers.ListField(child=serializers.DictField()),
        "evidence_total": serializers.IntegerField(),
        "next_step": serializers.CharField(),
    },
    many=True,
)


class ChecklistApi(BaseApi):
    """The production acceptance checklist of a snapshot, item by item, in checklist order."""

    @extend_schema(responses=CheckItemSerializer)
    def get(self, request: Request, snapshot_id: int) -> Response:
        state = snapshot_state(get_object_or_404(snapshot_list(), pk=snapshot_id))
        return Response([item.as_dict() for item in snapshot_checklist(state)])


WaitingSerializer = inline_serializer(
    "WaitingRequests",
    {
        "devices_per_request": serializers.IntegerField(),
        "requests": serializers.IntegerField(),
        "servable": serializers.IntegerField(),
        "unusable_free_devices": serializers.IntegerField(),
        "claims": serializers.ListField(child=serializers.CharField()),
        "summary": serializers.CharField(),
    },
    many=True,
)
CapacitySerializer = inline_serializer(
    "Capacity",
    {
        "classes": inline_serializer(
            "ClassCapacity",
            {
                "device_class": serializers.CharField(),
                "known": serializers.BooleanField(),
                "devices": serializers.IntegerField(),
                "in_skipped_pools": serializers.IntegerField(),
                "allocated": serializers.IntegerField(),
                "tainted": serializers.IntegerField(),
                "free": serializers.IntegerField(),
                "largest_free_set": serializers.IntegerField(),
                "waiting": WaitingSerializer,
                "all_mode_requests": serializers.IntegerField(),
                "admin_access_requests": serializers.IntegerField(),
                "unknown_requests": serializers.IntegerField(),
                "summary": serializers.CharField(),
            },
            many=True,
        ),
        "jobs": inline_serializer(
            "JobCapacity",
            {
                "job": serializers.CharField(),
                "pods_wanted": serializers.IntegerField(),
                "devices_per_pod": serializers.DictField(child=serializers.IntegerField()),
                "demand": serializers.IntegerField(),
                "matching": serializers.IntegerField(allow_null=True),
                "available": serializers.IntegerField(allow_null=True),
                "pods_fit": serializers.IntegerField(allow_null=True),
                "fits": serializers.BooleanField(allow_null=True),
                "summary": serializers.CharField(),
            },
            many=True,
        ),
    },
)


def _class_dict(c: capacity.ClassCapacity, skipped: int) -> dict[str, Any]:
    return {
        "device_class": c.name,
        "known": c.known,
        "devices": c.total,
        "in_skipped_pools": skipped,
        "allocated": c.allocated,
        "tainted": c.tainted,
        "free": c.free,
        "largest_free_set": c.largest_free_set,
        "waiting": [
            {
                "devices_per_request": w.count,
                "requests": w.requests,
                "servable": w.servable,
                "unusable_free_devices": w.unusable,
                "claims": [f"{namespace}/{name}" for namespace, name in w.claims],
                "summary": w.summary,
            }
            for _, w in sorted(c.waiting.items())
        ],
        "all_mode_requests": c.all_mode_requests,
        "admin_access_requests": c.admin_access_requests,
        "unknown_requests": c.unknown_requests,
        "summary": c.summary,
    }


def _job_dict(j: capacity.JobCapacity) -> dict[str, Any]:
    return {
        "job": f"{j.job.namespace}/{j.job.name}",
        "pods_wanted": j.pods_wanted,
        "devices_per_pod": j.per_pod,
        "demand": j.demand,
        "matching": j.matching,
        "available": j.available,
        "pods_fit": j.pods_fit,
        "fits": j.fits,
        "summary": j.summary,
    }


class CapacityApi(BaseApi):
    """Per DeviceClass: devices free, allocated and tainted, and how many of the waiting requests
    the free devices could serve (each request's devices come from one node); per Job that runs
    several Pods at once: its device demand against the matching devices."""

    @extend_schema(responses=CapacitySerializer)
    def get(self, request: Request, snapshot_id: int) -> Response:
        state = snapshot_state(get_object_or_404(snapshot_list(), pk=snapshot_id))
        found = snapshot_capacity(state)
        return Response(
            {
                "classes": [_class_dict(c, skipped) for c, _, skipped in found["classes"]],
                "jobs": [_job_dict(j) for j in found["jobs"]],
            }
        )
