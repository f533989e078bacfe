"""Differential tests of ``plaidarray.linalg`` against ``numpy.linalg``, on both backends.

Hypothesis draws the dtype (float32/float64/complex64/complex128), the stack and matrix
shapes and a seed; the values come from NumPy's generator, shaped into well-conditioned
problems (``A + n I`` with entries in [-1, 1], ``A A^H + n I`` for Hermitian positive
definite ones, exact rank-r products for matrix_rank), so that results are stable
enough to compare. Decompositions whose factors are not unique (eigenvectors, singular
vectors, Q) are checked by reconstruction and orthonormality; unique results are
compared with NumPy. Every new shape compiles on llvm-cpu, so the shapes are few and small.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import plaidarray as xp
import plaidarray.linalg as la
from device_choice import ON_HOST
from helpers import recorded_ops
from plaidarray.backend.reference import Evaluator

REAL = [np.dtype(np.float32), np.dtype(np.float64)]
FLOATING = REAL + [np.dtype(np.complex64), np.dtype(np.complex128)]
#: Tolerance relative to the result's magnitude.
TOL = {"f": {4: 5e-4, 8: 1e-10}, "c": {8: 5e-4, 16: 1e-10}}

dtypes = st.sampled_from(FLOATING)
batches = st.sampled_from([(), (2,), (2, 1)])
sizes = st.sampled_from([1, 2, 4])
seeds = st.integers(0, 2**32 - 1)


def tol(dtype) -> float:
    dtype = np.dtype(dtype)
    return TOL[dtype.kind][dtype.itemsize]


def random(seed: int, shape: tuple[int, ...], dtype) -> np.ndarray:
    """Entries uniform in [-1, 1] (real and imaginary parts for complex dtypes)."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.uniform(-1, 1, shape)
    return values.astype(dtype)


def invertible(seed: int, batch, n: int, dtype) -> np.ndarray:
    """Strictly diagonally dominant, so invertible and well conditioned."""
    return (random(seed, (*batch, n, n), dtype) + (n + 1) * np.eye(n)).astype(dtype)


def positive_definite(seed: int, batch, n: int, dtype) -> np.ndarray:
    a = random(seed, (*batch, n, n), dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def hermitian_part(a: np.ndarray) -> np.ndarray:
    """The Hermitian matrix whose lower triangle is ``a``'s (what eigh and cholesky read)."""
    lower = np.tril(a)
    return lower + np.conj(np.swapaxes(np.tril(a, -1), -1, -2))


def assert_close(got, want, *, dtype=None, scale: float = 1.0) -> None:
    """Same shape and dtype; values within ``tol * scale`` of the largest magnitude."""
    got, want = np.asarray(got), np.asarray(want)
    dtype = np.dtype(dtype) if dtype is not None else want.dtype
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    assert got.dtype == dtype, f"dtype {got.dtype} != {dtype}"
    magnitude = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol(dtype) * scale * magnitude)


def assert_orthonormal_columns(q: np.ndarray) -> None:
    gram = np.conj(np.swapaxes(q, -1, -2)) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), atol=10 * tol(q.dtype))


# --- decompositions ----------------------------------------------------------------------

@given(dtype=dtypes, batch=batches, n=sizes, seed=seeds, upper=st.booleans())
def test_cholesky(backend, dtype, batch, n, seed, upper):
    a = positive_definite(seed, batch, n, dtype)
    assert_close(la.cholesky(xp.asarray(a), upper=upper), np.linalg.cholesky(a, upper=upper))


@given(dtype=dtypes, batch=batches, n=sizes, seed=seeds)
def test_det_and_slogdet(backend, dtype, batch, n, seed):
    a = invertible(seed, batch, n, dtype) * np.where(np.arange(n) == 0, -1, 1).astype(dtype)  # some negative dets
    x = xp.asarray(a)
    want = np.linalg.det(a)
    assert_close(la.det(x), want, scale=10)
    result = la.slogdet(x)
    assert type(result).__name__ == "SlogdetResult" and result._fields == ("sign", "logabsdet")
    sign, logabsdet = np.linalg.slogdet(a)
    assert_close(result.sign, sign)
    assert_close(result.logabsdet, logabsdet, scale=10)


