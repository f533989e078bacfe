"""Elementwise HLO ops, defined as one table.

HLO elementwise ops take operands of identical shape and dtype (broadcasting and
promotion are explicit in the graph, as in XLA). Each row gives the op's name, arity,
NumPy reference, the dtype kinds it accepts (``f`` float, ``c`` complex, ``i`` signed,
``u`` unsigned, ``b`` bool) and its result-dtype rule; the scalar code of each op is
its lowering (``codegen/lowerings/elementwise.py``, and llvm-cpu's calls to the C
library in ``backend/llvm_cpu/lowerings/elementwise.py``). Complex transcendentals
follow C99 Annex G, the special cases the Array API specifies.

Integer ops where LLVM would have undefined behaviour are total here, and the
lowerings implement the same definition as the reference evaluation:

* ``divide``/``remainder`` by zero give 0; ``INT_MIN / -1`` gives ``INT_MIN`` (wraps).
* shifts by a negative amount or by >= the bit width give 0 (or -1 for an arithmetic
  right shift of a negative number), as NumPy does.
* ``power`` with a negative integer exponent gives ``1/base`` truncated toward zero
  (0 unless ``base`` is 1 or -1); NumPy raises instead.

A real ``power`` whose exponent is 2, 0.5 or -1 is correctly rounded: the square
``base * base``, the square root (with ``pow``'s special cases: +0 for -0, +inf for
-inf) and the reciprocal, the bits of NumPy's ``x ** 2``, ``x ** 0.5`` and ``x ** -1``,
where the C library's ``pow`` (and NumPy's vectorised ``power``) is an ulp off for about
one input in 1500; the lowering computes them so, which also makes them a product, a
square root and a division rather than a call per element (``llvm/emitter.power``).

A complex ``power`` whose exponent is an integer n + 0j with |n| < ``POWER_BY_MULTIPLYING``
multiplies, as NumPy does, where other exponents take exp(w log z).
"""

from __future__ import annotations

import math

import numpy as np

from ..opdef import OpDef, register, same_dims
from ..shape import Shape

BOOL = np.dtype(bool)
#: A complex power whose exponent is an integer n + 0j with |n| below this is computed by
#: multiplying, as NumPy computes it: exp(n log z) rounds (``(3j) ** 2`` would have an
#: imaginary part of 1e-15, ``(3j) ** 1`` a real one), and clients count on exact results
#: (SciPy's filter designs square purely imaginary zeros and test for real coefficients).
POWER_BY_MULTIPLYING = 100


def _same_shape(shapes: list[Shape], attrs: dict) -> Shape:
    first = shapes[0]
    for s in shapes[1:]:
        if s is not first and s != first:
            raise TypeError(f"elementwise operands differ: {first} vs {s}")
    return first


def _predicate_result(shapes: list[Shape], attrs: dict) -> Shape:
    return _same_shape(shapes, attrs).with_dtype(BOOL)


def _nan_ignore(fn, quiet_kinds: str = ""):
    """``fn``'s value with NumPy's floating-point warnings off (the compiled code gives
    IEEE's values silently), except for operands of a kind in ``quiet_kinds``, on which
    ``fn`` never warns: ``np.errstate`` is ~0.9 us, half a scalar read's evaluation
    (``trace/scalars.py``: ``counts[k] += 1``)."""
    def run(args, attrs, shape):
        if args[0].dtype.kind in quiet_kinds:
            return np.asarray(fn(*args)).astype(shape.dtype, copy=False)
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args)).astype(shape.dtype, copy=False)
    return run


#: Names of dtype kinds, for messages.
_KIND_NAMES = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "real floating-point",
               "c": "complex floating-point"}


