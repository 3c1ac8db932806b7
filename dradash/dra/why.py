"""One Pod's or claim's verdict from bundles, as ``dradash why`` prints it (DESIGN "The
terminal"): no database and no Django, the same verdict as the object's page.

``load`` builds the ClusterState of one or more bundle files as ``import_bundle`` would store
them (the same SnapshotMeta: kinds, versions, capture time), ``verdict`` diagnoses the one
object the way the analysis does for its page (dradash.dra.analysis), ``as_json`` is the
diagnosis API's JSON and ``render`` the text a terminal shows.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dradash.dra import analysis, concerns, diagnosis, findings
from dradash.dra.bundle import Source, check_usable, kind_statuses, parse_bundle
from dradash.dra.cel.dialect import NEWEST
from dradash.dra.chain import claim_chain, pod_chain
from dradash.dra.diagnosis import STAGE_TITLES, STAGES, Diagnosis
from dradash.dra.state import ClusterState, SnapshotMeta
from dradash.dra.words import (
    funnel_check,
    funnel_count_label,
    kind_plural,
    listing,
    plural,
    same_error,
)

VERSION = re.compile(r"\Av?(?P<major>1)\.(?P<minor>\d{1,3})(?:\.\d{1,4})?\Z")
FAILED_SHOWN = 10  # devices that dropped out, per request, in the text (--json has the page's)
NODES_SHOWN = 10  # nodes where the claims do not fit, in the text


class UsageError(ValueError):
    """The input cannot be used, or the object is not in it (exit status 2)."""


OLDEST = 32  # resource.k8s.io with structured parameters: v1beta1 (1.32) and later


def kubernetes_version(text: str) -> str:
    """``v1.35`` from "v1.35", "1.35" or "v1.35.2", for a release dradash knows the rules of;
    raises UsageError."""
    match = VERSION.match(text.strip())
    if match is None:
        raise UsageError(f"--version {text!r}: give a Kubernetes version such as v1.36")
    minor = int(match["minor"])
    if not OLDEST <= minor <= NEWEST:
        raise UsageError(
            f"--version {text!r}: dradash knows the rules of Kubernetes 1.{OLDEST} to "
            f"1.{NEWEST} (structured DRA); give one of those"
        )
    return f"v{match['major']}.{match['minor']}"


GATE = re.compile(r"\A(?P<name>[A-Za-z][A-Za-z0-9]{0,99})=(?P<on>true|false)\Z")


def feature_gates(text: str) -> dict[str, bool]:
    """``{"DRADeviceTaints": True}`` from "DRADeviceTaints=true,…", as kube-scheduler's
    --feature-gates takes them; raises UsageError."""
    gates = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = GATE.match(part)
        if match is None:
            raise UsageError(
                f"--feature-gates {part!r}: give NAME=true or NAME=false, separated by commas"
            )
        gates[match["name"]] = match["on"] == "true"
    return gates


def load(
    files: Iterable[tuple[str, Source]],
    *,
    max_bytes: int,
    version: str | None = None,
    gates: dict[str, bool] | None = None,
) -> ClusterState:
    """The snapshot the files make together (one import), judged by ``version`` and with
    ``gates`` over the bundle's own (SnapshotInfo). Raises BundleError."""
    bundle = parse_bundle(files, max_bytes=max_bytes)
    check_usable(bundle)
    info = bundle.info
    counts = Counter(key[0] for key in bundle.objects)
    meta = SnapshotMeta(
        cluster=str(info.get("cluster") or ""),
        captured_at=_captured_at(info.get("capturedAt")),
        server_version=version or str(info.get("serverVersion") or ""),
        api_versions=list(info.get("apiVersions") or []),
        kinds=kind_statuses(counts, info.get("kinds")),
        source="import",
        feature_gates={**(info.get("featureGates") or {}), **(gates or {})},
    )
    return ClusterState.build(bundle.objects.values(), meta)


def _captured_at(text: Any) -> str:
    """As a stored snapshot's: the bundle's capture time in UTC, else now."""
    when = None
    if isinstance(text, str) and text:
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            when = None
    if when is None:
        when = datetime.now(UTC)
    elif when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat()


