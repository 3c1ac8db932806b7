"""From a failed Pod to the bad GPU, its taint and the eviction, with times (issue 25 "Done
when"): the demo's GPU that went bad (dradash.demo.cluster, story of h100-mig-node-01's GPU 1),
read through the stored analysis of its two snapshots, on the Pod page, the device page and the
device API."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

DEVICE = ("gpu.nvidia.com", "h100-mig-node-01", "gpu-1-mig-3g40gb-9-4")
EVICTED = ("finetune", "llama-eval-p3m7d")


def text_of(response) -> str:
    assert response.status_code == 200, response.content[:300]
    html = htmllib.unescape(response.content.decode().replace("<wbr>", ""))
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_evicted_pods_page_tells_the_story_in_order_and_links_the_device(
    client_logged_in, demo
) -> None:
    later = demo[-1].pk
    response = client_logged_in.get(reverse("pod-detail", args=[later, *EVICTED]))
    html = response.content.decode()
    story = text_of(response).split("Timeline", 1)[1].split("Events", 1)[0]
    steps = [
        "allocated to ResourceClaim finetune/llama-eval",
        "reported Healthy by Pod finetune/llama-eval-p3m7d",
        "tainted gpu.nvidia.com/xid=79:NoSchedule by ResourceSlice",
        "tainted gpu.nvidia.com/xid=79:NoExecute by DeviceTaintRule xid-79-gpu-1-mig-3g40gb-9-4",
        "Pod finetune/llama-eval-p3m7d evicted by the device taint eviction controller",
        "reported Unhealthy by Pod finetune/llama-eval-p3m7d, container ctr0: critical XID 79",
    ]
    at = [story.index(s) for s in steps]
    assert at == sorted(at), story
    assert "2026-11-28 10:29:30" in story  # the eviction's recorded time
    device_page = reverse("device-detail", args=[later, *DEVICE])
    assert f'href="{device_page}"' in html  # one click to the device


def test_the_device_page_and_api_have_its_timeline(client_logged_in, api_client, demo) -> None:
    later = demo[-1].pk
    text = text_of(client_logged_in.get(reverse("device-detail", args=[later, *DEVICE])))
    assert "Timeline" in text and "evicted by the device taint eviction controller" in text
    data = api_client.get(f"/api/v1/snapshots/{later}/devices/{'/'.join(DEVICE)}").json()
    kinds = [m["kind"] for m in data["timeline"]]
    assert kinds[:2] == ["allocated", "health"] and "evicted" in kinds
    evicted = next(m for m in data["timeline"] if m["kind"] == "evicted")
    assert (evicted["time"], evicted["exact"]) == ("2026-11-28T10:29:30+00:00", True)
    assert [e["state"] for e in data["evictions"]] == ["evicted"]
    # In the first snapshot the story has not happened yet.
    first = api_client.get(f"/api/v1/snapshots/{demo[0].pk}/devices/{'/'.join(DEVICE)}").json()
    assert [m["kind"] for m in first["timeline"]] == ["allocated", "health"]
