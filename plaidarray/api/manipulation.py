"""Manipulation functions (spec chapter "Manipulation Functions")."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import dtypes as dt
from ..trace.array import Array
from . import graph
from .graph import check_array, normalize_axes, op

__all__ = ["broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "permute_dims", "reshape",
           "squeeze", "stack"]


def reshape(x: Array, /, shape: Sequence[int], *, copy: bool | None = None) -> Array:
    """Reshape ``x``; one dimension may be -1 (inferred)."""
    check_array(x, "reshape")
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1 or any(s < -1 for s in shape):
        raise ValueError(f"reshape: invalid shape {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"reshape: cannot reshape an array of size {x.size} into {shape}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"reshape: cannot reshape an array of size {x.size} into {shape}")
    # Arrays are values (never written in place), so every copy= request is honoured
    # by sharing: the result cannot observe later writes to ``x``.
    return graph.reshape(x, shape)


def permute_dims(x: Array, /, axes: Sequence[int]) -> Array:
    check_array(x, "permute_dims")
    axes = tuple(axes)
    if sorted(a % x.ndim if x.ndim else a for a in axes) != list(range(x.ndim)) or len(axes) != x.ndim:
        raise ValueError(f"permute_dims: {axes} is not a permutation of {x.ndim} axes")
    return op("transpose", x, permutation=tuple(a % x.ndim for a in axes))


def expand_dims(x: Array, /, axis: int = 0) -> Array:
    check_array(x, "expand_dims")
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise IndexError(f"expand_dims: axis {axis} out of range for rank {x.ndim}")
    axis %= x.ndim + 1
    return graph.reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])


def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    check_array(x, "squeeze")
    axes = normalize_axes(axis, x.ndim, "squeeze")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return graph.reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in axes))


def broadcast_to(x: Array, /, shape: Sequence[int]) -> Array:
    check_array(x, "broadcast_to")
    return graph.broadcast_to(x, tuple(shape))


def broadcast_arrays(*arrays: Array) -> list[Array]:
    shape = graph.broadcast_shapes(*(check_array(a, "broadcast_arrays").shape for a in arrays))
    return [graph.broadcast_to(a, shape) for a in arrays]


def concat(arrays: Sequence[Array] | tuple[Array, ...], /, *, axis: int | None = 0) -> Array:
    arrays = [check_array(a, "concat") for a in arrays]
    if not arrays:
        raise ValueError("concat: need at least one array")
    dtype = dt.result_type(*(a.dtype for a in arrays))
    arrays = [graph.convert(a, dtype) for a in arrays]
    if axis is None:
        arrays = [graph.reshape(a, (a.size,)) for a in arrays]
        axis = 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
    (axis,) = normalize_axes(axis, ndim, "concat")
    for a in arrays:
        if a.ndim != ndim or any(s != t for i, (s, t) in enumerate(zip(a.shape, arrays[0].shape)) if i != axis):
            raise ValueError(f"concat: shapes {[b.shape for b in arrays]} differ outside axis {axis}")
    if len(arrays) == 1:
        return arrays[0]
    return op("concatenate", *arrays, dimension=axis)


def stack(arrays: Sequence[Array] | tuple[Array, ...], /, *, axis: int = 0) -> Array:
    arrays = [check_array(a, "stack") for a in arrays]
    if not arrays:
        raise ValueError("stack: need at least one array")
    if len({a.shape for a in arrays}) != 1:
        raise ValueError(f"stack: all arrays must have the same shape, got {[a.shape for a in arrays]}")
    ndim = arrays[0].ndim + 1
    if not -ndim <= axis < ndim:
        raise IndexError(f"stack: axis {axis} out of range for rank {ndim}")
    return concat([expand_dims(a, axis=axis % ndim) for a in arrays], axis=axis % ndim)


def flip(x: Array, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    check_array(x, "flip")
    axes = normalize_axes(axis, x.ndim, "flip")
    return op("reverse", x, dimensions=axes) if axes else x
