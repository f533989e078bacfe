"""The opcode table: each PTX opcode maps to a builder that compiles one instruction into an
``Op``, a closure over the operands' readers and writers.

An ``Op`` of kind ``simple`` runs for a selection of threads and falls through; the other kinds
(branch, call, ret, exit, trap, barrier, warp) are control the machine carries out. Modifiers a
builder does not know raise SimulatorError: a modifier that changes results must never be
silently dropped. Builders for memory, conversion and warp instructions live in
``memory_instructions.py`` and ``warp_instructions.py`` and register themselves here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import arithmetic as alu
from .context import Context, Selection
from .conversions import convert
from .errors import SimulatorError
from .operands import OperandCompiler
from .ptx import Instruction, Pair, Vector
from .rounding import MODES, adjust, fma, narrow, odd_sum, two_sum
from .scalars import TYPES, ScalarType

#: Modifiers that change nothing a simulator can observe: cache policy, memory-model scope and
#: ordering (every access is sequentially consistent here), uniformity and alignment promises.
IGNORED = {"uni", "aligned", "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "weak", "relaxed", "acquire",
           "release", "acq_rel", "sc", "cta", "gpu", "sys", "cluster", "volatile", "noftz", "L1::evict_last",
           "L1::evict_first", "L1::evict_normal", "L1::no_allocate", "L2::evict_last", "L2::evict_first",
           "L2::64B", "L2::128B", "L2::256B", "L2::cache_hint"}
ROUNDINGS = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"}


@dataclass
class Op:
    """A compiled instruction; ``run`` executes it for a selection of threads."""

    kind: str
    line: int
    text: str
    run: Callable[[Context, Selection], Any] | None = None
    target: int = -1
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Modifiers:
    """An opcode's modifiers sorted by role; ``flags`` holds the rest for the builder to check."""

    types: list[ScalarType]
    rounding: str | None
    flags: set[str]
    vector: int = 1

    def require_only(self, allowed: set[str], ins: Instruction) -> None:
        unknown = self.flags - allowed
        if unknown:
            raise SimulatorError(f"unsupported modifier(s) {sorted(unknown)} in {ins.text!r}")

    @property
    def type(self) -> ScalarType:
        return self.types[-1]


def modifiers(ins: Instruction, skip: int = 1) -> Modifiers:
    types, rounding, flags, vector = [], None, set(), 1
    for mod in ins.opcode[skip:]:
        if mod in TYPES:
            types.append(TYPES[mod])
        elif mod in ROUNDINGS:
            rounding = mod
        elif mod in ("v2", "v4", "v8"):
            vector = int(mod[1:])
        elif mod not in IGNORED:
            flags.add(mod)
    if not types:
        raise SimulatorError(f"no operand type in {ins.text!r}")
    return Modifiers(types, rounding, flags, vector)


Builder = Callable[[Instruction, OperandCompiler], Op]
OPCODES: dict[str, Builder] = {}


def opcode(*names: str) -> Callable[[Builder], Builder]:
    def register(builder: Builder) -> Builder:
        for name in names:
            OPCODES[name] = builder
        return builder
    return register


def elementwise(ins: Instruction, c: OperandCompiler, result: ScalarType, sources: list[ScalarType],
                fn: Callable[..., Any]) -> Op:
    """The common shape ``d = fn(a, b, ...)``: read each source as its type, write ``d``."""
    if len(ins.operands) != len(sources) + 1:
        raise SimulatorError(f"{ins.text!r} needs {len(sources) + 1} operands")
    readers = [c.reader(op, ty) for op, ty in zip(ins.operands[1:], sources)]
    write = c.writer(ins.operands[0], result)

    def run(ctx: Context, sel: Selection) -> None:
        write(ctx, sel, fn(*(read(ctx, sel) for read in readers)))
    return Op("simple", ins.line, ins.text, run)


def _float_wrap(fn: Callable[..., Any], m: Modifiers) -> Callable[..., Any]:
    """Apply ``.ftz`` (f32 inputs and result) and ``.sat`` around a float operation."""
    ftz = "ftz" in m.flags and m.type.size == 4
    sat = "sat" in m.flags

    def wrapped(*args: Any) -> Any:
        if ftz:
            args = tuple(alu.flush_subnormal(a) if np.asarray(a).dtype.kind == "f" else a for a in args)
        out = fn(*args)
        out = alu.flush_subnormal(out) if ftz else out
        return alu.saturate(out) if sat else out
    return wrapped


