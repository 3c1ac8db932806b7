"""Kubernetes' ``library.CIDR`` (``cidr``, ``isCIDR`` and the methods of ``net.CIDR``:
``k8s.io/apiserver/pkg/cel/library/cidr.go`` at v0.36.2).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from dradash.dra.cel import types as t
from dradash.dra.cel.functions import BOOL, INT, STR, declare, m, o
from dradash.dra.cel.library.ip import parse_ip
from dradash.dra.cel.library.stdlib import to_string
from dradash.dra.cel.values import CelEvalError, Opaque


def _parse_cidr(s: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        addr, _, bits = s.partition("/")
        if not bits or not bits.isdigit() or (len(bits) > 1 and bits[0] == "0"):
            raise ValueError("invalid prefix")
        parsed = parse_ip(addr)
        net = ipaddress.ip_network(f"{parsed}/{bits}", strict=False)
        return net
    except (ValueError, CelEvalError) as exc:
        raise CelEvalError(
            f"network address parse error during conversion from string: {exc}"
        ) from None


def _cidr(s: str) -> Opaque:
    net = _parse_cidr(s)
    addr = parse_ip(s.partition("/")[0])
    return Opaque("cidr", (addr, net.prefixlen), f"{addr}/{net.prefixlen}")


def _is_cidr(s: str) -> bool:
    try:
        _parse_cidr(s)
    except CelEvalError:
        return False
    return True


def _cidr_network(c: Opaque) -> Any:
    addr, bits = c.value
    return ipaddress.ip_network(f"{addr}/{bits}", strict=False)


def _contains_ip(c: Opaque, other: Any) -> bool:
    addr = parse_ip(other) if isinstance(other, str) else other.value
    return addr.version == c.value[0].version and addr in _cidr_network(c)


def _contains_cidr(c: Opaque, other: Any) -> bool:
    o2 = _cidr(other) if isinstance(other, str) else other
    net, sub = _cidr_network(c), _cidr_network(o2)
    return sub.version == net.version and sub.subnet_of(net)  # type: ignore[arg-type]


def _masked(c: Opaque) -> Opaque:
    net = _cidr_network(c)
    return Opaque("cidr", (net.network_address, net.prefixlen), str(net))


def register() -> None:
    ip, cidr = t.IP, t.CIDR
    declare("cidr", o("string_to_cidr", [STR], cidr, _cidr))
    declare(
        "containsIP",
        m("cidr_contains_ip_string", [cidr, STR], BOOL, _contains_ip),
        m("cidr_contains_ip_ip", [cidr, ip], BOOL, _contains_ip),
    )
    declare(
        "containsCIDR",
        m("cidr_contains_cidr_string", [cidr, STR], BOOL, _contains_cidr),
        m("cidr_contains_cidr", [cidr, cidr], BOOL, _contains_cidr),
    )
    declare("ip", m("cidr_ip", [cidr], ip, lambda c: Opaque("ip", c.value[0], str(c.value[0]))))
    declare("prefixLength", m("cidr_prefix_length", [cidr], INT, lambda c: c.value[1]))
    declare("masked", m("cidr_masked", [cidr], cidr, _masked))
    declare("isCIDR", o("is_cidr", [STR], BOOL, _is_cidr))
    declare("string", o("cidr_to_string", [cidr], STR, to_string))
