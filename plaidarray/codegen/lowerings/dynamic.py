"""Lowerings of ``dynamic_slice`` and ``dynamic_update_slice``. The kernels compute
addresses in the generic's body (``memref.load`` at computed indices), since the
offsets are not affine in the loop indices; starts are clamped as the ops define."""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType
from xdsl.ir.affine import AffineExpr

from ..lowering import Kernel, register_lowering
from .gather import emit_index


def _emit_clamped_starts(b, starts, dtypes, dims, sizes):
    """Each start (an integer of its dtype) as an ``index`` clamped to [0, dim - size]."""
    out = []
    for s, dtype, d, n in zip(starts, dtypes, dims, sizes):
        s = emit_index(b, s, dtype)
        lo = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType()))
        out.append(b.insert(arith.MinSIOp(b.insert(arith.MaxSIOp(s, lo)), b.dim(d - n))))
    return out


def _slice_emit(k, inst, out, operands):
    x, *starts = operands
    dims = inst.shape.dims
    identity = [AffineExpr.dimension(i) for i in range(len(dims))]

    def body(b, ins, cur):
        begin = _emit_clamped_starts(b, ins, [o.shape.dtype for o in inst.operands[1:]], inst.operands[0].shape.dims,
                                     dims)
        return b.load(x, [b.insert(arith.AddiOp(s, b.loop_index(i))) for i, s in enumerate(begin)])

    if inst.shape.size:
        k.generic(dims, [(s, []) for s in starts], (out, identity), inst.shape.dtype, body)


def _slice_ends(inst):
    """One loop nest over the result's rows, as an elementwise op's; none when it is empty."""
    dims = inst.shape.dims
    return (True, dims[0], True, dims[0]) if dims and inst.shape.size else None


register_lowering("dynamic_slice", Kernel(_slice_emit, shape_generic=True, empty_sizes=True, unit_sizes=True,
                                           ends=_slice_ends))


def _update_emit(k, inst, out, operands):
    """One pass over the result: inside the window read the update (at a clamped, so
    always valid, index), outside it the operand."""
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
            size = b.dim(n)
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


register_lowering("dynamic_update_slice", Kernel(_update_emit, in_place_operand=0, shape_generic=True,
                                                         unit_sizes=True))
