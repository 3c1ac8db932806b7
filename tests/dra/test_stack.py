from __future__ import annotations

import threading

import pytest

from dradash.dra.stack import on_fresh_stack


def test_it_returns_what_the_function_returns_from_another_thread() -> None:
    caller = threading.get_ident()
    ident, value = on_fresh_stack(lambda x, *, y: (threading.get_ident(), x + y), 1, y=2)
    assert value == 3 and ident != caller


def test_it_raises_what_the_function_raises() -> None:
    def fail() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        on_fresh_stack(fail)
