"""Vectorisable exp, expm1, log, log1p, tanh, sin and cos for float32 and float64.

LLVM turns ``llvm.exp`` and the C library's ``expm1``... into scalar libm calls, which
keep the loop vectoriser away from any kernel that uses them. These are the same
functions written in LLVM IR as a range reduction and a polynomial (Cody-Waite
reduction; near-minimax coefficients from ``tools/fit_vector_math.py``) in
straight-line code, with selects instead of branches. They are correct over the whole
range: overflow to inf, gradual underflow to denormals and zero, denormal inputs,
signed zeros, infinities and NaN. float32 log1p, tanh, sin and cos run in float64 and
round once; float32 arithmetic would exceed 2 ulps (log1p, tanh) or need a longer
reduction (sin, cos).

sin and cos reduce the argument by pi/2 in double-double arithmetic below
``TRIG_LIMIT``; larger finite arguments need Payne-Hanek reduction, which the C library
does, so for those rare lanes they call it.

Each function is compiled once (:func:`library_object_code`) and loaded once per process
(``math_library.py``): a scalar function and vector variants of one and half a register. A
kernel module only declares them; the scalar declaration names the variants in its
``vector-function-abi-variant`` attribute, so the loop vectoriser calls a variant
where it vectorises a loop, and the remainder loop calls the scalar function. This
costs a call per vector (up to ~15% against inlining the polynomial) and saves tens
of milliseconds of LLVM work in every module that uses the function.

Scalar and vector code execute the same IEEE operations (fused multiply-adds are
explicit ``llvm.fma`` calls), so a result does not depend on whether it came from a
vector body or a remainder loop, and therefore not on the thread count. The accuracy
is measured by ``tests/unit/backend/test_vector_math_accuracy.py`` and recorded in
docs/performance.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from llvmlite import ir

from ..llvm import codegen_worker
from . import math_library
from .targets import host

F32, F64 = ir.FloatType(), ir.DoubleType()

TWO_OVER_PI = float.fromhex("0x1.45f306dc9c883p-1")
LOG2E = float.fromhex("0x1.71547652b82fep+0")
ONE_OVER_PI = float.fromhex("0x1.45f306dc9c883p-2")
#: pi as the sum of two doubles, pi/2 as the sum of three (159 bits).
PI = (float.fromhex("0x1.921fb54442d18p+1"), float.fromhex("0x1.1a62633145c07p-53"))
PIO2 = (float.fromhex("0x1.921fb54442d18p+0"), float.fromhex("0x1.1a62633145c07p-54"),
        float.fromhex("-0x1.f1976b7ed8fbcp-110"))


@dataclass(frozen=True)
class _Format:
    """The arithmetic a kernel runs in, and the constants of its kernels."""

    bits: int
    mantissa: int  # stored mantissa bits
    ln2: tuple[float, float]  # ln 2 = hi + lo, k * hi exact for every exponent k
    sqrt_half_bits: int  # bit pattern of the format's sqrt(1/2)
    exp_range: tuple[float, float]  # exp(lo) rounds to 0, exp(hi) overflows
    expm1_low: float  # expm1(x) rounds to -1 below
    exp_poly: tuple[float, ...]  # e^r = 1 + r + r^2 P(r), |r| <= ln2/2
    log_poly: tuple[float, ...]  # log(1+f) = 2s + s z Q(z), s = f/(2+f), z = s^2
    sin_poly: tuple[float, ...]  # sin r = r + r^3 S(r^2), |r| <= pi/4 (pi/2 if not compensated)
    cos_poly: tuple[float, ...]  # cos r = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4
    #: sin and cos reduce by pi/2 in double-double (float64 accuracy), else by pi in
    #: plain float64 to one polynomial on [-pi/2, pi/2] (float32 accuracy, fewer ops).
    compensated: bool = True

    @property
    def bias(self) -> int:
        return (1 << (self.bits - self.mantissa - 2)) - 1

    @property
    def min_normal(self) -> float:
        return 2.0 ** (1 - self.bias)

    @property
    def tiny(self) -> float:
        """Below this, expm1, log1p, sin and tanh round to x itself."""
        return 2.0 ** -(self.mantissa + 2)


_F32 = _Format(
    32, 23, (float.fromhex("0x1.62e4p-1"), float.fromhex("0x1.7f7d1cp-20")), 0x3F3504F3, (-110.0, 89.0), -18.0,
    exp_poly=(0.5, 0.1666666716337204, 0.04166646674275398, 0.00833331048488617, 0.0013933649752289057,
              0.00019890991097781807),
    log_poly=(0.6666666865348816, 0.4000012278556824, 0.2855081558227539, 0.23330582678318024),
    sin_poly=(), cos_poly=())  # float32 sin and cos run in float64
_F64 = _Format(
    64, 52, (float.fromhex("0x1.62e42feep-1"), float.fromhex("0x1.a39ef35793c76p-33")), 0x3FE6A09E667F3BCD,
    (-750.0, 710.0), -40.0,
    exp_poly=(0.5000000000000001, 0.16666666666666669, 0.04166666666662413, 0.008333333333330062,
              0.0013888888917213717, 0.00019841269863053618, 2.4801521295954376e-05, 2.7557268459997064e-06,
              2.7620088445409746e-07, 2.510038549551032e-08),
    log_poly=(0.666666666666667, 0.39999999999899444, 0.2857142862600327, 0.22222211130259878,
              0.18182889455674947, 0.15331710618210773, 0.14616585424888623),
    sin_poly=(-0.16666666666666666, 0.008333333333330946, -0.0001984126983675497, 2.755731610068303e-06,
              -2.5051131455427946e-08, 1.591810123027412e-10),
    cos_poly=(0.041666666666666664, -0.0013888888888887395, 2.4801587298763433e-05, -2.7557317270560326e-07,
              2.0876146024689747e-09, -1.1382614868556325e-11))
#: float64 arithmetic with polynomials accurate to float32 (the widened float32 functions).
_F32_IN_F64 = replace(
    _F64,
    exp_poly=(0.500000001346581, 0.16666666681623232, 0.041666464925285904, 0.0083333109254809,
              0.0013933649996309251, 0.00019890990824673654),
    log_poly=(0.6666666655445165, 0.40000121876972, 0.2855081659971155, 0.23330581938241893),
    sin_poly=(-0.16666666663878466, 0.008333332768305049, -0.00019841086452506194, 2.753645532390914e-06,
              -2.407999973210464e-08),
    cos_poly=(), compensated=False)

#: sin and cos reduce their argument in float64 below this limit and call the C library
#: above it: k * PIO2[2] (k * PI[1] for float32) is then still far below the smallest
#: |x mod pi/2| of any double (float).
TRIG_LIMIT = 2.0 ** 36


class _Ops:
    """Arithmetic on one float type, scalar or vector (constants are then splats)."""

    def __init__(self, b: ir.IRBuilder, element: ir.Type, lanes: int = 0, fmt: _Format | None = None) -> None:
        self.b, self.element, self.lanes = b, element, lanes
        self.fmt = fmt or (_F32 if element == F32 else _F64)
        int_element = ir.IntType(self.fmt.bits)
        self.ty = ir.VectorType(element, lanes) if lanes else element
        self.int_ty = ir.VectorType(int_element, lanes) if lanes else int_element
        self.suffix = f"v{lanes}f{self.fmt.bits}" if lanes else f"f{self.fmt.bits}"

    def widened(self) -> _Ops:
        """float64 arithmetic to float32 accuracy, on as many lanes."""
        return _Ops(self.b, F64, self.lanes, _F32_IN_F64)

    def c(self, value: float) -> ir.Constant:
        return ir.Constant(self.ty, [value] * self.lanes if self.lanes else value)

    def i(self, value: int) -> ir.Constant:
        return ir.Constant(self.int_ty, [value] * self.lanes if self.lanes else value)

    def intrinsic(self, name: str, *args: ir.Value) -> ir.Value:
        module = self.b.module
        full = f"llvm.{name}.{self.suffix}"
        fn = module.globals.get(full) or ir.Function(module, ir.FunctionType(self.ty, [self.ty] * len(args)), full)
        return self.b.call(fn, args)

    # --- arithmetic -----------------------------------------------------------------
    def add(self, a, b): return self.b.fadd(a, b)
    def sub(self, a, b): return self.b.fsub(a, b)
    def mul(self, a, b): return self.b.fmul(a, b)
    def div(self, a, b): return self.b.fdiv(a, b)
    def neg(self, a): return self.b.fneg(a)
    def fma(self, a, b, c): return self.intrinsic("fma", a, b, c)
    def abs(self, a): return self.intrinsic("fabs", a)
    def rint(self, a): return self.intrinsic("rint", a)
    def copysign(self, a, b): return self.intrinsic("copysign", a, b)

    def poly(self, x, coeffs) -> ir.Value:
        """sum(coeffs[i] * x**i) by Horner's rule with fused multiply-adds."""
        acc = self.c(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.c(c))
        return acc

    # --- comparisons (ordered: false for NaN) and selection ---------------------------
    def lt(self, a, b): return self.b.fcmp_ordered("<", a, b)
    def gt(self, a, b): return self.b.fcmp_ordered(">", a, b)
    def eq(self, a, b): return self.b.fcmp_ordered("==", a, b)
    def ge(self, a, b): return self.b.fcmp_ordered(">=", a, b)
    def isnan(self, a): return self.b.fcmp_unordered("uno", a, a)
    def select(self, cond, a, b): return self.b.select(cond, a, b)

    def clamp(self, x, lo: float, hi: float) -> ir.Value:
        """x limited to [lo, hi]; NaN gives lo (callers restore NaN at the end)."""
        x = self.select(self.gt(x, self.c(lo)), x, self.c(lo))
        return self.select(self.lt(x, self.c(hi)), x, self.c(hi))

    # --- bits -----------------------------------------------------------------------
    def to_int(self, a): return self.b.fptosi(a, self.int_ty)
    def to_float(self, a): return self.b.sitofp(a, self.ty)
    def bits(self, a): return self.b.bitcast(a, self.int_ty)
    def from_bits(self, a): return self.b.bitcast(a, self.ty)

    def pow2(self, k) -> ir.Value:
        """2**k for integer k in the normal exponent range."""
        return self.from_bits(self.b.shl(self.b.add(k, self.i(self.fmt.bias)), self.i(self.fmt.mantissa)))


