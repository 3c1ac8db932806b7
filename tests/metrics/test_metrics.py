"""GET /metrics (DESIGN "Metrics and chat previews"): Prometheus text of each cluster's latest
analysed snapshot, behind a bearer token, off without one; and the sample alerting rules."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from dradash.snapshots.models import SnapshotRun

TOKEN = "scrape-me-0123456789"
RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "dradash-alerts.yaml"


@pytest.fixture
def metrics_on(settings: Any) -> None:
    settings.DRADASH_METRICS_TOKEN = TOKEN


def scrape(client: Any) -> dict[str, list[Any]]:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    samples: dict[str, list[Any]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(sample)
    return samples


def value(samples: dict[str, list[Any]], name: str, **labels: str) -> float:
    found = [s.value for s in samples.get(name, []) if labels.items() <= s.labels.items()]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_off_without_a_token(client, db) -> None:
    assert client.get("/metrics").status_code == 404


def test_a_missing_or_wrong_token_is_refused(client, db, metrics_on) -> None:
    for header in ({}, {"HTTP_AUTHORIZATION": "Bearer wrong"}, {"HTTP_AUTHORIZATION": TOKEN}):
        response = client.get("/metrics", **header)
        assert response.status_code == 401
        assert response["WWW-Authenticate"].startswith("Bearer")
        assert b"dradash_pods" not in response.content


@pytest.mark.parametrize("sent", ["Bearer t\u00f6k\u00e9n", "Bearer \u2713", "B\u00e9arer x"])
def test_a_token_that_is_not_ascii_is_refused_not_a_server_error(
    client, db, metrics_on, sent: str
) -> None:
    client.raise_request_exception = False
    response = client.get("/metrics", HTTP_AUTHORIZATION=sent)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_logged_in_user_still_needs_the_token(client_logged_in, metrics_on) -> None:
    assert client_logged_in.get("/metrics").status_code == 401


def test_the_latest_analysed_snapshot_of_each_cluster(client, demo, metrics_on) -> None:
    samples = scrape(client)
    later = demo[-1]
    assert (
        value(
            samples,
            "dradash_pods",
            cluster="demo",
            stage="claim-unallocated",
            reason="selector-error",
        )
        == 1
    )
    assert value(samples, "dradash_pods", cluster="demo", stage="healthy", reason="running") == 15
    pods = sum(s.value for s in samples["dradash_pods"])
    assert pods == 36  # the later snapshot's Pods, not both snapshots'
    assert value(samples, "dradash_claims", cluster="demo", stage="healthy") > 0
    stale = {"code": "pool-stale-generation", "severity": "warning"}
    assert value(samples, "dradash_findings", cluster="demo", **stale) == 1
    nvidia = {
        s.labels["state"]: s.value
        for s in samples["dradash_devices"]
        if s.labels["device_class"] == "gpu.nvidia.com"
    }
    assert set(nvidia) == {"free", "allocated", "tainted", "unusable"}
    assert sum(nvidia.values()) > 0
    assert value(samples, "dradash_devices", device_class="gpu.example.com", state="unusable") == 4
    age = value(samples, "dradash_snapshot_age_seconds", cluster="demo")
    expected = (timezone.now() - later.captured_at).total_seconds()
    assert abs(age - expected) < 60


def test_many_device_classes_add_a_bounded_number_of_series(client, db, metrics_on) -> None:
    """The issue's probe: 3,000 DeviceClasses in one upload added 12,004 series. The 50 classes
    that admit the most devices keep theirs; the others are summed as device_class="(other)"."""
    from tests.stored import import_analysed

    device = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass"}
    one = {
        "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].index == 0'}}]
    }
    classes = [
        {**device, "metadata": {"name": f"class-{i:04d}"}, "spec": one} for i in range(300)
    ] + [{**device, "metadata": {"name": "zz-every-gpu"}, "spec": {}}]
    pool = {"name": "node-a", "generation": 1, "resourceSliceCount": 1}
    resource_slice = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-a-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": pool,
            "nodeName": "node-a",
            "devices": [
                {"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(4)
            ],
        },
    }
    bundle = {"kind": "List", "items": [*classes, resource_slice]}
    import_analysed(files=[("classes.json", json.dumps(bundle).encode())], cluster_name="many")

    samples = scrape(client)["dradash_devices"]
    assert len(samples) == (50 + 1) * 4
    names = {s.labels["device_class"] for s in samples}
    assert "zz-every-gpu" in names  # the largest, though last by name
    assert "(other)" in names and "class-0299" not in names
    assert value({"d": samples}, "d", device_class="zz-every-gpu", state="free") == 4
    # Beside it, 49 of the 300 one-device classes are kept, the other 251 summed.
    assert value({"d": samples}, "d", device_class="(other)", state="free") == 251
    assert value({"d": samples}, "d", device_class="class-0000", state="free") == 1


def test_capture_runs_and_the_last_capture_duration(client, demo, metrics_on) -> None:
    now = timezone.now()
    for status, seconds in (("failed", 3), ("succeeded", 5), ("succeeded", 12)):
        SnapshotRun.objects.create(
            kind="capture",
            cluster_name="demo",
            status=status,
            started_at=now - timedelta(seconds=seconds),
            finished_at=now,
        )
        now += timedelta(minutes=1)
    SnapshotRun.objects.create(kind="upload", cluster_name="demo", status="failed")
    samples = scrape(client)
    assert value(samples, "dradash_capture_runs_total", cluster="demo", status="failed") == 1
    assert value(samples, "dradash_capture_runs_total", cluster="demo", status="succeeded") == 2
    assert value(samples, "dradash_capture_duration_seconds", cluster="demo") == 12


def test_queries_do_not_grow_with_clusters_or_snapshots(
    client, demo, metrics_on, django_assert_max_num_queries
) -> None:
    with django_assert_max_num_queries(8):
        scrape(client)


def test_a_pending_analysis_is_not_reported_as_the_cluster_state(client, demo, metrics_on) -> None:
    from dradash.analysis.models import SnapshotAnalysis

    SnapshotAnalysis.objects.filter(pk=demo[-1].pk).update(status="pending")
    samples = scrape(client)
    age = value(samples, "dradash_snapshot_age_seconds", cluster="demo")
    assert abs(age - (timezone.now() - demo[0].captured_at).total_seconds()) < 60
    codes = {s.labels["code"] for s in samples["dradash_findings"]}
    assert "pool-stale-generation" not in codes  # only the later snapshot has a stale slice


# --- the sample alerting rules --------------------------------------------------------------

EXPORTED = {
    "dradash_pods",
    "dradash_claims",
    "dradash_findings",
    "dradash_devices",
    "dradash_snapshot_age_seconds",
    "dradash_capture_runs_total",
    "dradash_capture_duration_seconds",
    "up",
}


def test_the_sample_rules_use_only_metrics_dradash_exports() -> None:
    rules = yaml.safe_load(RULES.read_text())
    alerts = [r for g in rules["groups"] for r in g["rules"]]
    assert {"DRAPodsClaimUnallocated", "DradashCaptureFailing"} <= {a["alert"] for a in alerts}
    unallocated = next(a for a in alerts if a["alert"] == "DRAPodsClaimUnallocated")
    assert unallocated["for"] == "15m"
    for alert in alerts:
        names = set(re.findall(r"\b(dradash_[a-z_]+|up)\b", alert["expr"]))
        assert names and names <= EXPORTED, (alert["alert"], names)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_promtool_accepts_the_sample_rules() -> None:
    subprocess.run(["promtool", "check", "rules", str(RULES)], check=True)


def test_a_pod_asking_for_extended_resources_is_counted_as_a_dra_pod(
    client, gpu_lab, metrics_on
) -> None:
    """Issue 23: a Pod whose devices come as extended resources backed by DRA is in the
    stuck-Pod series; the claim the scheduler keeps in memory for it is in no claim series
    (tests/extended_cluster.py's cluster)."""
    samples = scrape(client)
    lab = {"cluster": "gpu-lab"}
    stuck = {"stage": "claim-unallocated", "reason": "devices-exhausted"}
    assert value(samples, "dradash_pods", **lab, **stuck) == 1  # pod1 now, not pod0 before
    assert value(samples, "dradash_pods", **lab, stage="healthy", reason="running") == 2
    pods = sum(s.value for s in samples["dradash_pods"] if s.labels["cluster"] == "gpu-lab")
    assert pods == 3  # hog-0, pod0, pod1; not web, which asks for no device
    claims = [s for s in samples["dradash_claims"] if s.labels["cluster"] == "gpu-lab"]
    assert {s.labels["stage"]: s.value for s in claims} == {"healthy": 2}  # hog's and pod0's
    gpus = {"device_class": "gpu.example.com", **lab}
    assert value(samples, "dradash_devices", state="allocated", **gpus) == 8
    assert value(samples, "dradash_devices", state="free", **gpus) == 0
