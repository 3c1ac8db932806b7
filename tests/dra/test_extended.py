"""Extended resources backed by DRA: upstream's rules, ported with upstream's own tests.

* ``Test_createRequestsAndMappings_requests`` and ``…_mappings`` of kube-scheduler's
  ``dynamicresources/extendeddynamicresources_test.go`` (1.37), with the Pods that
  ``st.MakePod()`` builds there (``Res`` adds container ``con<N>``, ``InitReq`` ``init-con<N>``,
  ``SidecarReq`` a restartable ``sidecar-con<N>``);
* the winner rules of ``extendedresourcecache`` (``testExtendedResourceCache``,
  ``testCollisionLoserKeepsImplicitMapping``);
* filterExtendedResources on one node, and ``resourcehelper.PodRequests``.
"""

from __future__ import annotations

from typing import Any

import pytest

from dradash.dra import extended
from dradash.dra.objects import DeviceClass, Node, Pod

ERN = "example.com/gpu"  # upstream's extendedResourceName in these tests
IMPLICIT = extended.CLASS_PREFIX


class MakePod:
    """st.MakePod(), as far as these tests use it."""

    def __init__(self) -> None:
        self.spec: dict[str, list[dict[str, Any]]] = {"containers": [], "initContainers": []}

    def res(self, requests: dict[str, str]) -> MakePod:
        n = len(self.spec["containers"])
        self.spec["containers"].append({"name": f"con{n}", "resources": {"requests": requests}})
        return self

    def init_req(self, requests: dict[str, str]) -> MakePod:
        n = len(self.spec["initContainers"])
        self.spec["initContainers"].append(
            {"name": f"init-con{n}", "resources": {"requests": requests}}
        )
        return self

    def sidecar_req(self, requests: dict[str, str]) -> MakePod:
        n = len(self.spec["initContainers"])
        self.spec["initContainers"].append(
            {
                "name": f"sidecar-con{n}",
                "restartPolicy": "Always",
                "resources": {"requests": requests},
            }
        )
        return self

    def obj(self) -> Pod:
        meta = {"name": "pod", "namespace": "default", "uid": "uid"}
        return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": self.spec})


def cls(name: str, ern: str | None = None, created: str = "") -> DeviceClass:
    meta: dict[str, Any] = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    spec = {"extendedResourceName": ern} if ern else {}
    return DeviceClass({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                        "metadata": meta, "spec": spec})  # fmt: skip


def pod1() -> Pod:
    return MakePod().res({ERN: "1", ERN + "1": "2"}).obj()


def pod2() -> Pod:
    return MakePod().res({ERN: "1"}).res({ERN + "1": "2"}).obj()


def pod_init() -> Pod:
    return MakePod().res({ERN: "1"}).init_req({ERN + "init": "2"}).obj()


def pod_init2() -> Pod:
    return (
        MakePod().res({ERN: "1"}).init_req({ERN + "init": "1"}).init_req({ERN + "init": "2"}).obj()
    )


def pod_init3() -> Pod:
    return (
        MakePod()
        .res({ERN: "1"})
        .init_req({ERN + "init": "1"})
        .sidecar_req({ERN + "init": "1"})
        .init_req({ERN + "init": "2"})
        .obj()
    )


def pod1_init_implicit() -> Pod:
    return MakePod().init_req({ERN + "init": "1", IMPLICIT + "classInit": "2"}).obj()


def pod_init_implicit() -> Pod:
    return (
        MakePod()
        .res({ERN: "1"})
        .init_req({ERN + "init": "1"})
        .init_req({IMPLICIT + "classInit": "2"})
        .obj()
    )


RES = {ERN: 1}
RES2 = {ERN: 1, ERN + "1": 2}
RES_INIT = {ERN: 1, ERN + "init": 2}
RES_INIT_IMPLICIT = {ERN: 1, ERN + "init": 2, IMPLICIT + "classInit": 2}
DEV_MAP = {ERN: cls("class")}
DEV_MAP2 = {ERN: cls("class"), ERN + "1": cls("class1")}
DEV_MAP_INIT = {ERN: cls("class"), ERN + "init": cls("classInit"),
                IMPLICIT + "classInit": cls("classInit")}  # fmt: skip


