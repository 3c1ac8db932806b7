"""Share links over the API: create (the only time the token is shown), list, revoke."""

from __future__ import annotations

from datetime import timedelta

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.api import BaseApi
from dradash.pagination import ListPage, page_parameters
from dradash.sharing.models import DEFAULT_EXPIRY, MAX_EXPIRY, MIN_EXPIRY, ShareLink
from dradash.sharing.pages import share_link_opens
from dradash.sharing.selectors import share_link_list_active
from dradash.sharing.services import remote_addr, share_link_create, share_link_revoke, share_path
from dradash.snapshots.selectors import snapshot_list


class SnapshotShareListApi(BaseApi):
    class ShareCreateSerializer(serializers.Serializer):
        expires_in = serializers.IntegerField(
            min_value=int(MIN_EXPIRY.total_seconds()),
            max_value=int(MAX_EXPIRY.total_seconds()),
            default=int(DEFAULT_EXPIRY.total_seconds()),
            help_text="Seconds until the link expires: 60 to 7,776,000 (90 days).",
        )

    class ShareCreatedSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        url = serializers.URLField(
            help_text="The snapshot's overview under the link. Holds the token, which is shown "
            "only here: just its hash is stored."
        )
        expires_at = serializers.DateTimeField()

    class ShareLinkSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        created_by = serializers.CharField(source="created_by.username", allow_null=True)
        created_at = serializers.DateTimeField()
        expires_at = serializers.DateTimeField()
        last_accessed_at = serializers.DateTimeField(allow_null=True)
        access_count = serializers.IntegerField()

    @extend_schema(
        operation_id="snapshots_shares_list",
        summary="Active share links of a snapshot",
        responses=ShareLinkSerializer(many=True),
        parameters=page_parameters(ListPage),
        description="The snapshot's share links that are neither expired nor revoked, newest "
        "first, a page at a time.",
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot = get_object_or_404(snapshot_list(), pk=snapshot_id)
        paginator = ListPage()
        links = share_link_list_active(snapshot=snapshot)
        page = paginator.paginate_queryset(links, request, view=self) or []
        return paginator.get_paginated_response(self.ShareLinkSerializer(page, many=True).data)

    @extend_schema(
        operation_id="snapshots_shares_create",
        summary="Share a snapshot read-only",
        request=ShareCreateSerializer,
        responses={201: ShareCreatedSerializer},
        description="A read-only link to the snapshot that needs no login. Pins the snapshot.",
    )
    def post(self, request: Request, snapshot_id: int) -> Response:
        snapshot = get_object_or_404(snapshot_list(), pk=snapshot_id)
        data = self.ShareCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        link, token = share_link_create(
            snapshot=snapshot,
            user=request.user,
            expires_in=timedelta(seconds=data.validated_data["expires_in"]),
            remote_addr=remote_addr(request),
        )
        path = reverse("snapshot-detail", args=[snapshot.pk])
        share_link_opens(link=link, path=path)
        url = request.build_absolute_uri(share_path(token, path[1:]))
        return Response(
            self.ShareCreatedSerializer(
                {"id": link.pk, "url": url, "expires_at": link.expires_at}
            ).data,
            status=status.HTTP_201_CREATED,
            headers={"Cache-Control": "no-store, private"},
        )


class ShareRevokeApi(BaseApi):
    @extend_schema(
        operation_id="shares_revoke",
        summary="Revoke a share link",
        description="From now on the link opens nothing. Revoking a revoked link changes "
        "nothing. Only the link's creator or a staff user may revoke it.",
        responses={
            204: OpenApiResponse(description="Revoked (or already revoked)."),
            403: OpenApiResponse(description="Only the link's creator or a staff user may."),
        },
    )
    def delete(self, request: Request, share_id: int) -> Response:
        link = get_object_or_404(ShareLink, pk=share_id)
        share_link_revoke(link=link, user=request.user, remote_addr=remote_addr(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
