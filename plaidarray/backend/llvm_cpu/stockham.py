"""A Stockham autosort FFT generated in LLVM IR: the runtime routine behind llvm-cpu's ``fft``.

``plaidarray_fft_<forward|backward><n>[s<stride>]`` transforms one row of n complex128
points, ``void f(ptr x, i64 x_offset, ptr out, i64 out_offset, ptr twiddles)`` (offsets
in elements; the points ``stride`` elements apart, 1 by default: a column of an array is
transformed in place of its rows, without a transpose), unscaled, with
``exp(-2 pi i j k / n)`` (forward) or ``exp(+...)`` (backward). It is generated for one n
and stride, so every loop bound and stride is a constant. ``plaidarray_fft_real<forward|
backward><n>`` are the real kinds of even n on rows (RFFT, IRFFT), around the n/2-point
transform (:func:`stockham_fft`).

The transform is a sequence of decimation-in-frequency stages (OTFFT's Stockham form):
radix 8 for the power of two dividing n, with one or two of radix 4 (or one of 2 for n
= 2) for what 8 leaves, then the odd primes up to ``LARGEST_KERNEL_PRIME``. Before a stage of radix r the signal is s = the product of the
earlier radices interleaved transforms of length l = n / s; with m = l / r, for every
p < m and q < s the stage reads ``a[j] = src[q + s (p + j m)]`` (j < r), computes their
r-point DFT ``y[k]`` with a straight-line butterfly, multiplies ``y[k]`` by the twiddle
``w_l^(p k)`` and writes ``dst[q + s (r p + k)]``. The last stage leaves the transform in
natural order, so no bit reversal is needed: stages ping-pong between ``out`` and a
scratch row from malloc (two scratch rows when the points are strided), the parity
chosen so that the last one writes ``out``. Every
stage reads and writes each point once, in runs contiguous in q (LLVM vectorises the
inner loop) or, when s = 1, along p.

The twiddles are a table built once per compile (:func:`twiddles`, bound to the
executable as a constant), stage after stage: for each p of a stage with m > 1, its
``w^(p k)`` for k = 1 ... r - 1, each computed in float64 from an angle reduced exactly
(``codegen/lowerings/fft.py``'s ``unit``), so a call computes no sine or cosine. Odd radices use
the symmetric form of the r-point DFT (pairs ``a[j] +- a[r - j]`` times constant cosines
and sines), r^2 / 2 multiplications instead of r^2: straight-line code up to
``LARGEST_UNROLLED_PRIME``, loops over j and k above it (straight-line code for 61 or
127 points took LLVM 1-8 s and ran slower).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TypeAlias

import numpy as np
from llvmlite import ir

from ...hlo.ops.fft import unit
from . import fft_plan
from .fft_plan import Stage, radices, table_size
from ..llvm.ir_loops import Loop
from .tiering import FFT_ROUTINE_PREFIX, GENERIC_FFT_PREFIX

#: Odd primes up to this have straight-line butterflies; larger ones loops (compile time).
LARGEST_UNROLLED_PRIME = 31
#: An odd butterfly of at least ``SPLIT_SUMS_FROM`` points sums each output's terms into
#: this many partial sums (term j into sum j mod 4), added pairwise at the end: rounding
#: errors of a running sum grow with the number of its terms, so four sums of a quarter of
#: them each err about half as much. With one running sum, transforms whose length has a
#: prime factor from 71 to 127 were 1.5-2.3x pocketfft's error.
PARTIAL_SUMS = 4
SPLIT_SUMS_FROM = 17

I64, F64, PTR = ir.IntType(64), ir.DoubleType(), ir.PointerType()
_NAME = re.compile(r"(real)?(forward|backward)(\d+)(?:s(\d+)b(\d+)|r(\d+))?")


def partial_sums(r: int) -> int:
    """The number of partial sums of each output of an odd r-point butterfly."""
    return PARTIAL_SUMS if r >= SPLIT_SUMS_FROM else 1


#: What every routine's name starts with.
PREFIX = FFT_ROUTINE_PREFIX


def symbol(n: int, sign: int, stride: int = 1, lines: int = 1, real: bool = False) -> str:
    """The routine transforming ``lines`` lines of n points with ``exp(sign 2 pi i ...)``:
    adjacent lines whose points are ``stride`` elements apart, or consecutive rows
    (``stride`` 1); with ``real``, rows of the real kinds of even n (RFFT forward, IRFFT
    backward)."""
    layout = f"s{stride}b{lines}" if stride != 1 else f"r{lines}" if lines != 1 else ""
    return f"{PREFIX}{'real' if real else ''}{'forward' if sign < 0 else 'backward'}{n}{layout}"


# --- complex arithmetic on (re, im) pairs of doubles ----------------------------------------

Complex = tuple[ir.Value, ir.Value]
#: A length, step or offset: a number in code made for one length, a run-time value in
#: the routines of any length (:func:`generic_fft`); the same IR either way.
Size: TypeAlias = int | ir.Value
Buffer = tuple[ir.Value, Size, Size]


def _size(value: Size) -> ir.Value:
    return value if isinstance(value, ir.Value) else ir.Constant(I64, value)


def _product(b: ir.IRBuilder, x: Size, y: Size) -> Size:
    """``x * y``: a number where both are numbers."""
    if isinstance(x, int) and isinstance(y, int):
        return x * y
    return b.mul(_size(x), _size(y))


def _sum(b: ir.IRBuilder, x: Size, y: Size) -> Size:
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    return b.add(_size(x), _size(y))


class _Arithmetic:
    """The butterflies' complex arithmetic, in IEEE operations without fast-math flags:
    every value is defined by the IR, so any LLVM pipeline computes the same bits, and
    a transform's first-tier code may skip the IR pipeline (``tiering.ir_level``: a
    4096-point transform's first call 151 -> 28 ms, 1009 points 404 -> 57 ms). Products
    that are summed are explicit fused multiply-adds (``llvm.fma``, one rounding, an
    instruction on every x86-64 CPU since 2013), as the ``contract`` flag used to allow
    LLVM to make them: the long sums of the prime butterflies need them to stay within
    twice pocketfft's error."""

    def __init__(self, b: ir.IRBuilder, sign: int) -> None:
        self.b, self.sign = b, sign
        self._fma = b.module.declare_intrinsic("llvm.fma", [F64], ir.FunctionType(F64, [F64, F64, F64]))

    def add(self, x: Complex, y: Complex) -> Complex:
        return self.b.fadd(x[0], y[0]), self.b.fadd(x[1], y[1])

    def sub(self, x: Complex, y: Complex) -> Complex:
        return self.b.fsub(x[0], y[0]), self.b.fsub(x[1], y[1])

    def fma(self, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
        """``x * y + z``, rounded once."""
        return self.b.call(self._fma, [x, y, z])

    def mul(self, x: Complex, w: Complex) -> Complex:
        b = self.b
        return self.fma(x[0], w[0], b.fneg(b.fmul(x[1], w[1]))), self.fma(x[0], w[1], b.fmul(x[1], w[0]))

    def add_scaled(self, total: Complex, x: Complex, k: ir.Value) -> Complex:
        """``total + x * k`` for a real ``k``."""
        return self.fma(x[0], k, total[0]), self.fma(x[1], k, total[1])

    def scale(self, x: Complex, c: float | ir.Value) -> Complex:
        return self.scale_by(x, c if isinstance(c, ir.Value) else ir.Constant(F64, c))

    def scale_by(self, x: Complex, k: ir.Value) -> Complex:
        return self.b.fmul(x[0], k), self.b.fmul(x[1], k)

    def rotate(self, x: Complex) -> Complex:
        """``sign * i * x``: a quarter turn in the transform's direction, exact."""
        b = self.b
        return (b.fneg(x[1]), x[0]) if self.sign > 0 else (x[1], b.fneg(x[0]))

    def butterfly(self, a: Sequence[Complex]) -> list[Complex]:
        """The DFT of ``a`` (2, 4, 8 or an odd prime number of points)."""
        r = len(a)
        if r == 2:
            return [self.add(a[0], a[1]), self.sub(a[0], a[1])]
        if r == 4:
            apc, amc, bpd = self.add(a[0], a[2]), self.sub(a[0], a[2]), self.add(a[1], a[3])
            rot = self.rotate(self.sub(a[1], a[3]))
            return [self.add(apc, bpd), self.add(amc, rot), self.sub(apc, bpd), self.sub(amc, rot)]
        if r == 8:  # two of 4 points, the odd one's terms times w_8^k = ((1 + sign i) / sqrt 2)^k
            even, odd = self.butterfly(a[0::2]), self.butterfly(a[1::2])
            half = math.sqrt(0.5)
            odd = [odd[0], self.scale(self.add(odd[1], self.rotate(odd[1])), half), self.rotate(odd[2]),
                   self.scale(self.sub(self.rotate(odd[3]), odd[3]), half)]
            return [self.add(e, o) for e, o in zip(even, odd)] + [self.sub(e, o) for e, o in zip(even, odd)]
        return self._odd(a)

    def _odd(self, a: Sequence[Complex]) -> list[Complex]:
        """``y[k] = a0 + sum_j t_j cos(2 pi j k / r) + sign i sum_j u_j sin(2 pi j k / r)``
        over the pairs ``t_j = a[j] + a[r - j]``, ``u_j = a[j] - a[r - j]``; ``y[r - k]``
        takes the other sign."""
        r, half = len(a), len(a) // 2
        p = partial_sums(r)
        t = [self.add(a[j], a[r - j]) for j in range(1, half + 1)]
        u = [self.sub(a[j], a[r - j]) for j in range(1, half + 1)]
        y: list[Complex] = [a[0]] * r
        totals: list[Complex | None] = [a[0]] + [None] * (p - 1)
        for j, tj in enumerate(t):
            part = totals[j % p]
            totals[j % p] = tj if part is None else self.add(part, tj)
        y[0] = self.sum(totals)
        # cos and sin of 2 pi m / r as accurately as the twiddles (math.cos(2 * math.pi / 3)
        # is -0.4999999999999998)
        roots = unit(np.arange(r), r, 1)
        for k in range(1, half + 1):
            cs: list[Complex | None] = [a[0]] + [None] * (p - 1)
            ds: list[Complex | None] = [None] * p
            for j in range(1, half + 1):
                root, at = roots[j * k % r], (j - 1) % p
                cosine, sine = ir.Constant(F64, float(root.real)), ir.Constant(F64, float(root.imag))
                c, d = cs[at], ds[at]
                cs[at] = self.scale_by(t[j - 1], cosine) if c is None else self.add_scaled(c, t[j - 1], cosine)
                ds[at] = self.scale_by(u[j - 1], sine) if d is None else self.add_scaled(d, u[j - 1], sine)
            c, rot = self.sum(cs), self.rotate(self.sum(ds))
            y[k], y[r - k] = self.add(c, rot), self.sub(c, rot)
        return y

    def sum(self, parts: Sequence[Complex | None]) -> Complex:
        """The sum of the partial sums in ``parts`` (None: none there), pairwise."""
        values = [v for v in parts if v is not None]
        while len(values) > 1:
            values = [self.add(*values[i:i + 2]) if i + 1 < len(values) else values[i] for i in range(0, len(values), 2)]
        return values[0]


# --- the routine -------------------------------------------------------------------------------

def stockham_fft(module: ir.Module, name: str, suffix: str) -> ir.Function:
    """Generate ``name`` in ``module``: ``suffix`` is ``forward<n>`` or ``backward<n>``, then
    ``s<stride>b<lines>`` for ``lines`` adjacent lines whose points are ``stride``
    elements apart in ``x`` and ``out``, or ``r<lines>`` for consecutive rows.

    ``realforward<n>`` and ``realbackward<n>`` (rows; n even) are the real kinds of the
    HLO ``fft``: RFFT reads n float64 as n/2 complex pairs, transforms them into scratch
    and splits that into its output rows of n/2 + 1 terms (:func:`_split`); IRFFT folds
    its n/2 + 1 terms into n/2 points (:func:`_fold`, scaled by 1/n), transforms them and
    stores them as the n float64 of its rows. Inside the routine, the step between the two
    transforms costs no pass over memory of its own (it was a third of a 1024-point RFFT
    as separate elementwise ops)."""
    if suffix.startswith("any"):
        return generic_fft(module, name, suffix)
    match = _NAME.fullmatch(suffix)
    real = match is not None and match.group(1) is not None
    if match is None or (real and (int(match.group(3)) % 2 or match.group(4))) or \
            radices(int(match.group(3)) // (2 if real else 1)) is None:
        raise ValueError(f"llvm-cpu: no FFT routine {name!r}")
    sign, length = (-1 if match.group(2) == "forward" else 1), int(match.group(3))
    n = length // 2 if real else length  # the complex transform's points
    stride, lines = int(match.group(4) or 1), int(match.group(5) or match.group(6) or 1)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, PTR, I64, PTR]), name)
    fn.linkage = "internal"
    x, x_offset, out, out_offset, table = fn.args
    for pointer in (x, out, table):
        pointer.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    stages = fft_plan.stages(n) or [Stage(1, 1, 1, 0)]  # n = 1: a copy
    cells = _cells(b, max(st.radix for st in stages))
    two = ir.Constant(I64, 2)
    # A buffer is (base, elements between points, elements between lines); the real
    # kinds' rows of terms have n + 1 of them.
    terms = (1, n + 1)
    steps = (stride, 1) if stride != 1 else (1, n)
    source = (b.gep(x, [b.mul(x_offset, two)], source_etype=F64), *(terms if real and sign > 0 else steps))
    target = (b.gep(out, [b.mul(out_offset, two)], source_etype=F64), *(terms if real and sign < 0 else steps))
    # The stages ping-pong between two buffers, the last writing the output (RFFT: the
    # scratch its split reads): the output and a scratch row when lines are rows one at a
    # time, else two scratch blocks holding the lines interleaved (point e of line l at
    # e * lines + l). The real kinds' step reads one buffer and writes another, so that
    # its loop vectorises: IRFFT folds into the buffer its first stage reads.
    blocks = 0 if not real and len(stages) == 1 else 1 if lines == 1 or len(stages) == 1 else 2
    points = n + 1 if real and sign < 0 else n
    scratch = _malloc_or_nan(module, fn, b, n * lines * blocks, points, lines, target) if blocks else None
    first_block: Buffer = (scratch, lines, 1)
    other = target if lines == 1 or blocks < 2 else \
        (b.gep(scratch, [ir.Constant(I64, 2 * n * lines)], source_etype=F64), lines, 1)
    last = first_block if real and sign < 0 else target
    pair = (first_block, other) if real and sign < 0 else (other, first_block)

    def written(number: int) -> Buffer:
        """The buffer stage ``number`` writes (-1: the one the first stage reads)."""
        left = len(stages) - 1 - number
        return last if not left else pair[left % 2]

    arithmetic = _Arithmetic(b, sign)
    src = source
    if real and sign > 0:
        src = written(-1)
        _fold(fn, b, arithmetic, n, lines, source, src, table, table_size(n))
    for number, stage in enumerate(stages):
        dst = written(number)
        _emit_stage(fn, b, arithmetic, stage.radix, stage.m, stage.s, stage.table, stage.m > 1, lines, src, dst,
                    table, cells)
        src = dst
    if real and sign < 0:
        _split(fn, b, arithmetic, n, lines, src, target, table, table_size(n))
    if scratch is not None:
        free = module.globals.get("free") or ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), "free")
        b.call(free, [scratch])
    b.ret_void()
    return fn


