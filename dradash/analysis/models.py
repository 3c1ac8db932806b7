"""A snapshot's analysis, stored once by the analyse task (dradash.dra.analysis computes it).

Pages and the API read these rows: a web process never parses a whole snapshot. The JSON
columns hold what the API serves (``dradash.dra.analysis.*_dict``). Lists that a filter
searches (a claim's classes, a device's attributes) are also kept as text, one entry per line
between newlines, so that a filter is a ``contains`` on every database.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from typing import Any

from django.db import models

from dradash.snapshots.models import Snapshot


def lines(values: list[str]) -> str:
    """``["a", "b"]`` as ``"\\na\\nb\\n"`` (names never hold a newline); ``""`` when empty."""
    return "\n" + "\n".join(values) + "\n" if values else ""


def unlines(text: str) -> list[str]:
    return text.strip("\n").split("\n") if text else []


@functools.lru_cache(maxsize=65536)  # classes, names and values repeat over many devices
def token_key(token: str) -> str:
    """A filter token (DeviceRecord.tokens) as DeviceRow.tokens holds it on PostgreSQL: the
    first 12 base64 characters (72 bits) of its SHA-256. A token is as long as the attribute's
    name and value; its key is short and of fixed length, so a row holds a third of the bytes.
    PostgreSQL computes the same (``left(encode(sha256(convert_to(t, 'UTF8')), 'base64'),
    12)``: migration 0013). No value can be chosen to stand for another's token: that takes a
    second preimage of 72 bits."""
    return base64.b64encode(hashlib.sha256(token.encode()).digest())[:12].decode()


# How often a failed (or lost) analysis is tried again by itself (analysis.services).
RETRIES = 3


class SnapshotAnalysis(models.Model):
    """The analysis of one snapshot: its state, and the per-snapshot results."""

    class Status(models.TextChoices):
        PENDING = "pending"  # queued, or running
        DONE = "done"
        FAILED = "failed"
        # Its rows were dropped, its summary kept (services.analyses_compact); opening the
        # snapshot analyses it again.
        COMPACTED = "compacted"

    snapshot = models.OneToOneField(
        Snapshot, primary_key=True, on_delete=models.CASCADE, related_name="analysis"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)  # how long the last run took
    # When its rows were last dropped (services.analyses_compact); kept when it is analysed
    # again, so that the waiting page can say why and a reopened one stays a while.
    compacted_at = models.DateTimeField(null=True, blank=True)
    # dradash.dra.analysis: summary_dict, the checklist (CheckItem.as_dict each), capacity_dict,
    # inventory_dict, class_dict per class, the filter choices of the lists.
    summary = models.JSONField(default=dict, blank=True)
    checklist = models.JSONField(default=list, blank=True)
    capacity = models.JSONField(default=dict, blank=True)
    inventory = models.JSONField(default=dict, blank=True)
    classes = models.JSONField(default=dict, blank=True)
    options = models.JSONField(default=dict, blank=True)
    # ObjectBlob ids of its ResourceSlices, DeviceClasses and DeviceTaintRules: all the selector
    # playground reads.
    device_objects = models.JSONField(default=list, blank=True)
    # The same as the playground evaluates over them (dradash.dra.matching.DeviceIndex bytes).
    device_index = models.BinaryField(default=bytes, editable=False)

    class Meta:
        verbose_name_plural = "snapshot analyses"

    def __str__(self) -> str:
        return f"analysis of snapshot #{self.snapshot_id} ({self.status})"

    @property
    def done(self) -> bool:
        return self.status == self.Status.DONE

    @property
    def was_compacted(self) -> bool:
        """Whether its rows were dropped (services.analyses_compact) and no analysis has
        finished since: compacted, or being analysed again after."""
        if self.compacted_at is None:
            return False
        return self.finished_at is None or self.finished_at <= self.compacted_at

    @property
    def retried(self) -> bool:
        """Whether a failed analysis is tried again by itself (services.analyses_reap)."""
        return self.attempts <= RETRIES

    def load(self, *fields: str) -> SnapshotAnalysis:
        """Read these results (pages get the analysis without them: see
        selectors.snapshot_analysis) in one query; itself."""
        self.refresh_from_db(fields=fields)
        return self


class Explanation(models.Model):
    """The allocator's explanation of one or more unallocated claims (claims and Pods that ask
    the same share one): ``head`` for pages (explanation_head), ``full`` (zlib-compressed JSON
    of explanation_dict, every device) for the explain API."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="+")
    head = models.JSONField()
    full = models.BinaryField()

    def __str__(self) -> str:
        return f"explanation #{self.pk} of snapshot #{self.snapshot_id}"


