"""Lowerings of the gathers ``take``, ``take_along_axis`` and ``searchsorted``, and of
``scatter``. Indices
are data, so the kernels compute addresses in the generic body, wrapped and clamped as
the ops define (``hlo/ops/gather.py``): generated code never reads out of bounds."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, math, memref, scf
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineExpr

from ...hlo.symbolic import Dim
from ..lowering import Kernel, register_lowering


def emit_index(b, value, dtype: np.dtype):
    """An integer of ``dtype`` as an ``index``, by its value (index_cast alone would
    sign-extend narrow unsigned integers); 64-bit values keep their bits, so unsigned
    ones past 2**63 become negative, as ``astype(np.int64)`` makes them."""
    if dtype.itemsize < 8:
        value = b.insert((arith.ExtSIOp if dtype.kind == "i" else arith.ExtUIOp)(value, i64))
    return b.insert(arith.IndexCastOp(value, IndexType()))


def _emit_safe_index(b, value, dtype: np.dtype, n: Dim):
    """``value`` (an integer of ``dtype``) wrapped once if negative and clamped into
    ``[0, n)``, as an ``index`` (``n`` may be a run-time size, then at least 2)."""
    idx = emit_index(b, value, dtype)
    zero = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType()))
    size = b.dim(n)
    last = b.dim(max(n - 1, 0) if isinstance(n, int) else n - 1)
    negative = b.insert(arith.CmpiOp(idx, zero, "slt"))
    idx = b.insert(arith.SelectOp(negative, b.insert(arith.AddiOp(idx, size)), idx))
    return b.insert(arith.MinSIOp(b.insert(arith.MaxSIOp(idx, zero)), last))


def _identity(rank):
    return [AffineExpr.dimension(i) for i in range(rank)]


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


register_lowering("take", Kernel(_take_emit, shape_generic=True, unit_sizes=True))


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


register_lowering("take_along_axis", Kernel(_along_emit, shape_generic=True, unit_sizes=True))


def _scatter_emit(k, inst, out, operands):
    """A copy of ``x`` (none where the result has its buffer: an update in place, which
    then costs the values' count, not the array's size), then one store per value, in
    order, at its position wrapped and clamped as a gather's: the last value naming a
    position stays. The stores are one loop, never chunked across threads, so no two
    writes of one position race."""
    x, positions, values = operands
    n, index_dtype = inst.operands[0].shape.dims[0], inst.operands[1].shape.dtype
    d = _identity(1)
    if out is not x:
        k.generic((n,), [(x, d)], (out, d), inst.shape.dtype, lambda b, ins, cur: ins[0])

    def store(indices):
        at = _emit_safe_index(k, k.insert(memref.LoadOp.get(positions, list(indices))), index_dtype, n)
        k.insert(memref.StoreOp.get(k.insert(memref.LoadOp.get(values, list(indices))), out, [at]))

    k.for_each(inst.operands[1].shape.dims, store)


register_lowering("scatter", Kernel(_scatter_emit, in_place_operand=0, shape_generic=True, unit_sizes=True))


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


def _halve(b, sorted_, v, dtype, side, lo, hi, one, last):
    """One step of the binary search for ``v``: the new ``(lo, hi)``."""
    active = b.insert(arith.CmpiOp(lo, hi, "ult"))
    mid = b.insert(arith.ShRUIOp(b.insert(arith.AddiOp(lo, hi)), one))
    a = b.load(sorted_, [b.insert(arith.MinUIOp(mid, last))])
    go_right = b.insert(arith.AndIOp(active, _before(b, a, v, dtype, side)))
    go_left = b.insert(arith.AndIOp(active, b.insert(arith.XOrIOp(go_right, b.const(True, np.dtype(bool))))))
    return (b.insert(arith.SelectOp(go_right, b.insert(arith.AddiOp(mid, one)), lo)),
            b.insert(arith.SelectOp(go_left, mid, hi)))


def _search_loop(b, n, halve, zero, one, hi):
    """The halvings for a run-time size ``n``: an ``scf.for`` carrying ``(lo, hi)`` from
    ``(zero, hi)`` through ``bit_length(n)`` steps (``64 - ctlz(n)``), the count the
    static form unrolls."""
    leading = b.insert(math.CountLeadingZerosOp(b.insert(arith.IndexCastOp(hi, i64))))
    steps = b.insert(arith.IndexCastOp(b.insert(arith.SubiOp(b.const(64, np.dtype(np.int64)), leading)),
                                       IndexType()))
    step = Block(arg_types=[IndexType(), IndexType(), IndexType()])
    outer, b.block = b.block, step
    try:
        step.add_op(scf.YieldOp(*halve(step.args[1], step.args[2])))
    finally:
        b.block = outer
    return b.insert(scf.ForOp(zero, steps, one, [zero, hi], Region(step)))


def _search_emit(k, inst, out, operands):
    """A binary search per value: as many halvings as ``n`` has bits, unrolled when ``n``
    is known, an ``scf.for`` over that count when it is a run-time size."""
    sorted_, values = operands
    n = inst.operands[0].shape.dims[0]
    dtype, side = inst.operands[1].shape.dtype, inst.attrs["side"]
    dims = inst.shape.dims
    d = _identity(len(dims))

    def body(b, ins, cur):
        (v,) = ins

        def index(c):
            return b.insert(arith.ConstantOp.from_int_and_width(c, IndexType()))
        one = index(1)
        lo, hi = index(0), b.dim(n)
        last = b.dim(max(n - 1, 0) if isinstance(n, int) else n - 1)

        def halve(lo, hi):
            return _halve(b, sorted_, v, dtype, side, lo, hi, one, last)
        if isinstance(n, int):
            for _ in range(n.bit_length()):  # straight-line code
                lo, hi = halve(lo, hi)
        else:
            lo = _search_loop(b, n, halve, lo, one, hi)
        return b.insert(arith.IndexCastOp(lo, i64))

    if inst.shape.size:
        k.generic(dims, [(values, d)], (out, d), inst.shape.dtype, body)


register_lowering("searchsorted", Kernel(_search_emit, shape_generic=True, unit_sizes=True))
