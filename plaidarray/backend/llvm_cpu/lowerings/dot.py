"""llvm-cpu's ``dot_general``: BLAS for matrix products.

A float or complex dot_general whose products are not mere dot products of vectors is
computed by BLAS, one call per batch index (``?gemm``, or ``?gemv`` when one side is a
vector), as XLA's CPU backend calls Eigen or MKL for large dots (the routines and their
ABI are in docs/custom-calls.md). BLAS reads column-major matrices with a leading
dimension; a row-major buffer read column-major is the transpose, so row-major
``C = A B`` is column-major ``C^T = B^T A^T``. An operand whose dimensions lay its matrix
out row-major or column-major is read in place (``dot(x.mT, y)`` reads ``x`` transposed);
any other operand is copied into a row-major scratch buffer first. Other dot_generals
(integers, booleans, dot products of vectors, sizes beyond BLAS's 32-bit integers) are
the target-neutral loop nest (``codegen/lowerings/dot.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from ....codegen.lowering import Kernel, register_lowering
from ....codegen.lowerings.dot import emit_loops
from ....hlo.shape import Shape
from ....hlo.symbolic import Dim
from ... import matrix_layout
from .fortran_kernel import MAX_INTEGER, TYPE_PREFIX, FortranKernel
from ..platform import PLATFORM


def _emit(k, inst, out, operands):
    if _calls_blas(k, inst):
        _emit_blas(k, inst, out, operands)
    else:
        emit_loops(k, inst, out, operands)


def _matrices(inst) -> matrix_layout.Matrices:
    lhs, rhs = (o.shape for o in inst.operands)
    return matrix_layout.matrices(lhs.dims, rhs.dims, inst.attrs)


def _calls_blas(kernel, inst) -> bool:
    """Whether ``inst`` is a stack of float or complex matrix products BLAS can take:
    not mere dot products of vectors (the loop nest does those without a call per
    product) and within BLAS's 32-bit sizes (larger products stay a loop nest). Run-time
    sizes are at least 2, and limited to what BLAS takes (``kernel.require``)."""
    if inst.shape.dtype.name not in TYPE_PREFIX:
        return False
    m, n, k = matrix_layout.sizes(_matrices(inst))
    # A leading dimension is at most an operand's size (k for a copy).
    sizes = [m, n, k, *(o.shape.size for o in inst.operands)]
    product = m * n
    if isinstance(product, int) and product <= 1:
        return False
    if all(isinstance(s, int) for s in sizes):
        return max(cast("list[int]", sizes)) <= MAX_INTEGER
    for size in sizes:
        if not isinstance(size, int):
            kernel.require(size, MAX_INTEGER)
    return all(s <= MAX_INTEGER for s in sizes if type(s) is int)


@dataclass(frozen=True)
class _Operand:
    """An operand as BLAS reads it: the buffer, its dims that index the stack of
    matrices (in the result's batch order) and the matrix layout (:func:`_layout`)."""

    buffer: SSAValue
    batch: tuple[int, ...]
    row_major: bool
    ld: Dim


def _operand(k, dims, groups, buffer, dtype) -> _Operand:
    """The operand read in place, or copied into a scratch buffer laid out
    (batch, rows, columns) when its dims do not hold a matrix BLAS can read."""
    batch, rows, cols = groups
    layout = matrix_layout.layout(dims, rows, cols)
    if layout is not None:
        return _Operand(buffer, batch, *layout)
    order = [*batch, *rows, *cols]
    shape = tuple(dims[d] for d in order)
    scratch = k.scratch(Shape(shape, dtype))
    coords = [AffineExpr.dimension(i) for i in range(len(order))]
    k.generic(shape, [(buffer, [coords[order.index(d)] for d in range(len(dims))])], (scratch, coords), dtype,
              lambda b, ins, cur: ins[0])
    nb, nr = len(batch), len(rows)
    layout = matrix_layout.layout(shape, range(nb, nb + nr), range(nb + nr, len(order)))
    assert layout is not None  # the scratch copy is row-major
    return _Operand(scratch, tuple(range(nb)), *layout)


def _emit_blas(k, inst, out, operands):
    """One BLAS call per batch index: ``?gemv`` when one operand is a vector (a single
    row), ``?gemm`` otherwise. Nothing to call for an empty result; zeros for an
    empty contraction."""
    dtype = inst.shape.dtype
    if not inst.shape.size:
        return
    (ldims, lgroups), (rdims, rgroups) = matrices = _matrices(inst)
    m, n, contracted = matrix_layout.sizes(matrices)
    if contracted == 0:
        k.fill(out, 0, dtype)
        return
    lhs = _operand(k, ldims, lgroups, operands[0], dtype)
    rhs = _operand(k, rdims, rgroups, operands[1], dtype)
    f = FortranKernel(k, dtype, inst.shape.dims[:len(lgroups[0])])
    call = (_gemv if 1 in (m, n) else _gemm)(f, lhs, rhs, m, n, contracted)

    def multiply(batch):
        lhs_at, rhs_at = (f.part(x.buffer, dict(zip(x.batch, batch))) for x in (lhs, rhs))
        call(lhs_at, rhs_at, f.part(out, dict(enumerate(batch))))
    f.per_matrix(multiply)


def _gemm(f: FortranKernel, lhs: _Operand, rhs: _Operand, m: Dim, n: Dim, k: Dim):
    """Row-major out = lhs rhs^T is column-major out^T = rhs lhs^T: gemm's A is rhs
    (N x K) and B is lhs^T (K x M), each transposed by gemm's flag when its buffer,
    read column-major, holds the other orientation."""
    args = [f.char("T" if rhs.row_major else "N"), f.char("N" if lhs.row_major else "T"),
            f.integer(n), f.integer(m), f.integer(k), f.scalar(1)]
    lda, ldb, beta, ldc = f.integer(rhs.ld), f.integer(lhs.ld), f.scalar(0), f.integer(n)
    return lambda lhs_at, rhs_at, out: f.blas("gemm", *args, rhs_at, lda, lhs_at, ldb, beta, out, ldc)


def _gemv(f: FortranKernel, lhs: _Operand, rhs: _Operand, m: Dim, n: Dim, k: Dim):
    """A matrix times a vector: out = lhs v when N = 1, rhs v when M = 1, v being the
    other operand's only row. gemv's A is the matrix's buffer read column-major,
    transposed by the flag when the buffer is row-major."""
    matrix, vector, rows = (lhs, rhs, m) if n == 1 else (rhs, lhs, n)
    trans, shape = ("T", (k, rows)) if matrix.row_major else ("N", (rows, k))
    args = [f.char(trans), *map(f.integer, shape), f.scalar(1)]
    lda, incx = f.integer(matrix.ld), f.integer(1 if vector.row_major else vector.ld)
    beta, incy = f.scalar(0), f.integer(1)

    def call(lhs_at, rhs_at, out):
        matrix_at, vector_at = (lhs_at, rhs_at) if n == 1 else (rhs_at, lhs_at)
        f.blas("gemv", *args, matrix_at, lda, vector_at, incx, beta, out, incy)
    return call


register_lowering("dot_general", Kernel(_emit, shape_generic=True), PLATFORM)
