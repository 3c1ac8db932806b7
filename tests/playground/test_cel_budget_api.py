"""Issue 22 items 1, 2 and the CEL points of 11, through the selector API: every attack the red
team sent answers 200 with an error on the device (the cost limit, dradash's memory budget) in
a moment, never a 500 or a killed worker; the expressions that answered 500 get cel-go's
error. check_selector evaluates with the same budget."""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db

URL = "/api/v1/selectors/evaluate"
D = "dra.example.com"
SLICES = [
    {
        "metadata": {"name": "s"},
        "spec": {
            "driver": D,
            "nodeName": "n",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "x", "attributes": {"model": {"string": "9" * 60}}}],
        },
    }
]
COST = "operation cancelled: actual cost limit exceeded"
MEMORY = "would take the values this evaluation creates over dradash's memory budget of 64 MiB"


@pytest.fixture(autouse=True)
def _no_rate_limit() -> Iterator[None]:
    cache.clear()  # the selector API's rate limit counts in the default cache
    yield
    cache.clear()


def doubling(copies: int, levels: int, start: str, body: str) -> str:
    binds = "".join(f"cel.bind(x{i + 1}, {' + '.join([f'x{i}'] * copies)}, " for i in range(levels))
    return f"cel.bind(x0, {start}, {binds}{body}" + ")" * (levels + 1)


def evaluate(api_client, expression: str) -> dict:
    response = api_client.post(
        URL, {"expression": expression, "resource_slices": SLICES}, format="json"
    )
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("lists.range(14000).distinct().size() > 0", COST),
        ("sets.contains(lists.range(10000), lists.range(10000))", COST),
        ("sets.equivalent(lists.range(6000), lists.range(6000))", COST),
        (doubling(2, 12, "lists.range(1000)", "x12.sort().size() > 0"), COST),
        (doubling(2, 13, "lists.range(1000)", "x13 == x13"), MEMORY),
        ('"%.999999999e".format([1.0]).size() > 0', MEMORY),
        (doubling(4, 10, "lists.range(10)", "size(x10) > 0"), MEMORY),
        (doubling(20, 5, "lists.range(10)", "size(x5) > 0"), MEMORY),
    ],
)
def test_every_attack_is_an_error_on_the_device(api_client, expression: str, error: str) -> None:
    data = evaluate(api_client, expression)
    assert data["compile_error"] is None
    [row] = data["results"]
    assert row["matches"] is None
    assert error in row["error"]
    assert data["summary"] == {"matched": 0, "unmatched": 0, "errors": 1, "unknown": 0}


def test_int_of_5000_digits_is_cel_gos_conversion_error(api_client) -> None:
    data = evaluate(api_client, f'int("{"9" * 5000}") == 1')
    assert data["compile_error"]["message"] == (
        "program instantiation failed: type conversion error from 'string' to 'int'"
    )
    # At runtime (an attribute is at most 64 characters long; the concatenation 5,060):
    data = evaluate(api_client, f'int(device.attributes["{D}"].model + "{"9" * 5000}") == 1')
    [row] = data["results"]
    assert row["error"] == "CEL runtime error: type conversion error from 'string' to 'int'"


@pytest.mark.parametrize(
    ("zone", "errors"),
    [
        ("America", {"is a directory", "unknown time zone America"}),
        ("A" * 256, {"file name too long", f"unknown time zone {'A' * 256}"}),
    ],
)
def test_a_time_zone_that_is_no_zone_is_go_s_error(api_client, zone: str, errors: set) -> None:
    data = evaluate(api_client, f'timestamp("2024-01-01T00:00:00Z").getHours("{zone}") == 1')
    [row] = data["results"]
    assert row["matches"] is None
    assert row["error"].removeprefix("CEL runtime error: ") in errors


def test_check_selector_has_the_same_budget(demo) -> None:
    out = StringIO()
    expression = doubling(4, 10, "lists.range(10)", "size(x10) > 0")
    with pytest.raises(CommandError, match="would abort scheduling"):
        call_command("check_selector", expression, "--snapshot", str(demo[0].pk), stdout=out)
    assert MEMORY in out.getvalue()


# --- dradash's time limits: unknown, never a Kubernetes error --------------------------------

TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
# compile_test.go's "expensive", reading an attribute so that each device is evaluated apart.
EXPENSIVE = (
    f'device.attributes["{D}"].model != "" && '
    f"{TEN}.all(x, {TEN}.all(y, {TEN}.all(z, {TEN}.all(z2, {TEN}.all(z3, {TEN}.all(z4, "
    f"{TEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
UNKNOWN = "the outcome on these devices is unknown"


class _Clock:
    """time.monotonic for batch.py: still while the deadline is set and the first device
    starts, then 1,000 s on: the request's time limit runs out during the first device."""

    def __init__(self) -> None:
        self.looks = 0

    def monotonic(self) -> float:
        self.looks += 1
        return 0.0 if self.looks <= 2 else 1000.0

    @staticmethod
    def thread_time() -> float:
        import time

        return time.thread_time()


def test_a_request_out_of_time_leaves_later_devices_unknown(
    api_client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("dradash.dra.cel.batch.time", _Clock())
    slices = [
        {
            "metadata": {"name": "s"},
            "spec": {
                "driver": D,
                "nodeName": "n",
                "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {"name": name, "attributes": {"model": {"string": name}}} for name in ("x", "y")
                ],
            },
        }
    ]
    response = api_client.post(
        URL, {"expression": EXPENSIVE, "resource_slices": slices}, format="json"
    )
    assert response.status_code == 200
    data = response.json()
    first, second = data["results"]
    # The first device gets Kubernetes' answer, however long it took.
    assert first["matches"] is None
    assert first["unknown"] is False
    assert COST in first["error"]
    # The second is unknown: dradash's limit, not a CEL runtime error.
    assert second["matches"] is None
    assert second["unknown"] is True
    assert "CEL runtime error" not in second["error"]
    assert "its own time limit for one request, not Kubernetes'" in second["error"]
    assert second["error"].endswith(UNKNOWN)
    assert data["summary"] == {"matched": 0, "unmatched": 0, "errors": 1, "unknown": 1}


def test_the_playground_and_check_selector_say_unknown(
    client_logged_in, demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A net that has run out before it starts: every evaluation is stopped at its first look.
    monkeypatch.setattr("dradash.dra.cel.budget.NET_SECONDS", -1.0)
    expression = "lists.range(1000).all(i, i >= 0)"
    response = client_logged_in.get(
        "/playground/", {"snapshot": demo[0].pk, "expression": expression}
    )
    html = response.content.decode()
    assert "<h2>Unknown</h2>" in html
    assert "its own time limit stopped it, not Kubernetes'" in html
    assert 'stat-warn"><span class="stat-n">' in html  # the count of unknown devices
    assert "it aborts scheduling" not in html  # no error section: nothing raised a CEL error
    out = StringIO()
    with pytest.raises(CommandError, match="dradash stopped evaluating the selector on"):
        call_command("check_selector", expression, "--snapshot", str(demo[0].pk), stdout=out)
    assert "unknown on" in out.getvalue()
