"""Data-movement ops. Those that only re-index (broadcast, reshape, transpose, slice,
reverse) lower to indexing maps and fuse into their consumers; concatenate and pad
write disjoint parts of their result and lower to kernels of their own."""

from __future__ import annotations

import math

import numpy as np

from ..lowering import Indexing, Kernel
from ..opdef import OpDef, register
from ..shape import Shape, static_dims


def _movement(name, infer, evaluate, operand_coords, arity=1):
    register(OpDef(name, infer, evaluate, Indexing(operand_coords), arity))


# broadcast_in_dim: operand dimension i becomes result dimension broadcast_dimensions[i].
def _broadcast_infer(shapes, attrs):
    key = (shapes[0], tuple(attrs["dims"]), tuple(attrs["broadcast_dimensions"]))
    shape = _BROADCASTS.get(key)
    if shape is None:
        shape = _broadcast_check(shapes, attrs)
        if len(_BROADCASTS) >= _BROADCASTS_KEPT:
            _BROADCASTS.clear()
        _BROADCASTS[key] = shape
    return shape


#: Results of the broadcast rule already checked: broadcasting Python scalars to an
#: array's shape is the most frequent op recorded, and the checks cost microseconds.
_BROADCASTS: dict[tuple, Shape] = {}
_BROADCASTS_KEPT = 1024


def _broadcast_check(shapes, attrs):
    (x,), dims, bdims = shapes, static_dims(attrs["dims"], "broadcast_in_dim"), tuple(attrs["broadcast_dimensions"])
    if len(bdims) != x.rank or sorted(set(bdims)) != list(bdims) or any(d >= len(dims) for d in bdims):
        raise ValueError(f"broadcast_in_dim: bad broadcast_dimensions {bdims} for {x} -> {dims}")
    for i, d in enumerate(bdims):
        if x.dims[i] not in (1, dims[d]):
            raise ValueError(f"broadcast_in_dim: cannot broadcast {x} to {dims}")
    return Shape(dims, x.dtype)


def _broadcast_evaluate(args, attrs, shape):
    (x,), bdims = args, attrs["broadcast_dimensions"]
    view = [1] * shape.rank
    for i, d in enumerate(bdims):
        view[d] = x.shape[i]
    return np.broadcast_to(x.reshape(view), shape.dims)


def _broadcast_coords(inst, coords):
    x = inst.operands[0].shape
    return [0 if x.dims[i] == 1 and inst.shape.dims[d] != 1 else coords[d]
            for i, d in enumerate(inst.attrs["broadcast_dimensions"])]


_movement("broadcast_in_dim", _broadcast_infer, _broadcast_evaluate, _broadcast_coords)


def _reshape_infer(shapes, attrs):
    (x,), dims = shapes, static_dims(attrs["dims"], "reshape")
    if math.prod(dims) != x.size:
        raise ValueError(f"reshape: cannot reshape {x} to {list(dims)}")
    return Shape(dims, x.dtype)


def _reshape_coords(inst, coords):
    """Row-major relinearisation; when only unit dimensions differ, a direct mapping."""
    src, dst = inst.operands[0].shape.dims, inst.shape.dims
    if 0 in src:  # nothing is ever read from an empty array
        return [0] * len(src)
    if [d for d in src if d != 1] == [d for d in dst if d != 1]:
        kept = iter([c for c, d in zip(coords, dst) if d != 1])
        return [0 if d == 1 else next(kept) for d in src]
    linear = 0
    for c, d in zip(coords, dst):
        linear = linear * d + c
    out, stride = [], math.prod(src)
    for i, d in enumerate(src):
        stride //= d
        e = linear // stride if stride > 1 else linear
        out.append(e % d if i else e)
    return out


_movement("reshape", _reshape_infer, lambda a, attrs, s: a[0].reshape(s.dims), _reshape_coords)


def _transpose_infer(shapes, attrs):
    (x,), perm = shapes, tuple(attrs["permutation"])
    if sorted(perm) != list(range(x.rank)):
        raise ValueError(f"transpose: {perm} is not a permutation of {x.rank} axes")
    return Shape(tuple(x.dims[p] for p in perm), x.dtype)


def _transpose_coords(inst, coords):
    perm = inst.attrs["permutation"]
    out = [None] * len(perm)
    for i, p in enumerate(perm):
        out[p] = coords[i]
    return out


_movement("transpose", _transpose_infer, lambda a, attrs, s: np.transpose(a[0], attrs["permutation"]),
          _transpose_coords)