# --- exp, expm1 ----------------------------------------------------------------------

def _reduce_ln2(o: _Ops, x) -> tuple[ir.Value, ir.Value, ir.Value]:
    """x = n ln2 + r + c with integer n (as a float), |r| <= ln2/2 and c the rounding
    error of r (Cody-Waite: the first step is exact)."""
    hi, lo = o.fmt.ln2
    n = o.rint(o.mul(x, o.c(LOG2E)))
    r_hi = o.fma(n, o.c(-hi), x)
    r = o.fma(n, o.c(-lo), r_hi)
    return n, r, o.fma(n, o.c(-lo), o.sub(r_hi, r))


def _exp(o: _Ops, x) -> ir.Value:
    n, r, _ = _reduce_ln2(o, o.clamp(x, *o.fmt.exp_range))
    p = o.add(o.fma(o.mul(r, r), o.poly(r, o.fmt.exp_poly), r), o.c(1.0))
    # 2**n in two factors, so that results near overflow and denormal results get
    # exactly one rounding (the last product).
    k = o.to_int(n)
    half = o.b.ashr(k, o.i(1))
    y = o.mul(o.mul(p, o.pow2(half)), o.pow2(o.b.sub(k, half)))
    return o.select(o.isnan(x), x, y)


def _expm1(o: _Ops, x) -> ir.Value:
    n, r, c = _reduce_ln2(o, o.clamp(x, o.fmt.expm1_low, o.fmt.exp_range[1]))
    small = o.fma(o.mul(r, r), o.poly(r, o.fmt.exp_poly), c)  # expm1(r + c) - r
    # expm1(x) = 2^n (1 + r + small) - 1 = 2 ((u r + (u - 1/2)) + u small), u = 2^(n-1):
    # the large terms are summed first (u - 1/2 is exact where it matters), and
    # halving keeps 2^n finite at n = max exponent + 1.
    u = o.pow2(o.b.sub(o.to_int(n), o.i(1)))
    y = o.mul(o.fma(u, small, o.fma(u, r, o.sub(u, o.c(0.5)))), o.c(2.0))
    y = o.select(o.lt(o.abs(x), o.c(o.fmt.tiny)), x, y)
    return o.select(o.isnan(x), x, y)


