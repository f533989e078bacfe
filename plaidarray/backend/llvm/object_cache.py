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

Trust: entries are object code that this process runs, so only this process's user may
have written them (the threat model is in docs/reliability.md). The directory must be
owned by the effective user and writable by no one else, or the disk cache is not used
(a warning says why, once; compiles happen as without it), as pip refuses a cache
directory owned by another user. An entry is opened without following a symbolic link
and without blocking, and read only if it is a regular file owned by the user, writable
by no one else and no larger than the cache's cap; any other entry is removed with a
warning. Its header's checksum is keyed by the entry's own key, so an entry copied or
renamed under another key fails it like a damaged one.

Safety: an entry is written to a temporary file (mode 0600) and renamed into place,
which is atomic, so processes writing the same entry at once all succeed and a reader
never sees half a file; a write interrupted by any exception removes its temporary file.
An entry that fails its header (truncated, corrupted, another format, another key) is
deleted and treated as a miss. The cache never raises for its files' sake: when the
directory cannot be read or written, compilation simply happens as without it (a bad
``PLAIDARRAY_CACHE_DIR`` is a ValueError naming it, as every bad setting is).

Processes compiling the same entry at once (the workers of a Dask or Cubed cluster
starting on an empty cache): ``Locks(keys)`` holds an advisory file lock for each key
(a POSIX record lock, ``fcntl.lockf``, on one of ``LOCK_STRIPES`` bytes of a lock file
of mode 0600, which no other user can hold), and the compiler looks the entry up again once
it holds it: one process compiles while the others wait and then load what it stored.
A wait lasts at most ``LOCK_TIMEOUT`` seconds: a holder that is stopped (Ctrl-Z, a
debugger) must not stop every other process's compiles, so after it this process compiles
too, at worst twice. Where file locks are unavailable, each compiles as before.

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

import errno
import functools
import hashlib
import json
import os
import stat
import struct
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ... import config
from ...version import __version__
from . import sources

try:
    import fcntl
except ImportError:  # not POSIX: no cross-process lock, processes may compile an entry twice
    fcntl = None  # type: ignore[assignment]

SUFFIX = ".plaidobj"
_MAGIC = b"PLAIDOBJ"
_FORMAT = 2
#: magic, format, metadata length, object length, blake2b-256 of metadata + object keyed
#: by the entry's key
_HEADER = struct.Struct("<8sIQQ32s")
_STALE_TEMP_SECONDS = 3600
#: Locks (bytes of one lock file) that ``Locks`` spreads keys over: unrelated compiles
#: rarely share one.
LOCK_STRIPES = 256
#: Seconds a compile waits for other processes' locks before compiling without them.
LOCK_TIMEOUT = 20.0
LOCK_DIRECTORY = "locks"
_LOCK_FILE = "stripes"
_TEMP_PREFIX = ".tmp-"
_size_lock = threading.Lock()
#: Directory -> this process's estimate of its size in bytes.
_estimated_size: dict[Path, int] = {}
#: What this process has warned about (a directory, or a directory's entries), once each.
_warned: set[tuple[str, Path]] = set()


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
    llvmlite's, which fixes the LLVM it is built with (read without loading LLVM: from
    the installation's toolchain stamp where llvmlite is as stamped, ``sources.py``),
    and the sources' digest."""
    checking = _checking
    if checking is not None and checking is not threading.current_thread():
        checking.join()  # returns at once in a child forked while it ran: the child checks
    return (__version__, *_stamps())


@functools.cache
def _stamps() -> tuple[str, str]:
    return _llvmlite_version(), _compiler_digest()


#: The thread checking the stamps, started at import (``check_stamps_in_background``).
_checking: threading.Thread | None = None


def check_stamps_in_background() -> None:
    """Start checking the installation's stamps (``_stamps``) on a thread, as this module
    is imported (the package imports it first): reading the two stamps, a ``stat`` of each source and finding llvmlite
    were 1.4 ms of a process's first read, whose keys need them, and are mostly system
    calls, which overlap the rest of the import where the sources' are made in C without
    the GIL (``sources.STATS_IN_C``; made from Python, each call would hand the GIL to
    the other thread and back, which slowed the import by more than the check takes: then
    the first key checks). The thread imports nothing of plaidarray's (a module being
    imported makes another thread wait for its import's end); the first key waits for it
    (``_environment``)."""
    global _checking
    if _checking is None and sources.STATS_IN_C is not None:
        _checking = threading.Thread(target=_stamps, name="plaidarray-stamps", daemon=True)
        _checking.start()


