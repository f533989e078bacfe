"""Differential tests of the reductions (sum, prod, min, max, mean, all, any) against
NumPy, over axis None / int / negative int / tuple and keepdims, on both backends."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from helpers import assert_same
from strategies import ALL, FLOAT, REAL_NUMERIC, SPECIAL_FLOATS, arrays, dtype_ids, elements, shapes


@st.composite
def axes(draw, ndim):
    """None, an int (possibly negative), or a tuple of distinct axes (any order, some negative)."""
    if ndim == 0:
        return draw(st.sampled_from([None, ()]))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in chosen)


def _normalized(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if isinstance(axis, int) else axis))


def _count(shape, axis):
    return math.prod(shape[a] for a in _normalized(axis, len(shape)))


def _finite_magnitude_floats(dtype, bound):
    """Floats of magnitude <= bound, with NaN and the infinities mixed in: sums of a few
    dozen of them cannot overflow, so the special values propagate in any order."""
    return elements(dtype, min_value=-bound, max_value=bound) | st.sampled_from(SPECIAL_FLOATS)


def _assert_sum_close(got, expected, x, axis, keepdims, dtype):
    """Summation order may differ from NumPy's pairwise summation: allow n * eps * sum|x|."""
    finite = np.where(np.isfinite(x), x, 0).astype(np.float64)
    n = max(_count(x.shape, axis), 1)
    scale = np.sum(np.abs(finite), axis=axis, keepdims=keepdims)
    atol = float(n * np.finfo(dtype).eps * np.max(scale, initial=0.0)) + float(np.finfo(dtype).tiny)
    assert_same(got, expected, rtol=0, atol=atol, signed_zeros=False)


