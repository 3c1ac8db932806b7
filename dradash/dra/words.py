"""Counts and lists of names, as the sentences dradash writes need them."""

from __future__ import annotations

import re
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


# The checks of the allocator's funnel (dradash.dra.allocator STEPS), as a person reads them:
# "fails at: taints tolerated".
FUNNEL_CHECKS = {
    "class": "class exists",
    "driver": "of the class's driver",
    "class-selectors": "pass the class's selectors",
    "request-selectors": "pass the request's selectors",
    "pools": "in complete, current pools",
    "nodes": "on a node the Pod may use",
    "free": "not allocated to others",
    "taints": "taints tolerated",
    "constraints": "constraints hold",
    "count": "enough on one node",
}


def funnel_check(step: str) -> str:
    return FUNNEL_CHECKS.get(step, step)


def funnel_count_label(step: str, remaining: int) -> str:
    """What a count of the funnel counts: "41 devices of current pools", "21 of the class's
    driver", …; the first step's count is every device, unless the class does not exist."""
    if step == "class":
        return "devices of current pools" if remaining else "the class does not exist"
    return funnel_check(step)


_ON_DEVICE = re.compile(r" on device [^\s:]+:")


def same_error(a: str | None, b: str | None) -> bool:
    """Whether two allocator errors are the same but for the device they name ("selector #0
    on device gpu.example.com/pool/gpu-1: CEL runtime error: …"): one error, many devices."""
    if not a or not b:
        return False
    return without_device(a) == without_device(b)


def without_device(error: str) -> str:
    """An allocator error without the device it names, the same for every device it hits."""
    return _ON_DEVICE.sub(":", error)
