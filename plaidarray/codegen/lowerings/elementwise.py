"""The target-neutral scalar code of the elementwise ops (``hlo/ops/elementwise.py``
defines them): ``arith``, ``math`` and ``complex`` operations per dtype kind, with the
integer guards that make the ops total (division by zero, shifts out of range) as the
definitions specify. What calls the C library or a runtime routine is a platform's
(``backend/llvm_cpu/lowerings/elementwise.py``); here those dtype kinds have no lowering.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import complex as cx
from xdsl.dialects import math as mm
from xdsl.dialects.builtin import ComplexType
from xdsl.ir import SSAValue

from ...hlo.ir import Instruction
from ...hlo.ops.elementwise import POWER_BY_MULTIPLYING
from ..lowering import Elementwise, ScalarBuilder, register_lowering

#: Elementwise.emit: the op on scalars.
Emit = Callable[[ScalarBuilder, Sequence[SSAValue], Instruction], SSAValue]


def _kind(inst) -> str:
    return inst.operands[0].shape.dtype.kind


def by_kind(otherwise: Emit | None = None, **emitters: Emit) -> Emit:
    """Dispatch on the operand dtype kind; ``fiubc`` keys may be combined (``iu=...``).
    Kinds without an emitter go to ``otherwise``, when given."""
    table = {k: fn for keys, fn in emitters.items() for k in keys}

    def emit(b, args, inst):
        fn = table.get(_kind(inst), otherwise)
        if fn is None:
            raise NotImplementedError(f"{inst.opcode}: no lowering for operands of dtype "
                                      f"{inst.operands[0].shape.dtype} on this platform")
        return fn(b, args, inst)

    return emit


def op(cls, *extra) -> Emit:
    """The emitter inserting ``cls(*operands, *extra)``."""
    return lambda b, args, inst: b.insert(cls(*args, *extra))


def lower(name: str, emit: Emit, expensive: bool = False) -> None:
    """Register ``emit`` as the target-neutral lowering of elementwise op ``name``;
    ``expensive`` as in :class:`~plaidarray.codegen.lowering.Elementwise`."""
    register_lowering(name, Elementwise(emit, expensive))


# --- integer guards shared by the emitters -------------------------------------------

def _is_zero(b, x, dtype):
    return b.insert(arith.CmpiOp(x, b.const(0, dtype), "eq"))


def _int_division(b, a, d, inst, signed_op, unsigned_op, on_minus_one):
    """Divide/remainder with a divisor made safe: 0 -> 1 and (signed) -1 -> 1, then patch
    the patched lanes: x/0 = 0, x%0 = 0, x/-1 = -x (wrapping), x%-1 = 0."""
    dtype = inst.shape.dtype
    zero = _is_zero(b, d, dtype)
    one = b.const(1, dtype)
    if dtype.kind == "u":
        q = b.insert(unsigned_op(a, b.insert(arith.SelectOp(zero, one, d))))
        return b.insert(arith.SelectOp(zero, b.const(0, dtype), q))
    minus_one = b.insert(arith.CmpiOp(d, b.const(-1, dtype), "eq"))
    unsafe = b.insert(arith.OrIOp(zero, minus_one))
    q = b.insert(signed_op(a, b.insert(arith.SelectOp(unsafe, one, d))))
    q = b.insert(arith.SelectOp(minus_one, on_minus_one(b, a, dtype), q))
    return b.insert(arith.SelectOp(zero, b.const(0, dtype), q))


def _divide_int(b, args, inst):
    negate = lambda b, a, dt: b.insert(arith.SubiOp(b.const(0, dt), a))
    return _int_division(b, *args, inst, arith.DivSIOp, arith.DivUIOp, negate)


def _remainder_int(b, args, inst):
    zero = lambda b, a, dt: b.const(0, dt)
    return _int_division(b, *args, inst, arith.RemSIOp, arith.RemUIOp, zero)


def _shift(op_cls, overflow_value):
    def emit(b, args, inst):
        x, s = args
        dtype = inst.shape.dtype
        bits = b.const(dtype.itemsize * 8, dtype)
        # An unsigned compare folds "negative" and ">= width" into one out-of-range test.
        out_of_range = b.insert(arith.CmpiOp(s, bits, "uge"))
        safe = b.insert(arith.SelectOp(out_of_range, b.const(0, dtype), s))
        shifted = b.insert(op_cls(x, safe))
        return b.insert(arith.SelectOp(out_of_range, overflow_value(b, x, dtype), shifted))
    return emit


def _sign_fill(b, x, dtype):
    return b.insert(arith.ShRSIOp(x, b.const(dtype.itemsize * 8 - 1, dtype)))


def _sign(b, args, inst):
    (x,) = args
    dtype = inst.shape.dtype
    if dtype.kind == "c":  # z / |z|, and 0 at 0
        part = np.dtype(f"f{dtype.itemsize // 2}")
        magnitude = b.insert(cx.AbsOp(x))
        is_zero = b.insert(arith.CmpfOp(magnitude, b.const(0.0, part), "oeq"))
        unit = b.insert(cx.DivOp(x, b.insert(cx.CreateOp(magnitude, b.const(0.0, part), b.type(dtype)))))
        return b.insert(arith.SelectOp(is_zero, b.const(0, dtype), unit))
    zero, one, minus = b.const(0, dtype), b.const(1, dtype), b.const(-1, dtype)
    if dtype.kind == "f":  # NaN stays NaN; both zeros give +0
        gt = b.insert(arith.CmpfOp(x, zero, "ogt"))
        lt = b.insert(arith.CmpfOp(x, zero, "olt"))
        nan = b.insert(arith.CmpfOp(x, x, "uno"))
        rest = b.insert(arith.SelectOp(nan, x, zero))
        return b.insert(arith.SelectOp(gt, one, b.insert(arith.SelectOp(lt, minus, rest))))
    if dtype.kind == "u":
        return b.insert(arith.SelectOp(b.insert(arith.CmpiOp(x, zero, "ne")), one, zero))
    gt = b.insert(arith.CmpiOp(x, zero, "sgt"))
    lt = b.insert(arith.CmpiOp(x, zero, "slt"))
    return b.insert(arith.SelectOp(gt, one, b.insert(arith.SelectOp(lt, minus, zero))))


def _negate_int(b, args, inst):
    return b.insert(arith.SubiOp(b.const(0, inst.shape.dtype), args[0]))


def _not(b, args, inst):
    return b.insert(arith.XOrIOp(args[0], b.const(-1 if _kind(inst) != "b" else True, inst.shape.dtype)))


def _is_finite(b, args, inst):
    (x,) = args
    dtype = inst.operands[0].shape.dtype
    if dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        re, im = _parts(b, x)
        finite = [b.insert(arith.CmpfOp(b.insert(mm.AbsFOp(v)), b.const(np.inf, part), "olt")) for v in (re, im)]
        return b.insert(arith.AndIOp(*finite))
    return b.insert(arith.CmpfOp(b.insert(mm.AbsFOp(x)), b.const(np.inf, dtype), "olt"))


def _parts(b, z):
    return b.insert(cx.ReOp(z)), b.insert(cx.ImOp(z))


def _on_parts(b, z, dtype, op_cls):
    re, im = _parts(b, z)
    return b.insert(cx.CreateOp(b.insert(op_cls(re)), b.insert(op_cls(im)), b.type(dtype)))


def _complex_expm1(b, z, dtype):
    """expm1(x+iy) = (expm1(x) cos y - 2 sin^2(y/2)) + i exp(x) sin y: accurate near 0.
    Non-finite inputs take cexp(z) - 1, which carries C99's special cases."""
    part = np.dtype(f"f{dtype.itemsize // 2}")
    x, y = _parts(b, z)
    finite = [b.insert(arith.CmpfOp(b.insert(mm.AbsFOp(v)), b.const(np.inf, part), "olt")) for v in (x, y)]
    shifted = b.insert(cx.SubOp(b.insert(cx.ExpOp(z)), b.const(1, dtype)))
    return b.insert(arith.SelectOp(b.insert(arith.AndIOp(*finite)), _expm1_finite(b, x, y, part, dtype), shifted))