_ANY = re.compile(r"any(real|oddreal)?(bluestein)?(forward|backward)?")


def generic_symbol(sign: int, real: bool = False, odd: bool = False, bluestein: bool = False) -> str:
    """The routine of any length: one row of the complex transform, or of the real kinds
    of even n (RFFT forward, IRFFT backward), or (``odd``) IRFFT of odd n, with
    ``exp(sign 2 pi i ...)``; with ``bluestein``, the complex transform by Bluestein's
    algorithm (its sign is its plan's: the routine is one for both)."""
    kind = "oddreal" if odd else "real" if real else ""
    direction = "" if bluestein and not odd else "forward" if sign < 0 else "backward"
    return f"{GENERIC_FFT_PREFIX}{kind}{'bluestein' if bluestein else ''}{direction}"


def generic_fft(module: ir.Module, name: str, suffix: str) -> ir.Function:
    """Generate ``name``, the routine of ``suffix`` (:func:`generic_symbol`'s after the
    prefix): ``void f(ptr x, ptr out, ptr plan, i64 n, i64 row)`` transforms row ``row``
    of ``x`` into that of ``out`` as its plan says (``fft_plan.plan``,
    ``fft_plan.bluestein_plan``): :func:`_rows_routine`, :func:`_odd_irfft`,
    :func:`_bluestein`."""
    match = _ANY.fullmatch(suffix)
    kind, bluestein, direction = match.groups() if match is not None else (None, None, None)
    if match is None or (direction is None) != (bluestein is not None and kind is None) or \
            (kind == "oddreal" and direction != "backward") or (kind == "real" and bluestein):
        raise ValueError(f"llvm-cpu: no FFT routine {name!r}")
    if kind == "oddreal":
        return _odd_irfft(module, name, bluestein is not None)
    if bluestein:
        return _bluestein(module, name)
    return _rows_routine(module, name, kind == "real", -1 if direction == "forward" else 1)


