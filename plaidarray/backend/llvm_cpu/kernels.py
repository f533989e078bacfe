"""Compiled kernels, shared by every executable that runs them.

A module's segments are kernels of their own (``kernel_source.KernelSource``), keyed by
their LLVM IR text: the same fused loop nest in two graphs, or twice in one (k-means'
per-cluster sums), is the same kernel, compiled once and found again in this process
(``KERNELS``) or in the persistent cache (an entry per kernel). A compile therefore
generates code only for what is new, as TorchInductor's kernel cache does; an
executable is a list of kernel calls (``executable.py``).

The kernels a compile generates are generated together: their IR linked into one module
(per tier of code: one run of LLVM's pipeline and code generator), whose object code this
process runs at once (MCJIT); in the background the objects are linked into one shared
object (one run of the linker), stored once as a bundle that each kernel's entry names,
which other processes load without LLVM. A kernel's first code is first-tier code
(``tiering.py``) when the compiler's level asks for it; the kernel then keeps its IR,
and its full code (a bundle of its own) replaces it once executables running it have
run long enough.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from .. import dump
from ..cache import EXECUTABLES, CacheInfo, KeyLocks
from ..llvm import object_cache, storing
from . import bundles, installed_library, loaded_code, math_library, tiering
from ..llvm.kernel_source import KernelSource
from .loaded_code import Code

if TYPE_CHECKING:
    from ..llvm.codegen import Product

#: Kernels no live executable runs that this process keeps anyway, the most recently
#: used: an executable evicted from the cache and made again soon after finds them, while
#: a program compiling ever new kernels keeps a bounded number (each holds its code).
KEPT_UNUSED_KERNELS = 64


class CompiledKernel:
    """Machine code of one kernel: ``address`` is its entry, ``upgrade`` how its full
    code is made while it runs first-tier code (None once it has it)."""

    def __init__(self, symbol: str, code: Code, address: int, from_disk: bool = False) -> None:
        self.symbol = symbol
        self._code = code
        self.address = address
        self.from_disk = from_disk
        self.upgrade: tiering.Upgrade | None = None
        #: First-tier code replaced by full code: a run on another thread may still be in
        #: it, so it lives as long as the kernel.
        self._retired: list[Code] = []

    def install_full_code(self, code: Code, address: int) -> None:
        """Switch to ``code`` (the background thread of ``tiering``). Executables read
        ``address`` when they next run (``tiering.generation`` tells them it changed)."""
        self._retired.append(self._code)
        self._code = code
        self.address = address
        self.upgrade = None


@dataclass
class Generated:
    """What a compile produced: its kernels by key, and the listings of what it generated
    (optimised IR and assembly, for a dump)."""

    kernels: dict[str, CompiledKernel]
    products: list[Product]


class KernelCache:
    """Kernels by key: every kernel a live executable holds (weakly referenced here), and
    the ``kept`` most recently used besides. Threads missing the same key wait for one
    compile of it."""

    def __init__(self, kept: int) -> None:
        self._kernels: weakref.WeakValueDictionary[str, CompiledKernel] = weakref.WeakValueDictionary()
        self._recent: OrderedDict[str, CompiledKernel] = OrderedDict()
        self._kept = kept
        self._lock = threading.Lock()
        self.compiling = KeyLocks()
        #: Kernels generated, and kernels loaded from the persistent cache, by this process.
        self.generated = 0
        self.loaded = 0

    def get(self, key: str) -> CompiledKernel | None:
        kernel = self._kernels.get(key)
        if kernel is not None:
            self._keep(key, kernel)
        return kernel

    def put(self, key: str, kernel: CompiledKernel) -> None:
        """Keep ``kernel`` (just generated, or loaded from the persistent cache: counted)."""
        with self._lock:
            self._kernels[key] = kernel
            if kernel.from_disk:
                self.loaded += 1
            else:
                self.generated += 1
            self._kept_recently(key, kernel)

    def _keep(self, key: str, kernel: CompiledKernel) -> None:
        with self._lock:
            self._kept_recently(key, kernel)

    def _kept_recently(self, key: str, kernel: CompiledKernel) -> None:
        """Keep ``kernel`` among the most recent (the caller holds the lock)."""
        recent = self._recent
        recent[key] = kernel
        recent.move_to_end(key)
        while len(recent) > self._kept:
            recent.popitem(last=False)

    def live(self) -> list[CompiledKernel]:
        """Every kernel that a live executable runs or that is kept besides."""
        with self._lock:
            return list(self._kernels.values())

    def clear(self) -> None:
        with self._lock:
            self._kernels.clear()
            self._recent.clear()
            self.generated = self.loaded = 0

    def add_counts(self, info: CacheInfo) -> None:
        info.kernel_compiles, info.kernel_disk_hits = self.generated, self.loaded


KERNELS = KernelCache(KEPT_UNUSED_KERNELS)


def finish_upgrades() -> None:
    """Generate the full code of every live kernel still running first-tier code, and wait
    for it: for benchmarks and tests that time or compare full code, where an executable
    would tier up only once its runs have taken ``tiering.TIER_UP_AFTER_SECONDS``."""
    tiering.submit(KERNELS.live())
    tiering.drain()
EXECUTABLES.on_clear.append(storing.drain)  # what was compiled is in the persistent cache then
EXECUTABLES.on_clear.append(KERNELS.clear)
EXECUTABLES.on_info.append(KERNELS.add_counts)

def disk_key(key: str, target: str) -> str:
    """The persistent cache's key of the kernel ``key`` for a target (``CpuCompiler.target``)."""
    return object_cache.entry_key("kernel", key, target)


