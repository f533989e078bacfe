"""Tiered code generation: a kernel's first machine code is emitted fast, and full code
replaces it once an executable running it runs again.

A program's first run waits for every compile, and on a small kernel LLVM's IR pipeline
and code generation at O3 take several times what code generation at O0 takes
(``benchmarks/compile_cost.py`` times each stage). So
the first code of a kernel is generated at O0 from the IR optimised at O3: the
same vectorised IR, hence the same values, in kernels 10-30% slower. A small kernel
skips the IR pipeline too (:func:`ir_level`): kernel IR has no fast-math flag, so its
values cannot depend on the pipeline, and unoptimised scalar code on a few thousand
elements costs less than the pipeline; so does a kernel with an FFT routine, at any size.
The kernels of an executable whose runs have spent ``PLAIDARRAY_TIER_UP_MS`` milliseconds
in first-tier code (default 10) are worth full code: full code saves a fraction of each
run, and what it costs (a background compile at O3, on a machine whose other cores may be
busy) pays back only on kernels that run long, as a ski rental is bought once the rent
paid reaches its price. Kernels that run microseconds a call, the norm in a script's loop
or a test suite, keep their first-tier code; counting runs instead (two) had every such
executable upgraded, which cost a cold short script 8-16 ms of its own time (the worker
process, the linker and the storing competing for two cores). One background thread has a
code generator process of its own
(``codegen_worker.py``) generate it from the kept IR, so neither this process's LLVM
lock, nor its GIL, nor the program's own code generator process is held meanwhile and
the program's compiles go on; executables switch to it between two runs, and the
kernel's disk cache entry is rewritten with it. JavaScript
engines and the JVM tier their JITs alike, except that here both tiers compute identical
results. ``PLAIDARRAY_TIER_UP_MS=0`` generates full code at once.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ... import config
from ..background import BackgroundQueue, on_background_thread
from ..llvm import object_cache, storing
from . import bundles, loaded_code, math_library
from .loaded_code import Code

#: Seconds of first-tier runs of an executable after which its kernels' full code is
#: generated; 0: no first tier.
TIER_UP_AFTER_SECONDS = config.get("PLAIDARRAY_TIER_UP_MS") / 1000.0

#: The start of the FFT routines' names (``stockham.PREFIX``).
FFT_ROUTINE_PREFIX = "plaidarray_fft_"
#: The start of the names of the FFT routines of any length (``stockham.generic_symbol``).
GENERIC_FFT_PREFIX = FFT_ROUTINE_PREFIX + "any"

#: The code generator's level for first-tier code.
QUICK_EMIT_LEVEL = 0

#: The IR pipeline's level for small first-tier code whose values are exact: O0, about a
#: tenth of O3's IR time (O1 takes 40-60%, on the eager scripts' kernels). O0 code is scalar and
#: unoptimised, which on a few thousand elements costs microseconds per run.
SCALAR_IR_LEVEL = 0

#: The largest buffer, in elements, for which first-tier code may be scalar: a loop runs
#: first-tier code until its runs have taken ``TIER_UP_AFTER_SECONDS`` and while its full
#: code is made (~0.1 s, a code generator process starting), so what scalar code loses
#: per element must stay small against the 10-70 ms of O3 IR pipeline that each new
#: kernel's compile saves. Arithmetic, comparisons and reductions lose a few nanoseconds
#: an element (k-means' cold run: 168 -> 125 ms with 32768 rather than 4096 elements as
#: the bound); a call of the vector math library unvectorised, 15-20 (cos on 10,000
#: elements: 12.5 ms a run of fixed_point's loop against 2.0), so kernels calling it keep
#: the smaller bound.
SCALAR_MAX_ELEMENTS = 1 << 15
SCALAR_MAX_ELEMENTS_WITH_MATH = 1 << 12

def ir_level(ir: str, level: int, largest_buffer: int) -> int:
    """The IR pipeline's level for the first-tier code of ``ir`` (full code: ``level``);
    ``largest_buffer`` is the element count of the kernel's largest buffer (for run-time
    sizes, at the sizes that made them run-time: a loop whose sizes change keeps them
    about as small).
    Kernel IR carries no fast-math flag, so it defines every value exactly (IEEE
    operations, integer arithmetic, ``llvm.maximum``, the vector math library's functions,
    whose scalar and vector forms agree, and reductions summed in partial sums of the
    emitter's choosing, ``llvm/emitter._accumulate``): any correct pipeline computes the
    same bits, and a small kernel can skip O3's IR pipeline.

    A kernel with an FFT routine skips the pipeline at any size: the routine is generated
    as straight-line butterflies, which O0 code runs 1.6-2.8x slower while O3's pipeline
    makes its first call 3-6x slower (65537 points: 167 against 683 ms; 2^20: 299
    against 478), and only the few runs before full code arrives pay the former."""
    bound = SCALAR_MAX_ELEMENTS_WITH_MATH if math_library.called_by(ir) else SCALAR_MAX_ELEMENTS
    if largest_buffer <= bound or FFT_ROUTINE_PREFIX in ir:
        return min(level, SCALAR_IR_LEVEL)
    return level


def full_ir_level(ir: str, level: int) -> int:
    """The IR pipeline's level for the full code of ``ir``: ``level``, but for a kernel with
    an FFT routine of any length (``stockham.generic_fft``, ``GENERIC_FFT_PREFIX``), whose
    full code is the code generator's at ``level`` on IR the pipeline skips (the same
    values, as for any first tier). Its straight-line butterflies of every radix, 2.7 MB of
    IR a routine, took O3's pipeline 15 s, which the installation paid a dozen times, and
    code generation alone 3 s; the code ran 1.5-2.3x faster than first-tier code with the
    pipeline (rows of 100 to 1024 points) and 1.1-1.6x without it."""
    return SCALAR_IR_LEVEL if GENERIC_FFT_PREFIX in ir else level


def tiered(level: int) -> bool:
    """Whether code optimised at ``level`` has a first tier: only where the full code
    generator is the slow one (O2, O3) and tiers are on (first-tier code loaded from the
    persistent cache is upgraded then)."""
    return TIER_UP_AFTER_SECONDS > 0 and level >= 2


def first_tier(level: int) -> bool:
    """Whether a compile now makes first-tier code: where code is tiered and someone waits
    for it (a compile on a background thread, a hot graph's fused code, makes full code
    at once)."""
    return tiered(level) and not on_background_thread()


def pack_ir(ir: str) -> bytes:
    """A first-tier kernel's IR as it is kept until its full code is made, in memory and in
    its disk cache entry: compressed. Most first-tier code is never upgraded (it runs too
    briefly), and its IR text, kept as it was, made up 59% of the bytes a run of SciPy's
    tests stored, which pushed the whole run past the cache's cap; zlib keeps about a
    fifth of it, in tens of microseconds a kernel."""
    return zlib.compress(ir.encode(), 1)


@dataclass
class Upgrade:
    """How a kernel's full code is made: its IR (``pack_ir``), the symbol to find in the
    object, the level, and the kernel's disk cache entry to rewrite."""

    packed_ir: bytes
    symbol: str
    level: int
    key: str
    submitted: bool = False

    @property
    def ir(self) -> str:
        return zlib.decompress(self.packed_ir).decode()

    def full_code(self) -> tuple[Code, int]:
        """The full code, loaded (and its entry point), stored as a bundle of its own that
        the kernel's entry now names."""
        from ..llvm import codegen_worker  # generating needs LLVM
        from .targets import host

        ir = self.ir
        product = codegen_worker.generate_in_worker(ir, host(), full_ir_level(ir, self.level), background=True,
                                                    emit_level=self.level)
        storing.drain()  # the first tier's entry is written first, then replaced
        code, form = loaded_code.package([product.object])
        libraries = math_library.called_by(ir)
        holder, bundle = bundles.install(code, form, [self.symbol], libraries, self.level)
        address = holder.address(self.symbol)
        if bundle:
            object_cache.store(self.key, b"", {"symbol": self.symbol, "bundle": bundle})
        return holder, address


class Upgradable(Protocol):
    upgrade: Upgrade | None

    def install_full_code(self, code: Code, address: int) -> None: ...


#: Counts the full code installed so far: an executable whose kernels' addresses it read
#: at another count reads them again before its next run.
generation = 0


def _count_installed() -> None:
    global generation
    generation += 1


def _upgrade(kernel: Upgradable) -> None:
    """Make and install ``kernel``'s full code (on the background thread)."""
    upgrade = kernel.upgrade
    if upgrade is not None:
        kernel.install_full_code(*upgrade.full_code())
        _count_installed()


_WORKER = BackgroundQueue("plaidarray-tier-up", "full code generation failed, first-tier code kept")


def submit(kernels: Iterable[Upgradable]) -> None:
    """Have the full code of ``kernels`` generated in the background, each once (an
    executable calls this when its runs have taken ``TIER_UP_AFTER_SECONDS``)."""
    for kernel in kernels:
        upgrade = kernel.upgrade
        if upgrade is not None and not upgrade.submitted:
            upgrade.submitted = True
            _WORKER.submit(functools.partial(_upgrade, kernel))


def drain() -> None:
    """Wait for every upgrade submitted so far (tests, benchmarks that time full code)."""
    _WORKER.drain()
