"""The API server's static cost check of a new DRA selector.

``k8s.io/dynamic-resource-allocation/cel`` ``CompileCELExpression`` (compile.go, 1.37 development
code at 3d036712930c) estimates a compiled selector's worst-case cost with
``env.EstimateCost(ast, &draCostEstimator{&library.CostEstimator{SizeEstimator: sizeEstimator}})``
and the apiserver's validation refuses a new selector whose estimate exceeds
``resourceapi.CELSelectorExpressionMaxCost`` (1,000,000): ``field.Forbidden(…, "too complex,
exceeds cost limit")``. The scheduler compiles without estimating.

Ported here:

* ``library.CostEstimator.EstimateCallCost`` (``k8s.io/apiserver/pkg/cel/library/cost.go``):
  Kubernetes' libraries by function name (lists, regex, URLs, strings ext, quantity, semver,
  IP/CIDR, format, authz), on top of cel-go's estimate (``cel.estimate``);
* DRA's ``draCostEstimator`` (``includes``: as costly as the longest attribute list) and
  ``sizeEstimator``: the maximum sizes reachable from ``device`` by field path, from the newest
  device declaration whatever the environment (``DeviceMaxDomainLength`` 63 for domains,
  ``DeviceMaxIDLength`` 32 for names, ``DriverNameMaxLength`` 63, 32 entries per map, attribute
  values ``max(DeviceAttributeMaxValueLength, ResourceSliceMaxAttributeValuesPerDevice)`` = 64);
* the base environment's cost options: ``PresenceTestHasCost(false)`` and the overload estimators
  of ``ext.Lists`` v3 and ``ext.Sets``.

1.36 (v0.36.2) estimates the same: its size estimator used the 1.34 device declaration with the
gate's attribute type, whose sizes are the same (64 either way), cel-go v0.26's cost.go is
v0.27's, and only the types the checker gives attributes (``any`` without the list gate, ``dyn``
with it) differ between environments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dradash.dra.cel.checker import Checked
from dradash.dra.cel.estimate import (
    EXT_OVERLOAD_ESTIMATORS,
    ONE,
    REGEX_STRING_LENGTH_COST_FACTOR,
    STRING_TRAVERSAL_COST_FACTOR,
    U64,
    UNKNOWN,
    ZERO,
    AstNode,
    CallEstimate,
    CostEstimator,
    Range,
    add,
    by_factor,
    estimate,
    fixed,
    multiply,
    union,
)
from dradash.dra.cel.syntax import Literal
from dradash.dra.cel.values import UInt

COST_LIMIT = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost
TOO_COMPLEX = "too complex, exceeds cost limit"

# k8s.io/apiserver/pkg/cel/limits.go and format.go
MAX_FORMAT_SIZE = 64
MAX_NAME_FORMAT_REGEX_SIZE = 128
# library/cost.go: a selector requirement is at least 2 characters; each costs a list and a struct
_SELECTOR_LENGTH_TO_REQUIREMENT_COUNT = 0.5
_COST_PER_REQUIREMENT = float(10 + 40)  # ListCreateBaseCost + StructCreateBaseCost

# resource.k8s.io/v1 limits
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
DRIVER_NAME_MAX_LENGTH = 63
MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64
MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48

_AUTHZ = {
    f"kubernetes.authorization.{n}"
    for n in ("Authorizer", "PathCheck", "GroupCheck", "ResourceCheck", "Decision")
}
_O1_STRUCT_EQUALITY = _AUTHZ | {"kubernetes.Quantity", "kubernetes.Semver"}


def _go_uint64(x: float) -> int:
    """Go's uint64(float64) on amd64, for the one place library/cost.go converts a float that
    may be 2^64 or more (the replacement count of ``replace``)."""
    if x < math.ldexp(1.0, 63):
        return int(x)
    if x < math.ldexp(1.0, 64):
        return int(x)
    return 1 << 63


def _selector_cost(length: Range) -> Range:
    parse = by_factor(length, STRING_TRAVERSAL_COST_FACTOR)
    requirements = by_factor(length, _SELECTOR_LENGTH_TO_REQUIREMENT_COUNT)
    return add(add(fixed(10), parse), by_factor(requirements, _COST_PER_REQUIREMENT))


class KubeCostEstimator:
    """``library.CostEstimator`` as a checker.CostEstimator (EstimateCallCost, EstimateSize)."""

    def __init__(self, size_estimator: CostEstimator | None = None) -> None:
        self.size_estimator = size_estimator

    def estimate_size(self, node: AstNode) -> Range | None:
        if self.size_estimator is not None:
            return self.size_estimator.estimate_size(node)
        return None

    def size_estimate(self, node: AstNode) -> Range:
        if node.computed_size is not None:
            return node.computed_size
        size = self.estimate_size(node)
        return UNKNOWN if size is None else size

    def list_element_node(self, node: AstNode) -> AstNode | None:
        """An element of a list, with the list's path and ``@items`` when there is one."""
        if not node.type.params:
            return None
        path = node.path
        return AstNode(None if path is None else [*path, "@items"], node.type.params[0], None, None)

    def estimate_call_cost(  # noqa: C901 - one switch, as upstream
        self, function: str, overload: str, target: AstNode | None, args: list[AstNode]
    ) -> CallEstimate | None:
        # WARNING upstream: any change here changes which expressions the API server accepts.
        sz = self.size_estimate
        if function == "check":  # an authorization check: two per expression at most
            return CallEstimate(fixed(350000))
        if function in (
            "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name",
            "allowed", "reason", "error", "errored",
        ):  # fmt: skip
            return CallEstimate(ONE)
        if function in ("fieldSelector", "labelSelector"):
            if len(args) == 1:
                return CallEstimate(_selector_cost(sz(args[0])))
        elif function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
            if target is not None:
                element = self.list_element_node(target)
                if element is not None:
                    # 1 per element, plus a traversal of each for strings and bytes
                    el_cost = ONE
                    if element.type.kind in ("string", "bytes"):
                        el_cost = add(el_cost, by_factor(sz(element), 0.1))
                    return CallEstimate(multiply(sz(target), el_cost))
                # indexOf and lastIndexOf on a string
                return CallEstimate(by_factor(sz(target), STRING_TRAVERSAL_COST_FACTOR))
        elif function in ("url", "jsonpatch.escapeKey"):
            if len(args) == 1:
                size = sz(args[0])
                return CallEstimate(by_factor(size, STRING_TRAVERSAL_COST_FACTOR), size)
        elif function in ("lowerAscii", "upperAscii", "substring", "trim"):
            if target is not None:
                size = sz(target)
                return CallEstimate(by_factor(size, STRING_TRAVERSAL_COST_FACTOR), size)
        elif function == "replace":
            if target is not None and len(args) >= 2:
                return self._replace(sz(target), sz(args[0]), sz(args[1]))
        elif function == "split":
            if target is not None:
                size = sz(target)
                # worst case: an empty separator, one element per character
                most = size[1]
                if len(args) > 1:
                    limit = args[1].expr
                    if isinstance(limit, Literal) and _is_int(limit.value):
                        most = limit.value & U64
                cost = by_factor(size, 2 * STRING_TRAVERSAL_COST_FACTOR)
                return CallEstimate(cost, (0, most))
        elif function == "join":
            if target is not None:
                result = ZERO
                list_size = sz(target)
                element = self.list_element_node(target)
                if element is not None:
                    result = multiply(list_size, sz(element))
                if args:
                    separators = (max(list_size[0] - 1, 0), max(list_size[1] - 1, 0))
                    result = add(result, multiply(sz(args[0]), separators))
                return CallEstimate(by_factor(result, STRING_TRAVERSAL_COST_FACTOR), result)
        elif function in ("find", "findAll"):
            if target is not None and args:
                size = sz(target)
                # one more than the length: an empty string still costs the regex
                str_cost = by_factor(add(size, ONE), STRING_TRAVERSAL_COST_FACTOR)
                # a guess: each expression of the regex is at least 4 characters long
                regex_cost = by_factor(sz(args[0]), REGEX_STRING_LENGTH_COST_FACTOR)
                return CallEstimate(multiply(str_cost, regex_cost), (0, size[1]))
        elif function in ("cidr", "isIP", "isCIDR"):
            if args:
                return CallEstimate(by_factor(sz(args[0]), STRING_TRAVERSAL_COST_FACTOR))
        elif function == "ip":
            if overload == "cidr_ip":  # the IP of a CIDR: a field access
                return CallEstimate(ONE)
            if args:
                return CallEstimate(by_factor(sz(args[0]), STRING_TRAVERSAL_COST_FACTOR))
        elif function == "ip.isCanonical":
            if args:  # a parse, then a comparison with the original
                return CallEstimate(by_factor(sz(args[0]), 2 * STRING_TRAVERSAL_COST_FACTOR))
        elif function in (
            "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
            "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
        ):  # fmt: skip
            return CallEstimate(ONE)
        elif function in ("containsIP", "containsCIDR"):
            if args:
                # comparing two byte lists of 4 (IPv4) to 16 (IPv6) bytes
                ip_size = (4, 16)
                cost = by_factor(add(ip_size, ip_size), STRING_TRAVERSAL_COST_FACTOR)
                if function == "containsCIDR":  # masking and comparing the prefix too
                    cost = add(cost, by_factor(ip_size, STRING_TRAVERSAL_COST_FACTOR))
                    cost = add(cost, ONE)
                if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
                    cost = add(cost, by_factor(sz(args[0]), STRING_TRAVERSAL_COST_FACTOR))
                return CallEstimate(cost)
        elif function in ("quantity", "isQuantity", "semver", "isSemver"):
            if args:
                return CallEstimate(by_factor(sz(args[0]), STRING_TRAVERSAL_COST_FACTOR))
        elif function == "validate":
            if args:
                traversal = by_factor(sz(args[0]), STRING_TRAVERSAL_COST_FACTOR)
                factor = MAX_NAME_FORMAT_REGEX_SIZE * REGEX_STRING_LENGTH_COST_FACTOR
                return CallEstimate(by_factor(traversal, factor))
        elif function in (
            "format.named",  # a dictionary lookup
            "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan",
            "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch",
            "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery",
        ):  # fmt: skip
            return CallEstimate(ONE)
        elif function == "_==_" and len(args) == 2:
            return self._equality(args[0], args[1])
        return None

    def _replace(self, size: Range, old: Range, new: Range) -> CallEstimate:
        # the longest result
        if old[0] == 0:  # "" is replaced around every character
            count_max = size[1] + 1 if size[1] < U64 else size[1]
            retained_max = size[1]
        elif new[1] <= old[0]:  # never longer than the original
            count_max, retained_max = 0, size[1]
        else:  # the shortest matches, replaced by the longest replacement, as often as can be
            count_max, retained_max = _go_uint64(math.ceil(float(size[1]) / float(old[0]))), 0
        # the shortest result
        if old[1] == 0:
            count_min = size[0] + 1 if size[0] < U64 else size[0]
            retained_min = size[0]
        elif old[1] <= new[0]:  # never shorter than the original
            count_min, retained_min = 0, size[0]
        else:
            count_min, retained_min = _go_uint64(math.ceil(float(size[0]) / float(old[1]))), 0
        result = add(multiply((count_min, count_max), new), (retained_min, retained_max))
        # a traversal plus building the result
        return CallEstimate(by_factor(size, 2 * STRING_TRAVERSAL_COST_FACTOR), result)

    @staticmethod
    def _equality(lhs: AstNode, rhs: AstNode) -> CallEstimate | None:
        a, b = lhs.type, rhs.type
        if a.name != b.name:  # Type.Equal: the runtime type names
            return None
        if a.kind == "opaque" and a.name in ("net.IP", "net.CIDR"):
            return CallEstimate(ONE)
        if a.kind == "struct":
            if a.name in _O1_STRUCT_EQUALITY:
                return CallEstimate(ONE)
            if a.name == "kubernetes.NamedFormat":
                return CallEstimate(by_factor((1, MAX_FORMAT_SIZE), STRING_TRAVERSAL_COST_FACTOR))
            if a.name == "kubernetes.URL":
                size = ONE
                # upstream takes both sizes from the right-hand side
                if rhs.computed_size is not None:
                    size = union(rhs.computed_size, rhs.computed_size)
                return CallEstimate(by_factor((1, size[1]), STRING_TRAVERSAL_COST_FACTOR))
        return None


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool | UInt)


