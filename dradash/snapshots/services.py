"""Writes: storing snapshots, importing and exporting bundles, running uploads."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import queue
import re
import sys
import threading
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Q
from django.db.models.functions import Length
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from dradash.analysis.services import (
    analysis_request,
    facts_prune,
    snapshot_facts,
)
from dradash.clusters.models import Cluster, cluster_name_validator
from dradash.dra.bundle import (
    MAX_COUNT,
    MAX_REFUSED,
    PROBLEM_STATUSES,
    REFUSED_FIELDS,
    Bundle,
    BundleError,
    Source,
    check_usable,
    kind_statuses,
    parse_bundle,
    write_bundle_json,
)
from dradash.dra.gc import gc_paused
from dradash.dra.kinds import KINDS, ObjectKey
from dradash.dra.redact import LAST_APPLIED, redact
from dradash.snapshots import members
from dradash.snapshots.models import ObjectBlob, RunFile, Snapshot, SnapshotRun
from dradash.snapshots.selectors import snapshot_objects

logger = logging.getLogger(__name__)

BATCH = 2000
# Sources whose snapshots listed every kind (before kinds recorded "listed").
LISTING_SOURCES = ("capture", "demo")
# The order objects are exported in: what others refer to first.
KIND_ORDER = list(KINDS)


def raw_json(obj: dict[str, Any]) -> str:
    """The compact JSON text stored for an object; equal objects give equal text.

    The text is json.dumps's (compact, UTF-8, NaN refused): stored digests depend on it, so it
    must never change. orjson writes the same bytes several times faster, except what it
    refuses (integers beyond 64 bits, lone surrogates, keys that are not strings, deep nesting)
    and two cases it writes differently: NaN and infinity as null, and floats from 1e-9 to 1e-4
    as 0.00001 or 1e-7 where Python writes 1e-05 and 1e-07. Text that might hold either is made
    again by json.dumps; it rarely does (Kubernetes objects hold few floats and nulls).
    """
    return _raw_json_utf8(obj).decode()


# The exponent of a float that orjson writes with one digit (1e-7), and Python with two (1e-07).
_SHORT_NEGATIVE_EXPONENT = re.compile(rb"e-[0-9](?![0-9])")


def _raw_json_utf8(obj: dict[str, Any]) -> bytes:
    """raw_json(obj) encoded in UTF-8 (what orjson makes, and what the digest is taken of)."""
    try:
        data = orjson.dumps(obj)
    except orjson.JSONEncodeError:
        pass
    else:
        if not (b"null" in data or b"0.0000" in data or _SHORT_NEGATIVE_EXPONENT.search(data)):
            return data
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


# Stored blobs are shared between snapshots (and clusters). Storing a snapshot holds this
# PostgreSQL advisory lock shared and pruning holds it exclusively, so a prune never deletes a
# blob that a snapshot being stored at the same time is about to refer to.
BLOB_LOCK = 0x64726164  # "drad"


def _blob_lock(*, exclusive: bool) -> None:
    """Take the blob lock until the end of the current transaction (PostgreSQL only)."""
    if connection.vendor != "postgresql":
        return
    function = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {function}(%s)", [BLOB_LOCK])


_BLOB_COLUMNS = ("digest", "kind", "namespace", "name", "api_version", "data")
BlobRow = tuple[str, str, str, str, str, str]  # the values of _BLOB_COLUMNS


def _blob_row(key: ObjectKey, obj: dict[str, Any]) -> BlobRow:
    data = _raw_json_utf8(obj)
    digest = hashlib.sha256(data).hexdigest()
    return (digest, key[0], key[1], key[2], obj.get("apiVersion", ""), data.decode())


def _blob_ids(digests: list[str]) -> dict[str, int]:
    """{digest: id} of the stored blobs among ``digests``."""
    if connection.vendor != "postgresql":
        return dict(ObjectBlob.objects.filter(digest__in=digests).values_list("digest", "id"))
    # One array parameter: an IN list of thousands costs more to build and parse than to run.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT digest, id FROM {ObjectBlob._meta.db_table} WHERE digest = ANY(%s)",
            [digests],
        )
        return dict(cursor.fetchall())


def _blobs_exist(ids: set[int]) -> bool:
    """Whether all these blobs are still stored."""
    if not ids:
        return True
    if connection.vendor != "postgresql":
        ordered = sorted(ids)
        chunks = [ordered[i : i + BATCH] for i in range(0, len(ordered), BATCH)]
        return sum(ObjectBlob.objects.filter(id__in=c).count() for c in chunks) == len(ids)
    with connection.cursor() as cursor:
        table = ObjectBlob._meta.db_table
        cursor.execute(f"SELECT count(*) FROM {table} WHERE id = ANY(%s)", [list(ids)])
        return bool(cursor.fetchone()[0] == len(ids))


def _blobs_insert(rows: list[BlobRow]) -> dict[str, int]:
    """Insert blobs, skipping digests stored meanwhile by others; {digest: id} of those inserted.

    On PostgreSQL through COPY into a temporary table: a bulk INSERT would have psycopg quote
    each JSON text into an array literal, which costs more than storing it. SQLite has one
    writer at a time, so there every row given (none stored yet) is inserted.
    """
    if connection.vendor != "postgresql":
        ObjectBlob.objects.bulk_create(
            [ObjectBlob(**dict(zip(_BLOB_COLUMNS, row, strict=True))) for row in rows],
            ignore_conflicts=True,
            batch_size=BATCH,
        )
        return _blob_ids([row[0] for row in rows])
    table = ObjectBlob._meta.db_table
    columns = ", ".join(_BLOB_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS dradash_blob_load (digest varchar(64), "
            "kind varchar(63), namespace varchar(253), name varchar(253), "
            "api_version varchar(128), data text) ON COMMIT DROP"
        )
        with cursor.copy(f"COPY dradash_blob_load ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute(
            f"INSERT INTO {table} ({columns}) SELECT {columns} FROM dradash_blob_load "
            "ON CONFLICT (digest) DO NOTHING RETURNING digest, id"
        )
        inserted = dict(cursor.fetchall())
        cursor.execute("TRUNCATE dradash_blob_load")
    return inserted


# What a BlobStager stored: each object's digest and blob id.
STAGER_BACKLOG = 8  # pages of objects queued for a BlobStager at most (then the capture waits)
Staged = dict[ObjectKey, tuple[str, int]]


class BlobStager:
    """Stores the blobs of a snapshot in a thread of its own while its objects are still read.

    Writing the blobs of a large snapshot is mostly work for the database, which can go on while
    the capture downloads the next lists. ``add(objects)`` queues objects; the thread makes their
    text and digest and inserts the blobs not stored yet, committing every batch on its own
    connection. ``finish()`` waits for it and returns each object's digest and blob id for
    ``snapshot_store(staged=…)``, which then only checks that those blobs are still there (until
    then no snapshot refers to them, so a prune may delete them) and stores again any missing,
    or for ``snapshot_store_staged``, which needs no objects (and stores nothing if any is).
    For the same reason ``discard()`` (after a failed capture) prunes the blobs this stager
    inserted that no snapshot refers to; those of a worker killed mid-capture are left to the
    next ``blobs_prune()``.

    At most ``STAGER_BACKLOG`` pages wait for the thread: beyond, ``add`` waits too, so that a
    database slower than the download does not have the capture hold every object (issue 28).

    It stages only on PostgreSQL, outside a transaction (whose rollback could not undo blobs
    committed on another connection). Otherwise ``add`` does nothing and snapshot_store stores
    everything. The thread starts with the first ``add``; leaving the context stops it.
    """

    def __init__(self) -> None:
        self.enabled = connection.vendor == "postgresql" and not connection.in_atomic_block
        self.inserted: list[int] = []  # ids of the blobs this stager inserted
        self._staged: Staged = {}
        self._queue: queue.Queue[dict[ObjectKey, dict[str, Any]] | None] = queue.Queue(
            STAGER_BACKLOG
        )
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="blob-stager", daemon=True)

    def __enter__(self) -> BlobStager:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._finish_thread()

    def add(self, objects: dict[ObjectKey, dict[str, Any]]) -> None:
        """Queue objects to be stored (they must not change any more). Raises the thread's error."""
        if self._error is not None:
            raise self._error
        if self.enabled:
            if self._thread.ident is None:  # not started yet
                self._thread.start()
            self._put(objects)

    def _put(self, objects: dict[ObjectKey, dict[str, Any]] | None) -> None:
        """Queue, waiting while the backlog is full, until the thread ends (then objects raise
        its error)."""
        while True:
            try:
                self._queue.put(objects, timeout=0.1)
                return
            except queue.Full:
                if not self._thread.is_alive():
                    if self._error is not None and objects is not None:
                        raise self._error from None
                    return

    def finish(self) -> Staged:
        """Wait until everything added is stored; {key: (digest, blob id)} of what was staged."""
        self._finish_thread()
        if self._error is not None:
            raise self._error
        return self._staged

    def discard(self, *, kept: Snapshot | None = None) -> int:
        """Prune the blobs this stager inserted that no snapshot refers to; how many.

        With ``kept`` (the snapshot stored), only those it does not hold are candidates: usually
        none, but for objects that changed while their list was read again.
        """
        leftover = set(self.inserted).difference(members.unpack(kept.members) if kept else ())
        return blobs_prune(among=sorted(leftover)) if leftover else 0

    def _finish_thread(self) -> None:
        if self._thread.is_alive():
            self._put(None)
            self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                objects = self._queue.get()
                if objects is None or self._stop.is_set():
                    return
                # Whatever else is queued already goes in the same batch.
                last = False
                while len(objects) < BATCH and not self._queue.empty():
                    more = self._queue.get()
                    if more is None:
                        last = True
                        break
                    objects = {**objects, **more}
                self._stage(objects)
                if last:
                    return
        except BaseException as exc:  # handed to the capture through add() and finish()
            self._error = exc
        finally:
            connection.close()

    def _stage(self, objects: dict[ObjectKey, dict[str, Any]]) -> None:
        rows: dict[str, BlobRow] = {}
        digests: dict[ObjectKey, str] = {}
        for key, obj in objects.items():
            row = _blob_row(key, obj)
            rows[row[0]] = row
            digests[key] = row[0]
        ids = _blob_ids(list(rows))
        new = [row for digest, row in rows.items() if digest not in ids]
        if new:
            with transaction.atomic(), connection.cursor() as cursor:
                # Staged blobs need no durability of their own: snapshot_store checks that they
                # are there, and its commit flushes the log written before.
                cursor.execute("SET LOCAL synchronous_commit = off")
                inserted = _blobs_insert(new)
            self.inserted += inserted.values()
            ids.update(inserted)
            if len(ids) < len(rows):  # inserted meanwhile by another transaction
                ids.update(_blob_ids([d for d in rows if d not in ids]))
        for key, digest in digests.items():
            if digest in ids:
                self._staged[key] = (digest, ids[digest])
            else:  # inserted meanwhile, then pruned: left to snapshot_store
                self._staged.pop(key, None)


