"""Elementwise HLO ops, defined as one table.

HLO elementwise ops take operands of identical shape and dtype (broadcasting and
promotion are explicit in the graph, as in XLA). Each row gives the op's name, arity,
result-dtype rule, NumPy reference and scalar lowering per dtype kind
(``f`` float, ``c`` complex, ``i`` signed, ``u`` unsigned, ``b`` bool). Complex
transcendentals call the C library's ``c*`` functions, which implement C99 Annex G,
the special cases the Array API specifies.

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
from typing import cast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import complex as cx
from xdsl.dialects import math as mm
from xdsl.dialects.builtin import ComplexType
from xdsl.ir import SSAValue

from ..ir import Instruction
from ..lowering import Elementwise, ScalarBuilder
from ..opdef import OpDef, register
from ..shape import Shape

BOOL = np.dtype(bool)
#: Elementwise.emit: the op on scalars.
Emit = Callable[[ScalarBuilder, Sequence[SSAValue], Instruction], SSAValue]


def _same_shape(shapes: list[Shape], attrs: dict) -> Shape:
    first = shapes[0]
    for s in shapes[1:]:
        if s is not first and s != first:
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


#: Names of dtype kinds, for messages.
_KIND_NAMES = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "real floating-point",
               "c": "complex floating-point"}


def define(name: str, arity: int, reference, emit: Emit, kinds: str, infer=_same_shape,
           expensive: bool = False) -> None:
    """Register an elementwise op accepting operands whose dtype kind is in ``kinds``;
    ``expensive`` as in :class:`~plaidarray.hlo.lowering.Elementwise`."""
    def checked(shapes: list[Shape], attrs: dict) -> Shape:
        dtype = shapes[0].dtype
        if dtype.kind not in kinds:
            accepted = ", ".join(_KIND_NAMES[k] for k in kinds)
            raise TypeError(f"{name}: operands of dtype {dtype} are not supported (accepted: {accepted})")
        return infer(shapes, attrs)

    register(OpDef(name, checked, _nan_ignore(reference), Elementwise(emit, expensive), arity))


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
    if kind in "fc":
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
    if a.dtype.kind == "c":  # see _complex_power
        return np.where(e == 0, a.dtype.type(1), np.exp(_reference_complex_multiply(e, np.log(a))))
    if a.dtype.kind == "f":
        return np.power(a, e)
    if a.dtype.kind == "u":  # unsigned exponents are never negative
        return np.power(a, e)
    negative = e < 0
    safe = np.where(negative, 0, e).astype(e.dtype)
    regular = np.power(a, safe)
    odd = (e & 1) == 1
    one = np.ones_like(a)
    special = np.where(a == 1, one, np.where(a == -1, np.where(odd, -one, one), 0))
    return np.where(negative, special, regular).astype(a.dtype)


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


def _reference_sign(x):
    if x.dtype.kind == "c":
        magnitude = np.abs(x)
        return np.where(magnitude == 0, 0, x / np.where(magnitude == 0, 1, magnitude))
    if x.dtype.kind == "f":
        return np.where(x > 0, 1, np.where(x < 0, -1, np.where(np.isnan(x), x, 0)))
    return np.sign(x)


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


def _libm(name: str) -> Emit:
    return lambda b, args, inst: b.libm(name, args, inst.shape.dtype)


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


def _reference_tanh(z):
    """tanh as the compiled code defines it (see :func:`_complex_tanh`)."""
    out = np.array(np.tanh(z))  # an array even for 0-d input, where NumPy returns a scalar
    if z.dtype.kind == "c":
        edge = np.isinf(z.real) & np.isfinite(z.imag)
        out.real[edge] = np.copysign(1.0, z.real[edge])
        out.imag[edge] = np.copysign(0.0, z.imag[edge])
    return out


def _reference_expm1(x):
    """expm1 as the compiled code defines it: complex non-finite inputs take
    ``exp(z) - 1`` (C99's special cases, which np.expm1 does not follow) and a zero real
    part is +0 (the Array API's expm1(-0 + 0j) = +0 + 0j)."""
    if x.dtype.kind != "c":
        return np.expm1(x)
    finite = np.isfinite(x.real) & np.isfinite(x.imag)
    out = np.where(finite, np.expm1(x), np.exp(x) - 1)
    out.real += 0.0
    return out


def _complex_plus_one(b, z, dtype):
    """1 + z adding to the real part only: (1 + 0j) + z would turn an imaginary part
    of -0 into +0 and flip the branch of log1p on the negative real axis."""
    part = np.dtype(f"f{dtype.itemsize // 2}")
    re, im = _parts(b, z)
    return b.insert(cx.CreateOp(b.insert(arith.AddfOp(re, b.const(1.0, part))), im, b.type(dtype)))


def _reference_log1p(z):
    """log1p as the compiled code computes it (see :func:`_complex_log1p`); NumPy's
    complex log1p is log(1 + z), which loses every digit for small z."""
    if z.dtype.kind != "c":
        return np.log1p(z)
    x, y = z.real, z.imag
    xp1 = x + 1
    larger, smaller = np.maximum(np.abs(xp1), np.abs(y)), np.minimum(np.abs(xp1), np.abs(y))
    squared = np.where(smaller == larger, 1, (smaller / larger) ** 2)
    accurate = np.empty_like(z)
    accurate.real = np.where(xp1 >= np.abs(y), np.log1p(x), np.log(larger)) + 0.5 * np.log1p(squared)
    accurate.imag = np.arctan2(y, xp1)
    plus_one = z.copy()
    plus_one.real += 1
    return np.where(np.isfinite(x) & np.isfinite(y), accurate, np.log(plus_one))


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


def _complex_power(b, args, inst):
    """z ** w = exp(w log z), the standard's definition for complex special cases, with
    this package's multiplication (:func:`_reference_complex_multiply`), except that any
    number to the power 0 is 1, as for reals (and in NumPy): exp(0 log z) would give NaN
    for a NaN or infinite base. The C library's cpow multiplies with C99's recovery of
    infinities, NumPy's cpow special-cases a zero base: both differ in special cases."""
    dtype = inst.shape.dtype
    part = np.dtype(f"f{dtype.itemsize // 2}")
    z, w = args
    re, im = _parts(b, w)
    zero = [b.insert(arith.CmpfOp(v, b.const(0.0, part), "oeq")) for v in (re, im)]
    general = b.insert(cx.ExpOp(b.insert(cx.MulOp(w, b.insert(cx.LogOp(z))))))
    return b.insert(arith.SelectOp(b.insert(arith.AndIOp(*zero)), b.const(1, dtype), general))


def _reference_complex_multiply(a, b):
    """(ac - bd) + (ad + bc)i with each product rounded, as the compiled code computes it
    (and C without Annex G's recovery of infinities). NumPy's own loops may fuse a product
    into the sum, which changes results at the edge of overflow (an infinite part then
    comes out NaN in one and infinite in the other)."""
    if a.dtype.kind != "c":
        return np.multiply(a, b)
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), np.result_type(a, b))
    out.real, out.imag = ar * br - ai * bi, ar * bi + ai * br  # parts set, not added: 1j * inf is nan + inf j
    return out


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
    import math

    part = np.dtype(f"f{dtype.itemsize // 2}")
    re, im = _parts(b, b.insert(cx.LogOp(z)))
    scale = b.const(1.0 / math.log(base), part)
    return b.insert(cx.CreateOp(b.insert(arith.MulfOp(re, scale)), b.insert(arith.MulfOp(im, scale)), b.type(dtype)))


