"""Capture (dradash/kube/) through the real kubernetes client against the test API server."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client import Configuration

from dradash.dra.kinds import KINDS
from dradash.kube import capture as capture_module
from dradash.kube.capture import CaptureError, CaptureResult, capture
from dradash.kube.client import Kube, KubeError, connect
from tests.kubeapi import REDACTED_SECRET, KubeAPIServer, fixture_objects, legacy_v1beta1_objects

check_connection = capture_module.test_connection
GANG_KINDS = {"Workload", "PodGroup"}  # the test API server serves them only when asked
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# What the fixture cluster holds that a capture must leave out.
LEFT_OUT = {
    ("Pod", "web", "frontend-6d4cf56db6-abcde"),  # no DRA
    ("Pod", "web", "nightly-report-x9f2k"),  # no DRA, owned by a Job
    ("Job", "web", "nightly-report"),  # owns no DRA Pod
    ("Event", "web", "frontend-6d4cf56db6-abcde.18a1b2c3d4e5f602"),  # about a non-DRA Pod
    ("Event", "default", "control-plane.18a1b2c3d4e5f603"),  # about a Node without DRA
}


def key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj["metadata"]
    namespace = meta.get("namespace") or "default" if KINDS[obj["kind"]].namespaced else ""
    return (obj["kind"], namespace, meta["name"])


def expected_keys(objects: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """What a capture of the default test server keeps: it does not serve scheduling.k8s.io
    Workloads and PodGroups (GenericWorkload is off by default), so the demo's gang has none."""
    return {
        key(o) for o in objects if o["kind"] in KINDS and o["kind"] not in ("Workload", "PodGroup")
    } - LEFT_OUT


@pytest.fixture
def api() -> Iterator[KubeAPIServer]:
    with KubeAPIServer(fixture_objects()) as server:
        yield server


