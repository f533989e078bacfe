"""Differential tests of basic indexing (ints, slices, None, Ellipsis) and of
``__setitem__`` against NumPy, on both backends."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import plaidarray as xp
from plaidarray.api import recipes, utility
from helpers import assert_same
from strategies import ALL, arrays, basic_keys, elements, index_for, shapes

any_dtype = st.sampled_from(ALL)


def _ready_and_lazy(a):
    """The array as a transferred buffer and as a not-yet-computed graph node with the same value."""
    return [("ready", xp.asarray(a)), ("lazy", xp.flip(xp.asarray(np.flip(a))))]


@given(data=st.data())
def test_getitem_basic(backend, data):
    a = data.draw(arrays(data.draw(any_dtype, label="dtype"), shapes()), label="a")
    key = data.draw(basic_keys(a.shape), label="key")
    expected = a[key]
    for how, x in _ready_and_lazy(a):
        assert_same(x[key], expected, exact=True, err_msg=f"{how} array, key {key!r}")


@given(data=st.data())
def test_getitem_hypothesis_basic_indices(backend, data):
    a = data.draw(arrays(data.draw(any_dtype, label="dtype"), shapes()), label="a")
    key = data.draw(hnp.basic_indices(a.shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True), label="key")
    assert_same(xp.asarray(a)[key], a[key], exact=True, err_msg=f"key {key!r}")


@given(data=st.data())
def test_getitem_chained(backend, data):
    """Indexing an indexing result (one graph with two windows)."""
    a = data.draw(arrays(np.int32, shapes(min_dims=1)), label="a")
    key1 = data.draw(basic_keys(a.shape, allow_none=False), label="key1")
    key2 = data.draw(basic_keys(a[key1].shape), label="key2")
    assert_same(xp.asarray(a)[key1][key2], a[key1][key2], exact=True)


@given(data=st.data())
def test_getitem_out_of_range_int_raises_index_error(backend, data):
    shape = data.draw(shapes(min_dims=1), label="shape")
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    n = shape[dim]
    bad = data.draw(st.one_of(st.integers(n, n + 3), st.integers(-n - 3, -n - 1)), label="index")
    key = (slice(None),) * dim + (bad,)
    x = xp.asarray(np.zeros(shape, np.float32))
    with pytest.raises(IndexError):
        x[key]
    with pytest.raises(IndexError):
        x[key] = 1.0
    with pytest.raises(IndexError):  # beside an index array, which is clamped, an int is still checked
        x[key + (xp.asarray([0]),) if len(shape) > dim + 1 else (xp.asarray([0]),) * dim + (bad,)]


@given(data=st.data())
def test_a_0d_integer_array_indexes_as_the_int_it_holds(backend, data):
    """A 0-d integer array in a key names one position, as in NumPy: out of range an
    IndexError, not a clamped position (a helper's hunt: eager ``x[a]`` and ``x[a, 0]``
    clamped, where jit and NumPy raise), and a read by it is a copy, as NumPy's is."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), label="shape")
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    n = shape[dim]
    index = data.draw(st.integers(-n - 2, n + 1), label="index")
    computed = data.draw(st.booleans(), label="computed")  # a ready buffer, or pending
    position = xp.asarray(np.int64(index)) if computed else xp.asarray(np.int64(index)) * 1
    key = (slice(None),) * dim + (position,)
    a = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    x = xp.asarray(a.copy())
    if not -n <= index < n:
        with pytest.raises(IndexError):
            x[key]
        return
    got, expected = x[key], a[(slice(None),) * dim + (np.array(index),)]
    assert_same(got, expected)
    got += 100.0  # a copy: the base stays as it is, as NumPy's
    np.testing.assert_array_equal(np.asarray(x), a)


