"""More eager scripts for ``benchmarks/eager.py``: the ``twelfth:`` group.

A twelfth batch, written on 2026-12-08 before anything was measured on it, as a NumPy user
writes such code, of functions the other groups call little: a hidden Markov model's
forward pass in log space by ``logaddexp``, zero crossings of windows counted by
``signbit``, points binned by angle after ``hypot`` and ``atan2``, sums of the triangles of
growing matrices by ``tril`` and ``triu``, batches filtered by ``isin`` and relabelled by
``unique_inverse``, the nearest centre of each point by ``argmin`` along rows, log
determinants of growing matrices by ``slogdet``, shifted 2-D spectra of patches of several
shapes by ``fftn`` and ``fftshift``, compounded growth by ``cumulative_prod`` of clipped
factors, and rows and columns flagged by ``any`` and ``all`` along an axis with their
counts. Each entry is (name, script, inputs), as ``eager.Script`` takes them.
"""

from __future__ import annotations

import math

import numpy as np


def hmm_forward(xp, log_start, log_transition, log_emission, observations):
    """The forward pass of a 3-state hidden Markov model in log space, the log-likelihood
    of each prefix read every ten observations."""
    alpha = log_start + log_emission[:, int(observations[0])]
    found = []
    for t in range(1, observations.shape[0]):
        scores = alpha[:, None] + log_transition
        total = xp.logaddexp(xp.logaddexp(scores[0, :], scores[1, :]), scores[2, :])
        alpha = total + log_emission[:, int(observations[t])]
        if t % 10 == 0:
            found.append(float(xp.logaddexp(xp.logaddexp(alpha[0], alpha[1]), alpha[2])))
    return found


def zero_crossings(xp, signal, starts):
    """Sign changes counted in windows of varying length by ``signbit``."""
    found = []
    for k in range(starts.shape[0] - 1):
        window = signal[int(starts[k]):int(starts[k + 1])]
        signs = xp.signbit(window)
        found.append(int(xp.sum(xp.astype(signs[1:] != signs[:-1], xp.int64))))
    return found


def angle_bins(xp, points, sizes):
    """Batches of 2-D points of several sizes binned by angle (eight sectors), the points
    of each sector beyond unit distance counted."""
    found = []
    start = 0
    for n in sizes.tolist():
        batch = points[start:start + n]
        start += n
        radius = xp.hypot(batch[:, 0], batch[:, 1])
        sector = xp.astype(xp.floor((xp.atan2(batch[:, 1], batch[:, 0]) + math.pi) / (math.pi / 4)), xp.int64)
        far = radius > 1.0
        found.append([int(xp.count_nonzero(xp.logical_and(far, sector == k))) for k in range(8)])
    return found


def triangle_balance(xp, m):
    """The lower triangle's sum against the upper's of the leading blocks of a matrix."""
    found = []
    for n in range(4, m.shape[0] + 1, 3):
        block = m[:n, :n]
        lower, upper = xp.tril(block), xp.triu(block, k=1)
        found.append(float(xp.sum(lower) - xp.sum(upper)))
    return found


def filtered_relabel(xp, values, allowed, bounds):
    """Each batch's values kept where they are allowed, relabelled by their distinct
    values, the number of labels and the largest label's count read."""
    found = []
    for k in range(bounds.shape[0] - 1):
        batch = values[int(bounds[k]):int(bounds[k + 1])]
        kept = batch[xp.isin(batch, allowed)]
        labels = xp.unique_inverse(kept)
        counts = xp.sum(xp.astype(labels.inverse_indices[:, None] == xp.arange(labels.values.shape[0])[None, :],
                                  xp.int64), axis=0)
        found.append((int(labels.values.shape[0]), int(xp.max(counts))))
    return found


