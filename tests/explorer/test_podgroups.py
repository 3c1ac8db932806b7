"""Gangs in the explorer (KEP-4671 PodGroups, KEP-5729 claims for a PodGroup): the PodGroup
page and list, their APIs, and the links to them from a member's Pod page, a group's claim,
the Pods list, the overview and share links.

The cluster is tests/gang_cluster.py's: gang ml/train needs 4 members, 3 fit together and
train-3 breaks it; their shared claim train-shared-xyz12 was made for the group; solo is in no
group.
"""

from __future__ import annotations

import html as htmllib
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from dradash.sharing.pages import page_title
from dradash.sharing.services import share_link_create, shared_view_allowed
from dradash.snapshots.services import bundle_import
from tests import gang_cluster
from tests.gang_cluster import BREAKING, GROUP, MEMBERS, NS, SHARED
from tests.sharing.conftest import page_urls, share_url
from tests.stored import import_analysed

pytestmark = pytest.mark.django_db


@pytest.fixture
def gang(db: None) -> Any:
    return import_analysed(files=[("gang.json", gang_cluster.bundle())])


def get(client: Client, name: str, *args: object, **params: str) -> str:
    response = client.get(reverse(name, args=args), params)
    assert response.status_code == 200, response.content[:500]
    return htmllib.unescape(response.content.decode().replace("<wbr>", ""))