@given(data=st.data())
def test_keys_of_ints_and_0d_integer_arrays_read_copies(backend, data):
    """A key of Python ints and 0-d integer arrays (``x[argmax(y)]``, ``m[i, argmin(d)]``)
    picks NumPy's element or block, of any integer dtype, ready or pending; out of range an
    IndexError; and the result is a copy, as NumPy's advanced indexing gives: a write to it
    does not reach the array, nor a later write to the array the result."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), label="shape")
    count = data.draw(st.integers(1, len(shape)), label="count")
    dtype = data.draw(st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.uint64]), label="dtype")
    key, numpy_key, inside = [], [], True
    for n in shape[:count]:
        low = 0 if np.dtype(dtype).kind == "u" else -n - 1
        index = data.draw(st.integers(low, n), label="index")
        inside &= -n <= index < n
        kind = data.draw(st.sampled_from(["int", "ready", "pending"]), label="kind")
        array = xp.asarray(np.asarray(index, dtype=dtype))
        key.append(index if kind == "int" else array if kind == "ready" else array + xp.asarray(np.asarray(0, dtype)))
        numpy_key.append(np.asarray(index, dtype=dtype) if kind != "int" else index)
    if not any(type(k) is not int for k in key):
        key[0], numpy_key[0] = xp.asarray(np.asarray(key[0], dtype=np.int64)), np.asarray(key[0], dtype=np.int64)
    a = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    x = xp.asarray(a.copy()) * 1.0
    if not inside:
        with pytest.raises(IndexError):
            x[tuple(key)]
        return
    got, expected = x[tuple(key)], a[tuple(numpy_key)]
    assert_same(got, expected, exact=True)
    got += 100.0
    np.testing.assert_array_equal(np.asarray(x), a)
    again = x[tuple(key)]
    x[...] = -1.0
    assert_same(again, expected, exact=True)


def test_whole_axes_and_new_axes_take_no_window():
    x = xp.asarray(np.arange(6.0).reshape(3, 2))
    y = x[:, None, :]
    assert y._node.op == "reshape" and y._node.operands == (x._node,)  # no dynamic_slice, no start values
    np.testing.assert_array_equal(np.asarray(y), np.arange(6.0).reshape(3, 1, 2))
    whole = x[...]
    assert whole is not x and whole._node is x._node
    whole[0, 0] = 7.0  # a write to the view reaches its base, as through a NumPy view
    np.testing.assert_array_equal(np.asarray(x)[0], [7.0, 1.0])


def test_windows_of_many_lengths_are_planned_once(monkeypatch):
    """A loop over windows of 600 lengths, run again, plans none of them again (the plans
    are kept for as many lengths as the executable cache keeps graphs), and each window
    is NumPy's."""
    from plaidarray.api import indexing

    monkeypatch.setattr(indexing, "_SLICES", {})  # other tests' windows on this worker take none of its room
    data = np.arange(1000.0)
    x = xp.asarray(data)
    for n in range(300, 900):
        x[n // 7:n // 7 + n]
    planned = []
    made = indexing._slice_plan
    monkeypatch.setattr(indexing, "_slice_plan", lambda *args: planned.append(args) or made(*args))
    for n in range(300, 900):
        np.testing.assert_allclose(float(xp.sum(x[n // 7:n // 7 + n])), np.sum(data[n // 7:n // 7 + n]), rtol=1e-13)
    assert not planned


def test_getitem_errors():
    x = xp.asarray(np.zeros((2, 3)))
    with pytest.raises(IndexError):
        x[0, 0, 0]  # too many indices
    with pytest.raises(IndexError):
        x[..., 0, ...]  # two ellipses


def _value_for(data, dtype, shape):
    """A Python scalar, or an array broadcastable to ``shape`` of ``dtype`` (or of a
    narrower dtype of the same kind, which promotes to it)."""
    if data.draw(st.booleans(), label="scalar value"):
        if dtype.kind == "b":
            return data.draw(st.booleans(), label="value")
        if dtype.kind in "iu":
            return data.draw(elements(dtype), label="value")
        return data.draw(st.one_of(elements(dtype), st.integers(-100, 100)), label="value")
    # A suffix of the target shape with some dimensions set to 1.
    ndim = data.draw(st.integers(0, len(shape)), label="value ndim")
    vshape = tuple(1 if data.draw(st.booleans()) else s for s in shape[len(shape) - ndim:])
    narrower = {np.dtype(np.int32): np.int8, np.dtype(np.float64): np.float32, np.dtype(np.uint16): np.uint8}
    vdtype = narrower.get(dtype, dtype) if data.draw(st.booleans(), label="narrower dtype") else dtype
    return data.draw(arrays(vdtype, vshape), label="value")


@given(data=st.data())
def test_setitem(backend, data):
    dtype = data.draw(any_dtype, label="dtype")
    a = data.draw(arrays(dtype, shapes()), label="a")
    key = data.draw(basic_keys(a.shape), label="key")
    value = _value_for(data, a.dtype, a[key].shape)
    expected = a.copy()
    expected[key] = value
    for how, x in _ready_and_lazy(a):
        source = a.copy()
        if how == "ready":
            x = xp.asarray(source)
        alias = x
        x[key] = xp.asarray(value) if isinstance(value, np.ndarray) else value
        assert_same(x, expected, exact=True, err_msg=f"{how} array, key {key!r}")
        # The same Array object is updated, so every name bound to it sees the new value.
        assert alias is x
        assert_same(alias, expected, exact=True, err_msg=f"{how} array through an alias")
        # The NumPy memory the array was created from is never written.
        np.testing.assert_array_equal(source, a, strict=True)


@given(data=st.data())
def test_setitem_then_compute(backend, data):
    """An updated array used in further computation, and several updates in sequence."""
    a = data.draw(arrays(np.float64, shapes(min_dims=1)), label="a")
    keys = data.draw(st.lists(basic_keys(a.shape, allow_none=False), min_size=1, max_size=3), label="keys")
    expected = a.copy()
    x = xp.asarray(a)
    for i, key in enumerate(keys):
        expected[key] = float(i)
        x[key] = float(i)
    assert_same(x * 2.0, expected * 2.0, exact=True)


def test_a_whole_array_write_runs_no_update(backend):
    """``x[...] = v``, ``x[:] = v``, ``x[()] = v`` of a 0-d array, with an array of its
    shape or (0-d) a Python scalar: the value becomes the array's value as it is, no update runs (a 0-d array's update had no installed kernel:
    a compile at a script's first such write), and later writes to either array, or to a
    view of it, do not reach the other."""
    for dims, key, value in (((), ..., 4.0), ((), (), 4.0), ((), ..., xp.asarray(4.0)),
                             ((3,), slice(None), xp.full((3,), 4.0)), ((2, 3), ..., xp.full((2, 3), 4.0))):
        x = xp.asarray(np.zeros(dims))
        before = xp.cache_info()
        x[key] = value
        after = xp.cache_info()
        assert after.hits + after.misses == before.hits + before.misses, (dims, key)
        assert_same(x, np.full(dims, 4.0), exact=True)
    y, z = xp.asarray(np.arange(3.0)), xp.asarray(np.zeros(3))
    z[:] = y
    z[0] = 7.0
    y[1] = -1.0
    assert_same(y, np.array([0.0, -1.0, 2.0]), exact=True)
    assert_same(z, np.array([7.0, 1.0, 2.0]), exact=True)
    base = xp.asarray(np.arange(6.0).reshape(2, 3))
    row = base[1]
    row[...] = xp.asarray(np.full(3, 9.0))
    row[:] = row[::-1] * 2.0
    assert_same(base, np.array([[0.0, 1.0, 2.0], [18.0, 18.0, 18.0]]), exact=True)


def test_lists_of_ints_and_bools_index_as_numpy_arrays_do(backend):
    """Beyond the standard, as NumPy: ``A[[k, p]] = A[[p, k]]`` swaps two rows."""
    a = np.arange(12.0).reshape(4, 3)
    x = xp.asarray(a)
    for key in ([3, 1], [True, False, True, False], [], (slice(None), [2, 0, 2]), ([0, 1], [2, 2])):
        np.testing.assert_array_equal(np.asarray(x[key]), a[key])
    x[[0, 2]] = x[[2, 0]]
    a[[0, 2]] = a[[2, 0]]
    np.testing.assert_array_equal(np.asarray(x), a)
    with pytest.raises(IndexError):
        x[[0.5]]


def test_setitem_rejects_values_of_a_higher_kind(backend):
    x = xp.asarray(np.zeros(3, np.int32))
    with pytest.raises(TypeError):
        x[0] = 1.5
    with pytest.raises(TypeError, match="cannot store float32 values into a int32 array"):
        x[:] = xp.asarray(np.zeros(3, np.float32))
    flags = xp.asarray(np.zeros(3, np.bool_))
    with pytest.raises(TypeError, match="cannot store int64 values into a bool array"):
        flags[1] = xp.asarray(np.int64(2))
    with pytest.raises(TypeError, match="cannot store complex64 values into a float64 array"):
        xp.asarray(np.zeros(3))[0] = xp.asarray(np.complex64(1))
    assert_same(x, np.zeros(3, np.int32), exact=True)


SAME_OR_LOWER_KINDS = [(np.float32, np.float64), (np.int32, np.int64), (np.int32, np.bool_), (np.uint8, np.int64),
                       (np.int64, np.uint64), (np.float32, np.int64), (np.float64, np.bool_),
                       (np.complex64, np.float64), (np.complex64, np.complex128), (np.int8, np.uint8)]


@pytest.mark.parametrize("target,source", SAME_OR_LOWER_KINDS)
def test_setitem_casts_values_of_a_kind_no_higher_as_numpy_does(backend, target, source):
    """NumPy-style code stores a float64 mean into a float32 array, a mask's count (int64)
    into an int32 one: the values are cast to the array's dtype, as NumPy's setitem casts
    them (integers wrap; floats round to nearest), by each kind of key."""
    values = np.array([3, -7, 200, 1, 0, 1 << 20]).astype(source)
    expected = np.zeros(6, target)
    expected[2:5] = values[2:5]
    expected[0] = values[0]
    mask = np.array([False, True, False, False, False, True])
    expected[mask] = values[mask]
    x = xp.asarray(np.zeros(6, target))
    x[2:5] = xp.asarray(values[2:5])
    x[0] = xp.asarray(values)[0]
    x[xp.asarray(mask)] = xp.asarray(values[mask])
    got = np.asarray(x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


# --- advanced indexing: integer arrays of any rank, masks over any axes, bools ----------

@st.composite
def advanced_keys(draw, shape):
    """A key mixing, per axis, an int, a slice, an in-range integer array (shapes that
    broadcast together, up to 2-D) or a boolean mask over one or two axes; with ``None``,
    ``True``/``False`` and ``...`` inserted, and at least one array or bool."""
    common = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), label="broadcast shape")
    parts, axis = [], 0
    while axis < len(shape):
        n = shape[axis]
        kinds = ["slice", "int", "array", "mask"] if n else ["slice", "mask"]
        kind = draw(st.sampled_from(kinds))
        if kind == "mask":
            span = draw(st.integers(1, min(2, len(shape) - axis)))
            dims = shape[axis:axis + span]
            parts.append(draw(hnp.arrays(np.bool_, dims)))
            axis += span
            continue
        if kind == "array":
            own = tuple(d if draw(st.booleans()) else 1 for d in common)[draw(st.integers(0, len(common))):]
            parts.append(draw(hnp.arrays(np.int64, own, elements=st.integers(-n, n - 1))))
        elif kind == "int":
            parts.append(draw(st.integers(-n, n - 1)))
        else:
            parts.append(draw(index_for(n).filter(lambda k: isinstance(k, slice))))
        axis += 1
    for extra in draw(st.lists(st.sampled_from([None, True, False]), max_size=2)):
        parts.insert(draw(st.integers(0, len(parts))), extra)
    if parts and draw(st.booleans()):
        at = draw(st.integers(0, len(parts) - 1))
        if isinstance(parts[at], slice) and parts[at] == slice(None):
            parts[at] = Ellipsis
    if not any(isinstance(k, (np.ndarray, bool)) for k in parts):
        parts.append(True)
    return tuple(parts)


def _as_plaid(key):
    return tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)


@given(data=st.data())
def test_getitem_advanced(backend, data):
    """NumPy's advanced indexing: the index arrays' broadcast shape replaces the axes they
    index, in place when they are adjacent in the key, else in front."""
    a = data.draw(arrays(np.float64, shapes(min_dims=1, max_dims=3, max_side=4)), label="a")
    key = data.draw(advanced_keys(a.shape), label="key")
    try:
        expected = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            xp.asarray(a)[_as_plaid(key)]
        return
    for how, x in _ready_and_lazy(a):
        assert_same(x[_as_plaid(key)], expected, exact=True, err_msg=f"{how} array, key {key!r}")
        assert_same(x[key], expected, exact=True, err_msg=f"{how} array, NumPy key {key!r}")


def test_ints_beside_index_arrays_are_offsets_of_the_gather():
    """``m[rows, 1]``: the int's position is added to the index arrays' linear positions as
    a number, normalised and checked in Python, not an index array of its own (a 0-d
    constant wrapped and clamped by six ops); NumPy's elements, negative ints included."""
    values = np.arange(60.0).reshape(3, 4, 5)
    rows = np.array([0, 2, -1, 1])
    for key in [(rows, 1), (-1, rows), (rows, slice(None), -2), (rows, 2, 3), (1, rows % 4, rows)]:
        got = xp.asarray(values)[tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)]
        arrays = sum(isinstance(k, np.ndarray) for k in key)
        selects, pending = 0, [got._node]
        while pending:
            node = pending.pop()
            selects += node.op == "select"
            pending.extend(node.operands)
        assert selects == arrays  # one negative index's wrap per index array
        np.testing.assert_array_equal(np.asarray(got), values[key])


@pytest.mark.parametrize(("shape", "mask_shape"), [
    ((0, 1), (0, 0)), ((2, 1), (2, 0)), ((2, 3), (0,)), ((2, 3), (0, 3)),
])
def test_a_zero_size_mask_fits_axes_of_any_length(backend, shape, mask_shape):
    """NumPy (and array-api-strict) let a mask axis of length 0 index any axis: it selects
    nothing (array-api-tests' test_getitem_masking found the case)."""
    expected = np.zeros(shape)[np.zeros(mask_shape, dtype=bool)]
    assert_same(xp.zeros(shape)[xp.zeros(mask_shape, dtype=xp.bool)], expected, exact=True)


@pytest.mark.parametrize("key", [(1, slice(None)), (1, Ellipsis, slice(None)), (0, 1), (slice(1, 3), slice(None))])
def test_a_store_with_more_indices_than_axes_raises_and_writes_nothing(backend, key):
    """``x[1, :] = v`` of a vector is NumPy's IndexError (too many indices), for a
    computed array, a pending one and a view alike: the store's trailing whole-axis
    slices were dropped before the key was checked, and it wrote ``x[1]``."""
    a = np.arange(4.0)
    for how, x in [*_ready_and_lazy(a), ("view", xp.asarray(np.stack([a, a]))[1])]:
        with pytest.raises(IndexError, match="too many indices"):
            x[key] = 2.0
        np.testing.assert_array_equal(np.asarray(x), a, err_msg=how)


def test_a_mask_that_does_not_fit_raises(backend):
    with pytest.raises(IndexError, match="does not match"):
        xp.zeros((2, 3))[xp.zeros((3,), dtype=xp.bool)]
    with pytest.raises(IndexError, match="does not match"):
        xp.zeros((0, 1))[xp.zeros((1, 1), dtype=xp.bool)]


@given(data=st.data())
def test_setitem_advanced(backend, data):
    """``x[key] = value`` for the keys of test_getitem_advanced: NumPy's elements change,
    the last of repeated positions winning as in NumPy."""
    a = data.draw(arrays(np.float64, shapes(min_dims=1, max_dims=3, max_side=4)), label="a")
    key = data.draw(advanced_keys(a.shape), label="key")
    try:
        selected = a[key].shape
    except IndexError:
        return
    scalar = data.draw(st.booleans(), label="scalar value")
    value = 7.5 if scalar else data.draw(arrays(np.float64, selected), label="value")
    expected = a.copy()
    expected[key] = value
    for how, x in _ready_and_lazy(a):
        x[_as_plaid(key)] = value if scalar else xp.asarray(value)
        assert_same(x, expected, exact=True, err_msg=f"{how} array, key {key!r}")


@given(data=st.data())
def test_setitem_of_a_mask_takes_one_value_per_true_position_or_raises(backend, data):
    """``x[mask] = values`` with ``mask`` over the leading axes: one row of ``values`` per
    True position, or one to broadcast; another number raises ValueError, as NumPy does
    (it gave a wrong answer, clamping the running count); ``x[m] *= c`` as a loop step."""
    a = data.draw(arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)), label="a")
    span = data.draw(st.integers(1, a.ndim), label="mask axes")
    mask = data.draw(hnp.arrays(np.bool_, a.shape[:span]), label="mask")
    count = int(mask.sum())
    rows = data.draw(st.sampled_from(sorted({count, max(count - 1, 0), count + 1, 1})), label="rows")
    value = data.draw(arrays(np.float64, (rows, *a.shape[span:])), label="value")
    try:
        (a.copy())[mask] = value
    except ValueError:
        for how, x in _ready_and_lazy(a):
            with pytest.raises(ValueError):
                x[xp.asarray(mask)] = xp.asarray(value)
            assert_same(x, a, exact=True, err_msg=f"{how} array: unchanged after the error")
        return
    for how, x in _ready_and_lazy(a):
        expected = a.copy()
        expected[mask] = value
        x[xp.asarray(mask)] = xp.asarray(value)
        assert_same(x, expected, exact=True, err_msg=f"{how} array")
        selected = x > 0.5
        x[selected] *= 0.25
        expected[expected > 0.5] *= 0.25
        assert_same(x, expected, exact=True, err_msg=f"{how} array, x[m] *= c")


