"""Compiled kernels, shared by every executable that runs them.

A module's segments are kernels of their own (``llvm_emitter.KernelSource``), keyed by
their LLVM IR text: the same fused loop nest in two graphs, or twice in one (k-means'
per-cluster sums), is the same kernel, compiled once and found again in this process
(``KERNELS``) or in the persistent cache (an entry per kernel). A compile therefore
generates code only for what is new, as TorchInductor's kernel cache does; an
executable is a list of kernel calls (``executable.py``).

A kernel's first code is first-tier code (``tiering.py``) when the compiler's level asks
for it; the kernel then keeps its IR, and its full code replaces it once executables
running it have run often enough.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from .. import dump
from ..cache import EXECUTABLES, CacheInfo, KeyLocks
from . import loaded_code, math_library, object_cache, tiering
from .kernel_source import KernelSource
from .loaded_code import Code

if TYPE_CHECKING:
    from .codegen import Product

#: Kernels no live executable runs that this process keeps anyway, the most recently
#: used: an executable evicted from the cache and made again soon after finds them, while
#: a program compiling ever new kernels keeps a bounded number (each holds an engine and
#: its machine code, tens of kilobytes).
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
    """What a compile produced: its kernels by key, and the listings of those it
    generated (optimised IR and assembly, for a dump)."""

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
        self._keep(key, kernel)

    def _keep(self, key: str, kernel: CompiledKernel) -> None:
        with self._lock:
            self._recent[key] = kernel
            self._recent.move_to_end(key)
            while len(self._recent) > self._kept:
                self._recent.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._kernels.clear()
            self._recent.clear()
            self.generated = self.loaded = 0

    def add_counts(self, info: CacheInfo) -> None:
        info.kernel_compiles, info.kernel_disk_hits = self.generated, self.loaded


KERNELS = KernelCache(KEPT_UNUSED_KERNELS)
EXECUTABLES.on_clear.append(KERNELS.clear)
EXECUTABLES.on_info.append(KERNELS.add_counts)


def disk_key(key: str, target: str) -> str:
    """The persistent cache's key of the kernel ``key`` for a target (``CpuCompiler.target``)."""
    return object_cache.entry_key("kernel", key, target)


def kernels_for(sources: Sequence[KernelSource], level: int, target: str, quick: bool) -> Generated:
    """The compiled kernel of each distinct source: from this process, else from the
    persistent cache, else generated (first-tier code if ``quick``) and stored there."""
    found: dict[str, CompiledKernel] = {}
    products: list[Product] = []
    for source in sources:
        if source.key in found:
            continue
        kernel = KERNELS.get(source.key)
        if kernel is None:
            with KERNELS.compiling.hold(source.key):
                kernel = KERNELS.get(source.key)
                if kernel is None:
                    kernel = _load_or_generate(source, level, disk_key(source.key, target), quick, products)
                    KERNELS.put(source.key, kernel)
        found[source.key] = kernel
    return Generated(found, products)


def _load_or_generate(source: KernelSource, level: int, key: str, quick: bool,
                      products: list[Product]) -> CompiledKernel:
    listings = dump.dump_dir() is not None
    if not listings:
        kernel = load(key, source.symbol, level)
        if kernel is not None:
            return kernel
    with object_cache.compiling(key):  # another process may be generating it: wait, then load
        kernel = None if listings else load(key, source.symbol, level)
        return kernel or _generate(source, level, key, quick, products)


def _generate(source: KernelSource, level: int, key: str, quick: bool, products: list[Product]) -> CompiledKernel:
    if quick:
        ir_level, emit_level = tiering.ir_level(source.ir, level, source.largest), tiering.QUICK_EMIT_LEVEL
    else:
        ir_level, emit_level = level, None
    from . import codegen_worker  # generating needs LLVM

    product = codegen_worker.generate(source.ir, ir_level, listings=dump.dump_dir() is not None,
                                      emit_level=emit_level)
    products.append(product)
    code, form = loaded_code.package(product.object)
    libraries = math_library.called_by(source.ir)
    kernel = _load(code, form, source.symbol, level, libraries)
    if kernel is None:
        raise RuntimeError(f"llvm-cpu: the object code of kernel {source.symbol} does not define it")
    metadata = {"symbol": source.symbol, loaded_code.FORMAT: form, "libraries": libraries}
    if quick:
        kernel.upgrade = tiering.Upgrade(source.ir, source.symbol, level, key, metadata)
    if object_cache.enabled():
        # A first-tier entry keeps its IR, so a process loading it can make its full code.
        object_cache.store(key, code, {**metadata, "ir": source.ir} if quick else metadata)
    return kernel


def _load(code: bytes, form: str, symbol: str, level: int, libraries: list[str],
          from_disk: bool = False) -> CompiledKernel | None:
    """A kernel of ``code``, once the library functions it calls are loaded."""
    math_library.load(libraries)
    loaded = loaded_code.load(code, form, symbol, level)
    return None if loaded is None else CompiledKernel(symbol, *loaded, from_disk=from_disk)


def load(key: str, symbol: str, level: int) -> CompiledKernel | None:
    """The kernel stored under ``key`` by an earlier compile (maybe another process's),
    or None."""
    entry = object_cache.load(key)
    if entry is None:
        return None
    code, meta = entry
    libraries = meta.get("libraries")
    if meta.get("symbol") != symbol or not isinstance(libraries, list):
        return None
    try:
        kernel = _load(code, str(meta.get(loaded_code.FORMAT)), symbol, level, [str(s) for s in libraries],
                       from_disk=True)
    except (OSError, RuntimeError):
        return None
    if kernel is None:
        return None
    ir = meta.get("ir")
    if isinstance(ir, str) and tiering.first_tier(level):
        metadata = {name: value for name, value in meta.items() if name != "ir"}
        kernel.upgrade = tiering.Upgrade(ir, symbol, level, key, metadata)
    return kernel
