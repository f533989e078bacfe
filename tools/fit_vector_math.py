"""Fit the polynomial coefficients of ``plaidarray/backend/llvm_cpu/vector_math.py``.

Each kernel is a near-minimax polynomial (mpmath's Chebyshev fit, in 60-digit
arithmetic) of a well-scaled function of the reduced argument, on the interval the
range reduction leaves. Run with any Python that has mpmath::

    python3 tools/fit_vector_math.py

It prints, per kernel and precision, the coefficients (lowest degree first, rounded to
the target precision) and the maximum relative error of the rounded polynomial, which
must stay far below half an ulp of the result (2**-24 for float32, 2**-53 for float64).
"""

from __future__ import annotations

import struct

import mpmath as mp

mp.mp.dps = 60

LN2_HALF = mp.log(2) / 2 * mp.mpf("1.0001")
PI_4 = mp.pi / 4 * mp.mpf("1.0001")
PI_2 = mp.pi / 2 * mp.mpf("1.0001")
LOG_S2 = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2 * mp.mpf("1.0001")


def _exp_tail(r):  # e^r = 1 + r + r^2 P(r)
    return (mp.exp(r) - 1 - r) / r**2 if r else mp.mpf(1) / 2


def _sin_tail(z):  # sin r = r + r^3 S(r^2)
    r = mp.sqrt(z)
    return (mp.sin(r) - r) / (z * r) if z else -mp.mpf(1) / 6


def _cos_tail(z):  # cos r = 1 - z/2 + z^2 C(z)
    return (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2 if z else mp.mpf(1) / 24


def _log_tail(z):  # log(1+f) = 2s + s z Q(z), s = f/(2+f), z = s^2
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / (z * s) if z else mp.mpf(2) / 3


#: name -> (function of the reduced variable, interval, number of coefficients per
#: precision, whole function). "f32" is evaluated in float32 arithmetic; "f32 in f64"
#: in float64 arithmetic to float32 accuracy (the float32 functions that are widened).
KERNELS = {
    "exp": (_exp_tail, (-LN2_HALF, LN2_HALF), {"f32": 6, "f64": 10, "f32 in f64": 6},
            lambda r, p: 1 + r + r**2 * p),
    "log": (_log_tail, (0, LOG_S2), {"f32": 4, "f64": 7, "f32 in f64": 4},
            lambda z, p: 2 * mp.sqrt(z) + mp.sqrt(z) * z * p),
    "sin": (_sin_tail, (0, PI_4**2), {"f64": 6},
            lambda z, p: mp.sqrt(z) * (1 + z * p)),
    "cos": (_cos_tail, (0, PI_4**2), {"f64": 6},
            lambda z, p: 1 - z / 2 + z**2 * p),
    "sin, |r| <= pi/2": (_sin_tail, (0, PI_2**2), {"f32 in f64": 5},
                         lambda z, p: mp.sqrt(z) * (1 + z * p)),
}


def _round(x, precision: str) -> float:
    x = float(x)
    return struct.unpack("f", struct.pack("f", x))[0] if precision == "f32" else x


def fit(name: str, precision: str) -> tuple[list[float], float]:
    fn, (a, b), sizes, whole = KERNELS[name]
    coeffs = [_round(c, precision) for c in reversed(mp.chebyfit(fn, [a, b], sizes[precision]))]
    worst = mp.mpf(0)
    for i in range(1, 2001):
        t = a + (b - a) * mp.mpf(i) / 2001
        p = mp.polyval(list(reversed([mp.mpf(c) for c in coeffs])), t)
        exact = whole(t, fn(t))
        worst = max(worst, abs(whole(t, p) / exact - 1))
    return coeffs, float(worst)


if __name__ == "__main__":
    for name, (_, _, sizes, _) in KERNELS.items():
        for precision in sizes:
            coeffs, err = fit(name, precision)
            print(f"{name} {precision}: max rel error {err:.3g} (2**{float(mp.log(err, 2)) if err else -999:.1f})")
            print("    (" + ", ".join(repr(c) for c in coeffs) + ")")