def _row_function(module: ir.Module, name: str) -> tuple[ir.Function, ir.IRBuilder]:
    """A routine of any length, ``void f(ptr x, ptr out, ptr plan, i64 n, i64 row)`` (the
    pointers distinct), and a builder at its entry."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, I64, I64]), name)
    fn.linkage = "internal"
    for pointer in fn.args[:3]:
        pointer.add_attribute("noalias")
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def _free(module: ir.Module, b: ir.IRBuilder, scratch: ir.Value) -> None:
    free = module.globals.get("free") or ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), "free")
    b.call(free, [scratch])


def _word(b: ir.IRBuilder, plan: ir.Value, at: ir.Value) -> ir.Value:
    """Word ``at`` of a plan's header (int64, ``fft_plan.plan``)."""
    return b.load(b.gep(plan, [at], source_etype=I64), typ=I64)


def _defined(module: ir.Module, name: str, make: Callable[[], ir.Function]) -> ir.Function:
    """The routine ``name`` of ``module``, made by ``make`` if it has none yet."""
    found = module.globals.get(name)
    return found if found is not None else make()


def _rows_routine(module: ir.Module, name: str, real: bool, sign: int) -> ir.Function:
    """``name``: row ``row`` of ``x`` transformed into that of ``out`` (n complex points
    each; the real kinds: n float64 and n / 2 + 1 terms), with the stages and twiddles of
    its plan (``fft_plan.plan``). Each stage is a call of the stage function of its radix
    (:func:`_stage_function`), whose butterflies are those that code made for one length
    emits (:func:`_emit_stage`, the same IR with run-time trip counts), on the same
    twiddles: the results are the same bits. The stages ping-pong between the output and
    scratch (the real kinds: two scratch rows, the step between the transforms reading
    one and writing another), the parity chosen at run time so that the last stage
    writes the output (RFFT: the scratch its split reads)."""
    fn, b = _row_function(module, name)
    x, out, plan, length, row = fn.args
    one, two, zero = ir.Constant(I64, 1), ir.Constant(I64, 2), ir.Constant(I64, 0)

    def word(at: ir.Value) -> ir.Value:
        return _word(b, plan, at)

    header, count, factors = (word(ir.Constant(I64, i)) for i in range(3))
    table = b.gep(plan, [b.mul(header, two)], source_etype=F64)
    n = b.lshr(length, one) if real else length  # the complex transform's points
    terms = b.add(n, one)
    # Where the rows start, in doubles: n points, n + 1 terms, or n float64 (n / 2 points).
    x_row, out_row = (length, b.mul(terms, two)) if real and sign < 0 else \
        (b.mul(terms, two), length) if real else (b.mul(n, two), b.mul(n, two))
    source: Buffer = (b.gep(x, [b.mul(row, x_row)], source_etype=F64), 1, 0)
    target: Buffer = (b.gep(out, [b.mul(row, out_row)], source_etype=F64), 1, 0)
    scratch = _malloc_or_nan(module, fn, b, b.mul(n, two), terms if real and sign < 0 else n, 1, target)
    first: Buffer = (scratch, 1, 0)
    second: Buffer = (b.gep(scratch, [b.mul(n, two)], source_etype=F64), 1, 0)
    last, other = (first, second) if real and sign < 0 else (target, first)

    def written(left: ir.Value) -> Buffer:
        """The buffer a stage writes with ``left`` stages after it."""
        even = b.icmp_unsigned("==", b.and_(left, one), zero)
        return b.select(even, last[0], other[0]), 1, 0

    arithmetic = _Arithmetic(b, sign)
    src = source
    if real and sign > 0:
        src = written(count)
        _fold(fn, b, arithmetic, n, 1, source, src, table, factors)
    elif not real:  # n = 1: no stage, a copy
        copy, stages_block = fn.append_basic_block("copy"), fn.append_basic_block("any.stages")
        b.cbranch(b.icmp_unsigned("==", count, zero), copy, stages_block)
        b.position_at_end(copy)
        _store(b, _point(b, target, zero, zero), _load(b, _point(b, source, zero, zero)))
        b.branch(stages_block)
        b.position_at_end(stages_block)
    stage = Loop(b, fn, zero, count, "stage")
    at = b.add(ir.Constant(I64, fft_plan.HEADER_WORDS), b.mul(stage.i, ir.Constant(I64, fft_plan.STAGE_WORDS)))
    radix, m, s, offset = (word(b.add(at, ir.Constant(I64, i))) for i in range(fft_plan.STAGE_WORDS))
    reads = b.select(b.icmp_unsigned("==", stage.i, zero), src[0], written(b.sub(count, stage.i))[0])
    writes = written(b.sub(b.sub(count, stage.i), one))[0]
    done = fn.append_basic_block("stage.done")
    switch = b.switch(radix, done)  # a plan holds no other radix
    for r in fft_plan.RADICES:
        case = fn.append_basic_block(f"radix{r}")
        switch.add_case(ir.Constant(I64, r), case)
        b.position_at_end(case)
        twiddled, plain = fn.append_basic_block(f"radix{r}.twiddled"), fn.append_basic_block(f"radix{r}.plain")
        b.cbranch(b.icmp_signed(">", m, one), twiddled, plain)
        for block, with_twiddles in ((twiddled, True), (plain, False)):
            b.position_at_end(block)
            b.call(_stage_function(module, name, r, with_twiddles, sign), [reads, writes, table, m, s, offset])
            b.branch(done)
    b.position_at_end(done)
    stage.close()
    if real and sign < 0:  # n = 1 (no stage): the split reads the signal itself
        transformed = b.select(b.icmp_unsigned("==", count, zero), source[0], last[0])
        _split(fn, b, arithmetic, n, 1, (transformed, 1, 0), target, table, factors)
    _free(module, b, scratch)
    b.ret_void()
    return fn


