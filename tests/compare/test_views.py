from __future__ import annotations

import html as htmllib
import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from dradash.snapshots.services import bundle_import

pytestmark = pytest.mark.django_db


def diff_url(before, after) -> str:
    return reverse(
        "snapshot-diff", args=[getattr(before, "pk", before), getattr(after, "pk", after)]
    )


def page(client, url: str, **params: str) -> str:
    response = client.get(url, params)
    assert response.status_code == 200, response.content[:500]
    return htmllib.unescape(response.content.decode()).replace("<wbr>", "")


def text(html: str) -> str:
    """What a person reads: the page without its tags (names in sentences are links)."""
    return re.sub(r"<[^>]+>", "", html)


# --- the diff of the demo's two snapshots ------------------------------------------------


def test_diff_page_shows_the_dra_changes_between_the_demo_snapshots(client_logged_in, demo) -> None:
    earlier, later = demo
    html = page(client_logged_in, diff_url(earlier, later))
    words = text(html)

    assert "What changed from snapshot" in html
    assert f"#{earlier.pk} captured" in words and f"#{later.pk} captured" in words
    assert "Pods whose diagnosis stage changed" in html
    assert "Pod batch/etl-worker-7: pod-pending (claim-not-created) → healthy (running)." in words
    assert (
        "ResourceClaim batch/etl-worker-7-gpu-k3f7w was created and allocated "
        "gpu.nvidia.com/h100-node-01/gpu-5 on node h100-node-01, reserved for Pod etl-worker-7."
    ) in words
    assert "Pool gpu.nvidia.com/h100-mig-node-01 generation 1 → 2." in words
    assert "gpu-0-mig-1g10gb-19-6 got taint gpu.nvidia.com/xid=43:NoSchedule" in words
    assert "its generation-1 ResourceSlice 00000-gpu.nvidia.com-h100-mig-node-01-8kq2d" in words
    # DRA changes come before the per-kind lists, and link to the later snapshot's pages
    assert html.index("DRA changes") < html.index("Changed <span")
    pod_url = reverse("pod-detail", args=[later.pk, "batch", "etl-worker-7"])
    claim_url = reverse("claim-detail", args=[later.pk, "batch", "etl-worker-7-gpu-k3f7w"])
    assert f'href="{pod_url}"' in html
    assert f'href="{claim_url}"' in html


def test_diff_page_lists_objects_per_kind_with_their_field_diffs(client_logged_in, demo) -> None:
    html = page(client_logged_in, diff_url(*demo))

    assert '<details class="diff-object">' in html
    assert "ml-team/trainer-crashy" in html
    assert "status.containerStatuses[name=ctr0].restartCount" in html
    assert "00000-gpu.nvidia.com-h100-mig-node-01-ftq9x" in html  # the new generation's slice
    assert "15 events recurred" in html
    assert "BackOff on Pod ml-team/trainer-crashy: ×48 → ×72" in html
    assert "metadata.resourceVersion" not in html


def test_kind_filter_as_plain_get(client_logged_in, demo) -> None:
    html = page(client_logged_in, diff_url(*demo), kind="ResourceSlice")

    assert "<html" in html
    assert "Pool gpu.nvidia.com/h100-mig-node-01 generation 1 → 2." in text(html)
    assert "Added" in html and "00000-gpu.nvidia.com-h100-mig-node-01-ftq9x" in html
    assert "etl-worker-7" not in html.split('id="changes"')[1]
    assert '<option value="ResourceSlice" selected>' in html


def test_kind_filter_as_htmx_partial(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        diff_url(*demo), {"kind": "Pod"}, headers={"HX-Request": "true"}
    )
    html = htmllib.unescape(response.content.decode())

    assert response.status_code == 200
    assert "<html" not in html
    assert html.strip().startswith('<div id="changes">')
    assert "Pod batch/etl-worker-7: pod-pending" in text(html)
    assert "generation 1 → 2" not in html
    assert "HX-Request" in response["Vary"]


def test_unknown_kind_is_a_bad_request(client_logged_in, demo) -> None:
    assert client_logged_in.get(diff_url(*demo), {"kind": "Secret"}).status_code == 400


def test_identical_snapshots_say_nothing_changed(client_logged_in, demo) -> None:
    html = page(client_logged_in, diff_url(demo[0], demo[0]))
    assert "No change that matters for DRA" in html
    assert "The two snapshots hold the same objects" in html


