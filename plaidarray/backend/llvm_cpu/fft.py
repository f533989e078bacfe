"""llvm-cpu's lowering of the HLO ``fft`` op: the target-neutral expansion
(``codegen/lowerings/fft.py``) with the transforms of lines done by a compiled Stockham FFT
(``stockham.py``) wherever the length's prime factors have butterflies there (all
primes up to 127).

The lines' transform is the backend's own HLO op ``llvm_cpu.stockham_fft(x, twiddles)`` (in
its op namespace, ``platform.py``: no other backend meets it): ``x``
complex128, transformed along the attribute ``axis``; ``twiddles`` the constant table of
``fft_plan.twiddles`` (bound to the executable like any array constant, so a cached call
plans nothing); ``sign`` -1 forward, +1 backward, unscaled. Its kernel calls the runtime
routine once per block of lines (rows, or adjacent lines along an inner axis,
``LINES_AT_ONCE``); blocks are independent, so the loop over them is marked parallel and
a batch runs in chunks on the thread pool (``parallel.py``).

FFT and IFFT of a kernel length are one ``stockham_fft`` along the operand's own axis;
along another axis (``plaidarray.fft`` transposes the axis last and back) the kernel
reads the strided lines and the two transposes cancel. RFFT and IRFFT of an even n whose
half is a kernel length are one ``llvm_cpu.stockham_real_fft(x, twiddles)`` over the rows of ``x``
(sign -1: float64 signals to their n/2 + 1 terms; +1: terms to signals, scaled by 1/n):
its routine reads the signal as n/2 complex pairs, and the step between the half-length
transform and the real one happens inside it. Everything else goes through the expansion
with ``ROW_TRANSFORM`` as its row kernel, which keeps what surrounds it: the odd real kinds,
Bluestein's chirps (its convolution length is a kernel length), the scaling of IFFT and
the conversions of single precision.

:func:`lower_fft` is a stage of the compiler (``lower-fft``, before ``expand``: ``stages.py``);
an ``fft`` inside a loop or branch body is left to the generic expansion, whose twiddle
constants cannot be bound there yet (``codegen/expand.py`` says so).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i64

from ...codegen.lowering import Kernel, register_lowering
from ...hlo import Computation, Instruction
from ...hlo.ir import rebuild
from ...hlo.literal import Literal
from ...hlo.opdef import OpDef
from ...codegen.lowerings import fft
from ...hlo.shape import Shape
from . import fft_plan, stockham
from .fft_library import FFT_ROWS
from .platform import OPS, PLATFORM

_COMPLEX, _REAL = np.dtype(np.complex128), np.dtype(np.float64)
#: The opcodes of llvm-cpu's transforms.
STOCKHAM_FFT, STOCKHAM_REAL_FFT = "llvm_cpu.stockham_fft", "llvm_cpu.stockham_real_fft"


def _infer(shapes, attrs):
    x, table = shapes
    axis, sign = attrs.get("axis"), attrs.get("sign")
    if x.dtype != _COMPLEX or type(axis) is not int or not 0 <= axis < x.rank or sign not in (-1, 1) or \
            fft_plan.radices(x.dims[axis]) is None:
        raise ValueError(f"{STOCKHAM_FFT}: expects a complex128 array, an axis of a kernel length and sign -1 or 1, "
                         f"got {x} with axis={axis!r}, sign={sign!r}")
    if table.dims != (fft_plan.table_size(x.dims[axis]),) or table.dtype != _COMPLEX:
        raise ValueError(f"{STOCKHAM_FFT}: expects the twiddle table of n={x.dims[axis]}, got {table}")
    return x


def _evaluate(args, attrs, shape):
    x, axis = args[0], attrs["axis"]
    return np.fft.fft(x, axis=axis) if attrs["sign"] < 0 else np.fft.ifft(x, axis=axis) * x.shape[axis]


def _real_length(x: Shape, sign: object) -> int:
    """The n of ``stockham_real_fft`` on ``x``: its points (RFFT), or 2 (terms - 1) (IRFFT)."""
    return x.dims[-1] if sign == -1 else 2 * (x.dims[-1] - 1)


def _infer_real(shapes, attrs):
    x, table = shapes
    sign = attrs.get("sign")
    n = _real_length(x, sign) if x.rank else 0
    if sign not in (-1, 1) or x.dtype != (_REAL if sign == -1 else _COMPLEX) or n < 2 or n % 2 or \
            fft_plan.radices(n // 2) is None:
        raise ValueError(f"{STOCKHAM_REAL_FFT}: expects sign -1 and float64 rows of an even n, or sign 1 and "
                         f"complex128 rows of n / 2 + 1 terms, n / 2 a kernel length; got {x} with sign={sign!r}")
    if table.dims != (fft_plan.real_table_size(n),) or table.dtype != _COMPLEX:
        raise ValueError(f"{STOCKHAM_REAL_FFT}: expects the twiddle table of the real kinds of n={n}, got {table}")
    return Shape(x.dims[:-1] + ((n // 2 + 1,) if sign == -1 else (n,)), _COMPLEX if sign == -1 else _REAL)


def _evaluate_real(args, attrs, shape):
    x = args[0]
    if attrs["sign"] < 0:
        return np.fft.rfft(x, axis=-1)
    return np.fft.irfft(x, shape.dims[-1], axis=-1)


#: Lines transformed together by one call, interleaved in its scratch (the inner loop
#: over them vectorises; for lines along an inner axis, whose points are strided, the
#: first and last stage also touch a run of points per cache line and page): adjacent
#: lines along an inner axis, consecutive rows (measured best at 1024 points: 16 and 4).
LINES_AT_ONCE = {"strided": 16, "rows": 4}
#: The scratch of a call (two blocks of its lines) stays below 2 x this many points.
MAX_BLOCK = 1 << 16


def _lines_at_once(n: int, lines: int, most: int) -> int:
    """The power of two up to ``most`` that divides ``lines``, within ``MAX_BLOCK``."""
    return math.gcd(lines, most, 1 << max(0, (MAX_BLOCK // n).bit_length() - 1))


def _constant(k, value: int):
    """An i64 constant in the kernel ``k`` builds (the routines' offsets)."""
    return k.insert(arith.ConstantOp(IntegerAttr(value, i64)))


def _emit(k, inst, out, operands):
    """``before`` x ``after`` lines along the axis, each ``after`` elements between points;
    one call per ``lines`` rows (``after`` = 1) or adjacent lines."""
    x, table = operands
    dims, axis = inst.shape.dims, inst.attrs["axis"]
    n, before, after = dims[axis], math.prod(dims[:axis]), math.prod(dims[axis + 1:])
    if after == 1:
        lines = _lines_at_once(n, before, LINES_AT_ONCE["rows"])
        calls, blocks = before // lines, 1
    else:
        lines = _lines_at_once(n, after, LINES_AT_ONCE["strided"])
        blocks = after // lines
        calls = before * blocks
    routine = stockham.symbol(n, inst.attrs["sign"], after, lines)

    def line(ivs):
        number = k.insert(arith.IndexCastOp(ivs[0], i64))
        if after == 1:
            offset = k.insert(arith.MuliOp(number, _constant(k, n * lines)))
        else:  # the lines (i, j * lines ...) start at i * n * after + j * lines
            i = k.insert(arith.DivUIOp(number, _constant(k, blocks)))
            j = k.insert(arith.RemUIOp(number, _constant(k, blocks)))
            offset = k.insert(arith.AddiOp(k.insert(arith.MuliOp(i, _constant(k, n * after))),
                                           k.insert(arith.MuliOp(j, _constant(k, lines)))))
        k.call(routine, [x, offset, out, offset, table])

    if calls:
        # A line's work is about n log n loop iterations of an elementwise kernel.
        k.for_each((calls,), line, independent_work=calls * lines * n * max(1, math.ceil(math.log2(n))))


def _emit_real(k, inst, out, operands):
    """Rows of the real kinds, ``lines`` consecutive rows per call."""
    x, table = operands
    sign = inst.attrs["sign"]
    signal = inst.operands[0].shape if sign < 0 else inst.shape
    n, rows = signal.dims[-1], math.prod(signal.dims[:-1])
    half = n // 2
    lines = _lines_at_once(half, rows, LINES_AT_ONCE["rows"])
    routine = stockham.symbol(n, sign, 1, lines, real=True)
    # Offsets count complex points: a row of the signal holds n / 2, of the terms n / 2 + 1.
    x_row, out_row = (half, half + 1) if sign < 0 else (half + 1, half)

    def call(ivs):
        number = k.insert(arith.IndexCastOp(ivs[0], i64))
        k.call(routine, [x, k.insert(arith.MuliOp(number, _constant(k, x_row * lines))), out,
                         k.insert(arith.MuliOp(number, _constant(k, out_row * lines))), table])

    if rows:
        k.for_each((rows // lines,), call, independent_work=rows * half * max(1, math.ceil(math.log2(n))))


def _emit_rows(k, inst, out, operands):
    """``fft_library.FFT_ROWS``: a call per row of the routine of any length
    (``stockham.generic_fft``), its n a run-time size."""
    x, plan = operands
    real, sign = inst.attrs["real"], inst.attrs["sign"]
    rows, n = inst.shape.dims[0], inst.attrs["length"] if real and sign > 0 else inst.operands[0].shape.dims[1]
    length = k.insert(arith.IndexCastOp(k.dim(k.one_value(n)), i64))
    routine = stockham.generic_symbol(sign, real, inst.attrs.get("odd", False), inst.attrs.get("bluestein", False))

    def row(ivs):
        k.call(routine, [x, out, plan, length, k.insert(arith.IndexCastOp(ivs[0], i64))])

    # A row's work is about n log n loop iterations of an elementwise kernel (n log n
    # needs n as a number; n + 1 keeps an odd IRFFT's 2 t - 1 a sum of positive terms).
    k.for_each((rows,), row, independent_work=rows * (n + 1) * 8)


OPS.register(OpDef(STOCKHAM_FFT, _infer, _evaluate, arity=2))
register_lowering(STOCKHAM_FFT, Kernel(_emit), PLATFORM)
OPS.register(OpDef(STOCKHAM_REAL_FFT, _infer_real, _evaluate_real, arity=2))
register_lowering(STOCKHAM_REAL_FFT, Kernel(_emit_real), PLATFORM)
register_lowering(FFT_ROWS, Kernel(_emit_rows, shape_generic=True), PLATFORM)


def _op(opcode: str, *operands: Instruction, **attrs) -> Instruction:
    return Instruction.make(opcode, operands, **attrs)


def _stockham(x: Instruction, axis: int, sign: int) -> Instruction:
    table = _op("constant", value=Literal(fft_plan.twiddles(x.shape.dims[axis], sign)))
    return _op(STOCKHAM_FFT, x, table, sign=sign, axis=axis)


#: The transform of rows that the expansion of ``fft`` calls (its ``RowKernel``): one
#: ``llvm_cpu.stockham_fft`` for every length the kernel has butterflies for.
ROW_TRANSFORM = fft.RowKernel(supports=lambda n: fft_plan.radices(n) is not None,
                              transform=lambda x, sign: _stockham(x, 1, sign))


def _moved_last(x: Instruction) -> int | None:
    """The axis that the transpose ``x`` moves last, keeping the others in order; else None."""
    if x.opcode != "transpose":
        return None
    perm = list(x.attrs["permutation"])
    axis = perm[-1]
    return axis if perm[:-1] == [d for d in range(len(perm)) if d != axis] else None


def _complex_kinds(inst: Instruction) -> Instruction | None:
    """An FFT or IFFT of a kernel length as one ``stockham_fft`` along the operand's last
    axis (no reshape to rows, which would copy the operand and the result); of
    ``transpose(a)`` moving one axis last (``plaidarray.fft`` along another axis), as the
    transpose of ``a``'s transform along that axis: the kernel reads and writes the
    strided lines, and the transpose back, meeting this one, cancels (:func:`lower_fft`).
    None for the other kinds and lengths."""
    x, kind = inst.operands[0], inst.attrs["fft_type"]
    n = x.shape.dims[-1]
    if kind not in ("FFT", "IFFT") or not ROW_TRANSFORM.supports(n) or not x.shape.size:
        return None
    axis = _moved_last(x)
    y = x if axis is None else x.operands[0]
    if y.shape.dtype != _COMPLEX:
        y = _op("convert", y, dtype=_COMPLEX)
    y = _stockham(y, y.shape.rank - 1 if axis is None else axis, -1 if kind == "FFT" else 1)
    if kind == "IFFT":
        scale = _op("constant", value=Literal(np.asarray(1.0 / n, _COMPLEX)))
        y = _op("multiply", y, _op("broadcast_in_dim", scale, dims=y.shape.dims, broadcast_dimensions=()))
    if y.shape.dtype != inst.shape.dtype:
        y = _op("convert", y, dtype=inst.shape.dtype)
    return y if axis is None else _op("transpose", y, permutation=x.attrs["permutation"])


def _real_kinds(inst: Instruction) -> Instruction | None:
    """RFFT or IRFFT of an even n whose half is a kernel length as one
    ``stockham_real_fft`` along the operand's last axis (the routine packs, transforms
    and splits, or folds, transforms and unpacks); None for the other kinds and lengths."""
    x, kind = inst.operands[0], inst.attrs["fft_type"]
    n = inst.attrs["fft_length"][0] if kind == "IRFFT" else x.shape.dims[-1]
    if kind not in ("RFFT", "IRFFT") or n % 2 or not ROW_TRANSFORM.supports(n // 2) or not inst.shape.size:
        return None
    wide, sign = (_REAL, -1) if kind == "RFFT" else (_COMPLEX, 1)
    y = x if x.shape.dtype == wide else _op("convert", x, dtype=wide)
    y = _op(STOCKHAM_REAL_FFT, y, _op("constant", value=Literal(fft_plan.real_twiddles(n, sign))), sign=sign)
    return y if y.shape.dtype == inst.shape.dtype else _op("convert", y, dtype=inst.shape.dtype)


def lower_fft(comp: Computation) -> Computation:
    """``comp`` with each ``fft`` of its own (not of nested computations) expanded over
    the compiled kernel."""
    moved: dict[int, Instruction] = {}  # id of a transpose made here -> the transpose

    def rewrite(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        inst = rebuild(inst, operands)
        if inst.opcode == "fft":
            lowered = _complex_kinds(inst) or _real_kinds(inst)
            if lowered is None:
                return fft.expand(inst, inst.operands[0], kernel=ROW_TRANSFORM)
            if lowered.opcode == "transpose":
                moved[id(lowered)] = lowered
            return lowered
        if inst.opcode == "transpose" and id(inst.operands[0]) in moved:
            inner = inst.operands[0]
            if all(inner.attrs["permutation"][d] == i for i, d in enumerate(inst.attrs["permutation"])):
                return inner.operands[0]
        return inst

    return comp.rewrite(rewrite)
