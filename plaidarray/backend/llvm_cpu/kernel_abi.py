"""How an executable calls a kernel, defined once:
``void kernel(void **buffers, const int64_t *dims, int64_t start, int64_t stop, void *const *imports)``.

``buffers`` is the executable's table of buffer addresses, ``dims`` its run-time sizes,
``[start, stop)`` the range of the chunked loop this call runs (``parallel.py``), and
``imports`` the addresses of the routines the kernel calls (BLAS, LAPACK: ``blas_lapack.py``).
The emitter defines kernels of :func:`llvm_type` (``renderer.CpuRenderer.emit_entry``), an
export's C entry declares them so (``aot_driver.py``), the ctypes path calls them through
:data:`CTYPES` (``executable.py``) and the C path through ``_entry.c``'s ``kernel_fn``, which
``tests/unit/backend/test_kernels.py`` compares with :data:`C_TYPEDEF`.
"""

from __future__ import annotations

import ctypes
import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llvmlite import ir

#: The parameters in order, each a pointer ("ptr") or a 64-bit integer ("i64").
PARAMETERS = (("buffers", "ptr"), ("dims", "ptr"), ("start", "i64"), ("stop", "i64"), ("imports", "ptr"))

#: The ctypes prototype (the executable's Python path).
CTYPES = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                          ctypes.c_void_p)

#: The C declaration ``_entry.c`` holds.
C_TYPEDEF = "typedef void (*kernel_fn)(void **, const int64_t *, int64_t, int64_t, void *const *);"


@functools.cache
def llvm_type() -> ir.FunctionType:
    """The LLVM function type (imported here only by code that generates code: a run
    loads no llvmlite.ir)."""
    from llvmlite import ir

    kinds = {"ptr": ir.PointerType(), "i64": ir.IntType(64)}
    return ir.FunctionType(ir.VoidType(), [kinds[kind] for _, kind in PARAMETERS])