# --- log, log1p ----------------------------------------------------------------------

def _split_exponent(o: _Ops, u) -> tuple[ir.Value, ir.Value]:
    """u = 2^k (1 + f) with sqrt(1/2) <= 1 + f < sqrt(2), for finite u > 0: (k as a
    float, f). Denormals are scaled into the normal range first."""
    fmt = o.fmt
    shift = fmt.mantissa + 2
    denormal = o.lt(u, o.c(fmt.min_normal))
    u = o.select(denormal, o.mul(u, o.c(2.0 ** shift)), u)
    ix = o.b.sub(o.bits(u), o.i(fmt.sqrt_half_bits))
    k = o.b.add(o.b.ashr(ix, o.i(fmt.mantissa)), o.select(denormal, o.i(-shift), o.i(0)))
    m = o.from_bits(o.b.add(o.b.and_(ix, o.i((1 << fmt.mantissa) - 1)), o.i(fmt.sqrt_half_bits)))
    return o.to_float(k), o.sub(m, o.c(1.0))


def _log_kernel(o: _Ops, k, f, c) -> ir.Value:
    """k ln2 + log(1 + f) + c, arranged as in fdlibm's log for one final rounding."""
    hi, lo = o.fmt.ln2
    s = o.div(f, o.add(o.c(2.0), f))
    z = o.mul(s, s)
    r = o.mul(z, o.poly(z, o.fmt.log_poly))
    hfsq = o.mul(o.c(0.5), o.mul(f, f))
    t = o.add(o.mul(s, o.add(hfsq, r)), o.fma(k, o.c(lo), c))
    return o.sub(o.mul(k, o.c(hi)), o.sub(o.sub(hfsq, t), f))


