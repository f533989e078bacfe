"""cuBLAS through ctypes: the matrix products of a GPU's graphs (``matrix_products.py``).

The library is NVIDIA's ``nvidia-cublas`` wheel (a dependency of PyTorch's and JAX's CUDA
wheels, and of the ``cuda`` extra), else a CUDA toolkit's (``CUDA_HOME``, ``/usr/local/cuda``),
else one the dynamic loader finds. A handle per runtime works in its primary context and
on its stream, so a product runs in order with the kernels around it. Its default math
mode keeps float32 products in full float32 (no TF32 unless ``NVIDIA_TF32_OVERRIDE`` asks),
as the issue's "same precision" rows need; float64 products are ``Dgemm``'s."""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

#: ``cublasOperation_t``: a matrix read as it is, or transposed.
OPERATIONS = {"N": 0, "T": 1}
#: Each dtype's strided-batched gemm and the ctypes type of its scalars.
ROUTINES = {np.dtype(np.float32): ("cublasSgemmStridedBatched", ctypes.c_float),
            np.dtype(np.float64): ("cublasDgemmStridedBatched", ctypes.c_double)}


class CublasError(RuntimeError):
    """A cuBLAS call failed: the message names the call and its status."""


def _candidates() -> list[str]:
    """Where libcublas may be, in order: NVIDIA's wheels (any ``nvidia`` subpackage's
    ``lib``), a toolkit's ``lib64``, then the loader's own names."""
    found: list[str] = []
    spec = importlib.util.find_spec("nvidia")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec is not None else []
    roots += [Path(os.environ[v]) for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    roots.append(Path("/usr/local/cuda"))
    for root in roots:
        for pattern in ("*/lib/libcublas.so*", "lib/libcublas.so*", "lib64/libcublas.so*"):
            found += sorted(str(p) for p in root.glob(pattern) if "Lt" not in p.name)
    return [*found, "libcublas.so.13", "libcublas.so.12", "libcublas.so"]


@functools.cache
def library() -> ctypes.CDLL | None:
    """libcublas, or None where none loads (products then run on the generated loops)."""
    for candidate in _candidates():
        try:
            return ctypes.CDLL(candidate)
        except OSError:
            continue
    return None


def _check(name: str, status: int) -> None:
    if status != 0:
        raise CublasError(f"llvm-nvptx: {name} failed with cuBLAS status {status}")


class Cublas:
    """A cuBLAS handle on ``stream`` (a ``CUstream``), made with the runtime's context
    current (``make_current``, called before each call too: calls can come from any thread)."""

    def __init__(self, lib: ctypes.CDLL, stream: ctypes.c_void_p, make_current: Callable[[], None]) -> None:
        self._lib, self._current = lib, make_current
        self._handle = ctypes.c_void_p()
        make_current()
        _check("cublasCreate_v2", lib.cublasCreate_v2(ctypes.byref(self._handle)))
        _check("cublasSetStream_v2", lib.cublasSetStream_v2(self._handle, stream))

    def gemm(self, dtype: np.dtype, trans_a: str, trans_b: str, m: int, n: int, k: int,
             a: int, lda: int, stride_a: int, b: int, ldb: int, stride_b: int,
             c: int, ldc: int, stride_c: int, batch: int) -> None:
        """``C = op(A) op(B)`` for each of ``batch`` column-major matrices at device addresses
        ``a``, ``b``, ``c`` (strides in elements), queued on the stream."""
        name, scalar = ROUTINES[np.dtype(dtype)]
        one, zero = scalar(1), scalar(0)
        ll = ctypes.c_longlong
        self._current()
        status = getattr(self._lib, name)(
            self._handle, OPERATIONS[trans_a], OPERATIONS[trans_b], m, n, k, ctypes.byref(one),
            ctypes.c_void_p(a), lda, ll(stride_a), ctypes.c_void_p(b), ldb, ll(stride_b), ctypes.byref(zero),
            ctypes.c_void_p(c), ldc, ll(stride_c), batch)
        _check(name, status)