@given(dtype=dtypes, batch=batches, n=sizes, seed=seeds)
def test_inv(backend, dtype, batch, n, seed):
    a = invertible(seed, batch, n, dtype)
    assert_close(la.inv(xp.asarray(a)), np.linalg.inv(a), scale=10)


@given(dtype=dtypes, n=sizes, k=st.sampled_from([None, 1, 3]), seed=seeds,
       batches=st.sampled_from([((), ()), ((2,), ()), ((2, 1), (3,)), ((), (2,))]))
def test_solve(backend, dtype, n, k, seed, batches):
    """x2 is a vector (k None) or a stack of n x k right-hand sides that broadcasts."""
    a = invertible(seed, batches[0], n, dtype)
    b = random(seed + 1, (n,) if k is None else (*batches[1], n, k), dtype)
    assert_close(la.solve(xp.asarray(a), xp.asarray(b)), np.linalg.solve(a, b), scale=10)


@given(dtype=dtypes, batch=batches, n=sizes, seed=seeds)
def test_eigh(backend, dtype, batch, n, seed):
    a = positive_definite(seed, batch, n, dtype) - n * np.eye(n, dtype=dtype)  # eigenvalues of both signs
    a = a + np.tril(random(seed + 1, a.shape, dtype), -1)  # eigh reads the lower triangle only
    h = hermitian_part(a)
    result = la.eigh(xp.asarray(a))
    assert result._fields == ("eigenvalues", "eigenvectors")
    w, v = np.asarray(result.eigenvalues), np.asarray(result.eigenvectors)
    real = np.finfo(dtype).dtype
    assert_close(w, np.linalg.eigvalsh(h), dtype=real, scale=10)
    assert v.shape == a.shape and v.dtype == dtype
    assert_close(h @ v, v * w[..., None, :], dtype=dtype, scale=10)
    assert_orthonormal_columns(v)
    assert_close(la.eigvalsh(xp.asarray(a)), np.linalg.eigvalsh(h), dtype=real, scale=10)


@given(dtype=dtypes, batch=batches, m=sizes, n=sizes, seed=seeds, full=st.booleans())
def test_svd(backend, dtype, batch, m, n, seed, full):
    a = random(seed, (*batch, m, n), dtype)
    u, s, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=full))
    want_u, want_s, want_vh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, vh.shape, u.dtype, vh.dtype) == (want_u.shape, want_vh.shape, want_u.dtype, want_vh.dtype)
    assert_close(s, want_s, scale=10)
    k = min(m, n)
    assert_close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, scale=10)
    assert_orthonormal_columns(u)
    assert_orthonormal_columns(np.conj(np.swapaxes(vh, -1, -2)))
    assert_close(la.svdvals(xp.asarray(a)), want_s, scale=10)


@given(dtype=dtypes, batch=batches, shape=st.sampled_from([(2, 5), (5, 2), (4, 4), (3, 1)]), seed=seeds)
def test_svd_singular_vectors_are_numpys(backend, dtype, batch, shape, seed):
    """Singular vectors are unique up to a sign (a phase for complex) per pair, which
    LAPACK fixes; clients' results depend on NumPy's choice (SciPy's kmeans2 draws its
    initial centroids through Vh), so the vectors of the reduced SVD are NumPy's own."""
    a = random(seed, (*batch, *shape), dtype)
    u, _, vh = (np.asarray(r) for r in la.svd(xp.asarray(a), full_matrices=False))
    want_u, _, want_vh = np.linalg.svd(a, full_matrices=False)
    assert_close(u, want_u, scale=100)
    assert_close(vh, want_vh, scale=100)


