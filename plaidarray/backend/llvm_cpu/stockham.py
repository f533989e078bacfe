"""A Stockham autosort FFT generated in LLVM IR: the runtime routine behind llvm-cpu's ``fft``.

``plaidarray_fft_<forward|backward><n>`` transforms one row of n complex128 points,
``void f(ptr x, i64 x_offset, ptr out, i64 out_offset, ptr twiddles)`` (offsets in
elements), unscaled, with ``exp(-2 pi i j k / n)`` (forward) or ``exp(+...)`` (backward).
It is generated for one n, so every loop bound and stride is a constant.

The transform is a sequence of decimation-in-frequency stages (OTFFT's Stockham form),
radix 4 while 4 divides what is left, then 2, then the odd primes up to
``LARGEST_KERNEL_PRIME``. Before a stage of radix r the signal is s = the product of the
earlier radices interleaved transforms of length l = n / s; with m = l / r, for every
p < m and q < s the stage reads ``a[j] = src[q + s (p + j m)]`` (j < r), computes their
r-point DFT ``y[k]`` with a straight-line butterfly, multiplies ``y[k]`` by the twiddle
``w_l^(p k)`` and writes ``dst[q + s (r p + k)]``. The last stage leaves the transform in
natural order, so no bit reversal is needed: stages ping-pong between ``out`` and a
scratch row from malloc, the parity chosen so that the last one writes ``out``. Every
stage reads and writes each point once, in runs contiguous in q (LLVM vectorises the
inner loop) or, when s = 1, along p.

The twiddles are a table built once per compile (:func:`twiddles`, bound to the
executable as a constant), stage after stage: for each p of a stage with m > 1, its
``w^(p k)`` for k = 1 ... r - 1, each computed in float64 from an angle reduced exactly
(``hlo/ops/fft.py``'s ``unit``), so a call computes no sine or cosine. Odd radices use
the symmetric form of the r-point DFT (pairs ``a[j] +- a[r - j]`` times constant cosines
and sines), r^2 / 2 multiplications instead of r^2.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from ...hlo.ops.fft import unit
from .ir_loops import Loop

#: Prime radices with a butterfly in the kernel; a length with a larger prime factor is
#: not a kernel length (the expansion around the kernel handles that factor).
LARGEST_KERNEL_PRIME = 13
_ODD_PRIMES = tuple(p for p in range(3, LARGEST_KERNEL_PRIME + 1, 2) if all(p % d for d in range(3, p, 2)))

I64, F64, PTR = ir.IntType(64), ir.DoubleType(), ir.PointerType()
_NAME = re.compile(r"(forward|backward)(\d+)")
#: Reassociation is not allowed (it would change the butterflies' rounding); fused
#: multiply-adds are.
_FLAGS = ("contract",)


def radices(n: int) -> list[int] | None:
    """The radices of the stages of an n-point transform, or None if n has a prime factor
    above ``LARGEST_KERNEL_PRIME``."""
    found = []
    while n % 4 == 0:
        found.append(4)
        n //= 4
    if n % 2 == 0:
        found.append(2)
        n //= 2
    for p in _ODD_PRIMES:
        while n % p == 0:
            found.append(p)
            n //= p
    return found if n == 1 else None


@dataclass(frozen=True)
class _Stage:
    radix: int
    m: int  # butterflies of one interleaved transform (p < m)
    s: int  # interleaved transforms (q < s)
    table: int  # offset of its twiddles in the table (elements); used when m > 1


def _stages(n: int) -> list[_Stage]:
    found, s, offset = [], 1, 0
    for r in radices(n) or ():
        m = n // (s * r)
        found.append(_Stage(r, m, s, offset))
        offset += (r - 1) * m if m > 1 else 0
        s *= r
    return found


def twiddles(n: int, sign: int) -> np.ndarray:
    """The twiddle table of the n-point transform with ``exp(sign 2 pi i ...)`` (complex128;
    one unused element when no stage needs twiddles, so that it is never empty)."""
    parts = [np.ones(1, np.complex128)]
    for st in _stages(n):
        if st.m > 1:
            # w_l^(p k) with l = n / s is w_n^(s p k).
            turns = st.s * np.arange(st.m)[:, None] * np.arange(1, st.radix)[None, :]
            parts.append(unit(turns.reshape(-1) % n, n, sign))
    return np.concatenate(parts[1:]) if len(parts) > 1 else parts[0]


def symbol(n: int, sign: int) -> str:
    """The routine transforming one row of n points with ``exp(sign 2 pi i ...)``."""
    return f"plaidarray_fft_{'forward' if sign < 0 else 'backward'}{n}"


# --- complex arithmetic on (re, im) pairs of doubles ----------------------------------------

Complex = tuple[ir.Value, ir.Value]


class _Arithmetic:
    def __init__(self, b: ir.IRBuilder, sign: int) -> None:
        self.b, self.sign = b, sign

    def add(self, x: Complex, y: Complex) -> Complex:
        return self.b.fadd(x[0], y[0], flags=_FLAGS), self.b.fadd(x[1], y[1], flags=_FLAGS)

    def sub(self, x: Complex, y: Complex) -> Complex:
        return self.b.fsub(x[0], y[0], flags=_FLAGS), self.b.fsub(x[1], y[1], flags=_FLAGS)

    def mul(self, x: Complex, w: Complex) -> Complex:
        b = self.b
        re = b.fsub(b.fmul(x[0], w[0], flags=_FLAGS), b.fmul(x[1], w[1], flags=_FLAGS), flags=_FLAGS)
        im = b.fadd(b.fmul(x[0], w[1], flags=_FLAGS), b.fmul(x[1], w[0], flags=_FLAGS), flags=_FLAGS)
        return re, im

    def scale(self, x: Complex, c: float) -> Complex:
        k = ir.Constant(F64, c)
        return self.b.fmul(x[0], k, flags=_FLAGS), self.b.fmul(x[1], k, flags=_FLAGS)

    def rotate(self, x: Complex) -> Complex:
        """``sign * i * x``: a quarter turn in the transform's direction, exact."""
        b = self.b
        return (b.fneg(x[1]), x[0]) if self.sign > 0 else (x[1], b.fneg(x[0]))

    def butterfly(self, a: Sequence[Complex]) -> list[Complex]:
        """The DFT of ``a`` (2, 4 or an odd prime number of points)."""
        r = len(a)
        if r == 2:
            return [self.add(a[0], a[1]), self.sub(a[0], a[1])]
        if r == 4:
            apc, amc, bpd = self.add(a[0], a[2]), self.sub(a[0], a[2]), self.add(a[1], a[3])
            rot = self.rotate(self.sub(a[1], a[3]))
            return [self.add(apc, bpd), self.add(amc, rot), self.sub(apc, bpd), self.sub(amc, rot)]
        return self._odd(a)

    def _odd(self, a: Sequence[Complex]) -> list[Complex]:
        """``y[k] = a0 + sum_j t_j cos(2 pi j k / r) + sign i sum_j u_j sin(2 pi j k / r)``
        over the pairs ``t_j = a[j] + a[r - j]``, ``u_j = a[j] - a[r - j]``; ``y[r - k]``
        takes the other sign."""
        r, half = len(a), len(a) // 2
        t = [self.add(a[j], a[r - j]) for j in range(1, half + 1)]
        u = [self.sub(a[j], a[r - j]) for j in range(1, half + 1)]
        y: list[Complex] = [a[0]] * r
        total = a[0]
        for tj in t:
            total = self.add(total, tj)
        y[0] = total
        for k in range(1, half + 1):
            c, d = a[0], None
            for j in range(1, half + 1):
                angle = 2 * math.pi * (j * k % r) / r
                c = self.add(c, self.scale(t[j - 1], math.cos(angle)))
                term = self.scale(u[j - 1], math.sin(angle))
                d = term if d is None else self.add(d, term)
            assert d is not None
            rot = self.rotate(d)
            y[k], y[r - k] = self.add(c, rot), self.sub(c, rot)
        return y


