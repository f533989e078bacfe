"""The llvm-cpu compiler: a named pass pipeline from HLO to machine code.

    expand -> hlo-passes -> bind-constants -> fuse -> to-linalg -> convert-linalg-to-loops
      -> fuse-parallel-loops -> contract-temporaries -> to-llvm-ir -> llvm-opt -> jit

Each stage can be dumped (``PLAIDARRAY_DUMP``). LLVM optimises at -O3 unless the
compiler is given another level (``PLAIDARRAY_OPT_LEVEL``, see ``jit.py``); the level
is part of the target, so of both cache keys. The resulting executable calls one
native function ``void f(ptr buffers, i64 segment, i64 start, i64 stop)`` over a table of
the buffers' addresses: parameters, bound constants, outputs, temporaries (including the scratch
buffers of nested computations); ``segment`` < 0 runs everything, otherwise one loop
nest over part of its range, which is how large nests run on several threads
(``parallel.py``).

After bind-constants, the persistent cache (``object_cache.py``) is consulted: a hit
loads object code written by an earlier compile, possibly by another process, and
skips every later stage. A dump (``PLAIDARRAY_DUMP``) always compiles, to show them.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import threading

import numpy as np
from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, func, linalg, math, memref, scf
from xdsl.transforms.linalg_generalize_named_ops import LinalgGeneralizeNamedOpsPass

from ...hlo import Computation, Instruction, Module
from ...hlo.fingerprint import fingerprint, structure
from ...hlo.passes import run_hlo_passes
from ...hlo.passes.expand import expand
from ...hlo.shape import Shape
from .. import dump, memory, transfer
from ..buffer_pool import POOL
from ..executable import Compiler, Executable
from ..transfer import allocator
from . import codegen_worker, jit, object_cache, parallel, tiering, vector_math
from .buffer_sharing import shared_buffers
from .fusion import plan_fusion
from .linalg_builder import build_linalg
from .linalg_to_loops import ConvertLinalgToStaticLoops
from .loop_fusion import ContractTemporaries, FuseParallelLoops, drop_unused_arguments
from .llvm_emitter import Segment, emit_llvm_module

PIPELINE = ("expand", "hlo-passes", "bind-constants", "fuse", "to-linalg", "linalg-generalize-named-ops",
            "convert-linalg-to-loops", "fuse-parallel-loops", "contract-temporaries", "to-llvm-ir", "llvm-opt",
            "jit")

_counter = itertools.count()
_counter_lock = threading.Lock()


def _context() -> Context:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, math.Math, memref.MemRef, linalg.Linalg,
                    scf.Scf, affine.Affine):
        ctx.load_dialect(dialect)
    return ctx


def bind_constants(comp: Computation) -> tuple[Computation, list[np.ndarray]]:
    """Turn array constants into extra parameters bound to their data (scalars stay
    constants and become immediates in the code)."""
    bound: list[np.ndarray] = []
    first = len(comp.parameters)

    def rebind(inst: Instruction, operands):
        if inst.opcode == "constant" and inst.shape.rank:
            number = first + len(bound)
            bound.append(np.ascontiguousarray(inst.attrs["value"].value))
            return Instruction("parameter", (), {"number": number, "shape": inst.shape}, inst.shape)
        return inst if all(a is b for a, b in zip(inst.operands, operands)) else \
            Instruction(inst.opcode, operands, inst.attrs, inst.shape)

    new = comp.rewrite(rebind)
    params = comp.parameters + [i for i in new.instructions if i.opcode == "parameter" and i.attrs["number"] >= first]
    return Computation(comp.name, sorted(params, key=lambda p: p.attrs["number"]), new.outputs), bound


class CpuExecutable(Executable):
    """Native code for one HLO module, plus the buffers it needs around the call."""

    def __init__(self, code: jit.LoadedCode, n_params: int, constants: list[np.ndarray],
                 output_slots: list[tuple[str, int]], output_shapes: list[Shape], temp_shapes: list[Shape],
                 n_args: int, segments: list[Segment]) -> None:
        self._code = code
        self._function = _ENTRY(code.address)
        #: For first-tier code (``tiering.py``): how its full code is made.
        self.upgrade: tiering.Upgrade | None = None
        #: First-tier code replaced by full code: a run on another thread may still be in
        #: it, so it lives as long as the executable.
        self._retired: jit.LoadedCode | None = None
        self._table = ctypes.c_void_p * n_args
        #: Address tables not in use: a call takes one (list.pop and append are atomic, so
        #: threads running this executable at once never share one) and refills it, which
        #: costs a quarter of making a new one.
        self._tables: list[ctypes.Array] = []
        self._segments = segments if parallel.worth_splitting(segments) else None
        #: Whether the function does anything: one whose results are its parameters has no
        #: code and is not called (an in-place update has code and no output buffers).
        self._has_code = bool(segments)
        self._n_params = n_params
        self._constants = constants
        self._constant_addresses = [transfer.address(c) for c in constants]
        self._output_slots = output_slots
        #: Whether the results are the output buffers in order (no parameter returned as
        #: it is, no output twice): then ``run`` returns them as they are.
        self._results_are_outputs = output_slots == [("out", i) for i in range(len(output_shapes))]
        self.returns_parameters = any(kind == "param" for kind, _ in output_slots)
        self._output_allocators = [allocator(s.dims, s.dtype) for s in output_shapes]
        self._temp_allocators = [allocator(s.dims, s.dtype) for s in temp_shapes]
        #: Bytes a run allocates, known now so a run that cannot fit fails before it starts.
        buffers = [*output_shapes, *temp_shapes]
        self._nbytes = sum(s.size * s.dtype.itemsize for s in buffers)
        self._largest = max(buffers, key=lambda s: s.size * s.dtype.itemsize, default=None)

    def install_full_code(self, code: jit.LoadedCode) -> None:
        """Switch from first-tier code to ``code`` (the background thread of ``tiering``);
        a run reads ``_function`` once, so it runs one code or the other."""
        self._retired, self._code = self._code, code
        self._function = _ENTRY(code.address)
        self.upgrade = None

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        if self.upgrade is not None:
            tiering.count_run(self)
        if self._nbytes >= memory.CHECK_ABOVE_BYTES:
            memory.check_fits(self._nbytes, POOL.free_bytes, self._largest)
        outs = [new() for new in self._output_allocators]
        address = transfer.address
        args = [*map(address, buffers), *self._constant_addresses, *map(address, outs)]
        if self._temp_allocators:
            temps = [new() for new in self._temp_allocators]
            args += map(address, temps)
        try:
            table = self._tables.pop()
        except IndexError:
            table = self._table()
        table[:] = args
        if self._segments is not None:
            parallel.run(self._function, [table], self._segments)
        elif self._has_code:
            self._function(table, *_RUN_ALL)
        self._tables.append(table)
        if self._results_are_outputs:
            return outs
        return [buffers[i] if kind == "param" else outs[i] for kind, i in self._output_slots]


#: The entry's C type: the table of buffer addresses, then (segment, start, stop).
_ENTRY = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)

#: The entry's (segment, start, stop) for running everything, converted once.
_RUN_ALL = (ctypes.c_int64(-1), ctypes.c_int64(0), ctypes.c_int64(0))


class CpuCompiler(Compiler):
    """HLO module -> :class:`CpuExecutable` for the host CPU, optimised at ``opt_level``
    (default: ``PLAIDARRAY_OPT_LEVEL``, else 3)."""

    def __init__(self, opt_level: int | None = None) -> None:
        self._opt_level = opt_level

    @functools.cached_property
    def opt_level(self) -> int:
        level = jit.opt_level() if self._opt_level is None else self._opt_level
        if level not in jit.OPT_LEVELS:
            raise ValueError(f"llvm-cpu: optimisation level must be one of {jit.OPT_LEVELS}, got {level!r}")
        return level

    @functools.cached_property
    def target(self) -> str:
        return f"{jit.host_target()}/O{self.opt_level}"

    def compile(self, module: Module) -> Executable:
        comp = run_hlo_passes(expand(module.entry))
        with _counter_lock:
            name = f"plaid_{fingerprint(comp)}_{next(_counter)}"
        dump.dump(name, "hlo.txt", Module(name, comp).to_text() if dump.dump_dir() else None)
        n_params = len(comp.parameters)
        comp, constants = bind_constants(comp)
        key = object_cache.entry_key(repr((structure(comp), sorted(module.donated))), self.target,
                                     jit.host_target().features)
        if dump.dump_dir() is not None:  # a dump shows every stage: compile, never load
            return self._compile(comp, name, key, n_params, constants, module.donated)
        cached = _load_cached(key, n_params, constants, len(comp.parameters), self.opt_level)
        if cached is None:
            with object_cache.compiling(key):  # another process may be compiling it: wait, then load
                cached = _load_cached(key, n_params, constants, len(comp.parameters), self.opt_level)
                if cached is None:
                    return self._compile(comp, name, key, n_params, constants, module.donated)
        return cached

    def _compile(self, comp: Computation, name: str, key: str, n_params: int, constants: list[np.ndarray],
                 donated: frozenset[int]) -> CpuExecutable:
        """Compile ``comp`` (after the HLO passes and constant binding) and store it under ``key``."""
        plan = plan_fusion(comp)
        shared = shared_buffers(comp, plan, donated)

        output_slots: list[tuple[str, int]] = []
        out_insts: list[Instruction] = []
        out_index: dict[int, int] = {}  # by id: a chain whose every value is an output stays linear
        for o in comp.outputs:
            o = shared.get(id(o), o)
            if o.opcode == "parameter":
                output_slots.append(("param", o.attrs["number"]))
            else:
                if id(o) not in out_index:
                    out_index[id(o)] = len(out_insts)
                    out_insts.append(o)
                output_slots.append(("out", out_index[id(o)]))
        temps = [k for k in plan.kernels if id(k) not in out_index and id(k) not in shared]
        buffer_order = [*comp.parameters, *out_insts, *temps]

        mlir, scratch = build_linalg(plan, buffer_order, shared)
        dump.dump(name, "linalg.mlir", str(mlir) if dump.dump_dir() else None)
        ctx = _context()
        LinalgGeneralizeNamedOpsPass().apply(ctx, mlir)
        ConvertLinalgToStaticLoops().apply(ctx, mlir)
        FuseParallelLoops().apply(ctx, mlir)
        first_temp = len(buffer_order) - len(temps)
        ContractTemporaries(range(first_temp, len(buffer_order))).apply(ctx, mlir)
        kept = drop_unused_arguments(mlir, range(first_temp, len(buffer_order)))
        temps = [temps[i - first_temp] for i in kept]
        dump.dump(name, "loops.mlir", str(mlir) if dump.dump_dir() else None)

        llvm_ir, segments = emit_llvm_module(mlir, name)
        level = self.opt_level
        ir = str(llvm_ir)
        quick = tiering.first_tier(level) and dump.dump_dir() is None  # a dump shows the full code
        product = codegen_worker.generate(ir, level, listings=dump.dump_dir() is not None,
                                          emit_level=tiering.QUICK_EMIT_LEVEL if quick else None)
        dump.dump(name, "ll", product.ir or None)
        dump.dump(name, "s", product.assembly or None)
        code = jit.load_object(product.object, name, level)
        if code is None:
            raise RuntimeError(f"llvm-cpu: the object code of {name} does not define it")
        out_shapes, temp_shapes = [o.shape for o in out_insts], [t.shape for t in temps] + scratch
        executable = CpuExecutable(code, n_params, constants, output_slots, out_shapes, temp_shapes,
                                   first_temp + len(temps) + len(scratch), segments)
        metadata = _metadata(name, output_slots, out_shapes, temp_shapes, segments)
        if quick:
            executable.upgrade = tiering.Upgrade(ir, name, level, key, metadata)
        if object_cache.enabled():
            # A first-tier entry keeps its IR, so a process loading it can make its full code.
            object_cache.store(key, product.object, {**metadata, "ir": ir} if quick else metadata)
        return executable


def _metadata(symbol: str, output_slots: list[tuple[str, int]], output_shapes: list[Shape],
              temp_shapes: list[Shape], segments: list[Segment]) -> dict:
    """What a cache entry holds besides the object code: the function, its buffers and
    its segments."""
    return {"symbol": symbol, "output_slots": output_slots,
            "output_shapes": [[list(s.dims), s.dtype.str] for s in output_shapes],
            "temp_shapes": [[list(s.dims), s.dtype.str] for s in temp_shapes],
            "segments": [[s.extent, s.work, s.depth] for s in segments]}


def _shapes(rows: list) -> list[Shape]:
    return [Shape(tuple(dims), np.dtype(dtype)) for dims, dtype in rows]


def _load_cached(key: str, n_params: int, constants: list[np.ndarray], n_bound: int,
                 level: int) -> CpuExecutable | None:
    """The executable stored under ``key`` by an earlier compile, or None."""
    entry = object_cache.load(key)
    if entry is None:
        return None
    code, meta = entry
    try:
        slots = [(str(kind), int(i)) for kind, i in meta["output_slots"]]
        outputs, temps = _shapes(meta["output_shapes"]), _shapes(meta["temp_shapes"])
        segments = [Segment(*(int(field) for field in row)) for row in meta["segments"]]
        vector_math.load_libraries_for(code)
        loaded = jit.load_object(code, str(meta["symbol"]), level)
    except (KeyError, TypeError, ValueError, RuntimeError):
        return None
    if loaded is None:
        return None
    executable = CpuExecutable(loaded, n_params, constants, slots, outputs, temps,
                               n_bound + len(outputs) + len(temps), segments)
    executable.from_disk = True
    ir = meta.get("ir")
    if isinstance(ir, str) and tiering.first_tier(level):
        full = {name: value for name, value in meta.items() if name != "ir"}
        executable.upgrade = tiering.Upgrade(ir, str(meta["symbol"]), level, key, full)
    return executable
