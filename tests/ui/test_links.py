"""Object names in sentences link to their pages (issue 17): findings on the overview and on a
Pod's or claim's page, the diff's DRA changes, verdicts and evidence, the funnel's table of
devices that dropped out; under a share link, to the shared pages."""

from __future__ import annotations

import re
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from dradash.sharing.services import share_link_create
from dradash.ui.links import linked

pytestmark = pytest.mark.django_db


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href, self._text = dict(attrs).get("href") or "", ""

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((self._text.strip(), self._href))
            self._href = None


def anchors(html: str) -> list[tuple[str, str]]:
    """(text, href) of every link."""
    parser = _Anchors()
    parser.feed(html.replace("<wbr>", ""))
    return parser.links


def section(html: str, start: str, end: str) -> str:
    return html[html.index(start) : html.index(end, html.index(start))]


def get(client: Any, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def devices(snapshot_id: int, **filters: str) -> str:
    return f"{reverse('device-list', args=[snapshot_id])}?{urlencode(filters)}"


def node(snapshot_id: int, name: str) -> str:
    return reverse("node-detail", args=[snapshot_id, name])


def device(snapshot_id: int, driver: str, pool: str, name: str) -> str:
    return reverse("device-detail", args=[snapshot_id, driver, pool, name])


def test_findings_on_the_overview_link_every_object_they_name(client_logged_in, demo) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, reverse("snapshot-detail", args=[later]))
    links = anchors(section(html, "<h2>Findings</h2>", "</section>"))
    pod = reverse("pod-detail", args=[later, "manual", "pinned-job"])
    claim = reverse("claim-detail", args=[later, "manual", "pinned-job-gpu-h4j8n"])
    assert ("manual/pinned-job", pod) in links
    assert ("manual/pinned-job-gpu-h4j8n", claim) in links
    # DeviceClass gpu.amd.com does not exist: it has no page to link to.
    assert not any(text == "gpu.amd.com" for text, _ in links)
    assert ("h100-node-01", node(later, "h100-node-01")) in links
    pool = devices(later, driver="gpu.example.com", pool="gpu-example-worker-3")
    assert ("gpu.example.com/gpu-example-worker-3", pool) in links
    # "shared by 3 Pods (pod0, pod1 and pod2)": the bare names too.
    for name in ("pod0", "pod1", "pod2"):
        assert (name, reverse("pod-detail", args=[later, "gpu-test2", name])) in links


def test_inside_a_share_link_the_names_link_to_the_shared_pages(client, demo, user) -> None:
    later = demo[-1]
    _, token = share_link_create(snapshot=later, user=user, expires_in=timedelta(days=1))
    html = get(client, f"/share/{token}/snapshots/{later.pk}/")
    links = anchors(section(html, "<h2>Findings</h2>", "</section>"))
    targets = [href for _, href in links]
    assert f"/share/{token}/snapshots/{later.pk}/pods/manual/pinned-job/" in targets
    assert all(href.startswith(f"/share/{token}/") for href in targets), targets
    for href in targets:  # and every one of them opens
        assert client.get(href).status_code == 200, href


def test_a_pods_page_links_its_findings_summary_and_evidence(client_logged_in, demo) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, reverse("pod-detail", args=[later, "manual", "pinned-job"]))
    verdict = section(html, '<section class="verdict', "</section>")
    links = anchors(verdict)
    claim = reverse("claim-detail", args=[later, "manual", "pinned-job-gpu-h4j8n"])
    assert any(href == claim for _, href in links)
    assert ("h100-node-01", node(later, "h100-node-01")) in links
    evidence = section(verdict, "<h4>Evidence</h4>", "</ul>")
    assert reverse("pod-detail", args=[later, "manual", "pinned-job"]) in evidence


def test_the_funnel_table_links_the_claims_holding_the_devices(client_logged_in, demo) -> None:
    later = demo[-1].pk
    claim = "render-farm-6-05b2e-gpus-9927f"
    html = get(client_logged_in, reverse("claim-detail", args=[later, "render", claim]))
    table = section(html, "dropped out", "</table>")
    links = anchors(table)
    holder = reverse("claim-detail", args=[later, "gpu-test2", "single-gpu"])
    assert ("gpu-test2/single-gpu", holder) in links
    gpu0 = device(later, "gpu.example.com", "gpu-example-worker-1", "gpu-0")
    assert ("gpu-example-worker-1/gpu-0", gpu0) in links


def test_a_selector_error_is_printed_once_not_once_per_device(client_logged_in, demo) -> None:
    later = demo[-1].pk
    claim = "pod-5c8d7b9f4-qx2lm-gpu-t9h6c"
    html = get(client_logged_in, reverse("claim-detail", args=[later, "gpu-test6", claim]))
    verdict = section(html, '<section class="verdict', "<h4>Evidence</h4>")
    assert verdict.count("no such key: index") == 1  # the summary; the table refers to it
    assert verdict.count("raises the error above") == 4


def test_the_diffs_dra_changes_link_their_objects(client_logged_in, demo) -> None:
    earlier, later = (s.pk for s in demo)
    html = get(client_logged_in, reverse("snapshot-diff", args=[earlier, later]))
    changes = section(html, "<h2>DRA changes", "</section>")
    links = anchors(changes)
    claim = reverse("claim-detail", args=[later, "batch", "etl-worker-7-gpu-k3f7w"])
    assert ("batch/etl-worker-7-gpu-k3f7w", claim) in links
    pod = reverse("pod-detail", args=[later, "batch", "etl-worker-7"])
    assert ("batch/etl-worker-7", pod) in links
    assert ("etl-worker-7", pod) in links  # "reserved for Pod etl-worker-7"
    pool = devices(later, driver="gpu.nvidia.com", pool="h100-mig-node-01")
    assert ("gpu.nvidia.com/h100-mig-node-01", pool) in links
    assert ("gpu-example-worker-3", node(later, "gpu-example-worker-3")) in links
    gpu5 = device(later, "gpu.nvidia.com", "h100-node-01", "gpu-5")
    assert ("gpu.nvidia.com/h100-node-01/gpu-5", gpu5) in links


