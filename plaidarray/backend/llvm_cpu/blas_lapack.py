"""BLAS and LAPACK for compiled code: SciPy's routines, which kernels import.

Matrix products (``dot_general``) call BLAS's ``?gemm`` and decompositions
(``custom_call`` targets) call LAPACK, through their Fortran ABI (docs/custom-calls.md).
Like jaxlib, plaidarray takes the routines from SciPy's Cython APIs,
``scipy.linalg.cython_blas`` and ``scipy.linalg.cython_lapack``, whose ``__pyx_capi__``
exports a C function pointer per routine in a PyCapsule: this works with whichever
BLAS and LAPACK SciPy was built against, without plaidarray linking anything itself.
Generated code names them ``<library>_<routine>`` (``blas_sgemm``, ``lapack_dgetrf``) and
calls them through its table of imports (``llvm_emitter.KernelSource.imports``), which
the executable fills with :func:`routine_address`: kernels have no undefined symbol of
them, so their object code loads anywhere (the platform's loader, MCJIT) unchanged.
"""

from __future__ import annotations

import ctypes
import functools
import importlib

#: Symbol prefix generated code uses -> the SciPy module exporting the routines; the
#: rest of the symbol is the routine's name (``blas_dgemm`` is cython_blas's ``dgemm``).
LIBRARIES = {"blas_": "scipy.linalg.cython_blas", "lapack_": "scipy.linalg.cython_lapack"}

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


@functools.cache
def routine_address(symbol: str) -> int:
    """The address of the SciPy routine that ``symbol`` (e.g. ``"lapack_dpotrf"``) names."""
    prefix = _prefix(symbol)
    if prefix is None:
        raise ValueError(f"llvm-cpu: {symbol!r} names no routine of {', '.join(LIBRARIES.values())}")
    # Imported on first use: only programs calling BLAS or LAPACK pay for it.
    module = importlib.import_module(LIBRARIES[prefix])
    routine = symbol[len(prefix):]
    capsule = module.__pyx_capi__.get(routine)
    if capsule is None:
        raise NotImplementedError(f"llvm-cpu: {LIBRARIES[prefix]} has no routine {routine!r}")
    return _capsule_pointer(capsule, _capsule_name(capsule))


def _prefix(symbol: str) -> str | None:
    return next((p for p in LIBRARIES if symbol.startswith(p)), None)


def is_import(symbol: str) -> bool:
    """Whether generated code calls ``symbol`` through its table of imports."""
    return _prefix(symbol) is not None
