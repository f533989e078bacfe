"""Eager NumPy-style scripts (no ``jit``) on NumPy, JAX eager and plaidarray.

    python -m benchmarks.eager [--repeat 3] [--reruns 5] [--only SUBSTRING] [--timeout 120]

A NumPy user's script is a Python loop over small array operations that reads values back
as it goes: a convergence check, a loss, a count, element stores. A lazy library has to
decide at every read what to compile, so on these scripts its compiles and its recording of
the graph, not its kernels, decide how it feels. Each script is written once against an array
namespace (``numpy``, ``jax.numpy`` with float64 enabled, ``plaidarray``) and run unchanged
on the three; only element stores go through ``set_item``, since JAX arrays are immutable
(but in the ``idioms:``, ``apart:``, ``later:``, ``fresh:``, ``unseen:`` and ``sixth:`` groups,
written apart in ``eager_idioms.py``, ``eager_apart.py``, ``eager_later.py``,
``eager_fresh.py``, ``eager_unseen.py`` and ``eager_sixth.py``, whose stores are NumPy's).

Each script is timed in fresh processes, so that nothing is shared but what a measurement
means to share:

- cold: a new process with an empty ``PLAIDARRAY_CACHE_DIR`` (as after a fresh install:
  plaidarray's installed op kernels are there to be found), timing its first run of the
  script, everything a first use brings up and every compile included (JAX's compile of
  each new op too);
- warm-disk (plaidarray): another new process on the directory the cold process filled;
- in-process: the script run again in the cold process (median of the reruns), for NumPy
  too: the "second run" a notebook cell or a test suite sees.

The imports and the creation of the inputs (``asarray``, which brings up JAX's client) are
not timed; the imports' medians are printed under the table. The ratio columns divide
plaidarray's time by NumPy's, and the totals give the worst script's ratio too. The
libraries take turns within each of ``--repeat``
rounds (the order rotates between rounds), so a noisy moment of the shared machine falls on
all of them alike; medians over the rounds are shown. A run that fails (an exception, a
crash, ``--timeout`` seconds passed) is reported in the last column and not tried again in
later rounds; each result is checked against NumPy's in the process that computed it.
"""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import importlib.metadata
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import cast

import numpy as np

from .eager_apart import APART
from .eager_eighth import EIGHTH
from .eager_eleventh import ELEVENTH
from .eager_idioms import IDIOMS
from .eager_ninth import NINTH
from .eager_tenth import TENTH
from .eager_twelfth import TWELFTH
from .eager_later import LATER
from .eager_fresh import FRESH
from .eager_sixth import SIXTH
from .eager_seventh import SEVENTH
from .eager_unseen import UNSEEN

REPO = Path(__file__).resolve().parents[1]
LIBRARIES = ("NumPy", "JAX", "plaidarray")
#: Seconds of in-process reruns after which a process stops rerunning (after at least one):
#: a script that takes a minute per run would otherwise hold a round for minutes.
IN_PROCESS_SECONDS = 20.0
RECORD = "EAGER-RECORD "  # prefix of the child's result lines, whatever else it prints


def set_item(xp: ModuleType, a, index, value):
    """``a[index] = value``, returning ``a``; on JAX, whose arrays are immutable, the copy
    ``a.at[index].set(value)``."""
    if xp.__name__ == "jax.numpy":
        return a.at[index].set(value)
    a[index] = value
    return a


# The scripts: each takes the namespace and its inputs as arrays of it, and returns what it
# read back (Python numbers, NumPy arrays), which is checked against NumPy's.

def fixed_point(xp, x):
    """x = cos(x), a contraction, with the convergence check users write: one read per step."""
    steps = []
    for _ in range(60):
        x_new = xp.cos(x)
        steps.append(float(xp.max(xp.abs(x_new - x))))
        x = x_new
    return steps, np.asarray(x)


def gradient_descent(xp, a, b):
    """Least squares by gradient descent, the loss read every step."""
    w = xp.zeros(a.shape[1], dtype=xp.float64)
    losses = []
    for _ in range(100):
        r = a @ w - b
        losses.append(float(xp.mean(r * r)))
        w = w - (0.2 / a.shape[0]) * (a.T @ r)
    return losses, np.asarray(w)


def power_iteration(xp, m):
    """The dominant eigenvector: the norm is read every step and divides as a Python float."""
    v = xp.ones(m.shape[0], dtype=xp.float64) / math.sqrt(m.shape[0])
    norms = []
    for _ in range(100):
        w = m @ v
        norms.append(float(xp.sqrt(xp.sum(w * w))))
        v = w / norms[-1]
    return norms, np.asarray(v)


def fill_loop(xp):
    """One element stored per iteration, then the array read."""
    a = xp.zeros(300, dtype=xp.float64)
    for i in range(300):
        a = set_item(xp, a, i, math.sin(i) / (i + 1))
    return np.asarray(a)


def _lloyd_step(xp, points, centers):
    """New centres: the means of the points nearest each, computed with masks in a Python
    loop over the clusters."""
    distances = xp.sum((points[:, None, :] - centers[None, :, :]) ** 2, axis=2)
    labels = xp.argmin(distances, axis=1)
    means = []
    for k in range(centers.shape[0]):
        member = xp.astype(labels == k, xp.float64)
        means.append(xp.sum(points * member[:, None], axis=0) / xp.sum(member))
    return xp.stack(means)


def kmeans(xp, points, centers):
    """Lloyd's algorithm, the largest move of a centre read every step."""
    shifts = []
    for _ in range(15):
        new = _lloyd_step(xp, points, centers)
        shifts.append(float(xp.max(xp.abs(new - centers))))
        centers = new
    return shifts, np.asarray(centers)


def scalar_chain(xp, x):
    """A long chain of cheap updates with no read until the end."""
    for _ in range(2000):
        x = x * 0.999 + 0.001
    return np.asarray(x)


def changing_scalar(xp, x):
    """The same expression with a different Python scalar each time."""
    return [float(xp.sum(x * float(i) + 1.0)) for i in range(20)]


def cumulative_sum(xp, *parts):
    """A running total over a list of arrays, read at the end."""
    total = xp.zeros(parts[0].shape, dtype=xp.float64)
    for part in parts:
        total = total + part
    return np.asarray(total)


