"""The executable cache: least recently used out first (approximately: the CLOCK
algorithm), keyed by (graph fingerprint, signature, backend, target).

Executables made without compiling for one graph's sizes (a baseline sequence, a
shape-generic executable bound) belong to a *family*, their graph's structure, which
holds at most ``FAMILY_SHARE`` of the cache: a loop over ever new sizes (a window's,
a batch's) is a scan, and a least-recently-used cache that admits every key of a scan
keeps nothing it will see again while each insert evicts another entry. A loop over
8000 window lengths took 1.1-1.2 s so, and 0.9 s with the share: most of the difference
was the garbage collector walking executables that came and went. A family at its share
admits a size only in place of one of its own, and only one met more often (TinyLFU's
admission, ``_admitted``): a scan's sizes, each met once, run uncached (binding again costs
tens of microseconds) and the sizes cached are hit as before, while a size that comes back
after a scan (a window length that repeats, a script's rerun) is cached at its second miss
instead of binding again at every read for good, as it did when a full family admitted
nothing: 45 us a read of a window's statistics against 20 us hit.

A hit returns the compiled executable without touching the compiler; the statistics
let tests and users see that (``plaidarray.cache_info()``). A miss that a backend
serves from its persistent cache counts as a disk hit, not a compile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterator
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field

from .. import config
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
    #: Kernels generated, and kernels loaded from the persistent cache, by a backend that
    #: compiles an executable as kernels shared with other executables (llvm-cpu): an
    #: executable compiled from known kernels generates none.
    kernel_compiles: int = 0
    kernel_disk_hits: int = 0


class KeyLocks:
    """A lock per key that some thread is computing, so that threads missing the same
    key at once compute it once: the first computes, the others wait and then find its
    result. An entry lives while a thread holds or waits for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Hashable, list] = {}  # key -> [lock, threads holding or waiting]

    @contextmanager
    def hold(self, key: Hashable) -> Iterator[None]:
        with self._lock:
            entry = self._entries.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._lock:
                entry[1] -= 1
                if not entry[1]:
                    del self._entries[key]


#: The part of the cache one family of bound executables may hold (``ExecutableCache.insert``).
FAMILY_SHARE = 0.75
#: The admission counts are halved once the keys missed outnumber the cache's entries this
#: many times (``ExecutableCache._admitted``).
AGED_AFTER = 4


#: The digests (``ExecutableCache.remember``) kept for one executable, and in all per entry the cache holds.
DIGESTS_PER_EXECUTABLE = 4
DIGESTS_PER_ENTRY = 2


class HashedKey(tuple):
    """A cache key that is a tuple, its hash worked out once. A read's key holds its
    graph's rows (nested tuples, hashed anew at each ask: ~1-3 us for 10-50 rows), and a
    read that misses asks for it five times (its lookup, then the insert's membership
    test, family and order). Equal to the plain tuple of its items, and of its hash,
    so a lookup by the plain tuple (``_graph.read``'s, in C) finds it."""

    hashed: int

    def __new__(cls, items: tuple) -> HashedKey:
        key = super().__new__(cls, items)
        key.hashed = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self.hashed


