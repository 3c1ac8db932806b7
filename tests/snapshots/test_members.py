"""Snapshot.members: the packed list of a snapshot's blob ids."""

from __future__ import annotations

import pytest

from dradash.snapshots import members


@pytest.mark.parametrize(
    "ids", [[], [1], [7, 3, 3, 1], list(range(1, 10_001)), [2**40, 5, 2**40 + 1]]
)
def test_pack_then_unpack_gives_the_sorted_distinct_ids(ids: list[int]) -> None:
    assert members.unpack(members.pack(ids)) == sorted(set(ids))


def test_ids_stored_together_pack_into_a_few_kilobytes_at_most() -> None:
    # 92,168 objects of the large profile, stored in one go, get consecutive ids.
    assert len(members.pack(range(500_000, 592_168))) < 2_000


def test_something_else_is_refused() -> None:
    with pytest.raises(ValueError, match="not a snapshot member list"):
        members.unpack(b"\x00\x01")
