"""llvm-cpu's lowering of the HLO ``fft`` op: the target-neutral expansion
(``hlo/ops/fft.py``) with the transforms of rows done by a compiled Stockham FFT
(``stockham.py``) wherever the length's prime factors have butterflies there.

The rows' transform is the backend's own HLO op ``stockham_fft(x, twiddles)``: ``x``
(rows, n) complex128, ``twiddles`` the constant table of ``stockham.twiddles`` (bound to
the executable like any array constant, so a cached call plans nothing), attribute
``sign`` (-1 forward, +1 backward, unscaled). Its kernel calls the runtime routine once
per row; rows are independent, so the loop over them is marked parallel and a batch
runs in chunks on the thread pool (``parallel.py``). The expansion keeps what surrounds
it: the real kinds' packing and splitting, Bluestein's chirps (its convolution length
is a kernel length), a stage of each prime factor the kernel lacks, the scaling of IFFT
and the conversions of single precision.

The compiler's ``expand`` stage rewrites ``fft`` with :func:`lower_fft` first; an
``fft`` inside a loop or branch body is left to the generic expansion.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i64

from ...hlo import Computation, Instruction
from ...hlo.ir import rebuild
from ...hlo.literal import Literal
from ...hlo.lowering import Kernel
from ...hlo.opdef import OpDef, register
from ...hlo.ops import fft
from . import stockham

_COMPLEX = np.dtype(np.complex128)


def _infer(shapes, attrs):
    x, table = shapes
    if x.rank != 2 or x.dtype != _COMPLEX or stockham.radices(x.dims[1]) is None or attrs.get("sign") not in (-1, 1):
        raise ValueError(f"stockham_fft: expects (rows, n) complex128 rows of a kernel length and sign -1 or 1, "
                         f"got {x} with sign={attrs.get('sign')!r}")
    if table.dims != stockham.twiddles(x.dims[1], attrs["sign"]).shape or table.dtype != _COMPLEX:
        raise ValueError(f"stockham_fft: expects the twiddle table of n={x.dims[1]}, got {table}")
    return x


def _evaluate(args, attrs, shape):
    x, n = args[0], shape.dims[1]
    return np.fft.fft(x, axis=-1) if attrs["sign"] < 0 else np.fft.ifft(x, axis=-1) * n


def _emit(k, inst, out, operands):
    x, table = operands
    rows, n = inst.shape.dims
    routine = stockham.symbol(n, inst.attrs["sign"])

    def row(ivs):
        offset = k.insert(arith.MuliOp(k.insert(arith.IndexCastOp(ivs[0], i64)),
                                       k.insert(arith.ConstantOp(IntegerAttr(n, i64)))))
        k.call(routine, [x, offset, out, offset, table])

    if rows:
        # The work of a row is about n log n loop iterations of an elementwise kernel.
        k.for_each((rows,), row, independent_work=rows * n * max(1, math.ceil(math.log2(n))))


register(OpDef("stockham_fft", _infer, _evaluate, Kernel(_emit), arity=2))


def _transform(x: Instruction, sign: int) -> Instruction:
    n = x.shape.dims[1]
    table = Instruction.make("constant", (), value=Literal(stockham.twiddles(n, sign)))
    return Instruction.make("stockham_fft", (x, table), sign=sign)


KERNEL = fft.RowKernel(supports=lambda n: stockham.radices(n) is not None, transform=_transform)


def lower_fft(comp: Computation) -> Computation:
    """``comp`` with each ``fft`` of its own (not of nested computations) expanded over
    the compiled kernel."""
    def rewrite(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        inst = rebuild(inst, operands)
        return fft.expand(inst, inst.operands[0], kernel=KERNEL) if inst.opcode == "fft" else inst

    return comp.rewrite(rewrite)

