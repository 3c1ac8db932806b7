"""Every real manifest either imports (and its pages render) or is refused, naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from dradash.dra.bundle import BundleError, parse_bundle
from dradash.snapshots.models import ObjectBlob, Snapshot
from dradash.snapshots.selectors import snapshot_objects
from dradash.snapshots.services import bundle_import

FIXTURES = Path(__file__).parent.parent / "fixtures" / "upstream"
NOT_MANIFESTS = {"INDEX.md", "selectors.txt", "NVIDIA_ATTRIBUTES.md"}
CORPUS = sorted(p.name for p in FIXTURES.iterdir() if p.name not in NOT_MANIFESTS)
NOTHING_TO_IMPORT = "no object in the bundle is one dradash reads"


def index_rows() -> dict[str, dict[str, str]]:
    """The "All files" table of INDEX.md: file -> {kinds, parse}."""
    rows = {}
    for line in (FIXTURES / "INDEX.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0] in CORPUS:
            rows[cells[0]] = {"kinds": cells[1], "parse": cells[3]}
    return rows


def must_import() -> list[str]:
    """dra-example-driver and NVIDIA files INDEX.md marks parseable, fragments aside.

    Fragments (kinds "(fragment)", "(json fragment)") are pieces of objects cut from docs, with no
    kind or metadata: the importer refuses them as "not a Kubernetes object", by design.
    """
    return sorted(
        name
        for name, row in index_rows().items()
        if name.startswith(("dra-example-driver__", "nvidia-gpu__"))
        and row["parse"] in ("ok", "ok(json)")
        and "fragment" not in row["kinds"]
        # A List whose device is the placeholder "- ...": the API server refuses it, and so do we.
        and name != "nvidia-gpu__docs__view-resources__resourceslice-list-skeleton.yaml"
    )


def test_the_must_import_list_covers_both_drivers() -> None:
    names = must_import()
    assert sum(n.startswith("dra-example-driver__") for n in names) >= 30
    assert sum(n.startswith("nvidia-gpu__") for n in names) >= 60


@pytest.mark.django_db
@pytest.mark.parametrize("name", CORPUS)
def test_every_fixture_imports_or_is_refused_by_name(name: str, client_logged_in) -> None:
    data = (FIXTURES / name).read_bytes()
    try:
        snapshot = bundle_import(files=[(name, data)], cluster_name="corpus")
    except BundleError as exc:
        assert str(exc).startswith(f"{name}: ")
        assert exc.problem
        assert not Snapshot.objects.exists()
        assert not ObjectBlob.objects.exists()
        if exc.problem.startswith(NOTHING_TO_IMPORT):
            # Every object of a kind or version dradash does not read (an MPIJob, classic
            # DRA's v1alpha2): refused rather than stored as an empty snapshot.
            bundle = parse_bundle([(name, data)], max_bytes=10**8)
            assert not bundle.objects and bundle.ignored
            return
        assert name not in must_import(), f"{name} must import but was refused: {exc}"
        return
    assert snapshot.object_count == len(list(snapshot_objects(snapshot, fields=("id",))))
    # Every page of what was imported renders.
    pages = [
        reverse("snapshot-detail", args=[snapshot.pk]),
        reverse("claim-list", args=[snapshot.pk]),
    ]
    pages.append(reverse("pod-list", args=[snapshot.pk]))
    for kind, namespace, obj_name in snapshot_objects(
        snapshot, kinds=["Pod", "ResourceClaim"], fields=("kind", "namespace", "name")
    ):
        url_name = "pod-detail" if kind == "Pod" else "claim-detail"
        pages.append(reverse(url_name, args=[snapshot.pk, namespace, obj_name]))
    for url in pages:
        response = client_logged_in.get(url)
        assert response.status_code == 200, url
