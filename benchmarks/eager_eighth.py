"""More eager scripts for ``benchmarks/eager.py``: the ``eighth:`` group.

An eighth batch, written on 2026-12-07 before any change measured on it, of kinds a first
run meets with dtypes and functions the other groups call little: a sliding minimum and
maximum by ``stack`` of shifted slices over a growing signal, a log-sum-exp over rows of
batches of varying height, labels counted by comparing them with ``arange`` (a broadcast
``==`` summed), ``linalg.cross`` of batches of 3-vectors, int32 bit arithmetic (shifts, xor,
and) read as a count each step, float32 standardisation of prefixes, points of a
``meshgrid`` of growing size counted within a radius, values past a falling threshold found
by ``nonzero`` and gathered, determinants and inverses of growing blocks, and complex128
rotations of a phasor read at each step. Each entry is (name, script, inputs), as
``eager.Script`` takes them.
"""

from __future__ import annotations

import numpy as np


def moving_extremes(xp, x):
    """Each prefix's sliding minimum and maximum over 5 samples (a stack of shifted
    slices), their largest spread read."""
    found = []
    for n in range(30, x.shape[0] + 1, 25):
        part = x[:n]
        shifted = xp.stack([part[k:n - 4 + k] for k in range(5)])
        found.append(float(xp.max(xp.max(shifted, axis=0) - xp.min(shifted, axis=0))))
    return found


def logsumexp_rows(xp, scores):
    """A batch of rows of varying height: each row's log-sum-exp (shifted by its
    maximum), the batch's mean read."""
    found = []
    for start in range(0, scores.shape[0] - 8, 11):
        batch = scores[start:start + 8 + start % 9]
        top = xp.max(batch, axis=1, keepdims=True)
        lse = xp.log(xp.sum(xp.exp(batch - top), axis=1)) + top[:, 0]
        found.append(float(xp.mean(lse)))
    return found


def label_histogram(xp, labels):
    """Each batch's labels counted by comparing them with ``arange`` (a broadcast ``==``
    summed down), the most common label and its count read."""
    found = []
    kinds = xp.arange(12)
    for start in range(0, labels.shape[0] - 50, 37):
        batch = labels[start:start + 50 + start % 13]
        counts = xp.sum(batch[:, None] == kinds[None, :], axis=0)
        found.append((int(xp.argmax(counts)), int(xp.max(counts))))
    return found


def batch_cross(xp, u, v):
    """Cross products of batches of 3-vectors of growing count, the mean length of the
    products read, and how many point up."""
    found = []
    for n in range(5, u.shape[0] + 1, 9):
        w = xp.linalg.cross(u[:n], v[:n])
        found.append((float(xp.mean(xp.linalg.vector_norm(w, axis=1))), int(xp.count_nonzero(w[:, 2] > 0))))
    return found


def integer_bits(xp, seeds):
    """An int32 xorshift-like scramble of a vector, step by step, the count of values with
    their low bit set read at each step."""
    state = xp.asarray(seeds, dtype=xp.int32)
    found = []
    for _ in range(16):
        state = state ^ xp.bitwise_left_shift(state & 0x0FFF, 3)
        state = state ^ xp.bitwise_right_shift(state, 5)
        found.append(int(xp.sum(state & 1)))
    return found


def float32_standardised(xp, x):
    """float32 prefixes standardised (mean 0, deviation 1), the largest magnitude read."""
    found = []
    for n in range(16, x.shape[0] + 1, 24):
        part = x[:n]
        z = (part - xp.mean(part)) / xp.std(part)
        found.append(float(xp.max(xp.abs(z))))
    return found


def radial_counts(xp, steps):
    """Points of a ``meshgrid`` of a growing square grid counted within a radius of its centre."""
    found = []
    for n in range(4, 4 + int(steps[0])):
        axis = xp.arange(n, dtype=xp.float64) - (n - 1) / 2.0
        gx, gy = xp.meshgrid(axis, axis)
        found.append(int(xp.count_nonzero(gx * gx + gy * gy <= (n / 2.0) ** 2)))
    return found


def threshold_positions(xp, x):
    """Positions past a falling threshold found by ``nonzero``, the values there gathered,
    their count and sum read."""
    found = []
    for k in range(14):
        positions = xp.nonzero(x > 2.0 - 0.15 * k)[0]
        picked = xp.take(x, positions)
        found.append((int(positions.shape[0]), float(xp.sum(picked))))
    return found


def block_determinants(xp, a):
    """The determinant of each leading block of growing size, and the trace of its inverse."""
    found = []
    for n in range(2, a.shape[0] + 1):
        block = a[:n, :n]
        found.append((float(xp.linalg.det(block)), float(xp.linalg.trace(xp.linalg.inv(block)))))
    return found


def phasor_rotation(xp, z):
    """complex128 phasors rotated a little more at each step, the real part of their sum read."""
    found = []
    for step in range(1, 13):
        turn = xp.exp(xp.asarray(1j * 0.1 * step))
        z = z * turn
        found.append(float(xp.real(xp.sum(z))))
    return found


def _well_conditioned(rng: np.random.Generator) -> tuple[np.ndarray]:
    return (rng.standard_normal((8, 8)) + 4.0 * np.eye(8),)


EIGHTH = [
    ("eighth: moving_extremes", moving_extremes, lambda rng: (np.cumsum(rng.standard_normal(300)),)),
    ("eighth: logsumexp_rows", logsumexp_rows, lambda rng: (rng.standard_normal((200, 6)) * 3.0,)),
    ("eighth: label_histogram", label_histogram, lambda rng: (rng.integers(0, 12, 600),)),
    ("eighth: batch_cross", batch_cross, lambda rng: (rng.standard_normal((80, 3)), rng.standard_normal((80, 3)))),
    ("eighth: integer_bits", integer_bits, lambda rng: (rng.integers(1, 2**20, 256).astype(np.int32),)),
    ("eighth: float32_standardised", float32_standardised,
     lambda rng: ((rng.standard_normal(250) * 2.0 + 1.0).astype(np.float32),)),
    ("eighth: radial_counts", radial_counts, lambda rng: (np.array([14]),)),
    ("eighth: threshold_positions", threshold_positions, lambda rng: (rng.standard_normal(1500),)),
    ("eighth: block_determinants", block_determinants, _well_conditioned),
    ("eighth: phasor_rotation", phasor_rotation,
     lambda rng: (np.exp(1j * rng.uniform(0.0, 2.0 * np.pi, 64)),)),
]
