"""The persistent cache of compiled object code, shared by processes through the file system.

An entry holds one compiled module's object code and the metadata needed to run it
(its buffer layout), in a file named by a key over everything the code depends on:
the HLO after the passes and constant binding (array constants are bound as
parameters, so their values are not in the code), the target (triple, CPU name,
features and optimisation level), the LLVM and llvmlite versions, and plaidarray's version and compiler
sources.
The vector math library that kernels call (``vector_math.py``) is stored the same way,
one entry per function and dtype (keys starting ``library-``), so a process loading all
its kernels from disk runs no LLVM optimisation at all.

Safety: an entry is written to a temporary file and renamed into place, which is
atomic, so processes writing the same entry at once all succeed and a reader never
sees half a file. Each entry starts with a header holding the lengths and a checksum
of the rest; an entry that fails it (truncated, corrupted, another format) is deleted
and treated as a miss. The cache never raises: when the directory cannot be read or
written, compilation simply happens as without it.

Processes compiling the same entry at once (the workers of a Dask or Cubed cluster
starting on an empty cache): ``Locks(keys)`` holds an advisory file lock for each key
(``fcntl.flock`` on one of ``LOCK_STRIPES`` lock files, so their number is bounded), and
the compiler looks the entry up again once it holds it: one process compiles while the
others wait and then load what it stored. Where file locks are unavailable, each compiles
as before.

Size: reading an entry refreshes its modification time. Each process keeps an estimate
of the directory's size (scanned at its first write, then grown by its own writes);
when a write takes it past the cap, the directory is scanned and the least recently
used entries are evicted until it fits. Scanning only then keeps writes cheap in a
directory of thousands of entries.

Environment: ``PLAIDARRAY_CACHE_DIR`` (default ``$XDG_CACHE_HOME/plaidarray``, else
``~/.cache/plaidarray``) and ``PLAIDARRAY_CACHE_MAX_BYTES`` (default 2 GiB; 0 turns
the disk cache off). Why so large: an LRU smaller than what a program compiles misses on
every entry when the program runs again in the same order, and one run of scikit-learn's
array-API tests stores a few hundred MB (~19 kernels of ~10 KB per test): with a 256 MiB cap
its second run took 431 s, with room for everything 47 s.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import struct
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ... import config

try:
    import fcntl
except ImportError:  # not POSIX: no cross-process lock, processes may compile an entry twice
    fcntl = None  # type: ignore[assignment]

SUFFIX = ".plaidobj"
_MAGIC = b"PLAIDOBJ"
_FORMAT = 1
#: magic, format, metadata length, object length, blake2b-256 of metadata + object
_HEADER = struct.Struct("<8sIQQ32s")
_STALE_TEMP_SECONDS = 3600
#: Lock files that ``compiling`` spreads keys over: unrelated compiles rarely share one,
#: and the directory never holds more than this many.
LOCK_STRIPES = 256
_LOCK_DIR = "locks"
_TEMP_PREFIX = ".tmp-"
_size_lock = threading.Lock()
#: Directory -> this process's estimate of its size in bytes.
_estimated_size: dict[Path, int] = {}


def cache_dir() -> Path:
    return config.get("PLAIDARRAY_CACHE_DIR")


def max_bytes() -> int:
    return config.get("PLAIDARRAY_CACHE_MAX_BYTES")


def enabled() -> bool:
    return max_bytes() > 0


#: The start of the keys of library entries (vector_math's functions, shared by all
#: kernels), which :func:`library_key` gives; kernels' keys are bare digests.
LIBRARY_PREFIX = "library-"


def library_key(*parts: str) -> str:
    """The key of a library entry for ``parts`` in this environment."""
    return LIBRARY_PREFIX + entry_key(*parts)


def entry_key(*parts: str) -> str:
    """The key of the entry for ``parts`` (the code's description) in this environment."""
    digest = hashlib.blake2b(digest_size=20)
    for part in (*_environment(), *parts):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


@functools.cache
def _environment() -> tuple[str, ...]:
    """Versions the code depends on besides its HLO and target: plaidarray's, and
    llvmlite's, which fixes the LLVM it is built with (read without loading LLVM)."""
    import llvmlite

    from ... import __version__

    return __version__, llvmlite.__version__, _compiler_digest()


def _compiler_digest() -> str:
    """A digest of plaidarray's sources (``sources_digest``)."""
    return sources_digest(Path(__file__).resolve().parents[2])  # the plaidarray package


def sources_digest(root: Path) -> str:
    """A digest of the ``.py`` files under ``root`` (names and contents), so a changed
    compiler misses old entries even before its version number changes. All of them,
    not only the packages that lower HLO: a list of those went stale once (codegen/ was
    split out of backend/ and left out), and reading the rest costs about 2 ms once per
    process (with ``os.scandir``: a process whose code is all cached waits for it)."""
    files: list[str] = []
    directories = [str(root)]
    while directories:
        with os.scandir(directories.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        directories.append(entry.path)
                elif entry.name.endswith(".py"):
                    files.append(entry.path)
    digest = hashlib.blake2b(digest_size=16)
    start = len(str(root)) + 1
    for path in sorted(files):
        digest.update(path[start:].replace(os.sep, "/").encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / (key + SUFFIX)


def load(key: str) -> tuple[bytes, dict[str, Any]] | None:
    """The object code and metadata stored under ``key``, or None (missing or damaged)."""
    if not enabled():
        return None
    path = _path(key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    entry = _decode(data)
    if entry is None:
        _remove(path)
        return None
    try:
        os.utime(path)
    except OSError:
        pass
    return entry


class Locks:
    """The cross-process locks of some keys, held while they are compiled and stored (see
    the module docstring) until :meth:`release`: each stripe once (a second lock of one
    file from this process would wait for itself), in stripe order (two processes never
    wait for each other's). Never raises for the locks' sake: without a usable directory
    it holds nothing, and the keys may be compiled twice."""

    def __init__(self, keys: Sequence[str]) -> None:
        self._descriptors: list[int] = []
        if not enabled() or fcntl is None:
            return
        directory = cache_dir() / _LOCK_DIR
        try:
            directory.mkdir(parents=True, exist_ok=True)
            for stripe in sorted({int(key[-8:], 16) % LOCK_STRIPES for key in keys}):
                self._descriptors.append(os.open(directory / f"{stripe}.lock", os.O_RDWR | os.O_CREAT, 0o644))
                fcntl.flock(self._descriptors[-1], fcntl.LOCK_EX)
        except (OSError, ValueError):
            pass

    def release(self) -> None:
        descriptors, self._descriptors = self._descriptors, []
        for fd in descriptors:
            os.close(fd)  # releases the lock


def store(key: str, code: bytes, metadata: dict[str, Any]) -> None:
    """Write an entry atomically, then evict least recently used entries over the cap."""
    if not enabled():
        return
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=directory, prefix=_TEMP_PREFIX)
    except OSError:
        return
    data = _encode(code, metadata)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, _path(key))
    except OSError:
        _remove(Path(temp))
        return
    with _size_lock:
        estimate = _estimated_size.get(directory)
        if estimate is None or estimate + len(data) > max_bytes():
            estimate = _evict(directory, max_bytes())
        else:
            estimate += len(data)
        _estimated_size[directory] = estimate


def _encode(code: bytes, metadata: dict[str, Any]) -> bytes:
    meta = json.dumps(metadata, sort_keys=True).encode()
    payload = meta + code
    checksum = hashlib.blake2b(payload, digest_size=32).digest()
    return _HEADER.pack(_MAGIC, _FORMAT, len(meta), len(code), checksum) + payload


def _decode(data: bytes) -> tuple[bytes, dict[str, Any]] | None:
    if len(data) < _HEADER.size:
        return None
    magic, version, meta_len, code_len, checksum = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if magic != _MAGIC or version != _FORMAT or len(payload) != meta_len + code_len:
        return None
    if hashlib.blake2b(payload, digest_size=32).digest() != checksum:
        return None
    try:
        metadata = json.loads(payload[:meta_len])
    except ValueError:
        return None
    return payload[meta_len:], metadata


def entries() -> list[tuple[Path, os.stat_result]]:
    """The cache's entries with their stat results (entries vanishing meanwhile are skipped)."""
    out: list[tuple[Path, os.stat_result]] = []
    try:
        paths = list(cache_dir().glob("*" + SUFFIX))
    except OSError:
        return out
    for path in paths:
        try:
            out.append((path, path.stat()))
        except OSError:
            continue
    return out


def clear() -> int:
    """Delete every entry (and leftover temporary files); returns how many entries."""
    removed = 0
    for path, _ in entries():
        removed += _remove(path)
    for temp in cache_dir().glob(_TEMP_PREFIX + "*"):
        _remove(temp)
    return removed


def _evict(directory: Path, cap: int) -> int:
    """Remove stale temporary files and least recently used entries until the entries
    fit in ``cap`` bytes; returns their size."""
    now = time.time()
    for temp in directory.glob(_TEMP_PREFIX + "*"):  # left by writers that died
        try:
            if now - temp.stat().st_mtime > _STALE_TEMP_SECONDS:
                _remove(temp)
        except OSError:
            continue
    present = entries()
    total = sum(st.st_size for _, st in present)
    for path, st in sorted(present, key=lambda entry: entry[1].st_mtime):
        if total <= cap:
            break
        total -= st.st_size
        _remove(path)
    return total


def _remove(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except OSError:
        return False
