"""Eager NumPy-style loops: what a user's loop costs in compiles, and what it computes.

Reading a value keeps the pending values that live arrays refer to, so each step of a
loop starts from buffers and repeats one graph; Python scalars are run-time arguments;
graphs deeper than ``PLAIDARRAY_MAX_PENDING`` run on their own; window assignments
update the array's buffer in place when nothing else can see it. Expected values come
from the same loops run by NumPy.
"""

from __future__ import annotations

import gc
import logging
import pickle
import warnings
import threading
import weakref

import numpy as np
import pytest
from hypothesis import given, strategies as st

import plaidarray as xp
from loop_helpers import assembled_sizes, state_space_readings
from plaidarray.backend.llvm_cpu.tiering import SCALAR_MAX_ELEMENTS
from plaidarray.trace import array as array_module, node as node_module


def _compiles() -> int:
    return xp.cache_info().compiles


def _gradient_descent(ns, a, b, steps, lr=1e-3):
    w = ns.zeros(a.shape[1])
    losses = []
    for _ in range(steps):
        r = a @ w - b
        losses.append(float(ns.sum(r * r)))
        w = w - lr * (a.T @ r)
    return losses, w


def test_a_loop_with_a_read_each_step_compiles_a_bounded_number_of_times(backend, fused):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((60, 5)), rng.standard_normal(60)
    before = _compiles()
    losses, w = _gradient_descent(xp, xp.asarray(a), xp.asarray(b), 40)
    if backend == "llvm-cpu":
        assert _compiles() - before <= 3
    expected_losses, expected_w = _gradient_descent(np, a, b, 40)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(w), expected_w, rtol=1e-12)


def test_reading_one_value_computes_the_live_values_of_its_graph():
    x = xp.asarray(np.arange(5.0))
    y = x * 3.0
    z = xp.sum(y + 1.0)
    assert y._node.buffer is None
    assert float(z) == 35.0
    assert y._node.buffer is not None and y._node.operands == ()
    np.testing.assert_array_equal(np.asarray(y), np.arange(5.0) * 3.0)


def test_arrays_that_are_gone_are_not_computed():
    """An intermediate no array (and nothing else outside its graph) refers to stays
    inside the kernel; the live array above it is computed too."""
    from plaidarray.trace.to_hlo import walk_pending

    x = xp.asarray(np.arange(5.0))
    t = xp.exp(x)
    y = t + 1.0
    del t
    total = xp.sum(y)
    _, _, outputs, _ = walk_pending([total._node])
    assert outputs == [total._node, y._node]
    assert float(total) == pytest.approx(float(np.sum(np.exp(np.arange(5.0)) + 1.0)))


def test_new_python_scalars_reuse_the_compiled_executable():
    x = xp.asarray(np.linspace(0.0, 1.0, 11))
    float(xp.sum(x * 0.5 + 1.0))
    before = _compiles()
    values = [float(xp.sum(x * float(i) + 1.0)) for i in range(20)]
    assert _compiles() == before
    np.testing.assert_allclose(values, [np.sum(np.linspace(0.0, 1.0, 11) * i + 1.0) for i in range(20)])


def test_scalars_recorded_again_are_one_node_and_equal_values_keep_the_structure():
    x = xp.asarray(np.linspace(0.0, 1.0, 11))
    assert (x * 0.75)._node.operands[1] is (x * 0.75)._node.operands[1]  # shared, not recorded again
    assert (x > 0)._node.operands[1] is (x > 0)._node.operands[1]  # zeros too, comparisons too
    assert (x * 0.0)._node.operands[1] is not (x * -0.0)._node.operands[1]  # each zero its own sign
    for a, b in [(0.75, 0.25), (0.5, 0.5), (-0.0, 0.0), (2.0, 2.0)]:
        y = x * a + b
        float(xp.sum(y))
        if (a, b) == (0.75, 0.25):
            before = _compiles()
        np.testing.assert_array_equal(np.asarray(y), np.linspace(0.0, 1.0, 11) * a + b)
    assert _compiles() == before  # equal scalars in one graph are still two run-time values
    np.testing.assert_array_equal(np.signbit(np.asarray(x[:1] * -0.0)), [True])
    np.testing.assert_array_equal(np.signbit(np.asarray(x[:1] * 0.0)), [False])


def test_a_python_int_that_does_not_fit_still_raises():
    with pytest.raises(OverflowError):
        xp.asarray(np.arange(3, dtype=np.int8)) + 1000


