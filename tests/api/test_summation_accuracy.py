"""Sums, means and variances of long arrays are as accurate as NumPy's pairwise summation:
within NumPy's error plus the rounding of the result, measured against the exact sum
(a rational, from each value's integer mantissa and exponent)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import plaidarray as xp


def exact_sum(x: np.ndarray) -> Fraction:
    """The exact sum of ``x``'s values: each is m * 2^(e - 53) with an integer m of 53
    bits, summed per exponent in two 26- and 27-bit halves so that int64 sums of up to 2^36
    values cannot overflow."""
    mantissa, exponent = np.frexp(x.astype(np.float64))
    whole = (mantissa * 2.0**53).astype(np.int64)
    total = Fraction(0)
    for e in np.unique(exponent):
        part = whole[exponent == e]
        high, low = int(np.sum(part >> 26)), int(np.sum(part & ((1 << 26) - 1)))
        total += Fraction((high << 26) + low) * Fraction(2) ** (int(e) - 53)
    return total


def _error_in_ulps(value: float, exact: Fraction, dtype: np.dtype) -> float:
    ulp = float(np.spacing(np.abs(np.asarray(float(exact), dtype=dtype))))
    return float(abs(Fraction(value) - exact)) / ulp


def test_the_exact_sum_is_exact():
    """The reference can fail: it gives a sum that float64 accumulation loses entirely."""
    x = np.array([1e16, 1.0, -1e16, 1.0, 2.0**-30], dtype=np.float64)
    assert exact_sum(x) == Fraction(2) + Fraction(2) ** -30
    assert float(np.add.accumulate(x)[-1]) != float(exact_sum(x))


def _check(n: int, dtype: type, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) + 1.0).astype(dtype)
    exact = exact_sum(x)
    a = xp.asarray(x)
    ours, numpys = _error_in_ulps(float(xp.sum(a)), exact, np.dtype(dtype)), \
        _error_in_ulps(float(np.sum(x)), exact, np.dtype(dtype))
    assert ours <= numpys + 2.0, (n, dtype, ours, numpys)
    exact_mean = exact / n
    ours_mean = _error_in_ulps(float(xp.mean(a)), exact_mean, np.dtype(dtype))
    numpys_mean = _error_in_ulps(float(np.mean(x)), exact_mean, np.dtype(dtype))
    assert ours_mean <= numpys_mean + 2.0, (n, dtype, ours_mean, numpys_mean)
    centred = x.astype(np.longdouble) - np.longdouble(float(exact_mean))
    exact_var = float(np.sum(centred * centred) / n)  # float32 data: exact enough; float64: to ~1e-18 relative
    ours_var = abs(float(xp.var(a)) - exact_var) / exact_var
    numpys_var = abs(float(np.var(x)) - exact_var) / exact_var
    assert ours_var <= numpys_var + 4 * float(np.finfo(dtype).eps), (n, dtype, ours_var, numpys_var)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [10**5, 10**6, 10**7])
def test_sums_means_and_variances_are_as_accurate_as_numpys(n, dtype):
    for seed in range(2):
        _check(n, dtype, seed)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_sum_of_10_to_the_8_values_is_as_accurate_as_numpys(dtype):
    _check(10**8, dtype, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_sum_of_rows_is_as_accurate_as_numpys(dtype):
    """Each row's sum (the innermost axis) is summed in the same blocks and cascade."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 300_000)) + 1.0).astype(dtype)
    ours = np.asarray(xp.sum(xp.asarray(x), axis=1))
    for row in range(4):
        exact = exact_sum(x[row])
        assert _error_in_ulps(float(ours[row]), exact, np.dtype(dtype)) <= \
            _error_in_ulps(float(np.sum(x[row])), exact, np.dtype(dtype)) + 2.0
