"""More eager scripts for ``benchmarks/eager.py``: the ``idioms:`` group.

Written after the other groups, and never tuned against, to check that what those groups
measure holds for NumPy-style code that plaidarray was not shaped by: Newton's method for a
logistic model, a drawdown over chunks, a bubble pass of element swaps, per-batch
standardisation, cosine top-k, bouncing particles, polynomial fits of growing windows,
cumulative statistics, a masked halving loop, nearest neighbours by rows, small
eigenvalue and determinant problems, a list grown and stacked, mini-batch SGD through
index arrays, per-group means, Gram-Schmidt by columns, a Jacobi stencil with its border
rebuilt by joins, annealing by rows of noise, pairwise ranks, a growing Cholesky, a Python
accumulation over elements, Horner's rule, a Taylor series of a matrix exponential, a
``where`` chain and rows normalised in place. Each entry is (name, script, inputs), as
``eager.Script`` takes them; item assignment is NumPy's, so JAX's runs of those fail, as
the ``loops:`` group's do.
"""

from __future__ import annotations

import math

import numpy as np


def logistic_newton(xp, X, y):
    """Newton's method for logistic regression: a 6x6 Hessian solved per step, the
    gradient's norm read."""
    w = xp.zeros(X.shape[1])
    for _ in range(8):
        p = 1.0 / (1.0 + xp.exp(-(X @ w)))
        g = X.T @ (p - y)
        H = (X.T * (p * (1 - p))) @ X + 1e-6 * xp.eye(X.shape[1])
        w = w - xp.linalg.solve(H, g)
        if float(xp.linalg.vector_norm(g)) < 1e-10:
            break
    return np.asarray(w)


def running_max_drawdown(xp, prices):
    """The worst drawdown of a price series, read chunk by chunk (a max and a min a chunk)."""
    peak, worst = -math.inf, 0.0
    for i in range(0, prices.shape[0], 10):
        chunk = prices[i:i + 10]
        peak = max(peak, float(xp.max(chunk)))
        worst = max(worst, peak - float(xp.min(chunk)))
    return worst


def bubble_pass(xp, v):
    """One bubble-sort pass: each neighbouring pair compared as floats, swapped by element stores."""
    v = xp.asarray(v, copy=True)
    for i in range(v.shape[0] - 1):
        if float(v[i]) > float(v[i + 1]):
            a = float(v[i])
            v[i] = v[i + 1]
            v[i + 1] = a
    return np.asarray(v)


def batch_norms(xp, data, sizes):
    """Batches of random sizes standardised by their column means and deviations, each read."""
    out, start = [], 0
    for s in sizes:
        b = data[start:start + int(s)]
        start += int(s)
        out.append(float(xp.sum((b - xp.mean(b, axis=0)) / (xp.std(b, axis=0) + 1e-8))))
    return out


def cosine_topk(xp, q, db):
    """The three nearest rows by cosine similarity for each query, by ``argsort``."""
    dbn = db / xp.linalg.vector_norm(db, axis=1, keepdims=True)
    found = []
    for i in range(q.shape[0]):
        s = dbn @ (q[i] / xp.linalg.vector_norm(q[i]))
        found.append(np.asarray(xp.argsort(-s)[:3]).tolist())
    return found


def particle_bounce(xp, pos, vel):
    """Particles stepped in a unit box, reflected at its walls by ``where``, the energy read."""
    e = 0.0
    for _ in range(40):
        pos = pos + 0.05 * vel
        vel = xp.where((pos < 0) | (pos > 1), -vel, vel)
        pos = xp.clip(pos, 0.0, 1.0)
        e = float(xp.sum(vel * vel))
    return e, np.asarray(pos)


def poly_fit_windows(xp, t, y):
    """A quadratic fitted to growing prefixes by the normal equations (a stack of columns, a 3x3 solve)."""
    coefs = []
    for n in range(10, 60, 3):
        A = xp.stack([xp.ones(n), t[:n], t[:n] ** 2], axis=1)
        coefs.append(float(xp.linalg.solve(A.T @ A, A.T @ y[:n])[2]))
    return coefs


