"""Schemathesis against the OpenAPI schema at /api/schema/: for every operation, requests
generated from the schema (valid and invalid) never get a 5xx, and answers conform to the schema.

The demo snapshots are loaded and the requests authenticate with a DRF token. Each generated case
is sent as generated (unknown ids: 404s and 400s) and again with its ids pointed at objects that
exist (a demo snapshot, a pod or claim in it), so that the success paths are exercised too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from knox.models import AuthToken
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from dradash.snapshots.selectors import snapshot_objects
from dradash.wsgi import application
from tests.fuzz.strategies import SCALE, fuzz_settings, known_bug

# Not status_code_conformance: the schema documents only each operation's success status, while
# the API rightly answers 400 for invalid input and 404 for unknown ids (reported, not ours).
CHECKS = [not_a_server_error, content_type_conformance, response_schema_conformance]
MAX_EXAMPLES = 20


@pytest.fixture
def _keep_the_test_connection() -> Iterator[None]:
    """Requests go through the real WSGI handler, whose request signals close the database
    connection, and with it the test's transaction. Django's test client steps aside the same
    way."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


def load_schema() -> Any:
    """The schema /api/schema/ serves, made by the same generator, without a request.

    (Loading it over HTTP needs a logged-in user, hence the database, which collection has not
    got; schemathesis' lazy ``from_fixture`` loader does not run on pytest 9.)
    """
    from drf_spectacular.generators import SchemaGenerator

    loaded = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
    loaded.app = application
    loaded.config.generation.update(
        max_examples=MAX_EXAMPLES * (SCALE or 1), deterministic=not SCALE
    )
    return loaded


@pytest.fixture
def auth(db: None, _keep_the_test_connection: None, django_user_model: Any) -> dict[str, str]:
    user = django_user_model.objects.create_user(username="schemathesis")
    return {"Authorization": f"Token {AuthToken.objects.create(user)[1]}"}


@pytest.fixture
def existing(demo: list[Any]) -> list[dict[str, Any]]:
    """Path parameters that name things which exist: a snapshot, a pod and a claim in it."""
    snapshot = demo[1]
    rows = sorted(
        snapshot_objects(
            snapshot, kinds=["Pod", "ResourceClaim"], fields=("kind", "namespace", "name")
        )
    )
    found = [{"snapshot_id": snapshot.pk}]
    for kind in ("Pod", "ResourceClaim"):
        _, namespace, name = next(r for r in rows if r[0] == kind)
        found.append({"snapshot_id": snapshot.pk, "namespace": namespace, "name": name})
    return found


schema = load_schema()


def call_and_check(case: Any, auth: dict[str, str]) -> None:
    try:
        response = case.call(headers=auth)
    except Exception as exc:  # pragma: no cover - the WSGI handler turns errors into 500s
        if known_bug(exc):
            return
        raise
    case.validate_response(response, checks=CHECKS)


@schema.parametrize()
@fuzz_settings(MAX_EXAMPLES)
def test_no_operation_answers_5xx_or_off_schema(
    case: Any, auth: dict[str, str], existing: list[dict[str, Any]]
) -> None:
    call_and_check(case, auth)
    params = case.path_parameters or {}
    for ids in existing:
        if params and set(ids) <= set(params):
            case.path_parameters = {**params, **ids}
            call_and_check(case, auth)