def _odd_irfft(module: ir.Module, name: str, bluestein: bool) -> ir.Function:
    """``name``: IRFFT of odd n from the n // 2 + 1 terms of row ``row`` of ``x``, as the
    expansion does it (``codegen/lowerings/fft.py``): the full spectrum from its
    conjugate mirror (the first term's imaginary part +0), the backward transform of n
    points (``anybackward``'s, or with ``bluestein`` :func:`_bluestein`'s, into scratch),
    and the real part of each point times ``1 / n + 0i`` in complex multiplication's own
    operations (``re * (1 / n) - im * 0``, which keeps its NaNs and signed zeros)."""
    fn, b = _row_function(module, name)
    x, out, plan, n, row = fn.args
    one, two, zero = ir.Constant(I64, 1), ir.Constant(I64, 2), ir.Constant(I64, 0)
    terms = b.add(b.lshr(n, one), one)
    source: Buffer = (b.gep(x, [b.mul(row, b.mul(terms, two))], source_etype=F64), 1, 0)
    target = b.gep(out, [b.mul(row, n)], source_etype=F64)

    def nan() -> None:  # n float64, as _malloc_or_nan writes points
        doubles = Loop(b, fn, zero, n, "nan")
        b.store(ir.Constant(F64, math.nan), b.gep(target, [doubles.i], source_etype=F64))
        doubles.close()

    scratch = _malloc_or(module, fn, b, b.mul(n, ir.Constant(I64, 32)), nan)  # 2 n points
    full: Buffer = (scratch, 1, 0)
    transformed = b.gep(scratch, [b.mul(n, two)], source_etype=F64)
    first = _load(b, _point(b, source, zero, zero))
    _store(b, _point(b, full, zero, zero), (first[0], ir.Constant(F64, 0.0)))
    mirror = Loop(b, fn, one, terms, "mirror")
    term = _load(b, _point(b, source, mirror.i, zero))
    _store(b, _point(b, full, mirror.i, zero), term)
    _store(b, _point(b, full, b.sub(n, mirror.i), zero), (term[0], b.fneg(term[1])))
    mirror.close()
    inner = generic_symbol(1, bluestein=bluestein)
    backward = _defined(module, inner, lambda: _bluestein(module, inner) if bluestein else
                        _rows_routine(module, inner, False, 1))
    b.call(backward, [scratch, transformed, plan, n, zero])
    scale = b.fdiv(ir.Constant(F64, 1.0), b.uitofp(n, F64))
    point = Loop(b, fn, zero, n, "real")
    re, im = _load(b, _point(b, (transformed, 1, 0), point.i, zero))
    b.store(b.fsub(b.fmul(re, scale), b.fmul(im, ir.Constant(F64, 0.0))), b.gep(target, [point.i], source_etype=F64))
    point.close()
    _free(module, b, scratch)
    b.ret_void()
    return fn


