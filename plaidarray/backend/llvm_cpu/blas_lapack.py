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
import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

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
    module = _library(LIBRARIES[prefix])
    routine = symbol[len(prefix):]
    capsule = module.__pyx_capi__.get(routine)
    if capsule is None:
        raise NotImplementedError(f"llvm-cpu: {LIBRARIES[prefix]} has no routine {routine!r}")
    return _capsule_pointer(capsule, _capsule_name(capsule))


@functools.cache
def _library(name: str) -> ModuleType:
    """SciPy's Cython API module ``name``, loaded on first use (only programs calling BLAS
    or LAPACK pay for it) from its own file, without running ``scipy.linalg``'s package
    initialisation, which imports most of ``scipy.linalg`` (0.38 s, against 2 ms for the
    module alone: a script's first matrix product waited for it). The extension module is
    loaded once: a later ``import`` of it gives the same module (CPython keeps extension
    modules by file), and SciPy's other modules import it as ever. Where its file cannot
    be found it is imported."""
    scipy = importlib.util.find_spec("scipy")
    folder = Path(scipy.origin).parent.joinpath(*name.split(".")[1:-1]) if scipy and scipy.origin else None
    files = [folder / (name.rpartition(".")[2] + suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES] \
        if folder is not None else []
    path = next((f for f in files if f.is_file()), None)
    spec = importlib.util.spec_from_file_location(name, path) if path is not None else None
    if spec is None or spec.loader is None:
        return importlib.import_module(name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _prefix(symbol: str) -> str | None:
    return next((p for p in LIBRARIES if symbol.startswith(p)), None)


def is_import(symbol: str) -> bool:
    """Whether generated code calls ``symbol`` through its table of imports."""
    return _prefix(symbol) is not None
