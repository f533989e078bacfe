"""Data-movement ops: those that only re-index (broadcast, reshape, transpose, slice,
reverse), and concatenate and pad, which write disjoint parts of their result
(their lowerings: ``codegen/lowerings/data_movement.py``)."""

from __future__ import annotations

import math

import numpy as np

from ..opdef import Merge, OpDef, along_axis, merged, no_dims, register, runs, same_dims
from ..shape import Shape, static_dims


def _movement(name, infer, evaluate, **attrs):
    register(OpDef(name, infer, evaluate, 1, **attrs))


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


def _broadcast_ties(attrs, ranks):
    """Operand dimension i and the result's dimension broadcast_dimensions[i] (equal where
    the operand's is not 1), and the ``dims`` attribute's entries and the result's."""
    yield from ((d, 0, i) for i, d in enumerate(attrs["broadcast_dimensions"]))
    yield from ((j, "dims", j) for j in range(len(attrs["dims"])))


def _broadcast_merge(attrs, operands, dims):
    """Runs of result axes that the operand holds as they are merge, and so do runs of
    axes it is repeated along (new ones, and its unit dimensions, which the merged
    operand leaves out: its element is repeated either way). A result axis of size 1
    adds no element, so it joins the run before it, and leading ones the repeated kind:
    a row repeated along a new unit axis is the kernel of one repeated along any, and a
    tile of a (1, n, 1) block repeats it along two runs, as a broadcast of n to (a, n, b)
    does."""
    (x,), bdims = operands, attrs["broadcast_dimensions"]
    source = {d: i for i, d in enumerate(bdims)}
    kinds = ["kept" if d in source and x[source[d]] == n != 1 else "repeated" for d, n in enumerate(dims)]
    for d, n in enumerate(dims):
        if n == 1 and d:
            kinds[d] = kinds[d - 1]
    groups = runs(kinds)
    if len(groups) == len(dims) and all(n != 1 for n in x):
        return None
    held = [tuple(source[d] for d in group if d in source) if kinds[group[0]] == "kept" else () for group in groups]
    return Merge((tuple(axes for axes in held if axes),), groups,
                 {"broadcast_dimensions": tuple(i for i, axes in enumerate(held) if axes),
                  "dims": merged(dims, groups)}, (("dims", groups),))


_movement("broadcast_in_dim", _broadcast_infer, _broadcast_evaluate, size_attrs=("dims",), dim_ties=_broadcast_ties,
          merge=_broadcast_merge)


def _reshape_infer(shapes, attrs):
    (x,), dims = shapes, static_dims(attrs["dims"], "reshape")
    if math.prod(dims) != x.size:
        raise ValueError(f"reshape: cannot reshape {x} to {list(dims)}")
    return Shape(dims, x.dtype)


_movement("reshape", _reshape_infer, lambda a, attrs, s: a[0].reshape(s.dims), size_attrs=("dims",))


def _transpose_infer(shapes, attrs):
    (x,), perm = shapes, tuple(attrs["permutation"])
    if sorted(perm) != list(range(x.rank)):
        raise ValueError(f"transpose: {perm} is not a permutation of {x.rank} axes")
    return Shape(tuple(x.dims[p] for p in perm), x.dtype)


def _transpose_merge(attrs, operands, dims):
    """Runs of result axes that are runs of the operand's, in the same order, merge."""
    perm = attrs["permutation"]
    groups = runs([p - i for i, p in enumerate(perm)])
    if len(groups) == len(perm):
        return None
    order = sorted(range(len(groups)), key=lambda g: perm[groups[g][0]])
    return Merge((tuple(tuple(perm[i] for i in groups[g]) for g in order),), groups,
                 {"permutation": tuple(order.index(g) for g in range(len(groups)))})


_movement("transpose", _transpose_infer, lambda a, attrs, s: np.transpose(a[0], attrs["permutation"]),
          dim_ties=lambda attrs, ranks: ((i, 0, p) for i, p in enumerate(attrs["permutation"])), merge=_transpose_merge)


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


# Strides are sizes (a stride of 1 kept in the code, others run-time values), so that one
# kernel serves x[::2] and x[::3] alike.
_movement("slice", _slice_infer, _slice_evaluate, size_attrs=("strides",), offset_attrs=("start", "limit"),
          dim_ties=no_dims)


def _reverse_infer(shapes, attrs):
    (x,) = shapes
    if any(not 0 <= d < x.rank for d in attrs["dimensions"]):
        raise ValueError(f"reverse: dimensions {attrs['dimensions']} out of range for {x}")
    return x


def _reverse_merge(attrs, operands, dims):
    """Runs of axes all reversed, or all kept in order, merge: reversing adjacent axes of
    a row-major buffer together reverses the run's elements as one axis."""
    flipped = set(attrs["dimensions"])
    groups = runs([axis in flipped for axis in range(len(dims))])
    if len(groups) == len(dims):
        return None
    return Merge((groups,), groups, {"dimensions": tuple(g for g, group in enumerate(groups) if group[0] in flipped)})


_movement("reverse", _reverse_infer, lambda a, attrs, s: np.flip(a[0], attrs["dimensions"]), dim_ties=same_dims,
          merge=_reverse_merge)


# --- writing parts of the result -----------------------------------------------------

def _concatenate_infer(shapes, attrs):
    """The operands' shapes agree off ``dimension``, compared as slices (a loop growing
    an array records a concatenation at every step)."""
    axis, first = attrs["dimension"], shapes[0]
    dims = first.dims
    if not 0 <= axis < len(dims):
        raise ValueError(f"concatenate: dimension {axis} out of range for rank {first.rank}")
    before, after = dims[:axis], dims[axis + 1:]
    total = 0
    for s in shapes:
        other = s.dims
        if s.dtype != first.dtype or len(other) != len(dims) or other[:axis] != before or other[axis + 1:] != after:
            raise ValueError(f"concatenate: {s} does not match {first} outside dimension {axis}")
        total += other[axis]
    return Shape((*before, total, *after), first.dtype)


def _concatenate_ties(attrs, ranks):
    """Every operand's dimensions but the one joined along, and the result's."""
    return ((axis, operand, axis) for operand, rank in enumerate(ranks) for axis in range(rank)
            if axis != attrs["dimension"])


register(OpDef("concatenate", _concatenate_infer,
               lambda a, attrs, s: np.concatenate(a, axis=attrs["dimension"]), dim_ties=_concatenate_ties,
               merge=along_axis("dimension")))


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


register(OpDef("pad", _pad_infer, _pad_evaluate, 2, size_attrs=("interior",), offset_attrs=("low", "high"),
               dim_ties=no_dims))