@given(data=st.data(), dtype=st.sampled_from([np.float64, np.float32, np.complex64, np.bool_, np.int32]))
def test_a_python_scalar_at_a_mask_of_the_arrays_shape_is_a_where(backend, data, dtype):
    """``x[mask] = v`` with a mask of ``x``'s shape and a Python scalar ``x``'s dtype holds
    as it is (a float or an int into floats, a bool into bools) is ``where(mask, v, x)``,
    recorded as ``where`` records it, not by the rules' masked update: NumPy's values and
    ``x``'s dtype, through views too; an int into integers (its range checked) is the rules'."""
    from plaidarray.api import indexing
    a = data.draw(hnp.arrays(dtype, hnp.array_shapes(max_dims=3, max_side=4)), label="a")
    mask = data.draw(hnp.arrays(np.bool_, a.shape), label="mask")
    kind = np.dtype(dtype).kind
    values = st.booleans() if kind == "b" else st.sampled_from([3, -2] if kind == "i" else [0.5, -2.0, 3, float("inf")])
    value = data.draw(values, label="v")
    expected = a.copy()
    expected[mask] = value
    by_rules = []
    rules = indexing._masked_update
    indexing._masked_update = lambda *args: by_rules.append(args) or rules(*args)
    recipes.forget()  # an earlier example's recipe of the same signature would replay the rules' nodes
    try:
        for how, x in _ready_and_lazy(a):
            x[xp.asarray(mask)] = value
            np.testing.assert_array_equal(np.asarray(x), expected, strict=True, err_msg=f"{how} array")
        if a.ndim:
            root = xp.asarray(np.stack([a, a]))
            row = root[1]
            row[xp.asarray(mask)] = value
            np.testing.assert_array_equal(np.asarray(root), np.stack([a, expected]), strict=True, err_msg="a view")
    finally:
        indexing._masked_update = rules
    assert (len(by_rules) == 0) == (kind != "i")


