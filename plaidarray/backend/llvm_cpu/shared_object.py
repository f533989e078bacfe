"""Object code as shared objects, loaded by the platform's dynamic loader.

Kernels and the vector math library are position-independent object code
(``codegen.new_machine``). Linked with the system linker into a shared object, they load
with ``dlopen`` in every process that finds them in the persistent cache: loading needs
neither LLVM nor llvmlite, and costs a fraction of a millisecond. The compiling process
runs the kernels and vector math functions it made from LLVM's MCJIT at once and links
them on a background thread (``storing.py``). Without a linker
(``ld`` on the PATH) object code is loaded by MCJIT (``jit.py``), as it always can be.

A shared object is loaded from its bytes (checked against the cache entry's checksum
before anything is written): written to a new file in a directory of this process's own
(mode 0700, under a random name, made at its first load and removed at exit), opened, and
removed; the loader keeps its mapping. Each load has a name never used before in the
process because the loader takes a name it has loaded before for the same object.
"""

from __future__ import annotations

import _ctypes
import atexit
import ctypes
import functools
import itertools
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

#: Seconds a link may take before it is abandoned (the object code is then loaded by MCJIT).
LINK_TIMEOUT = 60.0



@functools.cache
def linker() -> str | None:
    """The system linker, if there is one."""
    import shutil

    return shutil.which("ld")


def _private_directory() -> Path:
    """A new directory of this process's own (mode 0700), for files loaded or linked and
    removed (``tempfile.mkdtemp``'s way, without importing it: a load from the cache waits)."""
    base = Path(os.environ.get("TMPDIR") or "/tmp")
    while True:
        path = base / f"plaidarray-so-{os.urandom(8).hex()}"  # secrets.token_hex, without its import of random
        try:
            path.mkdir(mode=0o700)
            return path
        except FileExistsError:
            continue


#: This process's directory for shared objects being loaded (its pid, the directory),
#: and the numbers that name them there.
_loading: tuple[int, Path] | None = None
_loading_lock = threading.Lock()
_numbers = itertools.count()


def _loading_directory(stale: Path | None = None) -> Path:
    """This process's directory for loads, made at its first load (a forked child makes
    its own), or again if ``stale`` (gone: a cleaner of the temporary directory, say). A
    directory per load cost a ``mkdir`` and a ``rmdir`` of every load from the cache."""
    global _loading
    with _loading_lock:
        if _loading is None or _loading[0] != os.getpid() or _loading[1] == stale:
            _loading = (os.getpid(), _private_directory())
        return _loading[1]


@atexit.register
def _remove_loading_directory() -> None:
    if _loading is not None and _loading[0] == os.getpid():
        try:
            _loading[1].rmdir()
        except OSError:
            pass


#: The linker's options for a small shared object: code and read-only data in one segment
#: (by default each segment starts a page of its own: 13 KB for a kernel of a few hundred
#: bytes, 36% of what a run of SciPy's tests stored) and no symbol table beyond the
#: dynamic one that ``dlsym`` reads: 4.7 KB.
_COMPACT = ("-z", "noseparate-code", "-s")


