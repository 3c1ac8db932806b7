"""Template filters that turn Kubernetes structures into short readable text (always escaped)."""

from __future__ import annotations

import json
import re
from typing import Any

from django import template
from django.http import QueryDict
from django.utils import timezone
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe
from django.utils.timesince import timesince

register = template.Library()

BADGES = {
    # claim states
    "pending": "warn",
    "allocated": "info",
    "reserved": "ok",
    "deleting": "bad",
    # pod phases
    "Running": "ok",
    "Succeeded": "ok",
    "Pending": "warn",
    "Failed": "bad",
    "Unknown": "muted",
    # claim reference resolution
    "ok": "ok",
    "claim-missing": "bad",
    "template-missing": "bad",
    "not-created": "warn",
    "not-owned": "bad",
    "not-needed": "muted",
    "invalid": "bad",
    # snapshot status and kind status
    "complete": "ok",
    "partial": "warn",
    "absent": "muted",
    "not-served": "muted",
    "forbidden": "bad",
    "not-found": "bad",
    "error": "bad",
    # runs
    "queued": "muted",
    "running": "info",
    "succeeded": "ok",
    "failed": "bad",
}


@register.filter
def badge(value: Any) -> str:
    """CSS modifier for a status word."""
    return BADGES.get(str(value), "muted")


STAGE_BADGES = {
    "pod-pending": "warn",
    "claim-unallocated": "bad",
    "allocated-not-bound": "warn",
    "device-not-prepared": "bad",
    "workload-failing": "bad",
    "healthy": "ok",
}


@register.filter
def stage_badge(stage: Any) -> str:
    return STAGE_BADGES.get(str(stage), "muted")


def _field(row: Any, name: str) -> Any:
    return row.get(name) if isinstance(row, dict) else getattr(row, name, None)


@register.filter
def verdict_badge(row: Any) -> str:
    """A verdict's badge (a PodVerdict or ClaimVerdict, or a dict with stage and severity):
    grey where it is unknown (the snapshot lacks the kinds that would say whether it is
    stuck), else its stage's."""
    if _field(row, "severity") == "unknown":
        return "muted"
    return stage_badge(_field(row, "stage"))


@register.filter
def kinds_text(kinds: Any) -> str:
    """Kinds as a sentence names them: ``["Pod", "Node"]`` as "Pods and Nodes"."""
    from dradash.dra.words import kind_plural, listing

    return listing([kind_plural(str(k)) for k in kinds or []], 5)


@register.filter
def verdict_label(row: Any) -> str:
    """What a verdict's badge says: "unknown" where it is, else its stage."""
    if _field(row, "severity") == "unknown":
        return "unknown"
    return str(_field(row, "stage") or "")


# A gang's state (dradash.dra.gangs.Gang.state) and a member's placement in it.
GANG_BADGES = {
    "waiting": "warn",
    "does-not-fit": "bad",
    "unknown": "warn",
    "fits": "info",
    "scheduled": "ok",
    "running": "ok",
    "not-tried": "muted",
    "basic": "muted",
}


@register.filter
def gang_badge(state: Any) -> str:
    return GANG_BADGES.get(str(state), "muted")


@register.filter
def severity_badge(severity: Any) -> str:
    return {"error": "bad", "warning": "warn", "info": "info"}.get(str(severity), "muted")


@register.simple_tag
def stage_steps(current: str) -> list[tuple[str, str, str]]:
    """(stage, title, "passed" | "current" | "ahead") for the step bar of a verdict."""
    from dradash.dra.diagnosis import STAGE_TITLES, STAGES

    index = STAGES.index(current)
    return [
        (
            stage,
            STAGE_TITLES[stage],
            "passed" if i < index else "current" if i == index else "ahead",
        )
        for i, stage in enumerate(STAGES)
    ]


@register.filter
def funnel_label(step: Any) -> str:
    """The name of a check of the allocator's funnel ("fails at: taints tolerated")."""
    from dradash.dra.words import funnel_check

    return funnel_check(str(step))


