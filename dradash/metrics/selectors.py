"""What /metrics reports, read from the stored analysis: a handful of queries whatever the
cluster's size, never a snapshot's objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, F, OuterRef, Subquery

from dradash.analysis.models import Finding, SnapshotAnalysis
from dradash.clusters.models import Cluster
from dradash.dra.inventory import STATUSES
from dradash.snapshots.models import SnapshotRun
from dradash.snapshots.selectors import state_snapshots


@dataclass
class ClusterMetrics:
    cluster: str
    snapshot: int | None = None  # the latest analysed snapshot
    captured_at: datetime | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    inventory: dict[str, Any] = field(default_factory=dict)
    findings: list[tuple[str, str, int]] = field(default_factory=list)  # code, severity, n
    capture_runs: dict[str, int] = field(default_factory=dict)  # status -> runs
    capture_seconds: float | None = None  # of the last finished capture


def cluster_metrics() -> list[ClusterMetrics]:
    """Per cluster: its latest analysed state snapshot's (a live cluster's latest capture)
    summary, device inventory and findings, and its capture runs. Clusters of users' uploads
    are left out: they are records, not clusters anyone monitors (and anyone may make them)."""
    latest = (
        state_snapshots()
        .filter(cluster_id=OuterRef("pk"), analysis__status=SnapshotAnalysis.Status.DONE)
        .order_by("-captured_at", "-id")
        .values("id")[:1]
    )
    clusters = list(
        Cluster.objects.exclude(origin=Cluster.Origin.UPLOAD)
        .annotate(latest_id=Subquery(latest))
        .order_by("name")
        .values("name", "latest_id")
    )
    out = {c["name"]: ClusterMetrics(c["name"], c["latest_id"]) for c in clusters}
    by_snapshot = {m.snapshot: m for m in out.values() if m.snapshot is not None}
    for row in SnapshotAnalysis.objects.filter(pk__in=list(by_snapshot)).values(
        "snapshot_id", "snapshot__captured_at", "summary", "inventory"
    ):
        m = by_snapshot[row["snapshot_id"]]
        m.captured_at = row["snapshot__captured_at"]
        m.summary, m.inventory = row["summary"] or {}, row["inventory"] or {}
    for row in (
        Finding.objects.filter(snapshot_id__in=list(by_snapshot))
        .values("snapshot_id", "code", "severity")
        .annotate(n=Count("id"))
        .order_by("snapshot_id", "code", "severity")
    ):
        by_snapshot[row["snapshot_id"]].findings.append((row["code"], row["severity"], row["n"]))
    captures = SnapshotRun.objects.filter(kind=SnapshotRun.Kind.CAPTURE, cluster_name__in=out)
    for row in (
        captures.filter(status__in=[SnapshotRun.Status.SUCCEEDED, SnapshotRun.Status.FAILED])
        .values("cluster_name", "status")
        .annotate(n=Count("id"))
    ):
        out[row["cluster_name"]].capture_runs[row["status"]] = row["n"]
    last = (
        captures.filter(cluster_name=OuterRef("cluster_name"), finished_at__isnull=False)
        .exclude(started_at__isnull=True)
        .order_by("-finished_at", "-id")
        .values("id")[:1]
    )
    for row in (
        captures.filter(id=Subquery(last))
        .annotate(took=F("finished_at") - F("started_at"))
        .values("cluster_name", "took")
    ):
        out[row["cluster_name"]].capture_seconds = max(row["took"].total_seconds(), 0.0)
    return list(out.values())


DEVICE_STATES = tuple(STATUSES)  # free, allocated, tainted, unusable: each device in one
