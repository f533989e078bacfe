"""The caching allocator for large buffers (backend/buffer_pool.py): blocks come back
when the last array viewing them dies, are lent again for buffers of their size, and
are never lent while any array (a view, a DLPack export) still uses them."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend.buffer_pool import MIN_POOLED_BYTES, POOL

N = MIN_POOLED_BYTES // 8 + 1000  # float64 elements: a pooled result
BASE = np.arange(N, dtype=np.float64)


@pytest.fixture(autouse=True)
def empty_pool(monkeypatch):
    monkeypatch.delenv("PLAIDARRAY_POOL_BYTES", raising=False)
    POOL.clear()
    yield
    POOL.clear()


def _result(scale: float) -> np.ndarray:
    return np.asarray(xp.asarray(BASE) * scale)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_a_released_block_is_lent_again_for_the_same_size():
    first = _result(2.0)
    address = _address(first)
    del first
    second = _result(3.0)
    assert _address(second) == address
    np.testing.assert_array_equal(second, BASE * 3.0)


@pytest.mark.parametrize("keep", ["array", "strided view", "dlpack export", "plaidarray array"])
def test_a_block_is_never_lent_while_something_uses_it(keep):
    x = xp.asarray(BASE) * 2.0
    first = np.asarray(x)
    holder = {"array": first, "strided view": first[::3], "dlpack export": np.from_dlpack(x),
              "plaidarray array": x}.pop(keep)
    expected = np.array(holder)
    del first, x  # only the holder keeps the block lent
    gc.collect()
    others = [_result(float(k)) for k in range(3, 6)]
    for other in others:
        assert not np.shares_memory(other, holder)
    np.testing.assert_array_equal(holder, expected)


def test_free_blocks_are_capped_and_cleared(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_POOL_BYTES", str(3 * MIN_POOLED_BYTES))
    results = [_result(float(k)) for k in range(6)]  # six blocks of about MIN_POOLED_BYTES
    del results
    _result(7.0)  # returned blocks are collected at the next allocation, then trimmed
    assert 0 < POOL.free_bytes <= 3 * MIN_POOLED_BYTES
    xp.clear_cache()
    assert POOL.free_bytes == 0


def test_pool_bytes_zero_turns_pooling_off(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_POOL_BYTES", "0")
    first = _result(2.0)
    del first
    _result(3.0)
    assert POOL.free_bytes == 0


def test_a_bad_pool_size_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_POOL_BYTES", "lots")
    with pytest.raises(ValueError, match="PLAIDARRAY_POOL_BYTES"):
        _result(2.0)


def test_pooled_buffers_start_on_a_cache_line():
    for scale in (2.0, 3.0):
        assert _address(_result(scale)) % 64 == 0


def test_blocks_are_found_by_size_and_trimmed_oldest_first(monkeypatch):
    """Free blocks of two sizes: a buffer gets the block of its own size returned last,
    whatever came back in between; trimming drops the blocks returned longest ago, and
    forgets them by size too."""
    from plaidarray.backend.buffer_pool import BufferPool

    pool, f64 = BufferPool(), np.dtype(np.float64)
    small, large = (MIN_POOLED_BYTES // 8,), (3 * MIN_POOLED_BYTES // 8,)
    lent = [pool.empty(small, f64), pool.empty(large, f64), pool.empty(small, f64), pool.empty(large, f64)]
    addresses = [_address(a) for a in lent]
    for i in range(len(lent)):  # returned in this order
        lent[i] = None
    again = [pool.empty(small, f64), pool.empty(large, f64)]
    assert [_address(a) for a in again] == [addresses[2], addresses[3]]
    assert pool.free_bytes == 4 * MIN_POOLED_BYTES  # the first two blocks
    monkeypatch.setenv("PLAIDARRAY_POOL_BYTES", str(2 * MIN_POOLED_BYTES))
    pool.empty(large, f64)  # both free blocks go (the oldest first) before a large one is sought
    assert pool.free_bytes == 0
    pool.empty(small, f64)  # none is found by its size any more (a stale one would be lent twice)
    assert pool.free_bytes == 0


def test_temporaries_from_128_kib_come_from_the_pool(monkeypatch):
    """A run's temporary of 128 KiB or more is a pooled block, back in the pool after
    the run, while its result (under 1 MiB) is malloc's: freeing both together let glibc
    trim its heap and fault the pages in again at the next run (a two-op graph of 1e5
    float64 values, 500 us a run against 35 for one op)."""
    from plaidarray.backend.buffer_pool import MIN_POOLED_TEMP_BYTES
    from plaidarray.trace import hot

    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)  # op by op: x + x is a temporary

    n = MIN_POOLED_TEMP_BYTES // 8 + 512  # float64 elements: over the temporaries' bound, under the results'
    x = xp.asarray(np.arange(n, dtype=np.float64))
    result = np.asarray(x + x + x)
    np.testing.assert_array_equal(result, np.arange(n, dtype=np.float64) * 3)
    _result(1.0)  # collects what came back
    assert POOL.free_bytes >= n * 8
