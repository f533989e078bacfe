"""A caching allocator for large buffers, in the spirit of XLA's and PyTorch's.

A fresh NumPy array above glibc's mmap threshold (128 KiB, raised up to 32 MiB as mapped
chunks are freed) is a new mapping: the first write to each of its pages faults, and the
kernel zeroes the page. For a 40 MB result that is about 3 ms, as long as the kernel that
fills it. Below the threshold malloc's heap serves it, but freeing several such buffers at
once (a run's temporaries with its result) can leave more free memory at the heap's top
than glibc's trim threshold, which hands it back to the system, and the next run faults it
in again: a two-op graph of 1e5 float64 values took 500 us a run so, against 35 for one op.
Results of ``MIN_POOLED_BYTES`` or more and temporaries of ``MIN_POOLED_TEMP_BYTES`` or
more are therefore carved from blocks that outlive them: a block is lent out behind a
:class:`_Lease`, the base of every array viewing it, and when the last such array dies the
lease's finalizer hands the block back to the pool; the next buffer of that size reuses
its pages, already mapped. (A smaller result stays malloc's, ~7 us a buffer cheaper: a
run's temporaries are what it frees with it.)

The pool keeps at most ``PLAIDARRAY_POOL_BYTES`` of free blocks (default 512 MiB; 0
turns pooling off), dropping the blocks returned longest ago first;
``plaidarray.clear_cache()`` empties it. A block is never lent while an array views
it, so no two live arrays share memory through the pool.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, deque

import numpy as np

from .. import config

#: Smaller results come from malloc, which reuses freed memory without faults.
MIN_POOLED_BYTES = 1 << 20
#: Smaller temporaries come from malloc, whose heap keeps them (glibc's default mmap and
#: trim thresholds are 128 KiB).
MIN_POOLED_TEMP_BYTES = 128 << 10
_PAGE = 4096
#: Blocks start on a cache line, as XLA aligns its buffers: malloc's large chunks start
#: 16 bytes past one, and then every 64-byte vector store spans two lines.
ALIGNMENT = 64


def max_free_bytes() -> int:
    """The bytes of free blocks the pool may keep (``PLAIDARRAY_POOL_BYTES``)."""
    return config.get("PLAIDARRAY_POOL_BYTES")


class _Block:
    """A block of ``nbytes`` at ``address``, held by ``memory`` (a NumPy array)."""

    __slots__ = ("memory", "address", "nbytes")

    def __init__(self, memory: np.ndarray, address: int) -> None:
        self.memory, self.address, self.nbytes = memory, address, memory.nbytes


class _Lease:
    """A block lent to the arrays that view it (it is their base, and its array interface
    says the shape and dtype they asked for: one array made, ~1 us, where slicing,
    viewing and reshaping the block's made four); when they are all gone, the finalizer
    returns the block. Returning only appends to a deque, which needs no lock: a
    finalizer may run inside any allocation, pool calls included."""

    __slots__ = ("_block", "_returned", "__array_interface__")

    def __init__(self, block: _Block, returned: deque, dims: tuple[int, ...], dtype: np.dtype) -> None:
        self._block = block
        self._returned = returned
        self.__array_interface__ = {"data": (block.address, False), "shape": dims, "typestr": dtype.str,
                                    "version": 3}

    def __del__(self) -> None:
        self._returned.append(self._block)


class BufferPool:
    """Free blocks by the order they came back, the same by size, and the leases' return
    queue."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free: OrderedDict[int, _Block] = OrderedDict()  # id(block) -> block
        self._by_size: dict[int, dict[int, None]] = {}  # size -> ids of its free blocks, in order
        self._returned: deque[_Block] = deque()
        self.free_bytes = 0

    def empty(self, dims: tuple[int, ...], dtype: np.dtype, least: int = MIN_POOLED_BYTES) -> np.ndarray:
        """An uninitialised C-contiguous array of ``dims`` and ``dtype``, from the pool if
        it holds ``least`` bytes or more; MemoryError (not a crash) when it cannot exist."""
        nbytes = math.prod(dims) * dtype.itemsize
        limit = max_free_bytes() if nbytes >= least else 0
        if not limit:
            return _new(dims, dtype)
        size = -(-nbytes // _PAGE) * _PAGE
        block = self._take(size, limit)
        if block is None:
            raw = _new((size + ALIGNMENT,), np.dtype(np.uint8), request=(dims, dtype))
            start = -raw.ctypes.data % ALIGNMENT
            block = _Block(raw[start:start + size], raw.ctypes.data + start)
        return np.asarray(_Lease(block, self._returned, dims, dtype))

    def _take(self, size: int, limit: int) -> _Block | None:
        """The free block of ``size`` returned last (its pages the likeliest in cache), if any."""
        with self._lock:
            self._collect(limit)
            ids = self._by_size.get(size)
            if not ids:
                return None
            key = next(reversed(ids))
            self._forget(key, size)
            block = self._free.pop(key)
            self.free_bytes -= size
            return block

    def _forget(self, key: int, size: int) -> None:
        ids = self._by_size[size]
        del ids[key]
        if not ids:
            del self._by_size[size]

    def _collect(self, limit: int) -> None:
        """Move returned blocks to the free list, then trim it to ``limit`` bytes."""
        while self._returned:
            block = self._returned.popleft()
            self._free[id(block)] = block
            self._by_size.setdefault(block.nbytes, {})[id(block)] = None
            self.free_bytes += block.nbytes
        while self.free_bytes > limit:
            key, block = self._free.popitem(last=False)
            self._forget(key, block.nbytes)
            self.free_bytes -= block.nbytes

    def clear(self) -> None:
        """Give every free block back to the system."""
        with self._lock:
            self._collect(0)


def _new(dims: tuple[int, ...], dtype: np.dtype,
         request: tuple[tuple[int, ...], np.dtype] | None = None) -> np.ndarray:
    """``np.empty(dims, dtype)``, or a MemoryError naming the buffer asked for
    (``request``, when the array is a block for it)."""
    try:
        return np.empty(dims, dtype=dtype)
    except (MemoryError, ValueError) as exc:  # ValueError: more bytes than an address space
        wanted_dims, wanted_dtype = request or (dims, dtype)
        raise MemoryError(f"cannot allocate a {wanted_dtype} buffer of shape {wanted_dims}: {exc}") from None


POOL = BufferPool()