def test_a_long_loop_without_reads_runs_in_bounded_graphs():
    steps = 100_000
    x = xp.ones(8)
    before = _compiles()
    deepest = 0
    for _ in range(steps):
        x = x * 0.999 + 0.001
        deepest = max(deepest, x._node.depth)
    got = np.asarray(x)
    assert deepest <= 2 * node_module.MAX_PENDING  # cut where the loop's structure recurs (trace/cuts.py)
    assert _compiles() - before <= 3
    expected = np.ones(8)
    for _ in range(steps):
        expected = expected * 0.999 + 0.001
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_state_updated_after_the_value_read_is_not_cut_for_depths_a_read_made_stale(monkeypatch):
    """A Kalman filter reads its state at each step, after which its covariance is updated
    from values that read computed: the covariance's pending graph stays a few nodes deep,
    but its nodes' depths were counted when the values they read were pending. Counted
    again past the bound (``cuts.past_bound``), no graph is cut (~1.7 cuts a step before,
    each a read of its own and a graph of another structure); the values are NumPy's."""
    from plaidarray.api import graph

    cut = []
    original = graph.cut_at
    monkeypatch.setattr(graph, "cut_at", lambda node: cut.append(node) or original(node))
    rng = np.random.default_rng(3)
    zs = rng.standard_normal((60, 2))
    f_, h_ = np.eye(4) + 0.1 * np.eye(4, k=1), np.eye(2, 4)
    q_, r_ = 0.01 * np.eye(4), 0.1 * np.eye(2)
    f, h, q, r = (xp.asarray(a) for a in (f_, h_, q_, r_))
    x, p = xp.zeros(4, dtype=xp.float64), xp.eye(4, dtype=xp.float64)
    ex, ep, got, expected = np.zeros(4), np.eye(4), [], []
    for z in zs:
        x = f @ x
        p = f @ p @ f.T + q
        gain = p @ h.T @ xp.linalg.inv(h @ p @ h.T + r)
        x = x + gain @ (xp.asarray(z) - h @ x)
        p = (xp.eye(4, dtype=xp.float64) - gain @ h) @ p
        got.append(float(xp.sum(x)))
        ex = f_ @ ex
        ep = f_ @ ep @ f_.T + q_
        eg = ep @ h_.T @ np.linalg.inv(h_ @ ep @ h_.T + r_)
        ex = ex + eg @ (z - h_ @ ex)
        ep = (np.eye(4) - eg @ h_) @ ep
        expected.append(float(np.sum(ex)))
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(p), ep, rtol=1e-9)
    assert cut == []


def test_a_loop_whose_values_are_not_all_ancestors_of_the_cut_repeats_its_graphs(monkeypatch):
    """A simulation of positions from velocities and a count of bounces, never read: the
    position is no ancestor of the velocity the graphs are cut at, yet runs with it
    (``cuts.waiting``), so no graph holds its history again and the graphs repeat; each
    node recorded is run once."""
    assembled = assembled_sizes(monkeypatch)
    start = np.random.default_rng(1).random(6) * 3
    velocity, height, bounces = xp.asarray(start), xp.zeros(6) + 1.0, xp.zeros(6, dtype=xp.int32)
    expected = [start, np.ones(6), np.zeros(6, np.int32)]
    for _ in range(60):
        velocity = velocity - 0.2
        height = height + velocity * 0.02
        hit = height < 0
        bounces = bounces + xp.astype(hit, xp.int32)
        velocity = xp.where(hit, -0.8 * velocity, velocity)
        height = xp.where(hit, -height, height)
        v, h, b = expected
        v = v - 0.2
        h = h + v * 0.02
        b = b + (h < 0).astype(np.int32)
        expected = [np.where(h < 0, -0.8 * v, v), np.where(h < 0, -h, h), b]
    for got, want in zip((velocity, height, bounces), expected):
        np.testing.assert_array_equal(np.asarray(got), want)
    assert len(assembled) <= 8 and max(assembled) <= 12 * node_module.MAX_PENDING


def test_readings_of_a_loops_state_read_one_by_one_compute_the_state_once(monkeypatch):
    """A 25-step simulation's outputs, kept in a list and read after the loop: the state
    each reading depends on, which another pending reading refers to, is computed with
    the first reading of it (``to_hlo.walk``: a node referred to from outside its graph is
    an output), so no later read computes the state's history again (25 graphs, a longer
    one each time, before); the values are NumPy's."""
    sizes = assembled_sizes(monkeypatch)
    readings, expected = state_space_readings()
    np.testing.assert_allclose([float(r) for r in readings], expected, rtol=1e-12)
    assert len(sizes) <= 6