def _complex_tanh(b, z, dtype):
    """ctanh, except at an infinite real part with a finite imaginary part: there the
    standard gives +-1 + i copysign(0, y) (tanh(conj z) = conj(tanh z)), where C99 and
    the C library give the zero the sign of sin 2y."""
    part = np.dtype(f"f{dtype.itemsize // 2}")
    x, y = _parts(b, z)
    inf = b.const(np.inf, part)
    edge = b.insert(arith.AndIOp(b.insert(arith.CmpfOp(b.insert(mm.AbsFOp(x)), inf, "oeq")),
                                 b.insert(arith.CmpfOp(b.insert(mm.AbsFOp(y)), inf, "olt"))))
    limit = b.insert(cx.CreateOp(b.insert(mm.CopySignOp(b.const(1.0, part), x)),
                                 b.insert(mm.CopySignOp(b.const(0.0, part), y)), b.type(dtype)))
    return b.insert(arith.SelectOp(edge, limit, b.insert(cx.TanhOp(z))))


def _complex_plus_one(b, z, dtype):
    """1 + z adding to the real part only: (1 + 0j) + z would turn an imaginary part
    of -0 into +0 and flip the branch of log1p on the negative real axis."""
    part = np.dtype(f"f{dtype.itemsize // 2}")
    re, im = _parts(b, z)
    return b.insert(cx.CreateOp(b.insert(arith.AddfOp(re, b.const(1.0, part))), im, b.type(dtype)))