def _complex_product(b: ir.IRBuilder, x: Complex, y: Complex) -> Complex:
    """``x * y`` in the HLO ``multiply``'s operations on complex values
    (the emitter's ``complex.mul``): ``(a c - b d, a d + b c)``, no fused multiply-add."""
    return b.fsub(b.fmul(x[0], y[0]), b.fmul(x[1], y[1])), b.fadd(b.fmul(x[0], y[1]), b.fmul(x[1], y[0]))


def _bluestein(module: ir.Module, name: str) -> ir.Function:
    """``name``: the transform of row ``row`` of ``x`` (n complex points) by Bluestein's
    algorithm, as the expansion computes it (``codegen/lowerings/fft.py``'s
    ``_bluestein``): the row times the chirp, zero-padded to m points, transformed forward
    (``anyforward``), times the response's spectrum, transformed backward
    (``anybackward``), its first n points times the chirp; each product in the HLO
    ``multiply``'s operations (:func:`_complex_product`). The plan
    (``fft_plan.bluestein_plan``) holds m, the chirp, the spectrum and the plans of m
    points both ways; the chirp's sign is the transform's."""
    fn, b = _row_function(module, name)
    x, out, plan, n, row = fn.args
    zero, two = ir.Constant(I64, 0), ir.Constant(I64, 2)

    def word(i: int) -> ir.Value:
        return _word(b, plan, ir.Constant(I64, i))

    def part(at: ir.Value) -> ir.Value:  # a table at complex element ``at`` of the plan
        return b.gep(plan, [b.mul(at, two)], source_etype=F64)

    m = word(1)
    chirp, spectrum, forward_plan, backward_plan = (part(word(i)) for i in range(2, 6))
    source: Buffer = (b.gep(x, [b.mul(row, b.mul(n, two))], source_etype=F64), 1, 0)
    target: Buffer = (b.gep(out, [b.mul(row, b.mul(n, two))], source_etype=F64), 1, 0)
    scratch = _malloc_or_nan(module, fn, b, b.mul(m, two), n, 1, target)
    padded: Buffer = (scratch, 1, 0)
    transformed: Buffer = (b.gep(scratch, [b.mul(m, two)], source_etype=F64), 1, 0)

    def at(buffer: Buffer, i: ir.Value) -> tuple[ir.Value, ir.Value]:
        return _point(b, buffer, i, zero)

    chirps: Buffer = (chirp, 1, 0)
    j = Loop(b, fn, zero, n, "chirped")
    _store(b, at(padded, j.i), _complex_product(b, _load(b, at(source, j.i)), _load(b, at(chirps, j.i))))
    j.close()
    pad = Loop(b, fn, n, m, "pad")
    _store(b, at(padded, pad.i), (ir.Constant(F64, 0.0), ir.Constant(F64, 0.0)))
    pad.close()
    forward = _defined(module, generic_symbol(-1), lambda: _rows_routine(module, generic_symbol(-1), False, -1))
    backward = _defined(module, generic_symbol(1), lambda: _rows_routine(module, generic_symbol(1), False, 1))
    b.call(forward, [scratch, transformed[0], forward_plan, m, zero])
    k = Loop(b, fn, zero, m, "spectrum")
    _store(b, at(padded, k.i), _complex_product(b, _load(b, at(transformed, k.i)), _load(b, at((spectrum, 1, 0), k.i))))
    k.close()
    b.call(backward, [scratch, transformed[0], backward_plan, m, zero])
    j = Loop(b, fn, zero, n, "unchirped")
    _store(b, at(target, j.i), _complex_product(b, _load(b, at(transformed, j.i)), _load(b, at(chirps, j.i))))
    j.close()
    _free(module, b, scratch)
    b.ret_void()
    return fn


def _stage_function(module: ir.Module, routine: str, r: int, twiddled: bool, sign: int) -> ir.Function:
    """``void f(ptr src, ptr dst, ptr table, i64 m, i64 s, i64 offset)``: one stage of
    radix ``r`` of one row (:func:`_emit_stage`), defined in ``module`` on first use."""
    name = f"{routine}.radix{r}{'.twiddled' if twiddled else ''}"
    if name in module.globals:
        return module.globals[name]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, I64, I64, I64]), name)
    fn.linkage = "internal"
    src, dst, table, m, s, offset = fn.args
    for pointer in (src, dst, table):
        pointer.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    cells = _cells(b, r)
    _emit_stage(fn, b, _Arithmetic(b, sign), r, m, s, offset, twiddled, 1, (src, 1, 0), (dst, 1, 0), table, cells)
    b.ret_void()
    return fn


def _cells(b: ir.IRBuilder, largest: int) -> tuple[ir.Value, ...] | None:
    """Stack cells of the looped butterflies (:func:`_looped_odd`) up to radix ``largest``,
    made in the entry block; None where every radix up to it is straight-line code."""
    if largest <= LARGEST_UNROLLED_PRIME:
        return None
    return (b.alloca(F64, size=ir.Constant(I64, 2 * largest - 2)),
            b.alloca(F64, size=ir.Constant(I64, 4 * PARTIAL_SUMS)), b.alloca(I64))


