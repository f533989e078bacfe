"""The simulated device's cuBLAS: ``gemm`` with cuBLAS's strided-batched arguments
(column-major matrices, leading dimensions, transpose flags, element strides between
the matrices of a batch) on simulated memory. Each matrix is read from exactly the bytes
cuBLAS would read, so a wrong leading dimension, stride or flag that a real GPU's cuBLAS
would take gives a wrong product here too, and a read past an allocation is the
simulator's error. The products themselves are NumPy's: this is what the real library
computes, not code of ours under test."""

from __future__ import annotations

import numpy as np

from .errors import SimulatorError
from .memory import SimulatedMemory


def _matrices(memory: SimulatedMemory, address: int, dtype: np.dtype, rows: int, cols: int, ld: int,
              stride: int, batch: int) -> np.ndarray:
    """``batch`` column-major ``rows x cols`` matrices at ``address`` (leading dimension
    ``ld``, ``stride`` elements apart), as a (batch, rows, cols) array."""
    if ld < max(1, rows):
        raise SimulatorError(f"cublas gemm: leading dimension {ld} < max(1, {rows}) rows")
    span = (batch - 1) * stride + (cols - 1) * ld + rows
    flat = memory.read_array(address, dtype, span)
    out = np.empty((batch, rows, cols), dtype)
    for i in range(batch):
        for j in range(cols):
            start = i * stride + j * ld
            out[i, :, j] = flat[start:start + rows]
    return out


def gemm(memory: SimulatedMemory, dtype: np.dtype, trans_a: str, trans_b: str, m: int, n: int, k: int,
         a: int, lda: int, stride_a: int, b: int, ldb: int, stride_b: int,
         c: int, ldc: int, stride_c: int, batch: int) -> None:
    """``C = op(A) op(B)`` for each matrix of the batch, as ``cublas?gemmStridedBatched``
    with alpha 1 and beta 0 (C is written, not read)."""
    shape_a = (m, k) if trans_a == "N" else (k, m)
    shape_b = (k, n) if trans_b == "N" else (n, k)
    left = _matrices(memory, a, dtype, *shape_a, lda, stride_a, batch)
    right = _matrices(memory, b, dtype, *shape_b, ldb, stride_b, batch)
    if trans_a == "T":
        left = left.transpose(0, 2, 1)
    if trans_b == "T":
        right = right.transpose(0, 2, 1)
    if ldc < max(1, m):
        raise SimulatorError(f"cublas gemm: leading dimension {ldc} < max(1, {m}) rows of C")
    product = np.matmul(left, right)  # (batch, m, n)
    for i in range(batch):
        for j in range(n):
            memory.write(c + (i * stride_c + j * ldc) * dtype.itemsize, np.ascontiguousarray(product[i, :, j]))
