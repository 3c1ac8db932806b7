"""Writes: asking for a snapshot's analysis, and running it (the analyse task calls this)."""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import orjson
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, models, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from dradash.analysis.models import (
    RETRIES,
    ClaimVerdict,
    DeviceFacts,
    DeviceRow,
    Explanation,
    Finding,
    FindingObject,
    NodeRow,
    PodGroupRow,
    PodVerdict,
    PoolRow,
    RowFacts,
    SnapshotAnalysis,
    VerdictFacts,
    lines,
    token_key,
)
from dradash.clusters.models import Cluster
from dradash.dra import analysis as core
from dradash.dra.allocator import SearchBudget
from dradash.dra.gc import gc_paused
from dradash.dra.kinds import ObjectKey
from dradash.dra.stack import on_fresh_stack
from dradash.dra.state import ClusterState
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import snapshot_meta, snapshot_objects

logger = logging.getLogger(__name__)

BATCH = 2000
# Compacted analyses analysed again at once, when their snapshots are opened.
REOPENED_AT_ONCE = 2
FACTS_LOCK = 0x64726166  # "draf": storing facts (SHARED) against pruning them
# The kinds a device's selectors and taints come from (a diff reads them all when a
# DeviceTaintRule changed).
DEVICE_KINDS = frozenset({"ResourceSlice", "DeviceClass", "DeviceTaintRule"})
# After how long a failed (or lost) analysis is tried again (seconds, doubled each time, RETRIES
# times); and how long a queued analysis may wait for a worker before it counts as lost.
RETRY_DELAY = 30
QUEUED_TIMEOUT = 1800
# How long a worker keeps trying to record why an analysis failed while the database is away
# (a PostgreSQL restart takes seconds); past that the analysis stays pending until the reaper.
FAIL_PATIENCE = 120.0
# How long a compacted analysis that someone opened (and so was analysed again) is kept before
# analyses_compact drops it again.
REOPENED_KEPT = timedelta(hours=1)


def analysis_request(snapshot: Snapshot) -> SnapshotAnalysis:
    """Mark the snapshot's analysis pending and queue the analyse task once the current
    transaction commits (snapshot_store calls this for every snapshot it stores)."""
    analysis, created = SnapshotAnalysis.objects.get_or_create(snapshot=snapshot)
    if not created:
        SnapshotAnalysis.objects.filter(pk=snapshot.pk).update(
            status=SnapshotAnalysis.Status.PENDING, queued_at=timezone.now(), started_at=None
        )
    transaction.on_commit(lambda: analysis_enqueue(snapshot.pk))
    return analysis


def analysis_reopen(analysis: SnapshotAnalysis) -> SnapshotAnalysis:
    """Queue again the analysis of a compacted snapshot (analyses_compact) that someone opens;
    once, however many ask at the same time. The analysis: pending, or still compacted while
    REOPENED_AT_ONCE others are being analysed again (its page asks again as it refreshes), so
    that opening old snapshot after old snapshot cannot flood the analyses' queue."""
    Status = SnapshotAnalysis.Status
    with transaction.atomic():
        busy = SnapshotAnalysis.objects.filter(
            status=Status.PENDING, compacted_at__isnull=False
        ).exclude(pk=analysis.pk)
        if busy.count() >= REOPENED_AT_ONCE:
            return analysis
        reopened = SnapshotAnalysis.objects.filter(pk=analysis.pk, status=Status.COMPACTED).update(
            status=Status.PENDING, queued_at=timezone.now(), started_at=None, error=""
        )
        if reopened:
            logger.info("analysis of snapshot %s: compacted, analysing it again", analysis.pk)
            transaction.on_commit(lambda: analysis_enqueue(analysis.pk))
    analysis.refresh_from_db(fields=["status", "queued_at", "started_at", "error"])
    return analysis