def _llvmlite_version() -> str:
    """llvmlite's version: the toolchain stamp's (``sources.stamped_version``), else imported."""
    found = sources.stamped_version("llvmlite", installed_file(sources.TOOLCHAIN_STAMP))
    if found is not None:
        return found
    import llvmlite

    return llvmlite.__version__


def _compiler_digest() -> str:
    """A digest of plaidarray's sources (``sources.py``): the installed kernels' stamp's,
    where the sources stat as it says, else read and hashed."""
    stamp = installed_file(sources.STAMP)
    return (sources.stamped_digest(PACKAGE, INSTALLED.name, stamp)
            or sources.restamped_digest(PACKAGE, INSTALLED.name, stamp))


def sources_digest_now() -> str:
    """The digest of plaidarray's sources as they are now, read and hashed."""
    return sources.sources_digest(PACKAGE, INSTALLED.name)


def write_sources_stamp(directory: Path, built_from: str) -> bool:
    """The stamp of plaidarray's sources, written beside the kernels an installation built
    into ``directory`` from them (``prebuild.py``), if they still hash to ``built_from``
    (their digest when the build started): kernels built while a source changed are keyed
    by another digest than the sources have at the end, and a stamp of these would send
    every process to keys no kernel has."""
    return sources.write_stamp(directory, PACKAGE, INSTALLED.name, built_from)


def write_toolchain_stamp(directory: Path) -> None:
    """The stamp of llvmlite's version, written beside the kernels an installation built
    into ``directory`` (``prebuild.py``)."""
    sources.write_toolchain_stamp(directory)


def _untrusted(st: os.stat_result, directory: bool = False, installed: bool = False) -> str:
    """Why a file (or a directory) with the status ``st`` may hold what someone other
    than this process's user wrote, or "" if it cannot: it is of the kind expected,
    owned by the effective user (or, for what was ``installed`` with the package, by
    root) and writable by no one else."""
    if not (stat.S_ISDIR(st.st_mode) if directory else stat.S_ISREG(st.st_mode)):
        return "is not a directory" if directory else "is not a regular file"
    if st.st_uid != os.geteuid() and not (installed and st.st_uid == 0):
        return f"is owned by uid {st.st_uid}, not by this process's user (uid {os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    return ""


def _warn_once(kind: str, directory: Path, message: str) -> None:
    if (kind, directory) not in _warned:
        _warned.add((kind, directory))
        warnings.warn(f"plaidarray: {message}", RuntimeWarning, stacklevel=2)


def trusted_directory(create: bool = False) -> Path | None:
    """The cache directory (made, mode 0700, when ``create``), or None when it cannot be
    used: missing, unreadable, or writable by someone other than this process's user
    (then with a warning, once: its entries would be code anyone could have written)."""
    directory = cache_dir()
    try:
        if create:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        problem = _untrusted(directory.stat(), directory=True)
    except OSError:
        return None
    if problem:
        _warn_once("directory", directory, f"the compile cache directory {directory} {problem}, so the persistent "
                                           f"cache is not used; set PLAIDARRAY_CACHE_DIR to a directory of your own")
        return None
    return directory


def load(key: str) -> tuple[bytes, dict[str, Any]] | None:
    """The object code and metadata stored under ``key``, or None (missing, damaged, or
    possibly written by another user): the kernels built at installation
    (``installed_directory``) first, then the user's cache. An entry is what its key
    describes wherever it is, so either may serve it; the installed ones first, because
    they are what a fresh process loads most (its user's cache looked up first cost each
    load a directory check and a missed open, a third of reading an entry)."""
    installed = installed_directory()
    if installed is not None:
        data = _read(os.path.join(installed, key + SUFFIX), installed=True)
        entry = _decode(key, data) if data is not None else None
        if entry is not None:
            return entry
    directory = trusted_directory() if enabled() else None
    if directory is not None:
        path = directory / (key + SUFFIX)
        data = _read(path)
        if data is not None:
            entry = _decode(key, data)
            if entry is None:
                _remove(path)
                return None
            try:
                os.utime(path)
            except OSError:
                pass
            return entry
    return None