def kernels_for(sources: Sequence[KernelSource], level: int, target: str, quick: bool) -> Generated:
    """The compiled kernel of each distinct source: from this process, else from the
    persistent cache, else generated together (first-tier code if ``quick``). Threads and
    processes needing the same kernels at once generate them once: each holds every
    missing kernel's lock (in key order; across processes until they are stored) and
    looks again."""
    found: dict[str, CompiledKernel] = {}
    products: list[Product] = []
    unique = {s.key: s for s in sources}
    missing = [s for key, s in sorted(unique.items()) if not _found(key, found)]
    if not missing:
        return Generated(found, products)
    locks = [KERNELS.compiling.hold(s.key) for s in missing]
    for lock in locks:
        lock.__enter__()
    try:
        missing = [s for s in missing if not _found(s.key, found)]
        listing = dump.dump_dir() is not None
        if not listing:
            missing = [s for s in missing if not _found_on_disk(s, level, target, found)]
        if missing:
            held: object_cache.Locks | None = object_cache.Locks([disk_key(s.key, target) for s in missing])
            try:
                if not listing:  # another process may have generated them meanwhile
                    missing = [s for s in missing if not _found_on_disk(s, level, target, found)]
                if missing:
                    stored = _generate(missing, level, target, quick, products, found)
                    storing.store_later(functools.partial(_store, stored), cast(object_cache.Locks, held))
                    held = None
            finally:
                if held is not None:
                    held.release()
    finally:
        for lock in reversed(locks):
            lock.__exit__(None, None, None)
    return Generated(found, products)


def _found(key: str, found: dict[str, CompiledKernel]) -> bool:
    kernel = KERNELS.get(key)
    if kernel is not None:
        found[key] = kernel
    return kernel is not None


def _found_on_disk(source: KernelSource, level: int, target: str, found: dict[str, CompiledKernel]) -> bool:
    kernel = load(disk_key(source.key, target), source.symbol, level)
    if kernel is None:
        return False
    KERNELS.put(source.key, kernel)
    found[source.key] = kernel
    return True


@dataclass
class _Stored:
    """What a compile leaves to store: each module's object code, its kernels and whether
    it calls vector math (its IR was vectorised), and the packed IR of those that are
    first-tier code (``tiering.pack_ir``), by key."""

    objects: list[tuple[bytes, list[KernelSource], bool]]
    target: str
    packed_irs: dict[str, bytes] = field(default_factory=dict)


#: What a kernel entry's ``ir`` says when its payload is the kernel's packed IR.
_PACKED = "zlib"


