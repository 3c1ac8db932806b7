"""Node selectors as the scheduler evaluates them (core/v1 NodeSelector semantics)."""

from __future__ import annotations

from typing import Any

import pytest

from dradash.dra.nodes import node_selector_matches, requirement_matches, selector_node_names

LABELS = {"zone": "a", "gpu": "true", "generation": "9", "kubernetes.io/hostname": "node-1"}


def req(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def terms(*terms_: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms_)}


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        (req("zone", "In", "a", "b"), True),
        (req("zone", "In", "b", "c"), False),
        (req("missing", "In", "a"), False),
        (req("zone", "In"), False),
        (req("zone", "NotIn", "b"), True),
        (req("zone", "NotIn", "a", "b"), False),
        (req("missing", "NotIn", "a"), True),
        (req("gpu", "Exists"), True),
        (req("missing", "Exists"), False),
        (req("gpu", "DoesNotExist"), False),
        (req("missing", "DoesNotExist"), True),
        (req("generation", "Gt", "8"), True),
        (req("generation", "Gt", "9"), False),
        (req("generation", "Gt", "10"), False),
        (req("generation", "Lt", "10"), True),
        (req("generation", "Lt", "9"), False),
        (req("generation", "Lt", "-3"), False),
        (req("missing", "Gt", "1"), False),
        (req("missing", "Lt", "1"), False),
        (req("zone", "Gt", "1"), False),
        (req("generation", "Gt", "x"), False),
        (req("generation", "Gt", "1", "2"), False),
        (req("generation", "Gt"), False),
        (req("zone", "Equals", "a"), False),
        (req("zone", "in", "a"), False),
        (req("zone", "", "a"), False),
    ],
)
def test_requirement_matches_like_kubernetes(requirement: dict[str, Any], expected: bool) -> None:
    assert requirement_matches(requirement, LABELS) is expected


def test_gt_compares_numbers_not_strings() -> None:
    assert requirement_matches(req("generation", "Gt", "10"), {"generation": "100"})
    assert not requirement_matches(req("generation", "Lt", "10"), {"generation": "100"})


@pytest.mark.parametrize("value", ["1_000", "99999999999999999999"])
def test_gt_does_not_match_label_values_kubernetes_cannot_parse(value: str) -> None:
    assert not requirement_matches(req("generation", "Gt", "5"), {"generation": value})


@pytest.mark.parametrize(
    "requirement",
    [
        {},
        {"key": 1, "operator": "In", "values": ["a"]},
        {"key": "zone", "operator": ["In"], "values": ["a"]},
        {"key": "zone", "operator": "In", "values": "a"},
        {"key": "zone", "operator": "In", "values": [1, None]},
        {"key": "zone", "operator": "Gt", "values": [5]},
    ],
)
def test_malformed_requirements_match_nothing_and_never_raise(requirement: dict[str, Any]) -> None:
    assert requirement_matches(requirement, LABELS) is False


def test_expressions_within_a_term_are_anded() -> None:
    both = terms({"matchExpressions": [req("zone", "In", "a"), req("gpu", "Exists")]})
    one_fails = terms({"matchExpressions": [req("zone", "In", "a"), req("gpu", "DoesNotExist")]})

    assert node_selector_matches(both, "node-1", LABELS)
    assert not node_selector_matches(one_fails, "node-1", LABELS)


def test_terms_are_ored() -> None:
    selector = terms(
        {"matchExpressions": [req("zone", "In", "b")]},
        {"matchExpressions": [req("gpu", "Exists")]},
    )

    assert node_selector_matches(selector, "node-1", LABELS)
    assert not node_selector_matches(selector, "node-2", {"zone": "c"})


@pytest.mark.parametrize(
    "selector",
    [
        terms({}),
        terms({"matchExpressions": []}),
        terms({"matchExpressions": [], "matchFields": []}),
        terms(),
        {},
        None,
        "zone=a",
        {"nodeSelectorTerms": "zone=a"},
        {"nodeSelectorTerms": [None, "x"]},
    ],
)
def test_empty_terms_and_selectors_match_nothing(selector: Any) -> None:
    assert node_selector_matches(selector, "node-1", LABELS) is False


def test_an_empty_term_does_not_stop_another_term_from_matching() -> None:
    assert node_selector_matches(
        terms({}, {"matchExpressions": [req("zone", "In", "a")]}), "node-1", LABELS
    )


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (req("metadata.name", "In", "node-1"), True),
        (req("metadata.name", "In", "node-2", "node-1"), True),
        (req("metadata.name", "In", "node-2"), False),
        (req("metadata.name", "NotIn", "node-2"), True),
        (req("metadata.name", "NotIn", "node-1"), False),
        (req("metadata.uid", "In", "node-1"), False),
        (req("kubernetes.io/hostname", "In", "node-1"), False),
    ],
)
def test_match_fields_compare_the_node_name(field: dict[str, Any], expected: bool) -> None:
    # matchFields only knows metadata.name; node labels are not fields.
    assert node_selector_matches(terms({"matchFields": [field]}), "node-1", LABELS) is expected


def test_match_fields_and_expressions_in_one_term_are_anded() -> None:
    term = {
        "matchExpressions": [req("zone", "In", "a")],
        "matchFields": [req("metadata.name", "In", "node-1")],
    }

    assert node_selector_matches(terms(term), "node-1", LABELS)
    assert not node_selector_matches(terms(term), "node-2", LABELS)
    assert not node_selector_matches(terms(term), "node-1", {"zone": "b"})


def test_allocation_node_selector_as_the_scheduler_writes_it_pins_one_node() -> None:
    # status.allocation.nodeSelector of the install-use-dra tutorial claim
    selector = terms({"matchFields": [req("metadata.name", "In", "kind-worker")]})

    assert node_selector_matches(selector, "kind-worker", {})
    assert not node_selector_matches(selector, "kind-worker2", {})
    assert selector_node_names(selector) == ["kind-worker"]


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        (terms({"matchFields": [req("metadata.name", "In", "a", "b")]}), ["a", "b"]),
        (
            terms(
                {"matchFields": [req("metadata.name", "In", "a")]},
                {"matchFields": [req("metadata.name", "In", "b")]},
            ),
            ["a", "b"],
        ),
        (terms({"matchExpressions": [req("zone", "In", "a")]}), None),
        (
            terms(
                {
                    "matchFields": [req("metadata.name", "In", "a")],
                    "matchExpressions": [req("zone", "In", "a")],
                }
            ),
            None,
        ),
        (terms({"matchFields": [req("metadata.name", "NotIn", "a")]}), None),
        (terms(), None),
        (None, None),
    ],
)
def test_selector_node_names_lists_only_pinned_names(
    selector: Any, names: list[str] | None
) -> None:
    assert selector_node_names(selector) == names
