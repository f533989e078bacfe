"""Ops along one axis that call a runtime routine once per row (``argsort``,
``arg_reduce``): each row's first element, its stride and its number among the rows, as
the routine's i64 arguments (``backend/llvm/runtime_routines.py``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i1, i64
from xdsl.ir import SSAValue

from ...hlo.symbolic import Dim


def routine_suffix(dtype: np.dtype) -> str:
    """The type part of a runtime routine's name (``plaidarray_argsort_f64``)."""
    return {"f": "f", "i": "i", "u": "u", "b": "b"}[dtype.kind] + str(1 if dtype.kind == "b" else dtype.itemsize * 8)


class Rows:
    """The rows along ``axis`` of a row-major buffer of ``dims`` in kernel ``k``."""

    def __init__(self, k, dims: Sequence[Dim], axis: int) -> None:
        self.k, self.dims, self.axis = k, tuple(dims), axis
        self.strides = [math.prod(dims[i + 1:]) for i in range(len(dims))]
        #: The other axes' sizes: one row for each of their indices.
        self.batch = [d for i, d in enumerate(dims) if i != axis]

    def i64(self, value: Dim) -> SSAValue:
        """A size (a number or a run-time size) as an i64 argument."""
        if isinstance(value, int):
            return self.k.insert(arith.ConstantOp(IntegerAttr(value, i64)))
        return self.k.insert(arith.IndexCastOp(self.k.dim(value), i64))

    def flag(self, value: bool) -> SSAValue:
        return self.k.insert(arith.ConstantOp(IntegerAttr(int(value), i1)))

    @property
    def length(self) -> SSAValue:
        """The row's length."""
        return self.i64(self.dims[self.axis])

    @property
    def stride(self) -> SSAValue:
        """The distance between a row's elements."""
        return self.i64(self.strides[self.axis])

    def for_each(self, body: Callable[[SSAValue, SSAValue], None], independent_work: Dim = 0) -> None:
        """``body(offset, number)`` for each row: its first element's offset and its number
        among the rows in row-major order; ``independent_work`` as ``for_each``'s."""
        batch_strides = [s for i, s in enumerate(self.strides) if i != self.axis]
        row_strides = [math.prod(self.batch[i + 1:]) for i in range(len(self.batch))]

        def row(ivs: Sequence[SSAValue]) -> None:
            offset, number = self.i64(0), self.i64(0)
            for iv, stride, row_stride in zip(ivs, batch_strides, row_strides):
                as_int = self.k.insert(arith.IndexCastOp(iv, i64))
                offset = self.k.insert(arith.AddiOp(offset, self.k.insert(arith.MuliOp(as_int, self.i64(stride)))))
                number = self.k.insert(arith.AddiOp(number, self.k.insert(arith.MuliOp(as_int, self.i64(row_stride)))))
            body(offset, number)

        self.k.for_each(self.batch, row, independent_work)