# --- DRA: compile.go's sizeEstimator and draCostEstimator ---------------------------------


@dataclass(eq=False)
class DeclType:
    """The part of apiservercel.DeclType the size estimator reads."""

    max_elements: int = 0
    fields: dict[str, DeclType] = field(default_factory=dict)
    key: DeclType | None = None
    elem: DeclType | None = None


def _map_type(key: DeclType, elem: DeclType, max_elements: int) -> DeclType:
    return DeclType(max_elements, key=key, elem=elem)


DOMAIN_TYPE = DeclType(DEVICE_MAX_DOMAIN_LENGTH)
ID_TYPE = DeclType(DEVICE_MAX_ID_LENGTH)
DRIVER_TYPE = DeclType(DRIVER_NAME_MAX_LENGTH)
MULTI_ALLOC_TYPE = DeclType(1)  # a bool with a known size: usage is underestimated without it
QUANTITY_TYPE = DeclType(0)  # QuantityDeclType: no MaxElements
# attributeTypeV136ListTypeAttributes: a scalar or a list, unknown at compile time
ATTRIBUTE_TYPE = DeclType(max(DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH, MAX_ATTRIBUTE_VALUES_PER_DEVICE))
_PER_DEVICE = MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE
DEVICE_TYPE = DeclType(
    fields={
        "allowMultipleAllocations": MULTI_ALLOC_TYPE,
        "driver": DRIVER_TYPE,
        "attributes": _map_type(
            DOMAIN_TYPE, _map_type(ID_TYPE, ATTRIBUTE_TYPE, _PER_DEVICE), _PER_DEVICE
        ),
        "capacity": _map_type(
            DOMAIN_TYPE, _map_type(ID_TYPE, QUANTITY_TYPE, _PER_DEVICE), _PER_DEVICE
        ),
    }
)  # deviceTypeV136ConsumableCapacityListTypeAttributes: the newest, whatever the environment


