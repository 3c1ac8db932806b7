"""A device's life from its stored records (dradash.dra.timeline): what changed between
snapshots, at the time Kubernetes recorded where it did, else at the snapshot that saw it."""

from __future__ import annotations

from datetime import UTC, datetime

from dradash.dra.timeline import device_timeline

T1 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
T2 = datetime(2026, 1, 1, 11, 0, tzinfo=UTC)
T3 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
TAINT = {
    "key": "example.com/ecc",
    "value": "",
    "effect": "NoExecute",
    "time_added": "2026-01-01T10:30:00Z",
    "source_kind": "DeviceTaintRule",
    "source_name": "ecc",
}


def record(**fields):
    return {"claims": [], "pods": [], "health": [], "taint_sources": [], "evictions": [], **fields}


def test_changes_are_ordered_by_recorded_time_and_first_seen_otherwise() -> None:
    held = record(claims=["ml/train-gpu"], pods=["ml/train"])
    tainted = record(
        claims=["ml/train-gpu"],
        pods=["ml/train"],
        taint_sources=[TAINT],
        health=[
            {"pod": "ml/train", "container": "c", "resource": "claim:gpu", "health": "Unknown"}
        ],
        evictions=[
            {
                "pod": "ml/train",
                "state": "tolerated",
                "taint": TAINT,
                "evict_at": "2026-01-01T13:30:00Z",
                "toleration_seconds": 10800,
            }
        ],
    )
    moments = device_timeline([(1, T1, held), (2, T2, tainted), (3, T3, record())])

    assert [(m.kind, m.time, m.exact) for m in moments] == [
        ("allocated", T1, False),
        ("tainted", datetime(2026, 1, 1, 10, 30, tzinfo=UTC), True),
        ("health", T2, False),
        ("released", T3, False),
        ("untainted", T3, False),
        ("eviction-due", datetime(2026, 1, 1, 13, 30, tzinfo=UTC), True),
    ]
    assert moments[1].text == "tainted example.com/ecc:NoExecute by DeviceTaintRule ecc"
    assert moments[2].text == "reported Unknown by Pod ml/train, container c"
    assert moments[2].pod == "ml/train"


def test_a_device_nothing_happened_to_has_only_its_first_holder() -> None:
    held = record(claims=["a/b"])
    assert [m.kind for m in device_timeline([(1, T1, held), (2, T2, held)])] == ["allocated"]
