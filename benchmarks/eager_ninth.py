"""More eager scripts for ``benchmarks/eager.py``: the ``ninth:`` group.

A ninth batch, written on 2026-12-07 after that day's changes and before anything was
measured on it, as a NumPy user writes such code: running statistics merged batch by batch
(Chan's update of a mean and a sum of squares), a quadratic fitted to windows of growing
length through its normal equations and ``linalg.solve``, softmax entropies of logits at a
temperature that falls each step, rank-one updates by ``linalg.outer`` with the trace read,
the deepest dip of cumulative log returns of growing prefixes, digit sums of an int64
array by ``floor_divide`` and ``remainder`` until every value is one digit, the distinct
values of batches merged by ``unique_values`` and located by ``searchsorted``, per-group
means of batches by a ``where`` mask per group, ``slogdet`` of growing SPD blocks, and a
pattern tiled and flipped to ever longer signals. Each entry is (name, script, inputs), as
``eager.Script`` takes them.
"""

from __future__ import annotations

import numpy as np


def merged_moments(xp, x, sizes):
    """A running mean and variance merged batch by batch (Chan's parallel update), the
    variance read after each batch of its own size."""
    count, mean, squares = 0, 0.0, 0.0
    found = []
    start = 0
    for n in np.asarray(sizes).tolist():
        batch = x[start:start + n]
        start += n
        batch_mean = xp.mean(batch)
        batch_squares = xp.sum((batch - batch_mean) ** 2)
        delta = batch_mean - mean
        total = count + n
        mean = mean + delta * (n / total)
        squares = squares + batch_squares + delta * delta * (count * n / total)
        count = total
        found.append(float(squares / (count - 1)))
    return found


def quadratic_windows(xp, t, y):
    """A quadratic fitted to each prefix of a growing series (its normal equations solved
    by ``linalg.solve``), the fitted curvature read."""
    found = []
    for n in range(12, t.shape[0] + 1, 17):
        tn, yn = t[:n], y[:n]
        design = xp.stack([xp.ones_like(tn), tn, tn * tn], axis=1)
        gram = xp.matrix_transpose(design) @ design
        coefficients = xp.linalg.solve(gram, xp.matrix_transpose(design) @ yn)
        found.append(float(coefficients[2]))
    return found


def cooling_entropy(xp, logits):
    """Softmax over each row of logits at a temperature that falls each step, the mean
    entropy of the rows read."""
    found = []
    for step in range(1, 16):
        scaled = logits / (2.0 / step)
        scaled = scaled - xp.max(scaled, axis=1, keepdims=True)
        p = xp.exp(scaled)
        p = p / xp.sum(p, axis=1, keepdims=True)
        found.append(float(-xp.mean(xp.sum(p * xp.log(p + 1e-300), axis=1))))
    return found


def rank_one_updates(xp, us, vs):
    """A matrix built by rank-one updates (``linalg.outer``), scaled down when its trace
    passes a bound read each step."""
    m = xp.eye(us.shape[1])
    found = []
    for k in range(us.shape[0]):
        m = m + 0.1 * xp.linalg.outer(us[k], vs[k])
        trace = float(xp.linalg.trace(m))
        if abs(trace) > 10.0:
            m = m / trace
        found.append(trace)
    return found


def deepest_dips(xp, returns):
    """The deepest dip of cumulative log returns below their running peak, for prefixes of
    growing length (the peak as the largest earlier sum, found per prefix by ``max``)."""
    found = []
    for n in range(20, returns.shape[0] + 1, 23):
        level = xp.cumulative_sum(returns[:n])
        found.append(float(xp.max(level) - level[-1]))
    return found


def digit_sums(xp, values):
    """Each value replaced by the sum of its decimal digits until all are single digits,
    the number of passes counted by a read of ``any``."""
    passes = 0
    while bool(xp.any(values >= 10)):
        total = xp.zeros_like(values)
        rest = values
        while bool(xp.any(rest > 0)):
            total = total + xp.remainder(rest, 10)
            rest = xp.floor_divide(rest, 10)
        values = total
        passes += 1
    return passes, np.asarray(values)