def define(name: str, arity: int, reference, kinds: str, infer=_same_shape, exact_kinds: str = "",
           quiet_kinds: str = "") -> None:
    """Register an elementwise op accepting operands whose dtype kind is in ``kinds``,
    computing ``reference`` (NumPy, on arrays) and typed by ``infer`` (by default: the
    operands' shape and dtype); ``exact_kinds``: ``OpDef.exact_kinds``; ``quiet_kinds``:
    the kinds on which ``reference`` never warns (integers wrap silently), evaluated
    without ``np.errstate``."""
    def checked(shapes: list[Shape], attrs: dict) -> Shape:
        dtype = shapes[0].dtype
        if dtype.kind not in kinds:
            accepted = ", ".join(_KIND_NAMES[k] for k in kinds)
            raise TypeError(f"{name}: operands of dtype {dtype} are not supported (accepted: {accepted})")
        return infer(shapes, attrs)

    register(OpDef(name, checked, _nan_ignore(reference, quiet_kinds), arity, dim_ties=same_dims, elementwise=True,
                   exact_kinds=exact_kinds))


#: ``log(2)``, rounded to each dtype where ``logaddexp`` adds it.
LOG_2 = math.log(2.0)


def _reference_logaddexp(a, b):
    """``log(exp(a) + exp(b))`` by the steps its lowering takes (``codegen/lowerings/
    log_add_exp.py``): the larger operand plus ``log1p(exp(-|a - b|))``, and ``a + log(2)``
    where the operands are equal (both infinite of one sign: their difference is NaN)."""
    general = np.maximum(a, b) + np.log1p(np.exp(np.negative(np.abs(a - b))))
    return np.where(a == b, a + np.asarray(LOG_2, a.dtype), general)


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


def _reference_floored(a, d, op):
    """``floor_divide`` and ``floor_remainder``: Python's and NumPy's floored division.
    Integers: the truncating ``divide`` and ``remainder`` (their divisors 0 and -1 defined
    as there), the quotient lowered by one and the divisor added to the remainder where
    the remainder is not 0 and its sign is not the divisor's. Floats: NumPy's
    ``npy_divmod`` step by step from ``fmod``, so that the bits are NumPy's; but where an
    operand is infinite or the divisor 0 the quotient is ``floor(a / d)`` (the standard's
    special cases: inf // 2 is inf, 1 // -inf is -0, where the steps give NaN), and a
    remainder of 0 takes the divisor's sign."""
    if a.dtype.kind in "iu":
        q, r = _reference_division(a, d, "divide"), _reference_division(a, d, "remainder")
        if a.dtype.kind == "u":
            return q if op == "floor_divide" else r
        fix = (r != 0) & ((r < 0) != (d < 0))
        return (q - fix.astype(a.dtype)) if op == "floor_divide" else np.where(fix, r + d, r).astype(a.dtype)
    mod = np.fmod(a, d)
    fix = (mod != 0) & ((d < 0) != (mod < 0))
    if op == "floor_remainder":
        signed_zero = np.where(mod == 0, np.copysign(a.dtype.type(0), d), np.where(fix, mod + d, mod))
        return np.where(d == 0, mod, signed_zero).astype(a.dtype)
    div = (a - mod) / d
    div = np.where(fix, div - a.dtype.type(1), div)
    floor = np.floor(div)
    floor = np.where(div - floor > a.dtype.type(0.5), floor + a.dtype.type(1), floor)
    quotient = a / d
    floor = np.where(div != 0, floor, np.copysign(a.dtype.type(0), quotient))
    exact = np.isfinite(a) & np.isfinite(d) & (d != 0)
    return np.where(exact, floor, np.floor(quotient)).astype(a.dtype)


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
    if a.dtype.kind == "c":
        return _reference_complex_power(a, e)
    if a.dtype.kind == "f":
        with np.errstate(all="ignore"):
            root = np.where(a == -np.inf, np.inf, np.sqrt(a) + 0.0)
            return np.where(e == 2, a * a, np.where(e == 0.5, root, np.where(e == -1, 1 / a, np.power(a, e))))
    if a.dtype.kind == "u":  # unsigned exponents are never negative
        return np.power(a, e)
    negative = e < 0
    safe = np.where(negative, 0, e).astype(e.dtype)
    regular = np.power(a, safe)
    odd = (e & 1) == 1
    one = np.ones_like(a)
    special = np.where(a == 1, one, np.where(a == -1, np.where(odd, -one, one), 0))
    return np.where(negative, special, regular).astype(a.dtype)


