"""The test Kubernetes API server itself (tests/kubeapi.py), spoken to with plain urllib."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.kubeapi import KubeAPIServer, fixture_objects, legacy_v1beta1_objects


@pytest.fixture
def api() -> Iterator[KubeAPIServer]:
    with KubeAPIServer(fixture_objects()) as server:
        yield server


def call(
    api: KubeAPIServer,
    path: str,
    *,
    token: str | None = "default",
    body: dict | None = None,
) -> tuple[int, dict[str, str], dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {api.token if token == 'default' else token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(api.url + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.load(response)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.load(e)


def get(api: KubeAPIServer, path: str) -> dict[str, Any]:
    status, _, body = call(api, path)
    assert status == 200, body
    return body


def assert_status(body: dict[str, Any], code: int, reason: str) -> None:
    assert body["kind"] == "Status"
    assert body["apiVersion"] == "v1"
    assert body["status"] == "Failure"
    assert body["code"] == code
    assert body["reason"] == reason
    assert body["message"]


def walk(api: KubeAPIServer, path: str, limit: int) -> list[dict[str, Any]]:
    items, token = [], ""
    while True:
        page = get(api, f"{path}?limit={limit}" + (f"&continue={token}" if token else ""))
        assert len(page["items"]) <= limit
        items += page["items"]
        token = page["metadata"].get("continue", "")
        if not token:
            return items


# --- discovery -------------------------------------------------------------------------------


def test_it_serves_the_version(api: KubeAPIServer) -> None:
    version = get(api, "/version")

    assert version["gitVersion"] == "v1.36.1"
    assert (version["major"], version["minor"]) == ("1", "36")


def test_it_lists_resource_k8s_io_with_the_configured_versions_preferred_first(
    api: KubeAPIServer,
) -> None:
    groups = {g["name"]: g for g in get(api, "/apis")["groups"]}

    dra = groups["resource.k8s.io"]
    assert [v["groupVersion"] for v in dra["versions"]] == [
        "resource.k8s.io/v1",
        "resource.k8s.io/v1beta2",
        "resource.k8s.io/v1beta1",
    ]
    assert dra["preferredVersion"] == {"groupVersion": "resource.k8s.io/v1", "version": "v1"}
    assert {"batch", "scheduling.k8s.io", "events.k8s.io", "authorization.k8s.io"} <= set(groups)
    assert get(api, "/api")["versions"] == ["v1"]


def test_it_lists_the_resources_of_each_group_version(api: KubeAPIServer) -> None:
    core = {r["name"]: r for r in get(api, "/api/v1")["resources"]}
    dra = {r["name"]: r for r in get(api, "/apis/resource.k8s.io/v1")["resources"]}
    beta1 = {r["name"] for r in get(api, "/apis/resource.k8s.io/v1beta1")["resources"]}

    assert {"pods", "nodes", "namespaces", "events", "secrets", "configmaps"} <= set(core)
    assert core["pods"]["namespaced"] and not core["nodes"]["namespaced"]
    assert dra["resourceclaims"]["namespaced"] and dra["resourceclaimtemplates"]["namespaced"]
    assert not dra["resourceslices"]["namespaced"] and not dra["deviceclasses"]["namespaced"]
    assert dra["devicetaintrules"]["kind"] == "DeviceTaintRule"
    assert "devicetaintrules" not in beta1  # never existed in v1beta1
    assert get(api, "/apis/resource.k8s.io/v1")["groupVersion"] == "resource.k8s.io/v1"


def test_only_configured_resource_versions_are_served() -> None:
    with KubeAPIServer([], resource_versions=("v1beta1",)) as api:
        groups = {g["name"]: g for g in get(api, "/apis")["groups"]}

        assert [v["version"] for v in groups["resource.k8s.io"]["versions"]] == ["v1beta1"]
        status, _, body = call(api, "/apis/resource.k8s.io/v1/resourceclaims")
        assert status == 404
        assert_status(body, 404, "NotFound")


# --- lists and objects -----------------------------------------------------------------------


def test_lists_page_with_limit_and_an_opaque_continue_token(api: KubeAPIServer) -> None:
    everything = get(api, "/api/v1/pods")
    first = get(api, "/api/v1/pods?limit=4")

    assert everything["kind"] == "PodList" and everything["apiVersion"] == "v1"
    assert "continue" not in everything["metadata"]
    assert len(first["items"]) == 4
    assert first["metadata"]["continue"] and first["metadata"]["resourceVersion"]
    assert first["metadata"]["remainingItemCount"] == len(everything["items"]) - 4
    assert walk(api, "/api/v1/pods", 4) == everything["items"]


def test_list_items_carry_no_kind_or_api_version(api: KubeAPIServer) -> None:
    items = get(api, "/apis/resource.k8s.io/v1/resourceclaims")["items"]

    assert items
    assert all("kind" not in i and "apiVersion" not in i for i in items)
    assert all(i["metadata"]["resourceVersion"] and i["metadata"]["uid"] for i in items)


def test_it_lists_per_namespace_and_gets_one_object(api: KubeAPIServer) -> None:
    pods = get(api, "/api/v1/namespaces/web/pods")["items"]
    one = get(api, "/api/v1/namespaces/web/pods/frontend-6d4cf56db6-abcde")
    node = get(api, "/api/v1/nodes/control-plane")

    assert {p["metadata"]["namespace"] for p in pods} == {"web"}
    assert len(pods) == 2
    assert one["kind"] == "Pod" and one["apiVersion"] == "v1"
    assert one["metadata"]["name"] == "frontend-6d4cf56db6-abcde"
    assert node["kind"] == "Node"


def test_a_missing_object_is_a_not_found_status(api: KubeAPIServer) -> None:
    status, _, body = call(api, "/api/v1/namespaces/web/pods/nope")

    assert status == 404
    assert_status(body, 404, "NotFound")
    assert body["message"] == 'pods "nope" not found'


def test_unknown_paths_are_a_not_found_status(api: KubeAPIServer) -> None:
    for path in ("/nope", "/apis/example.com/v1", "/api/v1/widgets", "/api/v1/namespaces/x/nodes"):
        status, _, body = call(api, path)
        assert status == 404, path
        assert_status(body, 404, "NotFound")


def test_v1_objects_are_served_under_every_version_and_older_ones_under_their_own() -> None:
    objects = fixture_objects() + legacy_v1beta1_objects()
    with KubeAPIServer(objects) as api:
        v1 = get(api, "/apis/resource.k8s.io/v1/resourceslices")
        beta2 = get(api, "/apis/resource.k8s.io/v1beta2/resourceslices")
        beta1 = get(api, "/apis/resource.k8s.io/v1beta1/resourceslices")
        one = get(
            api,
            f"/apis/resource.k8s.io/v1beta2/resourceslices/{v1['items'][0]['metadata']['name']}",
        )

    assert beta2["apiVersion"] == "resource.k8s.io/v1beta2"
    assert beta2["items"] == v1["items"]
    assert one["apiVersion"] == "resource.k8s.io/v1beta2"
    legacy = {i["metadata"]["name"] for i in beta1["items"]} - {
        i["metadata"]["name"] for i in v1["items"]
    }
    assert legacy  # the v1beta1 slice is only under v1beta1
    assert any("basic" in d for i in beta1["items"] for d in i["spec"].get("devices", []))


def test_secrets_and_config_maps_exist_so_tests_can_prove_they_are_never_read(
    api: KubeAPIServer,
) -> None:
    assert get(api, "/api/v1/secrets")["items"]
    assert get(api, "/api/v1/configmaps")["items"]


def test_every_request_is_recorded_with_its_query(api: KubeAPIServer) -> None:
    get(api, "/api/v1/pods?limit=3")

    assert api.requests[-1] == ("GET", "/api/v1/pods", {"limit": "3"})


# --- authentication --------------------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "wrong"])
def test_a_missing_or_wrong_token_is_unauthorized(api: KubeAPIServer, token: str | None) -> None:
    for path in ("/version", "/apis", "/api/v1/pods"):
        status, _, body = call(api, path, token=token)
        assert status == 401
        assert_status(body, 401, "Unauthorized")


# --- faults ----------------------------------------------------------------------------------


def test_forbid_answers_403_worded_like_the_apiserver(api: KubeAPIServer) -> None:
    api.forbid("priorityclasses", "scheduling.k8s.io")
    api.forbid("pods")

    status, _, body = call(api, "/apis/scheduling.k8s.io/v1/priorityclasses")
    _, _, namespaced = call(api, "/api/v1/namespaces/web/pods")

    assert status == 403
    assert_status(body, 403, "Forbidden")
    assert body["message"] == (
        "priorityclasses.scheduling.k8s.io is forbidden: User "
        '"system:serviceaccount:dradash:dradash" cannot list resource "priorityclasses" '
        'in API group "scheduling.k8s.io" at the cluster scope'
    )
    assert namespaced["message"].endswith('in API group "" in the namespace "web"')
    assert get(api, "/api/v1/nodes")["items"]


def test_self_subject_access_review_denies_exactly_the_forbidden_kinds(api: KubeAPIServer) -> None:
    api.forbid("resourceslices", "resource.k8s.io")

    def allowed(group: str, resource: str) -> bool:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "list", "group": group, "resource": resource}},
        }
        status, _, body = call(
            api, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review
        )
        assert status == 201
        assert body["kind"] == "SelfSubjectAccessReview"
        return body["status"]["allowed"]

    assert not allowed("resource.k8s.io", "resourceslices")
    assert allowed("resource.k8s.io", "resourceclaims")
    assert allowed("", "pods")


def test_hide_removes_a_kind_from_discovery_and_lists(api: KubeAPIServer) -> None:
    api.hide("devicetaintrules", "resource.k8s.io")

    names = {r["name"] for r in get(api, "/apis/resource.k8s.io/v1")["resources"]}
    status, _, body = call(api, "/apis/resource.k8s.io/v1/devicetaintrules")

    assert "devicetaintrules" not in names
    assert status == 404
    assert_status(body, 404, "NotFound")


def test_fail_answers_the_status_the_given_number_of_times(api: KubeAPIServer) -> None:
    api.fail("/api/v1/pods", 429, times=2, retry_after=7)
    api.fail("/apis/resource.k8s.io", 503)

    answers = [call(api, "/api/v1/pods") for _ in range(3)]
    status, _, body = call(api, "/apis/resource.k8s.io/v1/resourceslices")

    assert [a[0] for a in answers] == [429, 429, 200]
    assert answers[0][1]["Retry-After"] == "7"
    assert_status(answers[0][2], 429, "TooManyRequests")
    assert answers[0][2]["details"]["retryAfterSeconds"] == 7
    assert status == 503
    assert_status(body, 503, "ServiceUnavailable")
    assert get(api, "/api/v1/nodes")


def test_expire_continue_answers_410_only_to_requests_with_a_token(api: KubeAPIServer) -> None:
    token = get(api, "/api/v1/pods?limit=2")["metadata"]["continue"]
    api.expire_continue("pods")

    assert call(api, "/api/v1/pods?limit=2")[0] == 200
    status, _, body = call(api, f"/api/v1/pods?limit=2&continue={token}")
    again = call(api, f"/api/v1/pods?limit=2&continue={token}")

    assert status == 410
    assert_status(body, 410, "Expired")
    assert again[0] == 200


def test_slow_delays_the_answer(api: KubeAPIServer) -> None:
    api.slow("/api/v1/nodes", 0.3)

    started = time.monotonic()
    get(api, "/api/v1/nodes")
    slow = time.monotonic() - started
    started = time.monotonic()
    get(api, "/api/v1/nodes")

    assert slow >= 0.3
    assert time.monotonic() - started < 0.3


def test_reset_faults_clears_them(api: KubeAPIServer) -> None:
    api.forbid("pods")
    api.hide("nodes")
    api.fail("/api", 500, times=5)
    api.reset_faults()

    assert get(api, "/api/v1/pods")["items"]
    assert get(api, "/api/v1/nodes")["items"]


def test_it_writes_a_kubeconfig_for_itself(api: KubeAPIServer, tmp_path: Any) -> None:
    import yaml

    path = api.kubeconfig(tmp_path, context="ctx")
    config = yaml.safe_load(path.read_text())

    assert config["current-context"] == "ctx"
    assert config["clusters"][0]["cluster"]["server"] == api.url
    assert config["users"][0]["user"]["token"] == api.token
