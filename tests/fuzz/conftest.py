"""Fixtures for the fuzz tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rest_framework.views import APIView


@pytest.fixture(autouse=True)
def _no_throttling(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fuzzing sends hundreds of requests a minute: no rate limit may answer 429.

    DRF reads DEFAULT_THROTTLE_CLASSES and DEFAULT_THROTTLE_RATES into class attributes at
    import, so overriding the settings would not reach a view that already throttles (e.g. with
    scope "selectors"); views are asked for no throttles instead.
    """
    monkeypatch.setattr(APIView, "get_throttles", lambda self: [])
    yield