def test_the_bound_can_be_turned_off(monkeypatch):
    monkeypatch.setattr(node_module, "MAX_PENDING", 0)
    x = xp.ones(4)
    for _ in range(300):
        x = x + 1.0
    assert x._node.depth > 300  # nothing ran: the whole chain is pending
    np.testing.assert_array_equal(np.asarray(x), np.full(4, 301.0))


def test_reads_and_cuts_are_counted_recording_is_not(monkeypatch):
    """``node.reads_mark``: two equal marks mean no value was read between them."""
    x = xp.asarray(np.ones(4))

    def reads(step):
        mark = node_module.reads_mark()
        step()
        return node_module.reads_mark() - mark

    assert reads(lambda: xp.exp(x) + xp.sum(x) * x[1]) == 0
    assert reads(lambda: float(xp.sum(x))) >= 1
    assert reads(lambda: np.asarray(x)) >= 1
    assert reads(lambda: xp.take(x, xp.asarray(2))) >= 1  # an int index taken from an array's value
    monkeypatch.setattr(node_module, "MAX_PENDING", 4)
    y = x

    def chain():
        nonlocal y
        for _ in range(20):
            y = y * 2.0 + 1.0

    assert reads(chain) >= 1  # cut where it was recorded


def test_assignments_in_a_loop_compile_once_and_update_the_buffer_in_place(fused):
    n = 500
    a = xp.zeros(n)
    a[0] = 0.0  # the first assignment turns the pending zeros into a buffer
    buffer = weakref.ref(a._node.buffer)  # a strong reference would forbid the in-place write
    before = _compiles()
    for i in range(n):
        a[i] = i * 0.5
    assert _compiles() - before <= 1
    assert a._node.buffer is buffer()
    np.testing.assert_array_equal(np.asarray(a), np.arange(n) * 0.5)


def test_a_scalar_stored_into_an_array_nobody_else_sees_runs_no_executable():
    """``a[i] = v`` of a Python scalar into one element of an array that alone holds its
    buffer is a store (``HostTransfers.store_element``): no executable runs; into an array
    a pending reader shares, a store into a copy (``stored_copy``); a value its dtype takes
    only with a conversion and an index out of range take the update's executable, which
    converts or raises as before."""
    a = xp.zeros(6)
    a[0] = 0.5  # the first assignment turns the pending zeros into a buffer
    ints = xp.zeros(3, dtype=xp.int64)
    ints[0] = 1
    hits = xp.cache_info().hits
    for i in range(1, 6):
        a[i] = i * 0.5 if i % 2 else i  # floats, and ints of at most 53 bits
    a[-1] = float("nan")
    ints[1], ints[-1] = 2**62, -7
    assert xp.cache_info().hits == hits
    expected = np.array([0.5, 0.5, 2.0, 1.5, 4.0, np.nan])
    np.testing.assert_array_equal(np.asarray(a), expected)
    np.testing.assert_array_equal(np.asarray(ints), [1, 2**62, -7])
    pending = a * 2.0  # a pending reader of the old value: the store is made into a copy
    a[0] = 7.0
    assert np.asarray(pending)[0] == 1.0 and np.asarray(a)[0] == 7.0
    with pytest.raises(IndexError):
        a[6] = 1.0
    with pytest.raises(OverflowError):
        ints[0] = 2**63
    a[1] = 2**60 + 1  # rounded by the conversion the update makes
    assert np.asarray(a)[1] == float(2**60)


def test_a_slice_stored_into_an_array_nobody_else_sees_runs_no_executable():
    """``x[a:b] = v``, ``y[a:b, ...] = v`` and ``m[i, a:] = v`` of an array of the block's
    shape or a Python scalar, into an array that alone holds its buffer, are stores by the
    transfer (no executable's hit or compile); a value to broadcast takes the update."""
    x, m = xp.zeros(8), xp.zeros((3, 5))
    x[0], m[0, 0] = 1.0, 1.0  # computed: buffers of their own
    values = xp.asarray(np.arange(3.0))
    float(values[0])
    hits, compiles = xp.cache_info().hits, xp.cache_info().compiles
    x[2:5] = values
    x[5:, ...] = 7.0
    m[1, 2:] = values
    m[2:] = 4.0
    assert (xp.cache_info().hits, xp.cache_info().compiles) == (hits, compiles)
    np.testing.assert_array_equal(np.asarray(x), [1.0, 0.0, 0.0, 1.0, 2.0, 7.0, 7.0, 7.0])
    np.testing.assert_array_equal(np.asarray(m), [[1, 0, 0, 0, 0], [0, 0, 0, 1, 2], [4, 4, 4, 4, 4]])
    x[0:2] = values[:1]  # broadcast: the update
    np.testing.assert_array_equal(np.asarray(x)[:2], [0.0, 0.0])