def req(name: str, device_class: str, count: int) -> tuple[str, str, int]:
    return (name, device_class, count)


@pytest.mark.parametrize(
    ("pod", "resources", "mapping", "want"),
    [
        pytest.param(pod1, {}, {}, [], id="nil"),
        pytest.param(pod1, RES, DEV_MAP, [req("container-0-request-0", "class", 1)],
                     id="one resource match"),
        pytest.param(pod1, RES2, DEV_MAP, [req("container-0-request-0", "class", 1)],
                     id="one resource match, one resource not match"),
        pytest.param(pod1, RES2, DEV_MAP2, [req("container-0-request-0", "class", 1),
                                            req("container-0-request-1", "class1", 2)],
                     id="two resources match"),
        pytest.param(pod2, RES2, DEV_MAP2, [req("container-0-request-0", "class", 1),
                                            req("container-1-request-0", "class1", 2)],
                     id="two containers match"),
        pytest.param(pod_init, RES_INIT, DEV_MAP_INIT,
                     [req("container-0-request-0", "classInit", 2),
                      req("container-1-request-0", "class", 1)],
                     id="one init container, one regular container"),
        pytest.param(pod_init2, RES_INIT, DEV_MAP_INIT,
                     [req("container-1-request-0", "classInit", 2),
                      req("container-2-request-0", "class", 1)],
                     id="two init containers, one regular container"),
        pytest.param(pod_init3, RES_INIT, DEV_MAP_INIT,
                     [req("container-1-request-0", "classInit", 1),
                      req("container-2-request-0", "classInit", 2),
                      req("container-3-request-0", "class", 1)],
                     id="three init containers, one sidecar, one regular container"),
    ],
)  # fmt: skip
def test_create_requests_and_mappings_requests(pod, resources, mapping, want) -> None:
    got, _ = extended.requests_and_mappings(pod(), resources, mapping)
    assert [
        (r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]) for r in got
    ] == want
    assert all(r["exactly"]["allocationMode"] == "ExactCount" for r in got)


def cer(container: str, resource: str, request: str) -> tuple[str, str, str]:
    return (request, container, resource)


@pytest.mark.parametrize(
    ("pod", "resources", "mapping", "want"),
    [
        pytest.param(pod1, RES2, DEV_MAP2,
                     [cer("con0", ERN, "container-0-request-0"),
                      cer("con0", ERN + "1", "container-0-request-1")],
                     id="one container, two requests"),
        pytest.param(pod1_init_implicit, RES_INIT_IMPLICIT, DEV_MAP_INIT,
                     [cer("init-con0", IMPLICIT + "classInit", "container-0-request-0"),
                      cer("init-con0", ERN + "init", "container-0-request-1")],
                     id="one container, one explicit and one implicit request"),
        pytest.param(pod2, RES2, DEV_MAP2,
                     [cer("con0", ERN, "container-0-request-0"),
                      cer("con1", ERN + "1", "container-1-request-0")],
                     id="two containers, two requests"),
        pytest.param(pod_init, RES_INIT, DEV_MAP_INIT,
                     [cer("init-con0", ERN + "init", "container-0-request-0"),
                      cer("con0", ERN, "container-1-request-0")],
                     id="one init container, one regular container, one request"),
        pytest.param(pod_init2, RES_INIT, DEV_MAP_INIT,
                     [cer("init-con0", ERN + "init", "container-1-request-0"),
                      cer("init-con1", ERN + "init", "container-1-request-0"),
                      cer("con0", ERN, "container-2-request-0")],
                     id="three containers (two are init container), two requests"),
        pytest.param(pod_init_implicit, RES_INIT_IMPLICIT, DEV_MAP_INIT,
                     [cer("init-con0", ERN + "init", "container-0-request-0"),
                      cer("init-con1", IMPLICIT + "classInit", "container-1-request-0"),
                      cer("con0", ERN, "container-2-request-0")],
                     id="three containers (two are init container), both explicit and implicit"),
        pytest.param(pod_init3, RES_INIT, DEV_MAP_INIT,
                     [cer("init-con0", ERN + "init", "container-1-request-0"),
                      cer("sidecar-con1", ERN + "init", "container-1-request-0"),
                      cer("init-con2", ERN + "init", "container-2-request-0"),
                      cer("con0", ERN, "container-3-request-0")],
                     id="four containers (two are init container, one sidecar), three requests"),
    ],
)  # fmt: skip
def test_create_requests_and_mappings_mappings(pod, resources, mapping, want) -> None:
    _, got = extended.requests_and_mappings(pod(), resources, mapping)
    assert sorted((m["requestName"], m["containerName"], m["resourceName"]) for m in got) == want


