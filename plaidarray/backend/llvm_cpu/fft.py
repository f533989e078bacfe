"""llvm-cpu's lowering of the HLO ``fft`` op: the target-neutral expansion
(``codegen/lowerings/fft.py``) with the transforms of lines done by a compiled Stockham FFT
(``stockham.py``) wherever the length's prime factors have butterflies there (all
primes up to 127).

The lines' transform is the backend's own HLO op ``stockham_fft(x, twiddles)``: ``x``
complex128 (or float64 holding complex pairs along its last axis: the real kinds'
packed signal, read in place), transformed along the attribute ``axis``; ``twiddles``
the constant table of ``stockham.twiddles`` (bound to the executable like any array
constant, so a cached call plans nothing); ``sign`` -1 forward, +1 backward, unscaled.
Its kernel calls the runtime routine once per block of lines (rows, or adjacent lines
along an inner axis, ``LINES_AT_ONCE``); blocks are independent, so the loop over them
is marked parallel and a batch runs in chunks on the thread pool (``parallel.py``).

FFT and IFFT of a kernel length are one ``stockham_fft`` along the operand's own axis;
along another axis (``plaidarray.fft`` transposes the axis last and back) the kernel
reads the strided lines and the two transposes cancel. Everything else goes through the
expansion with ``KERNEL`` as its row kernel, which keeps what surrounds it: the real
kinds' packing and splitting, Bluestein's chirps (its convolution length is a kernel
length), the scaling of IFFT and the conversions of single precision.

The compiler's ``expand`` stage rewrites ``fft`` with :func:`lower_fft` first; an
``fft`` inside a loop or branch body is left to the generic expansion, whose twiddle
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
from ...hlo.opdef import OpDef, register
from ...codegen.lowerings import fft
from ...hlo.shape import Shape
from . import stockham
from .lowerings.platform import PLATFORM

_COMPLEX, _REAL = np.dtype(np.complex128), np.dtype(np.float64)


def _infer(shapes, attrs):
    x, table = shapes
    axis, sign = attrs.get("axis"), attrs.get("sign")
    # A float64 operand holds the points as pairs (re, im) along its last axis.
    pairs = x.dtype == _REAL and x.rank and axis == x.rank - 1 and x.dims[-1] % 2 == 0
    points = Shape(x.dims[:-1] + (x.dims[-1] // 2,), _COMPLEX) if pairs else x
    if (x.dtype != _COMPLEX and not pairs) or type(axis) is not int or not 0 <= axis < x.rank or \
            sign not in (-1, 1) or stockham.radices(points.dims[axis]) is None:
        raise ValueError(f"stockham_fft: expects a complex128 array (or float64 pairs along the last axis), an axis "
                         f"of a kernel length and sign -1 or 1, got {x} with axis={axis!r}, sign={sign!r}")
    if table.dims != (stockham.table_size(points.dims[axis]),) or table.dtype != _COMPLEX:
        raise ValueError(f"stockham_fft: expects the twiddle table of n={points.dims[axis]}, got {table}")
    if attrs.get("pairs_out"):  # the result as float64 pairs along the last axis
        if axis != x.rank - 1:
            raise ValueError(f"stockham_fft: pairs_out needs the last axis, got axis={axis}")
        return Shape(points.dims[:-1] + (2 * points.dims[-1],), _REAL)
    return points


def _evaluate(args, attrs, shape):
    x, axis = args[0], attrs["axis"]
    if x.dtype == _REAL:
        x = x[..., 0::2] + 1j * x[..., 1::2]
    n = x.shape[axis]
    y = np.fft.fft(x, axis=axis) if attrs["sign"] < 0 else np.fft.ifft(x, axis=axis) * n
    return np.stack([y.real, y.imag], axis=-1).reshape(shape.dims) if attrs.get("pairs_out") else y


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


def _emit(k, inst, out, operands):
    """``before`` x ``after`` lines along the axis, each ``after`` elements between points;
    one call per ``lines`` rows (``after`` = 1) or adjacent lines."""
    x, table = operands
    dims, axis = inst.shape.dims, inst.attrs["axis"]
    if inst.attrs.get("pairs_out"):  # the points, as the routine sees them
        dims = dims[:-1] + (dims[-1] // 2,)
    n, before, after = dims[axis], math.prod(dims[:axis]), math.prod(dims[axis + 1:])
    if after == 1:
        lines = _lines_at_once(n, before, LINES_AT_ONCE["rows"])
        calls, blocks = before // lines, 1
    else:
        lines = _lines_at_once(n, after, LINES_AT_ONCE["strided"])
        blocks = after // lines
        calls = before * blocks
    routine = stockham.symbol(n, inst.attrs["sign"], after, lines)

    def index(value):
        return k.insert(arith.ConstantOp(IntegerAttr(value, i64)))

    def line(ivs):
        number = k.insert(arith.IndexCastOp(ivs[0], i64))
        if after == 1:
            offset = k.insert(arith.MuliOp(number, index(n * lines)))
        else:  # the lines (i, j * lines ...) start at i * n * after + j * lines
            i = k.insert(arith.DivUIOp(number, index(blocks)))
            j = k.insert(arith.RemUIOp(number, index(blocks)))
            offset = k.insert(arith.AddiOp(k.insert(arith.MuliOp(i, index(n * after))),
                                           k.insert(arith.MuliOp(j, index(lines)))))
        k.call(routine, [x, offset, out, offset, table])

    if calls:
        # A line's work is about n log n loop iterations of an elementwise kernel.
        k.for_each((calls,), line, independent_work=calls * lines * n * max(1, math.ceil(math.log2(n))))


register(OpDef("stockham_fft", _infer, _evaluate, arity=2))
register_lowering("stockham_fft", Kernel(_emit), PLATFORM)


def _op(opcode: str, *operands: Instruction, **attrs) -> Instruction:
    return Instruction.make(opcode, operands, **attrs)


def _stockham(x: Instruction, axis: int, sign: int) -> Instruction:
    n = x.shape.dims[axis]
    table = _op("constant", value=Literal(stockham.twiddles(n, sign)))
    source = _paired(x) if axis == x.shape.rank - 1 else None
    if source is None:
        return _op("stockham_fft", x, table, sign=sign, axis=axis)
    if source.opcode == "reshape" and source.operands[0].shape.dims[-1:] == source.shape.dims[-1:]:
        source = source.operands[0]  # rows gathered by a reshape, which a kernel's operand would copy
    y = _op("stockham_fft", source, table, sign=sign, axis=source.shape.rank - 1)
    return y if y.shape == x.shape else _op("reshape", y, dims=x.shape.dims)


def _paired(x: Instruction) -> Instruction | None:
    """``a`` if ``x`` is ``complex(a[..., 0::2], a[..., 1::2])`` (the real kinds' packing of
    a float64 signal): the kernel reads ``a`` as the pairs it is, with no packing pass."""
    if x.opcode != "complex" or any(o.opcode != "slice" for o in x.operands):
        return None
    even, odd = x.operands
    a = even.operands[0]
    last = a.shape.rank - 1
    whole = [(0, d, 1) for d in a.shape.dims[:-1]]
    for part, start in ((even, 0), (odd, 1)):
        window = list(zip(part.attrs["start"], part.attrs["limit"], part.attrs["strides"]))
        if part.operands[0] is not a or window[:-1] != whole or window[-1][0] != start or window[-1][2] != 2:
            return None
    return a if a.shape.dtype == _REAL and a.shape.dims[last] == 2 * x.shape.dims[last] else None


def _to_pairs(x: Instruction, sign: int) -> Instruction:
    """The transform of each row of ``x`` (rows, n) stored as float64 pairs (rows, 2n)."""
    table = _op("constant", value=Literal(stockham.twiddles(x.shape.dims[1], sign)))
    return _op("stockham_fft", x, table, sign=sign, axis=1, pairs_out=True)


KERNEL = fft.RowKernel(supports=lambda n: stockham.radices(n) is not None,
                       transform=lambda x, sign: _stockham(x, 1, sign), to_pairs=_to_pairs)


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
    if kind not in ("FFT", "IFFT") or not KERNEL.supports(n) or not x.shape.size:
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


def lower_fft(comp: Computation) -> Computation:
    """``comp`` with each ``fft`` of its own (not of nested computations) expanded over
    the compiled kernel."""
    moved: dict[int, Instruction] = {}  # id of a transpose made here -> the transpose

    def rewrite(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        inst = rebuild(inst, operands)
        if inst.opcode == "fft":
            lowered = _complex_kinds(inst)
            if lowered is None:
                return fft.expand(inst, inst.operands[0], kernel=KERNEL)
            if lowered.opcode == "transpose":
                moved[id(lowered)] = lowered
            return lowered
        if inst.opcode == "transpose" and id(inst.operands[0]) in moved:
            inner = inst.operands[0]
            if all(inner.attrs["permutation"][d] == i for i, d in enumerate(inst.attrs["permutation"])):
                return inner.operands[0]
        return inst

    return comp.rewrite(rewrite)
