"""``argsort``: the runtime's stable merge sort (LLVM IR, ``backend/llvm/runtime_routines.py``)
called once per row, by every LLVM backend, each row with 4n slots of a scratch buffer
the executable allocates (rows may run on different threads, each with its own)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i1, i64

from ...hlo.shape import Shape

from ..lowering import Kernel, register_lowering


def _suffix(dtype: np.dtype) -> str:
    return {"f": "f", "i": "i", "u": "u", "b": "b"}[dtype.kind] + str(1 if dtype.kind == "b" else dtype.itemsize * 8)


def _emit(k, inst, out, operands):
    (x,) = operands
    dims, axis = inst.shape.dims, inst.attrs["dimension"]
    strides = [math.prod(dims[i + 1:]) for i in range(len(dims))]
    batch = [d for i, d in enumerate(dims) if i != axis]
    batch_strides = [s for i, s in enumerate(strides) if i != axis]
    symbol = f"plaidarray_argsort_{_suffix(inst.operands[0].shape.dtype)}"

    def index(v):
        if isinstance(v, int):
            return k.insert(arith.ConstantOp(IntegerAttr(v, i64)))
        return k.insert(arith.IndexCastOp(k.dim(v), i64))

    row_strides = [math.prod(batch[i + 1:]) for i in range(len(batch))]

    def row(ivs):
        offset, number = index(0), index(0)
        for iv, stride, row_stride in zip(ivs, batch_strides, row_strides):
            as_int = k.insert(arith.IndexCastOp(iv, i64))
            offset = k.insert(arith.AddiOp(offset, k.insert(arith.MuliOp(as_int, index(stride)))))
            number = k.insert(arith.AddiOp(number, k.insert(arith.MuliOp(as_int, index(row_stride)))))
        at = k.insert(arith.MuliOp(number, index(4 * dims[axis])))
        descending = k.insert(arith.ConstantOp(IntegerAttr(int(inst.attrs["descending"]), i1)))
        k.call(symbol, [x, offset, index(strides[axis]), index(dims[axis]), out, offset, index(strides[axis]),
                        descending, scratch, at])

    if inst.shape.size:
        scratch = k.scratch(Shape((*batch, 4, dims[axis]), np.dtype(np.int64)))
        k.for_each(batch, row)


register_lowering("argsort", Kernel(_emit, shape_generic=True, unit_sizes=True))
