"""manage.py add_cluster and manage.py capture, against the test Kubernetes API server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from dradash.clusters.models import Cluster
from dradash.dra.kinds import KINDS
from dradash.snapshots.models import ObjectBlob, Snapshot, SnapshotRun
from dradash.snapshots.selectors import snapshot_objects
from tests.kubeapi import REDACTED_SECRET, KubeAPIServer, fixture_objects

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


# --- add_cluster ---------------------------------------------------------------------------


def test_add_cluster_stores_the_path_and_context_and_enables_capture(kubeconfig: Path) -> None:
    out = run("add_cluster", "prod", "--kubeconfig", str(kubeconfig), "--context", "test")

    cluster = Cluster.objects.get(name="prod")
    assert cluster.kubeconfig_path == str(kubeconfig.resolve())
    assert cluster.context == "test"
    assert not cluster.in_cluster
    assert cluster.capture_enabled
    assert cluster.capture_interval == 60
    assert (cluster.keep_last, cluster.keep_analysed) == (48, 12)
    assert cluster.capturable
    assert out.startswith("Added cluster prod:")
    assert "every 60 minutes" in out


def test_add_cluster_never_stores_the_token(kube_api: KubeAPIServer, kubeconfig: Path) -> None:
    run("add_cluster", "prod", "--kubeconfig", str(kubeconfig))
    values = Cluster.objects.values().get(name="prod")
    assert kube_api.token not in json.dumps(values, default=str)


def test_add_cluster_uses_the_current_context_by_default(kubeconfig: Path) -> None:
    run("add_cluster", "prod", "--kubeconfig", str(kubeconfig))
    assert Cluster.objects.get(name="prod").context == ""


def test_add_cluster_in_cluster_with_schedule_options() -> None:
    out = run("add_cluster", "here", "--in-cluster", "--interval", "15", "--keep", "5")
    cluster = Cluster.objects.get(name="here")
    assert cluster.in_cluster and cluster.kubeconfig_path == ""
    assert (cluster.capture_interval, cluster.keep_last) == (15, 5)
    assert "in-cluster" in out


def test_add_cluster_sets_keep_analysed_and_refuses_a_negative_one(kubeconfig: Path) -> None:
    out = run("add_cluster", "prod", "--kubeconfig", str(kubeconfig), "--keep-analysed", "3")
    assert Cluster.objects.get().keep_analysed == 3
    assert "the analyses of the last 3" in out
    with pytest.raises(CommandError, match="--keep-analysed"):
        run("add_cluster", "prod", "--kubeconfig", str(kubeconfig), "--keep-analysed", "-1")
    assert Cluster.objects.get().keep_analysed == 3


def test_add_cluster_no_schedule_means_on_demand_only(kubeconfig: Path) -> None:
    out = run("add_cluster", "prod", "--kubeconfig", str(kubeconfig), "--no-schedule")
    assert Cluster.objects.get(name="prod").capture_interval == 0
    assert "on demand only" in out


def test_add_cluster_refuses_a_missing_kubeconfig(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(CommandError, match=r"nope\.yaml: no such file"):
        run("add_cluster", "prod", "--kubeconfig", str(missing))
    assert not Cluster.objects.exists()


def test_add_cluster_refuses_an_unknown_context_and_names_the_known_ones(kubeconfig) -> None:
    with pytest.raises(CommandError, match=r"no context 'staging' \(its contexts: test\)"):
        run("add_cluster", "prod", "--kubeconfig", str(kubeconfig), "--context", "staging")
    assert not Cluster.objects.exists()


def test_add_cluster_refuses_a_file_that_is_not_yaml_without_quoting_it(tmp_path: Path) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("users:\n- user: {token: abc-secret-123\n")
    with pytest.raises(CommandError, match="not valid YAML") as excinfo:
        run("add_cluster", "prod", "--kubeconfig", str(bad))
    assert "abc-secret-123" not in str(excinfo.value)


def test_add_cluster_needs_a_source() -> None:
    with pytest.raises(CommandError, match="one of the arguments --kubeconfig --in-cluster"):
        run("add_cluster", "prod")


def test_add_cluster_updates_an_existing_cluster_and_says_so(kubeconfig: Path) -> None:
    run("add_cluster", "prod", "--kubeconfig", str(kubeconfig), "--interval", "5", "--keep", "3")
    out = run("add_cluster", "prod", "--kubeconfig", str(kubeconfig), "--keep", "7")

    assert out.startswith("Updated cluster prod:")
    cluster = Cluster.objects.get()
    assert (cluster.capture_interval, cluster.keep_last) == (5, 7)  # --interval left as it was


def test_add_cluster_turns_an_imported_cluster_into_a_captured_one(kubeconfig: Path) -> None:
    Cluster.objects.create(name="prod")
    out = run("add_cluster", "prod", "--kubeconfig", str(kubeconfig))
    assert out.startswith("Updated cluster prod:")
    assert Cluster.objects.get().capturable


# --- capture -------------------------------------------------------------------------------


def test_capture_stores_a_complete_snapshot_of_the_cluster(
    cluster: Cluster, kube_api: KubeAPIServer
) -> None:
    out = run("capture", "--cluster", "prod", "--json")

    last = json.loads(out.strip().splitlines()[-1])
    snapshot = Snapshot.objects.get()
    assert last == {"snapshot": snapshot.pk, "status": "complete"}
    assert snapshot.cluster == cluster
    assert snapshot.source == Snapshot.Source.CAPTURE
    assert snapshot.status == Snapshot.Status.COMPLETE
    assert snapshot.server_version == kube_api.version
    assert "resource.k8s.io/v1" in snapshot.api_versions
    stored = set(snapshot_objects(snapshot, fields=("kind", "namespace", "name")))
    served = {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
        for o in fixture_objects()
        if o["kind"] in KINDS
    }
    assert stored <= served
    # Everything a DRA diagnosis needs comes whole; Pods, Jobs and Events only where DRA-related.
    for kind in ("Namespace", "Node", "DeviceClass", "ResourceSlice", "ResourceClaim"):
        assert {key for key in served if key[0] == kind} <= stored, kind
    for kind in ("Pod", "Event", "Job", "PriorityClass", "ResourceClaimTemplate"):
        assert any(key[0] == kind for key in stored), kind
    assert not any(k in ("Secret", "ConfigMap") for k, _, _ in stored)
    assert snapshot.object_count == len(stored)
    run_ = SnapshotRun.objects.get()
    assert (run_.kind, run_.status, run_.snapshot_id) == ("capture", "succeeded", snapshot.pk)
    assert run_.started_at and run_.finished_at


def test_capture_stores_no_secrets(cluster: Cluster, kube_api: KubeAPIServer) -> None:
    run("capture", "--cluster", "prod")
    for data in ObjectBlob.objects.values_list("data", flat=True):
        assert REDACTED_SECRET not in data
        assert kube_api.token not in data


def test_capture_of_an_unchanged_cluster_reuses_the_stored_objects(cluster: Cluster) -> None:
    run("capture", "--cluster", "prod")
    blobs = ObjectBlob.objects.count()
    run("capture", "--cluster", "prod")
    assert Snapshot.objects.count() == 2
    assert ObjectBlob.objects.count() <= blobs + 2  # Events may differ, the rest is shared


def test_capture_with_a_forbidden_kind_is_partial_and_its_pages_say_why(
    cluster: Cluster, kube_api: KubeAPIServer, client_logged_in
) -> None:
    kube_api.forbid("events")
    kube_api.forbid("events", group="events.k8s.io")

    out = run("capture", "--cluster", "prod", "--json")

    snapshot = Snapshot.objects.get()
    assert json.loads(out.strip().splitlines()[-1]) == {
        "snapshot": snapshot.pk,
        "status": "partial",
    }
    assert snapshot.kinds["Event"]["status"] == "forbidden"
    assert snapshot.kinds["Pod"]["status"] == "ok"
    assert "Event" in snapshot.missing_kinds
    assert "missing: Event forbidden" in out
    for url in (
        reverse("snapshot-detail", args=[snapshot.pk]),
        reverse("pod-list", args=[snapshot.pk]),
        reverse("claim-list", args=[snapshot.pk]),
    ):
        html = client_logged_in.get(url).content.decode()
        banner = html[html.index("This snapshot is partial") :][:600]
        assert "<strong>Event</strong> (forbidden" in banner, url
        assert "forbidden" in snapshot.kinds["Event"]["message"].lower()
        assert snapshot.kinds["Event"]["message"][:40] in banner.replace("&quot;", '"'), url


def test_capture_with_bad_credentials_fails_and_stores_nothing(
    cluster: Cluster, kube_api: KubeAPIServer
) -> None:
    kube_api.token = "another-token"
    out = StringIO()
    with pytest.raises(CommandError) as excinfo:
        call_command("capture", "--cluster", "prod", "--json", stdout=out)

    assert json.loads(out.getvalue().strip().splitlines()[-1]) == {
        "snapshot": None,
        "status": "failed",
    }
    assert "401" in str(excinfo.value) or "Unauthorized" in str(excinfo.value)
    assert "test-token" not in str(excinfo.value)
    assert "Traceback" not in str(excinfo.value)
    assert not Snapshot.objects.exists()
    assert not ObjectBlob.objects.exists()
    run_ = SnapshotRun.objects.get()
    assert run_.status == "failed"
    assert run_.error and run_.snapshot is None


def test_capture_exits_non_zero_on_the_command_line_with_the_reason_on_stderr() -> None:
    from tests.snapshots.test_worker import database_url

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(DATABASE_URL=database_url(), DRADASH_SECRET_KEY="test-only-secret")
    result = subprocess.run(
        [sys.executable, "manage.py", "capture", "--cluster", "no-such-cluster", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "no cluster named 'no-such-cluster'" in result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "snapshot": None,
        "status": "failed",
    }


def test_capture_of_an_unknown_cluster_fails() -> None:
    with pytest.raises(CommandError, match="no cluster named 'nope'"):
        run("capture", "--cluster", "nope")


def test_capture_of_a_cluster_without_credentials_fails() -> None:
    Cluster.objects.create(name="imported")
    with pytest.raises(CommandError, match="cannot be captured"):
        run("capture", "--cluster", "imported")
    assert not SnapshotRun.objects.exists()


def test_capture_refuses_while_another_capture_is_running(cluster: Cluster) -> None:
    SnapshotRun.objects.create(kind="capture", cluster_name="prod", status="running")
    with pytest.raises(CommandError, match=r"already running elsewhere \(run #\d+\)"):
        run("capture", "--cluster", "prod")
    assert not Snapshot.objects.exists()
