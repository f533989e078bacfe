"""Differential tests against NumPy for the rest of the standard: searching, sorting,
set functions, scans, gathers, manipulation and creation helpers, complex parts,
data-dependent indexing, DLPack and array-api-compat, on both backends."""

from __future__ import annotations

import os

import array_api_compat
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import plaidarray as xp
from device_choice import ON_HOST, host_only

REAL = [np.int8, np.int32, np.uint16, np.int64, np.float32, np.float64]
FLOATS = [np.float32, np.float64]


def _array(data, dtype, min_dims=1, max_dims=3, min_side=1, special=True):
    dtype = np.dtype(dtype)
    shape = data.draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=5))
    if dtype.kind == "f":
        elements = st.floats(-100, 100, width=dtype.itemsize * 8)
        if special:
            elements = elements | st.sampled_from([np.nan, np.inf, -np.inf, -0.0])
    elif dtype.kind == "b":
        elements = st.booleans()
    else:
        info = np.iinfo(dtype)
        elements = st.integers(max(info.min, -50), min(info.max, 50))
    return data.draw(hnp.arrays(dtype, shape, elements=elements))


def _same(got, expected, exact=False):
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if exact or expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-12,
                                   atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("dtype", REAL)
@given(data=st.data())
def test_sort_argsort_are_stable_like_numpy(backend, dtype, data):
    a = _array(data, dtype)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    _same(xp.argsort(xp.asarray(a), axis=axis), np.argsort(a, axis=axis, kind="stable"))
    _same(xp.sort(xp.asarray(a), axis=axis), np.sort(a, axis=axis), exact=True)
    flipped = np.flip(a, axis=axis)
    expected = np.flip(np.sort(flipped, axis=axis), axis=axis)  # descending, NaN first
    _same(xp.sort(xp.asarray(a), axis=axis, descending=True), expected, exact=True)


