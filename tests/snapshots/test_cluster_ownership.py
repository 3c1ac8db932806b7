"""Cluster names belong to their source (issue 22 item 4): an upload never becomes the snapshot of
a cluster captured live, an operator's or another user's; it lands in a cluster of the uploader's
own and they are told so. A capture time in the future is refused. A live cluster's latest
snapshot, on the home page and in /metrics, is its latest capture."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from dradash.clusters.models import Cluster
from dradash.snapshots.models import Snapshot, SnapshotRun
from dradash.snapshots.selectors import cluster_list_with_snapshots
from dradash.snapshots.services import bundle_import, upload_run_create, upload_run_process
from tests.metrics.test_metrics import TOKEN, scrape
from tests.stored import analysed as analysed_upload

pytestmark = pytest.mark.django_db

FUTURE = "2099-01-01T00:00:00Z"


def forged(cluster: str = "demo", captured_at: str | None = None) -> bytes:
    """A bundle of one healthy Pod whose SnapshotInfo names ``cluster``."""
    spec: dict[str, Any] = {"cluster": cluster}
    if captured_at:
        spec["capturedAt"] = captured_at
    items = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "team", "uid": "u1"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            "status": {"phase": "Running"},
        },
        {"apiVersion": "dradash.io/v1", "kind": "SnapshotInfo", "metadata": {"name": "i"},
         "spec": spec},
    ]  # fmt: skip
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()


def just_now() -> str:
    return (timezone.now() - timedelta(seconds=5)).isoformat()


@pytest.fixture
def live_demo(demo: list[Snapshot], settings: Any) -> list[Snapshot]:
    """The demo cluster as if captured live: credentials, and its two snapshots captures."""
    settings.DRADASH_METRICS_TOKEN = TOKEN
    Cluster.objects.filter(name="demo").update(kubeconfig_path="/etc/dradash/kubeconfig")
    Snapshot.objects.filter(cluster__name="demo").update(source=Snapshot.Source.CAPTURE)
    return demo


@pytest.fixture
def bob(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("bob", password="bob-pw-123")


@pytest.fixture
def staff(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("sam", password="sam-pw-123", is_staff=True)


def demo_series(client: Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every /metrics sample of cluster demo (but its age, which grows by the second)."""
    return {
        (name, tuple(sorted(s.labels.items()))): s.value
        for name, samples in scrape(client).items()
        for s in samples
        if s.labels.get("cluster") == "demo" and name != "dradash_snapshot_age_seconds"
    }


def demo_latest() -> Snapshot:
    return next(snaps for c, snaps in cluster_list_with_snapshots() if c.name == "demo")[0]


def upload_by(user: Any, data: bytes, cluster: str = "") -> SnapshotRun:
    """An upload run by ``user`` finished by the worker's own code (upload_run_process)."""
    run = upload_run_create(files=[("bundle.json", data)], cluster_name=cluster, user=user)
    upload_run_process(run.pk)
    run.refresh_from_db()
    return run


# --- the forged upload: the form, the API, the worker's code --------------------------------


def test_a_forged_upload_through_the_form_lands_in_the_uploaders_cluster_and_says_so(
    client_logged_in: Client, live_demo: list[Snapshot], analysed: Any
) -> None:
    series = demo_series(Client())

    with analysed():  # the import runs once the request's transaction commits
        response = client_logged_in.post(
            reverse("upload"),
            {"files": SimpleUploadedFile("b.json", forged(captured_at=just_now()))},
        )

    run = SnapshotRun.objects.get()
    assert response["Location"] == reverse("run-detail", args=[run.pk])
    told = (
        "This upload names cluster demo, which is captured live (its captures alone say its "
        "state); it was stored in cluster demo~alice, a cluster of your own uploads, instead."
    )
    assert told in client_logged_in.get(response["Location"]).content.decode()
    # The waiting page opens the snapshot, which says it again.
    opened = client_logged_in.get(response["Location"], {"open": "1"}, HTTP_HX_REQUEST="true")
    snapshot = Snapshot.objects.get(source=Snapshot.Source.UPLOAD)
    assert opened["HX-Redirect"] == reverse("snapshot-detail", args=[snapshot.pk])
    assert told in client_logged_in.get(opened["HX-Redirect"]).content.decode()
    assert snapshot.cluster.name == "demo~alice"
    assert demo_latest() == live_demo[-1]
    assert demo_series(Client()) == series
    home = client_logged_in.get(reverse("home")).content.decode()
    assert "demo~alice" in home and "uploads of alice" in home


