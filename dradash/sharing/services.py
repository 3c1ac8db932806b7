"""Writes: creating, revoking and using share links, each recorded in the audit log.

A share link grants GET access to the pages in SHARED_VIEWS of one snapshot under
``/share/<token>/`` (see dradash.sharing.middleware). Its token is returned once, by
share_link_create; only its sha256 is stored, and neither goes into a log line.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta
from urllib.parse import urlsplit

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import F, Q
from django.http import HttpRequest
from django.urls import Resolver404, get_script_prefix, resolve, reverse
from django.utils import timezone

from dradash.accounts.clients import client_ip
from dradash.sharing.models import MAX_EXPIRY, MIN_EXPIRY, AuditEvent, ShareLink, token_hash
from dradash.snapshots.models import Snapshot

logger = logging.getLogger(__name__)

# The pages a share link opens, all of them read-only pages of one snapshot (the URL has its
# id as ``snapshot_id``). Not the diff page: it shows a second snapshot the link does not grant.
SHARED_VIEWS = frozenset(
    {
        "snapshot-detail",
        "snapshot-bundle",
        "pod-list",
        "pod-detail",
        "claim-list",
        "claim-detail",
        "class-detail",
        "podgroup-list",
        "podgroup-detail",
        "device-list",
        "node-detail",
        "device-detail",
        "snapshot-checklist",
        "snapshot-capacity",
    }
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
# share.access events are written at most this often per link; every request still counts in
# ShareLink.last_accessed_at and access_count.
ACCESS_AUDIT_INTERVAL = timedelta(minutes=1)
# share.refused events: at most one per link (or unknown token) and client address this often,
# so someone guessing tokens cannot flood the log. Coalesced in the cache, per process.
REFUSAL_AUDIT_SECONDS = 60

User = AbstractBaseUser | AnonymousUser


def remote_addr(request: HttpRequest) -> str | None:
    """The client's IP address (see dradash.accounts.clients.client_ip), if there is one."""
    return client_ip(request)


def shared_view(*, path_info: str, method: str, snapshot_id: int) -> str | None:
    """The name of the page (one of SHARED_VIEWS) a request for path_info (relative to the
    share prefix) opens with a link to snapshot_id; None when a link does not open it."""
    if method not in SAFE_METHODS:
        return None
    try:
        match = resolve(path_info)
    except Resolver404:
        return None
    if match.url_name in SHARED_VIEWS and match.kwargs.get("snapshot_id") == snapshot_id:
        return match.url_name
    return None


def shared_view_allowed(*, path_info: str, method: str, snapshot_id: int) -> bool:
    """Whether a link to snapshot_id opens the page of path_info (see shared_view)."""
    return shared_view(path_info=path_info, method=method, snapshot_id=snapshot_id) is not None


def shareable_path(path: str | None, *, snapshot_id: int) -> str:
    """What of ``path`` (the address of the page being viewed: absolute path and query) a link
    to snapshot_id can show, relative to the script prefix: the path itself with its query
    string when it is a shared page of that snapshot, else the snapshot's overview."""
    overview = _relative(reverse("snapshot-detail", args=[snapshot_id]))
    if not path:
        return overview
    parts = urlsplit(path)
    prefix = get_script_prefix()
    if parts.scheme or parts.netloc or not parts.path.startswith(prefix):
        return overview
    path_info = "/" + parts.path[len(prefix) :]
    if not shared_view_allowed(path_info=path_info, method="GET", snapshot_id=snapshot_id):
        return overview
    return path_info + (f"?{parts.query}" if parts.query else "")


def share_path(token: str, path: str) -> str:
    """The absolute path of ``path`` (relative to the script prefix, as shareable_path returns
    it) under a share link."""
    return f"{get_script_prefix()}share/{token}/{path.lstrip('/')}"


def _relative(path: str) -> str:
    return "/" + path[len(get_script_prefix()) :]


def _user_or_none(user: User | None) -> AbstractBaseUser | None:
    return user if user is not None and user.is_authenticated else None  # type: ignore[return-value]


def _audit(
    action: str,
    *,
    share: ShareLink | None,
    snapshot_id: int | None,
    user: User | None = None,
    remote_addr: str | None = None,
    detail: str = "",
) -> AuditEvent:
    event = AuditEvent.objects.create(
        action=action,
        share=share,
        snapshot_id=snapshot_id,
        user=_user_or_none(user),
        remote_addr=remote_addr,
        detail=detail[:500],
    )
    logger.info(
        "%s share=%s snapshot=%s addr=%s %s",
        action,
        share.pk if share else "-",
        snapshot_id or "-",
        remote_addr or "-",
        detail,
    )
    return event