@pytest.mark.parametrize("key", [np.s_[:, 1], np.s_[::2], np.s_[1:3, ::-1], np.s_[..., 2], np.s_[3:0:-2, 1:],
                                 np.s_[1, ::2]])
@pytest.mark.parametrize("scalar", [True, False])
def test_a_block_of_ints_and_slices_stored_into_an_array_nobody_else_sees_runs_no_executable(key, scalar):
    """``m[:, j] = v`` (a column), ``x[::2] = v``, ``m[1:3, ::-1] = v``: a block that ints
    and slices pick, stored into an array that alone holds its buffer, is the transfer's
    store, as a row's is: no update recorded and run (40 us a column store so, 4 us now)."""
    a = np.arange(20.0).reshape(5, 4)
    x = xp.asarray(a) * 1.0
    float(xp.sum(x))  # computed: a buffer of its own
    values = np.arange(1.0, 1.0 + a[key].size).reshape(a[key].shape)
    value = 0.5 if scalar else xp.asarray(values)
    node = id(x._node)  # its id: a reference would be one more reader of its buffer
    x[key] = value
    assert id(x._node) == node  # written in place: no update recorded (its node would be a new one)
    a[key] = 0.5 if scalar else values
    np.testing.assert_array_equal(np.asarray(x), a)


@given(data=st.data())
def test_a_block_of_ints_and_slices_is_stored_as_numpy_stores_it(data):
    """Any block that ints and slices pick, stored into an array that alone holds its
    buffer (the transfer's store), of a Python scalar or a computed array of the block's
    shape; with a pending reader of the array recorded first, or a pending value, or a view
    alive: the store leaves NumPy's values, and the reader the old ones."""
    from hypothesis.extra.numpy import arrays
    from strategies import basic_keys, shapes

    a = data.draw(arrays(np.float64, shapes(min_dims=1, max_dims=3), elements=st.floats(-9, 9)), label="a")
    key = data.draw(basic_keys(a.shape, allow_none=False), label="key")
    block = a[key].shape
    kind = data.draw(st.sampled_from(["scalar", "computed", "pending"]), label="value")
    reader, viewed = data.draw(st.booleans(), label="reader"), data.draw(st.booleans(), label="view")
    values = np.arange(1.0, 1.0 + np.prod(block)).reshape(block)
    x = xp.asarray(a) * 1.0
    float(xp.sum(x))  # computed: a buffer of its own
    value = {"scalar": 5.5, "computed": xp.asarray(values), "pending": xp.asarray(values) * 1.0}[kind]
    read = x * 2.0 if reader else None
    view = x[..., :1] if viewed else None
    x[key] = value
    expected = a.copy()
    expected[key] = 5.5 if kind == "scalar" else values
    np.testing.assert_array_equal(np.asarray(x), expected)
    if reader:
        np.testing.assert_array_equal(np.asarray(read), a * 2.0)
    if viewed:
        np.testing.assert_array_equal(np.asarray(view), expected[..., :1])


_STORED_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                  np.float32, np.float64, np.complex64, np.complex128]


def _stored_or_error(a, value):
    """``a`` after ``a[1] = value``, or the type of the error the store raised."""
    try:
        a[1] = value
    except (TypeError, OverflowError, ValueError) as error:
        return type(error)
    return np.asarray(a)


@given(dtype=st.sampled_from(_STORED_DTYPES),
       value=st.one_of(st.booleans(), st.integers(-2**65, 2**65),
                       st.sampled_from([2**24, 2**24 + 1, 2**53 + 1, -2**31, 1e300, -1e300, 3.5e38, 1e-46]),
                       st.floats(allow_nan=True, width=32).map(float), st.floats(allow_nan=True),
                       st.complex_numbers(allow_nan=True, width=64)))
