"""The demo cluster's gang, through the pages and API that exist for every Pod: a member of
PodGroup llm-train/llm-train gets the gang's verdict (see tests/dra/test_gang_demo.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

NS = "llm-train"


@pytest.mark.parametrize("which", [0, 1], ids=["first", "later"])
def test_a_gang_member_is_diagnosed_with_its_gang(api_client: Any, demo: Any, which: int) -> None:
    pods = api_client.get(f"/api/v1/snapshots/{demo[which].pk}/pods?namespace={NS}").json()
    names = sorted(p["name"] for p in pods["results"])
    assert len(names) == 4
    assert {(p["stage"], p["reason"]) for p in pods["results"]} == {
        ("claim-unallocated", "gang-does-not-fit")
    }
    response = api_client.get(reverse("api-pod-diagnosis", args=[demo[which].pk, NS, names[0]]))
    assert response.status_code == 200
    data = response.json()
    assert (data["stage"], data["reason"]) == ("claim-unallocated", "gang-does-not-fit")
    assert "only 3 fit at once" in data["summary"]
    assert f"the first that does not is Pod {names[3]}" in data["summary"]