def _rounded(op: str, mode: str, ty: ScalarType) -> Callable[[Any, Any], Any]:
    """Float add/mul in any rounding mode: NumPy's for ``rn``; otherwise exact in float64 (f16,
    f32) or from TwoSum's error (f64 add), then rounded in the mode."""
    if mode == "rn":
        return (lambda a, b: a + b) if op == "add" else (lambda a, b: a * b)
    if ty.size < 8:
        if op == "add":
            return lambda a, b: narrow(odd_sum(np.asarray(a, np.float64), np.asarray(b, np.float64)), ty.dtype, mode)
        return lambda a, b: narrow(np.asarray(a, np.float64) * np.asarray(b, np.float64), ty.dtype, mode)
    if op == "add":
        def add(a: Any, b: Any) -> Any:
            s, e = two_sum(*np.broadcast_arrays(np.asarray(a), np.asarray(b)))
            e = np.where(np.isinf(s) & np.isfinite(a) & np.isfinite(b), -s, np.where(np.isnan(e), 0, e))
            return adjust(s, np.sign(e), mode)
        return add
    raise SimulatorError(f"mul.{mode}.f64 is not supported")


def _integer_saturating_add(a: Any, b: Any, ty: ScalarType) -> Any:
    low, high = -(1 << (ty.width - 1)), (1 << (ty.width - 1)) - 1
    return np.clip(np.asarray(a).astype(np.int64) + np.asarray(b).astype(np.int64), low, high).astype(ty.dtype)


