"""Kubernetes' resource.Quantity as an immutable Python value, for the CEL ``library.Quantity``.

Ported from k8s.io/apimachinery/pkg/api/resource (quantity.go, amount.go, suffix.go, math.go at
v0.34.10) and k8s.io/apiserver/pkg/cel/library/quantity.go (v0.34.10). Values are exact:
a ``decimal.Decimal`` whose coefficient and exponent are Go's unscaled value and scale, with every
operation trapped as an error if it would round. Like Go, a quantity remembers whether it is held
as an ``int64Amount`` (value, scale) or as an ``inf.Dec``, because ``AsInt64`` (CEL ``isInteger``,
``asInteger``) and ``AsApproximateFloat64`` depend on that representation, not only on the value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import (
    MAX_EMAX,
    MIN_EMIN,
    ROUND_UP,
    Clamped,
    Context,
    Decimal,
    Inexact,
    InvalidOperation,
    Overflow,
    Rounded,
    Underflow,
)

DECIMAL_EXPONENT, BINARY_SI, DECIMAL_SI = "DecimalExponent", "BinarySI", "DecimalSI"

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_NOT_INTEGER = "cannot convert value to integer"  # apiserver cel/library quantityGetValue

# Not upstream: Go's inf.Dec grows without bound (1e2147483647 materialises ~900 MB). We stop at
# this many significant digits instead (below Python's 4300-digit int/str conversion limit).
MAX_DIGITS = 4000
ERR_TOO_BIG = f"quantity needs more than {MAX_DIGITS} significant digits"

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_DIGITS = "0123456789"
_SUFFIX_CHARS = "eEinumkKMGTP"
_DEC_SUFFIXES = {s: 3 * i - 9 for i, s in enumerate(("n", "u", "m", "", "k", "M", "G", "T", "P"))}
_DEC_SUFFIXES["E"] = 18
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_NAMES = {e: s for s, e in _DEC_SUFFIXES.items()}
_BIN_NAMES = {e // 10: s for s, e in _BIN_SUFFIXES.items()}

_EXACT = Context(
    prec=MAX_DIGITS,
    Emax=MAX_EMAX,
    Emin=MIN_EMIN,
    traps=[InvalidOperation, Inexact, Rounded, Overflow, Underflow, Clamped],
)
_ROUNDING = _EXACT.copy()
_ROUNDING.traps[Inexact] = _ROUNDING.traps[Rounded] = False
_ROUNDING.rounding = ROUND_UP
_NANO = Decimal("1e-9")
_MAX_ALLOWED = Decimal(_INT64_MAX)

# Go's math.Pow10 tables: AsApproximateFloat64 must round exactly as Go does.
_POW10 = [float(f"1e{i}") for i in range(32)]
_POW10_POS32 = [float(f"1e{32 * i}") for i in range(10)]
_POW10_NEG32 = [float(f"1e-{32 * i}") for i in range(11)]


class QuantityError(ValueError):
    """A string that resource.ParseQuantity rejects, or a failed conversion."""


def _i32(n: int) -> int:
    """Go int32 wrap-around (suffix exponents and scales are int32 in apimachinery)."""
    return (n + 2**31) % 2**32 - 2**31


def _pow10(n: int) -> float:
    """Go's math.Pow10."""
    if 0 <= n <= 308:
        return _POW10_POS32[n // 32] * _POW10[n % 32]
    if -323 <= n <= 0:
        return _POW10_NEG32[-n // 32] / _POW10[-n % 32]
    return math.inf if n > 0 else 0.0


def _exact(op: Callable[..., Decimal], *args: Decimal | int) -> Decimal:
    """Run a Context method that must not round; past MAX_DIGITS it would, and that is an error."""
    try:
        return op(*args)
    except (InvalidOperation, Inexact, Rounded, Overflow, Underflow, Clamped):
        raise QuantityError(ERR_TOO_BIG) from None


def _dec(coefficient: int, exponent: int) -> Decimal:
    return _exact(_EXACT.scaleb, Decimal(coefficient), exponent)


def _coefficient(value: Decimal) -> int:
    sign, digits, _ = value.as_tuple()
    n = int("".join(map(str, digits)))
    return -n if sign else n


def _int64_add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """int64Amount.Add: align to the smaller scale; None where Go reports int64 overflow."""
    (av, ascale), (bv, bscale) = a, b
    if bv == 0:
        return a
    if av == 0:
        return b
    scale = min(ascale, bscale)
    if max(ascale, bscale) - scale > 19:  # positiveScaleInt64 overflows on the way
        return None
    av, bv = av * 10 ** (ascale - scale), bv * 10 ** (bscale - scale)
    if not all(_INT64_MIN <= v <= _INT64_MAX for v in (av, bv, av + bv)):
        return None
    return av + bv, scale


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, num, denom, suffix); it is a scanner, not the regex
    its error message quotes."""
    positive, pos, end = True, 0, len(text)
    if end and text[0] in "+-":
        positive, pos = text[0] == "+", 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num, denom = text[start:pos] or "0", ""
    if pos == end:
        return positive, text, num, denom, ""
    if text[pos] == ".":
        start = pos = pos + 1
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos == end:
            return positive, text, num, denom, ""
    value, suffix_start = text[:pos], pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """suffixer.interpret: (base, exponent, format)."""
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":  # strconv.ParseInt(suffix[1:], 10, 64)
        sign = suffix[1] if suffix[1] in "+-" else ""
        digits = suffix[1 + len(sign) :]
        significant = digits.lstrip("0")
        if digits and all(c in _DIGITS for c in digits) and len(significant) <= 19:
            parsed = int(sign + (significant or "0"))
            if _INT64_MIN <= parsed <= _INT64_MAX:
                return 10, _i32(parsed), DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


class Quantity:
    """An immutable resource.Quantity: exact value, format, and Go's internal representation."""

    __slots__ = ("_value", "_int64", "format", "_s", "_shared")

    def __init__(
        self, value: Decimal, int64: tuple[int, int] | None, fmt: str, s: str | None = None
    ) -> None:
        """Internal; use Quantity.parse. ``int64`` is (value, scale) for an int64Amount."""
        if value.is_zero():
            value = value.copy_abs()
        for name, v in zip(self.__slots__, (value, int64, fmt, s, None), strict=True):
            object.__setattr__(self, name, v)

    def unshared(self) -> Quantity:
        """A copy that shares nothing with this one (see aliasing_add)."""
        return Quantity(self._value, self._int64, self.format, self._s)

    def aliasing(self, other: Quantity | int, sign: int) -> Quantity:
        """CEL add/sub exactly as the apiserver's library does them: on a copy of the receiver
        (``copy := *q; copy.Add(y)``). A quantity held as an inf.Dec (one that does not fit an
        int64, such as 8Ei) shares its *inf.Dec with that copy, and Add/Sub change it in place:
        the receiver, and every quantity sharing it, take the new value too."""
        result = self.add(other) if sign > 0 else self.sub(other)
        if self._int64 is None:
            group = self._shared if self._shared is not None else [self]
            for member in group:
                object.__setattr__(member, "_value", result._value)
            group.append(result)
            object.__setattr__(self, "_shared", group)
            object.__setattr__(result, "_shared", group)
        return result

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Quantity is immutable")

    @classmethod
    def _from_int64(cls, value: int, scale: int, fmt: str, s: str | None = None) -> Quantity:
        return cls(_dec(value, scale), (value, scale), fmt, s)

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """resource.ParseQuantity, including its int64 fast path, the rounding of anything finer
        than 1n up (away from zero) to 1n, the cap of BinarySI values at 2^63-1, and the reuse of
        the input as String() when the fast path judges it canonical."""
        if not text:
            raise QuantityError(ERR_FORMAT_WRONG)
        if text == "0":
            return cls._from_int64(0, 0, DECIMAL_SI, text)
        positive, value, num, denom, suffix = _scan(text)
        base, exponent, fmt = _interpret(suffix)

        if fmt == BINARY_SI:
            scale, mantissa = 0, 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1 if not denom else -1
        else:
            scale, mantissa, precision = exponent, 1, 18 - len(num) - len(denom)
        if precision >= 0:
            scale = _i32(scale - len(denom))
            if scale >= -9:
                shifted = num + denom
                result = int(shifted) * mantissa
                if result <= _INT64_MAX:
                    canonical = (
                        exponent % 10 == 0 and int(shifted) & 7 != 0
                        if fmt == BINARY_SI
                        else scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                    )
                    s = text if canonical else None
                    return cls._from_int64(result if positive else -result, scale, fmt, s)

        if not any(c in _DIGITS for c in value):  # inf.Dec.SetString: "no digits read"
            raise QuantityError(ERR_NUMERIC)
        sign, digits, exp10 = Decimal(value).as_tuple()  # inf.Dec: digits and scale as written
        if base == 10:  # amount.SetScale(amount.Scale() - exponent), in int32
            amount = Decimal((sign, digits, -_i32(-exp10 - exponent)))
        else:
            amount = _exact(_EXACT.multiply, Decimal((sign, digits, exp10)), 1 << exponent)
        negative, amount = amount.is_signed(), amount.copy_abs()
        if not amount.is_zero():  # inf.RoundUp to 1n
            amount = _exact(_ROUNDING.quantize, amount, _NANO)
        if fmt == BINARY_SI and amount > _MAX_ALLOWED:
            amount = _MAX_ALLOWED
        if fmt == BINARY_SI and 0 < amount < 1:
            fmt = DECIMAL_SI
        return cls(amount.copy_negate() if negative else amount, None, fmt)

    # --- comparison --------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        """Quantity.Equal: by value (1Gi == 1024Mi); the format does not matter."""
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._value == other._value

    def __hash__(self) -> int:
        return hash(self._value)

    def compare(self, other: Quantity) -> int:
        """Quantity.Cmp (CEL compareTo / isGreaterThan / isLessThan): -1, 0 or 1 by value."""
        return (self._value > other._value) - (self._value < other._value)

    def sign(self) -> int:
        """Quantity.Sign (CEL sign)."""
        return 0 if self._value.is_zero() else -1 if self._value.is_signed() else 1

    # --- arithmetic --------------------------------------------------------------------------

    def add(self, other: Quantity | int) -> Quantity:
        """Quantity.Add on a copy (CEL add). An int is NewQuantity(n, DecimalExponent). The
        result keeps this quantity's format, or takes the other's when this one is zero."""
        return self._plus(_operand(other), 1)

    def sub(self, other: Quantity | int) -> Quantity:
        """Quantity.Sub on a copy (CEL sub); formats as for add."""
        return self._plus(_operand(other), -1)

    def _plus(self, other: Quantity, sign: int) -> Quantity:
        fmt = other.format if self._value.is_zero() else self.format
        if self._int64 is not None and other._int64 is not None:
            value, scale = other._int64
            if sign < 0:  # int64Amount.Sub negates in int64: -(-2^63) stays -2^63
                value = -value if value != _INT64_MIN else value
            result = _int64_add(self._int64, (value, scale))
            if result is not None:
                return Quantity._from_int64(*result, fmt)
        op = _EXACT.add if sign > 0 else _EXACT.subtract  # inf.Dec: exact, at the larger scale
        return Quantity(_exact(op, self._value, other._value), None, fmt)

    # --- conversions -------------------------------------------------------------------------

    def is_integer(self) -> bool:
        """CEL isInteger: whether Quantity.AsInt64 succeeds. That needs the int64Amount form at a
        scale >= 0 that fits int64, so "1.0", "1000m" or "1.5Ki" (held as inf.Dec) are not."""
        try:
            self.as_integer()
        except QuantityError:
            return False
        return True

    def as_integer(self) -> int:
        """CEL asInteger: Quantity.AsInt64, else "cannot convert value to integer"."""
        if self._int64 is None or self._int64[1] < 0:
            raise QuantityError(ERR_NOT_INTEGER)
        value, scale = self._int64
        result = value * 10 ** min(scale, 19)  # positiveScaleInt64; 10^19 overflows anyway
        if not _INT64_MIN <= result <= _INT64_MAX:
            raise QuantityError(ERR_NOT_INTEGER)
        return result

    def as_approximate_float(self) -> float:
        """Quantity.AsApproximateFloat64 (CEL asApproximateFloat): float(unscaled) * Pow10(exp),
        computed as Go computes it; +-Inf beyond float64."""
        _, _, exponent = self._value.as_tuple()
        try:
            base = float(_coefficient(self._value))
        except OverflowError:
            base = -math.inf if self._value.is_signed() else math.inf
        return base if exponent == 0 else base * _pow10(exponent)

    def __str__(self) -> str:
        """Quantity.String: the input text when ParseQuantity kept it, else CanonicalizeBytes.
        Like Kubernetes 1.34-1.36, a suffix outside the tables is dropped (1000E prints "1")."""
        if self._s is not None:
            return self._s
        value = self._value
        if value.is_zero():
            return "0"
        fmt = self.format
        if fmt == BINARY_SI and (
            -1024 < value < 1024 or value != _ROUNDING.to_integral_value(value)
        ):  # below 1Ki or fractional: print as DecimalSI
            fmt = DECIMAL_SI
        if fmt == BINARY_SI:
            number, times = _coefficient(_exact(_ROUNDING.quantize, value, Decimal(1))), 0
            while number % 1024 == 0:
                number, times = number // 1024, times + 1
            return f"{number}{_BIN_NAMES.get(times, '')}"
        sign, digits, exponent = value.as_tuple()
        mantissa = "".join(map(str, digits)).rstrip("0")
        exponent += len(digits) - len(mantissa)
        mantissa += "0" * (exponent % 3)
        exponent -= exponent % 3
        if fmt == DECIMAL_SI:
            suffix = _DEC_NAMES.get(exponent, "")
        else:
            suffix = f"e{exponent}" if exponent else ""
        return f"{'-' if sign else ''}{mantissa}{suffix}"

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __reduce__(self) -> tuple[type[Quantity], tuple[object, ...]]:
        return Quantity, (self._value, self._int64, self.format, self._s)


def is_quantity(text: str) -> bool:
    """CEL isQuantity: whether resource.ParseQuantity accepts the text."""
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


def _operand(other: Quantity | int) -> Quantity:
    if isinstance(other, Quantity):
        return other
    if not _INT64_MIN <= other <= _INT64_MAX:
        raise QuantityError("integer out of int64 range")
    return Quantity._from_int64(other, 0, DECIMAL_EXPONENT)