def test_values_at_a_mask_over_every_axis_are_scattered_into_the_flattened_array():
    """``img[mask] = values`` with ``mask`` of ``img``'s shape: one scatter into ``img``
    flattened (as into a vector), not the running count of True values and a select."""
    a = np.arange(12.0).reshape(3, 4)
    mask = a % 3 == 1
    x = xp.asarray(a.copy())
    x[xp.asarray(mask)] = -x[xp.asarray(mask)]
    assert x._node.op == "reshape" and x._node.operands[0].op == "scatter"
    a[mask] = -a[mask]
    np.testing.assert_array_equal(np.asarray(x), a)


def test_a_mask_written_after_a_selection_selects_anew(backend):
    """A mask's count is kept once read (``searching.true_count``): a store into the mask
    afterwards, in place where nothing else sees it, must not leave the old count."""
    values = xp.asarray(np.arange(5.0))
    mask = xp.asarray(np.array([True, False, False, True, False]))
    assert_same(values[mask], np.array([0.0, 3.0]), exact=True)
    mask[1] = True
    assert_same(values[mask], np.array([0.0, 1.0, 3.0]), exact=True)
    mask[3] = False
    values[mask] = xp.asarray([7.0, 8.0])
    assert_same(values, np.array([7.0, 8.0, 2.0, 3.0, 4.0]), exact=True)


