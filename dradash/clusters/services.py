"""Writes for clusters: registering them and capturing them live.

A capture is a ``SnapshotRun`` of kind ``capture``, created by ``capture_run_create`` (from the
web, the admin, ``manage.py capture`` or the schedule in ``capture_due``) and carried out by
``capture_run_execute`` in a Celery worker. A cluster has at most one active capture run, and a
snapshot appears only once a capture is whole: it is stored in one transaction together with
the run's success (its objects' blobs are stored ahead, while the lists download, but belong to
no snapshot until then). ``capture_runs_reap`` fails runs whose worker was lost and retries them.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone

from dradash.analysis.services import (
    analyses_compact,
    facts_prune,
    snapshot_facts,
)
from dradash.clusters.models import Cluster, cluster_name_validator, live
from dradash.dra.gc import gc_paused
from dradash.snapshots import members
from dradash.snapshots.models import Snapshot, SnapshotRun
from dradash.snapshots.services import (
    BlobStager,
    StagedBlobsGone,
    blobs_prune,
    snapshot_store,
    snapshot_store_staged,
)

if TYPE_CHECKING:
    from dradash.kube.capture import ConnectionReport
    from dradash.kube.client import Kube

logger = logging.getLogger(__name__)

ACTIVE = (SnapshotRun.Status.QUEUED, SnapshotRun.Status.RUNNING)
# A scheduled capture counts as due this much early, so beat's one-minute ticks do not push a
# 60-minute interval to 61 minutes.
DUE_SLACK = timedelta(seconds=30)
ERROR_MAX_CHARS = 1000
# How long a worker keeps trying to record why a capture failed while the database is away (a
# PostgreSQL restart takes seconds). Past that the run stays "running" until the reaper.
RUN_FAIL_PATIENCE = 120.0


class ClusterConfigError(ValueError):
    """A cluster cannot be captured as configured (missing kubeconfig, unknown context …)."""


class CaptureNotPossible(ValueError):
    """A capture was asked for a cluster that has no credentials or has capture disabled."""


# --- registering clusters -----------------------------------------------------------------


def kubeconfig_check(path: str, context: str | None = None) -> str:
    """Check that ``path`` is a kubeconfig with ``context`` (or a current-context).

    Returns the name of the context that will be used. Raises ClusterConfigError. Messages
    never quote the file's contents: kubeconfigs hold tokens.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise ClusterConfigError(f"kubeconfig {path}: no such file")
    try:
        data = yaml.safe_load(file.read_text())
    except OSError as exc:
        raise ClusterConfigError(f"kubeconfig {path}: cannot read: {exc.strerror}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ClusterConfigError(f"kubeconfig {path}: not valid YAML{where}") from None
    if not isinstance(data, dict):
        raise ClusterConfigError(f"kubeconfig {path}: not a kubeconfig (expected a YAML mapping)")
    contexts = [
        c["name"]
        for c in data.get("contexts") or []
        if isinstance(c, dict) and isinstance(c.get("name"), str)
    ]
    known = ", ".join(contexts) or "none"
    if context:
        if context not in contexts:
            raise ClusterConfigError(
                f"kubeconfig {path} has no context {context!r} (its contexts: {known})"
            )
        return context
    current = data.get("current-context")
    if not current:
        raise ClusterConfigError(
            f"kubeconfig {path} has no current-context; pass --context (its contexts: {known})"
        )
    if current not in contexts:
        raise ClusterConfigError(
            f"kubeconfig {path}: current-context {current!r} is not one of its contexts ({known})"
        )
    return str(current)


@transaction.atomic
def cluster_register(
    *,
    name: str,
    kubeconfig_path: str = "",
    context: str = "",
    in_cluster: bool = False,
    capture_interval: int | None = None,
    keep_last: int | None = None,
    keep_analysed: int | None = None,
) -> tuple[Cluster, bool]:
    """Create or update the cluster ``name`` for capture. Returns (cluster, created).

    Only the kubeconfig's path and context are stored, never credentials. Settings left as None
    keep their current value (or the default, for a new cluster).
    """
    try:
        cluster_name_validator(name)
    except ValidationError as exc:
        raise ClusterConfigError(f"cluster name {name!r}: {exc.messages[0]}") from None
    if in_cluster == bool(kubeconfig_path):
        raise ClusterConfigError("give either a kubeconfig path or in-cluster, not both")
    if in_cluster and context:
        raise ClusterConfigError("a context needs a kubeconfig; in-cluster has none")
    if kubeconfig_path:
        kubeconfig_check(kubeconfig_path, context or None)
        kubeconfig_path = str(Path(kubeconfig_path).expanduser().resolve())
    for label, value in (
        ("interval", capture_interval),
        ("keep", keep_last),
        ("keep-analysed", keep_analysed),
    ):
        if value is not None and value < 0:
            raise ClusterConfigError(f"{label} must be 0 or more, not {value}")
    cluster, created = Cluster.objects.select_for_update().get_or_create(name=name)
    cluster.kubeconfig_path = kubeconfig_path
    cluster.context = context
    cluster.in_cluster = in_cluster
    cluster.capture_enabled = True
    cluster.origin = Cluster.Origin.OPERATOR  # registered: the operator's from now on
    if capture_interval is not None:
        cluster.capture_interval = capture_interval
    if keep_last is not None:
        cluster.keep_last = keep_last
    if keep_analysed is not None:
        cluster.keep_analysed = keep_analysed
    cluster.full_clean()
    cluster.save()
    return cluster, created


# --- talking to the cluster ---------------------------------------------------------------


# dradash.kube (and the kubernetes client under it) is imported where it is used, so that
# web processes that never capture do not load it.


def cluster_kube(cluster: Cluster) -> Kube:
    """A client for the cluster's API server, with the configured request timeout."""
    from dradash.kube.client import Kube, connect

    if not (cluster.in_cluster or cluster.kubeconfig_path):
        raise CaptureNotPossible(
            f"cluster {cluster.name} has neither a kubeconfig nor in-cluster credentials; "
            "register it with manage.py add_cluster"
        )
    api_client = connect(
        cluster.kubeconfig_path or None, cluster.context or None, cluster.in_cluster
    )
    return Kube(api_client, timeout=float(settings.DRADASH_CAPTURE_REQUEST_TIMEOUT))


def cluster_test_connection(cluster: Cluster) -> ConnectionReport:
    """What the cluster serves and what our credentials may list. Raises on no connection."""
    from dradash.kube.capture import test_connection

    with cluster_kube(cluster) as kube:
        return test_connection(kube)


def error_message(exc: BaseException) -> str:
    """A one-line reason for people: our own errors as they are, others with their type.

    Never a traceback, never more than the first line (API error dumps carry headers and
    bodies), and never anything that looks like a credential.
    """
    from kubernetes.config.config_exception import ConfigException

    from dradash.celery import QueueUnavailable
    from dradash.kube.capture import CaptureError
    from dradash.kube.client import KubeError

    own = (KubeError, CaptureError, ClusterConfigError, CaptureNotPossible, QueueUnavailable)
    if isinstance(exc, own):
        text = str(exc)
    elif isinstance(exc, ConfigException):
        text = f"kubeconfig: {exc}"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = (text.strip().splitlines() or [type(exc).__name__])[0]
    text = re.sub(r"(?i)(bearer|token|password)([\s:=]+)\S+", r"\1\2[redacted]", text)
    return text[:ERROR_MAX_CHARS]


# --- capture runs -------------------------------------------------------------------------


def active_capture_run(cluster_name: str) -> SnapshotRun | None:
    return (
        SnapshotRun.objects.filter(
            kind=SnapshotRun.Kind.CAPTURE, cluster_name=cluster_name, status__in=ACTIVE
        )
        .order_by("-created_at")
        .first()
    )


def capture_run_create(
    cluster: Cluster, requested_by: Any = None, *, enqueue: bool = True, attempt: int = 1
) -> SnapshotRun:
    """A capture run for the cluster: a new one, or the one already queued or running.

    A new run is handed to a Celery worker once the transaction commits (``enqueue=False``
    leaves that to the caller, as ``manage.py capture`` does). Raises CaptureNotPossible.
    """
    if not cluster.capturable:
        reason = (
            "capture is disabled"
            if cluster.in_cluster or cluster.kubeconfig_path
            else "it has no kubeconfig or in-cluster credentials (see manage.py add_cluster)"
        )
        raise CaptureNotPossible(f"cluster {cluster.name} cannot be captured: {reason}")
    user = requested_by if requested_by is not None and requested_by.is_authenticated else None
    with transaction.atomic():
        active = active_capture_run(cluster.name)
        if active is not None:
            return active
        try:
            with transaction.atomic():
                run = SnapshotRun.objects.create(
                    kind=SnapshotRun.Kind.CAPTURE,
                    cluster_name=cluster.name,
                    requested_by=user,
                    attempt=attempt,
                )
        except IntegrityError:
            # Someone else created one between our look and our insert (the database allows
            # one active capture run per cluster): theirs is the run.
            active = active_capture_run(cluster.name)
            if active is None:
                raise
            return active
        if enqueue:
            transaction.on_commit(lambda: capture_run_enqueue(run.pk))
    if enqueue:
        run.refresh_from_db()  # failed already if the queue was unavailable (or run, eagerly)
    return run


def capture_now(*, cluster: Cluster, user: Any, now: datetime | None = None) -> SnapshotRun:
    """Capture now, as a person asks for it (the home page's button, the admin's action): the
    run under way, or a new one unless a capture of the cluster started less than
    DRADASH_CAPTURE_NOW_INTERVAL seconds ago (a capture lists the whole cluster from its API
    server). Raises CaptureNotPossible, saying why and when to try again."""
    if cluster.capturable and active_capture_run(cluster.name) is None:
        interval = settings.DRADASH_CAPTURE_NOW_INTERVAL
        now = now or timezone.now()
        last = (
            SnapshotRun.objects.filter(
                kind=SnapshotRun.Kind.CAPTURE,
                cluster_name=cluster.name,
                started_at__gt=now - timedelta(seconds=interval),
            )
            .order_by("-started_at")
            .first()
        )
        if last is not None and last.started_at is not None:
            ago = int((now - last.started_at).total_seconds())
            raise CaptureNotPossible(
                f"cluster {cluster.name} was captured {ago} s ago (run #{last.pk}), and "
                f"Capture now starts at most one capture of a cluster every {interval} s: "
                f"try again in {interval - ago} s"
            )
    return capture_run_create(cluster, user)


QUEUE_UNAVAILABLE = "the task queue is unavailable"


def capture_run_enqueue(run_id: int) -> None:
    """Hand a queued capture run to a worker; if the broker cannot take it, fail the run at
    once with that reason, so that people see why and the next request starts a new run
    instead of joining one that no worker will ever see."""
    from dradash.celery import QueueUnavailable, enqueue
    from dradash.clusters.tasks import capture_run

    try:
        enqueue(capture_run, run_id)
    except QueueUnavailable as exc:
        error = error_message(exc)
        SnapshotRun.objects.filter(id=run_id, status=SnapshotRun.Status.QUEUED).update(
            status=SnapshotRun.Status.FAILED,
            error=f"{QUEUE_UNAVAILABLE} ({error}), so the capture could not start; nothing "
            "was stored. Capture again once it is back.",
            finished_at=timezone.now(),
        )


def capture_run_execute(run_id: int) -> SnapshotRun | None:
    """Capture the cluster of a queued run and store the snapshot.

    Returns the finished run, or None when the run was not queued (another worker has it, it
    was reaped, or it is gone): a redelivered task does nothing. Every failure ends with the
    run marked failed and a readable reason; nothing of a failed capture is stored.
    """
    from kubernetes.config.config_exception import ConfigException

    from dradash.kube.capture import CaptureError
    from dradash.kube.client import KubeError

    expected = (KubeError, CaptureError, ConfigException, ClusterConfigError, CaptureNotPossible)
    claimed = SnapshotRun.objects.filter(
        id=run_id, kind=SnapshotRun.Kind.CAPTURE, status=SnapshotRun.Status.QUEUED
    ).update(status=SnapshotRun.Status.RUNNING, started_at=timezone.now())
    if not claimed:
        logger.info("capture run %s is not queued (already taken, reaped or gone)", run_id)
        return None
    run = SnapshotRun.objects.get(id=run_id)
    cluster = Cluster.objects.filter(name=run.cluster_name).first()
    stager = BlobStager()  # stores the objects' blobs while later lists download
    stored: Snapshot | None = None
    try:
        if cluster is None:
            raise CaptureNotPossible(f"cluster {run.cluster_name} no longer exists")
        if not cluster.capturable:
            raise CaptureNotPossible(f"capture of cluster {cluster.name} is disabled")
        # Until the captured objects are freed again: collecting earlier would scan them all.
        with gc_paused():
            locked, stored = _capture_store(run_id, cluster, stager)
    except SoftTimeLimitExceeded:
        return _run_fail(
            run_id,
            f"the capture took longer than {settings.CELERY_TASK_SOFT_TIME_LIMIT} s and was "
            "stopped; nothing was stored",
        )
    except expected as exc:
        return _run_fail(run_id, error_message(exc))
    except (OperationalError, InterfaceError) as exc:
        logger.warning("capture run %s: the database went away: %s", run_id, exc)
        return _run_fail(
            run_id,
            f"the database was unavailable during the capture ({error_message(exc)}); "
            "nothing was stored",
        )
    except Exception as exc:
        logger.exception("capture run %s failed", run_id)
        return _run_fail(run_id, error_message(exc))
    finally:
        try:  # the staged blobs no snapshot holds: all of them unless the capture was stored
            stager.discard(kept=stored)
        except Exception:  # housekeeping: blobs_prune() removes them later
            logger.exception("capture run %s: pruning the blobs it staged failed", run_id)
    if stored is None:  # reaped meanwhile
        return locked
    try:
        snapshots_retain(cluster)
        analyses_compact(cluster)
    except Exception:  # retention is housekeeping: the next capture tries again
        logger.exception("retention for cluster %s failed", cluster.name)
    return locked


def _capture_store(
    run_id: int, cluster: Cluster, stager: BlobStager
) -> tuple[SnapshotRun, Snapshot | None]:
    """Capture the cluster, store the snapshot and end the run in one transaction.

    Returns the run and the snapshot, or no snapshot when the run was reaped meanwhile.

    Where the stager stores the blobs (PostgreSQL) the capture does not hold the objects, only
    their keys and what the stager returns (issue 28: bounded memory). Should a prune delete
    some of those blobs before the snapshot holds them, the cluster is captured again, holding
    the objects, and stored as without a stager.
    """
    from dradash.kube.capture import capture

    staging = stager.enabled
    while True:
        with stager:
            with cluster_kube(cluster) as kube:
                result = capture(
                    kube,
                    page_size=settings.DRADASH_CAPTURE_PAGE_SIZE,
                    on_objects=stager.add if staging else None,
                    max_object_bytes=settings.DRADASH_CAPTURE_MAX_OBJECT_BYTES,
                    hold_objects=not staging,
                )
            staged = stager.finish() if staging else {}
        with transaction.atomic():
            locked = SnapshotRun.objects.select_for_update().get(id=run_id)
            if locked.status != SnapshotRun.Status.RUNNING:
                # Reaped while we worked (and perhaps retried): the retry owns the cluster.
                logger.warning("capture run %s was %s meanwhile; dropped", run_id, locked.status)
                return locked, None
            meta: dict[str, Any] = {
                "cluster": cluster,
                "source": Snapshot.Source.CAPTURE,
                "captured_at": result.captured_at,
                "server_version": result.server_version,
                "api_versions": result.api_versions,
                "kind_status": result.kind_status,
            }
            if staging:
                try:
                    snapshot = snapshot_store_staged(keys=result.keys, staged=staged, **meta)
                except StagedBlobsGone as exc:
                    logger.warning("capture run %s: %s; capturing again", run_id, exc)
                    staging = False
                    continue
            else:
                snapshot = snapshot_store(objects=result.objects, **meta)
            # Stored: freed before the commit, where the analysis runs when tasks run eagerly
            # (no broker) and reads the objects from the database (issue 28).
            result.objects.clear()
            _run_finish(locked, snapshot=snapshot)
        return locked, snapshot


def _run_finish(run: SnapshotRun, *, snapshot: Snapshot) -> None:
    run.status = SnapshotRun.Status.SUCCEEDED
    run.error = ""
    run.snapshot = snapshot
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "snapshot", "finished_at"])


