"""FFT timings: NumPy (pocketfft), SciPy (``scipy.fft``), JAX (``jnp.fft`` under ``jax.jit``,
when importable) and plaidarray, side by side in one process. c2c rows are ``fft``, r2c rows
``rfft`` of n real points, c2r rows ``irfft`` of n // 2 + 1 terms to n points.

Each row is a cached call (plaidarray compiled, its full code in place, before timing),
the median of ``--repeat`` batches, libraries interleaved batch by batch; plaidarray's
first call (compile included, empty in-memory cache, the disk cache of this run) is
shown too. plaidarray is timed twice: eager (``np.asarray(xp.fft.fft(x))``: recording the
op, then reading it) and under ``plaidarray.jit`` (one call of a traced function, as JAX is
timed under ``jax.jit``, and read). Ratios are plaidarray / NumPy. The eager calls are
compiled fused at their first read (``PLAIDARRAY_FUSE_AFTER_MS=0``), as a program running
them long has them once hot.

    python -m benchmarks.fft [--repeat 5] [--only 1d-c2c]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("PLAIDARRAY_FUSE_AFTER_MS", "0")

import numpy as np  # noqa: E402
import scipy.fft  # noqa: E402

import plaidarray  # noqa: E402
import plaidarray as xp  # noqa: E402
from plaidarray.backend.llvm_cpu import kernels  # noqa: E402

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:  # JAX is optional
    jax = None

#: (name, input shape, real input, the transform on a namespace-like module)
CASES: list[tuple[str, tuple[int, ...], bool, Callable]] = [
    *[(f"1d-c2c n=2^{k}", (1 << k,), False, lambda m, x: m.fft.fft(x)) for k in (8, 10, 12, 16, 20, 22)],
    *[(f"1d-r2c n=2^{k}", (1 << k,), True, lambda m, x: m.fft.rfft(x)) for k in (10, 16, 20)],
    *[(f"1d-c2r n=2^{k}", ((1 << k) // 2 + 1,), False, lambda m, x: m.fft.irfft(x)) for k in (10, 16, 20)],
    ("1d-c2c n=1009 (prime)", (1009,), False, lambda m, x: m.fft.fft(x)),
    ("1d-c2c n=65537 (prime)", (65537,), False, lambda m, x: m.fft.fft(x)),
    ("1d-c2c n=3^5*5^3", (3**5 * 5**3,), False, lambda m, x: m.fft.fft(x)),
    ("2d-c2c 1024x1024", (1024, 1024), False, lambda m, x: m.fft.fft2(x) if hasattr(m.fft, "fft2") else
     m.fft.fftn(x, axes=(0, 1))),
    ("batch 1024 x c2c n=1024", (1024, 1024), False, lambda m, x: m.fft.fft(x, axis=-1)),
]


def _seconds(call: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        call()
    return (time.perf_counter() - start) / number


def run(case: tuple, repeat: int) -> dict[str, float]:
    name, shape, real, transform = case
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape) if real else rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    x = xp.asarray(data)
    start = time.perf_counter()
    ours = np.asarray(transform(xp, x))
    first = time.perf_counter() - start
    np.testing.assert_allclose(ours, np.fft.fftn(data, axes=(0, 1)) if name.startswith("2d") else
                               transform(np, data), rtol=1e-9, atol=1e-9 * np.max(np.abs(ours)))
    traced = plaidarray.jit(lambda v: transform(xp, v))
    np.testing.assert_array_equal(np.asarray(traced(x)), ours)
    kernels.finish_upgrades()  # transforms are timed in their full code
    calls = {"numpy": lambda: transform(np, data), "scipy": lambda: transform(scipy, data),
             "plaidarray": lambda: np.asarray(transform(xp, x)), "plaidarray jit": lambda: np.asarray(traced(x))}
    if jax is not None:
        jitted = jax.jit(lambda v: transform(jnp, v))
        on_device = jnp.asarray(data)
        jitted(on_device).block_until_ready()
        calls["jax"] = lambda: jitted(on_device).block_until_ready()
    number = max(1, int(0.05 / max(_seconds(calls["numpy"], 1), 1e-7)))
    samples: dict[str, list[float]] = {library: [] for library in calls}
    for _ in range(repeat):
        for library, call in calls.items():
            samples[library].append(_seconds(call, number))
    medians = {library: statistics.median(times) for library, times in samples.items()}
    return {**medians, "first": first}


def _ms(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.3f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="cases whose name contains this")
    args = parser.parse_args()
    # Start-up (LLVM, the BLAS that dot_general calls) is not any transform's first call.
    np.asarray(xp.asarray(np.ones((2, 2), complex)) @ xp.asarray(np.ones((2, 2), complex)))
    libraries = ["numpy", "scipy", *(["jax"] if jax is not None else []), "plaidarray", "plaidarray jit"]
    print("| case | " + " | ".join(libraries) + " | plaidarray / NumPy: eager, jit | plaidarray first call |")
    print("|---|" + "---:|" * (len(libraries) + 2))
    for case in CASES:
        if args.only in case[0]:
            t = run(case, args.repeat)
            cells = " | ".join(_ms(t[library]) for library in libraries)
            ratios = f"{t['plaidarray'] / t['numpy']:.2f}x, {t['plaidarray jit'] / t['numpy']:.2f}x"
            print(f"| {case[0]} | {cells} | {ratios} | {_ms(t['first'])} |", flush=True)


if __name__ == "__main__":
    main()