def _stable_descending_order(a: np.ndarray, axis: int) -> np.ndarray:
    """The stable descending argsort of ``a`` along ``axis``, by Python's sort: NaN first,
    then larger values, equal values (0.0 and -0.0 too) in their order."""
    def key(row, i):
        v = row[i].item()
        return (0, 0, i) if v != v else (1, -v, i)

    moved = np.moveaxis(a, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else np.zeros((0, 0), a.dtype)
    order = np.array([sorted(range(len(row)), key=lambda i, row=row: key(row, i)) for row in rows], dtype=np.int64)
    return np.moveaxis(order.reshape(moved.shape), -1, axis)


@pytest.mark.parametrize("dtype", [*REAL, np.uint64, np.bool_])
@given(data=st.data())
def test_long_rows_sort_stably_like_numpy(backend, dtype, data):
    """Rows longer than the sort's insertion runs (``runtime_routines.RUN``), so that merge
    passes run: few distinct values (ties, whose order stability fixes), the extremes of
    integer types, NaN, infinities and both zeros (equal keys: they keep their order);
    descending is stable too, NaN first."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        elements = st.sampled_from([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 3.0, -2.0]) | \
            st.floats(-1e6, 1e6, width=dtype.itemsize * 8)
    elif dtype.kind == "b":
        elements = st.booleans()
    else:
        info = np.iinfo(dtype)
        elements = st.sampled_from([int(info.min), int(info.max), 0, 1, 2]) | st.integers(int(info.min), int(info.max))
    rows = data.draw(st.integers(1, 3), label="rows")
    length = data.draw(st.integers(0, 80) | st.sampled_from([16, 17, 31, 32, 33, 48, 64, 65]), label="length")
    a = data.draw(hnp.arrays(dtype, (rows, length), elements=elements))
    axis = data.draw(st.sampled_from([1, -1, 0]), label="axis")
    a = a if axis != 0 else a.T
    _same(xp.argsort(xp.asarray(a), axis=axis), np.argsort(a, axis=axis, kind="stable"))
    _same(xp.argsort(xp.asarray(a), axis=axis, descending=True), _stable_descending_order(a, axis))
    _same(xp.sort(xp.asarray(a), axis=axis), np.sort(a, axis=axis), exact=True)


@given(data=st.data())
def test_booleans_sort_as_numpy_sorts_them(backend, data):
    """Beyond the standard (real numbers only), as NumPy: False before True, stably."""
    a = _array(data, np.dtype(np.bool_))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    _same(xp.argsort(xp.asarray(a), axis=axis), np.argsort(a, axis=axis, kind="stable"))
    _same(xp.sort(xp.asarray(a), axis=axis), np.sort(a, axis=axis), exact=True)
    _same(xp.sort(xp.asarray(a), axis=axis, descending=True), np.flip(np.sort(a, axis=axis), axis=axis), exact=True)


@given(data=st.data())
def test_argmax_argmin_of_booleans_find_the_first_true_and_false(backend, data):
    """Beyond the standard (real numbers only), as NumPy: ``argmax(mask)`` is the first True."""
    a = _array(data, np.dtype(np.bool_))
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    if a.size and (axis is None or a.shape[axis]):
        _same(xp.argmax(xp.asarray(a), axis=axis), np.argmax(a, axis=axis))
        _same(xp.argmin(xp.asarray(a), axis=axis), np.argmin(a, axis=axis))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_of_a_0d_array_along_its_axis_as_numpys(backend, name):
    """NumPy takes axis 0 of a 0-d array, as the reductions here do: the index 0 (an
    internal unpacking error before); another axis is out of bounds."""
    for keepdims in (False, True):
        got = getattr(xp, name)(xp.asarray(3.0), axis=0, keepdims=keepdims)
        assert got.shape == () and int(got) == getattr(np, name)(np.asarray(3.0), axis=0) == 0
    with pytest.raises(ValueError, match="out of bounds"):
        getattr(xp, name)(xp.asarray(3.0), axis=1)


@pytest.mark.parametrize("dtype", REAL)
@given(data=st.data())
def test_argmax_argmin_count_nonzero(backend, dtype, data):
    a = _array(data, dtype)
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    _same(xp.argmax(xp.asarray(a), axis=axis), np.argmax(a, axis=axis))
    _same(xp.argmin(xp.asarray(a), axis=axis), np.argmin(a, axis=axis))
    _same(xp.count_nonzero(xp.asarray(a), axis=axis), np.count_nonzero(a, axis=axis))


@pytest.mark.parametrize("dtype", REAL)
@given(data=st.data())
def test_cumulative_sum_prod(backend, dtype, data):
    a = _array(data, dtype, max_dims=2, special=False)
    axis = data.draw(st.integers(0, a.ndim - 1))
    acc = np.int64 if np.dtype(dtype).kind == "i" else np.uint64 if np.dtype(dtype).kind == "u" else dtype
    _same(xp.cumulative_sum(xp.asarray(a), axis=axis), np.cumsum(a, axis=axis, dtype=acc))
    small = np.clip(a, -3, 3).astype(dtype)
    _same(xp.cumulative_prod(xp.asarray(small), axis=axis), np.cumprod(small, axis=axis, dtype=acc))


@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
def test_std_var(backend, dtype, data):
    a = _array(data, dtype, special=False)
    correction = data.draw(st.sampled_from([0, 1]))
    with np.errstate(all="ignore"):
        _same(xp.var(xp.asarray(a), correction=correction), np.var(a, ddof=correction))
        _same(xp.std(xp.asarray(a), axis=0, correction=correction), np.std(a, axis=0, ddof=correction))


def _same_groups(a: np.ndarray) -> None:
    """``unique_all``, ``unique_counts`` and ``unique_values`` of ``a`` are NumPy's ``unique``'s."""
    values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    out = xp.unique_all(xp.asarray(a))
    _same(out.values, values, exact=True)
    _same(out.indices, index)
    _same(out.inverse_indices, inverse.reshape(a.shape))
    _same(out.counts, counts)
    _same(xp.unique_counts(xp.asarray(a)).counts, counts)
    _same(xp.unique_values(xp.asarray(a)), values, exact=True)


@pytest.mark.parametrize("dtype", REAL)
@given(data=st.data())
def test_unique_functions_and_nonzero(backend, dtype, data):
    a = _array(data, dtype, special=False)
    _same_groups(a)
    for got, expected in zip(xp.nonzero(xp.asarray(a)), np.nonzero(a)):
        _same(got, expected)


def test_unique_functions_replay_their_sort_for_new_values_of_one_signature(backend):
    """The sort and group starts of the set functions are kept per signature (a recipe,
    ``set_functions._sorted``): calls on other values of one shape and dtype, the second
    capturing and the next replaying, give NumPy's groups for their own values."""
    rng = np.random.default_rng(3)
    for batch in [rng.integers(0, k, (4, 6)).astype(np.float64) for k in (3, 9, 2, 24, 5)]:
        _same_groups(batch)
    for one in (np.array([2.5]), np.array([-1.0])):
        _same(xp.unique_counts(xp.asarray(one)).counts, np.array([1]))
        _same(xp.unique_values(xp.asarray(one)), one, exact=True)


@given(data=st.data())
def test_searchsorted_and_isin(backend, data):
    sorted_ = np.sort(_array(data, np.float64, max_dims=1))
    values = _array(data, np.float64)
    side = data.draw(st.sampled_from(["left", "right"]))
    _same(xp.searchsorted(xp.asarray(sorted_), xp.asarray(values), side=side),
          np.searchsorted(sorted_, values, side=side).astype(np.int64))
    ints = _array(data, np.int32, special=False)
    pool = _array(data, np.int32, special=False)
    _same(xp.isin(xp.asarray(ints), xp.asarray(pool)), np.isin(ints, pool))


@pytest.mark.parametrize("dtype", REAL)
@given(data=st.data())
def test_take_and_take_along_axis(backend, dtype, data):
    a = _array(data, dtype)
    axis = data.draw(st.integers(0, a.ndim - 1))
    n = a.shape[axis]
    idx = data.draw(hnp.arrays(np.int64, data.draw(st.integers(0, 6)), elements=st.integers(-n, n - 1)))
    _same(xp.take(xp.asarray(a), xp.asarray(idx), axis=axis), np.take(a, idx, axis=axis), exact=True)
    along = data.draw(hnp.arrays(np.int32, a.shape, elements=st.integers(0, n - 1)))
    _same(xp.take_along_axis(xp.asarray(a), xp.asarray(along), axis=axis), np.take_along_axis(a, along, axis=axis),
          exact=True)


@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
def test_where_clip_hypot_nextafter(backend, dtype, data):
    a = _array(data, dtype)
    b = _array(data, dtype, min_dims=0, max_dims=0)
    _same(xp.where(xp.asarray(a > 0), xp.asarray(a), xp.asarray(b)), np.where(a > 0, a, b), exact=True)
    lo, hi = sorted(data.draw(st.lists(st.floats(-10, 10), min_size=2, max_size=2)))
    _same(xp.clip(xp.asarray(a), lo, hi), np.clip(a, dtype(lo), dtype(hi)), exact=True)
    low = data.draw(hnp.arrays(dtype, data.draw(hnp.broadcastable_shapes(a.shape, max_dims=a.ndim + 1)),
                               elements=st.floats(-10, 10, width=np.dtype(dtype).itemsize * 8)), label="low")
    _same(xp.clip(xp.asarray(a), xp.asarray(low)), np.clip(a, low, None), exact=True)  # may widen x
    _same(xp.hypot(xp.asarray(a), xp.asarray(b)), np.hypot(a, b))
    _same(xp.nextafter(xp.asarray(a), xp.asarray(b)), np.nextafter(a, b), exact=True)


@given(data=st.data())
def test_manipulation_helpers(backend, data):
    a = _array(data, np.int32, special=False)
    axis = data.draw(st.integers(0, a.ndim - 1))
    shift = data.draw(st.integers(-7, 7))
    _same(xp.roll(xp.asarray(a), shift, axis=axis), np.roll(a, shift, axis=axis))
    _same(xp.roll(xp.asarray(a), shift), np.roll(a, shift))
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)))
    _same(xp.tile(xp.asarray(a), reps), np.tile(a, reps))
    r = data.draw(st.integers(0, 3))
    _same(xp.repeat(xp.asarray(a), r, axis=axis), np.repeat(a, r, axis=axis))
    counts = data.draw(hnp.arrays(np.int64, a.shape[axis], elements=st.integers(0, 3)))
    _same(xp.repeat(xp.asarray(a), xp.asarray(counts), axis=axis), np.repeat(a, counts, axis=axis))
    _same(xp.moveaxis(xp.asarray(a), axis, -1), np.moveaxis(a, axis, -1))
    for got, expected in zip(xp.unstack(xp.asarray(a), axis=axis), np.moveaxis(a, axis, 0)):
        _same(got, expected)
    _same(xp.diff(xp.asarray(a), axis=axis), np.diff(a, axis=axis))


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_diff_with_scalar_and_zero_dimensional_ends(backend, dtype):
    """A Python scalar or a 0-d array as ``prepend``/``append`` is one element along the
    axis, broadcast across the others, as NumPy takes it (``np.diff(g, prepend=1.0)``)."""
    a = np.arange(12, dtype=dtype).reshape(3, 4) ** 2
    for axis in (0, 1, -1):
        _same(xp.diff(xp.asarray(a), axis=axis, prepend=1.0), np.diff(a, axis=axis, prepend=1.0))
        _same(xp.diff(xp.asarray(a), axis=axis, append=xp.asarray(dtype(5))),
              np.diff(a, axis=axis, append=np.asarray(dtype(5))))
        _same(xp.diff(xp.asarray(a), axis=axis, n=2, prepend=2, append=xp.asarray(a)[:1] if axis == 0 else 3),
              np.diff(a, axis=axis, n=2, prepend=2, append=a[:1] if axis == 0 else 3))
    _same(xp.diff(xp.asarray(a), axis=0, prepend=np.ones((1, 4), dtype=dtype)),
          np.diff(a, axis=0, prepend=np.ones((1, 4), dtype=dtype)))
    with pytest.raises(TypeError, match="unsupported dtype"):
        xp.diff(xp.asarray(a), prepend="1")


