"""More eager scripts for ``benchmarks/eager.py``: the ``sixth:`` group.

A sixth batch, written on 2026-12-06 after the others and before any change measured on it,
of the kinds a first run meets: quantiles of batches of varying length by ``sort`` and an
index read, negative values zeroed by a masked store and each row renormalised, normal
equations of growing prefixes solved by ``linalg.solve``, each signal's peak frequency by
``rfft`` at several lengths, running sums restarted by an element loop of reads, sorted
labels per batch counted by ``unique_counts`` and placed by ``searchsorted``, a small
matrix raised by repeated products with its trace read, and windows of varying length
clipped at their mean and spread. Each entry is (name, script, inputs), as
``eager.Script`` takes them; item assignment is NumPy's, so JAX's runs of the scripts that
store fail, as the ``loops:`` group's do.
"""

from __future__ import annotations

import numpy as np


def batch_quantiles(xp, x, bounds):
    """Each batch's lower quartile, median and upper quartile: the batch sorted, three
    elements read at positions of its own length."""
    found = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        ordered = xp.sort(x[int(start):int(stop)])
        n = ordered.shape[0]
        found.append([float(ordered[n // 4]), float(ordered[n // 2]), float(ordered[(3 * n) // 4])])
    return np.asarray(found)


def masked_renorm(xp, m):
    """Ten steps: a drift added, the negative entries zeroed through a boolean mask, each
    row scaled to sum 1, the largest entry read."""
    m = xp.asarray(m, copy=True)
    peaks = []
    for step in range(10):
        m = m + 0.05 * (step - 4.5)
        m[m < 0.0] = 0.0
        m = m / (xp.sum(m, axis=1, keepdims=True) + 1e-12)
        peaks.append(float(xp.max(m)))
    return peaks


def growing_normal_equations(xp, a, y):
    """A 3-parameter fit on each prefix of 20, 30, ... rows: the normal equations solved,
    the residual's norm read."""
    norms = []
    for n in range(20, a.shape[0] + 1, 10):
        rows, target = a[:n], y[:n]
        coef = xp.linalg.solve(rows.T @ rows, rows.T @ target)
        norms.append(float(xp.linalg.vector_norm(rows @ coef - target)))
    return norms


def peak_frequencies(xp, x, lengths):
    """Each prefix's peak frequency: the ``rfft`` magnitude's argmax read and scaled by
    its length."""
    peaks = []
    for n in lengths:
        spectrum = xp.abs(xp.fft.rfft(x[:int(n)]))
        peaks.append(int(xp.argmax(spectrum[1:])) + 1)
    return peaks


def restarted_sums(xp, x):
    """A running sum over the elements that restarts at zero whenever it would go below
    zero, each element read and the sum stored."""
    out = xp.zeros(x.shape[0])
    total = 0.0
    for i in range(x.shape[0]):
        total = max(0.0, total + float(x[i]))
        out[i] = total
    return np.asarray(out)


def label_positions(xp, labels, bounds):
    """Per batch: its labels' distinct values and counts, and where the batch's median
    label would go among the values (``searchsorted``), all read."""
    found = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        batch = labels[int(start):int(stop)]
        values, counts = xp.unique_counts(batch)
        middle = xp.sort(batch)[batch.shape[0] // 2]
        found.append((int(values.shape[0]), int(xp.max(counts)), int(xp.searchsorted(values, middle))))
    return np.asarray(found)


def matrix_powers(xp, m):
    """A 5x5 matrix raised by repeated products, scaled by its largest entry at each step,
    its trace read."""
    p = xp.eye(5)
    traces = []
    for _ in range(24):
        p = p @ m
        p = p / xp.max(xp.abs(p))
        traces.append(float(xp.linalg.trace(p)))
    return traces


def clipped_windows(xp, x, widths):
    """Windows of varying width, each clipped at its mean plus and minus twice its
    spread (``where``), the clipped window's largest magnitude read."""
    found = []
    start = 0
    for w in widths:
        window = x[start:start + int(w)]
        mean, spread = xp.mean(window), xp.std(window)
        clipped = xp.where(window > mean + 2 * spread, mean + 2 * spread,
                           xp.where(window < mean - 2 * spread, mean - 2 * spread, window))
        found.append(float(xp.max(xp.abs(clipped))))
        start += int(w) // 2
    return found


def _bounds(rng: np.random.Generator, n: int, low: int, high: int) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(rng.integers(low, high, 40))]).clip(0, n)


SIXTH = [
    ("sixth: batch_quantiles", batch_quantiles, lambda rng: (rng.standard_normal(3000), _bounds(rng, 3000, 20, 120))),
    ("sixth: masked_renorm", masked_renorm, lambda rng: (rng.standard_normal((40, 12)),)),
    ("sixth: growing_normal_equations", growing_normal_equations,
     lambda rng: (rng.standard_normal((150, 3)), rng.standard_normal(150))),
    ("sixth: peak_frequencies", peak_frequencies,
     lambda rng: (np.sin(np.arange(600) * 0.3) + 0.1 * rng.standard_normal(600), np.arange(120, 601, 40))),
    ("sixth: restarted_sums", restarted_sums, lambda rng: (rng.standard_normal(400),)),
    ("sixth: label_positions", label_positions,
     lambda rng: (rng.integers(0, 9, 2000), _bounds(rng, 2000, 15, 90))),
    ("sixth: matrix_powers", matrix_powers, lambda rng: (rng.standard_normal((5, 5)),)),
    ("sixth: clipped_windows", clipped_windows,
     lambda rng: (rng.standard_normal(4000), rng.integers(30, 200, 30))),
]
