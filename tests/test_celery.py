"""Queues: uploads, captures and analyses each go to a queue of their own, and the deployments
run workers that serve every queue, each long kind with processes of its own."""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import yaml
from django.conf import settings

from dradash.analysis.services import analysis_enqueue
from dradash.analysis.tasks import analyse_snapshot, analyses_reap
from dradash.celery import app as celery_app
from dradash.clusters import services as clusters
from dradash.clusters.models import Cluster
from dradash.clusters.tasks import capture_due, capture_run, capture_runs_reap
from dradash.snapshots.services import upload_run_create
from dradash.snapshots.tasks import upload_run_process, upload_runs_reap
from tests.servers import ROOT
from tests.snapshots.test_worker import REDIS_URL, forget_broker_state

QUEUES = {"uploads": upload_run_process, "captures": capture_run, "analyses": analyse_snapshot}


@pytest.mark.parametrize("queue", sorted(QUEUES))
def test_each_kind_of_long_work_is_routed_to_a_queue_of_its_own(queue: str) -> None:
    route = celery_app.amqp.router.route({}, QUEUES[queue].name)

    assert route["queue"].name == queue


@pytest.mark.parametrize(
    "task", [capture_due, capture_runs_reap, analyses_reap, upload_runs_reap], ids=lambda t: t.name
)
def test_beats_bookkeeping_goes_to_the_default_queue(task: Any) -> None:
    assert celery_app.amqp.router.route({}, task.name)["queue"].name == "celery"


@pytest.fixture
def broker() -> Iterator[redis.Redis]:
    """Tasks sent to the test Redis under a key prefix of this test's own (no worker takes
    them); the client to look at what landed where."""
    prefix = f"dradash-test-{uuid.uuid4().hex[:12]}:"
    saved = {
        k: celery_app.conf[k]
        for k in ("broker_url", "task_always_eager", "broker_transport_options")
    }
    celery_app.conf.update(
        broker_url=REDIS_URL,
        task_always_eager=False,
        broker_transport_options={**saved["broker_transport_options"], "global_keyprefix": prefix},
    )
    forget_broker_state()
    client = redis.Redis.from_url(REDIS_URL)
    client.prefix = prefix  # type: ignore[attr-defined]
    try:
        yield client
    finally:
        celery_app.conf.update(saved)
        forget_broker_state()
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)


def landed(broker: Any) -> dict[str, list[str]]:
    """The task names waiting in each queue that has any."""
    out = {}
    for queue in settings.CELERY_TASK_QUEUES:
        messages = broker.lrange(f"{broker.prefix}{queue}", 0, -1)
        if messages:
            out[queue] = [json.loads(m)["headers"]["task"] for m in messages]
    return out


@pytest.mark.celery_worker
@pytest.mark.django_db
def test_uploads_captures_and_analyses_land_on_their_queues(
    broker: Any, user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    cluster = Cluster.objects.create(name="prod", in_cluster=True, capture_enabled=True)
    with django_capture_on_commit_callbacks(execute=True):
        upload_run_create(files=[("a.json", b"{}")], cluster_name="", user=user)
        clusters.capture_run_create(cluster)
        analysis_enqueue(12345)

    assert landed(broker) == {
        "uploads": [upload_run_process.name],
        "captures": [capture_run.name],
        "analyses": [analyse_snapshot.name],
    }


def _worker_queues(commands: list[list[str]]) -> list[set[str]]:
    """The queues each `celery worker` command serves (all of them without -Q)."""
    out = []
    for command in commands:
        if "worker" not in command:
            continue
        queues = set(settings.CELERY_TASK_QUEUES)
        for flag in ("-Q", "--queues"):
            if flag in command:
                queues = set(command[command.index(flag) + 1].split(","))
        out.append(queues)
    return out


def _compose_commands() -> list[list[str]]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return [shlex.split(s["command"]) for s in compose["services"].values() if s.get("command")]


def _kubernetes_commands() -> list[list[str]]:
    documents = yaml.safe_load_all((ROOT / "deploy/kubernetes/worker.yaml").read_text())
    return [
        [str(arg) for arg in container["command"]]
        for deployment in documents
        for container in deployment["spec"]["template"]["spec"]["containers"]
    ]


@pytest.mark.parametrize("commands", [_compose_commands, _kubernetes_commands])
def test_the_deployments_serve_every_queue_and_each_long_one_on_its_own(commands: Any) -> None:
    workers = _worker_queues(commands())
    long_queues = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}

    assert set().union(*workers) == set(settings.CELERY_TASK_QUEUES)
    for queue in long_queues:
        serving = [w for w in workers if queue in w]
        assert serving, f"no worker serves {queue}"
        assert all(w & long_queues == {queue} for w in serving), (queue, serving)
