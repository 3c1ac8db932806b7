"""Reads of a snapshot's stored analysis: what every snapshot page and API shows.

A detail page reads its object's verdict row and builds the object chain from only the stored
objects that chain needs (their blob ids are on the row); nothing here loads a whole snapshot.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.db.models import Case, Count, Q, QuerySet, Value, When
from django.db.models.fields.json import KT

from dradash.analysis.models import (
    ClaimVerdict,
    DeviceRow,
    Explanation,
    Finding,
    FindingObject,
    NodeRow,
    PodGroupRow,
    PodVerdict,
    PoolRow,
    SnapshotAnalysis,
    Verdict,
    unlines,
)
from dradash.dra import analysis, diagnosis, timeline
from dradash.dra import chain as chains
from dradash.dra.state import ClusterState
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import objects_by_ids, partial_state

STATE_FIELDS = (
    "status",
    "error",
    "attempts",
    "queued_at",
    "started_at",
    "finished_at",
    "seconds",
    "compacted_at",
)
STUCK_SHOWN = 15  # Pods to look at first, on the overview
HISTORY_SHOWN = 50  # snapshots in an object's stage history


def snapshot_analysis(snapshot: Snapshot) -> SnapshotAnalysis:
    """The snapshot's analysis row; one is asked for (and queued) when there is none yet, as
    for snapshots stored before dradash analysed them, and a compacted one is queued again
    (pending: every page and API that reads the rows waits for it as for a new one)."""
    # Only its state: each page then loads the one or two results it shows (the capacity of a
    # large cluster alone is a megabyte of JSON).
    found = SnapshotAnalysis.objects.filter(pk=snapshot.pk).only(*STATE_FIELDS).first()
    if found is None:
        from dradash.analysis.services import analysis_request

        found = analysis_request(snapshot)
    elif found.status == SnapshotAnalysis.Status.COMPACTED:
        from dradash.analysis.services import analysis_reopen

        found = analysis_reopen(found)
    return found


def summary_figure(snapshot: Snapshot, name: str) -> Any:
    """One figure of the stored summary (``summary_dict``), read alone from the database."""
    rows = SnapshotAnalysis.objects.filter(pk=snapshot.pk).values_list(f"summary__{name}")
    return next((value for (value,) in rows), None)


def pod_verdicts(snapshot: Snapshot) -> QuerySet[PodVerdict]:
    """The Pods that use DRA (the list's rows; filter them with filters.PodFilter)."""
    return PodVerdict.objects.filter(snapshot=snapshot, uses_dra=True).defer("findings")


def claim_verdicts(snapshot: Snapshot) -> QuerySet[ClaimVerdict]:
    return ClaimVerdict.objects.filter(snapshot=snapshot).defer("findings")


def device_rows(snapshot: Snapshot) -> QuerySet[DeviceRow]:
    return DeviceRow.objects.filter(snapshot=snapshot).select_related("facts").defer("attributes")


def pool_rows(snapshot: Snapshot) -> QuerySet[PoolRow]:
    return PoolRow.objects.filter(snapshot=snapshot).defer("slices").select_related("facts")


def podgroup_rows(snapshot: Snapshot) -> QuerySet[PodGroupRow]:
    """The PodGroups (the list's rows; filter them with filters.PodGroupFilter), each with
    ``state_rank``: the gangs that are stuck (or unknown) first, as the lists sort them."""
    rank = Case(
        When(state="waiting", then=Value(0)),
        When(state="does-not-fit", then=Value(1)),
        When(state="unknown", then=Value(2)),
        When(state="fits", then=Value(3)),
        When(state="scheduled", then=Value(4)),
        default=Value(5),
    )
    return (
        PodGroupRow.objects.filter(snapshot=snapshot)
        .defer("data", "chain")
        .annotate(state_rank=rank)
    )


def podgroup_detail(snapshot: Snapshot, namespace: str, name: str) -> PodGroupRow | None:
    """A PodGroup's row with its gang (``data``: what its page and API show)."""
    return (
        PodGroupRow.objects.filter(snapshot=snapshot, namespace=namespace, name=name)
        .defer("chain")
        .first()
    )


def pod_group(snapshot: Snapshot, namespace: str, name: str) -> PodGroupRow | None:
    """The gang a member Pod's page shows beside its verdict: the PodGroup's row without its
    members (``breaking`` is the member that breaks the gang, or None)."""
    return (
        PodGroupRow.objects.filter(snapshot=snapshot, namespace=namespace, name=name)
        .defer("data", "chain")
        .annotate(breaking=KT("data__breaking_member"))
        .first()
    )


def claim_names(snapshot: Snapshot, namespace: str, names: list[str]) -> set[str]:
    """Which of these claims of the namespace are in the snapshot (have a page)."""
    if not names:
        return set()
    return set(
        ClaimVerdict.objects.filter(
            snapshot=snapshot, namespace=namespace, name__in=names
        ).values_list("name", flat=True)
    )


def member_claims(snapshot: Snapshot, namespace: str, group: str) -> set[str]:
    """The claims a PodGroup's members use (names in its namespace), the group's included."""
    rows = PodVerdict.objects.filter(snapshot=snapshot, namespace=namespace, podgroup=group)
    return {name for claims in rows.values_list("claims", flat=True) for name in claims}


def stuck_pods(snapshot: Snapshot) -> tuple[list[PodVerdict], int]:
    """The first STUCK_SHOWN stuck Pods, worst first, and how many are stuck."""
    stuck = (
        pod_verdicts(snapshot).exclude(stage="healthy").order_by("stage_order", "namespace", "name")
    )
    return list(stuck[:STUCK_SHOWN]), stuck.count()


def snapshot_findings(snapshot: Snapshot) -> QuerySet[Finding]:
    return Finding.objects.filter(snapshot=snapshot)


FINDINGS_SHOWN = 50  # on the overview, errors first; the API has them all


def top_findings(snapshot: Snapshot) -> tuple[list[Finding], int, list[tuple[str, str, int]]]:
    """The first FINDINGS_SHOWN findings, errors then warnings then the rest; how many there
    are; and (code, severity, how many) of each code, the most first."""
    rank = Case(
        When(severity="error", then=Value(0)),
        When(severity="warning", then=Value(1)),
        default=Value(2),
    )
    found = snapshot_findings(snapshot)
    shown = list(found.annotate(rank=rank).order_by("rank", "position")[:FINDINGS_SHOWN])
    codes = [
        (row["code"], row["severity"], row["n"])
        for row in found.values("code", "severity").annotate(n=Count("id")).order_by("-n", "code")
    ]
    return shown, sum(n for _, _, n in codes), codes


def verdict_findings(
    snapshot: Snapshot, verdict: Verdict, named: list[tuple[str, str, str]]
) -> list[Finding]:
    """The findings that concern a Pod or a claim, as the analysis attached them to its verdict
    (dradash.dra.concerns), in order; for a verdict stored before the analysis did, those
    naming any of ``named``."""
    if verdict.findings is None:
        return object_findings(snapshot, named)
    if not verdict.findings:
        return []
    return list(Finding.objects.filter(snapshot=snapshot, position__in=verdict.findings))


def object_findings(snapshot: Snapshot, objects: list[tuple[str, str, str]]) -> list[Finding]:
    """Findings that name any of these (kind, namespace, name), each once, in order."""
    if not objects:
        return []
    named = Q()
    for kind, namespace, name in objects:
        named |= Q(kind=kind, namespace=namespace, name=name)
    ids = FindingObject.objects.filter(named, snapshot=snapshot).values("finding_id")
    return list(Finding.objects.filter(id__in=ids))


@dataclass
class History:
    """An object's stage in the cluster's snapshots, newest first (DESIGN "REST API")."""

    entries: list[dict[str, Any]] = field(default_factory=list)

    def as_list(self) -> list[dict[str, Any]]:
        return [
            {
                "snapshot": e["snapshot"],
                "captured_at": e["captured_at"].isoformat().replace("+00:00", "Z"),
                "stage": e["stage"],
                "reason": e["reason"],
            }
            for e in self.entries
        ]

    def runs(self) -> list[dict[str, Any]]:
        """Consecutive snapshots with the same stage (and severity: an unknown verdict is not
        its stage's), newest first: {stage, reason, severity, count, since, until, snapshots}
        — "claim-unallocated in the last 6 snapshots, since 10:05"."""
        out: list[dict[str, Any]] = []
        for e in self.entries:
            if out and (out[-1]["stage"], out[-1]["severity"]) == (e["stage"], e["severity"]):
                run = out[-1]
                run["count"] += 1
                run["since"] = e["captured_at"]
                run["first"] = e["snapshot"]
            else:
                out.append(
                    {
                        "stage": e["stage"],
                        "reason": e["reason"],
                        "severity": e["severity"],
                        "count": 1,
                        "since": e["captured_at"],
                        "until": e["captured_at"],
                        "first": e["snapshot"],
                        "last": e["snapshot"],
                    }
                )
        return out


def history(model: type[Verdict], snapshot: Snapshot, namespace: str, name: str) -> History:
    """The object's verdicts in every analysed snapshot of the snapshot's cluster."""
    rows = (
        model.objects.filter(
            namespace=namespace,
            name=name,
            snapshot__cluster_id=snapshot.cluster_id,
            snapshot__analysis__status=SnapshotAnalysis.Status.DONE,
        )
        .exclude(stage="")
        .order_by("-snapshot__captured_at", "-snapshot_id")
        .values("snapshot_id", "snapshot__captured_at", "stage", "reason", "severity")[
            :HISTORY_SHOWN
        ]
    )
    return History(
        [
            {
                "snapshot": r["snapshot_id"],
                "captured_at": r["snapshot__captured_at"],
                "stage": r["stage"],
                "reason": r["reason"],
                "severity": r["severity"],
            }
            for r in rows
        ]
    )


@dataclass
class Detail:
    """What a Pod's or claim's page and diagnosis API show."""

    verdict: Any  # PodVerdict or ClaimVerdict
    chain: dict[str, Any]
    explanation: dict[str, Any] | None  # explanation_head
    findings: list[Finding]
    history: History
    # For a Pod that does not use DRA, why not (diagnosis.not_using_dra), and whether that is
    # unknown (the snapshot lacks the DeviceClasses that would tell).
    not_dra: str = ""
    dra_unknown: bool = False
    # A gang member's PodGroup (pod_group), when the group is in the snapshot.
    group: PodGroupRow | None = None


def _chain_state(snapshot: Snapshot, verdict: Verdict) -> ClusterState:
    return partial_state(snapshot, objects_by_ids(verdict.chain))


def _head(verdict: Verdict) -> dict[str, Any] | None:
    if verdict.explanation_id is None:
        return None
    return Explanation.objects.values_list("head", flat=True).get(pk=verdict.explanation_id)


def pod_detail(snapshot: Snapshot, namespace: str, name: str) -> Detail | None:
    verdict = (
        PodVerdict.objects.filter(snapshot=snapshot, namespace=namespace, name=name)
        .select_related("facts")
        .first()
    )
    if verdict is None:
        return None
    state = _chain_state(snapshot, verdict)
    pod = state.pods[(namespace, name)]
    objects = [("Pod", namespace, name)] + [
        ("ResourceClaim", namespace, claim) for claim in verdict.claims
    ]
    not_dra, unknown = ("", False) if verdict.uses_dra else diagnosis.not_using_dra(state, pod)
    return Detail(
        verdict=verdict,
        chain=chains.pod_chain(state, pod),
        explanation=_head(verdict),
        findings=verdict_findings(snapshot, verdict, objects),
        history=history(PodVerdict, snapshot, namespace, name),
        not_dra=not_dra,
        dra_unknown=unknown,
        group=pod_group(snapshot, namespace, verdict.podgroup) if verdict.podgroup else None,
    )


def claim_detail(snapshot: Snapshot, namespace: str, name: str) -> Detail | None:
    verdict = (
        ClaimVerdict.objects.filter(snapshot=snapshot, namespace=namespace, name=name)
        .select_related("facts")
        .first()
    )
    if verdict is None:
        return None
    state = _chain_state(snapshot, verdict)
    claim = state.claims[(namespace, name)]
    return Detail(
        verdict=verdict,
        chain=chains.claim_chain(state, claim),
        explanation=_head(verdict) if not claim.allocated else None,
        findings=verdict_findings(snapshot, verdict, [("ResourceClaim", namespace, name)]),
        history=history(ClaimVerdict, snapshot, namespace, name),
    )


def claim_explanation(snapshot: Snapshot, namespace: str, name: str) -> dict[str, Any]:
    """The explain API's JSON for a claim (every device); raises ClaimVerdict.DoesNotExist for
    an unknown claim. An allocated claim's is its allocation, made from the claim itself."""
    verdict = (
        ClaimVerdict.objects.select_related("facts")
        .only("explanation_id", "state", "facts__chain")
        .get(snapshot=snapshot, namespace=namespace, name=name)
    )
    explanation_id = verdict.explanation_id
    if explanation_id is None:
        state = _chain_state(snapshot, verdict)
        return analysis.explanation_dict(analysis.explain(state, state.claims[(namespace, name)]))
    return _full(explanation_id)


def pod_explanation(snapshot: Snapshot, namespace: str, name: str) -> dict[str, Any] | None:
    """The explain API's JSON for a Pod: its unallocated claims explained together, the claim
    the scheduler keeps in memory for its extended resources included, as its verdict rests on
    them; None when its verdict carries no explanation (nothing waits for allocation). Raises
    PodVerdict.DoesNotExist for a Pod that is not in the snapshot or does not use DRA."""
    verdict = PodVerdict.objects.only("explanation_id").get(
        snapshot=snapshot, namespace=namespace, name=name, uses_dra=True
    )
    return None if verdict.explanation_id is None else _full(verdict.explanation_id)


def _full(explanation_id: int) -> dict[str, Any]:
    full = Explanation.objects.values_list("full", flat=True).get(pk=explanation_id)
    result: dict[str, Any] = orjson.loads(zlib.decompress(bytes(full)))
    return result


def class_claims(snapshot: Snapshot, name: str, limit: int) -> list[ClaimVerdict]:
    return list(
        claim_verdicts(snapshot)
        .filter(classes__contains=f"\n{name}\n")
        .order_by("namespace", "name")[:limit]
    )


@dataclass
class DeviceEntry:
    """A device row of one page, with the group headers that start before it."""

    row: DeviceRow
    driver: str | None = None  # a new driver starts here
    pool: dict[str, Any] | None = None  # a new pool starts here (pool_dict)
    node: str | None = None  # a new node starts here ("" for devices that are not node-local)
    node_tally: dict[str, int] | None = None


def device_entries(snapshot: Snapshot, rows: list[DeviceRow]) -> list[DeviceEntry]:
    """Rows of one page grouped driver → pool → node: each entry says which groups start; the
    pools and node counts of the page are read in two queries."""
    pools = (
        {
            (p.driver, p.pool): p.data
            for p in pool_rows(snapshot).filter(
                Q(*[Q(driver=r.driver, pool=r.pool) for r in rows], _connector=Q.OR)
            )
        }
        if rows
        else {}
    )
    nodes = node_tallies(snapshot, sorted({r.node for r in rows}))
    out = []
    last: tuple[str, str, str] | None = None
    for row in rows:
        entry = DeviceEntry(row)
        if last is None or last[0] != row.driver:
            entry.driver = row.driver
        if entry.driver is not None or last is None or last[1] != row.pool:
            entry.pool = pools.get((row.driver, row.pool))
        if entry.pool is not None or last is None or last[2] != row.node:
            entry.node = row.node
            entry.node_tally = nodes.get(row.node)
        last = (row.driver, row.pool, row.node)
        out.append(entry)
    return out


def node_tallies(snapshot: Snapshot, nodes: list[str]) -> dict[str, dict[str, int]]:
    """Per node: its devices allocated, free, … and in all."""
    out: dict[str, dict[str, int]] = {}
    counts = (
        DeviceRow.objects.filter(snapshot=snapshot, node__in=nodes)
        .values("node", "status")
        .annotate(n=Count("id"))
    )
    for c in counts:
        tally = out.setdefault(c["node"], {"total": 0})
        tally[c["status"]] = c["n"]
        tally["total"] += c["n"]
    return out


SEARCH_SHOWN = 20  # Pods, claims and nodes each, on the search page and in its API


@dataclass
class SearchResult:
    """What a name search of one snapshot finds: Pods, claims and nodes, worst first."""

    query: str
    pods: list[PodVerdict]
    claims: list[ClaimVerdict]
    nodes: list[dict[str, Any]]  # {"name", "devices", "pods"}
    pod_total: int
    claim_total: int
    node_total: int
    # The one object named exactly ("namespace/name" of a Pod, else of a claim; a node's name):
    # ("pod" | "claim" | "node", namespace, name), or None.
    exact: tuple[str, str, str] | None = None

    @property
    def total(self) -> int:
        return self.pod_total + self.claim_total + self.node_total


def snapshot_search(snapshot: Snapshot, query: str, *, limit: int = SEARCH_SHOWN) -> SearchResult:
    """The Pods, claims and nodes of the snapshot whose names contain ``query``: the first
    ``limit`` of each (Pods and claims worst stage first) and how many there are."""
    from dradash.analysis.filters import name_contains

    query = query.strip()
    order = ("stage_order", "namespace", "name")
    everyone = PodVerdict.objects.filter(snapshot=snapshot)
    pods = name_contains(everyone, "q", query)
    claims = name_contains(claim_verdicts(snapshot), "q", query)
    nodes: dict[str, dict[str, Any]] = {}
    if "/" not in query:
        for model, key in ((DeviceRow, "devices"), (PodVerdict, "pods")):
            rows = (
                model.objects.filter(snapshot=snapshot, node__icontains=query)
                .exclude(node="")
                .values("node")
                .annotate(n=Count("id"))
                .order_by()
            )
            for row in rows:
                name = row["node"]
                nodes.setdefault(name, {"name": name, "devices": 0, "pods": 0})[key] = row["n"]
    namespace, slash, name = query.partition("/")
    exact: tuple[str, str, str] | None = None
    if slash and everyone.filter(namespace=namespace, name=name).exists():
        exact = ("pod", namespace, name)
    elif slash and claim_verdicts(snapshot).filter(namespace=namespace, name=name).exists():
        exact = ("claim", namespace, name)
    elif query in nodes:
        exact = ("node", "", query)
    return SearchResult(
        exact=exact,
        query=query,
        pods=list(pods.order_by(*order)[:limit]),
        claims=list(claims.order_by(*order)[:limit]),
        nodes=[nodes[n] for n in sorted(nodes)[:limit]],
        pod_total=pods.count(),
        claim_total=claims.count(),
        node_total=len(nodes),
    )


# --- nodes and devices ------------------------------------------------------------------------


def node_detail(snapshot: Snapshot, name: str) -> NodeRow | None:
    """A node's row (``data``: dradash.dra.analysis.node_dict), None when the snapshot has no
    such Node."""
    return NodeRow.objects.filter(snapshot=snapshot, name=name).select_related("facts").first()


def node_devices(snapshot: Snapshot, name: str) -> list[DeviceRow]:
    """The devices of the node's own slices (node-local), driver → pool → name."""
    return list(
        DeviceRow.objects.filter(snapshot=snapshot, node=name)
        .select_related("facts")
        .defer("attributes", "tokens")
        .order_by("position")
    )


def node_names(snapshot_id: int) -> set[str]:
    """The names of the snapshot's Nodes (those that have a page)."""
    return set(NodeRow.objects.filter(snapshot_id=snapshot_id).values_list("name", flat=True))


def node_exists(snapshot: Snapshot, name: str) -> bool:
    return NodeRow.objects.filter(snapshot=snapshot, name=name).exists()


def device_detail(snapshot: Snapshot, driver: str, pool: str, device: str) -> DeviceRow | None:
    return (
        DeviceRow.objects.filter(snapshot=snapshot, driver=driver, pool=pool, device=device)
        .select_related("facts")
        .defer("attributes", "tokens")
        .first()
    )


def device_pool(snapshot: Snapshot, driver: str, pool: str) -> dict[str, Any] | None:
    """The device's pool (pool_dict), with its shared counters."""
    data: dict[str, Any] | None = (
        PoolRow.objects.filter(snapshot=snapshot, driver=driver, pool=pool)
        .values_list("facts__data", flat=True)
        .first()
    )
    return data


def device_timeline(
    snapshot: Snapshot, driver: str, pool: str, device: str, *, pod: str = ""
) -> list[dict[str, Any]]:
    """The device's life up to this snapshot (timeline.device_timeline over the stored records
    of the cluster's last HISTORY_SHOWN analysed snapshots that have it), oldest first;
    ``pod`` ("namespace/name"): only what concerns the device itself or that Pod."""
    rows = list(
        DeviceRow.objects.filter(
            driver=driver,
            pool=pool,
            device=device,
            snapshot__cluster_id=snapshot.cluster_id,
            snapshot__captured_at__lte=snapshot.captured_at,
            snapshot__analysis__status=SnapshotAnalysis.Status.DONE,
        )
        .order_by("-snapshot__captured_at", "-snapshot_id")
        .values(
            "snapshot_id",
            "snapshot__captured_at",
            "facts__data__claims",
            "facts__data__pods",
            "facts__data__health",
            "facts__data__taint_sources",
            "facts__data__evictions",
        )[:HISTORY_SHOWN]
    )
    history = [
        (
            r["snapshot_id"],
            r["snapshot__captured_at"],
            {key.removeprefix("facts__data__"): r[key] for key in r if key.startswith("facts__")},
        )
        for r in reversed(rows)
    ]
    moments = timeline.device_timeline(history)
    if pod:
        moments = [m for m in moments if m.pod in ("", pod)]
    return [m.as_dict() for m in moments]


def pod_timeline(snapshot: Snapshot, verdict: PodVerdict) -> list[dict[str, Any]]:
    """The life of the devices the Pod's verdict names (tainted or reported ones), merged in
    order; each moment has its ``device`` ({"driver", "pool", "device"})."""
    out = []
    pod = f"{verdict.namespace}/{verdict.name}"
    for d in verdict.detail.get("devices", [])[:8]:
        if not d.get("device"):
            continue
        ref = {"driver": d["driver"], "pool": d["pool"], "device": d["device"]}
        moments = device_timeline(snapshot, d["driver"], d["pool"], d["device"], pod=pod)
        out += [{**m, "device": ref} for m in moments]
    return sorted(out, key=lambda m: (m["time"], m["snapshot"]))


def device_history(snapshot: Snapshot, driver: str, pool: str, device: str) -> list[dict[str, Any]]:
    """The device in the cluster's analysed snapshots, newest first (the last HISTORY_SHOWN):
    {"snapshot", "captured_at", "status", "claims", "pods", "tainted"}. A snapshot without the
    device is not listed."""
    rows = (
        DeviceRow.objects.filter(
            driver=driver,
            pool=pool,
            device=device,
            snapshot__cluster_id=snapshot.cluster_id,
            snapshot__analysis__status=SnapshotAnalysis.Status.DONE,
        )
        .order_by("-snapshot__captured_at", "-snapshot_id")
        .values(
            "snapshot_id",
            "snapshot__captured_at",
            "status",
            "tainted",
            "claims",
            "facts__data__pods",
        )
    )[:HISTORY_SHOWN]
    return [
        {
            "snapshot": r["snapshot_id"],
            "captured_at": r["snapshot__captured_at"],
            "status": r["status"],
            "claims": unlines(r["claims"]),
            "pods": r["facts__data__pods"] or [],
            "tainted": r["tainted"],
        }
        for r in rows
    ]
