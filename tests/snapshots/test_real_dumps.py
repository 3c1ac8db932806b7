"""The 17 real dumps (tests/fixtures/real-dumps, see its INDEX.md) as import test data.

Each file's import result and device count follow the INDEX's "allocator devices" column: the
devices in current-generation, complete pools of slices the API server would accept, as
``GET /api/v1/snapshots/{id}/devices`` reports them after ``import_bundle FILE``. The two
classic-DRA (v1alpha2) dumps have no object dradash reads: they are refused, saying why
(issue 27), where they once made empty snapshots.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from dradash.dra.bundle import EXPORT_COMMAND, BundleError
from dradash.snapshots.models import ObjectBlob, Snapshot
from dradash.snapshots.services import bundle_import
from tests.stored import import_analysed

DUMPS = Path(__file__).parent.parent / "fixtures" / "real-dumps"

# file -> (devices the devices API lists, objects ignored as of unsupported versions)
IMPORTED = {
    "aicr__secure-accelerator-access__eks-2x8-h100-resourceslices.yaml": (20, 0),
    "cncf-ai-conformance__v1.35-vks__vgpu-a100-resourceslices.yaml": (12, 0),
    "cncf-ai-conformance__v1.36-vks__vgpu-a100-10c-resourceslices.yaml": (2, 0),
    "cncf-ai-conformance__v1.36-vks__resourceclaims-allocated.yaml": (0, 0),
    "alauda-knowledge__nvidia-dra-driver__p100-resourceslice-v1beta1.yaml": (1, 0),
    "spyre__demo__generated-resourceslices__v1beta1.yaml": (8, 0),
    "spyre__helm__deviceclass.yaml": (0, 0),
    "intel__doc-gaudi-USAGE__v1alpha3-gaudi2-resourceslice.yaml": (3, 0),
    "intel__doc-gpu-USAGE__v1alpha3-arc-a770-resourceslice.yaml": (1, 0),
    "dra-example-driver__README__v1alpha3-resourceslice-list.yaml": (8, 0),
    "nvidia-gpu-issue-149__v1alpha3-resourceslice-list-devices-null.yaml": (0, 0),
    "rocm-blogs__dra-gpu__resourceclaim-allocated.yaml": (0, 0),
}
# file -> what it holds: only classic DRA (resource.k8s.io/v1alpha2), which dradash does not read
CLASSIC = {
    "dra-example-driver__README__v1alpha2-resourceslice-list.yaml": "1 × resource.k8s.io/"
    "v1alpha2 ResourceSlice",
    "k8s-issue-126346__v1alpha2-user-resourceslice.yaml": "1 × resource.k8s.io/v1alpha2 "
    "ResourceSlice",
}
# file -> the field the API server refuses, named in the import's error
REFUSED = {
    "spyre__demo__generated-resourceslices__v1-with-basic.yaml": "spec.devices[0].basic",
    "rocm-blogs__dra-gpu__mi300x-resourceslice-full-gpu.yaml": "spec.pool: Required value",
    "rocm-blogs__dra-gpu__mi300x-resourceslice-cpx-partition.yaml": "spec.pool: Required value",
}


def dump(name: str) -> tuple[str, bytes]:
    return name, (DUMPS / name).read_bytes()


def api(client: Any, name: str, snapshot: Snapshot) -> Any:
    response = client.get(reverse(name, args=[snapshot.pk]))
    assert response.status_code == 200
    return response.json()


def test_every_real_dump_has_an_expectation() -> None:
    files = {p.name for p in DUMPS.iterdir() if p.suffix == ".yaml"}

    assert len(files) == 17
    assert files == set(IMPORTED) | set(REFUSED) | set(CLASSIC)


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(IMPORTED))
def test_real_dump_imports_with_its_device_count(name: str, api_client: Any) -> None:
    devices, ignored = IMPORTED[name]

    snapshot = import_analysed(files=[dump(name)], cluster_name="real")

    assert len(api(api_client, "api-devices", snapshot)) == devices
    assert sum(snapshot.ignored.values()) == ignored
    assert snapshot.refused == [] and snapshot.refused_count == 0


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_real_dump_the_api_server_refuses_is_refused_naming_the_field(name: str) -> None:
    with pytest.raises(BundleError) as caught:
        bundle_import(files=[dump(name)], cluster_name="real")

    assert str(caught.value).startswith(f"{name}: document 1: ")
    assert REFUSED[name] in str(caught.value)
    assert not Snapshot.objects.exists()
    assert not ObjectBlob.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(CLASSIC))
@pytest.mark.parametrize("skip_invalid", [False, True])
def test_a_classic_dra_dump_is_refused_saying_what_to_export_instead(
    name: str, skip_invalid: bool
) -> None:
    with pytest.raises(BundleError) as caught:
        bundle_import(files=[dump(name)], cluster_name="real", skip_invalid=skip_invalid)

    error = caught.value
    assert error.filename == name
    assert error.problem.startswith("no object in the bundle is one dradash reads")
    assert f"Ignored: {CLASSIC[name]} (classic DRA)" in error.problem
    assert "API of classic DRA (Kubernetes 1.30 and earlier)" in error.problem
    assert "replaced it in Kubernetes 1.31, and 1.32 removed it" in error.problem
    assert "dradash reads resource.k8s.io/v1, v1beta2, v1beta1 and v1alpha3" in error.problem
    assert f"1.31 or later: {EXPORT_COMMAND}" in error.problem
    assert not Snapshot.objects.exists()
    assert not ObjectBlob.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_real_dump_the_api_server_refuses_is_left_out_with_skip_invalid(
    name: str, api_client: Any
) -> None:
    """With the DeviceClass of another dump beside it: the class is imported, the slice listed
    as refused with the field the API server refuses; alone, nothing is left to import."""
    with pytest.raises(BundleError) as caught:
        bundle_import(files=[dump(name)], cluster_name="real", skip_invalid=True)
    assert "no object in the bundle is one dradash reads" in caught.value.problem
    assert "Refused as invalid: 1 object" in caught.value.problem
    assert REFUSED[name] in caught.value.problem

    snapshot = import_analysed(
        files=[dump(name), dump("spyre__helm__deviceclass.yaml")],
        cluster_name="real",
        skip_invalid=True,
    )

    assert snapshot.object_count == 1
    assert snapshot.refused_count == 1
    (entry,) = snapshot.refused
    assert entry["file"] == name
    assert entry["location"].startswith("document 1")
    assert entry["kind"] == "ResourceSlice"
    assert REFUSED[name] in entry["problem"]
    assert api(api_client, "api-snapshot-detail", snapshot)["refused"] == [entry]


@pytest.mark.django_db
def test_eks_dump_has_four_complete_pools_and_classes_count_their_devices(api_client: Any) -> None:
    name = "aicr__secure-accelerator-access__eks-2x8-h100-resourceslices.yaml"
    snapshot = import_analysed(files=[dump(name)], cluster_name="real")

    pools = api(api_client, "api-pools", snapshot)
    assert len(pools) == 4
    assert all(p["complete"] for p in pools)
    by_driver: dict[str, int] = {}
    for row in api(api_client, "api-devices", snapshot):
        by_driver[row["driver"]] = by_driver.get(row["driver"], 0) + 1
    assert by_driver == {"gpu.nvidia.com": 16, "compute-domain.nvidia.com": 4}


@pytest.mark.django_db
def test_vks_claim_with_its_slices_shows_one_device_allocated(api_client: Any) -> None:
    snapshot = import_analysed(
        files=[
            dump("cncf-ai-conformance__v1.36-vks__vgpu-a100-10c-resourceslices.yaml"),
            dump("cncf-ai-conformance__v1.36-vks__resourceclaims-allocated.yaml"),
        ],
        cluster_name="real",
    )

    rows = api(api_client, "api-devices", snapshot)
    assert len(rows) == 2
    assert sum(1 for r in rows if r["allocated_to"]) == 1


@pytest.mark.django_db
def test_an_empty_pool_is_a_finding_and_fails_the_slices_item(api_client: Any) -> None:
    name = "nvidia-gpu-issue-149__v1alpha3-resourceslice-list-devices-null.yaml"
    snapshot = import_analysed(files=[dump(name)], cluster_name="real")

    findings = api(api_client, "api-findings", snapshot)
    (empty,) = [f for f in findings if f["code"] == "pool-empty"]
    assert "gpu.nvidia.com/k8s-dra-driver-cluster-worker" in empty["message"]
    assert "node k8s-dra-driver-cluster-worker" in empty["message"]
    assert "nvidia-smi" in empty["next_step"]
    checklist = {i["code"]: i for i in api(api_client, "api-checklist", snapshot)}
    assert checklist["slices-report-nodes-and-attributes"]["status"] == "fail"
    assert "publishes no devices" in checklist["slices-report-nodes-and-attributes"]["summary"]


@pytest.mark.django_db
def test_a_claim_without_its_slices_is_not_called_dangling(api_client: Any) -> None:
    """ROCm's allocated claim alone: its pool is simply not in the bundle."""
    name = "rocm-blogs__dra-gpu__resourceclaim-allocated.yaml"
    snapshot = import_analysed(files=[dump(name)], cluster_name="real")

    findings = api(api_client, "api-findings", snapshot)
    codes = {f["code"] for f in findings}
    assert "dangling-allocation" not in codes
    (missing,) = [f for f in findings if f["code"] == "kinds-missing"]
    assert "ResourceSlices" in missing["message"]
    assert "dangling-allocation" in missing["message"]
    for finding in findings:
        assert "delete" not in finding["next_step"].lower() or finding["code"] in (
            "allocated-unreserved",
            "claim-stuck-deleting",
        )