@given(dtype=dtypes, batch=batches, m=sizes, n=sizes, seed=seeds, mode=st.sampled_from(["reduced", "complete"]))
def test_qr(backend, dtype, batch, m, n, seed, mode):
    a = random(seed, (*batch, m, n), dtype)
    result = la.qr(xp.asarray(a), mode=mode)
    assert result._fields == ("Q", "R")
    q, r = np.asarray(result.Q), np.asarray(result.R)
    want_q, want_r = np.linalg.qr(a, mode=mode)
    assert (q.shape, r.shape, q.dtype, r.dtype) == (want_q.shape, want_r.shape, want_q.dtype, want_r.dtype)
    assert_close(q @ r, a, scale=10)
    assert_orthonormal_columns(q)
    np.testing.assert_array_equal(r, np.triu(r))


@given(dtype=dtypes, batch=batches, m=sizes, n=sizes, seed=seeds, rtol=st.sampled_from([None, 1e-3]))
def test_pinv(backend, dtype, batch, m, n, seed, rtol):
    a = random(seed, (*batch, m, n), dtype) + np.eye(m, n, dtype=dtype) * max(m, n)  # well conditioned
    assert_close(la.pinv(xp.asarray(a), rtol=rtol), np.linalg.pinv(a, rtol=rtol), scale=10)


@given(dtype=dtypes, batch=batches, m=sizes, n=sizes, rank=st.integers(0, 4), seed=seeds,
       array_rtol=st.booleans())
def test_matrix_rank(backend, dtype, batch, m, n, rank, seed, array_rtol):
    rank = min(rank, m, n)
    a = (random(seed, (*batch, m, rank), dtype) @ random(seed + 1, (*batch, rank, n), dtype)).astype(dtype)
    rtol = np.full(batch, 1e-3, np.finfo(dtype).dtype) if array_rtol else None
    got = la.matrix_rank(xp.asarray(a), rtol=None if rtol is None else xp.asarray(rtol))
    want = np.linalg.matrix_rank(a, rtol=rtol)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert np.asarray(got).dtype == np.int64


@given(dtype=dtypes, batch=batches, m=sizes, n=sizes, seed=seeds, keepdims=st.booleans(),
       ord=st.sampled_from(["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]))
def test_matrix_norm(backend, dtype, batch, m, n, seed, keepdims, ord):
    a = random(seed, (*batch, m, n), dtype)
    want = np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims)
    assert_close(la.matrix_norm(xp.asarray(a), ord=ord, keepdims=keepdims), want, scale=10)


@given(dtype=dtypes, batch=batches, n=sizes, power=st.integers(-3, 6), seed=seeds)
def test_matrix_power(backend, dtype, batch, n, power, seed):
    a = invertible(seed, batch, n, dtype) / (n + 1)
    assert_close(la.matrix_power(xp.asarray(a), power), np.linalg.matrix_power(a, power), scale=100)


# --- graphs of ordinary ops ----------------------------------------------------------------

@given(dtype=dtypes, shape=st.sampled_from([(3,), (2, 3), (4, 3, 2)]), seed=seeds, keepdims=st.booleans(),
       ord=st.sampled_from([1, 2, 0, -1, -2, np.inf, -np.inf, 3, 0.5]),
       axis=st.sampled_from([None, 0, -1, (0, -1)]))
def test_vector_norm(backend, dtype, shape, seed, keepdims, ord, axis):
    assume(not isinstance(axis, tuple) or len(shape) > 1)
    a = random(seed, shape, dtype)
    a[..., 0] = 0  # ord 0 counts non-zeros; negative orders meet a zero
    with np.errstate(divide="ignore"):
        want = np.linalg.vector_norm(a, ord=ord, axis=axis, keepdims=keepdims)
    assert_close(la.vector_norm(xp.asarray(a), ord=ord, axis=axis, keepdims=keepdims), want, scale=10)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.int64, np.bool_])
