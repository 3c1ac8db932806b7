from __future__ import annotations

from django.conf import settings
from django.db import models

from dradash.clusters.models import Cluster
from dradash.dra.bundle import PROBLEM_STATUSES


class Snapshot(models.Model):
    """The DRA state of one cluster at one moment. Immutable once stored.

    A Snapshot row is written in the same transaction as all its objects, so a snapshot is
    visible only when it is whole. ``partial`` means some kinds could not be read (``kinds``
    says which and why); the objects that were read are all there.
    """

    class Status(models.TextChoices):
        COMPLETE = "complete"
        PARTIAL = "partial"

    class Source(models.TextChoices):
        IMPORT = "import", "bundle import"
        UPLOAD = "upload", "bundle upload"
        CAPTURE = "capture", "live capture"
        DEMO = "demo", "demo"

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="snapshots")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPLETE)
    source = models.CharField(max_length=16, choices=Source.choices)
    captured_at = models.DateTimeField(help_text="When the cluster was in this state.")
    # False for a bundle that does not say when it was captured: captured_at is then when it
    # was imported, and pages say "imported at", not "captured".
    captured_at_known = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    server_version = models.CharField(max_length=64, blank=True)
    # Served resource.k8s.io versions, e.g. ["resource.k8s.io/v1", "resource.k8s.io/v1beta2"].
    api_versions = models.JSONField(default=list, blank=True)
    # Per kind: {"Pod": {"status": "ok" | "absent" | "forbidden" | "not-found" | "error" |
    # "not-served", "count": 3, "message": "..."}}. "not-served" is for optional kinds a
    # cluster may lack (DeviceTaintRule; Workload and PodGroup without the GenericWorkload
    # gate) and does not make the snapshot partial.
    kinds = models.JSONField(default=dict, blank=True)
    object_count = models.PositiveIntegerField(default=0)
    # Objects of kinds dradash does not read: {"apps/v1 Deployment": 2}.
    ignored = models.JSONField(default=dict, blank=True)
    # Invalid objects left out of an import with "skip invalid objects": the first
    # MAX_REFUSED, each {"file", "location", "kind", "namespace", "name", "problem"} ("" where
    # not readable; dradash.dra.bundle.refused_entry), and how many there were in all.
    refused = models.JSONField(default=list, blank=True)
    refused_count = models.PositiveIntegerField(default=0)
    # Feature gates the snapshot states (SnapshotInfo featureGates); judged by, besides the
    # version's defaults.
    feature_gates = models.JSONField(default=dict, blank=True)
    pinned = models.BooleanField(default=False)
    # The ids of its objects' blobs, packed by dradash.snapshots.members: one value instead of a
    # row per object, so a snapshot of an unchanged cluster adds next to nothing.
    members = models.BinaryField(default=bytes, editable=False)

    class Meta:
        ordering = ["-captured_at", "-id"]
        indexes = [models.Index(fields=["cluster", "-captured_at"])]

    def __str__(self) -> str:
        return f"#{self.pk} {self.cluster.name} @ {self.captured_at:%Y-%m-%d %H:%M:%S}"

    @property
    def missing_kinds(self) -> dict[str, dict[str, object]]:
        """Kinds that could not be read, with why (forbidden, not found …): what makes the
        snapshot partial."""
        return {
            k: v
            for k, v in self.kinds.items()
            if isinstance(v, dict) and v.get("status") in PROBLEM_STATUSES
        }


class ObjectBlob(models.Model):
    """One object's raw JSON, stored once however many snapshots hold it unchanged.

    What the object is (kind, namespace, name) follows from its JSON, so equal data means an
    equal identity; snapshots list their blobs in ``Snapshot.members``.
    """

    digest = models.CharField(max_length=64)  # sha256 of data
    kind = models.CharField(max_length=63)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    api_version = models.CharField(max_length=128)
    data = models.TextField()

    class Meta:
        # A constraint rather than unique=True: on PostgreSQL the field option also builds a
        # second (LIKE) index on digest that no query uses and every insert pays for.
        constraints = [models.UniqueConstraint(fields=["digest"], name="objectblob_digest_unique")]
        # An object's stored versions, to fetch a snapshot's object by key (a page's class, a
        # diff's unchanged context) without reading the snapshot's whole member list.
        indexes = [models.Index(fields=["kind", "namespace", "name"], name="objectblob_key")]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name} ({self.digest[:12]})"


class SnapshotRun(models.Model):
    """A piece of background work that ends in a snapshot: a bundle upload or a live capture.

    The web reads progress from here, never from Celery's result backend. A cluster has at most
    one active (queued or running) capture run: the database refuses a second.
    """

    class Kind(models.TextChoices):
        UPLOAD = "upload"
        CAPTURE = "capture"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    cluster_name = models.CharField(max_length=253)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # What the person who asked should know about the result: an upload stored in another
    # cluster than the one it named, and why.
    notice = models.TextField(blank=True)
    snapshot = models.ForeignKey(
        Snapshot, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # 1 for a run someone (or the schedule) asked for; 2, 3 … for retries after a lost worker.
    attempt = models.PositiveSmallIntegerField(default=1)
    # An upload's files, all together: what counts against its user's bytes per hour.
    upload_bytes = models.PositiveBigIntegerField(default=0)
    # An upload that imports the valid objects and lists the invalid ones (Snapshot.refused)
    # instead of refusing the bundle.
    skip_invalid = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster_name"],
                condition=models.Q(kind="capture", status__in=["queued", "running"]),
                name="one_active_capture_per_cluster",
            )
        ]
        indexes = [models.Index(fields=["kind", "cluster_name", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} run #{self.pk} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)


class RunFile(models.Model):
    """A file uploaded for a run, kept only until the run has read it."""

    run = models.ForeignKey(SnapshotRun, on_delete=models.CASCADE, related_name="files")
    filename = models.CharField(max_length=255)
    data = models.BinaryField()

    def __str__(self) -> str:
        return self.filename
