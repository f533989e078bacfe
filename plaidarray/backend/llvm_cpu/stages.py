"""The llvm-cpu compiler's stages: HLO to machine code for the host, as a declared list of
named stages (``STAGES``, run by ``backend/pipeline.py``; ``compiler.py`` runs them).

    check-shape-generic -> lower-fft -> expand -> hlo-passes -> bind-constants -> [persistent cache]
      -> fuse -> to-linalg
      -> convert-linalg-to-loops -> fuse-parallel-loops
      -> contract-temporaries -> to-llvm-ir -> llvm-codegen -> load -> store

to-llvm-ir makes each segment of the loop-level module a kernel of its own
(``llvm_emitter.KernelSource``), keyed by its code; llvm-codegen generates only the
kernels that neither this process nor the persistent cache has (``kernels.py``), and the
executable calls the kernels in order (``executable.py``).

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
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, func, linalg, math, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ...codegen.buffer_sharing import buffer_owners
from ...codegen.expand import expand
from ...codegen.fusion import FusionPlan, plan_fusion
from ...codegen.linalg_builder import build_linalg
from ...codegen.linalg_to_loops import ConvertLinalgToStaticLoops
from ...codegen.lowering import lowering_for, shape_generic
from ...codegen.loop_fusion import ContractTemporaries, FuseParallelLoops, drop_unused_arguments
from ...hlo import Computation, Instruction, Module
from ...hlo.passes import run_hlo_passes
from ...hlo.passes.bind_constants import bind_constants
from ...hlo.shape import Shape
from ...hlo.symbolic import Dim
from .. import dump
from ..executable import Executable, NotShapeGeneric
from ..pipeline import Stage, dump_timings, run_stages
from . import bundles, cache_entry, kernels, object_cache, tiering
from .codegen import Product
from .executable import CpuExecutable, ShapeGenericExecutable, Step
from .fft import lower_fft
from .kernel_source import KernelSource
from .kernels import CompiledKernel
from .llvm_emitter import emit_kernels
from .platforms import Platform, host
from .lowerings import PLATFORM


@dataclass
class Compilation:
    """What the stages read and write, from the HLO module to the executable. The fields
    without a default are set by the stage that makes them (``plan`` by fuse, ``mlir`` by
    to-linalg, ``product`` by llvm-codegen, ``executable`` by load)."""

    name: str
    comp: Computation
    donated: frozenset[int]
    level: int
    target: str
    n_symbols: int = 0
    #: The persistent cache's key of the executable (none: it is not stored).
    key: str = ""
    #: What the code is for: the host, or an export's target (``aot.py``).
    platform: Platform = field(default_factory=host)
    n_params: int = 0
    constants: list[np.ndarray] = field(default_factory=list)
    plan: FusionPlan = field(init=False)
    #: id of an instruction that writes another one's buffer (in place) -> that one.
    buffer_owners: dict[int, Instruction] = field(default_factory=dict)
    output_slots: list[tuple[str, int]] = field(default_factory=list)
    outputs: list[Instruction] = field(default_factory=list)
    temps: list[Instruction] = field(default_factory=list)
    n_buffers: int = 0  # parameters, outputs and temporaries in the buffer table
    mlir: ModuleOp = field(init=False)
    scratch: list[Shape] = field(default_factory=list)
    limits: list[tuple[Dim, int]] = field(default_factory=list)
    sources: list[KernelSource] = field(default_factory=list)
    kernels: dict[str, CompiledKernel] = field(default_factory=dict)
    products: list[Product] = field(default_factory=list)
    executable: CpuExecutable | ShapeGenericExecutable = field(init=False)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def context(self) -> Context:
        """xDSL's context with the dialects the lowering uses, made when a stage first
        needs it (a load from the disk cache needs none) and kept: the passes only read it,
        and making it took 0.3 ms a compile."""
        return _context()

    @property
    def quick(self) -> bool:
        """First-tier code (``tiering.py``); a dump shows the full code."""
        return tiering.first_tier(self.level) and dump.dump_dir() is None


# --- the stages ---------------------------------------------------------------------------

def _check_shape_generic(c: Compilation) -> None:
    """A computation with run-time sizes compiles only if each of its ops' lowerings takes
    them (``codegen.lowering.shape_generic``); otherwise its graph compiles per shape."""
    if not c.n_symbols:
        return
    for inst in c.comp.instructions:
        if inst.opcode != "parameter" and not shape_generic(lowering_for(inst.opcode, PLATFORM)):
            raise NotShapeGeneric(f"llvm-cpu: {inst.opcode} has no lowering for run-time sizes")


def _lower_fft(c: Compilation) -> None:
    """llvm-cpu's FFT kernel for the transforms of lines, before the target-neutral
    expansion of ``fft`` does the rest (``fft.py``)."""
    c.comp = lower_fft(c.comp)


def _expand(c: Compilation) -> None:
    c.comp = expand(c.comp, PLATFORM)


def _hlo_passes(c: Compilation) -> None:
    def after(i: int, name: str, comp: Computation, seconds: float) -> None:
        c.timings[f"hlo-passes/{name}"] = c.timings.get(f"hlo-passes/{name}", 0.0) + seconds
        if dump.dump_dir() is not None:
            dump.dump(c.name, f"hlo.{i}-{name}.txt", Module(c.name, comp).to_text())

    c.comp = run_hlo_passes(c.comp, after)


def _bind_constants(c: Compilation) -> None:
    c.n_params = len(c.comp.parameters)
    c.comp, c.constants = bind_constants(c.comp)


def _fuse(c: Compilation) -> None:
    """Kernels, buffers shared with donated parameters, and the buffer table's layout:
    parameters, then each distinct output, then temporaries."""
    c.plan = plan_fusion(c.comp, PLATFORM)
    c.buffer_owners = buffer_owners(c.comp, c.plan, c.donated)
    out_index: dict[int, int] = {}  # by id: a chain whose every value is an output stays linear
    for o in c.comp.outputs:
        o = c.buffer_owners.get(id(o), o)
        if o.opcode == "parameter":
            c.output_slots.append(("param", o.attrs["number"]))
            continue
        if id(o) not in out_index:
            out_index[id(o)] = len(c.outputs)
            c.outputs.append(o)
        c.output_slots.append(("out", out_index[id(o)]))
    c.temps = [k for k in c.plan.kernels
               if c.plan.is_buffer(k) and id(k) not in out_index and id(k) not in c.buffer_owners]
    c.n_buffers = len(c.comp.parameters) + len(c.outputs) + len(c.temps)


def _to_linalg(c: Compilation) -> None:
    built = build_linalg(c.plan, [*c.comp.parameters, *c.outputs, *c.temps], c.buffer_owners, c.n_symbols)
    c.mlir, c.scratch, c.limits = built.module, built.scratch, built.limits


def _xdsl_pass(make: Callable[[Compilation], ModulePass]) -> Callable[[Compilation], None]:
    """A stage that applies an xDSL module pass to the loop-level module."""
    return lambda c: make(c).apply(c.context, c.mlir)


def _contract_temporaries(c: Compilation) -> None:
    first_temp = c.n_buffers - len(c.temps)
    ContractTemporaries(range(first_temp, c.n_buffers)).apply(c.context, c.mlir)
    kept = drop_unused_arguments(c.mlir, range(first_temp, c.n_buffers))
    c.temps = [c.temps[i - first_temp] for i in kept]
    c.n_buffers = first_temp + len(c.temps)


def _to_llvm_ir(c: Compilation) -> None:
    buffers = [*(p.shape for p in c.comp.parameters), *(o.shape for o in c.outputs), *(t.shape for t in c.temps),
               *c.scratch]
    c.sources = emit_kernels(c.mlir, [b.dims for b in buffers], c.platform)
    # Dropped while the cyclic collector waits (``pipeline.collector_paused``): tens of
    # thousands of xDSL objects in cycles are then garbage at its first collection, not
    # promoted with the compile's live objects to older generations whose collections walk
    # the whole heap (12% of a scikit-learn test run was the collector's).
    del c.mlir


def _llvm_codegen(c: Compilation) -> None:
    generated = kernels.kernels_for(c.sources, c.level, c.target, c.quick)
    c.kernels, c.products = generated.kernels, generated.products


def _load(c: Compilation) -> None:
    steps = [Step(c.kernels[s.key], s.buffers, s.segment, s.dims, s.imports) for s in c.sources]
    shapes = [o.shape for o in c.outputs], [t.shape for t in c.temps] + c.scratch
    if c.n_symbols:
        c.executable = ShapeGenericExecutable(steps, c.n_params, c.constants, c.output_slots, *shapes, c.limits)
    else:
        c.executable = CpuExecutable(steps, c.n_params, c.constants, c.output_slots, *shapes)


def _store(c: Compilation) -> None:
    """The executable's entry, written on the background thread that stores kernels, after
    this compile's kernels (an entry is never found before the kernels it names)."""
    if object_cache.enabled() and c.key:
        payload, metadata = cache_entry.entry(c.sources, c.output_slots, [o.shape for o in c.outputs],
                                              [t.shape for t in c.temps] + c.scratch,
                                              c.limits if c.n_symbols else None, c.constants)
        bundles.store_later(functools.partial(object_cache.store, c.key, payload, metadata), object_cache.Locks(()))


