"""Running deep pure-Python work at the bottom of a call stack.

CPython 3.11 keeps frames in chunks of a per-thread data stack and frees a chunk as soon as the
frame that needed it returns. When a hot call of a deep recursion (the CEL evaluator's closures,
the allocator's search) happens to sit on a chunk's edge, every call allocates and frees a chunk:
the same evaluation then runs up to ten times slower, depending only on how deep the caller's
stack was (a request's middleware, a test's fixtures). A thread of its own starts with an empty
data stack, so the work always runs at the same, shallow, depth.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def on_fresh_stack(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a new thread, waited for: its result, or its exception."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, fn(*args, **kwargs)))
        except BaseException as exc:  # handed to the caller, who re-raises it
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="dradash-fresh-stack", daemon=True)
    thread.start()
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