def cumulative_stats(xp, x):
    """A running mean, a median by ``sort`` and a count above it."""
    m = xp.cumulative_sum(x) / xp.arange(1, x.shape[0] + 1, dtype=x.dtype)
    median = float(xp.sort(x)[x.shape[0] // 2])
    return float(m[-1]), median, int(xp.count_nonzero(x > median))


def masked_update_loop(xp, x):
    """Values above a falling threshold halved through their mask, the mask's count read."""
    x = xp.asarray(x, copy=True)
    for k in range(30):
        mask = x > (0.9 - 0.02 * k)
        x[mask] = x[mask] * 0.5
        if int(xp.sum(mask)) == 0:
            break
    return np.asarray(x)


def distance_matrix_rows(xp, pts):
    """Each point's nearest other point: a row of squared distances, its own set to inf, ``argmin`` read."""
    nearest = []
    for i in range(pts.shape[0]):
        d = xp.sum((pts - pts[i]) ** 2, axis=1)
        d[i] = xp.inf
        nearest.append(int(xp.argmin(d)))
    return nearest


def small_spectra(xp, a):
    """The largest eigenvalue of a symmetric part and the determinant of leading blocks of 2..8."""
    values = []
    for k in range(2, 9):
        m = a[:k, :k]
        values.append(float(xp.linalg.eigvalsh(m + m.T)[-1]))
        values.append(float(xp.linalg.det(m)))
    return values


def list_growth(xp, seed):
    """A state appended to a list at each step, the last ten stacked and their mean read every tenth."""
    states, v, means = [], seed, []
    for i in range(60):
        v = xp.tanh(v * 1.1 + 0.01 * i)
        states.append(v)
        if i % 10 == 9:
            means.append(float(xp.mean(xp.stack(states[-10:]))))
    return means, np.asarray(xp.stack(states))


def sgd_minibatch(xp, X, y, order):
    """Least-squares SGD over mini-batches gathered by index arrays, each batch's loss read."""
    w, losses = xp.zeros(X.shape[1]), []
    for s in range(0, 600, 32):
        idx = order[s:s + 32]
        xb, yb = X[idx], y[idx]
        r = xb @ w - yb
        w = w - 0.01 * (xb.T @ r) / xb.shape[0]
        losses.append(float(xp.mean(r * r)))
    return losses


def group_means(xp, x, labels):
    """The mean of each of twelve groups, selected by a mask of its label."""
    means = []
    for g in range(12):
        selected = x[labels == g]
        means.append(float(xp.mean(selected)) if selected.shape[0] else 0.0)
    return means


def gram_schmidt(xp, a):
    """Classical Gram-Schmidt by columns: projections by ``vecdot``, each column stored."""
    q = xp.zeros(a.shape)
    for j in range(a.shape[1]):
        v = a[:, j]
        for i in range(j):
            v = v - xp.vecdot(q[:, i], a[:, j]) * q[:, i]
        q[:, j] = v / xp.linalg.vector_norm(v)
    return np.asarray(q)


def stencil_steps(xp, u):
    """Jacobi steps of a 5-point stencil, the zero border joined back on each side."""
    for _ in range(25):
        u = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        u = xp.concat([xp.zeros((1, u.shape[1])), u, xp.zeros((1, u.shape[1]))], axis=0)
        u = xp.concat([xp.zeros((u.shape[0], 1)), u, xp.zeros((u.shape[0], 1))], axis=1)
    return float(xp.sum(u))


def annealing(xp, x0, noise):
    """A greedy annealing walk: a row of noise added at each step, the candidate's energy read."""
    x = x0
    e = float(xp.sum(x * x) + xp.sum(xp.sin(3 * x)))
    for k in range(noise.shape[0]):
        candidate = x + noise[k]
        ec = float(xp.sum(candidate * candidate) + xp.sum(xp.sin(3 * candidate)))
        if ec < e:
            x, e = candidate, ec
    return e


def pairwise_rank(xp, p):
    """All pairwise squared distances by broadcasting, each row's three nearest by ``argsort``."""
    d = xp.sum((p[:, None, :] - p[None, :, :]) ** 2, axis=-1)
    return np.asarray(xp.argsort(d, axis=1)[:, 1:4])


def growing_cholesky(xp, a):
    """Cholesky factors of growing leading blocks made positive definite, their traces read."""
    traces = []
    for n in range(3, 30, 2):
        m = a[:n, :n] @ a[:n, :n].T + n * xp.eye(n)
        traces.append(float(xp.sum(xp.linalg.diagonal(xp.linalg.cholesky(m)))))
    return traces


def python_accumulate(xp, x):
    """A Python loop over elements: ``for v in x[:400]``, each read as a float."""
    total, big = 0.0, 0
    for v in x[:400]:
        f = float(v)
        total += f
        big += f > 0.5
    return total, big


def horner(xp, x, coefs):
    """A polynomial evaluated by Horner's rule over Python floats, its largest magnitude read."""
    y = xp.zeros_like(x)
    for c in coefs:
        y = y * x + float(c)
    return float(xp.max(xp.abs(y)))


def taylor_expm(xp, a):
    """A 6x6 matrix exponential by its Taylor series, stopped when a term's largest entry is tiny."""
    term = xp.eye(a.shape[0])
    total = term
    for k in range(1, 30):
        term = term @ a / k
        total = total + term
        if float(xp.max(xp.abs(term))) < 1e-14:
            break
    return np.asarray(total)


def where_chain(xp, x):
    """The mean excess over each of 30 thresholds: ``where``, a sum and a count read."""
    means = []
    for t in np.linspace(-1, 1, 30).tolist():
        y = xp.where(x > t, x - t, 0.0)
        means.append(float(xp.sum(y)) / float(xp.count_nonzero(y)))
    return means


def normalize_rows_loop(xp, m):
    """Each row divided by its norm in place, one row a step."""
    m = xp.asarray(m, copy=True)
    for i in range(m.shape[0]):
        m[i, :] = m[i, :] / float(xp.linalg.vector_norm(m[i, :]))
    return np.asarray(m)


#: (name, script, inputs) of each script, as ``eager.Script`` takes them.
IDIOMS = [
    ("idioms: logistic_newton", logistic_newton,
     lambda rng: (rng.standard_normal((400, 6)), (rng.random(400) > 0.5).astype(float))),
    ("idioms: running_max_drawdown", running_max_drawdown, lambda rng: (np.cumsum(rng.standard_normal(2000)),)),
    ("idioms: bubble_pass", bubble_pass, lambda rng: (rng.random(300),)),
    ("idioms: batch_norms", batch_norms, lambda rng: (rng.standard_normal((3000, 5)), rng.integers(20, 80, 30))),
    ("idioms: cosine_topk", cosine_topk, lambda rng: (rng.standard_normal((20, 16)), rng.standard_normal((500, 16)))),
    ("idioms: particle_bounce", particle_bounce, lambda rng: (rng.random((200, 2)), rng.standard_normal((200, 2)))),
    ("idioms: poly_fit_windows", poly_fit_windows, lambda rng: (np.linspace(0, 1, 60), rng.standard_normal(60))),
    ("idioms: cumulative_stats", cumulative_stats, lambda rng: (rng.random(5000),)),
    ("idioms: masked_update_loop", masked_update_loop, lambda rng: (rng.random(1000),)),
    ("idioms: distance_matrix_rows", distance_matrix_rows, lambda rng: (rng.random((150, 3)),)),
    ("idioms: small_spectra", small_spectra, lambda rng: (rng.standard_normal((8, 8)),)),
    ("idioms: list_growth", list_growth, lambda rng: (rng.standard_normal(50),)),
    ("idioms: sgd_minibatch", sgd_minibatch,
     lambda rng: (rng.standard_normal((600, 8)), rng.standard_normal(600), rng.permutation(600))),
    ("idioms: group_means", group_means, lambda rng: (rng.standard_normal(3000), rng.integers(0, 12, 3000))),
    ("idioms: gram_schmidt", gram_schmidt, lambda rng: (rng.standard_normal((20, 8)),)),
    ("idioms: stencil_steps", stencil_steps, lambda rng: (rng.random((40, 40)),)),
    ("idioms: annealing", annealing, lambda rng: (rng.standard_normal(50), 0.1 * rng.standard_normal((60, 50)))),
    ("idioms: pairwise_rank", pairwise_rank, lambda rng: (rng.random((120, 3)),)),
    ("idioms: growing_cholesky", growing_cholesky, lambda rng: (rng.standard_normal((30, 30)),)),
    ("idioms: python_accumulate", python_accumulate, lambda rng: (rng.random(1000),)),
    ("idioms: horner", horner, lambda rng: (rng.standard_normal(2000), rng.standard_normal(12))),
    ("idioms: taylor_expm", taylor_expm, lambda rng: (0.3 * rng.standard_normal((6, 6)),)),
    ("idioms: where_chain", where_chain, lambda rng: (rng.standard_normal(5000),)),
    ("idioms: normalize_rows_loop", normalize_rows_loop, lambda rng: (rng.standard_normal((200, 16)),)),
]
