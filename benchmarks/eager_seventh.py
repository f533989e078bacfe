"""More eager scripts for ``benchmarks/eager.py``: the ``seventh:`` group.

A seventh batch, written on 2026-12-07 after the others and before any change measured on
it, of the kinds a first run meets with functions the other groups call little: running
products of rows by ``cumulative_prod`` read at their last column, principal components of
growing windows by ``linalg.svd``, values quantised by ``round`` and ``clip`` and counted
per level, readings with gaps (NaN) filled from their mean before a trend is read, the
distinct values of a list joined from pieces of varying length, rows of growing batches
scaled to unit norm by ``vector_norm`` with ``keepdims``, a signal's circular
autocorrelation by ``roll`` at each lag, the smallest eigenvalue of small symmetric
matrices of growing size by ``eigh``, a 2-D spectrum's energy of images of several shapes
by ``fft.fft2``, and ranks by ``argsort`` of ``argsort`` gathered by ``take``. Each entry is
(name, script, inputs), as ``eager.Script`` takes them.
"""

from __future__ import annotations

import numpy as np


def running_products(xp, m):
    """Each batch of rows' running products along the row, its last column's mean read."""
    found = []
    for start in range(0, m.shape[0] - 10, 7):
        rows = m[start:start + 10 + start % 5]
        found.append(float(xp.mean(xp.cumulative_prod(rows, axis=1)[:, -1])))
    return found


def window_components(xp, x):
    """The two largest singular values of each centred window of growing length."""
    found = []
    for n in range(12, x.shape[0] + 1, 6):
        w = x[:n] - xp.mean(x[:n], axis=0)
        s = xp.linalg.svd(w, full_matrices=False)[1]
        found.append(float(s[0]) + float(s[1]))
    return found


def quantised_levels(xp, x):
    """Values quantised to eight levels at a new scale each step, the most common level's count read."""
    found = []
    for step in range(12):
        levels = xp.clip(xp.round(x * (1.0 + 0.25 * step)), -4.0, 3.0).astype(xp.int64)
        counts = xp.stack([xp.sum(levels == k) for k in range(-4, 4)])
        found.append(int(xp.max(counts)))
    return found


def gap_filled_trend(xp, x):
    """Readings with gaps: each prefix's NaNs filled with its mean, then its last minus first read."""
    found = []
    for n in range(40, x.shape[0] + 1, 20):
        part = x[:n]
        missing = xp.isnan(part)
        mean = xp.sum(xp.where(missing, 0.0, part)) / (n - xp.sum(missing))
        filled = xp.where(missing, mean, part)
        found.append(float(filled[-1] - filled[0]) + float(mean))
    return found


def joined_distinct(xp, x, bounds):
    """A list joined from pieces of varying length, its count of distinct values read after each piece."""
    pieces, found = [], []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        pieces.append(x[int(start):int(stop)])
        found.append(int(xp.unique_values(xp.concat(pieces)).shape[0]))
    return found


def unit_rows(xp, m):
    """Batches of growing size scaled to unit rows, the largest first coordinate read."""
    found = []
    for n in range(5, m.shape[0] + 1, 9):
        batch = m[:n]
        scaled = batch / xp.linalg.vector_norm(batch, axis=1, keepdims=True)
        found.append(float(xp.max(scaled[:, 0])))
    return found


def circular_autocorrelation(xp, x):
    """A signal's circular autocorrelation at each lag by ``roll``, the best lag read."""
    centred = x - xp.mean(x)
    scale = float(xp.sum(centred * centred))
    values = [float(xp.sum(centred * xp.roll(centred, lag))) / scale for lag in range(1, 40)]
    return values


def smallest_eigenvalues(xp, a):
    """The smallest eigenvalue of the leading n-by-n block of a symmetric matrix, n growing."""
    found = []
    for n in range(3, a.shape[0] + 1):
        block = a[:n, :n]
        found.append(float(xp.linalg.eigh(block).eigenvalues[0]))
    return found


def spectrum_energy(xp, images):
    """The 2-D spectrum's energy away from the zero frequency of crops of several shapes."""
    found = []
    for h, w in [(8, 8), (8, 12), (12, 10), (16, 16), (10, 14), (16, 8)]:
        spectrum = xp.fft.fft2(images[:, :h, :w])
        energy = xp.sum(xp.abs(spectrum) ** 2, axis=(1, 2)) - xp.abs(spectrum[:, 0, 0]) ** 2
        found.append(float(xp.mean(energy)))
    return found


def rank_gather(xp, x):
    """Each batch's ranks (``argsort`` of ``argsort``), the values at the middle ranks gathered by ``take``."""
    found = []
    for start in range(0, x.shape[0] - 60, 45):
        batch = x[start:start + 60 + start % 17]
        ranks = xp.argsort(xp.argsort(batch))
        middle = xp.take(batch, xp.argsort(batch)[batch.shape[0] // 2 - 2:batch.shape[0] // 2 + 2])
        found.append(float(xp.sum(middle)) + int(ranks[0]))
    return found


def _gappy(rng: np.random.Generator) -> tuple[np.ndarray]:
    x = np.cumsum(rng.standard_normal(400))
    x[rng.integers(0, 400, 60)] = np.nan
    x[0] = 0.0
    x[-1] = 1.0
    return (x,)


def _symmetric(rng: np.random.Generator) -> tuple[np.ndarray]:
    a = rng.standard_normal((9, 9))
    return (a + a.T,)


SEVENTH = [
    ("seventh: running_products", running_products, lambda rng: (rng.uniform(0.9, 1.1, (120, 16)),)),
    ("seventh: window_components", window_components, lambda rng: (rng.standard_normal((72, 4)),)),
    ("seventh: quantised_levels", quantised_levels, lambda rng: (rng.standard_normal(2000),)),
    ("seventh: gap_filled_trend", gap_filled_trend, _gappy),
    ("seventh: joined_distinct", joined_distinct,
     lambda rng: (rng.integers(0, 500, 1200).astype(np.float64),
                  np.concatenate([[0], np.cumsum(rng.integers(20, 80, 20))]).clip(0, 1200))),
    ("seventh: unit_rows", unit_rows, lambda rng: (rng.standard_normal((140, 3)) + 0.5,)),
    ("seventh: circular_autocorrelation", circular_autocorrelation,
     lambda rng: (np.sin(np.arange(300) * 0.21) + 0.3 * rng.standard_normal(300),)),
    ("seventh: smallest_eigenvalues", smallest_eigenvalues, _symmetric),
    ("seventh: spectrum_energy", spectrum_energy, lambda rng: (rng.standard_normal((3, 16, 16)),)),
    ("seventh: rank_gather", rank_gather, lambda rng: (rng.standard_normal(700),)),
]
