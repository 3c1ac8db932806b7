"""The timestamp and duration accessors of cel-go's standard library (``getFullYear`` …
``getMilliseconds``, with and without a time zone), as ``common/stdlib/standard.go`` declares
them and ``common/types/timestamp.go`` and ``duration.go`` implement them, in the cel-go that
``k8s.io/apiserver`` v0.36.2 requires. The values and the time-zone arithmetic are timelib.py's.
"""

from __future__ import annotations

from dradash.dra.cel import timelib
from dradash.dra.cel.functions import DUR, INT, STR, TS, declare, m


def register() -> None:
    for part, oid in (
        ("getFullYear", "timestamp_to_year"),
        ("getMonth", "timestamp_to_month"),
        ("getDayOfYear", "timestamp_to_day_of_year"),
        ("getDayOfMonth", "timestamp_to_day_of_month"),
        ("getDate", "timestamp_to_day_of_month_1_based"),
        ("getDayOfWeek", "timestamp_to_day_of_week"),
        ("getHours", "timestamp_to_hours"),
        ("getMinutes", "timestamp_to_minutes"),
        ("getSeconds", "timestamp_to_seconds"),
        ("getMilliseconds", "timestamp_to_milliseconds"),
    ):
        overloads = [
            m(oid, [TS], INT, lambda ts, p=part: timelib.timestamp_part(ts, p)),
            m(f"{oid}_with_tz", [TS, STR], INT,
              lambda ts, tz, p=part: timelib.timestamp_part(ts, p, tz)),
        ]  # fmt: skip
        if part in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
            overloads.append(
                m(f"duration_to_{part[3:].lower()}", [DUR], INT,
                  lambda d, p=part: timelib.duration_part(d, p))
            )  # fmt: skip
        declare(part, *overloads)