class ExecutableCache:
    """Thread-safe cache of executables; compiles each key once even under concurrency.

    A lookup happens on every read of a value, and hashing and comparing a graph's key
    (nested tuples, hashed anew each time) costs ~0.3 us a time, so a hit does it once:
    it marks the executable used instead of moving its key to the end of the order.
    Eviction pops the oldest key and gives a used one a second chance at the end (the
    CLOCK approximation of least-recently-used eviction, as page caches do): with the
    working set inside the cache, the one evicted is one not used since it last came round."""

    def __init__(self, maxsize: int) -> None:
        self._lru: OrderedDict[Hashable, Executable] = OrderedDict()
        self._used: set[int] = set()  # ids of executables used since they last came round
        self._maxsize = maxsize
        #: The family of each key inserted with one, and each family's keys (with their
        #: executables) in the order they came in or came round (``_admitted``).
        self._family_of: dict[Hashable, Hashable] = {}
        self._families: dict[Hashable, OrderedDict[Hashable, Executable]] = {}
        self._family_limit = max(1, int(maxsize * FAMILY_SHARE))
        #: What a family at its share admits by (``_admitted``): the misses of keys it did
        #: not admit, by the key's hash, and the hits of cached executables, by id; both
        #: halved once the misses name ``AGED_AFTER`` times as many keys as the cache holds,
        #: so neither grows without bound and old counts fade. Lookups add to the hits
        #: without the lock: a count lost to a race only makes admission a guess less good.
        self._misses: dict[int, int] = {}
        self._hit_counts: dict[int, int] = {}
        self._lock = threading.Lock()
        self._compiling = KeyLocks()
        self._info = CacheInfo(maxsize=maxsize)
        self._hits: dict[int, int] = {}  # hits by thread id
        #: Cached executables by a read's digest (``_graph.read``, in C: its graph's rows as
        #: bytes, which a read makes and compares in ~1 us where making and comparing the
        #: key's tuples took ~15 us for 30 rows), each with the key it stands for; and each
        #: executable's digests, by id, which go when it leaves the cache (``_unlink``).
        self.digests: dict[bytes, tuple[Executable, Hashable]] = {}
        self._digests_of: dict[int, list[bytes]] = {}
        #: Called by ``clear``: what backends keep for executables (shared kernels) goes too.
        self.on_clear: list[Callable[[], None]] = []
        #: Called by ``info`` with the snapshot: backends add their own counts.
        self.on_info: list[Callable[[CacheInfo], None]] = []

    def lookup(self, key: Hashable) -> Executable | None:
        """The executable cached under ``key`` (a hit, counted: ``hit``), or None.

        Without the lock, which would be a third of a lookup (0.3 us; every read of a
        value looks up): ``dict.get`` and ``set.add`` are atomic, a writer holding the
        lock changes the dict in atomic steps too, and each thread counts its hits under
        its own id, so no two threads ever add to one count."""
        exe = self._lru.get(key)
        if exe is not None:
            self.hit(exe)
        return exe

    def remember(self, digest: bytes, key: Hashable, exe: Executable) -> None:
        """Let ``digest`` (a read's, ``_graph.read``) find ``exe`` from now on, where it is
        still cached under ``key``: at most ``DIGESTS_PER_EXECUTABLE`` digests an executable
        (a key's reads of other bits have other digests: 0.0 and -0.0, attributes in
        another order), and at most ``DIGESTS_PER_ENTRY`` times the cache's size in all."""
        with self._lock:
            if self._lru.get(key) is not exe:
                return
            if len(self.digests) >= DIGESTS_PER_ENTRY * self._maxsize:
                self.digests.clear()
                self._digests_of.clear()
            listed = self._digests_of.setdefault(id(exe), [])
            if len(listed) < DIGESTS_PER_EXECUTABLE and digest not in self.digests:
                self.digests[digest] = (exe, key)
                listed.append(digest)

    def _unlink(self, exe: Executable) -> None:
        """Drop the digests of ``exe``, which leaves the cache (the caller holds the lock)."""
        for digest in self._digests_of.pop(id(exe), ()):
            self.digests.pop(digest, None)

    def hit(self, exe: Executable) -> None:
        """Count a hit on ``exe``, found in ``entries`` (``lookup``'s, and ``_graph.read``'s,
        which looks a read's key up in C): it is marked used, for eviction and admission,
        and the thread's hits go up, for ``info``."""
        number = id(exe)
        self._used.add(number)
        counts = self._hit_counts
        counts[number] = counts.get(number, 0) + 1
        hits, thread = self._hits, threading.get_ident()
        hits[thread] = hits.get(thread, 0) + 1

    @property
    def entries(self) -> dict[Hashable, Executable]:
        """The executables by key, the one dict for the process's life (``clear`` empties
        it): a lookup made elsewhere (``_graph.read``, in C) gets it and counts its hits
        with ``hit``."""
        return self._lru

    def get(self, key: Hashable, backend: str, compile_fn: Callable[[], Executable]) -> Executable:
        """The executable cached under ``key``, made by ``compile_fn`` on a miss."""
        exe = self.lookup(key)
        if exe is not None:
            return exe
        with self._lock:
            self._info.misses += 1
        with self._compiling.hold(key):
            with self._lock:
                exe = self._lru.get(key)
            if exe is not None:  # compiled by the thread this one waited for
                return exe
            start = time.perf_counter()
            exe = compile_fn()
            elapsed = time.perf_counter() - start
            with self._lock:
                evicted = self._keep(key, exe, elapsed, backend)
            del evicted  # released after the lock: freeing an executable's code takes LLVM's lock
            return exe

    def loaded(self, key: Hashable, backend: str, exe: Executable) -> Executable:
        """The executable cached under ``key``, else ``exe``, loaded from the disk (an op
        kernel the installation holds) and cached there, counted as ``get`` counts a miss
        that loads: without ``get``'s lock for the key, which only keeps threads from
        compiling one key twice, and was a tenth of an op kernel's first use."""
        found = self.lookup(key)
        if found is not None:
            return found
        with self._lock:
            self._info.misses += 1
            found = self._lru.get(key)
            if found is not None:  # loaded by another thread meanwhile
                return found
            evicted = self._keep(key, exe, 0.0, backend)
        del evicted  # released after the lock, as in ``get``
        return exe

    def _keep(self, key: Hashable, exe: Executable, seconds: float, backend: str) -> list[tuple[Hashable, Executable]]:
        """Cache ``exe`` under ``key``, made by ``backend`` in ``seconds`` (compiled or
        loaded), evicting what it must: the evicted, which the caller releases after the
        lock (the caller holds it)."""
        evicted = []
        if self._maxsize:  # PLAIDARRAY_CACHE_SIZE=0 caches nothing
            while len(self._lru) >= self._maxsize:
                evicted.append(self._evict_one())
            self._lru[key] = exe
        self._count(exe, seconds, backend)
        return evicted

    def _count(self, exe: Executable, seconds: float, backend: str) -> None:
        """Count a compile (or a load from the disk cache) of ``seconds`` (the caller holds the lock)."""
        if exe.from_disk:
            self._info.disk_hits += 1
        else:
            self._info.compiles += 1
            self._info.compile_seconds += seconds
            counts = self._info.per_backend_compiles
            counts[backend] = counts.get(backend, 0) + 1

    def insert(self, key: Hashable, exe: Executable, *, family: Hashable = None, sizes: Hashable = None,
               compiled: bool = False, seconds: float = 0.0, backend: str = "") -> None:
        """Cache ``exe`` under ``key``, replacing what is there: made without compiling (a
        shape-generic executable bound to one graph's sizes, a baseline one; ``family``,
        its graph's structure, unless None, is admitted while it holds less than its
        share, ``FAMILY_SHARE``, and then only in place of one of its keys, ``_admitted``,
        which counts ``key`` by ``sizes`` where given: what tells it from the family's
        other keys, cheaper to hash than the whole graph's key),
        or, if ``compiled``, compiled by ``backend`` in ``seconds`` (counted as ``get``
        counts)."""
        evicted = []  # released after the lock, as in ``get``
        with self._lock:
            if self._maxsize:
                new = key not in self._lru
                if not new:
                    self._hit_counts.pop(id(self._lru[key]), None)
                    self._unlink(self._lru[key])
                    held_by = self._family_of.get(key)
                    if held_by is not None:
                        self._families[held_by][key] = exe
                elif family is not None:
                    members = self._families.get(family)
                    if members is None:
                        members = self._families[family] = OrderedDict()
                    if len(members) >= self._family_limit:
                        replaced = self._admitted(key if sizes is None else (family, sizes), members)
                        if replaced is None:
                            return
                        evicted.append(replaced)
                    members[key] = exe
                    self._family_of[key] = family
                while new and len(self._lru) >= self._maxsize:
                    evicted.append(self._evict_one())
                self._lru[key] = exe
            if compiled:
                self._count(exe, seconds, backend)

    def _admitted(self, key: Hashable, members: OrderedDict[Hashable, Executable]
                  ) -> tuple[Hashable, Executable] | None:
        """Whether a family at its share (its keys ``members``) admits ``key`` (or what
        stands for it, ``insert``'s ``sizes``), and in place of which key: the first of its
        keys in order not used since it last came round (the CLOCK of ``_evict_one`` within
        the family), if ``key`` has missed more often than that one was met (its admission
        and its hits), as TinyLFU admits. That key is removed and returned; None: not
        admitted (the caller holds the lock). A scan, each size met once, admits nothing; a
        cyclic scan longer than the share keeps the sizes it holds, each met as often as
        the others; a size met again after a scan takes the place of one met once."""
        number = hash(key)
        misses = self._misses[number] = self._misses.get(number, 0) + 1
        if len(self._misses) > AGED_AFTER * self._maxsize:
            self._misses = {h: n >> 1 for h, n in self._misses.items() if n > 1}
            self._hit_counts = {i: n >> 1 for i, n in self._hit_counts.items() if n > 1}
        for _ in range(len(members) + 1):  # one pass unmarks every key
            victim, exe = next(iter(members.items()))
            if id(exe) not in self._used:
                break
            self._used.discard(id(exe))
            members.move_to_end(victim)
        if misses <= 1 + self._hit_counts.get(id(exe), 0):
            return None
        del self._lru[victim]
        self._forget(victim, exe)
        return victim, exe

    def _evict_one(self) -> tuple[Hashable, Executable]:
        """Remove and return the first key in order not used since it last came round,
        giving each used one met on the way a place at the end (the caller holds the lock).
        At most one pass: after it every key is unmarked."""
        while True:
            key, exe = self._lru.popitem(last=False)
            if id(exe) not in self._used:
                self._forget(key, exe)
                return key, exe
            self._used.discard(id(exe))
            self._lru[key] = exe

    def _forget(self, key: Hashable, exe: Executable) -> None:
        """Drop what is kept about ``key``, just removed with ``exe`` (the caller holds the lock)."""
        self._hit_counts.pop(id(exe), None)
        self._unlink(exe)
        family = self._family_of.pop(key, None)
        if family is not None:
            members = self._families[family]
            del members[key]
            if not members:
                del self._families[family]

    def info(self) -> CacheInfo:
        with self._lock:
            snapshot = CacheInfo(**{**self._info.__dict__, "per_backend_compiles": dict(self._info.per_backend_compiles)})
            snapshot.size = len(self._lru)
            snapshot.hits = sum(list(self._hits.values()))
        for hook in self.on_info:
            hook(snapshot)
        return snapshot

    def clear(self) -> None:
        """Drop every executable and reset the counters; backends drop what they keep
        besides (``on_clear``: llvm-cpu's compiled kernels)."""
        with self._lock:
            self._lru.clear()
            self.digests.clear()
            self._digests_of.clear()
            self._used.clear()
            self._family_of.clear()
            self._families.clear()
            self._misses.clear()
            self._hit_counts.clear()
            self._hits.clear()
            self._info = CacheInfo(maxsize=self._info.maxsize)
        for hook in self.on_clear:
            hook()


EXECUTABLES = ExecutableCache(config.get("PLAIDARRAY_CACHE_SIZE"))
