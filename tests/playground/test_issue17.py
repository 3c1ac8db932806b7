"""The selector playground's points of issue 17 and 14: capacities shown and named in the hint,
the built-in examples error nowhere, the error tables say how many they leave out, a clause that
raises an error is listed as an error, not as "failed"."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from dradash.playground.views import EXAMPLES

pytestmark = pytest.mark.django_db


def page(client, **params) -> str:
    response = client.get(f"{reverse('playground')}?{urlencode(params)}")
    assert response.status_code == 200
    return unescape(response.content.decode().replace("<wbr>", ""))


def section(html: str, heading: str) -> str:
    start = html.index(f"<h2>{heading}</h2>")
    return html[start : html.index("</section>", start)]


MEMORY_AS_ATTRIBUTE = "device.attributes['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"


def test_a_capacity_looked_up_as_an_attribute_is_named_a_capacity(client_logged_in, demo) -> None:
    html = page(client_logged_in, snapshot=demo[-1].pk, expression=MEMORY_AS_ATTRIBUTE)
    errors = section(html, "Errors")
    assert "no such key: memory" in errors
    hint = re.sub(r"<[^>]+>", "", errors)
    assert "memory is a capacity of these devices, not an attribute" in hint
    assert 'device.capacity["gpu.nvidia.com"].memory' in hint  # the domain the expression names


def test_a_missing_attribute_gets_the_guard_hint(client_logged_in, demo) -> None:
    html = page(
        client_logged_in,
        snapshot=demo[-1].pk,
        expression="device.attributes['gpu.nvidia.com'].index == 0",
    )
    hint = re.sub(r"<[^>]+>", "", section(html, "Errors"))
    assert "These devices have no attribute index" in hint
    assert "is a capacity" not in hint


def test_the_device_tables_show_capacities(client_logged_in, demo) -> None:
    html = page(
        client_logged_in, snapshot=demo[-1].pk, expression="device.driver == 'gpu.nvidia.com'"
    )
    matching = section(html, "Matching devices")
    assert "<th>Capacity</th>" in matching
    assert re.search(r'<span class="attr">memory=<strong>81559Mi</strong>', matching)
    # and the attributes column no longer passes a capacity off as an attribute
    attributes = re.findall(r'<td class="small">(.*?)</td>', matching, re.S)[0]
    assert "memory=" not in attributes


@pytest.mark.parametrize(("label", "expression"), EXAMPLES)
def test_the_built_in_examples_raise_no_error_without_a_class(
    client_logged_in, demo, label: str, expression: str
) -> None:
    html = page(client_logged_in, snapshot=demo[-1].pk, expression=expression)
    assert "<h2>Errors</h2>" not in html, label
    assert re.search(r'<span class="stat-n">0</span><span class="stat-l">errors</span>', html)


def test_the_error_table_says_how_many_it_leaves_out(client_logged_in, demo) -> None:
    html = page(client_logged_in, snapshot=demo[-1].pk, expression=MEMORY_AS_ATTRIBUTE)
    errors = section(html, "Errors")
    assert len(re.findall(r"<tr>\s*<td><strong>", errors)) == 10
    assert "10 of 41 shown" in errors


def test_a_clause_that_raises_is_listed_as_an_error(client_logged_in, demo) -> None:
    # The clause that raises comes first: && evaluates it, then finds the next one false (a
    # clause after a false one is never evaluated: issue 27, tests/playground/test_issue27.py).
    expression = (
        "device.attributes['gpu.nvidia.com'].index == 0"
        " && device.attributes['gpu.nvidia.com'].productName == 'none'"
    )
    html = page(client_logged_in, snapshot=demo[-1].pk, expression=expression)
    misses = section(html, "Nearest misses")
    a100 = misses[misses.index("a100-node-01") :]
    a100 = a100[: a100.index("</tr>")]
    assert re.search(
        r'badge-bad">error</span> <code class="clause">'
        r"device.attributes\['gpu.nvidia.com'\].index == 0</code>"
        r' <span class="error">no such key: index</span>',
        a100,
    )
    assert re.search(
        r"badge-muted\">false</span> <code class=\"clause\">device.attributes\['gpu.nvidia.com'\]"
        r".productName == 'none'</code>",
        a100,
    )
