"""Kubernetes' ``library.IP`` (``ip``, ``isIP``, ``ip.isCanonical`` and the methods of
``net.IP``: ``k8s.io/apiserver/pkg/cel/library/ip.go`` at v0.36.2). Go's netip refuses IPv6
zones and IPv4-mapped IPv6 addresses here; so does this.
"""

from __future__ import annotations

import ipaddress

from dradash.dra.cel import types as t
from dradash.dra.cel.functions import BOOL, INT, STR, declare, m, o
from dradash.dra.cel.library.stdlib import to_string
from dradash.dra.cel.values import CelEvalError, Opaque


def parse_ip(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    try:
        if "%" in s:
            raise ValueError("IPv6 zones are not allowed")
        addr = ipaddress.ip_address(s)
    except ValueError as exc:
        raise CelEvalError(
            f'IP Address "{s}" parse error during conversion from string: {exc}'
        ) from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CelEvalError(
            f'IP Address "{s}" parse error during conversion from string: '
            "IPv4-mapped IPv6 addresses are not allowed"
        )
    return addr


def _ip(s: str) -> Opaque:
    addr = parse_ip(s)
    return Opaque("ip", addr, str(addr))


def _is_ip(s: str) -> bool:
    try:
        parse_ip(s)
    except CelEvalError:
        return False
    return True


def _ip_is_canonical(s: str) -> bool:
    return str(parse_ip(s)) == s


def register() -> None:
    ip = t.IP
    declare("ip", o("string_to_ip", [STR], ip, _ip))
    declare("family", m("ip_family", [ip], INT, lambda x: x.value.version))
    declare("ip.isCanonical", o("ip_is_canonical", [STR], BOOL, _ip_is_canonical))
    for name, oid, test in (
        ("isUnspecified", "ip_is_unspecified", lambda a: a.is_unspecified),
        ("isLoopback", "ip_is_loopback", lambda a: a.is_loopback),
        ("isLinkLocalMulticast", "ip_is_link_local_multicast",
         lambda a: a in ipaddress.ip_network("224.0.0.0/24" if a.version == 4 else "ff02::/16")),
        ("isLinkLocalUnicast", "ip_is_link_local_unicast", lambda a: a.is_link_local),
        ("isGlobalUnicast", "ip_is_global_unicast",
         lambda a: not (a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local
                        or (a.version == 4 and a == ipaddress.ip_address("255.255.255.255")))),
    ):  # fmt: skip
        declare(name, m(oid, [ip], BOOL, lambda x, f=test: f(x.value)))
    declare("isIP", o("is_ip", [STR], BOOL, _is_ip))
    declare("string", o("ip_to_string", [ip], STR, to_string))
