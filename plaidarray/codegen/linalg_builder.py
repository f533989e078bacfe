"""HLO + fusion plan -> an xDSL ``builtin.module`` of ``linalg.generic`` ops on memrefs.

The module has one function, ``main``, whose arguments are the buffers: entry
parameters, then outputs, then temporaries (allocated by the executable). Each
instruction with a buffer of its own (``FusionPlan.is_buffer``) becomes one or more
``linalg.generic`` ops writing it; fused producers become scalar code in the generic's body, and fused
re-indexings become the generic's indexing maps.

Nested computations (the branches of ``conditional``, the body of ``while``) are built
by the same machinery inside an ``scf`` region (:meth:`_ModuleBuilder.inline`); the
buffers they need besides their arguments and results are scratch buffers, further
arguments of ``main`` that the executable allocates for each run.

A shape-generic computation's run-time sizes are symbols (``hlo/symbolic.py``): ``main``
then takes the dims table last, buffers of run-time sizes are dynamic memrefs whose sizes
the builder knows (``buffer_dims``), and sizes reach code as the symbols' values
(``dim``) and indexing maps as affine symbols (``run_time_sizes.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects import complex as cx
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    ComplexType,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from ..hlo import Computation, Instruction
from ..hlo.ir import depth_first
from ..hlo.shape import Shape, TupleShape
from ..hlo.symbolic import Dim, Sym, SymExpr, hint, symbols
from . import kernel_groups
from . import xdsl_ops as ops
from .fusion import FusionPlan, plan_fusion
from .lowering import Elementwise, Indexing, Kernel, Reduction, TupleElement
from .linalg_to_loops import LOOP_DIMS, PARALLEL_LOOP
from .run_time_sizes import (SYMBOL, SYMBOLS, affine, dims_attr, dims_table_type, fold, memref_dims,
                             symbol_positions, symbols_used)

#: How a target names the C math library's function ``name`` in single precision or not
#: (llvm-cpu: ``Target.math_symbol``, C99's ``sinf``/``sin``).
MathSymbol = Callable[[str, bool], str]


def _float_type(itemsize: int) -> Float32Type | Float64Type:
    return Float32Type() if itemsize == 4 else Float64Type()


def _integer_bits(dtype: np.dtype) -> int:
    return 1 if dtype.kind == "b" else dtype.itemsize * 8


def element_type(dtype: np.dtype) -> Attribute:
    if dtype.kind == "c":
        return ComplexType(_float_type(dtype.itemsize // 2))
    if dtype.kind == "f":
        return _float_type(dtype.itemsize)
    return IntegerType(_integer_bits(dtype))


def memref_type(inst: Instruction) -> MemRefType:
    return shape_memref_type(inst.shape)


@functools.lru_cache(maxsize=4096)
def shape_memref_type(shape: Shape) -> MemRefType:
    """The memref type of a buffer of ``shape``. Types are immutable values that any
    module may share, and making one (xDSL verifies it) was a twentieth of a compile."""
    return MemRefType(element_type(shape.dtype), memref_dims(shape.dims))


def constant_op(value: Any, dtype: np.dtype) -> Operation:
    """``value`` is a Python or NumPy number that ``dtype``'s kind converts (complex,
    float or int)."""
    if dtype.kind == "c":
        part = _float_type(dtype.itemsize // 2)
        z = complex(value)
        return cx.ConstantOp(ArrayAttr([FloatAttr(z.real, part), FloatAttr(z.imag, part)]), ComplexType(part))
    if dtype.kind == "f":
        return ops.constant(FloatAttr(float(value), _float_type(dtype.itemsize)))
    bits = _integer_bits(dtype)
    as_int = int(value) & ((1 << bits) - 1)
    if as_int >= 1 << (bits - 1):  # IntegerAttr holds signless values in signed range
        as_int -= 1 << bits
    return ops.constant(IntegerAttr(as_int, IntegerType(bits)))


def _memref(buffer: SSAValue) -> MemRefType:
    """The type of a buffer: ``main``'s arguments (scratch buffers too) are memrefs."""
    return cast(MemRefType, buffer.type)


