"""SVG pictures of the capacity page (built with dradash.ui.charts) from the stored capacity
(dradash.dra.analysis.capacity_dict)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString

from dradash.ui.charts import BarRow, bar_chart, stacked_bar

register = template.Library()


@register.filter
def class_bar(c: Any) -> SafeString:
    """A class's devices: allocated, tainted and free."""
    return stacked_bar(
        [("allocated", c["allocated"]), ("tainted", c["tainted"]), ("free", c["free"])],
        title=f"{c['device_class']}: {c['allocated']} of {c['devices']} allocated, "
        f"{c['tainted']} tainted, {c['free']} free",
        width=200,
    )


@register.simple_tag
def free_spread_chart(c: Any, snapshot_id: int) -> SafeString:
    """One bar per number of free devices a node has, as long as the number of such nodes:
    how the class's free devices are spread. Rows link to the class's free devices."""
    href = (
        reverse("device-list", args=[snapshot_id])
        + "?"
        + urlencode({"device_class": c["device_class"], "state": "free"})
    )
    return bar_chart(
        [
            BarRow(
                label=f"{free} free",
                segments=[("free", nodes)],
                href=href,
                note=f"on {nodes} node{'' if nodes == 1 else 's'}",
            )
            for free, nodes in c["free_spread"]
        ],
        title=f"How the free {c['device_class']} devices are spread over nodes",
        bar_width=180,
        note_width=110,
    )