def link(objects: Sequence[bytes]) -> bytes | None:
    """A shared object of ``objects`` (ELF relocatable object code), or None if there is
    no linker or it fails. (Its files are in a directory of its own, removed here, not by
    ``tempfile.TemporaryDirectory``'s finalizer, which at exit removed the directory of a
    link still running on the storing thread.)"""
    import shutil
    import subprocess

    tool = linker()
    if tool is None:
        return None
    work = _private_directory()
    try:
        inputs = []
        for i, code in enumerate(objects):
            path = work / f"{i}.o"
            path.write_bytes(code)
            inputs.append(str(path))
        output = work / "out.so"
        try:
            done = subprocess.run([tool, "-shared", "--hash-style=gnu", *_COMPACT, "-o", str(output), *inputs],
                                  capture_output=True, timeout=LINK_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
        return output.read_bytes()
    finally:
        shutil.rmtree(work, ignore_errors=True)


#: Seconds the installation's library may take to link (``link_files``): thousands of objects.
LIBRARY_LINK_TIMEOUT = 600.0


def link_files(paths: Sequence[Path], output: Path) -> bool:
    """Link the object files ``paths`` into the shared object ``output`` (the
    installation's library, ``bundles.link_installed``): its calls of its own functions
    bound within it (``-Bsymbolic``), and a symbol that two objects define (a kernel two
    build processes made alike) taken from the first. False if there is no linker or it
    fails (``output`` is then not there)."""
    import subprocess

    tool = linker()
    if tool is None:
        return False
    arguments = [tool, "-shared", "--hash-style=gnu", *_COMPACT, "-Bsymbolic", "-z", "muldefs", "-o", str(output)]
    try:
        done = subprocess.run([*arguments, *map(str, paths)], capture_output=True, timeout=LIBRARY_LINK_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is None or done.returncode != 0:
        output.unlink(missing_ok=True)
        return False
    return True


class SharedObject:
    """A loaded shared object; ``close`` (or collection) unloads it. Loaded and read with
    the loader's own calls (:func:`dlopen`, ``dlsym``): a ``ctypes.CDLL`` builds a
    class of its own for each library and a function object for each symbol looked up,
    20 us of each kernel's first load in a process."""

    def __init__(self, data: bytes, global_symbols: bool = False) -> None:
        directory = _loading_directory()
        path = directory / f"{next(_numbers)}.so"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileNotFoundError:
            path = _loading_directory(stale=directory) / path.name
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            self._handle: int | None = dlopen(str(path), global_symbols)
        finally:
            path.unlink(missing_ok=True)

    @classmethod
    def at(cls, path: str, global_symbols: bool = False) -> SharedObject:
        """The shared object in the file ``path``, loaded where it is (built at
        installation, ``bundles.unpack``: the package's own code, as its C extensions are;
        loaded by that name, which stays the same object's)."""
        loaded = cls.__new__(cls)
        loaded._handle = dlopen(path, global_symbols)
        return loaded

    def address(self, symbol: str) -> int:
        """The address of ``symbol`` (0 if the object does not define it)."""
        assert self._handle is not None, "the shared object was unloaded"
        try:
            return _dlsym(self._handle, symbol) or 0
        except OSError:
            return 0

    def close(self, _finalizing=sys.is_finalizing) -> None:
        if _finalizing():  # at exit the process unmaps everything, and kernels may still run
            return
        handle, self._handle = self._handle, None
        if handle is not None:
            _dlclose(handle)

    __del__ = close


def _mode(global_symbols: bool) -> int:
    """``dlopen``'s flags: every symbol bound at once (as ``ctypes.CDLL`` binds them, so a
    missing one fails the load, not a later call), visible to later loads if asked."""
    return os.RTLD_NOW | (os.RTLD_GLOBAL if global_symbols else os.RTLD_LOCAL)


#: ``dlclose`` (POSIX, as is this module's use), bound at import: objects are collected
#: when imports may no longer work.
_dlclose = _ctypes.dlclose  # type: ignore[attr-defined]
_dlsym = _ctypes.dlsym  # type: ignore[attr-defined]
#: The C library's ``dlopen`` and ``dlerror``, called as foreign functions: ctypes lets go
#: of Python's lock for such a call, where ``_ctypes.dlopen`` holds it.
_C = ctypes.CDLL(None)
_c_dlopen = _C.dlopen
_c_dlopen.argtypes, _c_dlopen.restype = (ctypes.c_char_p, ctypes.c_int), ctypes.c_void_p
_c_dlerror = _C.dlerror
_c_dlerror.argtypes, _c_dlerror.restype = (), ctypes.c_char_p


def dlopen(path: str, global_symbols: bool = False) -> int:
    """The loader's handle of the shared object ``path`` (its symbols visible to later
    loads if ``global_symbols``, ``_mode``); OSError with the loader's message where it
    does not load. Python's lock is let go during the
    load, so a library whose load runs long (SciPy's BLAS and LAPACK start OpenBLAS's
    threads and buffers, ~6 ms; the installation's library of op kernels binds its
    symbols) loads on the preload thread (``preload.py``) while the main thread runs a
    script's Python, not before it."""
    handle = _c_dlopen(os.fsencode(path), _mode(global_symbols))
    if not handle:
        message = _c_dlerror()
        raise OSError(message.decode(errors="replace") if message else f"dlopen: cannot load {path}")
    return handle

