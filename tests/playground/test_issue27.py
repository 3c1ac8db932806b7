"""The playground under pressure (issue 27), in the page's HTML: "did you mean" for a misspelt
domain or name, with the real domain in every hint; errors from other drivers' devices say to
choose the claim's class; a clause && never evaluated is not an error; every attribute of a
result row is reachable. (The class select that keeps its choice: tests/browser.)"""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from django.urls import reverse

from dradash.demo.cluster import build
from dradash.dra import matching
from dradash.dra.state import ClusterState, SnapshotMeta

pytestmark = pytest.mark.django_db


def page(client, **params) -> str:
    response = client.get(f"{reverse('playground')}?{urlencode(params)}")
    assert response.status_code == 200
    return unescape(response.content.decode().replace("<wbr>", ""))


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def section(html: str, heading: str) -> str:
    start = html.index(f"<h2>{heading}</h2>")
    return html[start : html.index("</section>", start)]


def test_a_misspelt_domain_gets_did_you_mean(client_logged_in, demo) -> None:
    expression = 'device.attributes["gpu.nvidia.co"].productName == "NVIDIA H100 80GB HBM3"'
    errors = text(
        section(page(client_logged_in, snapshot=demo[-1].pk, expression=expression), "Errors")
    )
    assert "No device publishes gpu.nvidia.co — did you mean gpu.nvidia.com?" in errors
    assert "has(device.attributes" not in errors  # a guard would match nothing, silently
    assert 'device.attributes["domain"]' not in errors


def test_a_misspelt_domain_behind_a_guard_is_named_too(client_logged_in, demo) -> None:
    """No error to explain: the selector silently matches nothing."""
    expression = "device.attributes['gpu.nvidia.co'].?productName.orValue('') == 'x'"
    html = page(client_logged_in, snapshot=demo[-1].pk, expression=expression)
    assert "<h2>Errors</h2>" not in html
    warning = text(section(html, "Names no device publishes"))
    assert "No device publishes gpu.nvidia.co — did you mean gpu.nvidia.com?" in warning


def test_a_misspelt_attribute_name_gets_did_you_mean(client_logged_in, demo) -> None:
    expression = "device.attributes['gpu.nvidia.com'].prodctName == 'x'"
    errors = text(
        section(
            page(
                client_logged_in,
                snapshot=demo[-1].pk,
                expression=expression,
                **{"class": "gpu.nvidia.com"},
            ),
            "Errors",
        )
    )
    assert "no such key: prodctName" in errors
    assert "No device publishes prodctName in gpu.nvidia.com — did you mean productName?" in errors


def test_a_missing_attribute_hint_names_the_real_domain(client_logged_in, demo) -> None:
    # The example driver's devices publish nothing in gpu.nvidia.com; the NVIDIA ones do.
    expression = "device.attributes['gpu.nvidia.com'].productName == 'x'"
    errors = text(
        section(page(client_logged_in, snapshot=demo[-1].pk, expression=expression), "Errors")
    )
    assert "These devices have no attribute productName in gpu.nvidia.com" in errors
    assert 'has(device.attributes["gpu.nvidia.com"].productName)' in errors
    assert '"domain"' not in errors


def test_errors_from_other_drivers_say_to_choose_the_class(client_logged_in, demo) -> None:
    expression = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
    html = page(client_logged_in, snapshot=demo[-1].pk, expression=expression)
    hint = section(html, "Choose the claim's device class")
    assert html.index("Choose the claim's device class") < html.index("<h2>Errors</h2>")
    said = text(hint)
    assert "The errors below come from devices of gpu.example.com" in said
    assert "the expression does not target (it names gpu.nvidia.com)" in said
    assert "selects devices first, as in the allocator" in said
    link = re.search(r'<a href="([^"]+)">gpu.nvidia.com</a>', hint)
    assert link is not None
    # The class it offers takes the errors away.
    chosen = page(client_logged_in, **dict(parse_qsl(urlsplit(link[1]).query)))
    assert "Choose the claim's device class" not in chosen
    assert re.search(r'<span class="stat-n">0</span><span class="stat-l">errors</span>', chosen)


def test_errors_of_several_drivers_without_a_class_say_to_choose_one(
    client_logged_in, demo
) -> None:
    expression = (
        "device.attributes['gpu.example.com'].model == 'x'"
        " || device.attributes['gpu.nvidia.com'].brand == 'x'"
    )
    html = page(client_logged_in, snapshot=demo[-1].pk, expression=expression)
    said = text(section(html, "Choose the claim's device class"))
    assert "gpu.example.com" in said and "gpu.nvidia.com" in said


def test_a_misspelt_domain_does_not_say_to_choose_a_class(client_logged_in, demo) -> None:
    expression = "device.attributes['gpu.nvidia.co'].productName == 'x'"
    html = page(client_logged_in, snapshot=demo[-1].pk, expression=expression)
    assert "Choose the claim's device class" not in html


def test_a_clause_after_a_false_one_is_not_an_error(client_logged_in, demo) -> None:
    expression = (
        "device.driver == 'gpu.nvidia.com'"
        " && device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
    )
    html = page(client_logged_in, snapshot=demo[-1].pk, expression=expression)
    misses = section(html, "Nearest misses")
    example = misses[misses.index("gpu-example-worker-1") :]
    example = example[: example.index("</tr>")]
    assert "badge-bad" not in example and "no such key" not in example
    assert re.search(r"badge-muted\">false</span> <code class=\"clause\">device.driver ==", example)
    assert re.search(
        r'badge-muted">not evaluated</span> <code class="clause">device.attributes', example
    )


def test_every_attribute_of_a_row_is_reachable(client_logged_in, demo) -> None:
    snapshot = demo[-1].pk
    html = page(client_logged_in, snapshot=snapshot, expression="device.driver == 'gpu.nvidia.com'")
    row = section(html, "Matching devices")
    row = row[row.index("<tbody>") :]
    row = row[: row.index("</tr>")]
    # four key attributes, then the rest behind "+N more"
    assert len(re.findall(r'<span class="attr">', row.split("<details")[0].split("</td>")[3])) == 4
    more = re.search(r"<summary>\+(\d+) more</summary>(.*?)</details>", row, re.S)
    assert more is not None
    assert "<dt>resource.kubernetes.io/pciBusID</dt>" in more[2]
    assert "<dt>uuid</dt>" in more[2] and "<dt>memory</dt>" in more[2]
    names = re.findall(r"<dt>", more[2])
    assert int(more[1]) == len(names) - 4 - 1  # all of them, less those shown (one capacity)
    device = re.search(rf'href="(/snapshots/{snapshot}/devices/gpu.nvidia.com/[^"]+/)"', row)
    assert device is not None
    assert client_logged_in.get(device[1]).status_code == 200


def test_published_names_are_the_same_from_the_index() -> None:
    state = ClusterState.build(build(later=True), SnapshotMeta())
    index = matching.DeviceIndex.from_bytes(matching.DeviceIndex.of(state).to_bytes())
    published = matching.published_names(index)
    assert published == matching.published_names(state)
    assert "productName" in published.attributes["gpu.nvidia.com"]
    assert "numaNode" in published.attributes["resource.kubernetes.io"]
    assert published.capacity["gpu.example.com"] == {"memory"}
