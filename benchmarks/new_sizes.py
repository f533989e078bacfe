"""Reads at sizes met for the first time, per step, warm: what a loop over windows or
batches of ever new lengths pays for each read once its structures are planned.

Five idioms, interleaved so that the executable cache holds bindings of several
structures at once (as a script's loops do), each a loop of 300 steps at lengths no
earlier step met: the statistics of a window's prefix (``max - min + mean(w * w)``), a
point's z-score against a window (``mean``, ``std``), the sum of squares of a batch of
rows times a matrix, and the mean square of half-windows, whose length repeats once
(``n // 2``: a size met twice, its second read caching its run), and a low-pass filter (a real
FFT, its upper three quarters of terms zeroed, the inverse's energy), whose plans are made
per length. After a warm-up round (kernels
loaded, structures planned), the best of 5 rounds, per step, on NumPy and plaidarray side
by side.

    python -m benchmarks.new_sizes
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType

import numpy as np

STEPS = 300
ROUNDS = 5


def _idioms(xp: ModuleType) -> dict[str, Callable[[int], float]]:
    rng = np.random.default_rng(1)
    x = xp.asarray(rng.standard_normal(20_000))
    m, w = xp.asarray(rng.standard_normal((3000, 8))), xp.asarray(rng.standard_normal((8, 3)))

    def window(n: int) -> float:
        v = x[:n]
        return float(xp.max(v) - xp.min(v) + xp.mean(v * v))

    def zscore(n: int) -> float:
        v = x[n:2 * n]
        return float((x[n] - xp.mean(v)) / xp.std(v))

    def rows(n: int) -> float:
        return float(xp.sum((m[:n % 2900 + 5] @ w) ** 2))

    def halves(n: int) -> float:
        v = x[n:n + n // 2]
        return float(xp.sum(v * v) / n)

    def lowpass(n: int) -> float:
        spectrum = xp.fft.rfft(x[:n])
        low = xp.arange(spectrum.shape[0]) < spectrum.shape[0] // 4
        return float(xp.sum(xp.fft.irfft(xp.where(low, spectrum, xp.zeros_like(spectrum)), n=n) ** 2))

    return {"window max - min + mean(w * w)": window, "z-score: mean, std of a window": zscore,
            "sum((rows @ matrix) ** 2)": rows, "sum(w * w) / n, each length twice": halves,
            "irfft(low terms of rfft(w)), energy": lowpass}


def _per_step(xp: ModuleType) -> dict[str, float]:
    """Each idiom's best per-step seconds over ``ROUNDS`` rounds after a warm-up one."""
    idioms = _idioms(xp)
    best = {name: float("inf") for name in idioms}
    start = 10
    for round_ in range(ROUNDS + 1):
        for name, step in idioms.items():
            lengths = range(start, start + STEPS)
            start += STEPS
            began = time.perf_counter()
            for n in lengths:
                step(n)
            if round_:
                best[name] = min(best[name], (time.perf_counter() - began) / STEPS)
    return best


def main() -> None:
    import plaidarray

    libraries = {"NumPy": _per_step(np), "plaidarray": _per_step(plaidarray)}
    print("| read at a new size | NumPy | plaidarray | plaidarray / NumPy |")
    print("|---|---:|---:|---:|")
    for name in libraries["NumPy"]:
        base, ours = libraries["NumPy"][name], libraries["plaidarray"][name]
        print(f"| `{name}` | {base * 1e6:.1f} us | {ours * 1e6:.1f} us | {ours / base:.1f}x |")


if __name__ == "__main__":
    main()
