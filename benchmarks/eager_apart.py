"""More eager scripts for ``benchmarks/eager.py``: the ``apart:`` group.

A second batch written apart from the tuned groups, as a NumPy user would write the chores
of a script: outliers clipped through masks at bounds read each step, a ring buffer kept
by joining a window of itself with the newest value, rows sorted by a column through row
swaps keyed ``m[i, :]``, the best rows of each batch picked by ``argsort`` and stacked, label
counts of sliding windows by ``unique_counts``, Sherman-Morrison updates of an inverse
with its trace read, the running position of a prefix's maximum, and the closest pair of
a growing point set from its distance matrix. Each entry is (name, script, inputs), as
``eager.Script`` takes them; item assignment is NumPy's, so JAX's runs of those fail, as
the ``loops:`` group's do.
"""

from __future__ import annotations

import numpy as np


def clip_outliers(xp, x):
    """Values beyond two deviations of the mean clipped to those bounds, step after step."""
    x = xp.asarray(x, copy=True)
    for _ in range(15):
        mean, spread = float(xp.mean(x)), float(xp.std(x))
        lo, hi = mean - 2.0 * spread, mean + 2.0 * spread
        x[x < lo] = lo
        x[x > hi] = hi
    return np.asarray(x)


def ring_buffer(xp, stream):
    """A fixed-length buffer of the latest values, shifted by a join; its mean read every tenth."""
    buf = xp.zeros(32)
    means = []
    for i in range(stream.shape[0]):
        buf = xp.concat([buf[1:], stream[i:i + 1]])
        if i % 10 == 9:
            means.append(float(xp.mean(buf)))
    return means


def row_swap_sort(xp, m):
    """Rows sorted by their first column by selection: the smallest left is found, its row
    swapped in through a copy, both rows keyed with a whole-axis slice."""
    m = xp.asarray(m, copy=True)
    for i in range(m.shape[0] - 1):
        j = i + int(xp.argmin(m[i:, 0]))
        if j != i:
            kept = xp.asarray(m[i, :], copy=True)
            m[i, :] = m[j, :]
            m[j, :] = kept
    return np.asarray(m)


def top_rows(xp, scores, feats):
    """Each batch's three best-scored rows stacked, their total read."""
    totals = []
    for start in range(0, scores.shape[0], 40):
        s, f = scores[start:start + 40], feats[start:start + 40]
        order = xp.argsort(-s)
        best = xp.stack([f[int(order[k]), :] for k in range(3)])
        totals.append(float(xp.sum(best)))
    return totals


def label_counts(xp, labels):
    """The most frequent label's count in each window of 50 labels, by ``unique_counts``."""
    most = []
    for start in range(0, labels.shape[0] - 50, 25):
        counts = xp.unique_counts(labels[start:start + 50]).counts
        most.append(int(xp.max(counts)))
    return most


def sherman_morrison(xp, vs):
    """An inverse updated by rank-one terms (Sherman-Morrison), its trace read at each."""
    n = vs.shape[1]
    p = xp.eye(n)
    traces = []
    for k in range(vs.shape[0]):
        v = vs[k]
        pv = p @ v
        p = p - (pv[:, None] * pv[None, :]) / (1.0 + float(v @ pv))
        traces.append(float(xp.linalg.trace(p)))
    return traces


def prefix_argmax(xp, x):
    """Where the maximum of each growing prefix is, read as an int."""
    return [int(xp.argmax(x[:k])) for k in range(5, x.shape[0], 7)]


def closest_pair(xp, pts):
    """The closest pair's distance of a growing point set, from its distance matrix with
    the diagonal set apart."""
    found = []
    for n in range(10, pts.shape[0], 6):
        p = pts[:n]
        sq = xp.sum(p * p, axis=1)
        d = sq[:, None] + sq[None, :] - 2.0 * (p @ p.T)
        d = d + xp.eye(n) * 1e9
        found.append(float(xp.min(d)))
    return found


#: (name, script, inputs) of each script, as ``eager.Script`` takes them.
APART = [
    ("apart: clip_outliers", clip_outliers, lambda rng: (rng.standard_normal(3000),)),
    ("apart: ring_buffer", ring_buffer, lambda rng: (rng.standard_normal(200),)),
    ("apart: row_swap_sort", row_swap_sort, lambda rng: (rng.standard_normal((40, 5)),)),
    ("apart: top_rows", top_rows, lambda rng: (rng.random(400), rng.standard_normal((400, 6)))),
    ("apart: label_counts", label_counts, lambda rng: (rng.integers(0, 8, 800),)),
    ("apart: sherman_morrison", sherman_morrison, lambda rng: (0.3 * rng.standard_normal((30, 6)),)),
    ("apart: prefix_argmax", prefix_argmax, lambda rng: (rng.standard_normal(400),)),
    ("apart: closest_pair", closest_pair, lambda rng: (rng.random((70, 2)),)),
]