def cluster_for_name(name: str) -> Cluster:
    """The cluster an operator's import names (made when missing): it may be any cluster."""
    _check_cluster_name(name)
    cluster, _ = Cluster.objects.get_or_create(name=name)
    return cluster


def _check_cluster_name(name: str) -> None:
    try:
        cluster_name_validator(name)
    except ValidationError as exc:
        raise BundleError("cluster name", f"{name!r}: {exc.messages[0]}") from None


# An upload that may not be stored in the cluster it names is stored in "<name>~<username>", a
# cluster of that user's uploads; names of that form are that user's alone.
OWN_CLUSTER_SEPARATOR = "~"


def cluster_for_upload(name: str, user: Any) -> tuple[Cluster, str]:
    """The cluster an upload by ``user`` that names cluster ``name`` is stored in, and what to
    tell them when it is not ``name`` ("" when it is). Raises BundleError.

    An upload is stored in ``name`` only when that is a cluster of the user's own uploads, or no
    cluster yet (it then becomes one). Never in a cluster captured live, an operator's (imports,
    the demo) or another user's, where it would pass for a state of that cluster: then in
    ``<name>~<username>``, a cluster of the user's own uploads.
    """
    _check_cluster_name(name)
    cluster, refusal = _upload_cluster(name, user)
    if cluster is not None:
        return cluster, ""
    suffix = f"{OWN_CLUSTER_SEPARATOR}{user.get_username()}"
    own_name = name[: 253 - len(suffix)] + suffix
    own, own_refusal = _upload_cluster(own_name, user)
    if own is None:
        raise BundleError(
            "cluster name",
            f"cluster {name} {refusal}, and cluster {own_name}, where your uploads for it go, "
            f"{own_refusal}; name another cluster",
        )
    return own, (
        f"This upload names cluster {name}, which {refusal}; it was stored in cluster "
        f"{own_name}, a cluster of your own uploads, instead."
    )