def _slice_infer(shapes, attrs):
    (x,) = shapes
    start, limit, strides = attrs["start"], attrs["limit"], attrs["strides"]
    if not len(start) == len(limit) == len(strides) == x.rank:
        raise ValueError(f"slice: start/limit/strides must have {x.rank} entries")
    dims = []
    for s, l, st, d in zip(start, limit, strides, x.dims):
        if not (0 <= s <= l <= d and st >= 1):
            raise ValueError(f"slice: [{s}:{l}:{st}] out of bounds for dimension of size {d}")
        dims.append(-(-(l - s) // st))
    return Shape(tuple(dims), x.dtype)


def _slice_evaluate(args, attrs, shape):
    return args[0][tuple(slice(s, l, st) for s, l, st in zip(attrs["start"], attrs["limit"], attrs["strides"]))]


def _slice_coords(inst, coords):
    return [s + st * c for s, st, c in zip(inst.attrs["start"], inst.attrs["strides"], coords)]


_movement("slice", _slice_infer, _slice_evaluate, _slice_coords)


def _reverse_infer(shapes, attrs):
    (x,) = shapes
    if any(not 0 <= d < x.rank for d in attrs["dimensions"]):
        raise ValueError(f"reverse: dimensions {attrs['dimensions']} out of range for {x}")
    return x


def _reverse_coords(inst, coords):
    dims, rev = inst.shape.dims, set(inst.attrs["dimensions"])
    # Written as c * -1 + (n - 1): xDSL 0.74's int - AffineExpr (__rsub__) gets the sign wrong.
    return [c * -1 + (dims[i] - 1) if i in rev else c for i, c in enumerate(coords)]


_movement("reverse", _reverse_infer, lambda a, attrs, s: np.flip(a[0], attrs["dimensions"]), _reverse_coords)


# --- kernels ----------------------------------------------------------------------------

def _identity(rank, dim_exprs):
    return list(dim_exprs[:rank])


def _concatenate_infer(shapes, attrs):
    axis, first = attrs["dimension"], shapes[0]
    if not 0 <= axis < first.rank:
        raise ValueError(f"concatenate: dimension {axis} out of range for rank {first.rank}")
    for s in shapes[1:]:
        if s.dtype != first.dtype or s.rank != first.rank or any(
                a != b for i, (a, b) in enumerate(zip(s.dims, first.dims)) if i != axis):
            raise ValueError(f"concatenate: {s} does not match {first} outside dimension {axis}")
    dims = list(first.dims)
    dims[axis] = sum(s.dims[axis] for s in shapes)
    return Shape(tuple(dims), first.dtype)


def _concatenate_emit(k, inst, out, operands):
    """One copy per operand into its window of the result (an offset output map)."""
    from xdsl.ir.affine import AffineExpr

    axis, offset = inst.attrs["dimension"], 0
    for operand, buf in zip(inst.operands, operands):
        dims = operand.shape.dims
        d = [AffineExpr.dimension(i) for i in range(len(dims))]
        out_map = [e + offset if i == axis else e for i, e in enumerate(d)]
        k.generic(dims, [(buf, d)], (out, out_map), inst.shape.dtype, lambda b, ins, cur: ins[0])
        offset += dims[axis]


register(OpDef("concatenate", _concatenate_infer,
               lambda a, attrs, s: np.concatenate(a, axis=attrs["dimension"]),
               Kernel(_concatenate_emit)))


def _pad_infer(shapes, attrs):
    x, value = shapes
    lo, hi, interior = attrs["low"], attrs["high"], attrs["interior"]
    if value.rank != 0 or value.dtype != x.dtype:
        raise TypeError(f"pad: padding value must be a {x.dtype} scalar, got {value}")
    if not len(lo) == len(hi) == len(interior) == x.rank or min((*lo, *hi, *interior), default=0) < 0:
        raise ValueError("pad: low/high/interior must be non-negative, one per dimension")
    dims = tuple(l + h + d + max(d - 1, 0) * i for l, h, i, d in zip(lo, hi, interior, x.dims))
    return Shape(dims, x.dtype)


def _pad_evaluate(args, attrs, shape):
    x, value = args
    out = np.full(shape.dims, value, dtype=shape.dtype)
    out[tuple(slice(l, l + (d - 1) * (i + 1) + 1 if d else l, i + 1)
              for l, i, d in zip(attrs["low"], attrs["interior"], x.shape))] = x
    return out


def _pad_emit(k, inst, out, operands):
    from xdsl.ir.affine import AffineExpr

    x, value = operands
    dims = inst.shape.dims
    d = [AffineExpr.dimension(i) for i in range(len(dims))]
    k.generic(dims, [(value, [])], (out, d), inst.shape.dtype, lambda b, ins, cur: ins[0])
    xd = inst.operands[0].shape.dims
    d = [AffineExpr.dimension(i) for i in range(len(xd))]
    out_map = [l + e * (i + 1) for l, i, e in zip(inst.attrs["low"], inst.attrs["interior"], d)]
    k.generic(xd, [(x, d)], (out, out_map), inst.shape.dtype, lambda b, ins, cur: ins[0])


register(OpDef("pad", _pad_infer, _pad_evaluate, Kernel(_pad_emit), 2))