def test_a_forged_upload_through_the_api_says_where_it_went(
    api_client: APIClient, live_demo: list[Snapshot], analysed: Any
) -> None:
    series = demo_series(Client())

    with analysed():
        response = api_client.post(
            "/api/v1/uploads/",
            {"files": [SimpleUploadedFile("b.json", forged(captured_at=just_now()))]},
            format="multipart",
        )
    assert response.status_code == 202, response.content
    queued = response.json()
    assert (queued["status"], queued["requested_cluster"], queued["cluster"]) == (
        "queued",
        "",
        None,
    )

    done = api_client.get(response["Location"]).json()
    assert done["status"] == "succeeded", done
    assert done["cluster"] == "demo~alice"
    assert Snapshot.objects.get(pk=done["snapshot"]).cluster.name == "demo~alice"
    assert "names cluster demo, which is captured live" in done["notice"]
    assert demo_latest() == live_demo[-1]
    assert demo_series(Client()) == series


def test_a_forged_upload_through_the_worker_names_the_cluster_it_asked_for(
    user: Any, live_demo: list[Snapshot], analysed: Any
) -> None:
    series = demo_series(Client())
    with analysed():
        run = upload_by(user, forged("nobody", captured_at=just_now()), cluster="demo")

    assert run.status == SnapshotRun.Status.SUCCEEDED, run.error
    assert run.snapshot.cluster.name == "demo~alice"
    assert run.cluster_name == "demo"
    page = Client()
    page.force_login(user)
    html = page.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert "it was stored in cluster demo~alice, a cluster of your own uploads" in html
    assert demo_latest() == live_demo[-1]
    assert demo_series(Client()) == series


@pytest.mark.parametrize("how", ["form", "api"])
def test_a_capture_time_in_the_future_is_refused_and_nothing_is_stored(
    client_logged_in: Client, api_client: APIClient, live_demo: list[Snapshot], how: str
) -> None:
    series = demo_series(Client())
    files = [SimpleUploadedFile("b.json", forged(captured_at=FUTURE))]
    if how == "form":
        client_logged_in.post(reverse("upload"), {"files": files})
    else:
        api_client.post("/api/v1/uploads/", {"files": files}, format="multipart")
    run = SnapshotRun.objects.get()
    upload_run_process(run.pk)  # the worker's part (on commit, which a test never reaches)

    run.refresh_from_db()
    assert run.status == SnapshotRun.Status.FAILED
    assert (
        "b.json: SnapshotInfo spec.capturedAt '2099-01-01T00:00:00Z' is in the future" in run.error
    )
    assert "allows 5 minutes of clock skew" in run.error
    html = client_logged_in.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert "is in the future" in html and "Nothing was stored" in html
    assert api_client.get(f"/api/v1/uploads/{run.pk}/").json()["error"] == run.error
    assert not Snapshot.objects.filter(source=Snapshot.Source.UPLOAD).exists()
    assert not Cluster.objects.filter(name__startswith="demo~").exists()
    assert demo_series(Client()) == series


def test_a_capture_time_within_the_clock_skew_is_kept(user: Any) -> None:
    soon = timezone.now() + timedelta(minutes=2)
    run = upload_by(user, forged("skewed", captured_at=soon.isoformat()))
    assert run.status == SnapshotRun.Status.SUCCEEDED, run.error
    assert abs((run.snapshot.captured_at - soon).total_seconds()) < 1


def test_an_operator_import_is_refused_a_future_capture_time_too(tmp_path: Any) -> None:
    bundle = tmp_path / "b.json"
    bundle.write_bytes(forged("ops", captured_at=FUTURE))
    with pytest.raises(CommandError, match="is in the future"):
        call_command("import_bundle", str(bundle))
    assert not Snapshot.objects.exists()


# --- whose cluster: owner, another user, staff ----------------------------------------------


def test_each_users_uploads_of_one_name_land_in_their_own_cluster(
    user: Any, bob: Any, staff: Any
) -> None:
    first = upload_by(bob, forged("incident"))
    assert (first.snapshot.cluster.name, first.notice) == ("incident", "")
    cluster = first.snapshot.cluster
    assert (cluster.origin, cluster.created_by) == (Cluster.Origin.UPLOAD, bob)

    alices = upload_by(user, forged("incident"))
    assert alices.snapshot.cluster.name == "incident~alice"
    assert alices.notice == (
        "This upload names cluster incident, which holds another user's uploads; it was stored "
        "in cluster incident~alice, a cluster of your own uploads, instead."
    )
    assert upload_by(staff, forged("incident")).snapshot.cluster.name == "incident~sam"
    # Each one's next upload goes where their first went.
    assert upload_by(user, forged("incident")).snapshot.cluster.name == "incident~alice"
    assert upload_by(bob, forged("incident")).snapshot.cluster.name == "incident"
    assert upload_by(user, forged("incident~alice")).notice == ""
    counts = {c.name: c.snapshots.count() for c in Cluster.objects.all()}
    assert counts == {"incident": 2, "incident~alice": 3, "incident~sam": 1}


