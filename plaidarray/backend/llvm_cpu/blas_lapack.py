"""BLAS and LAPACK for compiled code: SciPy's routines bound as symbols of the JIT.

Matrix products (``dot_general``) call BLAS's ``?gemm`` and decompositions
(``custom_call`` targets) call LAPACK, through their Fortran ABI (docs/custom-calls.md).
Like jaxlib, plaidarray takes the routines from SciPy's Cython APIs,
``scipy.linalg.cython_blas`` and ``scipy.linalg.cython_lapack``, whose ``__pyx_capi__``
exports a C function pointer per routine in a PyCapsule: this works with whichever
BLAS and LAPACK SciPy was built against, without plaidarray linking anything itself.
Generated code calls ``<library>_<routine>`` (``blas_sgemm``, ``lapack_dgetrf``);
:func:`bind` makes those names resolve to SciPy's functions before a module is linked.
"""

from __future__ import annotations

import ctypes
import importlib
import re
import threading
from collections.abc import Iterable

import llvmlite.binding as llvm

#: Symbol prefix generated code uses -> the SciPy module exporting the routines; the
#: rest of the symbol is the routine's name (``blas_dgemm`` is cython_blas's ``dgemm``).
LIBRARIES = {"blas_": "scipy.linalg.cython_blas", "lapack_": "scipy.linalg.cython_lapack"}

#: A routine's symbol as it appears in an object file's string table (NUL-delimited).
_OBJECT_SYMBOL = re.compile(rb"(?<=\x00)(?:%s)[a-z0-9]+(?=\x00)" % b"|".join(p.encode() for p in LIBRARIES))

_bound: set[str] = set()
_lock = threading.Lock()

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


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


def bind(symbols: Iterable[str]) -> None:
    """Make the BLAS and LAPACK names among ``symbols`` (a module's external functions)
    resolvable by the JIT linker; other names are left to the process's libraries."""
    with _lock:
        for symbol in symbols:
            if symbol not in _bound and _prefix(symbol) is not None:
                llvm.add_symbol(symbol, routine_address(symbol))
                _bound.add(symbol)


def bind_object(code: bytes) -> None:
    """:func:`bind` for object code (from the persistent cache): the names it calls are
    in its symbol string table."""
    bind({name.decode() for name in _OBJECT_SYMBOL.findall(code)})
