"""More eager scripts for ``benchmarks/eager.py``: the ``later:`` group.

A third batch written apart from the tuned groups and from each other, of kinds the earlier
ones leave out: a cellular automaton stepped by ``roll``, a dense shortest-path search that
reads the next vertex as an int, conjugate gradients stopped by a residual read each step,
integrals over ``linspace`` grids of growing size, column means that skip NaNs, a running
median of small sorted windows, linear interpolation by ``searchsorted`` and ``take``, a
complex phase rotation read as a Python complex, a function's maximum on ``meshgrid`` grids
of growing resolution, and peaks found by ``diff`` and counted by ``nonzero``. Each entry is
(name, script, inputs), as ``eager.Script`` takes them; item assignment is NumPy's, so JAX's
runs of the scripts that store fail, as the ``loops:`` group's do.
"""

from __future__ import annotations

import numpy as np


def life_steps(xp, grid):
    """Conway's game of life on a torus, neighbours summed from eight rolls; the live count
    read each step."""
    g = xp.asarray(grid, dtype=xp.int8)
    alive = []
    for _ in range(12):
        n = sum(xp.roll(g, (dy, dx), axis=(0, 1))
                for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))
        g = xp.astype((n == 3) | ((g == 1) & (n == 2)), xp.int8)
        alive.append(int(xp.sum(g)))
    return alive


def dense_dijkstra(xp, w):
    """Shortest distances from vertex 0 of a dense graph: the nearest unvisited vertex read
    as an int, its row relaxing the rest."""
    n = w.shape[0]
    dist = xp.full(n, xp.inf)
    dist[0] = 0.0
    visited = xp.zeros(n, dtype=xp.bool)
    for _ in range(n):
        u = int(xp.argmin(xp.where(visited, xp.inf, dist)))
        visited[u] = True
        dist = xp.minimum(dist, dist[u] + w[u, :])
    return np.asarray(dist)


def conjugate_gradient(xp, a, b):
    """Conjugate gradients on a symmetric positive definite system, stopped by the residual
    norm read each iteration."""
    x = xp.zeros_like(b)
    r = b - a @ x
    p = r
    rr = float(r @ r)
    steps = 0
    while rr > 1e-20 and steps < 200:
        ap = a @ p
        alpha = rr / float(p @ ap)
        x = x + alpha * p
        r = r - alpha * ap
        new = float(r @ r)
        p = r + (new / rr) * p
        rr = new
        steps += 1
    return np.asarray(x)


def grid_integrals(xp, coef):
    """A polynomial's integral by the trapezoid rule on ``linspace`` grids of growing size."""
    out = []
    for n in range(20, 400, 19):
        t = xp.linspace(0.0, 2.0, n)
        f = coef[0] + coef[1] * t + coef[2] * t * t + xp.sin(coef[3] * t)
        h = 2.0 / (n - 1)
        out.append(float(h * (xp.sum(f) - 0.5 * (f[0] + f[-1]))))
    return out


def nan_column_means(xp, x):
    """Each column's mean over its non-NaN entries, a column at a time, and the count kept."""
    means = []
    for j in range(x.shape[1]):
        col = x[:, j]
        ok = ~xp.isnan(col)
        count = int(xp.sum(ok))
        means.append(float(xp.sum(xp.where(ok, col, 0.0))) / count)
    return means


def running_median(xp, x):
    """The median of each window of five, from its sorted copy's middle element."""
    return [float(xp.sort(x[i:i + 5])[2]) for i in range(x.shape[0] - 4)]


def interp_resample(xp, t, y):
    """A signal resampled onto grids of changing size by linear interpolation between the
    samples ``searchsorted`` finds."""
    sums = []
    for n in range(30, 300, 27):
        q = xp.linspace(float(t[0]), float(t[-1]), n)
        hi = xp.clip(xp.searchsorted(t, q), 1, t.shape[0] - 1)
        lo = hi - 1
        t0, t1 = xp.take(t, lo), xp.take(t, hi)
        y0, y1 = xp.take(y, lo), xp.take(y, hi)
        v = y0 + (y1 - y0) * (q - t0) / (t1 - t0)
        sums.append(float(xp.sum(v)))
    return sums


def phase_rotation(xp, z):
    """Complex samples rotated by a phase step, damped, their first value read as complex."""
    seen = []
    step = xp.exp(1j * xp.linspace(0.0, 0.5, z.shape[0]))
    for _ in range(25):
        z = z * step * 0.99
        first = complex(z[0])
        seen += [first.real, first.imag, float(xp.max(xp.abs(z)))]
    return seen


def grid_maxima(xp, c):
    """A function's maximum over ``meshgrid`` grids of growing resolution, and where it is."""
    found = []
    for n in range(8, 90, 9):
        xs = xp.linspace(-2.0, 2.0, n)
        gx, gy = xp.meshgrid(xs, xs, indexing="ij")
        f = xp.exp(-(gx - c[0]) ** 2 - (gy - c[1]) ** 2) + 0.1 * gx * gy
        k = int(xp.argmax(f))
        found.append((float(xp.max(f)), k))
    return found


def peak_counts(xp, x):
    """Local maxima of each window found where the slope changes sign; their count read and
    the highest peak's position."""
    found = []
    for start in range(0, x.shape[0] - 60, 30):
        w = x[start:start + 60]
        d = xp.diff(w)
        peaks = xp.nonzero((d[:-1] > 0) & (d[1:] <= 0))[0] + 1
        found.append(int(peaks.shape[0]))
        if peaks.shape[0]:
            found.append(int(peaks[xp.argmax(xp.take(w, peaks))]))
    return found


def _spd(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    m = rng.standard_normal((60, 60))
    return m @ m.T + 60.0 * np.eye(60), rng.standard_normal(60)


def _signal(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    t = np.sort(rng.uniform(0.0, 10.0, 200))
    return t, np.sin(t) + 0.1 * rng.standard_normal(200)


def _with_nans(rng: np.random.Generator) -> tuple[np.ndarray]:
    x = rng.standard_normal((300, 12))
    x[rng.random((300, 12)) < 0.1] = np.nan
    return (x,)


#: (name, script, inputs) of each script, as ``eager.Script`` takes them.
LATER = [
    ("later: life_steps", life_steps, lambda rng: (rng.random((40, 40)) < 0.3,)),
    ("later: dense_dijkstra", dense_dijkstra, lambda rng: (rng.uniform(1.0, 10.0, (40, 40)),)),
    ("later: conjugate_gradient", conjugate_gradient, _spd),
    ("later: grid_integrals", grid_integrals, lambda rng: (rng.standard_normal(4),)),
    ("later: nan_column_means", nan_column_means, _with_nans),
    ("later: running_median", running_median, lambda rng: (rng.standard_normal(120),)),
    ("later: interp_resample", interp_resample, _signal),
    ("later: phase_rotation", phase_rotation,
     lambda rng: (rng.standard_normal(64) + 1j * rng.standard_normal(64),)),
    ("later: grid_maxima", grid_maxima, lambda rng: (rng.uniform(-1.0, 1.0, 2),)),
    ("later: peak_counts", peak_counts, lambda rng: (rng.standard_normal(600).cumsum(),)),
]