def test_diff_keeps_float32_with_a_python_float_end(backend):
    """The scalar takes the array's dtype by the standard's promotion, as ``x + 1.0`` does."""
    got = xp.diff(xp.asarray([1.0, 4.0], dtype=xp.float32), prepend=1.0)
    assert got.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(got), np.array([0.0, 3.0], dtype=np.float32))


@given(data=st.data())
def test_triangles_and_meshgrid(backend, data):
    a = _array(data, np.float64, min_dims=2, special=False)
    k = data.draw(st.integers(-3, 3))
    _same(xp.tril(xp.asarray(a), k=k), np.tril(a, k=k), exact=True)
    _same(xp.triu(xp.asarray(a), k=k), np.triu(a, k=k), exact=True)
    x, y = np.arange(3.0), np.arange(4.0)
    for indexing in ("xy", "ij"):
        for got, expected in zip(xp.meshgrid(xp.asarray(x), xp.asarray(y), indexing=indexing),
                                 np.meshgrid(x, y, indexing=indexing)):
            _same(got, expected, exact=True)


def test_meshgrid_of_one_array_is_a_copy_of_it(backend):
    """Generic N-d code's ``meshgrid(*axes)`` with one axis: the grid is the array's value
    in a new array (NumPy's copy), no broadcast to its own shape (whose kernel no
    installation builds: it compiled); writing it leaves the axis as it is."""
    for x in (np.linspace(0.0, 1.0, 5), np.arange(4, dtype=np.int32)):
        axis = xp.asarray(x)
        for indexing in ("xy", "ij"):
            (grid,) = xp.meshgrid(axis, indexing=indexing)
            assert grid is not axis and grid._node is axis._node
            _same(grid, np.meshgrid(x, indexing=indexing)[0], exact=True)
            grid[0] = 7
            _same(axis, x, exact=True)