def _upload_cluster(name: str, user: Any) -> tuple[Cluster | None, str]:
    """The cluster ``name`` (made for ``user`` if missing), or None and why it is not theirs."""
    owner = name.rpartition(OWN_CLUSTER_SEPARATOR)[2] if OWN_CLUSTER_SEPARATOR in name else None
    if owner is not None and owner != user.get_username():
        return None, "is named for another user's uploads"
    cluster, _ = Cluster.objects.get_or_create(
        name=name, defaults={"origin": Cluster.Origin.UPLOAD, "created_by": user}
    )
    if cluster.is_live:
        return None, "is captured live (its captures alone say its state)"
    if cluster.origin != Cluster.Origin.UPLOAD:
        return None, "belongs to the operators (made by manage.py import_bundle or load_demo)"
    if cluster.created_by_id != user.pk:
        return None, "holds another user's uploads"
    return cluster, ""


@transaction.atomic
def snapshot_store(
    *,
    cluster: Cluster,
    objects: dict[ObjectKey, dict[str, Any]],
    source: str,
    captured_at: datetime,
    server_version: str = "",
    api_versions: Sequence[str] = (),
    kind_status: dict[str, dict[str, Any]] | None = None,
    ignored: dict[str, int] | None = None,
    staged: Staged | None = None,
    feature_gates: dict[str, bool] | None = None,
) -> Snapshot:
    """Store a whole snapshot in one transaction; unchanged objects reuse their stored blob.

    ``staged`` is what a BlobStager stored of the objects already (BlobStager.finish()).
    """
    _blob_lock(exclusive=False)
    with gc_paused():  # the objects are millions of containers, not to be scanned again
        blob_ids = _blobs_store(objects, staged or {})
    return _snapshot_create(
        cluster=cluster,
        counts=Counter(key[0] for key in objects),
        blob_ids=blob_ids,
        source=source,
        captured_at=captured_at,
        server_version=server_version,
        api_versions=api_versions,
        kind_status=kind_status,
        ignored=ignored,
        feature_gates=feature_gates,
    )


class StagedBlobsGone(Exception):
    """Some blobs a BlobStager stored are gone (pruned before a snapshot held them)."""


@transaction.atomic
def snapshot_store_staged(
    *,
    cluster: Cluster,
    keys: Collection[ObjectKey],
    staged: Staged,
    source: str,
    captured_at: datetime,
    server_version: str = "",
    api_versions: Sequence[str] = (),
    kind_status: dict[str, dict[str, Any]] | None = None,
) -> Snapshot:
    """Store a snapshot whose objects (``keys``) a BlobStager stored all, without the objects.

    Stores the snapshot that snapshot_store would store of the same objects. Raises
    StagedBlobsGone, storing nothing, if an object was not staged or a prune deleted its blob
    meanwhile: the objects are needed again then (the caller captures again).
    """
    _blob_lock(exclusive=False)
    blob_ids = set()
    for key in keys:
        if key not in staged:
            raise StagedBlobsGone(f"{key[0]} {key[1]}/{key[2]} was not staged")
        blob_ids.add(staged[key][1])
    if not _blobs_exist(blob_ids):
        raise StagedBlobsGone("staged blobs were pruned before the snapshot was stored")
    return _snapshot_create(
        cluster=cluster,
        counts=Counter(key[0] for key in keys),
        blob_ids=list(blob_ids),
        source=source,
        captured_at=captured_at,
        server_version=server_version,
        api_versions=api_versions,
        kind_status=kind_status,
        ignored=None,
    )


