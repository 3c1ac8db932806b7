"""Names of objects in sentences dradash writes (findings, diff changes, verdicts), linked to
the pages that show them: Pods, claims and PodGroups (gangs) to their pages, DeviceClasses to
theirs, nodes and devices to theirs, pools to the devices list filtered to them. A node is
linked only where the name is one of the snapshot's Nodes (``nodes``): "no node the Pod may use"
names none. ``reverse`` keeps every
link under the share-link prefix when the page is read through one.

The sentences come from dradash's own words ("ResourceClaim ns/name", "Pool driver/pool",
"node name", "driver/pool/device", "allocated to ns/claim"), and the objects a finding names
come with it, so the names are found by text; everything else stays escaped text.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlencode

from django.urls import get_script_prefix, reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

PAGES = {
    "Pod": "pod-detail",
    "ResourceClaim": "claim-detail",
    "DeviceClass": "class-detail",
    "PodGroup": "podgroup-detail",
    "Node": "node-detail",
}
NAME = r"[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?"  # a Kubernetes (DNS subdomain) name
LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
DRIVER = rf"{LABEL}(?:\.{LABEL})+"  # a driver's name has dots
# A name ends where no name character follows (a full stop ends a sentence, not a name).
END = r"(?![A-Za-z0-9_/-]|\.[A-Za-z0-9])"
START = r"(?<![A-Za-z0-9_./-])"
POOL = re.compile(rf"\b[Pp]ool {START}(?P<driver>{NAME})/(?P<pool>{NAME}(?:/{NAME})*){END}")
DEVICE = re.compile(
    rf"{START}(?P<driver>{DRIVER})/(?P<pool>{NAME}(?:/{NAME})*)/(?P<device>{NAME}){END}"
)
# "node a", "nodes a, b and c": each name of a list is followed by another or ends it.
LISTED = r"(?=, |,? and |[.;:)]|\s\(|$)"
NODES = re.compile(
    rf"\bnode (?P<one>{NAME}){END}"
    rf"|\bnodes (?P<list>{NAME}{LISTED}(?:(?:, |,? and ){NAME}{LISTED})*)"
)
LIST_ITEM = re.compile(rf"{START}{NAME}{END}")
BARE_POD = re.compile(rf"\bPod {START}(?P<name>{NAME}){END}")
# The allocator's words for a device another claim holds: "allocated to ns/claim, ns/claim",
# and the verdicts' "held by 10 claims: ns/a (2), ns/b (2) and 7 more".
_HELD = rf"{NAME}/{NAME}{END}(?: \(\d+\))?"
HOLDERS = re.compile(
    rf"\b(?:allocated to|held by(?: \d+ claims?:)?) (?P<list>{_HELD}(?:(?:, |,? and ){_HELD})*)"
)
HOLDER = re.compile(rf"(?P<namespace>{NAME})/(?P<name>{NAME}){END}")
# A Kubernetes timestamp as the core's sentences quote it from a condition or a taint.
TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})(?![\w:.])")

Span = tuple[int, int, str]


# placeholders in a page's address, filled per name
NS, NM, DRV, POOL_NAME = "__namespace__", "__name__", "__driver__", "__pool__"


@lru_cache(maxsize=64)
def _pattern(prefix: str, page: str, snapshot_id: int, names: tuple[str, ...]) -> str:
    """The address of a page with placeholders for its namespace and name: ``reverse`` once
    per page and snapshot (it costs ~50 µs; an overview may link thousands of names). The
    script prefix is part of the key: under a share link it is the link's."""
    return reverse(page, args=[snapshot_id, *names])


def _url(kind: str, namespace: str, name: str, snapshot_id: int) -> str | None:
    page = PAGES.get(kind)
    if page is None or not name or "/" in name or "/" in namespace:
        return None
    pattern = _pattern(get_script_prefix(), page, snapshot_id, (NS, NM) if namespace else (NM,))
    return pattern.replace(NS, quote(namespace)).replace(NM, quote(name))


def device_url(snapshot_id: int, driver: str, pool: str, device: str) -> str | None:
    """The device's page (a pool's name may hold slashes); None for names no page can have."""
    if not (driver and pool and device) or "/" in driver or "/" in device:
        return None
    if pool.startswith("/") or pool.endswith("/") or "//" in pool:
        return None
    pattern = _pattern(get_script_prefix(), "device-detail", snapshot_id, (DRV, POOL_NAME, NM))
    return (
        pattern.replace(DRV, quote(driver))
        .replace(POOL_NAME, quote(pool, safe="/"))
        .replace(NM, quote(device))
    )


def node_url(snapshot_id: int, name: str) -> str | None:
    """The node's page."""
    return _url("Node", "", name, snapshot_id)


def _devices(snapshot_id: int, **filters: str) -> str:
    base = _pattern(get_script_prefix(), "device-list", snapshot_id, ())
    return f"{base}?{urlencode(filters)}"


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/")


