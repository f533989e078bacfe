"""exp, expm1, log, log1p, tanh, sin and cos for float32 and float64 in LLVM IR, for any
LLVM target: a range reduction and a polynomial (Cody-Waite reduction; near-minimax
coefficients from ``tools/fit_vector_math.py``) in straight-line code, with selects
instead of branches, correct over the whole range: overflow to inf, gradual underflow to
denormals and zero, denormal inputs, signed zeros, infinities and NaN. float32 log1p,
tanh, sin and cos run in float64 and round once; float32 arithmetic would exceed 2 ulps
(log1p, tanh) or need a longer reduction (sin, cos). sin and cos reduce the argument by
pi/2 in double-double arithmetic below ``TRIG_LIMIT``; larger finite arguments need
Payne-Hanek reduction, which each backend supplies (``define_scalar``'s ``large``: the C
library on the host, libdevice on a GPU).

Shared by the LLVM backends so that every device computes the same bits: the functions
execute the same IEEE operations wherever they run (fused multiply-adds are explicit
``llvm.fma`` calls), scalar or vector (llvm-cpu's ``vector_math.py`` builds its library of
scalar and vector variants from them; llvm-nvptx defines the scalar ones in each kernel
module that calls them). The accuracy is measured by
``tests/unit/backend/test_vector_math_accuracy.py`` and recorded in docs/performance.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from llvmlite import ir

F32, F64 = ir.FloatType(), ir.DoubleType()

TWO_OVER_PI = float.fromhex("0x1.45f306dc9c883p-1")
LOG2E = float.fromhex("0x1.71547652b82fep+0")
ONE_OVER_PI = float.fromhex("0x1.45f306dc9c883p-2")
#: pi as the sum of two doubles, pi/2 as the sum of three (159 bits).
PI = (float.fromhex("0x1.921fb54442d18p+1"), float.fromhex("0x1.1a62633145c07p-53"))
PIO2 = (float.fromhex("0x1.921fb54442d18p+0"), float.fromhex("0x1.1a62633145c07p-54"),
        float.fromhex("-0x1.f1976b7ed8fbcp-110"))


@dataclass(frozen=True)
class Format:
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


_F32 = Format(
    32, 23, (float.fromhex("0x1.62e4p-1"), float.fromhex("0x1.7f7d1cp-20")), 0x3F3504F3, (-110.0, 89.0), -18.0,
    exp_poly=(0.5, 0.1666666716337204, 0.04166646674275398, 0.00833331048488617, 0.0013933649752289057,
              0.00019890991097781807),
    log_poly=(0.6666666865348816, 0.4000012278556824, 0.2855081558227539, 0.23330582678318024),
    sin_poly=(), cos_poly=())  # float32 sin and cos run in float64
_F64 = Format(
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


class Ops:
    """Arithmetic on one float type, scalar or vector (constants are then splats)."""

    def __init__(self, b: ir.IRBuilder, element: ir.Type, lanes: int = 0, fmt: Format | None = None) -> None:
        self.b, self.element, self.lanes = b, element, lanes
        self.fmt = fmt or (_F32 if element == F32 else _F64)
        int_element = ir.IntType(self.fmt.bits)
        self.ty = ir.VectorType(element, lanes) if lanes else element
        self.int_ty = ir.VectorType(int_element, lanes) if lanes else int_element
        self.suffix = f"v{lanes}f{self.fmt.bits}" if lanes else f"f{self.fmt.bits}"

    def widened(self) -> Ops:
        """float64 arithmetic to float32 accuracy, on as many lanes."""
        return Ops(self.b, F64, self.lanes, _F32_IN_F64)

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

def _reduce_ln2(o: Ops, x) -> tuple[ir.Value, ir.Value, ir.Value]:
    """x = n ln2 + r + c with integer n (as a float), |r| <= ln2/2 and c the rounding
    error of r (Cody-Waite: the first step is exact)."""
    hi, lo = o.fmt.ln2
    n = o.rint(o.mul(x, o.c(LOG2E)))
    r_hi = o.fma(n, o.c(-hi), x)
    r = o.fma(n, o.c(-lo), r_hi)
    return n, r, o.fma(n, o.c(-lo), o.sub(r_hi, r))


def _exp(o: Ops, x) -> ir.Value:
    n, r, _ = _reduce_ln2(o, o.clamp(x, *o.fmt.exp_range))
    p = o.add(o.fma(o.mul(r, r), o.poly(r, o.fmt.exp_poly), r), o.c(1.0))
    # 2**n in two factors, so that results near overflow and denormal results get
    # exactly one rounding (the last product).
    k = o.to_int(n)
    half = o.b.ashr(k, o.i(1))
    y = o.mul(o.mul(p, o.pow2(half)), o.pow2(o.b.sub(k, half)))
    return o.select(o.isnan(x), x, y)


def _expm1(o: Ops, x) -> ir.Value:
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

def _split_exponent(o: Ops, u) -> tuple[ir.Value, ir.Value]:
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


def _log_kernel(o: Ops, k, f, c) -> ir.Value:
    """k ln2 + log(1 + f) + c, arranged as in fdlibm's log for one final rounding."""
    hi, lo = o.fmt.ln2
    s = o.div(f, o.add(o.c(2.0), f))
    z = o.mul(s, s)
    r = o.mul(z, o.poly(z, o.fmt.log_poly))
    hfsq = o.mul(o.c(0.5), o.mul(f, f))
    t = o.add(o.mul(s, o.add(hfsq, r)), o.fma(k, o.c(lo), c))
    return o.sub(o.mul(k, o.c(hi)), o.sub(o.sub(hfsq, t), f))


