"""Searching functions (spec chapter "Searching Functions"). ``nonzero`` has a
data-dependent size: its count is materialised first (see ``true_positions``)."""

from __future__ import annotations

import functools
import math
import weakref
from typing import Any

from .. import dtypes as dt
from ..hlo.shape import Shape
from ..trace.array import Array
from ..trace.node import Node, derive, value_read
from . import graph
from .graph import NO_ATTRS, check_array, check_category, convert, normalize_axes, op, operands, reduce_axes, wrap
from .recipes import recorded
from .statistical import COMPARED, fast_reduction
from .statistical import sum as total

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"]


def _arg_extremum(x: Array, axis: int | None, keepdims: bool, kind: str, name: str) -> Array:
    """Index of the first extremum (the first NaN, if any, as NumPy does): the HLO op
    ``arg_reduce``. Booleans (beyond the standard, as NumPy: ``argmax(mask)`` is the
    first True) as their 0 and 1."""
    x = check_array(x, name)
    if x.dtype == dt.bool_:
        x = convert(x, dt.uint8)
    check_category(x, "real numeric", name)
    if axis is not None and x.ndim == 0:
        normalize_axes(axis, 0, name)  # axis 0, as NumPy takes it: the one element's index
        axis = None
    if axis is None:
        flat = graph.reshape(x, (x.size,))
        out = _arg_extremum(flat, 0, False, kind, name)
        return graph.reshape(out, (1,) * x.ndim) if keepdims else out
    (axis,) = normalize_axes(axis, x.ndim, name)
    if x.shape[axis] == 0:
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
    out = op("arg_reduce", x, dimension=axis, kind=kind)
    if keepdims:
        out = graph.reshape(out, tuple(1 if i == axis else s for i, s in enumerate(x.shape)))
    return out


def _plain_arg(kind: str, x: Array, /, **kwargs: Any) -> Array | None:
    """``argmax`` or ``argmin`` (``kind``) of an integer or floating-point array along one
    axis, or of a vector alone, with ``keepdims`` at most, recorded as ``_arg_extremum``
    records it without its checks (a loop's windows of new lengths miss every recipe: 8 us
    a call by the rules); None where the rules decide: booleans (converted first), an array
    flattened first, an empty axis, weakly typed, other arguments."""
    axis, keepdims = kwargs.get("axis"), kwargs.get("keepdims", False)
    if type(x) is not Array or kwargs.keys() - {"axis", "keepdims"} or type(keepdims) is not bool:
        return None
    node = x._node
    dims, dtype = node.shape.dims, node.shape.dtype
    rank = len(dims)
    if node.weak or dtype not in COMPARED or (rank != 1 if axis is None else type(axis) is not int or
                                                not -rank <= axis < rank):
        return None
    along = 0 if axis is None else axis % rank
    if not dims[along]:
        return None
    kept = dims[:along] + dims[along + 1:]
    out = derive("arg_reduce", (node,), {"dimension": along, "kind": kind}, Shape(kept, dt.int64))
    if keepdims:
        units = (1,) * rank if axis is None else dims[:along] + (1,) + dims[along + 1:]
        out = derive("reshape", (out,), {"dims": units}, Shape(units, dt.int64))
    return wrap(out)


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first maximum along ``axis`` (flattened when None)."""
    return _arg_extremum(x, axis, keepdims, "maximum", "argmax")


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first minimum along ``axis`` (flattened when None)."""
    return _arg_extremum(x, axis, keepdims, "minimum", "argmin")


argmax = recorded(argmax, functools.partial(_plain_arg, "maximum"))
argmin = recorded(argmin, functools.partial(_plain_arg, "minimum"))


def where(condition: Array, x1: Array | bool | int | float | complex, x2: Array | bool | int | float | complex,
          /) -> Array:
    """Elements of ``x1`` where ``condition`` holds, else of ``x2`` (broadcast together).
    Two Python scalars (beyond the standard, as in NumPy: ``where(c, 1.0, 0.0)``) take the
    default dtype of the higher kind of the two."""
    condition = check_array(condition, "where")
    if condition.dtype != dt.bool_:
        raise TypeError(f"where: condition must be boolean, got {condition.dtype}")
    x1, x2 = graph.numpy_scalar(x1, "where"), graph.numpy_scalar(x2, "where")
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        dtype = dt.result_type(graph.scalar_dtype(x1, "where"), graph.scalar_dtype(x2, "where"), where="where")
        x1, x2 = graph.runtime_scalar(x1, dtype), graph.runtime_scalar(x2, dtype)
    a, b = operands("where", x1, x2)
    shape = graph.broadcast_shapes(condition.shape, a.shape)
    return op("select", graph.broadcast_to(condition, shape), graph.broadcast_to(a, shape), graph.broadcast_to(b, shape))


