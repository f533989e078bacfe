"""Reductions shared by a warp's lanes (``llvm_nvptx/warp_reductions.py``) compute the
host's bits: llvm-cpu's compiled code is the reference, on the simulated device (which
reports races and shuffles not all lanes reach). The lengths cross the host's blocks of
4096 elements and its cascade of block sums (two blocks and a tail, three and a tail),
and are odd, empty or of one element; the values hold what order would change: sums of
many magnitudes, -0.0 alone, NaN, infinities and zeros of both signs for max and min."""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend.llvm_cpu.compiler import CpuCompiler
from plaidarray.backend.llvm_nvptx import ptxas, toolkit
from plaidarray.backend.llvm_nvptx.compiler import NvptxCompiler
from plaidarray.backend.llvm_nvptx.simulated import SimulatedRuntime
from plaidarray.backend.llvm_nvptx.warp_reductions import BLOCK_WARPS

RNG = np.random.default_rng(40)
WARP = 32
RUN = 8 * 4096  # the elements of a run over the grid, where runs are few


def _mixed(n, dtype=np.float32):
    """Values of many magnitudes, so that a sum in another order has other bits."""
    return (RNG.standard_normal(n) * 10.0 ** RNG.integers(-3, 4, n)).astype(dtype)


def _runs_of_magnitudes(n, dtype=np.float32):
    """Values whose runs of eight blocks (a run of the grid) differ in magnitude, so that
    the runs' sums added in another order have other bits."""
    scale = np.repeat(10.0 ** RNG.integers(-4, 5, -(-n // RUN)), RUN)[:n]
    return (_mixed(n, np.float64) * scale).astype(dtype)


def _scales(rows):
    """A column of powers of ten, one a row."""
    return np.float32(10.0) ** RNG.integers(-6, 7, (rows, 1)).astype(np.float32)


def _special(n, dtype=np.float32):
    """Zeros of both signs and infinities among values, with a NaN."""
    x = RNG.choice(np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf], dtype), n)
    x[n // 3] = np.nan
    return x


def _softmax(x):
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    return e / xp.sum(e, axis=1, keepdims=True)


def _normalized(x):
    return (x - xp.mean(x, axis=1, keepdims=True)) / xp.sqrt(xp.var(x, axis=1, keepdims=True) + 1e-5)


def _integers(*shape, dtype=np.int32):
    return RNG.integers(-(2 ** 30), 2 ** 30, shape).astype(dtype)


#: name -> (function, argument): each a whole-array or a row reduction on warps.
CASES = {
    "f32 sum of none": (xp.sum, _mixed(0)),
    "f32 row sums of none": (lambda x: xp.sum(x, axis=1), _mixed(0).reshape(3, 0)),
    "f32 sum of one": (xp.sum, _mixed(1)),
    "f32 sum of 3 (fewer partials than lanes)": (xp.sum, _mixed(3)),
    "f32 sum of 1000": (xp.sum, _mixed(1000)),
    "f32 sum of one block": (xp.sum, _mixed(4096)),
    "f32 sum of a block and one": (xp.sum, _mixed(4097)),
    "f32 sum of two blocks and a tail": (xp.sum, _mixed(2 * 4096 + 803)),
    "f32 sum of three blocks and a tail": (xp.sum, _mixed(3 * 4096 + 77)),
    "f64 sum of two blocks and a tail": (xp.sum, _mixed(2 * 4096 + 515, np.float64)),
    "f32 sum of nine blocks and a tail (two rounds of the warps)": (xp.sum, _mixed(9 * 4096 + 123)),
    "f64 sum of seventeen blocks": (xp.sum, _mixed(17 * 4096, np.float64)),
    # runs of eight blocks over the grid first (five, four, two), then blocks and a tail
    "f32 sum of five runs, three blocks and a tail": (xp.sum, _runs_of_magnitudes(5 * RUN + 3 * 4096 + 77)),
    "f64 sum of five runs and a tail": (xp.sum, _runs_of_magnitudes(5 * RUN + 5, np.float64)),
    "f32 mean of four runs and one": (xp.mean, _runs_of_magnitudes(4 * RUN + 1)),
    "f32 product of two runs": (xp.prod, (1 + _mixed(2 * RUN) / 1e5).astype(np.float32)),
    "f32 sum of -0.0": (xp.sum, np.full(70, -0.0, np.float32)),
    "f32 product": (xp.prod, (1 + _mixed(3000) / 1e4).astype(np.float32)),
    "f64 product with inf and zeros": (xp.prod, _special(301, np.float64)[np.r_[0:100, 101:301]]),
    "f32 sum of a fused expression": (lambda x: xp.sum(x * 2.0 + 1.0), _mixed(5001)),
    "f32 sum of a matrix": (xp.sum, _mixed(3 * 1500).reshape(3, 1500)),
    "f32 sum of a matrix of long rows (rows over the grid)":
        (xp.sum, _mixed(19 * 4100).reshape(19, 4100) * np.float32(10.0) ** RNG.integers(-4, 5, (19, 1))),
    "f64 sum of a 3-d array (rows in rounds of the warps)": (xp.sum, _mixed(3 * 5 * 70, np.float64).reshape(3, 5, 70)),
    "f32 sum of rows of many magnitudes": (xp.sum, _mixed(40 * 100).reshape(40, 100) * _scales(40)),
    "f64 sum of rows of many magnitudes": (xp.sum, _mixed(33 * 65, np.float64).reshape(33, 65) * _scales(33)),
    "f32 mean of a matrix": (xp.mean, _mixed(17 * 9).reshape(17, 9)),
    "f32 max of a matrix": (xp.max, _special(20 * 33).reshape(20, 33)),
    "i64 sum of a matrix": (xp.sum, _integers(21, 40, dtype=np.int64)),
    "f32 sum of matrices of no rows and no columns": (lambda x: (xp.sum(x), xp.sum(x.T)), _mixed(0).reshape(0, 5)),
    "f32 row sums": (lambda x: xp.sum(x, axis=1), _mixed(9 * 301).reshape(9, 301)),
    "f64 row sums past a block": (lambda x: xp.sum(x, axis=1), _mixed(3 * 4201, np.float64).reshape(3, 4201)),
    # few rows of a round of blocks or more: a block of warps a row
    "f32 sums of few long rows": (lambda x: xp.sum(x, axis=1), _runs_of_magnitudes(3 * (9 * 4096 + 77)).reshape(3, -1)),
    "f64 sums of few long rows": (lambda x: xp.sum(x, axis=1), _runs_of_magnitudes(2 * 17 * 4096, np.float64).reshape(2, -1)),
    "f32 means and variances of few long rows": (lambda x: (xp.mean(x, axis=1), xp.var(x, axis=1)),
                                                 _mixed(2 * 8 * 4096).reshape(2, -1)),
    "f32 argmax of few long rows": (lambda x: xp.argmax(x, axis=1), _mixed(3 * 8 * 4096).reshape(3, -1)),
    "f32 row sums of one column": (lambda x: xp.sum(x, axis=1), _mixed(40).reshape(40, 1)),
    "f32 row products": (lambda x: xp.prod(x, axis=-1), (1 + _mixed(5 * 77) / 1e4).reshape(5, 77)),
    "f32 row means and variances": (lambda x: (xp.mean(x, axis=1), xp.var(x, axis=1)), _mixed(6 * 333).reshape(6, 333)),
    "f32 max with NaN": (xp.max, _special(5000)),
    "f32 min of zeros and infinities": (xp.min, _special(999)[np.r_[0:333, 334:999]]),
    "f64 row maxima of zeros": (lambda x: xp.max(x, axis=1), RNG.choice(np.array([0.0, -0.0]), (7, 65))),
    "f64 row minima": (lambda x: xp.min(x, axis=1), _special(8 * 130, np.float64).reshape(8, 130)),
    "i32 sum": (xp.sum, _integers(9000)),
    "i64 sum of few": (xp.sum, _integers(5, dtype=np.int64)),
    "i64 row sums that wrap": (lambda x: xp.sum(x, axis=1), _integers(4, 300, dtype=np.int64) << 33),
    "i32 row products": (lambda x: xp.prod(x, axis=1), RNG.integers(-3, 4, (5, 40)).astype(np.int32)),
    "i16 max and min": (lambda x: (xp.max(x), xp.min(x, axis=1)), _integers(20, 51).astype(np.int16)),
    "u8 row maxima": (lambda x: xp.max(x, axis=1), RNG.integers(0, 256, (6, 90)).astype(np.uint8)),
    "any and all": (lambda x: (xp.any(x, axis=1), xp.all(x)), RNG.random((5, 97)) < 0.99),
    # rows that also write their elements, in loops the lanes take in turn (lane_loops.py)
    "f32 softmax": (_softmax, _mixed(4 * 70).reshape(4, 70) / 100),
    "f32 softmax of rows past a block (through a temporary)": (_softmax, _mixed(3 * 4100).reshape(3, 4100) / 100),
    "f32 softmax of rows of 7 (fewer partials than lanes)": (_softmax, _mixed(5 * 7).reshape(5, 7) / 100),
    "f64 softmax": (_softmax, _mixed(6 * 33, np.float64).reshape(6, 33) / 100),
    "f32 rows normalized": (_normalized, _mixed(5 * 200).reshape(5, 200)),
    "f64 rows over their sums, reversed": (lambda x: xp.flip(x, axis=1) / xp.sum(x, axis=1, keepdims=True),
                                          _mixed(4 * 50, np.float64).reshape(4, 50)),
    # the exponentials are read back in reverse: every lane computes them all
    "f32 exponentials reversed over their sum": (
        lambda x: (lambda e: xp.flip(e, axis=1) / xp.sum(e, axis=1, keepdims=True))(xp.exp(x)),
        _mixed(5 * 30).reshape(5, 30) / 100),
}

def test_a_row_takes_a_warp_and_a_whole_array_a_block_of_warps():
    x = _mixed(4 * 50).reshape(4, 50)
    assert [s.lanes for s in _run(lambda x: xp.sum(x, axis=1), x).steps] == [WARP]
    assert [s.lanes for s in _run(xp.sum, x).steps] == [WARP * BLOCK_WARPS]


def test_few_long_rows_take_a_block_of_warps_each():
    def lanes(shape):
        module = xp.jit(lambda x: xp.sum(x, axis=1)).lower(xp.asarray(np.zeros(shape, np.float32))).module
        return [s.lanes for s in NvptxCompiler(SimulatedRuntime()).compile(module).steps]
    assert lanes((3, 8 * 4096)) == [WARP * BLOCK_WARPS]
    assert lanes((3, 8 * 4096 - 1)) == lanes((65, 8 * 4096)) == [WARP]


def test_a_matrix_sums_its_rows_over_the_grid_first():
    assert [(s.lanes, s.runs) for s in _run(xp.sum, _mixed(5 * 7).reshape(5, 7)).steps] == [(WARP * BLOCK_WARPS, 5)]
    assert [(s.lanes, s.runs) for s in _run(xp.sum, _mixed(60).reshape(3, 4, 5)).steps] == [(WARP * BLOCK_WARPS, 0)]


@pytest.mark.parametrize(("n", "runs"), [(2 * RUN - 1, 0), (2 * RUN, 2), (5 * RUN + 3 * 4096 + 77, 5)])
def test_a_long_whole_array_sum_computes_runs_over_the_grid_first(n, runs):
    executable = _run(xp.sum, _runs_of_magnitudes(n))
    assert [(s.lanes, s.runs) for s in executable.steps] == [(WARP * BLOCK_WARPS, runs)]


#: A column reduction runs a thread a column: its loads are coalesced already, and the
#: host adds a column's elements one after another.
THREAD_CASES = {
    "column sums": (lambda x: xp.sum(x, axis=0), _mixed(65 * 19).reshape(65, 19)),
}


def _bits(a: np.ndarray) -> np.ndarray:
    """The bits of ``a``, every NaN as one: a NaN of PTX's ``max.NaN`` and ``min.NaN`` is
    the canonical one, 0x7fffffff, where the host's keeps its operand's (on a thread an
    iteration as on a warp)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind not in "fc":
        return a
    return np.where(np.isnan(a), a.dtype.type(np.nan), a).view(f"u{a.dtype.itemsize}")


def _run(fn, x):
    lowered = xp.jit(fn).lower(xp.asarray(x))
    args = [x, *lowered.constants]
    want = CpuCompiler().compile(lowered.module).run([np.ascontiguousarray(a) for a in args])
    executable = NvptxCompiler(SimulatedRuntime()).compile(lowered.module)
    got = executable.run_on_host([np.ascontiguousarray(a) for a in args])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(_bits(g), _bits(w))
    return executable


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_reduction_on_a_warp_computes_the_hosts_bits(name):
    executable = _run(*CASES[name])
    assert [s.lanes for s in executable.steps if s.lanes > 1], "the reduction ran on warps"
    assert {s.lanes for s in executable.steps} <= {1, WARP, WARP * BLOCK_WARPS}


@pytest.mark.parametrize("name", sorted(THREAD_CASES))
def test_column_reductions_run_a_thread_an_iteration(name):
    executable = _run(*THREAD_CASES[name])
    assert all(s.lanes == 1 for s in executable.steps)


def test_a_loop_that_reads_back_another_element_keeps_a_thread():
    """A cumulative sum reads the element before the one it writes: no lanes can take its
    loop in turn, and its kernel stays a thread's; the division by the rows' sums after it
    is a warp's (docs/gpu.md)."""
    executable = _run(lambda x: xp.cumulative_sum(x, axis=1) / xp.sum(x, axis=1, keepdims=True),
                      _mixed(5 * 30).reshape(5, 30))
    assert [s.lanes for s in executable.steps] == [1, WARP]


@pytest.mark.skipif(toolkit.ptxas() is None, reason=f"ptxas is not installed ({toolkit.INSTALL_HINT})")
@pytest.mark.parametrize("architecture", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_warp_kernels_pass_ptxas_without_spills(name, architecture):
    fn, x = CASES[name]
    executable = NvptxCompiler(SimulatedRuntime(architecture)).compile(xp.jit(fn).lower(xp.asarray(x)).module)
    _, reports = ptxas.assemble(executable.ptx, architecture)
    for report in reports:
        assert report.spill_stores == 0 and report.spill_loads == 0, report