@pytest.mark.parametrize("ord", [2, 1, np.inf, 0])
def test_norms_of_integers_are_in_float64_as_numpys(backend, dtype, ord):
    """Beyond the standard (floating-point only), as NumPy's ``norm`` takes them."""
    a = (np.arange(-6, 6).reshape(3, 4) % 5 - 2).astype(dtype)
    got = la.vector_norm(xp.asarray(a), ord=ord, axis=1)
    assert got.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(got), np.linalg.vector_norm(a.astype(np.float64), ord=ord, axis=1))
    if ord != 0:
        np.testing.assert_allclose(np.asarray(la.matrix_norm(xp.asarray(a), ord=ord if ord != 2 else "fro")),
                                   np.linalg.matrix_norm(a.astype(np.float64), ord=ord if ord != 2 else "fro"))


@pytest.mark.parametrize(("shape", "axis"), [((0,), None), ((3, 0), 1), ((0, 4), 0), ((0, 0), None), ((2, 0, 3), (1, 2))])
def test_the_infinity_norm_of_no_values_is_zero_as_numpys(backend, shape, axis):
    """The largest magnitude of none is 0, as NumPy's norms give it (``max`` alone has no
    identity: it raised, naming ``max``); the matrix norm's largest row sum of no rows too."""
    a = np.zeros(shape)
    pairs = [(la.vector_norm(xp.asarray(a), ord=np.inf, axis=axis), np.linalg.vector_norm(a, ord=np.inf, axis=axis))]
    if len(shape) == 2:
        pairs += [(la.matrix_norm(xp.asarray(a), ord=ord), np.linalg.matrix_norm(a, ord=ord)) for ord in (np.inf, 1, 2)]
    for got, expected in pairs:
        np.testing.assert_array_equal(np.asarray(got), expected, strict=True)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("name", ["det", "slogdet", "inv", "cholesky", "eigvalsh", "matrix_rank", "pinv", "svdvals"])
def test_integer_matrices_are_taken_in_float64_as_numpys(backend, dtype, name):
    """Beyond the standard (floating-point only), as NumPy takes them: the result is the
    float64 matrices' (a determinant of -3 is -3.0000000000000004, not truncated to -2)."""
    base = np.array([[[-3, 0, 0], [0, 1, 0], [0, 0, 1]], [[2, 1, 0], [1, 3, 1], [0, 1, 4]],
                     [[4, 1, 1], [1, 5, 2], [1, 2, 6]]])
    if dtype == np.bool_:  # identities, one with its upper triangle set (determinant 1)
        a = np.stack([np.eye(3, dtype=bool), np.triu(np.ones((3, 3), bool)), np.eye(3, dtype=bool)])
    else:
        a = (np.abs(base) if np.dtype(dtype).kind == "u" else base).astype(dtype)
    if name == "cholesky" and dtype == np.bool_:
        a = a[::2]  # the identities are the positive definite ones
    elif name == "cholesky":
        a = a[1:]  # positive definite
    got, want = getattr(la, name)(xp.asarray(a)), getattr(np.linalg, name)(a.astype(np.float64))
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)


@given(dtype=st.sampled_from(REAL + [np.dtype(np.int32)]), shape=st.sampled_from([(3, 4), (2, 4, 3), (1, 5)]),
       offset=st.integers(-6, 6), seed=seeds)
def test_diagonal_and_trace(backend, dtype, shape, offset, seed):
    a = (random(seed, shape, np.float64) * 10).astype(dtype)
    np.testing.assert_array_equal(np.asarray(la.diagonal(xp.asarray(a), offset=offset)),
                                  np.linalg.diagonal(a, offset=offset), strict=True)
    got = np.asarray(la.trace(xp.asarray(a), offset=offset))
    np.testing.assert_allclose(got, np.linalg.trace(a, offset=offset, dtype=got.dtype), rtol=tol(np.float32))
    assert got.dtype == (np.int64 if dtype.kind == "i" else dtype)