def words(html: str) -> str:
    """What a person reads: the page without its tags, spaces collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def section(html: str, start: str, end: str = "</section>") -> str:
    return html.split(start, 1)[1].split(end, 1)[0]


# --- the PodGroup page -----------------------------------------------------------------------


def test_the_podgroup_page_shows_how_many_fit_and_the_member_that_breaks_the_gang(
    client_logged_in, gang
) -> None:
    html = get(client_logged_in, "podgroup-detail", gang.pk, NS, GROUP)
    text = words(html)
    assert f"PodGroup {NS}/ {GROUP}" in text
    assert "does-not-fit" in text
    assert "Gang ml/train needs all 4 member Pods placed together, but only 3 fit" in text
    assert "Minimum 4 member Pods placed together" in text
    assert "Fit 3 of 4 placed or placeable together" in text
    assert f"Breaks it Pod {BREAKING} , the first member" in text
    # The summary names the breaking member, linked to its page.
    breaking_url = reverse("pod-detail", args=[gang.pk, NS, BREAKING])
    summary = section(html, "verdict-summary", "</p>")
    assert f'<a href="{breaking_url}">{BREAKING}</a>' in summary
    # and the claims it names, the breaking member's own among them
    claim_url = reverse("claim-detail", args=[gang.pk, NS, f"{BREAKING}-gpu"])
    assert f'<a href="{claim_url}">ml/{BREAKING}-gpu</a>' in summary
    assert "kubectl describe podgroup -n ml train" in text


def test_the_members_are_listed_in_the_schedulers_order_each_linked_with_its_place(
    client_logged_in, gang
) -> None:
    html = get(client_logged_in, "podgroup-detail", gang.pk, NS, GROUP)
    table = section(html, 'class="table gang-members"', "</table>")
    rows = re.findall(r"<tr(?: class=\"(\S+)\")?>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    assert [re.search(r">(train-\d)</a>", r).group(1) for _, r in rows] == MEMBERS
    for (css, row), name in zip(rows, MEMBERS, strict=True):
        assert reverse("pod-detail", args=[gang.pk, NS, name]) in row
        assert "claim-unallocated" in row and "gang-does-not-fit" in row and "Pending" in row
        if name == BREAKING:
            assert css == "row-breaking"
            assert "does-not-fit" in words(row) and "breaks the gang" in row
        else:
            assert not css
            assert ">fits<" in row


def test_the_podgroup_page_shows_its_claims_workload_conditions_and_events(
    client_logged_in, gang
) -> None:
    html = get(client_logged_in, "podgroup-detail", gang.pk, NS, GROUP)
    claims = section(html, "Claims of the group")
    assert f'href="{reverse("claim-detail", args=[gang.pk, NS, SHARED])}"' in claims
    assert "template shared-tmpl" in words(claims) and "allocated" in claims
    assert "Workload train , template workers" in words(section(html, "<h2>Workload</h2>"))
    assert "not in snapshot" not in section(html, "<h2>Workload</h2>")
    conditions = words(section(html, "<h2>Conditions</h2>"))
    assert "PodGroupInitiallyScheduled False Unschedulable pod group is unschedulable" in conditions
    assert "FailedScheduling pod group is unschedulable" in conditions


def test_the_podgroup_page_renders_as_a_fragment_for_htmx(client_logged_in, gang) -> None:
    url = reverse("podgroup-detail", args=[gang.pk, NS, GROUP])
    response = client_logged_in.get(url, headers={"HX-Request": "true"})
    assert response.status_code == 200
    fragment = response.content.decode()
    assert "<html" not in fragment
    assert "gang-members" in fragment


@pytest.mark.parametrize(
    "args",
    [(NS, "no-such-group"), ("other", GROUP)],
)
def test_an_unknown_podgroup_is_a_404(client_logged_in, api_client, gang, args) -> None:
    assert (
        client_logged_in.get(reverse("podgroup-detail", args=[gang.pk, *args])).status_code == 404
    )
    response = api_client.get(reverse("api-podgroup", args=[gang.pk, *args]))
    assert response.status_code == 404


def test_an_unknown_snapshot_is_a_404(client_logged_in, api_client, gang) -> None:
    missing = gang.pk + 1000
    assert (
        client_logged_in.get(reverse("podgroup-detail", args=[missing, NS, GROUP])).status_code
        == 404
    )
    assert client_logged_in.get(reverse("podgroup-list", args=[missing])).status_code == 404
    assert api_client.get(reverse("api-podgroup", args=[missing, NS, GROUP])).status_code == 404


def test_the_podgroup_pages_need_a_login(client, gang) -> None:
    for url in (
        reverse("podgroup-detail", args=[gang.pk, NS, GROUP]),
        reverse("podgroup-list", args=[gang.pk]),
    ):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    for name, args in (("api-podgroup", [gang.pk, NS, GROUP]), ("api-podgroups", [gang.pk])):
        assert client.get(reverse(name, args=args)).status_code in (401, 403)


def test_the_podgroup_pages_wait_for_the_analysis(client_logged_in, api_client) -> None:
    snapshot = bundle_import(files=[("gang.json", gang_cluster.bundle())])  # not analysed yet
    for url in (
        reverse("podgroup-detail", args=[snapshot.pk, NS, GROUP]),
        reverse("podgroup-list", args=[snapshot.pk]),
    ):
        response = client_logged_in.get(url)
        assert response.status_code == 200
        assert "Analysing this snapshot" in response.content.decode()
    response = api_client.get(reverse("api-podgroup", args=[snapshot.pk, NS, GROUP]))
    assert response.status_code == 503
    assert response.json()["analysis"] == "pending"


def test_cluster_strings_on_the_podgroup_page_are_escaped(client_logged_in) -> None:
    objects = gang_cluster.objects()
    group = next(o for o in objects if o["kind"] == "PodGroup")
    group["status"]["conditions"][0]["message"] = "<script>alert(1)</script>"
    snapshot = import_analysed(files=[("gang.json", gang_cluster.bundle(objects))])
    response = client_logged_in.get(reverse("podgroup-detail", args=[snapshot.pk, NS, GROUP]))
    body = response.content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


# --- the API ---------------------------------------------------------------------------------


def test_the_podgroup_api_answers_with_the_designs_fields(api_client, gang) -> None:
    response = api_client.get(reverse("api-podgroup", args=[gang.pk, NS, GROUP]))
    assert response.status_code == 200
    data = response.json()
    assert data["min_count"] == 4
    assert data["fit"] == 3
    assert data["breaking_member"] == BREAKING
    assert data["summary"].startswith("Gang ml/train needs all 4 member Pods placed together")
    assert [{k: m[k] for k in ("pod", "stage", "reason")} for m in data["members"]] == [
        {"pod": name, "stage": "claim-unallocated", "reason": "gang-does-not-fit"}
        for name in MEMBERS
    ]
    assert [m["placement"] for m in data["members"]] == ["fits", "fits", "fits", "does-not-fit"]
    assert all(m["would_go_to"] for m in data["members"][:3])
    assert data["members"][3]["would_go_to"] is None
    assert data["state"] == "does-not-fit"
    assert data["workload"] == {"name": "train", "template": "workers", "exists": True}
    assert data["claims"][0]["claim"] == SHARED


def test_the_podgroups_list_api_filters_and_pages(api_client, gang) -> None:
    url = reverse("api-podgroups", args=[gang.pk])
    data = api_client.get(url).json()
    assert data["count"] == 1
    assert data["results"] == [
        {
            "namespace": NS,
            "name": GROUP,
            "state": "does-not-fit",
            "min_count": 4,
            "members": 4,
            "fit": 3,
            "summary": data["results"][0]["summary"],
        }
    ]
    assert api_client.get(url, {"state": "does-not-fit"}).json()["count"] == 1
    assert api_client.get(url, {"state": "scheduled"}).json()["count"] == 0
    assert api_client.get(url, {"namespace": "other"}).json()["count"] == 0
    assert api_client.get(url, {"state": "nonsense"}).status_code == 400


def test_the_pods_api_names_each_pods_group_and_filters_by_it(api_client, gang) -> None:
    url = reverse("api-pods", args=[gang.pk])
    everyone = {p["name"]: p["podgroup"] for p in api_client.get(url).json()["results"]}
    assert everyone == {**dict.fromkeys(MEMBERS, GROUP), "solo": ""}
    members = api_client.get(url, {"podgroup": GROUP}).json()
    assert sorted(p["name"] for p in members["results"]) == MEMBERS
    assert api_client.get(url, {"podgroup": "tra"}).json()["count"] == 0  # an exact name


# --- links to the PodGroup -------------------------------------------------------------------


def test_a_members_pod_page_shows_its_gangs_verdict_beside_its_own(client_logged_in, gang) -> None:
    html = get(client_logged_in, "pod-detail", gang.pk, NS, "train-1")
    group_url = reverse("podgroup-detail", args=[gang.pk, NS, GROUP])
    panel = section(html, 'id="gang"')
    text = words(panel)
    assert f'href="{group_url}"' in panel
    assert "does-not-fit" in text
    assert "3 of 4 members needed fit together" in text
    assert f"the first that does not fit is Pod {BREAKING}" in text
    # Its own verdict, as it would be without the gang: its claim would allocate now.
    assert "Judged alone: claim-unallocated" in text
    assert "ml/train-1-gpu would allocate now on node node-1" in text
    # The verdict names the gang, linked to the PodGroup's page.
    summary = section(html, 'class="verdict-summary"', "</p>")
    assert "Gang ml/train needs all 4 member Pods placed together" in words(summary)
    assert f'<a href="{group_url}">ml/train</a>' in summary
    assert "gang-summary" not in panel  # the gang's summary is the verdict's: said once


def test_the_breaking_members_panel_says_it_is_the_one(client_logged_in, gang) -> None:
    text = words(section(get(client_logged_in, "pod-detail", gang.pk, NS, BREAKING), 'id="gang"'))
    assert "the first that does not fit is this Pod" in text


def test_a_members_object_chain_names_its_podgroup_and_the_groups_claim(
    client_logged_in, gang
) -> None:
    html = get(client_logged_in, "pod-detail", gang.pk, NS, "train-0")
    group_url = reverse("podgroup-detail", args=[gang.pk, NS, GROUP])
    step = section(html, 'id="podgroup"', "</li>")
    assert f'href="{group_url}"' in step
    assert "PodGroup ml/ train" in words(step)
    assert "PodGroup's claim" in html


def test_a_pod_of_no_group_has_no_gang_panel(client_logged_in, gang) -> None:
    html = get(client_logged_in, "pod-detail", gang.pk, NS, "solo")
    assert 'id="gang"' not in html
    assert 'id="podgroup"' not in html
    assert "podgroup-detail" not in html


def test_the_groups_claim_page_links_to_the_podgroup(client_logged_in, gang) -> None:
    html = get(client_logged_in, "claim-detail", gang.pk, NS, SHARED)
    group_url = reverse("podgroup-detail", args=[gang.pk, NS, GROUP])
    assert f'href="{group_url}"' in section(html, 'id="podgroup"', "</li>")  # generated for it
    reserved = html.split("<h4>Reserved for</h4>", 1)[1]
    assert f'PodGroup <a href="{group_url}">{GROUP}</a>' in reserved
    assert "not in snapshot" not in reserved.split("</ul>", 1)[0]


def test_a_members_own_claim_page_does_not_claim_a_group(client_logged_in, gang) -> None:
    html = get(client_logged_in, "claim-detail", gang.pk, NS, "train-0-gpu")
    assert 'id="podgroup"' not in html


def test_the_pods_list_filters_by_podgroup_and_shows_each_pods_group(
    client_logged_in, gang
) -> None:
    html = get(client_logged_in, "pod-list", gang.pk)
    assert "5 of 5 Pods using DRA" in html
    assert words(html).count(f"gang {GROUP}") == 4
    filtered = get(client_logged_in, "pod-list", gang.pk, podgroup=GROUP)
    assert "4 of 5 Pods using DRA" in filtered
    assert "solo" not in section(filtered, 'id="results"')
    response = client_logged_in.get(
        reverse("pod-list", args=[gang.pk]), {"podgroup": GROUP}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert "<html" not in response.content.decode()
    assert "4 of 5 Pods using DRA" in response.content.decode()


def test_the_overview_links_to_the_podgroups(client_logged_in, gang) -> None:
    html = get(client_logged_in, "snapshot-detail", gang.pk)
    assert f'href="{reverse("podgroup-list", args=[gang.pk])}"' in html
    assert "1 PodGroup, 1 stuck" in words(html)


def test_an_overview_without_podgroups_does_not_mention_them(client_logged_in) -> None:
    items = [o for o in gang_cluster.objects() if o["kind"] not in ("PodGroup", "Workload")]
    items = [o for o in items if not o["metadata"]["name"].startswith("train")]
    snapshot = import_analysed(files=[("solo.json", gang_cluster.bundle(items))])
    html = get(client_logged_in, "snapshot-detail", snapshot.pk)
    assert reverse("podgroup-list", args=[snapshot.pk]) not in html


# --- the PodGroups list ----------------------------------------------------------------------


def test_the_podgroups_list_filters_by_namespace_and_state(client_logged_in, gang) -> None:
    html = get(client_logged_in, "podgroup-list", gang.pk)
    results = section(html, 'id="results"')
    assert "1 of 1 PodGroup" in results
    assert f'href="{reverse("podgroup-detail", args=[gang.pk, NS, GROUP])}"' in results
    assert "3 of 4" in words(results)
    assert "1 of 1" in get(client_logged_in, "podgroup-list", gang.pk, state="does-not-fit")
    assert "No PodGroup matches" in get(client_logged_in, "podgroup-list", gang.pk, state="waiting")
    assert "No PodGroup matches" in get(client_logged_in, "podgroup-list", gang.pk, namespace="x")
    bad = client_logged_in.get(reverse("podgroup-list", args=[gang.pk]), {"state": "nonsense"})
    assert bad.status_code == 400


def test_the_podgroups_list_filters_as_an_htmx_fragment(client_logged_in, gang) -> None:
    response = client_logged_in.get(
        reverse("podgroup-list", args=[gang.pk]),
        {"state": "does-not-fit", "sort": "-fit"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    fragment = response.content.decode()
    assert "<html" not in fragment
    assert fragment.lstrip().startswith('<section id="results"')
    assert "1 of 1 PodGroup" in fragment


# --- share links -----------------------------------------------------------------------------


def test_a_share_link_opens_the_podgroup_pages_read_only(client, gang, user) -> None:
    link, token = share_link_create(snapshot=gang, user=user, expires_in=timedelta(days=1))
    for path in (
        reverse("podgroup-detail", args=[gang.pk, NS, GROUP]),
        reverse("podgroup-list", args=[gang.pk]),
        reverse("pod-detail", args=[gang.pk, NS, "train-1"]),
    ):
        response = client.get(share_url(token, path))
        assert response.status_code == 200, path
        html = response.content.decode()
        assert f"Shared read-only view of snapshot #{gang.pk}" in html
        for tag, attr, url in page_urls(html):
            if url.startswith("/static/") or url.startswith("?"):
                continue
            assert url.startswith(f"/share/{token}/"), (path, tag, attr, url)
            rest = "/" + url.split("?")[0].removeprefix(f"/share/{token}/")
            assert rest == "/" or shared_view_allowed(
                path_info=rest, method="GET", snapshot_id=gang.pk
            ), (path, url)


def test_a_share_link_does_not_open_another_snapshots_podgroup(client, gang, user) -> None:
    other = import_analysed(files=[("gang.json", gang_cluster.bundle())])
    link, token = share_link_create(snapshot=other, user=user, expires_in=timedelta(days=1))
    response = client.get(share_url(token, reverse("podgroup-detail", args=[gang.pk, NS, GROUP])))
    assert response.status_code == 404
    assert "train-3" not in response.content.decode()


def test_the_share_links_page_names_a_podgroup_page(gang) -> None:
    assert page_title(reverse("podgroup-detail", args=[gang.pk, NS, GROUP])) == "PodGroup ml/train"
    assert page_title(reverse("podgroup-list", args=[gang.pk]) + "?state=waiting") == (
        "the PodGroups list (filtered)"
    )