def _point(b: ir.IRBuilder, buffer: Buffer, element: ir.Value, line: ir.Value) -> tuple[ir.Value, ir.Value]:
    """The addresses of the real and imaginary parts of point ``element`` of ``line``."""
    base, point_step, line_step = buffer
    first = b.add(b.mul(element, _size(point_step)), b.mul(line, _size(line_step)))
    first = b.mul(first, ir.Constant(I64, 2))
    return (b.gep(base, [first], source_etype=F64),
            b.gep(base, [b.add(first, ir.Constant(I64, 1))], source_etype=F64))


def _load(b: ir.IRBuilder, address: tuple[ir.Value, ir.Value]) -> Complex:
    return b.load(address[0], typ=F64), b.load(address[1], typ=F64)


def _store(b: ir.IRBuilder, address: tuple[ir.Value, ir.Value], value: Complex) -> None:
    b.store(value[0], address[0])
    b.store(value[1], address[1])


def _mirrored(fn: ir.Function, b: ir.IRBuilder, c: _Arithmetic, n: Size, lines: int, src: Buffer, dst: Buffer,
              table: ir.Value, offset: Size, scale: float | ir.Value) -> None:
    """For each line and 0 < k < n, with ``a = src[k]``, ``z = conj(src[n - k])`` and the
    table's factor ``t[k]`` at ``offset + k``: ``dst[k] = scale ((a + z) + t[k] (a - z))``,
    the step between a real signal's transform and the n-point complex one, both ways.
    ``dst`` is not ``src``. On one contiguous line, two points at a time in vectors of
    four doubles (:func:`_mirrored_pairs`), then the last point if n - 1 is odd."""
    first = ir.Constant(I64, 1)
    if lines == 1 and src[1] == dst[1] == 1:
        pairs = (n - 1) // 2 if isinstance(n, int) else b.lshr(b.sub(n, ir.Constant(I64, 1)), ir.Constant(I64, 1))
        if pairs:  # a run-time value: maybe none, the loop then runs no trip
            _mirrored_pairs(fn, b, n, pairs, src, dst, table, offset, scale)
        first = _size(_sum(b, 1, _product(b, 2, pairs)))
    line_loop = Loop(b, fn, ir.Constant(I64, 0), ir.Constant(I64, lines), "mirror.l") if lines > 1 else None
    line = line_loop.i if line_loop is not None else ir.Constant(I64, 0)
    k_loop = Loop(b, fn, first, _size(n), "mirror.k")
    k = k_loop.i
    a, z = _load(b, _point(b, src, k, line)), _load(b, _point(b, src, b.sub(_size(n), k), line))
    z = (z[0], b.fneg(z[1]))
    at_k = b.mul(b.add(k, _size(offset)), ir.Constant(I64, 2))
    t = _load(b, (b.gep(table, [at_k], source_etype=F64),
                  b.gep(table, [b.add(at_k, ir.Constant(I64, 1))], source_etype=F64)))
    _store(b, _point(b, dst, k, line), c.scale(c.add(c.add(a, z), c.mul(c.sub(a, z), t)), scale))
    k_loop.close()
    if line_loop is not None:
        line_loop.close()


V4 = ir.VectorType(F64, 4)


def _mirrored_pairs(fn: ir.Function, b: ir.IRBuilder, n: Size, pairs: Size, src: Buffer, dst: Buffer,
                    table: ir.Value, offset: Size, scale: float | ir.Value) -> None:
    """:func:`_mirrored` for k = 1 ... 2 ``pairs`` of one contiguous line, the points k and
    k + 1 as one vector (re, im, re, im): the same operations per lane as the scalar step
    (so the same bits), written for the vector unit. Left to LLVM, the scalar step was
    vectorised with shuffles around every load and store to split real and imaginary parts:
    0.65 us of a 1024-point RFFT's 2.35, against 0.42 of 2.11 written so."""
    fma = b.module.globals.get("llvm.fma.v4f64") or \
        ir.Function(b.module, ir.FunctionType(V4, [V4, V4, V4]), "llvm.fma.v4f64")  # llvmlite names scalar ones only

    def lanes(x: ir.Value, y: ir.Value, order: tuple[int, ...]) -> ir.Value:
        return b.shuffle_vector(x, y, ir.Constant(ir.VectorType(ir.IntType(32), 4), order))

    def at(base: ir.Value, point: ir.Value) -> ir.Value:
        return b.gep(base, [b.mul(point, ir.Constant(I64, 2))], source_etype=F64)

    loop = Loop(b, fn, ir.Constant(I64, 0), _size(pairs), "mirror.v")
    k = b.add(b.mul(loop.i, ir.Constant(I64, 2)), ir.Constant(I64, 1))
    a = b.load(at(src[0], k), typ=V4, align=8)
    mirrored = b.load(at(src[0], b.sub(_size(_sum(b, n, -1)), k)), typ=V4, align=8)  # points n-k-1, n-k
    mirrored = lanes(mirrored, mirrored, (2, 3, 0, 1))
    z = lanes(mirrored, b.fneg(mirrored), (0, 5, 2, 7))  # conj
    t = b.load(at(table, b.add(k, _size(offset))), typ=V4, align=8)
    e = b.fadd(a, z)
    d = b.fsub(a, z)
    # t d: re = fma(d.re, t.re, -(d.im t.im)), im = fma(d.re, t.im, d.im t.re), as _Arithmetic.mul
    quarter = b.load(at(table, b.add(k, _size(_sum(b, offset, n)))), typ=V4, align=8)  # i t: (-t.im, t.re)
    product = b.call(fma, [lanes(d, d, (0, 0, 2, 2)), t, b.fmul(lanes(d, d, (1, 1, 3, 3)), quarter)])
    b.store(b.fmul(b.fadd(e, product), _splat(b, scale)), at(dst[0], k), align=8)
    loop.close()


