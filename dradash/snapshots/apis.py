from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.api import BaseApi
from dradash.pagination import ListPage, page_parameters
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


class SnapshotPage(ListPage):
    default_limit = 100


class SnapshotListApi(BaseApi):
    class FilterSerializer(serializers.Serializer):
        cluster = serializers.CharField(required=False)
        limit = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=SnapshotPage.max_limit,
            help_text=f"snapshots per page (default {SnapshotPage.default_limit}, at most "
            f"{SnapshotPage.max_limit})",
        )
        offset = serializers.IntegerField(
            required=False, min_value=0, help_text="snapshots to skip"
        )

    @extend_schema(
        summary="Snapshots, newest first",
        description="The stored snapshots of every cluster, newest first, each with its "
        "kinds, object counts and whether its analysis is done; a page at a time.",
        parameters=[FilterSerializer, *page_parameters(SnapshotPage, query=False)],
        responses=SnapshotOutputSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        snapshots = snapshot_list()
        if cluster := filters.validated_data.get("cluster"):
            snapshots = snapshots.filter(cluster__name=cluster)
        paginator = SnapshotPage()
        page = paginator.paginate_queryset(snapshots, request, view=self) or []
        return paginator.get_paginated_response(SnapshotOutputSerializer(page, many=True).data)


class SnapshotDetailApi(BaseApi):
    @extend_schema(
        summary="One snapshot",
        description="A snapshot: its cluster, when it was captured, the Kubernetes version "
        "and DRA API versions served, the kinds it holds (and those it could not read) and the "
        "state of its analysis.",
        responses=SnapshotOutputSerializer,
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot = get_object_or_404(snapshot_list(), pk=snapshot_id)
        return Response(SnapshotOutputSerializer(snapshot).data)
