"""What recording one op costs, per op family, against NumPy's whole op on the same arrays.

    python -m benchmarks.recording [--rounds 7] [--only SUBSTRING]

Each row times one statement with ``timeit`` on small float64 arrays: ``a`` of 4 x 4,
``v`` of 4, ``u`` of 1 x 4, ``x`` of 1000 x 4, a boolean mask ``m``; windows of float64,
int64 and boolean arrays for the "new sizes" rows. plaidarray records
the op and nothing reads the result (the arrays are ready, so each statement records a
graph of its own, which is dropped); NumPy computes it. A statement repeated with the
same arguments replays what its first calls recorded (``api/recipes.py``); the rows with
``x[next(rows)]`` ask for a new row each time, as a loop over rows does, and the "new
sizes" rows a window, block or length of a size not met just before (a cycle of 2000-4000
sizes), as a loop over windows or a growing array does: no recipe serves them. Assignments,
``linalg.cholesky`` and a boolean mask's selection compute at the call (an assignment runs
at once; cholesky raises for a matrix that is not positive definite; a selection's length
is its mask's count), so their rows include a run. Every row is timed
once per round, an automatically sized loop, so a noisy moment of a shared machine falls
on all rows alike; the best of ``--rounds`` is shown, in microseconds per statement.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

import plaidarray as xp

SETUP = """
import itertools
import numpy as np
import plaidarray as xp
na = np.ones((4, 4)) + np.eye(4) * 4
nv = np.ones(4)
nm = na > 0.5
nx = np.ones((1000, 4))
ni = np.array([0, 2])
nu = np.ones((1, 4))
a, v, m, x, i2, u = (xp.asarray(t) for t in (na, nv, nm, nx, ni, nu))
ne = np.eye(4)
e = xp.asarray(ne)
t, nt = a.T, na.T
p, npending = a + 0.0, na + 0.0
rows = itertools.cycle(range(1000))
nw = np.linspace(-1.0, 1.0, 6000)
w = xp.asarray(nw)
windows = itertools.cycle([w[:n] for n in range(16, 4016)]).__next__
nwindows = itertools.cycle([nw[:n] for n in range(16, 4016)]).__next__
cuts = itertools.cycle([slice(i, 2 * i + 16) for i in range(2000)]).__next__
nh = np.ones((4000, 4))
blocks = itertools.cycle([xp.asarray(nh)[:n] for n in range(1, 4001)]).__next__
nblocks = itertools.cycle([nh[:n] for n in range(1, 4001)]).__next__
lengths = itertools.cycle(range(16, 4016)).__next__
nk = np.arange(6000) % 7
k = xp.asarray(nk)
ints = itertools.cycle([k[:n] for n in range(16, 4016)]).__next__
nints = itertools.cycle([nk[:n] for n in range(16, 4016)]).__next__
masks = itertools.cycle([w[:n] > 0 for n in range(16, 4016)]).__next__
nmasks = itertools.cycle([nw[:n] > 0 for n in range(16, 4016)]).__next__
"""

#: (family, statement on plaidarray, the same on NumPy). In the NumPy statement the arrays
#: are ``na``, ``nv``, ``nm``, ``nx``, ``ni``, ``nu``, ``ne``, ``nt`` and ``npending``, and
#: ``xp`` is ``np``; ``t`` is ``a.T`` (a transpose recorded), ``p`` a pending ``a + 0.0``.
ROWS: list[tuple[str, str, str]] = [
    ("elementwise", "a + a", "na + na"),
    ("elementwise", "xp.exp(a)", "np.exp(na)"),
    ("elementwise", "a * 2.0", "na * 2.0"),
    ("elementwise", "a * v", "na * nv"),
    ("elementwise", "a / a", "na / na"),
    ("elementwise", "xp.where(m, a, 0.0)", "np.where(nm, na, 0.0)"),
    ("elementwise", "a > 0", "na > 0"),
    ("elementwise", "xp.clip(a, -0.5, 0.5)", "np.clip(na, -0.5, 0.5)"),
    ("elementwise", "xp.astype(a, xp.float32)", "na.astype(np.float32)"),
    ("matmul", "a @ a", "na @ na"),
    ("matmul", "a @ v", "na @ nv"),
    ("matmul", "a @ t", "na @ nt"),
    ("matmul", "xp.vecdot(a, a)", "np.vecdot(na, na)"),
    ("matmul", "xp.tensordot(a, a, axes=1)", "np.tensordot(na, na, axes=1)"),
    ("views", "a.T", "na.T"),
    ("views", "xp.matrix_transpose(a)", "np.matrix_transpose(na)"),
    ("views", "xp.permute_dims(a, (1, 0))", "np.permute_dims(na, (1, 0))"),
    ("views", "xp.reshape(a, (16,))", "np.reshape(na, (16,))"),
    ("views", "xp.expand_dims(a, axis=0)", "np.expand_dims(na, axis=0)"),
    ("views", "xp.squeeze(u, axis=0)", "np.squeeze(nu, axis=0)"),
    ("views", "xp.flip(a, axis=0)", "np.flip(na, axis=0)"),
    ("views", "xp.moveaxis(a, 0, 1)", "np.moveaxis(na, 0, 1)"),
    ("views", "xp.broadcast_to(v, (4, 4))", "np.broadcast_to(nv, (4, 4))"),
    ("indexing", "a[1]", "na[1]"),
    ("indexing", "a[1:3]", "na[1:3]"),
    ("indexing", "a[:, 1]", "na[:, 1]"),
    ("indexing", "a[1, 2]", "na[1, 2]"),
    ("indexing", "p[1, 2]", "npending[1, 2]"),
    ("indexing", "x[next(rows)]", "nx[next(rows)]"),
    ("indexing", "xp.take(a, i2, axis=0)", "np.take(na, ni, axis=0)"),
    ("indexing", "a[1] = 2.0", "na[1] = 2.0"),
    ("indexing", "x[next(rows)] = 2.0", "nx[next(rows)] = 2.0"),
    ("creation", "xp.zeros(4)", "np.zeros(4)"),
    ("creation", "xp.ones((4, 4))", "np.ones((4, 4))"),
    ("creation", "xp.full((4, 4), 2.0)", "np.full((4, 4), 2.0)"),
    ("creation", "xp.zeros_like(a)", "np.zeros_like(na)"),
    ("creation", "xp.full_like(a, 2.0)", "np.full_like(na, 2.0)"),
    ("creation", "xp.eye(4)", "np.eye(4)"),
    ("creation", "xp.arange(4)", "np.arange(4)"),
    ("creation", "xp.linspace(0, 1, 5)", "np.linspace(0, 1, 5)"),
    ("reduction", "xp.sum(a)", "np.sum(na)"),
    ("reduction", "xp.prod(a)", "np.prod(na)"),
    ("reduction", "xp.mean(a)", "np.mean(na)"),
    ("reduction", "xp.max(a, axis=1)", "np.max(na, axis=1)"),
    ("reduction", "xp.min(a)", "np.min(na)"),
    ("reduction", "xp.argmax(a, axis=1)", "np.argmax(na, axis=1)"),
    ("reduction", "xp.std(a)", "np.std(na)"),
    ("reduction", "xp.var(a, axis=0)", "np.var(na, axis=0)"),
    ("reduction", "xp.any(m)", "np.any(nm)"),
    ("reduction", "xp.all(m)", "np.all(nm)"),
    ("reduction", "xp.cumulative_sum(v)", "np.cumulative_sum(nv)"),
    ("manipulation", "xp.concat([a, a])", "np.concat([na, na])"),
    ("manipulation", "xp.stack([v, v])", "np.stack([nv, nv])"),
    ("linalg", "xp.linalg.inv(a)", "np.linalg.inv(na)"),
    ("linalg", "xp.linalg.solve(a, v)", "np.linalg.solve(na, nv)"),
    ("linalg", "xp.linalg.det(a)", "np.linalg.det(na)"),
    ("linalg", "xp.linalg.diagonal(a)", "np.linalg.diagonal(na)"),
    ("linalg", "xp.linalg.vector_norm(a)", "np.linalg.vector_norm(na)"),
    ("linalg", "xp.linalg.cholesky(e)", "np.linalg.cholesky(ne)"),
    ("linalg", "xp.linalg.eigh(e)", "np.linalg.eigh(ne)"),
    ("linalg", "xp.linalg.qr(a)", "np.linalg.qr(na)"),
    ("linalg", "xp.linalg.svd(a)", "np.linalg.svd(na)"),
    ("linalg", "xp.linalg.slogdet(a)", "np.linalg.slogdet(na)"),
    ("utility", "xp.diff(v)", "np.diff(nv)"),
    ("fft", "xp.fft.fftn(a)", "np.fft.fftn(na)"),
    ("fft", "xp.fft.fftfreq(8)", "np.fft.fftfreq(8)"),
    ("new sizes", "w[cuts()]", "nw[cuts()]"),
    ("new sizes", "xp.sum(windows())", "np.sum(nwindows())"),
    ("new sizes", "xp.mean(windows())", "np.mean(nwindows())"),
    ("new sizes", "xp.std(windows())", "np.std(nwindows())"),
    ("new sizes", "(lambda y: y - xp.mean(y))(windows())", "(lambda y: y - np.mean(y))(nwindows())"),
    ("new sizes", "xp.concat([blocks(), u])", "np.concat([nblocks(), nu])"),
    ("new sizes", "(lambda y: xp.stack([y, y]))(windows())", "(lambda y: np.stack([y, y]))(nwindows())"),
    ("new sizes", "xp.arange(lengths())", "np.arange(lengths())"),
    ("new sizes", "xp.var(windows(), correction=1)", "np.var(nwindows(), ddof=1)"),
    ("new sizes", "xp.mean(blocks(), axis=0)", "np.mean(nblocks(), axis=0)"),
    ("new sizes", "(lambda y: y - xp.mean(y, axis=0))(blocks())", "(lambda y: y - np.mean(y, axis=0))(nblocks())"),
    ("new sizes", "xp.max(blocks(), axis=1)", "np.max(nblocks(), axis=1)"),
    ("new sizes", "(lambda y: y[y > 0.5])(windows())", "(lambda y: y[y > 0.5])(nwindows())"),
    ("new sizes", "windows() - 1.0", "nwindows() - 1.0"),
    ("new sizes", "xp.sum(masks())", "np.sum(nmasks())"),
    ("new sizes", "xp.count_nonzero(masks())", "np.count_nonzero(nmasks())"),
    ("new sizes", "xp.any(masks())", "np.any(nmasks())"),
    ("new sizes", "xp.max(ints())", "np.max(nints())"),
    ("new sizes", "xp.sum(ints())", "np.sum(nints())"),
    ("new sizes", "xp.zeros(lengths())", "np.zeros(lengths())"),
    ("new sizes", "xp.full((lengths(), 3), 2.0)", "np.full((lengths(), 3), 2.0)"),
    ("new sizes", "(lambda y: y[:, None])(windows())", "(lambda y: y[:, None])(nwindows())"),
]


def table(rounds: int, only: str | None) -> str:
    """The rows as a markdown table."""
    rows = [row for row in ROWS if not only or only in row[1]]
    timers = [(timeit.Timer(ours, SETUP), timeit.Timer(theirs, SETUP)) for _, ours, theirs in rows]
    loops = [tuple(timer.autorange()[0] for timer in pair) for pair in timers]
    best = [[float("inf"), float("inf")] for _ in rows]
    for _ in range(rounds):
        for pair, counts, times in zip(timers, loops, best):
            for i, (timer, number) in enumerate(zip(pair, counts)):
                times[i] = min(times[i], timer.timeit(number) / number * 1e6)
    lines = ["| family | statement | plaidarray records | NumPy computes | ratio |", "|---|---|---:|---:|---:|"]
    for (family, ours, _), (recorded, numpy) in zip(rows, best):
        lines.append(f"| {family} | `{ours}` | {recorded:.2f} us | {numpy:.2f} us | {recorded / numpy:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", help="rows whose plaidarray statement contains this")
    args = parser.parse_args()
    print(f"plaidarray {xp.__version__}, NumPy {np.__version__}; best of {args.rounds} rounds, microseconds a statement\n")
    print(table(args.rounds, args.only))


if __name__ == "__main__":
    main()
