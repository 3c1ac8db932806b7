"""Verdicts that lead to the fix (issue 27 item 3), on the demo cluster half an hour on: Pod
render/render-farm-6 waits for 2 GPUs held by 10 claims while 4 free ones sit in an incomplete
pool. The findings that explain it are attached to its verdict when the snapshot is analysed
(its page and API read them), the funnel groups the devices that dropped out, and every node
where the claim does not fit says why."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from dradash.analysis.models import PodVerdict

pytestmark = pytest.mark.django_db

POD = ("render", "render-farm-6-05b2e")
CLAIM = ("render", "render-farm-6-05b2e-gpus-9927f")


def test_the_diagnosis_api_leads_to_the_fix(api_client, demo) -> None:
    later = demo[-1].pk
    data = api_client.get(reverse("api-pod-diagnosis", args=[later, *POD])).json()
    assert (data["stage"], data["reason"]) == ("claim-unallocated", "devices-exhausted")
    # the findings about its Job and the pool it could use, though neither names the Pod
    codes = [f["code"] for f in data["findings"]]
    assert codes == ["parallelism-exceeds-capacity", "pool-incomplete"]
    # the holders counted, not one named; the incomplete pool that would serve
    summary = data["summary"]
    assert "(16 devices held by 10 claims: render/render-farm-0-d1ce0-gpus-29c90 (2), " in summary
    pool = "gpu.example.com/gpu-example-worker-3"
    assert f"4 more are free, enough for it, but in pool {pool}" in summary
    assert data["next_steps"][0].startswith(f"Complete pool {pool}: 4 free devices")
    claim = api_client.get(reverse("api-claim-diagnosis", args=[later, *CLAIM])).json()
    assert [f["code"] for f in claim["findings"]] == codes
    # the explain API gives each node's why
    explain = api_client.get(reverse("api-claim-explain", args=[later, *CLAIM])).json()
    assert all(n["why"] for n in explain["nodes"] if n["outcome"] == "nofit")


def test_the_page_shows_the_findings_groups_and_a_why_on_every_node(client_logged_in, demo):
    later = demo[-1].pk
    response = client_logged_in.get(reverse("pod-detail", args=[later, *POD]))
    assert response.status_code == 200
    html = response.content.decode().replace("<wbr>", "")
    verdict = html[html.index('class="verdict') : html.index("</section>")]
    findings = verdict[verdict.index("Findings about it") : verdict.index('class="funnel"')]
    assert "parallelism-exceeds-capacity" in findings and "pool-incomplete" in findings
    dropped = verdict[
        verdict.index('class="funnel-dropped') : verdict.index(
            "</ul>", 1 + verdict.index('class="funnel-dropped')
        )
    ]
    assert "held by 10 claims:" in dropped
    holder = reverse("claim-detail", args=[later, "gpu-test2", "single-gpu"])
    assert f'href="{holder}"' in dropped
    assert "which the allocator skips (pool incomplete: 1 of 2 slices)" in dropped
    table = verdict[verdict.index('class="funnel-nodes"') :]
    table = table[table.index("<tbody>") : table.index("</tbody>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    assert len(rows) == 6
    for row in rows:
        why = re.sub(r"<[^>]+>", "", re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[-1]).strip()
        assert why, row
    assert "no device of class gpu.example.com on this node" in table
    assert "0 free of 2 needed: 8 devices held by 6 claims:" in table


def test_a_verdict_stored_before_findings_were_attached_lists_those_naming_it(
    api_client, demo
) -> None:
    later = demo[-1].pk
    PodVerdict.objects.filter(snapshot_id=later, namespace="manual").update(findings=None)
    data = api_client.get(reverse("api-pod-diagnosis", args=[later, "manual", "pinned-job"])).json()
    assert [f["code"] for f in data["findings"]] == ["nodename-bypass"]


def test_the_pool_that_would_serve_is_a_link_in_the_verdict(client_logged_in, demo) -> None:
    """render-farm-6's summary and first step name the incomplete pool that would serve it:
    each mention links to the devices list filtered to that pool."""
    later = demo[-1].pk
    html = client_logged_in.get(
        reverse("pod-detail", args=[later, "render", "render-farm-6-05b2e"])
    ).content.decode()
    url = reverse("device-list", args=[later])
    link = f'<a href="{url}?driver=gpu.example.com&amp;pool=gpu-example-worker-3">'
    assert html.count(link) >= 2, "the summary and the first next step link the pool"
