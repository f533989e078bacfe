"""``argsort``: the runtime's stable merge sort (LLVM IR, ``backend/llvm/runtime_routines.py``)
called once per row, by every LLVM backend, each row with 4n slots of a scratch buffer
the executable allocates (rows may run on different threads, each with its own)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith

from ...hlo.shape import Shape
from ..lowering import Kernel, register_lowering
from .rows import Rows, routine_suffix


def _emit(k, inst, out, operands):
    (x,) = operands
    rows = Rows(k, inst.shape.dims, inst.attrs["dimension"])
    symbol = f"plaidarray_argsort_{routine_suffix(inst.operands[0].shape.dtype)}"

    def row(offset, number):
        at = k.insert(arith.MuliOp(number, rows.i64(4 * rows.dims[rows.axis])))
        k.call(symbol, [x, offset, rows.stride, rows.length, out, offset, rows.stride,
                        rows.flag(inst.attrs["descending"]), scratch, at])

    if inst.shape.size:
        scratch = k.scratch(Shape((*rows.batch, 4, rows.dims[rows.axis]), np.dtype(np.int64)))
        rows.for_each(row)


register_lowering("argsort", Kernel(_emit, shape_generic=True, unit_sizes=True))
