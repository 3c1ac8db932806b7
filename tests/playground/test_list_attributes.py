"""List-typed attributes (KEP-5491) in the playground: a snapshot is judged by its release's CEL,
with DRAListTypeAttributes on where its slices hold list attributes (the apiserver keeps them
only with the gate on), and a selector the scheduler runs but the apiserver would refuse in a
new claim says so."""

from __future__ import annotations

import json

import pytest

from tests.stored import import_analysed

pytestmark = pytest.mark.django_db

URL = "/api/v1/selectors/evaluate"
KEP = "kep-5491-dra-list-types-for-attributes__block311.yaml"
PCIE = 'device.attributes["resource.kubernetes.io"].pcieRoot.includes("pci0000:01")'


def snapshot_of(fixtures_dir, version: str):
    info = {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "info"},
        "spec": {"serverVersion": version},
    }
    return import_analysed(
        files=[
            ("slices.yaml", (fixtures_dir / KEP).read_bytes()),
            ("info.json", json.dumps(info).encode()),
        ],
        cluster_name="kep-5491",
    )


def evaluate(api_client, snapshot, expression: str) -> dict:
    response = api_client.post(
        URL, {"expression": expression, "snapshot": snapshot.pk}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_list_and_scalar_attributes_both_answer_includes_on_1_36(api_client, fixtures_dir) -> None:
    data = evaluate(api_client, snapshot_of(fixtures_dir, "v1.36.1"), PCIE)
    assert data["compile_error"] is None and data["new_selector_error"] is None
    matched = {r["device"] for r in data["results"] if r["matches"]}
    # cpu-0 lists pci0000:01 among two roots; gpu-0 and nic-0 publish it as a plain string.
    assert matched == {"cpu-0", "gpu-0", "nic-0"}
    assert data["summary"] == {"matched": 3, "unmatched": 1, "errors": 0, "unknown": 0}


def test_a_1_35_server_knows_neither_lists_nor_includes(api_client, fixtures_dir) -> None:
    snapshot = snapshot_of(fixtures_dir, "v1.35.2")
    data = evaluate(api_client, snapshot, PCIE)
    assert "undeclared reference to 'includes'" in data["compile_error"]["message"]
    data = evaluate(api_client, snapshot, 'device.driver != ""')
    errors = {r["device"]: r["error"] for r in data["results"] if r["error"]}
    assert errors == {
        "cpu-0": "attribute pcieRoot: unsupported attribute value",
        "cpu-1": "attribute pcieRoot: unsupported attribute value",
    }


def test_the_page_says_why_list_attributes_fail(client_logged_in, fixtures_dir) -> None:
    snapshot = snapshot_of(fixtures_dir, "v1.35.2")
    page = client_logged_in.get(
        "/playground/", {"snapshot": snapshot.pk, "expression": 'device.driver != ""'}
    ).content.decode()
    assert "<code>pcieRoot</code> is a <strong>list-typed attribute</strong>" in page
    assert "Kubernetes 1.35 has no list-typed attributes" in page


def test_includes_without_the_gate_runs_but_a_new_claim_would_be_refused(
    api_client, client_logged_in, demo
) -> None:
    expression = 'device.attributes["gpu.nvidia.com"].architecture.includes("Hopper")'
    data = evaluate(api_client, demo[0], expression)
    assert data["compile_error"] is None
    assert data["summary"]["matched"] > 0
    assert "undeclared reference to 'includes'" in data["new_selector_error"]["message"]
    page = client_logged_in.get(
        "/playground/", {"snapshot": demo[0].pk, "expression": expression}
    ).content.decode()
    assert "The scheduler runs it, but a new selector with it is refused" in page
    assert "need <code>DRAListTypeAttributes</code>" in page


def test_a_selector_too_costly_for_a_new_claim_says_so(api_client, client_logged_in, demo) -> None:
    """The apiserver's static cost estimate: ``!=`` on quantities is costed as a comparison of
    values of unknown size (only ``==`` has Kubernetes' O(1) estimate), far over 1,000,000."""
    expression = 'device.capacity["gpu.nvidia.com"].memory != quantity("1Gi")'
    data = evaluate(api_client, demo[0], expression)
    assert data["compile_error"] is None
    assert data["summary"]["matched"] > 0
    assert data["new_selector_error"] == {"message": "too complex, exceeds cost limit"}
    equal = 'device.capacity["gpu.nvidia.com"].memory == quantity("1Gi")'
    assert evaluate(api_client, demo[0], equal)["new_selector_error"] is None
    page = client_logged_in.get(
        "/playground/", {"snapshot": demo[0].pk, "expression": expression}
    ).content.decode()
    assert "estimates the worst-case cost of a new or changed selector" in page
    assert "need <code>DRAListTypeAttributes</code>" not in page