def mask_loop(xp, x):
    """``x[x > t] = 0`` in a loop, the number of stored elements read every step."""
    counts = []
    for _ in range(30):
        x = x * 1.05 + 0.01
        big = x > 2.0
        counts.append(int(xp.count_nonzero(big)))
        x = set_item(xp, x, big, 0.0)
    return counts, np.asarray(x)


def column_loop(xp, m):
    """Each column standardised in a Python loop over the columns."""
    out = xp.zeros_like(m)
    for j in range(m.shape[1]):
        col = m[:, j]
        out = set_item(xp, out, np.s_[:, j], (col - xp.mean(col)) / xp.std(col))
    return np.asarray(out)


SMALL_CALLS = 2000


def record_op(xp, x):
    """One op recorded (dispatched, for NumPy and JAX) per call; one read at the end."""
    for _ in range(SMALL_CALLS):
        y = x + 1.0
    return np.asarray(y)


def read_small_graph(xp, x):
    """A three-op graph recorded and read per call."""
    for _ in range(SMALL_CALLS):
        y = np.asarray(xp.exp(x) * 2.0 + x)
    return y


# Scripts whose shapes change as they go: every new shape is a new graph to a lazy library
# (and a new compile for JAX's eager ops).

def grow_rows(xp, rows):
    """An array grown by one row per step (``concat``), its total read every step."""
    a = xp.zeros((0, rows.shape[1]), dtype=xp.float64)
    totals = []
    for i in range(rows.shape[0]):
        a = xp.concat([a, rows[i:i + 1, :]], axis=0)
        totals.append(float(xp.sum(a * a)))
    return totals, np.asarray(a)


def windows(xp, x):
    """Statistics over windows of varying start and length, read one window at a time."""
    stats = []
    for i in range(300):
        start, length = (i * 37) % 4000, 5 + (i * 53) % 800
        w = x[start:start + length]
        stats.append(float(xp.mean(w) + xp.std(w) - xp.max(w)))
    return stats


def many_windows(xp, x, order):
    """Windows of 1500 lengths, each met once (a scan: no length comes back), each one's
    spread and peak read; what the executable cache and the garbage collector cost a
    long loop whose sizes never repeat."""
    stats = []
    for length in np.asarray(order)[:1500]:
        w = x[:int(length)]
        stats.append(float(xp.max(w) - xp.min(w) + xp.mean(w * w)))
    return stats


def records_then_batches(xp, x, lengths):
    """Records of 600 lengths, each met once, then 400 windows of one length, each with its
    mean square read: a structure that met more sizes than the executable cache keeps of
    one (``cache.FAMILY_SHARE``) before the loop whose size repeats."""
    out = []
    for k, length in enumerate(np.asarray(lengths).tolist()):
        w = x[k:k + length]
        out.append(float(xp.sum(w * w) / length))
    for k in range(400):
        w = x[k:k + 256]
        out.append(float(xp.sum(w * w) / 256))
    return out



def rolling_zscores(xp, x, lengths):
    """The z-score of each point against the window of a varying length before it (a
    series' anomaly check), read per point: windows, their mean and spread at new sizes."""
    out = []
    for i, length in enumerate(np.asarray(lengths).tolist()):
        end = 300 + i
        window = x[end - length:end]
        out.append(float((x[end] - xp.mean(window)) / xp.std(window)))
    return out

def ragged_chunks(xp, x, bounds):
    """A series cut into chunks of random lengths, each standardised and summarised."""
    out = []
    cuts = [int(b) for b in np.asarray(bounds)]
    for lo, hi in zip(cuts, cuts[1:]):
        chunk = x[lo:hi]
        z = (chunk - xp.mean(chunk)) / (xp.std(chunk) + 1e-9)
        out.append(float(xp.sum(xp.abs(z) * xp.exp(-z * z))))
    return out


def last_batch(xp, data, weights):
    """Mini-batches of 64 rows through a layer, the last batch smaller, the loss read per batch."""
    losses = []
    for _ in range(3):
        for start in range(0, data.shape[0], 64):
            batch = data[start:start + 64]
            hidden = xp.tanh(batch @ weights)
            losses.append(float(xp.mean(hidden * hidden)))
    return losses


def kmeans_no_reads(xp, points, centers):
    """k-means whose loop never reads: every graph past the pending bound is cut."""
    for _ in range(20):
        centers = _lloyd_step(xp, points, centers)
    return np.asarray(centers)


def growing_no_reads(xp, steps):
    """A history grown by a step of computed values, never read until the end."""
    h = xp.zeros((1, steps.shape[1]), dtype=xp.float64)
    for i in range(steps.shape[0]):
        h = xp.concat([h, xp.tanh(h[-1:, :] + steps[i:i + 1, :])], axis=0)
    return np.asarray(xp.sum(h, axis=0))


def mask_select(xp, x):
    """A boolean mask's selection at a new threshold each step: its length is data."""
    out = []
    for i in range(150):
        picked = x[x > -1.0 + i * 0.013]
        out.append(float(xp.sum(picked * picked)))
    return out


def stacked_list(xp, x):
    """A list grown by a row per step and stacked whole at each step, its mean read."""
    rows, means = [], []
    for i in range(150):
        rows.append(x[i] * float(i))
        means.append(float(xp.mean(xp.stack(rows), axis=None)))
    return means


# Scripts of the kinds a first run meets most (small linear algebra in a loop, transforms
# of several lengths, sorting and set functions per batch, masked updates): each compiled
# graph or per-shape kernel costs a lazy library its compile.

def kalman(xp, zs):
    """A 4-state Kalman filter over noisy 2-D measurements, the state's sum read per step."""
    f = xp.asarray(np.eye(4) + 0.1 * np.eye(4, k=1))
    h = xp.asarray(np.eye(2, 4))
    q, r = xp.asarray(0.01 * np.eye(4)), xp.asarray(0.1 * np.eye(2))
    x, p = xp.zeros(4, dtype=xp.float64), xp.eye(4, dtype=xp.float64)
    out = []
    for k in range(zs.shape[0]):
        x = f @ x
        p = f @ p @ f.T + q
        y = zs[k] - h @ x
        gain = p @ h.T @ xp.linalg.inv(h @ p @ h.T + r)
        x = x + gain @ y
        p = (xp.eye(4, dtype=xp.float64) - gain @ h) @ p
        out.append(float(xp.sum(x)))
    return out