def test_a_kept_mask_count_is_still_a_read_of_a_value(backend):
    """A selection by a mask whose count is kept (``searching.true_count``) still depends
    on a value: recorded calls must not replay its count for another mask of its shape
    (``api/recipes.py``; SciPy's ``vectorized_filter`` tests summed every window's three
    elements so, where the footprint picked two)."""
    x = xp.asarray(np.arange(6.0))
    every, ends = xp.asarray([True, True, True]), xp.asarray([True, False, True])
    for _ in range(3):
        assert_same(x[1:4][every], np.array([1.0, 2.0, 3.0]), exact=True)
    assert_same(x[1:4][ends], np.array([1.0, 3.0]), exact=True)
    assert_same(x[2:5][ends], np.array([2.0, 4.0]), exact=True)


def test_a_computed_index_array_is_checked_once_per_axis_length(backend, monkeypatch):
    """A loop's ``x[idx] = v`` at one computed index array reads its range once (values of
    a computed array never change): the next writes with it run no check, one of another
    axis length is checked, and an index array written in between is checked anew."""
    checks = []
    real_any = utility.any
    monkeypatch.setattr(utility, "any", lambda *a, **k: checks.append(1) or real_any(*a, **k))
    x, y = xp.zeros(6), xp.zeros(3)
    idx = xp.asarray([1, 4])
    for value in (1.0, 2.0, 3.0):
        x[idx] = value
    assert len(checks) == 1
    with pytest.raises(IndexError):
        y[idx] = 1.0  # 4 is past a length of 3
    assert len(checks) == 2
    idx[1] = 9
    with pytest.raises(IndexError):
        x[idx] = 4.0
    np.testing.assert_array_equal(np.asarray(x), [0.0, 3.0, 0.0, 0.0, 3.0, 0.0])


