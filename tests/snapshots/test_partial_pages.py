"""A bundle that lacks kinds says "unknown" where a figure rests on them (DESIGN "Unknown is an
answer"): a slices-only dump, as users post them, is not a cluster without Pods, claims, nodes
and classes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from tests.stored import import_analysed

pytestmark = pytest.mark.django_db

DUMPS = Path(__file__).parent.parent / "fixtures" / "real-dumps"
SLICES_ONLY = "aicr__secure-accelerator-access__eks-2x8-h100-resourceslices.yaml"
CLAIMS_ONLY = "rocm-blogs__dra-gpu__resourceclaim-allocated.yaml"


def words(response: Any) -> str:
    assert response.status_code == 200
    html = re.sub(
        r"<script.*?</script>|<style.*?</style>", "", response.content.decode(), flags=re.S
    )
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def imported(name: str) -> Any:
    return import_analysed(files=[(name, (DUMPS / name).read_bytes())])


def test_a_slices_only_dump_states_no_missing_data_as_fact(client_logged_in: Any) -> None:
    snapshot = imported(SLICES_ONLY)
    overview = words(client_logged_in.get(reverse("snapshot-detail", args=[snapshot.pk])))
    assert "Pods using DRA: unknown" in overview
    assert "Every Pod using DRA is running or finished" not in overview
    assert "ResourceClaims: unknown, none in the bundle" in overview
    assert "nodes: unknown, none in the bundle" in overview
    assert "?/20 devices allocated (unknown: no ResourceClaims in the bundle)" in overview
    assert "0 nodes" not in overview and "0/20" not in overview
    assert "DeviceClasses: unknown, none in the bundle" in overview
    home = words(client_logged_in.get(reverse("home")))
    assert "unknown (no Pods in the bundle)" in home
    devices = words(client_logged_in.get(reverse("device-list", args=[snapshot.pk])))
    assert "which are allocated is unknown" in devices
    assert "No DeviceClasses: no claim can ask for a device" not in devices
    assert "DeviceClasses: unknown, the bundle has none" in devices
    capacity = words(client_logged_in.get(reverse("snapshot-capacity", args=[snapshot.pk])))
    assert "No DeviceClasses in this snapshot" not in capacity
    assert "DeviceClasses: unknown, the bundle has none" in capacity


def test_a_claim_of_a_bundle_without_classes_has_its_class_unknown_not_missing(
    client_logged_in: Any,
) -> None:
    snapshot = imported(CLAIMS_ONLY)
    claims = client_logged_in.get(reverse("claim-list", args=[snapshot.pk]))
    (ref,) = re.findall(r'href="(/snapshots/\d+/claims/[^/"]+/[^/"]+/)"', claims.content.decode())[
        :1
    ]
    page = words(client_logged_in.get(ref))
    assert "class unknown" in page
    assert "class missing" not in page


def test_an_older_snapshot_points_to_the_newest_and_headers_say_how_old(
    client_logged_in: Any, demo: list[Any]
) -> None:
    earlier, later = demo[0], demo[-1]
    old = client_logged_in.get(reverse("snapshot-detail", args=[earlier.pk])).content.decode()
    assert f'href="{reverse("snapshot-detail", args=[later.pk])}"' in old
    assert f"newer: #{later.pk}" in old
    new = client_logged_in.get(reverse("snapshot-detail", args=[later.pk])).content.decode()
    assert "newer: #" not in new
    assert re.search(r'<span class="age" title="[^"]+ ago">\d+[smhd] ago</span>', new)
    devices = reverse("class-detail", args=[later.pk, "mig.nvidia.com"])
    nav = client_logged_in.get(devices).content.decode()
    assert re.search(r'href="[^"]+/devices/"\s+aria-current="page"', nav)


def test_the_pods_list_says_age_and_restarts(client_logged_in: Any, demo: list[Any]) -> None:
    later = demo[-1]
    url = reverse("pod-list", args=[later.pk])
    page = client_logged_in.get(url, {"namespace": "ml-team", "sort": "-restarts"})
    body = page.content.decode().split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, flags=re.S)
    cells = [re.sub(r"<[^>]+>", " ", r.replace("<wbr>", "")).split() for r in rows]
    crashy = next(c for c in cells if any("trainer-crashy" in w for w in c))
    assert cells[0] == crashy  # the most restarts first
    assert int(crashy[-1]) > 0  # restarts, as kubectl get pods shows them
    assert re.fullmatch(r"\d+[smhd]", crashy[-2])  # its age when the snapshot was taken


def test_event_times_read_like_the_other_times(client_logged_in: Any, demo: list[Any]) -> None:
    later = demo[-1]
    url = reverse("pod-detail", args=[later.pk, "finetune", "llama-eval-p3m7d"])
    html = client_logged_in.get(url).content.decode()
    events = html[html.index('<table class="table compact events">') :]
    events = events[: events.index("</table>")]
    assert re.search(r'<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</time>', events)
    assert not re.search(r">\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<", events)  # no raw RFC 3339
