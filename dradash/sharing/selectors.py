"""Reads: share links by token or snapshot, and their audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from dradash.sharing.models import AuditEvent, ShareLink, token_hash
from dradash.snapshots.models import Snapshot


def share_link_for_token(token: str) -> ShareLink | None:
    """The link a token belongs to, whether or not it is still active (see ShareLink.refusal)."""
    return ShareLink.objects.filter(token_hash=token_hash(token)).first()


def share_link_list_active(
    *, snapshot: Snapshot, now: datetime | None = None
) -> QuerySet[ShareLink]:
    """The links that still grant access to a snapshot, newest first."""
    return ShareLink.objects.filter(
        snapshot=snapshot, revoked_at__isnull=True, expires_at__gt=now or timezone.now()
    ).select_related("created_by")


def audit_event_list(*, snapshot: Snapshot, user: Any, limit: int = 20) -> QuerySet[AuditEvent]:
    """The latest audit events about a snapshot's share links that ``user`` may read: a staff
    user all, anyone else those of the links they made (the events hold visitors' addresses)."""
    events = AuditEvent.objects.filter(snapshot_id=snapshot.pk)
    if not user.is_staff:
        events = events.filter(share__created_by=user.pk)
    return events.select_related("user")[:limit]
