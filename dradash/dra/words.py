"""Counts and lists of names, as the sentences dradash writes need them."""

from __future__ import annotations

from collections.abc import Iterable


def plural(n: int, word: str, plural_form: str = "") -> str:
    """``1 claim``, ``3 claims`` (``plural_form`` when adding "s" is wrong)."""
    return f"{n} {word}" if n == 1 else f"{n} {plural_form or word + 's'}"


def listing(names: Iterable[str], limit: int) -> str:
    """Names joined as "a, b and c"; past ``limit`` of them, as "a, b, c and 3 more"."""
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    if len(items) <= limit:
        return ", ".join(items[:-1]) + " and " + items[-1]
    return ", ".join(items[:limit]) + f" and {len(items) - limit} more"


def kind_plural(kind: str) -> str:
    """A Kubernetes kind in the plural: ``Pods``, ``DeviceClasses``, ``PriorityClasses``."""
    return kind + ("es" if kind.endswith(("s", "x", "ch", "sh")) else "s")


def kinds_plural(kinds: Iterable[str]) -> str:
    """Kinds in the plural, listed: ``Pods and ResourceClaims``."""
    names = [kind_plural(k) for k in kinds]
    return listing(names, len(names))