def _log_special_cases(o: _Ops, u, y) -> ir.Value:
    """log(u) at the edges: +inf -> +inf, 0 -> -inf, negative or NaN -> NaN."""
    y = o.select(o.eq(u, o.c(math.inf)), u, y)
    y = o.select(o.eq(u, o.c(0.0)), o.c(-math.inf), y)
    return o.select(o.ge(u, o.c(0.0)), y, o.c(math.nan))


def _log(o: _Ops, x) -> ir.Value:
    k, f = _split_exponent(o, x)
    return _log_special_cases(o, x, _log_kernel(o, k, f, o.c(0.0)))


def _log1p(o: _Ops, x) -> ir.Value:
    u = o.add(x, o.c(1.0))
    k, f = _split_exponent(o, u)
    # u = 1 + x rounded; c/u corrects log(u) for that rounding. As in fdlibm, c is
    # computed by differences that are exact: u - x for u >= 2, u - 1 below.
    c = o.select(o.ge(u, o.c(2.0)), o.sub(o.c(1.0), o.sub(u, x)), o.sub(x, o.sub(u, o.c(1.0))))
    y = _log_kernel(o, k, f, o.div(c, u))
    y = o.select(o.lt(o.abs(x), o.c(o.fmt.tiny)), x, y)
    return _log_special_cases(o, u, y)


