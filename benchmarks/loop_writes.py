"""Writes in a Python loop, per step, warm: what a NumPy-style loop pays for each store.

Each idiom is a loop of 300 steps over a 1000-element vector (a 200-element signal for the
masks, a 50x40 matrix, a 300x40 one for columns, a 1000x1000 one for partial pivoting's row
swaps) whose every step writes and, where a
script would, reads an element (or selects by a mask and reads the sum), timed after a
warm-up loop in the same process (kernels loaded, structures planned): the best of 5 loops, per
step, on NumPy and plaidarray side by side. JAX's arrays take no item assignment.

    python -m benchmarks.loop_writes
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType

import numpy as np

STEPS = 300


def _idioms(xp: ModuleType) -> dict[str, Callable[[int], None]]:
    rng = np.random.default_rng(0)
    x = xp.asarray(rng.random(1000)) * 1.0
    index, values = xp.asarray(rng.integers(0, 1000, 20)), xp.asarray(rng.random(20))
    tokens = xp.asarray(rng.integers(0, 50, STEPS))
    counts = xp.zeros(50, dtype=xp.int64)
    rows, cols = xp.asarray(rng.integers(0, 50, STEPS)), xp.asarray(rng.integers(0, 40, STEPS))
    weights = xp.asarray(rng.random(STEPS))
    dense = xp.zeros((50, 40))
    table = xp.zeros((50, 40), dtype=xp.int32)

    def scatter(n: int) -> None:
        for _ in range(n):
            x[index] = values
            float(x[0])

    def scatter_add(n: int) -> None:
        for _ in range(n):
            x[index] += 1.0
            float(x[0])

    def count(n: int) -> None:
        for i in range(n):
            counts[tokens[i]] += 1

    def accumulate(n: int) -> None:
        for k in range(n):
            dense[rows[k], cols[k]] += weights[k]

    def dynamic_programming(n: int) -> None:
        for k in range(n):
            i, j = 1 + k % 49, 1 + k % 39
            table[i, j] = min(int(table[i - 1, j]) + 1, int(table[i, j - 1]) + 1)

    out = xp.zeros(STEPS * 4)
    chunk = xp.asarray(rng.random(4))

    def chunks(n: int) -> None:
        for k in range(n):
            out[4 * k:4 * k + 4] = chunk * float(k)

    def segments(n: int) -> None:
        for k in range(n):
            dense[k % 50, 10:] = 0.5

    signal = xp.asarray(rng.standard_normal(200)) * 1.0

    def masked_clip(n: int) -> None:
        for k in range(n):
            signal[signal > 2.0 - k % 3 * 0.1] = 0.0
            float(signal[0])

    def masked_scale(n: int) -> None:
        for _ in range(n):
            low = signal < -1.0
            signal[low] *= 0.999
            float(signal[1])

    def selection_sum(n: int) -> None:
        for k in range(n):
            float(xp.sum(signal[signal > k % 5 * 0.1]))

    swapped = xp.asarray(rng.random((50, 40))) * 1.0

    def row_copies(n: int) -> None:
        for k in range(n):
            swapped[k % 50] = swapped[(7 * k) % 50]

    def row_slices(n: int) -> None:
        for k in range(n):
            swapped[k % 50, :] = swapped[(7 * k) % 50, :]

    pivoted = xp.asarray(rng.random((1000, 1000))) * 1.0

    def row_swaps(n: int) -> None:
        for k in range(n):
            i, j = k % 1000, (k * 7 + 3) % 1000
            kept = xp.asarray(pivoted[i], copy=True)
            pivoted[i] = pivoted[j]
            pivoted[j] = kept

    design = xp.zeros((300, 40))
    column = xp.asarray(rng.random(300))

    def column_writes(n: int) -> None:
        for k in range(n):
            design[:, k % 40] = column * float(k)

    return {"x[idx] = v; float(x[0])": scatter, "x[idx] += 1.0; float(x[0])": scatter_add,
            "counts[t[i]] += 1 (int64)": count, "dense[r[k], c[k]] += w[k]": accumulate,
            "table[i, j] = min(int(...), int(...)) (int32)": dynamic_programming,
            "out[4k:4k + 4] = chunk * float(k)": chunks, "m[k, 10:] = 0.5": segments,
            "x[x > t] = 0.0; float(x[0])": masked_clip, "x[x < t] *= c; float(x[1])": masked_scale,
            "float(xp.sum(x[x > t]))": selection_sum, "m[i] = m[j] (rows)": row_copies,
            "m[i, :] = m[j, :] (rows)": row_slices,
            "kept = asarray(m[i], copy=True); m[i] = m[j]; m[j] = kept (1000 x 1000)": row_swaps,
            "m[:, j] = col * float(k) (columns)": column_writes}


def per_step(loop: Callable[[int], None]) -> float:
    loop(STEPS)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        loop(STEPS)
        best = min(best, (time.perf_counter() - start) / STEPS)
    return best


def main() -> None:
    import plaidarray

    libraries = {"NumPy": np, "plaidarray": plaidarray}
    idioms = {name: _idioms(xp) for name, xp in libraries.items()}
    print("| loop step | NumPy | plaidarray | plaidarray / NumPy |")
    print("|---|---:|---:|---:|")
    for name in idioms["NumPy"]:
        numpy_s, plaid_s = per_step(idioms["NumPy"][name]), per_step(idioms["plaidarray"][name])
        print(f"| `{name}` | {numpy_s * 1e6:.2f} us | {plaid_s * 1e6:.1f} us | {plaid_s / numpy_s:.0f}x |")
    print(f"\nplaidarray compiles: {plaidarray.cache_info().compiles}")


if __name__ == "__main__":
    main()
