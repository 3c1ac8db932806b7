"""Whatever a cluster sends is rendered escaped, on the normal and on the shared pages."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from dradash.sharing.services import share_link_create
from tests.stored import import_analysed

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
POD = 'evil-"><img src=x onerror=alert(1)>'


def hostile_bundle() -> bytes:
    meta = {
        "namespace": "team",
        "labels": {"app": SCRIPT},
        "annotations": {"note": IMG, "other": SCRIPT},
    }
    items = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {**meta, "name": f"claim-{IMG}", "uid": "c1"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": f"class-{IMG}",
                                "selectors": [{"cel": {"expression": f'"{SCRIPT}" == "x"'}}],
                            },
                        }
                    ]
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {**meta, "name": POD, "uid": "p1"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "resources": {"claims": [{"name": "gpu"}]},
                    }
                ],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": f"claim-{IMG}"}],
            },
            "status": {
                "phase": "Pending",
                "message": SCRIPT,
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": f"{SCRIPT} {IMG}",
                    }
                ],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e1", "namespace": "team", "uid": "e1"},
            "involvedObject": {"kind": "Pod", "namespace": "team", "name": POD, "uid": "p1"},
            "type": "Warning",
            "reason": "FailedScheduling",
            "message": f"0/1 nodes are available: {SCRIPT} {IMG}",
            "count": 1,
        },
    ]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()


@pytest.fixture
def hostile(db: None, user) -> tuple[int, str]:
    # Names the import now refuses (as the API server does): stored as older versions did.
    snapshot = import_analysed(
        files=[("hostile.json", hostile_bundle())], cluster_name="evil", validate=False
    )
    _, token = share_link_create(snapshot=snapshot, user=user, expires_in=timedelta(days=1))
    return snapshot.pk, token


def assert_escaped(html: str) -> None:
    assert "<script>alert" not in html
    assert "<img src=x" not in html


PAGES = [
    ("snapshot-detail", ()),
    ("pod-list", ()),
    ("claim-list", ()),
    ("pod-detail", ("team", POD)),
    ("claim-detail", ("team", f"claim-{IMG}")),
]


@pytest.mark.parametrize(("name", "args"), PAGES)
def test_hostile_values_are_escaped_on_the_normal_page(client_logged_in, hostile, name, args):
    snapshot_id, _ = hostile
    response = client_logged_in.get(reverse(name, args=[snapshot_id, *args]))
    assert response.status_code == 200, response.content[:500]
    assert_escaped(response.content.decode())


@pytest.mark.parametrize(("name", "args"), PAGES)
def test_hostile_values_are_escaped_on_the_shared_page(hostile, name, args):
    snapshot_id, token = hostile
    path = reverse(name, args=[snapshot_id, *args])
    response = Client().get(f"/share/{token}{path}")
    assert response.status_code == 200, response.content[:500]
    assert_escaped(response.content.decode())


def test_the_hostile_pod_page_shows_the_escaped_values(client_logged_in, hostile):
    snapshot_id, _ = hostile
    html = client_logged_in.get(
        reverse("pod-detail", args=[snapshot_id, "team", POD])
    ).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the event and status messages
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