@pytest.mark.parametrize("shape, offset", [((4, 4), 0), ((3, 5), 1), ((5, 3), -2), ((2, 3, 4), 0), ((2, 2, 3, 3), 1)])
def test_a_pending_diagonal_is_one_strided_slice(shape, offset):
    """The diagonal of a pending matrix (or stack) is one strided slice of it flattened
    (the slice's step a run-time size): padding the flattened matrix to rows of n + 1 and
    slicing their first column was five ops and a constant, each a node of every graph
    that reads a trace. Its values are NumPy's."""
    a = random(3, shape, np.float64)
    made = la.diagonal(xp.asarray(a) * 2.0, offset=offset)
    assert [op for op in recorded_ops(made) if op != "reshape"] == ["slice", "multiply", "broadcast_in_dim"]
    np.testing.assert_array_equal(np.asarray(made), np.linalg.diagonal(a * 2.0, offset=offset), strict=True)


@given(dtype=dtypes, shapes=st.sampled_from([((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 3))]),
       axis=st.sampled_from([-1, None]), seed=seeds)
def test_cross(backend, dtype, shapes, axis, seed):
    a, b = random(seed, shapes[0], dtype), random(seed + 1, shapes[1], dtype)
    kwargs = {} if axis is None else {"axis": axis}
    assert_close(la.cross(xp.asarray(a), xp.asarray(b), **kwargs), np.linalg.cross(a, b, **kwargs))


def test_cross_along_another_axis(backend):
    a, b = random(1, (3, 2), np.float64), random(2, (3, 2), np.float64)
    assert_close(la.cross(xp.asarray(a), xp.asarray(b), axis=-2), np.cross(a, b, axis=-2))
    with pytest.raises(ValueError):
        la.cross(xp.asarray(a), xp.asarray(b))


@given(dtype=st.sampled_from(FLOATING + [np.dtype(np.int64)]), n=st.integers(0, 4), m=st.integers(0, 4), seed=seeds)
def test_outer(backend, dtype, n, m, seed):
    a, b = random(seed, (n,), np.float64) * 8, random(seed + 1, (m,), np.float64) * 8
    a, b = a.astype(dtype), b.astype(dtype)
    np.testing.assert_array_equal(np.asarray(la.outer(xp.asarray(a), xp.asarray(b))), np.linalg.outer(a, b), strict=True)


def test_aliases_of_the_main_namespace(backend):
    a, b = random(3, (2, 3, 4), np.float64), random(4, (2, 4, 3), np.float64)
    x, y = xp.asarray(a), xp.asarray(b)
    assert la.matmul is xp.matmul and la.tensordot is xp.tensordot and la.vecdot is xp.vecdot
    assert la.matrix_transpose is xp.matrix_transpose
    assert_close(la.matmul(x, y), np.linalg.matmul(a, b))
    assert_close(la.tensordot(x, y, axes=([1, 2], [2, 1])), np.linalg.tensordot(a, b, axes=([1, 2], [2, 1])))
    assert_close(la.vecdot(x, x), np.linalg.vecdot(a, a))
    np.testing.assert_array_equal(np.asarray(la.matrix_transpose(x)), np.linalg.matrix_transpose(a))


# --- failures, edge cases, errors ----------------------------------------------------------

def test_failures_give_nan_where_numpy_raises(backend):
    """Only the failing matrix of a stack is NaN; the others are computed."""
    singular = np.stack([np.ones((3, 3)), 2 * np.eye(3)])
    inverse = np.asarray(la.inv(xp.asarray(singular)))
    assert np.isnan(inverse[0]).all()
    np.testing.assert_allclose(inverse[1], np.eye(3) / 2)
    assert np.isnan(np.asarray(la.solve(xp.asarray(singular), xp.asarray(np.ones(3))))[0]).all()
    np.testing.assert_array_equal(np.asarray(la.det(xp.asarray(singular[:1]))), [0.0])
    sign, logabsdet = la.slogdet(xp.asarray(singular[:1]))
    np.testing.assert_array_equal(np.asarray(sign), [0.0])
    np.testing.assert_array_equal(np.asarray(logabsdet), [-np.inf])
    not_definite = xp.asarray(np.stack([-np.eye(2), 4 * np.eye(2)]))
    if not ON_HOST:  # a GPU's jit runs a decomposition's function eagerly (docs/gpu.md): as outside jit
        with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
            xp.jit(la.cholesky)(not_definite)
        return
    factor = np.asarray(xp.jit(la.cholesky)(not_definite))  # as in JAX
    assert np.isnan(factor[0]).all()
    np.testing.assert_allclose(factor[1], 2 * np.eye(2))


