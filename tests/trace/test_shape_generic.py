"""Shape-generic executables (``trace/dynamic.py``, ``hlo/symbolic.py``): a graph structure
compiled again only because its sizes changed is compiled once with run-time sizes, and
that executable serves every later size. Loops whose shapes change at every step compile
their body a bounded number of times and compute what NumPy computes."""

from __future__ import annotations

import logging

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plaidarray as xp
from plaidarray.trace import cuts, dynamic

pytestmark = [pytest.mark.skipif("llvm-cpu" not in xp.backends(), reason="the compiled backend is not installed"),
              pytest.mark.usefixtures("fused")]  # what compiles, and how often

#: Compiles a loop body may take whatever the number of steps: its first sizes, then the
#: shape-generic executable (and, where a size passes through 0 or 1, those sizes).
BODY_COMPILES = 3


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", "0")  # compiled here, not loaded from an earlier test
    xp.set_backend("llvm-cpu")
    xp.clear_cache()
    dynamic.HISTORIES.clear()
    for name, value in (("_anchor", None), ("_anchor_dims", ()), ("_changing", False), ("_loop_changes", False), ("_since_read", False)):
        monkeypatch.setattr(cuts, name, value)  # no cut point left by an earlier test's loop
    yield
    xp.set_backend(None)


def _compiles() -> int:
    return xp.cache_info().compiles


def test_appending_a_row_per_step_for_1000_steps():
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((1000, 3))
    a, expected = xp.zeros((0, 3)), np.zeros((0, 3))
    totals, want = [], []
    for row in rows:
        a = xp.concat([a, xp.asarray(row)[None, :]], axis=0)
        expected = np.concatenate([expected, row[None, :]])
        totals.append(float(xp.sum(a * a)))
        want.append(float(np.sum(expected * expected)))
    np.testing.assert_allclose(totals, want, rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(a), expected)
    assert _compiles() <= BODY_COMPILES


def test_statistics_over_1000_windows_of_varying_length():
    rng = np.random.default_rng(1)
    data = rng.standard_normal(4000)
    x = xp.asarray(data)
    got, want = [], []
    for i in range(1000):
        start, length = (i * 7) % 1500, 2 + (i * 13) % 997
        w, v = x[start:start + length], data[start:start + length]
        got.append(float(xp.mean(w) + xp.std(w) - xp.max(w)))
        want.append(float(v.mean() + v.std() - v.max()))
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)
    assert _compiles() <= BODY_COMPILES


def test_ragged_chunks_and_a_smaller_last_batch():
    rng = np.random.default_rng(2)
    data = rng.standard_normal((1003, 5))
    weights = rng.standard_normal((5, 4))
    x, w = xp.asarray(data), xp.asarray(weights)
    bounds = np.cumsum([0, *rng.integers(2, 40, 60)])
    bounds = bounds[bounds < len(data)].tolist() + [len(data)]
    for lo, hi in zip(bounds, bounds[1:]):
        got = np.asarray(xp.tanh(x[lo:hi] @ w) - xp.mean(x[lo:hi], axis=0)[:5, None].T[:, :4])
        want = np.tanh(data[lo:hi] @ weights) - data[lo:hi].mean(axis=0)[:5, None].T[:, :4]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    for batch in range(0, 1003, 64):  # the last batch is smaller
        got = float(xp.sum(xp.exp(x[batch:batch + 64]) * 0.5))
        np.testing.assert_allclose(got, np.sum(np.exp(data[batch:batch + 64]) * 0.5), rtol=1e-12)
    assert _compiles() <= 2 * BODY_COMPILES


def test_sizes_through_zero_and_one_after_the_generic_compile():
    """Sizes 0 and 1 are compiled for themselves (a unit dimension broadcasts): before and
    after the shape-generic executable exists, they compute what NumPy computes."""
    data = np.arange(40.0)
    x = xp.asarray(data)
    for n in [5, 9, 1, 0, 17, 1, 2, 0, 33]:
        np.testing.assert_allclose(np.asarray(xp.cumulative_sum(x[:n] * 2.0)), np.cumsum(data[:n] * 2.0))
        np.testing.assert_allclose(float(xp.sum(x[:n] - 1.0)), np.sum(data[:n] - 1.0))


def test_sizes_that_were_equal_by_chance_are_split():
    """Two sizes equal in the first graphs (a slice's start and its length) share a symbol
    until a graph where they differ; that graph widens the pattern, never reads the
    wrong size."""
    data = np.arange(300.0)
    x = xp.asarray(data)
    for start, length in [(3, 3), (5, 5), (7, 7), (4, 9), (11, 2), (6, 6)]:
        got = np.asarray(x[start:start + length] * 3.0)
        np.testing.assert_array_equal(got, data[start:start + length] * 3.0)


def test_a_column_loop_compiles_its_body_once_for_all_columns():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((50, 40)) * 3.0 + 1.0
    x = xp.asarray(m)
    out = xp.zeros_like(x)
    for j in range(40):
        col = x[:, j]
        out[:, j] = (col - xp.mean(col)) / xp.std(col)
    np.testing.assert_allclose(np.asarray(out), (m - m.mean(0)) / m.std(0), rtol=1e-12)
    assert _compiles() <= 2 * BODY_COMPILES