class Sleeps(list):
    """Records the backoff delays instead of sleeping them."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def kube_for(api: KubeAPIServer, tmp_path: Path, **options: Any) -> Kube:
    path = api.kubeconfig(tmp_path / "kubeconfig")
    options.setdefault("backoff", 0.01)
    options.setdefault("max_retry_after", 0.05)
    return Kube(connect(str(path), None, False), **options)


def run(api: KubeAPIServer, tmp_path: Path, page_size: int = 500, **options: Any) -> CaptureResult:
    with kube_for(api, tmp_path, **options) as kube:
        return capture(kube, page_size=page_size)


def paths(api: KubeAPIServer, endswith: str) -> list[tuple[str, dict]]:
    return [(p, q) for m, p, q in api.requests if m == "GET" and p.endswith(endswith)]


# --- what is captured ------------------------------------------------------------------------


def test_it_captures_every_dra_object_and_leaves_the_rest_out(
    api: KubeAPIServer, tmp_path: Path
) -> None:
    result = run(api, tmp_path)

    assert set(result.objects) == expected_keys(fixture_objects())
    # Workloads and PodGroups: not served without the GenericWorkload gate (test_capture_gangs).
    assert {k[0] for k in result.objects} == set(KINDS) - GANG_KINDS
    statuses = {k: s["status"] for k, s in result.kind_status.items()}
    assert statuses == {k: "not-served" if k in GANG_KINDS else "ok" for k in KINDS}
    assert result.server_version == "v1.36.1"
    assert result.api_versions == [
        "resource.k8s.io/v1",
        "resource.k8s.io/v1beta2",
        "resource.k8s.io/v1beta1",
    ]
    assert result.captured_at.tzinfo is not None
    assert result.requests == len(api.requests)


def test_objects_are_raw_json_with_kind_and_api_version_filled_in(
    api: KubeAPIServer, tmp_path: Path
) -> None:
    result = run(api, tmp_path)

    claim = next(o for k, o in result.objects.items() if k[0] == "ResourceClaim")
    assert all(o["kind"] == k[0] for k, o in result.objects.items())
    assert claim["apiVersion"] == "resource.k8s.io/v1"
    assert result.objects[("Job", "render", "render-farm")]["apiVersion"] == "batch/v1"
    assert result.objects[("PriorityClass", "", "research-high")]["value"] == 100000
    # Fields a client model would not know survive (status.extendedResourceClaimStatus).
    pod = result.objects[("Pod", "extended-resource-request", "cuda-extended")]
    assert pod["status"]["extendedResourceClaimStatus"]["requestMappings"]


def test_pods_named_only_by_a_claim_are_captured(api: KubeAPIServer, tmp_path: Path) -> None:
    objects = fixture_objects()
    pod = next(o for o in objects if o["metadata"]["name"] == "cuda-extended")
    del pod["status"]["extendedResourceClaimStatus"]  # now only the claim's reservedFor names it
    with KubeAPIServer(objects) as server:
        result = run(server, tmp_path)

    assert ("Pod", "extended-resource-request", "cuda-extended") in result.objects


def test_it_never_requests_secrets_or_config_maps(api: KubeAPIServer, tmp_path: Path) -> None:
    run(api, tmp_path, page_size=3)
    with kube_for(api, tmp_path) as kube:
        check_connection(kube)

    assert api.requests
    assert not [p for _, p, _ in api.requests if "/secrets" in p or "/configmaps" in p]


def test_it_redacts_env_values_last_applied_and_managed_fields(
    api: KubeAPIServer, tmp_path: Path
) -> None:
    result = run(api, tmp_path)

    assert REDACTED_SECRET not in json.dumps(list(result.objects.values()))
    pods = [o for k, o in result.objects.items() if k[0] == "Pod"]
    for pod in pods:
        assert "managedFields" not in pod["metadata"]
    env = pods[0]["spec"]["containers"][0]["env"]
    assert {e["name"] for e in env} == {
        "HF_TOKEN",
        "NVIDIA_VISIBLE_DEVICES",
        "POD_NAME",
        "DB_PASSWORD",
    }
    assert {e.get("value") for e in env} == {"<redacted>", None}
    assert any(e.get("valueFrom") for e in env)
    annotated = [p for p in pods if LAST_APPLIED in p["metadata"].get("annotations", {})]
    assert len(annotated) >= 20
    assert {p["metadata"]["annotations"][LAST_APPLIED] for p in annotated} == {"<redacted>"}
    init = [p for p in pods if p["spec"].get("initContainers")]
    assert init and init[0]["spec"]["initContainers"][0]["env"][0]["value"] == "<redacted>"


def test_it_pages_through_lists_with_continue(api: KubeAPIServer, tmp_path: Path) -> None:
    small = run(api, tmp_path, page_size=4)

    pod_pages = paths(api, "/api/v1/pods")
    pods = sum(1 for o in fixture_objects() if o["kind"] == "Pod")
    assert len(pod_pages) == -(-pods // 4)  # 4 a page
    assert all(q["limit"] == "4" for _, q in pod_pages)
    assert "continue" not in pod_pages[0][1]
    assert all(q["continue"] for _, q in pod_pages[1:])
    assert set(small.objects) == expected_keys(fixture_objects())


def test_kept_objects_are_handed_over_page_by_page_while_reading(
    api: KubeAPIServer, tmp_path: Path
) -> None:
    pages: list[dict] = []
    with kube_for(api, tmp_path) as kube:
        result = capture(kube, page_size=4, on_objects=pages.append)

    assert len(pages) > len(KINDS)  # several pages of several kinds
    assert all(0 < len(page) <= 4 for page in pages)
    handed = {key: obj for page in pages for key, obj in page.items()}
    assert handed == result.objects  # every object kept, redacted, and nothing else
    assert sum(len(page) for page in pages) == len(result.objects)  # each once


@pytest.mark.parametrize("expired", ["", "resourceclaims", "pods"])
def test_objects_not_held_are_handed_over_and_filtered_as_held_ones(
    api: KubeAPIServer, tmp_path: Path, expired: str
) -> None:
    with kube_for(api, tmp_path) as kube:
        held = capture(kube, page_size=4)
    if expired:  # a list restarted: its first pages come again
        api.expire_continue(expired)
    pages: list[dict] = []
    with kube_for(api, tmp_path) as kube:
        result = capture(kube, page_size=4, on_objects=pages.append, hold_objects=False)

    assert result.objects == {}  # no object held: only their keys
    assert result.keys == held.keys == set(held.objects)
    assert {key: obj for page in pages for key, obj in page.items()} == held.objects
    assert result.kind_status == held.kind_status


# --- per-kind problems -----------------------------------------------------------------------


def test_a_forbidden_kind_is_reported_and_the_rest_is_captured(
    api: KubeAPIServer, tmp_path: Path
) -> None:
    api.forbid("priorityclasses", "scheduling.k8s.io")

    result = run(api, tmp_path)

    status = result.kind_status["PriorityClass"]
    assert status["status"] == "forbidden"
    assert 'cannot list resource "priorityclasses"' in status["message"]
    assert not [k for k in result.objects if k[0] == "PriorityClass"]
    assert set(result.objects) == expected_keys(fixture_objects()) - {
        ("PriorityClass", "", "research-high")
    }
    assert {k for k, v in result.kind_status.items() if v["status"] != "ok"} == {
        "PriorityClass",
        *GANG_KINDS,  # not served
    }


def test_forbidden_claims_still_capture_the_pods_that_use_dra(
    api: KubeAPIServer, tmp_path: Path
) -> None:
    api.forbid("resourceclaims", "resource.k8s.io")

    result = run(api, tmp_path)

    assert result.kind_status["ResourceClaim"]["status"] == "forbidden"
    assert ("Pod", "gpu-test1", "pod0") in result.objects
    assert ("Pod", "extended-resource-request", "cuda-extended") in result.objects


def test_an_optional_kind_not_served_is_not_served(api: KubeAPIServer, tmp_path: Path) -> None:
    api.hide("devicetaintrules", "resource.k8s.io")

    result = run(api, tmp_path)

    assert result.kind_status["DeviceTaintRule"]["status"] == "not-served"
    assert "devicetaintrules" in result.kind_status["DeviceTaintRule"]["message"]
    assert not [p for _, p, _ in api.requests if p.endswith("/devicetaintrules")]
    assert [s for s in result.kind_status.values() if s["status"] not in ("ok", "not-served")] == []


def test_a_needed_kind_not_served_is_not_found(api: KubeAPIServer, tmp_path: Path) -> None:
    api.hide("jobs", "batch")

    result = run(api, tmp_path)

    assert result.kind_status["Job"]["status"] == "not-found"
    assert "jobs" in result.kind_status["Job"]["message"]


def test_device_taint_rules_come_from_an_older_version_when_v1_lacks_them(
    tmp_path: Path,
) -> None:
    # Kubernetes 1.36: DeviceTaintRule is beta (v1beta2), claims and slices are v1.
    with KubeAPIServer(fixture_objects(), device_taint_rules=("v1beta2",)) as server:
        result = run(server, tmp_path)

    rule = result.objects[("DeviceTaintRule", "", "example")]
    assert rule["apiVersion"] == "resource.k8s.io/v1beta2"
    assert result.objects[("DeviceClass", "", "gpu.example.com")]["apiVersion"] == (
        "resource.k8s.io/v1"
    )
    assert result.kind_status["DeviceTaintRule"]["status"] == "ok"


def test_a_cluster_without_dra_reports_the_dra_kinds_missing(tmp_path: Path) -> None:
    objects = [o for o in fixture_objects() if not o["apiVersion"].startswith("resource.k8s.io")]
    with KubeAPIServer(objects, resource_versions=()) as server:
        result = run(server, tmp_path)

    assert result.api_versions == []
    assert result.kind_status["ResourceClaim"]["status"] == "not-found"
    assert "resource.k8s.io" in result.kind_status["ResourceClaim"]["message"]
    assert result.kind_status["DeviceTaintRule"]["status"] == "not-served"
    assert result.kind_status["Node"]["status"] == "ok"


def test_a_v1beta1_only_server_is_captured_at_v1beta1(tmp_path: Path) -> None:
    core = [o for o in fixture_objects() if o["kind"] in ("Node", "Namespace")]
    with KubeAPIServer(core + legacy_v1beta1_objects(), resource_versions=("v1beta1",)) as server:
        result = run(server, tmp_path)
        dra_paths = {p for _, p, _ in server.requests if "resource.k8s.io" in p}

    assert result.api_versions == ["resource.k8s.io/v1beta1"]
    dra = [
        o for k, o in result.objects.items() if k[0] in ("ResourceSlice", "ResourceClaimTemplate")
    ]
    assert {o["apiVersion"] for o in dra} == {"resource.k8s.io/v1beta1"}
    assert len(dra) == 2
    assert ("Pod", "gpu-test1", "pod0") in result.objects
    assert dra_paths and all("/apis/resource.k8s.io/v1beta1" in p for p in dra_paths)
    assert result.kind_status["DeviceTaintRule"]["status"] == "not-served"


# --- transient failures ----------------------------------------------------------------------


def test_429_is_retried_honouring_retry_after_capped(api: KubeAPIServer, tmp_path: Path) -> None:
    api.fail("/api/v1/pods", 429, times=2, retry_after=30)
    sleeps = Sleeps()

    result = run(api, tmp_path, sleep=sleeps, max_retry_after=0.05)

    assert sleeps == [0.05, 0.05]
    assert set(result.objects) == expected_keys(fixture_objects())
    assert result.requests == len(api.requests)


def test_a_short_retry_after_is_honoured_as_given(api: KubeAPIServer, tmp_path: Path) -> None:
    api.fail("/apis/resource.k8s.io/v1/resourceclaims", 429, retry_after=2)
    sleeps = Sleeps()

    run(api, tmp_path, sleep=sleeps, max_retry_after=5)

    assert sleeps == [2.0]


def test_5xx_is_retried_with_growing_backoff(api: KubeAPIServer, tmp_path: Path) -> None:
    api.fail("/apis/resource.k8s.io/v1/resourceslices", 503, times=3)
    api.fail("/api/v1/nodes", 500)
    sleeps = Sleeps()

    result = run(api, tmp_path, sleep=sleeps, backoff=1.0, max_backoff=3.0)

    assert len(sleeps) == 4
    assert sorted(sleeps)[-1] <= 3.0
    assert all(s >= 0.5 for s in sleeps)
    assert set(result.objects) == expected_keys(fixture_objects())


def test_it_gives_up_after_a_bounded_number_of_retries(api: KubeAPIServer, tmp_path: Path) -> None:
    api.fail("/api/v1/nodes", 503, times=100)

    with pytest.raises(CaptureError) as raised:
        run(api, tmp_path, retries=2)

    assert raised.value.status == 503
    assert "503" in str(raised.value) and "after 3 attempts" in str(raised.value)
    assert len(paths(api, "/api/v1/nodes")) == 3


def test_an_expired_continue_token_restarts_the_list(api: KubeAPIServer, tmp_path: Path) -> None:
    api.expire_continue("pods")

    result = run(api, tmp_path, page_size=5)

    starts = [q for _, q in paths(api, "/api/v1/pods") if "continue" not in q]
    assert len(starts) == 2
    assert set(result.objects) == expected_keys(fixture_objects())
    assert result.kind_status["Pod"]["status"] == "ok"


def test_a_list_that_keeps_expiring_fails_the_capture(api: KubeAPIServer, tmp_path: Path) -> None:
    api.expire_continue("resourceclaims", times=100)

    with pytest.raises(CaptureError, match="kept expiring"):
        run(api, tmp_path, page_size=5)


def test_a_slow_answer_beyond_the_timeout_fails_clearly(api: KubeAPIServer, tmp_path: Path) -> None:
    api.slow("/api/v1/nodes", 3.0, times=10)

    started = time.monotonic()
    with pytest.raises(CaptureError) as raised:
        run(api, tmp_path, timeout=0.3, retries=1)

    assert time.monotonic() - started < 2.5
    assert raised.value.reason == "Timeout"
    assert str(raised.value).startswith(f"{api.url} did not answer GET /api/v1/nodes within 0.3 s")
    assert len(paths(api, "/api/v1/nodes")) == 2


def test_a_timeout_that_passes_is_retried(api: KubeAPIServer, tmp_path: Path) -> None:
    api.slow("/api/v1/nodes", 1.0, times=1)

    result = run(api, tmp_path, timeout=0.3)

    assert ("Node", "", "control-plane") in result.objects


# --- failures of the whole capture -----------------------------------------------------------


def test_refused_credentials_fail_the_whole_capture(api: KubeAPIServer, tmp_path: Path) -> None:
    kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
    api.token = "rotated"

    with Kube(connect(str(kubeconfig), None, False)) as kube, pytest.raises(CaptureError) as raised:
        capture(kube)

    assert raised.value.status == 401
    assert "the credentials were refused (401" in str(raised.value)
    assert len(api.requests) == 1  # no retry


def test_an_unreachable_server_fails_with_a_clear_error(tmp_path: Path) -> None:
    with KubeAPIServer([]) as server:
        path = server.kubeconfig(tmp_path / "kubeconfig")
    sleeps = Sleeps()

    with (
        Kube(connect(str(path), None, False), retries=2, sleep=sleeps) as kube,
        pytest.raises(CaptureError) as raised,
    ):
        capture(kube)

    assert str(raised.value).startswith(f"cannot reach {server.url}: connection refused")
    assert raised.value.reason == "ConnectionError"
    assert len(sleeps) == 2


def test_not_found_forbidden_and_gone_are_not_retried(api: KubeAPIServer, tmp_path: Path) -> None:
    api.forbid("nodes")
    with kube_for(api, tmp_path) as kube:
        for path, status in [("/api/v1/widgets", 404), ("/api/v1/nodes", 403)]:
            before = kube.requests
            with pytest.raises(KubeError) as raised:
                kube.get(path)
            assert raised.value.status == status
            assert kube.requests == before + 1


# --- connecting ------------------------------------------------------------------------------


def test_connect_uses_the_named_context_and_leaves_the_global_config_alone(
    api: KubeAPIServer, tmp_path: Path
) -> None:
    default_host = Configuration.get_default_copy().host
    path = api.kubeconfig(tmp_path / "kubeconfig", context="prod")

    client = connect(str(path), "prod", False)

    assert client.configuration.host == api.url
    assert Configuration.get_default_copy().host == default_host
    client.close()


def test_connect_explains_a_bad_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(KubeError, match="cannot load kubeconfig .*missing"):
        connect(str(tmp_path / "missing"), None, False)
    path = tmp_path / "kubeconfig"
    path.write_text("apiVersion: v1\nkind: Config\ncontexts: []\nclusters: []\nusers: []\n")
    with pytest.raises(KubeError, match="cannot load") as raised:
        connect(str(path), "nope", False)
    assert raised.value.reason == "ConfigError"


def test_connect_in_cluster_outside_a_cluster_fails_clearly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)

    with pytest.raises(KubeError, match="cannot load the in-cluster service account"):
        connect(None, None, True)


# --- test_connection -------------------------------------------------------------------------


def test_connection_report_says_which_kinds_may_be_listed(
    api: KubeAPIServer, tmp_path: Path
) -> None:
    api.forbid("pods")
    api.hide("devicetaintrules", "resource.k8s.io")

    with kube_for(api, tmp_path) as kube:
        report = check_connection(kube)

    assert report.error is None
    assert report.server_version == "v1.36.1"
    assert report.api_versions[0] == "resource.k8s.io/v1"
    assert report.can_list["Pod"] is False
    assert report.can_list["DeviceTaintRule"] is False
    refused = {"Pod", "DeviceTaintRule", *GANG_KINDS}
    assert {k for k, v in report.can_list.items() if v} == set(KINDS) - refused
    reviews = [p for m, p, _ in api.requests if m == "POST"]
    assert set(reviews) == {"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"}


def test_connection_report_carries_the_error(api: KubeAPIServer, tmp_path: Path) -> None:
    with kube_for(api, tmp_path) as kube:
        api.token = "rotated"  # the kubeconfig keeps the old one
        report = check_connection(kube)

    assert report.error and "credentials were refused" in report.error
    assert report.can_list == {}
