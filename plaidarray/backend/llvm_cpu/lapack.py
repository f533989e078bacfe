"""LAPACK for compiled code: SciPy's LAPACK routines bound as symbols of the JIT.

Decompositions (``custom_call`` targets, see docs/custom-calls.md) lower to calls of
LAPACK routines through their Fortran ABI. Like jaxlib, plaidarray takes the routines
from ``scipy.linalg.cython_lapack``, whose ``__pyx_capi__`` exports a C function
pointer per routine in a PyCapsule: this works with whichever LAPACK SciPy was built
against, without plaidarray linking anything itself. Generated code calls
``lapack_<routine>`` (``lapack_dgetrf``); :func:`bind` makes those names resolve to
SciPy's functions before a module is linked.
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Iterable

import llvmlite.binding as llvm

#: Prefix of the symbols generated code calls; the rest is the routine's LAPACK name.
PREFIX = "lapack_"

_bound: set[str] = set()
_lock = threading.Lock()

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def routine_address(routine: str) -> int:
    """The address of SciPy's LAPACK ``routine`` (e.g. ``"dpotrf"``)."""
    from scipy.linalg import cython_lapack  # deferred: only programs with decompositions pay for it

    capsule = cython_lapack.__pyx_capi__.get(routine)
    if capsule is None:
        raise NotImplementedError(f"llvm-cpu: scipy.linalg.cython_lapack has no LAPACK routine {routine!r}")
    return _capsule_pointer(capsule, _capsule_name(capsule))


def bind(symbols: Iterable[str]) -> None:
    """Make the ``lapack_*`` names among ``symbols`` (a module's external functions)
    resolvable by the JIT linker; other names are left to the process's libraries."""
    with _lock:
        for symbol in symbols:
            if symbol.startswith(PREFIX) and symbol not in _bound:
                llvm.add_symbol(symbol, routine_address(symbol[len(PREFIX):]))
                _bound.add(symbol)


def bind_object(code: bytes) -> None:
    """:func:`bind` for object code (from the persistent cache): the names it calls are
    in its symbol string table."""
    bind(name.decode() for name in set(re.findall(rb"%s[a-z0-9]+" % PREFIX.encode(), code)))