def test_backwards_diff_says_so_and_offers_the_other_way(client_logged_in, demo) -> None:
    earlier, later = demo
    html = page(client_logged_in, diff_url(later, earlier))
    assert "this diff runs backwards in time" in html
    assert f'href="{diff_url(earlier, later)}"' in html
    # the claim only the later snapshot has is "deleted", linked in the snapshot that has it
    claim_url = reverse("claim-detail", args=[later.pk, "batch", "etl-worker-7-gpu-k3f7w"])
    assert f'href="{claim_url}"' in html


def test_the_diff_waits_for_both_analyses_and_refreshes_meanwhile(client_logged_in) -> None:
    before = bundle_import(files=[("a.json", _hostile("Pending", ""))], cluster_name="x")
    after = bundle_import(files=[("b.json", _hostile("Running", "2"))], cluster_name="x")

    html = page(client_logged_in, diff_url(before, after))

    assert "Analysing this snapshot" in html
    assert 'hx-trigger="every 3s"' in html
    assert "What changed from snapshot" not in html


# --- refusals -------------------------------------------------------------------------------


def test_unknown_snapshots_are_404(client_logged_in, demo) -> None:
    for url in (diff_url(demo[0], 424242), diff_url(424242, demo[1])):
        response = client_logged_in.get(url)
        assert response.status_code == 404
        assert "There is no snapshot #424242." in response.content.decode()


def test_snapshots_of_different_clusters_are_refused(client_logged_in, demo) -> None:
    other = bundle_import(files=[("o.json", json.dumps([]).encode())], cluster_name="other")
    response = client_logged_in.get(diff_url(demo[0], other))
    assert response.status_code == 400
    text = htmllib.unescape(response.content.decode())
    assert "only snapshots of the same cluster can be compared" in text


def test_login_is_required(demo) -> None:
    response = Client().get(diff_url(*demo))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


# --- the nav link ---------------------------------------------------------------------------


def test_compare_with_previous_link_on_the_later_snapshot_only(client_logged_in, demo) -> None:
    earlier, later = demo
    later_html = page(client_logged_in, reverse("snapshot-detail", args=[later.pk]))
    assert "Compare with previous" in later_html
    assert f'href="{diff_url(earlier, later)}"' in later_html

    earlier_html = page(client_logged_in, reverse("snapshot-detail", args=[earlier.pk]))
    assert "Compare with previous" not in earlier_html


def test_previous_snapshot_is_of_the_same_cluster_by_capture_time(client_logged_in, demo) -> None:
    from dradash.compare.selectors import previous_snapshot_id

    earlier, later = demo
    # another cluster's snapshot taken in between is not "previous"
    other = bundle_import(files=[("o.json", b"[]")], cluster_name="other")
    other.captured_at = earlier.captured_at + timedelta(minutes=1)
    other.save()
    assert previous_snapshot_id(later) == earlier.pk
    assert previous_snapshot_id(earlier) is None
    assert previous_snapshot_id(other) is None


# --- cluster strings are escaped --------------------------------------------------------------

XSS = '<script>alert("x")</script>'


# A name may not hold "/" (the API server and the bundle importer refuse it).
XSS_NAME = '<script>alert("x")'


def _hostile(phase: str, extra: str) -> bytes:
    return json.dumps(
        [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": XSS_NAME,
                    "namespace": "default",
                    "uid": "u1",
                    "annotations": {XSS: XSS + extra},
                },
                "spec": {
                    "containers": [{"name": "c", "image": XSS}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": XSS}],
                },
                "status": {"phase": phase, "message": XSS + extra},
            },
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                # The API server (and so the import) refuses such a name in a ResourceClaim;
                # the hostile text goes in an annotation.
                "metadata": {
                    "name": f"claim{extra}",
                    "namespace": "default",
                    "annotations": {XSS: XSS_NAME + extra},
                },
                "spec": {"devices": {"requests": []}},
            },
        ]
    ).encode()


def test_cluster_strings_are_escaped_in_the_diff(client_logged_in, analysed) -> None:
    with analysed():
        before = bundle_import(files=[("a.json", _hostile("Pending", ""))], cluster_name="x")
        after = bundle_import(files=[("b.json", _hostile("Running", "2"))], cluster_name="x")

    response = client_logged_in.get(diff_url(before, after))
    raw = response.content.decode()

    assert response.status_code == 200
    assert "<script>" not in raw
    assert "&lt;script&gt;alert" in raw
    assert "annotations[&quot;&lt;script&gt;" in raw  # a field path made of a hostile key