def test_masks_and_nonzero_of_a_changing_count_compile_their_body_a_bounded_number_of_times():
    """A boolean mask's selection, and ``nonzero``, have as many elements as the mask has
    true values: a new size at nearly every step, through ``searchsorted``."""
    rng = np.random.default_rng(9)
    data = rng.standard_normal(3000)
    x = xp.asarray(data)
    for i in range(300):
        t = -1.0 + i * 0.007
        np.testing.assert_allclose(float(xp.sum(x[x > t] ** 2)), np.sum(data[data > t] ** 2), rtol=1e-12)
        (found,) = xp.nonzero(x < t)
        np.testing.assert_array_equal(np.asarray(found), np.nonzero(data < t)[0])
    assert _compiles() <= 2 * BODY_COMPILES


def test_a_list_stacked_at_every_step_for_1000_steps():
    """``rows.append(v); m = xp.stack(rows)``: one operand more at each step, recorded as
    the last result and the new row (``api/extended.py``), not a wider op each step."""
    rng = np.random.default_rng(11)
    data = rng.standard_normal((1000, 4))
    x = xp.asarray(data)
    rows, got, want = [], [], []
    for i in range(1000):
        rows.append(x[i] * 2.0)
        got.append(float(xp.sum(xp.stack(rows)[:, 1:3])))
        want.append(float(np.sum(data[:i + 1, 1:3] * 2.0)))
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert _compiles() <= BODY_COMPILES


def test_a_concatenation_of_a_thousand_operands_shares_its_copies_kernel():
    """A small graph compiles with every size a run-time value, so each operand's length
    is a symbol of its own. Each copy's offset is one value of the dims table (the last
    offset plus a length, computed when the executable is bound): the copies are one
    kernel, and the next lengths bind. As the sum of every length before it, the
    offsets of n operands held n^2 / 2 terms, each copy was a kernel of its own, and
    at a thousand operands (SciPy's ``permutation_test`` with ``batch=1``) building
    their affine expressions recursed past Python's limit."""
    rng = np.random.default_rng(12)
    for step in range(2):
        lengths = rng.integers(1, 4, 1000)
        parts = [rng.standard_normal(int(n)) for n in lengths]
        compiles, kernels = _compiles(), xp.cache_info().kernel_compiles
        got = np.asarray(xp.concat([xp.asarray(p) for p in parts]) * 2.0)
        np.testing.assert_array_equal(got, np.concatenate(parts) * 2.0)
        assert _compiles() - compiles == (1 if step == 0 else 0)  # compiled once, then bound
        assert xp.cache_info().kernel_compiles - kernels <= 4


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_in_a_sorted_array_of_changing_length(side):
    """The search's number of halvings follows the sorted array's run-time length."""
    rng = np.random.default_rng(10)
    data = np.sort(rng.integers(0, 50, 2000)).astype(np.float64)
    data[-3:] = np.nan  # NaN sorts last
    probes = np.array([-1.0, 0.0, 3.0, 17.5, 25.0, 49.0, 60.0, np.nan])
    x, v = xp.asarray(data), xp.asarray(probes)
    for n in (2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 64, 65, 1000, 1024, 1025, 1999, 2000):
        got = np.asarray(xp.searchsorted(x[:n], v, side=side))
        np.testing.assert_array_equal(got, np.searchsorted(data[:n], probes, side=side), err_msg=f"n={n}")
    assert _compiles() <= BODY_COMPILES


_UNARY = {"exp": (xp.exp, np.exp), "negative": (xp.negative, np.negative), "abs": (xp.abs, np.abs)}


def _program(lib, x, m, spec):
    """A small program over a vector ``x`` and a matrix ``m`` whose sizes vary."""
    op, axis, offset, reverse = spec
    unary = _UNARY[op][0 if lib is xp else 1]
    y = unary(x[offset:]) * 2.0 + 1.0
    if reverse:
        y = lib.flip(y)
    s = lib.sum(m, axis=axis)
    t = lib.concat([y, s], axis=0)
    return lib.reshape(t, (-1, 1)) + lib.max(t)


@settings(max_examples=15, deadline=None)
@given(spec=st.tuples(st.sampled_from(sorted(_UNARY)), st.integers(0, 1), st.integers(0, 3), st.booleans()),
       sizes=st.lists(st.tuples(st.integers(0, 40), st.integers(1, 9), st.integers(1, 9)), min_size=2, max_size=6))
def test_programs_over_changing_sizes_equal_numpy(spec, sizes):
    xp.clear_cache()
    dynamic.HISTORIES.clear()
    rng = np.random.default_rng(4)
    for n, r, c in sizes:
        vector, matrix = rng.standard_normal(n + 4), rng.standard_normal((r, c))
        got = np.asarray(_program(xp, xp.asarray(vector), xp.asarray(matrix), spec))
        np.testing.assert_allclose(got, _program(np, vector, matrix, spec), rtol=1e-12, atol=1e-12)


