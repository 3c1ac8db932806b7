"""Each user has DRADASH_SELECTOR_SECONDS_PER_MINUTE of selector evaluation, for the playground
page and the selector API together: heavy but legal evaluations by a few users cannot take the
evaluation workers from everyone else."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from dradash.playground import services
from dradash.playground.services import EvaluationRefused, evaluation_time

pytestmark = pytest.mark.django_db

URL = "/api/v1/selectors/evaluate"
BODY = {"expression": "true", "resource_slices": []}
MINUTE = 1_800_000_000 - 1_800_000_000 % 60  # a minute's first second


class Clock:
    """Wall clock and monotonic clock of the service, moved by the test."""

    def __init__(self) -> None:
        self.now = float(MINUTE)

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch, settings) -> Clock:
    settings.DRADASH_SELECTOR_TIME_LIMIT = 5
    settings.DRADASH_SELECTOR_SECONDS_PER_MINUTE = 12
    settings.DRADASH_SELECTOR_CONCURRENCY = 5
    cache.clear()
    fake = Clock()
    monkeypatch.setattr(services, "time", fake)
    return fake


def spend(user_id: int, clock: Clock, seconds: float) -> float:
    with evaluation_time(user_id) as granted:
        clock.advance(seconds)
    return granted


def test_an_evaluation_gets_the_time_limit_then_what_is_left_of_the_minute(clock, user):
    assert spend(user.pk, clock, 5) == 5
    assert spend(user.pk, clock, 5) == 5
    assert spend(user.pk, clock, 2) == 2  # 12 s a minute: 2 s were left
    with pytest.raises(EvaluationRefused) as refused:
        spend(user.pk, clock, 0)
    assert refused.value.retry_after == 60 - 12
    assert "12 s per minute" in str(refused.value)
    clock.advance(60 - 12)  # the next minute
    assert spend(user.pk, clock, 0) == 5


def test_time_not_used_is_given_back(clock, user):
    grants = [spend(user.pk, clock, seconds) for seconds in (1, 1, 1, 5, 0)]
    assert grants == [5, 5, 5, 5, 4]  # 8 s of 12 spent, not 4 x 5


def test_requests_in_parallel_cannot_spend_more_than_the_budget(clock, user):
    """The whole time limit is reserved before the evaluation starts."""
    with (
        evaluation_time(user.pk) as first,
        evaluation_time(user.pk) as second,
        evaluation_time(user.pk) as third,
    ):
        assert (first, second, third) == (5, 5, 2)
        with pytest.raises(EvaluationRefused):
            spend(user.pk, clock, 0)


def test_a_user_runs_at_most_the_concurrency_at_once(clock, user, settings):
    settings.DRADASH_SELECTOR_CONCURRENCY = 2
    with evaluation_time(user.pk), evaluation_time(user.pk):
        with pytest.raises(EvaluationRefused) as refused:
            spend(user.pk, clock, 0)
        assert "2 selector evaluations running" in str(refused.value)
        assert refused.value.retry_after == 5
    # Once one ends another may start, and a refused one spent none of the minute's time.
    with evaluation_time(user.pk) as first, evaluation_time(user.pk) as second:
        assert (first, second) == (5, 5)


def spend_all(user_id: int, clock: Clock) -> None:
    for seconds in (5, 5, 2):
        spend(user_id, clock, seconds)


def test_the_budget_is_per_user(clock, user, django_user_model):
    spend_all(user.pk, clock)
    with pytest.raises(EvaluationRefused):
        spend(user.pk, clock, 0)
    other = django_user_model.objects.create_user("bob", password="x")
    assert spend(other.pk, clock, 0) == 5


def test_the_api_evaluates_within_the_grant_and_answers_429_when_spent(
    clock, user, monkeypatch
) -> None:
    limits: list[Any] = []
    evaluate = services.selector_evaluate

    def spy(**kwargs: Any) -> Any:
        limits.append(kwargs["time_limit"])
        clock.advance(4)
        return evaluate(**kwargs)

    monkeypatch.setattr("dradash.playground.apis.selector_evaluate", spy)
    client = APIClient()
    client.force_authenticate(user)
    statuses = [client.post(URL, BODY, format="json").status_code for _ in range(3)]
    assert statuses == [200, 200, 200]
    assert limits == [5, 5, 4]  # 12 s a minute, 4 s spent by each
    response = client.post(URL, BODY, format="json")
    assert response.status_code == 429
    assert "selector evaluation time: 12 s per minute" in response.json()["detail"]
    assert int(response["Retry-After"]) == 60 - 12


def test_the_page_shares_the_users_budget_with_the_api(clock, user, client_logged_in, demo) -> None:
    client = client_logged_in
    spend_all(user.pk, clock)
    page = client.get("/playground/", {"snapshot": demo[-1].pk, "expression": "true"})
    assert page.status_code == 429
    assert b"selector evaluation time" in page.content
    assert page["Retry-After"] == str(60 - 12)
    # A page without an expression evaluates nothing and is not limited.
    assert client.get("/playground/", {"snapshot": demo[-1].pk}).status_code == 200
