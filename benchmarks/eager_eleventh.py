"""More eager scripts for ``benchmarks/eager.py``: the ``eleventh:`` group.

An eleventh batch, written on 2026-12-07 before anything was measured on it, as a NumPy
user writes such code: an exponentially weighted mean updated element by element, bootstrap
means over index arrays made by NumPy each step, nearest-neighbour distances of growing
point sets, polynomial fits of rising degree by a Vandermonde matrix and the normal
equations, valid convolutions by shifted slices with kernels of several lengths, the top k
of each batch by an ``argsort`` of its negation, Gram-Schmidt over a growing number of columns,
complex band-pass filters by ``fft`` and ``ifft`` of signals of several lengths, k-means
assignments for several k, digit sums by ``floor_divide`` and ``remainder``, matrix
exponentials by a Taylor series at several sizes, membership tests by a broadcast ``==``
and ``any``, row softmax at several temperatures with its entropy, and running maxima by
``cumulative_max``-free loops of ``maximum``. Each entry is (name, script, inputs), as
``eager.Script`` takes them.
"""

from __future__ import annotations

import numpy as np


def ewma_elements(xp, x):
    """An exponentially weighted mean of a short series, updated element by element
    (``x[i]`` read into the update), stored into an output array at each step."""
    out = xp.zeros(x.shape[0], dtype=x.dtype)
    level = float(x[0])
    for i in range(x.shape[0]):
        level = 0.8 * level + 0.2 * float(x[i])
        out[i] = level
    return np.asarray(out)


def bootstrap_means(xp, data, draws):
    """Means of bootstrap resamples whose indices NumPy made, taken with ``take``, and
    the spread of the means read every ten draws."""
    means, spreads = [], []
    for k in range(draws.shape[0]):
        picked = xp.take(data, xp.asarray(draws[k]))
        means.append(xp.mean(picked))
        if k % 10 == 9:
            spreads.append(float(xp.std(xp.stack(means))))
    return spreads


def nearest_neighbours(xp, points):
    """For growing point sets: each point's nearest other point by a broadcast distance
    matrix with its diagonal masked, the largest such distance read."""
    found = []
    for n in range(12, points.shape[0] + 1, 9):
        p = points[:n]
        d = xp.sum((p[:, None, :] - p[None, :, :]) ** 2, axis=-1)
        d = xp.where(xp.eye(n, dtype=xp.bool), xp.inf, d)
        found.append(float(xp.max(xp.min(d, axis=1))))
    return found


def polynomial_degrees(xp, x, y):
    """Least-squares polynomials of degree 1 to 6 by a Vandermonde matrix and the normal
    equations, each fit's residual read."""
    found = []
    for degree in range(1, 7):
        v = x[:, None] ** xp.astype(xp.arange(degree + 1), x.dtype)[None, :]
        coef = xp.linalg.solve(v.T @ v, v.T @ y)
        found.append(float(xp.linalg.vector_norm(v @ coef - y)))
    return found


def valid_convolutions(xp, signal):
    """Valid convolutions of a signal with box kernels of several lengths, summed from
    shifted slices, each result's maximum read."""
    found = []
    n = signal.shape[0]
    for taps in (3, 5, 8, 13, 21):
        acc = xp.zeros(n - taps + 1, dtype=signal.dtype)
        for k in range(taps):
            acc = acc + signal[k:n - taps + 1 + k]
        found.append(float(xp.max(acc / taps)))
    return found


def top_k_batches(xp, scores, bounds):
    """Each batch's five largest scores by an ``argsort`` of their negation and ``take``,
    their sum read."""
    found = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        batch = scores[int(start):int(stop)]
        order = xp.argsort(-batch)
        found.append(float(xp.sum(xp.take(batch, order[:5]))))
    return found


def gram_schmidt(xp, a):
    """Classical Gram-Schmidt over the first k columns for growing k, the largest
    off-diagonal of the Gram matrix of the result read."""
    found = []
    for k in range(2, a.shape[1] + 1):
        q = []
        for j in range(k):
            v = a[:, j]
            for u in q:
                v = v - xp.vecdot(u, v) * u
            q.append(v / xp.linalg.vector_norm(v))
        m = xp.stack(q, axis=1)
        gram = m.T @ m
        found.append(float(xp.max(xp.abs(gram - xp.eye(k)))))
    return found


def complex_bandpass(xp, signal):
    """Band-pass filters of prefixes of several lengths: the complex ``fft``, a band of
    frequencies kept, the ``ifft``'s real part's energy read."""
    found = []
    for n in (120, 250, 333, 512, 700, 999):
        spectrum = xp.fft.fft(xp.astype(signal[:n], xp.complex128))
        freqs = xp.abs(xp.fft.fftfreq(n))
        kept = xp.where((freqs > 0.05) & (freqs < 0.2), spectrum, xp.zeros_like(spectrum))
        found.append(float(xp.sum(xp.real(xp.fft.ifft(kept)) ** 2)))
    return found