def _log_special_cases(o: Ops, u, y) -> ir.Value:
    """log(u) at the edges: +inf -> +inf, 0 -> -inf, negative or NaN -> NaN."""
    y = o.select(o.eq(u, o.c(math.inf)), u, y)
    y = o.select(o.eq(u, o.c(0.0)), o.c(-math.inf), y)
    return o.select(o.ge(u, o.c(0.0)), y, o.c(math.nan))


def _log(o: Ops, x) -> ir.Value:
    k, f = _split_exponent(o, x)
    return _log_special_cases(o, x, _log_kernel(o, k, f, o.c(0.0)))


def _log1p(o: Ops, x) -> ir.Value:
    u = o.add(x, o.c(1.0))
    k, f = _split_exponent(o, u)
    # u = 1 + x rounded; c/u corrects log(u) for that rounding. As in fdlibm, c is
    # computed by differences that are exact: u - x for u >= 2, u - 1 below.
    c = o.select(o.ge(u, o.c(2.0)), o.sub(o.c(1.0), o.sub(u, x)), o.sub(x, o.sub(u, o.c(1.0))))
    y = _log_kernel(o, k, f, o.div(c, u))
    y = o.select(o.lt(o.abs(x), o.c(o.fmt.tiny)), x, y)
    return _log_special_cases(o, u, y)


# --- tanh ----------------------------------------------------------------------------

def _tanh(o: Ops, x) -> ir.Value:
    """From expm1 as in musl: the form per range avoids cancellation."""
    a = o.abs(x)
    big = o.gt(a, o.c(0.5493061443340549))  # log(3)/2: 1 - 2/(e^2a + 1)
    mid = o.gt(a, o.c(0.25541281188299536))  # log(5/3)/2: t/(t+2), t = expm1(2a)
    t = _expm1(o, o.mul(o.select(mid, o.c(2.0), o.c(-2.0)), a))  # below: -t/(t+2), t = expm1(-2a)
    q = o.div(o.select(big, o.c(2.0), o.select(mid, t, o.neg(t))), o.add(t, o.c(2.0)))
    y = o.copysign(o.select(big, o.sub(o.c(1.0), q), q), x)
    return o.select(o.lt(a, o.c(o.fmt.tiny)), x, y)


# --- sin, cos ------------------------------------------------------------------------

def _reduce_pio2(w: Ops, x, k) -> tuple[ir.Value, ir.Value]:
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


def _sin_kernel(w: Ops, x, y, coeffs) -> ir.Value:
    """sin(x + y), |x| <= pi/4, |y| tiny (FreeBSD's __kernel_sin arrangement)."""
    z = w.mul(x, x)
    v = w.mul(z, x)
    r = w.poly(z, coeffs[1:])
    inner = w.sub(w.mul(z, w.sub(w.mul(w.c(0.5), y), w.mul(v, r))), y)
    return w.sub(x, w.sub(inner, w.mul(v, w.c(coeffs[0]))))


