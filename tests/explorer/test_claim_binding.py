"""The claim page's binding view (issue 25 part 3, KEP-5007 and KEP-4817): per allocated device
its binding and failure conditions with their state, the binding timeout, the deadline and the
time left at capture, and the device's status conditions and network data.

Captured at 12:00; kube-scheduler's default binding timeout is 10 min.
"""

from __future__ import annotations

import html as htmllib
import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from tests.dra.builders import claim, consumer, device, node, pod, resource_slice, result
from tests.stored import import_analysed

pytestmark = pytest.mark.django_db

CAPTURED = "2026-08-10T12:00:00Z"
HOSTILE = "<script>alert(1)</script>"


def attached(name: str, gpu: str, allocated_at: str, **status: Any) -> list[dict[str, Any]]:
    """A Pod waiting on claim ``name`` whose device has binding conditions."""
    waiting = pod(name, claims=[{"name": "gpu", "resourceClaimName": name}])
    c = claim(
        name,
        results=[
            result(
                device_name=gpu,
                bindingConditions=["Attached"],
                bindingFailureConditions=["AttachFailed"],
            )
        ],
        reserved_for=[consumer(waiting)],
        device_statuses=[{"driver": "gpu.example.com", "pool": "node-1", "device": gpu, **status}]
        if status
        else (),
    )
    c["status"]["allocation"]["allocationTimestamp"] = allocated_at
    return [waiting, c]


def condition(type_: str, status: str, **extra: str) -> dict[str, str]:
    return {"type": type_, "status": status, "lastTransitionTime": "2026-08-10T11:59:00Z", **extra}


@pytest.fixture
def snapshot() -> Any:
    objects = [
        {
            "apiVersion": "dradash.io/v1",
            "kind": "SnapshotInfo",
            "metadata": {"name": "info"},
            "spec": {"cluster": "lab", "capturedAt": CAPTURED, "serverVersion": "v1.37.0"},
        },
        node("node-1"),
        resource_slice(
            "node-1-gpus", node_name="node-1", devices=[device(f"gpu-{i}") for i in range(4)]
        ),
        *attached("waiting", "gpu-0", "2026-08-10T11:58:00Z"),
        *attached(
            "broken",
            "gpu-1",
            "2026-08-10T11:58:00Z",
            conditions=[condition("AttachFailed", "True", reason="NoPath", message=HOSTILE)],
        ),
        *attached("late", "gpu-2", "2026-08-10T11:40:00Z"),
        *attached(
            "wired",
            "gpu-3",
            "2026-08-10T11:58:00Z",
            conditions=[
                condition("Attached", "True", reason="Ready", message="attached to the fabric"),
                condition("Ready", "True"),
            ],
            networkData={
                "interfaceName": "net1",
                "ips": ["10.9.0.5/24", "fd00::5/64"],
                "hardwareAddress": "ea:9f:a4:11:22:33",
            },
            data={"fabric": "rdma-0"},
        ),
    ]
    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}).encode()
    return import_analysed(files=[("binding.json", body)])


def page(client: Client, snapshot: Any, name: str) -> str:
    response = client.get(reverse("claim-detail", args=[snapshot.pk, "default", name]))
    assert response.status_code == 200
    return response.content.decode()


def words(html: str) -> str:
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", html)))


def table(html: str, css: str) -> str:
    return words(html.split(f'class="table compact {css}"', 1)[1].split("</table>", 1)[0])


def test_pending_binding_conditions_show_their_state_and_the_time_left(
    client_logged_in, snapshot
) -> None:
    html = page(client_logged_in, snapshot, "waiting")

    times = table(html, "claim-binding-times")
    assert "2026-08-10T11:58:00Z" in times and "2026-08-10T12:08:00Z" in times
    assert "8 min left, waiting for Attached" in times
    conditions = table(html, "device-binding")
    assert "Attached must be True to bind unset" in conditions
    assert "AttachFailed True fails the binding unset" in conditions
    assert "10 min" in words(html)  # the timeout


def test_a_true_failure_condition_shows_the_binding_failed(client_logged_in, snapshot) -> None:
    html = page(client_logged_in, snapshot, "broken")

    assert "binding failed" in words(html)
    conditions = table(html, "device-binding")
    assert "AttachFailed True fails the binding True NoPath" in conditions
    assert "Binding failed: AttachFailed is True." in words(html)
    assert HOSTILE not in html and htmllib.escape(HOSTILE) in html


def test_a_claim_past_its_deadline_says_how_long_ago_it_timed_out(
    client_logged_in, snapshot
) -> None:
    times = table(page(client_logged_in, snapshot, "late"), "claim-binding-times")

    assert "timed out 10 min ago, waiting for Attached" in times


def test_the_device_status_shows_its_conditions_and_network_data(
    client_logged_in, snapshot
) -> None:
    html = page(client_logged_in, snapshot, "wired")

    assert "all True" in words(html)
    assert "Attached must be True to bind True Ready" in table(html, "device-binding")
    status = table(html, "device-status-conditions")
    assert "Attached True Ready attached to the fabric" in status and "Ready True" in status
    network = table(html, "device-network")
    assert "net1" in network and "10.9.0.5/24 , fd00::5/64" in network
    assert "ea:9f:a4:11:22:33" in network
    assert '"fabric": "rdma-0"' in htmllib.unescape(html.split("device-data", 1)[1])


def test_the_claim_page_fragment_carries_the_binding_view(client_logged_in, snapshot) -> None:
    url = reverse("claim-detail", args=[snapshot.pk, "default", "waiting"])
    response = client_logged_in.get(url, headers={"HX-Request": "true"})

    assert b"<html" not in response.content
    assert b"claim-binding-times" in response.content