class DeviceSizeEstimator:
    """compile.go sizeEstimator: the maximum size of what ``device`` reaches by a field path."""

    def estimate_size(self, node: AstNode) -> Range | None:
        path = node.path
        if not path or path[0] != "device":
            return None
        current = DEVICE_TYPE
        for name in path[1:]:
            if name in ("@items", "@values"):
                if current.elem is None:
                    return None
                current = current.elem
            elif name == "@keys":
                if current.key is None:
                    return None
                current = current.key
            else:
                found = current.fields.get(name)
                if found is None:
                    # any name in an attribute map: every attribute has the same maximum size
                    if current.elem is ATTRIBUTE_TYPE:
                        current = ATTRIBUTE_TYPE
                        continue
                    return None
                current = found
        return 0, current.max_elements

    def estimate_call_cost(
        self, function: str, overload: str, target: AstNode | None, args: list[AstNode]
    ) -> CallEstimate | None:
        return None


class DraCostEstimator:
    """compile.go draCostEstimator: ``<target>.includes(<arg>)`` is ``<arg> in <target>`` over
    the longest attribute list a device may publish."""

    def __init__(self) -> None:
        self.base = KubeCostEstimator(DeviceSizeEstimator())

    def estimate_size(self, node: AstNode) -> Range | None:
        return self.base.estimate_size(node)

    def estimate_call_cost(
        self, function: str, overload: str, target: AstNode | None, args: list[AstNode]
    ) -> CallEstimate | None:
        if function == "includes" and overload == "dra_includes_dyn_dyn" and target is not None:
            return CallEstimate(multiply((0, MAX_ATTRIBUTE_VALUES_PER_DEVICE), ONE))
        return self.base.estimate_call_cost(function, overload, target, args)


PRESENCE_TEST_COST = ZERO  # base.go: cel.CostEstimatorOptions(checker.PresenceTestHasCost(false))


def estimate_selector(checked: Checked) -> Range:
    """What ``env.EstimateCost`` answers for a checked DRA selector: (min, max)."""
    return estimate(checked, DraCostEstimator(), EXT_OVERLOAD_ESTIMATORS, PRESENCE_TEST_COST)


def too_complex(checked: Checked) -> bool:
    """The apiserver's validation: ``result.MaxCost > resource.CELSelectorExpressionMaxCost``."""
    return estimate_selector(checked)[1] > COST_LIMIT
