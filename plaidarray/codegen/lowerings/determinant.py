"""The expansion of ``lu_determinant`` (``hlo/ops/determinant.py``) into the ops
``linalg.slogdet`` recorded before it was one: U's diagonal, its magnitudes and signs, the
pivots' interchanges, their product and the sum of the magnitudes' logarithms. Every op is
built without a shape rule: its sizes may be run-time ones."""

from __future__ import annotations

import numpy as np

from ...dtypes import real_dtype
from ...hlo.ir import Instruction
from ...hlo.shape import Shape
from ..lowering import Expansion, register_lowering
from .spread import filled


def _op(opcode: str, operands: tuple[Instruction, ...], shape: Shape, **attrs: object) -> Instruction:
    return Instruction(opcode, operands, attrs, shape)


def _diagonal(lu: Instruction) -> Instruction:
    """The diagonal of each of ``lu``'s square matrices: from row i, column i (a gather
    along the rows, whose sizes a kernel takes at run time as they are; ``linalg.diagonal``'s
    flattened rows of n + 1 take sizes' products, which a kernel's loops do not)."""
    *batch, n, _ = lu.shape.dims
    dtype, rank = lu.shape.dtype, len(lu.shape.dims)
    columns = Shape((*batch, n, 1), np.dtype(np.int64))
    index = _op("iota", (), columns, dims=columns.dims, iota_dimension=rank - 2, dtype=columns.dtype)
    taken = _op("take_along_axis", (lu, index), Shape(columns.dims, dtype), axis=rank - 1)
    return _op("reshape", (taken,), Shape((*batch, n), dtype), dims=(*batch, n))


def expand(inst: Instruction, lu: Instruction, pivots: Instruction) -> Instruction:
    """``inst``'s part of the determinant of ``lu``'s matrices."""
    part, dtype = inst.attrs["part"], lu.shape.dtype
    u = _diagonal(lu)
    dims, last = u.shape.dims, len(u.shape.dims) - 1
    real = Shape(dims, real_dtype(dtype))
    magnitude = _op("abs", (u,), real)
    logabsdet = _op("reduce", (_op("log", (magnitude,), real),), Shape(inst.shape.dims, real.dtype),
                    dimensions=(last,), kind="add")
    if part == "logabsdet":
        return logabsdet
    steps = _op("convert", (_op("iota", (), Shape(dims, np.dtype(np.int64)), dims=dims, iota_dimension=last,
                                dtype=np.dtype(np.int64)),), u.shape, dtype=dtype)
    moved = _op("compare", (pivots, steps), Shape(dims, np.dtype(np.bool_)), direction="NE")
    interchange = _op("select", (moved, filled(-1, dims, dtype), filled(1, dims, dtype)),
                      u.shape)
    if dtype.kind == "c":
        zero = _op("compare", (magnitude, filled(0, dims, real.dtype)), Shape(dims, np.dtype(np.bool_)),
                   direction="EQ")
        safe = _op("select", (zero, filled(1, dims, real.dtype), magnitude), real)
        unit = _op("select", (zero, filled(0, dims, dtype),
                              _op("divide", (u, _op("convert", (safe,), u.shape, dtype=dtype)), u.shape)), u.shape)
    else:
        unit = _op("sign", (u,), u.shape)
    sign = _op("reduce", (_op("multiply", (interchange, unit), u.shape),), inst.shape, dimensions=(last,),
               kind="multiply")
    if part == "sign":
        return sign
    size = _op("convert", (_op("exp", (logabsdet,), logabsdet.shape),), inst.shape, dtype=dtype)
    return _op("multiply", (sign, size), inst.shape)


register_lowering("lu_determinant", Expansion(expand, shape_generic=True))