class VerdictFacts(models.Model):
    """A verdict's evidence and next steps and the objects its page reads, stored once however
    many snapshots (or objects) have the same: a Pod whose verdict and objects did not change
    between two captures refers to the same row."""

    digest = models.CharField(max_length=64)  # sha256 of the two columns' text
    # evidence and next_steps (dradash.dra.analysis.diagnosis_dict, without what has a column);
    # "unknown", the kinds the verdict lacks, when there are any (Diagnosis.unknown)
    detail = models.JSONField(default=dict, blank=True)
    # The ids of the stored objects (ObjectBlob) the page of the verdict's object reads.
    chain = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name_plural = "verdict facts"
        constraints = [models.UniqueConstraint(fields=["digest"], name="verdictfacts_digest")]

    def __str__(self) -> str:
        return f"verdict facts {self.digest[:12]}"


class Verdict(models.Model):
    """What a Pod's and a claim's rows share: the diagnosis and the chain (their ``facts``)."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="+")
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    stage = models.CharField(max_length=32, blank=True)  # "" for a Pod that does not use DRA
    stage_order = models.PositiveSmallIntegerField(default=0)  # 0 = stuck earliest
    reason = models.CharField(max_length=64, blank=True)
    # ok · warning · error · unknown (dradash.dra.analysis.severity)
    severity = models.CharField(max_length=16, blank=True)
    summary = models.TextField(blank=True)
    facts = models.ForeignKey(VerdictFacts, on_delete=models.PROTECT, related_name="+")
    explanation = models.ForeignKey(
        Explanation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The positions (Finding.position) of the snapshot's findings that concern it
    # (dradash.dra.concerns), shown beside its verdict; None in analyses stored before they
    # were kept here (its page then lists the findings naming it or its claims).
    findings = models.JSONField(null=True, blank=True, default=None)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}: {self.stage or 'no DRA'}"

    @property
    def detail(self) -> dict[str, Any]:
        """VerdictFacts.detail (read the row with select_related("facts"))."""
        detail: dict[str, Any] = self.facts.detail
        return detail

    @property
    def chain(self) -> list[int]:
        """VerdictFacts.chain."""
        chain: list[int] = self.facts.chain
        return chain

    @property
    def unknown(self) -> list[str]:
        """The kinds the snapshot lacks that would say whether it is stuck at all; [] when the
        verdict stands (dradash.dra.diagnosis.Diagnosis.unknown)."""
        return list(self.detail.get("unknown", []))

    @property
    def stuck(self) -> bool:
        """Known to be stuck: a stage other than healthy, and not unknown."""
        return bool(self.stage) and self.stage != "healthy" and self.severity != "unknown"

    def diagnosis(self) -> dict[str, Any]:
        """The diagnosis API's fields (DESIGN "REST API"), with a gang member's own verdict
        (``alone``) and a Pod's tainted or reported devices (``devices``) where it has them."""
        out = {
            "stage": self.stage,
            "reason": self.reason,
            "severity": self.severity,
            "unknown": self.unknown,
            "summary": self.summary,
            "evidence": self.detail.get("evidence", []),
            "next_steps": self.detail.get("next_steps", []),
        }
        for key in ("alone", "devices"):
            if key in self.detail:
                out[key] = self.detail[key]
        return out