def _occurrences(text: str, needle: str) -> list[int]:
    """Where ``needle`` stands as a whole name in ``text`` (START and END, without a regular
    expression per name: an overview may link thousands)."""
    out = []
    at = text.find(needle)
    while at >= 0:
        end = at + len(needle)
        before = text[at - 1] if at else " "
        after, next_ = text[end : end + 1], text[end + 1 : end + 2]
        if (
            before not in _NAME_CHARS
            and before != "."
            and after not in _NAME_CHARS
            and not (after == "." and next_ and next_.isalnum())
        ):
            out.append(at)
        at = text.find(needle, at + 1)
    return out


def spans(
    text: str,
    refs: Iterable[Mapping[str, Any]],
    snapshot_id: int,
    namespace: str = "",
    classes: Iterable[str] = (),
    nodes: Container[str] = (),
) -> list[Span]:
    """(start, end, url) of the names in ``text`` that have a page, not overlapping. With a
    ``namespace``, "Pod name" is that namespace's Pod (a claim's consumers). DeviceClasses are
    linked when they are among ``classes`` (a missing class has no page), nodes when they are
    among ``nodes`` (the snapshot's Nodes)."""
    found: list[Span] = []
    existing = set(classes)
    for ref in refs:
        kind, ns, name = ref.get("kind", ""), ref.get("namespace", ""), ref.get("name", "")
        if kind == "DeviceClass" and name not in existing:
            continue
        if kind == "Node" and name not in nodes:
            continue
        url = _url(kind, ns, name, snapshot_id)
        if url is None:
            continue
        needles = [f"{ns}/{name}"] if ns else []
        needles.append(name)  # "shared by 3 Pods (pod0, pod1 and pod2)"
        for needle in needles:
            found += [(start, start + len(needle), url) for start in _occurrences(text, needle)]
    if namespace:
        for m in BARE_POD.finditer(text):
            if not any(c.isdigit() or c in "-." for c in m["name"]):
                continue  # "the Pod on every node": an English word, not a Pod's name
            url = _url("Pod", namespace, m["name"], snapshot_id)
            if url is not None:
                found.append((m.start("name"), m.end("name"), url))
    for m in HOLDERS.finditer(text):
        offset = m.start("list")
        for item in HOLDER.finditer(m["list"]):
            url = _url("ResourceClaim", item["namespace"], item["name"], snapshot_id)
            if url is not None:
                found.append((offset + item.start(), offset + item.end(), url))
    for m in DEVICE.finditer(text):
        url = device_url(snapshot_id, m["driver"], m["pool"], m["device"])
        if url is not None:
            found.append((m.start("driver"), m.end("device"), url))
    for m in POOL.finditer(text):
        url = _devices(snapshot_id, driver=m["driver"], pool=m["pool"])
        found.append((m.start("driver"), m.end("pool"), url))
    for m in NODES.finditer(text):
        if m["one"]:
            if m["one"] in nodes and (url := node_url(snapshot_id, m["one"])):
                found.append((m.start("one"), m.end("one"), url))
            continue
        offset = m.start("list")
        for item in LIST_ITEM.finditer(m["list"]):
            if item[0] in nodes and (url := node_url(snapshot_id, item[0])):
                found.append((offset + item.start(), offset + item.end(), url))
    # Leftmost, then longest: "ns/claim" wins over the bare "claim" inside it.
    found.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out: list[Span] = []
    end = 0
    for start, stop, url in found:
        if start >= end:
            out.append((start, stop, url))
            end = stop
    return out


def time_html(value: str) -> SafeString | None:
    """A Kubernetes timestamp (RFC 3339) as the pages show times, "2026-11-20 10:05:00 UTC" in
    a <time> element; None when ``value`` is not one."""
    try:
        when = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    when = when.astimezone(UTC)
    return format_html(
        '<time datetime="{}">{} UTC</time>', when.isoformat(), when.strftime("%Y-%m-%d %H:%M:%S")
    )


def _plain(text: str) -> str:
    """Text between links, escaped, with its timestamps as the pages show times."""
    parts, at = [], 0
    for m in TIME.finditer(text):
        if (html := time_html(m[0])) is not None:
            parts += [escape(text[at : m.start()]), html]
            at = m.end()
    parts.append(escape(text[at:]))
    return "".join(parts)


def linked(
    text: str,
    refs: Iterable[Mapping[str, Any]],
    snapshot_id: int,
    namespace: str = "",
    classes: Iterable[str] = (),
    nodes: Container[str] = (),
) -> SafeString:
    """``text`` as HTML, the names in it that have a page linked, its times formatted."""
    parts, at = [], 0
    for start, stop, url in spans(text, refs, snapshot_id, namespace, classes, nodes):
        parts.append(_plain(text[at:start]))
        parts.append(format_html('<a href="{}">{}</a>', url, text[start:stop]))
        at = stop
    parts.append(_plain(text[at:]))
    return mark_safe("".join(parts))  # noqa: S308 (each part escaped or built by format_html)