def _complex_log1p(b, z, dtype):
    """log1p(x+iy) = log|1+z| + i atan2(y, 1+x), with log|1+z| = log(m) + log1p(r^2)/2
    (m, n the larger and smaller of |1+x| and |y|, r = n/m) and log(m) = log1p(x) when
    m is 1+x: no cancellation near 0, where log(1 + z) loses every digit. Non-finite
    inputs take log(1 + z), which carries C99's special cases."""
    part = np.dtype(f"f{dtype.itemsize // 2}")
    x, y = _parts(b, z)
    one = b.const(1.0, part)
    xp1 = b.insert(arith.AddfOp(x, one))
    axp1, ay = b.insert(mm.AbsFOp(xp1)), b.insert(mm.AbsFOp(y))
    larger, smaller = b.insert(arith.MaximumfOp(axp1, ay)), b.insert(arith.MinimumfOp(axp1, ay))
    ratio = b.insert(arith.DivfOp(smaller, larger))
    head = b.insert(arith.SelectOp(b.insert(arith.CmpfOp(xp1, ay, "oge")), b.insert(mm.Log1pOp(x)),
                                   b.insert(mm.LogOp(larger))))
    squared = b.insert(arith.SelectOp(b.insert(arith.CmpfOp(smaller, larger, "oeq")), one,
                                      b.insert(arith.MulfOp(ratio, ratio))))
    tail = b.insert(arith.MulfOp(b.const(0.5, part), b.insert(mm.Log1pOp(squared))))
    re = b.insert(arith.AddfOp(head, tail))
    accurate = b.insert(cx.CreateOp(re, b.insert(mm.Atan2Op(y, xp1)), b.type(dtype)))
    finite = [b.insert(arith.CmpfOp(b.insert(mm.AbsFOp(v)), b.const(np.inf, part), "olt")) for v in (x, y)]
    special = b.insert(cx.LogOp(_complex_plus_one(b, z, dtype)))
    return b.insert(arith.SelectOp(b.insert(arith.AndIOp(*finite)), accurate, special))


#: The bits of an integer exponent that ``power`` multiplies out.
_POWER_BITS = (POWER_BY_MULTIPLYING - 1).bit_length()