@dataclass
class Verdict:
    kind: str  # "Pod" or "ResourceClaim"
    namespace: str
    name: str
    diagnosis: Diagnosis
    explanation: dict[str, Any] | None  # analysis.explanation_head, the funnel the page shows
    findings: list[findings.Finding]
    chain: dict[str, Any]

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def healthy(self) -> bool:
        return self.diagnosis.stage == "healthy"

    @property
    def unknown(self) -> bool:
        """Whether the input lacks the kinds that would say if the object is stuck at all (a
        claim without the Pods that would use it): neither healthy nor stuck."""
        return bool(self.diagnosis.unknown) and not self.healthy


def verdict(state: ClusterState, kind: str, namespace: str, name: str) -> Verdict:
    """The verdict on a Pod (``kind`` "pod") or claim ("claim"). Raises UsageError when the
    object is not in the snapshot (or the Pod does not use DRA)."""
    cache: dict[Any, Any] = {}
    if kind == "pod":
        pod = state.pods.get((namespace, name))
        if pod is None:
            raise UsageError(f"there is no Pod {namespace}/{name} in the input")
        if not pod.uses_dra:
            why, unknown = diagnosis.not_using_dra(state, pod)
            if unknown:
                raise UsageError(
                    f"Pod {namespace}/{name}: {why}. Add them: kubectl get deviceclasses -o "
                    "json > deviceclasses.json, and give that file too (-f deviceclasses.json)"
                )
            raise UsageError(f"Pod {namespace}/{name} does not use DRA: {why}")
        # As the analysis does: the allocator's answer for the Pod's claims first, which the
        # diagnosis then reads (the funnel the page shows).
        for ref in pod.claim_refs:
            if ref.claim is not None:
                analysis.explain(state, ref.claim, cache)
        d = diagnosis.diagnose_pod(state, pod, cache)
        x = d.explanation
        return Verdict(
            "Pod",
            namespace,
            name,
            d,
            _head(x),
            _findings(state, concerns.pod_objects(pod, x, {})),
            pod_chain(state, pod),
        )
    claim = state.claims.get((namespace, name))
    if claim is None:
        raise UsageError(f"there is no ResourceClaim {namespace}/{name} in the input")
    users = {(p.namespace, p.name): p for p in claim.pods}
    users.update({(c.pod.namespace, c.pod.name): c.pod for c in claim.consumers if c.pod})
    x = analysis.explain(state, claim, cache)  # what the claim's page shows, unless allocated
    pods = {key: diagnosis.diagnose_pod(state, p, cache) for key, p in users.items()}
    d = analysis.claim_in_use(claim, diagnosis.diagnose_claim(state, claim, pods, cache), pods)
    return Verdict(
        "ResourceClaim",
        namespace,
        name,
        d,
        None if claim.allocated else _head(x),
        _findings(state, concerns.claim_objects(claim, x, {})),
        claim_chain(state, claim),
    )


def _head(x: Any) -> dict[str, Any] | None:
    return analysis.explanation_head(x) if x is not None else None


def _findings(state: ClusterState, objects: list[concerns.ObjectKey]) -> list[findings.Finding]:
    """The snapshot's findings that concern the object (dradash.dra.concerns), as its page
    lists them."""
    found = findings.find(state)
    return [found[i] for i in concerns.FindingIndex(state, found).about(objects)]


def as_json(v: Verdict) -> dict[str, Any]:
    """The diagnosis API's JSON (DESIGN "REST API"); a bundle has no other snapshots, so its
    history is empty."""
    return {
        **analysis.diagnosis_dict(v.diagnosis),
        "findings": [f.as_dict() for f in v.findings],
        "chain": v.chain,
        "history": [],
    }


# --- text ---------------------------------------------------------------------------------

STAGE_COLOURS = {
    "pod-pending": "yellow",
    "claim-unallocated": "red",
    "allocated-not-bound": "yellow",
    "device-not-prepared": "red",
    "workload-failing": "red",
    "healthy": "green",
}
SEVERITY_COLOURS = {"error": "red", "warning": "yellow", "info": "blue"}
ANSI = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34"}


