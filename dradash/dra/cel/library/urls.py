"""Kubernetes' ``library.URLs`` (``url``, ``isURL`` and the methods of ``kubernetes.URL``:
``k8s.io/apiserver/pkg/cel/library/urls.go`` at v0.36.2).
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from dradash.dra.cel import types as t
from dradash.dra.cel.functions import BOOL, STR, Impl, declare, m, o
from dradash.dra.cel.values import CelEvalError, Opaque


def _url(s: str) -> Opaque:
    parsed = _parse_url(s)
    if parsed is None:
        raise CelEvalError(f"URL parse error during conversion from string: parse {s!r}: invalid")
    return Opaque("url", s, s)


def _parse_url(s: str) -> urllib.parse.SplitResult | None:
    if not s or (not s.startswith("/") and ":" not in s):
        return None
    if any(c in s for c in " \t\n") or False:
        return None
    try:
        parts = urllib.parse.urlsplit(s)
    except ValueError:
        return None
    if not parts.scheme and not s.startswith("/"):
        return None
    return parts


def _url_part(part: str) -> Impl:
    def get(u: Opaque) -> Any:
        p = urllib.parse.urlsplit(u.value)
        host = p.netloc.rpartition("@")[2]
        if part == "getScheme":
            return p.scheme
        if part == "getHost":
            return host
        if part == "getHostname":
            h = host
            if h.startswith("["):
                return h[1 : h.find("]")]
            return h.rsplit(":", 1)[0] if ":" in h else h
        if part == "getPort":
            h = host
            if h.startswith("["):
                rest = h[h.find("]") + 1 :]
                return rest[1:] if rest.startswith(":") else ""
            return h.rsplit(":", 1)[1] if ":" in h else ""
        if part == "getEscapedPath":
            return p.path
        query: dict[str, list[str]] = {}
        for k, v in urllib.parse.parse_qsl(p.query, keep_blank_values=True):
            query.setdefault(k, []).append(v)
        return query

    return get


def _is_url(s: str) -> bool:
    return _parse_url(s) is not None


def register() -> None:
    url = t.URL
    declare("url", o("string_to_url", [STR], url, _url))
    for part, oid in (
        ("getScheme", "url_get_scheme"),
        ("getHost", "url_get_host"),
        ("getHostname", "url_get_hostname"),
        ("getPort", "url_get_port"),
        ("getEscapedPath", "url_get_escaped_path"),
    ):
        declare(part, m(oid, [url], STR, _url_part(part)))
    declare(
        "getQuery",
        m("url_get_query", [url], t.map_of(STR, t.list_of(STR)), _url_part("getQuery")),
    )
    declare("isURL", o("is_url_string", [STR], BOOL, _is_url))