def _complex_power(b, args, inst):
    """z ** w = exp(w log z), the standard's definition for complex special cases, with
    this package's multiplication (``_reference_complex_multiply`` in hlo/ops/
    elementwise.py); any number to the power 0 is 1, as for reals (and in NumPy): exp(0 log z)
    would give NaN for a NaN or infinite base. An integer exponent below
    ``POWER_BY_MULTIPLYING`` multiplies as NumPy does (``_power_by_multiplying``). The C
    library's cpow multiplies with C99's recovery of infinities, NumPy's special-cases a
    zero base: both differ in special cases."""
    dtype = inst.shape.dtype
    part = np.dtype(f"f{dtype.itemsize // 2}")
    z, w = args
    re, im = _parts(b, w)
    zero = [b.insert(arith.CmpfOp(v, b.const(0.0, part), "oeq")) for v in (re, im)]
    general = b.insert(cx.ExpOp(b.insert(cx.MulOp(w, b.insert(cx.LogOp(z))))))
    magnitude = b.insert(mm.AbsFOp(re))
    integral = b.insert(arith.AndIOp(zero[1], b.insert(arith.AndIOp(
        b.insert(arith.CmpfOp(b.insert(mm.TruncOp(re)), re, "oeq")),
        b.insert(arith.CmpfOp(magnitude, b.const(float(POWER_BY_MULTIPLYING), part), "olt"))))))
    n = b.insert(arith.FPToSIOp(b.insert(arith.SelectOp(integral, magnitude, b.const(0.0, part))),
                                b.type(np.dtype(np.int32))))
    power = _power_by_multiplying(b, z, n, re, dtype)
    inverse = b.insert(cx.DivOp(b.const(1, dtype), power))
    power = b.insert(arith.SelectOp(b.insert(arith.CmpfOp(re, b.const(0.0, part), "olt")), inverse, power))
    out = b.insert(arith.SelectOp(integral, power, general))
    return b.insert(arith.SelectOp(b.insert(arith.AndIOp(*zero)), b.const(1, dtype), out))


def _power_by_multiplying(b, z, n, exponent, dtype):
    """z ** |n| for an int32 |n| (``n``) below POWER_BY_MULTIPLYING, NumPy's way (its
    ``nc_pow``): z, z z and z (z z) for an ``exponent`` of 1, 2, 3, else binary powering
    from 1 (which differs for infinite parts: (inf + 0j) ** -1 is NaN in NumPy)."""
    int32 = np.dtype(np.int32)
    acc, square = b.const(1, dtype), z
    for bit in range(_POWER_BITS):
        if bit:
            square = b.insert(cx.MulOp(square, square))
        set_ = b.insert(arith.CmpiOp(b.insert(arith.AndIOp(n, b.const(1 << bit, int32))), b.const(0, int32), "ne"))
        acc = b.insert(arith.SelectOp(set_, b.insert(cx.MulOp(acc, square)), acc))
    z2 = b.insert(cx.MulOp(z, z))
    small = {1: z, 2: z2, 3: b.insert(cx.MulOp(z, z2))}
    part = np.dtype(f"f{dtype.itemsize // 2}")
    for k, value in small.items():
        acc = b.insert(arith.SelectOp(b.insert(arith.CmpfOp(exponent, b.const(float(k), part), "oeq")), value, acc))
    return acc


def _expm1_finite(b, x, y, part, dtype):
    half = b.insert(arith.MulfOp(y, b.const(0.5, part)))
    s = b.insert(mm.SinOp(half))
    re = b.insert(arith.SubfOp(b.insert(arith.MulfOp(b.insert(mm.ExpM1Op(x)), b.insert(mm.CosOp(y)))),
                               b.insert(arith.MulfOp(b.const(2.0, part), b.insert(arith.MulfOp(s, s))))))
    re = b.insert(arith.AddfOp(re, b.const(0.0, part)))  # -0 -> +0: expm1(-0 + 0j) is +0 + 0j
    im = b.insert(arith.MulfOp(b.insert(mm.ExpOp(x)), b.insert(mm.SinOp(y))))
    return b.insert(cx.CreateOp(re, im, b.type(dtype)))


def _complex_log_base(b, z, dtype, base):
    """log(z) / log(base), dividing each part by the real constant (a complex division
    would turn an infinite real part into NaNs)."""
    part = np.dtype(f"f{dtype.itemsize // 2}")
    re, im = _parts(b, b.insert(cx.LogOp(z)))
    scale = b.const(1.0 / math.log(base), part)
    return b.insert(cx.CreateOp(b.insert(arith.MulfOp(re, scale)), b.insert(arith.MulfOp(im, scale)), b.type(dtype)))