def _splat(b: ir.IRBuilder, scale: float | ir.Value) -> ir.Value:
    """``scale`` in each lane of a vector of four doubles."""
    if not isinstance(scale, ir.Value):
        return ir.Constant(V4, [scale] * 4)
    vector = ir.Constant(V4, ir.Undefined)
    for lane in range(4):
        vector = b.insert_element(vector, scale, ir.Constant(ir.IntType(32), lane))
    return vector


def _split(fn: ir.Function, b: ir.IRBuilder, c: _Arithmetic, n: Size, lines: int, src: Buffer, rows: Buffer,
           table: ir.Value, offset: Size) -> None:
    """RFFT's last step, from ``src`` (Z, the n-point transform of the pairs ``z[j] = x[2j]
    + i x[2j + 1]``) to ``rows`` (n + 1 terms each):
    ``X[k] = ((Z[k] + conj(Z[n - k])) - i w^k (Z[k] - conj(Z[n - k]))) / 2`` with
    ``w = exp(-pi i / n)``; ``X[0]`` and ``X[n]`` (real) exactly."""
    _mirrored(fn, b, c, n, lines, src, rows, table, offset, 0.5)
    zero = ir.Constant(F64, 0.0)
    for line in range(lines):
        at = ir.Constant(I64, line)
        z0 = _load(b, _point(b, src, ir.Constant(I64, 0), at))
        _store(b, _point(b, rows, ir.Constant(I64, 0), at), (b.fadd(z0[0], z0[1]), zero))
        _store(b, _point(b, rows, _size(n), at), (b.fsub(z0[0], z0[1]), zero))


def _fold(fn: ir.Function, b: ir.IRBuilder, c: _Arithmetic, n: Size, lines: int, rows: Buffer, dst: Buffer,
          table: ir.Value, offset: Size) -> None:
    """IRFFT's first step: the n points ``Z[k] = ((X[k] + conj(X[n - k])) + i w^-k (X[k] -
    conj(X[n - k]))) / 2n`` of the terms ``X`` in ``rows`` (n + 1 each), so that the
    n-point backward transform of ``Z`` is ``x[2j] + i x[2j + 1]``; the imaginary parts of
    ``X[0]`` and ``X[n]`` are ignored, as NumPy does."""
    # 1 / 2n rounded once, as Python divides (2n is exact in a double)
    scale = 1.0 / (2 * n) if isinstance(n, int) else \
        b.fdiv(ir.Constant(F64, 1.0), b.uitofp(b.mul(n, ir.Constant(I64, 2)), F64))
    _mirrored(fn, b, c, n, lines, rows, dst, table, offset, scale)
    for line in range(lines):
        at = ir.Constant(I64, line)
        first = b.load(_point(b, rows, ir.Constant(I64, 0), at)[0], typ=F64)
        last = b.load(_point(b, rows, _size(n), at)[0], typ=F64)
        _store(b, _point(b, dst, ir.Constant(I64, 0), at), c.scale((b.fadd(first, last), b.fsub(first, last)), scale))


def _malloc_or_nan(module: ir.Module, fn: ir.Function, b: ir.IRBuilder, size: Size, n: Size, lines: int,
                   target: Buffer) -> ir.Value:
    """Scratch of ``size`` points from malloc; if there is none, the routine writes NaN to
    its n points of ``lines`` lines and returns (a result that says so, never a crash)."""

    def nan() -> None:
        points = Loop(b, fn, ir.Constant(I64, 0), _size(n), "nan.e")
        line = Loop(b, fn, ir.Constant(I64, 0), ir.Constant(I64, lines), "nan.l")
        first = b.mul(b.add(b.mul(points.i, _size(target[1])), b.mul(line.i, _size(target[2]))),
                      ir.Constant(I64, 2))
        for part in (first, b.add(first, ir.Constant(I64, 1))):
            b.store(ir.Constant(F64, math.nan), b.gep(target[0], [part], source_etype=F64))
        line.close()
        points.close()

    return _malloc_or(module, fn, b, _size(_product(b, 16, size)), nan)


def _malloc_or(module: ir.Module, fn: ir.Function, b: ir.IRBuilder, nbytes: ir.Value,
               failed: Callable[[], None]) -> ir.Value:
    """``nbytes`` from malloc; where there are none, the code ``failed`` emits runs and the
    routine returns."""
    malloc = module.globals.get("malloc") or ir.Function(module, ir.FunctionType(PTR, [I64]), "malloc")
    scratch = b.call(malloc, [nbytes])
    missing, ok = fn.append_basic_block("no_scratch"), fn.append_basic_block("stages")
    b.cbranch(b.icmp_unsigned("==", scratch, ir.Constant(PTR, None)), missing, ok)
    b.position_at_end(missing)
    failed()
    b.ret_void()
    b.position_at_end(ok)
    return scratch


def _emit_stage(fn: ir.Function, b: ir.IRBuilder, c: _Arithmetic, r: int, m: Size, s: Size, offset: Size,
                twiddled: bool, lines: int, src: Buffer, dst: Buffer, table: ir.Value,
                cells: tuple[ir.Value, ...] | None) -> None:
    """One stage of radix ``r`` (``fft_plan.Stage``: its twiddles at ``offset``, multiplied
    in where ``twiddled``, that is m > 1): for p < m, for q < s, for each line, a
    butterfly (a loop where the trip count is above 1, or a run-time value). Point e of
    line l of a buffer (base, point step, line step) is at ``e * point step + l * line step``."""

    def loop(trips: Size, name: str) -> Loop | None:
        return Loop(b, fn, ir.Constant(I64, 0), _size(trips), name) \
            if isinstance(trips, ir.Value) or trips > 1 else None

    def at(buffer: Buffer, element: ir.Value) -> tuple[ir.Value, ir.Value]:
        return _point(b, buffer, element, line)

    def index(i: Loop | None) -> ir.Value:
        return i.i if i is not None else ir.Constant(I64, 0)

    p_loop = loop(m, "p")
    p = index(p_loop)
    first = b.add(_size(_product(b, 2, offset)), b.mul(p, ir.Constant(I64, 2 * (r - 1))))

    def twiddle(k: ir.Value) -> Complex:  # w^(p k), k >= 1
        at_k = b.add(first, b.mul(b.sub(k, ir.Constant(I64, 1)), ir.Constant(I64, 2)))
        return (b.load(b.gep(table, [at_k], source_etype=F64), typ=F64),
                b.load(b.gep(table, [b.add(at_k, ir.Constant(I64, 1))], source_etype=F64), typ=F64))

    w = [twiddle(ir.Constant(I64, k)) for k in range(1, r)] if twiddled and r <= LARGEST_UNROLLED_PRIME else []
    q_loop = loop(s, "q")
    line_loop = loop(lines, "l")
    line = index(line_loop)
    q = index(q_loop)
    read = b.add(q, b.mul(p, _size(s)))
    written = b.add(q, b.mul(p, _size(_product(b, s, r))))
    between = _size(_product(b, s, m))

    def load(j: ir.Value) -> Complex:
        return _load(b, at(src, b.add(read, b.mul(j, between))))

    def store(k: ir.Value, value: Complex) -> None:
        _store(b, at(dst, b.add(written, b.mul(k, _size(s)))), value)

    if r > LARGEST_UNROLLED_PRIME:
        assert cells is not None  # allocated for every looped radix
        _looped_odd(fn, b, c, r, cells, load, store, twiddle if twiddled else None)
    else:
        a = [load(ir.Constant(I64, j)) for j in range(r)]
        y = c.butterfly(a) if r > 1 else a
        for k in range(r):
            store(ir.Constant(I64, k), c.mul(y[k], w[k - 1]) if k and twiddled else y[k])
    for inner in (line_loop, q_loop, p_loop):
        if inner is not None:
            inner.close()


