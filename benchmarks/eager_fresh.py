"""More eager scripts for ``benchmarks/eager.py``: the ``fresh:`` group.

A fourth batch written apart from the tuned groups and from each other, of kinds the
earlier ones leave out: Welch's power spectrum over segments of signals of several lengths,
bisection of a batch of equations stopped by the widest bracket read each step, a Markov
chain's steady state by repeated products stopped by a change read each step, the lengths
of polylines of varying point counts, a running top-k over a stream of batches, the
unshifted QR algorithm's eigenvalues of a small matrix, a recursive filter written element
by element as stores that read the element before, Gaussian kernel density estimates at
several bandwidths, one-hot label counts of batches of varying size, and Euclid's algorithm
on integer arrays stopped when no remainder is left. Each entry is (name, script, inputs),
as ``eager.Script`` takes them; item assignment is NumPy's, so JAX's runs of the scripts
that store fail, as the ``loops:`` group's do.
"""

from __future__ import annotations

import numpy as np


def welch_psd(xp, *signals):
    """Each signal's power spectrum averaged over half-overlapping Hann-windowed segments of
    64 samples, and the frequency bin of its peak."""
    n = 64
    window = 0.5 - 0.5 * xp.cos(2.0 * np.pi * xp.arange(n, dtype=xp.float64) / n)
    peaks = []
    for s in signals:
        x = xp.asarray(s)
        segments = [x[i:i + n] for i in range(0, x.shape[0] - n + 1, n // 2)]
        power = xp.zeros(n // 2 + 1)
        for seg in segments:
            spectrum = xp.fft.rfft((seg - xp.mean(seg)) * window)
            power = power + xp.real(spectrum * xp.conj(spectrum))
        power = power / len(segments)
        peaks.append(int(xp.argmax(power[1:])) + 1)
    return peaks


def bisection_batch(xp, c):
    """The roots of x**3 + x - c for a batch of c by bisection, all brackets halved at once
    until the widest is read to be narrow enough."""
    lo, hi = xp.zeros_like(c), xp.ones_like(c) * 4.0
    steps = 0
    while float(xp.max(hi - lo)) > 1e-10:
        mid = 0.5 * (lo + hi)
        above = mid ** 3 + mid - c > 0
        hi = xp.where(above, mid, hi)
        lo = xp.where(above, lo, mid)
        steps += 1
    return steps, np.asarray(0.5 * (lo + hi))


def markov_steady(xp, t):
    """A Markov chain's steady state by repeated products with its transition matrix,
    stopped by the change read each step; the states ranked by their weight."""
    p = xp.ones(t.shape[0]) / t.shape[0]
    steps, change = 0, 1.0
    while change >= 1e-12 and steps < 500:
        q = p @ t
        change = float(xp.sum(xp.abs(q - p)))
        p = q
        steps += 1
    return steps, np.asarray(p), np.asarray(xp.argsort(-p))


def polyline_lengths(xp, points, counts):
    """The length of each polyline, its points a slice of one array of varying count."""
    lengths = []
    start = 0
    for k in counts:
        line = points[start:start + int(k), :]
        steps = line[1:, :] - line[:-1, :]
        lengths.append(float(xp.sum(xp.sqrt(xp.sum(steps * steps, axis=1)))))
        start += int(k)
    return lengths


def streaming_topk(xp, *batches):
    """The 10 largest values over a stream of batches of varying size: the kept ones joined
    with each batch, sorted and cut; the smallest kept value read after each batch."""
    kept = xp.asarray(np.full(10, -np.inf))
    floors = []
    for b in batches:
        joined = xp.concat([kept, xp.asarray(b)])
        kept = xp.sort(joined)[-10:]
        floors.append(float(kept[0]))
    return floors, np.asarray(kept)


def qr_eigs(xp, a):
    """The eigenvalues of a symmetric 6x6 matrix by the unshifted QR algorithm, the size of
    what is left below the diagonal read each step."""
    below = xp.tril(xp.ones_like(a), k=-1)
    steps, left = 0, 1.0
    while left >= 1e-9 and steps < 300:
        q, r = xp.linalg.qr(a)
        a = r @ q
        left = float(xp.sqrt(xp.sum((a * below) ** 2)))
        steps += 1
    return steps, sorted(np.asarray(xp.linalg.diagonal(a)).tolist())


def iir_filter_stores(xp, x):
    """A first-order recursive filter written element by element, each output stored from
    the one before it (no read inside the loop), then the result read once."""
    y = xp.zeros_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = 0.9 * y[i - 1] + 0.1 * x[i]
    return np.asarray(y)


def kde_bandwidths(xp, data, grid):
    """A Gaussian kernel density estimate on a grid at several bandwidths: each one's
    density from the grid-by-data differences, its log-likelihood on the data read."""
    out = []
    diffs = grid[:, None] - data[None, :]
    self_diffs = data[:, None] - data[None, :]
    n = data.shape[0]
    for h in (0.1, 0.2, 0.35, 0.5, 0.8, 1.2):
        norm = 1.0 / (n * h * np.sqrt(2.0 * np.pi))
        density = norm * xp.sum(xp.exp(-0.5 * (diffs / h) ** 2), axis=1)
        at_data = norm * xp.sum(xp.exp(-0.5 * (self_diffs / h) ** 2), axis=1)
        out.append((float(xp.max(density)), float(xp.sum(xp.log(at_data)))))
    return out


def onehot_counts(xp, labels, sizes):
    """Label counts of batches of varying size through a one-hot comparison summed down
    the batch; the most common label of each read."""
    classes = xp.arange(7)
    found = []
    start = 0
    for k in sizes:
        batch = labels[start:start + int(k)]
        counts = xp.sum(xp.astype(batch[:, None] == classes[None, :], xp.int64), axis=0)
        found.append(int(xp.argmax(counts)))
        start += int(k)
    return found


def euclid_gcd(xp, a, b):
    """Elementwise greatest common divisors of two integer arrays by Euclid's algorithm,
    stopped when no remainder is left anywhere (read each step)."""
    steps = 0
    while bool(xp.any(b != 0)):
        safe = xp.where(b != 0, b, 1)
        a, b = xp.where(b != 0, b, a), xp.where(b != 0, a % safe, 0)
        steps += 1
    return steps, np.asarray(a)


def _signals(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    t = [np.arange(n) for n in (256, 300, 384, 450, 512)]
    return tuple(np.sin(2 * np.pi * (5 + k) * ti / 64) + 0.3 * rng.standard_normal(ti.shape[0]) for k, ti in enumerate(t))


def _chain(rng: np.random.Generator) -> tuple[np.ndarray]:
    t = rng.random((30, 30)) + np.eye(30)
    return (t / t.sum(axis=1, keepdims=True),)


def _polylines(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    counts = rng.integers(3, 60, 40)
    return rng.standard_normal((int(counts.sum()), 2)).cumsum(axis=0), counts


def _stream(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return tuple(rng.standard_normal(int(k)) for k in rng.integers(20, 200, 30))


def _symmetric(rng: np.random.Generator) -> tuple[np.ndarray]:
    m = rng.standard_normal((6, 6))
    return (m + m.T + np.diag(np.arange(6.0) * 3.0),)


def _labels(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    sizes = rng.integers(10, 120, 25)
    return rng.integers(0, 7, int(sizes.sum())), sizes


#: (name, script, inputs) of each script, as ``eager.Script`` takes them.
FRESH = [
    ("fresh: welch_psd", welch_psd, _signals),
    ("fresh: bisection_batch", bisection_batch, lambda rng: (rng.uniform(0.5, 60.0, 50),)),
    ("fresh: markov_steady", markov_steady, _chain),
    ("fresh: polyline_lengths", polyline_lengths, _polylines),
    ("fresh: streaming_topk", streaming_topk, _stream),
    ("fresh: qr_eigs", qr_eigs, _symmetric),
    ("fresh: iir_filter_stores", iir_filter_stores, lambda rng: (rng.standard_normal(300),)),
    ("fresh: kde_bandwidths", kde_bandwidths,
     lambda rng: (rng.standard_normal(150), np.linspace(-4.0, 4.0, 120))),
    ("fresh: onehot_counts", onehot_counts, _labels),
    ("fresh: euclid_gcd", euclid_gcd,
     lambda rng: (rng.integers(1, 10_000, 80), rng.integers(1, 10_000, 80))),
]
