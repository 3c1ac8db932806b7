"""Kubernetes' ``library.SemverLib`` at version 1 (``semver``, ``isSemver``, with
``normalize``, and the methods of ``kubernetes.Semver``:
``k8s.io/apiserver/pkg/cel/library/semverlib.go`` at v0.36.2). The value type is
``dradash.dra.cel.semver``'s.
"""

from __future__ import annotations

from dradash.dra.cel.functions import BOOL, INT, STR, VER, declare, m, o
from dradash.dra.cel.semver import Semver, SemverError
from dradash.dra.cel.values import CelEvalError


def _semver(s: str, normalize: bool = False) -> Semver:
    try:
        return Semver.parse(s, normalize=normalize)
    except SemverError as exc:
        raise CelEvalError(str(exc)) from None


def _is_semver(s: str, normalize: bool = False) -> bool:
    try:
        Semver.parse(s, normalize=normalize)
    except SemverError:
        return False
    return True


def register() -> None:
    semver = VER
    declare("semver", o("string_to_semver", [STR], semver, _semver),
            o("string_bool_to_semver", [STR, BOOL], semver, _semver))  # fmt: skip
    declare("isSemver", o("is_semver_string", [STR], BOOL, _is_semver),
            o("is_semver_string_bool", [STR, BOOL], BOOL, _is_semver))  # fmt: skip
    declare("isGreaterThan", m("semver_is_greater_than", [semver, semver], BOOL,
                               lambda a, b: a.compare(b) == 1))  # fmt: skip
    declare("isLessThan", m("semver_is_less_than", [semver, semver], BOOL,
                            lambda a, b: a.compare(b) == -1))  # fmt: skip
    declare("compareTo", m("semver_compare_to", [semver, semver], INT,
                           lambda a, b: a.compare(b)))  # fmt: skip
    declare("major", m("semver_major", [semver], INT, lambda v: v.major()))
    declare("minor", m("semver_minor", [semver], INT, lambda v: v.minor()))
    declare("patch", m("semver_patch", [semver], INT, lambda v: v.patch()))
