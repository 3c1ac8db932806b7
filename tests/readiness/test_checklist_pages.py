"""The acceptance checklist page and API of a snapshot."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from dradash.snapshots.services import bundle_import
from tests.stored import analysed, import_analysed

pytestmark = pytest.mark.django_db

DEMO_FAILING = {
    "claims-name-existing-classes",
    "claim-references-match",
    "no-nodename-bypass",
    "no-leaked-claims",
    "capacity-covers-job-parallelism",
}


def test_the_demo_checklist_fails_what_is_wrong_and_links_the_objects(
    client_logged_in, demo
) -> None:
    snapshot = demo[0]
    response = client_logged_in.get(reverse("snapshot-checklist", args=[snapshot.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "3 of 8 items pass, <strong>5 fail</strong>" in html
    # the failing items name their objects, linked to the object's page in this snapshot
    pod = reverse("pod-detail", args=[snapshot.pk, "manual", "pinned-job"])
    claim = reverse("claim-detail", args=[snapshot.pk, "team-amd", "rocm-smoke-gpu-v2n8r"])
    assert f'href="{pod}"' in html
    assert f'href="{claim}"' in html
    # the gang's Job: fewer Pods would leave the gang waiting, so the step is the gang's
    assert "kubectl edit podgroup -n llm-train llm-train" in html
    # the nav shows where we are
    assert 'aria-current="page">Checklist</a>' in html


def test_the_checklist_api_returns_the_items_in_order(api_client, demo) -> None:
    response = api_client.get(f"/api/v1/snapshots/{demo[0].pk}/checklist")
    assert response.status_code == 200
    items = response.json()
    assert [i["code"] for i in items][:3] == [
        "dra-v1-served",
        "device-classes-cover-drivers",
        "slices-report-nodes-and-attributes",
    ]
    assert {i["code"] for i in items if i["status"] == "fail"} == DEMO_FAILING
    bypass = next(i for i in items if i["code"] == "no-nodename-bypass")
    assert {"kind": "Pod", "namespace": "manual", "name": "pinned-job"} in bypass["evidence"]
    assert bypass["evidence_total"] == len(bypass["evidence"])


def test_a_healthy_cluster_passes_and_unknowns_say_why(client_logged_in) -> None:
    """A snapshot with one healthy slice and class, where Jobs could not be read."""
    objects = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-1-gpu.example.com-x"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "node-1",
                "pool": {"generation": 1, "name": "node-1", "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0", "attributes": {"index": {"int": 0}}}],
            },
        },
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
    ]
    bundle = {
        "apiVersion": "v1",
        "kind": "List",
        "items": objects,
    }
    snapshot = bundle_import(
        files=[("healthy.json", json.dumps(bundle).encode())], cluster_name="healthy"
    )
    snapshot.kinds["Job"] = {"status": "forbidden", "count": 0, "message": "jobs is forbidden"}
    snapshot.save(update_fields=["kinds"])
    analysed(snapshot)
    html = client_logged_in.get(reverse("snapshot-checklist", args=[snapshot.pk])).content.decode()
    assert "fail</strong>" not in html
    assert "cannot be judged from this snapshot" in html
    assert "Job" in html


def test_cluster_strings_on_the_checklist_are_escaped(client_logged_in) -> None:
    xss = '<script>alert("x")</script>'
    objects = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1"},
            "spec": {
                "nodeName": "n1",
                "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": xss}],
            },
            "status": {"phase": "Pending"},
        },
        # The bundle says templates and claims were listed and none found: the broken reference
        # is then a fact (without it, a template absent from a bundle proves nothing).
        {
            "apiVersion": "dradash.io/v1",
            "kind": "SnapshotInfo",
            "metadata": {"name": "x"},
            "spec": {
                "kinds": {
                    "ResourceClaimTemplate": {"status": "absent"},
                    "ResourceClaim": {"status": "absent"},
                }
            },
        },
    ]
    snapshot = import_analysed(files=[("xss.json", json.dumps(objects).encode())], cluster_name="x")
    html = client_logged_in.get(reverse("snapshot-checklist", args=[snapshot.pk])).content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert" in html


def test_unknown_snapshot_is_404(client_logged_in, api_client) -> None:
    assert client_logged_in.get(reverse("snapshot-checklist", args=[424242])).status_code == 404
    assert api_client.get("/api/v1/snapshots/424242/checklist").status_code == 404


def test_the_overview_counts_the_checklist_and_links_checklist_and_capacity(
    client_logged_in, demo
) -> None:
    snapshot = demo[0]
    html = client_logged_in.get(reverse("snapshot-detail", args=[snapshot.pk])).content.decode()
    assert "checklist items pass, 5 fail" in html
    assert f'href="{reverse("snapshot-checklist", args=[snapshot.pk])}"' in html
    assert f'href="{reverse("snapshot-capacity", args=[snapshot.pk])}"' in html
