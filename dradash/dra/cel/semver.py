"""Semantic versions as Kubernetes' CEL ``library.SemverLib`` (v1) sees them.

Parsing is github.com/blang/semver/v4 v4.0.0 ``semver.Parse`` (strict: MAJOR.MINOR.PATCH, no "v",
no leading zeroes), with its error messages; ``normalize=True`` first applies ``normalizeAndParse``
from k8s.io/apiserver/pkg/cel/library/semverlib.go (v0.34.10). Ordering is blang's ``Compare``
(semver 2.0.0 precedence), and equality is ``cel.Semver.Equal`` (``Version.EQ``, i.e.
``Compare == 0``): build metadata is ignored, so 1.0.0+a equals 1.0.0+b.
"""

from __future__ import annotations

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") | _NUMBERS
_UINT64_MAX = 2**64 - 1
_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_GO_ESCAPES |= {"\v": "\\v", "\\": "\\\\", '"': '\\"'}


class SemverError(ValueError):
    """A version string that blang/semver (or the normalisation in front of it) rejects."""


def _quote(s: str) -> str:
    """Go's %q (strconv.Quote), as blang's messages print the offending part."""
    out = []
    for c in s:
        if c in _GO_ESCAPES:
            out.append(_GO_ESCAPES[c])
        elif c.isprintable():
            out.append(c)
        elif ord(c) < 0x80:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


def _only(s: str, allowed: frozenset[str]) -> bool:
    return all(c in allowed for c in s)


def _uint(s: str) -> int:
    """strconv.ParseUint(s, 10, 64) on a string of ASCII digits."""
    if not s:
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    if len(s) > 20 or int(s) > _UINT64_MAX:  # no leading zeroes here; 21 digits never fit
        raise SemverError(f"strconv.ParseUint: parsing {_quote(s)}: value out of range")
    return int(s)


def _number(s: str, name: str) -> int:
    if not _only(s, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in {name.lower()} number {_quote(s)}")
    if len(s) > 1 and s[0] == "0":
        raise SemverError(f"{name} number must not contain leading zeroes {_quote(s)}")
    return _uint(s)


def _prerelease(s: str) -> int | str:
    """semver.NewPRVersion: a numeric identifier becomes an int, an alphanumeric one stays str."""
    if not s:
        raise SemverError("Prerelease is empty")
    if _only(s, _NUMBERS):
        if len(s) > 1 and s[0] == "0":
            raise SemverError(
                f"Numeric PreRelease version must not contain leading zeroes {_quote(s)}"
            )
        return _uint(s)
    if not _only(s, _ALPHANUM):
        raise SemverError(f"Invalid character(s) found in prerelease {_quote(s)}")
    return s


def _normalize(s: str) -> str:
    """normalizeAndParse's rewriting: drop one leading "v", strip leading zeroes from each of the
    first three dot-separated parts, pad 1 / 1.2 to 1.0.0 / 1.2.0. Whitespace is kept (it then
    fails to parse), unlike blang's ParseTolerant."""
    parts = s.removeprefix("v").split(".", 2)
    for i, p in enumerate(parts):
        if len(p.encode("utf-8", "surrogatepass")) > 1:  # Go's len() counts bytes
            p = p.lstrip("0")
            if not p or p[0] not in _NUMBERS:
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in "+-" for c in parts[-1]):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


class Semver:
    """An immutable semantic version: major, minor, patch, pre-release identifiers (int for
    numeric ones, str otherwise) and build metadata identifiers."""

    __slots__ = ("_major", "_minor", "_patch", "pre", "build")

    def __init__(
        self,
        major: int,
        minor: int,
        patch: int,
        pre: tuple[int | str, ...] = (),
        build: tuple[str, ...] = (),
    ) -> None:
        for name, v in zip(self.__slots__, (major, minor, patch, pre, build), strict=True):
            object.__setattr__(self, name, v)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Semver is immutable")

    def __reduce__(self) -> tuple[type[Semver], tuple[object, ...]]:
        return Semver, (self._major, self._minor, self._patch, self.pre, self.build)

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        """CEL semver(text) / semver(text, normalize): blang semver.Parse, after
        normalizeAndParse's rewriting when normalize is true."""
        if normalize:
            text = _normalize(text)
        if not text:
            raise SemverError("Version string empty")
        parts = text.split(".", 2)
        if len(parts) != 3:
            raise SemverError("No Major.Minor.Patch elements found")
        major = _number(parts[0], "Major")
        minor = _number(parts[1], "Minor")
        rest, plus, build = parts[2].partition("+")
        patch, minus, pre = rest.partition("-")
        patch_number = _number(patch, "Patch")
        pre_ids = tuple(_prerelease(p) for p in pre.split(".")) if minus else ()
        build_ids = tuple(build.split(".")) if plus else ()
        for b in build_ids:
            if not b:
                raise SemverError("Build meta data is empty")
            if not _only(b, _ALPHANUM):
                raise SemverError(f"Invalid character(s) found in build meta data {_quote(b)}")
        return cls(major, minor, patch_number, pre_ids, build_ids)

    def major(self) -> int:
        """CEL <Semver>.major()."""
        return self._major

    def minor(self) -> int:
        """CEL <Semver>.minor()."""
        return self._minor

    def patch(self) -> int:
        """CEL <Semver>.patch()."""
        return self._patch

    def compare(self, other: Semver) -> int:
        """blang Version.Compare (CEL compareTo / isGreaterThan / isLessThan): -1, 0 or 1 by
        semver 2.0.0 precedence. A release outranks its pre-releases; numeric identifiers rank
        below alphanumeric ones; a longer list of equal identifiers ranks higher; build metadata
        is ignored."""
        mine = (self._major, self._minor, self._patch)
        theirs = (other._major, other._minor, other._patch)
        if mine != theirs:
            return 1 if mine > theirs else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for a, b in zip(self.pre, other.pre, strict=False):
            if a != b:
                if isinstance(a, int) != isinstance(b, int):
                    return -1 if isinstance(a, int) else 1
                return 1 if a > b else -1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        """cel.Semver.Equal: Version.EQ, so build metadata does not count."""
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self._major, self._minor, self._patch, self.pre))

    def __str__(self) -> str:
        """blang Version.String: MAJOR.MINOR.PATCH[-PRE][+BUILD]."""
        text = f"{self._major}.{self._minor}.{self._patch}"
        if self.pre:
            text += "-" + ".".join(map(str, self.pre))
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


def is_semver(text: str, normalize: bool = False) -> bool:
    """CEL isSemver(text) / isSemver(text, normalize): whether Semver.parse accepts the text."""
    try:
        Semver.parse(text, normalize)
    except SemverError:
        return False
    return True