@pytest.mark.parametrize("matrix", [[[1.0, 2.0], [2.0, 1.0]], [[-1.0]], [[0.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, -1.0]]])
def test_cholesky_of_a_matrix_that_is_not_positive_definite_raises_as_numpy_does(backend, matrix):
    """Outside jit, as in NumPy (scikit-learn catches it to explain a singular covariance);
    one failing matrix of a stack is enough."""
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(np.asarray(matrix))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        la.cholesky(xp.asarray(matrix))
    stack = np.stack([np.eye(len(matrix)), np.asarray(matrix)])
    with pytest.raises(np.linalg.LinAlgError):
        la.cholesky(xp.asarray(stack), upper=True)
    deep = np.stack([np.eye(len(matrix))] * 3 + [np.asarray(matrix)]).reshape(2, 1, 2, len(matrix), len(matrix))
    with pytest.raises(np.linalg.LinAlgError):
        la.cholesky(xp.asarray(deep))


def test_cholesky_of_matrices_holding_nan_gives_nan_without_raising(backend):
    """A matrix with NaN has a NaN factor, as NumPy's, and is no failure to raise for
    (``factor_failed``: a NaN factor of a matrix without NaN is), in stacks of any rank."""
    spd = np.array([[4.0, 2.0], [2.0, 3.0]])
    for stack in (np.stack([spd, np.full((2, 2), np.nan)]), np.stack([spd] * 3 + [np.full((2, 2), np.nan)]).reshape(2, 2, 2, 2)):
        factor = np.asarray(la.cholesky(xp.asarray(stack)))
        np.testing.assert_allclose(factor.reshape(-1, 2, 2)[0], np.linalg.cholesky(spd))
        assert np.isnan(factor.reshape(-1, 2, 2)[-1][np.tril_indices(2)]).all()


def test_cholesky_of_a_matrix_with_nan_is_nan_as_in_numpy(backend):
    a = np.array([[np.nan, 0.0], [0.0, 1.0]])
    assert_close(la.cholesky(xp.asarray(a)), np.linalg.cholesky(a))


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3), (3, 0), (0, 3)])
def test_empty_matrices(backend, shape):
    a = np.zeros(shape)
    x = xp.asarray(a)
    for got, want in zip(la.svd(x), np.linalg.svd(a)):
        assert_close(got, want)
    for mode in ("reduced", "complete"):
        for got, want in zip(la.qr(x, mode=mode), np.linalg.qr(a, mode=mode)):
            assert_close(got, want)
    if shape[-1] == shape[-2]:
        assert_close(la.det(x), np.linalg.det(a))
        assert_close(la.inv(x), np.linalg.inv(a))
        assert_close(la.cholesky(x), np.linalg.cholesky(a))
        assert_close(la.eigvalsh(x), np.linalg.eigvalsh(a))


def test_errors():
    for fn in (la.cholesky, la.det, la.inv, la.eigh, la.svd, la.qr, la.svdvals, la.slogdet):
        with pytest.raises(TypeError, match="unsupported dtype <U1"):
            fn(np.array([["a"]]))
    with pytest.raises(ValueError):
        la.det(xp.asarray(np.ones((2, 3))))
    with pytest.raises(ValueError):
        la.qr(xp.asarray(np.eye(2)), mode="r")
    with pytest.raises(ValueError):
        la.matrix_norm(xp.asarray(np.eye(2)), ord=3)
    with pytest.raises(ValueError):
        la.solve(xp.asarray(np.eye(3)), xp.asarray(np.ones(2)))


