"""Lowered kernel groups by key (``codegen/kernel_groups.py``): what lowering a group
made, kept so that a group met again, in another graph or later in the same one, is not
lowered again. Lowering (building linalg, the loop passes, emitting LLVM IR) was most of
a compile; in a run of scikit-learn's tests more than half of the groups compiled had
been compiled before in the process."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

from ...hlo.shape import Shape
from ..cache import EXECUTABLES
from ...hlo.symbolic import Dim
from .kernel_source import KernelSource


@dataclass(frozen=True)
class LoweredGroup:
    """A group's kernels, their buffers numbered as the group's module's arguments after
    contraction (the group's buffers left, then its scratch buffers); its scratch
    buffers; the limits on run-time sizes; which of the group's buffers (by place among
    them) its loops contracted away."""

    sources: tuple[KernelSource, ...]
    scratch: tuple[Shape, ...]
    limits: tuple[tuple[Dim, int], ...]
    contracted: frozenset[int]

    @property
    def text_bytes(self) -> int:
        return sum(len(s.ir) for s in self.sources)


class GroupCache:
    """The most recently used lowered groups, up to ``kept`` groups and ``budget`` bytes
    of kernel text (the texts are shared with the emitter's cache of kernel texts)."""

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
                self._bytes -= previous.text_bytes
            self._groups[key] = group
            self._bytes += group.text_bytes
            while len(self._groups) > self._kept or (self._bytes > self._budget and len(self._groups) > 1):
                self._bytes -= self._groups.popitem(last=False)[1].text_bytes

    def clear(self) -> None:
        with self._lock:
            self._groups.clear()
            self._bytes = 0


GROUPS = GroupCache(1024, 4 << 20)
EXECUTABLES.on_clear.append(GROUPS.clear)  # clear_cache() starts every compile afresh
