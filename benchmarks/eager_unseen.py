"""More eager scripts for ``benchmarks/eager.py``: the ``unseen:`` group.

A fifth batch written apart from the tuned groups and from each other, of kinds the
earlier ones leave out: Gauss-Seidel sweeps written as element stores from row slices of
changing length, a linear congruential generator's integer state stepped with bitwise
operations, inverses and determinants of batches of 3x3 matrices of varying batch size,
each signal's dominant frequency through ``fftshift``/``fftfreq``, a 2-D array zeroed
below a threshold read each step by a masked store, neighbourhoods gathered by integer
index arrays of varying length, compounded returns by ``cumulative_prod`` over growing
prefixes, runs expanded by ``repeat`` with counts and ``tile``, a float32 signal quantised
through integer casts, least squares by ``pinv`` with the condition number from
``svdvals``, weighted window sums by ``vecdot``, and a Laplace grid relaxed by Jacobi
steps until ``all`` says it has settled. Each entry is (name, script, inputs), as
``eager.Script`` takes them; item assignment is NumPy's, so JAX's runs of the scripts that
store fail, as the ``loops:`` group's do.
"""

from __future__ import annotations

import numpy as np


def gauss_seidel(xp, a, b):
    """Gauss-Seidel sweeps over a diagonally dominant system, each unknown stored from the
    row's slices before and after it (one of them empty at each end), stopped when the
    residual's norm read after a sweep is small."""
    n = a.shape[0]
    x = xp.zeros(n, dtype=xp.float64)
    sweeps = 0
    while sweeps < 40:
        for i in range(n):
            x[i] = (b[i] - a[i, :i] @ x[:i] - a[i, i + 1:] @ x[i + 1:]) / a[i, i]
        sweeps += 1
        if float(xp.linalg.vector_norm(a @ x - b)) < 1e-10:
            break
    return sweeps, np.asarray(x)


def lcg_bits(xp, seeds):
    """A linear congruential generator stepped on a batch of integer states with masks and
    shifts, each step's largest bucket and count of odd states read."""
    state = xp.asarray(seeds, dtype=xp.int64)
    largest, odd = [], []
    for _ in range(40):
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        bucket = (state >> 16) % 32
        largest.append(int(xp.max(bucket)))
        odd.append(int(xp.sum(state & 1)))
    return largest, odd


def batched_inverse(xp, mats, sizes):
    """Inverses and determinants of batches of 3x3 matrices, batches of varying size cut
    from one stack, each batch's worst residual and its determinants' sum read."""
    eye = xp.eye(3)
    worst, dets = [], []
    start = 0
    for size in [int(s) for s in sizes]:
        batch = mats[start:start + size]
        start += size
        inverse = xp.linalg.inv(batch)
        worst.append(float(xp.max(xp.abs(batch @ inverse - eye))))
        dets.append(float(xp.sum(xp.linalg.det(batch))))
    return np.asarray(worst) < 1e-9, dets


def dominant_frequency(xp, *signals):
    """Each signal's strongest frequency (cycles per sample) from its centred spectrum."""
    found = []
    for s in signals:
        x = xp.asarray(s)
        n = x.shape[0]
        spectrum = xp.fft.fftshift(xp.abs(xp.fft.fft(x - xp.mean(x))))
        freqs = xp.fft.fftshift(xp.fft.fftfreq(n, d=1.0))
        found.append(float(xp.abs(freqs[int(xp.argmax(spectrum))])))
    return found


def threshold_zeroing(xp, image):
    """Values below a threshold zeroed by a masked store, the threshold the mean of the
    remaining positive values read each step, the survivors counted."""
    image = xp.asarray(image, copy=True)
    counts = []
    for _ in range(25):
        positive = image > 0
        threshold = 0.3 * float(xp.sum(xp.where(positive, image, 0.0))) / max(int(xp.count_nonzero(positive)), 1)
        image[image < threshold] = 0.0
        counts.append(int(xp.count_nonzero(image)))
    return counts, np.asarray(image)


def gathered_neighbours(xp, points, picks, lengths):
    """For each query, the points at a list of indices of varying length gathered by an
    integer array, their centroid and the largest distance to it read."""
    spread = []
    start = 0
    for k in [int(v) for v in lengths]:
        idx = picks[start:start + k]
        start += k
        near = points[idx]
        centre = xp.mean(near, axis=0)
        spread.append(float(xp.max(xp.sqrt(xp.sum((near - centre) ** 2, axis=1)))))
    return spread


def compounded_returns(xp, r):
    """Growth of one unit over growing prefixes of returns by ``cumulative_prod``, its final
    value and its largest drop from the start read; the increments by ``diff``."""
    finals, lows = [], []
    for k in range(20, r.shape[0] + 1, 15):
        growth = xp.cumulative_prod(1.0 + r[:k])
        finals.append(float(growth[-1]))
        lows.append(float(xp.min(xp.diff(growth, prepend=1.0))))
    return finals, lows


