"""Share links and the audit log in the admin: read-only, links can be revoked."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from dradash.sharing.models import AuditEvent, ShareLink
from dradash.sharing.services import remote_addr, share_link_revoke


@admin.register(ShareLink)
class ShareLinkAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "snapshot",
        "hash_prefix",
        "created_by",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_accessed_at",
        "access_count",
    ]
    list_filter = ["revoked_at", "expires_at"]
    list_select_related = ["snapshot__cluster", "created_by"]
    readonly_fields = [f.name for f in ShareLink._meta.fields if f.name != "token_hash"] + [
        "hash_prefix"
    ]
    exclude = ["token_hash"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a link made here would have no token anyone knows

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # revoke instead: the audit log keeps pointing at the link

    @admin.action(description="Revoke the selected share links")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ShareLink]) -> None:
        n = sum(
            share_link_revoke(link=link, user=request.user, remote_addr=remote_addr(request))
            for link in queryset
        )
        messages.info(request, f"Revoked {n} share link(s).")


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["at", "action", "share", "snapshot_id", "user", "remote_addr", "detail"]
    list_filter = ["action"]
    list_select_related = ["share", "user"]
    readonly_fields = [f.name for f in AuditEvent._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
