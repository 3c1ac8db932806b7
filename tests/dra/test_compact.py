"""Compact parsed objects (issue 28): equal strings and flat dicts become one object, and the
data read stays the same."""

from __future__ import annotations

import copy

import orjson

from dradash.dra.compact import MAX_DEPTH, Compactor
from dradash.dra.state import ClusterState
from tests.dra.builders import device, node, resource_slice


def test_equal_strings_and_flat_dicts_become_one_object_and_read_the_same() -> None:
    texts = [
        b'{"kind":"Pod","status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}',
        b'{"kind":"Pod","status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}',
    ]
    compact = Compactor()
    first, second = (compact(orjson.loads(t)) for t in texts)
    assert first == second == orjson.loads(texts[0])
    assert first["kind"] is second["kind"]
    assert first["status"]["phase"] is second["status"]["phase"]
    assert first["status"]["conditions"][0] is second["status"]["conditions"][0]
    # Dicts holding containers are not shared: only flat ones are.
    assert first["status"] is not second["status"]


def test_values_equal_in_python_but_not_in_json_stay_apart() -> None:
    compact = Compactor()
    values = [compact({"v": v}) for v in (True, 1, 1.0, "1", None, False, 0)]
    assert [type(v["v"]) for v in values] == [bool, int, float, str, type(None), bool, int]
    assert len({id(v) for v in values}) == len(values)


def test_a_deeply_nested_object_is_left_as_it_is_below_the_depth_limit() -> None:
    deep: dict = {"leaf": "x"}
    for _ in range(5 * MAX_DEPTH):
        deep = {"next": deep}
    obj = {"kind": "ConfigMap", "data": deep}
    before = copy.deepcopy(obj)
    assert Compactor()(obj) == before  # no RecursionError, nothing changed


def test_devices_of_a_built_state_share_their_attribute_values() -> None:
    objects = [
        node("n1"),
        resource_slice(
            "s1",
            node_name="n1",
            pool="n1",
            devices=[
                device(f"gpu-{i}", attributes={"model": {"string": "H100"}}) for i in range(3)
            ],
        ),
    ]
    state = ClusterState.build(orjson.loads(orjson.dumps(objects)))
    models = [d.attributes["model"] for d in state.devices.values()]
    assert len(models) == 3 and models[0] == {"string": "H100"}
    assert all(m is models[0] for m in models)