def test_a_batched_matrix_product_of_changing_sizes():
    rng = np.random.default_rng(5)
    for b, n, k in [(2, 3, 4), (3, 5, 2), (2, 7, 6), (4, 2, 3)]:
        a, c = rng.standard_normal((b, n, k)), rng.standard_normal((b, k, n + 1))
        np.testing.assert_allclose(np.asarray(xp.asarray(a) @ xp.asarray(c)), a @ c, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(xp.asarray(a).mT @ xp.asarray(a)), a.transpose(0, 2, 1) @ a,
                                   rtol=1e-12)
    assert _compiles() <= 2 * BODY_COMPILES


def test_a_structure_with_an_op_that_needs_static_sizes_compiles_per_shape():
    """The FFT's kernels are generated per length: a graph with one keeps compiling per
    shape, and computes what NumPy does."""
    rng = np.random.default_rng(6)
    for n in (8, 12, 16, 20):
        z = rng.standard_normal(n)
        np.testing.assert_allclose(np.asarray(xp.fft.rfft(xp.asarray(z) * 2.0)), np.fft.rfft(z * 2.0), atol=1e-12)
    assert _compiles() == 4


def test_a_shape_generic_executable_takes_no_sizes_past_its_limits():
    from plaidarray.backend.llvm_cpu.executable import ShapeGenericExecutable
    from plaidarray.hlo.symbolic import Sym

    n = Sym(0, 5)
    template = ShapeGenericExecutable([], 0, [], [], [], [], [(n * 3, 100)])
    assert template.bind([33]) is not None
    assert template.bind([34]) is None


def test_a_binding_makes_its_steps_from_its_own_ranges():
    """A binding keeps its sized steps' ranges as numbers; the steps it makes of them when
    asked (threads run steps from Python, ``_run_steps``) are the template's with those
    ranges, and its plan for C, the template's for every binding, reads the same extents
    from the binding's dims table (a negative stop -1 - k: entry k)."""
    from types import SimpleNamespace

    from plaidarray.backend.llvm_cpu.executable import ShapeGenericExecutable, Step
    from plaidarray.backend.llvm.kernel_source import Segment
    from plaidarray.hlo.symbolic import Sym

    n = Sym(0, 5)
    kernel = SimpleNamespace(upgrade=None, address=4096)
    steps = [Step(kernel, (0,), Segment(n, n * 4, 0), (), ()), Step(kernel, (0,), Segment(3, 3, 1), (), ())]
    template = ShapeGenericExecutable(steps, 1, [], [], [], [])
    for size in (7, 9):
        bound = template.bind([size])
        assert bound.steps == (Step(kernel, (0,), Segment(size, size * 4, 0), (), ()), steps[1])
        bound._read_addresses()
        words = np.frombuffer(bound._plan, dtype=np.int64)
        dims = np.frombuffer(bound._dims, dtype=np.int64)
        stop, static_stop = words[[2, 9]]  # each step's range: after its address and a 0, 7 words a step
        assert stop < 0 and dims[-1 - stop] == size and static_stop == 3
        other = template.bind([size + 1])
        other._read_addresses()
        assert other._plan is bound._plan


def test_a_merged_sequence_checks_each_limit_once_at_its_least():
    """Ops of a sequence (``sequence.merge``) limit the same size: the merged executable
    evaluates it once a binding, against the least of their limits."""
    from plaidarray.backend.executable import Call
    from plaidarray.backend.llvm_cpu.executable import ShapeGenericExecutable
    from plaidarray.backend.llvm_cpu.sequence import merge
    from plaidarray.hlo.shape import Shape
    from plaidarray.hlo.symbolic import Sym

    n = Sym(0, 5)
    x = Shape((n,), np.dtype(np.float64))  # type: ignore[arg-type]  # a run-time size
    parts = [ShapeGenericExecutable([], 1, [], [("out", 0)], [x], [], [(n * 3, limit)]) for limit in (100, 60)]
    calls = [Call(parts[0], (0,), ((),), (1,), (n,)), Call(parts[1], (1,), ((),), (2,), (n,))]
    merged = merge(calls, 1, [], [x, x], [2], n_symbols=1)
    assert isinstance(merged, ShapeGenericExecutable)
    assert merged.limits == ((n * 3, 60),)
    assert merged.bind([20]) is not None and merged.bind([21]) is None


def test_jit_compiles_once_more_for_new_sizes_or_as_asked():
    def body(x, y):
        return xp.sum(xp.exp(x) * 2.0, axis=0) + y[:3]

    rng = np.random.default_rng(7)
    for mode, compiles in ((None, 2), (True, 1), (False, 4)):
        xp.clear_cache()
        dynamic.HISTORIES.clear()
        f = xp.jit(body, dynamic=mode)
        for n in (4, 5, 6, 9):
            a, b = rng.standard_normal((n, 3)), rng.standard_normal(n + 2)
            np.testing.assert_allclose(np.asarray(f(xp.asarray(a), xp.asarray(b))), np.exp(a).sum(0) * 2 + b[:3],
                                       rtol=1e-13)
        assert f.cache_info().misses == 4  # every shape is traced...
        assert _compiles() == compiles, mode  # ...and compiled only while needed