class PodVerdict(Verdict):
    """A Pod of the snapshot: its diagnosis (when it uses DRA) and what its lists show."""

    uses_dra = models.BooleanField(default=True)
    phase = models.CharField(max_length=32, blank=True)
    node = models.CharField(max_length=253, blank=True)
    owner = models.CharField(max_length=300, blank=True)  # "Job train", or ""
    claims = models.JSONField(default=list, blank=True)  # names of its claims (its namespace)
    unresolved = models.PositiveIntegerField(default=0)  # claim references that do not resolve
    created = models.CharField(max_length=64, blank=True)  # metadata.creationTimestamp
    restarts = models.PositiveIntegerField(default=0)  # of its containers, init ones included
    # Extended resources its containers ask for that a DeviceClass maps, {name: devices}
    # (dradash.dra.analysis.PodRecord.extended): how a Pod without claims uses DRA.
    extended = models.JSONField(default=dict, blank=True)
    podgroup = models.CharField(max_length=253, blank=True)  # spec.schedulingGroup's PodGroup

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "namespace", "name"], name="one_pod_verdict"
            )
        ]
        indexes = [
            models.Index(fields=["snapshot", "stage_order", "namespace", "name"]),
            models.Index(fields=["namespace", "name"]),  # history across snapshots
            models.Index(fields=["snapshot", "namespace", "podgroup"]),  # a gang's members
        ]


class ClaimVerdict(Verdict):
    """A ResourceClaim of the snapshot: its diagnosis and what its lists show."""

    state = models.CharField(max_length=16)  # pending · allocated · reserved · deleting
    template = models.CharField(max_length=253, blank=True)
    classes = models.TextField(blank=True)  # lines()
    drivers = models.TextField(blank=True)  # lines()
    nodes = models.TextField(blank=True)  # lines()
    devices = models.PositiveIntegerField(default=0)
    pods = models.JSONField(default=list, blank=True)  # names of the Pods using it

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "namespace", "name"], name="one_claim_verdict"
            )
        ]
        indexes = [
            models.Index(fields=["snapshot", "stage_order", "namespace", "name"]),
            models.Index(fields=["namespace", "name"]),  # history across snapshots
        ]

    @property
    def class_list(self) -> list[str]:
        return unlines(self.classes)

    @property
    def driver_list(self) -> list[str]:
        return unlines(self.drivers)

    @property
    def node_list(self) -> list[str]:
        return unlines(self.nodes)