# --- tanh ----------------------------------------------------------------------------

def _tanh(o: _Ops, x) -> ir.Value:
    """From expm1 as in musl: the form per range avoids cancellation."""
    a = o.abs(x)
    big = o.gt(a, o.c(0.5493061443340549))  # log(3)/2: 1 - 2/(e^2a + 1)
    mid = o.gt(a, o.c(0.25541281188299536))  # log(5/3)/2: t/(t+2), t = expm1(2a)
    t = _expm1(o, o.mul(o.select(mid, o.c(2.0), o.c(-2.0)), a))  # below: -t/(t+2), t = expm1(-2a)
    q = o.div(o.select(big, o.c(2.0), o.select(mid, t, o.neg(t))), o.add(t, o.c(2.0)))
    y = o.copysign(o.select(big, o.sub(o.c(1.0), q), q), x)
    return o.select(o.lt(a, o.c(o.fmt.tiny)), x, y)


# --- sin, cos ------------------------------------------------------------------------

def _reduce_pio2(w: _Ops, x, k) -> tuple[ir.Value, ir.Value]:
    """x - k pi/2 as hi + lo, ~100 correct bits: the first step is exact (fma), and
    k * PIO2[1] is split exactly and added with TwoSum."""
    p1, p2, p3 = PIO2
    r1 = w.fma(w.neg(k), w.c(p1), x)
    p2h = w.mul(k, w.c(p2))
    p2l = w.fma(k, w.c(p2), w.neg(p2h))
    u = w.sub(r1, p2h)
    v = w.sub(u, r1)
    err = w.add(w.sub(r1, w.sub(u, v)), w.sub(w.neg(p2h), v))
    lo = w.fma(w.neg(k), w.c(p3), w.sub(err, p2l))
    hi = w.add(u, lo)
    return hi, w.sub(lo, w.sub(hi, u))


def _sin_kernel(w: _Ops, x, y, coeffs) -> ir.Value:
    """sin(x + y), |x| <= pi/4, |y| tiny (FreeBSD's __kernel_sin arrangement)."""
    z = w.mul(x, x)
    v = w.mul(z, x)
    r = w.poly(z, coeffs[1:])
    inner = w.sub(w.mul(z, w.sub(w.mul(w.c(0.5), y), w.mul(v, r))), y)
    return w.sub(x, w.sub(inner, w.mul(v, w.c(coeffs[0]))))


def _cos_kernel(w: _Ops, x, y, coeffs) -> ir.Value:
    """cos(x + y), |x| <= pi/4 (FreeBSD's __kernel_cos arrangement)."""
    z = w.mul(x, x)
    r = w.mul(z, w.poly(z, coeffs))
    hz = w.mul(w.c(0.5), z)
    t = w.sub(w.c(1.0), hz)
    return w.add(t, w.add(w.sub(w.sub(w.c(1.0), t), hz), w.sub(w.mul(z, r), w.mul(x, y))))


def _outside(o: _Ops, x) -> ir.Value:
    """Finite arguments too large for the double-double reduction."""
    a = o.abs(x)
    return o.b.and_(o.ge(a, o.c(TRIG_LIMIT)), o.lt(a, o.c(math.inf)))


def _sin_or_cos(o: _Ops, x, quadrant: int) -> ir.Value:
    """sin (quadrant 0) or cos (quadrant 1) in float64 arithmetic, for |x| below
    TRIG_LIMIT and for inf and NaN (NaN); other lanes get a placeholder."""
    a = o.abs(x)
    inside = o.lt(a, o.c(TRIG_LIMIT))
    xs = o.select(inside, x, o.c(0.0))
    y = (_by_half_pi if o.fmt.compensated else _by_pi)(o, xs, quadrant)
    y = o.select(inside, y, o.sub(x, x))  # NaN for inf and NaN
    return o.select(o.lt(a, o.c(o.fmt.tiny)), x, y) if quadrant == 0 else y


