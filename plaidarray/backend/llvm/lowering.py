"""The stages every LLVM backend runs, from an HLO module to each kernel's LLVM IR: what a
backend's pipeline (llvm-cpu's ``stages.py``) declares around its own stages.

    check-shape-generic -> [the backend's own HLO stages] -> expand -> hlo-passes
      -> bind-constants -> [persistent cache] -> fuse -> group-kernels -> to-linalg
      -> convert-linalg-to-loops -> fuse-parallel-loops -> contract-temporaries -> to-llvm-ir

group-kernels cuts the fusion plan's kernels into groups that share no code
(``codegen/kernel_groups.py``); each group is lowered as a module of its own, from
to-linalg to to-llvm-ir, unless a group of the same key was lowered before in this
process (``group_cache.py``). to-llvm-ir makes each segment of a group's loop-level
module a kernel of its own (``emitter.emit_kernels``), keyed by its code, in the LLVM IR
the backend's :class:`~.emitter.Renderer` enters and completes.

A backend's compilation is a :class:`Lowering` that names the backend's lowerings
(``platform``, as ``codegen/lowering.py`` registers them) and its renderer, and adds the
fields of its own later stages.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import ClassVar, cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, func, linalg, math, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ...codegen.buffer_sharing import buffer_owners
from ...codegen.expand import expand
from ...codegen.fusion import FusionPlan, plan_fusion
from ...codegen.kernel_groups import buffers_touched, group_key, group_kernels
from ...codegen.linalg_builder import build_linalg
from ...codegen.linalg_to_loops import ConvertLinalgToStaticLoops
from ...codegen.lowering import lowering_for, shape_generic
from ...codegen.loop_fusion import ContractTemporaries, FuseParallelLoops, drop_unused_arguments
from ...hlo import Computation, Instruction, Module
from ...hlo.passes import run_hlo_passes
from ...hlo.passes.bind_constants import bind_constants
from ...hlo.shape import Shape
from ...hlo.symbolic import Dim, rename
from .. import dump
from ..executable import NotShapeGeneric
from ..pipeline import Stage
from .emitter import Renderer, emit_kernels
from .group_cache import GROUPS, LoweredGroup
from .kernel_source import KernelSource
from .target import Target


@dataclass
class _Group:
    """A kernel group as it is lowered (``codegen/kernel_groups.py``): its kernels, the
    buffer table's entries they touch (ascending, as its module has them; ``order``: as
    its key numbers them), those of them that are temporaries no
    other group touches (its loops may contract them) and its key (None: not shared);
    while it is lowered, its module, scratch buffers, limits and contracted buffers;
    then what lowering made (found under its key, or made here)."""

    kernels: list[Instruction]
    buffers: list[int]
    contractible: set[int]
    key: Hashable | None
    #: The module's run-time size of each number the key gives them, and its buffers in
    #: the order the key numbers them (``group_key``).
    symbols: tuple[int, ...] = ()
    order: tuple[int, ...] = ()
    module: ModuleOp | None = None
    scratch: list[Shape] = field(default_factory=list)
    limits: list[tuple[Dim, int]] = field(default_factory=list)
    derived: list[Dim] = field(default_factory=list)
    contracted: frozenset[int] = frozenset()
    lowered: LoweredGroup | None = None
    #: The first group of the module with its key (itself, if it is the first).
    same_as: _Group | None = None


@dataclass
class Lowering:
    """What the stages read and write, from the HLO module to its kernels' LLVM IR
    (``sources``). The fields without a default are set by the stage that makes them
    (``plan`` by fuse). ``shares_groups``: lowered kernel groups are looked up and kept
    (``group_cache.py``); an export's compile, for another machine, neither reads nor
    fills the JIT's caches."""

    #: The backend's lowerings and the namespace of its own ops (``codegen/lowering.py``).
    platform: ClassVar[str]
    renderer: ClassVar[Renderer]

    name: str
    comp: Computation
    donated: frozenset[int]
    level: int
    #: What compiled code for this target is stored under (``Compiler.target``).
    target_key: str
    n_symbols: int = 0
    #: The persistent cache's key of the executable (none: it is not stored).
    key: str = ""
    #: What the code is for.
    target: Target = field(kw_only=True)
    n_params: int = 0
    constants: list[np.ndarray] = field(default_factory=list)
    plan: FusionPlan = field(init=False)
    #: id of an instruction that writes another one's buffer (in place) -> that one.
    buffer_owners: dict[int, Instruction] = field(default_factory=dict)
    output_slots: list[tuple[str, int]] = field(default_factory=list)
    outputs: list[Instruction] = field(default_factory=list)
    temps: list[Instruction] = field(default_factory=list)
    n_buffers: int = 0  # parameters, outputs and temporaries in the buffer table
    groups: list[_Group] = field(default_factory=list)
    shares_groups: bool = True
    scratch: list[Shape] = field(default_factory=list)
    limits: list[tuple[Dim, int]] = field(default_factory=list)
    #: The dims table's entries after the run-time sizes, computed from them when the
    #: executable is bound (``KernelBuilder.one_value``): entry ``n_symbols + j`` is ``derived[j]``.
    derived: list[Dim] = field(default_factory=list)
    sources: list[KernelSource] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def context(self) -> Context:
        """xDSL's context with the dialects the lowering uses, made when a stage first
        needs it (a load from the disk cache needs none) and kept: the passes only read it,
        and making it took 0.3 ms a compile."""
        return _context()


