"""Accuracy of the compiled exp, expm1, log, log1p, tanh, sin and cos (the polynomial
implementations of backend/llvm_cpu/vector_math.py) over the whole float range.

Errors are in ulps of the exact result rounded to the tested dtype, the exact result
being NumPy's evaluation in extended precision (``np.longdouble``, 64-bit mantissa).
Inputs: uniformly random bit patterns (every finite float equally likely, so every
binade is covered), random values in each function's interesting range, the floats
nearest to multiples of pi/2 (the hardest arguments for sin and cos), and the edges
of the range (overflow, gradual underflow, denormals). Special values must match
NumPy exactly, including the sign of zero.

``python tests/unit/backend/test_vector_math_accuracy.py [samples]`` prints the table recorded in
docs/performance.md, with NumPy's own errors on the same inputs.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import plaidarray as xp

FUNCTIONS = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "tanh": np.tanh,
             "sin": np.sin, "cos": np.cos}
#: Asserted maximum errors in ulps (measured values are in docs/performance.md).
MAX_ULPS = {
    np.float32: {"exp": 1.5, "expm1": 1.5, "log": 1.0, "log1p": 1.0, "tanh": 1.0, "sin": 1.0, "cos": 1.0},
    np.float64: {"exp": 1.5, "expm1": 2.0, "log": 1.0, "log1p": 1.0, "tanh": 3.0, "sin": 1.0, "cos": 1.0},
}
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0]


def ulp_errors(got: np.ndarray, exact: np.ndarray, dtype) -> np.ndarray:
    """|got - exact| in ulps of ``dtype`` at ``exact``; infinity counts as the float
    after the largest finite one, so overflow boundaries are measured too."""
    info = np.finfo(dtype)
    top = np.ldexp(np.longdouble(1), info.maxexp)
    exact = np.clip(exact.astype(np.longdouble), -top, top)
    got = np.where(np.isinf(got), np.sign(got) * top, got.astype(np.longdouble))
    magnitude = np.abs(exact)
    exponent = np.floor(np.log2(np.where(magnitude > 0, magnitude, 1)))
    ulp = np.ldexp(np.longdouble(1), (np.maximum(exponent, info.minexp) - info.nmant).astype(int))
    return np.abs(got - exact) / ulp


def random_bits(dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    """Floats with uniformly random bit patterns, non-finite ones dropped."""
    if dtype == np.float32:
        x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    else:
        x = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True).view(np.float64)
    return x[np.isfinite(x)]


def near_multiples_of_pi_2(dtype) -> np.ndarray:
    """The floats nearest to k pi/2 and their neighbours, k from 1 to beyond 2**40."""
    k = np.unique(np.round(np.geomspace(1, 2.0**42, 4000)).astype(np.longdouble))
    x = (k * (np.longdouble(np.pi) / 2)).astype(dtype)  # longdouble pi: 64 bits suffice here
    return np.concatenate([x, np.nextafter(x, dtype(np.inf)), np.nextafter(x, dtype(0))])


def range_edges(dtype) -> np.ndarray:
    """Arguments around overflow, underflow and the denormal range, and tiny ones."""
    info = np.finfo(dtype)
    with np.errstate(all="ignore"):
        ln_max = np.log(info.max).astype(dtype)
        ln_tiny = np.log(info.smallest_subnormal).astype(dtype)
        ln_normal = np.log(info.smallest_normal).astype(dtype)
    around = [ln_max, ln_tiny, ln_normal, dtype(-ln_max), info.smallest_subnormal, info.smallest_normal, info.eps]
    steps = np.arange(-40, 41)
    edges = np.concatenate([np.nextafter(np.full(steps.size, a, dtype), np.where(steps < 0, -np.inf, np.inf).astype(dtype))
                            for a in around])
    denormals = np.linspace(0, info.smallest_normal, 200, dtype=dtype)
    tiny = np.geomspace(info.smallest_subnormal, 1e-3, 400).astype(dtype)
    values = np.concatenate([edges, denormals, tiny, -tiny, np.linspace(ln_tiny, ln_max, 2000).astype(dtype)])
    return values[np.isfinite(values)]


def interesting(name: str, dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    spread = {
        "exp": rng.uniform(-800, 800, n), "expm1": rng.uniform(-50, 720, n),
        "log": np.exp(rng.uniform(-745, 709, n)), "log1p": np.concatenate([rng.uniform(-1, 1, n), np.expm1(rng.uniform(-40, 40, n))]),
        "tanh": rng.uniform(-25, 25, n), "sin": rng.uniform(-1e4, 1e4, n), "cos": rng.uniform(-1e4, 1e4, n),
    }[name]
    with np.errstate(over="ignore"):
        spread = spread.astype(dtype)
    parts = [random_bits(dtype, n, rng), spread[np.isfinite(spread)], rng.uniform(-4, 4, n).astype(dtype),
             range_edges(dtype)]
    if name in ("sin", "cos"):
        parts.append(near_multiples_of_pi_2(dtype))
    return np.concatenate(parts)


def measure(name: str, dtype, n: int, seed: int = 0) -> tuple[float, np.ndarray]:
    """(max ulp error, inputs) of the compiled function on ``interesting`` inputs."""
    x = interesting(name, dtype, n, np.random.default_rng(seed))
    got = np.asarray(getattr(xp, name)(xp.asarray(x)))
    with np.errstate(all="ignore"):
        exact = FUNCTIONS[name](x.astype(np.longdouble))
    defined = ~np.isnan(exact)
    assert np.array_equal(np.isnan(got), ~defined), f"{name}: NaN where NumPy has none, or the converse"
    return float(ulp_errors(got[defined], exact[defined], dtype).max()), x


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_max_ulp_error_over_the_whole_range(name, dtype):
    worst, _ = measure(name, dtype, 100_000)
    assert worst <= MAX_ULPS[dtype][name], f"{name}({np.dtype(dtype).name}): {worst:.3f} ulp"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_special_values_are_exact(name, dtype):
    info = np.finfo(dtype)
    x = np.array([*SPECIALS, info.max, -info.max, info.smallest_subnormal, -info.smallest_subnormal,
                  info.smallest_normal, 1000.0, -1000.0, 1e30, -1e30], dtype=dtype)
    got = np.asarray(getattr(xp, name)(xp.asarray(x)))
    with np.errstate(all="ignore"):
        want = FUNCTIONS[name](x)
    exact_where = np.isnan(want) | np.isinf(want) | (want == 0) | np.isin(x, SPECIALS[:5])
    np.testing.assert_array_equal(got[exact_where], want[exact_where], strict=True)
    assert np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0])), "sign of zero"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_vector_and_remainder_lanes_agree(dtype):
    """Every element is computed the same whatever its position: a lane of the
    vectorised loop, of the remainder loop, or a scalar call."""
    x = np.random.default_rng(1).uniform(-50, 50, 1000).astype(dtype)
    x[::7] = 1e20  # lanes that take the C library path of sin and cos
    for name in FUNCTIONS:
        whole = np.asarray(getattr(xp, name)(xp.asarray(x)))
        single = np.array([np.asarray(getattr(xp, name)(xp.asarray(x[i:i + 1])))[0] for i in range(0, 1000, 37)])
        np.testing.assert_array_equal(whole[::37], single, strict=True, err_msg=name)


def numpy_error(name: str, x: np.ndarray) -> float:
    """NumPy's own max ulp error on the same inputs, for comparison."""
    with np.errstate(all="ignore"):
        got, exact = FUNCTIONS[name](x), FUNCTIONS[name](x.astype(np.longdouble))
    defined = ~np.isnan(exact) & ~np.isnan(got)
    return float(ulp_errors(got[defined], exact[defined], x.dtype.type).max())


if __name__ == "__main__":
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    print("| function | float32 max ulp (NumPy) | float64 max ulp (NumPy) |\n|---|---:|---:|")
    for fn in FUNCTIONS:
        cells = []
        for dtype in (np.float32, np.float64):
            worst, x = measure(fn, dtype, samples)
            cells.append(f"{worst:.2f} ({numpy_error(fn, x):.2f})")
        print(f"| {fn} | " + " | ".join(cells) + " |")
