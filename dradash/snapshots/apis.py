from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.api import BaseApi
from dradash.snapshots.selectors import snapshot_list


class SnapshotOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    cluster = serializers.CharField(source="cluster.name")
    status = serializers.CharField()
    source = serializers.CharField()
    captured_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()
    server_version = serializers.CharField()
    api_versions = serializers.ListField(child=serializers.CharField())
    kinds = serializers.DictField(
        help_text='Per kind: {"status": "ok" | "absent" | "forbidden" | "not-found" | "error", '
        '"count": int, "message": str}'
    )
    missing_kinds = serializers.ListField(child=serializers.CharField())
    object_count = serializers.IntegerField()
    ignored = serializers.DictField(child=serializers.IntegerField())
    pinned = serializers.BooleanField()
    analysis = serializers.ChoiceField(
        source="analysis_status",
        read_only=True,
        choices=["pending", "done", "failed"],
        help_text="pending while the snapshot is being analysed: its pods, claims, findings, "
        "devices, capacity and checklist answer 503 until it is done",
    )

    def to_representation(self, instance):  # type: ignore[no-untyped-def]
        data = super().to_representation(instance)
        data["missing_kinds"] = sorted(instance.missing_kinds)
        return data


class SnapshotListApi(BaseApi):
    class FilterSerializer(serializers.Serializer):
        cluster = serializers.CharField(required=False)
        limit = serializers.IntegerField(required=False, min_value=1, max_value=1000, default=100)

    @extend_schema(parameters=[FilterSerializer], responses=SnapshotOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        snapshots = snapshot_list()
        if cluster := filters.validated_data.get("cluster"):
            snapshots = snapshots.filter(cluster__name=cluster)
        snapshots = snapshots[: filters.validated_data["limit"]]
        return Response(SnapshotOutputSerializer(snapshots, many=True).data)


class SnapshotDetailApi(BaseApi):
    @extend_schema(responses=SnapshotOutputSerializer)
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot = get_object_or_404(snapshot_list(), pk=snapshot_id)
        return Response(SnapshotOutputSerializer(snapshot).data)