def _cos_kernel(w: Ops, x, y, coeffs) -> ir.Value:
    """cos(x + y), |x| <= pi/4 (FreeBSD's __kernel_cos arrangement)."""
    z = w.mul(x, x)
    r = w.mul(z, w.poly(z, coeffs))
    hz = w.mul(w.c(0.5), z)
    t = w.sub(w.c(1.0), hz)
    return w.add(t, w.add(w.sub(w.sub(w.c(1.0), t), hz), w.sub(w.mul(z, r), w.mul(x, y))))


def outside(o: Ops, x) -> ir.Value:
    """Finite arguments too large for the double-double reduction."""
    a = o.abs(x)
    return o.b.and_(o.ge(a, o.c(TRIG_LIMIT)), o.lt(a, o.c(math.inf)))


def _sin_or_cos(o: Ops, x, quadrant: int) -> ir.Value:
    """sin (quadrant 0) or cos (quadrant 1) in float64 arithmetic, for |x| below
    TRIG_LIMIT and for inf and NaN (NaN); other lanes get a placeholder."""
    a = o.abs(x)
    inside = o.lt(a, o.c(TRIG_LIMIT))
    xs = o.select(inside, x, o.c(0.0))
    y = (_by_half_pi if o.fmt.compensated else _by_pi)(o, xs, quadrant)
    y = o.select(inside, y, o.sub(x, x))  # NaN for inf and NaN
    return o.select(o.lt(a, o.c(o.fmt.tiny)), x, y) if quadrant == 0 else y


def _by_half_pi(o: Ops, x, quadrant: int) -> ir.Value:
    """x = k pi/2 + r, |r| <= pi/4: sin or cos of r by the quadrant k + quadrant."""
    k = o.rint(o.mul(x, o.c(TWO_OVER_PI)))
    hi, lo = _reduce_pio2(o, x, k)
    q = o.b.add(o.to_int(k), o.i(quadrant))
    sin, cos = _sin_kernel(o, hi, lo, o.fmt.sin_poly), _cos_kernel(o, hi, lo, o.fmt.cos_poly)
    y = o.select(o.b.icmp_signed("!=", o.b.and_(q, o.i(1)), o.i(0)), cos, sin)
    return o.select(o.b.icmp_signed("!=", o.b.and_(q, o.i(2)), o.i(0)), o.neg(y), y)


def _by_pi(o: Ops, x, quadrant: int) -> ir.Value:
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

Kernel = Callable[[Ops, ir.Value], ir.Value]

KERNELS: dict[str, Kernel] = {
    "exp": _exp, "expm1": _expm1, "log": _log, "log1p": _log1p, "tanh": _tanh,
    "sin": lambda o, x: _sin_or_cos(o, x, 0), "cos": lambda o, x: _sin_or_cos(o, x, 1),
}
#: Straight-line code below TRIG_LIMIT only: the C library takes larger arguments.
LIMITED = frozenset({"sin", "cos"})
#: float32 functions computed in float64 (and rounded once): float32 arithmetic would
#: exceed 2 ulps (log1p, tanh) or need a longer reduction (sin, cos).
WIDENED = frozenset({"log1p", "tanh", "sin", "cos"})


def evaluate(o: Ops, name: str, x) -> ir.Value:
    kernel = KERNELS[name]
    if o.element == F32 and name in WIDENED:
        w = o.widened()
        return o.b.fptrunc(kernel(w, o.b.fpext(x, w.ty)), o.ty)
    return kernel(o, x)


#: The source of a function for arguments past ``TRIG_LIMIT`` (sin, cos): ``large(module,
#: name, type)``, a function of the module computing ``name`` for any argument.
Large = Callable[[ir.Module, str, ir.Type], ir.Function]


def define_scalar(fn: ir.Function, name: str, ty: ir.Type, large: Large) -> None:
    """Define ``fn``, a function ``ty -> ty`` of its module, as the function ``name`` of
    ``KERNELS``; sin and cos call ``large`` past ``TRIG_LIMIT``."""
    (x,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    o = Ops(b, ty)
    if name not in LIMITED:
        b.ret(evaluate(o, name, x))
        return
    inline, past = fn.append_basic_block("inline"), fn.append_basic_block("large")
    b.cbranch(outside(o, x), past, inline)
    b.position_at_end(inline)
    b.ret(evaluate(o, name, x))
    b.position_at_end(past)
    b.ret(b.call(large(fn.module, name, ty), [x]))