# --- the routine -------------------------------------------------------------------------------

def stockham_fft(module: ir.Module, name: str, suffix: str) -> ir.Function:
    """Generate ``name`` (``suffix`` is ``forward<n>`` or ``backward<n>``) in ``module``."""
    match = _NAME.fullmatch(suffix)
    if match is None or radices(int(match.group(2))) is None:
        raise ValueError(f"llvm-cpu: no FFT routine {name!r}")
    sign, n = (-1 if match.group(1) == "forward" else 1), int(match.group(2))
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, PTR, I64, PTR]), name)
    fn.linkage = "internal"
    x, x_offset, out, out_offset, table = fn.args
    for pointer in (x, out, table):
        pointer.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    two = ir.Constant(I64, 2)
    source = b.gep(x, [b.mul(x_offset, two)], source_etype=F64)
    target = b.gep(out, [b.mul(out_offset, two)], source_etype=F64)
    stages = _stages(n)
    if not stages:  # n = 1
        for part in range(2):
            b.store(b.load(b.gep(source, [ir.Constant(I64, part)], source_etype=F64), typ=F64),
                    b.gep(target, [ir.Constant(I64, part)], source_etype=F64))
        b.ret_void()
        return fn
    scratch = None
    if len(stages) > 1:
        scratch = _malloc_or_nan(module, fn, b, n, target)
    arithmetic = _Arithmetic(b, sign)
    src = source
    for number, stage in enumerate(stages):
        dst = target if (len(stages) - 1 - number) % 2 == 0 else scratch
        _emit_stage(fn, b, arithmetic, stage, src, dst, table)
        src = dst
    if scratch is not None:
        free = module.globals.get("free") or ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), "free")
        b.call(free, [scratch])
    b.ret_void()
    return fn


