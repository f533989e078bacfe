"""More eager scripts for ``benchmarks/eager.py``: the ``tenth:`` group.

A tenth batch, written on 2026-12-07 before anything was measured on it, as a NumPy user
writes such code, with ops the earlier batches use little: complex harmonics of points on
a circle, a tridiagonal system solved by the Thomas sweep element by element, bits of a
uint8 image counted plane by plane, Spearman correlations of batches by ranks
(``argsort`` of ``argsort``), powers of a Markov matrix by ``linalg.matrix_power``, the top
eigenvalue of RBF kernels of growing subsets (``eigvalsh``), logistic steps with the
gradient's norm clipped, a spectrogram of Hann-windowed frames (``rfft``, ``argmax``),
sums under ``tril`` and ``triu`` of growing matrices, column means that skip NaNs, a
2-d histogram by comparisons with every bin, least squares by ``qr`` and a triangular
``solve``, survival curves by ``cumulative_prod``, and fields on ``meshgrid`` grids of
growing size. Each entry is (name, script, inputs), as ``eager.Script`` takes them.
"""

from __future__ import annotations

import numpy as np


def circle_harmonics(xp, theta):
    """The magnitude of each harmonic of points on the unit circle, by complex powers."""
    z = xp.cos(theta) + 1j * xp.sin(theta)
    found = []
    power = xp.ones_like(z)
    for _ in range(1, 13):
        power = power * z
        found.append(float(xp.abs(xp.mean(power))))
    return found


def thomas_sweep(xp, lower, diagonal, upper, rhs):
    """A tridiagonal system solved by the Thomas algorithm, element by element."""
    n = diagonal.shape[0]
    c = xp.zeros(n)
    d = xp.zeros(n)
    c[0] = upper[0] / diagonal[0]
    d[0] = rhs[0] / diagonal[0]
    for i in range(1, n):
        m = diagonal[i] - lower[i] * c[i - 1]
        c[i] = upper[i] / m
        d[i] = (rhs[i] - lower[i] * d[i - 1]) / m
    x = xp.zeros(n)
    x[n - 1] = d[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = d[i] - c[i] * x[i + 1]
    return np.asarray(x)


def bit_planes(xp, image):
    """How many pixels of a uint8 image have each bit set, plane by plane."""
    found = []
    for k in range(8):
        plane = (image >> k) & 1
        found.append(int(xp.sum(xp.astype(plane, xp.int64))))
    return found


def rank_correlations(xp, x, y, bounds):
    """Spearman's correlation of each batch: the Pearson correlation of the ranks."""
    found = []
    for start, stop in np.asarray(bounds).tolist():
        rx = xp.astype(xp.argsort(xp.argsort(x[start:stop])), xp.float64)
        ry = xp.astype(xp.argsort(xp.argsort(y[start:stop])), xp.float64)
        rx = rx - xp.mean(rx)
        ry = ry - xp.mean(ry)
        found.append(float(xp.sum(rx * ry) / xp.sqrt(xp.sum(rx * rx) * xp.sum(ry * ry))))
    return found


def markov_powers(xp, weights):
    """Powers of a row-stochastic matrix by ``matrix_power``: the largest change of a
    row from the stationary one, for each power."""
    p = weights / xp.sum(weights, axis=1, keepdims=True)
    limit = xp.linalg.matrix_power(p, 64)[0]
    found = []
    for k in range(1, 20):
        found.append(float(xp.max(xp.abs(xp.linalg.matrix_power(p, k) - limit))))
    return found


def kernel_spectrum(xp, points):
    """The largest eigenvalue of the RBF kernel of each growing prefix of the points."""
    found = []
    for n in range(8, points.shape[0] + 1, 6):
        x = points[:n]
        d2 = xp.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=2)
        found.append(float(xp.linalg.eigvalsh(xp.exp(-0.5 * d2))[-1]))
    return found


def clipped_logistic(xp, features, labels):
    """Logistic regression by gradient steps whose gradient's norm is clipped to 1."""
    w = xp.zeros(features.shape[1])
    losses = []
    for _ in range(30):
        p = 1.0 / (1.0 + xp.exp(-(features @ w)))
        grad = features.T @ (p - labels) / features.shape[0]
        norm = float(xp.linalg.vector_norm(grad))
        if norm > 1.0:
            grad = grad / norm
        w = w - 0.5 * grad
        eps = 1e-12
        losses.append(float(-xp.mean(labels * xp.log(p + eps) + (1 - labels) * xp.log(1 - p + eps))))
    return losses


def spectrogram_peaks(xp, signal):
    """The peak frequency bin of each Hann-windowed frame, for frames of three lengths."""
    found = []
    for frame in (64, 100, 128):
        hop = frame // 2
        window = 0.5 - 0.5 * xp.cos(2 * np.pi * xp.arange(frame, dtype=xp.float64) / frame)
        frames = xp.stack([signal[s:s + frame] * window for s in range(0, signal.shape[0] - frame + 1, hop)])
        power = xp.abs(xp.fft.rfft(frames, axis=1)) ** 2
        found.extend(np.asarray(xp.argmax(power, axis=1)).tolist())
    return found


def triangle_sums(xp, a):
    """The sums below and above the diagonal of each leading block, offsets included."""
    found = []
    for n in range(3, a.shape[0] + 1, 2):
        block = a[:n, :n]
        found.append(float(xp.sum(xp.tril(block, k=-1)) - xp.sum(xp.triu(block, k=1))))
    return found


