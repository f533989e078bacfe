"""Gathers: ``take``, ``take_along_axis`` and ``searchsorted``.

Indices are data, so the kernels compute addresses in the generic body. An index is
first wrapped once if negative (``i + n``) and then clamped to ``[0, n - 1]``: generated
code never reads out of bounds (the spec leaves out-of-range indices unspecified).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, i64

from ..lowering import Kernel
from ..opdef import OpDef, register
from ..shape import Shape


def _safe_index_reference(idx: np.ndarray, n: int) -> np.ndarray:
    idx = idx.astype(np.int64)
    idx = np.where(idx < 0, idx + n, idx)
    return np.clip(idx, 0, max(n - 1, 0))


def emit_index(b, value, dtype: np.dtype):
    """An integer of ``dtype`` as an ``index``, by its value (index_cast alone would
    sign-extend narrow unsigned integers); 64-bit values keep their bits, so unsigned
    ones past 2**63 become negative, as ``astype(np.int64)`` makes them."""
    if dtype.itemsize < 8:
        value = b.insert((arith.ExtSIOp if dtype.kind == "i" else arith.ExtUIOp)(value, i64))
    return b.insert(arith.IndexCastOp(value, IndexType()))


def _emit_safe_index(b, value, dtype: np.dtype, n: int):
    """``value`` (an integer of ``dtype``) wrapped once if negative and clamped into
    ``[0, n)``, as an ``index``."""
    idx = emit_index(b, value, dtype)
    zero = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType()))
    size = b.insert(arith.ConstantOp.from_int_and_width(n, IndexType()))
    last = b.insert(arith.ConstantOp.from_int_and_width(max(n - 1, 0), IndexType()))
    negative = b.insert(arith.CmpiOp(idx, zero, "slt"))
    idx = b.insert(arith.SelectOp(negative, b.insert(arith.AddiOp(idx, size)), idx))
    return b.insert(arith.MinSIOp(b.insert(arith.MaxSIOp(idx, zero)), last))


def _identity(rank):
    from xdsl.ir.affine import AffineExpr

    return [AffineExpr.dimension(i) for i in range(rank)]


def _check_indices(indices: Shape, where: str) -> None:
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{where}: indices must be integers, got {indices.dtype}")


# --- take: out = x[..., indices, ...] along one axis ------------------------------------

def _take_infer(shapes, attrs):
    x, indices = shapes
    axis = attrs["axis"]
    _check_indices(indices, "take")
    if not 0 <= axis < x.rank:
        raise ValueError(f"take: axis {axis} out of range for {x}")
    if x.dims[axis] == 0 and indices.size:
        raise IndexError("take: cannot take from an empty axis")
    return Shape(x.dims[:axis] + indices.dims + x.dims[axis + 1:], x.dtype)


def _take_evaluate(args, attrs, shape):
    x, indices = args
    axis = attrs["axis"]
    return np.take(x, _safe_index_reference(indices, x.shape[axis]), axis=axis)


def _take_emit(k, inst, out, operands):
    x, indices = operands
    axis = inst.attrs["axis"]
    xs, ishape = inst.operands[0].shape, inst.operands[1].shape
    dims = inst.shape.dims
    d = _identity(len(dims))
    index_map = d[axis:axis + ishape.rank]

    def body(b, ins, cur):
        loops = [b.loop_index(i) for i in range(len(dims))]
        where = _emit_safe_index(b, ins[0], ishape.dtype, xs.dims[axis])
        return b.load(x, loops[:axis] + [where] + loops[axis + ishape.rank:])

    if inst.shape.size:
        k.generic(dims, [(indices, index_map)], (out, d), inst.shape.dtype, body)


register(OpDef("take", _take_infer, _take_evaluate, Kernel(_take_emit), 2))


# --- take_along_axis: indices has x's rank; out[.., i, ..] = x[.., indices[.., i, ..], ..] ---

def _along_infer(shapes, attrs):
    x, indices = shapes
    axis = attrs["axis"]
    _check_indices(indices, "take_along_axis")
    if indices.rank != x.rank or any(a != b for i, (a, b) in enumerate(zip(x.dims, indices.dims)) if i != axis):
        raise ValueError(f"take_along_axis: indices {indices} do not match {x} outside axis {axis}")
    if x.dims[axis] == 0 and indices.size:
        raise IndexError("take_along_axis: cannot take from an empty axis")
    return Shape(indices.dims, x.dtype)


def _along_evaluate(args, attrs, shape):
    x, indices = args
    axis = attrs["axis"]
    return np.take_along_axis(x, _safe_index_reference(indices, x.shape[axis]), axis=axis)


def _along_emit(k, inst, out, operands):
    x, indices = operands
    axis = inst.attrs["axis"]
    n = inst.operands[0].shape.dims[axis]
    dims = inst.shape.dims
    d = _identity(len(dims))

    def body(b, ins, cur):
        loops = [b.loop_index(i) for i in range(len(dims))]
        loops[axis] = _emit_safe_index(b, ins[0], inst.operands[1].shape.dtype, n)
        return b.load(x, loops)

    if inst.shape.size:
        k.generic(dims, [(indices, d)], (out, d), inst.shape.dtype, body)


register(OpDef("take_along_axis", _along_infer, _along_evaluate, Kernel(_along_emit), 2))


# --- searchsorted: insertion points of values in a sorted 1-D array -------------------

def _search_infer(shapes, attrs):
    sorted_, values = shapes
    if sorted_.rank != 1 or sorted_.dtype != values.dtype:
        raise TypeError(f"searchsorted: needs a 1-D array and values of its dtype, got {sorted_}, {values}")
    if attrs["side"] not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {attrs['side']!r}")
    return Shape(values.dims, np.dtype(np.int64))


def _search_evaluate(args, attrs, shape):
    sorted_, values = args
    return np.searchsorted(sorted_, values, side=attrs["side"]).astype(np.int64)


def _before(b, a, v, dtype, side):
    """Whether element ``a`` lies before the insertion point of ``v`` (NaN sorts last)."""
    if dtype.kind == "f":
        if side == "left":  # a < v, NaN greatest
            lt = b.insert(arith.CmpfOp(a, v, "olt"))
            a_num = b.insert(arith.CmpfOp(a, a, "ord"))
            v_nan = b.insert(arith.CmpfOp(v, v, "uno"))
            return b.insert(arith.OrIOp(lt, b.insert(arith.AndIOp(a_num, v_nan))))
        # a <= v, NaN greatest: not (v < a)
        v_lt_a = _before(b, v, a, dtype, "left")
        return b.insert(arith.XOrIOp(v_lt_a, b.const(True, np.dtype(bool))))
    pred = {"left": "lt", "right": "le"}[side]
    prefix = "s" if dtype.kind == "i" else "u"
    return b.insert(arith.CmpiOp(a, v, prefix + pred))


def _search_emit(k, inst, out, operands):
    sorted_, values = operands
    n = inst.operands[0].shape.dims[0]
    dtype, side = inst.operands[1].shape.dtype, inst.attrs["side"]
    dims = inst.shape.dims
    d = _identity(len(dims))
    steps = max(1, math.ceil(math.log2(n + 1)))

    def body(b, ins, cur):
        (v,) = ins
        def index(c):
            return b.insert(arith.ConstantOp.from_int_and_width(c, IndexType()))
        lo, hi, one, last = index(0), index(n), index(1), index(max(n - 1, 0))
        for _ in range(steps):  # a fixed number of halvings: straight-line code
            active = b.insert(arith.CmpiOp(lo, hi, "ult"))
            mid = b.insert(arith.ShRUIOp(b.insert(arith.AddiOp(lo, hi)), one))
            a = b.load(sorted_, [b.insert(arith.MinUIOp(mid, last))])
            go_right = b.insert(arith.AndIOp(active, _before(b, a, v, dtype, side)))
            go_left = b.insert(arith.AndIOp(active, b.insert(arith.XOrIOp(go_right, b.const(True, np.dtype(bool))))))
            lo = b.insert(arith.SelectOp(go_right, b.insert(arith.AddiOp(mid, one)), lo))
            hi = b.insert(arith.SelectOp(go_left, mid, hi))
        return b.insert(arith.IndexCastOp(lo, i64))

    if inst.shape.size:
        k.generic(dims, [(values, d)], (out, d), inst.shape.dtype, body)


register(OpDef("searchsorted", _search_infer, _search_evaluate, Kernel(_search_emit), 2))
