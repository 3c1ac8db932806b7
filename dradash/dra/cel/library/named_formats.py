"""Kubernetes' ``library.Format`` (``format.named``, ``format.dns1123Label()`` … and
``validate``: ``k8s.io/apiserver/pkg/cel/library/format.go`` at v0.36.2), with the patterns of
the apimachinery validators it calls. Not ``string.format``, which is format.py.
"""

from __future__ import annotations

from dradash.dra.cel import types as t
from dradash.dra.cel.functions import STR, declare, m, o
from dradash.dra.cel.library.regex import regex
from dradash.dra.cel.values import NONE, Opaque, Optional

NAMED_FORMATS = {
    "dns1123Label": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?",
    "dns1123Subdomain": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
    "dns1035Label": r"[a-z]([-a-z0-9]*[a-z0-9])?",
    "qualifiedName": r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
    "dns1123LabelPrefix": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?",
    "dns1123SubdomainPrefix": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
    "dns1035LabelPrefix": r"[a-z]([-a-z0-9]*[a-z0-9])?",
    "labelValue": r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
    "uri": r".+",
    "uuid": r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}",
    "byte": r"[A-Za-z0-9+/]*={0,2}",
    "date": r"\d{4}-\d{2}-\d{2}",
    "datetime": r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})",
}


def _validate(f: Opaque, s: str) -> Optional:
    pattern = NAMED_FORMATS.get(f.value, ".*")
    if regex(f"^(?:{pattern})$").search(s) is not None:  # RE2: linear, as Go's regexp
        return NONE
    return Optional([f"does not match the {f.text} format"])


def _format_named(name: str) -> Optional:
    return Optional(Opaque("format", name, name)) if name in NAMED_FORMATS else NONE


def register() -> None:
    fmt = t.FORMAT
    declare(
        "validate",
        m("format-validate", [fmt, STR], t.optional_of(t.list_of(STR)), _validate),
    )
    declare("format.named", o("format-named", [STR], t.optional_of(fmt), _format_named))
    for name in NAMED_FORMATS:
        declare(
            f"format.{name}",
            o(f"format.{name}", [], fmt, lambda n=name: Opaque("format", n, n)),
        )
