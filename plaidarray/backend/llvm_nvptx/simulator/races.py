"""Data-race detection on shared and global memory, per byte, in the style of FastTrack.

Two accesses to one byte by different threads race when at least one is a write, they are
not both atomic, and nothing orders them. Within a launch the only orders are:

* a completed block barrier (``bar.sync``): accesses of one block in different *barrier
  epochs* are ordered (the epoch counts the barriers the block has completed);
* a warp sync (``bar.warp.sync`` naming every non-exited lane): accesses of one warp in
  different *warp epochs* are ordered.

Different blocks are never ordered, and shuffles, votes and fences order nothing (the CUDA
memory model gives ``shfl.sync`` no memory ordering; fence-based inter-block protocols are
reported as races). A plain read racing an atomic write is a race, as in PTX's memory model.

Each byte keeps the last write and the reads since it, each as one *record*: a thread, or
"several threads" of one warp, of one block or of several blocks, with the epoch stamp
(``block_epoch << 32 | warp_epoch``) and the PTX line. A record is replaced by an access
ordered after all of it and merged otherwise; this is exact for the orders above because
epochs only grow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import SimulatorError

NOBODY = -1
SEVERAL = -2


@dataclass
class Accessor:
    """Who accesses each byte: launch-wide thread, warp and block ids, epoch stamp, PTX line."""

    thread: np.ndarray
    warp: np.ndarray
    block: np.ndarray
    stamp: np.ndarray
    line: np.ndarray

    def take(self, index: np.ndarray) -> Accessor:
        return Accessor(*(getattr(self, f)[index] for f in _FIELDS))


_FIELDS = ("thread", "warp", "block", "stamp", "line")


class _Records:
    """One record per byte (``thread == NOBODY`` when empty)."""

    def __init__(self, size: int):
        self.thread = np.full(size, NOBODY, np.int32)
        self.warp = np.full(size, NOBODY, np.int32)
        self.block = np.full(size, NOBODY, np.int32)
        self.stamp = np.zeros(size, np.int64)
        self.line = np.zeros(size, np.int32)

    def at(self, positions: np.ndarray) -> Accessor:
        return Accessor(*(getattr(self, f)[positions] for f in _FIELDS))

    def put(self, positions: np.ndarray, value: Accessor) -> None:
        for f in _FIELDS:
            getattr(self, f)[positions] = getattr(value, f)


def _ordered(before: Accessor, after: Accessor) -> np.ndarray:
    """Whether every access of ``before`` happens before ``after`` (elementwise)."""
    same_warp_order = before.stamp != after.stamp
    block_order = (before.stamp >> 32) != (after.stamp >> 32)
    return (
        (before.thread == NOBODY)
        | (before.thread == after.thread)
        | ((before.block == after.block) & np.where(before.warp == after.warp, same_warp_order, block_order))
    )


def _merge(old: Accessor, new: Accessor) -> Accessor:
    """One record standing for both ``old`` and ``new`` (unordered, so concurrent)."""
    return Accessor(
        np.where(old.thread == new.thread, new.thread, SEVERAL),
        np.where(old.warp == new.warp, new.warp, SEVERAL),
        np.where(old.block == new.block, new.block, SEVERAL),
        new.stamp,
        new.line,
    )


def _grouped(positions: np.ndarray, accessor: Accessor) -> tuple[np.ndarray, np.ndarray, np.ndarray, Accessor]:
    """Accesses sorted by byte: the order, group starts, unique positions and one merged
    record per byte (several threads touching one byte in one instruction are concurrent)."""
    order = np.argsort(positions, kind="stable")
    sorted_positions = positions[order]
    starts = np.flatnonzero(np.r_[True, sorted_positions[1:] != sorted_positions[:-1]])
    members = accessor.take(order)

    def same(values: np.ndarray) -> np.ndarray:
        low, high = np.minimum.reduceat(values, starts), np.maximum.reduceat(values, starts)
        return np.where(low == high, low, SEVERAL)

    group = Accessor(same(members.thread), same(members.warp), same(members.block),
                     members.stamp[starts], members.line[starts])
    return order, starts, sorted_positions[starts], group


class Shadow:
    """The race state of one memory region (an allocation, or one batch's shared memory)."""

    def __init__(self, size: int, describe: Callable[[int, int, int], str], name: Callable[[int], str]):
        self.writes = _Records(size)
        self.reads = _Records(size)
        self.atomic = np.zeros(size, bool)
        self.describe = describe
        self.name = name

    def read(self, positions: np.ndarray, accessor: Accessor) -> None:
        self._check(self.writes, positions, accessor, "read", np.zeros(len(positions), bool))
        self._record(self.reads, positions, accessor)

    def write(self, positions: np.ndarray, accessor: Accessor) -> None:
        self._check(self.writes, positions, accessor, "write", np.zeros(len(positions), bool))
        self._check(self.reads, positions, accessor, "write", np.zeros(len(positions), bool), "read")
        order, starts, unique, _ = _grouped(positions, accessor)
        if len(unique) != len(positions):
            counts = np.diff(np.r_[starts, len(positions)])
            first = order[starts[np.argmax(counts > 1)]]
            second = order[starts[np.argmax(counts > 1)] + 1]
            raise self._race(positions[first], accessor.take(np.array([first, second])), "write", "write")
        self.writes.put(positions, accessor)
        self.atomic[positions] = False
        self.reads.thread[positions] = NOBODY

    def atomic_update(self, positions: np.ndarray, accessor: Accessor) -> None:
        self._check(self.writes, positions, accessor, "atomic", self.atomic[positions])
        self._check(self.reads, positions, accessor, "atomic", np.zeros(len(positions), bool), "read")
        self._record(self.writes, positions, accessor)
        self.atomic[positions] = True
        self.reads.thread[positions] = NOBODY

    def _record(self, records: _Records, positions: np.ndarray, accessor: Accessor) -> None:
        order, starts, unique, group = _grouped(positions, accessor)
        old = records.at(positions[order])
        ordered = np.logical_and.reduceat(_ordered(old, accessor.take(order)), starts)
        old_unique = records.at(unique)
        merged = _merge(old_unique, group)
        records.put(unique, Accessor(*(np.where(ordered, getattr(group, f), getattr(merged, f)) for f in _FIELDS)))

    def _check(self, records: _Records, positions: np.ndarray, accessor: Accessor, kind: str,
               excused: np.ndarray, earlier: str | None = None) -> None:
        old = records.at(positions)
        bad = ~_ordered(old, accessor) & ~excused
        if bad.any():
            i = int(np.argmax(bad))
            earlier_kind = earlier or ("atomic" if self.atomic[positions[i]] else "write")
            raise self._race(positions[i], Accessor(*(np.array([getattr(old, f)[i], getattr(accessor, f)[i]])
                                                      for f in _FIELDS)), earlier_kind, kind)

    def _race(self, position: int, pair: Accessor, first_kind: str, second_kind: str) -> SimulatorError:
        who = [self.describe(int(pair.thread[k]), int(pair.warp[k]), int(pair.block[k])) for k in (0, 1)]
        return SimulatorError(
            f"data race on {self.name(int(position))}: {first_kind} by {who[0]} (PTX line {int(pair.line[0])}) "
            f"and {second_kind} by {who[1]} (PTX line {int(pair.line[1])}) with no barrier between them"
        )
