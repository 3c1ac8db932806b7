from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.api import BaseApi
from dradash.dra.bundle import MAX_REFUSED
from dradash.pagination import ListPage, page_parameters
from dradash.snapshots.forms import (
    UploadForm,
    request_length,
    upload_size_exceeded,
    upload_size_guard,
)
from dradash.snapshots.models import SnapshotRun
from dradash.snapshots.selectors import snapshot_list
from dradash.snapshots.services import UploadRefused, upload_limits_check, upload_run_create


class RefusedSerializer(serializers.Serializer):
    file = serializers.CharField()
    location = serializers.CharField(help_text='where in the file, e.g. "document 1, List item 3"')
    kind = serializers.CharField(help_text='"" when it could not be read')
    namespace = serializers.CharField(help_text='"" for cluster objects or when not readable')
    name = serializers.CharField(help_text='"" when it could not be read')
    problem = serializers.CharField()


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
    refused = RefusedSerializer(
        many=True,
        help_text="Invalid objects left out of the import (upload or import_bundle with "
        f"skip invalid objects), the first {MAX_REFUSED:,}; [] for others",
    )
    refused_count = serializers.IntegerField(
        help_text="How many invalid objects were left out in all (refused lists at most "
        f"{MAX_REFUSED:,})"
    )
    feature_gates = serializers.DictField(
        child=serializers.BooleanField(),
        help_text="Feature gates the snapshot states (SnapshotInfo featureGates), judged by "
        "instead of the version's defaults",
    )
    pinned = serializers.BooleanField()
    analysis = serializers.ChoiceField(
        source="analysis_status",
        read_only=True,
        choices=["pending", "done", "failed", "compacted"],
        help_text="pending while the snapshot is being analysed: its pods, claims, findings, "
        "devices, capacity and checklist answer 503 until it is done; compacted when its "
        "detailed analysis was dropped (a capture older than its cluster's last keep_analysed): "
        "asking for any of those queues it again and answers 503 meanwhile",
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


class UploadOutputSerializer(serializers.Serializer):
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
    snapshot = serializers.IntegerField(
        source="snapshot_id", allow_null=True, help_text="the snapshot stored, once succeeded"
    )
    notice = serializers.CharField(
        help_text='Why the snapshot was stored in another cluster than the one asked for, or ""'
    )
    error = serializers.CharField(help_text="why it failed; empty unless status is failed")
    skip_invalid = serializers.BooleanField(
        help_text="whether invalid objects are left out (and listed) instead of refusing the bundle"
    )
    refused = serializers.IntegerField(
        source="snapshot.refused_count",
        allow_null=True,
        default=None,
        help_text="how many invalid objects were left out, once the snapshot is stored (its "
        "refused lists them)",
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class _Refused(exceptions.APIException):
    """An UploadRefused as a JSON answer: 413 or 429, with Retry-After when it is known."""

    def __init__(self, refused: UploadRefused) -> None:
        super().__init__(str(refused))
        self.status_code = refused.status
        self.wait = refused.retry_after  # DRF's handler sends it as Retry-After


class UploadCreateApi(BaseApi):
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        skip_invalid = serializers.BooleanField(
            required=False,
            default=False,
            help_text=UploadForm.base_fields["skip_invalid"].help_text,
        )

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # Before authentication, whose CSRF check reads a session's form body.
        if (refused := upload_size_guard(request._request)) is not None:
            raise refused
        super().initial(request, *args, **kwargs)

    def handle_exception(self, exc: Exception) -> Response:
        return super().handle_exception(_Refused(exc) if isinstance(exc, UploadRefused) else exc)

    @extend_schema(
        summary="Upload a bundle",
        description="Queues the import of bundle files (`kubectl get … -o json` or `-o yaml`, "
        "as on the upload page) into one snapshot; poll `GET uploads/{id}` for the result. "
        "A request over DRADASH_UPLOAD_MAX_BYTES gets 413; a user who has "
        "DRADASH_UPLOADS_PER_USER uploads queued or running, or whose uploads of the last "
        "hour would come to more than DRADASH_UPLOAD_BYTES_PER_HOUR, gets 429 with "
        "Retry-After. Either way nothing is stored.",
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {
                    "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                    "cluster": {
                        "type": "string",
                        "description": UploadForm.base_fields["cluster"].help_text,
                    },
                    "skip_invalid": {
                        "type": "boolean",
                        "default": False,
                        "description": UploadForm.base_fields["skip_invalid"].help_text
                        + " The snapshot's refused lists them.",
                    },
                },
                "required": ["files"],
            }
        },
        responses={202: UploadOutputSerializer},
    )
    def post(self, request: Request) -> Response:
        # The request's length stands for its files' size until they are read.
        upload_limits_check(user=request.user, size=request_length(request._request))
        form = UploadForm(request.POST, request.FILES)
        if (refused := upload_size_exceeded(request._request)) is not None:
            raise refused
        options = self.InputSerializer(data=request.POST)
        valid = [form.is_valid(), options.is_valid()]  # both: each says what is wrong
        if not all(valid):
            errors = form.errors.get_json_data()
            raise exceptions.ValidationError(
                {field: [e["message"] for e in found] for field, found in errors.items()}
                | {field: [str(e) for e in found] for field, found in options.errors.items()}
            )
        files = [(f.name or "upload", f) for f in form.cleaned_data["files"]]
        run = upload_run_create(
            files=files,
            cluster_name=form.cleaned_data["cluster"],
            user=request.user,
            skip_invalid=options.validated_data["skip_invalid"],
        )
        # Without a broker the import has run already.
        run = SnapshotRun.objects.select_related("snapshot__cluster").get(pk=run.pk)
        return Response(
            UploadOutputSerializer(run).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": reverse("api-upload-detail", args=[run.pk])},
        )


class UploadDetailApi(BaseApi):
    @extend_schema(
        summary="One upload",
        description="An upload's state: queued, running, succeeded (with the snapshot it "
        "stored) or failed (with why).",
        responses=UploadOutputSerializer,
    )
    def get(self, request: Request, upload_id: int) -> Response:
        run = get_object_or_404(
            SnapshotRun.objects.filter(kind=SnapshotRun.Kind.UPLOAD).select_related(
                "snapshot__cluster"
            ),
            pk=upload_id,
        )
        return Response(UploadOutputSerializer(run).data)