@register.filter
def same_error(detail: Any, error: Any) -> bool:
    """A device's reason the same as the allocator's error, but for the device it names."""
    from dradash.dra.words import same_error as same

    return same(detail, error)


@register.filter
def funnel_count_label(entry: Any) -> str:
    """What a count of the funnel ({"step", "remaining"}) counts."""
    from dradash.dra.words import funnel_count_label as label

    return label(str(entry.get("step")), int(entry.get("remaining") or 0))


@register.filter
def pretty(value: Any) -> str:
    """Indented JSON of a structure (escaped by the template like any other string)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@register.filter
def seconds(value: Any) -> str:
    """A number of seconds, whatever its sign, as ``9 min 5 s`` (dradash.dra.health.duration)."""
    from dradash.dra.health import duration

    try:
        return duration(int(value))
    except (TypeError, ValueError):
        return ""


@register.filter
def selector_text(selector: Any) -> str:
    """A core/v1 NodeSelector as a short expression: ``a In (x, y) || metadata.name = n``."""
    if not isinstance(selector, dict):
        return ""
    terms = []
    for term in selector.get("nodeSelectorTerms") or []:
        if not isinstance(term, dict):
            continue
        parts = [
            _requirement(r)
            for key in ("matchExpressions", "matchFields")
            for r in term.get(key) or []
            if isinstance(r, dict)
        ]
        terms.append(" && ".join(parts) or "(empty term)")
    return " || ".join(terms) or "(no terms)"


def _requirement(req: dict[str, Any]) -> str:
    key, op = req.get("key", "?"), req.get("operator", "?")
    values = [str(v) for v in req.get("values") or []]
    if op in ("Exists", "DoesNotExist"):
        return f"{key} {op}"
    if op == "In" and len(values) == 1:
        return f"{key} = {values[0]}"
    return f"{key} {op} ({', '.join(values)})"


@register.filter
def taint_text(taint: Any) -> str:
    if not isinstance(taint, dict):
        return ""
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key', '?')}{value}:{taint.get('effect', '?')}"


@register.filter
def toleration_text(toleration: Any) -> str:
    if not isinstance(toleration, dict):
        return ""
    key = toleration.get("key") or "*"
    op = toleration.get("operator") or "Equal"
    value = f"={toleration['value']}" if op == "Equal" and toleration.get("value") else ""
    effect = toleration.get("effect") or "any effect"
    seconds = toleration.get("tolerationSeconds")
    extra = f" for {seconds}s" if seconds is not None else ""
    return f"{key}{' exists' if op == 'Exists' else value} → {effect}{extra}"


@register.filter
def kv(mapping: Any) -> list[tuple[str, Any]]:
    """Sorted items of a mapping, for loops."""
    return sorted(mapping.items()) if isinstance(mapping, dict) else []


@register.filter
def key_attributes(device: Any) -> list[tuple[str, Any]]:
    from dradash.dra.matching import key_attributes as pick

    return pick(device)


@register.filter
def capacities(device: Any) -> list[tuple[str, Any]]:
    from dradash.dra.matching import capacities as pick

    return pick(device)


@register.filter
def published(device: Any) -> dict[str, Any]:
    """Everything a device publishes, for a "+N more" under its key attributes: ``attributes``
    and ``capacity`` (name as published, value as text) and ``more``, how many of them the key
    attributes and the capacity column leave out."""
    from dradash.dra.inventory import attribute_text
    from dradash.dra.matching import capacities as shown_capacities
    from dradash.dra.matching import key_attributes as pick

    attributes = [
        (name, attribute_text(value))
        for name, value in sorted(device.attributes.items())
        if isinstance(value, dict)
    ]
    capacity = [
        (name, str(value.get("value", "")))
        for name, value in sorted(device.capacity.items())
        if isinstance(value, dict)
    ]
    shown = len(pick(device)) + len(shown_capacities(device))
    return {
        "attributes": attributes,
        "capacity": capacity,
        "more": max(0, len(attributes) + len(capacity) - shown),
    }


@register.filter
def head(items: Any, n: int) -> Any:
    """The first n items (slice with a number from a variable)."""
    return items[: int(n)]


@register.simple_tag
def query_params(**params: Any) -> str:
    """A query string of the given parameters, empty ones left out."""
    return query({}, **params)


@register.simple_tag
def query(params: dict[str, Any], **changes: Any) -> str:
    """The query string of the current filters with some values changed (empty ones dropped)."""
    q = QueryDict(mutable=True)
    for key, value in {**params, **changes}.items():
        if value not in (None, ""):
            q[key] = str(value)
    return q.urlencode()


def _tally(stored: Any) -> Any:
    """An inventory Tally from its stored dict (dradash.dra.analysis.tally_dict)."""
    from dradash.dra.inventory import STATUSES, Tally

    if not isinstance(stored, dict):
        return stored
    return Tally(**{k: int(stored.get(k) or 0) for k in (*STATUSES, "tainted_any")})


@register.filter
def tally_bar(tally: Any, width: int = 160) -> str:
    """A stored inventory tally as an SVG bar: allocated, unusable, tainted and free devices."""
    from dradash.ui.charts import tally_bar as bar

    return bar(_tally(tally), int(width))


@register.filter
def fraction_bar(counter: Any) -> str:
    """A shared counter of a stored pool ({"name", "consumed", "total", "fraction"}) as an SVG
    bar of how much is consumed."""
    from dradash.ui.charts import fraction_bar as bar

    title = f"{counter['name']}: {counter['consumed']} of {counter['total']} consumed"
    return bar(float(counter.get("fraction") or 0), title=title)


@register.simple_tag
def node_chart(nodes: Any, snapshot_id: int, title: str) -> str:
    """Bars of [node, stored tally], each linking to the node's page (to the devices list
    filtered by that node for a name no page can have)."""
    from urllib.parse import urlencode

    from django.urls import reverse

    from dradash.ui.charts import node_chart as chart
    from dradash.ui.links import node_url

    devices = reverse("device-list", args=[snapshot_id])

    def href(name: str) -> str:
        return node_url(snapshot_id, name) or f"{devices}?{urlencode({'node': name})}"

    pairs = [(name, _tally(tally)) for name, tally in nodes]
    return chart(pairs, href, title=title)


@register.filter
def device_display(row: Any) -> dict[str, Any]:
    """What the devices page shows of a stored device (dradash.dra.analysis.device_display)."""
    from dradash.dra.analysis import device_display as display

    return display(row)


@register.filter
def device_details(page: Any) -> str:
    """A stored device's attributes, capacity and counters (device_display) as a
    collapsed list: built here rather than in the template, which would take ~10 nodes per
    attribute on a page of 100 devices."""
    attributes = page.get("attribute_list") or []
    capacity = page.get("capacity_list") or []
    holders = len(page.get("holders") or [])
    rows = [
        format_html("<dt>{}</dt><dd>{}</dd>", wbr(name), wbr(value)) for name, value in attributes
    ]
    for name, value, consumed in capacity:
        used = (
            format_html(
                ' <span class="small">({} consumed by {} allocation{})</span>',
                consumed,
                holders,
                "" if holders == 1 else "s",
            )
            if consumed
            else ""
        )
        rows.append(
            format_html(
                '<dt>{} <span class="muted">capacity</span></dt><dd>{}{}</dd>',
                wbr(name),
                wbr(value),
                used,
            )
        )
    for counter_set, name, value in page.get("counter_list") or []:
        rows.append(
            format_html(
                '<dt>{}/{} <span class="muted">consumes</span></dt><dd>{}</dd>',
                wbr(counter_set),
                wbr(name),
                wbr(value),
            )
        )
    summary = format_html(
        "{} attribute{}, {} capacit{}",
        len(attributes),
        "" if len(attributes) == 1 else "s",
        len(capacity),
        "y" if len(capacity) == 1 else "ies",
    )
    return format_html(
        '<details class="attrs-box"><summary>{}</summary><dl class="attrs">{}</dl></details>',
        summary,
        mark_safe("".join(rows)),  # noqa: S308 (each row was built by format_html)
    )


DEVICE_BADGES = {"allocated": "info", "free": "ok", "tainted": "warn", "unusable": "bad"}


@register.filter
def device_badge(status: Any) -> str:
    """CSS modifier for an inventory status (dradash.dra.inventory)."""
    return DEVICE_BADGES.get(str(status), "muted")


@register.simple_tag
def snapshot_time(snapshot: Any) -> str:
    """ "captured <time>" when the snapshot's source says when the cluster was in that state,
    else "imported at <time>" (a bundle without a capture time)."""
    when = snapshot.captured_at
    verb = "captured" if getattr(snapshot, "captured_at_known", True) else "imported at"
    return format_html(
        '{} <time datetime="{}">{} UTC</time> <span class="age" title="{} ago">{} ago</span>',
        verb,
        when.isoformat(),
        when.strftime("%Y-%m-%d %H:%M:%S"),
        timesince(when, depth=2),
        age_at(when.isoformat(), timezone.now()),
    )


@register.filter
def stage_counts_text(stages: Any) -> str:
    """[[stage, title, n], …] as "3 pod-pending, 4 claim-unallocated" (stages with Pods)."""
    return ", ".join(f"{n} {stage}" for stage, _, n in stages or [] if n) or "no Pods using DRA"


_BREAK_AFTER = re.compile(r"([./_=:-])(?=[^./_=:-])")


@register.filter
def wbr(value: Any) -> str:
    """A name that may wrap after its dots, slashes, hyphens, underscores, equals signs and
    colons, never inside a word: ``gpu.example.com`` breaks as ``gpu.|example.|com``, not as
    ``gpu.example.co|m``."""
    text = conditional_escape(value)  # a joined list comes escaped already
    return mark_safe(_BREAK_AFTER.sub(r"\1<wbr>", str(text)))  # noqa: S308 (escaped)


@register.simple_tag
def sort_header(filters: Any, url: str, column: str, label: str, default: str = "stage") -> str:
    """A list's column header that sorts by the column on click (``?sort=column``, again for
    ``-column``), keeping the other filters; the column the list is sorted by says so
    (``aria-sort``, ▲ or ▼). Without ``sort`` the list is sorted by ``default``."""
    current = str((filters or {}).get("sort") or default)
    descending = current.startswith("-")
    active = current.lstrip("-") == column
    target = f"-{column}" if active and not descending else column
    params = {k: v for k, v in (filters or {}).items() if k not in ("sort", "page")}
    href = f"{url}?{query(params, sort=target)}"
    state = ("descending" if descending else "ascending") if active else "none"
    mark = ("▼" if descending else "▲") if active else ""
    return format_html(
        '<th aria-sort="{}"><a class="sort" href="{}" hx-get="{}" hx-target="#results" '
        'hx-swap="outerHTML" hx-push-url="true" title="Sort by {}">{}{}</a></th>',
        state,
        href,
        href,
        label.lower(),
        label,
        format_html(' <span class="sort-mark" aria-hidden="true">{}</span>', mark) if mark else "",
    )


@register.filter
def age_at(created: str, moment: Any) -> str:
    """kubectl's AGE of an object created at ``created`` (RFC 3339) as of ``moment`` (a
    snapshot's capture time): "45s", "12m", "5h", "3d"; "—" when unknown."""
    from django.utils.dateparse import parse_datetime

    try:
        when = parse_datetime(created or "")
    except ValueError:
        when = None
    if when is None or moment is None or timezone.is_naive(when):
        return "—"
    seconds = int((moment - when).total_seconds())
    if seconds < 0:
        return "—"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size or (unit == "m" and seconds >= size):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@register.filter
def kube_time(value: str) -> str:
    """A Kubernetes timestamp (RFC 3339 text) as the pages show times: "2026-11-20 10:05:00 UTC"
    in a <time> element; the text as it is when it is not one."""
    from dradash.ui.links import time_html

    return time_html(value or "") or value or ""