_FLOAT_UNARY = {
    "exp": mm.ExpOp, "expm1": mm.ExpM1Op, "log": mm.LogOp, "log1p": mm.Log1pOp, "log2": mm.Log2Op,
    "log10": mm.Log10Op, "sin": mm.SinOp, "cos": mm.CosOp, "tan": mm.TanOp, "asin": mm.AsinOp, "acos": mm.AcosOp,
    "atan": mm.AtanOp, "sinh": mm.SinhOp, "cosh": mm.CoshOp, "tanh": mm.TanhOp, "asinh": mm.AsinhOp,
    "acosh": mm.AcoshOp, "atanh": mm.AtanhOp, "sqrt": mm.SqrtOp, "floor": mm.FloorOp, "ceil": mm.CeilOp,
    "round_nearest_even": mm.RoundEvenOp, "trunc": mm.TruncOp,
}
_COMPLEX_UNARY = {
    "exp": op(cx.ExpOp), "log": op(cx.LogOp), "sqrt": op(cx.SqrtOp), "sin": op(cx.SinOp),
    "cos": op(cx.CosOp), "tan": op(cx.TanOp),
    "tanh": lambda b, args, inst: _complex_tanh(b, args[0], inst.shape.dtype),
    "expm1": lambda b, args, inst: _complex_expm1(b, args[0], inst.shape.dtype),
    "log1p": lambda b, args, inst: _complex_log1p(b, args[0], inst.shape.dtype),
    "log2": lambda b, args, inst: _complex_log_base(b, args[0], inst.shape.dtype, 2.0),
    "log10": lambda b, args, inst: _complex_log_base(b, args[0], inst.shape.dtype, 10.0),
    "round_nearest_even": lambda b, args, inst: _on_parts(b, args[0], inst.shape.dtype, mm.RoundEvenOp),
}
#: The functions of the table that take a few instructions, not a polynomial or a call.
_ROUNDING = {"floor", "ceil", "round_nearest_even", "trunc"}
for _name, _cls in _FLOAT_UNARY.items():
    _complex = _COMPLEX_UNARY.get(_name)
    lower(_name, by_kind(f=op(_cls), c=_complex) if _complex else by_kind(f=op(_cls)), expensive=_name not in _ROUNDING)

lower("atan2", op(mm.Atan2Op), expensive=True)
lower("copysign", op(mm.CopySignOp))
lower("abs", by_kind(f=op(mm.AbsFOp), i=op(mm.AbsIOp), ub=lambda b, a, i: a[0], c=op(cx.AbsOp)))
lower("negate", by_kind(f=op(arith.NegfOp), iu=_negate_int, c=op(cx.NegOp)))
lower("sign", _sign)
lower("not", _not)
lower("is_finite", _is_finite)

lower("add", by_kind(f=op(arith.AddfOp), iu=op(arith.AddiOp), b=op(arith.OrIOp), c=op(cx.AddOp)))
lower("subtract", by_kind(f=op(arith.SubfOp), iu=op(arith.SubiOp), c=op(cx.SubOp)))
lower("multiply", by_kind(f=op(arith.MulfOp), iu=op(arith.MuliOp), b=op(arith.AndIOp), c=op(cx.MulOp)))
lower("divide", by_kind(f=op(arith.DivfOp), iu=_divide_int, c=op(cx.DivOp)))
lower("remainder", by_kind(iu=_remainder_int), expensive=True)
def _unsigned_power(b, args, inst):
    """An unsigned ``power`` by the runtime's routine (``backend/llvm/runtime_routines.py``):
    MLIR's ``math.ipowi`` is signed."""
    return b.runtime(f"ipow_u{inst.shape.dtype.itemsize * 8}", args, inst.shape.dtype)


lower("power", by_kind(f=op(mm.PowFOp), i=op(mm.IPowIOp), u=_unsigned_power, c=_complex_power), expensive=True)
lower("maximum", by_kind(f=op(arith.MaximumfOp), i=op(arith.MaxSIOp), ub=op(arith.MaxUIOp)))
lower("minimum", by_kind(f=op(arith.MinimumfOp), i=op(arith.MinSIOp), ub=op(arith.MinUIOp)))
lower("and", op(arith.AndIOp))
lower("or", op(arith.OrIOp))
lower("xor", op(arith.XOrIOp))
lower("shift_left", _shift(arith.ShLIOp, lambda b, x, dt: b.const(0, dt)))
lower("shift_right_arithmetic", _shift(arith.ShRSIOp, _sign_fill))
lower("shift_right_logical", _shift(arith.ShRUIOp, lambda b, x, dt: b.const(0, dt)))