def test_a_scalar_stored_by_the_transfer_is_what_the_update_stores(dtype, value):
    """A Python scalar stored into an element of an array that alone holds its buffer (the
    transfer's store where the dtype takes it exactly) leaves the bits, or raises the
    error, that the update of a pending array leaves or raises: every dtype, ints at and
    past each range, floats single precision holds and others, NaN."""
    stored = xp.zeros(3, dtype=dtype)
    stored[0] = False if dtype is np.bool_ else 0  # the first store computes it: a buffer of its own
    assert array_module._sole_owner(stored._node)
    pending = xp.zeros(3, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the transfer's test of a value warns of nothing the update does not
        got = _stored_or_error(stored, value)
    want = _stored_or_error(pending, value)
    if isinstance(want, type):
        assert got is want
    else:
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), strict=True)


def test_a_0d_array_stored_into_an_array_nobody_else_sees_runs_only_its_own_graph(monkeypatch):
    """``h[k] += 1`` (an element read, 1 added, stored back), ``m[i] = r`` and
    ``a[i, j] = b[k] * 2.0`` of an array of the target's dtype, 0-d or of the block's
    shape, into an array that alone holds its buffer: the value's graph runs, the block
    is stored (``store_element``), no update of the array records or runs; with a pending
    reader of the old value the store is made into a copy (``stored_copy``), which the
    reader does not see; another dtype and a view take the update's path, which converts
    or writes through as before."""
    h, counts = xp.zeros(5, dtype=xp.int64), np.zeros(5, np.int64)
    m, expected = xp.zeros((3, 4)), np.zeros((3, 4))
    h[0], m[0, 0] = 0, 0.0  # the first stores turn the pending zeros into buffers
    updates = []
    setitem = array_module._NAMESPACE["setitem"]
    monkeypatch.setitem(array_module._NAMESPACE, "setitem", lambda *args: updates.append(args) or setitem(*args))
    for k in (1, 3, 1, 4, 1):
        h[k] += 1
        counts[k] += 1
    m[1] = xp.asarray(2.5)
    m[0, :] = xp.asarray(np.arange(4.0)) * 0.5
    expected[0] = np.arange(4.0) * 0.5
    m[2, 3] = m[1, 0] * 3.0
    expected[1], expected[2, 3] = 2.5, 7.5
    assert not updates  # stored: no update recorded
    np.testing.assert_array_equal(np.asarray(h), counts)
    np.testing.assert_array_equal(np.asarray(m), expected)
    pending = m * 2.0  # a pending reader of the old value: the store is made into a copy
    m[0, 1] = xp.asarray(4.0)
    assert not updates and np.asarray(pending)[0, 1] == 1.0 and np.asarray(m)[0, 1] == 4.0
    m[0, 2] = xp.asarray(np.float32(1.5))  # float32 into float64: converted by the update
    assert len(updates) == 1
    base = xp.zeros(4)
    base[0] = 1.0
    view = base[1:]
    view[0] = xp.asarray(7.0)  # through a view: reaches the base
    assert np.asarray(m)[0, 2] == 1.5 and np.asarray(base).tolist() == [1.0, 7.0, 0.0, 0.0]


@given(steps=st.lists(st.tuples(st.sampled_from(["element", "row", "0-d", "product row", "swap", "reader", "segment",
                                                  "shift", "rows"]),
                                 st.integers(-4, 3), st.integers(-3, 2), st.floats(-8, 8)), max_size=14),
       dtype=st.sampled_from([np.float64, np.float32]))
def test_block_stores_of_arrays_match_numpy(steps, dtype):
    """Element, row, 0-d and slice stores of arrays and scalars (a row's segment, an
    overlapping shift of the rows), rows swapped through a copy, and readers of the values
    between them (which the stores into copies must not change) against NumPy's."""
    m, expected = xp.asarray(np.zeros((4, 3), dtype)), np.zeros((4, 3), dtype)
    readers, values = [], []
    for kind, i, j, v in steps:
        v = float(dtype(v))
        if kind == "element":
            m[i, j] = xp.asarray(np.asarray(v, dtype))
            expected[i, j] = v
        elif kind == "row":
            m[i, :] = xp.asarray(np.full(3, v, dtype))
            expected[i, :] = v
        elif kind == "0-d":
            m[i] = m[j, 0] * 2.0
            expected[i] = expected[j, 0] * dtype(2.0)
        elif kind == "product row":
            m[i] = m[j] * v
            expected[i] = expected[j] * dtype(v)
        elif kind == "segment":  # the rest of a row from column j
            m[i, j:] = m[i, j:] * v
            expected[i, j:] = expected[i, j:] * dtype(v)
        elif kind == "shift":  # overlapping: each row takes the one before it
            m[1:] = m[:-1]
            expected[1:] = expected[:-1].copy()
        elif kind == "rows":  # a block of rows, a Python scalar
            m[i % 4:] = v
            expected[i % 4:] = v
        elif kind == "swap":
            kept = xp.asarray(m[i], copy=True)
            m[i] = m[j]
            m[j] = kept
            expected[[i, j]] = expected[[j, i]]
        else:
            readers.append(m * 1.0)
            values.append(expected.copy())
    np.testing.assert_array_equal(np.asarray(m), expected)
    for reader, value in zip(readers, values):
        np.testing.assert_array_equal(np.asarray(reader), value)