def _generate(sources: list[KernelSource], level: int, target: str, quick: bool, products: list[Product],
              found: dict[str, CompiledKernel]) -> _Stored:
    """Generate ``sources`` together, one module per pair of IR and emission levels, and
    load each module's object code into MCJIT at once: the compile waits for LLVM, not for
    the linker, which makes the shared object the cache keeps in the background."""
    from ..llvm import codegen  # generating needs LLVM
    from ..llvm import codegen_worker
    from .targets import host

    groups: dict[tuple[int, int | None], list[KernelSource]] = {}
    for source in sources:
        levels: tuple[int, int | None]
        if quick:
            levels = tiering.ir_level(source.ir, level, source.largest), tiering.QUICK_EMIT_LEVEL
        else:
            levels = tiering.full_ir_level(source.ir, level), level
        groups.setdefault(levels, []).append(source)
    listings = dump.dump_dir() is not None
    stored = _Stored([], target)
    for (ir_level, emit_level), group in groups.items():
        product = codegen_worker.generate([s.ir for s in group], host(), ir_level, listings=listings,
                                          emit_level=emit_level)
        products.append(product)
        vectors = codegen.vectorises(ir_level)
        stored.objects.append((product.object, group, vectors))
        holder = bundles.load(product.object, loaded_code.OBJECT, _libraries(group), level, vectors)
        for source in group:
            address = holder.address(source.symbol)
            if not address:
                raise RuntimeError(f"llvm-cpu: the object code of kernel {source.symbol} does not define it")
            kernel = CompiledKernel(source.symbol, holder, address)
            if quick:
                packed = stored.packed_irs[source.key] = tiering.pack_ir(source.ir)
                kernel.upgrade = tiering.Upgrade(packed, source.symbol, level, disk_key(source.key, target))
            KERNELS.put(source.key, kernel)
            found[source.key] = kernel
    return stored


def _libraries(sources: Sequence[KernelSource]) -> list[str]:
    return sorted({name for s in sources for name in math_library.called_by(s.ir)})


def _store(stored: _Stored) -> None:
    """Store a compile's kernels: their objects linked into one shared object (without a
    linker, each object as it is), a bundle, and an entry per kernel naming it. The
    objects were loaded, and their kernels found in them, when they were generated
    (``_generate``); the linker joins them unchanged, so the bundle is not loaded again to
    check it (a load and unload cost ~4 ms of this process's time per compile)."""
    try:
        packages = [(loaded_code.package([code for code, _, _ in stored.objects]),
                     [s for _, group, _ in stored.objects for s in group], any(v for _, _, v in stored.objects))]
    except ValueError:  # no linker: each object is kept as it is
        packages = [(loaded_code.package([code]), group, vectors) for code, group, vectors in stored.objects]
    for (code, form), group, vectors in packages:
        bundle = bundles.store(code, form, [s.symbol for s in group], _libraries(group), vectors,
                               [object_code for object_code, _, _ in stored.objects] if form == loaded_code.SHARED else ())
        if not bundle:
            continue
        for source in group:
            metadata = {"symbol": source.symbol, "bundle": bundle}
            # A first-tier entry keeps its IR, so a process loading it can make its full code.
            packed = stored.packed_irs.get(source.key)
            object_cache.store(disk_key(source.key, stored.target),
                               packed or b"", {**metadata, "ir": _PACKED} if packed else metadata)


def load(key: str, symbol: str, level: int) -> CompiledKernel | None:
    """The kernel stored under ``key`` by an earlier compile (maybe another process's),
    or None (also when its bundle is gone or damaged)."""
    entry = object_cache.load(key)
    if entry is None:
        return None
    packed, meta = entry
    kernel = in_bundle(symbol, meta, level)
    if kernel is not None and meta.get("ir") == _PACKED and packed and tiering.tiered(level):
        kernel.upgrade = tiering.Upgrade(packed, symbol, level, key)
    return kernel


def in_bundle(symbol: str, meta: dict, level: int) -> CompiledKernel | None:
    """The kernel ``symbol`` from the bundle that its entry's metadata ``meta`` names (and,
    in an installed executable's entry, describes: ``BUNDLE``, ``cache_entry.resolve``),
    or None."""
    bundle = meta.get("bundle")
    if meta.get("symbol") != symbol or not isinstance(bundle, str) or not bundle:
        return None
    described = meta.get(BUNDLE)
    holder = bundles.find(bundle, level, described if isinstance(described, dict) else None)
    address = holder.address(symbol) if holder is not None else 0
    if holder is None or not address:
        return None
    return CompiledKernel(symbol, holder, address, from_disk=True)


#: The field of a kernel's metadata, as an installed executable's entry holds it, that
#: holds its bundle's metadata (``bundles.find``'s ``meta``).
BUNDLE = "bundle_meta"


def resolved(meta: dict, bundle_meta: dict) -> dict | None:
    """A kernel entry's metadata as an installed executable's entry holds it: with its
    bundle's metadata (but the bundle's list of symbols), where the bundle's code is the
    installation's library or a shared object file of its own (``installed_library.py``,
    ``bundles.unpack``) and the kernel keeps no IR to make full code from; else None."""
    installed = bundle_meta.get(loaded_code.IN_FILE) is True or bundle_meta.get(installed_library.IN_LIBRARY) is True
    if meta.get("ir") or not installed:
        return None
    return {**meta, BUNDLE: {k: v for k, v in bundle_meta.items() if k != "symbols"}}