# --- the stages ---------------------------------------------------------------------------

def _check_shape_generic(c: Lowering) -> None:
    """A computation with run-time sizes compiles only if each of its ops' lowerings takes
    them (``codegen.lowering.shape_generic``); otherwise its graph compiles per shape."""
    if not c.n_symbols:
        return
    for inst in c.comp.instructions:
        if inst.opcode != "parameter" and not shape_generic(lowering_for(inst.opcode, c.platform)):
            raise NotShapeGeneric(f"{c.platform}: {inst.opcode} has no lowering for run-time sizes")


def _expand(c: Lowering) -> None:
    c.comp = expand(c.comp, c.platform)


def _hlo_passes(c: Lowering) -> None:
    def after(i: int, name: str, comp: Computation, seconds: float) -> None:
        c.timings[f"hlo-passes/{name}"] = c.timings.get(f"hlo-passes/{name}", 0.0) + seconds
        if dump.dump_dir() is not None:
            dump.dump(c.name, f"hlo.{i}-{name}.txt", Module(c.name, comp).to_text())

    c.comp = run_hlo_passes(c.comp, after)


def _bind_constants(c: Lowering) -> None:
    c.n_params = len(c.comp.parameters)
    c.comp, c.constants = bind_constants(c.comp)


def _fuse(c: Lowering) -> None:
    """Kernels, buffers shared with donated parameters, and the buffer table's layout:
    parameters, then each distinct output, then temporaries."""
    c.plan = plan_fusion(c.comp, c.platform)
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


def _table(c: Lowering) -> list[Instruction]:
    """The buffer table's instructions: parameters, outputs, temporaries."""
    return [*c.comp.parameters, *c.outputs, *c.temps]


