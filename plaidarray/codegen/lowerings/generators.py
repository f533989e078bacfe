"""Lowerings of the ops with no array operands: ``constant`` and ``iota`` are scalar
code in their consumers, ``eye`` the comparison of two ``iota``, converted, ``linspace``
an ``iota`` scaled and shifted with its last value selected; ``parameter`` is bound to a
buffer, never lowered."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import i64

from ...hlo.ir import Instruction
from ...hlo.shape import Shape
from ..lowering import Elementwise, Expansion, NotLowerable, register_lowering
from .spread import spread

register_lowering("parameter", NotLowerable())


def _constant_emit(b, args, inst):
    value = inst.attrs["value"].value
    if value.ndim:
        raise NotImplementedError("array constants are bound as parameters before lowering")
    return b.const(value.item(), value.dtype)


register_lowering("constant", Elementwise(_constant_emit))


def _iota_emit(b, args, inst):
    index = b.coords(inst)[inst.attrs["iota_dimension"]]
    as_int = b.insert(arith.IndexCastOp(index, i64))
    dtype = inst.shape.dtype
    if dtype.kind == "f":
        return b.insert(arith.SIToFPOp(as_int, b.type(dtype)))
    if dtype.itemsize < 8:
        return b.insert(arith.TruncIOp(as_int, b.type(dtype)))
    return as_int


register_lowering("iota", Elementwise(_iota_emit))


def expand_eye(inst: Instruction, k: Instruction) -> Instruction:
    """``eye`` as ``iota`` along the rows plus ``k``, equal to ``iota`` along the columns,
    converted to its dtype (each op built without a shape rule: its sizes may be
    run-time ones)."""
    dims = inst.shape.dims
    counts = Shape(dims, np.dtype(np.int64))

    def iota(axis: int) -> Instruction:
        return Instruction("iota", (), {"dims": dims, "iota_dimension": axis, "dtype": counts.dtype}, counts)

    on = Instruction("compare", (Instruction("add", (iota(0), spread(k, dims)), {}, counts), iota(1)), {"direction": "EQ"},
                     Shape(dims, np.dtype(np.bool_)))
    return Instruction("convert", (on,), {"dtype": inst.shape.dtype}, inst.shape)


register_lowering("eye", Expansion(expand_eye, shape_generic=True))


def expand_linspace(inst: Instruction, start: Instruction, step: Instruction, last: Instruction,
                    stop: Instruction) -> Instruction:
    """``linspace`` as ``iota * step + start``, ``stop`` selected where ``iota == last``
    (each op built without a shape rule: its size may be a run-time one)."""
    shape = inst.shape
    dims = shape.dims

    ramp = Instruction("iota", (), {"dims": dims, "iota_dimension": 0, "dtype": shape.dtype}, shape)
    values = Instruction("add", (Instruction("multiply", (ramp, spread(step, dims)), {}, shape), spread(start, dims)), {}, shape)
    at_last = Instruction("compare", (ramp, spread(last, dims)), {"direction": "EQ"}, Shape(dims, np.dtype(np.bool_)))
    return Instruction("select", (at_last, spread(stop, dims), values), {}, shape)


register_lowering("linspace", Expansion(expand_linspace, shape_generic=True))