_FLOAT_UNARY = {
    "exp": (np.exp, mm.ExpOp), "expm1": (_reference_expm1, mm.ExpM1Op), "log": (np.log, mm.LogOp),
    "log1p": (_reference_log1p, mm.Log1pOp), "log2": (np.log2, mm.Log2Op), "log10": (np.log10, mm.Log10Op),
    "sin": (np.sin, mm.SinOp), "cos": (np.cos, mm.CosOp), "tan": (np.tan, mm.TanOp),
    "asin": (np.arcsin, mm.AsinOp), "acos": (np.arccos, mm.AcosOp), "atan": (np.arctan, mm.AtanOp),
    "sinh": (np.sinh, mm.SinhOp), "cosh": (np.cosh, mm.CoshOp), "tanh": (_reference_tanh, mm.TanhOp),
    "asinh": (np.arcsinh, mm.AsinhOp), "acosh": (np.arccosh, mm.AcoshOp), "atanh": (np.arctanh, mm.AtanhOp),
    "sqrt": (np.sqrt, mm.SqrtOp), "floor": (np.floor, mm.FloorOp), "ceil": (np.ceil, mm.CeilOp),
    "round_nearest_even": (np.rint, mm.RoundEvenOp), "trunc": (np.trunc, mm.TruncOp),
}
_COMPLEX_UNARY = {
    "exp": _op(cx.ExpOp), "log": _op(cx.LogOp), "sqrt": _op(cx.SqrtOp), "sin": _op(cx.SinOp),
    "cos": _op(cx.CosOp), "tan": _op(cx.TanOp),
    "tanh": lambda b, args, inst: _complex_tanh(b, args[0], inst.shape.dtype),
    **{name: _libm("c" + name) for name in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")},
    "expm1": lambda b, args, inst: _complex_expm1(b, args[0], inst.shape.dtype),
    "log1p": lambda b, args, inst: _complex_log1p(b, args[0], inst.shape.dtype),
    "log2": lambda b, args, inst: _complex_log_base(b, args[0], inst.shape.dtype, 2.0),
    "log10": lambda b, args, inst: _complex_log_base(b, args[0], inst.shape.dtype, 10.0),
    "round_nearest_even": lambda b, args, inst: _on_parts(b, args[0], inst.shape.dtype, mm.RoundEvenOp),
}
#: The functions of the table that take a few instructions, not a polynomial or a call.
_ROUNDING = {"floor", "ceil", "round_nearest_even", "trunc"}
for _name, (_ref, _cls) in _FLOAT_UNARY.items():
    _complex = _COMPLEX_UNARY.get(_name)
    define(_name, 1, _ref, _by_kind(f=_op(_cls), c=_complex) if _complex else _op(_cls), "fc" if _complex else "f",
           expensive=_name not in _ROUNDING)

define("atan2", 2, np.arctan2, _op(mm.Atan2Op), "f", expensive=True)
define("hypot", 2, np.hypot, lambda b, args, inst: b.libm("hypot", args, inst.shape.dtype), "f", expensive=True)
define("nextafter", 2, np.nextafter, lambda b, args, inst: b.libm("nextafter", args, inst.shape.dtype), "f")
define("copysign", 2, np.copysign, _op(mm.CopySignOp), "f")
def _real_result(shapes: list[Shape], attrs: dict) -> Shape:
    x = _same_shape(shapes, attrs)
    return x.with_dtype(np.dtype(f"f{x.dtype.itemsize // 2}")) if x.dtype.kind == "c" else x


define("abs", 1, np.abs, _by_kind(f=_op(mm.AbsFOp), i=_op(mm.AbsIOp), ub=lambda b, a, i: a[0], c=_op(cx.AbsOp)),
       "biufc", infer=_real_result)
define("negate", 1, np.negative, _by_kind(f=_op(arith.NegfOp), iu=_negate_int, c=_op(cx.NegOp)), "iufc")
define("sign", 1, _reference_sign, _sign, "iufc")
define("not", 1, lambda x: np.logical_not(x) if x.dtype == BOOL else np.invert(x), _not, "biu")
define("is_finite", 1, np.isfinite, _is_finite, "fc", infer=_predicate_result)

define("add", 2, np.add, _by_kind(f=_op(arith.AddfOp), iu=_op(arith.AddiOp), b=_op(arith.OrIOp), c=_op(cx.AddOp)),
       "biufc")
define("subtract", 2, np.subtract, _by_kind(f=_op(arith.SubfOp), iu=_op(arith.SubiOp), c=_op(cx.SubOp)), "iufc")
define("multiply", 2, _reference_complex_multiply,
       _by_kind(f=_op(arith.MulfOp), iu=_op(arith.MuliOp), b=_op(arith.AndIOp), c=_op(cx.MulOp)), "biufc")
define("divide", 2, lambda a, d: _reference_division(a, d, "divide"),
       _by_kind(f=_op(arith.DivfOp), iu=_divide_int, c=_op(cx.DivOp)), "iufc")
define("remainder", 2, lambda a, d: _reference_division(a, d, "remainder"),
       _by_kind(f=lambda b, args, inst: b.libm("fmod", args, inst.shape.dtype), iu=_remainder_int), "iuf",
       expensive=True)
define("power", 2, _reference_power, _by_kind(
    f=_op(mm.PowFOp), i=_op(mm.IPowIOp), c=_complex_power,
    u=lambda b, args, inst: b.runtime(f"ipow_u{inst.shape.dtype.itemsize * 8}", args, inst.shape.dtype)), "iufc",
    expensive=True)
define("maximum", 2, np.maximum,
       _by_kind(f=_op(arith.MaximumfOp), i=_op(arith.MaxSIOp), ub=_op(arith.MaxUIOp)), "biuf")
define("minimum", 2, np.minimum,
       _by_kind(f=_op(arith.MinimumfOp), i=_op(arith.MinSIOp), ub=_op(arith.MinUIOp)), "biuf")
define("and", 2, np.bitwise_and, _op(arith.AndIOp), "biu")
define("or", 2, np.bitwise_or, _op(arith.OrIOp), "biu")
define("xor", 2, np.bitwise_xor, _op(arith.XOrIOp), "biu")
define("shift_left", 2, lambda x, s: _reference_shift(x, s, "left"),
       _shift(arith.ShLIOp, lambda b, x, dt: b.const(0, dt)), "iu")
define("shift_right_arithmetic", 2, lambda x, s: _reference_shift(x, s, "right_arithmetic"),
       _shift(arith.ShRSIOp, _sign_fill), "i")
define("shift_right_logical", 2, lambda x, s: _reference_shift(x, s, "right_logical"),
       _shift(arith.ShRUIOp, lambda b, x, dt: b.const(0, dt)), "iu")


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
    if shapes[0].dtype.kind == "c" and attrs["direction"] not in ("EQ", "NE"):
        raise TypeError("compare: complex numbers are unordered; only EQ and NE apply")
    return _predicate_result(shapes, attrs)


def _compare_emit(b, args, inst):
    direction = inst.attrs["direction"]
    _, fpred, spred, upred = _COMPARE[direction]
    kind = _kind(inst)
    if kind == "c":
        return b.insert((cx.EqualOp if direction == "EQ" else cx.NotEqualOp)(*args))
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
    if x.dtype.kind == "c" and target.kind == "b":
        return (x.real != 0) | (x.imag != 0)
    if x.dtype.kind == "c" and target.kind != "c":
        x = x.real
    if x.dtype.kind == "f" and target.kind in "iu":
        # Saturating, NaN -> 0: the defined version of C's undefined float->int cast.
        # float(max) may round above max, so out-of-range lanes never reach astype.
        info = np.iinfo(target)
        high, low = x >= float(info.max), x <= float(info.min)
        inside = np.where(high | low | np.isnan(x), 0, x).astype(target)
        return np.where(high, info.max, np.where(low, info.min, inside)).astype(target)
    with np.errstate(over="ignore"):  # float64 -> float32 beyond float32's range is inf, by IEEE
        return x.astype(target)


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


register(OpDef("convert", _convert_infer, _convert_reference, Elementwise(_convert_emit), 1))


# --- complex parts -----------------------------------------------------------------------

def _part_infer(shapes, attrs):
    (x,) = shapes
    if x.dtype.kind != "c":
        raise TypeError(f"expected a complex operand, got {x}")
    return x.with_dtype(np.dtype(f"f{x.dtype.itemsize // 2}"))


def _complex_infer(shapes, attrs):
    re = _same_shape(shapes, attrs)
    if re.dtype.kind != "f":
        raise TypeError(f"complex: parts must be real floating-point, got {re}")
    return re.with_dtype(np.dtype(f"c{re.dtype.itemsize * 2}"))


register(OpDef("real", _part_infer, lambda a, attrs, s: np.real(a[0]), Elementwise(_op(cx.ReOp)), 1))
register(OpDef("imag", _part_infer, lambda a, attrs, s: np.imag(a[0]), Elementwise(_op(cx.ImOp)), 1))
register(OpDef("conj", lambda shapes, attrs: _part_infer(shapes, attrs) and shapes[0],
               lambda a, attrs, s: np.conj(a[0]), Elementwise(_op(cx.ConjOp)), 1))
def _complex_evaluate(args, attrs, shape):
    out = np.empty(shape.dims, shape.dtype)
    out.real, out.imag = args  # not re + 1j * im, which turns an infinite im into a NaN re
    return out


def _complex_emit(b: ScalarBuilder, args: Sequence[SSAValue], inst: Instruction) -> SSAValue:
    re, im = args
    return b.insert(cx.CreateOp(re, im, cast(ComplexType, b.type(inst.shape.dtype))))  # a complex dtype's type


register(OpDef("complex", _complex_infer, _complex_evaluate, Elementwise(_complex_emit), 2))
