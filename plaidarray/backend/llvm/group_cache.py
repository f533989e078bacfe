"""Lowered kernel groups by key (``codegen/kernel_groups.py``): what lowering a group
made, kept so that a group met again, in another graph or later in the same one, is not
lowered again. Lowering (building linalg, the loop passes, emitting LLVM IR) was most of
a compile; in a run of scikit-learn's tests more than half of the groups compiled had
been compiled before in the process."""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from ...hlo.shape import Shape
from ..cache import EXECUTABLES
from ...hlo.symbolic import Dim, rename, symbols
from .kernel_source import KernelSource, Segment


#: Memory a kept group holds besides its kernels' text (its sources, keys and the
#: attributes they refer to), as measured: a process compiling a small reduction at 1,000
#: sizes grew by about 12 KB per group kept, of which 4-5 KB were the text.
GROUP_OVERHEAD_BYTES = 8 << 10


@dataclass(frozen=True)
class LoweredGroup:
    """A group's kernels, their buffers numbered as the group's buffers left after
    contraction, in the order its key numbers them, then its scratch buffers; its scratch
    buffers; the limits on run-time sizes; which of the group's buffers (by place among
    them) its loops contracted away; the dims table entries its code reads that binding
    computes (``KernelBuilder.one_value``), each (its number, its value), a value naming
    only sizes and entries before it."""

    sources: tuple[KernelSource, ...]
    scratch: tuple[Shape, ...]
    limits: tuple[tuple[Dim, int], ...]
    contracted: frozenset[int]
    derived: tuple[tuple[int, Dim], ...] = ()

    @property
    def kept_bytes(self) -> int:
        """What keeping the group costs: its kernels' text, and the objects around it."""
        return sum(len(s.ir) for s in self.sources) + GROUP_OVERHEAD_BYTES

    def reordered(self, ascending: Sequence[int], order: Sequence[int]) -> LoweredGroup:
        """The same code with its buffers in ``order`` (the order the group's key numbers
        them, ``kernel_groups.group_key``) rather than in ``ascending`` order, the order
        of the module it was lowered in: in the cache, buffers are known by the place the
        key gives them, so that a group alike but for which buffers it uses (a loop's next
        iteration, whose buffers are others) takes this code."""
        if list(order) == list(ascending):
            return self
        place = {b: i for i, b in enumerate(order)}
        contracted = frozenset(place[ascending[p]] for p in self.contracted)
        left = [b for p, b in enumerate(ascending) if p not in self.contracted]
        now = {b: i for i, b in enumerate(b for i, b in enumerate(order) if i not in contracted)}

        def moved(p: int) -> int:
            return now[left[p]] if p < len(left) else p  # scratch buffers follow, in order
        return LoweredGroup(tuple(dataclasses.replace(s, buffers=tuple(moved(p) for p in s.buffers))
                                  for s in self.sources), self.scratch, self.limits, contracted, self.derived)

    def renumbered(self, new: Mapping[int, int]) -> LoweredGroup:
        """The same code with run-time size ``k`` numbered ``new[k]``: in the cache, a
        group's sizes are numbered as its key meets them (``kernel_groups._Symbols``), in
        a module as the module numbers them. Every size the code reads must be named."""
        used = symbols([d for s in self.sources for d in (s.segment.extent, s.segment.work)])
        used |= {k for s in self.sources for k in s.dims}
        used |= symbols([d for shape in self.scratch for d in shape.dims]) | symbols([v for v, _ in self.limits])
        used |= {k for k, _ in self.derived} | symbols([v for _, v in self.derived])
        if not used <= new.keys():
            raise RuntimeError(f"llvm-cpu: a kernel group's code uses run-time sizes {sorted(used - new.keys())} "
                               "that its key does not name")

        def segment(s: Segment) -> Segment:
            return Segment(rename(s.extent, new), rename(s.work, new), s.depth)
        return LoweredGroup(
            tuple(dataclasses.replace(s, dims=tuple(new[k] for k in s.dims), segment=segment(s.segment))
                  for s in self.sources),
            tuple(Shape(cast("tuple[int, ...]", tuple(rename(d, new) for d in shape.dims)), shape.dtype)
                  for shape in self.scratch),
            tuple((rename(v, new), limit) for v, limit in self.limits), self.contracted,
            tuple((new[k], rename(v, new)) for k, v in self.derived))


class GroupCache:
    """The most recently used lowered groups, up to ``kept`` groups and ``budget`` bytes
    (``LoweredGroup.kept_bytes``; the texts are shared with the emitter's cache of kernel
    texts)."""

    def __init__(self, kept: int, budget: int) -> None:
        self._groups: OrderedDict[Hashable, LoweredGroup] = OrderedDict()
        self._kept = kept
        self._budget = budget
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> LoweredGroup | None:
        with self._lock:
            found = self._groups.get(key)
            if found is not None:
                self._groups.move_to_end(key)
            return found

    def put(self, key: Hashable, group: LoweredGroup) -> None:
        with self._lock:
            previous = self._groups.pop(key, None)
            if previous is not None:
                self._bytes -= previous.kept_bytes
            self._groups[key] = group
            self._bytes += group.kept_bytes
            while len(self._groups) > self._kept or (self._bytes > self._budget and len(self._groups) > 1):
                self._bytes -= self._groups.popitem(last=False)[1].kept_bytes

    def clear(self) -> None:
        with self._lock:
            self._groups.clear()
            self._bytes = 0


GROUPS = GroupCache(1024, 4 << 20)
EXECUTABLES.on_clear.append(GROUPS.clear)  # clear_cache() starts every compile afresh
