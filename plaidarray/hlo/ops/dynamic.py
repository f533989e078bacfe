"""``dynamic_slice`` and ``dynamic_update_slice``: windows at run-time offsets.

As in XLA, start indices are 0-d integer operands clamped so that the window lies
inside the operand; no index can read or write out of bounds.
"""

from __future__ import annotations

import numpy as np

from ..opdef import OpDef, register
from ..shape import Shape


def _check_starts(x: Shape, starts: list[Shape], where: str) -> None:
    """TypeError unless ``starts`` are one 0-d integer per dimension of ``x``. (The shape
    rules here run at each new window size a loop records: loops, not generators.)"""
    if len(starts) != x.rank:
        raise TypeError(f"{where}: needs {x.rank} 0-d integer start indices")
    for s in starts:
        if s.dims or s.dtype.kind not in "iu":
            raise TypeError(f"{where}: needs {x.rank} 0-d integer start indices")


def _clamped_starts(starts, dims, sizes):
    return [int(np.clip(np.asarray(s).astype(np.int64), 0, d - n)) for s, d, n in zip(starts, dims, sizes)]


def _slice_infer(shapes, attrs):
    x, *starts = shapes
    sizes = tuple(attrs["slice_sizes"])
    _check_starts(x, starts, "dynamic_slice")
    if len(sizes) != x.rank or not all(map(_fits, sizes, x.dims)):
        raise ValueError(f"dynamic_slice: slice_sizes {sizes} do not fit in {x}")
    return Shape(sizes, x.dtype)


def _fits(size: int, dim: int) -> bool:
    return 0 <= size <= dim


def _slice_evaluate(args, attrs, shape):
    x, *starts = args
    begin = _clamped_starts(starts, x.shape, shape.dims)
    return x[tuple(slice(b, b + n) for b, n in zip(begin, shape.dims))]


register(OpDef("dynamic_slice", _slice_infer, _slice_evaluate, size_attrs=("slice_sizes",),
               dim_ties=lambda attrs, ranks: ((i, "slice_sizes", i) for i in range(len(attrs["slice_sizes"])))))


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


register(OpDef("dynamic_update_slice", _update_infer, _update_evaluate,
               dim_ties=lambda attrs, ranks: ((axis, 0, axis) for axis in range(ranks[0]))))
