"""The diff of two snapshots shows Pods that ask for devices as extended resources backed by DRA
(issue 23) as it shows any DRA Pod: one appearing, one changing stage, the claim the scheduler
generated for it (tests/extended_cluster.py's cluster, fixture ``gpu_lab``)."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.urls import reverse

from tests.extended_cluster import GENERATED, NS

pytestmark = pytest.mark.django_db


def words(client, before, after) -> tuple[str, str]:
    response = client.get(reverse("snapshot-diff", args=[before.pk, after.pk]))
    assert response.status_code == 200, response.content[:500]
    html = htmllib.unescape(response.content.decode()).replace("<wbr>", "")
    return html, re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_diff_shows_the_pod_appearing_and_the_one_changing_stage(
    client_logged_in, gpu_lab
) -> None:
    earlier, later = gpu_lab
    html, text = words(client_logged_in, earlier, later)
    changed = text.split("Pods whose diagnosis stage changed")[1].split("Claims allocated")[0]
    assert f"Pod {NS}/pod0 : claim-unallocated (devices-exhausted) → healthy (running)." in changed
    assert "hog-0" not in changed  # running in both
    assert f"Pod {NS}/pod1 was created; it is claim-unallocated (devices-exhausted)." in text
    assert f"Pod {NS}/web was created" not in text  # it uses no device
    assert f"{NS}/web" in text  # only the Pods list shows it
    assert f"ResourceClaim {NS}/{GENERATED} was created and allocated" in text
    for name in ("pod0", "pod1"):
        assert f'href="{reverse("pod-detail", args=[later.pk, NS, name])}"' in html


def test_the_diff_the_other_way_round_shows_the_pod_going(client_logged_in, gpu_lab) -> None:
    earlier, later = gpu_lab
    _, text = words(client_logged_in, later, earlier)
    assert f"Pod {NS}/pod0 : healthy (running) → claim-unallocated (devices-exhausted)." in text
    assert f"Pod {NS}/pod1 was deleted; it was claim-unallocated (devices-exhausted)." in text
    assert f"ResourceClaim {NS}/{GENERATED} was deleted, releasing" in text