def test_setitem_with_an_index_out_of_range_raises(backend):
    x = xp.zeros((2, 3))
    with pytest.raises(IndexError, match="outside the array"):
        x[:, xp.asarray([0, 3])] = 1.0
    np.testing.assert_array_equal(np.asarray(x), np.zeros((2, 3)))


@given(data=st.data())
def test_a_value_with_leading_unit_axes_is_stored_as_numpy_stores_it(backend, data):
    """``x[i] = y[j:j + 1]``, ``m[i] = row[None]``: a value whose extra leading axes are
    all 1 is stored as the value without them, as NumPy's assignment drops them (whose
    element assignment now refuses a size-1 array, so the expected value is stored
    without its unit axes); a basic key or an index array, on ready and pending arrays."""
    a = data.draw(arrays(np.float64, shapes(min_dims=1)), label="a")
    if a.shape[0] and data.draw(st.booleans(), label="advanced"):
        key = xp.asarray(data.draw(st.lists(st.integers(0, a.shape[0] - 1), min_size=1, max_size=3), label="rows"))
        selected = a[np.asarray(key)].shape
    else:
        key = data.draw(basic_keys(a.shape), label="key")
        selected = a[key].shape
    extra = (1,) * data.draw(st.integers(1, 2), label="extra")
    value = data.draw(arrays(np.float64, st.just(extra + selected)), label="value")
    expected = a.copy()
    expected[np.asarray(key) if isinstance(key, xp.Array) else key] = value.reshape(selected)
    for how, x in _ready_and_lazy(a):
        x[key] = xp.asarray(value)
        assert_same(x, expected, exact=True, err_msg=f"{how} array, key {key!r}")