def test_long_lists_are_cut_with_a_count_and_a_link_to_the_kind(
    client_logged_in, demo, monkeypatch
) -> None:
    monkeypatch.setattr("dradash.compare.selectors.OVERVIEW_LIMIT", 3)
    monkeypatch.setattr("dradash.compare.selectors.LIST_LIMIT", 4)
    html = page(client_logged_in, diff_url(*demo))
    assert "… and 12 more: " in html
    assert "only Event objects, up to 4 per list" in html
    assert 'href="?kind=Event"' in html

    filtered = page(client_logged_in, diff_url(*demo), kind="Event")
    assert "… and 11 more (the first 4 are listed)." in filtered


# --- links to the node and device pages ----------------------------------------------------


def kind_section(html: str, kind: str) -> str:
    return html.split(f'id="kind-{kind}"', 1)[1].split("</section>", 1)[0]


def test_an_added_node_links_to_its_page_in_the_newer_snapshot(client_logged_in, demo) -> None:
    earlier, later = demo
    html = page(client_logged_in, diff_url(earlier, later))
    node = reverse("node-detail", args=[later.pk, "gpu-example-worker-3"])
    added = kind_section(html, "Node").split('class="diff-list diff-list-added"', 1)[1]
    assert f'<a href="{node}">gpu-example-worker-3</a>' in added
    assert f'Node <a href="{node}">gpu-example-worker-3</a> was added' in html


def test_a_removed_node_links_to_its_page_in_the_older_snapshot(client_logged_in, demo) -> None:
    earlier, later = demo
    html = page(client_logged_in, diff_url(later, earlier))  # the node is gone in `earlier`
    node = reverse("node-detail", args=[later.pk, "gpu-example-worker-3"])
    removed = kind_section(html, "Node").split('class="diff-list diff-list-removed"', 1)[1]
    assert f'<a href="{node}">gpu-example-worker-3</a>' in removed
    assert reverse("node-detail", args=[earlier.pk, "gpu-example-worker-3"]) not in html


def test_a_changed_node_links_to_its_page_in_the_newer_snapshot(client_logged_in, analysed):
    def bundle(zone: str) -> bytes:
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "worker-1", "labels": {"topology.kubernetes.io/zone": zone}},
            "spec": {"unschedulable": zone == "b"},
        }
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": [node]}).encode()

    with analysed():
        before = bundle_import(files=[("a.json", bundle("a"))], cluster_name="nodes")
        after = bundle_import(files=[("b.json", bundle("b"))], cluster_name="nodes")

    html = page(client_logged_in, diff_url(before, after))

    changed = kind_section(html, "Node")
    node = reverse("node-detail", args=[after.pk, "worker-1"])
    assert "worker-1" in changed and f'<a href="{node}">open</a>' in changed


def test_a_tainted_device_links_to_its_page_in_the_newer_snapshot(client_logged_in, demo) -> None:
    earlier, later = demo
    html = page(client_logged_in, diff_url(earlier, later))
    tainted = re.findall(r'<li class="dra-change dra-device-tainted">(.*?)</li>', html, re.S)
    assert tainted
    for device in ("gpu-0-mig-1g10gb-19-6", "gpu-1-mig-3g40gb-9-0", "gpu-1-mig-3g40gb-9-4"):
        url = reverse(
            "device-detail", args=[later.pk, "gpu.nvidia.com", "h100-mig-node-01", device]
        )
        assert any(f'href="{url}"' in line for line in tainted), device


def test_pod_sentences_link_their_nodes_and_show_times_as_pages_do(client_logged_in, demo) -> None:
    """A Pod's stage change names its node in the verdict's words ("is running on n") and the
    eviction's time: the node is a link to its page, the time reads as the pages' times."""
    earlier, later = demo
    html = page(client_logged_in, diff_url(earlier, later))
    node_url = reverse("node-detail", args=[later.pk, "h100-node-01"])
    sentence = html[html.index("etl-worker-7</a>: pod-pending") :].split("</li>")[0]
    assert f'running on <a href="{node_url}">h100-node-01</a>' in sentence

    evicted = [s.split("</li>")[0] for s in html.split("was evicted at ")[1:]]
    assert evicted, "the demo's later snapshot has a Pod evicted by a device taint"
    for rest in evicted:
        assert re.match(r'<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</time>', rest)
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", text(html.split('id="changes"')[0]))