def test_meshgrid_of_mixed_dtypes_keeps_each_as_numpy(backend):
    """Beyond the standard (one dtype there): each grid keeps its input's dtype."""
    x, y = np.arange(3, dtype=np.int32), np.linspace(0.0, 1.0, 4, dtype=np.float32)
    for indexing in ("xy", "ij"):
        for got, expected in zip(xp.meshgrid(xp.asarray(x), xp.asarray(y), indexing=indexing),
                                 np.meshgrid(x, y, indexing=indexing)):
            _same(got, expected, exact=True)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@given(data=st.data())
def test_complex_parts_and_arithmetic(backend, dtype, data):
    part = np.float32 if dtype == np.complex64 else np.float64
    re, im = _array(data, part, special=False), None
    im = data.draw(hnp.arrays(part, re.shape, elements=st.floats(-100, 100, width=np.dtype(part).itemsize * 8)))
    z = (re + 1j * im).astype(dtype)
    w = z[::-1].copy() + dtype(1.5 - 0.5j)
    _same(xp.real(xp.asarray(z)), z.real, exact=True)
    _same(xp.imag(xp.asarray(z)), z.imag, exact=True)
    _same(xp.conj(xp.asarray(z)), np.conj(z), exact=True)
    _same(xp.asarray(z) * xp.asarray(w), z * w)
    with np.errstate(all="ignore"):
        _same(xp.asarray(z) / xp.asarray(w), z / w)
        _same(xp.exp(xp.asarray(z) / 50), np.exp(z / dtype(50)))
        _same(xp.abs(xp.asarray(z)), np.abs(z))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@given(data=st.data(), exponent=st.integers(-101, 101))