def _snapshot_create(
    *,
    cluster: Cluster,
    counts: Counter[str],
    blob_ids: list[int],
    source: str,
    captured_at: datetime,
    server_version: str,
    api_versions: Sequence[str],
    kind_status: dict[str, dict[str, Any]] | None,
    ignored: dict[str, int] | None,
    captured_at_known: bool = True,
    feature_gates: dict[str, bool] | None = None,
    refused: list[dict[str, str]] | None = None,
    refused_count: int = 0,
) -> Snapshot:
    """The Snapshot row for objects whose blobs are stored (inside the storing transaction).

    Each kind's status: dradash.dra.bundle.kind_statuses.
    """
    kinds = kind_statuses(counts, kind_status, listed=source in LISTING_SOURCES)
    partial = any(v["status"] in PROBLEM_STATUSES for v in kinds.values())
    snapshot = Snapshot.objects.create(
        cluster=cluster,
        source=source,
        status=Snapshot.Status.PARTIAL if partial else Snapshot.Status.COMPLETE,
        captured_at=captured_at,
        captured_at_known=captured_at_known,
        server_version=server_version,
        api_versions=list(api_versions),
        kinds=kinds,
        object_count=sum(counts.values()),
        ignored=dict(ignored or {}),
        feature_gates=dict(feature_gates or {}),
        refused=list(refused or []),
        refused_count=refused_count,
        members=members.pack(blob_ids),
    )
    analysis_request(snapshot)  # the analyse task runs once this transaction commits
    return snapshot


