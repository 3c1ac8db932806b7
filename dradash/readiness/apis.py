"""The acceptance checklist and capacity outlook as JSON."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.analysis.apis import AnalysedApi
from dradash.dra import checklist

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


class ChecklistApi(AnalysedApi):
    @extend_schema(
        summary="The production acceptance checklist",
        description="Each item of the checklist in order: pass, fail or unknown (when the "
        "snapshot lacks a kind the check needs), with a summary, the objects at fault and a "
        "next step.",
        responses=CheckItemSerializer,
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        _, analysis = self.analysed(snapshot_id)
        return Response(analysis.checklist)


WaitingSerializer = inline_serializer(
    "WaitingRequests",
    {
        "devices_per_request": serializers.IntegerField(),
        "requests": serializers.IntegerField(),
        "servable": serializers.IntegerField(),
        "unusable_free_devices": serializers.IntegerField(),
        "claims": serializers.ListField(child=serializers.CharField()),
        "extended_resource_pods": serializers.ListField(
            child=serializers.CharField(),
            help_text="namespace/name of the Pods whose extended resources wait (the scheduler "
            "creates their claim only when it binds the Pod)",
        ),
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
                "free_spread": serializers.ListField(
                    child=serializers.ListField(child=serializers.IntegerField()),
                    help_text="[free devices on a node, nodes with that many], most first",
                ),
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
        "extended_resources": inline_serializer(
            "ExtendedResourceCapacity",
            {
                "resource": serializers.CharField(),
                "device_class": serializers.CharField(),
                "explicit": serializers.BooleanField(
                    help_text="the class's spec.extendedResourceName (false: its implicit name)"
                ),
                "known": serializers.BooleanField(),
                "dra_nodes": serializers.IntegerField(allow_null=True),
                "dra_free": serializers.IntegerField(allow_null=True),
                "dra_largest": serializers.IntegerField(allow_null=True),
                "plugin_nodes": serializers.IntegerField(allow_null=True),
                "plugin_free": serializers.IntegerField(allow_null=True),
                "plugin_largest": serializers.IntegerField(allow_null=True),
                "largest_request": serializers.IntegerField(
                    allow_null=True,
                    help_text="the largest request of the name one node can serve now "
                    "(null: unknown)",
                ),
                "largest_on": serializers.CharField(
                    help_text="the node it is on (empty: devices every node reaches)"
                ),
                "pods_waiting": serializers.IntegerField(allow_null=True),
                "pods_too_big": serializers.IntegerField(allow_null=True),
                "summary": serializers.CharField(),
            },
            many=True,
        ),
    },
)


class CapacityApi(AnalysedApi):
    @extend_schema(
        summary="Capacity per device class, per Job and per extended resource",
        description="Per DeviceClass: devices free, allocated and tainted, and how many of the "
        "waiting requests the free devices could serve (a request's devices come from one "
        "node); per Job that runs several Pods at once: its device demand against the matching "
        "devices; per extended resource name a DeviceClass maps (KEP-5004): the class serving "
        "it, its free devices where DRA serves the name, what device plugins have left where "
        "nodes advertise it, and the largest request one node can serve.",
        responses=CapacitySerializer,
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        _, analysis = self.analysed(snapshot_id)
        return Response(analysis.capacity)
