from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.api import BaseApi
from dradash.clusters.models import cluster_name_validator
from dradash.pagination import ListPage, page_parameters
from dradash.snapshots.forms import (
    files_too_large,
    request_too_large,
    too_large_message,
    upload_exceeded,
)
from dradash.snapshots.models import SnapshotRun
from dradash.snapshots.selectors import snapshot_list
from dradash.snapshots.services import upload_run_create


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


class UploadSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=SnapshotRun.Status.values)
    requested_cluster = serializers.CharField(
        source="cluster_name",
        help_text='The cluster the upload asked for ("": the bundle\'s SnapshotInfo, or '
        '"imported").',
    )
    cluster = serializers.CharField(
        source="snapshot.cluster.name",
        allow_null=True,
        default=None,
        help_text="The cluster the snapshot was stored in, once it is: not the one asked for "
        "when that is captured live, an operator's or another user's (notice says so).",
    )
    snapshot = serializers.IntegerField(source="snapshot_id", allow_null=True)
    notice = serializers.CharField(
        help_text='Why the snapshot was stored in another cluster than the one asked for, or ""'
    )
    error = serializers.CharField(help_text="Why the upload failed; nothing was stored.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"


class UploadListApi(BaseApi):
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        files = serializers.ListField(
            child=serializers.FileField(),
            min_length=1,
            help_text="Bundle files (kubectl get … -o json or -o yaml output): one snapshot.",
        )
        cluster = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=253,
            validators=[cluster_name_validator],
            help_text="Cluster name. Empty: the bundle's SnapshotInfo, or “imported”.",
        )

        class Meta:
            ref_name = "UploadRequest"  # the schema's name for the request body

        def validate_files(self, files: list[Any]) -> list[Any]:
            if problem := files_too_large(files):
                raise serializers.ValidationError(problem)
            return files

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # Before authentication, which may read the body (the session's CSRF check).
        if request.method == "POST" and (length := request_too_large(request._request)):
            raise RequestTooLarge(too_large_message(length))
        super().initial(request, *args, **kwargs)

    @extend_schema(
        operation_id="uploads_create",
        summary="Upload a bundle",
        request={"multipart/form-data": InputSerializer},
        responses={
            202: UploadSerializer,
            413: OpenApiResponse(description="Over DRADASH_UPLOAD_MAX_BYTES; nothing stored."),
        },
        description="Queue an import of bundle files as one snapshot, as the upload page does; "
        "`GET /api/v1/uploads/{id}` follows it. The snapshot is stored in the cluster asked "
        "for only when that is a cluster of your own uploads or a new one; otherwise in "
        "`<name>~<your user name>`, and `notice` says why.",
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        if upload_exceeded(request._request):
            raise RequestTooLarge(too_large_message(None))
        data.is_valid(raise_exception=True)
        files = data.validated_data["files"]
        run = upload_run_create(
            files=[(f.name or "upload", f) for f in files],
            cluster_name=data.validated_data.get("cluster", ""),
            user=request.user,
        )
        run = SnapshotRun.objects.select_related("snapshot__cluster").get(pk=run.pk)
        return Response(
            UploadSerializer(run).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": reverse("api-upload-detail", args=[run.pk])},
        )


class UploadDetailApi(BaseApi):
    @extend_schema(
        operation_id="uploads_retrieve",
        summary="One upload",
        responses=UploadSerializer,
        description="An upload's progress (queued, running, succeeded, failed) and, once it "
        "succeeded, the snapshot and the cluster it was stored in.",
    )
    def get(self, request: Request, run_id: int) -> Response:
        uploads = SnapshotRun.objects.filter(kind=SnapshotRun.Kind.UPLOAD)
        run = get_object_or_404(uploads.select_related("snapshot__cluster"), pk=run_id)
        return Response(UploadSerializer(run).data)
