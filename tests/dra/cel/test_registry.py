"""The function registry (dradash.dra.cel.functions) and the libraries that declare into it.

Runtime dispatch depends on the order of a function's overloads (the first whose runtime type
guard accepts the arguments wins), and several functions gather overloads from more than one
library (``compareTo``: Quantity's then Semver's; ``ip``: IP's then CIDR's; ``string``: the
standard library's, then IP's and CIDR's). ``data/registry.json`` is the registry as it stood
before the libraries moved to modules of their own: function names and overload ids in
declaration order, a member overload's id after a dot.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

import pytest

from dradash.dra.cel import functions as fn
from dradash.dra.cel import library
from dradash.dra.cel.library import cost, format, memory, regex, stdlib

REGISTRY = Path(__file__).parent / "data" / "registry.json"
MODULES = sorted(m.name for m in pkgutil.iter_modules(library.__path__))


def test_the_libraries_declare_every_overload_in_the_apiservers_order() -> None:
    declared = {
        name: [("." if o.member else "") + o.id for o in func.overloads]
        for name, func in fn.ENV.items()
    }
    expected = json.loads(REGISTRY.read_text())
    assert list(declared) == list(expected)
    assert declared == expected


def test_every_overload_or_function_has_a_binding_where_one_can_be_called() -> None:
    # Declarations only: Authz's (no value of its types can exist in a selector), and the
    # functions the planner evaluates itself (logical operators, ==, [], or/orValue, ?.).
    planned = {
        "_?_:_", "_&&_", "_||_", "@not_strictly_false", "_==_", "_!=_", "_[_]", "_[?_]",
        "_?._", "or", "orValue", "@in",
    }  # fmt: skip
    authz = {o.id for name in fn.ENV for o in fn.ENV[name].overloads if "auth" in o.id}
    for name, func in fn.ENV.items():
        if func.singleton is not None or name in planned:
            continue
        unbound = [o.id for o in func.overloads if o.impl is None]
        assert all(
            oid in authz or oid.startswith(("pathcheck", "resourcecheck", "groupcheck", "decision"))
            for oid in unbound
        ), (name, unbound)


@pytest.mark.parametrize("module", [m for m in MODULES if m != "memory"])
def test_each_library_names_the_upstream_file_and_version_it_ports(module: str) -> None:
    doc = importlib.import_module(f"dradash.dra.cel.library.{module}").__doc__ or ""
    assert ".go``" in doc, module
    assert "v0.36.2" in doc, module


def test_the_registrys_former_names_are_the_libraries_objects() -> None:
    """The checker, the planner and the static cost estimator may reach them through
    ``functions``, as before the split."""
    assert fn.call_cost is cost.call_cost
    assert fn.result_size is cost.result_size
    assert fn.traversal_cost is cost.traversal_cost
    assert fn.growth is memory.growth
    assert fn.accumulator_growth is memory.accumulator_growth
    assert fn.regex_error is regex.regex_error
    assert fn.parse_format is format.parse_format
    assert fn.FormatError is format.FormatError
    assert fn._index is stdlib.index
    assert fn.to_timestamp is stdlib.to_timestamp