class _BlobSink:
    """Stores a bundle's objects as the parser hands them over, a batch at a time, so that
    only the batch is in memory (inside the importing transaction: a refused bundle leaves
    nothing)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.blob_ids: list[int] = []
        self._batch: list[tuple[ObjectKey, BlobRow]] = []

    def add(self, key: ObjectKey, obj: dict[str, Any]) -> None:
        self.counts[key[0]] += 1
        self._batch.append((key, _blob_row(key, obj)))
        if len(self._batch) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if not self._batch:
            return
        rows = {row[0]: row for _, row in self._batch}
        found = _blob_ids(list(rows))
        new = [row for digest, row in rows.items() if digest not in found]
        if new:
            found.update(_blobs_insert(new))
            if len(found) < len(rows):  # stored meanwhile by another transaction
                found.update(_blob_ids([d for d in rows if d not in found]))
        self.blob_ids += [found[row[0]] for _, row in self._batch]
        self._batch = []


def _blobs_store(objects: dict[ObjectKey, dict[str, Any]], staged: Staged) -> list[int]:
    """The blob ids of the objects, stored where missing (inside snapshot_store's transaction).

    Staged blobs belong to no snapshot yet, so a prune may have deleted some of them meanwhile.
    Blob ids are never used again: if every staged id is still there, those are the blobs.
    """
    staged = {key: staged[key] for key in objects.keys() & staged.keys()}
    staged_ids = {blob_id for _, blob_id in staged.values()}
    if _blobs_exist(staged_ids):
        rest = [(key, obj) for key, obj in objects.items() if key not in staged]
        return [*staged_ids, *_blobs_find_or_insert(rest, {})]
    digests = {key: digest for key, (digest, _) in staged.items()}
    return _blobs_find_or_insert(list(objects.items()), digests)


def _blobs_find_or_insert(
    items: list[tuple[ObjectKey, dict[str, Any]]], digests: dict[ObjectKey, str]
) -> list[int]:
    """The blob ids of the objects, inserting the blobs not stored; ``digests`` known already."""
    blob_ids: list[int] = []
    for start in range(0, len(items), BATCH):
        batch: dict[str, tuple[ObjectKey, dict[str, Any], BlobRow | None]] = {}
        for key, obj in items[start : start + BATCH]:
            row = None if key in digests else _blob_row(key, obj)
            batch[digests[key] if row is None else row[0]] = (key, obj, row)
        # Most objects of a cluster captured again are unchanged: look before sending them.
        found = _blob_ids(list(batch))
        new = [row or _blob_row(key, obj) for d, (key, obj, row) in batch.items() if d not in found]
        if new:
            found.update(_blobs_insert(new))
            if len(found) < len(batch):  # stored meanwhile by another transaction
                found.update(_blob_ids([d for d in batch if d not in found]))
        blob_ids += found.values()
    return blob_ids


def bundle_import(
    *,
    files: Sequence[tuple[str, Source]],
    cluster_name: str | None = None,
    source: str = Snapshot.Source.IMPORT,
    validate: bool = True,
    uploader: Any = None,
    skip_invalid: bool = False,
) -> Snapshot:
    """Parse bundle files and store them as one snapshot, object by object as they are read.

    Files are bytes or binary file objects (read as a stream: a large JSON bundle is never all in
    memory, see parse_bundle). Raises BundleError, and then stores nothing; so does a bundle
    with objects but none dradash reads (check_usable). With ``skip_invalid``, invalid objects
    are left out and recorded in ``Snapshot.refused`` instead (a file that cannot be read still
    refuses the bundle).

    The snapshot goes to the cluster named by ``cluster_name``, else by the bundle's
    SnapshotInfo, else "imported". Without ``uploader`` that is an operator's import, trusted
    with any cluster; with one (a user), cluster_for_upload decides, and the snapshot's
    ``notice`` says where it went instead ("" when it went where it was sent).
    """
    if cluster_name:  # a bad name is refused before anything is read
        _check_cluster_name(cluster_name)
    with transaction.atomic(), gc_paused():
        _blob_lock(exclusive=False)
        sink = _BlobSink()
        bundle = parse_bundle(
            files,
            max_bytes=settings.DRADASH_BUNDLE_MAX_BYTES,
            on_object=sink.add,
            validate=validate,
            skip_invalid=skip_invalid,
        )
        sink.flush()
        check_usable(bundle)
        info = bundle.info
        captured_at = _captured_at(bundle)
        ignored = Counter(info.get("ignored") or {})
        ignored.update(bundle.ignored)
        name = cluster_name or info.get("cluster") or "imported"
        notice = ""
        if uploader is None:
            cluster = cluster_for_name(name)
        else:
            cluster, notice = cluster_for_upload(name, uploader)
        snapshot = _snapshot_create(
            cluster=cluster,
            counts=sink.counts,
            blob_ids=sink.blob_ids,
            source=source,
            captured_at=captured_at,
            server_version=info.get("serverVersion") or "",
            api_versions=info.get("apiVersions") or [],
            kind_status=info.get("kinds"),
            ignored=dict(ignored),
            captured_at_known=bool(info.get("capturedAt")),
            feature_gates=info.get("featureGates"),
            **_refused(info, bundle),
        )
        snapshot.notice = notice  # type: ignore[attr-defined]
        return snapshot


def _refused(info: dict[str, Any], bundle: Bundle) -> dict[str, Any]:
    """Snapshot.refused and refused_count: those the bundle's SnapshotInfo records (an export of
    a snapshot that had some), then those left out now."""
    before = [
        {name: entry.get(name, "") for name in REFUSED_FIELDS}
        for entry in info.get("refused") or []
    ]
    count = info.get("refusedCount")
    count = len(before) if count is None else count
    return {
        "refused": (before + bundle.refused)[:MAX_REFUSED],
        "refused_count": min(count + bundle.refused_count, MAX_COUNT),
    }


# Capture times outside these years are mistakes, and some cannot be read back from PostgreSQL
# (year 0, year 10000 once converted to UTC): every page showing that snapshot would fail.
CAPTURED_AT_YEARS = (1970, 9000)
# How far ahead of this server's clock a capture time may be (the capturing machine's clock may
# run ahead). Later ones are refused: a snapshot dated in the future would stay its cluster's
# latest until then.
CAPTURED_AT_SKEW = timedelta(minutes=5)


def _captured_at(bundle: Bundle) -> datetime:
    """SnapshotInfo's capturedAt, in UTC (now when absent). Raises BundleError."""
    text = bundle.info.get("capturedAt")
    if not text:
        return timezone.now()
    filename = bundle.info_file or "SnapshotInfo"
    try:
        parsed = parse_datetime(text)
    except (ValueError, OverflowError) as exc:  # well-formed, but no date: "2020-13-01"
        raise BundleError(
            filename, f"SnapshotInfo spec.capturedAt {text!r} is not a valid date ({exc})"
        ) from None
    if parsed is None:
        raise BundleError(filename, f"SnapshotInfo spec.capturedAt {text!r} is not a date")
    first, last = CAPTURED_AT_YEARS
    if first <= parsed.year <= last:  # else converting might leave the years Python has
        if timezone.is_naive(parsed):
            parsed = timezone.make_aware(parsed)
        # In UTC: PostgreSQL refuses offsets over 15:59 that RFC 3339 allows (-23:00).
        parsed = parsed.astimezone(UTC)
    if not first <= parsed.year <= last:
        raise BundleError(
            filename,
            f"SnapshotInfo spec.capturedAt {text!r} is out of range "
            f"(years {first} to {last} in UTC)",
        )
    now = timezone.now()
    if parsed > now + CAPTURED_AT_SKEW:
        raise BundleError(
            filename,
            f"SnapshotInfo spec.capturedAt {text!r} is in the future: this server's clock says "
            f"{now:%Y-%m-%d %H:%M:%S} UTC, and allows {CAPTURED_AT_SKEW.seconds // 60} minutes "
            "of clock skew. Correct it, or leave it out: the snapshot is then dated by its "
            "import",
        )
    return parsed


def snapshot_info(snapshot: Snapshot) -> dict[str, Any]:
    """The SnapshotInfo spec that describes a stored snapshot in a bundle (without capturedAt
    when the snapshot's bundle did not say when it was captured: the time of its import is no
    capture time)."""
    info: dict[str, Any] = {"cluster": snapshot.cluster.name}
    if snapshot.captured_at_known:
        info["capturedAt"] = snapshot.captured_at.isoformat()
    return {
        **info,
        "serverVersion": snapshot.server_version,
        "apiVersions": snapshot.api_versions,
        # Only kinds someone listed: "absent" from a bundle that never had them proves nothing,
        # and must not turn into a proof when the export is imported again.
        "kinds": {
            kind: {"status": v["status"], "message": v.get("message", "")}
            for kind, v in snapshot.kinds.items()
            if v.get("listed", snapshot.source in LISTING_SOURCES) or v["status"] != "absent"
        },
        "ignored": snapshot.ignored,
        "featureGates": snapshot.feature_gates,
        # Only when some were refused: exports of other snapshots stay as they were.
        **(
            {"refused": snapshot.refused, "refusedCount": snapshot.refused_count}
            if snapshot.refused_count
            else {}
        ),
    }