# What a terminal would act on or not show, in text from a cluster: C0 and C1 control
# characters (escape sequences clear the screen, set the window title, open OSC 8 hyperlinks),
# DEL, and the invisible format characters that reorder or hide text (bidi controls, zero
# width). Every such string is printed with these escaped, colour or not.
_INVISIBLE = r"\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff"
_UNSAFE = re.compile(rf"[\x00-\x1f{_INVISIBLE}]")
_UNSAFE_IN_JSON = re.compile(rf"[{_INVISIBLE}]")  # JSON escapes C0 characters in strings itself
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on shown escaped (\\x1b, \\u202e)."""
    return _UNSAFE.sub(lambda m: _NAMED.get(c := m.group()) or _escaped(c), str(text))


def _escaped(c: str) -> str:
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def json_text(v: Verdict) -> str:
    """``as_json`` as text for a terminal: the characters terminal_safe escapes are \\u escapes
    (JSON escapes C0 characters itself; the others are written so too: the same JSON)."""
    text = json.dumps(as_json(v), indent=2, ensure_ascii=False)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


class _Style:
    """Cluster text made terminal_safe, in colour if asked (the only escape sequences printed)."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, *styles: str) -> str:
        text = terminal_safe(text)
        if not self.colour or not styles:
            return text
        codes = ";".join(ANSI[s] for s in styles)
        return f"\033[{codes}m{text}\033[0m"


def render(v: Verdict, *, colour: bool = False) -> str:
    """The verdict as the object's page shows it: the stage bar, stage and reason, summary,
    the allocator's funnel, evidence, next steps and findings."""
    s = _Style(colour)
    d = v.diagnosis
    tone = STAGE_COLOURS.get(d.stage, "")
    if v.unknown:  # not a verdict: how far the object got, and what the input lacks
        missing = listing([kind_plural(k) for k in d.unknown], 5)
        head = f"{s('unknown', 'bold')} ({s(d.reason)}): {s(d.stage)} so far; missing {missing}"
    else:
        head = f"{s(d.stage, 'bold', tone)} ({s(d.reason)})"
    out = [
        f"{s(v.kind, 'dim')} {s(v.ref, 'bold')}",
        head,
        _stage_bar(d.stage, s, unknown=v.unknown),
        "",
        s(d.summary),
    ]
    if d.alone is not None:  # a gang member: what it would get alone
        alone = d.alone
        out += [
            "",
            f"{s('Judged alone', 'dim')}: {s(alone.stage)} ({s(alone.reason)}) {s(alone.summary)}",
        ]
    if v.explanation is not None:
        out += ["", *_funnel(v.explanation, d.summary, s)]
    out += ["", s("Evidence", "bold")]
    for e in d.evidence:
        where = f"{e.kind} {e.namespace + '/' if e.namespace else ''}{e.name} · {e.field}"
        out += [f"  • {s(where, 'dim')}", f"    {s(e.detail)}"]
    if not d.evidence:
        out.append("  —")
    out += ["", s("Next steps", "bold")]
    for i, step in enumerate(d.next_steps, 1):
        out.append(f"  {i}. {s(step)}")
    if not d.next_steps:
        out.append("  Nothing to do.")
    if v.findings:
        out += ["", s("Findings", "bold")]
        for f in v.findings:
            code = s(f"[{f.severity}] {f.code}", SEVERITY_COLOURS.get(f.severity, ""))
            out.append(f"  • {code}: {s(f.message)}")
            if f.next_step:
                out.append(f"    {s(f.next_step, 'dim')}")
    return "\n".join(out) + "\n"


def _stage_bar(stage: str, s: _Style, *, unknown: bool = False) -> str:
    """The troubleshooting stages, the object's marked: ✓ passed, ✗ stuck here, ● healthy,
    ? unknown whether stuck here (the input lacks what would say)."""
    current = STAGES.index(stage)
    parts = []
    for i, st in enumerate(STAGES):
        title = STAGE_TITLES[st]
        if i < current:
            parts.append(s(f"✓ {title}", "green"))
        elif i == current and unknown:
            parts.append(s(f"? {title}", "bold"))
        elif i == current:
            mark = "●" if st == "healthy" else "✗"
            parts.append(s(f"{mark} {title}", "bold", STAGE_COLOURS.get(st, "")))
        else:
            parts.append(s(title, "dim"))
    return "  " + " › ".join(parts)


