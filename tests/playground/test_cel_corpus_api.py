"""The recorded CEL corpora (tests/dra/cel/data, README in shared/cel) replayed through the path
users see: ``POST /api/v1/selectors/evaluate`` with the case's device in an inline ResourceSlice,
judged in the recording's environment (``server_version`` 1.36 or 1.37). The answer is the
scheduler's: a compile error, a runtime error on the device (``matches: null``), true or false;
for 1.37 also whether the API server would accept the selector in a new claim
(``new_selector_error``), with DRAListTypeAttributes off and on, its cost estimate included."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache

from tests.dra.cel.test_corpus import CASES, recorded

pytestmark = pytest.mark.django_db

URL = "/api/v1/selectors/evaluate"
VERSIONS = {36: "v1.36.2", 37: "v1.37.0"}
CHUNK = 100
CHUNKS = [CASES[i : i + CHUNK] for i in range(0, len(CASES), CHUNK)]


def request(case: dict[str, Any], lists: bool) -> dict[str, Any]:
    device = {k: v for k, v in case["device"].items() if v is not None}
    return {
        "expression": case["expression"],
        "server_version": VERSIONS[case["release"]],
        "feature_gates": {"DRAListTypeAttributes": lists},
        "resource_slices": [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": "corpus"},
                "spec": {
                    "driver": case["driver"],
                    "pool": {"name": "corpus", "generation": 1, "resourceSliceCount": 1},
                    "allNodes": True,
                    "devices": [device],
                },
            }
        ],
    }


def answer(body: dict[str, Any]) -> str:
    if body["compile_error"]:
        return "compile error"
    (row,) = body["results"]
    if row["error"] is not None:
        assert row["matches"] is None
        return "runtime error"
    return "true" if row["matches"] else "false"


def problems(case: dict[str, Any], api_client: Any) -> list[str]:
    found = []
    # 1.36's recording ran with the list gate off; 1.37's scheduler ignores it, its API server not.
    for lists, apiserver in ((False, "expect_apiserver"), (True, "expect_apiserver_lists")):
        if case["release"] == 36 and lists:
            continue
        cache.clear()  # the selector API's rate limits are not what this replays
        response = api_client.post(URL, request(case, lists), format="json")
        if response.status_code != 200:
            return [f"HTTP {response.status_code}: {response.content[:200]!r}"]
        body = response.json()
        if answer(body) != recorded(case["expect"]):
            found.append(f"{answer(body)}, recorded {recorded(case['expect'])}")
        if apiserver in case:
            # what the scheduler does not compile, the API server does not accept either
            refused = bool(body["compile_error"] or body["new_selector_error"])
            expected = case[apiserver]
            if refused != expected["compile_error"]:
                found.append(f"lists {lists}: API server refusal {refused}, recorded {expected}")
            elif (message := body["new_selector_error"]) and (
                "exceeds cost limit" in expected["error_text"]
            ) != ("exceeds cost limit" in message["message"]):
                found.append(f"lists {lists}: {body['new_selector_error']}, recorded {expected}")
    return found


@pytest.mark.parametrize(
    "chunk", CHUNKS, ids=[f"1.{c[0]['release']}-{c[0]['name']}..{c[-1]['name']}" for c in CHUNKS]
)
def test_the_evaluate_api_answers_as_kubernetes_did(
    chunk: list[dict[str, Any]], api_client: Any
) -> None:
    found = {
        f"1.{case['release']} {case['name']}: {case['expression'][:80]}": p
        for case in chunk
        for p in [problems(case, api_client)]
        if p
    }
    assert found == {}