def test_a_loop_that_never_reads_compiles_its_body_a_bounded_number_of_times():
    """k-means without a read in the loop: graphs are cut past the pending bound where the
    loop's structure recurs (``trace/cuts.py``), so however many iterations run, the same
    few graphs compile."""
    rng = np.random.default_rng(8)
    points = rng.standard_normal((500, 2)) + rng.integers(0, 3, (500, 1)) * 4.0
    for iterations in (15, 40):
        xp.clear_cache()
        dynamic.HISTORIES.clear()
        centers, expected = xp.asarray(points[:3].copy()), points[:3].copy()
        p = xp.asarray(points)
        for _ in range(iterations):
            labels = xp.argmin(xp.sum((p[:, None, :] - centers[None, :, :]) ** 2, axis=2), axis=1)
            centers = xp.stack([xp.sum(p * xp.astype(labels == k, xp.float64)[:, None], axis=0)
                                / xp.sum(xp.astype(labels == k, xp.float64)) for k in range(3)])
            near = np.argmin(((points[:, None, :] - expected[None]) ** 2).sum(2), axis=1)
            expected = np.stack([points[near == k].mean(0) for k in range(3)])
        np.testing.assert_allclose(np.asarray(centers), expected, rtol=1e-10)
        assert _compiles() <= 4, iterations


def test_a_history_grown_without_reads_compiles_every_size_at_run_time(caplog):
    """A loop that grows an array and never reads: its graphs are cut past the pending
    bound, and each compiles with every size a run-time value (``cuts.sizes_changing``)
    rather than for its own sizes first: the first because it holds the cut node's
    signature at other dimensions (an earlier iteration), the second because it is cut at
    the same node with other dimensions; that one serves every later graph, and the final
    read, shape-generic too, holds iterations whose kernel groups the loop's graphs lowered
    already. Run again, the loop compiles nothing, and a graph read after it is no part of
    it."""
    caplog.set_level(logging.INFO, logger="plaidarray.compiles")
    rng = np.random.default_rng(12)
    steps = rng.standard_normal((1000, 3)) * 0.1
    s = xp.asarray(steps)
    for _ in range(2):
        h, expected = xp.zeros((1, 3)), np.zeros((1, 3))
        for i in range(1000):
            h = xp.concat([h, xp.tanh(h[-1:, :] + s[i:i + 1, :])], axis=0)
            expected = np.concatenate([expected, np.tanh(expected[-1:, :] + steps[i:i + 1, :])], axis=0)
        np.testing.assert_allclose(np.asarray(xp.sum(h, axis=0)), expected.sum(0), rtol=1e-12)
        assert _compiles() <= 3
    assert float(xp.max(s[:7] * 3.0)) == np.max(steps[:7] * 3.0)
    assert [("cut at PLAIDARRAY_MAX_PENDING" in r.message, dynamic.CUT_LOOP in r.message) for r in caplog.records] == [
        (True, True), (True, True), (False, True), (False, False)]


def test_a_loop_from_pending_initial_values_is_cut_after_its_first_iterations(caplog):
    """A running total from ``zeros``, never read: cut at the first node past the bound,
    the first graph would hold the pending zeros and a bound's worth of additions, code
    that no later graph runs (they start from the last cut's value). It is cut at the
    earliest recurrence of that node instead, so it is small, and every later cut graph
    has one structure; run again, the loop compiles nothing."""
    caplog.set_level(logging.INFO, logger="plaidarray.compiles")
    parts = np.random.default_rng(14).standard_normal((100, 50))
    p = [xp.asarray(part) for part in parts]
    expected = np.zeros(50)
    for part in parts:
        expected = expected + part
    for run in range(2):
        total = xp.zeros(50)
        for part in p:
            total = total + part
        np.testing.assert_array_equal(np.asarray(total), expected)
        if run == 0:
            cut = [int(r.message.split("graph of ")[1].split()[0]) for r in caplog.records
                   if "cut at PLAIDARRAY_MAX_PENDING" in r.message]
            assert cut and cut[0] <= 8  # the zeros and the first additions
            compiles = _compiles()
    assert compiles == 3  # the first graph, the loop's cut graphs, the final read
    assert _compiles() == compiles


def test_a_loop_after_another_loops_cut_point_compiles_three_graphs(monkeypatch):
    """A loop recorded after another loop was cut elsewhere meets that cut point nowhere:
    its first graph runs at twice the bound, and is cut where the rest of it is within
    the bound, so the next graph is already one of the loop's later ones (cut at its
    first iteration, it held more than they do, and compiled once more)."""
    monkeypatch.setattr(cuts, "_anchor", ("another loop's cut point",))
    x, expected = xp.ones(8), np.ones(8)
    for _ in range(1000):
        x = x * 0.999 + 0.001
        expected = expected * 0.999 + 0.001
    np.testing.assert_allclose(np.asarray(x), expected, rtol=1e-12)
    assert _compiles() == 3  # the first graph, the loop's cut graphs, the final read