#: The directory, in the package, of the kernels built at installation (``prebuild.py``).
#: The plaidarray package, whose sources the keys' digest covers.
PACKAGE = Path(__file__).resolve().parents[2]
INSTALLED = PACKAGE / "_kernels"


@functools.cache
def _installed_directory_trusted(directory: Path) -> bool:
    try:
        return not _untrusted(directory.stat(), directory=True, installed=True)
    except OSError:
        return False


def installed_directory() -> Path | None:
    """The kernels built at installation (``plaidarray/prebuild.py``), read after the
    user's cache and never written (but for the stamp of the sources, written anew once
    they are read and found the same, ``sources.restamped_digest``): None when absent, switched off
    (``PLAIDARRAY_INSTALLED_KERNELS=0``), or writable by anyone but its owner, who must
    be this process's user or root (as the package's own code is installed)."""
    if config.get("PLAIDARRAY_INSTALLED_KERNELS") != "1" or not _installed_directory_trusted(INSTALLED):
        return None
    return INSTALLED


def installed_file(name: str) -> str | None:
    """The path of the file ``name`` among the kernels built at installation (a bundle's
    shared object, ``bundles.unpack``) if it is there, a regular file, and trusted as an
    installed entry is (``_untrusted``); else None."""
    installed = installed_directory()
    if installed is None:
        return None
    path = os.path.join(installed, name)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return path if stat.S_ISREG(st.st_mode) and not _untrusted(st, installed=True) else None


def installed_entries(directory: Path) -> Iterator[tuple[str, bytes, dict[str, Any]]]:
    """The entries (key, code, metadata) of ``directory``, an installation's kernels being
    built (``prebuild.py``)."""
    for path in sorted(directory.glob("*" + SUFFIX)):
        key = path.name[:-len(SUFFIX)]
        data = _read(path, installed=True)
        entry = _decode(key, data) if data is not None else None
        if entry is not None:
            yield key, *entry


def write_installed(directory: Path, key: str, code: bytes, metadata: dict[str, Any]) -> None:
    """Write an entry into ``directory``, an installation's kernels being built (by one
    process, after the build: nothing to lock or evict)."""
    (directory / (key + SUFFIX)).write_bytes(_encode(key, code, metadata))


def _read(path: Path | str, installed: bool = False) -> bytes | None:
    """The bytes of the entry at ``path`` if this user wrote it (see the module
    docstring; or root, for an entry ``installed`` with the package), else None; an entry
    someone else could have written is removed (but one installed, which is left as it is)."""
    try:  # a FIFO must not block the open; a symbolic link is refused (ELOOP)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP and not installed:
            _distrust(Path(path), "is a symbolic link")
        return None
    try:
        st = os.fstat(fd)
        problem = _untrusted(st, installed=installed)
        if problem:
            if not installed:
                _distrust(Path(path), problem)
            return None
        if not installed and st.st_size > max(max_bytes(), _HEADER.size):
            return None  # more than the whole cache may hold: not an entry this cache wrote
        parts = []
        remaining = st.st_size
        while remaining > 0 and (part := os.read(fd, remaining)):
            parts.append(part)
            remaining -= len(part)
        return b"".join(parts)
    except (OSError, MemoryError):
        return None
    finally:
        os.close(fd)


def _distrust(path: Path, problem: str) -> None:
    _warn_once("entries", path.parent, f"the compile cache entry {path} {problem}; such entries are not run but "
                                       f"removed (this warning is given once per directory)")
    _remove(path)


