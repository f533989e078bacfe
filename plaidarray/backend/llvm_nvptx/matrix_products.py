"""Matrix products on a GPU by cuBLAS, as XLA's GPU backend rewrites its dots into cuBLAS
calls: a float32 or float64 ``dot_general`` of a GPU's graph runs as one strided-batched
``gemm`` on the device buffers of its operands, between the graph's compiled kernels (the
trace computes its operands, calls the routine, and runs the rest:
``trace/host_round_trip.py``), with no copy to the host.

The arguments are llvm-cpu's BLAS call's (``matrix_layout.py``): row-major ``C = A B`` is
column-major ``C^T = B^T A^T``, so cuBLAS's A is the rhs and its B the lhs, each transposed
by its flag when its buffer, read column-major, holds the other orientation; the batch
dimensions step through each buffer by one stride. Products the library does not take stay
the generated loops: other dtypes, mere dot products of vectors (M = N = 1), an empty
contraction or result, batch dimensions that do not flatten, sizes past 32 bits. cuBLAS
adds in its own order: products agree with the host's BLAS within rounding, not bit for bit
(docs/gpu.md)."""

from __future__ import annotations

from typing import Any, NamedTuple, cast

import numpy as np

from ...hlo.shape import Shape
from .. import matrix_layout
from .cublas import ROUTINES
from .runtime import DeviceArray, GpuRuntime

#: cuBLAS's ``int`` arguments.
_LARGEST = (1 << 31) - 1


class Gemm(NamedTuple):
    """One ``?gemmStridedBatched`` call's arguments, but the addresses (the operands' own
    buffers and the result's): flags, sizes, leading dimensions and batch strides in
    cuBLAS's order (A is the rhs, B the lhs), then the result's shape."""

    trans_a: str
    trans_b: str
    m: int
    n: int
    k: int
    lda: int
    stride_a: int
    ldb: int
    stride_b: int
    ldc: int
    stride_c: int
    batch: int
    shape: Shape


def plan(shape: Shape, operands: tuple[Shape, Shape], attrs: Any) -> Gemm | None:
    """The cuBLAS call of a ``dot_general`` of result ``shape``, or None where the
    generated loops compute it."""
    if shape.dtype not in ROUTINES or shape.size == 0:
        return None
    dims = [s.dims for s in operands]
    if not all(type(d) is int for ds in (*dims, shape.dims) for d in ds):
        return None
    found = matrix_layout.matrices(dims[0], dims[1], attrs)
    m, n, k = cast("tuple[int, int, int]", matrix_layout.sizes(found))  # static sizes: ints
    if m * n <= 1 or k == 0:
        return None
    (ldims, (lbatch, lrows, lcols)), (rdims, (rbatch, rrows, rcols)) = found
    lhs, rhs = matrix_layout.layout(ldims, lrows, lcols), matrix_layout.layout(rdims, rrows, rcols)
    lstride, rstride = matrix_layout.stride(ldims, lbatch), matrix_layout.stride(rdims, rbatch)
    if lhs is None or rhs is None or lstride is None or rstride is None:
        return None
    (lhs_row_major, lda), (rhs_row_major, rda) = cast("tuple[tuple[bool, int], tuple[bool, int]]", (lhs, rhs))
    strides = cast("tuple[int, int]", (lstride, rstride))
    if max(m, n, k, lda, rda, *strides, *(s.size for s in operands)) > _LARGEST:
        return None
    return Gemm("T" if rhs_row_major else "N", "N" if lhs_row_major else "T", n, m, k, rda, strides[1],
                lda, strides[0], n, m * n, shape.size // (m * n), shape)


def run(runtime: GpuRuntime, gemm: Gemm, lhs: DeviceArray, rhs: DeviceArray) -> DeviceArray:
    """The product on ``runtime``: a new device array of the result, queued after the
    launches that computed the operands."""
    out = runtime.empty(gemm.shape.dims, np.dtype(gemm.shape.dtype))
    runtime.gemm(np.dtype(gemm.shape.dtype), gemm.trans_a, gemm.trans_b, gemm.m, gemm.n, gemm.k,
                 rhs.address, gemm.lda, gemm.stride_a, lhs.address, gemm.ldb, gemm.stride_b,
                 out.address, gemm.ldc, gemm.stride_c, gemm.batch)
    return out