@pytest.mark.parametrize(("grows", "changing"), [(True, True), (False, False)])
def test_the_first_cut_of_a_loop_knows_whether_its_sizes_change(monkeypatch, grows, changing):
    """The first graph cut past the pending bound has no earlier cut to compare with; it is
    shape-generic at once when it holds the cut node's signature at other dimensions (an
    earlier iteration of a loop whose sizes change), and compiles for its own sizes when
    every earlier iteration had the same."""
    from plaidarray.trace import node as node_module

    monkeypatch.setattr(node_module, "MAX_PENDING", 16)  # the first graph holds several iterations
    h = xp.zeros((1, 2))
    row = xp.asarray(np.array([[0.5, -0.25]]))
    for _ in range(20):
        h = xp.concat([h, h[-1:, :] * 0.5 + row], axis=0) if grows else h * 0.5 + row
        if cuts._anchor is not None:
            break
    assert cuts._anchor is not None
    assert cuts._changing is changing


def test_a_small_graph_is_shape_generic_from_its_first_compile(caplog):
    """A small graph's first compile makes its sizes run-time values (its first-tier code
    is the same unoptimised loops either way), so every later size binds it; a graph with
    an op whose code is made for its sizes (an FFT) compiles for them, without first
    trying, and failing, a shape-generic compile."""
    caplog.set_level(logging.INFO, logger="plaidarray.compiles")
    rng = np.random.default_rng(13)
    data = rng.standard_normal(3000)
    x = xp.asarray(data)
    for n in range(2, 1002):
        assert float(xp.sum(xp.abs(x[:n]) * 0.5)) == pytest.approx(float(np.sum(np.abs(data[:n]) * 0.5)), rel=1e-12)
    assert _compiles() == 1
    assert "shape-generic: a small graph" in caplog.records[0].message
    caplog.clear()
    for n in (16, 24):
        np.testing.assert_allclose(np.asarray(xp.fft.fft(x[:n] * 2.0)), np.fft.fft(data[:n] * 2.0), rtol=1e-10, atol=1e-12)
    assert _compiles() == 3
    assert not any("shape-generic" in r.message or "per shape from now on" in r.message for r in caplog.records)


EMPTY_SIZE_CASES = {
    # name: (a graph of x[:n] (2-d: n rows of 3) and y[:n] (1-d), its NumPy twin)
    "elementwise, reduction": (lambda xp_, x, y: xp_.sum(xp_.exp(-y * y) * 2.0 + 1.0),
                               lambda x, y: np.sum(np.exp(-y * y) * 2.0 + 1.0)),
    "mean and std (NaN)": (lambda xp_, x, y: (y - xp_.mean(y)) / (xp_.std(y) + 1e-9),
                           lambda x, y: (y - np.mean(y)) / (np.std(y) + 1e-9)),
    "rows reduced": (lambda xp_, x, y: xp_.max(x, axis=1) + xp_.sum(x * x, axis=1),
                     lambda x, y: np.max(x, axis=1) + np.sum(x * x, axis=1)),
    "concat, flip, transpose": (lambda xp_, x, y: xp_.concat([xp_.flip(x, axis=0), x * 2.0], axis=0).T,
                                lambda x, y: np.concatenate([np.flip(x, axis=0), x * 2.0], axis=0).T),
    "reshape, broadcast, compare": (lambda xp_, x, y: xp_.where(xp_.reshape(x, (-1,)) > 0.0, 1.0, -1.0)
                                    + xp_.sum(xp_.reshape(y, (1, -1)) * xp_.ones((3, 1)), axis=1)[0],
                                    lambda x, y: np.where(x.reshape(-1) > 0.0, 1.0, -1.0)
                                    + np.sum(y.reshape(1, -1) * np.ones((3, 1)), axis=1)[0]),
    "a library call (nonempty_ops)": (lambda xp_, x, y: y @ y + 1.0, lambda x, y: y @ y + 1.0),
}


@pytest.mark.parametrize("case", sorted(EMPTY_SIZE_CASES))
def test_a_size_of_0_runs_the_shape_generic_code_where_its_ops_take_it(case):
    """An empty chunk or selection in a loop binds the shape-generic executable its other
    sizes compiled, where every op's code runs no iteration with a size of 0
    (``Compiler.empty_sizes``); a graph with an op whose code needs sizes of at least 1
    (a BLAS call's leading dimension: ``Compiler.nonempty_ops``) compiles for the empty
    size. Either way the results are NumPy's, NaN for an empty mean."""
    ours, numpy_ = EMPTY_SIZE_CASES[case]
    rng = np.random.default_rng(15)
    xs, ys = rng.standard_normal((40, 3)), rng.standard_normal(40)
    x, y = xp.asarray(xs), xp.asarray(ys)
    with np.errstate(all="ignore"):
        for n in (5, 9, 0, 7, 0):
            np.testing.assert_allclose(np.asarray(ours(xp, x[:n], y[:n])), numpy_(xs[:n], ys[:n]), rtol=1e-12,
                                       equal_nan=True)
            if n == 9:
                compiles = _compiles()
    nonempty = case == "a library call (nonempty_ops)"
    assert _compiles() == compiles + nonempty