def _group_kernels(c: Lowering) -> None:
    """The kernel groups, each with its buffers and its key, and what lowering made of
    those lowered before (``codegen/kernel_groups.py``, ``group_cache.py``)."""
    table = _table(c)
    index = {id(inst): i for i, inst in enumerate(table)}

    def buffer_of(inst: Instruction) -> int:
        return index.get(id(c.buffer_owners.get(id(inst), inst)), -1)

    groups = group_kernels(c.plan, lambda inst: None if (b := buffer_of(inst)) < 0 else b)
    touched = [sorted({buffer_of(b) for k in group for b in buffers_touched(c.plan, k)}) for group in groups]
    first_temp = len(table) - len(c.temps)
    users = collections.Counter(b for buffers in touched for b in buffers if b >= first_temp)
    shapes = {i: inst.shape for i, inst in enumerate(table)}
    share = c.shares_groups and dump.dump_dir() is None  # a dump shows every stage
    first: dict[Hashable, _Group] = {}
    for group, buffers in zip(groups, touched):
        assert buffers and buffers[0] >= 0, f"{c.platform}: a kernel touches a buffer missing from the table"
        contractible = {b for b in buffers if b >= first_temp and users[b] == 1}
        key, numbered, order = group_key(c.plan, group, buffers, buffer_of, shapes, contractible, c.n_symbols,
                                         c.target) if share else (None, (), tuple(buffers))
        g = _Group(group, buffers, contractible, key, numbered, order, lowered=None if key is None else GROUPS.get(key))
        if key is not None and g.lowered is None:
            g.same_as = first.setdefault(key, g)  # a group met earlier in this module
        c.groups.append(g)


def _lowering(c: Lowering) -> list[_Group]:
    """The groups that are lowered here: neither found under their key nor equal to an
    earlier one of the module."""
    return [g for g in c.groups if g.lowered is None and g.same_as in (None, g)]


def _to_linalg(c: Lowering) -> None:
    table = _table(c)
    for g in _lowering(c):
        built = build_linalg(c.plan, [table[b] for b in g.buffers], c.buffer_owners, c.n_symbols, g.kernels,
                             math_symbol=c.target.math_symbol)
        g.module, g.scratch, g.limits, g.derived = built.module, built.scratch, built.limits, built.derived


def _modules(c: Lowering) -> str:
    """The modules of the groups lowered here, for a dump."""
    return "\n".join(str(g.module) for g in _lowering(c))


def _xdsl_pass(make: Callable[[Lowering], ModulePass]) -> Callable[[Lowering], None]:
    """A stage that applies an xDSL module pass to each group's loop-level module."""
    def run(c: Lowering) -> None:
        for g in _lowering(c):
            make(c).apply(c.context, cast(ModuleOp, g.module))
    return run


def _contract_temporaries(c: Lowering) -> None:
    for g in _lowering(c):
        module = cast(ModuleOp, g.module)
        candidates = [i for i, b in enumerate(g.buffers) if b in g.contractible]
        ContractTemporaries(candidates, c.target.stack_slice_bytes).apply(c.context, module)
        g.contracted = frozenset(candidates) - frozenset(drop_unused_arguments(module, candidates))


def _to_llvm_ir(c: Lowering) -> None:
    table = _table(c)
    for g in _lowering(c):
        left = [table[b].shape.dims for i, b in enumerate(g.buffers) if i not in g.contracted]
        sources = emit_kernels(cast(ModuleOp, g.module), [*left, *(s.dims for s in g.scratch)], c.target,
                               c.renderer)
        # Dropped while the cyclic collector waits (``pipeline.collector_paused``): tens of
        # thousands of xDSL objects in cycles are then garbage at its first collection, not
        # promoted with the compile's live objects to older generations whose collections
        # walk the whole heap (12% of a scikit-learn test run was the collector's).
        g.module = None
        g.lowered = LoweredGroup(tuple(sources), tuple(g.scratch), tuple(g.limits), g.contracted,
                                 tuple(enumerate(g.derived, c.n_symbols))).reordered(g.buffers, g.order)
        if _numbered(c, g):
            numbers = {k: i for i, k in enumerate(g.symbols)}
            numbers.update((c.n_symbols + j, len(g.symbols) + j) for j in range(len(g.derived)))
            g.lowered = g.lowered.renumbered(numbers)
        if g.key is not None:
            GROUPS.put(g.key, g.lowered)
    for g in c.groups:
        if g.lowered is None:
            g.lowered = cast(_Group, g.same_as).lowered
    _assemble(c)