def affine_map(num_dims: int, exprs: Sequence[AffineExpr | Dim]) -> AffineMapAttr:
    results = tuple(affine(e) for e in exprs)
    return AffineMapAttr(AffineMap(num_dims, symbols_used(results), results))


def dims(n: int) -> list[AffineExpr]:
    return [AffineExpr.dimension(i) for i in range(n)]


#: The ``index`` arithmetic of each affine operation.
_INDEX_ARITHMETIC = {AffineBinaryOpKind.Add: arith.AddiOp, AffineBinaryOpKind.Mul: arith.MuliOp,
                     AffineBinaryOpKind.FloorDiv: arith.FloorDivSIOp, AffineBinaryOpKind.Mod: arith.RemSIOp}


class _Body:
    """A :class:`ScalarBuilder` appending to one generic's body block."""

    def __init__(self, block: Block, module: _ModuleBuilder) -> None:
        self.block = block
        self.module = module
        self._coords: dict[int, Sequence[AffineExpr]] = {}
        self._index_cache: dict[object, SSAValue] = {}

    def insert(self, op: Operation) -> SSAValue:
        """Append ``op``, a scalar operation, and return its value."""
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: object, dtype: np.dtype) -> SSAValue:
        return self.insert(constant_op(value, dtype))

    def type(self, dtype: np.dtype) -> Attribute:
        return element_type(dtype)

    def libm(self, name: str, args: Sequence[SSAValue], dtype: np.dtype) -> SSAValue:
        return self._call(self.module.math_symbol(name, dtype in (np.float32, np.complex64)), args, dtype)

    def runtime(self, name: str, args: Sequence[SSAValue], dtype: np.dtype) -> SSAValue:
        return self._call(f"plaidarray_{name}", args, dtype)

    def _call(self, symbol: str, args: Sequence[SSAValue], dtype: np.dtype) -> SSAValue:
        ty = element_type(dtype)
        self.module.declare(symbol, [ty] * len(args), ty)
        return self.insert(func.CallOp(symbol, list(args), [ty]))

    def coords(self, inst: Instruction) -> Sequence[SSAValue]:
        return [self._index(e) for e in self._coords[id(inst)]]

    def elementwise(self, inst: Instruction, args: Sequence[SSAValue]) -> SSAValue:
        return cast(Elementwise, self.module.plan.lowering(inst)).emit(self, args, inst)

    def loop_index(self, dim: int) -> SSAValue:
        return self._index(AffineExpr.dimension(dim))

    def load(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        return self.insert(ops.load(buffer, indices))

    def dim(self, value: Dim) -> SSAValue:
        return self._index(affine(value))

    def _index(self, expr: AffineExpr) -> SSAValue:
        """Materialise an affine expression of the loop indices as ``index`` arithmetic,
        each distinct leaf and each operation on the same values once per body."""
        if isinstance(expr, int):  # indexing rules may give plain ints for fixed positions
            expr = AffineExpr.constant(expr)
        return fold(expr, self._leaf, self._binary)

    def _leaf(self, expr: AffineExpr) -> SSAValue:
        key = str(expr)
        value = self._index_cache.get(key)
        if value is None:
            if isinstance(expr, AffineDimExpr):
                value = self.insert(ops.loop_index(expr.position))
            elif isinstance(expr, AffineSymExpr):
                value = self.module.symbol(expr.position)
            else:
                value = self.insert(ops.index_constant(cast(AffineConstantExpr, expr).value))
            self._index_cache[key] = value
        return value

    def _binary(self, expr: AffineBinaryOpExpr, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        key = (expr.kind, lhs, rhs)
        value = self._index_cache.get(key)
        if value is None:
            value = self._index_cache[key] = self.insert(_INDEX_ARITHMETIC[expr.kind](lhs, rhs))
        return value


class _ModuleBuilder:
    """Builds ``main`` and implements :class:`KernelBuilder` for kernel lowerings."""

    def __init__(self, plan: FusionPlan, buffer_order: Sequence[Instruction], n_symbols: int,
                 math_symbol: MathSymbol) -> None:
        self.plan = plan
        self.math_symbol = math_symbol
        self.module = ModuleOp([])
        self.block = Block(arg_types=[memref_type(i) for i in buffer_order] + [dims_table_type()] * bool(n_symbols))
        self.entry = self.block
        self.buffers: dict[int, SSAValue] = {id(inst): arg for inst, arg in zip(buffer_order, self.block.args)}
        #: The sizes of every buffer (their memref types say ``?`` for run-time sizes).
        self.buffer_dims: dict[SSAValue, tuple[Dim, ...]] = {
            arg: inst.shape.dims for inst, arg in zip(buffer_order, self.block.args)}
        self.n_symbols = n_symbols
        self._symbols: dict[int, SSAValue] = {}
        #: (size, limit): the sizes the code is valid for (``KernelBuilder.require``).
        self.limits: list[tuple[Dim, int]] = []
        #: Entry ``n_symbols + j`` of the dims table is ``derived[j]`` (``one_value``).
        self.derived: list[Dim] = []
        self._derived_entry: dict[SymExpr, Sym] = {}
        self.scratch_shapes: list[Shape] = []
        self._declared: set[str] = set()
        self._elements: dict[int, list[SSAValue]] = {}  # of tuple instructions, by id

    # --- KernelBuilder ------------------------------------------------------------------
    def insert(self, op: Operation) -> SSAValue | None:
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def const(self, value: object, dtype: np.dtype) -> SSAValue:
        op = constant_op(value, dtype)
        self.insert(op)
        return op.results[0]

    def _index_const(self, value: int) -> SSAValue:
        op = ops.index_constant(value)
        self.insert(op)
        return op.result

    def symbol(self, k: int) -> SSAValue:
        """Run-time size ``k``: its load from the dims table, at the top of ``main``."""
        value = self._symbols.get(k)
        if value is None:
            entry = ops.index_constant(k)
            load = ops.load(self.entry.args[-1], [entry.result])
            load.attributes[SYMBOL] = IntAttr(k)
            first = self.entry.first_op
            for op in (entry, load):
                if first is None:
                    self.entry.add_op(op)
                else:
                    self.entry.insert_op_before(op, first)
            value = self._symbols[k] = load.res
        return value

    def one_value(self, value: Dim) -> Dim:
        if not isinstance(value, SymExpr):
            return value
        entry = self._derived_entry.get(value)
        if entry is None:
            # An offset, not a size: a sum of sizes is 0 where they bind to 0.
            entry = self._derived_entry[value] = Sym(self.n_symbols + len(self.derived), hint(value), size=False)
            self.derived.append(value)
        return entry

    def require(self, value: Dim, limit: int) -> None:
        if (value, limit) not in self.limits:
            self.limits.append((value, limit))

    def dim(self, value: Dim) -> SSAValue:
        """A size or offset as an ``index`` value: a constant, or computed from run-time sizes."""
        if isinstance(value, int):
            return self._index_const(value)
        if isinstance(value, Sym):
            return self.symbol(value.index)
        total: SSAValue | None = None
        for monomial, coefficient in sorted(cast(SymExpr, value).terms.items()):
            term = self._index_const(coefficient)
            for k in monomial:
                term = cast(SSAValue, self.insert(arith.MuliOp(term, self.symbol(k))))
            total = term if total is None else cast(SSAValue, self.insert(arith.AddiOp(total, term)))
        return total if total is not None else self._index_const(0)
    def type(self, dtype: np.dtype) -> Attribute:
        return element_type(dtype)

    def declare(self, symbol: str, arg_types: list[Attribute], result: Attribute | None) -> None:
        if symbol not in self._declared:
            self._declared.add(symbol)
            results = [] if result is None else [result]
            self.module.body.block.add_op(func.FuncOp(symbol, (arg_types, results), Region(), "private"))

    def generic(self, loop_dims, inputs, output, out_dtype, body, reduction_dims=()) -> None:
        in_types = [b.type.element_type for b, _ in inputs]
        block = Block(arg_types=[*in_types, output[0].type.element_type])
        scalar = _Body(block, self)
        result = body(scalar, list(block.args[:-1]), block.args[-1])
        if reduction_dims:
            _allow_reassociation(result, block.args[-1])
        block.add_op(ops.generic_yield(result))
        self._append_generic(loop_dims, [b for b, _ in inputs], [m for _, m in inputs], output, block, reduction_dims)

    def for_each(self, loop_dims: Sequence[Dim], body: Callable[[Sequence[SSAValue]], None],
                 independent_work: Dim = 0) -> None:
        """An ``scf.for`` nest over ``loop_dims``; ``body(indices)`` inserts into the
        innermost loop (through this builder's ``insert``). With ``independent_work``,
        the outermost loop is marked ``PARALLEL_LOOP`` (chunkable) with that work."""
        outer_block = self.block
        ivs: list[SSAValue] = []
        loop_blocks: list[Block] = []
        for d in loop_dims:
            zero, one, bound = self._index_const(0), self._index_const(1), self.dim(d)
            inner = Block(arg_types=[IndexType()])
            loop = ops.for_loop(zero, bound, one, inner)
            if independent_work and not loop_blocks:
                loop.attributes[PARALLEL_LOOP] = dims_attr([0, d, independent_work])
            self.insert(loop)
            self.block = inner
            ivs.append(inner.args[0])
            loop_blocks.append(inner)
        body(ivs)
        for block in loop_blocks:
            block.add_op(ops.loop_yield())
        self.block = outer_block

    def call(self, symbol: str, args: Sequence[SSAValue]) -> None:
        """Call a routine for its effect on buffers: a runtime routine (``plaidarray_*``, see
        llvm_cpu/runtime.py) or a BLAS or LAPACK routine (``blas_sgemm``, see blas_lapack.py)."""
        self.declare(symbol, [a.type for a in args], None)
        self.insert(func.CallOp(symbol, list(args), []))

    def fill(self, buffer: SSAValue, value: object, dtype: np.dtype) -> None:
        shape = self.buffer_dims[buffer]
        self.generic(shape, [], (buffer, dims(len(shape))), dtype,
                     lambda b, ins, cur: b.const(value, dtype))

    def copy(self, source: SSAValue, target: SSAValue) -> None:
        shape = self.buffer_dims[target]
        identity = dims(len(shape))
        self.generic(shape, [(source, identity)], (target, identity), None, lambda b, ins, cur: ins[0])

    def scratch(self, shape: Shape) -> SSAValue:
        """A buffer of ``shape`` that the executable allocates for each run (a further
        argument of ``main``, before the dims table)."""
        self.scratch_shapes.append(shape)
        arg = self.entry.insert_arg(shape_memref_type(shape), len(self.entry.args) - bool(self.n_symbols))
        self.buffer_dims[arg] = shape.dims
        return arg

    @contextmanager
    def building(self, block: Block) -> Iterator[None]:
        """Insert into ``block`` (a region of an ``scf`` op) inside the ``with``."""
        outer, self.block = self.block, block
        try:
            yield
        finally:
            self.block = outer

    def inline(self, comp: Computation, args: Sequence[SSAValue], results: Sequence[SSAValue]) -> None:
        """Emit the nested computation ``comp`` here, with its own fusion plan: its
        parameters read ``args`` and its outputs are written to ``results``."""
        plan = plan_fusion(comp, self.plan.platform)
        buffers = {id(p): a for p, a in zip(comp.parameters, args)}
        copies = []
        for out, target in zip(comp.outputs, results):
            if id(out) in buffers:  # a parameter, or an output listed twice
                copies.append((out, target))
            else:
                buffers[id(out)] = target
        for inst in plan.kernels:
            if id(inst) not in buffers and plan.is_buffer(inst):
                buffers[id(inst)] = self.scratch(inst.shape)
        outer = self.plan, self.buffers, self._elements
        self.plan, self.buffers, self._elements = plan, buffers, {}
        try:
            for inst in plan.kernels:
                self.lower(inst)
        finally:
            self.plan, self.buffers, self._elements = outer
        for out, target in copies:
            self.copy(buffers[id(out)], target)

    def element_buffers(self, inst: Instruction) -> list[SSAValue]:
        """The buffers a tuple instruction writes, one per element: its
        ``get_tuple_element``'s (``FusionPlan.elements``), or scratch for an element no
        one reads."""
        found = self._elements.get(id(inst))
        if found is None:
            held = self.plan.elements.get(id(inst), {})
            shapes = cast(TupleShape, inst.shape).elements
            found = [self.buffers[id(held[i])] if i in held else self.scratch(s) for i, s in enumerate(shapes)]
            self._elements[id(inst)] = found
        return found

    def _append_generic(self, loop_dims, in_buffers, in_maps, output, block, reduction_dims) -> None:
        n = len(loop_dims)
        maps = [affine_map(n, m) for m in (*in_maps, output[1])]
        iterators = [linalg_attrs.IteratorTypeAttr.reduction() if d in set(reduction_dims)
                     else linalg_attrs.IteratorTypeAttr.parallel() for d in range(n)]
        used = symbol_positions(e for m in maps for e in m.data.results)
        for k in sorted(symbols(loop_dims) | used):
            self.symbol(k)  # loaded for the loop bounds and the maps' symbol operands
        generic = ops.generic(in_buffers, [output[0]], block, maps, iterators)
        generic.attributes[LOOP_DIMS] = dims_attr(loop_dims)
        self.insert(generic)

    # --- fused generics -----------------------------------------------------------------
    def fused(self, root: Instruction, target: Instruction, loop_dims: Sequence[int],
              out_map: Sequence[AffineExpr], combine: Callable | None, reduction_dims=()) -> None:
        """One generic over ``loop_dims`` computing ``root`` (a fused tree) at the loop
        coordinate; the value is stored at ``out_map`` of ``target``'s buffer, or folded
        into it by ``combine``."""
        coords = tuple(dims(len(loop_dims)))
        # The fused tree may be a chain of any length, so it is walked iteratively.
        tree = depth_first([(root, coords)], lambda value: self._reads(value, target), key=_value_key)
        leaves = [value for value in tree if self._loads(value[0], target)]
        block = Block(arg_types=[_memref(self.buffers[id(inst)]).element_type for inst, _ in leaves]
                      + [memref_type(target).element_type])
        scalar = _Body(block, self)
        computed: dict[tuple, SSAValue] = {_value_key(leaf): arg for leaf, arg in zip(leaves, block.args)}
        for inst, at in tree:
            if (id(inst), at) not in computed:
                computed[id(inst), at] = self._emit(inst, at, scalar, computed, target)
        value = computed[id(root), coords]
        if combine is not None:
            value = combine(scalar, block.args[-1], value)
            _allow_reassociation(value, block.args[-1])
        block.add_op(ops.generic_yield(value))
        self._append_generic(loop_dims, [self.buffers[id(inst)] for inst, _ in leaves],
                             [list(at) for _, at in leaves], (self.buffers[id(target)], out_map),
                             block, reduction_dims)

    def _loads(self, inst: Instruction, target: Instruction) -> bool:
        """Whether the generic writing ``target`` reads ``inst`` from its buffer."""
        return self.plan.is_buffer(inst) and inst is not target

    def _reads(self, value: tuple[Instruction, tuple], target: Instruction) -> tuple:
        """The (instruction, coordinates) values that the fused value ``value`` (an
        instruction at coordinates) is computed from: none if it is loaded from a buffer."""
        inst, at = value
        if self._loads(inst, target):
            return ()
        low = self.plan.lowering(inst)
        if isinstance(low, Indexing):
            return ((inst.operands[0], tuple(low.operand_coords(inst, list(at)))),)
        return tuple((o, at) for o in inst.operands)

    def _emit(self, inst: Instruction, at: tuple, scalar: _Body, computed: dict, target: Instruction) -> SSAValue:
        """The scalar code of ``inst`` at ``at``, from the ``computed`` values it reads."""
        operands = [computed[_value_key(read)] for read in self._reads((inst, at), target)]
        low = self.plan.lowering(inst)
        if isinstance(low, Indexing):
            return operands[0]
        scalar._coords[id(inst)] = at
        return cast(Elementwise, low).emit(scalar, operands, inst)  # fused: elementwise, or indexing above

    def lower(self, inst: Instruction) -> None:
        """Emit the linalg ops that write ``inst``'s buffer."""
        low = self.plan.lowering(inst)
        if isinstance(inst.shape, TupleShape):
            cast(Kernel, low).emit(self, inst, self.element_buffers(inst), [self.buffers[id(o)] for o in inst.operands])
            return
        out = self.buffers[id(inst)]
        if isinstance(low, TupleElement):
            source = self.element_buffers(inst.operands[0])[inst.attrs["index"]]
            if source is not out:  # a second get_tuple_element of the same element
                self.copy(source, out)
        elif isinstance(low, Kernel):
            low.emit(self, inst, out, [self.buffers[id(o)] for o in inst.operands])
        elif isinstance(low, Reduction):
            self.fill(out, low.init(inst), inst.shape.dtype)
            x = inst.operands[0]
            reduced = set(inst.attrs["dimensions"])
            kept = [e for i, e in enumerate(dims(x.shape.rank)) if i not in reduced]
            self.fused(x, inst, x.shape.dims, kept, lambda b, acc, v: low.combine(b, acc, v, inst), sorted(reduced))
        else:
            assert isinstance(low, (Elementwise, Indexing))
            self.fused(inst, inst, inst.shape.dims, dims(inst.shape.rank), None)

    def finish(self) -> ModuleOp:
        self.insert(func.ReturnOp())
        types = [a.type for a in self.block.args]
        main = func.FuncOp("main", (types, []), Region(self.block))
        if self.n_symbols:
            main.attributes[SYMBOLS] = IntAttr(self.n_symbols + len(self.derived))
        self.module.body.block.add_op(main)
        return self.module


def _allow_reassociation(value: SSAValue, accumulator: SSAValue) -> None:
    """Mark a float reduction's accumulating add or multiply ``reassoc``: the emitter may
    choose the order of the sum, and writes it as partial sums of its own
    (``llvm/emitter._accumulate``); the LLVM IR carries no fast-math flag. Only the
    accumulation is marked: the fused elementwise code keeps its order."""
    op = value.owner
    if isinstance(op, (arith.AddfOp, arith.MulfOp)) and accumulator in op.operands:
        op.fastmath = arith.FastMathFlagsAttr([arith.FastMathFlag.REASSOC])


def _value_key(value: tuple[Instruction, tuple]) -> tuple:
    inst, at = value
    return id(inst), at


@dataclass
class LinalgModule:
    """What ``build_linalg`` makes: the module, the shapes of the scratch buffers it needs,
    the limits on its run-time sizes (``KernelBuilder.require``) and the values of the
    dims table's entries after them (``KernelBuilder.one_value``)."""

    module: ModuleOp
    scratch: list[Shape]
    limits: list[tuple[Dim, int]]
    derived: list[Dim]


def build_linalg(plan: FusionPlan, buffer_order: Sequence[Instruction],
                 buffer_owners: Mapping[int, Instruction] = MappingProxyType({}), n_symbols: int = 0,
                 kernels: Sequence[Instruction] | None = None, *, math_symbol: MathSymbol) -> LinalgModule:
    """The linalg module for ``plan``'s ``kernels`` (default: all, in order; a kernel
    group, ``kernel_groups.py``); ``buffer_order`` fixes ``main``'s first arguments (the
    buffers those kernels touch), the scratch buffers follow, then the dims table if the
    computation has ``n_symbols`` run-time sizes. ``buffer_owners`` maps the instructions
    that write another one's buffer to it (``buffer_sharing.py``). ``math_symbol(name,
    single)`` names the C math library's functions on the target (``KernelBuilder.libm``)."""
    builder = _ModuleBuilder(plan, buffer_order, n_symbols, math_symbol)
    for inst_id, keeper in buffer_owners.items():
        if id(keeper) in builder.buffers:
            builder.buffers[inst_id] = builder.buffers[id(keeper)]
    for inst in plan.kernels if kernels is None else kernels:
        before = builder.entry.last_op
        builder.lower(inst)
        if not isinstance(plan.lowering(inst), (Elementwise, Indexing, Reduction)):
            op = before.next_op if before is not None else builder.entry.first_op
            made = []
            while op is not None:
                made.append(op)
                op = op.next_op
            key = kernel_groups.op_key(plan, inst, lambda i: builder.buffers.get(id(i)))
            kernel_groups.learn(key, kernel_groups.nests_of(made))
    return LinalgModule(builder.finish(), builder.scratch_shapes, builder.limits, builder.derived)
