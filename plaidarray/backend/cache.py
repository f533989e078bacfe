"""The executable cache: an LRU keyed by (graph fingerprint, signature, backend, target).

A hit returns the compiled executable without touching the compiler; the statistics
let tests and users see that (``plaidarray.cache_info()``). A miss that a backend
serves from its persistent cache counts as a disk hit, not a compile.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from cachetools import LRUCache

from .executable import Executable


@dataclass
class CacheInfo:
    hits: int = 0
    misses: int = 0
    compiles: int = 0
    compile_seconds: float = 0.0
    disk_hits: int = 0
    size: int = 0
    maxsize: int = 0
    per_backend_compiles: dict[str, int] = field(default_factory=dict)


class ExecutableCache:
    """Thread-safe LRU of executables; compiles each key once even under concurrency."""

    def __init__(self, maxsize: int) -> None:
        self._lru: LRUCache = LRUCache(maxsize=maxsize)
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self._info = CacheInfo(maxsize=maxsize)

    def get(self, key: Hashable, backend: str, compile_fn: Callable[[], Executable]) -> Executable:
        with self._lock:
            exe = self._lru.get(key)
            if exe is not None:
                self._info.hits += 1
                return exe
            self._info.misses += 1
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                exe = self._lru.get(key)
            if exe is not None:
                return exe
            start = time.perf_counter()
            exe = compile_fn()
            elapsed = time.perf_counter() - start
            with self._lock:
                self._lru[key] = exe
                self._key_locks.pop(key, None)
                if exe.from_disk:
                    self._info.disk_hits += 1
                else:
                    self._info.compiles += 1
                    self._info.compile_seconds += elapsed
                    counts = self._info.per_backend_compiles
                    counts[backend] = counts.get(backend, 0) + 1
            return exe

    def info(self) -> CacheInfo:
        with self._lock:
            snapshot = CacheInfo(**{**self._info.__dict__, "per_backend_compiles": dict(self._info.per_backend_compiles)})
            snapshot.size = len(self._lru)
            return snapshot

    def clear(self) -> None:
        with self._lock:
            self._lru.clear()
            self._info = CacheInfo(maxsize=self._info.maxsize)


EXECUTABLES = ExecutableCache(int(os.environ.get("PLAIDARRAY_CACHE_SIZE", "512")))