def _run_fail(run_id: int, error: str) -> SnapshotRun | None:
    """Mark a running run failed (a run reaped meanwhile keeps the reaper's reason).

    If the database is away (the reason the capture failed, often), try again on a new
    connection for up to RUN_FAIL_PATIENCE seconds: the run then ends with its real cause as
    soon as the database is back, instead of staying "running" until the reaper calls it
    "worker lost" and the cluster can be captured again.
    """
    deadline = time.monotonic() + RUN_FAIL_PATIENCE
    delay = 1.0
    while True:
        try:
            SnapshotRun.objects.filter(id=run_id, status=SnapshotRun.Status.RUNNING).update(
                status=SnapshotRun.Status.FAILED, error=error, finished_at=timezone.now()
            )
            logger.info("capture run %s failed: %s", run_id, error)
            return SnapshotRun.objects.filter(id=run_id).first()
        except (OperationalError, InterfaceError) as exc:
            if time.monotonic() + delay > deadline:
                logger.error(
                    "capture run %s failed (%s), and the database stayed unavailable to record "
                    "it: %s",
                    run_id,
                    error,
                    exc,
                )
                raise
            logger.warning(
                "capture run %s: cannot record its failure yet, the database is unavailable "
                "(%s); trying again in %g s",
                run_id,
                str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
                delay,
            )
            connection.close()
            time.sleep(delay)
            delay = min(delay * 2, 10.0)


