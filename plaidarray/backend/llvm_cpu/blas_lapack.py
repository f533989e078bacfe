"""BLAS and LAPACK for compiled code: SciPy's routines, which kernels import.

Matrix products (``dot_general``) call BLAS's ``?gemm`` and decompositions
(``custom_call`` targets) call LAPACK, through their Fortran ABI (docs/custom-calls.md).
Like jaxlib, plaidarray takes the routines from SciPy's Cython APIs,
``scipy.linalg.cython_blas`` and ``scipy.linalg.cython_lapack``, whose ``__pyx_capi__``
exports a C function pointer per routine in a PyCapsule: this works with whichever
BLAS and LAPACK SciPy was built against, without plaidarray linking anything itself.
Generated code names them ``<library>_<routine>`` (``blas_sgemm``, ``lapack_dgetrf``) and
calls them through its table of imports (``llvm/kernel_source.KernelSource.imports``), which
the executable fills with :func:`routine_address`: kernels have no undefined symbol of
them, so their object code loads anywhere (the platform's loader, MCJIT) unchanged.

SciPy's wheels link the routines from the OpenBLAS they bundle (``scipy-openblas32``:
32-bit integers, every symbol prefixed ``scipy_``), and each Cython API function is a
call of that symbol with its own arguments (the routines plaidarray calls are Fortran
subroutines: no value returned, whose ABI a wrapper could change). Where the extension
module's own dependencies define ``scipy_<routine>_``, that symbol is taken, loading the
module's file with the platform's loader and nothing of Python's: importing it runs
``scipy``'s package initialisation (13 ms of the 16 a first matrix product waited for;
the load alone is 2.5 ms). Elsewhere (SciPy built against the system's BLAS, say), the
capsules.

Those 2.5 ms were a tenth of a short script's first run that multiplies a matrix: the
load starts on a thread when the backend is imported (``preload.py``), so it
overlaps the rest of the user's imports and setup, and a first product waits only for
what is left of it. The platform's loader runs without Python's lock held, so the thread
costs the main thread nothing.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import importlib.machinery
import importlib.util
import threading
from pathlib import Path
from types import ModuleType

from . import shared_object

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
    routine = symbol[len(prefix):]
    extension = _extension(LIBRARIES[prefix])
    if extension is not None:
        try:
            return ctypes.cast(getattr(extension, f"scipy_{routine}_"), ctypes.c_void_p).value or 0
        except AttributeError:  # not SciPy's bundled OpenBLAS: its capsule says what SciPy calls
            pass
    module = _library(LIBRARIES[prefix])
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
    path = _extension_file(name)
    spec = importlib.util.spec_from_file_location(name, path) if path is not None else None
    if spec is None or spec.loader is None:
        return importlib.import_module(name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_extensions() -> None:
    """Load every extension module's file (:func:`_extension`): at import, on the
    backend's loading thread (``preload.py``)."""
    for name in LIBRARIES.values():
        _extension(name)


#: Held while an extension module's file is loaded: a read that needs it while the
#: background thread loads it waits for that load rather than starting its own.
_LOADING = threading.Lock()


def _extension(name: str) -> ctypes.CDLL | None:
    """The file of SciPy's extension module ``name`` loaded by the platform's loader (not
    as a module: nothing of it runs), whose scope holds the BLAS or LAPACK it links;
    None where it cannot be found or loaded."""
    with _LOADING:
        return _loaded_extension(name)


@functools.cache
def _loaded_extension(name: str) -> ctypes.CDLL | None:
    path = _extension_file(name)
    if path is None:
        return None
    try:
        return ctypes.CDLL(str(path), handle=shared_object.dlopen(str(path)))  # loaded without Python's lock
    except OSError:
        return None


def _extension_file(name: str) -> Path | None:
    """The file of SciPy's extension module ``name``, found without importing SciPy."""
    scipy = importlib.util.find_spec("scipy")
    if scipy is None or scipy.origin is None:
        return None
    folder = Path(scipy.origin).parent.joinpath(*name.split(".")[1:-1])
    files = [folder / (name.rpartition(".")[2] + suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    return next((f for f in files if f.is_file()), None)


def _prefix(symbol: str) -> str | None:
    return next((p for p in LIBRARIES if symbol.startswith(p)), None)


def is_import(symbol: str) -> bool:
    """Whether generated code calls ``symbol`` through its table of imports."""
    return _prefix(symbol) is not None
