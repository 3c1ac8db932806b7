"""One redaction on every path in: capture, import and upload store no env value,
last-applied-configuration or managedFields, and snapshots stored before are redacted."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from dradash.dra import redact as core
from dradash.kube import capture
from dradash.snapshots import members
from dradash.snapshots.models import ObjectBlob, Snapshot, SnapshotRun
from dradash.snapshots.selectors import snapshot_objects
from dradash.snapshots.services import blobs_redact, bundle_export, bundle_import, raw_json

SECRET = "hunter2-must-never-be-stored"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def secret_pod(name: str = "trainer-0") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "annotations": {LAST_APPLIED: json.dumps({"env": SECRET}), "team": "ml"},
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {SECRET: {}}}}],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "env": [
                        {"name": "HF_TOKEN", "value": SECRET},
                        {"name": "FROM", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                    ],
                }
            ],
            "initContainers": [{"name": "init", "env": [{"name": "X", "value": SECRET}]}],
        },
    }


def secret_job() -> dict[str, Any]:
    pod = secret_pod()
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml", "managedFields": [{"manager": "x"}]},
        "spec": {"template": {"metadata": {"annotations": {}}, "spec": pod["spec"]}},
    }


def stored_text() -> str:
    return "".join(ObjectBlob.objects.values_list("data", flat=True))


def test_capture_uses_the_core_redaction() -> None:
    assert capture.redact is core.redact


@pytest.mark.django_db
def test_import_stores_no_env_value_last_applied_or_managed_fields() -> None:
    data = json.dumps({"kind": "List", "items": [secret_pod(), secret_job()]}).encode()

    snapshot = bundle_import(files=[("bundle.json", data)], cluster_name="c")

    text = stored_text()
    assert SECRET not in text
    assert "managedFields" not in text
    assert "".join(bundle_export(snapshot)).count(SECRET) == 0
    (pod_text,) = [t for (t,) in snapshot_objects(snapshot, kinds=["Pod"])]
    pod = json.loads(pod_text)
    env = pod["spec"]["containers"][0]["env"]
    assert env[0] == {"name": "HF_TOKEN", "value": "<redacted>"}
    assert env[1]["valueFrom"] == {"secretKeyRef": {"name": "s", "key": "k"}}  # no value: kept
    assert pod["metadata"]["annotations"] == {LAST_APPLIED: "<redacted>", "team": "ml"}


@pytest.mark.django_db
def test_upload_stores_no_env_value(
    client_logged_in: Any, django_capture_on_commit_callbacks: Any
) -> None:
    data = json.dumps({"kind": "List", "items": [secret_pod()]}).encode()

    with django_capture_on_commit_callbacks(execute=True):
        response = client_logged_in.post(
            reverse("upload"),
            {"files": SimpleUploadedFile("b.json", data), "cluster": "up"},
        )

    assert response.status_code == 302
    run = SnapshotRun.objects.get()
    assert run.status == SnapshotRun.Status.SUCCEEDED, run.error
    assert SECRET not in stored_text()
    export = client_logged_in.get(reverse("snapshot-bundle", args=[run.snapshot_id]))
    assert SECRET not in b"".join(export.streaming_content).decode()


def store_raw(objects: list[dict[str, Any]], cluster: str) -> Snapshot:
    """A snapshot stored as before this change: its objects verbatim."""
    from dradash.snapshots.services import cluster_for_name

    ids = []
    for obj in objects:
        text = raw_json(obj)
        digest = hashlib.sha256(text.encode()).hexdigest()
        blob, _ = ObjectBlob.objects.get_or_create(
            digest=digest,
            defaults={
                "kind": obj["kind"],
                "namespace": obj["metadata"].get("namespace", ""),
                "name": obj["metadata"]["name"],
                "api_version": obj["apiVersion"],
                "data": text,
            },
        )
        ids.append(blob.pk)
    return Snapshot.objects.create(
        cluster=cluster_for_name(cluster),
        source=Snapshot.Source.IMPORT,
        captured_at="2026-11-01T00:00:00Z",
        object_count=len(ids),
        members=members.pack(ids),
    )


@pytest.mark.django_db
def test_stored_snapshots_are_redacted_and_blobs_that_become_equal_are_merged() -> None:
    old = store_raw([secret_pod(), secret_job()], "old")
    # The same Pod captured since, redacted: the old blob's redacted form equals it.
    fresh = core.redact(secret_pod())
    newer = store_raw([fresh], "new")
    # Two versions that differ only in managedFields become one.
    other = secret_pod("trainer-1")
    twin = copy.deepcopy(other)
    twin["metadata"]["managedFields"] = [{"manager": "someone-else"}]
    first, second = store_raw([other], "a"), store_raw([twin], "b")
    blobs_before = ObjectBlob.objects.count()

    rewritten, merged = blobs_redact()

    assert (rewritten, merged) == (2, 2)  # the job and trainer-1; the pod and trainer-1's twin
    assert ObjectBlob.objects.count() == blobs_before - 2
    assert SECRET not in stored_text()
    assert "managedFields" not in stored_text()
    for snapshot in (old, newer, first, second):
        snapshot.refresh_from_db()
        rows = list(snapshot_objects(snapshot, fields=("id",)))
        assert len(rows) == snapshot.object_count
    old_pod = {i for (i,) in snapshot_objects(old, kinds=["Pod"], fields=("id",))}
    assert old_pod == {i for (i,) in snapshot_objects(newer, fields=("id",))}
    assert set(members.unpack(first.members)) == set(members.unpack(second.members))
    assert blobs_redact() == (0, 0)  # nothing left to do


@pytest.mark.django_db(transaction=True)
def test_the_data_migration_redacts_what_was_stored_before() -> None:
    executor = MigrationExecutor(connection)
    before = [("snapshots", "0004_blob_digest_constraint")]
    latest = executor.loader.graph.leaf_nodes("snapshots")
    executor.migrate(before)
    try:
        store_raw([secret_pod()], "legacy")
        executor = MigrationExecutor(connection)
        executor.migrate(latest)
        assert SECRET not in stored_text()
        snapshot = Snapshot.objects.get()
        assert len(list(snapshot_objects(snapshot, fields=("id",)))) == 1
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
