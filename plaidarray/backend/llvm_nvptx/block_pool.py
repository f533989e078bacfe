"""A caching allocator for a GPU's memory, as PyTorch's and CuPy's are: a freed buffer's
block goes back to a pool by its rounded size, and a later request of that size takes it,
so a loop that runs one executable again and again allocates nothing from the driver
after its first run (``cuMemAlloc`` takes tens of microseconds, and ``cuMemFree`` waits
for the whole device).

A block is reused without waiting for the launches that read it: every launch, copy and
read of a runtime goes on its one stream, in order, so whatever a later owner enqueues
runs after the earlier owner's work. Nothing is allocated ahead of use (JAX's 75%
preallocation is the complaint this avoids): the pool holds only blocks that were freed,
and gives them all back to the driver (``release``) when an allocation finds the device
full, before that allocation is tried again."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable

#: Requests round up to this many bytes (the driver's own alignment is 256)...
_SMALL_STEP = 512
#: ...or, above this size, to a multiple of it, so that sizes that vary a little share blocks.
_LARGE_STEP = 2 << 20


def rounded(nbytes: int) -> int:
    """The size of the block a request of ``nbytes`` takes."""
    step = _SMALL_STEP if nbytes <= _LARGE_STEP else _LARGE_STEP
    return max(-(-nbytes // step) * step, step)


class BlockPool:
    """Blocks of device memory from ``allocate`` (the driver's), kept by size once freed;
    ``release`` hands each kept one to ``free`` (after ``synchronize``)."""

    def __init__(self, allocate: Callable[[int], int], free: Callable[[int], None],
                 synchronize: Callable[[], None]) -> None:
        self._allocate, self._free, self._synchronize = allocate, free, synchronize
        self._sizes: dict[int, int] = {}  # address -> block size, for every block taken from the driver
        self._kept: defaultdict[int, list[int]] = defaultdict(list)  # block size -> free blocks
        self.kept_bytes = 0
        # reentrant: a buffer's finalizer can give a block back inside a take, on its thread
        self._lock = threading.RLock()

    def take(self, nbytes: int) -> int:
        """The address of a block of at least ``nbytes``: a kept one, else the driver's (the
        kept ones released first where the driver has no room: a MemoryError if it still
        has none)."""
        size = rounded(nbytes)
        with self._lock:
            kept = self._kept.get(size)
            if kept:
                self.kept_bytes -= size
                return kept.pop()
            try:
                address = self._allocate(size)
            except MemoryError:
                if not self.kept_bytes:
                    raise
                self.release()
                address = self._allocate(size)
            self._sizes[address] = size
            return address

    def give(self, address: int) -> None:
        """Keep ``address``'s block for a later request of its size."""
        with self._lock:
            size = self._sizes[address]
            self._kept[size].append(address)
            self.kept_bytes += size

    def release(self) -> None:
        """Hand every kept block back to the driver, once the device is done with them."""
        with self._lock:
            self._synchronize()
            for blocks in self._kept.values():
                for address in blocks:
                    del self._sizes[address]
                    self._free(address)
            self._kept.clear()
            self.kept_bytes = 0