def kmeans_assignments(xp, points):
    """k-means assignment steps for k from 2 to 7 (centres the first k points), each
    step's cluster sizes read through the largest."""
    found = []
    for k in range(2, 8):
        centres = points[:k]
        for _ in range(3):
            d = xp.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
            label = xp.argmin(d, axis=1)
            onehot = xp.astype(label[:, None] == xp.arange(k)[None, :], points.dtype)
            counts = xp.sum(onehot, axis=0)
            centres = (onehot.T @ points) / xp.maximum(counts, 1.0)[:, None]
        found.append(float(xp.max(counts)))
    return found


def digit_sums(xp, numbers):
    """Sums of decimal digits of batches of integers by ``floor_divide`` and
    ``remainder``, the largest digit sum of each batch read."""
    found = []
    for size in (50, 120, 75, 200, 33):
        x = numbers[:size]
        total = xp.zeros_like(x)
        while bool(xp.any(x > 0)):
            total = total + xp.remainder(x, 10)
            x = xp.floor_divide(x, 10)
        found.append(int(xp.max(total)))
    return found


def matrix_exponentials(xp, a):
    """exp(A) of leading blocks of several sizes by 14 terms of the Taylor series, each
    result's trace read."""
    found = []
    for n in (2, 3, 5, 8):
        block = a[:n, :n] * 0.3
        term = xp.eye(n, dtype=a.dtype)
        total = term
        for k in range(1, 15):
            term = term @ block / k
            total = total + term
        found.append(float(xp.linalg.trace(total)))
    return found


def membership(xp, values, wanted):
    """Which values of each batch are among a growing set of wanted values (a broadcast
    ``==`` and ``any``), the count read."""
    found = []
    for m in range(2, wanted.shape[0] + 1, 3):
        hit = xp.any(values[:, None] == wanted[None, :m], axis=1)
        found.append(int(xp.sum(xp.astype(hit, xp.int64))))
    return found


def softmax_temperatures(xp, logits):
    """Row softmax at several temperatures and the mean entropy of its rows."""
    found = []
    for t in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0):
        z = logits / t
        z = z - xp.max(z, axis=1, keepdims=True)
        p = xp.exp(z)
        p = p / xp.sum(p, axis=1, keepdims=True)
        found.append(float(xp.mean(-xp.sum(p * xp.log(p), axis=1))))
    return found


def running_maxima(xp, x):
    """The running maximum of prefixes of several lengths by a loop of ``maximum`` over
    blocks of 16, the number of new records read."""
    found = []
    for n in (64, 160, 96, 240):
        best = x[:16]
        records = 0
        for start in range(16, n, 16):
            block = x[start:start + 16]
            records += int(xp.sum(xp.astype(block > xp.max(best), xp.int64)))
            best = xp.maximum(best, block)
        found.append(records)
    return found


def _bounds(rng, n, low, high):
    cuts = np.cumsum(rng.integers(low, high, n // low))
    return np.concatenate([[0], cuts[cuts < n]])


ELEVENTH = [
    ("eleventh: ewma_elements", ewma_elements, lambda rng: (rng.standard_normal(60),)),
    ("eleventh: bootstrap_means", bootstrap_means,
     lambda rng: (rng.standard_normal(300), rng.integers(0, 300, (40, 300)))),
    ("eleventh: nearest_neighbours", nearest_neighbours, lambda rng: (rng.uniform(size=(80, 2)),)),
    ("eleventh: polynomial_degrees", polynomial_degrees,
     lambda rng: (np.linspace(-1, 1, 90), np.cos(3 * np.linspace(-1, 1, 90)) + rng.standard_normal(90) * 0.05)),
    ("eleventh: valid_convolutions", valid_convolutions, lambda rng: (rng.standard_normal(400),)),
    ("eleventh: top_k_batches", top_k_batches, lambda rng: (rng.standard_normal(1000), _bounds(rng, 1000, 40, 130))),
    ("eleventh: gram_schmidt", gram_schmidt, lambda rng: (rng.standard_normal((40, 6)),)),
    ("eleventh: complex_bandpass", complex_bandpass,
     lambda rng: (np.sin(np.arange(1000) * 0.7) + rng.standard_normal(1000),)),
    ("eleventh: kmeans_assignments", kmeans_assignments, lambda rng: (rng.standard_normal((150, 2)),)),
    ("eleventh: digit_sums", digit_sums, lambda rng: (rng.integers(0, 10 ** 6, 200),)),
    ("eleventh: matrix_exponentials", matrix_exponentials, lambda rng: (rng.standard_normal((8, 8)),)),
    ("eleventh: membership", membership, lambda rng: (rng.integers(0, 50, 500), rng.integers(0, 50, 20))),
    ("eleventh: softmax_temperatures", softmax_temperatures, lambda rng: (rng.standard_normal((64, 10)),)),
    ("eleventh: running_maxima", running_maxima, lambda rng: (rng.standard_normal(240),)),
]
