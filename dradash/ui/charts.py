"""Small server-rendered SVG charts (no script, no inline style, every label escaped).

Colours come from CSS classes in static/dradash/dradash.css (``seg-<status>``), so the pages
keep a Content-Security-Policy without ``style-src 'unsafe-inline'``. Cluster strings (node
names, class names) are hostile input: they go through ``escape`` before they reach the markup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# What each status segment means, for tooltips and legends (dradash.dra.inventory STATUSES).
STATUS_LABELS = {
    "allocated": "allocated",
    "unusable": "unusable (in a pool the allocator skips)",
    "tainted": "tainted, not allocated",
    "free": "free",
    "used": "consumed",
    "left": "left",
}
LABEL_CHARS = 32  # longer labels are shortened on the chart; the tooltip has them whole
CHAR_WIDTH = 7.3  # of a label character at the 12px monospace font of dradash.css


def short_labels(labels: Sequence[str], limit: int = LABEL_CHARS) -> list[str]:
    """Labels of at most ``limit`` characters that still tell the rows apart: a long one keeps
    its start and its end (where generated node names differ: ``…-zdfrn-rnkzj-gcxqf``) with an
    ellipsis between; when two would still read alike, more of their ends is kept."""
    out = []
    for label in labels:
        if len(label) <= limit:
            out.append(label)
            continue
        head = min(10, limit // 3)
        out.append(label[:head] + "…" + label[-(limit - head - 1) :])
    seen: dict[str, int] = {}
    for shown in out:
        seen[shown] = seen.get(shown, 0) + 1
    if any(n > 1 for n in seen.values()):  # alike at both ends: show the end in full
        out = [
            shown if seen[shown] == 1 or len(label) <= limit else "…" + label[-(limit - 1) :]
            for label, shown in zip(labels, out, strict=True)
        ]
    return out


def _n(value: float) -> str:
    """A coordinate: integers as such, else two decimals."""
    return str(int(value)) if value == int(value) else f"{value:.2f}"


def _count_label(status: str, count: int) -> str:
    return f"{count} {STATUS_LABELS.get(status, status)}"


def _segments(
    segments: Sequence[tuple[str, int]],
    x: float,
    y: float,
    width: float,
    height: float,
    scale: int,
    describe: Callable[[str, int], str] = _count_label,
) -> list[str]:
    """Stacked rects for (status, count), ``scale`` counts filling ``width``."""
    parts = []
    for status, count in segments:
        if count <= 0 or scale <= 0:
            continue
        w = width * count / scale
        label = describe(status, count)
        parts.append(
            f'<rect class="seg seg-{escape(status)}" x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" '
            f'height="{_n(height)}"><title>{escape(label)}</title></rect>'
        )
        x += w
    return parts


def stacked_bar(
    segments: Sequence[tuple[str, int]],
    *,
    title: str,
    width: int = 160,
    height: int = 12,
    describe: Callable[[str, int], str] = _count_label,
) -> SafeString:
    """One horizontal bar of (status, count) segments, each as wide as its share."""
    total = sum(max(count, 0) for _, count in segments)
    parts = [
        f'<svg class="chart bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        f' role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
        f'<rect class="bar-bg" x="0" y="0" width="{width}" height="{height}"/>',
        *_segments(segments, 0, 0, width, height, total, describe),
        "</svg>",
    ]
    return mark_safe("".join(parts))


@dataclass
class BarRow:
    label: str  # a node's name
    segments: list[tuple[str, int]]
    href: str  # where the row links to (already a URL; escaped here)
    note: str  # "6 of 8 allocated"


def bar_chart(
    rows: Sequence[BarRow],
    *,
    title: str,
    label_width: int | None = None,
    bar_width: int = 260,
    note_width: int = 150,
    row_height: int = 20,
) -> SafeString:
    """A labelled bar per row, all on one scale (the largest row fills ``bar_width``); each row
    links to ``href``. Labels get as much room as the longest needs, up to LABEL_CHARS."""
    if label_width is None:
        longest = max((min(len(r.label), LABEL_CHARS) for r in rows), default=0)
        label_width = round(longest * CHAR_WIDTH) + 14
    scale = max((sum(max(c, 0) for _, c in r.segments) for r in rows), default=0)
    width = label_width + bar_width + note_width
    height = row_height * len(rows)
    bar_height = row_height - 6
    parts = [
        f'<svg class="chart bars" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>"
    ]
    labels = short_labels([r.label for r in rows])
    for i, row in enumerate(rows):
        y = i * row_height
        text_y = y + row_height - 6
        shown = labels[i]
        parts.append(
            f'<a href="{escape(row.href)}"><title>{escape(f"{row.label}: {row.note}")}</title>'
            f'<text class="bar-label" x="{label_width - 8}" y="{text_y}" text-anchor="end">'
            f"{escape(shown)}</text>"
            f'<rect class="bar-bg" x="{label_width}" y="{y + 3}" width="{bar_width}" '
            f'height="{bar_height}"/>'
        )
        parts += _segments(row.segments, label_width, y + 3, bar_width, bar_height, scale)
        parts.append(
            f'<text class="bar-note" x="{label_width + bar_width + 8}" y="{text_y}">'
            f"{escape(row.note)}</text></a>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))


class TallyLike(Protocol):
    allocated: int
    free: int

    @property
    def total(self) -> int: ...

    @property
    def segments(self) -> list[tuple[str, int]]: ...


def tally_title(tally: TallyLike) -> str:
    return f"{tally.allocated} of {tally.total} allocated, {tally.free} free"


def tally_bar(tally: TallyLike, width: int = 160) -> SafeString:
    """The bar of an inventory Tally: allocated, unusable, tainted and free devices."""
    return stacked_bar(tally.segments, title=tally_title(tally), width=width)


def node_chart(
    nodes: Sequence[tuple[str, TallyLike]], href: Callable[[str], str], *, title: str
) -> SafeString:
    """One bar per (node name, Tally), each linking to ``href(name)`` (the node's page)."""
    return bar_chart(
        [
            BarRow(
                label=name,
                segments=tally.segments,
                href=href(name),
                note=f"{tally.allocated}/{tally.total} allocated, {tally.free} free",
            )
            for name, tally in nodes
        ],
        title=title,
    )


def fraction_bar(fraction: float, *, title: str, width: int = 80) -> SafeString:
    """A bar of how much of something is used (0.0 to 1.0), e.g. a shared counter."""
    used = round(max(0.0, min(fraction, 1.0)) * 1000)
    return stacked_bar(
        [("used", used), ("left", 1000 - used)],
        title=title,
        width=width,
        describe=lambda status, n: f"{n / 10:g}% {STATUS_LABELS[status]}",
    )