# A bundle download reads this many stored objects at a time, and writes about this many
# characters at a time (a large snapshot: a few hundred writes, never a whole batch of its largest
# objects twice over in memory).
EXPORT_BATCH = 500
EXPORT_CHUNK = 1 << 20


def bundle_export(snapshot: Snapshot) -> Iterator[str]:
    """The snapshot as bundle text (a kubectl-style JSON List), streamed: each object's JSON as
    it is stored, never parsed and encoded again, in chunks of about EXPORT_CHUNK characters."""
    order = {kind: i for i, kind in enumerate(KIND_ORDER)}
    # Sorted by kind, namespace and name; a namespace held once however many objects are in it.
    keys = sorted(
        (order.get(kind, len(order)), sys.intern(namespace), name, blob_id)
        for kind, namespace, name, blob_id in snapshot_objects(
            snapshot, fields=("kind", "namespace", "name", "id")
        )
    )
    ids = [key[3] for key in keys]
    del keys

    def chunks() -> Iterator[str]:
        pending: list[str] = []
        size = 0
        for start in range(0, len(ids), EXPORT_BATCH):
            batch = ids[start : start + EXPORT_BATCH]
            data = dict(ObjectBlob.objects.filter(id__in=batch).values_list("id", "data"))
            for blob_id in batch:
                pending.append(data.pop(blob_id))
                size += len(pending[-1])
                if size >= EXPORT_CHUNK:
                    yield ",\n".join(pending)
                    pending, size = [], 0
        if pending:
            yield ",\n".join(pending)

    return write_bundle_json(snapshot_info(snapshot), chunks())


@transaction.atomic
def blobs_prune(*, among: Sequence[int] | None = None) -> int:
    """Delete stored objects no snapshot refers to any more (only those of ``among``, if given)."""
    _blob_lock(exclusive=True)
    used: set[int] = set()
    for packed in Snapshot.objects.values_list("members", flat=True).iterator():
        used.update(members.unpack(packed))
    candidates = (
        ObjectBlob.objects.values_list("id", flat=True).iterator() if among is None else among
    )
    unused = sorted({pk for pk in candidates if pk not in used})
    deleted = 0
    for start in range(0, len(unused), BATCH):
        count, _ = ObjectBlob.objects.filter(id__in=unused[start : start + BATCH]).delete()
        deleted += count
    return deleted


# Text that stored objects hold only when they still need redacting (see dradash.dra.redact).
_UNREDACTED_MARKS = ('"managedFields"', LAST_APPLIED, '"env"')


@transaction.atomic
def blobs_redact(
    *, blob_model: Any = ObjectBlob, snapshot_model: Any = Snapshot, batch: int = 500
) -> tuple[int, int]:
    """Redact stored objects as every path in now does (snapshots stored before it did).

    Returns (blobs rewritten in place, blobs merged into an equal one). Blobs are deduplicated by
    digest, so a redacted blob may equal one already stored (the same Pod captured redacted
    later, or two that differed only in managedFields): the snapshots that listed it in their
    packed ``members`` then list the stored one instead, and it is deleted. The models are
    parameters so that the data migration can pass its historical ones.
    """
    _blob_lock(exclusive=True)
    marked = Q()
    for mark in _UNREDACTED_MARKS:
        marked |= Q(data__contains=mark)
    ids = list(blob_model.objects.filter(marked).order_by("id").values_list("id", flat=True))
    merged: dict[int, int] = {}
    rewritten = 0
    for start in range(0, len(ids), batch):
        rows = blob_model.objects.filter(id__in=ids[start : start + batch]).values_list(
            "id", "data"
        )
        for blob_id, data in rows:
            obj = json.loads(data)
            redacted = _raw_json_utf8(redact(obj))
            if redacted.decode() == data:
                continue  # "env" without values, or the mark only inside some text
            digest = hashlib.sha256(redacted).hexdigest()
            same = blob_model.objects.filter(digest=digest).values_list("id", flat=True).first()
            if same is not None:
                merged[blob_id] = same
                continue
            blob_model.objects.filter(id=blob_id).update(data=redacted.decode(), digest=digest)
            rewritten += 1
    if merged:
        for snapshot_id, packed in snapshot_model.objects.values_list("id", "members").iterator():
            old = members.unpack(packed)
            if any(i in merged for i in old):
                new = members.pack(merged.get(i, i) for i in old)
                snapshot_model.objects.filter(id=snapshot_id).update(members=new)
        merged_ids = sorted(merged)
        for start in range(0, len(merged_ids), BATCH):
            blob_model.objects.filter(id__in=merged_ids[start : start + BATCH]).delete()
    return rewritten, len(merged)


@transaction.atomic
def demo_load() -> list[Snapshot]:
    """Replace the demo cluster's snapshots with freshly built ones (see dradash.demo.cluster)."""
    from dradash.demo import cluster as demo

    olds = Snapshot.objects.filter(cluster__name=demo.CLUSTER, source=Snapshot.Source.DEMO)
    facts = snapshot_facts([old.pk for old in olds])
    for old in olds:
        old.delete()
    blobs_prune()
    facts_prune(among=facts)
    snapshots = []
    for later in (False, True):
        # Through the bundle reader, so the demo obeys the rules every import does.
        data = json.dumps(demo.build(later)).encode()
        bundle = parse_bundle([("demo.json", data)], max_bytes=settings.DRADASH_BUNDLE_MAX_BYTES)
        snapshots.append(
            snapshot_store(
                cluster=cluster_for_name(demo.CLUSTER),
                objects=bundle.objects,
                source=Snapshot.Source.DEMO,
                captured_at=demo.CAPTURED[later].replace(tzinfo=UTC),
                server_version=demo.SERVER_VERSION,
                api_versions=demo.API_VERSIONS,
            )
        )
    return snapshots


