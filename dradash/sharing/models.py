"""Share links and the audit log of what was done with them."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from dradash.snapshots.models import Snapshot

DEFAULT_EXPIRY = timedelta(days=7)
MIN_EXPIRY = timedelta(seconds=60)
MAX_EXPIRY = timedelta(days=90)


def token_hash(token: str) -> str:
    """What is stored of a share token: its sha256, hex. The token itself never is."""
    return hashlib.sha256(token.encode()).hexdigest()


def default_expiry() -> datetime:
    return timezone.now() + DEFAULT_EXPIRY


class ShareLink(models.Model):
    """Read-only access to one snapshot for whoever holds the token, until it expires or is
    revoked. Only the token's hash is stored, so the token is shown once, when created."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="share_links")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(default=default_expiry)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    # The page the link was made on (path and query, relative to the site, as shareable_path
    # gives it): what it opens first. "" for links made before dradash recorded it.
    path = models.CharField(max_length=2000, blank=True)
    # When the last share.access audit event was written (they are written at most once per
    # ACCESS_AUDIT_INTERVAL per link; last_accessed_at and access_count count every request).
    access_audited_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["snapshot", "expires_at"])]

    def __str__(self) -> str:
        return f"share #{self.pk} of snapshot #{self.snapshot_id} ({self.hash_prefix}…)"

    @property
    def hash_prefix(self) -> str:
        """Enough of the token's hash to tell links apart in logs and the admin."""
        return self.token_hash[:8]

    def refusal(self, now: datetime | None = None) -> str | None:
        """Why the link no longer grants access ("revoked", "expired"), or None."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= (now or timezone.now()):
            return "expired"
        return None

    @property
    def is_active(self) -> bool:
        return self.refusal() is None


class AuditEvent(models.Model):
    """Who did what with a share link, from where. Never holds a token."""

    class Action(models.TextChoices):
        SHARE_CREATE = "share.create"
        SHARE_REVOKE = "share.revoke"
        SHARE_ACCESS = "share.access"
        SHARE_REFUSED = "share.refused"

    action = models.CharField(max_length=32, choices=Action.choices)
    share = models.ForeignKey(
        ShareLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_events"
    )
    # Not a foreign key: the record outlives the snapshot.
    snapshot_id = models.BigIntegerField(null=True, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now, db_index=True)
    remote_addr = models.GenericIPAddressField(null=True, blank=True)
    detail = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["snapshot_id", "-at"])]

    def __str__(self) -> str:
        return f"{self.action} share #{self.share_id} at {self.at:%Y-%m-%d %H:%M:%S}"