def rls_filter(xp, xs, ys):
    """Recursive least squares over a stream of 3-feature samples: each step's prediction
    error is read (a Python ``abs`` test), the weights and the inverse covariance updated
    after it: state the read does not depend on stays pending until the next step."""
    w, p = xp.zeros(3, dtype=xp.float64), xp.eye(3, dtype=xp.float64) * 100.0
    large = 0
    errors = []
    for k in range(xs.shape[0]):
        x = xs[k]
        error = float(ys[k] - xp.vecdot(w, x))
        errors.append(error)
        large += abs(error) > 1.0
        px = p @ x
        gain = px / (0.99 + xp.vecdot(x, px))
        w = w + gain * error
        p = (p - xp.linalg.outer(gain, px)) / 0.99
    return errors, large, np.asarray(w)


def fft_lowpass(xp, signal):
    """Signals of 40 lengths low-passed through a real FFT, each one's energy read."""
    out = []
    for n in range(100, 140):
        s = signal[:n]
        spectrum = xp.fft.rfft(s)
        keep = xp.arange(spectrum.shape[0]) < spectrum.shape[0] // 4
        smooth = xp.fft.irfft(xp.where(keep, spectrum, xp.zeros_like(spectrum)), n=n)
        out.append(float(xp.sum(smooth * smooth)))
    return out


def gaussian_process(xp, points, targets):
    """A Gaussian process refit as its data grows: kernel matrix, Cholesky factor and a
    solve per size, the log-likelihood's terms read."""
    out = []
    for n in range(10, points.shape[0] + 1, 6):
        x, y = points[:n], targets[:n]
        d = x[:, None, :] - x[None, :, :]
        k = xp.exp(-0.5 * xp.sum(d * d, axis=2)) + 0.1 * xp.eye(n, dtype=xp.float64)
        factor = xp.linalg.cholesky(k)
        alpha = xp.linalg.solve(k, y)
        out.append(float(xp.sum(y * alpha) + 2.0 * xp.sum(xp.log(xp.linalg.diagonal(factor)))))
    return out


def unique_per_batch(xp, data):
    """unique_counts of batches of varying length, the largest count read."""
    out = []
    for i in range(25):
        start = i * 37 % 500
        values, counts = xp.unique_counts(data[start:start + 100 + i * 11])
        out.append(int(xp.max(counts)) * 1000 + int(values.shape[0]))
    return out


def masked_clip(xp, x):
    """A series scaled and clipped by boolean-mask stores, its sum read per step."""
    out = []
    for i in range(20):
        x = x * 1.1 - 0.05
        t = 1.5 - 0.02 * i
        x = set_item(xp, x, x > t, t)
        x = set_item(xp, x, x < -t, -t)
        out.append(float(xp.sum(x)))
    return out


def newton_solves(xp, a):
    """Newton's method on x^3 + A x = 1 from six starts, a 6x6 solve per step."""
    out = []
    for trial in range(6):
        x = xp.ones(6, dtype=xp.float64) * (0.5 + 0.1 * trial)
        for _ in range(8):
            residual = a @ x + x ** 3 - 1.0
            step = xp.linalg.solve(a + xp.eye(6, dtype=xp.float64) * (3.0 * x * x), residual)
            x = x - step
            if float(xp.linalg.vector_norm(step)) < 1e-12:
                break
        out.append(float(xp.sum(x)))
    return out