def _listings(c: Compilation, part: str) -> str:
    """The optimised IR (``ir``) or assembly of the kernels this compile generated."""
    return "\n".join(getattr(p, part) for p in c.products)


def _hlo_text(c: Compilation) -> str:
    return Module(c.name, c.comp).to_text()


#: Up to the persistent cache's key.
FRONT: tuple[Stage[Compilation], ...] = (
    Stage("check-shape-generic", _check_shape_generic),
    Stage("lower-fft", _lower_fft, _hlo_text, "lower-fft.txt"),
    Stage("expand", _expand),
    Stage("hlo-passes", _hlo_passes, _hlo_text, "hlo.txt"),
    Stage("bind-constants", _bind_constants),
)

#: From the HLO module to each kernel's LLVM IR (``Compilation.sources``), for the
#: compilation's platform: what a JIT compile and an export (``aot.py``) share.
LOWER: tuple[Stage[Compilation], ...] = (
    Stage("fuse", _fuse),
    Stage("to-linalg", _to_linalg, lambda c: str(c.mlir), "linalg.mlir"),
    Stage("convert-linalg-to-loops", _xdsl_pass(lambda c: ConvertLinalgToStaticLoops())),
    Stage("fuse-parallel-loops", _xdsl_pass(lambda c: FuseParallelLoops())),
    Stage("contract-temporaries", _contract_temporaries, lambda c: str(c.mlir), "loops.mlir"),
    Stage("to-llvm-ir", _to_llvm_ir),
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


@functools.cache
def _context() -> Context:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, math.Math, memref.MemRef, linalg.Linalg,
                    scf.Scf, affine.Affine):
        ctx.load_dialect(dialect)
    return ctx


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