def test_a_change_about_an_object_gone_links_into_the_snapshot_that_has_it(
    client_logged_in, demo
) -> None:
    earlier, later = (s.pk for s in demo)
    html = get(client_logged_in, reverse("snapshot-diff", args=[later, earlier]))  # backwards
    changes = section(html, "<h2>DRA changes", "</section>")
    links = anchors(changes)
    claim = reverse("claim-detail", args=[later, "batch", "etl-worker-7-gpu-k3f7w"])
    assert ("batch/etl-worker-7-gpu-k3f7w", claim) in links  # deleted in #earlier: in #later


# --- the linker itself ----------------------------------------------------------------------


def test_names_inside_other_words_are_not_linked() -> None:
    refs = [{"kind": "Pod", "namespace": "ns", "name": "web"}]
    html = str(linked("Pod web-2 and web.old are not web; web is.", refs, 1))
    assert html.count("<a ") == 2
    assert re.search(r"not <a [^>]+>web</a>; <a [^>]+>web</a> is\.", html)


def test_the_text_around_links_stays_escaped() -> None:
    refs = [{"kind": "Pod", "namespace": "ns", "name": "p"}]
    html = str(linked('<script>alert(1)</script> Pod ns/p "x"', refs, 1))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "&quot;x&quot;" in html
    assert '<a href="/snapshots/1/pods/ns/p/">ns/p</a>' in html


def test_a_device_class_is_linked_only_when_it_exists() -> None:
    refs = [{"kind": "DeviceClass", "namespace": "", "name": "gpu.example.com"}]
    text = "Claims ask for DeviceClass gpu.example.com."
    assert "<a " not in str(linked(text, refs, 1))
    assert "/snapshots/1/classes/gpu.example.com/" in str(
        linked(text, refs, 1, classes=["gpu.example.com"])
    )


def test_nodes_in_lists_and_devices_by_driver_pool_and_name() -> None:
    html = str(
        linked(
            "allocated gpu.example.com/pool-a/gpu-1 on nodes n-1, n-2 and n-3, reserved for x",
            [],
            1,
            nodes={"n-1", "n-2", "n-3"},
        )
    )
    assert html.count('href="/snapshots/1/nodes/') == 3 and "nodes/reserved" not in html
    assert '<a href="/snapshots/1/nodes/n-2/">n-2</a>' in html
    gpu1 = "/snapshots/1/devices/gpu.example.com/pool-a/gpu-1/"
    assert f'<a href="{gpu1}">gpu.example.com/pool-a/gpu-1</a>' in html


def test_only_the_snapshots_nodes_are_linked_not_the_words_after_node() -> None:
    text = "no node the Pod may use has 4 of them (at most 3, on node a100-node-01); node gone-1"
    html = str(
        linked(
            text, [{"kind": "Node", "namespace": "", "name": "gone-1"}], 1, nodes={"a100-node-01"}
        )
    )
    assert html.count("<a ") == 1
    assert '<a href="/snapshots/1/nodes/a100-node-01/">a100-node-01</a>' in html
    assert "nodes/the/" not in html and "gone-1</a>" not in html


def test_a_device_in_a_pool_with_slashes_links_to_its_page() -> None:
    html = str(linked("allocated gpu.example.com/rack-1/node-a/gpu-1 to it", [], 1))
    url = "/snapshots/1/devices/gpu.example.com/rack-1/node-a/gpu-1/"
    assert f'<a href="{url}">gpu.example.com/rack-1/node-a/gpu-1</a>' in html


def test_kinds_without_a_page_and_unknown_names_stay_text() -> None:
    refs = [
        {"kind": "Job", "namespace": "ns", "name": "train"},
        {"kind": "ResourceClaimTemplate", "namespace": "ns", "name": "t"},
    ]
    assert "<a " not in str(linked("Job ns/train and template ns/t.", refs, 1))


def test_a_verdict_links_every_claim_holding_the_devices_and_its_next_steps_names(
    client_logged_in, demo
) -> None:
    """render-farm-6: "16 devices held by 10 claims: render/render-farm-0-… (2), … and 7
    more": each holder named is a link; the first next step links the pool to complete."""
    later = demo[-1].pk
    html = get(
        client_logged_in, reverse("pod-detail", args=[later, "render", "render-farm-6-05b2e"])
    )
    summary = section(html, '<p class="verdict-summary">', "</p>")
    holders = [text for text, href in anchors(summary) if "/claims/render/render-farm-" in href]
    assert holders == [
        "render/render-farm-6-05b2e-gpus-9927f",  # its own claim, named first
        "render/render-farm-0-d1ce0-gpus-29c90",
        "render/render-farm-1-fe6f8-gpus-b01ed",
        "render/render-farm-2-ffbbf-gpus-a29e3",
    ]
    steps = section(html, '<ol class="nextsteps">', "</ol>")
    pool = devices(later, driver="gpu.example.com", pool="gpu-example-worker-3")
    assert ("gpu.example.com/gpu-example-worker-3", pool) in anchors(steps)


def test_holders_are_linked_in_the_verdicts_words() -> None:
    html = linked("5 devices held by 2 claims: ns/a (3) and ns/b (2); allocated to ns/c.", [], 1)
    assert [text for text, _ in anchors(html)] == ["ns/a", "ns/b", "ns/c"]
