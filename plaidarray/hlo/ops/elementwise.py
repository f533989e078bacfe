"""Elementwise HLO ops, defined as one table.

HLO elementwise ops take operands of identical shape and dtype (broadcasting and
promotion are explicit in the graph, as in XLA). Each row gives the op's name, arity,
result-dtype rule, NumPy reference and scalar lowering per dtype kind
(``f`` float, ``i`` signed, ``u`` unsigned, ``b`` bool).

Integer ops where LLVM would have undefined behaviour are total here, and the
reference evaluation implements the same definition:

* ``divide``/``remainder`` by zero give 0; ``INT_MIN / -1`` gives ``INT_MIN`` (wraps).
* shifts by a negative amount or by >= the bit width give 0 (or -1 for an arithmetic
  right shift of a negative number), as NumPy does.
* ``power`` with a negative integer exponent gives ``1/base`` truncated toward zero
  (0 unless ``base`` is 1 or -1); NumPy raises instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mm

from ..lowering import Elementwise, ScalarBuilder
from ..opdef import OpDef, register
from ..shape import Shape

BOOL = np.dtype(bool)
Emit = Callable[[ScalarBuilder, Sequence, object], object]


def _same_shape(shapes: list[Shape], attrs: dict) -> Shape:
    first = shapes[0]
    for s in shapes[1:]:
        if s != first:
            raise TypeError(f"elementwise operands differ: {first} vs {s}")
    return first


def _predicate_result(shapes: list[Shape], attrs: dict) -> Shape:
    return _same_shape(shapes, attrs).with_dtype(BOOL)


def _kind(inst) -> str:
    return inst.operands[0].shape.dtype.kind


def _by_kind(**emitters: Emit) -> Emit:
    """Dispatch on the operand dtype kind; ``fiub`` keys may be combined (``iu=...``)."""
    table = {k: fn for keys, fn in emitters.items() for k in keys}

    def emit(b, args, inst):
        return table[_kind(inst)](b, args, inst)

    return emit


def _op(cls, *extra) -> Emit:
    return lambda b, args, inst: b.insert(cls(*args, *extra))


def _nan_ignore(fn):
    def run(args, attrs, shape):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args)).astype(shape.dtype, copy=False)
    return run


def define(name: str, arity: int, reference, emit: Emit, infer=_same_shape) -> None:
    register(OpDef(name, infer, _nan_ignore(reference), Elementwise(emit), arity))


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


def _reference_division(a, d, op):
    kind = a.dtype.kind
    if kind == "f":
        return np.true_divide(a, d) if op == "divide" else np.fmod(a, d)
    zero = d == 0
    minus_one = (d == -1) if kind == "i" else np.zeros_like(zero)
    safe = np.where(zero | minus_one, 1, d).astype(a.dtype)
    if op == "divide":
        q = a // safe
        q = q + ((q * safe != a) & ((a < 0) != (safe < 0))).astype(a.dtype)  # truncate, not floor
        q = np.where(minus_one, (0 - a.astype(np.uint64)).astype(a.dtype) if kind == "i" else q, q)
    else:
        q = np.fmod(a, safe)
        q = np.where(minus_one, 0, q)
    return np.where(zero, 0, q).astype(a.dtype)


def _reference_shift(x, s, direction):
    bits = x.dtype.itemsize * 8
    su = s.astype(f"u{x.dtype.itemsize}")
    ok = su < bits
    safe = np.where(ok, s, 0).astype(x.dtype)
    if direction == "left":
        return np.where(ok, np.left_shift(x, safe), 0).astype(x.dtype)
    overflow = np.where(x < 0, -1, 0) if direction == "right_arithmetic" else 0
    if direction == "right_logical" and x.dtype.kind == "i":
        shifted = np.right_shift(x.view(f"u{x.dtype.itemsize}"), safe.view(f"u{x.dtype.itemsize}")).view(x.dtype)
    else:
        shifted = np.right_shift(x, safe)
    return np.where(ok, shifted, overflow).astype(x.dtype)


def _reference_power(a, e):
    if a.dtype.kind == "f":
        return np.power(a, e)
    signed_e = e.view(f"i{e.dtype.itemsize}") if e.dtype.kind == "u" else e
    negative = signed_e < 0
    safe = np.where(negative, 0, e).astype(e.dtype)
    regular = np.power(a, safe)
    odd = (signed_e & 1) == 1
    one = np.ones_like(a)
    if a.dtype.kind == "i":
        special = np.where(a == 1, one, np.where(a == -1, np.where(odd, -one, one), 0))
    else:
        special = np.where(a == 1, one, 0)
    return np.where(negative, special, regular).astype(a.dtype)


def _sign(b, args, inst):
    (x,) = args
    dtype = inst.shape.dtype
    zero, one, minus = b.const(0, dtype), b.const(1, dtype), b.const(-1, dtype)
    if dtype.kind == "f":
        gt = b.insert(arith.CmpfOp(x, zero, "ogt"))
        lt = b.insert(arith.CmpfOp(x, zero, "olt"))
        return b.insert(arith.SelectOp(gt, one, b.insert(arith.SelectOp(lt, minus, x))))
    if dtype.kind == "u":
        return b.insert(arith.SelectOp(b.insert(arith.CmpiOp(x, zero, "ne")), one, zero))
    gt = b.insert(arith.CmpiOp(x, zero, "sgt"))
    lt = b.insert(arith.CmpiOp(x, zero, "slt"))
    return b.insert(arith.SelectOp(gt, one, b.insert(arith.SelectOp(lt, minus, zero))))


def _reference_sign(x):
    if x.dtype.kind == "f":
        return np.where(x > 0, 1, np.where(x < 0, -1, x))
    return np.sign(x)


def _negate_int(b, args, inst):
    return b.insert(arith.SubiOp(b.const(0, inst.shape.dtype), args[0]))


def _not(b, args, inst):
    return b.insert(arith.XOrIOp(args[0], b.const(-1 if _kind(inst) != "b" else True, inst.shape.dtype)))


def _is_finite(b, args, inst):
    (x,) = args
    absx = b.insert(mm.AbsFOp(x))
    return b.insert(arith.CmpfOp(absx, b.const(np.inf, inst.operands[0].shape.dtype), "olt"))


_FLOAT_UNARY = {
    "exp": (np.exp, mm.ExpOp), "expm1": (np.expm1, mm.ExpM1Op), "log": (np.log, mm.LogOp),
    "log1p": (np.log1p, mm.Log1pOp), "log2": (np.log2, mm.Log2Op), "log10": (np.log10, mm.Log10Op),
    "sin": (np.sin, mm.SinOp), "cos": (np.cos, mm.CosOp), "tan": (np.tan, mm.TanOp),
    "asin": (np.arcsin, mm.AsinOp), "acos": (np.arccos, mm.AcosOp), "atan": (np.arctan, mm.AtanOp),
    "sinh": (np.sinh, mm.SinhOp), "cosh": (np.cosh, mm.CoshOp), "tanh": (np.tanh, mm.TanhOp),
    "asinh": (np.arcsinh, mm.AsinhOp), "acosh": (np.arccosh, mm.AcoshOp), "atanh": (np.arctanh, mm.AtanhOp),
    "sqrt": (np.sqrt, mm.SqrtOp), "floor": (np.floor, mm.FloorOp), "ceil": (np.ceil, mm.CeilOp),
    "round_nearest_even": (np.rint, mm.RoundEvenOp), "trunc": (np.trunc, mm.TruncOp),
}
for _name, (_ref, _cls) in _FLOAT_UNARY.items():
    define(_name, 1, _ref, _op(_cls))

define("atan2", 2, np.arctan2, _op(mm.Atan2Op))
define("hypot", 2, np.hypot, lambda b, args, inst: b.libm("hypot", args, inst.shape.dtype))
define("nextafter", 2, np.nextafter, lambda b, args, inst: b.libm("nextafter", args, inst.shape.dtype))
define("copysign", 2, np.copysign, _op(mm.CopySignOp))
define("abs", 1, np.abs, _by_kind(f=_op(mm.AbsFOp), i=_op(mm.AbsIOp), ub=lambda b, a, i: a[0]))
define("negate", 1, np.negative, _by_kind(f=_op(arith.NegfOp), iu=_negate_int))
define("sign", 1, _reference_sign, _sign)
define("not", 1, lambda x: np.logical_not(x) if x.dtype == BOOL else np.invert(x), _not)
define("is_finite", 1, np.isfinite, _is_finite, infer=_predicate_result)

define("add", 2, np.add, _by_kind(f=_op(arith.AddfOp), iu=_op(arith.AddiOp), b=_op(arith.OrIOp)))
define("subtract", 2, np.subtract, _by_kind(f=_op(arith.SubfOp), iu=_op(arith.SubiOp)))
define("multiply", 2, np.multiply, _by_kind(f=_op(arith.MulfOp), iu=_op(arith.MuliOp), b=_op(arith.AndIOp)))
define("divide", 2, lambda a, d: _reference_division(a, d, "divide"),
       _by_kind(f=_op(arith.DivfOp), iu=_divide_int))
define("remainder", 2, lambda a, d: _reference_division(a, d, "remainder"),
       _by_kind(f=lambda b, args, inst: b.libm("fmod", args, inst.shape.dtype), iu=_remainder_int))
define("power", 2, _reference_power, _by_kind(f=_op(mm.PowFOp), iu=_op(mm.IPowIOp)))
define("maximum", 2, np.maximum,
       _by_kind(f=_op(arith.MaximumfOp), i=_op(arith.MaxSIOp), ub=_op(arith.MaxUIOp)))
define("minimum", 2, np.minimum,
       _by_kind(f=_op(arith.MinimumfOp), i=_op(arith.MinSIOp), ub=_op(arith.MinUIOp)))
define("and", 2, np.bitwise_and, _op(arith.AndIOp))
define("or", 2, np.bitwise_or, _op(arith.OrIOp))
define("xor", 2, np.bitwise_xor, _op(arith.XOrIOp))
define("shift_left", 2, lambda x, s: _reference_shift(x, s, "left"),
       _shift(arith.ShLIOp, lambda b, x, dt: b.const(0, dt)))
define("shift_right_arithmetic", 2, lambda x, s: _reference_shift(x, s, "right_arithmetic"),
       _shift(arith.ShRSIOp, _sign_fill))
define("shift_right_logical", 2, lambda x, s: _reference_shift(x, s, "right_logical"),
       _shift(arith.ShRUIOp, lambda b, x, dt: b.const(0, dt)))


# --- compare, select, convert ----------------------------------------------------------

_COMPARE = {
    # direction: (numpy, float predicate, signed predicate, unsigned predicate)
    "EQ": (np.equal, "oeq", "eq", "eq"), "NE": (np.not_equal, "une", "ne", "ne"),
    "LT": (np.less, "olt", "slt", "ult"), "LE": (np.less_equal, "ole", "sle", "ule"),
    "GT": (np.greater, "ogt", "sgt", "ugt"), "GE": (np.greater_equal, "oge", "sge", "uge"),
}


def _compare_infer(shapes, attrs):
    if attrs["direction"] not in _COMPARE:
        raise ValueError(f"compare: unknown direction {attrs['direction']!r}")
    return _predicate_result(shapes, attrs)


def _compare_emit(b, args, inst):
    _, fpred, spred, upred = _COMPARE[inst.attrs["direction"]]
    kind = _kind(inst)
    if kind == "f":
        return b.insert(arith.CmpfOp(*args, fpred))
    return b.insert(arith.CmpiOp(*args, spred if kind == "i" else upred))


register(OpDef(
    "compare", _compare_infer,
    lambda args, attrs, shape: _COMPARE[attrs["direction"]][0](*args), Elementwise(_compare_emit), 2))


def _select_infer(shapes, attrs):
    pred, on_true, on_false = shapes
    if pred.dtype != BOOL or pred.dims != on_true.dims:
        raise TypeError(f"select: predicate must be pred{list(on_true.dims)}, got {pred}")
    return _same_shape([on_true, on_false], attrs)


register(OpDef(
    "select", _select_infer, lambda args, attrs, shape: np.where(*args),
    Elementwise(lambda b, args, inst: b.insert(arith.SelectOp(*args))), 3))


def _convert_infer(shapes, attrs):
    return shapes[0].with_dtype(attrs["dtype"])


def _convert_reference(args, attrs, shape):
    (x,) = args
    target = shape.dtype
    if x.dtype.kind == "f" and target.kind in "iu":
        # Saturating, NaN -> 0: the defined version of C's undefined float->int cast.
        info = np.iinfo(target)
        with np.errstate(invalid="ignore"):
            x = np.where(np.isnan(x), 0, np.clip(x, info.min, info.max))
        return np.where(x >= float(info.max), info.max, np.where(x <= float(info.min), info.min,
                                                                 np.trunc(x))).astype(target)
    return x.astype(target)


def _convert_emit(b, args, inst):
    (x,) = args
    src, dst = inst.operands[0].shape.dtype, inst.shape.dtype
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


register(OpDef("convert", _convert_infer, _convert_reference, Elementwise(_convert_emit), 1))
