"""CEL's google.protobuf.Timestamp and google.protobuf.Duration, as cel-go implements them
(``common/types/timestamp.go``, ``duration.go``): Go's ``time.Parse(time.RFC3339)`` and
``time.ParseDuration``, nanosecond precision, the range checks, and the accessors."""

from __future__ import annotations

import datetime as dt
import errno
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dradash.dra.cel.values import CelEvalError

NS = 1_000_000_000
MIN_UNIX, MAX_UNIX = -62135596800, 253402300799  # 0001-01-01 … 9999-12-31T23:59:59
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class Timestamp:
    __slots__ = ("ns",)  # nanoseconds since the Unix epoch, UTC

    def __init__(self, ns: int) -> None:
        if not MIN_UNIX <= ns // NS <= MAX_UNIX:
            raise CelEvalError("timestamp out of range")
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Timestamp) and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(("ts", self.ns))

    def datetime(self, tz: dt.tzinfo = dt.UTC) -> dt.datetime:
        secs, nanos = divmod(self.ns, NS)
        base = _EPOCH + dt.timedelta(seconds=secs)
        return base.astimezone(tz), nanos  # type: ignore[return-value]

    def __str__(self) -> str:
        """time.RFC3339Nano in UTC, as cel-go's string(timestamp)."""
        secs, nanos = divmod(self.ns, NS)
        d = _EPOCH + dt.timedelta(seconds=secs)
        text = d.strftime("%Y-%m-%dT%H:%M:%S")
        if nanos:
            text += "." + f"{nanos:09d}".rstrip("0")
        return text + "Z"


class Duration:
    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        if not INT64_MIN <= ns <= INT64_MAX:
            raise CelEvalError("integer overflow")
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(("dur", self.ns))

    def __str__(self) -> str:
        """cel-go's string(duration): seconds with a trailing "s"."""
        secs = self.ns / NS
        if self.ns % NS == 0:
            return f"{self.ns // NS}s"
        return f"{secs:.9f}".rstrip("0") + "s"


_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_timestamp(text: str) -> Timestamp:
    m = _RFC3339.match(text)
    if not m:
        raise CelEvalError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac, zone = m.group(7), m.group(8)
    try:
        d = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.UTC)
    except ValueError:
        raise CelEvalError(
            "type conversion error from 'string' to 'google.protobuf.Timestamp'"
        ) from None
    offset = 0
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        hh, mm = int(zone[1:3]), int(zone[4:6])
        if hh > 23 or mm > 59:
            raise CelEvalError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
        offset = sign * (hh * 3600 + mm * 60)
    nanos = int((frac[1:] + "000000000")[:9]) if frac else 0
    secs = int((d - _EPOCH).total_seconds()) - offset
    if not MIN_UNIX <= secs <= MAX_UNIX:
        raise CelEvalError("timestamp overflow")
    return Timestamp(secs * NS + nanos)


_UNITS = {
    "ns": 1,
    "us": 1000,
    "µs": 1000,
    "μs": 1000,
    "ms": 1_000_000,
    "s": NS,
    "m": 60 * NS,
    "h": 3600 * NS,
}
_DURATION_PART = re.compile(r"(\d*)(\.\d*)?(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> Duration:
    """Go's time.ParseDuration."""
    bad = CelEvalError("type conversion error from 'string' to 'google.protobuf.Duration'")
    s = text
    neg = False
    if s[:1] in ("+", "-"):
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return Duration(0)
    if not s:
        raise bad
    total = 0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if not m or (not m.group(1) and (not m.group(2) or m.group(2) == ".")):
            raise bad
        if len(m.group(1).lstrip("0")) > 19:  # Go: overflow (Python: too many digits)
            raise bad
        whole = int(m.group(1).lstrip("0") or "0")
        frac = m.group(2)[1:19] if m.group(2) else ""  # Go ignores digits past its precision
        unit = _UNITS[m.group(3)]
        value = whole * unit
        if frac:
            value += int(frac) * unit // 10 ** len(frac)
        total += value
        if total > 2**63:
            raise bad
        pos = m.end()
    if total > INT64_MAX and not (neg and total == 2**63):
        raise bad
    return Duration(-total if neg else total)


def zone(tz: str) -> dt.tzinfo:
    """cel-go's timeZone: without a colon, an IANA name (Go's ``time.LoadLocation``); with one,
    an offset in hours and minutes ("+05:30", "-08:00", "2:0")."""
    colon = tz.find(":")
    if colon == -1:
        return _location(tz)
    hours, minutes = _atoi(tz[:colon]), _atoi(tz[colon + 1 :])
    offset = hours * 60 - minutes if tz[0] == "-" else hours * 60 + minutes
    try:
        return dt.timezone(dt.timedelta(minutes=offset))
    except ValueError:  # Go takes any offset; Python's fixed zones stay within a day
        raise CelEvalError(f"time zone offset out of range: {tz}") from None


# Go's messages for the errors time.LoadLocation passes on from reading a zoneinfo file.
_GO_ERRNO = {
    errno.EISDIR: "is a directory",
    errno.ENAMETOOLONG: "file name too long",
    errno.ENOTDIR: "not a directory",
    errno.EACCES: "permission denied",
}


def _location(name: str) -> dt.tzinfo:
    """Go's time.LoadLocation, and its errors."""
    if name in ("", "UTC", "Local"):  # Local: the scheduler's own zone, UTC in its container
        return dt.UTC
    if ".." in name or name[0] in "/\\":
        raise CelEvalError("time: invalid location name")
    try:
        return ZoneInfo(name)
    except ZoneInfoNotFoundError:
        raise CelEvalError(f"unknown time zone {name}") from None
    except OSError as exc:  # found, but not a file Go would read
        raise CelEvalError(_GO_ERRNO.get(exc.errno or 0, f"unknown time zone {name}")) from None
    except ValueError as exc:  # a file that is no zone, or a name no file can have
        if "TZif" in str(exc):
            raise CelEvalError("malformed time zone information") from None
        raise CelEvalError(f"unknown time zone {name}") from None


def _atoi(text: str) -> int:
    """Go's strconv.Atoi, and its errors."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise CelEvalError(f'strconv.Atoi: parsing "{text}": invalid syntax')
    if len(text.lstrip("+-").lstrip("0")) > 19 or not INT64_MIN <= int(text) <= INT64_MAX:
        raise CelEvalError(f'strconv.Atoi: parsing "{text}": value out of range')
    return int(text)


def timestamp_part(ts: Timestamp, part: str, tz: str = "UTC") -> int:
    d, nanos = ts.datetime(zone(tz))  # type: ignore[misc]
    if part == "getFullYear":
        return d.year
    if part == "getMonth":
        return d.month - 1
    if part == "getDayOfYear":
        return d.timetuple().tm_yday - 1
    if part == "getDayOfMonth":
        return d.day - 1
    if part == "getDate":
        return d.day
    if part == "getDayOfWeek":
        return (d.weekday() + 1) % 7
    if part == "getHours":
        return d.hour
    if part == "getMinutes":
        return d.minute
    if part == "getSeconds":
        return d.second
    return nanos // 1_000_000  # getMilliseconds


def duration_part(d: Duration, part: str) -> int:
    ns = d.ns
    q = {"getHours": 3600 * NS, "getMinutes": 60 * NS, "getSeconds": NS, "getMilliseconds": 10**6}
    return int(ns / q[part]) if ns < 0 else ns // q[part]
