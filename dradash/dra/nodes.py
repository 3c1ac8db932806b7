"""Node selectors (core/v1 NodeSelector) as the scheduler evaluates them."""

from __future__ import annotations

import re
from typing import Any

from dradash.dra.fields import mapping, mappings, strings, text


def node_selector_matches(selector: Any, name: str, labels: dict[str, str]) -> bool:
    """True when any term matches (terms are ORed; expressions within a term are ANDed).

    A selector with no terms matches nothing, as in Kubernetes.
    """
    return any(
        _term_matches(t, name, labels) for t in mappings(mapping(selector).get("nodeSelectorTerms"))
    )


def _term_matches(term: dict[str, Any], name: str, labels: dict[str, str]) -> bool:
    expressions = mappings(term.get("matchExpressions"))
    fields = mappings(term.get("matchFields"))
    if not expressions and not fields:
        return False  # an empty term matches no objects
    for req in expressions:
        if not requirement_matches(req, labels):
            return False
    for req in fields:
        if text(req.get("key")) != "metadata.name":
            return False
        if not requirement_matches(req, {"metadata.name": name}):
            return False
    return True


def requirement_matches(req: dict[str, Any], labels: dict[str, str]) -> bool:
    key = text(req.get("key"))
    op = text(req.get("operator"))
    values = strings(req.get("values"))
    present = key in labels
    value = labels.get(key, "")
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(values) == 1:
        have, want = _int64(value), _int64(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


_INTEGER = re.compile(r"[+-]?[0-9]+")


def _int64(value: str) -> int | None:
    """strconv.ParseInt(value, 10, 64): no underscores or spaces, within int64."""
    if not _INTEGER.fullmatch(value):
        return None
    number = int(value)
    return number if -(2**63) <= number < 2**63 else None


def selector_node_names(selector: Any) -> list[str] | None:
    """The node names a selector pins with `metadata.name In [...]`, or None if it does not."""
    names: list[str] = []
    for term in mappings(mapping(selector).get("nodeSelectorTerms")):
        pinned = [
            strings(f.get("values"))
            for f in mappings(term.get("matchFields"))
            if text(f.get("key")) == "metadata.name" and text(f.get("operator")) == "In"
        ]
        if not pinned or mappings(term.get("matchExpressions")):
            return None
        names.extend(pinned[0])
    return names or None