def test_structures_that_compile_per_shape_are_remembered_within_the_bound():
    """A program meeting ever new structures with an FFT in them marks each per-shape when
    it is first seen; the histories keep the most recent ``kept`` of them, as they do
    patterns, so such a program does not grow them."""
    histories = dynamic.Histories(4)
    for structure in range(10):
        histories.static_only(structure)
        assert histories.static(structure)
    assert [histories.new(s) for s in range(10)] == [True] * 6 + [False] * 4


def _history_kernel_compiles(columns: int) -> int:
    """Kernels compiled by a history grown for 40 steps without reads (cut graphs), from
    a fresh cache, checked against NumPy."""
    xp.clear_cache()
    dynamic.HISTORIES.clear()
    steps = np.random.default_rng(columns).standard_normal((40, columns)) * 0.1
    s = xp.asarray(steps)
    h, expected = xp.zeros((1, columns)), np.zeros((1, columns))
    for i in range(40):
        h = xp.concat([h, xp.tanh(h[-1:, :] + s[i:i + 1, :])], axis=0)
        expected = np.concatenate([expected, np.tanh(expected[-1:, :] + steps[i:i + 1, :])], axis=0)
    np.testing.assert_allclose(np.asarray(xp.sum(h, axis=0)), expected.sum(0), rtol=1e-12)
    return xp.cache_info().kernel_compiles


def test_sizes_equal_by_chance_do_not_share_a_symbol(monkeypatch):
    """A growing history's rows pass its column count in one graph; tied by value (duck
    sizing) they would share a symbol there, and that graph's kernels would differ from
    every other graph's. Tied only where shape rules make them equal, the loop compiles
    the same kernels whether or not its rows ever equal its columns."""
    monkeypatch.setenv("PLAIDARRAY_MAX_PENDING", "60")
    assert _history_kernel_compiles(8) == _history_kernel_compiles(50)


def test_ties_follow_shape_rules_not_values():
    """``dynamic.ties``: an elementwise op ties its operands' dimensions to its result's,
    a concatenation all but the joined one; a size equal to another by chance stays apart."""
    rows = (((4, 4), np.dtype("f8")),  # a 4x4 parameter
            ((1, 4), np.dtype("f8")),
            ("concatenate", (("dimension", 0),), (0, 1), (5, 4), np.dtype("f8")),
            ("tanh", (), (2,), (5, 4), np.dtype("f8")))
    _, values, _ = dynamic.generalize(rows)
    assert values == (4, 4, 1, 4, 5, 4, 5, 4)
    tied = dynamic.ties(rows, values)
    classes = [[p for p in range(len(values)) if tied[p] == tied[q]] for q in range(len(values))]
    assert classes[1] == [1, 3, 5, 7]  # every column
    assert classes[0] == [0]  # the parameter's rows: 4 as the columns, by chance
    assert classes[4] == [4, 6]  # the concatenation's rows and tanh's


def test_an_array_grown_from_one_row_compiles_once():
    """A parameter that only concatenations join along an axis may have one row there:
    its code copies it whatever its length, so the array grown from one row binds the
    code compiled for it (other sizes of 1 are specialised: they may broadcast)."""
    rng = np.random.default_rng(15)
    rows = rng.standard_normal((30, 3))
    x = xp.asarray(rows)
    a, expected = xp.asarray(rows[:1] * 0.5), rows[:1] * 0.5
    for i in range(1, 30):
        a = xp.concat([a, x[i:i + 1, :]], axis=0)
        expected = np.concatenate([expected, rows[i:i + 1]])
        assert float(xp.sum(a * a)) == pytest.approx(float(np.sum(expected * expected)), rel=1e-12)
    np.testing.assert_array_equal(np.asarray(a), expected)
    assert _compiles() == 1


def test_a_one_row_array_that_also_broadcasts_keeps_its_size():
    """A one-row parameter that is concatenated and broadcast too keeps its size 1 in the
    code (the broadcast's), whatever the other sizes."""
    rng = np.random.default_rng(16)
    data = rng.standard_normal((12, 3))
    for n in (4, 5, 7, 2):
        m, b = xp.asarray(data[:n]), xp.asarray(data[n:n + 1])
        got = np.asarray(xp.concat([b, m], axis=0)[1:] * (m + b))
        want = np.concatenate([data[n:n + 1], data[:n]])[1:] * (data[:n] + data[n:n + 1])
        np.testing.assert_allclose(got, want, rtol=1e-12)


F64, I32 = np.dtype(np.float64), np.dtype(np.int32)