def test_llvm_cpu_runs_the_decompositions_as_compiled_code():
    xp.set_backend("llvm-cpu")
    try:
        a = positive_definite(7, (2,), 5, np.float64)
        x = xp.asarray(a)
        before = Evaluator.evaluated
        results = [la.cholesky(x), la.eigh(x).eigenvectors, la.svd(x).U, la.qr(x).Q, la.inv(x), la.det(x),
                   la.pinv(x), la.matrix_norm(x, ord=2)]
        values = [np.asarray(r) for r in results]
        assert Evaluator.evaluated == before
        np.testing.assert_allclose(values[0], np.linalg.cholesky(a))
        np.testing.assert_allclose(values[4], np.linalg.inv(a), atol=1e-12)
    finally:
        xp.set_backend(None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_eig_satisfies_the_eigen_equation_and_matches_numpy_eigenvalues(backend, dtype):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 5, 5)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = (a + 1j * rng.standard_normal(a.shape)).astype(dtype)
    w, v = (np.asarray(r) for r in xp.linalg.eig(xp.asarray(a)))
    assert w.dtype == np.result_type(dtype, np.complex64) and v.shape == a.shape
    tol = 1e-3 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * 10)
    only = np.asarray(xp.linalg.eigvals(xp.asarray(a)))
    expected = np.linalg.eigvals(a)
    for got_row, ref_row in zip(only, expected):  # same multiset, LAPACK's order may differ
        for g in got_row:
            assert np.min(np.abs(ref_row - g)) < tol * 10


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 7), batch=st.sampled_from([(), (2,)]))
def test_eigenvalues_of_a_real_matrix_are_real_or_exact_conjugate_pairs(backend, dtype, seed, n, batch):
    """As the real geev gives them (NumPy's): SciPy's ``poly`` keeps a real dtype only when
    the imaginary parts cancel exactly (``filtfilt`` of real input was complex). The count of
    real roots is NumPy's for matrices whose eigenvalues are apart."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n)).astype(dtype)
    expected = np.linalg.eigvals(a.astype(np.float64)).reshape(-1, n)
    for name, got in (("eigvals", xp.linalg.eigvals(xp.asarray(a))), ("eig", xp.linalg.eig(xp.asarray(a))[0])):
        for row, ref in zip(np.asarray(got).reshape(-1, n), expected):
            np.testing.assert_array_equal(np.sort(row.imag), np.sort(-row.imag), err_msg=f"{name}: not exact pairs")
            gaps = np.where(np.eye(n, dtype=bool), np.inf, np.abs(ref[:, None] - ref[None, :]))
            if gaps.min(initial=np.inf) > 1e-2:
                assert (row.imag == 0).sum() == (ref.imag == 0).sum(), f"{name}: {row} vs NumPy's {ref}"
                tol = 1e-3 if dtype == np.float32 else 1e-9
                for value in row:
                    assert np.min(np.abs(ref - value)) < tol * max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.bool_])
def test_linalg_and_fft_take_integers_and_bools_in_float64_as_numpy(backend, dtype):
    """Beyond the standard (its inputs "should" be floating-point): NumPy's linalg and fft
    compute integer and bool arrays in float64, and so does plaidarray."""
    matrix = np.array([[4, 1, 0], [2, 3, 1], [0, 1, 5]]).astype(dtype)
    if dtype is np.bool_:
        matrix = np.eye(3, dtype=bool) | (matrix > 3)
    x = xp.asarray(matrix)
    wide = matrix.astype(np.float64)
    for name, expected in (("det", np.linalg.det(wide)), ("inv", np.linalg.inv(wide)),
                           ("solve", np.linalg.solve(wide, wide[:, 0])), ("eigvalsh", np.linalg.eigvalsh(wide))):
        got = getattr(xp.linalg, name)(x) if name != "solve" else xp.linalg.solve(x, x[:, 0])
        assert got.dtype == xp.float64, name
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-12)
    signal = matrix.reshape(-1)
    for name in ("fft", "rfft", "ihfft"):
        got = getattr(xp.fft, name)(xp.asarray(signal))
        expected = getattr(np.fft, name)(signal.astype(np.float64))
        assert got.dtype == xp.complex128, name
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-12)
