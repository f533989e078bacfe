"""Lowerings of the ops with no array operands: ``constant`` and ``iota`` are scalar
code in their consumers; ``parameter`` is bound to a buffer, never lowered."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import i64

from ..lowering import Elementwise, NotLowerable, register_lowering

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
