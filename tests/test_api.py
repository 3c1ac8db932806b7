"""The API as a whole (issue 17): a public schema that describes every operation for people,
the same answer with or without a trailing slash, and JSON for a path that is no operation."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import resolve
from rest_framework.views import APIView

from dradash.analysis.apis import AnalysedApi
from dradash.api import BaseApi
from dradash.snapshots.models import SnapshotRun
from tests import gang_cluster
from tests.stored import import_analysed


def schema(client: Any) -> dict[str, Any]:
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200, response.content[:300]
    return response.json()


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, ops in spec["paths"].items()
        for method, op in ops.items()
    ]


def test_the_schema_is_public(client, db) -> None:
    spec = schema(client)
    assert spec["openapi"].startswith("3.")
    assert "/api/v1/snapshots/{snapshot_id}/findings" in spec["paths"]


def test_the_schemas_names_are_words(client, db) -> None:
    """drf-spectacular names an enum after a hash of its values ("SeverityDfeEnum") when two
    fields share a name: each gets a name of its own."""
    names = list(schema(client)["components"]["schemas"])
    assert [n for n in names if re.search(r"[a-z][0-9A-F]{3}Enum$|\d{3}Enum$", n)] == []
    assert "VerdictSeverityEnum" in names and "DeviceStatusEnum" in names


def test_the_schema_is_public_even_with_a_bad_token(client, db) -> None:
    response = client.get("/api/schema/", HTTP_AUTHORIZATION="Token not-a-token")
    assert response.status_code == 200


INTERNAL_DOCSTRINGS = {
    inspect.getdoc(cls) for cls in (BaseApi, AnalysedApi, APIView) if inspect.getdoc(cls)
}


def test_every_operation_is_described_for_people(client, db) -> None:
    for method, path, op in operations(schema(client)):
        where = f"{method} {path}"
        assert op.get("summary"), f"{where} has no summary"
        description = op.get("description") or ""
        assert len(description) > 40, f"{where} has no description"
        assert description not in INTERNAL_DOCSTRINGS, f"{where}: {description[:60]}"
        for word in ("APIView", "selector.py", "stored analysis", "redirecting"):
            assert word not in description, f"{where} describes itself as code: {description}"


def test_no_request_or_response_body_is_named_by_its_serializer_class(client, db) -> None:
    spec = schema(client)
    names = set(spec["components"]["schemas"])
    assert not names & {"Input", "Output", "Filter", "InputSerializer", "OutputSerializer"}
    body = spec["paths"]["/api/v1/selectors/evaluate"]["post"]["requestBody"]
    ref = body["content"]["application/json"]["schema"]["$ref"]
    assert ref == "#/components/schemas/SelectorEvaluationRequest"


def _concrete(path: str, snapshot: int, upload: int = 0) -> str:
    return (
        path.replace("{snapshot_id}", str(snapshot))
        .replace("{namespace}", "llm-eval")
        .replace("{name}", "eval-h200")
        .replace("{share_id}", "424242")
        .replace("{upload_id}", str(upload))
    )


def test_every_operation_answers_with_and_without_a_trailing_slash(
    client, api_client, demo
) -> None:
    later = demo[-1].pk
    gang = import_analysed(files=[("gang.json", gang_cluster.bundle())]).pk  # the demo has none
    upload = SnapshotRun.objects.create(kind="upload", cluster_name="demo").pk
    seen = 0
    for method, path, _ in operations(schema(client)):
        if method != "GET":
            continue
        url = _concrete(path, later, upload)
        if "/claims/" in url:
            url = url.replace("eval-h200", "h200-eval")
        if "/podgroups" in url:
            url = _concrete(path, gang).replace("llm-eval/eval-h200", "ml/train")
        if "/nodes/" in url:
            url = url.replace("eval-h200", "h100-node-01")
        if "{driver}" in url:
            device = "gpu.nvidia.com/h100-node-01/gpu-5"
            url = url.replace("{driver}/{pool}/{device}", device)
        if url.endswith("/search"):
            url += "?q=gpu"
        path_part, _, params = url.partition("?")
        other = (path_part[:-1] if path_part.endswith("/") else path_part + "/") + (
            f"?{params}" if params else ""
        )
        first, second = api_client.get(url), api_client.get(other)
        assert first.status_code == 200, f"{url}: {first.status_code}"
        assert second.status_code == 200, f"{other}: {second.status_code} (not a redirect)"
        assert first.json() == second.json(), other
        seen += 1
    assert seen >= 14


def test_post_and_delete_work_without_a_redirect_on_either_spelling(api_client, demo) -> None:
    later = demo[-1].pk
    for url in (f"/api/v1/snapshots/{later}/shares", f"/api/v1/snapshots/{later}/shares/"):
        response = api_client.post(url, {"expires_in": 3600}, format="json")
        assert response.status_code == 201, (url, response.content)
        share_id = response.json()["id"]
        assert api_client.delete(f"/api/v1/shares/{share_id}/").status_code == 204
    body = {"expression": "true", "snapshot": later}
    assert api_client.post("/api/v1/selectors/evaluate/", body, format="json").status_code == 200
    for url in ("/api/v1/uploads", "/api/v1/uploads/"):
        files = {"files": [SimpleUploadedFile("pod.json", b'{"kind": "Pod"}')]}
        assert api_client.post(url, files, format="multipart").status_code == 202, url


def test_the_other_spelling_still_needs_credentials(client, demo) -> None:
    response = client.get(f"/api/v1/snapshots/{demo[-1].pk}/findings/")
    assert response.status_code in (401, 403)
    assert response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    "path",
    [
        "/api/",
        "/api/v1/",
        "/api/v1/nothing-here",
        "/api/v1/snapshots/1/no-such-resource",
        "/api/v2/snapshots/",
        "/api/v1/snapshots/not-a-number/",
    ],
)
def test_an_unknown_api_path_is_a_small_json_404(client_logged_in, path) -> None:
    response = client_logged_in.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert len(response.content) < 500
    assert response.json() == {"detail": "Not found."}


def test_an_unknown_api_path_is_json_without_a_login_too(client, db) -> None:
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"


def test_the_fallback_is_not_an_operation_of_the_schema(client, db) -> None:
    assert not any("{rest}" in path for path in schema(client)["paths"])
    assert resolve("/api/v1/anything").url_name == "api-fallback"


def test_programs_still_get_the_schema_and_browsers_the_docs(client) -> None:
    """/api/schema/ is the OpenAPI schema for anything but a browser's navigation, which goes
    to the readable docs at /api/docs/ (both public)."""
    as_program = client.get("/api/schema/")
    assert as_program.status_code == 200
    assert as_program["Content-Type"].startswith("application/vnd.oai.openapi")
    assert b"openapi: 3" in as_program.content
    as_json = client.get("/api/schema/?format=json", HTTP_ACCEPT="text/html,*/*")
    assert as_json.status_code == 200 and as_json.json()["info"]["title"] == "dradash API"
    browser = client.get("/api/schema/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert browser.status_code == 302 and browser["Location"] == "/api/docs/"
    docs = client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger-ui-bundle.js" in docs.content
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200
    url = script.content.decode().encode().decode("unicode_escape")  # escapejs'd in the script
    assert "/api/schema/?format=yaml" in url
