"""Lowerings of the data-movement ops. Those that only re-index (broadcast, reshape,
transpose, slice, reverse) become indexing maps and fuse into their consumers;
concatenate and pad write disjoint parts of their result with kernels of their own."""

from __future__ import annotations

import math

from xdsl.ir.affine import AffineExpr

from ..lowering import Indexing, Kernel, register_lowering
from ..run_time_sizes import affine, floor_divide, modulo, multiply


def _broadcast_coords(inst, coords):
    x = inst.operands[0].shape
    return [0 if x.dims[i] == 1 and inst.shape.dims[d] != 1 else coords[d]
            for i, d in enumerate(inst.attrs["broadcast_dimensions"])]


def _reshape_coords(inst, coords):
    """Row-major relinearisation; when only unit dimensions differ, a direct mapping.
    Run-time sizes make it semi-affine (products, quotients and remainders by symbols)."""
    src, dst = inst.operands[0].shape.dims, inst.shape.dims
    if 0 in src:  # nothing is ever read from an empty array
        return [0] * len(src)
    if [d for d in src if d != 1] == [d for d in dst if d != 1]:
        kept = iter([c for c, d in zip(coords, dst) if d != 1])
        return [0 if d == 1 else next(kept) for d in src]
    linear = coords[0] if coords else affine(0)
    for c, d in zip(coords[1:], dst[1:]):
        linear = multiply(linear, d) + c
    out = []
    for i, d in enumerate(src):
        stride = math.prod(src[i + 1:])
        e = linear if stride == 1 else floor_divide(linear, stride)
        out.append(modulo(e, d) if i else e)
    return out


def _transpose_coords(inst, coords):
    perm = inst.attrs["permutation"]
    out = [None] * len(perm)
    for i, p in enumerate(perm):
        out[p] = coords[i]
    return out


def _slice_coords(inst, coords):
    return [multiply(c, st) + affine(s) for s, st, c in zip(inst.attrs["start"], inst.attrs["strides"], coords)]


def _reverse_coords(inst, coords):
    dims, rev = inst.shape.dims, set(inst.attrs["dimensions"])
    # Written as c * -1 + (n - 1): xDSL 0.74's int - AffineExpr (__rsub__) gets the sign wrong.
    return [affine(c) * -1 + affine(dims[i] - 1) if i in rev else c for i, c in enumerate(coords)]


for _name, _coords in (("broadcast_in_dim", _broadcast_coords), ("reshape", _reshape_coords),
                       ("transpose", _transpose_coords), ("slice", _slice_coords), ("reverse", _reverse_coords)):
    register_lowering(_name, Indexing(_coords, unit_sizes=_name != "broadcast_in_dim"))


# --- kernels ----------------------------------------------------------------------------

def _concatenate_emit(k, inst, out, operands):
    """One copy per operand into its window of the result (an offset output map). With
    run-time sizes each offset is one value (``one_value``), the last one plus a size:
    as a sum of the sizes before it, the offsets of n operands would hold n^2 / 2 terms
    and make each copy a kernel of its own."""
    axis, offset = inst.attrs["dimension"], 0
    for j, (operand, buf) in enumerate(zip(inst.operands, operands)):
        if j:
            offset = k.one_value(offset + inst.operands[j - 1].shape.dims[axis])
        dims = operand.shape.dims
        d = [AffineExpr.dimension(i) for i in range(len(dims))]
        out_map = [e + affine(offset) if i == axis else e for i, e in enumerate(d)]
        k.generic(dims, [(buf, d)], (out, out_map), inst.shape.dtype, lambda b, ins, cur: ins[0])


def _concatenate_ends(inst):
    """A loop over the first operand's rows first, over the last operand's rows last."""
    return True, inst.operands[0].shape.dims[0], True, inst.operands[-1].shape.dims[0]


register_lowering("concatenate", Kernel(_concatenate_emit, shape_generic=True, empty_sizes=True, unit_sizes=True,
                                        ends=_concatenate_ends))


def _pad_emit(k, inst, out, operands):
    x, value = operands
    dims = inst.shape.dims
    d = [AffineExpr.dimension(i) for i in range(len(dims))]
    k.generic(dims, [(value, [])], (out, d), inst.shape.dtype, lambda b, ins, cur: ins[0])
    xd = inst.operands[0].shape.dims
    d = [AffineExpr.dimension(i) for i in range(len(xd))]
    out_map = [multiply(e, i + 1) + affine(l) for l, i, e in zip(inst.attrs["low"], inst.attrs["interior"], d)]
    k.generic(xd, [(x, d)], (out, out_map), inst.shape.dtype, lambda b, ins, cur: ins[0])


register_lowering("pad", Kernel(_pad_emit, shape_generic=True, empty_sizes=True, unit_sizes=True))
