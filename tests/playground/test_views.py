from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from dradash.analysis.models import SnapshotAnalysis
from tests.stored import import_analysed

pytestmark = pytest.mark.django_db

INDEX = (
    "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')"
    " && device.attributes['gpu.nvidia.com'].index == 0"
)


def page(client, **params) -> str:
    response = client.get(f"{reverse('playground')}?{urlencode(params)}")
    assert response.status_code == 200
    return response.content.decode().replace("<wbr>", "")  # where long names may wrap


def test_empty_playground_invites_an_expression(client_logged_in, demo) -> None:
    html = page(client_logged_in)
    assert "Selector playground" in html
    assert "Write an expression above" in html
    assert f'value="{demo[1].pk}" selected' in html  # the newest snapshot by default
    # what it is evaluated against: the devices the API evaluates, not the bundle's objects
    devices = SnapshotAnalysis.objects.get(snapshot=demo[1]).summary["devices"]
    assert devices > 20
    assert f"against the {devices} devices of snapshot #{demo[1].pk}" in html


def test_results_show_matches_misses_and_errors(client_logged_in, demo) -> None:
    html = page(client_logged_in, snapshot=demo[0].pk, expression=INDEX)
    assert "it aborts scheduling of any Pod whose claim uses this selector" in html
    assert "CEL runtime error: no such key: index" in html
    assert "Nearest misses" in html
    assert "a100-node-01" in html
    # the link that reproduces the result
    assert "Link to this result" in html
    assert "expression=device.attributes" in html


def test_a_class_applies_first_and_matching_devices_are_listed(client_logged_in, demo) -> None:
    html = page(
        client_logged_in,
        snapshot=demo[0].pk,
        **{"class": "mig.nvidia.com"},
        expression="device.attributes['gpu.nvidia.com'].profile == '3g.40gb'",
    )
    assert "gpu-1-mig-3g40gb-9-0" in html
    assert "not in class mig.nvidia.com" in html
    assert "Nearest misses" in html


def test_a_compile_error_is_explained(client_logged_in, demo) -> None:
    html = page(client_logged_in, snapshot=demo[0].pk, expression="device.attributes[")
    assert "The expression does not compile" in html
    assert "Syntax error" in html


def test_a_new_snapshot_refreshes_the_class_list(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("playground"),
        {"snapshot": demo[0].pk, "expression": "true"},
        headers={"HX-Request": "true", "HX-Trigger-Name": "snapshot"},
    )
    html = response.content.decode()
    assert "<html" not in html
    assert html.lstrip().startswith('<section id="results">')
    assert 'hx-swap-oob="true"' in html
    assert "mig.nvidia.com" in html


def test_other_changes_leave_the_class_select_alone(client_logged_in, demo) -> None:
    """The user may be choosing in it while the expression's request is on its way."""
    for trigger in ({}, {"HX-Trigger-Name": "class"}):
        response = client_logged_in.get(
            reverse("playground"),
            {"snapshot": demo[0].pk, "expression": "true", "class": "gpu.nvidia.com"},
            headers={"HX-Request": "true", **trigger},
        )
        html = response.content.decode()
        assert html.lstrip().startswith('<section id="results">')
        assert "hx-swap-oob" not in html
        assert '<select name="class"' not in html


def test_an_unknown_class_is_said_so(client_logged_in, demo) -> None:
    html = page(client_logged_in, snapshot=demo[0].pk, expression="true", **{"class": "nope"})
    assert "device class nope does not exist" in html


def test_bad_parameters_are_400(client_logged_in, demo) -> None:
    response = client_logged_in.get(reverse("playground"), {"snapshot": "abc"})
    assert response.status_code == 400


def test_expression_text_is_escaped(client_logged_in, demo) -> None:
    html = page(
        client_logged_in, snapshot=demo[0].pk, expression='"<script>alert(1)</script>" == ""'
    )
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;" in html


def test_claim_pages_link_their_selectors_to_the_playground(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("claim-detail", args=[demo[0].pk, "gpu-test6", "pod-5c8d7b9f4-qx2lm-gpu-t9h6c"])
    )
    html = response.content.decode()
    assert "open in playground" in html
    assert f"/playground/?snapshot={demo[0].pk}&amp;class=gpu.nvidia.com&amp;expression=" in html


def test_the_playground_needs_a_login(client) -> None:
    response = client.get(reverse("playground"))
    assert response.status_code == 302


def test_a_bundle_without_slices_leaves_the_device_count_unknown(client_logged_in) -> None:
    """kubectl get resourceclaims -o json proves nothing about the cluster's devices: the
    playground does not say it evaluates against 0 of them."""
    claims = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "gpu", "namespace": "ml"},
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}
                        ]
                    }
                },
            }
        ],
    }
    snapshot = import_analysed(
        files=[("claims.json", json.dumps(claims).encode())], cluster_name="claims-only"
    )
    html = page(client_logged_in, snapshot=snapshot.pk)
    assert f"against the devices of snapshot #{snapshot.pk}" in html
    assert "against the 0 devices" not in html
    assert "How many the cluster has is unknown" in html
    assert "ResourceSlice" in html