# --- uploads through the web: a run, finished by a Celery task ---------------------------

# Uploaded files are kept in the database until the worker has read them, as RunFile rows of at
# most this many bytes each (in id order): neither the web process nor the worker ever holds a
# whole file, which may be hundreds of MiB.
UPLOAD_CHUNK = 4 * 1024 * 1024
# Held while one user's uploads are counted and a new one is stored (PostgreSQL advisory lock,
# keyed by the user's id too): two requests of one user cannot both pass the limits.
UPLOAD_LOCK = 0x75706C64  # "upld"
UPLOAD_WINDOW = timedelta(hours=1)  # DRADASH_UPLOAD_BYTES_PER_HOUR counts uploads this recent


class UploadRefused(Exception):
    """An upload refused before anything is stored; the message says why and what to do.

    ``status`` is the HTTP status to answer with (429: over the user's limits, 413: too large),
    ``retry_after`` the seconds after which it may pass, when that is known."""

    def __init__(self, message: str, *, status: int = 429, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def _mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB" if size >= 2**20 else f"{size / 2**10:,.1f} KiB"


def upload_limits_check(*, user: Any, size: int, now: datetime | None = None) -> None:
    """Raise UploadRefused (429) when the user has DRADASH_UPLOADS_PER_USER uploads queued or
    running already, or when ``size`` more bytes would take their uploads of the last hour over
    DRADASH_UPLOAD_BYTES_PER_HOUR. Each user is counted apart; uploads without a user (tests,
    the benchmarks) are not limited."""
    if user is None or not user.is_authenticated:
        return
    mine = SnapshotRun.objects.filter(kind=SnapshotRun.Kind.UPLOAD, requested_by=user)
    active = list(
        mine.filter(status__in=[SnapshotRun.Status.QUEUED, SnapshotRun.Status.RUNNING])
        .order_by("id")
        .values_list("id", flat=True)
    )
    most = settings.DRADASH_UPLOADS_PER_USER
    if len(active) >= most:
        raise UploadRefused(
            f"You have {len(active)} uploads queued or running ("
            + ", ".join(f"#{pk}" for pk in active)
            + f"), the most one user may have at once (DRADASH_UPLOADS_PER_USER = {most}); "
            "nothing was stored. Upload again once one of them has finished.",
            retry_after=30,
        )
    now = now or timezone.now()
    budget = settings.DRADASH_UPLOAD_BYTES_PER_HOUR
    recent = list(
        mine.filter(created_at__gt=now - UPLOAD_WINDOW)
        .order_by("created_at")
        .values_list("created_at", "upload_bytes")
    )
    used = sum(n for _, n in recent)
    if used + size <= budget:
        return
    limit = f"the {_mib(budget)} one user may upload per hour (DRADASH_UPLOAD_BYTES_PER_HOUR)"
    if size > budget:
        raise UploadRefused(
            f"This upload ({_mib(size)}) is larger than {limit}; nothing was stored. Ask an "
            "administrator to import it with `python manage.py import_bundle`."
        )
    excess, wait = used + size - budget, UPLOAD_WINDOW
    for created_at, n in recent:  # the oldest uploads leave the window first
        excess -= n
        if excess <= 0:
            wait = created_at + UPLOAD_WINDOW - now
            break
    minutes = max(1, round(wait.total_seconds() / 60))
    raise UploadRefused(
        f"This upload ({_mib(size)}) and your uploads of the last hour ({_mib(used)}) come to "
        f"more than {limit}; nothing was stored. Try again in {minutes} "
        f"minute{'s' if minutes != 1 else ''}.",
        retry_after=max(1, int(wait.total_seconds())),
    )


def _size(data: bytes | Any) -> int:
    """The size of an upload's file: bytes, an UploadedFile, or a seekable binary file."""
    if isinstance(data, bytes | bytearray):
        return len(data)
    if isinstance(getattr(data, "size", None), int):
        return int(data.size)
    at = data.tell()
    size = data.seek(0, io.SEEK_END)
    data.seek(at)
    return int(size)


@transaction.atomic
def upload_run_create(
    *,
    files: Sequence[tuple[str, bytes | Any]],
    cluster_name: str,
    user: Any = None,
    skip_invalid: bool = False,
) -> SnapshotRun:
    """Queue an upload run for files given as bytes or as binary file objects (read in chunks);
    with ``skip_invalid`` it leaves invalid objects out (bundle_import).

    Raises UploadRefused, and then stores nothing, when the user is over the upload limits
    (upload_limits_check)."""
    user = user if user is not None and user.is_authenticated else None
    if user is not None:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(%s::integer, %s::integer)", [UPLOAD_LOCK, user.pk]
                )
        upload_limits_check(user=user, size=sum(_size(data) for _, data in files))
    run = SnapshotRun.objects.create(
        kind=SnapshotRun.Kind.UPLOAD,
        cluster_name=cluster_name,
        requested_by=user,
        skip_invalid=skip_invalid,
    )
    for filename, data in files:
        stream = io.BytesIO(data) if isinstance(data, bytes | bytearray) else data
        if hasattr(stream, "seek"):
            stream.seek(0)
        while True:
            chunk = stream.read(UPLOAD_CHUNK)
            RunFile.objects.create(run=run, filename=filename, data=chunk)
            run.upload_bytes += len(chunk)
            if len(chunk) < UPLOAD_CHUNK:
                break
    run.save(update_fields=["upload_bytes"])
    transaction.on_commit(lambda: upload_run_enqueue(run.pk))
    return run