class PodGroupRow(models.Model):
    """A PodGroup of the snapshot and its gang (the PodGroup page and API)."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="+")
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    # scheduled · waiting · fits · does-not-fit · unknown · basic (dradash.dra.gangs.Gang)
    state = models.CharField(max_length=16)
    min_count = models.PositiveIntegerField(null=True, blank=True)
    members = models.PositiveIntegerField(default=0)
    fit = models.PositiveIntegerField(null=True, blank=True)  # None: unknown
    summary = models.TextField(blank=True)
    data = models.JSONField()  # dradash.dra.analysis.podgroup_dict: what the API serves
    chain = models.JSONField(default=list, blank=True)  # ObjectBlob ids: PodGroup, Workload

    class Meta:
        ordering = ["namespace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "namespace", "name"], name="one_podgroup")
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}: {self.state}"

    @property
    def stuck(self) -> bool:
        return self.state in ("waiting", "does-not-fit")


class Finding(models.Model):
    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()  # in the order the core found them
    code = models.CharField(max_length=64)
    severity = models.CharField(max_length=16)
    message = models.TextField()
    next_step = models.TextField(blank=True)
    named = models.JSONField(default=list)  # the objects it names: [{"kind", "namespace", "name"}]

    class Meta:
        ordering = ["position"]
        indexes = [models.Index(fields=["snapshot", "position"])]

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "objects": self.named,
            "next_step": self.next_step,
        }


class FindingObject(models.Model):
    """An object a finding names, to find the findings of one object."""

    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="+")
    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=63)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)

    class Meta:
        indexes = [models.Index(fields=["snapshot", "kind", "namespace", "name"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


class DeviceFacts(models.Model):
    """What a device row shows, stored once however many snapshots show the device unchanged:
    consecutive captures of a cluster refer to the same row, so a capture writes the facts of
    the devices that changed and, for the others, only a DeviceRow
    (dradash.analysis.services.facts_prune deletes those no row refers to)."""

    digest = models.CharField(max_length=64)  # sha256 of data's text
    data = models.JSONField()  # the API row (DeviceRecord.as_dict)

    class Meta:
        verbose_name_plural = "device facts"
        constraints = [models.UniqueConstraint(fields=["digest"], name="devicefacts_digest")]

    def __str__(self) -> str:
        return f"device facts {self.digest[:12]}"


class DeviceRow(models.Model):
    """A device of the pools the allocator would use (the devices page and API): where it is
    in the snapshot's list and what lists filter on; what it shows is its ``facts``."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()  # driver → pool → node → name
    driver = models.CharField(max_length=253)
    pool = models.CharField(max_length=253)
    device = models.CharField(max_length=253)
    node = models.CharField(max_length=253, blank=True)
    status = models.CharField(max_length=16)  # allocated · unusable · tainted · free
    tainted = models.BooleanField(default=False)
    classes = models.TextField(blank=True)  # lines() of the classes admitting it
    claims = models.TextField(blank=True)  # lines() of "namespace/name" holding it
    # What the class and attribute filters look for (DeviceRecord.tokens): on PostgreSQL a
    # JSON list in ``tokens`` of ``snapshot:{id}`` and the token_key of ``status:…`` and of
    # each token, which a GIN index answers without reading the rows; elsewhere the tokens as
    # lines in ``attributes``, which a filter searches as text. Kept per row, with the
    # snapshot's own token: the index then finds one snapshot's devices, however many
    # snapshots share their facts.
    attributes = models.TextField(blank=True)
    tokens = models.JSONField(default=list, blank=True)
    facts = models.ForeignKey(DeviceFacts, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["position"]
        indexes = [
            models.Index(fields=["snapshot", "position"]),
            models.Index(fields=["snapshot", "node", "position"]),
            models.Index(fields=["snapshot", "driver", "pool", "position"]),
            models.Index(fields=["snapshot", "status", "position"]),
            models.Index(fields=["driver", "pool", "device"]),  # history across snapshots
        ]

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"

    @property
    def data(self) -> dict[str, Any]:
        """The API row (DeviceRecord.as_dict); read with select_related("facts")."""
        data: dict[str, Any] = self.facts.data
        return data

    @property
    def class_list(self) -> list[str]:
        return unlines(self.classes)


class RowFacts(models.Model):
    """What a pool's or a node's row shows (PoolRow, NodeRow), stored once however many
    snapshots show it unchanged, as DeviceFacts are for devices."""

    digest = models.CharField(max_length=64)  # sha256 of data's text
    data = models.JSONField()  # pool_dict or node_dict

    class Meta:
        verbose_name_plural = "row facts"
        constraints = [models.UniqueConstraint(fields=["digest"], name="rowfacts_digest")]

    def __str__(self) -> str:
        return f"row facts {self.digest[:12]}"


class _SharedData:
    """A row whose JSON is its ``facts`` (read with select_related("facts"))."""

    facts: RowFacts

    @property
    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = self.facts.data
        return data


class PoolRow(_SharedData, models.Model):
    """A pool as the allocator gathers it (the pools table and API)."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()  # those that need attention first
    driver = models.CharField(max_length=253)
    pool = models.CharField(max_length=253)
    facts = models.ForeignKey(RowFacts, on_delete=models.PROTECT, related_name="+")  # pool_dict
    slices = models.JSONField(default=list)  # ObjectBlob ids of its slices, stale ones too

    class Meta:
        ordering = ["position"]
        indexes = [
            models.Index(fields=["snapshot", "position"]),
            models.Index(fields=["snapshot", "driver", "pool"]),
        ]

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}"


class NodeRow(_SharedData, models.Model):
    """A Node of the snapshot (the node page and API): its drivers and slices, taints, Ready
    condition, the DRA Pods on it and its events; its devices are its DeviceRows."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=253)
    # dradash.dra.analysis.node_dict: what the API serves
    facts = models.ForeignKey(RowFacts, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["snapshot", "name"], name="one_node_row")]

    def __str__(self) -> str:
        return self.name
