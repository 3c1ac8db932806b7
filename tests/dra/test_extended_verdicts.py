"""What the pure core says about a Pod whose devices come as extended resources backed by DRA
(issue 23), in the words every surface shows: its verdict names no claim that does not exist,
its summary reads as a sentence, a Pod that does not use DRA is told why (or that it is
unknown), and capacity counts it as waiting. The cluster is tests/extended_cluster.py's."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dradash.dra import analysis, capacity, diagnosis, why
from dradash.dra.state import ClusterState
from tests import extended_cluster as lab

NS = lab.NS


def state_of(objects: list[dict[str, Any]], version: str = "") -> ClusterState:
    return why.load(
        [("bundle.json", lab.bundle(objects))], max_bytes=10**8, version=version or None
    )


def later(change: Any = None) -> list[dict[str, Any]]:
    objects = copy.deepcopy(lab.later())
    if change is not None:
        change(objects)
    return objects


def the(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    return next(
        o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    )


def free_every_gpu(objects: list[dict[str, Any]]) -> None:
    objects[:] = [o for o in objects if o["metadata"]["name"] not in ("hog-gpus", "hog-0")]


def bad_selector(objects: list[dict[str, Any]]) -> None:
    the(objects, "DeviceClass")["spec"]["selectors"] = [
        {"cel": {"expression": "device.attributes['gpu.example.com'].nope == 1"}}
    ]


def incomplete_pool(objects: list[dict[str, Any]]) -> None:
    the(objects, "ResourceSlice")["spec"]["pool"]["resourceSliceCount"] = 2


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (None, "devices-exhausted"),
        (bad_selector, "selector-error"),
        (incomplete_pool, "pool-incomplete"),
        (free_every_gpu, "snapshot-incomplete"),  # it would fit now; why it waits needs events
    ],
)
def test_the_verdict_names_only_objects_that_exist(change: Any, reason: str) -> None:
    state = state_of(later(change))
    verdict = why.verdict(state, "pod", NS, "pod1")
    assert (verdict.diagnosis.stage, verdict.diagnosis.reason) == ("claim-unallocated", reason)
    named = {(e.kind, e.name) for e in verdict.diagnosis.evidence if e.kind != "Snapshot"}
    assert named == {("Pod", "pod1")}, named  # not ResourceClaim "<extended-resources>"
    assert "<extended-resources>" not in verdict.diagnosis.summary
    assert verdict.diagnosis.summary[0].isupper(), verdict.diagnosis.summary
    if reason != "snapshot-incomplete":  # the funnel's evidence is the Pod's
        fields = [e.field for e in verdict.diagnosis.evidence]
        assert "extended resources: request container-0-request-0" in fields


def test_a_summary_that_starts_with_a_claims_name_keeps_its_case() -> None:
    """Only the words dradash writes are capitalised: a claim name starts a sentence as is."""

    def named_claim(objects: list[dict[str, Any]]) -> None:
        free_every_gpu(objects)
        pod1 = the(objects, "Pod", "pod1")
        pod1["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
        pod1["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "gpu-claim"}]
        claim = copy.deepcopy(the(objects, "ResourceClaim", lab.GENERATED))
        claim["metadata"] = {"name": "gpu-claim", "namespace": NS, "uid": "uid-gpu-claim"}
        claim["status"] = {}
        objects.append(claim)

    verdict = why.verdict(state_of(later(named_claim)), "pod", NS, "pod1")
    assert verdict.diagnosis.summary.startswith(f"{NS}/gpu-claim would allocate now")


def test_why_a_pod_does_not_use_dra_or_that_it_is_unknown() -> None:
    state = state_of(later())
    web = state.pods[(NS, "web")]
    assert diagnosis.not_using_dra(state, web) == (
        "it has no spec.resourceClaims and asks for no extended resource",
        False,
    )

    def other_name(objects: list[dict[str, Any]]) -> None:
        the(objects, "DeviceClass")["spec"]["extendedResourceName"] = "example.com/other"

    unmapped = state_of(later(other_name))
    text, unknown = diagnosis.not_using_dra(unmapped, unmapped.pods[(NS, "pod1")])
    assert not unknown and "no DeviceClass maps the extended resources it asks for" in text

    old = state_of(later(), version="v1.33")
    text, unknown = diagnosis.not_using_dra(old, old.pods[(NS, "pod1")])
    assert not unknown
    assert "DeviceClass gpu.example.com maps, but Kubernetes v1.33 does not serve" in text

    no_classes = state_of([o for o in later() if o["kind"] != "DeviceClass"])
    pod1 = no_classes.pods[(NS, "pod1")]
    assert not pod1.uses_dra
    text, unknown = diagnosis.not_using_dra(no_classes, pod1)
    assert unknown and text.startswith("whether it uses DRA is unknown")


def test_capacity_counts_the_pods_extended_resources_as_a_waiting_request() -> None:
    state = state_of(later())
    (gpus,) = capacity.class_capacity(state)
    (waiting,) = gpus.waiting.values()
    assert (waiting.count, waiting.requests, waiting.servable) == (1, 1, 0)
    assert waiting.claims == [] and waiting.pods == [(NS, "pod1")]
    # A bound Pod's claim is no longer waiting: with pod1 gone, nothing is.
    state = state_of([o for o in later() if o["metadata"]["name"] != "pod1"])
    assert capacity.class_capacity(state)[0].waiting == {}


def test_the_analysis_lists_no_claim_for_the_pending_pod_and_its_extended_resources() -> None:
    result = analysis.analyse(state_of(later()))
    records = {r.pod.name: r for r in result.pods}
    assert (records["pod1"].claim_names, records["pod1"].unresolved) == ([], 0)
    assert records["pod1"].extended == {lab.RESOURCE: 1}
    assert records["pod0"].claim_names == [lab.GENERATED]
    assert records["web"].extended == {} and records["web"].diagnosis is None


def test_a_pods_chain_reads_what_its_page_needs_to_see_it_as_a_dra_pod() -> None:
    """On 1.35 the feature is on only where some class declares an explicit name: a Pod asking
    for a class by its implicit name keeps its extended resources in a state built from its
    chain alone (what its page reads), because that chain holds such a class too."""
    from dradash.dra.chain import pod_chain, pod_chain_keys

    def implicit_only(objects: list[dict[str, Any]]) -> None:
        del the(objects, "DeviceClass")["spec"]["extendedResourceName"]
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": "other.example.com"},
                "spec": {"extendedResourceName": "example.com/other"},
            }
        )

    objects = later(implicit_only)
    full = state_of(objects, version="v1.35")
    pod0 = full.pods[(NS, "pod0")]
    assert pod0.uses_dra and pod0.extended is not None
    keys = set(pod_chain_keys(full, pod0))
    assert ("DeviceClass", "", "other.example.com") in keys
    chain_only = ClusterState.build(
        [o for o in objects if (o["kind"], o["metadata"].get("namespace", ""),
                                o["metadata"]["name"]) in keys],
        full.meta,
    )  # fmt: skip
    part = chain_only.pods[(NS, "pod0")]
    assert (
        pod_chain(chain_only, part)["extended_resources"]
        == pod_chain(full, pod0)["extended_resources"]
    )