def test_complex_power_of_an_integer_exponent_is_numpys(backend, dtype, data, exponent):
    """z ** n for an integer n multiplies, as NumPy's power does for |n| < 100, bit for
    bit, special values included: exp(n log z) left (3j) ** 2 with an imaginary part of
    1e-15 and SciPy's filter designs with odd coefficients where NumPy's are 0."""
    part = np.float32 if dtype == np.complex64 else np.float64
    re, im = _array(data, part), None
    im = data.draw(hnp.arrays(part, re.shape, elements=st.floats(-100, 100, width=np.dtype(part).itemsize * 8)
                              | st.sampled_from([0.0, -0.0, np.inf, np.nan])))
    z = re.astype(dtype)
    z.imag = im
    with np.errstate(all="ignore"):
        expected = np.power(z, np.asarray(exponent, dtype=dtype))
    if abs(exponent) < 100:
        _same(xp.asarray(z) ** exponent, expected, exact=True)
        _same(xp.pow(xp.asarray(z), xp.asarray(complex(exponent), dtype=dtype)), expected, exact=True)
    else:  # exp(n log z), NumPy's cpow: close where finite
        finite = np.isfinite(z) & (z != 0)
        _same(np.asarray(xp.asarray(z) ** exponent)[finite], expected[finite])


def test_an_imaginary_number_squared_is_real(backend):
    y = np.linspace(1.0, 3000.0, 7)
    _same(xp.asarray(1j * y) ** 2, (1j * y) ** 2, exact=True)
    assert np.all(np.asarray(xp.asarray(1j * y) ** 2).imag == 0)


def test_boolean_mask_and_integer_array_indexing(backend):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = xp.asarray(a)
    _same(x[xp.asarray(a > 7.5)], a[a > 7.5], exact=True)
    _same(x[xp.asarray(a[:, :, 0] > 5)], a[a[:, :, 0] > 5], exact=True)
    i, j = np.array([[1], [0]]), np.array([3, -1, 0])
    _same(x[xp.asarray(i), 2, xp.asarray(j)], a[i, 2, j], exact=True)
    y, b = xp.asarray(a), a.copy()
    y[xp.asarray(a > 20)] = xp.asarray([-1.0, -2.0, -3.0])
    b[b > 20] = [-1.0, -2.0, -3.0]
    _same(y, b, exact=True)