# --- compare, select, convert ----------------------------------------------------------

#: compare's direction -> (float predicate, signed predicate, unsigned predicate).
_PREDICATES = {
    "EQ": ("oeq", "eq", "eq"), "NE": ("une", "ne", "ne"), "LT": ("olt", "slt", "ult"),
    "LE": ("ole", "sle", "ule"), "GT": ("ogt", "sgt", "ugt"), "GE": ("oge", "sge", "uge"),
}


def _compare_emit(b, args, inst):
    direction = inst.attrs["direction"]
    fpred, spred, upred = _PREDICATES[direction]
    kind = _kind(inst)
    if kind == "c":
        return b.insert((cx.EqualOp if direction == "EQ" else cx.NotEqualOp)(*args))
    if kind == "f":
        return b.insert(arith.CmpfOp(*args, fpred))
    return b.insert(arith.CmpiOp(*args, spred if kind == "i" else upred))


lower("compare", _compare_emit)
lower("select", lambda b, args, inst: b.insert(arith.SelectOp(*args)))


def _convert_emit(b, args, inst):
    (x,) = args
    src, dst = inst.operands[0].shape.dtype, inst.shape.dtype
    if src == dst:
        return x
    if src.kind == "c" or dst.kind == "c":
        return _convert_complex(b, x, src, dst)
    return _convert_scalar(b, x, src, dst)


def _convert_complex(b, x, src, dst):
    """Complex conversions through the parts: real -> (x, 0); complex -> real keeps the
    real part; to bool tests both parts."""
    src_part = np.dtype(f"f{src.itemsize // 2}") if src.kind == "c" else src
    dst_part = np.dtype(f"f{dst.itemsize // 2}") if dst.kind == "c" else dst
    if src.kind != "c":
        re = _convert_scalar(b, x, src, dst_part)
        return b.insert(cx.CreateOp(re, b.const(0.0, dst_part), b.type(dst)))
    re, im = _parts(b, x)
    if dst.kind == "b":
        nonzero = [_convert_scalar(b, v, src_part, dst) for v in (re, im)]
        return b.insert(arith.OrIOp(*nonzero))
    re = _convert_scalar(b, re, src_part, dst_part)
    if dst.kind != "c":
        return re
    im = _convert_scalar(b, im, src_part, dst_part)
    return b.insert(cx.CreateOp(re, im, b.type(dst)))


def _convert_scalar(b, x, src, dst):
    if src == dst:
        return x
    ty = b.type(dst)
    if dst.kind == "b":
        zero = b.const(0, src)
        return b.insert(arith.CmpfOp(x, zero, "une") if src.kind == "f" else arith.CmpiOp(x, zero, "ne"))
    if src.kind == "f":
        if dst.kind == "f":
            return b.insert((arith.ExtFOp if dst.itemsize > src.itemsize else arith.TruncFOp)(x, ty))
        return b.insert((arith.FPToSIOp if dst.kind == "i" else arith.FPToUIOp)(x, ty))
    if dst.kind == "f":
        return b.insert((arith.SIToFPOp if src.kind == "i" else arith.UIToFPOp)(x, ty))
    if src.kind == "b":  # i1 -> iN, whatever N (int8 has bool's itemsize but not its width)
        return b.insert(arith.ExtUIOp(x, ty))
    if dst.itemsize == src.itemsize:
        return x
    if dst.itemsize < src.itemsize:
        return b.insert(arith.TruncIOp(x, ty))
    return b.insert((arith.ExtSIOp if src.kind == "i" else arith.ExtUIOp)(x, ty))


lower("convert", _convert_emit)


# --- complex parts -----------------------------------------------------------------------

def _complex_emit(b: ScalarBuilder, args: Sequence[SSAValue], inst: Instruction) -> SSAValue:
    re, im = args
    return b.insert(cx.CreateOp(re, im, cast(ComplexType, b.type(inst.shape.dtype))))  # a complex dtype's type


lower("real", op(cx.ReOp))
lower("imag", op(cx.ImOp))
lower("conj", op(cx.ConjOp))
lower("complex", _complex_emit)