class Locks:
    """The cross-process locks of some keys, held while they are compiled and stored (see
    the module docstring) until :meth:`release`: each stripe once, in stripe order (two
    processes never wait for each other's), all within ``LOCK_TIMEOUT``. Within the
    process, the keys themselves are waited for (a kernel its storing thread is still
    storing is found on disk once stored), while a stripe held for other keys is shared:
    no other process can hold it meanwhile. Never raises for the locks' sake: without a
    usable directory, or past the timeout, it holds what it has, and the keys may be
    compiled twice."""

    def __init__(self, keys: Sequence[str]) -> None:
        self._stripes: list[tuple[int, int]] = []
        self._keys: set[str] = set()
        if not keys or not enabled() or fcntl is None:
            return
        deadline = time.monotonic() + LOCK_TIMEOUT
        wanted = set(keys)
        with _held_lock:
            _keys_released.wait_for(lambda: not wanted & _held_keys, timeout=LOCK_TIMEOUT)
            self._keys = wanted - _held_keys  # past the timeout, what is free
            _held_keys.update(self._keys)
        try:
            directory = trusted_directory(create=True)
            if directory is not None:
                _lock_stripes(directory / LOCK_DIRECTORY, sorted({int(key[-8:], 16) % LOCK_STRIPES for key in keys}),
                              self._stripes, deadline)
        except BaseException:  # interrupted: the caller never gets these locks to release
            self.release()
            raise

    def release(self) -> None:
        stripes, self._stripes = self._stripes, []
        with _held_lock:
            _held_keys.difference_update(self._keys)
            self._keys = set()
            _keys_released.notify_all()
            for held in stripes:
                count = _held.pop(held, 0)  # 0: made before a fork, in the parent
                if count > 1:
                    _held[held] = count - 1
                elif count:
                    fcntl.lockf(held[0], fcntl.LOCK_UN, 1, held[1])


#: Each lock file's descriptor by its directory's device and inode (however the path is
#: spelled, one descriptor), kept open: a process's record locks on a file go when it
#: closes any descriptor of it. Those of other directories than the last
#: ``_KEPT_LOCK_FILES`` are closed once none of their stripes is held.
_lock_files: dict[tuple[int, int], int] = {}
_KEPT_LOCK_FILES = 4
#: The stripes this process holds, as (lock file descriptor, stripe): how many ``Locks``
#: share each. Record locks belong to the process, not to a thread or a descriptor.
_held: dict[tuple[int, int], int] = {}
#: The keys that this process's ``Locks`` hold.
_held_keys: set[str] = set()
_held_lock = threading.Lock()
_keys_released = threading.Condition(_held_lock)


def wait_stored(key: str) -> None:
    """Wait while this process holds ``key``'s lock (its storing thread has yet to write
    the entry: a lookup now would miss what the process compiled itself), at most
    ``LOCK_TIMEOUT``."""
    with _held_lock:
        _keys_released.wait_for(lambda: key not in _held_keys, timeout=LOCK_TIMEOUT)


def _forget_held() -> None:
    """A child made by ``fork`` holds none of its parent's record locks."""
    _held.clear()
    _held_keys.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_held)


