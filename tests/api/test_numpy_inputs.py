"""Every chapter's functions take NumPy arrays where they take arrays, as jax.numpy does
(Dask calls the function given to ``map_blocks`` on NumPy arrays to learn its result's
dtype): the result is NumPy's."""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp
from helpers import assert_same

A = np.arange(1.0, 7.0).reshape(2, 3)
M = np.array([[4.0, 1.0], [1.0, 3.0]])
V = np.array([3.0, -1.0, 2.0, 2.0])

#: (function on NumPy inputs, NumPy's answer)
CALLS = {
    "zeros_like": (lambda: xp.zeros_like(A), lambda: np.zeros_like(A)),
    "tril": (lambda: xp.tril(A), lambda: np.tril(A)),
    "meshgrid": (lambda: xp.meshgrid(V, V[:2])[0], lambda: np.meshgrid(V, V[:2])[0]),
    "astype": (lambda: xp.astype(A, xp.float32), lambda: A.astype(np.float32)),
    "exp": (lambda: xp.exp(A), lambda: np.exp(A)),
    "add": (lambda: xp.add(A, A), lambda: A + A),
    "take": (lambda: xp.take(V, np.array([3, 0])), lambda: np.take(V, [3, 0])),
    "matmul": (lambda: xp.matmul(A, A.T), lambda: A @ A.T),
    "vecdot": (lambda: xp.vecdot(A, A), lambda: np.sum(A * A, axis=-1)),
    "reshape": (lambda: xp.reshape(A, (3, 2)), lambda: A.reshape(3, 2)),
    "concat": (lambda: xp.concat([A, A]), lambda: np.concatenate([A, A])),
    "stack": (lambda: xp.stack([V, V]), lambda: np.stack([V, V])),
    "flip": (lambda: xp.flip(A), lambda: np.flip(A)),
    "roll": (lambda: xp.roll(V, 1), lambda: np.roll(V, 1)),
    "broadcast_arrays": (lambda: xp.broadcast_arrays(V[:3], A)[0], lambda: np.broadcast_arrays(V[:3], A)[0]),
    "argmax": (lambda: xp.argmax(V), lambda: np.argmax(V)),
    "where": (lambda: xp.where(V > 0, V, 0.0), lambda: np.where(V > 0, V, 0.0)),
    "nonzero": (lambda: xp.nonzero(V - 2.0)[0], lambda: np.nonzero(V - 2.0)[0]),
    "unique_values": (lambda: xp.unique_values(V), lambda: np.unique(V)),
    "sort": (lambda: xp.sort(V), lambda: np.sort(V)),
    "argsort": (lambda: xp.argsort(V, stable=True), lambda: np.argsort(V, kind="stable")),
    "sum": (lambda: xp.sum(A, axis=0), lambda: np.sum(A, axis=0)),
    "mean": (lambda: xp.mean(A), lambda: np.mean(A)),
    "max": (lambda: xp.max(A), lambda: np.max(A)),
    "cumulative_sum": (lambda: xp.cumulative_sum(V), lambda: np.cumsum(V)),
    "all": (lambda: xp.all(A > 0), lambda: np.all(A > 0)),
    "diff": (lambda: xp.diff(V), lambda: np.diff(V)),
    "linalg.inv": (lambda: xp.linalg.inv(M), lambda: np.linalg.inv(M)),
    "linalg.solve": (lambda: xp.linalg.solve(M, V[:2]), lambda: np.linalg.solve(M, V[:2])),
    "linalg.det": (lambda: xp.linalg.det(M), lambda: np.linalg.det(M)),
    "linalg.cholesky": (lambda: xp.linalg.cholesky(M), lambda: np.linalg.cholesky(M)),
    "linalg.vector_norm": (lambda: xp.linalg.vector_norm(V), lambda: np.linalg.norm(V)),
    "linalg.matrix_norm": (lambda: xp.linalg.matrix_norm(A), lambda: np.linalg.norm(A)),
    "linalg.matrix_power": (lambda: xp.linalg.matrix_power(M, 3), lambda: np.linalg.matrix_power(M, 3)),
    "fft.fft": (lambda: xp.fft.fft(V), lambda: np.fft.fft(V)),
    "fft.rfft": (lambda: xp.fft.rfft(V), lambda: np.fft.rfft(V)),
    "fft.fftshift": (lambda: xp.fft.fftshift(V), lambda: np.fft.fftshift(V)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_numpy_arrays_are_taken(name):
    ours, numpy = CALLS[name]
    assert_same(ours(), numpy(), rtol=1e-12, atol=1e-12, signed_zeros=False, err_msg=name)


def test_other_objects_are_still_refused():
    with pytest.raises(TypeError, match="sum: expected a plaidarray array, got list"):
        xp.sum([1.0, 2.0])


@pytest.mark.parametrize(("call", "expected"), [
    (lambda m: m.exp(1j * 0.5), np.exp(1j * 0.5)), (lambda m: m.sqrt(2.0), np.sqrt(2.0)),
    (lambda m: m.sum(3), np.sum(3)), (lambda m: m.abs(-2), np.abs(-2)), (lambda m: m.sign(-2.5), np.sign(-2.5)),
    (lambda m: m.logical_not(True), np.logical_not(True)), (lambda m: m.real(2 - 3j), np.real(2 - 3j)),
])
def test_python_scalars_where_an_array_is_expected_are_numpys_0d_arrays(backend, call, expected):
    """NumPy and JAX take a Python scalar wherever an array goes (``xp.exp(1j * theta)``):
    a 0-d array of the scalar's default dtype, NumPy's value and dtype."""
    got = call(xp)
    assert got.shape == () and got.dtype == np.asarray(expected).dtype
    assert np.asarray(got) == expected


def test_a_python_int_beyond_the_default_integer_is_refused_where_an_array_is_expected():
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        xp.abs(2 ** 70)