def _sized_template():
    """A shape-generic executable of one step over sizes ``n`` (at most 50) and ``m``: a
    static output, two sized ones, a sized temporary and a static one."""
    from plaidarray.backend.llvm_cpu.executable import ShapeGenericExecutable, Step
    from plaidarray.backend.llvm.kernel_source import Segment
    from plaidarray.hlo.shape import Shape
    from plaidarray.hlo.symbolic import Sym
    from types import SimpleNamespace

    n, m = Sym(0, 5), Sym(1, 5)
    steps = [Step(SimpleNamespace(upgrade=None, address=4096), (0,), Segment(n, n * m, 0), (), ())]
    outputs = [Shape((3,), F64), Shape((n, m), I32), Shape((m,), F64)]  # type: ignore[arg-type]
    temps = [Shape((n * 2,), F64), Shape((4, 4), I32)]  # type: ignore[arg-type]
    return ShapeGenericExecutable(steps, 1, [], [("out", i) for i in range(3)], outputs, temps, [(n, 50)])


def _runs_of(runnable, times: int) -> list:
    """What each of ``times`` runs of ``runnable`` hands ``_entry.run``: its outputs,
    temporaries and dims table (the kernel's address is not code: nothing is called)."""
    from plaidarray.backend.llvm_cpu import executable as cpu_executable

    ran: list = []
    original = cpu_executable._run_in_c
    try:
        cpu_executable._run_in_c = lambda plan, buffers, constants, outs, temps, dims: ran.append((outs, temps, dims))
        for _ in range(times):
            runnable.run([np.zeros(1)])
    finally:
        cpu_executable._run_in_c = original
    return ran


def test_a_binding_sizes_each_sized_output_and_temporary_from_its_own_dims():
    """A binding reads each sized buffer's dims in turn (outputs, then temporaries) after
    the limits and the sized steps' ranges: each buffer gets its own shape and bytes, and
    the buffers of static shape keep theirs."""
    from plaidarray.hlo.shape import Shape

    template = _sized_template()
    for a, b in ((7, 3), (11, 2)):
        bound = template.bind([a, b])
        assert bound.shapes == ([Shape((3,), F64), Shape((a, b), I32), Shape((b,), F64)],
                                [Shape((2 * a,), F64), Shape((4, 4), I32)])
        assert bound._nbytes == 24 + 4 * a * b + 8 * b + 16 * a + 64
        assert bound.dim_values[:2] == (a, b) and bound._ranges == (a, a * b)
        assert [x.shape for x in (*[new() for new in bound._output_allocators],
                                  *[new() for new in bound._temp_allocators])] == [(3,), (a, b), (b,), (2 * a,), (4, 4)]
    assert template.bind([51, 2]) is None  # past its limit


def test_a_runner_makes_the_buffers_and_dims_table_a_binding_has():
    """``runner``, the binding a read only runs, sizes each sized buffer from its own dims
    and passes the binding's dims table and ranges, and takes ``bind``'s limits; each of
    its runs makes its buffers anew (most runners run once or twice: no allocators, no
    kept temporaries)."""
    from plaidarray.backend.llvm_cpu import executable as cpu_executable

    if cpu_executable._run_in_c is None:
        pytest.skip("runners are made where runs go through C (_entry)")
    template = _sized_template()
    for a, b in ((7, 3), (11, 2)):
        runner, bound = template.runner([a, b]), template.bind([a, b])
        assert type(runner) is cpu_executable._Runner
        assert runner._dims == bound._dims and runner._ranges == bound._ranges == (a, a * b)
        assert runner._nbytes == bound._nbytes == 24 + 4 * a * b + 8 * b + 16 * a + 64
    assert template.runner([51, 2]) is None  # past its limit

    runner = template.runner([7, 3])
    ran = _runs_of(runner, 4)
    assert all(dims == runner._dims for _, _, dims in ran)
    assert all([(o.shape, o.dtype) for o in (*outs, *scratch)] ==
               [((3,), F64), ((7, 3), I32), ((3,), F64), ((14,), F64), ((4, 4), I32)] for outs, scratch, _ in ran)
    assert len({id(o) for outs, scratch, _ in ran for o in (*outs, *scratch)}) == 4 * 5, "every run's buffers its own"


def _derived_template():
    """A shape-generic executable over sizes ``n`` (at most 50) and ``m`` with derived sizes
    (``d = n * m + 3``, at most 3000, and ``e = 2 * d - m``, each in the entries before
    it), two sized steps, a static one, sized and static outputs and temporaries."""
    from plaidarray.backend.llvm_cpu.executable import ShapeGenericExecutable, Step
    from plaidarray.backend.llvm.kernel_source import Segment
    from plaidarray.hlo.shape import Shape
    from plaidarray.hlo.symbolic import Sym
    from types import SimpleNamespace

    n, m, d, e = Sym(0, 5), Sym(1, 5), Sym(2, 28), Sym(3, 51)
    kernel = SimpleNamespace(upgrade=None, address=4096)
    steps = [Step(kernel, (0,), Segment(n, n * m, 0), (), ()), Step(kernel, (1,), Segment(4, 4, 0), (), ()),
             Step(kernel, (2,), Segment(e, 3 * d - 2, 0), (2, 3), ())]
    outputs = [Shape((n, m), I32), Shape((3,), F64), Shape((e,), F64)]  # type: ignore[arg-type]
    temps = [Shape((n * 2, d), F64), Shape((4, 4), I32)]  # type: ignore[arg-type]
    return ShapeGenericExecutable(steps, 1, [], [("out", i) for i in range(3)], outputs, temps,
                                  [(n, 50), (d, 3000)], [n * m + 3, 2 * d - m])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.one_of(st.integers(0, 1 << 17), st.integers(1 << 60, 1 << 70))),
                min_size=1, max_size=12))