def _numbered(c: Lowering, g: _Group) -> bool:
    """Whether ``g``'s lowering is kept with its run-time sizes numbered as its key meets
    them (``group_key``), not as the module does: a shared group of a shape-generic module."""
    return g.key is not None and c.n_symbols > 0


def _assemble(c: Lowering) -> None:
    """The module's kernels, scratch buffers, limits and computed dims table entries from
    its groups': each group's buffers numbered in the module's table, less the
    temporaries its loops contracted."""
    first_temp = len(c.comp.parameters) + len(c.outputs)
    entries: dict[Dim, int] = {}
    lowered = [_in_module(c, g, cast(LoweredGroup, g.lowered), entries) for g in c.groups]
    contracted = {g.order[i] for g, low in zip(c.groups, lowered) for i in low.contracted}
    place: dict[int, int] = {}
    for b in range(first_temp + len(c.temps)):
        if b not in contracted:
            place[b] = len(place)
    c.temps = [t for j, t in enumerate(c.temps) if first_temp + j not in contracted]
    c.n_buffers = len(place)
    for g, low in zip(c.groups, lowered):
        local = [place[b] for i, b in enumerate(g.order) if i not in low.contracted]
        local += range(c.n_buffers + len(c.scratch), c.n_buffers + len(c.scratch) + len(low.scratch))
        c.sources += [dataclasses.replace(s, buffers=tuple(local[j] for j in s.buffers)) for s in low.sources]
        c.scratch += low.scratch
        c.limits += [limit for limit in low.limits if limit not in c.limits]


def _in_module(c: Lowering, g: _Group, low: LoweredGroup, entries: dict[Dim, int]) -> LoweredGroup:
    """``low`` with its run-time sizes numbered as the module numbers them, and its
    computed entries as the module's (``entries``: each value's number, one entry per
    value in the module; groups lowered apart numbered theirs alike)."""
    if not _numbered(c, g) and not low.derived:
        return low
    numbers = dict(enumerate(g.symbols)) if _numbered(c, g) else {k: k for k in range(c.n_symbols)}
    for k, value in low.derived:  # in order: each value names only entries before it
        value = rename(value, numbers)
        if value not in entries:
            entries[value] = c.n_symbols + len(c.derived)
            c.derived.append(value)
        numbers[k] = entries[value]
    return low.renumbered(numbers)


def hlo_text(c: Lowering) -> str:
    return Module(c.name, c.comp).to_text()


#: The first stage: whether the module can be compiled at all (with run-time sizes).
CHECK = Stage("check-shape-generic", _check_shape_generic)

#: The HLO stages up to the persistent cache's key, after the backend's own.
HLO: tuple[Stage[Lowering], ...] = (
    Stage("expand", _expand),
    Stage("hlo-passes", _hlo_passes, hlo_text, "hlo.txt"),
    Stage("bind-constants", _bind_constants),
)

#: From the HLO module to each kernel's LLVM IR (``Lowering.sources``), for the
#: compilation's target: what a JIT compile and an export share.
LOWER: tuple[Stage[Lowering], ...] = (
    Stage("fuse", _fuse),
    Stage("group-kernels", _group_kernels),
    Stage("to-linalg", _to_linalg, _modules, "linalg.mlir"),
    Stage("convert-linalg-to-loops", _xdsl_pass(lambda c: ConvertLinalgToStaticLoops())),
    Stage("fuse-parallel-loops", _xdsl_pass(lambda c: FuseParallelLoops())),
    Stage("contract-temporaries", _contract_temporaries, _modules, "loops.mlir"),
    Stage("to-llvm-ir", _to_llvm_ir),
)


@functools.cache
def _context() -> Context:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, math.Math, memref.MemRef, linalg.Linalg,
                    scf.Scf, affine.Affine):
        ctx.load_dialect(dialect)
    return ctx
