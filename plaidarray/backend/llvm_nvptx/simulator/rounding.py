"""Correct rounding where NumPy has none: fused multiply-add, directed rounding modes and
narrowing conversions, all vectorised.

NumPy rounds every operation to nearest, in the operation's own precision, and has no fma. The
techniques here are the classic error-free transformations: TwoSum (Knuth) and TwoProd
(Veltkamp/Dekker splitting) give the exact error of a float64 sum or product, and rounding to
*odd* (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
using rounding to odd", IEEE TC 2008) lets an intermediate result carry enough information that
one final rounding, in any mode and to any narrower format, is correct. Elements outside the
ranges where the float64 algorithms are proved (near overflow or underflow, non-finite) are
rounded exactly from ``fractions.Fraction`` instead: slow, rare and exact.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

MODES = ("rn", "rz", "rm", "rp")
_SPLITTER = 134217729.0  # 2**27 + 1: Veltkamp's constant for float64
_SAFE_LOW, _SAFE_HIGH = 2.0**-960, 2.0**960


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s = RN(a + b)`` and the exact error ``a + b - s`` (exact barring overflow)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p = RN(a * b)`` and the exact error ``a * b - p`` (exact when nothing over- or underflows)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = _SPLITTER * a
    high = c - (c - a)
    return high, a - high


def _step(x: np.ndarray, toward_positive: np.ndarray) -> np.ndarray:
    return np.nextafter(x, np.where(toward_positive, np.inf, -np.inf).astype(x.dtype))


def odd_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` (float64) rounded to odd: the truncation, with its last bit set when inexact."""
    s, e = two_sum(a, b)
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    return np.where((e != 0) & even, _step(s, e > 0), s)


def adjust(rounded: np.ndarray, error_sign: np.ndarray, mode: str) -> np.ndarray:
    """Turn a round-to-nearest result into ``mode``'s, given the sign of ``exact - rounded``."""
    if mode == "rn":
        return rounded
    if mode == "rz":
        away = np.where(rounded > 0, error_sign < 0, error_sign > 0)
        return np.where(away & (rounded != 0), _step(rounded, rounded < 0), rounded)
    down = error_sign < 0 if mode == "rm" else error_sign > 0
    return np.where(down, _step(rounded, np.full(rounded.shape, mode == "rp")), rounded)


def narrow(x: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """``x`` rounded to the narrower float ``dtype`` in ``mode`` (correct for exact ``x``, and for
    ``x`` rounded to odd in a format with at least two more digits)."""
    rounded = x.astype(dtype)
    back = rounded.astype(x.dtype)
    return adjust(rounded, np.sign(np.where(np.isnan(x) | (x == back), 0, x - back)), mode)


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, mode: str = "rn") -> np.ndarray:
    """``a * b + c`` with one rounding, as PTX's ``fma`` (f16, f32 or f64)."""
    if a.dtype != np.float64:
        a64, b64, c64 = (np.asarray(v, np.float64) for v in (a, b, c))
        product = a64 * b64  # exact: 2 x 24 significant bits fit in 53
        finite = np.isfinite(a64) & np.isfinite(b64) & np.isfinite(c64)
        total = np.where(finite, odd_sum(np.where(finite, product, 0.0), np.where(finite, c64, 0.0)), product + c64)
        return narrow(total, a.dtype, mode)
    a, b, c = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64))
    magnitudes = [np.abs(v) for v in (a, b, c)]
    safe = np.ones(a.shape, bool)
    for m in magnitudes:
        safe &= (m == 0) | ((m >= _SAFE_LOW) & (m <= _SAFE_HIGH))
    result = np.empty(a.shape, np.float64)
    if mode == "rn" and safe.any():
        sa, sb, sc = a[safe], b[safe], c[safe]
        high, low = two_prod(sa, sb)
        th, tl = two_sum(sc, high)
        fast = th + odd_sum(tl, low)
        zero_product = (sa == 0) | (sb == 0)
        fast = np.where(zero_product, high + sc, fast)
        good = zero_product | (np.abs(high) >= _SAFE_LOW) & (np.abs(high) <= _SAFE_HIGH) & (
            (fast == 0) | (np.abs(fast) >= _SAFE_LOW))
        result[safe] = fast
        safe[np.flatnonzero(safe)[~good]] = False
    else:
        safe[:] = False
    for i in np.flatnonzero(~safe):
        result.flat[i] = _exact_fma(float(a.flat[i]), float(b.flat[i]), float(c.flat[i]), mode)
    return result


def _exact_fma(a: float, b: float, c: float, mode: str) -> float:
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return c if math.isfinite(a) and math.isfinite(b) else a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c if a == 0 or b == 0 else (-0.0 if mode == "rm" else 0.0)
    return round_fraction(exact, mode)


def round_fraction(x: Fraction, mode: str) -> float:
    """The float64 nearest ``x`` in ``mode`` (CPython's int division rounds correctly to nearest)."""
    try:
        rounded = x.numerator / x.denominator
    except OverflowError:
        rounded = math.inf if x > 0 else -math.inf
    if math.isinf(rounded):
        keep = mode == "rn" or (mode == "rp" and x > 0) or (mode == "rm" and x < 0)
        return rounded if keep else math.copysign(float(np.finfo(np.float64).max), rounded)
    error = x - Fraction(rounded)
    return float(adjust(np.array([rounded]), np.array([float((error > 0) - (error < 0))]), mode)[0])
