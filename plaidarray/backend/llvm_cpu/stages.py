"""The llvm-cpu compiler's stages: HLO to machine code for the host, as a declared list of
named stages (``STAGES``, run by ``backend/pipeline.py``; ``compiler.py`` runs them): the
stages every LLVM backend shares (``llvm/lowering.py``) around llvm-cpu's own.

    check-shape-generic -> lower-fft -> expand -> hlo-passes -> bind-constants -> [persistent cache]
      -> fuse -> group-kernels -> to-linalg
      -> convert-linalg-to-loops -> fuse-parallel-loops
      -> contract-temporaries -> to-llvm-ir -> llvm-codegen -> load -> store

lower-fft is llvm-cpu's own (its FFT kernel, ``fft.py``); llvm-codegen generates only
the kernels that neither this process nor the persistent cache has (``kernels.py``), and
the executable calls the kernels in order (``executable.py``).

Under ``PLAIDARRAY_DUMP`` each stage that has a text writes it (``lower-fft.txt``,
``hlo.txt``, every HLO pass's result as ``hlo.<n>-<pass>.txt``, ``linalg.mlir``,
``loops.mlir``, and the optimised IR and assembly of the kernels it generated, ``ll`` and
``s``) and ``timings.txt`` lists every stage's time. LLVM optimises at -O3 unless the compiler
is given another level (``PLAIDARRAY_OPT_LEVEL``); the level is part of
the target, so of both cache keys.

A module whose executable the persistent cache holds runs none of this (``compiler.py``);
one whose bound constants (a long transform's twiddles) were too large to store with it
runs ``FRONT`` to make them first. A
miss runs every stage; it generates each kernel under that kernel's cross-process lock,
looking it up again once it holds it, so processes starting together generate a kernel
once. A dump always generates, to show every stage.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from ...hlo import Module
from .. import dump
from ..executable import Executable
from ..llvm import object_cache, storing
from ..llvm.codegen import Product
from ..llvm.lowering import CHECK, HLO, LOWER, Lowering, hlo_text
from ..llvm.target import Target
from ..pipeline import Stage, dump_timings, run_stages
from . import cache_entry, kernels, tiering
from .executable import CpuExecutable, ShapeGenericExecutable, Step
from .fft import lower_fft
from .kernels import CompiledKernel
from .lowerings import PLATFORM
from .renderer import RENDERER
from .targets import host


@dataclass
class Compilation(Lowering):
    """A compile for the host or an export's target (``aot.py``): the shared stages'
    fields, then the kernels generated and the executable (set by load)."""

    platform = PLATFORM
    renderer = RENDERER

    target: Target = field(default_factory=host, kw_only=True)
    kernels: dict[str, CompiledKernel] = field(default_factory=dict)
    products: list[Product] = field(default_factory=list)
    executable: CpuExecutable | ShapeGenericExecutable = field(init=False)

    @property
    def quick(self) -> bool:
        """First-tier code (``tiering.py``); a dump shows the full code."""
        return tiering.first_tier(self.level) and dump.dump_dir() is None


def _lower_fft(c: Compilation) -> None:
    """llvm-cpu's FFT kernel for the transforms of lines, before the target-neutral
    expansion of ``fft`` does the rest (``fft.py``)."""
    c.comp = lower_fft(c.comp)


def _llvm_codegen(c: Compilation) -> None:
    generated = kernels.kernels_for(c.sources, c.level, c.target_key, c.quick)
    c.kernels, c.products = generated.kernels, generated.products


def _load(c: Compilation) -> None:
    steps = [Step(c.kernels[s.key], s.buffers, s.segment, s.dims, s.imports) for s in c.sources]
    shapes = [o.shape for o in c.outputs], [t.shape for t in c.temps] + c.scratch
    if c.n_symbols:
        c.executable = ShapeGenericExecutable(steps, c.n_params, c.constants, c.output_slots, *shapes, c.limits,
                                              c.derived)
    else:
        c.executable = CpuExecutable(steps, c.n_params, c.constants, c.output_slots, *shapes)


def _store(c: Compilation) -> None:
    """The executable's entry, written on the background thread that stores kernels, after
    this compile's kernels (an entry is never found before the kernels it names)."""
    if object_cache.enabled() and c.key:
        payload, metadata = cache_entry.entry(c.sources, c.output_slots, [o.shape for o in c.outputs],
                                              [t.shape for t in c.temps] + c.scratch,
                                              c.limits if c.n_symbols else None, c.constants, c.derived)
        storing.store_later(functools.partial(object_cache.store, c.key, payload, metadata),
                            object_cache.Locks([c.key]))


def _listings(c: Compilation, part: str) -> str:
    """The optimised IR (``ir``) or assembly of the kernels this compile generated."""
    return "\n".join(getattr(p, part) for p in c.products)


#: Up to the persistent cache's key.
FRONT: tuple[Stage[Compilation], ...] = (
    CHECK,
    Stage("lower-fft", _lower_fft, hlo_text, "lower-fft.txt"),
    *HLO,
)

#: What a miss of the persistent cache runs.
BACK: tuple[Stage[Compilation], ...] = (
    *LOWER,
    Stage("llvm-codegen", _llvm_codegen, lambda c: _listings(c, "ir"), "ll"),
    Stage("load", _load, lambda c: _listings(c, "assembly"), "s"),
    Stage("store", _store),
)

#: Every stage's name, in order.
STAGES = tuple(stage.name for stage in (*FRONT, *BACK))


def compile_module(module: Module, name: str, key: str, level: int, target: str) -> Executable:
    """The executable of ``module``: ``FRONT``, then the executable the persistent cache
    holds under ``key`` with the constants ``FRONT`` bound, else ``BACK``."""
    c = Compilation(name, module.entry, module.donated, level, target, module.n_symbols, key=key)
    run_stages(FRONT, c, name, c.timings)
    if dump.dump_dir() is None:  # a dump shows every stage: compile, never load
        executable = cache_entry.load(key, c.n_params, c.constants, target, level)
        if executable is not None:
            return executable
    run_stages(BACK, c, name, c.timings)
    dump_timings(name, c.timings)
    return c.executable
