"""PostgreSQL restarted, down, or holding a lock: gunicorn (two workers, as deployed) against
our own PostgreSQL answers without a human stepping in.

- A restart costs no request an error (CONN_HEALTH_CHECKS: a kept connection is checked
  before a request reuses it; it used to cost one 500 per web process).
- While PostgreSQL is down, pages answer a clear 503 page and the API a JSON 503; both work
  again once it is back.
- A table lock makes pages that need the table fail fast with a 503 (lock timeout), instead
  of stalling both workers until gunicorn kills them; the statement timeout does the same for
  a query that runs too long. Web requests get the short timeouts, workers longer ones.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from django.db import connection

from tests.servers import DEMO_POD, Browser, Gunicorn, Stack, page_text

pytestmark = pytest.mark.servers


@pytest.fixture(scope="module")
def web(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    # Short timeouts, so the test need not wait the default 5 s and 20 s.
    env = {**stack.env, "DRADASH_DB_LOCK_TIMEOUT": "2", "DRADASH_DB_STATEMENT_TIMEOUT": "30"}
    server = Gunicorn(env, workers=2, logdir=tmp_path_factory.mktemp("db-web")).start()
    try:
        yield server
    finally:
        server.stop()


def pages(stack: Stack) -> list[str]:
    namespace, name = DEMO_POD
    snapshot = stack.seed.snapshot
    return [f"/snapshots/{snapshot}/", f"/snapshots/{snapshot}/pods/{namespace}/{name}/"]


def test_a_postgresql_restart_costs_no_request_an_error(
    stack: Stack, postgres_up: object, web: Gunicorn
) -> None:
    browser = Browser(web.url)
    browser.log_in("ops", "ops-password-for-fault-tests")
    api = stack.seed.auth()
    # Every worker holds a connection (requests alternate between the two).
    for _ in range(6):
        assert browser.get(pages(stack)[0]).status == 200
        assert browser.get("/api/v1/snapshots/", headers=api).status == 200

    stack.postgres.restart()

    statuses = []
    for _ in range(6):
        statuses.append(browser.get(pages(stack)[1]).status)
        statuses.append(browser.get("/api/v1/snapshots/", headers=api).status)
    assert statuses == [200] * 12, web.output()


def test_while_postgresql_is_down_pages_say_503_and_the_api_answers_json(
    stack: Stack, postgres_up: object, web: Gunicorn
) -> None:
    browser = Browser(web.url)
    browser.log_in("ops", "ops-password-for-fault-tests")
    stack.postgres.stop()

    page = browser.get(pages(stack)[0])
    assert page.status == 503, page.text[:300]
    assert "database is unavailable" in page_text(page.text)
    assert int(page.headers["Retry-After"]) > 0

    api = browser.get("/api/v1/snapshots/", headers=stack.seed.auth())
    assert api.status == 503
    assert api.headers["Content-Type"] == "application/json"
    assert api.json() == {"detail": "The database is unavailable; try again shortly."}

    stack.postgres.start()
    assert browser.get(pages(stack)[0]).status == 200
    assert browser.get("/api/v1/snapshots/", headers=stack.seed.auth()).status == 200


def hold_lock(stack: Stack, table: str, seconds: float, locked: threading.Event) -> None:
    with stack.postgres.connect() as conn:
        conn.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        locked.set()
        time.sleep(seconds)
        conn.rollback()


def test_a_table_lock_makes_pages_fail_fast_instead_of_stalling_the_workers(
    stack: Stack, postgres_up: object, web: Gunicorn
) -> None:
    browser = Browser(web.url, timeout=25)
    browser.log_in("ops", "ops-password-for-fault-tests")
    locked = threading.Event()
    holder = threading.Thread(
        target=hold_lock, args=(stack, "snapshots_snapshot", 20, locked), daemon=True
    )
    holder.start()
    assert locked.wait(10)
    try:
        # Both workers in turn: each gives up after the 2 s lock timeout, with a 503.
        for _ in range(3):
            page = browser.get(pages(stack)[1])
            assert page.status == 503, page.text[:300]
            assert "did not answer in time" in page_text(page.text)
            assert page.seconds < 8
            api = browser.get("/api/v1/snapshots/", headers=stack.seed.auth())
            assert api.status == 503 and "did not answer in time" in api.json()["detail"]
            assert api.seconds < 8
    finally:
        holder.join(30)
    assert browser.get(pages(stack)[1]).status == 200


def test_a_long_query_is_stopped_by_the_statement_timeout(
    stack: Stack, postgres_up: object, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """With the lock timeout above the statement timeout, the statement timeout ends a query
    that waits (it counts time waiting for locks too): proof that web requests run with it."""
    env = {**stack.env, "DRADASH_DB_LOCK_TIMEOUT": "60", "DRADASH_DB_STATEMENT_TIMEOUT": "2"}
    server = Gunicorn(env, workers=1, logdir=tmp_path_factory.mktemp("stmt-web")).start()
    locked = threading.Event()
    holder = threading.Thread(
        target=hold_lock, args=(stack, "snapshots_snapshot", 12, locked), daemon=True
    )
    try:
        browser = Browser(server.url, timeout=25)
        holder.start()
        assert locked.wait(10)
        api = browser.get("/api/v1/snapshots/", headers=stack.seed.auth())
        assert api.status == 503 and "did not answer in time" in api.json()["detail"]
        assert 1.5 < api.seconds < 8
    finally:
        holder.join(30)
        server.stop()


@pytest.mark.django_db(transaction=True)
def test_web_and_worker_connections_get_their_own_timeouts() -> None:
    """dradash.db.use_timeouts, as gunicorn.conf.py and the Celery worker call it."""
    from dradash.celery import _worker_database_timeouts
    from dradash.db import use_timeouts

    def shown() -> tuple[str, str]:
        with connection.cursor() as cursor:
            cursor.execute("SHOW lock_timeout")
            lock = cursor.fetchone()[0]
            cursor.execute("SHOW statement_timeout")
            return lock, cursor.fetchone()[0]

    saved = dict(connection.settings_dict.get("OPTIONS", {}))
    try:
        use_timeouts("web")
        assert shown() == ("5s", "20s")
        _worker_database_timeouts()
        assert shown() == ("2min", "10min")
    finally:
        connection.settings_dict["OPTIONS"] = saved
        connection.close()
    assert shown() == ("0", "0")  # tests, commands and runserver: none