def _by_half_pi(o: _Ops, x, quadrant: int) -> ir.Value:
    """x = k pi/2 + r, |r| <= pi/4: sin or cos of r by the quadrant k + quadrant."""
    k = o.rint(o.mul(x, o.c(TWO_OVER_PI)))
    hi, lo = _reduce_pio2(o, x, k)
    q = o.b.add(o.to_int(k), o.i(quadrant))
    sin, cos = _sin_kernel(o, hi, lo, o.fmt.sin_poly), _cos_kernel(o, hi, lo, o.fmt.cos_poly)
    y = o.select(o.b.icmp_signed("!=", o.b.and_(q, o.i(1)), o.i(0)), cos, sin)
    return o.select(o.b.icmp_signed("!=", o.b.and_(q, o.i(2)), o.i(0)), o.neg(y), y)


def _by_pi(o: _Ops, x, quadrant: int) -> ir.Value:
    """x = n pi + r, |r| <= pi/2, with n an integer for sin and n + 1/2 for cos:
    sin(x) = (-1)^n sin r, cos(x) = (-1)^(n + 1/2) sin r."""
    half = o.c(0.5 * quadrant)
    n = o.add(o.rint(o.sub(o.mul(x, o.c(ONE_OVER_PI)), half)), half)
    r = o.fma(o.neg(n), o.c(PI[1]), o.fma(o.neg(n), o.c(PI[0]), x))
    z = o.mul(r, r)
    y = o.fma(o.mul(z, r), o.poly(z, o.fmt.sin_poly), r)
    odd = o.b.icmp_signed("!=", o.b.and_(o.to_int(o.add(n, half)), o.i(1)), o.i(0))
    return o.select(odd, o.neg(y), y)


# --- the functions -------------------------------------------------------------------

Kernel = Callable[[_Ops, ir.Value], ir.Value]

_KERNELS: dict[str, Kernel] = {
    "exp": _exp, "expm1": _expm1, "log": _log, "log1p": _log1p, "tanh": _tanh,
    "sin": lambda o, x: _sin_or_cos(o, x, 0), "cos": lambda o, x: _sin_or_cos(o, x, 1),
}
FUNCTIONS = math_library.NAMES
assert set(FUNCTIONS) == set(_KERNELS), "math_library.NAMES lists the functions defined here"
#: Straight-line code below TRIG_LIMIT only: the C library takes larger arguments.
_LIMITED = frozenset({"sin", "cos"})
#: float32 functions computed in float64 (and rounded once): float32 arithmetic would
#: exceed 2 ulps (log1p, tanh) or need a longer reduction (sin, cos).
_WIDENED = frozenset({"log1p", "tanh", "sin", "cos"})


def _evaluate(o: _Ops, name: str, x) -> ir.Value:
    kernel = _KERNELS[name]
    if o.element == F32 and name in _WIDENED:
        w = o.widened()
        return o.b.fptrunc(kernel(w, o.b.fpext(x, w.ty)), o.ty)
    return kernel(o, x)


_PURE = ("nounwind", "readnone", "willreturn")
#: The library's definitions: never inlined where a module holds them with their callers
#: (an export's): the scalar function inlined into a loop would keep the loop vectoriser
#: from calling its vector variant (its libm fallback is a branch and a call).
_DEFINED = (*_PURE, "noinline")


class _Attributes(ir.values.FunctionAttributes):
    """Function attributes, including ones llvmlite does not know (``willreturn`` and
    string attributes such as ``"vector-function-abi-variant"``)."""

    _known = ir.values.FunctionAttributes._known | {"willreturn"}

    def __init__(self, names=(), strings: dict[str, str] | None = None) -> None:
        self.strings = strings or {}
        super().__init__(names)

    def _to_list(self, ret_type):
        return super()._to_list(ret_type) + [f'"{k}"="{v}"' for k, v in self.strings.items()]