def analyses_compact(cluster: Cluster, *, now: datetime | None = None) -> int:
    """Drop the detailed analysis of the cluster's captured snapshots beyond its newest
    ``keep_analysed``, unless pinned; how many were compacted.

    A compacted analysis keeps its summary, checklist, capacity, inventory, classes and
    filter choices (small; the home page reads its summary) and loses its rows and device
    index; opening the snapshot analyses it again (analysis_reopen). One analysed again that
    way is left alone for REOPENED_KEPT after it finished. Uploaded and imported snapshots
    are never compacted.
    """
    if cluster.keep_analysed <= 0:
        return 0
    now = now or timezone.now()
    Status = SnapshotAnalysis.Status
    captured = Snapshot.objects.filter(cluster=cluster, source=Snapshot.Source.CAPTURE)
    keep = list(
        captured.order_by("-captured_at", "-id").values_list("id", flat=True)[
            : cluster.keep_analysed
        ]
    )
    candidates = list(
        SnapshotAnalysis.objects.filter(
            snapshot__in=captured.filter(pinned=False).exclude(id__in=keep),
            status=Status.DONE,
        )
        .filter(Q(compacted_at__isnull=True) | Q(finished_at__lt=now - REOPENED_KEPT))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    compacted = 0
    facts = snapshot_facts(candidates)
    for snapshot_id in candidates:
        with transaction.atomic():
            # Waits for a running _store of it; skipped if it is no longer done by then.
            locked = (
                SnapshotAnalysis.objects.select_for_update()
                .filter(pk=snapshot_id, status=Status.DONE)
                .values_list("pk", flat=True)
                .first()
            )
            if locked is None:
                continue
            _rows_delete(snapshot_id)
            SnapshotAnalysis.objects.filter(pk=snapshot_id).update(
                status=Status.COMPACTED, compacted_at=now, device_index=b"", device_objects=[]
            )
        compacted += 1
    if compacted:
        logger.info("cluster %s: compacted %d older analyses", cluster.name, compacted)
        facts_prune(among=facts)
    return compacted


def analysis_enqueue(snapshot_id: int) -> None:
    """Hand the analysis to a worker; if the broker cannot take it, record that as a failure,
    which analyses_reap tries again once the queue is back."""
    from dradash.analysis.tasks import analyse_snapshot
    from dradash.celery import QueueUnavailable, enqueue

    try:
        enqueue(analyse_snapshot, snapshot_id)
    except QueueUnavailable as exc:
        SnapshotAnalysis.objects.filter(pk=snapshot_id, started_at=None).update(
            status=SnapshotAnalysis.Status.FAILED,
            error=f"the task queue is unavailable ({exc}); the analysis is queued again by "
            "itself once it is back",
            finished_at=timezone.now(),
        )


def analyses_reap(*, now: datetime | None = None) -> list[int]:
    """Queue again the analyses that need it (beat runs this every minute); their snapshot ids.

    A failed analysis is tried again RETRY_DELAY seconds after it failed, then twice as long
    after each further failure, RETRIES times; one whose worker was lost (still unfinished a task
    time limit after it started) or whose task was lost (queued QUEUED_TIMEOUT seconds without
    starting) is failed with that reason and retried the same way.
    """
    now = now or timezone.now()
    Status = SnapshotAnalysis.Status
    time_limit = timedelta(seconds=settings.DRADASH_ANALYSIS_TIME_LIMIT)
    lost_running = Q(status=Status.PENDING, started_at__lt=now - time_limit) & (
        Q(finished_at__isnull=True) | Q(finished_at__lt=F("started_at"))
    )
    lost_queued = Q(
        status=Status.PENDING,
        started_at__isnull=True,
        queued_at__lt=now - timedelta(seconds=QUEUED_TIMEOUT),
    )
    lost = [  # (which, why, when it counts as failed)
        (
            lost_running,
            "the worker running the analysis was lost (it did not finish within the task time "
            f"limit of {time_limit.seconds} s)",
            F("started_at") + time_limit,
        ),
        (
            lost_queued,
            f"no worker took the analysis within {QUEUED_TIMEOUT} s",
            F("queued_at") + timedelta(seconds=QUEUED_TIMEOUT),
        ),
    ]
    for which, error, when in lost:
        SnapshotAnalysis.objects.filter(which).update(
            status=Status.FAILED, error=error, finished_at=when
        )
    requeued = []
    failed = SnapshotAnalysis.objects.filter(status=Status.FAILED, attempts__lte=RETRIES)
    for analysis in failed.select_related("snapshot").order_by("pk"):  # oldest snapshot first
        wait = timedelta(seconds=RETRY_DELAY * 2 ** max(analysis.attempts - 1, 0))
        if analysis.finished_at is None or analysis.finished_at <= now - wait:
            logger.info("analysis of snapshot %s: trying again", analysis.pk)
            with transaction.atomic():
                analysis_request(analysis.snapshot)
            requeued.append(analysis.pk)
    return requeued


def analysis_run(snapshot_id: int) -> SnapshotAnalysis | None:
    """Analyse the snapshot and store the results, replacing any stored before (so a retry or
    a second delivery of the task is harmless). None when the snapshot is gone. Raises what the
    analysis raised, after recording it on the SnapshotAnalysis (status failed).

    If the database goes away meanwhile, the failure is recorded as soon as it is back (see
    _analysis_fail) and the analysis is queued again at once. An analysis stopped by its soft
    time limit is recorded as such and not tried again by itself: it would take as long again.
    """
    try:
        return _analysis_run(snapshot_id)
    except (OperationalError, InterfaceError) as exc:
        logger.warning("analysis of snapshot %s: the database went away: %s", snapshot_id, exc)
        error = (
            f"the database was unavailable during the analysis ({_first_line(exc)}); it is "
            "tried again at once"
        )
        # Queued again at once, where a worker can take it (run eagerly, it would run here,
        # inside this failure).
        if _analysis_fail(snapshot_id, error=error) and not settings.CELERY_TASK_ALWAYS_EAGER:
            analysis_enqueue(snapshot_id)
        raise
    except SoftTimeLimitExceeded:
        limit = settings.DRADASH_ANALYSIS_SOFT_TIME_LIMIT
        _analysis_fail(
            snapshot_id,
            error=f"the analysis took longer than its time limit of {limit} s and was "
            "stopped; it is not tried again by itself, as it would take as long again "
            f"(DRADASH_ANALYSIS_SOFT_TIME_LIMIT; manage.py analyse {snapshot_id} tries now)",
            final=True,
        )
        raise


def _analysis_run(snapshot_id: int) -> SnapshotAnalysis | None:
    snapshot = Snapshot.objects.select_related("cluster").filter(pk=snapshot_id).first()
    if snapshot is None:
        logger.info("snapshot %s is gone: nothing to analyse", snapshot_id)
        return None
    analysis, _ = SnapshotAnalysis.objects.get_or_create(snapshot=snapshot)
    started = time.monotonic()
    SnapshotAnalysis.objects.filter(pk=snapshot_id).update(
        status=SnapshotAnalysis.Status.PENDING,
        started_at=timezone.now(),
        attempts=models.F("attempts") + 1,
    )
    budget = SearchBudget(seconds=settings.DRADASH_ALLOCATOR_SEARCH_SECONDS)
    try:
        with gc_paused():
            state, blob_ids = _load(snapshot)
            result = on_fresh_stack(core.analyse, state, budget=budget)
            _store(snapshot, result, blob_ids, seconds=time.monotonic() - started)
    except SoftTimeLimitExceeded:
        budget.cancelled = True  # the analysis's thread stops at its search's next check
        raise  # recorded by analysis_run, as the other two
    except (OperationalError, InterfaceError):
        raise
    except Exception as exc:
        SnapshotAnalysis.objects.filter(pk=snapshot_id).update(
            status=SnapshotAnalysis.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now(),
            seconds=time.monotonic() - started,
        )
        raise
    analysis.refresh_from_db()
    return analysis


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _analysis_fail(snapshot_id: int, *, error: str, final: bool = False) -> bool:
    """Record that the analysis failed (``final``: not to be retried by the reaper); whether it
    was recorded. While the database is away (often why it failed), try again on a new
    connection for up to FAIL_PATIENCE seconds, so that the analysis ends with its real cause
    soon after the database is back instead of staying pending until the reaper calls its
    worker lost."""
    deadline = time.monotonic() + FAIL_PATIENCE
    delay = 1.0
    fields: dict[str, Any] = {"status": SnapshotAnalysis.Status.FAILED, "error": error}
    if final:
        fields["attempts"] = RETRIES + 1  # past what analyses_reap retries
    while True:
        try:
            fields["finished_at"] = timezone.now()
            SnapshotAnalysis.objects.filter(pk=snapshot_id).update(**fields)
            logger.info("analysis of snapshot %s failed: %s", snapshot_id, error)
            return True
        except (OperationalError, InterfaceError) as exc:
            if time.monotonic() + delay > deadline:
                logger.error(
                    "analysis of snapshot %s failed (%s), and the database stayed unavailable "
                    "to record it: %s",
                    snapshot_id,
                    error,
                    exc,
                )
                return False
            logger.warning(
                "analysis of snapshot %s: cannot record its failure yet, the database is "
                "unavailable (%s); trying again in %g s",
                snapshot_id,
                _first_line(exc),
                delay,
            )
            connection.close()
            time.sleep(delay)
            delay = min(delay * 2, 10.0)


def _load(snapshot: Snapshot) -> tuple[ClusterState, dict[ObjectKey, int]]:
    """The whole snapshot's ClusterState, and the blob id of each object by key. Each row is
    parsed as it is read and goes into the state at once: the texts are never all held."""
    ids: dict[ObjectKey, int] = {}
    words: dict[str, str] = {}  # one copy of each kind and namespace

    def objects() -> Iterator[dict[str, Any]]:
        rows = snapshot_objects(snapshot, fields=("id", "kind", "namespace", "name", "data"))
        for blob_id, kind, namespace, name, data in rows:
            ids[(words.setdefault(kind, kind), words.setdefault(namespace, namespace), name)] = (
                blob_id
            )
            yield orjson.loads(data)

    return ClusterState.build(objects(), snapshot_meta(snapshot)), ids


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _ids(keys: Iterable[ObjectKey], blob_ids: dict[ObjectKey, int]) -> list[int]:
    return sorted({blob_ids[k] for k in keys if k in blob_ids})


@transaction.atomic
def _store(
    snapshot: Snapshot,
    result: core.Analysis,
    blob_ids: dict[ObjectKey, int],
    *,
    seconds: float,
) -> None:
    # One writer per snapshot at a time: a second delivery of the task waits, then replaces.
    SnapshotAnalysis.objects.select_for_update().get(pk=snapshot.pk)
    _rows_delete(snapshot.pk)
    _facts_lock(exclusive=False)

    explanations = _store_explanations(snapshot, result)
    _copy_verdicts(
        PodVerdict,
        [
            "snapshot_id",
            "namespace",
            "name",
            "uses_dra",
            "phase",
            "node",
            "owner",
            "claims",
            "unresolved",
            "created",
            "restarts",
            "extended",
            "podgroup",
        ],
        (
            _verdict(
                snapshot.pk,
                r.pod.namespace,
                r.pod.name,
                r.diagnosis,
                explanations,
                _ids(r.chain, blob_ids),
                r.findings,
                pre=[
                    r.diagnosis is not None,
                    r.pod.phase,
                    r.pod.node_name,
                    r.owner,
                    _dumps(r.claim_names),
                    r.unresolved,
                    r.pod.created[:64],
                    min(sum(c.restart_count for c in r.pod.containers), 2**31 - 1),
                    _dumps(r.extended),
                    r.group,
                ],
            )
            for r in result.pods
        ),
    )
    _copy_verdicts(
        ClaimVerdict,
        [
            "snapshot_id",
            "namespace",
            "name",
            "state",
            "template",
            "classes",
            "drivers",
            "nodes",
            "devices",
            "pods",
        ],
        (
            _verdict(
                snapshot.pk,
                r.claim.namespace,
                r.claim.name,
                r.diagnosis,
                explanations,
                _ids(r.chain, blob_ids),
                r.findings,
                pre=[
                    r.claim.state,
                    r.claim.template.name if r.claim.template else "",
                    lines(r.classes),
                    lines(r.drivers),
                    lines(r.nodes),
                    len(r.claim.results),
                    _dumps(r.pods),
                ],
                explanation=r.explanation,
            )
            for r in result.claims
        ),
    )
    _copy(
        PodGroupRow,
        [
            "snapshot_id",
            "namespace",
            "name",
            "state",
            "min_count",
            "members",
            "fit",
            "summary",
            "data",
            "chain",
        ],
        (
            [
                snapshot.pk,
                g.data["namespace"],
                g.data["name"],
                g.gang.state,
                g.data["min_count"],
                len(g.gang.members),
                g.data["fit"],
                g.data["summary"],
                _dumps(g.data),
                _dumps(_ids(g.chain, blob_ids)),
            ]
            for g in result.groups
        ),
    )
    _store_findings(snapshot, result)
    _store_devices(snapshot, result)
    _copy_with_facts(
        PoolRow,
        RowFacts,
        ["snapshot_id", "position", "driver", "pool", "slices"],
        (
            (
                [
                    snapshot.pk,
                    position,
                    p["driver"],
                    p["pool"],
                    _dumps(_ids(result.pool_slices.get((p["driver"], p["pool"]), []), blob_ids)),
                ],
                (_dumps(p),),
            )
            for position, p in enumerate(result.pools)
        ),
    )
    _copy_with_facts(
        NodeRow,
        RowFacts,
        ["snapshot_id", "name"],
        (([snapshot.pk, n.name], (_dumps(n.data),)) for n in result.nodes),
    )
    if connection.vendor == "postgresql":
        # The planner's statistics, before autovacuum gets to it (if it runs at all): the token
        # lookups, and the diff's join of two snapshots' Pod verdicts, which without them is a
        # nested loop of half a second at 5,000 nodes where a hash join takes 20 ms.
        with connection.cursor() as cursor:
            for model in (DeviceRow, PodVerdict, ClaimVerdict):
                cursor.execute(f"ANALYZE {model._meta.db_table}")
    SnapshotAnalysis.objects.filter(pk=snapshot.pk).update(
        status=SnapshotAnalysis.Status.DONE,
        error="",
        finished_at=timezone.now(),
        seconds=seconds,
        summary=result.summary,
        checklist=[item.as_dict() for item in result.checklist],
        capacity=result.capacity,
        inventory=result.inventory,
        classes=result.classes,
        options=result.options,
        device_objects=sorted(
            blob_id for key, blob_id in blob_ids.items() if key[0] in DEVICE_KINDS
        ),
        device_index=result.device_index.to_bytes() if result.device_index else b"",
    )


def _store_devices(snapshot: Snapshot, result: core.Analysis) -> None:
    """The snapshot's DeviceRows, each referring to its DeviceFacts: the facts of a device that
    an earlier snapshot showed the same are not written again."""
    facts: list[int] = []  # by position
    for start in range(0, len(result.devices), BATCH):
        texts: dict[str, tuple[str]] = {}
        digests = []
        for r in result.devices[start : start + BATCH]:
            row = (_dumps(r.as_dict()),)
            digest = _digest(row)
            texts[digest] = row
            digests.append(digest)
        ids = _facts_ids(DeviceFacts, texts)
        facts += [ids[d] for d in digests]
    on_postgresql = connection.vendor == "postgresql"  # see DeviceRow.tokens
    scope = [f"snapshot:{snapshot.pk}"]  # so that the index finds one snapshot's devices
    _copy(
        DeviceRow,
        [
            "snapshot_id",
            "position",
            "driver",
            "pool",
            "device",
            "node",
            "status",
            "tainted",
            "classes",
            "claims",
            "attributes",
            "tokens",
            "facts_id",
        ],
        (
            [
                snapshot.pk,
                position,
                r.device.driver,
                r.device.pool_name,
                r.device.name,
                r.device.node_name,
                r.status,
                r.tainted,
                lines(r.classes),
                lines([f"{ns}/{name}" for ns, name in r.holders]),
                "" if on_postgresql else lines(tokens),
                _dumps(
                    [*scope, *map(token_key, [f"status:{r.status}", *tokens])]
                    if on_postgresql
                    else []
                ),
                facts[position],
            ]
            for position, r in enumerate(result.devices)
            for tokens in [r.tokens()]
        ),
    )


def _facts_ids(model: type[models.Model], texts: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """{digest: id} of these facts of ``model`` (SHARED; {digest: its
    columns after ``digest``, JSON as text}), inserting those not stored yet; one another
    analysis inserts meanwhile is used."""
    rows = model.objects
    found = dict(rows.filter(digest__in=list(texts)).values_list("digest", "id"))
    new = [(digest, *row) for digest, row in texts.items() if digest not in found]
    if not new:
        return found
    fields = [f for f in model._meta.concrete_fields if f.name not in ("id", "digest")]
    if connection.vendor == "postgresql":
        # COPY into a temporary table, then insert from it: as fast as COPY, and facts that
        # another analysis inserted meanwhile are skipped, not a conflict.
        table = model._meta.db_table
        columns = ", ".join(["digest", *(f.column for f in fields)])
        types = ", ".join(
            f"{f.column} {'jsonb' if isinstance(f, models.JSONField) else 'text'}" for f in fields
        )
        with connection.cursor() as cursor:
            cursor.execute(
                f"CREATE TEMP TABLE IF NOT EXISTS new_{table} (digest text, {types}) ON COMMIT DROP"
            )
            cursor.execute(f"TRUNCATE new_{table}")
            with cursor.copy(f"COPY new_{table} ({columns}) FROM STDIN") as copy:
                for row in new:
                    copy.write_row(row)
            cursor.execute(
                f"INSERT INTO {table} ({columns}) SELECT {columns} FROM new_{table} "
                "ON CONFLICT (digest) DO NOTHING"
            )
    else:
        rows.bulk_create(
            [
                model(
                    digest=digest,
                    **{
                        f.attname: json.loads(v) if isinstance(f, models.JSONField) else v
                        for f, v in zip(fields, values, strict=True)
                    },
                )
                for digest, *values in new
            ],
            ignore_conflicts=True,
        )
    missing = [row[0] for row in new]
    found.update(rows.filter(digest__in=missing).values_list("digest", "id"))
    return found


def _digest(texts: Sequence[str]) -> str:
    """The digest of a facts row's texts (joined by newlines, which JSON text never holds)."""
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()


# The facts tables and the rows of each snapshot that refer to them.
SHARED: dict[type[models.Model], tuple[type[models.Model], ...]] = {
    DeviceFacts: (DeviceRow,),
    RowFacts: (PoolRow, NodeRow),
    VerdictFacts: (PodVerdict, ClaimVerdict),
}
Facts = dict[str, list[int]]  # {facts model label: ids}


def snapshot_facts(snapshot_ids: Iterable[int]) -> Facts:
    """The facts these snapshots' rows refer to (to prune once the rows are deleted)."""
    ids = list(snapshot_ids)
    return {
        facts._meta.label: sorted(
            {
                pk
                for model in rows
                for pk in model.objects.filter(snapshot_id__in=ids)
                .order_by()
                .values_list("facts_id", flat=True)
                .distinct()
            }
        )
        for facts, rows in SHARED.items()
    }


def _facts_lock(*, exclusive: bool) -> None:
    """Take the facts lock until the end of the current transaction (PostgreSQL
    only): analyses storing rows share it, a prune holds it alone, so that no prune deletes
    facts an analysis has found and is about to refer to."""
    if connection.vendor != "postgresql":
        return
    function = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s)", [FACTS_LOCK])


@transaction.atomic
def facts_prune(*, among: Facts | None = None) -> int:
    """Delete the facts (SHARED) no row refers to any more (only those of
    ``among``, if given: the facts of rows just deleted); how many. Retention and compaction
    call it with the facts of the snapshots they delete, beat every hour for all (those of
    snapshots deleted otherwise: a deleted cluster's, a replaced analysis')."""
    _facts_lock(exclusive=True)
    deleted = 0
    for facts, rows in SHARED.items():
        unused = facts.objects.all()
        for model in rows:
            unused = unused.filter(~Exists(model.objects.filter(facts=OuterRef("pk"))))
        if among is None:
            candidates = list(unused.values_list("id", flat=True))
        else:
            ids = among.get(facts._meta.label, [])
            candidates = [
                pk
                for start in range(0, len(ids), BATCH)
                for pk in unused.filter(id__in=ids[start : start + BATCH]).values_list(
                    "id", flat=True
                )
            ]
        for start in range(0, len(candidates), BATCH):
            count, _ = facts.objects.filter(id__in=candidates[start : start + BATCH]).delete()
            deleted += count
    if deleted:
        logger.info("deleted %d facts no snapshot shows", deleted)
    return deleted


def _rows_delete(snapshot_id: int) -> None:
    """Delete the snapshot's analysis rows (all but its SnapshotAnalysis)."""
    for model in (
        PodVerdict,
        ClaimVerdict,
        PodGroupRow,
        FindingObject,
        Finding,
        DeviceRow,
        PoolRow,
        NodeRow,
        Explanation,  # after the verdicts that refer to them
    ):
        model.objects.filter(snapshot_id=snapshot_id).delete()


def _verdict(
    snapshot_id: int,
    namespace: str,
    name: str,
    diagnosis: Any,
    explanations: dict[int, int],
    chain: list[int],
    findings: list[int],
    *,
    pre: list[Any],
    explanation: Any = None,
) -> tuple[list[Any], tuple[str, str]]:
    """A PodVerdict or ClaimVerdict row: identity, the kind's own columns (``pre``), then the
    diagnosis and the positions of its findings (VERDICT_COLUMNS); and its VerdictFacts (the
    detail and the chain, as JSON text)."""
    if diagnosis is None:
        return (
            [snapshot_id, namespace, name, *pre, "", len(core.STAGES), "", "", "", None]
            + [_dumps(findings)],
            ("{}", _dumps(chain)),
        )
    x = explanation or diagnosis.explanation
    detail = {
        "evidence": [e.as_dict() for e in diagnosis.evidence],
        "next_steps": diagnosis.next_steps,
        **({"alone": core.alone_dict(diagnosis.alone)} if diagnosis.alone is not None else {}),
        **({"devices": diagnosis.devices} if diagnosis.devices else {}),
        **({"unknown": diagnosis.unknown} if diagnosis.unknown else {}),
    }
    row = [
        snapshot_id,
        namespace,
        name,
        *pre,
        diagnosis.stage,
        core.stage_order(diagnosis.stage),
        diagnosis.reason,
        core.severity(diagnosis),
        diagnosis.summary,
        explanations.get(id(x)) if x is not None else None,
        _dumps(findings),
    ]
    return row, (_dumps(detail), _dumps(chain))


VERDICT_COLUMNS = ["stage", "stage_order", "reason", "severity", "summary", "explanation_id"]


def _copy_verdicts(
    model: type[models.Model],
    columns: Sequence[str],
    verdicts: Iterable[tuple[list[Any], tuple[str, str]]],
) -> None:
    """Insert verdict rows (``_verdict``'s, ``columns`` up to VERDICT_COLUMNS), each referring
    to its VerdictFacts."""
    _copy_with_facts(model, VerdictFacts, [*columns, *VERDICT_COLUMNS, "findings"], verdicts)


def _copy_with_facts(
    model: type[models.Model],
    facts: type[models.Model],
    columns: Sequence[str],
    rows: Iterable[tuple[list[Any], tuple[str, ...]]],
) -> None:
    """Insert rows (values in ``columns`` order, and the texts of their facts) in batches, each
    referring to its ``facts``, written only when no row stored them yet."""
    columns = [*columns, "facts_id"]
    it = iter(rows)
    while batch := list(itertools.islice(it, BATCH)):
        digests = [_digest(texts) for _, texts in batch]
        ids = _facts_ids(facts, dict(zip(digests, (t for _, t in batch), strict=True)))
        _copy(model, columns, ([*row, ids[d]] for (row, _), d in zip(batch, digests, strict=True)))


def _store_explanations(snapshot: Snapshot, result: core.Analysis) -> dict[int, int]:
    """Each distinct explanation once; {id(explanation object): Explanation pk}."""
    seen: dict[int, Any] = {}
    for r in result.pods:
        if r.diagnosis is not None and r.diagnosis.explanation is not None:
            seen.setdefault(id(r.diagnosis.explanation), r.diagnosis.explanation)
    for c in result.claims:
        # An allocated claim's answer is the allocation it has: the explain API makes it from
        # the claim itself (selectors.claim_explanation), 20,000 rows not stored.
        if c.explanation is not None and not c.claim.allocated:
            seen.setdefault(id(c.explanation), c.explanation)
    by_text: dict[bytes, int] = {}
    out: dict[int, int] = {}
    for key, x in seen.items():
        text = orjson.dumps(core.explanation_dict(x))
        if text not in by_text:
            row = Explanation.objects.create(
                snapshot=snapshot, head=core.explanation_head(x), full=zlib.compress(text, 6)
            )
            by_text[text] = row.pk
        out[key] = by_text[text]
    return out


def _store_findings(snapshot: Snapshot, result: core.Analysis) -> None:
    rows = Finding.objects.bulk_create(
        [
            Finding(
                snapshot=snapshot,
                position=i,
                code=f.code,
                severity=f.severity,
                message=f.message,
                next_step=f.next_step,
                named=[dict(o) for o in f.objects],
            )
            for i, f in enumerate(result.findings)
        ],
        batch_size=BATCH,
    )
    _copy(
        FindingObject,
        ["finding_id", "snapshot_id", "kind", "namespace", "name"],
        (
            [row.pk, snapshot.pk, o.get("kind", ""), o.get("namespace", ""), o.get("name", "")]
            for row in rows
            for o in row.named
        ),
    )


def _copy(model: type[models.Model], columns: Sequence[str], rows: Iterable[list[Any]]) -> None:
    """Insert rows (values in ``columns`` order, JSON columns as JSON text): through COPY on
    PostgreSQL, bulk_create elsewhere."""
    if connection.vendor == "postgresql":
        table = model._meta.db_table
        with (
            connection.cursor() as cursor,
            cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)
        return
    json_fields = {f.attname for f in model._meta.fields if isinstance(f, models.JSONField)}
    batch: list[models.Model] = []
    for row in rows:
        values = dict(zip(columns, row, strict=True))
        for name in json_fields & values.keys():
            values[name] = json.loads(values[name])
        batch.append(model(**values))
        if len(batch) == BATCH:
            model.objects.bulk_create(batch)
            batch = []
    model.objects.bulk_create(batch)
