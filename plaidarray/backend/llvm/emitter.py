"""Loops (scf/memref/arith/math/affine, after ``convert-linalg-to-loops``) -> LLVM IR.

xDSL 0.74 has no lowering of these dialects to its llvm dialect (upstream issue
6073), and its route through ``ptr`` emits ptrtoint/inttoptr that blocks
vectorisation, so this module translates the loop-level IR straight into llvmlite IR.
Each MLIR op name maps to one small translation rule in ``_RULES``; a backend adds rules of
its own and supplies what its kernels call and how they are entered (its :class:`Renderer`,
as tinygrad's renderers are a device's part in writing its kernels' code): this module is
the core every LLVM backend shares.

Buffers are ``noalias`` pointers with static shapes, so an index is a linear offset
with compile-time strides; booleans are ``i1`` in registers and bytes in memory.
Operations that are undefined in LLVM are made total here: float->int conversion
saturates (NaN -> 0) via ``llvm.fpto[su]i.sat``; integer division and shifts are
guarded earlier, in the HLO op lowerings.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from llvmlite import ir
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ComplexType,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineSymExpr

from ...codegen.element_types import element_bytes
from ...codegen.linalg_to_loops import PARALLEL_LOOP
from ...codegen.run_time_sizes import SYMBOL, fold, read_dims, symbol_index, symbol_values
from ...hlo.fingerprint import Hashed
from ...hlo.symbolic import Dim, Sym, SymExpr, hint, symbols
from .kernel_source import KERNEL_PREFIX, PLACEHOLDER, KernelSource, Segment
from .target import Target

PTR = ir.PointerType()
I8 = ir.IntType(8)
INDEX = ir.IntType(64)


def llvm_type(t: Attribute) -> ir.Type:
    if isinstance(t, IndexType):
        return INDEX
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    if isinstance(t, Float32Type):
        return ir.FloatType()
    if isinstance(t, Float64Type):
        return ir.DoubleType()
    if isinstance(t, ComplexType):  # NumPy's layout: {real, imag}
        part = llvm_type(t.element_type)
        return ir.LiteralStructType([part, part])
    raise NotImplementedError(f"no LLVM type for {t}")


def strides(t: MemRefType) -> tuple[int, ...]:
    """The element strides of a buffer: row-major, or those of a strided layout (a
    ``memref.subview`` of a buffer)."""
    if isinstance(t.layout, StridedLayoutAttr):  # with static strides (None: dynamic), as every subview here
        return cast("tuple[int, ...]", tuple(t.layout.get_strides()))
    shape = t.get_shape()
    return tuple(math.prod(shape[axis + 1:]) for axis in range(len(shape)))


def _memory_type(t: ir.Type) -> ir.Type:
    return I8 if t == ir.IntType(1) else t


def _float_suffix(t: ir.Type) -> str:
    return "f32" if isinstance(t, ir.FloatType) else "f64"


def _is_complex(t: ir.Type) -> bool:
    return isinstance(t, ir.LiteralStructType)


class FunctionEmitter:
    """Translates one ``func.func`` body into an LLVM function."""

    def __init__(self, module: ir.Module, name: str, arg_types: list[Attribute], target: Target,
                 renderer: Renderer, extra: Sequence[ir.Type] = ()) -> None:
        self.module = module
        self.target = target
        self.renderer = renderer
        fnty = ir.FunctionType(ir.VoidType(), [PTR] * len(arg_types) + list(extra))
        self.function = ir.Function(module, fnty, name)
        for arg in self.function.args[:len(arg_types)]:
            arg.add_attribute("noalias")
        self.builder = ir.IRBuilder(self.function.append_basic_block("entry"))
        self.values: dict[SSAValue, ir.Value] = {}
        #: (depth, start, stop): the loop at that depth of the nest runs over [start, stop).
        self.chunk: tuple[int, ir.Value, ir.Value] | None = None
        #: Enclosing scf.for loops, innermost last: (induction phi, step, header, carried phis).
        self.loop_stack: list[tuple] = []
        #: Where the terminator of an scf.if / scf.while region goes: a region block's
        #: successor for scf.yield, (body, exit) for scf.condition.
        self.successors: dict[Block, ir.Block | tuple[ir.Block, ir.Block]] = {}
        #: The element strides of buffers of run-time sizes, computed at the function's entry.
        self.strides: dict[SSAValue, list[ir.Value]] = {}
        #: The loads and stores of accumulators emitted as a partial sum's (``_accumulate``).
        self.slots: dict[Operation, ir.Value] = {}
        #: A kernel's table of imported routines (``Renderer.is_import``): its pointer, and
        #: the routines called through it, in the order of their entries.
        self.imports_table: ir.Value | None = None
        self.imports: list[str] = []
        #: The threads that run each iteration together (``Renderer.lanes``).
        self.lanes = 1
        #: Runs of a reduction's blocks that launches of the kernel over the grid compute
        #: before its own launch (llvm-nvptx's whole-array reductions); 0: none.
        self.runs = 0

    def imported(self, name: str, routine_type: ir.FunctionType) -> ir.Value:
        """The imported routine ``name``, read from the kernel's table, callable as a
        function of ``routine_type``."""
        assert self.imports_table is not None, f"{name} is called outside a kernel"
        if name not in self.imports:
            self.imports.append(name)
        b = self.builder
        slot = b.gep(self.imports_table, [ir.Constant(INDEX, self.imports.index(name))], inbounds=True,
                     source_etype=PTR)
        return b.load(slot, typ=ir.PointerType(routine_type))  # typed, so llvmlite's call knows its type

    # --- helpers used by the rules ------------------------------------------------------
    def v(self, value: SSAValue) -> ir.Value:
        return self.values[value]

    def size(self, value: Dim, symbols: dict[int, ir.Value]) -> ir.Value:
        """A size as an ``i64``: a constant, or computed from the run-time sizes ``symbols``."""
        if isinstance(value, int):
            return ir.Constant(INDEX, value)
        if isinstance(value, Sym):
            return symbols[value.index]
        total: ir.Value = ir.Constant(INDEX, 0)
        for monomial, coefficient in sorted(cast(SymExpr, value).terms.items()):
            term: ir.Value = ir.Constant(INDEX, coefficient)
            for k in monomial:
                term = self.builder.mul(term, symbols[k])
            total = self.builder.add(total, term)
        return total

    def intrinsic(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        fn = self.declare(name, ret, [a.type for a in args])
        return self.builder.call(fn, args)

    def declare(self, name: str, ret: ir.Type, arg_types: list[ir.Type]) -> ir.Function:
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(ret, arg_types), name)

    def address(self, memref: SSAValue, indices: list[SSAValue]) -> tuple[ir.Value, ir.Type]:
        return self.element_address(self.v(memref), cast(MemRefType, memref.type), [self.v(i) for i in indices],
                                    self.strides.get(memref))

    def element_address(self, base: ir.Value, t: MemRefType, indices: list[ir.Value],
                        run_time_strides: list[ir.Value] | None = None) -> tuple[ir.Value, ir.Type]:
        """The address of the element at ``indices`` of a buffer of type ``t`` at ``base``
        (whose strides are ``run_time_strides`` if it has run-time sizes)."""
        elem = _memory_type(llvm_type(t.element_type))
        offset: ir.Value | None = None
        steps = run_time_strides or strides(t)
        for idx, stride in zip(indices, steps):
            # A unit stride and the first term are not multiplied and added: first-tier code
            # is not optimised, and every load and store paid two instructions for them.
            if isinstance(stride, ir.Value):
                term = self.builder.mul(idx, stride, flags=("nuw", "nsw"))
            elif stride == 1:
                term = idx
            else:
                term = self.builder.mul(idx, ir.Constant(INDEX, stride), flags=("nuw", "nsw"))
            offset = term if offset is None else self.builder.add(offset, term, flags=("nuw", "nsw"))
        if offset is None:
            offset = ir.Constant(INDEX, 0)
        return self.builder.gep(base, [offset], inbounds=True, source_etype=elem), elem

    # --- walking ------------------------------------------------------------------------
    def emit_block(self, block: Block) -> None:
        self.emit_ops(block.ops)

    def emit_ops(self, ops: Iterable[Operation]) -> None:
        for op in ops:
            rule = self.renderer.rules.get(op.name) or _RULES.get(op.name)
            if rule is None:
                raise NotImplementedError(f"{self.renderer.name}: no LLVM translation for {op.name}")
            result = rule(self, op)
            if result is not None:
                self.values[op.results[0]] = result


Rule = Callable[[FunctionEmitter, Operation], "ir.Value | None"]
_RULES: dict[str, Rule] = {}


class Renderer:
    """A backend's part in emitting its kernels: ``rules`` of its own (over the shared
    ones: the math functions it provides), the routines it defines in a kernel's module
    (:meth:`runtime_function`), the calls that go through a kernel's table of imports
    (:meth:`is_import`), the partial sums of an accumulation by the width of its element
    type (``_accumulate``; a power of two each), and how a kernel is entered
    (:meth:`emit_entry`: its ABI, around the body this module emits). A backend whose
    threads come in groups that can share a reduction (a GPU's warps) may run each
    iteration of a kernel on a group of :meth:`lanes` threads: then it emits that kernel's
    reductions (:meth:`emit_group_reduction`) and its entry (:meth:`emit_group_entry`)."""

    name: str = ""
    rules: dict[str, Rule] = {}
    partials: dict[int, int] = {}

    def runtime_function(self, module: ir.Module, name: str) -> ir.Function | None:
        """The routine ``name`` defined in ``module`` on first use, if the backend has it."""
        return None

    def is_import(self, name: str) -> bool:
        """Whether a call of ``name`` goes through the kernel's table of imports."""
        return False

    def emit_entry(self, module: ir.Module, body: ir.Function, n_buffers: int) -> None:
        """Define the kernel, named ``PLACEHOLDER``, calling ``body`` with the addresses of
        its ``n_buffers`` buffers, then the dims table, the imports table and the
        ``[start, stop)`` range of its chunked loop."""
        raise NotImplementedError(f"{self.name}: no kernel entry")

    def lanes(self, ops: list[Operation], segment: Segment) -> int:
        """The threads that run each iteration of the chunkable loop of the kernel of
        ``ops`` together (the kernel, without one): 1, a thread an iteration, here."""
        return 1

    def emit_group_reduction(self, e: FunctionEmitter, loop: Any, lb: ir.Value, ub: ir.Value) -> bool:
        """Emit ``loop`` shared by the kernel's ``e.lanes`` threads, if it is a reduction
        they can share (False: it is emitted as any loop is, by each of them)."""
        return False

    def emit_group_entry(self, module: ir.Module, body: ir.Function, n_buffers: int, lanes: int) -> None:
        """:meth:`emit_entry` for a kernel whose iterations run on ``lanes`` threads each."""
        raise NotImplementedError(f"{self.name}: no kernel entry for groups of threads")


def rule(*names: str):
    def register(fn: Rule) -> Rule:
        for n in names:
            _RULES[n] = fn
        return fn
    return register


def _binary(method: str, **kw) -> Rule:
    return lambda e, op: getattr(e.builder, method)(e.v(op.operands[0]), e.v(op.operands[1]), **kw)


for _name, _method in {
    "arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.divsi": "sdiv",
    "arith.divui": "udiv", "arith.remsi": "srem", "arith.remui": "urem", "arith.andi": "and_",
    "arith.ori": "or_", "arith.xori": "xor", "arith.shli": "shl", "arith.shrsi": "ashr",
    "arith.shrui": "lshr",
}.items():
    _RULES[_name] = _binary(_method)


def _float_binary(method: str) -> Rule:
    """Float arithmetic without fast-math flags: every value the IR computes is defined,
    whatever pipeline compiles it (``tiering.py``). The accumulation of a reduction, which
    the linalg lowering marks ``reassoc``, is given an order of its own instead
    (``_accumulations``)."""
    def emit(e, op):
        return getattr(e.builder, method)(e.v(op.operands[0]), e.v(op.operands[1]))
    return emit


for _name, _method in {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul", "arith.divf": "fdiv"}.items():
    _RULES[_name] = _float_binary(_method)


@rule("arith.floordivsi")
def _floordivsi(e, op):
    # Only reached for index arithmetic of affine maps, whose operands are non-negative.
    return e.builder.sdiv(e.v(op.operands[0]), e.v(op.operands[1]))


@rule("arith.negf")
def _negf(e, op):
    return e.builder.fneg(e.v(op.operands[0]))


@rule("arith.constant")
def _constant(e, op):
    attr = op.value
    ty = llvm_type(attr.type)
    if isinstance(attr, FloatAttr):
        return ir.Constant(ty, attr.value.data)
    assert isinstance(attr, IntegerAttr)
    return ir.Constant(ty, attr.value.data)


@rule("arith.cmpi")
def _cmpi(e, op):
    from xdsl.dialects.arith import CMPI_COMPARISON_OPERATIONS

    pred = CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    symbol = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[pred.lstrip("su")]
    compare = e.builder.icmp_unsigned if pred[0] == "u" else e.builder.icmp_signed
    return compare(symbol, e.v(op.lhs), e.v(op.rhs))


@rule("arith.cmpf")
def _cmpf(e, op):
    from xdsl.dialects.arith import CMPF_COMPARISON_OPERATIONS

    pred = CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    symbol = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "rd": "ord", "no": "uno"}[pred[1:]]
    compare = e.builder.fcmp_ordered if pred[0] == "o" else e.builder.fcmp_unordered
    return compare(symbol, e.v(op.lhs), e.v(op.rhs))


@rule("arith.select")
def _select(e, op):
    return e.builder.select(*(e.v(o) for o in op.operands))


def _cast(method: str) -> Rule:
    return lambda e, op: getattr(e.builder, method)(e.v(op.operands[0]), llvm_type(op.results[0].type))


for _name, _method in {"arith.extsi": "sext", "arith.extui": "zext", "arith.trunci": "trunc",
                       "arith.sitofp": "sitofp", "arith.uitofp": "uitofp", "arith.extf": "fpext",
                       "arith.truncf": "fptrunc", "arith.bitcast": "bitcast"}.items():
    _RULES[_name] = _cast(_method)


@rule("arith.index_cast")
def _index_cast(e, op):
    value, target = e.v(op.operands[0]), llvm_type(op.results[0].type)
    if value.type.width == target.width:
        return value
    return e.builder.trunc(value, target) if value.type.width > target.width else e.builder.sext(value, target)


@rule("arith.fptosi", "arith.fptoui")
def _fptoint(e, op):
    value, target = e.v(op.operands[0]), llvm_type(op.results[0].type)
    kind = "s" if op.name == "arith.fptosi" else "u"
    return e.intrinsic(f"llvm.fpto{kind}i.sat.i{target.width}.{_float_suffix(value.type)}", target, [value])


def _float_intrinsic(name: str) -> Rule:
    def emit(e, op):
        args = [e.v(o) for o in op.operands]
        return e.intrinsic(f"llvm.{name}.{_float_suffix(args[0].type)}", args[0].type, args)
    return emit


for _name, _intr in {
    "math.exp2": "exp2", "math.log2": "log2", "math.log10": "log10", "math.sqrt": "sqrt", "math.absf": "fabs",
    "math.floor": "floor", "math.ceil": "ceil", "math.trunc": "trunc", "math.roundeven": "roundeven",
    "math.copysign": "copysign", "arith.maximumf": "maximum", "arith.minimumf": "minimum",
}.items():
    _RULES[_name] = _float_intrinsic(_intr)


def power(general: Callable[[FunctionEmitter, ir.Type], ir.Function]) -> Rule:
    """``math.powf`` as a function of the kernel's module that takes the exponents NumPy's
    ``**`` takes apart (``x ** 2`` a product, ``x ** 0.5`` a square root, ``x ** -1`` a
    division) and calls ``general`` (a backend's ``pow``) for the rest. They are the
    commonest powers (variances, norms, losses, scales), and an exponent reaches a kernel
    as a run-time value (a literal is a parameter of fused code, an operand of an op's
    kernel), so LLVM could not fold ``pow(x, 2.0)`` into a product as it does a
    constant's: a call of the C library's ``pow`` per element, 10-30 ns, where the square
    vectorises (``_define_power``) and a square root or a division costs a call of ~2 ns. Each is
    correctly rounded where the C library's ``pow`` is an ulp off for about one input in
    1500 (``hlo/ops/elementwise.py`` defines the op so: the bits of NumPy's ``x ** 2``,
    ``x ** 0.5``, ``x ** -1``), with the standard's special cases of ``pow``: ``-0 ** 0.5``
    is +0 and ``-inf ** 0.5`` is +inf, where a square root gives -0 and NaN."""
    def emit(e, op):
        x, y = e.v(op.operands[0]), e.v(op.operands[1])
        symbol = f"plaidarray.pow.{_float_suffix(x.type)}"
        fn = e.module.globals.get(symbol)
        if fn is None:
            fn = _define_power(e, symbol, x.type, general(e, x.type))
        return e.builder.call(fn, [x, y])
    return emit


def _define_power(e: FunctionEmitter, symbol: str, ty: ir.Type, callee: ir.Function) -> ir.Function:
    """``symbol``: squares where the exponent is 2, else calls a function of the other
    exponents, kept out of line: a loop whose body holds one branch on its exponent and a
    call is unswitched into a vectorised product (``x ** 2`` of 1e5 float64, 20 us), where
    inlining the other cases too left it a loop of branches (100-230 us)."""
    rest = ir.Function(e.module, ir.FunctionType(ty, [ty, ty]), symbol + ".rest")
    rest.linkage = "internal"
    rest.attributes.add("noinline")
    base, exponent = rest.args
    b = ir.IRBuilder(rest.append_basic_block("entry"))
    sqrt = e.declare(f"llvm.sqrt.{_float_suffix(ty)}", ty, [ty])
    cases = {0.5: lambda: b.select(b.fcmp_ordered("==", base, ir.Constant(ty, -math.inf)), ir.Constant(ty, math.inf),
                                   b.fadd(b.call(sqrt, [base]), ir.Constant(ty, 0.0))),
             -1.0: lambda: b.fdiv(ir.Constant(ty, 1.0), base)}
    for value, result in cases.items():
        taken, other = rest.append_basic_block(f"exponent {value}"), rest.append_basic_block(f"not {value}")
        b.cbranch(b.fcmp_ordered("==", exponent, ir.Constant(ty, value)), taken, other)
        b.position_at_end(taken)
        b.ret(result())
        b.position_at_end(other)
    b.ret(b.call(callee, [base, exponent]))
    fn = ir.Function(e.module, ir.FunctionType(ty, [ty, ty]), symbol)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    base, exponent = fn.args
    entry, square, other = (fn.append_basic_block(name) for name in ("entry", "square", "other"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.fcmp_ordered("==", exponent, ir.Constant(ty, 2.0)), square, other)
    b.position_at_end(square)
    b.ret(b.fmul(base, base))
    b.position_at_end(other)
    b.ret(b.call(rest, [base, exponent]))
    return fn


_RULES["math.powf"] = power(lambda e, t: e.declare(f"llvm.pow.{_float_suffix(t)}", t, [t, t]))


def _libm(name: str) -> Rule:
    def emit(e, op):
        args = [e.v(o) for o in op.operands]
        symbol = e.target.math_symbol(name, isinstance(args[0].type, ir.FloatType))
        return e.builder.call(e.declare(symbol, args[0].type, [a.type for a in args]), args)
    return emit


for _name in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "atan2", "cbrt"):
    _RULES[f"math.{_name}"] = _libm(_name)


def _int_minmax(symbol: str, signed: bool) -> Rule:
    def emit(e, op):
        a, b = e.v(op.operands[0]), e.v(op.operands[1])
        cmp = e.builder.icmp_signed if signed else e.builder.icmp_unsigned
        return e.builder.select(cmp(symbol, a, b), a, b)
    return emit


_RULES.update({"arith.maxsi": _int_minmax(">", True), "arith.minsi": _int_minmax("<", True),
               "arith.maxui": _int_minmax(">", False), "arith.minui": _int_minmax("<", False)})


@rule("math.absi")
def _absi(e, op):
    x = e.v(op.operands[0])
    zero = ir.Constant(x.type, 0)
    return e.builder.select(e.builder.icmp_signed("<", x, zero), e.builder.sub(zero, x), x)


@rule("math.ctlz")
def _ctlz(e, op):
    return e.builder.ctlz(e.v(op.operands[0]), ir.Constant(ir.IntType(1), 0))


@rule("math.ipowi")
def _ipowi(e, op):
    base, exponent = e.v(op.operands[0]), e.v(op.operands[1])
    return e.builder.call(_routine(e, f"plaidarray_ipow_i{base.type.width}"), [base, exponent])


def _routine(e: FunctionEmitter, name: str) -> ir.Function:
    routine = e.renderer.runtime_function(e.module, name)
    if routine is None:
        raise NotImplementedError(f"{e.renderer.name}: no routine {name}")
    return routine


@rule("func.call")
def _call(e, op):
    args = [e.v(o) for o in op.operands]
    name = op.callee.string_value()
    routine = e.renderer.runtime_function(e.module, name)
    if routine is not None:
        result = e.builder.call(routine, args)
        return result if op.results else None
    if e.renderer.is_import(name):  # BLAS or LAPACK, for its effect on buffers: through the kernel's table
        e.builder.call(e.imported(name, ir.FunctionType(ir.VoidType(), [a.type for a in args])), args)
        return None
    return call_c(e, name, args, llvm_type(op.results[0].type))


def call_c(e: FunctionEmitter, name: str, args: list[ir.Value], ret: ir.Type) -> ir.Value:
    """Call a C function, passing and returning C complex values as the target's ABI
    does (``target.ComplexAbi``)."""
    b = e.builder
    lowered: list[ir.Value] = []
    for a in args:
        if not _is_complex(a.type):
            lowered.append(a)
            continue
        passing = _complex_passing(e, a.type)[0]
        re, im = _parts(e, a)
        if passing == "pair":
            lowered += [re, im]
        else:
            aggregate = ir.VectorType(re.type, 2) if passing == "vector" else ir.ArrayType(re.type, 2)
            lowered.append(_pack(b, aggregate, re, im))
    c_ret = ret
    if _is_complex(ret) and _complex_passing(e, ret)[1] == "vector":
        c_ret = ir.VectorType(ret.elements[0], 2)
    result = b.call(e.declare(name, c_ret, [a.type for a in lowered]), lowered)
    if c_ret is ret:
        return result
    index = [ir.Constant(ir.IntType(32), i) for i in range(2)]
    return _make_complex(e, ret, *(b.extract_element(result, i) for i in index))


def _complex_passing(e: FunctionEmitter, ty: ir.Type) -> tuple[str, str]:
    abi = e.target.complex
    return abi.double if isinstance(ty.elements[0], ir.DoubleType) else abi.single


def _pack(b: ir.IRBuilder, aggregate: ir.Type, re: ir.Value, im: ir.Value) -> ir.Value:
    """``re`` and ``im`` in a vector or an array of two."""
    packed = ir.Constant(aggregate, None)
    for i, part in enumerate((re, im)):
        if isinstance(aggregate, ir.VectorType):
            packed = b.insert_element(packed, part, ir.Constant(ir.IntType(32), i))
        else:
            packed = b.insert_value(packed, part, i)
    return packed


@rule("memref.load")
def _load(e, op):
    slot = e.slots.get(op)
    if slot is not None:  # an accumulator's partial sum (``_accumulate``)
        return e.builder.load(slot, typ=llvm_type(op.results[0].type))
    ptr, elem = e.address(op.memref, list(op.indices))
    value = e.builder.load(ptr, typ=elem, align=elem.width // 8 if hasattr(elem, "width") else None)
    want = llvm_type(op.results[0].type)
    return e.builder.trunc(value, want) if want != elem else value


@rule("memref.store")
def _store(e, op):
    slot = e.slots.get(op)
    if slot is not None:
        e.builder.store(e.v(op.value), slot)
        return
    ptr, elem = e.address(op.memref, list(op.indices))
    value = e.v(op.value)
    if value.type != elem:
        value = e.builder.zext(value, elem)
    e.builder.store(value, ptr, align=elem.width // 8 if hasattr(elem, "width") else None)


@rule("memref.subview")
def _subview(e, op):
    """A part of a buffer, as the address of its first element (its strides are the
    buffer's: unit strides only); library routines receive it as a pointer."""
    assert set(op.static_strides.get_values()) == {1}, "memref.subview with steps is not produced by plaidarray"
    dynamic = iter(op.offsets)
    offsets = [e.v(next(dynamic)) if o == DYNAMIC_INDEX else ir.Constant(INDEX, o)
               for o in op.static_offsets.get_values()]
    source_strides = e.strides.get(op.source)
    if source_strides is not None:
        e.strides[op.result] = source_strides
    return e.element_address(e.v(op.source), op.source.type, offsets, source_strides)[0]


@rule("memref.alloc")
def _alloc(e, op):
    """Heap scratch for kernels that call library routines: of a static size, or of one
    run-time size (its one dynamic dimension's operand) times the static ones."""
    t = op.memref.type
    static = math.prod(n for n in t.get_shape() if n != DYNAMIC_INDEX) * element_bytes(t.element_type)
    size: ir.Value = ir.Constant(INDEX, max(static, 1))
    for dynamic in op.dynamic_sizes:
        size = e.builder.mul(size, e.v(dynamic), flags=("nuw", "nsw"))
    if op.dynamic_sizes:  # a run-time size of 0 allocates a byte all the same
        size = e.builder.select(e.builder.icmp_unsigned("==", size, ir.Constant(INDEX, 0)), ir.Constant(INDEX, 1), size)
    return e.builder.call(e.declare("malloc", PTR, [INDEX]), [size])


@rule("memref.alloca")
def _alloca(e, op):
    """A stack buffer of a static size (a contracted temporary, loop_fusion.py), in the
    function's entry block as LLVM expects of fixed allocas: one per call of the
    segment function, so each thread running a chunk has its own."""
    t = op.memref.type
    entry = ir.IRBuilder(e.function.entry_basic_block)
    entry.position_at_start(e.function.entry_basic_block)
    slot = entry.alloca(_memory_type(llvm_type(t.element_type)), size=ir.Constant(INDEX, max(math.prod(t.get_shape()), 1)))
    slot.align = 64
    return slot


@rule("memref.dealloc")
def _dealloc(e, op):
    e.builder.call(e.declare("free", ir.VoidType(), [PTR]), [e.v(op.memref)])


@rule("affine.apply")
def _affine_apply(e, op):
    """Dimensions and symbols (run-time sizes) are the operands, in that order; products,
    quotients and remainders by symbols (semi-affine maps) evaluate alike."""
    operands = [e.v(o) for o in op.mapOperands]
    affine_map = op.map.data
    (expr,) = affine_map.results

    def leaf(x):
        if isinstance(x, AffineDimExpr):
            return operands[x.position]
        if isinstance(x, AffineSymExpr):
            return operands[affine_map.num_dims + x.position]
        return ir.Constant(INDEX, cast(AffineConstantExpr, x).value)

    def binary(x, lhs, rhs):
        return getattr(e.builder, _AFFINE_ARITHMETIC[x.kind])(lhs, rhs)

    return fold(expr, leaf, binary)


_AFFINE_ARITHMETIC = {AffineBinaryOpKind.Add: "add", AffineBinaryOpKind.Mul: "mul",
                      AffineBinaryOpKind.FloorDiv: "sdiv", AffineBinaryOpKind.Mod: "srem"}


@rule("scf.for")
def _for(e, op):
    b = e.builder
    lb, ub, step = e.v(op.lb), e.v(op.ub), e.v(op.step)
    if e.chunk is not None and len(e.loop_stack) == e.chunk[0]:
        lb, ub = e.chunk[1:]
    elif e.lanes > 1 and e.renderer.emit_group_reduction(e, op, lb, ub):
        return None
    else:
        accumulations = _accumulations(op)
        if accumulations:
            _accumulate(e, op, lb, ub, accumulations)
            return None
    pre = b.block
    header = e.function.append_basic_block("loop.header")
    body = e.function.append_basic_block("loop.body")
    exit_ = e.function.append_basic_block("loop.exit")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(INDEX)
    carried = [b.phi(llvm_type(a.type)) for a in op.body.block.args[1:]]
    iv.add_incoming(lb, pre)
    for phi, init in zip(carried, op.iter_args):
        phi.add_incoming(e.v(init), pre)
    b.cbranch(b.icmp_signed("<", iv, ub), body, exit_)
    b.position_at_end(body)
    e.values[op.body.block.args[0]] = iv
    for arg, phi in zip(op.body.block.args[1:], carried):
        e.values[arg] = phi
    e.loop_stack.append((iv, step, header, carried))
    e.emit_block(op.body.block)
    e.loop_stack.pop()
    b.position_at_end(exit_)
    for result, phi in zip(op.results, carried):
        e.values[result] = phi
    return None


@dataclass(frozen=True)
class _Accumulation:
    """A reduction's accumulation in a loop: ``load`` reads the accumulator (at an address
    that does not depend on the loop), ``combine`` adds or multiplies the element in,
    ``store`` writes it back."""

    load: Any  # memref.load
    combine: Any  # arith.addf or arith.mulf
    store: Any  # memref.store


def _accumulating(combine: Operation) -> bool:
    """Whether ``combine`` is an accumulation's: an add or multiply marked ``reassoc``."""
    return isinstance(combine, (arith.AddfOp, arith.MulfOp)) and bool(combine.fastmath.data)


def _accumulations(loop: Any, combines: Callable[[Operation], bool] = _accumulating) -> list[_Accumulation]:
    """The accumulations of an innermost loop from 0 by 1 carrying no values, that every
    access to their accumulator belongs to (a reduction after ``convert-linalg-to-loops``:
    load, add or multiply marked ``reassoc``, store; or the operations ``combines``
    accepts); none for any other loop."""
    block = loop.body.block
    if loop.iter_args or _constant_int(loop.step) != 1 or any(inner.regions for inner in block.ops):
        return []
    inside: set[SSAValue] = {r for inner in block.ops for r in inner.results} | set(block.args)
    found = []
    for combine in block.ops:
        if not combines(combine):
            continue
        for operand in combine.operands:
            load = operand.owner
            if not (isinstance(load, memref.LoadOp) and load.parent_block() is block
                    and not inside & set(load.indices)):
                continue
            users = [use.operation for use in combine.results[0].uses]
            accesses = [use.operation for use in load.memref.uses if use.operation.parent_block() is block]
            store = users[0] if len(users) == 1 else None
            if (isinstance(store, memref.StoreOp) and store.memref is load.memref
                    and list(store.indices) == list(load.indices)
                    and sorted(map(id, accesses)) == sorted(map(id, (load, store)))):
                found.append(_Accumulation(load, combine, store))
                break
    return found


def _constant_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


#: Elements of a block of an accumulation (a power of two, a multiple of the partials):
#: each partial adds up 4096 / K of them (64 or 128) before the block's sum joins the
#: cascade; smaller blocks cost a sum of 10^7 float32 values a third more time.
_BLOCK = 4096

#: Levels of the cascade of block sums: a loop counts fewer than 2^63 blocks.
_LEVELS = 64


def _accumulate(e: FunctionEmitter, loop: Any, lb: ir.Value, ub: ir.Value,
                accumulations: list[_Accumulation]) -> None:
    """A reduction's loop with an order of summation of its own, as C written for speed and
    accuracy has it: the elements in blocks of ``_BLOCK``; within a block element ``i``
    goes into partial sum ``i mod K`` (``K`` = ``_PARTIALS``, the others starting at the
    operation's identity, -0.0 for a sum, 1.0 for a product, exact for every value;
    ``Renderer.partials``), and
    the partials are combined in a tree; block sums are combined pairwise (a cascade: a
    binary counter of pending sums, each level the sum of twice the blocks of the one
    below, as a pairwise summation's tree has them); the elements after the last whole
    block are summed like a block, and the total is that sum, the cascade's pending sums
    from the lowest level up, and the accumulator's value first. A sum's rounding error
    so grows with the logarithm of its length, as NumPy's pairwise summation's does,
    not with the length (a float32 sum of 10^7 values was off by 6e-7 relative when each
    partial ran over n/K elements). The loops over partials run K elements at a time,
    which LLVM keeps in vector registers at -O3; without ``reassoc`` flags the IR defines
    every bit of the result, so first-tier code, compiled without the IR pipeline,
    computes the same values as full code (``tiering.py``), on any number of threads."""
    b = e.builder
    n = b.sub(ub, lb)
    n = b.select(b.icmp_signed("<", n, ir.Constant(INDEX, 0)), ir.Constant(INDEX, 0), n)
    types = [llvm_type(a.load.results[0].type) for a in accumulations]
    k = min(e.renderer.partials[64 if isinstance(t, ir.DoubleType) else 32] for t in types)
    static = isinstance(lb, ir.Constant) and isinstance(ub, ir.Constant)
    if static:
        k = min(k, _fewer_partials(ub.constant - lb.constant))
    partials, levels, methods, identities = [], [], [], []
    entry = e.function.entry_basic_block
    for a, ty in zip(accumulations, types):
        current = b.block  # the partials live in the entry block, so LLVM keeps them in registers
        b.position_at_start(entry)
        partial = b.alloca(ty, size=ir.Constant(INDEX, k))
        partial.align = 64
        level = b.alloca(ty, size=ir.Constant(INDEX, _LEVELS))
        b.position_at_end(current)
        partials.append(partial)
        levels.append(level)
        methods.append("fmul" if a.combine.name == "arith.mulf" else "fadd")
        identities.append(ir.Constant(ty, 1.0 if a.combine.name == "arith.mulf" else -0.0))
    body = list(loop.body.block.ops)[:-1]  # its scf.yield aside

    def element(first: ir.Value, j: ir.Value) -> None:
        e.values[loop.body.block.args[0]] = b.add(b.add(lb, first), j)
        for a, ty, partial in zip(accumulations, types, partials):
            slot = b.gep(partial, [j], source_etype=ty)
            e.slots[a.load] = e.slots[a.store] = slot
        e.emit_ops(body)

    def reset() -> None:
        for ty, partial, identity in zip(types, partials, identities):
            for j in range(k):
                b.store(identity, b.gep(partial, [ir.Constant(INDEX, j)], source_etype=ty))

    def tree(ty: ir.Type, partial: ir.Value, method: str) -> ir.Value:
        values = [b.load(b.gep(partial, [ir.Constant(INDEX, j)], source_etype=ty), typ=ty) for j in range(k)]
        while len(values) > 1:
            half = len(values) // 2
            values = [getattr(b, method)(x, y) for x, y in zip(values[:half], values[half:])]
        return values[0]

    def chunks(start: ir.Value, stop: ir.Value) -> None:
        """Elements ``start`` to ``stop`` (relative to ``lb``) into the partials: whole
        groups of K, then one at a time."""
        whole = b.add(start, b.and_(b.sub(stop, start), ir.Constant(INDEX, ~(k - 1))))
        _counted(e, start, whole, ir.Constant(INDEX, k),
                 lambda first: _counted(e, ir.Constant(INDEX, 0), ir.Constant(INDEX, k), ir.Constant(INDEX, 1),
                                        lambda j: element(first, j)))
        _counted(e, ir.Constant(INDEX, 0), b.sub(stop, whole), ir.Constant(INDEX, 1), lambda j: element(whole, j))

    blocks = b.udiv(n, ir.Constant(INDEX, _BLOCK))
    if not static or ub.constant - lb.constant >= _BLOCK:
        def block(index: ir.Value) -> None:
            reset()
            start = b.mul(index, ir.Constant(INDEX, _BLOCK))
            _counted(e, start, b.add(start, ir.Constant(INDEX, _BLOCK)), ir.Constant(INDEX, k),
                     lambda first: _counted(e, ir.Constant(INDEX, 0), ir.Constant(INDEX, k), ir.Constant(INDEX, 1),
                                            lambda j: element(first, j)))
            for ty, partial, level, method in zip(types, partials, levels, methods):
                _carry(e, level, ty, method, tree(ty, partial, method), index)
        _counted(e, ir.Constant(INDEX, 0), blocks, ir.Constant(INDEX, 1), block)
    reset()
    chunks(b.mul(blocks, ir.Constant(INDEX, _BLOCK)), n)
    for a, ty, partial, level, method in zip(accumulations, types, partials, levels, methods):
        total = _cascade_total(e, level, ty, method, tree(ty, partial, method), blocks)
        address = e.address(a.load.memref, list(a.load.indices))[0]
        b.store(getattr(b, method)(b.load(address, typ=ty), total), address)
        del e.slots[a.load], e.slots[a.store]


def _carry(e: FunctionEmitter, level: ir.Value, ty: ir.Type, method: str, value: ir.Value, count: ir.Value) -> None:
    """Push the sum of block number ``count`` onto the cascade ``level``: while bit ``j``
    of ``count`` is set, level ``j`` holds a pending sum of as many blocks, which is
    combined with (first) the carried value and cleared; the carry then rests at the
    first clear bit."""
    b = e.builder
    pre = b.block
    header, combine, done = (e.function.append_basic_block(f"cascade.{part}") for part in ("header", "combine", "done"))
    b.branch(header)
    b.position_at_end(header)
    j = b.phi(INDEX)
    carried = b.phi(ty)
    j.add_incoming(ir.Constant(INDEX, 0), pre)
    carried.add_incoming(value, pre)
    bit = b.and_(b.lshr(count, j), ir.Constant(INDEX, 1))
    b.cbranch(b.icmp_unsigned("!=", bit, ir.Constant(INDEX, 0)), combine, done)
    b.position_at_end(combine)
    pending = b.load(b.gep(level, [j], source_etype=ty), typ=ty)
    j.add_incoming(b.add(j, ir.Constant(INDEX, 1)), combine)
    carried.add_incoming(getattr(b, method)(pending, carried), combine)
    b.branch(header)
    b.position_at_end(done)
    b.store(carried, b.gep(level, [j], source_etype=ty))


def _cascade_total(e: FunctionEmitter, level: ir.Value, ty: ir.Type, method: str, tail: ir.Value,
                   count: ir.Value) -> ir.Value:
    """The sum of the ``count`` blocks pushed onto the cascade and of ``tail`` (the sum of
    the elements after them): ``tail``, then each pending level from the lowest up, each
    combined first."""
    b = e.builder
    pre = b.block
    header, step, done = (e.function.append_basic_block(f"cascade.{part}") for part in ("total", "add", "end"))
    b.branch(header)
    b.position_at_end(header)
    j = b.phi(INDEX)
    total = b.phi(ty)
    j.add_incoming(ir.Constant(INDEX, 0), pre)
    total.add_incoming(tail, pre)
    rest = b.lshr(count, j)  # the count is below 2^63: it runs out before j reaches 64
    b.cbranch(b.icmp_unsigned("!=", rest, ir.Constant(INDEX, 0)), step, done)
    b.position_at_end(step)
    pending_here = b.icmp_unsigned("!=", b.and_(rest, ir.Constant(INDEX, 1)), ir.Constant(INDEX, 0))
    add, join = (e.function.append_basic_block(f"cascade.{part}") for part in ("pending", "next"))
    b.cbranch(pending_here, add, join)
    b.position_at_end(add)
    combined = getattr(b, method)(b.load(b.gep(level, [j], source_etype=ty), typ=ty), total)
    b.branch(join)
    b.position_at_end(join)
    value = b.phi(ty)
    value.add_incoming(total, step)
    value.add_incoming(combined, add)
    j.add_incoming(b.add(j, ir.Constant(INDEX, 1)), join)
    total.add_incoming(value, join)
    b.branch(header)
    b.position_at_end(done)
    return total


def _fewer_partials(n: int) -> int:
    """The partials a reduction of a static length ``n`` needs: the power of two at or
    above it. The sums are the same bits as with more: the partials past ``n`` hold the
    identity, and the tree's passes that add them (``x + -0.0``, ``x * 1.0``) change no
    value, so a reduction of 3 elements combines 4 partials, not 32 (k-means' sums over
    two coordinates were mostly filling and combining partials)."""
    return 1 << max(n - 1, 0).bit_length()


def _counted(e: FunctionEmitter, start: ir.Value, stop: ir.Value, step: ir.Value,
             body: Callable[[ir.Value], None]) -> None:
    """A loop of ``i`` from ``start`` below ``stop`` by ``step``; ``body(i)`` emits into it."""
    b = e.builder
    pre = b.block
    header, inner, exit_ = (e.function.append_basic_block(f"partials.{part}") for part in ("header", "body", "exit"))
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(INDEX)
    i.add_incoming(start, pre)
    b.cbranch(b.icmp_signed("<", i, stop), inner, exit_)
    b.position_at_end(inner)
    body(i)
    i.add_incoming(b.add(i, step, flags=("nsw",)), b.block)
    b.branch(header)
    b.position_at_end(exit_)


@rule("scf.yield")
def _yield(e, op):
    successor = e.successors.get(op.parent_block())
    if successor is not None:  # the end of an scf.if branch or of an scf.while body
        e.builder.branch(successor)
        return
    iv, step, header, carried = e.loop_stack[-1]
    b = e.builder
    iv.add_incoming(b.add(iv, step, flags=("nsw",)), b.block)
    for phi, value in zip(carried, op.operands):
        phi.add_incoming(e.v(value), b.block)
    b.branch(header)


@rule("scf.if")
def _if(e, op):
    """Branches without results (values flow through memory)."""
    assert not op.results, "scf.if with results is not produced by plaidarray"
    b = e.builder
    then_, else_, join = (e.function.append_basic_block(n) for n in ("if.then", "if.else", "if.join"))
    b.cbranch(e.v(op.cond), then_, else_)
    for region, block in ((op.true_region, then_), (op.false_region, else_)):
        b.position_at_end(block)
        if region.blocks:
            e.successors[region.block] = join
            e.emit_block(region.block)
        else:
            b.branch(join)
    b.position_at_end(join)


@rule("scf.while")
def _while(e, op):
    """A loop whose state lives in memory: the before region ends in scf.condition, the
    after region (the body) in scf.yield back to the condition."""
    assert not op.arguments and not op.results, "scf.while with carried values is not produced by plaidarray"
    b = e.builder
    test, body, exit_ = (e.function.append_basic_block(n) for n in ("while.cond", "while.body", "while.exit"))
    e.successors[op.before_region.block] = (body, exit_)
    e.successors[op.after_region.block] = test
    b.branch(test)
    b.position_at_end(test)
    e.emit_block(op.before_region.block)
    b.position_at_end(body)
    e.emit_block(op.after_region.block)
    b.position_at_end(exit_)


@rule("scf.condition")
def _condition(e, op):
    body, exit_ = e.successors[op.parent_block()]
    e.builder.cbranch(e.v(op.condition), body, exit_)


@rule("func.return")
def _return(e, op):
    e.builder.ret_void()


# --- complex ---------------------------------------------------------------------------

def _make_complex(e, ty, re, im):
    z = e.builder.insert_value(ir.Constant(ty, None), re, 0)
    return e.builder.insert_value(z, im, 1)


def _parts(e, z):
    return e.builder.extract_value(z, 0), e.builder.extract_value(z, 1)


@rule("complex.constant")
def _complex_constant(e, op):
    ty = llvm_type(op.results[0].type)
    re, im = (ir.Constant(ty.elements[0], v.value.data) for v in op.value.data)
    return ir.Constant(ty, [re, im])


@rule("complex.create")
def _complex_create(e, op):
    return _make_complex(e, llvm_type(op.results[0].type), e.v(op.operands[0]), e.v(op.operands[1]))


@rule("complex.re", "complex.im")
def _complex_part(e, op):
    return e.builder.extract_value(e.v(op.operands[0]), 0 if op.name == "complex.re" else 1)


def _componentwise(method: str) -> Rule:
    def emit(e, op):
        (a, b), (c, d) = (_parts(e, e.v(o)) for o in op.operands)
        fn = getattr(e.builder, method)
        return _make_complex(e, e.v(op.operands[0]).type, fn(a, c), fn(b, d))
    return emit


_RULES["complex.add"] = _componentwise("fadd")
_RULES["complex.sub"] = _componentwise("fsub")


@rule("complex.neg", "complex.conj")
def _complex_negate(e, op):
    z = e.v(op.operands[0])
    re, im = _parts(e, z)
    if op.name == "complex.neg":
        re = e.builder.fneg(re)
    return _make_complex(e, z.type, re, e.builder.fneg(im))


@rule("complex.mul")
def _complex_mul(e, op):
    (a, b), (c, d) = (_parts(e, e.v(o)) for o in op.operands)
    bl = e.builder
    return _make_complex(e, e.v(op.operands[0]).type, bl.fsub(bl.fmul(a, c), bl.fmul(b, d)),
                         bl.fadd(bl.fmul(a, d), bl.fmul(b, c)))


@rule("complex.div")
def _complex_div(e, op):
    """Smith's algorithm, as NumPy divides: scale by the larger part of the divisor."""
    (a, b), (c, d) = (_parts(e, e.v(o)) for o in op.operands)
    bl = e.builder
    ty = a.type
    fabs = lambda x: e.intrinsic(f"llvm.fabs.{_float_suffix(ty)}", ty, [x])
    one = ir.Constant(ty, 1.0)
    c_major = bl.fcmp_ordered(">=", fabs(c), fabs(d))
    # |c| >= |d|: r = d/c, s = 1/(c + d r), (a + b r) s, (b - a r) s
    r1 = bl.fdiv(d, c)
    s1 = bl.fdiv(one, bl.fadd(c, bl.fmul(d, r1)))
    re1, im1 = bl.fmul(bl.fadd(a, bl.fmul(b, r1)), s1), bl.fmul(bl.fsub(b, bl.fmul(a, r1)), s1)
    # both zero: a/|c|, b/|c| (inf or nan, as NumPy)
    zero = bl.and_(bl.fcmp_ordered("==", c, ir.Constant(ty, 0.0)), bl.fcmp_ordered("==", d, ir.Constant(ty, 0.0)))
    re1 = bl.select(zero, bl.fdiv(a, fabs(c)), re1)
    im1 = bl.select(zero, bl.fdiv(b, fabs(c)), im1)
    # |c| < |d|: r = c/d, s = 1/(d + c r), (a r + b) s, (b r - a) s
    r2 = bl.fdiv(c, d)
    s2 = bl.fdiv(one, bl.fadd(d, bl.fmul(c, r2)))
    re2, im2 = bl.fmul(bl.fadd(bl.fmul(a, r2), b), s2), bl.fmul(bl.fsub(bl.fmul(b, r2), a), s2)
    return _make_complex(e, e.v(op.operands[0]).type, bl.select(c_major, re1, re2), bl.select(c_major, im1, im2))


@rule("complex.eq", "complex.neq")
def _complex_compare(e, op):
    (a, b), (c, d) = (_parts(e, e.v(o)) for o in op.operands)
    bl = e.builder
    if op.name == "complex.eq":
        return bl.and_(bl.fcmp_ordered("==", a, c), bl.fcmp_ordered("==", b, d))
    return bl.or_(bl.fcmp_unordered("!=", a, c), bl.fcmp_unordered("!=", b, d))


@rule("complex.abs")
def _complex_abs(e, op):
    re, im = _parts(e, e.v(op.operands[0]))
    name = e.target.math_symbol("hypot", isinstance(re.type, ir.FloatType))
    return call_c(e, name, [re, im], re.type)


def _complex_libm(name: str) -> Rule:
    def emit(e, op):
        args = [e.v(o) for o in op.operands]
        return call_c(e, e.target.math_symbol(name, isinstance(args[0].type.elements[0], ir.FloatType)), args,
                      args[0].type)
    return emit


for _name in ("exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "pow"):
    _RULES[f"complex.{_name}"] = _complex_libm("c" + _name)


def emit_kernels(module: ModuleOp, buffer_dims: Sequence[Sequence[Dim]], target: Target,
                 renderer: Renderer) -> list[KernelSource]:
    """Translate the loop-level ``main`` of ``module`` into one LLVM module per segment,
    for ``target``, entered as ``renderer`` enters kernels
    (``KernelSource``): each top-level loop nest alone, the operations between nests
    together. A kernel runs its chunkable loop (``PARALLEL_LOOP``) over ``[start, stop)``
    (the executable passes the whole range, or chunks of it on several threads), every
    other loop over its whole range; its buffers are ``noalias`` arguments of an internal
    body function, which its entry calls with the pointers read from the table.
    ``buffer_dims`` are the sizes of ``main``'s buffers (all its arguments but the dims
    table of a shape-generic module): the strides of those of run-time sizes are computed
    when the kernel starts."""
    main = next(op for op in module.body.block.ops if op.name == "func.func" and op.sym_name.data == "main")
    block = main.body.block
    constants = {op.results[0]: _constant(None, op) for op in block.ops if op.name == "arith.constant"}
    loads = symbol_values(block)
    kernels = []
    for ops in _segments(block):
        used = _buffers_used(ops, block)
        dims = _symbols_used(ops, [buffer_dims[j] for j in used])
        segment = Segment()
        chunked = ops[0].attributes.get(PARALLEL_LOOP) if len(ops) == 1 else None
        if chunked is not None:
            depth, extent, work = read_dims(chunked)
            segment = Segment(extent, work, cast(int, depth))
        fingerprint = Hashed((target, renderer.name,
                              _fingerprint(ops, block, used, dims, [buffer_dims[j] for j in used])))
        emitted = _EMITTED.get(fingerprint)
        if emitted is None:
            emitted = _emit_kernel(ops, block, used, dims, buffer_dims, constants, loads, segment, target, renderer)
            _EMITTED.put(fingerprint, emitted)
        text, key, imports, lanes, runs = emitted
        largest = max((math.prod(hint(d) for d in buffer_dims[j]) for j in used), default=0)
        kernels.append(KernelSource(text, key, tuple(used), segment, largest, tuple(dims), imports, lanes, runs))
    return kernels


def _emit_kernel(ops: list[Operation], block: Block, used: list[int], dims: list[int],
                 buffer_dims: Sequence[Sequence[Dim]], constants: dict[SSAValue, ir.Value],
                 loads: dict[int, SSAValue], segment: Segment, target: Target,
                 renderer: Renderer) -> tuple[str, str, tuple[str, ...], int, int]:
    """A segment's kernel module: its text (named by its key), key, imports, the threads
    that run each of its iterations (``Renderer.lanes``) and its runs
    (``FunctionEmitter.runs``)."""
    llvm_module = ir.Module(name="kernel")
    body = FunctionEmitter(llvm_module, PLACEHOLDER + ".body", [block.args[j].type for j in used], target,
                           renderer, [PTR, PTR, INDEX, INDEX])
    body.function.linkage = "internal"
    body.imports_table = body.function.args[-3]
    body.values.update(zip([block.args[j] for j in used], body.function.args))
    body.values.update(constants)
    _load_sizes(body, loads, dims, [(block.args[j], buffer_dims[j]) for j in used])
    if segment.extent != 0 or PARALLEL_LOOP in ops[0].attributes:
        body.chunk = (segment.depth, *body.function.args[-2:])
    body.lanes = renderer.lanes(ops, segment)
    body.emit_ops(ops)
    body.builder.ret_void()
    if body.lanes == 1:
        renderer.emit_entry(llvm_module, body.function, len(used))
    else:
        renderer.emit_group_entry(llvm_module, body.function, len(used), body.lanes)
    text = str(llvm_module)
    key = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    return text.replace(PLACEHOLDER, KERNEL_PREFIX + key), key, tuple(body.imports), body.lanes, body.runs


class _EmittedKernels:
    """Kernel texts by their segment's fingerprint, the most recently used up to ``kept``
    kernels and ``budget`` bytes of text: a module holding a segment already emitted (in
    this module or a recent one) is not emitted again, which was a quarter of a compile's
    time (building and printing llvmlite IR). A test suite of a client library
    (scikit-learn's) emits thousands of kernels, half of them seen before: 128 kept missed
    many of those. The byte budget keeps a process that compiles many distinct large
    kernels (a vectorised reduction is ~18 KB of text) from holding megabytes of them."""

    def __init__(self, kept: int, budget: int) -> None:
        self._texts: OrderedDict[Hashable, tuple[str, str, tuple[str, ...], int, int]] = OrderedDict()
        self._kept = kept
        self._budget = budget
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, fingerprint: Hashable) -> tuple[str, str, tuple[str, ...], int, int] | None:
        with self._lock:
            found = self._texts.get(fingerprint)
            if found is not None:
                self._texts.move_to_end(fingerprint)
            return found

    def put(self, fingerprint: Hashable, emitted: tuple[str, str, tuple[str, ...], int, int]) -> None:
        with self._lock:
            previous = self._texts.pop(fingerprint, None)
            if previous is not None:
                self._bytes -= len(previous[0])
            self._texts[fingerprint] = emitted
            self._bytes += len(emitted[0])
            while len(self._texts) > self._kept or (self._bytes > self._budget and len(self._texts) > 1):
                self._bytes -= len(self._texts.popitem(last=False)[1][0])


_EMITTED = _EmittedKernels(1024, 2 << 20)


def _fingerprint(ops: list[Operation], block: Block, used: list[int], dims: list[int],
                 buffer_dims: Sequence[Sequence[Dim]]) -> Hashable:
    """What a segment's kernel text depends on, as a hashable value, computed without
    emitting it: each operation's name, attributes, result types and operands (values
    numbered in order of definition; ``main``'s buffers by their place among the
    segment's; its constants by value; run-time sizes by their place among the
    segment's), nested regions in order; and the buffers' types and sizes (with run-time
    sizes numbered likewise)."""
    local_dims = {k: i for i, k in enumerate(dims)}
    buffer_index: dict[SSAValue, int] = {block.args[j]: i for i, j in enumerate(used)}
    numbers: dict[SSAValue, int] = {}

    def operand(value: SSAValue) -> Hashable:
        if value in buffer_index:
            return ("buffer", buffer_index[value])
        k = symbol_index(value)
        if k is not None:
            return ("size", local_dims[k])
        if value in numbers:
            return numbers[value]
        owner = value.owner
        if isinstance(owner, Operation) and owner.name == "arith.constant":
            return ("constant", owner.attributes.get("value") or owner.properties.get("value"))
        raise ValueError(f"emitter: a segment uses a value defined outside it ({value})")

    def attributes(op: Operation) -> tuple:
        # A chunkable loop's trip count and work are its segment's, not its text's (which
        # its depth alone shapes): loops over other run-time sizes are one kernel.
        return tuple(sorted((name, read_dims(a)[0] if name == PARALLEL_LOOP else a)
                            for name, a in op.attributes.items()))

    def walk(op: Operation) -> tuple:
        # Recursive on the nesting of regions, which is bounded: a loop per dimension of a
        # nest, and the traced program's nesting of cond/while_loop (tests/project/test_recursion.py).
        row = (op.name, tuple(sorted(op.properties.items())), attributes(op),
               tuple(operand(v) for v in op.operands), tuple(r.type for r in op.results))
        for r in op.results:
            numbers[r] = len(numbers)
        regions = []
        for region in op.regions:
            blocks = []
            for inner in region.blocks:
                for arg in inner.args:
                    numbers[arg] = len(numbers)
                blocks.append((tuple(a.type for a in inner.args), tuple(walk(o) for o in inner.ops)))
            regions.append(tuple(blocks))
        return (*row, tuple(regions))

    sizes = tuple(tuple(("size", local_dims[d.index]) if isinstance(d, Sym) else
                        tuple(sorted((m, c) for m, c in d.terms.items())) if isinstance(d, SymExpr) else d
                        for d in dims_) for dims_ in buffer_dims)
    return (tuple(block.args[j].type for j in used), sizes, tuple(walk(op) for op in ops))


def _symbols_used(ops: list[Operation], buffer_dims: Sequence[Sequence[Dim]]) -> list[int]:
    """The run-time sizes a segment needs, in the order it first needs them: its
    buffers' sizes, then the sizes its operations read."""
    found = dict.fromkeys(k for dims in buffer_dims for d in dims for k in sorted(symbols([d])))
    for op in ops:
        for inner in op.walk():
            for value in inner.operands:
                k = symbol_index(value)
                if k is not None:
                    found.setdefault(k)
    return list(found)


def _load_sizes(body: FunctionEmitter, loads: dict[int, SSAValue], dims: Sequence[int],
                buffers: Sequence[tuple[SSAValue, Sequence[Dim]]]) -> None:
    """At the body's entry: the run-time sizes it uses, from its dims table (its
    fourth-to-last argument), and the strides of its buffers of run-time sizes."""
    table = body.function.args[-4]
    b = body.builder
    values = {k: b.load(b.gep(table, [ir.Constant(INDEX, i)], inbounds=True, source_etype=INDEX), typ=INDEX)
              for i, k in enumerate(dims)}
    body.values.update((loads[k], v) for k, v in values.items() if k in loads)
    for buffer, sizes in buffers:
        if all(isinstance(d, int) for d in sizes):
            continue
        strides = [body.size(math.prod(sizes[axis + 1:]), values) for axis in range(len(sizes))]
        body.strides[buffer] = strides


def _buffers_used(ops: list[Operation], block: Block) -> list[int]:
    """The indices of ``main``'s buffers that ``ops`` use, in order."""
    return sorted({v.index for op in ops for inner in op.walk() for v in inner.operands
                   if isinstance(v, BlockArgument) and v.block is block})


def _segments(block: Block) -> list[list[Operation]]:
    """``main``'s operations (constants and the return aside) in segments: each top-level
    loop nest alone, the operations between nests together, and those before a loop
    that does not run in chunks with it (a reduction's initial store and its loop are one
    kernel). Segments that would pass an SSA value from one to another are merged."""
    segments: list[list[Operation]] = []
    has_loop: list[bool] = []
    owner: dict[SSAValue, int] = {}
    for op in block.ops:
        if op.name in ("arith.constant", "func.return") or SYMBOL in op.attributes:
            continue  # constants and run-time sizes: every kernel has its own
        loop = op.name == "scf.for"
        used = {owner[v] for inner in op.walk() for v in inner.operands if v in owner}
        if used:
            first = min(used)
            segments[first:] = [[o for segment in segments[first:] for o in segment]]
            has_loop[first:] = [any(has_loop[first:])]
            owner = {v: min(s, first) for v, s in owner.items()}
        elif not segments or has_loop[-1] or (loop and PARALLEL_LOOP in op.attributes):
            segments.append([])
            has_loop.append(False)
        segments[-1].append(op)
        has_loop[-1] = has_loop[-1] or loop
        owner.update((r, len(segments) - 1) for r in op.results)
    return segments
