"""Bundles: the code of kernels generated together, as the persistent cache keeps it.

The kernels a compile generates are linked into one shared object (``kernels.py``); the
cache stores it once, as a bundle entry (its format, its kernels' symbols and the vector
math functions they call), and each kernel's entry names its bundle. A process loading
kernels from the cache loads each bundle once (``_loaded``), however many of its kernels
it finds one by one. Linking and storing happen on a background thread (``store_later``):
the compiling process already runs the kernels.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

from . import loaded_code, math_library, object_cache
from .loaded_code import Code

#: Bundles loaded in this process, by key, while a kernel holds their code.
_loaded: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def install(code: bytes, form: str, symbols: list[str], libraries: list[str], level: int) -> tuple[Code, str]:
    """Load a bundle, check that it defines ``symbols``, and only then store it: the cache
    never holds code that does not define what its entries name. Returns the loaded code
    and the bundle's key ("" when the disk cache is off)."""
    holder = load(code, form, libraries, level)
    missing = [symbol for symbol in symbols if not holder.address(symbol)]
    if missing:
        holder.close()
        raise RuntimeError(f"llvm-cpu: generated code does not define {', '.join(missing)}")
    key = store(code, form, symbols, libraries)
    if key:
        _loaded[key] = holder
    return holder, key


def store(code: bytes, form: str, symbols: list[str], libraries: list[str]) -> str:
    """Store a bundle whose code was checked to define ``symbols`` (:func:`install`, or
    the objects it was linked from, loaded when they were generated); its key ("" when
    the disk cache is off). The key is the code's digest: equal code is one entry."""
    if not object_cache.enabled():
        return ""
    key = object_cache.entry_key("bundle", hashlib.blake2b(code, digest_size=20).hexdigest())
    object_cache.store(key, code, {loaded_code.FORMAT: form, "symbols": symbols, "libraries": libraries})
    return key


def load(code: bytes, form: str, libraries: list[str], level: int) -> Code:
    """A bundle's code loaded, once the library functions it calls are."""
    math_library.load(libraries)
    return loaded_code.load(code, form, level)


def find(key: str, level: int) -> Code | None:
    """The bundle stored under ``key``, loaded (once per process); None if it is gone or
    damaged."""
    holder = _loaded.get(key)
    if holder is not None:
        return holder
    entry = object_cache.load(key)
    if entry is None:
        return None
    code, meta = entry
    form, libraries = meta.get(loaded_code.FORMAT), meta.get("libraries")
    if form not in loaded_code.FORMATS or not isinstance(libraries, list):
        return None
    try:
        holder = load(code, str(form), [str(name) for name in libraries], level)
    except (OSError, RuntimeError, ValueError):
        return None
    _loaded[key] = holder
    return holder


class _Storer:
    """Stores compiles' kernels on a background thread, in the order they were compiled,
    then releases their cross-process locks (a process waiting for them then finds them
    stored). At exit it finishes what is queued: linking and writing take milliseconds,
    and a kernel not stored is compiled again by the next process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.Queue[tuple[Callable[[], None], object_cache.Locks] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._owner = 0

    def submit(self, job: Callable[[], None], held: object_cache.Locks) -> None:
        if not object_cache.enabled():
            held.release()
            return
        with self._lock:
            if self._thread is None or self._owner != os.getpid():  # a forked child starts its own
                self._jobs = queue.Queue()
                self._thread = threading.Thread(target=self._serve, args=(self._jobs,),
                                                name="plaidarray-store", daemon=True)
                self._owner = os.getpid()
                self._thread.start()
            self._jobs.put((job, held))

    @staticmethod
    def _serve(jobs: queue.Queue) -> None:
        while (item := jobs.get()) is not None:
            job, held = item
            try:
                job()
            except Exception as error:  # noqa: BLE001  the kernels run from memory; the cache just lacks them
                _log.warning("plaidarray: storing compiled kernels failed: %s", error)
            finally:
                held.release()
                jobs.task_done()

    def drain(self) -> None:
        """Wait until every job submitted so far is done."""
        with self._lock:
            jobs = self._jobs if self._thread is not None and self._owner == os.getpid() else None
        if jobs is not None:
            jobs.join()


_log = logging.getLogger("plaidarray.compiles")
_STORER = _Storer()
atexit.register(_STORER.drain)

#: Run ``job`` (storing a compile's kernels) on the background thread, then release ``held``.
store_later = _STORER.submit
#: Wait until every store submitted so far is done (the cache then holds what was compiled).
drain = _STORER.drain