def _plain_where(condition: Any, x1: Any, x2: Any, /) -> Array | None:
    """``where`` of a mask and arrays of its shape and one dtype, or one such array and a
    Python int or float of a kind its dtype takes, recorded as the rules record it without
    them (a loop's masks of new lengths missed every recipe: 15 us a call by the rules);
    None where they decide: broadcasting, promotion, weak or NumPy values, other types."""
    if type(condition) is not Array or condition._node.shape.dtype != dt.bool_:
        return None
    pair = graph.common_operands("where", x1, x2)  # the rules' operands, where they are common
    if pair is None or pair[0]._node.shape.dims != condition._node.shape.dims:
        return None
    a, b = pair
    return wrap(derive("select", (condition._node, a._node, b._node), NO_ATTRS, a._node.shape))



where = recorded(where, _plain_where)


def count_nonzero(x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Number of non-zero elements over ``axis`` (default int dtype)."""
    x = check_array(x, "count_nonzero")
    nonzero = x if x.dtype == dt.bool_ else op("compare", x, graph.full(x.shape, 0, x.dtype), direction="NE")
    return reduce_axes(convert(nonzero, dt.default_int), "add", axis, keepdims, "count_nonzero")


#: A mask's count recorded as its sum is (converted to the default integer first); another
#: dtype's, compared with 0 first, by the rules.
count_nonzero = fast_reduction(count_nonzero, "add", True, (), {dt.bool_: dt.default_int})


@recorded
def searchsorted(x1: Array, x2: Array | int | float, /, *, side: str = "left", sorter: Array | None = None) -> Array:
    """Insertion points of ``x2`` into the sorted 1-D ``x1`` (NaN sorts last)."""
    x1 = check_array(x1, "searchsorted")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-D, got {x1.ndim}-D")
    check_category(x1, "real numeric", "searchsorted")
    if sorter is not None:
        from .indexing import take

        x1 = take(x1, sorter, axis=0)
    x2 = graph.numpy_scalar(x2, "searchsorted")
    if not isinstance(x2, Array):
        x2 = graph.scalar_for(x2, x1.dtype, "searchsorted")
    dtype = dt.promote(x1.dtype, x2.dtype, "searchsorted")
    if x1.size == 0:  # every value goes first (the search's code takes no empty sorted array)
        return graph.full(x2.shape, 0, dt.int64)
    return op("searchsorted", convert(x1, dtype), convert(x2, dtype), side=side)


def true_positions(mask: Array, count: int | None = None) -> Array:
    """Flat indices (int64, ascending) of the True elements of ``mask``.

    The count is data: it is computed and read back to size the result (``true_count``,
    unless the caller read it already), then the positions come from one pass over the
    mask (the HLO ``true_positions``).
    """
    found = true_count(mask) if count is None else count
    return op("true_positions", graph.reshape(mask, (mask.size,)), dims=(found,))


def true_count(mask: Array) -> int:
    """How many elements of ``mask`` are True: computed and read back (in a traced
    function, the TracerError of a value that depends on its arguments), once a value: a
    mask that selects from several arrays (``X[m]``, ``y[m]``) or is read and then written
    through (``v[m] *= c``) is counted at its first selection (``_COUNTS``)."""
    node = mask._node
    found = _COUNTS.get(node)
    if found is not None:
        value_read()  # the count is still the mask's value: a recorded call must not replay it
        return found[0]
    if not mask.size:
        return 0
    # the mask's sum as the namespace records it, in C (``_graph.Reduction``): a new mask's
    # count and its read take ~5 us, where its three ops recorded in Python took 12
    count = int(total(mask))
    if node.buffer is not None:  # a value now (the read computed the mask, a live array, with its count)
        _COUNTS[node] = (count, node.buffer)
    return count


#: The counts ``true_count`` read, by the node of the mask's value; an entry goes with its
#: node. It holds the node's buffer too: a store into an array that alone sees its buffer
#: writes it in place, keeping the node (``Array._store``), and the entry's reference is
#: one more, so the mask's next store copies and the mask takes a new node.
_COUNTS: weakref.WeakKeyDictionary[Node, tuple[int, object]] = weakref.WeakKeyDictionary()


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices of the non-zero elements, one int64 array per dimension (data-dependent size)."""
    x = check_array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: 0-d arrays are not supported; use at least 1-D")
    nonzero_ = x if x.dtype == dt.bool_ else op("compare", x, graph.full(x.shape, 0, x.dtype), direction="NE")
    flat = true_positions(nonzero_)
    out = []
    for axis, n in enumerate(x.shape):
        stride = math.prod(x.shape[axis + 1:])
        # positions are not negative: floored division is the truncating one, and its ops
        # are those ``//`` and ``%`` record (the installation's kernels serve them)
        coord = op("floor_divide", flat, graph.size_operand(stride, flat.shape, dt.int64, "nonzero")) \
            if stride > 1 else flat
        # the first axis's coordinates are below its length already (a 1-D array's are the positions)
        out.append(op("floor_remainder", coord, graph.size_operand(n, flat.shape, dt.int64, "nonzero")) if axis else coord)
    return tuple(out)
