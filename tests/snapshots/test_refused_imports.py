"""Imports that lose nothing (issue 27): a bundle with nothing dradash reads is refused, and
"skip invalid objects" (import_bundle --skip-invalid, the upload page's checkbox, the upload
API's skip_invalid) imports the valid objects and records the refused ones on the snapshot, in
its API, on its overview and in its export."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils.html import escape

from dradash.dra.bundle import EXPORT_COMMAND, info_object
from dradash.snapshots.models import ObjectBlob, Snapshot, SnapshotRun
from tests.stored import analysed

pytestmark = pytest.mark.django_db

REAL_DUMPS = Path(__file__).parent.parent / "fixtures" / "real-dumps"
# A real dump of an AMD slice whose author trimmed spec.pool: the API server refuses it.
TRIMMED = "rocm-blogs__dra-gpu__mi300x-resourceslice-full-gpu.yaml"
CLAIM = "rocm-blogs__dra-gpu__resourceclaim-allocated.yaml"
CLASSIC = "dra-example-driver__README__v1alpha2-resourceslice-list.yaml"


def dump(name: str) -> bytes:
    return (REAL_DUMPS / name).read_bytes()


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def assert_nothing_stored() -> None:
    assert not Snapshot.objects.exists()
    assert not ObjectBlob.objects.exists()


def assert_records_the_trimmed_slice(snapshot: Snapshot, file: str = TRIMMED) -> None:
    assert snapshot.object_count == 1  # the claim
    assert snapshot.refused_count == 1
    (entry,) = snapshot.refused
    assert entry == {
        "file": file,
        "location": "document 1",
        "kind": "ResourceSlice",
        "namespace": "",
        "name": "gpu-worker-2-gpu.amd.com-5fddf",
        "problem": entry["problem"],
    }
    assert entry["problem"].startswith(
        "resource.k8s.io/v1 ResourceSlice gpu-worker-2-gpu.amd.com-5fddf is invalid, and the API "
        "server would refuse it: spec.pool: Required value"
    )


# --- import_bundle ----------------------------------------------------------------------------


def test_import_bundle_with_skip_invalid_imports_the_rest_and_lists_the_refused(
    tmp_path: Path,
) -> None:
    for name in (TRIMMED, CLAIM):
        (tmp_path / name).write_bytes(dump(name))
    files = [str(tmp_path / TRIMMED), str(tmp_path / CLAIM)]

    out = run("import_bundle", *files, "--skip-invalid", "--json")

    snapshot = Snapshot.objects.get()
    assert_records_the_trimmed_slice(snapshot, file=files[0])
    lines = out.strip().splitlines()
    assert lines[0].endswith(": 1 objects, 1 refused as invalid (left out)")
    assert lines[1].startswith(f"Refused: {files[0]}, document 1: resource.k8s.io/v1 ResourceSlice")
    assert json.loads(lines[-1]) == {
        "snapshot": snapshot.pk,
        "objects": 1,
        "ignored": 0,
        "refused": 1,
    }


def test_import_bundle_without_skip_invalid_still_refuses_naming_the_object(
    tmp_path: Path,
) -> None:
    for name in (TRIMMED, CLAIM):
        (tmp_path / name).write_bytes(dump(name))

    with pytest.raises(CommandError) as caught:
        run("import_bundle", str(tmp_path / TRIMMED), str(tmp_path / CLAIM), "--json")

    assert "document 1: resource.k8s.io/v1 ResourceSlice gpu-worker-2-gpu.amd.com-5fddf" in str(
        caught.value
    )
    assert "spec.pool: Required value" in str(caught.value)
    assert_nothing_stored()


def test_import_bundle_of_classic_dra_is_refused_saying_why(tmp_path: Path) -> None:
    (tmp_path / CLASSIC).write_bytes(dump(CLASSIC))

    with pytest.raises(CommandError) as caught:
        run("import_bundle", str(tmp_path / CLASSIC), "--skip-invalid")

    assert "Ignored: 1 × resource.k8s.io/v1alpha2 ResourceSlice (classic DRA)" in str(caught.value)
    assert EXPORT_COMMAND in str(caught.value)
    assert_nothing_stored()


def test_an_export_keeps_saying_what_was_refused(tmp_path: Path) -> None:
    source = tmp_path / "dump.yaml"
    source.write_bytes(dump(TRIMMED) + b"---\n" + dump(CLAIM))
    run("import_bundle", str(source), "--skip-invalid", "--cluster", "amd")
    original = Snapshot.objects.get()
    exported = tmp_path / "export.json"

    run("export_bundle", str(original.pk), "-o", str(exported))
    info = json.loads(exported.read_text())["items"][0]["spec"]
    run("import_bundle", str(exported))  # without --skip-invalid: every object is valid now

    copy = Snapshot.objects.exclude(pk=original.pk).get()
    assert info["refused"] == original.refused
    assert info["refusedCount"] == 1
    assert copy.refused == original.refused
    assert copy.refused_count == 1
    assert copy.object_count == original.object_count
    assert copy.refused[0]["file"] == str(source)


def test_a_re_import_that_refuses_more_adds_them_to_those_recorded(tmp_path: Path) -> None:
    before = {
        "file": "first.yaml",
        "location": "document 3",
        "kind": "Pod",
        "namespace": "ml",
        "name": "x",
        "problem": "Pod x: spec is not a mapping",
    }
    info = info_object({"cluster": "amd", "refused": [before], "refusedCount": 7})
    source = tmp_path / "again.yaml"
    source.write_bytes(
        json.dumps(info).encode() + b"\n---\n" + dump(TRIMMED) + b"---\n" + dump(CLAIM)
    )

    run("import_bundle", str(source), "--skip-invalid")

    snapshot = Snapshot.objects.get()
    assert snapshot.refused_count == 8
    assert snapshot.refused[0] == before
    assert snapshot.refused[1]["name"] == "gpu-worker-2-gpu.amd.com-5fddf"


# --- the upload page --------------------------------------------------------------------------


def upload(client: Any, *, skip_invalid: bool, callbacks: Any, **files: bytes) -> SnapshotRun:
    data: dict[str, Any] = {
        "files": [SimpleUploadedFile(name, content) for name, content in files.items()],
        "cluster": "amd",
    }
    if skip_invalid:
        data["skip_invalid"] = "on"  # what a ticked checkbox sends
    with callbacks(execute=True):
        response = client.post(reverse("upload"), data)
    assert response.status_code == 302
    return SnapshotRun.objects.get()


def test_the_upload_page_offers_to_skip_invalid_objects(client_logged_in) -> None:
    html = client_logged_in.get(reverse("upload")).content.decode()

    assert 'type="checkbox" name="skip_invalid"' in html
    assert "Skip invalid objects" in html
    assert escape(EXPORT_COMMAND) in html  # the command the refusal of classic DRA names


def test_an_upload_with_skip_invalid_imports_the_rest_and_the_overview_lists_the_refused(
    client_logged_in, django_capture_on_commit_callbacks
) -> None:
    run_ = upload(
        client_logged_in,
        skip_invalid=True,
        callbacks=django_capture_on_commit_callbacks,
        **{"slice.yaml": dump(TRIMMED), "claim.yaml": dump(CLAIM)},
    )

    assert run_.status == "succeeded" and run_.skip_invalid
    snapshot = analysed(run_.snapshot)
    assert_records_the_trimmed_slice(snapshot, file="slice.yaml")
    status = client_logged_in.get(reverse("run-detail", args=[run_.pk])).content.decode()
    assert "1 invalid object was left out" in status
    overview = client_logged_in.get(reverse("snapshot-detail", args=[snapshot.pk]))
    html = overview.content.decode()
    assert "<dt>Refused</dt>" in html
    assert "1 invalid object, left out of the import" in html
    assert "ResourceSlice <strong>gpu-worker-2-gpu.amd.com-5fddf</strong>" in html
    assert "slice.yaml, document 1" in html
    assert "spec.pool: Required value" in html


def test_an_upload_without_skip_invalid_still_fails_and_stores_nothing(
    client_logged_in, django_capture_on_commit_callbacks
) -> None:
    run_ = upload(
        client_logged_in,
        skip_invalid=False,
        callbacks=django_capture_on_commit_callbacks,
        **{"slice.yaml": dump(TRIMMED), "claim.yaml": dump(CLAIM)},
    )

    assert run_.status == "failed" and not run_.skip_invalid
    assert run_.error.startswith("slice.yaml: document 1: resource.k8s.io/v1 ResourceSlice")
    assert_nothing_stored()


@pytest.mark.parametrize("skip_invalid", [False, True])
def test_an_upload_of_classic_dra_fails_saying_what_to_export(
    client_logged_in, django_capture_on_commit_callbacks, skip_invalid: bool
) -> None:
    run_ = upload(
        client_logged_in,
        skip_invalid=skip_invalid,
        callbacks=django_capture_on_commit_callbacks,
        **{"slices.yaml": dump(CLASSIC)},
    )

    assert run_.status == "failed"
    assert "API of classic DRA (Kubernetes 1.30 and earlier)" in run_.error
    page = client_logged_in.get(reverse("run-detail", args=[run_.pk])).content.decode()
    assert escape(EXPORT_COMMAND) in page
    assert "Nothing was stored" in page
    assert_nothing_stored()


def test_an_upload_of_two_files_joined_with_cat_fails_with_the_line(
    client_logged_in, django_capture_on_commit_callbacks
) -> None:
    slices = dump("cncf-ai-conformance__v1.36-vks__vgpu-a100-10c-resourceslices.yaml")
    claims = dump("cncf-ai-conformance__v1.36-vks__resourceclaims-allocated.yaml")

    run_ = upload(
        client_logged_in,
        skip_invalid=True,
        callbacks=django_capture_on_commit_callbacks,
        **{"both.yaml": slices + claims},
    )

    assert run_.status == "failed"
    line = slices.count(b"\n") + 1
    assert run_.error.startswith(
        f"both.yaml: document 1 has the key 'apiVersion' twice (again at line {line}"
    )
    assert "put a line `---` between them, or upload them as separate files" in run_.error
    assert_nothing_stored()


# --- the API ----------------------------------------------------------------------------------


def api_upload(api_client: Any, callbacks: Any, **fields: Any) -> Any:
    files = [
        SimpleUploadedFile("slice.yaml", dump(TRIMMED)),
        SimpleUploadedFile("claim.yaml", dump(CLAIM)),
    ]
    with callbacks(execute=True):
        return api_client.post(
            "/api/v1/uploads/", {"files": files, "cluster": "amd", **fields}, format="multipart"
        )


def test_the_upload_api_with_skip_invalid_reports_the_refused_objects(
    api_client, django_capture_on_commit_callbacks
) -> None:
    response = api_upload(api_client, django_capture_on_commit_callbacks, skip_invalid="true")

    assert response.status_code == 202, response.json()
    upload_ = api_client.get(response["Location"]).json()
    assert upload_["status"] == "succeeded"
    assert upload_["skip_invalid"] is True
    assert upload_["refused"] == 1
    snapshot = Snapshot.objects.get()
    assert_records_the_trimmed_slice(snapshot, file="slice.yaml")
    detail = api_client.get(reverse("api-snapshot-detail", args=[snapshot.pk])).json()
    assert detail["refused"] == snapshot.refused
    assert detail["refused_count"] == 1
    listed = api_client.get(reverse("api-snapshot-list")).json()
    assert listed[0]["refused_count"] == 1


@pytest.mark.parametrize("value", [None, "false", "0"])
def test_the_upload_api_without_skip_invalid_still_refuses(
    api_client, django_capture_on_commit_callbacks, value: str | None
) -> None:
    fields = {} if value is None else {"skip_invalid": value}

    response = api_upload(api_client, django_capture_on_commit_callbacks, **fields)

    assert response.status_code == 202
    upload_ = api_client.get(response["Location"]).json()
    assert upload_["status"] == "failed"
    assert upload_["skip_invalid"] is False
    assert upload_["refused"] is None
    assert "spec.pool: Required value" in upload_["error"]
    assert_nothing_stored()


def test_the_upload_api_refuses_a_skip_invalid_that_is_no_boolean(
    api_client, django_capture_on_commit_callbacks
) -> None:
    response = api_upload(api_client, django_capture_on_commit_callbacks, skip_invalid="maybe")

    assert response.status_code == 400
    assert "skip_invalid" in response.json()
    assert not SnapshotRun.objects.exists()


def test_the_schema_describes_refused_and_skip_invalid(api_client) -> None:
    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/json").json()

    snapshot = schema["components"]["schemas"]["SnapshotOutput"]["properties"]
    assert snapshot["refused"]["type"] == "array"
    assert snapshot["refused_count"]["type"] == "integer"
    upload_ = schema["paths"]["/api/v1/uploads/"]["post"]["requestBody"]["content"]
    fields = upload_["multipart/form-data"]["schema"]["properties"]
    assert fields["skip_invalid"]["type"] == "boolean"