def test_a_runners_sizes_evaluated_in_c_are_its_bindings(sizes):
    """``runner`` evaluates a binding's sizes in C (``_entry.sizes``): the same dims table
    (derived sizes included), ranges, buffers' dims and bytes as ``bind`` works out in
    Python's ints, the same refusal past a limit, and a binding where a step is worth
    running in chunks (a large ``n * m``) or a size is past int64."""
    from plaidarray.backend.llvm_cpu import executable as cpu_executable

    if cpu_executable._sizes_in_c is None:
        pytest.skip("runners are made where runs go through C (_entry)")
    for template in (_sized_template(), _derived_template()):
        for a, b in sizes:
            try:
                expected = template.bind([a, b])
            except struct.error:  # a size Python's binding cannot pack either
                continue
            made = template.runner([a, b])
            assert type(made) is type(expected) or type(made) is cpu_executable._Runner
            if expected is None:
                assert made is None
            elif type(made) is cpu_executable._Runner:
                # the buffers of symbolic shapes (a static one is not sized per binding, but a
                # symbolic one may be bound to a static one's dims: (e,) at e = 3)
                sized = [bound.dims for shape, bound in zip((*template.shapes[0], *template.shapes[1]),
                                                            (*expected.shapes[0], *expected.shapes[1]))
                         if not all(type(d) is int for d in shape.dims)]
                assert (made._dims, made._ranges, made._nbytes) == (expected._dims, expected._ranges, expected._nbytes)
                assert list(made._sized) == sized
            else:
                assert made._dims == expected._dims and made._ranges == expected._ranges


def test_a_runner_refuses_a_malformed_sizes_program():
    """``_entry.sizes`` checks the program it reads: an index past the table, a count
    past its words, other values than it was made for, are a ValueError, not a read past
    the bytes; a value that is no int a TypeError; one past int64 an OverflowError."""
    from plaidarray.backend.llvm_cpu import executable as cpu_executable

    sizes = cpu_executable._sizes_in_c
    if sizes is None:
        pytest.skip("_entry is not built")
    program = _derived_template()._sizes_program(2)
    words = list(struct.unpack(f"<{len(program) // 8}q", program))
    assert sizes(program, [3, 4], 1 << 40)[1] == 4
    for at, value in ((11, 7), (6, 1 << 40), (0, 3), (1, 9)):  # a symbol index; a term count; values; derived count
        bad = list(words)
        bad[at] = value
        with pytest.raises(ValueError):
            sizes(struct.pack(f"<{len(bad)}q", *bad), [3, 4], 1 << 40)
    with pytest.raises(ValueError):
        sizes(program[:-8], [3, 4], 1 << 40)
    with pytest.raises(TypeError):
        sizes(program, [3, 4.0], 1 << 40)
    with pytest.raises(OverflowError):
        sizes(program, [3, 1 << 70], 1 << 40)


def test_a_binding_keeps_its_temporaries_from_its_second_run():
    """A binding run once (a size met once) keeps no temporaries; run again, it keeps them."""
    from plaidarray.backend.llvm_cpu import executable as cpu_executable

    if cpu_executable._run_in_c is None:
        pytest.skip("a binding's runs go through ctypes without _entry")
    ran = [temps for _, temps, _ in _runs_of(_sized_template().bind([9, 2]), 3)]
    assert ran[0] is not ran[1] and ran[2] is ran[1] and [t.shape for t in ran[0]] == [(18,), (4, 4)]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_patterns_quick_match_is_its_loops(data):
    """``Pattern.match`` picks positions by ``itemgetter`` where every symbol has a position
    and its values are past 1: it answers what its loop over the positions answers, for
    any values (tied positions that differ, sizes 0 and 1, static positions changed)."""
    n = data.draw(st.integers(1, 8), label="positions")
    first = tuple(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n), label="first"))
    sizes = tuple(data.draw(st.lists(st.booleans(), min_size=n, max_size=n), label="sizes"))
    tied = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n), label="ties")
    units = frozenset(data.draw(st.sets(st.integers(0, n)), label="units"))
    zeros = data.draw(st.booleans(), label="zeros")
    pattern = dynamic.Pattern.every_size(first, sizes, tied, units & frozenset(range(n)), zeros)
    slow = dynamic.Pattern(pattern.first, pattern.symbol_of, pattern.n_symbols, pattern.units)
    object.__setattr__(slow, "_quick", None)  # the loop alone
    for _ in range(5):
        values = data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n), label="values")
        empty = data.draw(st.booleans(), label="empty")
        assert pattern.match(values, sizes, empty) == slow.match(values, sizes, empty)
        assert pattern.match(tuple(values), sizes, empty) == slow.match(values, sizes, empty)