def _function(module: ir.Module, name: str, ty: ir.Type, attributes: _Attributes,
              linkage: str = "internal") -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(ty, [ty]), name)
    fn.linkage = linkage
    fn.attributes = attributes
    return fn


def math_function(module: ir.Module, name: str, ty: ir.Type, vector_bits: int) -> ir.Function:
    """The scalar function ``name`` (one of :data:`FUNCTIONS`) for float type ``ty``,
    declared in ``module`` with its vector variants for vector registers of
    ``vector_bits``; the library defines them (the process's, ``math_library.py``, or an
    exported artifact's own copy, ``aot.py``)."""
    bits = 32 if ty == F32 else 64
    symbol = math_library.symbol(name, bits)
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    variants = _variants(name, bits, vector_bits)
    fn = _function(module, symbol, ty, _Attributes(_PURE, _mappings(symbol, variants)), "")
    # Declared only: the loop vectoriser needs them in the module to call them.
    _keep(module, [ir.Function(module, ir.FunctionType(ir.VectorType(ty, n), [ir.VectorType(ty, n)]), v)
                   for n, v in variants.items()])
    return fn


def _mappings(symbol: str, variants: dict[int, str]) -> dict[str, str]:
    """The attribute naming a scalar function's vector variants to the loop vectoriser."""
    return {"vector-function-abi-variant": ",".join(f"_ZGV_LLVM_N{n}v_{symbol}({v})" for n, v in variants.items())}