def test_a_block_store_into_a_pending_array_runs_its_graph_and_writes_in_place(backend):
    """``d = sum((p - p[i]) ** 2, axis=1); d[i] = inf``: an element or a block stored into
    a pending array that one array holds runs the array's graph, then writes the block
    into its buffer (no update recorded); a pending reader recorded before the store still
    sees the old value, and an array holding the same node keeps it."""
    a = np.arange(12.0).reshape(4, 3)
    p = xp.asarray(a)
    d = xp.sum((p - p[1]) ** 2, axis=1)
    reader = d * 2.0
    d[1] = xp.inf
    assert d._node.buffer is not None and d._node.op != "dynamic_update_slice"
    want = np.sum((a - a[1]) ** 2, axis=1)
    stored = want.copy()
    stored[1] = np.inf
    assert_same(d, stored, exact=True)
    assert_same(reader, want * 2.0, exact=True)
    rows = p * 1.0
    rows[2, 1:] = xp.asarray([7.0, 8.0])
    expected = a.copy()
    expected[2, 1:] = [7.0, 8.0]
    assert_same(rows, expected, exact=True)
    shared = p + 1.0
    same = shared[...]
    shared[0] = -1.0
    assert_same(shared, np.concatenate([[[-1.0] * 3], a[1:] + 1.0]), exact=True)
    assert_same(same, np.concatenate([[[-1.0] * 3], a[1:] + 1.0]), exact=True)


def test_a_value_whose_leading_axes_are_not_all_1_is_refused(backend):
    """Only unit axes are dropped: (2, 1) into two elements, (2,) into one are errors."""
    x = xp.arange(7.0)
    with pytest.raises(ValueError, match="broadcast"):
        x[1:3] = xp.asarray([[8.0], [9.0]])
    with pytest.raises(ValueError, match="broadcast"):
        x[2] = xp.asarray([1.0, 2.0])


def test_a_list_or_tuple_value_is_stored_as_numpy_stores_it(backend):
    """``m[0, 1:3] = [1.0, 2.0]`` and ``v[idx] = (1, 2)``: a list or tuple value is taken
    as NumPy's ``asarray`` types it, then stored as an array value (floats into an int
    array are refused, as they are from an array)."""
    m, v = xp.zeros((2, 4)), xp.zeros(5, dtype=xp.int32)
    m[0, 1:3] = [1.0, 2.0]
    m[1] = (4, 5, 6, 7)
    v[xp.asarray([0, 3])] = [7, 8]
    assert_same(m, np.array([[0.0, 1.0, 2.0, 0.0], [4.0, 5.0, 6.0, 7.0]]), exact=True)
    assert_same(v, np.array([7, 0, 0, 8, 0], np.int32), exact=True)
    with pytest.raises(TypeError, match="cannot store float64"):
        v[1:3] = [1.5, 2.5]