@dataclass
class ReapResult:
    failed: list[SnapshotRun]
    retries: list[SnapshotRun]


def capture_runs_reap(*, now: datetime | None = None) -> ReapResult:
    """Fail capture runs whose worker was lost, and queue a retry for each.

    A run is lost when it has been running longer than the task time limit (the worker was
    killed, or the limit would have stopped it) or queued longer than
    DRADASH_CAPTURE_QUEUED_TIMEOUT (the message was lost). No snapshot of a lost run was stored,
    because a snapshot is stored only in the transaction that ends the run; the blobs it had
    staged meanwhile (see BlobStager) are pruned. A run is retried up to
    DRADASH_CAPTURE_MAX_ATTEMPTS times in all; after that the schedule tries again.
    """
    now = now or timezone.now()
    time_limit = settings.CELERY_TASK_TIME_LIMIT
    queued_limit = settings.DRADASH_CAPTURE_QUEUED_TIMEOUT
    stale = SnapshotRun.objects.filter(kind=SnapshotRun.Kind.CAPTURE).filter(
        Q(status=SnapshotRun.Status.RUNNING, started_at__lt=now - timedelta(seconds=time_limit))
        | Q(status=SnapshotRun.Status.QUEUED, created_at__lt=now - timedelta(seconds=queued_limit))
    )
    result = ReapResult(failed=[], retries=[])
    for run in stale.order_by("created_at"):
        if run.status == SnapshotRun.Status.RUNNING:
            error = (
                f"worker lost: still running {time_limit} s (the task time limit) after it "
                "started; nothing was stored"
            )
        else:
            error = (
                f"worker lost: no worker took the run within {queued_limit} s; nothing was stored"
            )
        with transaction.atomic():
            changed = SnapshotRun.objects.filter(id=run.pk, status=run.status).update(
                status=SnapshotRun.Status.FAILED, error=error, finished_at=now
            )
            if not changed:
                continue  # it finished (or was reaped) meanwhile
            logger.warning("capture run %s of %s: %s", run.pk, run.cluster_name, error)
            if run.status == SnapshotRun.Status.RUNNING:
                blobs_prune()  # what the lost worker had staged for a snapshot never stored
            run.refresh_from_db()
            result.failed.append(run)
            cluster = Cluster.objects.filter(name=run.cluster_name).first()
            if (
                cluster is None
                or not cluster.capturable
                or run.attempt >= settings.DRADASH_CAPTURE_MAX_ATTEMPTS
            ):
                continue
            retry = capture_run_create(cluster, run.requested_by, attempt=run.attempt + 1)
            run.error = f"{error}; retried as run #{retry.pk}"
            run.save(update_fields=["error"])
            result.retries.append(retry)
    return result


