"""The Array API ``linalg`` extension (revision 2024.12): ``plaidarray.linalg``.

Functions without a decomposition (cross, diagonal, outer, trace, the norms that are
sums and extrema, matrix_power) are graphs of the ordinary HLO ops. Decompositions
record a ``custom_call`` (plaidarray/hlo/ops/custom_call.py) that the llvm-cpu
backend runs as a LAPACK routine (docs/custom-calls.md); det, slogdet, inv, pinv,
matrix_rank and the spectral norms are built on them.

Like every plaidarray function these only record a graph. So where NumPy raises
LinAlgError (inv or solve of an exactly singular matrix, eigh or svd without
convergence), the results for the matrices concerned are NaN instead: the error is only
known once the value is computed. ``cholesky`` is the exception: libraries use its
LinAlgError to test positive definiteness, so it computes its factor at the call and
raises as NumPy does (outside ``jit``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, cast

import numpy as np

from . import dtypes as dt
from .api import creation, manipulation
from .api import elementwise as ew
from .api import statistical as stats
from .api.graph import (as_int, broadcast_shapes, broadcast_to, check_array, check_category, convert, in_float64,
                        normalize_axes, op, reshape, traced_value)
from .api.linear_algebra import matmul, matrix_transpose, tensordot, vecdot
from .api.indexing import take_along_axis
from .api.searching import argmin, where
from .api.recipes import recorded
from .api.views import Diagonal
from .hlo.shape import TupleShape
from .trace.array import Array
from .trace.node import Node
from .trace.tracing import is_tracing
from .trace.views import view

__all__ = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
           "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot",
           "trace", "vecdot", "vector_norm", "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# --- helpers ---------------------------------------------------------------------------

def _matrices(x: Array, name: str, square: bool = False) -> Array:
    """Check that ``x`` is a floating-point (stack of) matrices (integers and bools taken
    in float64: ``graph.in_float64``)."""
    x = in_float64(check_array(x, name))
    check_category(x, "floating-point", name)
    if x.ndim < 2:
        raise ValueError(f"{name}: expected an array of shape (..., M, N), got {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: expected square matrices, got shape {x.shape}")
    return x


def _decompose(target: str, *operands: Array, **attrs: Any) -> list[Array]:
    """Record custom call ``target`` (of tuple shape) and select each of its results.
    Stacks of more than one batch axis are called as one stack (their batch axes merged,
    each result's split again), so that the kernel of a batch of matrices serves them (a
    (2, 2, 3, 3) stack's inverse compiled at its first use)."""
    batch = operands[0].shape[:-2]
    merged = len(batch) > 1
    if merged:
        operands = tuple(reshape(o, (math.prod(batch), *o.shape[-2:])) for o in operands)
    call = Node.apply("custom_call", tuple(o._node for o in operands), {"target": target, **attrs})
    results = [op("get_tuple_element", call, index=i) for i in range(len(cast(TupleShape, call.shape).elements))]
    return [reshape(r, batch + r.shape[1:]) for r in results] if merged else results


def _tall(x: Array) -> bool:
    """Whether ``x``'s matrices have at least as many rows as columns: ``qr``'s and
    ``svd``'s ``tall`` attribute, which orders their sizes for a kernel that takes them at
    run time (``hlo.ops.custom_call.sides``)."""
    return x.shape[-2] >= x.shape[-1]


def _identity(n: int, shape: tuple[int, ...], dtype: np.dtype, device: Any) -> Array:
    """Identity matrices of ``shape`` on ``device`` (the operand's: it joins it)."""
    return broadcast_to(creation.eye(n, dtype=dtype, device=device), shape)


def _cutoff(x: Array, s: Array, rtol: float | Array | None, name: str) -> Array:
    """``rtol * max(s)`` per matrix with a trailing unit axis (to compare with ``s``);
    the default ``rtol`` is the spec's ``max(M, N) * eps``."""
    real = dt.real_dtype(x.dtype)
    if rtol is None:
        rtol = max(x.shape[-2:]) * float(np.finfo(real).eps)
    elif isinstance(rtol, Array):
        check_category(rtol, "real floating-point", name)
        rtol = manipulation.expand_dims(convert(rtol, dt.promote(rtol.dtype, real)), axis=-1)
    return ew.multiply(stats.max(s, axis=-1, keepdims=True), rtol)


# --- decompositions ----------------------------------------------------------------------

def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """Cholesky factor of Hermitian positive-definite matrices: ``x = L L^H``, or
    ``x = U^H U`` with ``upper=True``. Only the lower triangle of ``x`` is read, as in
    NumPy. A matrix that is not positive definite raises ``numpy.linalg.LinAlgError`` as
    in NumPy, so the factor is computed at the call (code such as scikit-learn's catches
    the error there to explain it); under ``jit``, where nothing is computed while
    tracing, its factor is NaN instead, as in JAX."""
    matrices = _matrices(x, "cholesky", square=True)
    (lower,) = _decompose("cholesky", matrices)
    if lower.shape[-1] and not is_tracing():
        # The kernel makes a failed factor all NaN; a factor of a matrix without NaN that
        # succeeded has none at [0, 0]. A matrix with NaN gives NaN, as NumPy's does.
        if bool(op("factor_failed", lower, matrices)):
            raise np.linalg.LinAlgError("cholesky: a matrix is not positive definite")
    return ew.conj(matrix_transpose(lower)) if upper else lower


@recorded
def slogdet(x: Array, /) -> SlogdetResult:
    """Sign and natural log of the absolute value of the determinant, from an LU
    factorisation (sign 0 and logabsdet -inf for a singular matrix): the op
    ``lu_determinant`` (``hlo/ops/determinant.py``) of the factors, each part."""
    x = _matrices(x, "slogdet", square=True)  # integers and bools in float64, as below
    lu, pivots = _decompose("lu", x)
    return SlogdetResult(op("lu_determinant", lu, pivots, part="sign"),
                         op("lu_determinant", lu, pivots, part="logabsdet"))


@recorded
def det(x: Array, /) -> Array:
    """Determinant, as ``sign * exp(logabsdet)`` of :func:`slogdet` (as NumPy computes
    it, which avoids overflow in the product of the pivots): one op of the factors."""
    matrices = _matrices(x, "det", square=True)  # integers and bools in float64
    lu, pivots = _decompose("lu", matrices)
    return op("lu_determinant", lu, pivots, part="det")


@recorded
def solve(x1: Array, x2: Array, /) -> Array:
    """Solve ``x1 @ X = x2``. A 1-D ``x2`` is one right-hand side vector; otherwise the
    stacks of ``x1`` and ``x2`` broadcast. Exactly singular matrices give NaN."""
    x1 = _matrices(x1, "solve", square=True)
    x2 = in_float64(check_array(x2, "solve"))
    check_category(x2, "floating-point", "solve")
    dtype = dt.promote(x1.dtype, x2.dtype, "solve")
    n = x1.shape[-1]
    vector = x2.ndim == 1
    b = reshape(x2, (n, 1)) if vector and x2.shape[0] == n else x2
    if b.ndim < 2 or b.shape[-2] != n:
        raise ValueError(f"solve: x2 of shape {x2.shape} does not match x1 of shape {x1.shape}")
    batch = broadcast_shapes(x1.shape[:-2], b.shape[:-2])
    a = broadcast_to(convert(x1, dtype), batch + x1.shape[-2:])
    b = broadcast_to(convert(b, dtype), batch + b.shape[-2:])
    (x,) = _decompose("solve", a, b)
    return reshape(x, batch + (n,)) if vector else x


@recorded
def inv(x: Array, /) -> Array:
    """Inverse matrices (``solve`` with the identity, as NumPy); singular ones give NaN."""
    x = _matrices(x, "inv", square=True)
    (out,) = _decompose("solve", x, _identity(x.shape[-1], x.shape, x.dtype, x.device))
    return out


@recorded
def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors (columns) of Hermitian matrices;
    only the lower triangle is read, as in NumPy."""
    values, vectors = _decompose("eigh", _matrices(x, "eigh", square=True), vectors=True)
    return EighResult(ew.real(values), vectors)


def _as_complex(x: Array) -> Array:
    return convert(x, dt.complex_dtype(x.dtype)) if x.dtype.kind == "f" else x


@recorded
def eig(x: Array, /) -> EigResult:
    """Eigenvalues and right eigenvectors (columns) of general square matrices, complex
    whatever the input (2025.12); the order of the eigenvalues is LAPACK's. The
    eigenvalues of a real matrix are real or in exact conjugate pairs (``_as_real_roots``)."""
    x = _matrices(x, "eig", square=True)
    values, vectors = _decompose("eig", _as_complex(x), vectors=True)
    return EigResult(_as_real_roots(values) if x.dtype.kind == "f" else values, vectors)


@recorded
def eigvals(x: Array, /) -> Array:
    """Eigenvalues of general square matrices (complex), without the eigenvectors; those
    of a real matrix are real or in exact conjugate pairs (``_as_real_roots``)."""
    x = _matrices(x, "eigvals", square=True)
    (values,) = _decompose("eig", _as_complex(x), vectors=False)
    return _as_real_roots(values) if x.dtype.kind == "f" else values


def _as_real_roots(values: Array) -> Array:
    """The eigenvalues of a real matrix, computed by the complex ``geev``, made what the
    real ``geev`` gives (NumPy's; SciPy's ``poly`` keeps a real dtype only then): each
    value whose conjugate is nearest to itself is real (imaginary part 0), and values that
    are each other's nearest conjugates become an exact pair (their real parts and their
    imaginary parts' half difference averaged: both sums are one rounding). A real matrix's
    non-real eigenvalues come in conjugate pairs, so only a real one meets itself first;
    values in a cluster without a mutual partner are left as they are."""
    n = values.shape[-1]
    re, im = ew.real(values), ew.imag(values)
    distance = ew.abs(ew.subtract(manipulation.expand_dims(ew.conj(values), axis=-1),
                                  manipulation.expand_dims(values, axis=-2)))
    partner = argmin(distance, axis=-1)
    own = broadcast_to(creation.arange(n, dtype=partner.dtype, device=partner.device), partner.shape)
    mutual = ew.equal(take_along_axis(partner, partner, axis=-1), own)
    real_root = ew.equal(partner, own)
    pair_re = ew.multiply(ew.add(re, take_along_axis(re, partner, axis=-1)), 0.5)
    pair_im = ew.multiply(ew.subtract(im, take_along_axis(im, partner, axis=-1)), 0.5)
    new_re = where(ew.logical_and(mutual, ew.logical_not(real_root)), pair_re, re)
    new_im = where(real_root, 0.0, where(mutual, pair_im, im))
    return op("complex", new_re, new_im)


@recorded
def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending, real) of Hermitian matrices, without the eigenvectors."""
    (values,) = _decompose("eigh", _matrices(x, "eigvalsh", square=True), vectors=False)
    return ew.real(values)


@recorded
def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """``x = U @ diag(S) @ Vh`` with singular values ``S`` descending (real)."""
    x = _matrices(x, "svd")
    u, s, vh = _decompose("svd", x, vectors=True, full_matrices=bool(full_matrices), tall=_tall(x))
    return SVDResult(u, ew.real(s), vh)


@recorded
def svdvals(x: Array, /) -> Array:
    """Singular values, descending (real), without the singular vectors."""
    x = _matrices(x, "svdvals")
    (s,) = _decompose("svd", x, vectors=False, full_matrices=False, tall=_tall(x))
    return ew.real(s)


@recorded
def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """``x = Q @ R`` with orthonormal columns in ``Q`` and upper-triangular ``R``;
    ``mode`` is 'reduced' (K = min(M, N) columns of Q) or 'complete'."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    x = _matrices(x, "qr")
    q, r = _decompose("qr", x, mode=mode, tall=_tall(x))
    return QRResult(q, r)


@recorded
def pinv(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Moore-Penrose pseudo-inverse from the SVD; singular values at most
    ``rtol * max(S)`` count as zero."""
    x = _matrices(x, "pinv")
    if 0 in x.shape[-2:]:
        return creation.zeros(x.shape[:-2] + x.shape[-2:][::-1], dtype=x.dtype, device=x.device)
    u, s, vh = svd(x, full_matrices=False)
    kept = ew.greater(s, _cutoff(x, s, rtol, "pinv"))
    inverse = convert(where(kept, ew.divide(1.0, where(kept, s, 1.0)), 0.0), x.dtype)
    v_scaled = ew.multiply(ew.conj(matrix_transpose(vh)), manipulation.expand_dims(inverse, axis=-2))
    return matmul(v_scaled, ew.conj(matrix_transpose(u)))


@recorded
def matrix_rank(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """Number of singular values greater than ``rtol * max(S)`` (default int dtype)."""
    x = _matrices(x, "matrix_rank")
    if 0 in x.shape[-2:]:
        return creation.zeros(x.shape[:-2], dtype=dt.default_int, device=x.device)
    s = svdvals(x)
    return stats.sum(convert(ew.greater(s, _cutoff(x, s, rtol, "matrix_rank")), dt.default_int),
                     axis=-1)


# --- graphs of ordinary ops ----------------------------------------------------------------

@recorded
def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset``-th diagonal of each matrix (above the main one for offset > 0): a
    read-only view, as NumPy gives it."""
    x = check_array(x, "diagonal")
    if x.ndim < 2:
        raise ValueError(f"diagonal: expected an array of shape (..., M, N), got {x.shape}")
    return view(x, Diagonal(as_int(offset, "diagonal", "offset")))


@recorded
def trace(x: Array, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Sum of the ``offset``-th diagonal; ``dtype`` as for :func:`plaidarray.sum`."""
    return stats.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


@recorded
def outer(x1: Array, x2: Array, /) -> Array:
    """Outer product of two vectors: ``out[i, j] = x1[i] * x2[j]``."""
    for x in (x1, x2):
        x = check_array(x, "outer")
        check_category(x, "numeric", "outer")
        if x.ndim != 1:
            raise ValueError(f"outer: expected 1-D arrays, got shape {x.shape}")
    return ew.multiply(reshape(x1, (x1.shape[0], 1)), reshape(x2, (1, x2.shape[0])))


@recorded
def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross product of 3-element vectors along ``axis`` (a negative axis, counted from
    the end); the other dimensions broadcast."""
    for x in (x1, x2):
        x = check_array(x, "cross")
        check_category(x, "numeric", "cross")
    rank = min(x1.ndim, x2.ndim)
    if axis >= 0 and x1.ndim == x2.ndim:
        axis -= x1.ndim
    if not -rank <= axis <= -1:
        raise ValueError(f"cross: axis {axis} is out of range for arrays of rank {x1.ndim} and {x2.ndim}")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"cross: the vectors along axis {axis} must have 3 elements, got {x1.shape} and {x2.shape}")
    shape = broadcast_shapes(x1.shape, x2.shape)
    dtype = dt.promote(x1.dtype, x2.dtype, "cross")
    a, b = (broadcast_to(convert(x, dtype), shape) for x in (x1, x2))

    def part(x, i):
        index = len(shape) + axis
        return op("slice", x, start=tuple(i if d == index else 0 for d in range(len(shape))),
                  limit=tuple(i + 1 if d == index else s for d, s in enumerate(shape)), strides=(1,) * len(shape))

    components = [ew.subtract(ew.multiply(part(a, i), part(b, j)), ew.multiply(part(a, j), part(b, i)))
                  for i, j in ((1, 2), (2, 0), (0, 1))]
    return manipulation.concat(components, axis=axis)


@recorded
def matrix_power(x: Array, n: int, /) -> Array:
    """``x`` multiplied by itself ``n`` times by repeated squaring; the identity for
    ``n = 0``, powers of the inverse for ``n < 0``."""
    x = check_array(x, "matrix_power")
    check_category(x, "numeric", "matrix_power")
    n = as_int(n, "matrix_power", "n")  # a traced one is traced again static (jit), as for range(n)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power: expected square matrices, got shape {x.shape}")
    if n == 0:
        return _identity(x.shape[-1], x.shape, x.dtype, x.device)
    base, result, k = (inv(x) if n < 0 else x), None, abs(int(n))
    while True:
        if k & 1:
            result = base if result is None else matmul(result, base)
        k >>= 1
        if not k:
            assert result is not None  # k >= 1 had a set bit
            return result
        base = matmul(base, base)


@recorded
def vector_norm(x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> Array:
    """The ``ord``-norm of the vectors along ``axis`` (all elements when None); real. Of
    integers and booleans (beyond the standard, as NumPy's ``norm``), in float64."""
    x = check_array(x, "vector_norm")
    if x.dtype.kind in "biu":
        x = convert(x, dt.default_float)
    check_category(x, "floating-point", "vector_norm")
    ord = traced_value(ord)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise ValueError(f"vector_norm: ord must be a number, got {ord!r}")
    magnitude = ew.abs(x)
    if ord == math.inf:
        return _largest(magnitude, axis, keepdims, "vector_norm")
    if ord == -math.inf:
        return stats.min(magnitude, axis=axis, keepdims=keepdims)
    if ord == 0:
        return stats.sum(convert(ew.not_equal(magnitude, 0.0), magnitude.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return stats.sum(magnitude, axis=axis, keepdims=keepdims)
    if ord == 2:  # a real x's square is its magnitude's, bit for bit: one pass less
        square = ew.multiply(x, x) if x.dtype.kind == "f" else ew.multiply(magnitude, magnitude)
        return ew.sqrt(stats.sum(square, axis=axis, keepdims=keepdims))
    total = stats.sum(ew.pow(magnitude, float(ord)), axis=axis, keepdims=keepdims)
    return ew.pow(total, 1.0 / ord)


def _largest(values: Array, axis: int | tuple[int, ...] | None, keepdims: bool, where: str) -> Array:
    """The largest of the non-negative ``values`` along ``axis``: 0 where there are none
    (the sum of none), as NumPy's norms give, where ``max`` has no identity to give."""
    if any(values.shape[a] == 0 for a in normalize_axes(axis, values.ndim, where)):
        return stats.sum(values, axis=axis, keepdims=keepdims)
    return stats.max(values, axis=axis, keepdims=keepdims)


@recorded
def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: int | float | str | None = "fro") -> Array:
    """Matrix norms: 'fro', 'nuc', 1/-1 (max/min column sum), inf/-inf (max/min row
    sum), 2/-2 (largest/smallest singular value); real. Of integers and booleans (beyond
    the standard, as NumPy's ``norm``), in float64."""
    x = check_array(x, "matrix_norm")
    if x.dtype.kind in "biu":
        x = convert(x, dt.default_float)
    x = _matrices(x, "matrix_norm")
    if ord in ("fro", None):
        out = vector_norm(x, axis=(-2, -1))
    elif ord == "nuc":
        out = stats.sum(svdvals(x), axis=-1)
    elif ord in (1, -1, math.inf, -math.inf):
        sums = stats.sum(ew.abs(x), axis=-2 if abs(ord) == 1 else -1)
        out = _largest(sums, -1, False, "matrix_norm") if ord > 0 else stats.min(sums, axis=-1)
    elif ord in (2, -2):
        s = svdvals(x)
        out = _largest(s, -1, False, "matrix_norm") if ord > 0 else stats.min(s, axis=-1)
    else:
        raise ValueError(f"matrix_norm: unsupported ord {ord!r}")
    return reshape(out, x.shape[:-2] + (1, 1)) if keepdims else out