def _looped_odd(fn: ir.Function, b: ir.IRBuilder, c: _Arithmetic, r: int, cells: tuple[ir.Value, ...],
                load: Callable[[ir.Value], Complex], store: Callable[[ir.Value, Complex], None],
                twiddle: Callable[[ir.Value], Complex] | None) -> None:
    """The r-point butterfly of ``_Arithmetic._odd``, with loops over j and k instead of
    r^2 / 2 straight-line terms (which take LLVM seconds to compile for r above
    ``LARGEST_UNROLLED_PRIME``): the pairs ``t_j``, ``u_j`` (2 r - 2 doubles), the partial
    sums (re, im of the cosine and sine parts of each: registers once LLVM promotes them)
    and the root's index j k mod r (kept by adding k) in ``cells`` on the stack, the roots
    from a constant table. The loops over j take ``PARTIAL_SUMS`` terms a trip, one into
    each sum, so every sum stays at a fixed place."""
    half, p = r // 2, partial_sums(r)
    pairs, sums, turn = cells
    roots = _roots(fn, r)
    one, const = ir.Constant(I64, 1), lambda v: ir.Constant(I64, v)
    zero = (ir.Constant(F64, 0.0), ir.Constant(F64, 0.0))

    def cell(array: ir.Value, i: ir.Value) -> ir.Value:
        return b.gep(array, [i], source_etype=F64)

    def read(array: ir.Value, i: ir.Value) -> Complex:
        return b.load(cell(array, i), typ=F64), b.load(cell(array, b.add(i, one)), typ=F64)

    def write(array: ir.Value, i: ir.Value, value: Complex) -> None:
        b.store(value[0], cell(array, i))
        b.store(value[1], cell(array, b.add(i, one)))

    def over_terms(name: str, body: Callable[[ir.Value, int], None]) -> None:
        """``body(j, sum)`` for j = 1 ... half, term j into sum (j - 1) mod p."""
        groups, rest = divmod(half, p)
        loop = Loop(b, fn, const(0), const(groups), name)
        first = b.add(b.mul(loop.i, const(p)), one)
        for at in range(p):
            body(b.add(first, const(at)), at)
        loop.close()
        for at in range(rest):
            body(const(groups * p + at + 1), at)

    def summed(part: int) -> Complex:  # part 0: the cosine sums, 2: the sine sums
        return c.sum([read(sums, const(4 * at + part)) for at in range(p)])

    def start(first: Complex) -> None:
        for at in range(p):
            write(sums, const(4 * at), first if at == 0 else zero)
            write(sums, const(4 * at + 2), zero)

    def pair_of(j: ir.Value, at: int) -> None:
        aj, ar = load(j), load(b.sub(const(r), j))
        slot = b.mul(b.sub(j, one), const(4))
        t = c.add(aj, ar)
        write(pairs, slot, t)
        write(pairs, b.add(slot, const(2)), c.sub(aj, ar))
        write(sums, const(4 * at), c.add(read(sums, const(4 * at)), t))

    def term(j: ir.Value, at: int) -> None:
        at_root = b.load(turn, typ=I64)
        root = read(roots, b.mul(at_root, const(2)))
        following = b.add(at_root, k)
        b.store(b.select(b.icmp_signed(">=", following, const(r)), b.sub(following, const(r)), following), turn)
        slot = b.mul(b.sub(j, one), const(4))
        tj, uj = read(pairs, slot), read(pairs, b.add(slot, const(2)))
        write(sums, const(4 * at), c.add_scaled(read(sums, const(4 * at)), tj, root[0]))
        write(sums, const(4 * at + 2), c.add_scaled(read(sums, const(4 * at + 2)), uj, root[1]))

    a0 = load(const(0))
    start(a0)
    over_terms("j", pair_of)
    store(const(0), summed(0))
    output = Loop(b, fn, one, const(half + 1), "k")
    k = output.i
    start(a0)
    b.store(k, turn)
    over_terms("jk", term)
    cos_part, rot = summed(0), c.rotate(summed(2))
    mirror = b.sub(const(r), k)
    for index, value in ((k, c.add(cos_part, rot)), (mirror, c.sub(cos_part, rot))):
        store(index, c.mul(value, twiddle(index)) if twiddle is not None else value)
    output.close()


def _roots(fn: ir.Function, r: int) -> ir.GlobalVariable:
    """A constant table of ``cos, sin`` of ``2 pi m / r`` for m < r (``unit``'s accuracy)."""
    values = unit(np.arange(r), r, 1)
    array = ir.ArrayType(F64, 2 * r)
    table = ir.GlobalVariable(fn.module, array, name=f"{fn.name}.roots{r}")
    table.global_constant = True
    table.linkage = "internal"
    table.initializer = ir.Constant(array, [float(v) for z in values for v in (z.real, z.imag)])
    return table