def _funnel(x: dict[str, Any], summary: str, s: _Style) -> list[str]:
    if x.get("allocatable"):
        head = s(f"would allocate now on {x.get('node')}", "green")
    elif x.get("allocatable") is None:
        head = s("stops with an error", "red")
    else:
        head = s("cannot allocate", "red")
    out = [f"{s('Allocator', 'bold')}: {head}"]
    error = x.get("error")
    if error and error not in summary:
        out.append(f"  {s('error', 'red')}: {s(error)}")
    nodes = x.get("nodes") or {}
    outcomes = nodes.get("outcomes") or {}
    if outcomes.get("timeout"):  # where the search ran out, every node's answer counts
        counts = ", ".join(f"{n} {outcome}" for outcome, n in outcomes.items())
        searched = "" if nodes.get("complete") else f" (of {nodes.get('eligible')})"
        out.append(f"  on the nodes the Pod may use{searched}: {counts}")
    for r in x.get("requests") or []:
        need = r.get("need")
        needs = f", needs {need} device{'' if need == 1 else 's'}" if need is not None else ""
        out.append(f"  request {s(r['name'])}{needs}")
        short = r.get("short_step", r.get("empty_step"))
        counts = r.get("funnel") or []
        width = max((len(str(f["remaining"])) for f in counts), default=1)
        for f in counts:
            n = str(f["remaining"]).rjust(width)
            label = funnel_count_label(f["step"], f["remaining"])
            if f["step"] == short:
                out.append("    " + s(f"{n}  {label}  ← too few here", "bold", "red"))
            elif f["remaining"] == 0:
                out.append("    " + s(f"{n}  {label}", "dim"))
            else:
                out.append(f"    {n}  {s(label)}")
        if r.get("node"):
            note = f"    (“enough on one node” counts node {r['node']}, the node that got furthest)"
            out.append(s(note, "dim"))
        failed = r.get("failed") or []
        groups = r.get("dropped")
        if failed and groups:
            total = r.get("failed_total", len(failed))
            out.append(
                f"    {total} device{'' if total == 1 else 's'} dropped out, by the first check "
                "each fails:"
            )
            width = max(len(str(g["devices"])) for g in groups)
            for g in groups:
                why = g.get("why") or ""
                why = "the error above" if same_error(why, error) else why
                check = funnel_check(g["step"])
                n = str(g["devices"]).rjust(width)
                out.append(f"      {n}  {check}{s(': ' + why, 'dim') if why else ''}")
            more = r.get("dropped_total", len(groups)) - len(groups)
            if more > 0:
                out.append(s(f"      … and {plural(more, 'more group')}", "dim"))
        elif failed:  # an explanation stored before devices were grouped
            total = r.get("failed_total", len(failed))
            out.append(
                f"    {total} device{'' if total == 1 else 's'} dropped out, "
                "each at the first check it fails:"
            )
            shown = failed[:FAILED_SHOWN]
            names = [s(f"{dc['pool']}/{dc['device']}") for dc in shown]
            width = max(len(name) for name in names)
            for dc, name in zip(shown, names, strict=True):
                device = name.ljust(width)
                why = dc.get("detail") or ""
                why = "the error above" if same_error(why, error) else why
                check = funnel_check(dc["failed_step"])
                out.append(f"      {device}  {check}{s(': ' + why, 'dim') if why else ''}")
            if total > FAILED_SHOWN:
                out.append(s(f"      … and {total - FAILED_SHOWN} more", "dim"))
    out += _node_answers(nodes, error, s)
    return out


def _node_answers(nodes: dict[str, Any], error: str | None, s: _Style) -> list[str]:
    """The allocator's answer on the nodes where it is not a fit, each with why."""
    shown = nodes.get("not_fit") or []
    if not shown:
        return []
    outcomes = nodes.get("outcomes") or {}
    counts = ", ".join(f"{n} {outcome}" for outcome, n in outcomes.items())
    why = nodes.get("nofit_why") or []
    if why:
        counts += " (" + ", ".join(f"{n} {label}" for label, n in why) + ")"
    where = (
        f"each of the {nodes.get('eligible')} nodes the Pod may use"
        if nodes.get("complete")
        else "the nodes the allocator tried"
    )
    # (where a search ran out, the counts are printed above the funnel already)
    out = [] if outcomes.get("timeout") else [f"  On {where}: {counts}"]
    names = [s(n["node"]) for n in shown[:NODES_SHOWN]]
    width = max(len(name) for name in names)
    for n, name in zip(shown, names, strict=False):
        text = n.get("why") or n.get("error") or ""
        text = "the error above" if same_error(text, error) else text
        out.append(
            f"    {name.ljust(width)}  {n['outcome']}{s(': ' + text, 'dim') if text else ''}"
        )
    more = (nodes.get("not_fit_total") or len(shown)) - len(names)
    if more > 0:
        out.append(s(f"    … and {plural(more, 'more node')}", "dim"))
    return out
