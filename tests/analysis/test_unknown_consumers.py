"""A claim whose Pods are unknown, stored (issue 27): real dumps of claims without their Pods
say "unknown" in the diagnosis API, the claim's page, the claims list, the overview and
/metrics, never "stuck" (DESIGN "Unknown is an answer")."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

from dradash.analysis.models import ClaimVerdict, SnapshotAnalysis
from dradash.sharing.services import share_link_create
from tests.stored import import_analysed

pytestmark = pytest.mark.django_db

DUMPS = Path(__file__).parent.parent / "fixtures" / "real-dumps"
VKS_CLAIM = "cncf-ai-conformance__v1.36-vks__resourceclaims-allocated.yaml"
VKS_SLICES = "cncf-ai-conformance__v1.36-vks__vgpu-a100-10c-resourceslices.yaml"
SLICES = "aicr__secure-accelerator-access__eks-2x8-h100-resourceslices.yaml"
NAMESPACE, NAME = "gpu-test1", "dra-gpu-example-798fccd4d-sfl2p-single-gpu-d2jzk"
TOKEN = "scrape-me-0123456789"


@pytest.fixture
def snapshot() -> Any:
    """The VKS conformance report's claim and slices, imported together: no Pods."""
    files = [(name, (DUMPS / name).read_bytes()) for name in (VKS_CLAIM, VKS_SLICES)]
    return import_analysed(files=files, cluster_name="vks")


def words(response: Any) -> str:
    assert response.status_code == 200
    html = re.sub(
        r"<script.*?</script>|<style.*?</style>", "", response.content.decode(), flags=re.S
    )
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_diagnosis_api_says_unknown_and_which_kind_is_missing(
    api_client: Any, snapshot: Any
) -> None:
    url = f"/api/v1/snapshots/{snapshot.pk}/claims/{NAMESPACE}/{NAME}/diagnosis"
    body = api_client.get(url).json()

    assert (body["stage"], body["reason"]) == ("allocated-not-bound", "consumers-unknown")
    assert (body["severity"], body["unknown"]) == ("unknown", ["Pod"])
    assert "the snapshot has no pods, so whether a Pod uses it is unknown" in body["summary"]
    assert "kubectl get pods -A -o json > pods.json" in body["next_steps"][0]
    for key in ("evidence", "findings", "chain", "history"):  # the fields it always had
        assert key in body
    row = ClaimVerdict.objects.get(snapshot=snapshot, namespace=NAMESPACE, name=NAME)
    assert (row.severity, row.unknown, row.stuck) == ("unknown", ["Pod"], False)


def test_the_claims_list_api_filters_and_names_the_unknown(api_client: Any, snapshot: Any) -> None:
    url = f"/api/v1/snapshots/{snapshot.pk}/claims"
    (row,) = api_client.get(url, {"severity": "unknown"}).json()["results"]
    assert (row["name"], row["severity"]) == (NAME, "unknown")
    assert api_client.get(url, {"severity": "error"}).json()["results"] == []


def test_the_claim_page_shows_unknown_in_grey(client_logged_in: Any, snapshot: Any) -> None:
    response = client_logged_in.get(reverse("claim-detail", args=[snapshot.pk, NAMESPACE, NAME]))
    html = response.content.decode()
    text = words(response)

    assert '<span class="badge badge-lg badge-muted">unknown</span>' in html
    assert "consumers-unknown" in text
    assert "allocated-not-bound so far; the snapshot lacks Pods" in text
    assert "whether a Pod uses it is unknown" in text
    assert 'class="verdict verdict-muted"' in html
    assert "stagestep current unknown" in html  # grey, not red: not marked stuck
    assert "failing" not in html.replace("Workload failing", "")


def test_a_shared_link_previews_it_as_unknown(client: Any, user: Any, snapshot: Any) -> None:
    _, token = share_link_create(snapshot=snapshot, user=user, expires_in=timedelta(days=1))
    url = f"/share/{token}/snapshots/{snapshot.pk}/claims/{NAMESPACE}/{NAME}/"
    html = client.get(url).content.decode()
    title = f'<meta property="og:title" content="ResourceClaim {NAMESPACE}/{NAME}: unknown'
    assert title + ' (consumers-unknown)">' in html


def test_the_claims_list_and_the_overview_count_it_apart(
    client_logged_in: Any, snapshot: Any
) -> None:
    response = client_logged_in.get(reverse("claim-list", args=[snapshot.pk]))
    html = response.content.decode()
    assert '<span class="badge badge-muted" title="allocated-not-bound so far' in html
    assert ">unknown</span>" in html and "consumers-unknown" in html
    assert ">allocated-not-bound</span>" not in html  # no stage badge: it is not stuck there

    overview = words(client_logged_in.get(reverse("snapshot-detail", args=[snapshot.pk])))
    assert "1 claim unknown: whether a Pod uses it (the snapshot has no Pods)" in overview
    summary = SnapshotAnalysis.objects.get(pk=snapshot.pk).summary
    assert (summary["claim_stages"], summary["claims_unknown"]) == ({}, 1)


def test_metrics_count_it_unknown_not_stuck(client: Any, settings: Any, snapshot: Any) -> None:
    settings.DRADASH_METRICS_TOKEN = TOKEN
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    samples = [
        s
        for family in text_string_to_metric_families(response.content.decode())
        for s in family.samples
        if s.labels.get("cluster") == "vks"
    ]

    assert [s for s in samples if s.name == "dradash_claims"] == []
    (unknown,) = [s for s in samples if s.name == "dradash_claims_unknown"]
    assert unknown.value == 1


def test_the_migration_forgets_analyses_that_called_such_claims_stuck(snapshot: Any) -> None:
    """Analyses stored before: analysed again when next opened (analyse --missing)."""
    from importlib import import_module

    from django.apps import apps

    from dradash.analysis.services import analysis_run

    migration = import_module(
        "dradash.analysis.migrations.0009_reanalyse_claims_of_unknown_consumers"
    )
    files = [(SLICES, (DUMPS / SLICES).read_bytes())]
    other = import_analysed(files=files, cluster_name="eks")
    ClaimVerdict.objects.filter(snapshot=snapshot).update(  # as stored before
        reason="snapshot-incomplete",
        severity="error",
        summary=f"ResourceClaim {NAMESPACE}/{NAME} is allocated and reserved for "
        "dra-gpu-example-798fccd4d-sfl2p; whether a Pod still uses it is unknown: the snapshot "
        "has no pods.",
    )

    migration.forget(apps, None)

    assert not SnapshotAnalysis.objects.filter(pk=snapshot.pk).exists()
    assert SnapshotAnalysis.objects.filter(pk=other.pk).exists()
    analysis_run(snapshot.pk)
    row = ClaimVerdict.objects.get(snapshot=snapshot, namespace=NAMESPACE, name=NAME)
    assert (row.reason, row.severity) == ("consumers-unknown", "unknown")
