"""NumPy's array methods that NumPy-style code calls (``x.sum()``, ``x.reshape(2, 3)``,
``x.std(ddof=1)``, ``x.item()``...), beyond the standard (user guide, "Beyond the
standard"), against the same methods of NumPy arrays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import plaidarray as xp
from helpers import assert_same
from strategies import arrays

FLOAT = np.dtype(np.float64)

#: method -> the arguments it is called with, from an array's rank.
CALLS = {
    "sum": lambda ndim: [(), (ndim - 1,)] if ndim else [()],
    "prod": lambda ndim: [()],
    "mean": lambda ndim: [(), (0,)] if ndim else [()],
    "max": lambda ndim: [()],
    "min": lambda ndim: [(0,)] if ndim else [()],
    "argmax": lambda ndim: [()],
    "argmin": lambda ndim: [(0,)] if ndim else [()],
    "cumsum": lambda ndim: [(), (ndim - 1,)] if ndim else [()],
    "ravel": lambda ndim: [()],
    "flatten": lambda ndim: [()],
    "transpose": lambda ndim: [()],
    "copy": lambda ndim: [()],
    "squeeze": lambda ndim: [()],
    "clip": lambda ndim: [(-0.5, 0.5)],
    "round": lambda ndim: [(), (2,)],
}


@given(a=arrays(FLOAT, hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5)))
@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_numpy_method_gives_numpys_values(backend, name, a):
    if name == "prod":  # multiplied in another order than NumPy's: no partial product may overflow or underflow
        magnitudes = np.abs(a[np.isfinite(a) & (a != 0)])
        assume(not magnitudes.size or a.size * np.abs(np.log10(magnitudes)).max() < 300)
    x = xp.asarray(a)
    for args in CALLS[name](a.ndim):
        # the sign of a zero sum, mean or extremum of signed zeros is left open, as test_statistical leaves it
        assert_same(getattr(x, name)(*args), np.asarray(getattr(a, name)(*args)), rtol=1e-12, atol=1e-12,
                    signed_zeros=False)


@given(a=arrays(FLOAT, hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=5)), ddof=st.integers(0, 1))
def test_std_and_var_take_numpys_ddof(backend, a, ddof):
    """The deviations are from a mean whose sum may round apart from NumPy's (another
    order of additions): by a few units in the last place of the values, which is all of
    the spread of values that differ in their last bits alone (1.8e15 and 1.8e15 + 0.5)."""
    x = xp.asarray(a)
    shift = 8 * np.finfo(a.dtype).eps * float(np.max(np.abs(a)))  # the means' difference, bounded
    # a deviation of that size must square to a finite number: of values near the largest
    # float (2.8e292 repeated), NumPy's mean rounds off by an ulp and its variance overflows
    # to inf, where an exact mean gives 0; which one comes is the additions' order
    assume(shift < np.sqrt(np.finfo(a.dtype).max))
    std, var = a.std(ddof=ddof), a.var(axis=0, ddof=ddof)
    assert_same(x.std(ddof=ddof), np.asarray(std), rtol=1e-12, atol=shift, signed_zeros=False)
    assert_same(x.var(axis=0, ddof=ddof), var, rtol=1e-12, atol=shift * (shift + 2 * float(np.max(np.sqrt(var)))),
                signed_zeros=False)


def test_reshape_transpose_item_tolist_and_astype_take_numpys_arguments(backend):
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a)
    assert_same(x.reshape(4, 3), a.reshape(4, 3), exact=True)
    assert_same(x.reshape((2, -1)), a.reshape((2, -1)), exact=True)
    assert_same(x.transpose(1, 0), a.transpose(1, 0), exact=True)
    assert_same(x.astype(xp.int32), a.astype(np.int32), exact=True)
    assert x.tolist() == a.tolist()
    for value in (np.array([2.5]), np.array(7), np.array([[True]]), np.array(1 + 2j)):
        got = xp.asarray(value).item()
        assert got == value.item() and type(got) is type(value.item())
    with pytest.raises(ValueError, match="size 1"):
        x.item()
    view = x.view(float)
    view[0, 0] = 5.0  # a write through a view of its own dtype reaches the array, as in NumPy
    assert float(x[0, 0]) == 5.0 and x.view() is x
    with pytest.raises(TypeError, match="reinterpreting float64 as int64"):
        x.view(np.int64)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
def test_round_takes_numpys_decimals_bit_for_bit(backend, dtype, decimals):
    """An integer array keeps its dtype (rounded to tens where ``decimals`` < 0), a float's
    halves go to even at the decimal place NumPy's bits put them, a complex array's parts
    round each alone (an infinite part stays infinite, signed zeros keep their sign)."""
    if np.dtype(dtype).kind in "iu":
        a = np.array([15, 25, 14, 99, 0, 250], dtype=dtype)
        if np.dtype(dtype).kind == "i":
            a = np.concatenate([a, -a])
    else:
        values = np.array([1.25, 2.675, -0.5, 1234.5678, 0.125, -0.0, np.inf, np.nan, 1e300, -35.0])
        a = (values + 1j * values[::-1] if np.dtype(dtype).kind == "c" else values).astype(dtype)
    with np.errstate(all="ignore"):
        expected = a.round(decimals)
    got = xp.asarray(a).round(decimals)
    if expected.dtype.kind == "c":  # each part with the sign of its zeros
        assert got.dtype == expected.dtype
        assert_same(xp.real(got), expected.real, exact=True)
        assert_same(xp.imag(got), expected.imag, exact=True)
    else:
        assert_same(got, expected, exact=True)


def test_in_asks_whether_any_element_equals_the_value(backend):
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    assert 4.0 in x and 4 in x and 6.0 not in x
    assert 2 in xp.asarray(np.arange(3)) and 1 in xp.asarray(np.array(1))


@given(a=hnp.arrays(FLOAT, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
                   elements=st.floats(-100, 100)))
def test_numpys_functions_call_the_methods_with_their_arguments(backend, a):
    """``np.sum(x)``, ``np.mean(x, dtype=...)``, ``np.std(x, ddof=1)``...: NumPy's functions
    call an array's method with ``dtype`` and ``out=None`` (``_wrapreduction``); the
    result is plaidarray's, of NumPy's values and dtype. (A statistic in a narrower
    ``dtype`` is of the values cast to it; NumPy subtracts the mean in the input's, so
    values the cast rounds apart differ: moderate values here.)"""
    x = xp.asarray(a)
    calls = [(np.sum, {}), (np.sum, {"axis": 0, "dtype": np.float32}), (np.prod, {"keepdims": True}),
             (np.mean, {}), (np.mean, {"axis": -1, "dtype": np.float32}), (np.max, {"axis": 0}), (np.min, {}),
             (np.any, {}), (np.all, {"axis": 0}), (np.std, {"ddof": 1} if a.size > 1 else {}),
             (np.var, {"axis": 0, "dtype": np.float32})]
    for fn, kwargs in calls:
        got = fn(x, **kwargs)
        assert isinstance(got, xp.Array), fn.__name__
        expected = np.asarray(fn(a, **kwargs))
        assert np.asarray(got).dtype == expected.dtype, (fn.__name__, kwargs)
        assert_same(got, expected, rtol=1e-5, atol=1e-4, signed_zeros=False)


def test_out_is_refused_and_divmod_gives_both_parts(backend):
    x = xp.asarray(np.array([7, -7, 8]))
    with pytest.raises(TypeError, match="out= is not supported"):
        x.sum(out=np.zeros((), np.int64))
    quotient, remainder = divmod(x, 3)
    assert_same(quotient, np.array([2, -3, 2]), exact=True)
    assert_same(remainder, np.array([1, 2, 2]), exact=True)
    quotient, remainder = divmod(20, x)
    assert_same(quotient, np.array([2, -3, 2]), exact=True)
    assert_same(remainder, np.array([6, -1, 4]), exact=True)


def test_real_and_imag_attributes_are_numpys(backend):
    """``z.real`` and ``z.imag`` (``fft(x).real``): a complex array's parts as views, whose
    writes reach it, as NumPy's; a real array's own values and zeros."""
    values = np.array([1 + 2j, -3.5 + 0.25j])
    z = xp.asarray(values)
    assert_same(z.real, values.real, exact=True)
    assert_same(z.imag, values.imag, exact=True)
    z.imag[1] = 7.0
    np.testing.assert_array_equal(np.asarray(z), np.array([1 + 2j, -3.5 + 7j]), strict=True)
    ints = xp.asarray(np.array([4, -5], np.int32))
    assert_same(ints.real, np.array([4, -5], np.int32), exact=True)
    assert_same(ints.imag, np.zeros(2, np.int32), exact=True)
    assert_same(xp.fft.rfft(xp.asarray(np.arange(4.0))).real, np.fft.rfft(np.arange(4.0)).real, rtol=1e-12, atol=1e-12)
