"""Kernels split across threads give the same bits as on one thread.

``PLAIDARRAY_NUM_THREADS`` is read at each run, so one compiled executable runs here
with 1, 2, 3 and 5 threads (more threads than cores is fine: chunks just share them).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import plaidarray as xp
from plaidarray.backend.llvm_cpu import parallel
from plaidarray.backend.llvm.emitter import Segment

THREADS = [2, 3, 5]
rng = np.random.default_rng(7)
A = rng.standard_normal((300, 701))
B = rng.standard_normal((300, 701)).astype(np.float32)
M = rng.standard_normal((256, 300))

CASES = {
    "elementwise chain": lambda: xp.exp(xp.asarray(B)) * xp.sin(xp.asarray(B) * 3) + xp.tanh(xp.asarray(B)),
    "broadcast add": lambda: xp.asarray(A[:, :1]) + xp.asarray(A[0]),
    "sum axis 0": lambda: xp.sum(xp.asarray(A), axis=0),
    "sum axis 1": lambda: xp.sum(xp.asarray(A), axis=1),
    "mean of squares, both axes": lambda: xp.mean(xp.asarray(A) ** 2),
    "softmax": lambda: _softmax(xp.asarray(B)),
    "matmul": lambda: xp.asarray(M) @ xp.asarray(A),
    "integer matmul": lambda: xp.asarray(M.astype(np.int64)) @ xp.asarray(A.astype(np.int64)),
    "max axis 1": lambda: xp.max(xp.asarray(A), axis=1),
    "cumulative sum": lambda: xp.cumulative_sum(xp.asarray(A), axis=1),
    "argsort": lambda: xp.argsort(xp.asarray(A), axis=1),
    "where": lambda: xp.where(xp.asarray(A) > 0, xp.asarray(A), 0.01 * xp.asarray(A)),
}


def _softmax(x):
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    return e / xp.sum(e, axis=1, keepdims=True)


def _run(case: str, threads: int, monkeypatch) -> np.ndarray:
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", str(threads))
    return np.asarray(CASES[case]())


@pytest.mark.parametrize("case", list(CASES))
def test_results_are_identical_for_any_thread_count(case, monkeypatch):
    one = _run(case, 1, monkeypatch)
    for threads in THREADS:
        np.testing.assert_array_equal(_run(case, threads, monkeypatch), one, strict=True,
                                      err_msg=f"{case} with {threads} threads")


def _chunked_extents(case: str, monkeypatch) -> list[int]:
    """The loop extents that ran in chunks while computing ``case`` on 4 threads."""
    split = []
    real = parallel.chunks
    monkeypatch.setattr(parallel, "chunks", lambda extent, parts: split.append(extent) or real(extent, parts))
    _run(case, 4, monkeypatch)
    return split


def test_large_independent_loops_are_split(monkeypatch):
    assert _chunked_extents("elementwise chain", monkeypatch) == [300]
    assert _chunked_extents("sum axis 0", monkeypatch)  # the parallel loop is inside the reduction loop
    assert _chunked_extents("integer matmul", monkeypatch)  # a loop nest


def test_scans_sorts_blas_and_small_problems_stay_on_one_thread(monkeypatch):
    assert _chunked_extents("cumulative sum", monkeypatch) == []
    assert _chunked_extents("argsort", monkeypatch) == []
    assert _chunked_extents("matmul", monkeypatch) == []  # BLAS runs on threads of its own
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "4")
    split = []
    monkeypatch.setattr(parallel, "chunks", lambda extent, parts: split.append(extent) or [(0, extent)])
    np.asarray(xp.asarray(A[:50, :50]) * 2.0)
    assert split == []


def test_chunks_cover_the_range_in_order():
    assert parallel.chunks(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert parallel.chunks(2, 2) == [(0, 1), (1, 2)]


def test_bad_thread_count_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "many")
    with pytest.raises(ValueError, match="PLAIDARRAY_NUM_THREADS"):
        np.asarray(xp.asarray(B) + 1.0)


def test_inner_loops_run_in_one_wide_chunk_per_thread():
    """A chunk of a loop inside another (``sum(x, axis=0)``: columns inside the rows)
    walks memory with a stride, so each thread takes one chunk, not several."""
    outermost, inner = Segment(4096, 1 << 24, depth=0), Segment(4096, 1 << 24, depth=1)
    assert parallel._parts(outermost, 4) == 4 * parallel.CHUNKS_PER_THREAD > 4
    assert parallel._parts(inner, 4) == 4


@given(st.integers(0, 1 << 20), st.integers(0, 1 << 22), st.integers(0, 3))
@example(2, 2 * parallel.MIN_PARALLEL_WORK, 0)
@example(2, 2 * parallel.MIN_PARALLEL_WORK - 1, 1)
@example(1, 1 << 22, 0)
def test_worth_splitting_is_whether_a_segment_splits_on_two_threads(extent, work, depth):
    """``worth_splitting`` reads a segment's bounds directly (a binding asks it at every new
    size): it answers as ``_parts`` does on two threads, the smallest split there is."""
    segment = Segment(extent, work, depth)
    assert parallel.worth_splitting([Segment(1, 1, 0), segment]) == (parallel._parts(segment, 2) > 1)
