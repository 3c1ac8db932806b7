"""SVG pictures of the capacity page (built with dradash.explorer.charts)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString

from dradash.explorer.charts import BarRow, bar_chart, stacked_bar

register = template.Library()


@register.filter
def class_bar(c: Any) -> SafeString:
    """A class's devices: allocated, tainted and free."""
    return stacked_bar(
        [("allocated", c.allocated), ("tainted", c.tainted), ("free", c.free)],
        title=f"{c.name}: {c.allocated} of {c.total} allocated, {c.tainted} tainted, {c.free} free",
        width=200,
    )


@register.simple_tag
def free_spread_chart(c: Any, sizes: list[tuple[int, int]], snapshot_id: int) -> SafeString:
    """One bar per number of free devices a node has, as long as the number of such nodes:
    how the class's free devices are spread. Rows link to the class's free devices."""
    href = (
        reverse("device-list", args=[snapshot_id])
        + "?"
        + urlencode({"device_class": c.name, "state": "free"})
    )
    return bar_chart(
        [
            BarRow(
                label=f"{free} free",
                segments=[("free", nodes)],
                href=href,
                note=f"on {nodes} node{'' if nodes == 1 else 's'}",
            )
            for free, nodes in sizes
        ],
        title=f"How the free {c.name} devices are spread over nodes",
        bar_width=180,
        note_width=110,
    )