def test_no_one_takes_the_name_another_users_uploads_would_go_to(user: Any, bob: Any) -> None:
    run = upload_by(user, forged("incident~bob"))
    assert run.snapshot.cluster.name == "incident~bob~alice"
    assert "names cluster incident~bob, which is named for another user's uploads" in run.notice
    assert not Cluster.objects.filter(name="incident~bob").exists()


def test_an_upload_never_lands_in_an_operators_cluster(user: Any) -> None:
    bundle_import(files=[("b.json", forged("lab"))])  # manage.py import_bundle, load_demo
    run = upload_by(user, forged("lab"))
    assert run.snapshot.cluster.name == "lab~alice"
    assert "which belongs to the operators" in run.notice


def test_when_even_the_uploaders_own_name_is_not_theirs_nothing_is_stored(user: Any) -> None:
    for name in ("lab", "lab~alice"):
        Cluster.objects.create(name=name, in_cluster=True)
    run = upload_by(user, forged("lab"))
    assert run.status == SnapshotRun.Status.FAILED
    assert run.error == (
        "cluster name: cluster lab is captured live (its captures alone say its state), and "
        "cluster lab~alice, where your uploads for it go, is captured live (its captures alone "
        "say its state); name another cluster"
    )
    assert not Snapshot.objects.exists()


def test_a_long_name_keeps_the_uploaders_suffix_within_the_limit(user: Any, bob: Any) -> None:
    name = "n" * 253
    upload_by(bob, forged(name))
    run = upload_by(user, forged(name))
    assert run.snapshot.cluster.name == "n" * 247 + "~alice"


# --- operators and the latest snapshot -------------------------------------------------------


def test_an_operator_may_import_into_a_live_cluster_without_shadowing_its_captures(
    client_logged_in: Client, live_demo: list[Snapshot], tmp_path: Any, analysed: Any
) -> None:
    series = demo_series(Client())
    bundle = tmp_path / "b.json"
    bundle.write_bytes(forged("elsewhere", captured_at=just_now()))

    with analysed():
        call_command("import_bundle", str(bundle), "--cluster", "demo")

    imported = Snapshot.objects.get(source=Snapshot.Source.IMPORT)
    assert imported.cluster.name == "demo"
    assert imported.captured_at > live_demo[-1].captured_at
    assert demo_latest() == live_demo[-1]
    assert demo_series(Client()) == series
    html = client_logged_in.get(reverse("home")).content.decode()
    assert "1 snapshot imported into demo, not captured: not taken as its state" in html
    assert f">#{imported.pk}</a>" in html[html.index("not taken as its state") :]


def test_clusters_of_uploads_are_not_in_metrics(live_demo: list[Snapshot], user: Any) -> None:
    analysed_upload(upload_by(user, forged("incident", captured_at=just_now())).snapshot)
    clusters = {s.labels["cluster"] for samples in scrape(Client()).values() for s in samples}
    assert clusters == {"demo"}


# --- clusters stored before uploads had owners ------------------------------------------------


def test_the_migration_gives_clusters_made_by_uploads_their_uploader(user: Any, bob: Any) -> None:
    from importlib import import_module

    migration = import_module("dradash.snapshots.migrations.0008_upload_clusters")
    upload_by(user, forged("alone"))
    shared = upload_by(user, forged("shared")).snapshot.cluster
    Snapshot.objects.filter(pk=upload_by(bob, forged("other")).snapshot_id).update(cluster=shared)
    upload_by(user, forged("mixed"))
    bundle_import(files=[("b.json", forged())], cluster_name="mixed")
    live = upload_by(user, forged("live")).snapshot.cluster
    live.in_cluster = True
    live.save()
    Cluster.objects.update(origin=Cluster.Origin.OPERATOR, created_by=None)  # as before 0008

    migration.mark_upload_clusters(apps, None)

    made = {c.name: (c.origin, c.created_by) for c in Cluster.objects.all()}
    assert made == {
        "alone": ("upload", user),
        "shared": ("upload", None),  # two users' uploads: nobody's
        "other": ("operator", None),  # emptied above: nothing says whose it is
        "mixed": ("operator", None),  # an operator imported into it
        "live": ("operator", None),  # captured live
    }
