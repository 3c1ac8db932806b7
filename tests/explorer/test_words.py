"""One word for one thing (issue 17 and 14): the device state "unusable" and what it means,
counts that say what they count, and the funnel's first box."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from dradash.ui.charts import node_chart, short_labels

pytestmark = pytest.mark.django_db

OTHER_NAMES = (
    "free, pool skipped by the allocator",
    "free but in pools the allocator skips",
    "Skipped</th>",
)


def test_unusable_devices_have_one_name_everywhere(client_logged_in, demo) -> None:
    later = demo[-1].pk
    for url in (
        reverse("device-list", args=[later]),
        reverse("snapshot-capacity", args=[later]),
        reverse("device-list", args=[later]) + "?state=unusable",
    ):
        html = client_logged_in.get(url).content.decode()
        for other in OTHER_NAMES:
            assert other not in html, (url, other)
    html = client_logged_in.get(reverse("device-list", args=[later])).content.decode()
    assert "in the pools the allocator would use" not in html  # 41 counts the skipped ones too
    assert ">4 unusable</a> (in pools the allocator skips: not free for any claim)" in html
    assert "unusable (in a pool the allocator skips)" in html  # the legend and the filter
    assert '<th title="in a pool the allocator skips">Unusable</th>' in html


def test_the_headline_counts_skipped_pools_apart(client_logged_in, demo) -> None:
    html = client_logged_in.get(reverse("device-list", args=[demo[-1].pk])).content.decode()
    headline = html[html.index('class="inventory-headline"') :]
    headline = " ".join(re.sub(r"<[^>]+>", "", headline[: headline.index("</p>")]).split())
    assert headline.startswith(
        'class="inventory-headline">41 devices in current pools: 27 allocated, 9 free,'
    )


def test_a_free_device_is_allocated_to_nobody_not_to_free(client_logged_in, demo) -> None:
    html = client_logged_in.get(
        reverse("device-list", args=[demo[-1].pk]), {"state": "free"}
    ).content.decode()
    results = html[html.index('id="results"') :]
    assert '<span class="muted">free</span>' not in results


def test_the_funnels_first_box_counts_devices(client_logged_in, demo) -> None:
    later = demo[-1].pk
    html = client_logged_in.get(
        reverse("pod-detail", args=[later, "llm-eval", "eval-h200"])
    ).content.decode()
    assert '<span class="funnel-n">41</span><span class="funnel-l">devices of current pools' in html
    assert "class exists</span>" not in html
    missing = client_logged_in.get(
        reverse("pod-detail", args=[later, "team-amd", "rocm-smoke"])
    ).content.decode()
    assert (
        '<span class="funnel-n">0</span><span class="funnel-l">the class does not exist' in missing
    )


VKS = [
    "test-ai-0-node-pool-4c-zdfrn-rnkzj-gcxqf",
    "test-ai-0-node-pool-4c-zdfrn-rnkzj-lrj4k",
    "test-ai-0-node-pool-4c-zdfrn-rnkzj-w78x4",
]


def test_node_names_cut_on_the_chart_still_read_apart() -> None:
    """Issue 14: three VKS nodes read alike when cut at the end."""
    shown = short_labels(VKS)
    assert len(set(shown)) == 3
    assert all(label.endswith(name[-5:]) for label, name in zip(shown, VKS, strict=True))
    assert all(len(label) <= 32 for label in shown)


def test_the_by_node_chart_shows_them_apart() -> None:
    from dradash.dra.inventory import Tally

    svg = str(
        node_chart(
            [(n, Tally(allocated=1, free=1)) for n in VKS], lambda n: f"/n/{n}/", title="nodes"
        )
    )
    labels = re.findall(r'<text class="bar-label"[^>]*>([^<]+)</text>', svg)
    assert len(set(labels)) == 3 and labels[0].endswith("gcxqf")