def merged_distinct(xp, batches, bounds):
    """Batches of labels joined one by one to a sorted set of distinct values
    (``unique_values``, sorted: the standard leaves its order open, and NumPy 2.3's is not
    sorted), each new batch's labels located in it by ``searchsorted``, the set's size and
    the positions' sum read."""
    seen = xp.asarray(np.zeros(0, dtype=np.int64))
    found = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        batch = batches[int(start):int(stop)]
        seen = xp.sort(xp.unique_values(xp.concat([seen, batch])))
        found.append((int(seen.shape[0]), int(xp.sum(xp.searchsorted(seen, batch)))))
    return found


def group_means(xp, values, groups, bounds):
    """Per batch of varying size, the mean of each of four groups by a ``where`` mask (a
    group absent from the batch counted as 0), the largest gap between group means read."""
    found = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        v, g = values[int(start):int(stop)], groups[int(start):int(stop)]
        means = []
        for k in range(4):
            mask = g == k
            means.append(xp.sum(xp.where(mask, v, 0.0)) / xp.maximum(xp.sum(mask), 1))
        stacked = xp.stack(means)
        found.append(float(xp.max(stacked) - xp.min(stacked)))
    return found


def growing_logdets(xp, a):
    """The log-determinant of each leading block of an SPD matrix (``slogdet``), its sign
    checked."""
    found = []
    for n in range(2, a.shape[0] + 1):
        sign, logdet = xp.linalg.slogdet(a[:n, :n])
        if float(sign) <= 0.0:
            raise ValueError("a leading block of an SPD matrix has a non-positive determinant")
        found.append(float(logdet))
    return found


def tiled_signals(xp, pattern):
    """A short pattern tiled to ever longer signals, each flipped and added to itself, its
    energy read."""
    found = []
    for reps in range(2, 30, 2):
        signal = xp.tile(pattern, (reps,))
        mirrored = signal + xp.flip(signal)
        found.append(float(xp.sum(mirrored * mirrored)))
    return found


def _batch_bounds(rng: np.random.Generator, n: int, low: int, high: int) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(rng.integers(low, high, 30))]).clip(0, n)


def _spd(rng: np.random.Generator) -> tuple[np.ndarray]:
    a = rng.standard_normal((24, 24))
    return (a @ a.T + 24.0 * np.eye(24),)


NINTH = [
    ("ninth: merged_moments", merged_moments,
     lambda rng: (rng.standard_normal(3000) * 2.0 + 1.0, rng.integers(20, 90, 40))),
    ("ninth: quadratic_windows", quadratic_windows,
     lambda rng: (np.linspace(0.0, 3.0, 220), 0.5 * np.linspace(0.0, 3.0, 220) ** 2 + rng.standard_normal(220) * 0.1)),
    ("ninth: cooling_entropy", cooling_entropy, lambda rng: (rng.standard_normal((64, 10)),)),
    ("ninth: rank_one_updates", rank_one_updates,
     lambda rng: (rng.standard_normal((60, 5)), rng.standard_normal((60, 5)))),
    ("ninth: deepest_dips", deepest_dips, lambda rng: (rng.standard_normal(500) * 0.01,)),
    ("ninth: digit_sums", digit_sums, lambda rng: (rng.integers(0, 10**12, 300),)),
    ("ninth: merged_distinct", merged_distinct,
     lambda rng: (rng.integers(0, 400, 1500), _batch_bounds(rng, 1500, 20, 70))),
    ("ninth: group_means", group_means,
     lambda rng: (rng.standard_normal(2000), rng.integers(0, 4, 2000), _batch_bounds(rng, 2000, 30, 90))),
    ("ninth: growing_logdets", growing_logdets, _spd),
    ("ninth: tiled_signals", tiled_signals, lambda rng: (rng.standard_normal(7),)),
]