# --- which class serves a name (extendedresourcecache) ----------------------------------------

NOW = "2026-01-01T12:00:00Z"


def test_the_newest_class_wins_an_explicit_name_and_a_tie_goes_to_the_lower_name() -> None:
    gpu = cls("gpu-class", ERN, NOW)
    fpga = cls("fpga-class")
    older = cls("gpu-class-3", ERN, "2025-12-31T12:00:00Z")
    newer = cls("gpu-class-4", ERN, "2026-01-01T13:00:00Z")
    tie = cls("gpu-class-0", ERN, "2026-01-01T13:00:00Z")

    def winner(*classes: DeviceClass, name: str = ERN) -> str | None:
        found = extended.class_mapping(classes).get(name)
        return found.name if found else None

    assert winner(gpu, fpga) == "gpu-class"
    assert winner(gpu, fpga, name=IMPLICIT + "fpga-class") == "fpga-class"
    assert winner(gpu, fpga, name=IMPLICIT + "gpu-class") == "gpu-class"  # both names
    assert winner(gpu, fpga, older) == "gpu-class"  # older: no change
    assert winner(gpu, fpga, older, newer) == "gpu-class-4"
    assert winner(gpu, fpga, older, newer, tie) == "gpu-class-0"
    # gpu-class-0 renamed its explicit name: example.com/gpu goes back to gpu-class-4
    renamed = cls("gpu-class-0", "test.com/gpu", "2026-01-01T13:00:00Z")
    assert winner(gpu, fpga, older, newer, renamed) == "gpu-class-4"
    assert winner(gpu, fpga, older, newer, renamed, name="test.com/gpu") == "gpu-class-0"
    # deleted: gone with its implicit name
    assert winner(gpu, name=IMPLICIT + "gpu-class-0") is None
    # the loser keeps its implicit name
    loser = cls("class-loser", ERN, "1970-01-01T00:01:40Z")
    won = cls("class-winner", ERN, "1970-01-01T00:03:20Z")
    assert winner(loser, won) == "class-winner"
    assert winner(loser, won, name=IMPLICIT + "class-loser") == "class-loser"
    assert [c.name for c in extended.explicit_candidates([loser, won])[ERN]] == [
        "class-winner",
        "class-loser",
    ]


@pytest.mark.parametrize(
    ("name", "dra"),
    [
        ("example.com/gpu", True),
        ("nvidia.com/gpu", True),
        ("deviceclass.resource.kubernetes.io/gpu.example.com", True),
        ("cpu", False),
        ("memory", False),
        ("hugepages-2Mi", False),
        ("kubernetes.io/something", False),
        ("example.kubernetes.io/x", False),
        ("requests.example.com/gpu", False),
        ("example.com/", False),
        ("Example_com/gpu", False),
    ],
)
def test_is_dra_extended_resource_name(name: str, dra: bool) -> None:
    assert extended.is_dra_extended_resource_name(name) is dra


def node(allocatable: dict[str, str]) -> Node:
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                 "status": {"allocatable": {"cpu": "8", **allocatable}}})  # fmt: skip


def test_per_node_a_device_plugin_serves_what_the_node_advertises() -> None:
    """filterExtendedResources: DRA where the node advertises none (or 0), the device plugin
    where it advertises some, "cannot fit resource" where neither serves it."""
    pod = MakePod().res({ERN: "2", "example.com/nic": "1", "cpu": "1"}).obj()
    resources = extended.pod_resources(pod, {ERN: cls("gpu")})
    assert resources.backed
    assert extended.PodResources([], {"example.com/nic": 1}, {ERN: cls("gpu")}).backed is False

    split = resources.split(node({"example.com/nic": "4"}))
    assert (split.dra, split.plugin, split.unfit) == ({ERN: 2}, {"example.com/nic": 1}, "")
    split = resources.split(node({ERN: "8", "example.com/nic": "4"}))
    assert (split.dra, split.plugin, split.unfit) == ({}, {ERN: 2, "example.com/nic": 1}, "")
    split = resources.split(node({ERN: "0", "example.com/nic": "4"}))
    assert split.dra == {ERN: 2}
    split = resources.split(node({}))
    assert (split.dra, split.unfit) == ({ERN: 2}, "example.com/nic")


