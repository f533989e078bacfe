"""Gathers: ``take``, ``take_along_axis`` and ``searchsorted``; and ``scatter``, their inverse.

An index is first wrapped once if negative (``i + n``) and then clamped to
``[0, n - 1]``: no index reads out of bounds (the spec leaves out-of-range indices
unspecified).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ..opdef import Attrs, DimTie, Merge, OpDef, along_axis, around_axis, laid_out, register
from ..shape import Shape


def _safe_index_reference(idx: np.ndarray, n: int) -> np.ndarray:
    idx = idx.astype(np.int64)
    idx = np.where(idx < 0, idx + n, idx)
    return np.clip(idx, 0, max(n - 1, 0))


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


def _take_ties(attrs: Attrs, ranks: Sequence[int]) -> Iterator[DimTie]:
    """The result's dimensions: ``x``'s around the axis taken along, the indices' in it."""
    axis, (rank, index_rank) = attrs["axis"], ranks
    yield from ((i, 0, i) for i in range(axis))
    yield from ((axis + i, 1, i) for i in range(index_rank))
    yield from ((index_rank + i - 1, 0, i) for i in range(axis + 1, rank))


def _take_merge(attrs: Attrs, operands: Sequence[Sequence[int]], dims: Sequence[int]) -> Merge | None:
    """``x``'s axes before the one taken along merge, and those after it; the indices'
    axes merge into one (a flat list of positions)."""
    axis, (x, indices) = attrs["axis"], operands
    around = around_axis(len(x), axis)
    if len(around) == len(x) and len(indices) < 2:
        return None
    taken = (tuple(range(len(indices))),) if indices else ()
    before, after = around[:int(axis > 0)], around[int(axis > 0) + 1:]  # x's runs but the axis taken along
    return Merge((around, taken), laid_out([*before, *taken, *after]), {"axis": len(before)})


register(OpDef("take", _take_infer, _take_evaluate, 2, dim_ties=_take_ties, merge=_take_merge))


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


def _along_ties(attrs: Attrs, ranks: Sequence[int]) -> Iterator[DimTie]:
    """The result's dimensions: the indices', and ``x``'s but along the axis."""
    for i in range(ranks[1]):
        yield i, 1, i
        if i != attrs["axis"]:
            yield i, 0, i


register(OpDef("take_along_axis", _along_infer, _along_evaluate, 2, dim_ties=_along_ties,
               merge=along_axis("axis")))


# --- scatter: out = x; out[positions[k]] = values[k] for each k in order ---------------

def _scatter_infer(shapes, attrs):
    x, positions, values = shapes
    _check_indices(positions, "scatter")
    if x.rank != 1 or positions.rank != 1 or values.rank != 1 or values.dtype != x.dtype or \
            positions.dims != values.dims:
        raise TypeError(f"scatter: needs a 1-D array, 1-D positions and as many values of its dtype, "
                        f"got {x}, {positions} and {values}")
    if x.dims[0] == 0 and positions.size:
        raise IndexError("scatter: cannot write into an empty array")
    return x


def _scatter_evaluate(args, attrs, shape):
    x, positions, values = args
    out = x.copy()
    if positions.size:
        at = _safe_index_reference(positions, x.shape[0])
        # each position's last write: the first of the reversed positions
        _, first = np.unique(at[::-1], return_index=True)
        last = at.size - 1 - first
        out[at[last]] = values[last]
    return out


#: ``scatter(x, positions, values)``: ``x`` with ``values[k]`` written at ``positions[k]``
#: (wrapped and clamped as a gather's indices), one after another, so the last value
#: naming a position is the one it holds, as in NumPy's ``x[index] = values``. Data
#: movement alone: every tier writes the same bits. The caller flattens ``x`` and the
#: key (``api/indexing.py``), so one 1-D kernel per dtype serves every rank and key.
register(OpDef("scatter", _scatter_infer, _scatter_evaluate, 3,
               dim_ties=lambda attrs, ranks: ((0, 0, 0), ((2, 0), 1, 0))))


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


def _search_merge(attrs, operands, dims):
    """The values searched for merge into one axis, as do the result's: each is searched
    alone, so their layout is an elementwise op's."""
    if len(dims) < 2:
        return None
    every = (tuple(range(len(dims))),)
    return Merge((((0,),), every), every, {})


register(OpDef("searchsorted", _search_infer, _search_evaluate, 2,
               dim_ties=lambda attrs, ranks: ((i, 1, i) for i in range(ranks[1])), merge=_search_merge))


# --- true_positions: where a mask holds, in one pass ---------------------------------

def _positions_infer(shapes, attrs):
    (mask,) = shapes
    dims = attrs["dims"]
    if mask.rank != 1 or mask.dtype != np.dtype(np.bool_) or len(dims) != 1 or \
            (isinstance(dims[0], int) and dims[0] < 0):
        raise TypeError(f"true_positions: needs a 1-D boolean mask and dims (count,), got {mask} and dims={dims}")
    return Shape(tuple(dims), np.dtype(np.int64))


def _positions_evaluate(args, attrs, shape):
    (mask,), count = args, shape.dims[0]
    found = np.flatnonzero(mask)[:count]
    return np.concatenate([found, np.full(count - found.size, mask.size)]).astype(np.int64)


#: ``true_positions(mask, dims=(count,))``: the indices of the first ``count`` True elements
#: of a 1-D mask in order, then its length for each wanted past its last True one
#: (``searchsorted(cumulative_sum(mask), iota(count), side="right")``, in one pass instead
#: of a binary search per position). The count is data: the caller reads it first.
register(OpDef("true_positions", _positions_infer, _positions_evaluate, 1, size_attrs=("dims",),
               dim_ties=lambda attrs, ranks: ((0, "dims", 0),)))