@opcode("add", "sub")
def _add(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    ty = m.type
    if "cc" in m.flags:
        return _carry_chain(ins, c)
    negate = ins.opcode[0] == "sub"
    if ty.is_float:
        m.require_only({"ftz", "sat"}, ins)
        add = _rounded("add", m.rounding or "rn", ty)
        fn = (lambda a, b: add(a, alu.float_neg(np.asarray(b)))) if negate else add
        return elementwise(ins, c, ty, [ty, ty], _float_wrap(fn, m))
    m.require_only({"sat"} if ty.name == "s32" else set(), ins)
    if "sat" in m.flags:
        return elementwise(ins, c, ty, [ty, ty],
                           lambda a, b: _integer_saturating_add(a, -np.asarray(b).astype(np.int64) if negate else b, ty))
    return elementwise(ins, c, ty, [ty, ty], (lambda a, b: a - b) if negate else (lambda a, b: a + b))


def _integer_product(m: Modifiers, ins: Instruction) -> tuple[ScalarType, Callable[[Any, Any], Any]]:
    ty = m.type
    if "wide" in m.flags:
        wide = TYPES[f"{ty.kind}{2 * ty.width}"]
        return wide, lambda a, b: alu.mul_wide(a, b, ty)
    if "hi" in m.flags:
        return ty, lambda a, b: alu.mul_high(a, b, ty)
    if "lo" in m.flags or ty.kind == "b":
        return ty, lambda a, b: a * b
    raise SimulatorError(f"{ins.text!r}: integer mul needs .lo, .hi or .wide")


@opcode("mul")
def _mul(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    ty = m.type
    if ty.is_float:
        m.require_only({"ftz", "sat"}, ins)
        return elementwise(ins, c, ty, [ty, ty], _float_wrap(_rounded("mul", m.rounding or "rn", ty), m))
    m.require_only({"lo", "hi", "wide"}, ins)
    result, product = _integer_product(m, ins)
    return elementwise(ins, c, result, [ty, ty], product)


@opcode("mad", "fma")
def _mad(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    ty = m.type
    if "cc" in m.flags:
        return _carry_chain(ins, c)
    if ty.is_float:
        m.require_only({"ftz", "sat"}, ins)
        if m.rounding not in MODES:
            raise SimulatorError(f"{ins.text!r}: float fma/mad needs .rn, .rz, .rm or .rp")
        mode = m.rounding
        return elementwise(ins, c, ty, [ty, ty, ty], _float_wrap(lambda a, b, d: fma(a, b, d, mode), m))
    m.require_only({"lo", "hi", "wide"}, ins)
    result, product = _integer_product(m, ins)
    return elementwise(ins, c, result, [ty, ty, result], lambda a, b, d: product(a, b) + d)


@opcode("div", "rem")
def _div(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    ty = m.type
    if ty.is_float:
        if ins.opcode[0] == "rem":
            raise SimulatorError("rem on floats does not exist in PTX")
        m.require_only({"ftz", "approx", "full"}, ins)
        if m.rounding not in (None, "rn"):
            raise SimulatorError(f"{ins.text!r}: directed-rounding division is not supported")
        return elementwise(ins, c, ty, [ty, ty], _float_wrap(lambda a, b: a / b, m))
    m.require_only(set(), ins)
    part = 0 if ins.opcode[0] == "div" else 1
    return elementwise(ins, c, ty, [ty, ty], lambda a, b: alu.divide(a, b, ty)[part])


@opcode("min", "max")
def _min_max(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    ty = m.type
    is_max = ins.opcode[0] == "max"
    if ty.is_float:
        m.require_only({"ftz", "NaN"}, ins)
        nan = "NaN" in m.flags
        return elementwise(ins, c, ty, [ty, ty], _float_wrap(lambda a, b: alu.float_min_max(a, b, is_max, nan), m))
    m.require_only(set(), ins)
    return elementwise(ins, c, ty, [ty, ty], np.maximum if is_max else np.minimum)


_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


@opcode("and", "or", "xor")
def _bitwise(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    m.require_only(set(), ins)
    return elementwise(ins, c, m.type, [m.type, m.type], _BITWISE[ins.opcode[0]])


@opcode("shl", "shr")
def _shift(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    m.require_only(set(), ins)
    ty = m.type
    shift = alu.shift_left if ins.opcode[0] == "shl" else alu.shift_right
    return elementwise(ins, c, ty, [ty, TYPES["u32"]], lambda a, b: shift(a, b, ty))


@opcode("shf")
def _funnel_shift(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    m.require_only({"l", "r", "wrap", "clamp"}, ins)
    left, wrap = "l" in m.flags, "wrap" in m.flags

    def funnel(a: Any, b: Any, n: Any) -> Any:
        n = np.asarray(n).astype(np.uint64)
        n = n & np.uint64(31) if wrap else np.minimum(n, np.uint64(32))
        joined = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
        return ((joined << n) >> np.uint64(32) if left else joined >> n).astype(np.uint32)
    u32 = TYPES["u32"]
    return elementwise(ins, c, u32, [u32, u32, u32], funnel)


def _unary_integer(name: str, ty: ScalarType) -> Callable[[Any], Any]:
    table: dict[str, Callable[[Any], Any]] = {
        "abs": np.abs, "neg": np.negative, "not": np.invert,
        "cnot": lambda a: (np.asarray(a) == 0).astype(ty.dtype),
        "popc": alu.popcount, "clz": lambda a: alu.count_leading_zeros(a, ty),
        "brev": lambda a: alu.reverse_bits(a, ty),
    }
    return table[name]


_UNARY_FLOAT: dict[str, Callable[[Any], Any]] = {
    "abs": alu.float_abs, "neg": alu.float_neg, "sqrt": np.sqrt, "rcp": lambda a: np.ones((), a.dtype) / a,
    "rsqrt": lambda a: np.ones((), a.dtype) / np.sqrt(a), "ex2": np.exp2, "lg2": np.log2, "sin": np.sin,
    "cos": np.cos, "tanh": np.tanh,
}
_APPROXIMATE = {"rsqrt", "ex2", "lg2", "sin", "cos", "tanh"}


@opcode("abs", "neg", "not", "cnot", "popc", "clz", "brev", "sqrt", "rcp", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh")
def _unary(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    ty, name = m.type, ins.opcode[0]
    if ty.is_float:
        if name not in _UNARY_FLOAT:
            raise SimulatorError(f"{name} on floats does not exist in PTX")
        m.require_only({"ftz", "approx", "sat"}, ins)
        if name in _APPROXIMATE and "approx" not in m.flags:
            raise SimulatorError(f"{ins.text!r}: {name} exists only as .approx")
        if name in ("sqrt", "rcp") and "approx" not in m.flags and m.rounding not in (None, "rn"):
            raise SimulatorError(f"{ins.text!r}: directed rounding is not supported")
        return elementwise(ins, c, ty, [ty], _float_wrap(_UNARY_FLOAT[name], m))
    m.require_only(set(), ins)
    result = TYPES["u32"] if name in ("popc", "clz") else ty
    return elementwise(ins, c, result, [ty], _unary_integer(name, ty))


@opcode("copysign")
def _copysign(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    m.require_only(set(), ins)
    return elementwise(ins, c, m.type, [m.type, m.type], alu.copy_sign)


@opcode("testp")
def _testp(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    tests = m.flags & set(alu.TEST_PROPERTIES)
    m.require_only(tests, ins)
    if len(tests) != 1:
        raise SimulatorError(f"{ins.text!r}: testp needs one property")
    return elementwise(ins, c, TYPES["pred"], [m.type], alu.TEST_PROPERTIES[tests.pop()])


@opcode("selp")
def _selp(ins: Instruction, c: OperandCompiler) -> Op:
    ty = modifiers(ins).type
    return elementwise(ins, c, ty, [ty, ty, TYPES["pred"]], lambda a, b, p: np.asarray(np.where(p, a, b), ty.dtype))


@opcode("slct")
def _slct(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    m.require_only({"ftz"}, ins)
    ty, selector = m.types[0], m.types[1]

    def select(a: Any, b: Any, s: Any) -> Any:
        s = alu.flush_subnormal(s) if "ftz" in m.flags else s
        return np.where(np.asarray(s) >= 0, a, b).astype(ty.dtype)
    return elementwise(ins, c, ty, [ty, ty, selector], select)


@opcode("bfe", "bfi", "prmt")
def _bit_fields(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    ty, u32 = m.type, TYPES["u32"]
    if ins.opcode[0] == "bfe":
        m.require_only(set(), ins)
        return elementwise(ins, c, ty, [ty, u32, u32], lambda a, p, n: alu.bit_field_extract(a, p, n, ty))
    if ins.opcode[0] == "bfi":
        m.require_only(set(), ins)
        return elementwise(ins, c, ty, [ty, ty, u32, u32], lambda f, b, p, n: alu.bit_field_insert(f, b, p, n, ty))
    m.require_only(set(), ins)
    return elementwise(ins, c, u32, [u32, u32, u32], alu.permute_bytes)


_BOOL_OPS = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu",
                "num", "nan"}


def _comparison(ins: Instruction, c: OperandCompiler, source: ScalarType, m: Modifiers
                ) -> tuple[str, Callable[[Context, Selection], Any]]:
    """The compare-and-combine shared by ``setp`` and ``set``: returns a reader of the predicate."""
    cmp = [f for f in m.flags if f in _COMPARISONS]
    combine = [f for f in m.flags if f in _BOOL_OPS]
    m.require_only(set(cmp) | set(combine) | {"ftz"}, ins)
    if len(cmp) != 1:
        raise SimulatorError(f"{ins.text!r}: needs one comparison")
    a = c.reader(ins.operands[1], source)
    b = c.reader(ins.operands[2], source)
    ftz = "ftz" in m.flags and source.is_float and source.size == 4
    op = cmp[0]

    def compared(ctx: Context, sel: Selection) -> Any:
        x, y = a(ctx, sel), b(ctx, sel)
        if ftz:
            x, y = alu.flush_subnormal(x), alu.flush_subnormal(y)
        return alu.compare(op, x, y, source)
    if not combine:
        return "", compared
    third = c.reader(ins.operands[3], TYPES["pred"])
    return combine[0], lambda ctx, sel: (compared(ctx, sel), third(ctx, sel))


@opcode("setp")
def _setp(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    boolean, compared = _comparison(ins, c, m.type, m)
    pred = TYPES["pred"]
    dest = ins.operands[0]
    first = c.writer(dest.first if isinstance(dest, Pair) else dest, pred)
    second = c.writer(dest.second, pred) if isinstance(dest, Pair) else None

    def run(ctx: Context, sel: Selection) -> None:
        value = compared(ctx, sel)
        if boolean:
            value, other = value
            combine = _BOOL_OPS[boolean]
            first(ctx, sel, combine(value, other))
            if second:
                second(ctx, sel, combine(~value, other))
            return
        first(ctx, sel, value)
        if second:
            second(ctx, sel, ~value)
    return Op("simple", ins.line, ins.text, run)


@opcode("set")
def _set(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    result, source = m.types[0], m.types[1]
    boolean, compared = _comparison(ins, c, source, m)
    write = c.writer(ins.operands[0], result)
    true = np.asarray(1.0 if result.is_float else -1).astype(result.dtype)

    def run(ctx: Context, sel: Selection) -> None:
        value = compared(ctx, sel)
        if boolean:
            value = _BOOL_OPS[boolean](*value)
        write(ctx, sel, np.where(value, true, np.zeros((), result.dtype)))
    return Op("simple", ins.line, ins.text, run)


@opcode("cvt")
def _cvt(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    m.require_only({"ftz", "sat"}, ins)
    if len(m.types) != 2:
        raise SimulatorError(f"{ins.text!r}: cvt needs a target and a source type")
    target, source = m.types
    if source.is_float and not target.is_float and m.rounding not in ("rni", "rzi", "rmi", "rpi"):
        raise SimulatorError(f"{ins.text!r}: float-to-integer cvt needs an integer rounding modifier")
    narrowing = target.is_float and (not source.is_float or target.size < source.size)
    if narrowing and m.rounding not in MODES:
        raise SimulatorError(f"{ins.text!r}: this cvt needs .rn, .rz, .rm or .rp")
    args = (source, target, m.rounding, "sat" in m.flags, "ftz" in m.flags)
    return elementwise(ins, c, target, [source], lambda a: convert(a, *args))


@opcode("mov")
def _mov(ins: Instruction, c: OperandCompiler) -> Op:
    m = modifiers(ins)
    m.require_only(set(), ins)
    ty = m.type
    dest, source = ins.operands
    if isinstance(dest, Vector) or isinstance(source, Vector):
        return _pack(ins, c, ty, dest, source)
    return elementwise(ins, c, ty, [ty], lambda a: a)


def _pack(ins: Instruction, c: OperandCompiler, ty: ScalarType, dest: Any, source: Any) -> Op:
    """``mov.b64 %rd, {%r1, %r2}`` and its inverse: element 0 is the low part."""
    vector = dest if isinstance(dest, Vector) else source
    part = TYPES[f"b{ty.width // len(vector.items)}"]
    shift = np.uint64(part.width)
    if vector is source:
        readers = [c.reader(item, part) for item in source.items]
        write = c.writer(dest, ty)

        def pack(ctx: Context, sel: Selection) -> None:
            total = np.zeros(ctx.count(sel), np.uint64)
            for k, read in enumerate(readers):
                total |= np.asarray(read(ctx, sel)).astype(np.uint64) << np.uint64(k * part.width)
            write(ctx, sel, total.astype(ty.bits).view(ty.dtype))
        return Op("simple", ins.line, ins.text, pack)
    read = c.reader(source, ty)
    writers = [c.writer(item, part) for item in dest.items]
    mask = np.uint64((1 << part.width) - 1)

    def unpack(ctx: Context, sel: Selection) -> None:
        total = np.asarray(read(ctx, sel)).view(ty.bits).astype(np.uint64)
        for k, write in enumerate(writers):
            write(ctx, sel, ((total >> (shift * np.uint64(k))) & mask).astype(part.bits))
    return Op("simple", ins.line, ins.text, unpack)


CARRY = "%cc"  # the per-thread condition code register's carry flag (0 or 1), in the register file


@opcode("addc", "subc", "madc")
def _carry_chain(ins: Instruction, c: OperandCompiler) -> Op:
    """Extended-precision arithmetic: ``.cc`` writes the carry (borrow for subtraction) out,
    ``addc``/``subc``/``madc`` add it in. Sums are formed exactly in Python-sized integers'
    stead by splitting at the type's width."""
    m = modifiers(ins)
    ty = m.type
    m.require_only({"cc", "lo", "hi"}, ins)
    if ty.is_float or ty.size not in (4, 8):
        raise SimulatorError(f"{ins.text!r}: carry arithmetic needs a 32- or 64-bit integer type")
    name = ins.opcode[0]
    carry_in = name in ("addc", "subc", "madc")
    carry_out = "cc" in m.flags
    base = name.rstrip("c") if carry_in else name
    product = _integer_product(m, ins)[1] if base == "mad" else None
    readers = [c.reader(op, ty) for op in ins.operands[1:]]
    write = c.writer(ins.operands[0], ty)
    bits = ty.bits
    top = np.uint64(ty.width)

    def run(ctx: Context, sel: Selection) -> None:
        values = [np.asarray(read(ctx, sel)).view(bits).astype(np.uint64) for read in readers]
        if product is not None:
            low = np.asarray(product(*(v.astype(bits).view(ty.dtype) for v in values[:2]))).view(bits)
            values = [low.astype(np.uint64), values[2]]
        a, b = np.broadcast_arrays(*values)
        flag = ctx.registers[CARRY][sel].astype(np.uint64) if carry_in else np.uint64(0)
        if ty.size == 4:
            total = a - b - flag if base == "sub" else a + b + flag
            result, out = total & np.uint64(0xFFFFFFFF), (total >> top) & np.uint64(1)
        else:
            first = a - b if base == "sub" else a + b
            result = first - flag if base == "sub" else first + flag
            if base == "sub":
                out = (a < b) | (first < flag)
            else:
                out = (first < a) | (result < first)
            out = out.astype(np.uint64)
        write(ctx, sel, result.astype(bits).view(ty.dtype))
        if carry_out:
            ctx.registers[CARRY][sel] = out.astype(np.uint32)
    return Op("simple", ins.line, ins.text, run)