def upload_run_enqueue(run_id: int) -> None:
    """Hand an upload run to a worker; if the broker cannot take it, fail the run at once with
    that reason (and drop its files) rather than leave it queued for a worker that never sees
    it."""
    from dradash.celery import QueueUnavailable, enqueue
    from dradash.snapshots.tasks import upload_run_process

    try:
        enqueue(upload_run_process, run_id)
    except QueueUnavailable as exc:
        with transaction.atomic():
            changed = SnapshotRun.objects.filter(
                id=run_id, status=SnapshotRun.Status.QUEUED
            ).update(
                status=SnapshotRun.Status.FAILED,
                error=f"the task queue is unavailable ({exc}), so the import could not start; "
                "nothing was stored. Upload the files again once it is back.",
                finished_at=timezone.now(),
            )
            if changed:
                RunFile.objects.filter(run_id=run_id).delete()


class RunFileReader(io.RawIOBase):
    """A stored upload read back chunk by chunk: one RunFile row in memory at a time."""

    def __init__(self, chunk_ids: list[int]) -> None:
        self._ids = list(chunk_ids)
        self._chunk = b""
        self._at = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._at >= len(self._chunk):
            if not self._ids:
                return 0
            data = RunFile.objects.filter(id=self._ids.pop(0)).values_list("data", flat=True)
            self._chunk, self._at = bytes(data.get()), 0
        n = min(len(buffer), len(self._chunk) - self._at)
        buffer[:n] = self._chunk[self._at : self._at + n]
        self._at += n
        return n


def _run_files(run: SnapshotRun) -> list[tuple[str, Any]]:
    """The run's files in upload order, each as a reader over its chunks (a file's last chunk
    is the one shorter than UPLOAD_CHUNK, so two files of the same name stay apart)."""
    files: list[tuple[str, list[int]]] = []
    last_full = False
    rows = run.files.order_by("id").values_list("id", "filename", Length("data"))
    for chunk_id, filename, size in rows:
        if last_full and files and files[-1][0] == filename:
            files[-1][1].append(chunk_id)
        else:
            files.append((filename, [chunk_id]))
        last_full = size >= UPLOAD_CHUNK
    return [(name, io.BufferedReader(RunFileReader(ids), UPLOAD_CHUNK)) for name, ids in files]


WORKER_LOST = (
    "worker lost while importing (killed, for example for want of memory, or the machine "
    "stopped); nothing was stored"
)


def upload_run_process(run_id: int) -> None:
    """Import a queued upload run. Safe to call twice: only one caller claims the run.

    The task is delivered again only when the worker that ran it was lost (acks_late with
    reject_on_worker_lost): a run found running then is marked failed, not retried, so that a
    bundle that kills its worker cannot do so in a loop.
    """
    now = timezone.now()
    claimed = SnapshotRun.objects.filter(id=run_id, status=SnapshotRun.Status.QUEUED).update(
        status=SnapshotRun.Status.RUNNING, started_at=now
    )
    if not claimed:
        lost = SnapshotRun.objects.filter(id=run_id, status=SnapshotRun.Status.RUNNING)
        if lost.update(status=SnapshotRun.Status.FAILED, error=WORKER_LOST, finished_at=now):
            logger.warning("upload run %s: %s", run_id, WORKER_LOST)
            RunFile.objects.filter(run_id=run_id).delete()
        else:
            logger.info("upload run %s is not queued (already finished or gone)", run_id)
        return
    run = SnapshotRun.objects.get(id=run_id)
    try:
        snapshot = bundle_import(
            files=_run_files(run),
            cluster_name=run.cluster_name or None,
            source=Snapshot.Source.UPLOAD,
            uploader=run.requested_by,
            skip_invalid=run.skip_invalid,
        )
    except BundleError as exc:
        _run_finish(run, error=str(exc))
        return
    except Exception:
        logger.exception("upload run %s failed", run_id)
        _run_finish(run, error="internal error while importing; see the worker log")
        raise
    _run_finish(run, snapshot=snapshot, notice=snapshot.notice)  # type: ignore[attr-defined]


def upload_runs_reap(*, now: datetime | None = None) -> int:
    """Fail upload runs still running past the task time limit: their worker, and the message
    that would have been delivered again, were lost. How many."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    lost = list(
        SnapshotRun.objects.filter(
            kind=SnapshotRun.Kind.UPLOAD, status=SnapshotRun.Status.RUNNING, started_at__lt=stale
        ).values_list("id", flat=True)
    )
    failed = 0
    for run_id in lost:
        with transaction.atomic():
            failed += SnapshotRun.objects.filter(
                id=run_id, status=SnapshotRun.Status.RUNNING
            ).update(status=SnapshotRun.Status.FAILED, error=WORKER_LOST, finished_at=now)
            RunFile.objects.filter(run_id=run_id).delete()
    return failed


@transaction.atomic
def _run_finish(
    run: SnapshotRun, *, snapshot: Snapshot | None = None, error: str = "", notice: str = ""
) -> None:
    run.status = SnapshotRun.Status.FAILED if error else SnapshotRun.Status.SUCCEEDED
    run.error = error
    run.notice = notice
    run.snapshot = snapshot
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "notice", "snapshot", "finished_at"])
    run.files.all().delete()