def nearest_centres(xp, points, centres):
    """Each point's nearest centre by ``argmin`` along its row of distances, for growing
    prefixes of the points; the points per centre read."""
    found = []
    for n in range(20, points.shape[0] + 1, 20):
        chunk = points[:n]
        distances = xp.sum((chunk[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
        nearest = xp.argmin(distances, axis=1)
        found.append([int(xp.sum(xp.astype(nearest == k, xp.int64))) for k in range(centres.shape[0])])
    return found


def log_determinants(xp, a):
    """The sign and log-magnitude of the determinant of growing matrices made positive
    definite, by ``slogdet``."""
    found = []
    for n in range(2, a.shape[0] + 1):
        block = a[:n, :n]
        spd = block @ block.T + n * xp.eye(n, dtype=a.dtype)
        sign, logabs = xp.linalg.slogdet(spd)
        found.append((float(sign), float(logabs)))
    return found


def shifted_spectra(xp, image):
    """The centred 2-D spectrum's peak of patches of several shapes, by ``fftn`` and
    ``fftshift``."""
    found = []
    for h, w in [(8, 8), (8, 16), (12, 12), (16, 10), (20, 20), (9, 15)]:
        patch = image[:h, :w]
        spectrum = xp.fft.fftshift(xp.abs(xp.fft.fftn(patch - xp.mean(patch))))
        found.append(float(xp.max(spectrum)))
    return found


def compounded_growth(xp, rates):
    """Growth factors clipped to a band and compounded along each row by
    ``cumulative_prod``, for prefixes of the rows; the best final value read."""
    found = []
    for n in range(5, rates.shape[0] + 1, 5):
        factors = xp.clip(1.0 + rates[:n], 0.9, 1.1)
        paths = xp.cumulative_prod(factors, axis=1)
        found.append(float(xp.max(paths[:, -1])))
    return found


def axis_flags(xp, x):
    """Rows and columns with any value above, and all values below, a threshold, counted
    for thresholds in turn and for growing leading blocks."""
    found = []
    for n, threshold in zip(range(6, x.shape[0] + 1, 6), np.linspace(0.5, 2.0, 12)):
        block = x[:n, :]
        above = block > threshold
        found.append((int(xp.count_nonzero(xp.any(above, axis=1))), int(xp.count_nonzero(xp.all(~above, axis=0)))))
    return found


def _hmm_inputs(rng):
    transition = rng.uniform(0.1, 1.0, (3, 3))
    emission = rng.uniform(0.1, 1.0, (3, 4))
    return (np.log(np.full(3, 1 / 3)), np.log(transition / transition.sum(axis=1, keepdims=True)),
            np.log(emission / emission.sum(axis=1, keepdims=True)), rng.integers(0, 4, 80))


def _starts(rng, n, low, high):
    cuts = np.cumsum(rng.integers(low, high, n // low))
    return np.concatenate([[0], cuts[cuts < n]])


TWELFTH = [
    ("twelfth: hmm_forward", hmm_forward, _hmm_inputs),
    ("twelfth: zero_crossings", zero_crossings,
     lambda rng: (np.sin(np.arange(2000) * 0.3) + rng.standard_normal(2000) * 0.5, _starts(rng, 2000, 30, 120))),
    ("twelfth: angle_bins", angle_bins,
     lambda rng: (rng.standard_normal((900, 2)) * 1.2, np.array([50, 120, 80, 200, 150, 90, 210]))),
    ("twelfth: triangle_balance", triangle_balance, lambda rng: (rng.standard_normal((40, 40)),)),
    ("twelfth: filtered_relabel", filtered_relabel,
     lambda rng: (rng.integers(0, 30, 1200), rng.integers(0, 30, 12), _starts(rng, 1200, 60, 200))),
    ("twelfth: nearest_centres", nearest_centres,
     lambda rng: (rng.standard_normal((200, 3)), rng.standard_normal((5, 3)))),
    ("twelfth: log_determinants", log_determinants, lambda rng: (rng.standard_normal((12, 12)),)),
    ("twelfth: shifted_spectra", shifted_spectra, lambda rng: (rng.standard_normal((24, 24)),)),
    ("twelfth: compounded_growth", compounded_growth, lambda rng: (rng.standard_normal((40, 30)) * 0.05,)),
    ("twelfth: axis_flags", axis_flags, lambda rng: (rng.standard_normal((72, 9)),)),
]
