"""How a ``dot_general``'s operands hold their matrices in row-major buffers, as the BLAS
family of libraries reads them: for each operand its (batch, rows, columns) dimension
groups, and whether a buffer of its dims holds each matrix row-major or column-major with
which leading dimension. llvm-cpu's BLAS calls and llvm-nvptx's cuBLAS calls both plan
their arguments with these; sizes may be run-time sizes (``hlo/symbolic.py``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..hlo.ops.dot import free_dimensions
from ..hlo.symbolic import Dim

#: An operand's dims and its (batch, rows, columns) groups of dimensions.
Matrices = tuple[tuple[Sequence[Dim], tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]], ...]


def matrices(lhs_dims: Sequence[Dim], rhs_dims: Sequence[Dim], attrs) -> Matrices:
    """Per operand: its dims and its (batch, rows, columns) dimension groups, rows being
    its free dimensions and columns its contracting ones (in the order they pair)."""
    lb, rb, lc, rc = (attrs[n] for n in ("lhs_batch", "rhs_batch", "lhs_contracting", "rhs_contracting"))
    return ((lhs_dims, (tuple(lb), tuple(free_dimensions(len(lhs_dims), lb, lc)), tuple(lc))),
            (rhs_dims, (tuple(rb), tuple(free_dimensions(len(rhs_dims), rb, rc)), tuple(rc))))


def extent(dims: Sequence[Dim], group: Sequence[int]) -> Dim:
    return math.prod(dims[d] for d in group)


def sizes(found: Matrices) -> tuple[Dim, Dim, Dim]:
    """(M, N, K) of each product: lhs rows, rhs rows, contracted length."""
    (ldims, (_, lrows, lcols)), (rdims, (_, rrows, _)) = found
    return extent(ldims, lrows), extent(rdims, rrows), extent(ldims, lcols)


def stride(dims: Sequence[Dim], group: Sequence[int]) -> Dim | None:
    """The stride of ``group``'s dims, flattened in that order, in a row-major buffer of
    ``dims``: the stride of its innermost dim if they step through memory as one
    dimension, 0 if the group has one element, None if it cannot be flattened."""
    run = [d for d in group if dims[d] != 1]
    strides = [math.prod(dims[d + 1:]) for d in run]
    if any(outer != inner * dims[d] for outer, inner, d in zip(strides, strides[1:], run[1:])):
        return None
    return strides[-1] if run else 0


def layout(dims: Sequence[Dim], rows: Sequence[int], cols: Sequence[int]) -> tuple[bool, Dim] | None:
    """How a row-major buffer of ``dims`` holds the matrix ``rows x cols`` (each group
    flattened) once its other dims are fixed: ``(row_major, ld)``, with BLAS's leading
    dimension ``ld >= max(1, length of the unit-stride group)``; None if it does not."""
    row_stride, col_stride = stride(dims, rows), stride(dims, cols)
    if row_stride is None or col_stride is None:
        return None
    if col_stride in (0, 1):
        return True, at_least_one(row_stride or extent(dims, cols))
    if row_stride in (0, 1):
        return False, at_least_one(col_stride)
    return None


def at_least_one(size: Dim) -> Dim:
    """``max(1, size)``; a run-time size is at least 2 already."""
    return max(1, size) if isinstance(size, int) else size