@given(dtype=st.sampled_from([np.float64, np.int64, np.complex128, np.bool_]),
       stores=st.lists(st.tuples(st.integers(-8, 7), st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False) |
                                 st.booleans() | st.complex_numbers(allow_nan=False)), max_size=12))
def test_scalar_stores_match_numpy(dtype, stores):
    """A loop of ``a[i] = v`` (the element store where it applies, the update otherwise)
    against NumPy's; a store NumPy refuses (an out-of-range integer, a kind the dtype
    does not take) is refused too and changes nothing."""
    a, expected = xp.zeros(8, dtype=getattr(xp, np.dtype(dtype).name)), np.zeros(8, dtype)
    a[0] = expected[0] = dtype(1)  # computed: later stores find an array that alone holds its buffer
    for i, v in stores:
        try:
            a[i] = v
        except (TypeError, ValueError, OverflowError):
            continue
        expected[i] = v
    np.testing.assert_array_equal(np.asarray(a), expected)


@given(dtype=st.sampled_from([np.float64, np.int32, np.complex64, np.bool_]),
       stores=st.lists(st.tuples(st.lists(st.integers(-5, 4), min_size=1, max_size=2),
                                 st.integers(-2**40, 2**40) | st.floats(allow_nan=False) | st.booleans()),
                       max_size=10))
def test_scalar_stores_into_rows_match_numpy(dtype, stores):
    """``a[i] = v`` and ``a[i, j] = v`` on a 2-d array (a row, or an element) against
    NumPy's, stores NumPy refuses refused too."""
    a, expected = xp.zeros((4, 3), dtype=getattr(xp, np.dtype(dtype).name)), np.zeros((4, 3), dtype)
    a[0] = expected[0] = dtype(1)
    for index, v in stores:
        try:
            a[tuple(index)] = v
        except (TypeError, ValueError, OverflowError, IndexError):
            continue
        with np.errstate(over="ignore"):  # a float beyond complex64's range is inf, in both
            expected[tuple(index)] = v
    np.testing.assert_array_equal(np.asarray(a), expected)


def test_a_scalar_stored_into_rows_and_planes_nobody_else_sees_runs_no_executable():
    """``m[i] = v`` and ``t[i, j] = v`` of a Python scalar, leading ints only, fill the row
    or plane in place (``store_element``), as NumPy does; a pending reader keeps the old
    value, an index out of range raises, and a value the dtype takes only by a conversion
    takes the update's path."""
    m, t, n = xp.zeros((5, 4)), xp.zeros((3, 2, 4), dtype=xp.int64), np.zeros((5, 4))
    m[0], t[0, 0] = 1.0, 1  # the first assignments turn the pending zeros into buffers
    n[0] = 1.0
    hits = xp.cache_info().hits
    for i in range(1, 5):
        m[i] = n[i] = i * 0.25
    m[-2] = n[-2] = -3.0
    t[2, -1] = 7
    t[1] = -2
    assert xp.cache_info().hits == hits  # no executable ran
    np.testing.assert_array_equal(np.asarray(m), n)
    want = np.zeros((3, 2, 4), np.int64)
    want[0, 0], want[2, -1], want[1] = 1, 7, -2
    np.testing.assert_array_equal(np.asarray(t), want)
    pending = m * 2.0
    m[1] = 9.0
    np.testing.assert_array_equal(np.asarray(pending)[1], [0.5] * 4)
    np.testing.assert_array_equal(np.asarray(m)[1], [9.0] * 4)
    with pytest.raises(IndexError):
        m[5] = 1.0
    with pytest.raises(TypeError):
        t[1] = 2.5  # a float into int64: refused as the update refuses it
    np.testing.assert_array_equal(np.asarray(t)[1], [[-2] * 4] * 2)