@pytest.mark.parametrize("dtype", REAL_NUMERIC, ids=dtype_ids(REAL_NUMERIC))
@given(data=st.data())
def test_sum(backend, dtype, data):
    elems = _finite_magnitude_floats(dtype, 1e6) if dtype.kind == "f" else None
    x = data.draw(arrays(dtype, shapes(), elems), label="x")
    axis = data.draw(axes(x.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    # The spec accumulates integers in the default int (uint64 for unsigned ints);
    # floats keep their dtype.
    acc = {"i": np.int64, "u": np.uint64}.get(dtype.kind, dtype)
    with np.errstate(all="ignore"):
        expected = np.asarray(np.sum(x, axis=axis, keepdims=keepdims, dtype=acc))
    got = xp.sum(xp.asarray(x), axis=axis, keepdims=keepdims)
    if dtype.kind == "f":
        _assert_sum_close(got, expected, x, axis, keepdims, dtype)
    else:
        assert_same(got, expected)


@pytest.mark.parametrize("dtype", REAL_NUMERIC, ids=dtype_ids(REAL_NUMERIC))
@given(data=st.data())
def test_prod(backend, dtype, data):
    if dtype.kind == "f":
        # Magnitudes in {0} u [0.5, 2] (plus inf/NaN): no overflow or underflow in any order.
        elems = st.one_of(st.sampled_from(SPECIAL_FLOATS), elements(dtype, min_value=0.5, max_value=2.0),
                          elements(dtype, min_value=-2.0, max_value=-0.5))
    else:
        elems = None  # integer products wrap identically in any order
    x = data.draw(arrays(dtype, shapes(), elems), label="x")
    axis = data.draw(axes(x.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    acc = {"i": np.int64, "u": np.uint64}.get(dtype.kind, dtype)
    with np.errstate(all="ignore"):
        expected = np.asarray(np.prod(x, axis=axis, keepdims=keepdims, dtype=acc))
    got = xp.prod(xp.asarray(x), axis=axis, keepdims=keepdims)
    if dtype.kind == "f":
        n = max(_count(x.shape, axis), 1)
        assert_same(got, expected, rtol=4 * n * float(np.finfo(dtype).eps))
    else:
        assert_same(got, expected)


@pytest.mark.parametrize("name", ["min", "max"])
@pytest.mark.parametrize("dtype", REAL_NUMERIC, ids=dtype_ids(REAL_NUMERIC))
@given(data=st.data())
def test_min_max(backend, name, dtype, data):
    x = data.draw(arrays(dtype, shapes()), label="x")
    axis = data.draw(axes(x.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    fn = getattr(xp, name)
    if x.ndim and _count(x.shape, axis) == 0:
        with pytest.raises(ValueError):
            fn(xp.asarray(x), axis=axis, keepdims=keepdims)
        return
    expected = np.asarray(getattr(np, name)(x, axis=axis, keepdims=keepdims))  # NaN propagates in both
    assert_same(fn(xp.asarray(x), axis=axis, keepdims=keepdims), expected, exact=True, signed_zeros=False)


@pytest.mark.parametrize("name", ["min", "max"])
def test_min_max_of_empty_arrays_raise_value_error(name):
    with pytest.raises(ValueError):
        getattr(xp, name)(xp.asarray(np.zeros((0,), np.float32)))
    with pytest.raises(ValueError):
        getattr(xp, name)(xp.asarray(np.zeros((2, 0), np.int32)), axis=1)


@pytest.mark.parametrize("dtype", FLOAT, ids=dtype_ids(FLOAT))
@given(data=st.data())
def test_mean(backend, dtype, data):
    x = data.draw(arrays(dtype, shapes(), _finite_magnitude_floats(dtype, 1e6)), label="x")
    axis = data.draw(axes(x.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.asarray(np.mean(x, axis=axis, keepdims=keepdims))  # NaN for empty reductions
    got = xp.mean(xp.asarray(x), axis=axis, keepdims=keepdims)
    finite = np.where(np.isfinite(x), x, 0).astype(np.float64)
    n = max(_count(x.shape, axis), 1)
    scale = np.max(np.mean(np.abs(finite), axis=axis, keepdims=keepdims), initial=0.0) if x.size else 0.0
    atol = float((n + 2) * np.finfo(dtype).eps * scale) + float(np.finfo(dtype).tiny)
    assert_same(got, expected, rtol=4 * float(np.finfo(dtype).eps), atol=atol, signed_zeros=False)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64, np.uint8], ids=dtype_ids([np.bool_, np.int32, np.int64, np.uint8]))
@pytest.mark.parametrize("name", ["sum", "prod", "cumulative_sum", "cumulative_prod", "mean", "var", "std"])
@given(data=st.data())
def test_counts_and_averages_of_bools_and_integers_are_numpys(backend, name, dtype, data):
    """NumPy-style code counts with ``sum(mask)`` and averages integers (the standard
    leaves both undefined): a bool array's sums, products and scans count in the default
    integer dtype, means and variances of bool and integer arrays are in the default
    floating-point dtype, as NumPy's."""
    x = data.draw(arrays(dtype, shapes(min_dims=1), elements(dtype, min_value=0, max_value=3) if dtype != np.bool_
                         else st.booleans()), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    reference = {"cumulative_sum": np.cumsum, "cumulative_prod": np.cumprod}.get(name, getattr(np, name))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.asarray(reference(x, axis=axis))
    if name in ("sum", "prod", "cumulative_sum", "cumulative_prod") and dtype != np.bool_:
        expected = expected.astype(np.int64 if np.dtype(dtype).kind == "i" else np.uint64)
    got = getattr(xp, name)(xp.asarray(x), axis=axis)
    assert got.dtype == expected.dtype
    assert_same(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=dtype_ids([np.complex64, np.complex128]))
@pytest.mark.parametrize("name", ["var", "std"])
@given(data=st.data())
def test_variance_of_complex_arrays_is_numpys(backend, name, dtype, data):
    """Beyond the standard (real floating-point there): the mean squared modulus of the
    deviations, in the real dtype of ``x``'s precision, as NumPy's."""
    real = np.float32 if dtype == np.complex64 else np.float64
    parts = data.draw(arrays(real, shapes(min_dims=1), elements(real, min_value=-100, max_value=100)), label="parts")
    x = (parts + 1j * parts[::-1]).astype(dtype)
    axis = data.draw(axes(x.ndim), label="axis")
    correction = data.draw(st.sampled_from([0, 1]), label="correction")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.asarray(getattr(np, name)(x, axis=axis, ddof=correction))
    got = getattr(xp, name)(xp.asarray(x), axis=axis, correction=correction)
    assert_same(got, expected, rtol=1e-4 if dtype == np.complex64 else 1e-10, atol=1e-3 if dtype == np.complex64 else 1e-9)


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("dtype", ALL, ids=dtype_ids(ALL))
@given(data=st.data())
def test_all_any(backend, name, dtype, data):
    # Mostly-zero/mostly-nonzero pools so that both answers occur.
    pool = data.draw(st.sampled_from(["zeros", "ones", "mixed"]), label="pool")
    if dtype.kind == "b":
        elems = {"zeros": st.just(False) | st.booleans(), "ones": st.just(True) | st.booleans(),
                 "mixed": st.booleans()}[pool]
    else:
        zero = st.sampled_from([0, -0.0] if dtype.kind == "f" else [0])
        elems = {"zeros": zero | zero | elements(dtype), "ones": elements(dtype), "mixed": zero | elements(dtype)}[pool]
    x = data.draw(arrays(dtype, shapes(), elems), label="x")
    axis = data.draw(axes(x.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    expected = np.asarray(getattr(np, name)(x, axis=axis, keepdims=keepdims))  # NaN counts as True
    assert_same(getattr(xp, name)(xp.asarray(x), axis=axis, keepdims=keepdims), expected)


def test_reductions_reject_bad_axes():
    x = xp.asarray(np.zeros((2, 3)))
    for bad in [2, -3, (0, 0)]:
        with pytest.raises((ValueError, IndexError)):
            xp.sum(x, axis=bad)