def test_pod_requests_take_the_largest_init_container_and_add_sidecars() -> None:
    """resourcehelper.PodRequests: regular containers and sidecars add up; an init container
    runs alone (with the sidecars before it), so the Pod needs the larger of the two."""
    pod = (
        MakePod()
        .res({ERN: "1"})
        .res({ERN: "1"})
        .init_req({ERN: "5"})
        .sidecar_req({ERN: "1"})
        .init_req({ERN: "3"})
        .obj()
    )
    assert extended.pod_requests(pod) == {ERN: 5}  # max(1+1+1, 5, 3+1)
    assert extended.pod_requests(MakePod().res({ERN: "2"}).sidecar_req({ERN: "1"}).obj()) == {
        ERN: 3
    }


def test_limits_alone_ask_for_the_same_and_fractions_are_not_counted() -> None:
    c = {"name": "c", "resources": {"limits": {ERN: "2", "cpu": "500m"}}}
    assert extended.container_requests(c) == {ERN: 2}
    assert extended.container_requests({"resources": {"limits": {ERN: "500m"}}}) == {}


@pytest.mark.parametrize(
    ("minor", "explicit", "on"),
    [(None, False, True), (37, False, True), (36, False, True), (35, False, False),
     (35, True, True), (34, True, True), (33, True, False)],
)  # fmt: skip
def test_the_feature_gate_follows_the_release(minor, explicit, on) -> None:
    classes = [cls("gpu", ERN if explicit else None)]
    assert extended.enabled(minor, classes, []) is on


def test_a_pods_page_on_1_35_keeps_the_proof_that_the_feature_is_on() -> None:
    """The stored chain of a Pod asking for a class's implicit name holds, on 1.34 and 1.35,
    another class whose extendedResourceName proves the feature on: a state of the chain's
    objects alone (what the Pod's page reads) shows the same extended resources."""
    from dradash.dra.chain import pod_chain, pod_chain_keys
    from dradash.dra.state import ClusterState, SnapshotMeta

    def raw(c: DeviceClass) -> dict[str, Any]:
        return c.raw

    pod = MakePod().res({IMPLICIT + "plain": "1"}).obj().raw
    objects = [raw(cls("proof", ERN)), raw(cls("plain")), raw(cls("other")), pod]
    meta = SnapshotMeta(server_version="v1.35.2")
    state = ClusterState.build(objects, meta)
    full = state.pods[("default", "pod")]

    keys = pod_chain_keys(state, full)
    names = {(k[0], k[2]) for k in keys}
    kept = [o for o in objects if (o["kind"], o["metadata"]["name"]) in names]
    alone = ClusterState.build(kept, meta).pods[("default", "pod")]

    assert full.uses_dra and alone.uses_dra
    assert [c["metadata"]["name"] for c in kept if c["kind"] == "DeviceClass"] == ["proof", "plain"]
    assert (
        pod_chain(ClusterState.build(kept, meta), alone)["extended_resources"]
        == (pod_chain(state, full)["extended_resources"])
    )


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("example.com/gpu", True),
        ("nvidia.com/gpu", True),
        ("gpu", False),  # no domain: a native resource name
        ("deviceclass.resource.kubernetes.io/gpu", False),  # the implicit form is reserved
        ("example.com/", False),
    ],
)
def test_the_api_server_refuses_a_class_whose_extended_resource_name_is_not_one(
    name: str, valid: bool
) -> None:
    """validateDeviceClassSpec: IsExtendedResourceName, or "must be a valid extended resource
    name"."""
    from dradash.dra.validation import problems

    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"},
           "spec": {"extendedResourceName": name}}  # fmt: skip
    found = [p for p in problems(obj) if p[0] == "spec.extendedResourceName"]
    assert (found == []) is valid
    if not valid:
        assert found[0][1].endswith("must be a valid extended resource name")