@transaction.atomic
def share_link_create(
    *,
    snapshot: Snapshot,
    user: User | None,
    expires_in: timedelta,
    remote_addr: str | None = None,
) -> tuple[ShareLink, str]:
    """A new link to a snapshot and its token, which is not stored and cannot be shown again.

    Pins the snapshot, so retention keeps it while the link may be used.
    """
    if not MIN_EXPIRY <= expires_in <= MAX_EXPIRY:
        raise ValidationError(
            f"a share link expires after {MIN_EXPIRY.total_seconds():.0f} seconds to "
            f"{MAX_EXPIRY.days} days, not {expires_in.total_seconds():.0f} seconds"
        )
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    link = ShareLink.objects.create(
        snapshot=snapshot,
        token_hash=token_hash(token),
        created_by=_user_or_none(user),
        created_at=now,
        expires_at=now + expires_in,
    )
    Snapshot.objects.filter(pk=snapshot.pk).update(pinned=True)
    snapshot.pinned = True
    _audit(
        AuditEvent.Action.SHARE_CREATE,
        share=link,
        snapshot_id=snapshot.pk,
        user=user,
        remote_addr=remote_addr,
        detail=f"expires {link.expires_at:%Y-%m-%d %H:%M:%S} UTC; hash {link.hash_prefix}",
    )
    return link, token


REVOKE_REFUSED = "Only the user who created a share link, or a staff user, may revoke it."


def share_link_may_revoke(*, link: ShareLink, user: User | None) -> bool:
    """Whether ``user`` may revoke ``link``: its creator or staff."""
    if user is None or not user.is_authenticated:
        return False
    return bool(getattr(user, "is_staff", False)) or (
        link.created_by_id is not None and link.created_by_id == user.pk
    )


@transaction.atomic
def share_link_revoke(
    *, link: ShareLink, user: User | None, remote_addr: str | None = None
) -> bool:
    """Revoke a link from now on. False (and nothing recorded) if it was already revoked.

    Raises PermissionDenied unless ``user`` created the link or is staff. The snapshot stays
    pinned: someone may have pinned it for its own sake.
    """
    if not share_link_may_revoke(link=link, user=user):
        raise PermissionDenied(REVOKE_REFUSED)
    now = timezone.now()
    if not ShareLink.objects.filter(pk=link.pk, revoked_at__isnull=True).update(revoked_at=now):
        return False
    link.revoked_at = now
    _audit(
        AuditEvent.Action.SHARE_REVOKE,
        share=link,
        snapshot_id=link.snapshot_id,
        user=user,
        remote_addr=remote_addr,
    )
    return True


def share_link_accessed(*, link: ShareLink, remote_addr: str | None, detail: str) -> None:
    """Count a request made with a link, and audit it unless one was audited less than
    ACCESS_AUDIT_INTERVAL ago (decided by a conditional UPDATE, so across processes too)."""
    now = timezone.now()
    ShareLink.objects.filter(pk=link.pk).update(
        last_accessed_at=now, access_count=F("access_count") + 1
    )
    due = ShareLink.objects.filter(pk=link.pk).filter(
        Q(access_audited_at__isnull=True) | Q(access_audited_at__lte=now - ACCESS_AUDIT_INTERVAL)
    )
    if due.update(access_audited_at=now):
        _audit(
            AuditEvent.Action.SHARE_ACCESS,
            share=link,
            snapshot_id=link.snapshot_id,
            remote_addr=remote_addr,
            detail=detail,
        )


def share_link_refused(
    *, link: ShareLink | None, token: str, reason: str, remote_addr: str | None, detail: str
) -> None:
    """Audit a refused request under /share/: an unknown, expired or revoked link, or a page
    the link does not open. At most once per REFUSAL_AUDIT_SECONDS per link and address."""
    key = f"dradash-share-refused:{link.pk if link else 'unknown'}:{remote_addr}"
    if not cache.add(key, 1, timeout=REFUSAL_AUDIT_SECONDS):
        return
    if link is None:
        reason = f"{reason} (hash {token_hash(token)[:8]})"
    _audit(
        AuditEvent.Action.SHARE_REFUSED,
        share=link,
        snapshot_id=link.snapshot_id if link else None,
        remote_addr=remote_addr,
        detail=f"{reason}: {detail}",
    )
