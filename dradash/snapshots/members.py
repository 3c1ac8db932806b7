"""Which stored objects a snapshot holds, as one compact value.

A snapshot of a large cluster holds ~100,000 objects, and the next snapshot of the same cluster
mostly the same ones. One database row per (snapshot, object) would make every capture of an
unchanged cluster cost megabytes of rows and indexes; instead a snapshot keeps the ids of its
objects' blobs as a single compressed value: sorted, delta-encoded, zlib-compressed — a few
kilobyte when ids are consecutive, as they are for objects stored together.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable

_FORMAT = b"M1"  # version of the encoding


def pack(ids: Iterable[int]) -> bytes:
    ordered = sorted(set(ids))
    deltas = [b - a for a, b in zip([0, *ordered], ordered, strict=False)]
    return _FORMAT + zlib.compress(struct.pack(f"<{len(deltas)}Q", *deltas), 6)


def unpack(data: bytes | memoryview | None) -> list[int]:
    if not data:
        return []
    data = bytes(data)
    if not data.startswith(_FORMAT):
        raise ValueError("not a snapshot member list")
    raw = zlib.decompress(data[len(_FORMAT) :])
    ids, total = [], 0
    for (delta,) in struct.iter_unpack("<Q", raw):
        total += delta
        ids.append(total)
    return ids