def test_stores_into_an_array_whose_views_are_gone_are_in_place_and_live_views_see_them():
    """An array keeps its family once a view of it was made; with every view gone a store
    into it is made in place as into any array that alone holds its buffer, and with a
    view alive the view sees the store (the family's refresh), as in NumPy."""
    m, expected = xp.zeros((3, 4)), np.zeros((3, 4))
    m[0, 0] = 1.0  # computed: a buffer of its own
    expected[0, 0] = 1.0
    row = m[1]
    float(xp.sum(row))
    del row
    gc.collect()
    buffer = weakref.ref(m._node.buffer)
    m[2, 3] = 5.0
    m[1] = 2.0
    expected[2, 3], expected[1] = 5.0, 2.0
    assert m._node.buffer is buffer()  # written in place
    live, live_expected = m[2], expected[2]
    m[2, 1] = 7.0
    expected[2, 1] = 7.0
    np.testing.assert_array_equal(np.asarray(live), live_expected)
    np.testing.assert_array_equal(np.asarray(m), expected)


def test_threads_storing_rows_while_another_stores_into_a_copy_lose_nothing():
    """A row stored in place (in C: ``_graph.ArrayHandle``) is copied by NumPy with the GIL
    released; another thread's store meanwhile, into a copy of the buffer (a pending reader
    of it), copied the half-written row and took the array to the copy, so the rest of the
    row went into the abandoned buffer (a helper's hunt: ~1 try in 5). Stores hold
    ``array._STORES`` from their checks to their end, as in Python."""
    rows, n = 16, 200_000
    values = [xp.asarray(np.full(n, float(i + 1))) for i in range(rows)]
    for value in values:
        float(value[0])
    expected = np.zeros((rows + 1, n))
    expected[:rows] = np.arange(1.0, rows + 1)[:, None]
    expected[rows, :8] = 5.0
    def write_rows(m, started):
        started.set()
        for i in range(rows):
            m[i] = values[i]

    def store_into_copies(m, started):
        started.wait()
        for j in range(8):
            reader = xp.sum(m)  # a pending reader: the next store is into a copy
            m[rows, j] = 5.0
            del reader

    for _ in range(20):  # the race took ~1 try in 7 here
        m = xp.zeros((rows + 1, n))
        m[rows, 1] = 0.0  # computed, its own buffer: row stores in place
        started = threading.Event()
        threads = [threading.Thread(target=work, args=(m, started)) for work in (write_rows, store_into_copies)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        np.testing.assert_array_equal(np.asarray(m), expected)


def test_window_assignments_match_numpy(backend):
    a, expected = xp.zeros((6, 5)), np.zeros((6, 5))
    for i in range(5):
        a[i, 1:4] = xp.asarray(np.full(3, i + 1.0))
        expected[i, 1:4] = i + 1.0
        a[i + 1] = float(i)
        expected[i + 1] = i
    np.testing.assert_array_equal(np.asarray(a), expected)


def test_in_place_updates_never_change_what_others_see():
    a = xp.asarray(np.arange(4.0)) + 0.0
    a[0] = 1.0
    value = a._value()  # a read-only NumPy view of the buffer: the next write must not reach it
    a[1] = 10.0
    assert value.tolist() == [1.0, 1.0, 2.0, 3.0]
    pending = a * 2.0  # a pending reader of the old value
    a[2] = 20.0
    assert np.asarray(pending).tolist() == [2.0, 20.0, 4.0, 6.0]
    alias = a  # the same Array object: sees the update, as the standard requires
    a[3] = 30.0
    assert np.asarray(alias).tolist() == [1.0, 10.0, 20.0, 30.0]


def test_a_callers_numpy_array_is_never_written():
    data = np.arange(4.0)
    a = xp.asarray(data)
    for i in range(4):
        a[i] = -1.0
    assert data.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.asarray(a).tolist() == [-1.0] * 4


def test_arrays_pickle_as_their_value_at_any_depth():
    x = xp.asarray(np.linspace(0.0, 1.0, 7))
    for _ in range(5000):
        x = x * 1.0001 - 0.0001
    back = pickle.loads(pickle.dumps(x, protocol=5))
    expected = np.linspace(0.0, 1.0, 7)
    for _ in range(5000):
        expected = expected * 1.0001 - 0.0001
    np.testing.assert_allclose(np.asarray(back), expected, rtol=1e-9)


def test_pickling_a_traced_array_raises_the_tracing_error():
    @xp.jit
    def f(x):
        pickle.dumps(x)
        return x

    with pytest.raises(xp.TracerError):
        f(xp.ones(3))


def test_the_compile_log_says_why_each_graph_compiled(caplog, fused):
    """A large graph compiles for its sizes, then shape-generic when they change; a small
    one is shape-generic at once (``Compiler.generic_first_elements``), and another size
    compiles nothing."""
    caplog.set_level(logging.INFO, logger="plaidarray.compiles")
    n = SCALAR_MAX_ELEMENTS + 1
    float(xp.sum(xp.sin(xp.asarray(np.ones(n))) * 3.0))
    float(xp.sum(xp.sin(xp.asarray(np.ones(n + 1))) * 4.0))
    float(xp.sum(xp.cos(xp.asarray(np.ones(37))) * 3.0))
    float(xp.sum(xp.cos(xp.asarray(np.ones(38))) * 4.0))
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3
    assert "new op structure" in messages[0] and "sin" in messages[0] and "shape-generic" not in messages[0]
    assert "new shapes/dtypes" in messages[1] and f"float64[{n}] -> float64[{n + 1}]" in messages[1]
    assert "shape-generic: sizes changed since the first graph" in messages[1]
    assert "new op structure" in messages[2] and "shape-generic: a small graph" in messages[2]


def test_the_compile_log_names_the_pending_bound_and_jit_signatures(caplog, monkeypatch, fused):
    caplog.set_level(logging.INFO, logger="plaidarray.compiles")
    monkeypatch.setattr(node_module, "MAX_PENDING", 8)
    y = xp.asarray(np.ones(41))
    for _ in range(20):  # past twice the bound: cut wherever the last cut's anchor is (trace/cuts.py)
        y = y - 1.0
    f = xp.jit(lambda a: a * 2)
    f(xp.ones(42))
    f(xp.ones(43))
    messages = [r.getMessage() for r in caplog.records]
    assert any("cut at PLAIDARRAY_MAX_PENDING" in m for m in messages)
    assert any("jit(<lambda>): new signature: argument leaf 0" in m and "(43,)" in m for m in messages)


def test_jit_traces_python_scalar_arguments_once_with_weak_types():
    @xp.jit
    def step(x, lr, n):
        return x - lr * x + n

    x = xp.asarray(np.linspace(0.0, 1.0, 5, dtype=np.float32))
    results = [step(x, lr, n) for lr, n in ((0.5, 1), (0.25, 2), (0.125, -3))]
    assert step.cache_info().misses == 1
    for (lr, n), got in zip(((0.5, 1), (0.25, 2), (0.125, -3)), results):
        assert got.dtype == xp.float32  # the scalars took x's dtype, as Python scalars do
        expected = np.linspace(0.0, 1.0, 5, dtype=np.float32)
        np.testing.assert_allclose(np.asarray(got), expected - np.float32(lr) * expected + np.float32(n), rtol=1e-6)


def test_jit_scalars_combined_among_themselves_stay_weak():
    f = xp.jit(lambda x, s: x * (s * 2.0 + 1))
    x = xp.ones(3, dtype=xp.float32)
    assert f(x, 1.5).dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(f(x, 1.5)), np.full(3, 4.0, np.float32))
    np.testing.assert_array_equal(np.asarray(f(x, 0.5)), np.full(3, 2.0, np.float32))
    assert f.cache_info().misses == 1


def test_jit_falls_back_to_scalar_values_when_python_needs_them():
    @xp.jit
    def repeat(x, n):
        for _ in range(n):  # n decides Python control flow
            x = x + 1.0
        return x

    np.testing.assert_array_equal(np.asarray(repeat(xp.zeros(2), 3)), [3.0, 3.0])
    np.testing.assert_array_equal(np.asarray(repeat(xp.zeros(2), 5)), [5.0, 5.0])


def test_in_place_update_of_a_0d_array():
    # The whole update is one store into the donated buffer: no output, no temporary
    # (the executable used to skip calling such code, so the store never happened).
    x = xp.full((), 0.0, dtype=xp.float32) + 0.0
    alias = xp.asarray(x, copy=False)
    for value in (1.0, 2.0, xp.asarray(3.0, dtype=xp.float32)):
        x[()] = value
        assert float(x) == float(value) and float(alias) == float(value)