@host_only("sharing NumPy's memory both ways")
def test_dlpack_round_trips_without_copy():
    """The paths one by one: tests/api/test_shared_memory.py."""
    a = np.arange(6.0).reshape(2, 3).copy()  # owning its memory: a view of a writable array is copied
    a.flags.writeable = False
    x = xp.from_dlpack(a)
    assert np.shares_memory(np.asarray(x._value()), a)  # NumPy -> plaidarray: the same memory
    _same(x, a, exact=True)
    y = xp.asarray(a) * 2
    exported = np.from_dlpack(y)
    _same(exported, a * 2, exact=True)
    assert np.shares_memory(exported, np.asarray(y))  # plaidarray -> NumPy: y's memory
    assert y.__dlpack_device__() == (1, 0)


@host_only("an export that is the array's memory")
def test_exporting_an_array_copied_from_a_callers_memory_exports_the_copy():
    """``xp.asarray(a)`` copies writable memory (``copy=None``): its export is that copy,
    and plaidarray never writes into ``a``."""
    a = np.arange(3.0)
    x = xp.asarray(a)
    np.asarray(x)[0] = 5.0
    np.testing.assert_array_equal(a, np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(x), [5.0, 1.0, 2.0])


def test_array_api_compat_sees_the_namespace():
    x = xp.ones(3)
    assert array_api_compat.is_array_api_obj(x)
    assert array_api_compat.array_namespace(x) is xp


def test_namespace_info_reports_the_truth():
    info = xp.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    assert info.default_dtypes()["real floating"] == xp.float64
    assert set(info.dtypes(kind="integral").values()) == {xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8,
                                                           xp.uint16, xp.uint32, xp.uint64}
    count = int(os.environ.get("PLAIDARRAY_CPU_DEVICES", "1"))
    listed = list(info.devices())
    assert listed[:count] == ["cpu"] + [f"cpu:{i}" for i in range(1, count)]
    assert len(listed) == count if ON_HOST else [d.platform for d in listed[count:]] == ["cuda"] * (len(listed) - count)
    assert info.default_device() == os.environ.get("PLAIDARRAY_DEVICE", "cpu")
    assert info.default_device() in info.devices()


NAN, INF = float("nan"), float("inf")
#: The standard's special cases of complex tanh (a + bj -> result; None: either sign of zero).
TANH_SPECIAL_CASES = [
    ((0.0, 0.0), (0.0, 0.0)), ((1.5, INF), (NAN, NAN)), ((0.0, INF), (0.0, NAN)), ((1.5, NAN), (NAN, NAN)),
    ((0.0, NAN), (0.0, NAN)), ((INF, 2.0), (1.0, 0.0)), ((INF, 1.0), (1.0, 0.0)), ((INF, INF), (1.0, None)),
    ((INF, NAN), (1.0, None)), ((NAN, 0.0), (NAN, 0.0)), ((NAN, 2.0), (NAN, NAN)), ((NAN, NAN), (NAN, NAN)),
]


def _images(case):
    """A case and its images by tanh(conj z) = conj(tanh z) and tanh(-z) = -tanh(z)."""
    (a, b), (re, im) = case
    flip = None if im is None else -im
    yield (a, b), (re, im)
    yield (a, -b), (re, flip)
    yield (-a, -b), (-re, flip)
    yield (-a, b), (-re, im)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["complex64", "complex128"])
def test_complex_tanh_special_cases_of_the_standard(backend, dtype):
    cases = [image for case in TANH_SPECIAL_CASES for image in _images(case)]
    z = np.array([complex(a, b) for (a, b), _ in cases], dtype)
    got = np.asarray(xp.tanh(xp.asarray(z)))
    for value, ((a, b), (re, im)) in zip(got, cases):
        for part, want in ((value.real, re), (value.imag, im)):
            where = f"tanh({a} + {b}j) = {value}"
            if want is None:
                assert part == 0, where
            elif np.isnan(want):
                assert np.isnan(part), where
            else:
                assert part == want and np.signbit(part) == np.signbit(want), where
