"""``argsort``: the stable sorting permutation along one dimension.

Sorting values is ``take_along_axis(x, argsort(x))``, so one op serves sort and
argsort. Ascending order puts NaN last; descending is its mirror (NaN first); equal
keys keep their order either way. The kernel calls the runtime's merge sort (compiled
LLVM, see backend/llvm_cpu/runtime.py) once per row.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i1, i64

from ..lowering import Kernel
from ..opdef import OpDef, register
from ..shape import Shape


def _infer(shapes, attrs):
    (x,) = shapes
    if x.dtype.kind == "c":
        raise TypeError("argsort: complex numbers are unordered")
    if not 0 <= attrs["dimension"] < x.rank:
        raise ValueError(f"argsort: dimension {attrs['dimension']} out of range for {x}")
    return Shape(x.dims, np.dtype(np.int64))


def _evaluate(args, attrs, shape):
    (x,), axis = args, attrs["dimension"]
    if not attrs["descending"]:
        return np.argsort(x, axis=axis, kind="stable")
    # Stable descending with NaN first: sort the mirrored keys ascending.
    n = x.shape[axis]
    flipped = np.flip(x, axis=axis)
    order = np.argsort(flipped, axis=axis, kind="stable")
    return np.flip(n - 1 - order, axis=axis)


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
        return k.insert(arith.ConstantOp(IntegerAttr(v, i64)))

    def row(ivs):
        offset = index(0)
        for iv, stride in zip(ivs, batch_strides):
            as_int = k.insert(arith.IndexCastOp(iv, i64))
            offset = k.insert(arith.AddiOp(offset, k.insert(arith.MuliOp(as_int, index(stride)))))
        descending = k.insert(arith.ConstantOp(IntegerAttr(int(inst.attrs["descending"]), i1)))
        k.call(symbol, [x, offset, index(strides[axis]), index(dims[axis]), out, offset, index(strides[axis]),
                        descending])

    if inst.shape.size:
        k.for_each(batch, row)


register(OpDef("argsort", _infer, _evaluate, Kernel(_emit), 1))