def nan_column_means(xp, x, bounds):
    """The column means of each batch, skipping NaNs, and how many were skipped."""
    found = []
    for start, stop in np.asarray(bounds).tolist():
        batch = x[start:stop]
        missing = xp.isnan(batch)
        kept = xp.sum(xp.astype(~missing, xp.float64), axis=0)
        means = xp.sum(xp.where(missing, 0.0, batch), axis=0) / xp.maximum(kept, 1.0)
        found.append(np.asarray(means).tolist() + [int(xp.count_nonzero(missing))])
    return found


def histogram_2d(xp, x, y):
    """A 2-d histogram of points in [0, 1)^2 on grids of several sizes, by comparing each
    point's bin with every bin, its fullest bin's count read."""
    found = []
    for bins in (4, 6, 9):
        i = xp.astype(xp.floor(x * bins), xp.int64)
        j = xp.astype(xp.floor(y * bins), xp.int64)
        cell = i * bins + j
        counts = xp.sum(xp.astype(cell[:, None] == xp.arange(bins * bins)[None, :], xp.int64), axis=0)
        found.append(int(xp.max(counts)))
    return found


def qr_least_squares(xp, a, b):
    """Least squares on growing row prefixes by QR and a solve with R, the residual read."""
    found = []
    for m in range(10, a.shape[0] + 1, 9):
        q, r = xp.linalg.qr(a[:m])
        coefficients = xp.linalg.solve(r, xp.matrix_transpose(q) @ b[:m])
        found.append(float(xp.linalg.vector_norm(a[:m] @ coefficients - b[:m])))
    return found


def survival_curves(xp, hazards, lengths):
    """Survival curves of cohorts of their own lengths by ``cumulative_prod``; the median
    survival time of each (the first step where survival falls below a half)."""
    found = []
    for n in np.asarray(lengths).tolist():
        survival = xp.cumulative_prod(1.0 - hazards[:n])
        below = survival < 0.5
        found.append(int(xp.argmax(xp.astype(below, xp.int8))) if bool(xp.any(below)) else -1)
    return found


def grid_fields(xp):
    """A field evaluated on meshgrids of growing size: its maximum and where it is."""
    found = []
    for n in range(5, 40, 4):
        t = xp.linspace(-2.0, 2.0, n)
        gx, gy = xp.meshgrid(t, t, indexing="ij")
        field = xp.exp(-(gx * gx + gy * gy)) * xp.cos(3 * gx) + 0.1 * gy
        flat = xp.reshape(field, (-1,))
        found.append((float(xp.max(flat)), int(xp.argmax(flat))))
    return found


def _bounds(rng, n: int, low: int, high: int) -> np.ndarray:
    """Consecutive batches of ``n`` rows, each of ``low`` to ``high`` rows."""
    stops = np.cumsum(rng.integers(low, high, n // low))
    stops = stops[stops < n]
    starts = np.concatenate([[0], stops[:-1]])
    return np.stack([starts, stops], axis=1)


def _tridiagonal(rng):
    n = 120
    return (rng.uniform(-1, 0, n), rng.uniform(3, 4, n), rng.uniform(-1, 0, n), rng.standard_normal(n))


def _with_nans(rng):
    x = rng.standard_normal((900, 5))
    x[rng.uniform(size=x.shape) < 0.1] = np.nan
    return x, _bounds(rng, 900, 40, 120)


TENTH = [
    ("tenth: circle_harmonics", circle_harmonics, lambda rng: (rng.uniform(0, 2 * np.pi, 400),)),
    ("tenth: thomas_sweep", thomas_sweep, _tridiagonal),
    ("tenth: bit_planes", bit_planes, lambda rng: (rng.integers(0, 256, (48, 64), dtype=np.uint8),)),
    ("tenth: rank_correlations", rank_correlations,
     lambda rng: (rng.standard_normal(1200), rng.standard_normal(1200), _bounds(rng, 1200, 30, 110))),
    ("tenth: markov_powers", markov_powers, lambda rng: (rng.uniform(0.1, 1.0, (6, 6)),)),
    ("tenth: kernel_spectrum", kernel_spectrum, lambda rng: (rng.standard_normal((56, 3)),)),
    ("tenth: clipped_logistic", clipped_logistic,
     lambda rng: (rng.standard_normal((300, 6)) * 3.0, (rng.uniform(size=300) < 0.4).astype(np.float64))),
    ("tenth: spectrogram_peaks", spectrogram_peaks,
     lambda rng: (np.sin(np.arange(2000) * 0.3) + rng.standard_normal(2000) * 0.5,)),
    ("tenth: triangle_sums", triangle_sums, lambda rng: (rng.standard_normal((30, 30)),)),
    ("tenth: nan_column_means", nan_column_means, _with_nans),
    ("tenth: histogram_2d", histogram_2d, lambda rng: (rng.uniform(size=800), rng.uniform(size=800) ** 2)),
    ("tenth: qr_least_squares", qr_least_squares,
     lambda rng: (rng.standard_normal((100, 4)), rng.standard_normal(100))),
    ("tenth: survival_curves", survival_curves,
     lambda rng: (rng.uniform(0.0, 0.08, 200), rng.integers(20, 200, 15))),
    ("tenth: grid_fields", grid_fields, lambda rng: ()),
]