def _variants(name: str, bits: int, vector_bits: int) -> dict[int, str]:
    """The vector variants' symbols by width: a full register, and half of one (the loop
    vectoriser picks the width by the widest type in a loop; calls at a width without a
    variant would be split into scalar calls)."""
    return {lanes: f"plaidarray.{name}.v{lanes}f{bits}" for lanes in (vector_bits // bits // 2, vector_bits // bits)}


# --- the library: each function's code, compiled once (math_library.py loads it) ------

def library_ir(symbol: str, vector_bits: int, vectors: bool = True) -> tuple[str, list[str]]:
    """LLVM IR defining the scalar function ``symbol`` (``plaidarray.<name>.f<bits>``) and,
    with ``vectors``, its vector variants for registers of ``vector_bits``, and their
    symbols. Without them the library is the scalar function alone, all that unvectorised
    code calls, at a third of the build."""
    _, name, width = symbol.split(".")
    bits = int(width[1:])
    ty = F32 if bits == 32 else F64
    module = ir.Module(name=symbol)
    variants = _variants(name, bits, vector_bits) if vectors else {}
    # The definition names its variants too: linked with its callers (an export), it is
    # the function they call, and a definition's attributes are the ones that remain.
    fn = _function(module, symbol, ty, _Attributes(_DEFINED, _mappings(symbol, variants) if variants else {}), "")
    _define_scalar(module, fn, name, ty)
    for lanes, vector_symbol in variants.items():
        _define_vector(fn, name, vector_symbol, lanes)
    return str(module), [symbol, *variants.values()]


def library_object_code(symbol: str, level: int, vectors: bool = True) -> tuple[bytes, list[str]]:
    """Object code of :func:`library_ir` for the host, and its symbols: the IR as written,
    its machine code generated at ``level``. The functions are straight-line code with
    explicit fused multiply-adds and selects, which LLVM's IR pipeline has nothing to
    improve on: skipping it halves a function's build (exp 8.7 -> 4.7 ms, sin 22 -> 16)
    in a process's first use of it, and the code computes the same bits as fast."""
    text, symbols = library_ir(symbol, host().vector_bits, vectors)
    return codegen_worker.generate(text, host(), 0, emit_level=level).object, symbols


def _c_function(module: ir.Module, name: str, ty: ir.Type) -> ir.Function:
    symbol = name + ("f" if ty == F32 else "")
    return module.globals.get(symbol) or ir.Function(module, ir.FunctionType(ty, [ty]), symbol)


def _define_scalar(module: ir.Module, fn: ir.Function, name: str, ty: ir.Type) -> None:
    (x,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    o = _Ops(b, ty)
    if name not in _LIMITED:
        b.ret(_evaluate(o, name, x))
        return
    inline, libm = fn.append_basic_block("inline"), fn.append_basic_block("libm")
    b.cbranch(_outside(o, x), libm, inline)
    b.position_at_end(inline)
    b.ret(_evaluate(o, name, x))
    b.position_at_end(libm)
    b.ret(b.call(_c_function(module, name, ty), [x]))


def _define_vector(scalar: ir.Function, name: str, symbol: str, lanes: int) -> None:
    """All lanes in straight-line code; for sin and cos, if any lane is out of range,
    the lanes go through memory to :func:`_fallback`."""
    element = scalar.ftype.return_type
    fn = _function(scalar.module, symbol, ir.VectorType(element, lanes), _Attributes(_DEFINED), "")
    (x,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    o = _Ops(b, element, lanes)
    y = _evaluate(o, name, x)
    if name not in _LIMITED:
        b.ret(y)
        return
    done, fix = fn.append_basic_block("done"), fn.append_basic_block("fix")
    mask = ir.IntType(lanes)
    b.cbranch(b.icmp_unsigned("!=", b.bitcast(_outside(o, x), mask), ir.Constant(mask, 0)), fix, done)
    b.position_at_end(done)
    b.ret(y)
    b.position_at_end(fix)
    xs, ys = b.alloca(x.type), b.alloca(x.type)
    b.store(x, xs)
    b.store(y, ys)
    b.call(_fallback(scalar.module, name, element), [xs, ys, ir.Constant(ir.IntType(64), lanes)])
    b.ret(b.load(ys, typ=x.type))


def _fallback(module: ir.Module, name: str, ty: ir.Type) -> ir.Function:
    """``void f(T* x, T* y, i64 n)``: ``y[i] = name(x[i])`` by the C library where x[i]
    is out of range. A loop over memory keeps the vector variants small to compile. It
    calls the C library, not the scalar function: the vectoriser would turn calls of
    the scalar function back into calls of a vector variant."""
    symbol = f"plaidarray.{name}.f{32 if ty == F32 else 64}.fallback"
    if symbol in module.globals:
        return module.globals[symbol]
    i64 = ir.IntType(64)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.PointerType(), ir.PointerType(), i64]), symbol)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    xs, ys, n = fn.args
    entry, head, call, latch, done = (fn.append_basic_block(s) for s in ("entry", "head", "call", "latch", "done"))
    b = ir.IRBuilder(entry)
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(i64)
    x = b.load(b.gep(xs, [i], source_etype=ty), typ=ty)
    b.cbranch(_outside(_Ops(b, ty), x), call, latch)
    b.position_at_end(call)
    b.store(b.call(_c_function(module, name, ty), [x]), b.gep(ys, [i], source_etype=ty))
    b.branch(latch)
    b.position_at_end(latch)
    following = b.add(i, ir.Constant(i64, 1))
    b.cbranch(b.icmp_signed("<", following, n), head, done)
    i.add_incoming(ir.Constant(i64, 0), entry)
    i.add_incoming(following, latch)
    b.position_at_end(done)
    b.ret_void()
    return fn


def _keep(module: ir.Module, functions: list[ir.Function]) -> None:
    """List ``functions`` in ``@llvm.compiler.used``: the vector variants are only
    named in an attribute until the vectoriser calls them, and must survive until then."""
    used = module.globals.get("llvm.compiler.used")
    if used is None:
        used = ir.GlobalVariable(module, ir.ArrayType(ir.PointerType(), 0), "llvm.compiler.used")
        used.linkage = "appending"
        used.section = "llvm.metadata"
    kept = [*(used.initializer.constant if used.initializer is not None else []), *functions]
    used.value_type = ir.ArrayType(ir.PointerType(), len(kept))
    used.initializer = ir.Constant(used.value_type, kept)