def repeated_runs(xp, values, counts):
    """Runs of values expanded by ``repeat`` with per-value counts and by ``tile``, for
    growing prefixes, their sums and lengths read."""
    sums = []
    for k in range(3, values.shape[0] + 1, 2):
        expanded = xp.repeat(values[:k], counts[:k])
        tiled = xp.tile(values[:k], (3,))
        sums.append((float(xp.sum(expanded)), int(expanded.shape[0]), float(xp.sum(tiled * tiled))))
    return sums


def quantised_signal(xp, x):
    """A float32 signal quantised to 8 bits at several scales (round, clip, cast to int32
    and back), its float64 error read at each scale."""
    errors = []
    for scale in (4.0, 8.0, 16.0, 32.0, 64.0, 127.0):
        q = xp.astype(xp.clip(xp.round(x * scale), -128, 127), xp.int32)
        back = xp.astype(q, xp.float32) / scale
        errors.append(float(xp.mean(xp.astype((back - x) ** 2, xp.float64))))
    return errors


def pinv_refits(xp, design, y):
    """Least squares by ``pinv`` on growing prefixes of a design matrix, each fit's residual
    norm and the design's condition number (``svdvals``) read."""
    residuals, conditions = [], []
    for m in range(12, design.shape[0] + 1, 8):
        a, t = design[:m], y[:m]
        w = xp.linalg.pinv(a) @ t
        residuals.append(float(xp.linalg.vector_norm(a @ w - t)))
        s = xp.linalg.svdvals(a)
        conditions.append(float(s[0] / s[-1]))
    return residuals, conditions


def weighted_windows(xp, x, widths):
    """Weighted sums of every window of several widths (a triangle of weights), by
    ``vecdot`` of a stack of the windows with the weights; each width's largest read."""
    best = []
    for width in [int(w) for w in widths]:
        weights = 1.0 - xp.abs(xp.linspace(-1.0, 1.0, width))
        windows = xp.stack([x[i:i + width] for i in range(0, x.shape[0] - width + 1, width // 2)])
        best.append(float(xp.max(xp.vecdot(windows, weights))))
    return best


def jacobi_laplace(xp, edge):
    """A square grid's interior relaxed by Jacobi steps (the mean of four neighbours) with a
    fixed boundary, until ``all`` of the change read each step is small."""
    n = edge.shape[0]
    grid = xp.zeros((n, n))
    grid[0, :] = edge
    steps = 0
    while steps < 400:
        inner = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:])
        change = xp.abs(inner - grid[1:-1, 1:-1])
        grid[1:-1, 1:-1] = inner
        steps += 1
        if bool(xp.all(change < 1e-4)):
            break
    return steps, np.asarray(grid)


def _system(rng):
    a = rng.standard_normal((12, 12))
    return a + np.diag(np.abs(a).sum(axis=1) + 1.0), rng.standard_normal(12)


def _batches(rng):
    sizes = np.array([5, 17, 9, 33, 2, 12, 21, 7])
    return rng.standard_normal((int(sizes.sum()), 3, 3)) + 3.0 * np.eye(3), sizes


def _signals(rng):
    return tuple(np.sin(2 * np.pi * f * np.arange(n)) + 0.3 * rng.standard_normal(n)
                 for f, n in ((0.05, 96), (0.11, 130), (0.2, 77), (0.31, 200), (0.07, 151), (0.4, 64)))


def _neighbourhoods(rng):
    lengths = rng.integers(3, 40, 30)
    return rng.standard_normal((500, 3)), rng.integers(0, 500, int(lengths.sum())), lengths


UNSEEN = [
    ("unseen: gauss_seidel", gauss_seidel, _system),
    ("unseen: lcg_bits", lcg_bits, lambda rng: (rng.integers(0, 2**31 - 1, 200),)),
    ("unseen: batched_inverse", batched_inverse, _batches),
    ("unseen: dominant_frequency", dominant_frequency, _signals),
    ("unseen: threshold_zeroing", threshold_zeroing, lambda rng: (rng.standard_normal((60, 80)),)),
    ("unseen: gathered_neighbours", gathered_neighbours, _neighbourhoods),
    ("unseen: compounded_returns", compounded_returns, lambda rng: (rng.normal(0.001, 0.02, 260),)),
    ("unseen: repeated_runs", repeated_runs, lambda rng: (rng.standard_normal(30), rng.integers(0, 5, 30))),
    ("unseen: quantised_signal", quantised_signal,
     lambda rng: (np.clip(rng.standard_normal(2000), -1.0, 1.0).astype(np.float32),)),
    ("unseen: pinv_refits", pinv_refits, lambda rng: (rng.standard_normal((100, 4)), rng.standard_normal(100))),
    ("unseen: weighted_windows", weighted_windows,
     lambda rng: (rng.standard_normal(600), np.array([8, 13, 21, 34, 55]))),
    ("unseen: jacobi_laplace", jacobi_laplace, lambda rng: (np.sin(np.linspace(0.0, np.pi, 24)),)),
]
