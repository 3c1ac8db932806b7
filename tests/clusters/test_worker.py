"""A capture carried out by a real Celery worker, over real Redis, into the test database.

The worker fixture is the one of tests/snapshots/test_worker.py: a worker process on a queue of
its own, pointed at this session's PostgreSQL test database.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import kombu.pools
import pytest

from dradash.clusters import services
from dradash.snapshots.models import ObjectBlob, Snapshot, SnapshotRun
from dradash.snapshots.selectors import snapshot_objects
from tests.kubeapi import REDACTED_SECRET, KubeAPIServer
from tests.snapshots.test_worker import Worker, wait_until_finished
from tests.snapshots.test_worker import worker as worker  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module", autouse=True)
def _fresh_kombu_pools() -> Iterator[None]:
    """Set up before the worker fixture and torn down after it.

    kombu keeps connection and producer pools in process-wide registries keyed by broker URL;
    the worker fixture closes its pool but leaves it registered, so the next module that
    starts a worker (tests/snapshots/test_worker.py) would get a closed pool. Clear them.
    """
    kombu.pools.reset()
    yield
    kombu.pools.reset()


def test_worker_captures_a_cluster_into_a_snapshot(worker: Worker, tmp_path: Path) -> None:
    with KubeAPIServer() as api:
        api.forbid("priorityclasses", group="scheduling.k8s.io")
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
        cluster, _ = services.cluster_register(
            name="worker-capture", kubeconfig_path=str(kubeconfig)
        )

        run = services.capture_run_create(cluster)
        assert services.capture_run_create(cluster).pk == run.pk  # one at a time
        run = wait_until_finished(run, worker)

        assert run.status == SnapshotRun.Status.SUCCEEDED, f"{run.error}\n{worker.output()}"
        assert any(path.startswith("/api/v1/pods") for path in api.paths())

    snapshot = run.snapshot
    assert snapshot is not None
    assert snapshot.cluster.name == "worker-capture"
    assert snapshot.source == Snapshot.Source.CAPTURE
    assert snapshot.status == Snapshot.Status.PARTIAL
    assert snapshot.kinds["PriorityClass"]["status"] == "forbidden"
    assert snapshot.server_version == "v1.36.1"
    assert list(snapshot_objects(snapshot, kinds=["ResourceSlice"], fields=("name",)))
    assert len(list(snapshot_objects(snapshot, fields=("id",)))) == snapshot.object_count
    assert not ObjectBlob.objects.filter(data__contains=REDACTED_SECRET).exists()
    assert run.started_at is not None and run.finished_at is not None