def capture_due(*, now: datetime | None = None) -> list[SnapshotRun]:
    """Queue a capture of every cluster whose interval has passed since its last capture run.

    Clusters with capture disabled, an interval of 0 (on demand only) or an active run are
    skipped. Failed runs count as captures here, so a broken cluster is retried once per
    interval, not once per minute.
    """
    now = now or timezone.now()
    runs = SnapshotRun.objects.filter(kind=SnapshotRun.Kind.CAPTURE, cluster_name=OuterRef("name"))
    clusters = (
        Cluster.objects.filter(capture_enabled=True, capture_interval__gt=0)
        .filter(live())
        .annotate(
            last_run_at=Subquery(runs.order_by("-created_at").values("created_at")[:1]),
            busy=Exists(runs.filter(status__in=ACTIVE)),
        )
        .filter(busy=False)
    )
    created = []
    for cluster in clusters:
        interval = timedelta(minutes=cluster.capture_interval)
        if cluster.last_run_at is None or cluster.last_run_at <= now - interval + DUE_SLACK:
            created.append(capture_run_create(cluster))
    return created


def snapshots_retain(cluster: Cluster) -> int:
    """Delete the cluster's captured snapshots beyond its newest ``keep_last``, unless pinned.

    Only live captures are subject to retention: uploaded and imported snapshots are kept
    until someone deletes them. Returns how many snapshots were deleted.
    """
    if cluster.keep_last <= 0:
        return 0
    captured = Snapshot.objects.filter(cluster=cluster, source=Snapshot.Source.CAPTURE)
    keep = list(
        captured.order_by("-captured_at", "-id").values_list("id", flat=True)[: cluster.keep_last]
    )
    doomed = list(captured.filter(pinned=False).exclude(id__in=keep).values_list("id", flat=True))
    if not doomed:
        return 0
    with transaction.atomic():
        blob_ids = {
            blob_id
            for packed in Snapshot.objects.filter(id__in=doomed).values_list("members", flat=True)
            for blob_id in members.unpack(packed)
        }
        facts = snapshot_facts(doomed)
        Snapshot.objects.filter(id__in=doomed).delete()
        blobs_prune(among=sorted(blob_ids))
        facts_prune(among=facts)
    logger.info("cluster %s: deleted %d old snapshots", cluster.name, len(doomed))
    return len(doomed)