def test_uint64_index_arrays_read_and_write_numpys_elements(backend):
    """uint64 indices (a sum of uint8 flags is uint64) pick and write NumPy's elements, the
    last of repeated positions winning; one past 2**63, which names no position, raises
    IndexError on a write rather than wrapping to a negative index."""
    a = np.arange(12.0).reshape(3, 4)
    picks = np.array([2, 0, 2], np.uint64)
    x = xp.asarray(a) * 1.0
    x[xp.asarray(picks)] = xp.asarray(np.array([[1.0], [2.0], [3.0]]))
    x[xp.asarray(picks[:1]), xp.asarray(picks[1:2])] += 5.0
    expected = a.copy()
    expected[picks] = np.array([[1.0], [2.0], [3.0]])
    expected[picks[:1], picks[1:2]] += 5.0
    assert_same(x, expected, exact=True)
    assert_same(xp.take(xp.asarray(a[0]), xp.asarray(picks)), np.take(a[0], picks), exact=True)
    with pytest.raises(IndexError, match="outside the array"):
        x[xp.asarray(np.array([2**64 - 1], np.uint64))] = 0.0
    assert_same(x, expected, exact=True)


def test_counts_by_0d_index_arrays_are_window_updates(backend):
    """``counts[labels[i]] += 1`` and ``table[a[i], b[i]] += 1`` (0-d integer arrays
    among ints and slices) write where NumPy writes, recorded as a window update, not a
    scatter; a negative one counts from the end, one out of range raises IndexError."""
    rng = np.random.default_rng(0)
    labels, rows, cols = rng.integers(0, 5, 40), rng.integers(-3, 3, 40), rng.integers(0, 4, 40)
    counts, table = xp.zeros(5, dtype=xp.int64), xp.zeros((3, 4), dtype=xp.int32)
    expected_counts, expected_table = np.zeros(5, np.int64), np.zeros((3, 4), np.int32)
    ls, rs, cs = xp.asarray(labels), xp.asarray(rows), xp.asarray(cols)
    for i in range(40):
        counts[ls[i]] += 1
        table[rs[i], cs[i]] += 2
        table[rs[i], 1:3] = table[rs[i], 1:3] + 1
        expected_counts[labels[i]] += 1
        expected_table[rows[i], cols[i]] += 2
        expected_table[rows[i], 1:3] = expected_table[rows[i], 1:3] + 1
    assert table._node.op is None or table._node.op == "dynamic_update_slice"
    assert_same(counts, expected_counts)
    assert_same(table, expected_table)
    with pytest.raises(IndexError):
        counts[xp.asarray(5)] = 1
    with pytest.raises(IndexError):
        table[xp.asarray(-4), 0] = 1
    assert_same(counts, expected_counts)


def test_an_element_of_a_computed_array_is_loaded_as_a_copy(backend):
    """``A[i, j]`` of a computed array (an int for every axis) is its element loaded by the
    backend's transfer, no executable run: NumPy's value and dtype, negative indices from
    the end, a copy as NumPy's scalar is (later writes to either leave the other), an
    index out of range an IndexError."""
    data = np.arange(12, dtype=np.int16).reshape(3, 4)
    a = xp.asarray(data)
    elements = [a[1, 2], a[-1, -1], a[0, -4]]
    assert all(e._node.buffer is not None for e in elements)  # loaded, no graph to run
    for got, want in zip(elements, (data[1, 2], data[-1, -1], data[0, -4])):
        assert_same(got, np.asarray(want), exact=True)
    a[1, 2] = 99
    elements[1] += 1
    assert int(elements[0]) == 6 and int(a[1, 2]) == 99 and int(a[-1, -1]) == 11
    with pytest.raises(IndexError):
        a[3, 0]


def test_searches_in_an_empty_array_insert_every_value_first(backend):
    for values in (np.array([1.0, -2.0, 3.0]), np.float64(0.5), np.zeros((2, 0))):
        for side in ("left", "right"):
            assert_same(xp.searchsorted(xp.zeros(0), xp.asarray(values), side=side),
                        np.searchsorted(np.zeros(0), values, side=side))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_index_arrays_of_every_integer_dtype_pick_numpys_elements(backend, dtype):
    """Narrower indices are widened to int64 before the gather (``_wide_index``): the
    same elements as NumPy's, in reads, takes and writes."""
    data = np.arange(20.0).reshape(4, 5)
    index = np.array([3, 0, 2], dtype=dtype)
    x = xp.asarray(data)
    assert_same(x[xp.asarray(index)], data[index], exact=True)
    assert_same(xp.take(x, xp.asarray(index), axis=1), np.take(data, index, axis=1), exact=True)
    order = np.argsort(-data, axis=1).astype(dtype)
    assert_same(xp.take_along_axis(x, xp.asarray(order), axis=1), np.take_along_axis(data, order, axis=1), exact=True)
    written, expected = xp.asarray(data, copy=True), data.copy()
    written[xp.asarray(index)] = -1.0
    expected[index] = -1.0
    assert_same(written, expected, exact=True)