def _malloc_or_nan(module: ir.Module, fn: ir.Function, b: ir.IRBuilder, n: int, target: ir.Value) -> ir.Value:
    """A scratch row from malloc; if there is none, the routine writes NaN and returns
    (a result that says so, never a crash)."""
    malloc = module.globals.get("malloc") or ir.Function(module, ir.FunctionType(PTR, [I64]), "malloc")
    scratch = b.call(malloc, [ir.Constant(I64, 16 * n)])
    failed, ok = fn.append_basic_block("no_scratch"), fn.append_basic_block("stages")
    b.cbranch(b.icmp_unsigned("==", scratch, ir.Constant(PTR, None)), failed, ok)
    b.position_at_end(failed)
    fill = Loop(b, fn, ir.Constant(I64, 0), ir.Constant(I64, 2 * n), "nan")
    b.store(ir.Constant(F64, math.nan), b.gep(target, [fill.i], source_etype=F64))
    fill.close()
    b.ret_void()
    b.position_at_end(ok)
    return scratch


def _emit_stage(fn: ir.Function, b: ir.IRBuilder, c: _Arithmetic, stage: _Stage, src: ir.Value, dst: ir.Value,
                table: ir.Value) -> None:
    """One stage: for p < m (a loop when m > 1), for q < s (a loop when s > 1), a butterfly."""
    r, m, s = stage.radix, stage.m, stage.s

    def load(base: ir.Value, element: ir.Value) -> Complex:
        first = b.mul(element, ir.Constant(I64, 2))
        return (b.load(b.gep(base, [first], source_etype=F64), typ=F64),
                b.load(b.gep(base, [b.add(first, ir.Constant(I64, 1))], source_etype=F64), typ=F64))

    def store(value: Complex, base: ir.Value, element: ir.Value) -> None:
        first = b.mul(element, ir.Constant(I64, 2))
        b.store(value[0], b.gep(base, [first], source_etype=F64))
        b.store(value[1], b.gep(base, [b.add(first, ir.Constant(I64, 1))], source_etype=F64))

    zero = ir.Constant(I64, 0)
    p_loop = Loop(b, fn, zero, ir.Constant(I64, m), "p") if m > 1 else None
    p = p_loop.i if p_loop is not None else zero
    w: list[Complex] = []
    if m > 1:
        first = b.add(ir.Constant(I64, stage.table), b.mul(p, ir.Constant(I64, r - 1)))
        w = [load(table, b.add(first, ir.Constant(I64, k))) for k in range(r - 1)]
    q_loop = Loop(b, fn, zero, ir.Constant(I64, s), "q") if s > 1 else None
    q = q_loop.i if q_loop is not None else zero
    read = b.add(q, b.mul(p, ir.Constant(I64, s)))
    written = b.add(q, b.mul(p, ir.Constant(I64, s * r)))
    y = c.butterfly([load(src, b.add(read, ir.Constant(I64, s * j * m))) for j in range(r)])
    for k in range(r):
        value = c.mul(y[k], w[k - 1]) if k and m > 1 else y[k]
        store(value, dst, b.add(written, ir.Constant(I64, s * k)))
    if q_loop is not None:
        q_loop.close()
    if p_loop is not None:
        p_loop.close()