def _reference_sign(x):
    if x.dtype.kind == "c":
        magnitude = np.abs(x)
        return np.where(magnitude == 0, 0, x / np.where(magnitude == 0, 1, magnitude))
    if x.dtype.kind == "f":
        return np.where(x > 0, 1, np.where(x < 0, -1, np.where(np.isnan(x), x, 0)))
    return np.sign(x)


def _reference_tanh(z):
    """tanh as the compiled code defines it (see ``_complex_tanh``, codegen/lowerings/elementwise.py)."""
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


def _reference_log1p(z):
    """log1p as the compiled code computes it (see ``_complex_log1p``, codegen/lowerings/elementwise.py); NumPy's
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


def _reference_complex_power(z, w):
    """1 for w = 0; NumPy's multiplications for an integer w below POWER_BY_MULTIPLYING;
    else exp(w log z): see the lowering's ``_complex_power``."""
    multiply = _reference_complex_multiply
    general = np.exp(multiply(w, np.log(z)))
    magnitude = np.abs(w.real)
    integral = (w.imag == 0) & (np.trunc(w.real) == w.real) & (magnitude < POWER_BY_MULTIPLYING)
    n = np.where(integral, magnitude, 0).astype(np.int32)
    acc, square = np.ones_like(z), z
    for bit in range((POWER_BY_MULTIPLYING - 1).bit_length()):
        if bit:
            square = multiply(square, square)
        acc = np.where(n & (1 << bit) != 0, multiply(acc, square), acc)
    z2 = multiply(z, z)
    for k, value in {1: z, 2: z2, 3: multiply(z, z2)}.items():
        acc = np.where(w.real == k, value, acc)
    power = np.where(w.real < 0, np.true_divide(1, acc), acc)
    return np.where(w == 0, z.dtype.type(1), np.where(integral, power, general)).astype(z.dtype)


_UNARY = {
    "exp": np.exp, "expm1": _reference_expm1, "log": np.log, "log1p": _reference_log1p, "log2": np.log2,
    "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": _reference_tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt, "floor": np.floor, "ceil": np.ceil,
    "round_nearest_even": np.rint, "trunc": np.trunc,
}
#: The functions of the table defined on real numbers only.
_REAL_ONLY = {"floor", "ceil", "trunc"}
for _name, _ref in _UNARY.items():
    define(_name, 1, _ref, "f" if _name in _REAL_ONLY else "fc")

define("atan2", 2, np.arctan2, "f")
define("hypot", 2, np.hypot, "f")
define("nextafter", 2, np.nextafter, "f")
define("copysign", 2, np.copysign, "f")


def _real_result(shapes: list[Shape], attrs: dict) -> Shape:
    x = _same_shape(shapes, attrs)
    return x.with_dtype(np.dtype(f"f{x.dtype.itemsize // 2}")) if x.dtype.kind == "c" else x


define("abs", 1, np.abs, "biufc", infer=_real_result, quiet_kinds="biu")
define("negate", 1, np.negative, "iufc", exact_kinds="iuf", quiet_kinds="iu")
define("sign", 1, _reference_sign, "iufc")
define("not", 1, lambda x: np.logical_not(x) if x.dtype == BOOL else np.invert(x), "biu", exact_kinds="biu",
       quiet_kinds="biu")
define("is_finite", 1, np.isfinite, "fc", infer=_predicate_result)
# ``signbit`` as one op: as the comparison of ``copysign(1, x)`` with 0 it was four nodes
# (two of them constants) and a first-use recording in Python at each new length.
define("signbit", 1, np.signbit, "f", infer=_predicate_result, exact_kinds="f")