def sorted_batches(xp, data):
    """Quartiles of batches of growing length by sort, and each one's smallest by argsort."""
    out = []
    for i in range(30):
        batch = data[i * 13: i * 13 + 200 + 7 * i]
        ordered = xp.sort(batch)
        n = ordered.shape[0]
        out.append(float(ordered[n // 4] + ordered[n // 2] + ordered[3 * n // 4]) + float(batch[xp.argsort(batch)[0]]))
    return out


def histogram_batches(xp, data):
    """Counts per bin of batches by searchsorted and a one-hot sum, the fullest bin read."""
    edges = xp.linspace(-3.0, 3.0, 21)
    out = []
    for i in range(20):
        bins = xp.searchsorted(edges, data[i * 50: i * 50 + 300 + 10 * i])
        counts = xp.sum(xp.astype(bins[:, None] == xp.arange(22)[None, :], xp.int64), axis=0)
        out.append(int(xp.max(counts)))
    return out


def moving_averages(xp, x):
    """Moving averages of 13 window lengths from one cumulative sum each, their range read."""
    out = []
    for w in range(3, 40, 3):
        c = xp.cumulative_sum(x, include_initial=True)
        m = (c[w:] - c[:-w]) / w
        out.append(float(xp.max(m) - xp.min(m)))
    return out


def softmax_batches(xp, data, weights):
    """Batches of varying size through a linear layer and a softmax, confidence and
    predicted classes read."""
    out = []
    for start, size in ((0, 50), (50, 64), (114, 30), (144, 64), (208, 17), (225, 64)):
        z = data[start:start + size] @ weights
        z = z - xp.max(z, axis=1, keepdims=True)
        p = xp.exp(z) / xp.sum(xp.exp(z), axis=1, keepdims=True)
        out.append(float(xp.mean(xp.max(p, axis=1))) + int(xp.sum(xp.argmax(p, axis=1))))
    return out


def small_decompositions(xp, data):
    """Eigenvalues, determinant and QR of symmetric matrices of sizes 3 to 11."""
    out = []
    for n in range(3, 12):
        m = xp.reshape(data[:n * n], (n, n))
        s = m @ m.T + xp.eye(n, dtype=xp.float64)
        q, r = xp.linalg.qr(m)
        out.append(float(xp.sum(xp.linalg.eigvalsh(s))) + float(xp.linalg.det(s))
                   + float(xp.sum(xp.abs(xp.linalg.diagonal(r)))))
    return out


def image_threshold(xp, image):
    """An image thresholded at its mean and rescaled in steps; row means, column maxima and
    the count above the threshold read per step."""
    out = []
    for i in range(15):
        t = float(xp.mean(image)) + 0.01 * i
        mask = image > t
        image = xp.where(mask, image * 0.9, image * 1.05)
        out.append(float(xp.sum(xp.mean(image, axis=1))) - float(xp.min(xp.max(image, axis=0)))
                   + int(xp.count_nonzero(mask)))
    return out


def spectra_batches(xp, frames):
    """Batches of complex frames of varied lengths (primes above 127 among them): the
    power spectrum along each frame, the batch's inverse along the other axis, read."""
    out = []
    for n in (57, 131, 200, 263, 97, 384, 311, 150, 139, 64, 243, 389):
        batch = frames[:, :n]
        power = xp.abs(xp.fft.fft(batch, axis=1)) ** 2
        back = xp.fft.ifft(batch, axis=0)
        out.append(float(xp.sum(power)) + float(xp.sum(xp.real(back))))
    return out


def float32_spectra(xp, signal):
    """Single-precision real spectra of windows of growing length, orthonormal, their
    band energies read and the signal rebuilt."""
    out = []
    for n in range(60, 300, 17):
        window = signal[:n]
        spectrum = xp.fft.rfft(window, norm="ortho")
        band = xp.sum(xp.abs(spectrum[: n // 8]))
        rebuilt = xp.fft.irfft(spectrum, n=n, norm="ortho")
        out.append(float(band) + float(xp.max(xp.abs(rebuilt - window))))
    return out


def detrended_windows(xp, series):
    """Sliding windows of irregular length: a line fitted to each by the normal equations
    (a 2x2 solve), the residual's real spectrum and its peak frequency read."""
    out = []
    start = 0
    for length in (97, 262, 150, 298, 211, 128, 358, 175, 202, 314):
        window = series[start:start + length]
        t = xp.linspace(0.0, 1.0, length, dtype=window.dtype)
        design = xp.stack([t, xp.ones_like(t)], axis=1)
        coef = xp.linalg.solve(design.T @ design, design.T @ window)
        residual = window - design @ coef
        power = xp.abs(xp.fft.rfft(residual)) ** 2
        out.append(int(xp.argmax(power)) + float(power[0]))
        start += length // 3
    return out


def least_squares_qr(xp, data, targets):
    """A linear model refit on growing prefixes of its data through the QR factors of the
    tall design matrix, the residual norm and the condition number read per fit."""
    out = []
    for n in (20, 35, 50, 80, 120):
        design, y = data[:n], targets[:n]
        q, r = xp.linalg.qr(design)
        coef = xp.linalg.solve(r, q.T @ y)
        s = xp.linalg.svdvals(design)
        out.append(float(xp.linalg.vector_norm(design @ coef - y)) + float(s[0] / s[-1]))
    return out



def lu_pivoting(xp, a):
    """Gaussian elimination with partial pivoting, as a textbook writes it: each column's
    pivot found by ``argmax`` and read, its row swapped in through a copy, the multipliers
    divided by the pivot element and the trailing block (smaller at each step) updated by
    their outer product with the pivot row."""
    m = xp.asarray(a, copy=True)
    pivots = []
    for k in range(m.shape[0] - 1):
        p = k + int(xp.argmax(xp.abs(m[k:, k])))
        pivots.append(p)
        if p != k:
            kept = xp.asarray(m[k], copy=True)
            m = set_item(xp, m, k, m[p])
            m = set_item(xp, m, p, kept)
        factors = m[k + 1:, k] / m[k, k]
        m = set_item(xp, m, (slice(k + 1, None), slice(k + 1, None)),
                     m[k + 1:, k + 1:] - factors[:, None] * m[k, k + 1:][None, :])
        m = set_item(xp, m, (slice(k + 1, None), k), factors)
    return pivots, np.asarray(m)


def ridge_refits(xp, data, targets):
    """Ridge regression refit on growing prefixes of its rows (normal equations with a
    penalty, a 5x5 solve), the training error read per fit."""
    out = []
    for n in (30, 47, 64, 90, 131, 177, 240):
        design, y = data[:n], targets[:n]
        gram = design.T @ design + 0.5 * xp.eye(design.shape[1], dtype=design.dtype)
        coef = xp.linalg.solve(gram, design.T @ y)
        out.append(float(xp.mean((design @ coef - y) ** 2)))
    return out

def image_pyramid(xp, images):
    """A batch of images standardised per image, then halved along both axes three times
    (steps of 2 on computed arrays), each level's extremes read."""
    out = []
    for count in (3, 5, 8):
        level = images[:count]
        level = (level - xp.mean(level, axis=(1, 2), keepdims=True)) / xp.std(level, axis=(1, 2), keepdims=True)
        for _ in range(3):
            level = (level[:, ::2, ::2] + level[:, 1::2, 1::2]) * 0.5
            out.append(float(xp.max(level)) - float(xp.min(level[:, 1:-1, :])))
    return out


def stencil_border(xp, grid):
    """A 3x3 average repeated on a grid, its border replicated by joins of one row and one
    column each step, the mean read."""
    out = []
    for _ in range(6):
        inner = (grid[:-2, :-2] + grid[:-2, 1:-1] + grid[:-2, 2:] + grid[1:-1, :-2] + grid[1:-1, 1:-1]
                 + grid[1:-1, 2:] + grid[2:, :-2] + grid[2:, 1:-1] + grid[2:, 2:]) / 9.0
        rows = xp.concat([inner[:1], inner, inner[-1:]], axis=0)
        grid = xp.concat([rows[:, :1], rows, rows[:, -1:]], axis=1)
        out.append(float(xp.mean(grid)))
    return out


def cross_entropy(xp, logits, labels):
    """A classifier's loss over batches of varying size: log-sum-exp, the labels' logits by
    take_along_axis, and the count of right answers (a sum of a boolean mask) read."""
    out = []
    for start, size in ((0, 40), (40, 64), (104, 23), (127, 64), (191, 9)):
        z, y = logits[start:start + size], labels[start:start + size]
        top = xp.max(z, axis=1, keepdims=True)
        lse = xp.log(xp.sum(xp.exp(z - top), axis=1)) + top[:, 0]
        picked = xp.take_along_axis(z, y[:, None], axis=1)[:, 0]
        out.append(float(xp.mean(lse - picked)) + int(xp.sum(xp.argmax(z, axis=1) == y)))
    return out


def attention_heads(xp, q, k, v):
    """Attention of 4-D arrays (batch, heads, positions, features) over growing lengths:
    scores by a batched product, a softmax over the last axis, the output's sum read."""
    out = []
    for length in (6, 9, 12, 16):
        qq, kk, vv = q[:, :, :length], k[:, :, :length], v[:, :, :length]
        scores = qq @ xp.permute_dims(kk, (0, 1, 3, 2)) / 8.0
        weights = xp.exp(scores - xp.max(scores, axis=-1, keepdims=True))
        weights = weights / xp.sum(weights, axis=-1, keepdims=True)
        out.append(float(xp.sum(weights @ vv)))
    return out


def nbody_energy(xp, positions, velocities):
    """Six bodies under gravity stepped 150 times at one shape: pairwise differences by
    broadcasting, distances, forces summed over the other bodies, the kinetic energy read
    each step (a fixed-shape loop whose every step reads)."""
    masses = xp.linspace(1.0, 2.0, positions.shape[0])
    energies = []
    for _ in range(150):
        gaps = positions[None, :, :] - positions[:, None, :]
        distances = xp.sqrt(xp.sum(gaps * gaps, axis=-1) + 0.01)
        pull = masses[None, :, None] * gaps / distances[:, :, None] ** 3
        velocities = velocities + 0.001 * xp.sum(pull, axis=1)
        positions = positions + 0.001 * velocities
        energies.append(float(0.5 * xp.sum(masses * xp.sum(velocities * velocities, axis=1))))
    return energies


def loss_history(xp, features, targets):
    """A training loop's bookkeeping: a linear model's loss on mini-batches of three sizes
    in turn, each loss kept in a list, and the mean of the last 20 losses (a stack of the
    list's tail) read each step; the weights moved by the batch's gradient."""
    weights = xp.zeros(features.shape[1], dtype=xp.float64)
    losses, smoothed = [], []
    start = 0
    for step in range(120):
        size = (24, 40, 56)[step % 3]
        x, y = features[start:start + size], targets[start:start + size]
        start = (start + size) % (features.shape[0] - 56)
        error = x @ weights - y
        losses.append(xp.mean(error * error))
        weights = weights - 0.05 * (error @ x) / size
        smoothed.append(float(xp.mean(xp.stack(losses[-20:]))))
    return smoothed


def element_histogram(xp, labels):
    """A histogram counted one label at a time: ``counts[int(labels[i])] += 1``."""
    counts = xp.zeros(20, dtype=xp.int64)
    for i in range(labels.shape[0]):
        counts[int(labels[i])] += 1
    return np.asarray(counts)


def shuffled_rows(xp, m, picks):
    """A matrix's rows shuffled in place by swaps (Fisher-Yates), each swap a row copied out
    and two rows written."""
    m = xp.asarray(m, copy=True)
    for i in range(m.shape[0] - 1, 0, -1):
        j = int(picks[i])
        kept = xp.asarray(m[i], copy=True)
        m[i] = m[j]
        m[j] = kept
    return np.asarray(m)


def rows_from_products(xp, weights, x):
    """A design matrix filled row by row: ``out[i, :] = weights * x[i]``."""
    out = xp.zeros((x.shape[0], weights.shape[0]))
    for i in range(x.shape[0]):
        out[i, :] = weights * x[i]
    return np.asarray(out)


def element_branches(xp, x):
    """A Python ``if`` on each element's comparison: ``if x[i] > 0.5``."""
    above = 0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            above += 1
    return above


def _ragged(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal(20_000)
    return x, np.concatenate([[0], np.cumsum(rng.integers(5, 400, 120))]).clip(0, len(x))


def _blobs(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """3000 points around four centres, in random order; the first four start the means."""
    centres = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0], [6.0, -1.0]])
    points = rng.permutation(np.concatenate([c + rng.standard_normal((750, 2)) for c in centres]))
    return points, points[:4].copy()


def _least_squares(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    a = rng.standard_normal((2000, 20))
    return a, a @ rng.standard_normal(20) + 0.1 * rng.standard_normal(2000)


def _regression_stream(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    xs = rng.standard_normal((150, 3))
    return xs, xs @ np.array([0.5, -1.0, 2.0]) + 0.1 * rng.standard_normal(150)


def _spd(rng: np.random.Generator) -> tuple[np.ndarray]:
    g = rng.standard_normal((200, 200))
    return (g @ g.T / 200,)


@dataclass(frozen=True)
class Script:
    name: str
    run: Callable  # run(xp, *inputs as arrays of xp) -> values read back
    inputs: Callable[[np.random.Generator], tuple[np.ndarray, ...]]
    #: How many like calls the script makes; above 1, times are shown per call.
    calls: int = 1


SCRIPTS = [
    Script("fixed_point", fixed_point, lambda rng: (rng.uniform(0, 1, 10_000),)),
    Script("gradient_descent", gradient_descent, _least_squares),
    Script("power_iteration", power_iteration, _spd),
    Script("fill_loop", fill_loop, lambda rng: ()),
    Script("kmeans", kmeans, _blobs),
    Script("scalar_chain", scalar_chain, lambda rng: (rng.uniform(0, 1, 1000),)),
    Script("changing_scalar", changing_scalar, lambda rng: (rng.standard_normal(10_000),)),
    Script("cumulative_sum", cumulative_sum, lambda rng: tuple(rng.standard_normal((200, 1000)))),
    Script("mask_loop", mask_loop, lambda rng: (rng.standard_normal(10_000),)),
    Script("column_loop", column_loop, lambda rng: (rng.standard_normal((500, 20)) * 3.0 + 1.0,)),
    Script("small_ops: record x + 1.0 (8 elements), per call", record_op,
           lambda rng: (rng.standard_normal(8),), calls=SMALL_CALLS),
    Script("small_ops: record+read exp(x)*2+x (8 elements), per call", read_small_graph,
           lambda rng: (rng.standard_normal(8),), calls=SMALL_CALLS),
    Script("loops: element_histogram", element_histogram, lambda rng: (rng.integers(0, 20, 2000),)),
    Script("loops: shuffled_rows", shuffled_rows,
           lambda rng: (rng.standard_normal((200, 6)), np.array([rng.integers(0, i + 1) for i in range(200)]))),
    Script("loops: rows_from_products", rows_from_products,
           lambda rng: (rng.standard_normal(5), rng.standard_normal(400))),
    Script("loops: element_branches", element_branches, lambda rng: (rng.uniform(size=1500),)),
    Script("shapes: grow_rows", grow_rows, lambda rng: (rng.standard_normal((300, 4)),)),
    Script("shapes: windows", windows, lambda rng: (rng.standard_normal(5000),)),
    Script("shapes: many_windows", many_windows,
           lambda rng: (rng.standard_normal(6000), rng.permutation(np.arange(2, 6000)))),
    Script("shapes: ragged_chunks", ragged_chunks, _ragged),
    Script("shapes: rolling_zscores", rolling_zscores,
           lambda rng: (rng.standard_normal(800), rng.integers(20, 300, 400))),
    Script("shapes: records_then_batches", records_then_batches,
           lambda rng: (rng.standard_normal(1600), rng.permutation(np.arange(300, 900)))),
    Script("shapes: last_batch", last_batch,
           lambda rng: (rng.standard_normal((1000, 32)), rng.standard_normal((32, 16)) * 0.2)),
    Script("shapes: kmeans_no_reads", kmeans_no_reads, _blobs),
    Script("shapes: growing_no_reads", growing_no_reads, lambda rng: (rng.standard_normal((150, 8)) * 0.1,)),
    Script("shapes: mask_select", mask_select, lambda rng: (rng.standard_normal(4000),)),
    Script("shapes: stacked_list", stacked_list, lambda rng: (rng.standard_normal((150, 6)),)),
    Script("first runs: kalman", kalman, lambda rng: (rng.standard_normal((100, 2)),)),
    Script("first runs: rls_filter", rls_filter, _regression_stream),
    Script("first runs: fft_lowpass", fft_lowpass, lambda rng: (rng.standard_normal(140),)),
    Script("first runs: gaussian_process", gaussian_process,
           lambda rng: (rng.standard_normal((100, 3)), rng.standard_normal(100))),
    Script("first runs: unique_per_batch", unique_per_batch, lambda rng: (rng.integers(0, 50, 1000),)),
    Script("first runs: masked_clip", masked_clip, lambda rng: (rng.standard_normal(5000),)),
    Script("first runs: newton_solves", newton_solves,
           lambda rng: (np.eye(6) * 4 + rng.standard_normal((6, 6)) * 0.1,)),
    Script("first runs: sorted_batches", sorted_batches, lambda rng: (rng.standard_normal(1000),)),
    Script("first runs: histogram_batches", histogram_batches, lambda rng: (rng.standard_normal(2000),)),
    Script("first runs: moving_averages", moving_averages, lambda rng: (rng.standard_normal(3000),)),
    Script("first runs: softmax_batches", softmax_batches,
           lambda rng: (rng.standard_normal((300, 20)), rng.standard_normal((20, 5)))),
    Script("first runs: small_decompositions", small_decompositions, lambda rng: (rng.standard_normal(121),)),
    Script("first runs: image_threshold", image_threshold, lambda rng: (rng.uniform(size=(120, 160)),)),
    Script("first runs: spectra_batches", spectra_batches,
           lambda rng: (rng.standard_normal((6, 400)) + 1j * rng.standard_normal((6, 400)),)),
    Script("first runs: float32_spectra", float32_spectra,
           lambda rng: (rng.standard_normal(300).astype(np.float32),)),
    Script("first runs: detrended_windows", detrended_windows,
           lambda rng: (np.cumsum(rng.standard_normal(1400)) + np.linspace(0.0, 30.0, 1400),)),
    Script("first runs: least_squares_qr", least_squares_qr,
           lambda rng: (rng.standard_normal((120, 4)), rng.standard_normal(120))),
    Script("first runs: lu_pivoting", lu_pivoting, lambda rng: (rng.standard_normal((24, 24)),)),
    Script("first runs: ridge_refits", ridge_refits,
           lambda rng: (rng.standard_normal((240, 5)), rng.standard_normal(240))),
    Script("first runs: image_pyramid", image_pyramid, lambda rng: (rng.uniform(size=(8, 32, 40)),)),
    Script("first runs: stencil_border", stencil_border, lambda rng: (rng.uniform(size=(30, 36)),)),
    Script("first runs: cross_entropy", cross_entropy,
           lambda rng: (rng.standard_normal((200, 7)), rng.integers(0, 7, 200))),
    Script("first runs: attention_heads", attention_heads,
           lambda rng: tuple(rng.standard_normal((2, 4, 16, 8)) for _ in range(3))),
    Script("first runs: nbody_energy", nbody_energy,
           lambda rng: (rng.standard_normal((6, 3)), rng.standard_normal((6, 3)) * 0.1)),
    Script("shapes: loss_history", loss_history,
           lambda rng: (rng.standard_normal((600, 6)), rng.standard_normal(600))),
    *(Script(name, run, inputs) for name, run, inputs in IDIOMS),
    *(Script(name, run, inputs) for name, run, inputs in APART),
    *(Script(name, run, inputs) for name, run, inputs in LATER),
    *(Script(name, run, inputs) for name, run, inputs in FRESH),
    *(Script(name, run, inputs) for name, run, inputs in UNSEEN),
    *(Script(name, run, inputs) for name, run, inputs in SIXTH),
    *(Script(name, run, inputs) for name, run, inputs in SEVENTH),
    *(Script(name, run, inputs) for name, run, inputs in EIGHTH),
    *(Script(name, run, inputs) for name, run, inputs in NINTH),
    *(Script(name, run, inputs) for name, run, inputs in TENTH),
    *(Script(name, run, inputs) for name, run, inputs in ELEVENTH),
    *(Script(name, run, inputs) for name, run, inputs in TWELFTH),
]


def mismatch(result, reference) -> str | None:
    """Why ``result`` disagrees with NumPy's ``reference`` (None if it agrees)."""
    pairs = zip(result, reference) if isinstance(reference, tuple) else [(result, reference)]
    for got, want in pairs:
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            return f"shape {got.shape}, NumPy {want.shape}"
        if not np.allclose(got, want, rtol=1e-6, atol=1e-9, equal_nan=True):
            return f"differs from NumPy by up to {np.nanmax(np.abs(got - want)):.2g}"
    return None


# The child process: one library, one script; one result line per run, the first cold.

def _namespace(library: str) -> ModuleType:
    if library == "JAX":
        import jax

        jax.config.update("jax_enable_x64", True)  # float64, as NumPy computes
        return importlib.import_module("jax.numpy")
    return importlib.import_module({"NumPy": "numpy", "plaidarray": "plaidarray"}[library])


def _compile_counters(xp: ModuleType) -> tuple[int, int] | None:
    if not hasattr(xp, "cache_info"):
        return None
    info = xp.cache_info()
    return info.compiles, info.disk_hits


def _emit(record: dict) -> None:
    print(RECORD + json.dumps(record), flush=True)


def child(library: str, script: Script, reruns: int, timeout: float) -> None:
    """Times the script once (cold or warm-disk) and then ``reruns`` times in this process.
    A run past ``timeout`` ends the process, its stack dumped (faulthandler needs no GIL)."""
    start = time.perf_counter()
    xp = _namespace(library)
    _emit({"import": time.perf_counter() - start})
    data = script.inputs(np.random.default_rng(0))
    args = [xp.asarray(a) for a in data]
    reference, rerun_seconds = None, 0.0
    for run in range(1 + reruns):
        if run > 1 and rerun_seconds > IN_PROCESS_SECONDS:
            break
        before = _compile_counters(xp)
        faulthandler.dump_traceback_later(timeout, exit=True)
        start = time.perf_counter()
        try:
            result, error = script.run(xp, *args), None
        except Exception as e:  # noqa: BLE001 - reported, as the benchmark's result
            result, error = None, f"{type(e).__name__}: {e}"
        seconds = time.perf_counter() - start
        faulthandler.cancel_dump_traceback_later()
        after = _compile_counters(xp)
        if error:
            return _emit({"error": error})
        rerun_seconds += seconds if run else 0.0
        if reference is None:
            reference = script.run(np, *data)
        record = {"seconds": seconds, "mismatch": mismatch(result, reference)}
        if before is not None:
            record.update(compiles=after[0] - before[0], disk_hits=after[1] - before[1])
        _emit(record)


# The parent: rounds of fresh processes, then the table.

def _text(output: str | bytes | None) -> str:
    """What a timed-out ``subprocess.run`` captured (bytes, despite ``text=True``)."""
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def run_child(library: str, script: Script, cache_dir: str, reruns: int, timeout: float) -> tuple[dict, list[dict]]:
    """(start-up record, one record per run) of a fresh process; a process that ended early
    adds a last record with its error."""
    env = {**os.environ, "PLAIDARRAY_CACHE_DIR": cache_dir,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    for name in ("PLAIDARRAY_CACHE_MAX_BYTES", "PLAIDARRAY_DUMP", "PLAIDARRAY_BACKEND", "JAX_COMPILATION_CACHE_DIR"):
        env.pop(name, None)
    command = [sys.executable, "-m", "benchmarks.eager", "--child", library, "--only", script.name,
               "--reruns", str(reruns), "--timeout", str(timeout)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=REPO,
                              timeout=timeout * (reruns + 3) + 60)
        stdout, stderr, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as e:  # a backstop: the child's own watchdog comes first
        stdout, stderr, code = (_text(e.stdout), _text(e.stderr), "killed")
    records = [json.loads(line[len(RECORD):]) for line in stdout.splitlines() if line.startswith(RECORD)]
    start_up, runs = (records[0], records[1:]) if records else ({}, [])
    if code != 0 and not (runs and runs[-1].get("error")):
        lines = stderr.strip().splitlines() or ["no output"]
        if "Timeout (" in stderr:  # faulthandler's dump: the innermost frames first
            error, shown = f"timeout after {timeout:g} s", stderr[stderr.rindex("Timeout ("):].splitlines()[:14]
        else:
            error, shown = f"exit {code}: {lines[-1]}", lines[-12:]
        runs.append({"error": error})
        print(f"  {library} {script.name}: {error}:\n    " + "\n    ".join(shown), file=sys.stderr)
    return start_up, runs


@dataclass
class Results:
    """Timed runs per (script name, column), the (script name, column) pairs whose run
    failed, and per (script name, library) the first problem (failure or wrong result)."""
    runs: dict[tuple[str, str], list[dict]] = field(default_factory=dict)
    failed: set[tuple[str, str]] = field(default_factory=set)
    problems: dict[tuple[str, str], str] = field(default_factory=dict)
    start_up: dict[str, list[dict]] = field(default_factory=dict)

    def add(self, script: Script, library: str, kind: str, start_up: dict, runs: list[dict]) -> None:
        """``runs`` of one process: the first of kind ``kind`` (cold, warm-disk), then reruns."""
        self.start_up.setdefault(library, []).append(start_up)
        for i, run in enumerate(runs):
            column = f"{library} {kind if i == 0 else 'in-proc'}"
            if "error" in run:
                self.failed.add((script.name, column))
            else:
                self.runs.setdefault((script.name, column), []).append(run)
            problem = run.get("error") or run.get("mismatch")
            if problem:
                self.problems.setdefault((script.name, library), f"{column}: {problem}")

    def has_failed(self, script: Script, library: str) -> bool:
        return any((script.name, f"{library} {kind}") in self.failed for kind in ("cold", "warm-disk", "in-proc"))

    def seconds(self, script: Script, column: str) -> float | None:
        runs = self.runs.get((script.name, column))
        return statistics.median(r["seconds"] for r in runs) if runs else None

    def count(self, script: Script, column: str, key: str) -> int | None:
        runs = self.runs.get((script.name, column))
        return int(statistics.median(r[key] for r in runs)) if runs else None


def measure(scripts: list[Script], repeat: int, reruns: int, timeout: float) -> Results:
    results = Results()
    for round_ in range(repeat):
        order = LIBRARIES[round_ % 3:] + LIBRARIES[:round_ % 3]
        for script in scripts:
            for library in order:
                if results.has_failed(script, library):
                    continue  # failures here are deterministic: not tried again
                print(f"round {round_ + 1}/{repeat}: {script.name} on {library}", file=sys.stderr)
                with tempfile.TemporaryDirectory() as cache_dir:
                    start_up, runs = run_child(library, script, cache_dir, reruns, timeout)
                    results.add(script, library, "cold", start_up, runs)
                    if library == "plaidarray" and runs and "error" not in runs[0]:
                        start_up, runs = run_child(library, script, cache_dir, 0, timeout)
                        results.add(script, library, "warm-disk", start_up, runs)
    return results


COLUMNS = ("NumPy cold", "JAX cold", "plaidarray cold", "plaidarray warm-disk", "NumPy in-proc", "JAX in-proc",
           "plaidarray in-proc")


def _format_time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _compiles_cell(results: Results, script: Script) -> str:
    cold = results.count(script, "plaidarray cold", "compiles")
    rerun = results.count(script, "plaidarray in-proc", "compiles")
    loads = results.count(script, "plaidarray warm-disk", "disk_hits")
    again = results.count(script, "plaidarray warm-disk", "compiles")
    cell = " / ".join("-" if n is None else str(n) for n in (cold, rerun))
    if loads is not None:
        cell += f" ({loads} loads" + (f", {again} compiled" if again else "") + ")"
    return cell


def _status_cell(results: Results, script: Script) -> str:
    problems = [results.problems[script.name, lib] for lib in LIBRARIES if (script.name, lib) in results.problems]
    text = "; ".join(p if len(p) < 120 else p[:117] + "..." for p in problems) or "ok"
    return text.replace("|", "\\|").replace("\n", " ")


def _total_row(results: Results, scripts: list[Script], label: str) -> str:
    """Whole-script cold seconds summed per library over the scripts it finished, and
    plaidarray's sum against NumPy's and JAX's over the scripts both finished (the
    shape-changing scripts' targets are such ratios)."""
    cells = []
    for column in COLUMNS:
        done = [t for s in scripts if (t := results.seconds(s, column)) is not None]
        cells.append(_format_time(sum(done) if done else None)
                     + ("" if len(done) == len(scripts) else f" ({len(done)} of {len(scripts)})"))
    ratios = []
    for kind, library in (("cold", "NumPy"), ("cold", "JAX"), ("in-proc", "NumPy")):
        both = [s for s in scripts if None not in (results.seconds(s, f"{library} {kind}"),
                                                    results.seconds(s, f"plaidarray {kind}"))]
        if both:
            theirs = sum(cast(float, results.seconds(s, f"{library} {kind}")) for s in both)
            ours = sum(cast(float, results.seconds(s, f"plaidarray {kind}")) for s in both)
            worst = max(cast(float, results.seconds(s, f"plaidarray {kind}")) /
                        cast(float, results.seconds(s, f"{library} {kind}")) for s in both)
            ratios.append(f"{kind} {ours / theirs:.3g}x {library} (worst script {worst:.3g}x)"
                          + ("" if len(both) == len(scripts) else f" ({len(both)})"))
    return f"| **{label}** | " + " | ".join(cells + ["", "", "", "; ".join(ratios)]) + " |"


def _ratio(results: Results, script: Script, kind: str) -> str:
    """plaidarray's time over NumPy's, for the ``kind`` of run (cold, in-proc)."""
    ours, theirs = results.seconds(script, f"plaidarray {kind}"), results.seconds(script, f"NumPy {kind}")
    return "-" if ours is None or not theirs else f"{ours / theirs:.3g}x"


def table(results: Results, scripts: list[Script]) -> str:
    header = ["script", *COLUMNS, "cold / NumPy", "in-proc / NumPy",
              "plaidarray compiles: cold / rerun (warm-disk loads)", "result ok"]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(COLUMNS) + 2) + "|---:|---|"]
    for s in scripts:
        times = []
        for column in COLUMNS:
            seconds = results.seconds(s, column)
            failed = seconds is None and (s.name, column) in results.failed
            times.append("failed" if failed else _format_time(None if seconds is None else seconds / s.calls))
        cells = [s.name, *times, _ratio(results, s, "cold"), _ratio(results, s, "in-proc"), _compiles_cell(results, s),
                 _status_cell(results, s)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(_total_row(results, scripts, "total"))
    for group in ("loops", "shapes", "first runs", "idioms", "apart", "later", "fresh", "unseen", "sixth", "seventh", "eighth",
                  "ninth", "tenth", "eleventh", "twelfth"):
        members = [s for s in scripts if s.name.startswith(group + ":")]
        if members:
            lines.append(_total_row(results, members, f"{group}: total"))
    return "\n".join(lines)


def start_up_line(results: Results) -> str:
    parts = []
    for library in LIBRARIES:
        records = [r for r in results.start_up.get(library, []) if r]
        if records:
            parts.append(f"{library} import {statistics.median(r['import'] for r in records):.2f} s")
    return "not timed above (medians per process; NumPy comes with the harness): " + "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.eager", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of fresh processes (default 3)")
    parser.add_argument("--reruns", type=int, default=5, help="in-process reruns per cold process (default 5)")
    parser.add_argument("--only", default="", help="run the scripts whose name contains this")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds allowed per run (default 120)")
    parser.add_argument("--child", choices=LIBRARIES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    scripts = [s for s in SCRIPTS if args.only in s.name]
    if args.child:
        return child(args.child, next(s for s in scripts if s.name == args.only), args.reruns, args.timeout)
    versions = ", ".join(f"{name} {importlib.metadata.version(dist)}"
                         for name, dist in (("NumPy", "numpy"), ("JAX", "jax"), ("plaidarray", "plaidarray")))
    print(f"{versions}; {os.cpu_count()} cores; {args.repeat} rounds, {args.reruns} in-process reruns, "
          f"timeout {args.timeout:g} s\n")
    results = measure(scripts, args.repeat, args.reruns, args.timeout)
    print(table(results, scripts))
    print(f"\n{start_up_line(results)}")


if __name__ == "__main__":
    main()
