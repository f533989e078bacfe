"""``dynamic_slice`` and ``dynamic_update_slice``: windows at run-time offsets.

As in XLA, start indices are 0-d integer operands clamped so that the window lies
inside the operand; no index can read or write out of bounds. The kernels compute
addresses in the generic's body (``memref.load`` at computed indices), since the
offsets are not affine in the loop indices.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType

from ..lowering import Kernel
from ..opdef import OpDef, register
from ..shape import Shape
from .gather import emit_index


def _check_starts(x: Shape, starts: list[Shape], where: str) -> None:
    if len(starts) != x.rank or any(s.rank or s.dtype.kind not in "iu" for s in starts):
        raise TypeError(f"{where}: needs {x.rank} 0-d integer start indices")


def _clamped_starts(starts, dims, sizes):
    return [int(np.clip(np.asarray(s).astype(np.int64), 0, d - n)) for s, d, n in zip(starts, dims, sizes)]


def _emit_clamped_starts(b, starts, dtypes, dims, sizes):
    """Each start (an integer of its dtype) as an ``index`` clamped to [0, dim - size]."""
    out = []
    for s, dtype, d, n in zip(starts, dtypes, dims, sizes):
        s = emit_index(b, s, dtype)
        lo = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType()))
        hi = b.insert(arith.ConstantOp.from_int_and_width(d - n, IndexType()))
        out.append(b.insert(arith.MinSIOp(b.insert(arith.MaxSIOp(s, lo)), hi)))
    return out


def _slice_infer(shapes, attrs):
    x, *starts = shapes
    sizes = tuple(attrs["slice_sizes"])
    _check_starts(x, starts, "dynamic_slice")
    if len(sizes) != x.rank or any(not 0 <= n <= d for n, d in zip(sizes, x.dims)):
        raise ValueError(f"dynamic_slice: slice_sizes {sizes} do not fit in {x}")
    return Shape(sizes, x.dtype)


def _slice_evaluate(args, attrs, shape):
    x, *starts = args
    begin = _clamped_starts(starts, x.shape, shape.dims)
    return x[tuple(slice(b, b + n) for b, n in zip(begin, shape.dims))]


def _slice_emit(k, inst, out, operands):
    from xdsl.ir.affine import AffineExpr

    x, *starts = operands
    dims = inst.shape.dims
    identity = [AffineExpr.dimension(i) for i in range(len(dims))]

    def body(b, ins, cur):
        begin = _emit_clamped_starts(b, ins, [o.shape.dtype for o in inst.operands[1:]], inst.operands[0].shape.dims,
                                     dims)
        return b.load(x, [b.insert(arith.AddiOp(s, b.loop_index(i))) for i, s in enumerate(begin)])

    if inst.shape.size:
        k.generic(dims, [(s, []) for s in starts], (out, identity), inst.shape.dtype, body)


register(OpDef("dynamic_slice", _slice_infer, _slice_evaluate, Kernel(_slice_emit)))


def _update_infer(shapes, attrs):
    x, update, *starts = shapes
    _check_starts(x, starts, "dynamic_update_slice")
    if update.dtype != x.dtype or update.rank != x.rank or any(u > d for u, d in zip(update.dims, x.dims)):
        raise ValueError(f"dynamic_update_slice: update {update} does not fit in {x}")
    return x


def _update_evaluate(args, attrs, shape):
    x, update, *starts = args
    begin = _clamped_starts(starts, x.shape, update.shape)
    out = x.copy()
    out[tuple(slice(b, b + n) for b, n in zip(begin, update.shape))] = update
    return out


def _update_emit(k, inst, out, operands):
    """One pass over the result: inside the window read the update (at a clamped, so
    always valid, index), outside it the operand."""
    from xdsl.ir.affine import AffineExpr

    x, update, *starts = operands
    dims = inst.shape.dims
    udims = inst.operands[1].shape.dims
    identity = [AffineExpr.dimension(i) for i in range(len(dims))]
    if not inst.operands[1].shape.size:
        k.generic(dims, [(x, identity)], (out, identity), inst.shape.dtype, lambda b, ins, cur: ins[0])
        return

    def body(b, ins, cur):
        value, *start_values = ins
        begin = _emit_clamped_starts(b, start_values, [o.shape.dtype for o in inst.operands[2:]], dims, udims)
        inside = None
        rel = []
        for i, (s, n) in enumerate(zip(begin, udims)):
            r = b.insert(arith.SubiOp(b.loop_index(i), s))
            zero = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType()))
            size = b.insert(arith.ConstantOp.from_int_and_width(n, IndexType()))
            ok = b.insert(arith.AndIOp(b.insert(arith.CmpiOp(r, zero, "sge")), b.insert(arith.CmpiOp(r, size, "slt"))))
            inside = ok if inside is None else b.insert(arith.AndIOp(inside, ok))
            rel.append(b.insert(arith.SelectOp(ok, r, zero)))
        if inside is None:  # 0-d: the update replaces the value
            return b.load(update, [])
        return b.insert(arith.SelectOp(inside, b.load(update, rel), value))

    if out is x:
        _update_in_place(k, inst, out, update, starts)
        return
    k.generic(dims, [(x, identity), *[(s, []) for s in starts]], (out, identity), inst.shape.dtype, body)


def _update_in_place(k, inst, out, update, starts):
    """``out`` already holds the operand: store the update's elements into the window
    only, so the work is the update's size, not the operand's."""
    udims = inst.operands[1].shape.dims
    values = [k.insert(memref.LoadOp.get(s, [])) for s in starts]
    begin = _emit_clamped_starts(k, values, [o.shape.dtype for o in inst.operands[2:]], inst.shape.dims, udims)

    def element(indices):
        value = k.insert(memref.LoadOp.get(update, list(indices)))
        k.insert(memref.StoreOp.get(value, out, [k.insert(arith.AddiOp(s, i)) for s, i in zip(begin, indices)]))

    k.for_each(udims, element)


register(OpDef("dynamic_update_slice", _update_infer, _update_evaluate, Kernel(_update_emit, in_place_operand=0)))