define("add", 2, np.add, "biufc", exact_kinds="iuf", quiet_kinds="biu")
define("subtract", 2, np.subtract, "iufc", exact_kinds="iuf", quiet_kinds="iu")
define("multiply", 2, _reference_complex_multiply, "biufc", exact_kinds="iuf", quiet_kinds="biu")
define("divide", 2, lambda a, d: _reference_division(a, d, "divide"), "iufc", exact_kinds="f")
define("remainder", 2, lambda a, d: _reference_division(a, d, "remainder"), "iuf")
# Floored division (``//``, ``%``) as one op each: as ``divide``, ``remainder`` and the
# sign fix-ups' compares and selects it was 8-10 ops on integers and 13-25 on floats, each
# an op kernel of the baseline tier's and a node of every graph.
define("floor_divide", 2, lambda a, d: _reference_floored(a, d, "floor_divide"), "iuf", quiet_kinds="iu")
define("floor_remainder", 2, lambda a, d: _reference_floored(a, d, "floor_remainder"), "iuf", quiet_kinds="iu")
# ``logaddexp`` as one op: as its larger operand plus ``log1p(exp(-|a - b|))``, with equal
# operands (both infinities too) given ``a + log(2)``, it was ten nodes, each an op
# kernel's first use in the baseline tier, and a log-space recursion (a hidden Markov
# model's forward pass) cut its pending graph every other step.
define("logaddexp", 2, _reference_logaddexp, "f")
define("power", 2, _reference_power, "iufc")
define("maximum", 2, np.maximum, "biuf", quiet_kinds="biu")
define("minimum", 2, np.minimum, "biuf", quiet_kinds="biu")
define("and", 2, np.bitwise_and, "biu", exact_kinds="biu", quiet_kinds="biu")
define("or", 2, np.bitwise_or, "biu", exact_kinds="biu", quiet_kinds="biu")
define("xor", 2, np.bitwise_xor, "biu", exact_kinds="biu", quiet_kinds="biu")
define("shift_left", 2, lambda x, s: _reference_shift(x, s, "left"), "iu")
define("shift_right_arithmetic", 2, lambda x, s: _reference_shift(x, s, "right_arithmetic"), "i")
define("shift_right_logical", 2, lambda x, s: _reference_shift(x, s, "right_logical"), "iu")


# --- compare, select, convert ----------------------------------------------------------

#: The directions of ``compare``, with NumPy's comparisons.
COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
           "GE": np.greater_equal}


def _compare_infer(shapes, attrs):
    if attrs["direction"] not in COMPARE:
        raise ValueError(f"compare: unknown direction {attrs['direction']!r}")
    if shapes[0].dtype.kind == "c" and attrs["direction"] not in ("EQ", "NE"):
        raise TypeError("compare: complex numbers are unordered; only EQ and NE apply")
    return _predicate_result(shapes, attrs)


register(OpDef("compare", _compare_infer, lambda args, attrs, shape: COMPARE[attrs["direction"]](*args), 2,
               dim_ties=same_dims, elementwise=True, exact_kinds="biufc"))


def _select_infer(shapes, attrs):
    pred, on_true, on_false = shapes
    if pred.dtype != BOOL or pred.dims != on_true.dims:
        raise TypeError(f"select: predicate must be pred{list(on_true.dims)}, got {pred}")
    return _same_shape([on_true, on_false], attrs)


register(OpDef("select", _select_infer, lambda args, attrs, shape: np.where(*args), 3, dim_ties=same_dims, elementwise=True,
               exact_kinds="b"))


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


register(OpDef("convert", _convert_infer, _convert_reference, 1, dim_ties=same_dims, elementwise=True))


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


register(OpDef("real", _part_infer, lambda a, attrs, s: np.real(a[0]), 1, dim_ties=same_dims, elementwise=True))
register(OpDef("imag", _part_infer, lambda a, attrs, s: np.imag(a[0]), 1, dim_ties=same_dims, elementwise=True))
register(OpDef("conj", lambda shapes, attrs: _part_infer(shapes, attrs) and shapes[0],
               lambda a, attrs, s: np.conj(a[0]), 1, dim_ties=same_dims, elementwise=True))


def _complex_evaluate(args, attrs, shape):
    out = np.empty(shape.dims, shape.dtype)
    out.real, out.imag = args  # not re + 1j * im, which turns an infinite im into a NaN re
    return out


register(OpDef("complex", _complex_infer, _complex_evaluate, 2, dim_ties=same_dims, elementwise=True))
