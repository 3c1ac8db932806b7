from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

URL = "/api/v1/selectors/evaluate"
H100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"


def post(client, **body):
    return client.post(URL, body, format="json")


def test_the_url_is_the_designed_one() -> None:
    assert reverse("api-selector-evaluate") == URL


def test_evaluates_against_a_snapshot(api_client, demo) -> None:
    response = post(api_client, expression=H100, snapshot=demo[0].pk)
    assert response.status_code == 200
    data = response.json()
    assert data["compile_error"] is None
    assert data["summary"] == {"matched": 17, "unmatched": 4, "errors": 16, "unknown": 0}
    assert len(data["results"]) == 37
    row = next(r for r in data["results"] if r["pool"] == "h100-node-01" and r["device"] == "gpu-0")
    assert row == {
        "driver": "gpu.nvidia.com",
        "pool": "h100-node-01",
        "device": "gpu-0",
        "node": "h100-node-01",
        "matches": True,
        "error": None,
        "unknown": False,
        "failed_clauses": [],
    }
    error = next(r for r in data["results"] if r["driver"] == "gpu.example.com")
    assert error["matches"] is None
    assert error["error"] == "CEL runtime error: no such key: productName"


def test_a_device_class_narrows_first(api_client, demo) -> None:
    data = post(
        api_client, expression=H100, snapshot=demo[0].pk, device_class="gpu.nvidia.com"
    ).json()
    assert data["summary"] == {"matched": 8, "unmatched": 29, "errors": 0, "unknown": 0}


def test_inline_resource_slices_in_an_older_api_version(api_client, fixtures_dir) -> None:
    import yaml

    text = (
        fixtures_dir / "dra-example-driver__legacy-v1beta1__README__resourceslice-list-8gpu.yaml"
    ).read_text()
    slices = yaml.safe_load(text)["items"]
    data = post(
        api_client,
        expression="device.attributes['gpu.example.com'].index >= 6",
        resource_slices=slices,
    ).json()
    assert data["summary"] == {"matched": 2, "unmatched": 6, "errors": 0, "unknown": 0}
    assert {r["device"] for r in data["results"] if r["matches"]} == {"gpu-6", "gpu-7"}


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("?!", "Syntax error"),
        ("1", "must evaluate to bool or the unknown type, not int"),
        ("x == 1", "undeclared reference to 'x'"),
        ("true" + " " * 10_240, "Too long"),
    ],
)
def test_invalid_expressions_are_compile_errors_not_500s(
    api_client, demo, expression, message
) -> None:
    response = post(api_client, expression=expression, snapshot=demo[0].pk)
    assert response.status_code == 200
    data = response.json()
    assert message in data["compile_error"]["message"]
    assert data["results"] == []
    assert data["summary"] == {"matched": 0, "unmatched": 0, "errors": 0, "unknown": 0}


def test_an_expensive_expression_ends_in_the_cost_limit(api_client) -> None:
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    expression = (
        f"{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, {ten}.all(e, {ten}.all(f, true))))))"
    )
    slices = [
        {
            "metadata": {"name": "s"},
            "spec": {
                "driver": "d",
                "nodeName": "n",
                "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "x"}],
            },
        }
    ]
    data = post(api_client, expression=expression, resource_slices=slices).json()
    assert data["results"][0]["matches"] is None
    assert "actual cost limit exceeded" in data["results"][0]["error"]
    assert data["results"][0]["unknown"] is False  # Kubernetes' answer, not dradash's limit


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"snapshot": 1}, "expression"),
        ({"expression": "true"}, "non_field_errors"),
        ({"expression": "true", "snapshot": 1, "resource_slices": []}, "non_field_errors"),
        ({"expression": "true", "snapshot": 999999}, "snapshot"),
        (
            {"expression": "true", "resource_slices": [{"kind": "Pod", "apiVersion": "v1"}]},
            "resource_slices",
        ),
        ({"expression": "true", "resource_slices": [], "device_class": "x"}, "device_class"),
        ({"expression": "true", "resource_slices": "nope"}, "resource_slices"),
    ],
)
def test_bad_requests_say_what_is_wrong(api_client, demo, body, field) -> None:
    if body.get("snapshot") == 1:
        body["snapshot"] = demo[0].pk
    response = post(api_client, **body)
    assert response.status_code == 400
    assert field in response.json()


def test_an_unknown_device_class_is_a_400(api_client, demo) -> None:
    response = post(api_client, expression="true", snapshot=demo[0].pk, device_class="nope")
    assert response.status_code == 400
    assert response.json() == {"device_class": ["device class nope does not exist"]}


def test_anonymous_requests_are_refused(client, demo) -> None:
    response = client.post(
        URL, {"expression": "true", "snapshot": demo[0].pk}, content_type="application/json"
    )
    assert response.status_code in (401, 403)


def inline_slice(name: str, devices: int, **spec: object) -> dict[str, object]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "nodeName": name,
            "devices": [{"name": f"gpu-{i}"} for i in range(devices)],
            **spec,
        },
    }


def test_inline_slices_are_refused_where_the_api_server_refuses_them(api_client) -> None:
    """As an import refuses them: with each problem's field path, and nothing evaluated."""
    too_many = inline_slice("node-a", 129)
    no_pool = inline_slice("node-b", 1)
    del no_pool["spec"]["pool"]  # type: ignore[attr-defined]
    v1beta1_shape = inline_slice("node-c", 1)
    v1beta1_shape["spec"]["devices"][0]["basic"] = {}  # type: ignore[index]
    fine = inline_slice("node-d", 2)
    response = post(
        api_client,
        expression="true",
        resource_slices=[too_many, no_pool, fine, v1beta1_shape],
    )
    assert response.status_code == 400
    refused = response.json()["resource_slices"]
    assert refused["0"] == ["spec.devices: Too many: 129: must have at most 128 items"]
    assert refused["1"] == ["spec.pool: Required value"]
    assert refused["3"][0].startswith(
        'spec.devices[0].basic: unknown field "spec.devices[0].basic": it is the v1beta1 device '
        "wrapper"
    )
    assert set(refused) == {"0", "1", "3"}
    # The valid one alone is evaluated.
    assert post(api_client, expression="true", resource_slices=[fine]).json()["summary"] == {
        "matched": 2,
        "unmatched": 0,
        "errors": 0,
        "unknown": 0,
    }


def test_inline_slices_hold_a_bounded_number_of_devices_in_all(api_client) -> None:
    # The probe was one slice of 800,000 devices (27.6 s, 861 MB); counting comes first.
    one_huge = [inline_slice("node-a", 20_000)]
    response = post(api_client, expression="true", resource_slices=one_huge)
    assert response.status_code == 400
    assert response.json() == {
        "resource_slices": [
            "20,000 devices in all: at most 10,000 are evaluated inline; store the slices as a "
            "snapshot (upload or import them) and give its id instead"
        ]
    }
    many_valid = [inline_slice(f"node-{i}", 128) for i in range(79)]  # 10,112 devices
    response = post(api_client, expression="true", resource_slices=many_valid)
    assert response.status_code == 400
    assert "10,112 devices in all" in response.json()["resource_slices"][0]