def _lock_file(directory: Path) -> int | None:
    """The descriptor of ``directory``'s lock file, opened (and made) at first use; None
    if it is not the user's alone (the caller holds ``_held_lock``)."""
    directory.mkdir(mode=0o700, exist_ok=True)
    st = directory.stat()
    fd = _lock_files.get((st.st_dev, st.st_ino))
    if fd is not None:
        return fd
    if _untrusted(st, directory=True):
        return None
    fd = os.open(directory / _LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        opened = os.fstat(fd)
        if _untrusted(opened):
            os.close(fd)
            return None
        if stat.S_IMODE(opened.st_mode) != 0o600:
            os.fchmod(fd, 0o600)  # a lock file others can open, they can hold
    except BaseException:
        os.close(fd)
        raise
    if len(_lock_files) >= _KEPT_LOCK_FILES:  # a program moving between many cache directories (tests)
        busy = {held_fd for held_fd, _ in _held}
        for old, old_fd in list(_lock_files.items()):
            if old_fd not in busy:
                del _lock_files[old]
                os.close(old_fd)
    _lock_files[st.st_dev, st.st_ino] = fd
    return fd


def _lock_stripes(directory: Path, stripes: list[int], acquired: list[tuple[int, int]], deadline: float) -> None:
    """Lock ``stripes`` (bytes of ``directory``'s lock file) in order, each added to
    ``acquired`` (to release) as soon as this process holds it; stop at the first that
    cannot be locked in time. One file for all stripes: making a file costs ~0.6 ms on a
    journaling file system, a file per stripe a few milliseconds of a cold compile."""
    try:
        with _held_lock:
            fd = _lock_file(directory)
        if fd is None:
            return
        for stripe in stripes:
            locked = _lock_until(fd, stripe, deadline)
            acquired.append((fd, stripe))
            if not locked:
                return  # compiled without (all of) the locks: at worst twice
    except (OSError, ValueError):
        pass


def _lock_until(fd: int, stripe: int, deadline: float) -> bool:
    """Hold byte ``stripe`` of ``fd``'s file (counted in ``_held``, as held past the
    deadline too, so that releasing is alike), polling until ``deadline``; whether it is
    locked. Each attempt holds ``_held_lock``: the process's lock on a byte is one, so
    its threads take and release it only through the count."""
    pause = 0.001
    while True:
        with _held_lock:
            count = _held.get((fd, stripe), 0)
            if count:  # held by this process for other keys: shared
                _held[fd, stripe] = count + 1
                return True
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, stripe)
                _held[fd, stripe] = 1
                return True
            except OSError as error:
                if error.errno not in (errno.EACCES, errno.EAGAIN):
                    raise
                if time.monotonic() >= deadline:
                    _held[fd, stripe] = 1  # held without the lock, released alike
                    break
        time.sleep(pause)
        pause = min(2 * pause, 0.05)
    _warn_once("lock", cache_dir(), f"waited {LOCK_TIMEOUT:.0f} s for another process compiling the same code "
                                    f"(stopped?); compiling it here too")
    return False


def store(key: str, code: bytes, metadata: dict[str, Any]) -> None:
    """Write an entry atomically, then evict least recently used entries over the cap."""
    if not enabled():
        return
    directory = trusted_directory(create=True)
    if directory is None:
        return
    data = _encode(key, code, metadata)
    import tempfile  # a compile's alone (with shutil and random): not a process's import

    try:
        fd, temp = tempfile.mkstemp(dir=directory, prefix=_TEMP_PREFIX)
    except OSError:
        return
    stored = False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        target = directory / (key + SUFFIX)
        try:
            os.replace(temp, target)
        except IsADirectoryError:  # a directory in the entry's place (no entry is one): removed first
            _remove(target)
            os.replace(temp, target)
        stored = True
    except OSError:
        return
    finally:
        if not stored:  # an error, or an interrupt: no temporary file is left behind
            _remove(Path(temp))
    with _size_lock:
        estimate = _estimated_size.get(directory)
        if estimate is None or estimate + len(data) > max_bytes():
            estimate = _evict(directory, max_bytes())
        else:
            estimate += len(data)
        _estimated_size[directory] = estimate


def _checksum(key: str, payload: bytes) -> bytes:
    """A checksum of ``payload`` keyed by the entry's key: it holds only under that key."""
    return hashlib.blake2b(payload, digest_size=32, key=key.encode()).digest()


def _encode(key: str, code: bytes, metadata: dict[str, Any]) -> bytes:
    meta = json.dumps(metadata, sort_keys=True).encode()
    payload = meta + code
    return _HEADER.pack(_MAGIC, _FORMAT, len(meta), len(code), _checksum(key, payload)) + payload


def _decode(key: str, data: bytes) -> tuple[bytes, dict[str, Any]] | None:
    """The code and metadata of an entry stored under ``key``, or None."""
    if len(data) < _HEADER.size:
        return None
    magic, version, meta_len, code_len, checksum = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if magic != _MAGIC or version != _FORMAT or len(payload) != meta_len + code_len:
        return None
    if _checksum(key, payload) != checksum:
        return None
    try:
        metadata = json.loads(payload[:meta_len])
    except ValueError:
        return None
    if not isinstance(metadata, dict):
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
            out.append((path, path.lstat()))
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
    """Remove the entry at ``path``; a directory too (no entry is one, and one in an
    entry's place kept its key from being stored again, so every process compiled it)."""
    try:
        path.unlink()
        return True
    except IsADirectoryError:
        import shutil  # an entry's removal alone needs it: not at import

        shutil.rmtree(path, ignore_errors=True)
        return not path.exists()
    except OSError:
        return False


check_stamps_in_background()
