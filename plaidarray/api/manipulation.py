"""Manipulation functions (spec chapter "Manipulation Functions")."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence

import numpy as np

from .. import dtypes as dt
from ..api_version import sequence
from ..hlo.shape import Shape
from ..trace import joins
from ..trace import node as node_module
from ..trace.array import Array
from ..trace.materialize import read_several
from ..trace.node import pending_graph, value_read
from ..trace.views import can_view, view
from . import extended, graph
from .graph import as_int, check_array, int_tuple, normalize_axes, op, shape_tuple
from .recipes import kept, recorded, stands_for
from .views import Broadcast, Reshape, Reverse, Transpose

__all__ = ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims", "repeat",
           "reshape", "roll", "squeeze", "stack", "tile", "unstack"]


@recorded
def reshape(x: Array, /, shape: Sequence[int], *, copy: bool | None = None) -> Array:
    """Reshape ``x``; one dimension may be -1 (inferred). A view of ``x`` where NumPy
    would make one (``copy=None``: ``x``'s elements in order, as a transposed array's
    are not), else a copy; ``copy=False`` raises where a copy is needed."""
    x = check_array(x, "reshape")
    shape = shape_tuple(shape, "reshape", allow_unknown=True)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"reshape: cannot reshape an array of size {x.size} into {shape}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"reshape: cannot reshape an array of size {x.size} into {shape}")
    if copy:
        out = graph.reshape(x, shape)
        return graph.copy_of(x) if out is x else out
    step = Reshape(shape)
    if copy is False and not can_view(x, step):
        raise ValueError(f"reshape: an array of shape {x.shape} laid out as this one is cannot be reshaped "
                         f"to {shape} without a copy, but copy=False")
    return view(x, step)


@recorded
def permute_dims(x: Array, /, axes: Sequence[int]) -> Array:
    x = check_array(x, "permute_dims")
    axes = int_tuple(axes, "permute_dims", "axes")
    ndim = x.ndim
    if len(axes) != ndim or sorted(a % ndim if ndim else a for a in axes) != list(range(ndim)):
        raise ValueError(f"permute_dims: {axes} is not a permutation of {ndim} axes")
    return view(x, Transpose(tuple(a % ndim for a in axes)))


@recorded
def expand_dims(x: Array, /, axis: int | tuple[int, ...] = 0) -> Array:
    """Insert unit dimensions at ``axis`` (positions in the result; a tuple from 2025.12)."""
    x = check_array(x, "expand_dims")
    axes = int_tuple(axis, "expand_dims", "axis")
    rank = x.ndim + len(axes)
    if any(not -rank <= a < rank for a in axes):
        raise IndexError(f"expand_dims: axis {axis} out of range for a result of rank {rank}")
    positions = {a % rank for a in axes}
    if len(positions) != len(axes):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    dims = iter(x.shape)
    return view(x, Reshape(tuple(1 if i in positions else next(dims) for i in range(rank)), "expand_dims"))


@recorded
def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    x = check_array(x, "squeeze")
    axes = normalize_axes(axis, x.ndim, "squeeze")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return view(x, Reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes), "squeeze"))


@recorded
def broadcast_to(x: Array, /, shape: Sequence[int]) -> Array:
    """``x`` repeated to ``shape``: a read-only view, as NumPy gives it."""
    x = check_array(x, "broadcast_to")
    return view(x, Broadcast(shape_tuple(shape, "broadcast_to")))


def broadcast_arrays(*arrays: Array) -> list[Array] | tuple[Array, ...]:
    """The arrays repeated to their common shape: read-only views (NumPy's warn on a
    write and will be read-only)."""
    arrays = tuple(check_array(a, "broadcast_arrays") for a in arrays)
    shape = graph.broadcast_shapes(*(a.shape for a in arrays))
    return sequence(view(a, Broadcast(shape, "broadcast_arrays")) for a in arrays)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that ``shapes`` broadcast to (ValueError if they do not)."""
    return graph.broadcast_shapes(*(tuple(s) for s in shapes))


def concat(arrays: Sequence[Array] | tuple[Array, ...], /, *, axis: int | None = 0) -> Array:
    """One op over all ``arrays``, or, when their first ones are those of a recent
    concatenation, that result and the rest (``extended.py``); small values computed on
    the host copied at once (``trace/joins.py``), without remembering them: nothing is
    recorded that a later join could extend (~5 us of the ~11 a join of two windows of a
    computed array took)."""
    arrays = graph.check_arrays(arrays, "concat")
    alike = _alike_along(arrays, axis)
    if alike is not None:
        made = None
        if _ends_computed(arrays):  # else one is pending
            made = _copied([(a, a._node.shape.dims) for a in arrays], alike)
        if made is not None:
            return made
        return extended.extend(("concat", alike, arrays[0].dtype), arrays, functools.partial(_alike_joined, alike))
    along, dtype = _concat_checked(arrays, axis)

    def build(earlier: Array | None, rest: Sequence[Array]) -> Array:
        return _joined(rest)([] if earlier is None else [earlier], list(rest), along, dtype)

    return extended.extend(("concat", along, dtype), arrays, build)


def _alike_joined(along: int, earlier: Array | None, rest: Sequence[Array]) -> Array:
    """``concat``'s join of arrays alike off ``along`` (``_alike_along``)."""
    return _concatenate([] if earlier is None else [earlier], list(rest), along)


def _alike_along(arrays: list[Array], axis: int | None) -> int | None:
    """The axis of a concatenation that needs no check, conversion or planning, None for
    any other: arrays of one dtype and rank whose sizes agree off an int ``axis`` (a
    loop's ``concat([h, row])``, whose sizes change at each step, records one op
    without keying a signature)."""
    if type(axis) is not int or not arrays:
        return None
    shape = arrays[0]._node.shape
    dims, dtype = shape.dims, shape.dtype
    ndim = len(dims)
    if not -ndim <= axis < ndim:
        return None
    along = axis % ndim
    shapes = list(map(_SHAPE, arrays))  # as ``_alike_stack``'s: a list joined at each step grows
    others = [s.dims[1:] for s in shapes] if along == 0 else [s.dims[:along] + s.dims[along + 1:] for s in shapes]
    if others.count(dims[:along] + dims[along + 1:]) != len(shapes) or [s.dtype for s in shapes].count(dtype) != len(shapes):
        return None  # (an array of another rank has as many other sizes as that rank less one)
    return along


@kept
def _concat_checked(arrays: list[Array], axis: int | None) -> tuple[int | None, np.dtype]:
    """``concat``'s checks: the axis joined (None: the arrays flattened) and the dtype."""
    if not arrays:
        raise ValueError("concat: need at least one array")
    dtype = dt.result_type(*(a.dtype for a in arrays), where="concat")
    ndim = 1 if axis is None else arrays[0].ndim
    if ndim == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
    along = None if axis is None else normalize_axes(axis, ndim, "concat")[0]
    for a in arrays:
        if along is not None and (a.ndim != ndim or any(s != t for i, (s, t) in enumerate(zip(a.shape, arrays[0].shape))
                                                        if i != along)):
            raise ValueError(f"concat: shapes {[b.shape for b in arrays]} differ outside axis {along}")
    return along, dtype


def _concatenated(earlier: list[Array], rest: list[Array], along: int | None, dtype: np.dtype) -> Array:
    """``rest`` converted to ``dtype`` (flattened if ``along`` is None) after ``earlier``."""
    if along is None and all(a.dtype == dtype for a in rest):  # flattened: each read as a vector
        made = _copied([(e, e._node.shape.dims) for e in earlier] + [(a, (a.size,)) for a in rest], 0)
        if made is not None:
            return made
    parts = [graph.convert(a, dtype) for a in rest]
    if along is None:
        parts = [graph.reshape(a, (a.size,)) for a in parts]
    return _concatenate(earlier, parts, along or 0)


def _stacked(earlier: list[Array], rest: list[Array], axis: int, dtype: np.dtype) -> Array:
    """``rest`` each given a unit axis at ``axis`` and converted to ``dtype``, after ``earlier``."""
    if all(a.dtype == dtype for a in rest):
        made = _copied_stack(earlier, rest, axis, lambda a: (*a.shape[:axis], 1, *a.shape[axis:]))
        if made is not None:
            return made
    return _concatenate(earlier, [graph.convert(expand_dims(a, axis=axis), dtype) for a in rest], axis)


#: What a concatenation of at most ``_WIDE_COUNT`` operands records, replayed (a wider one
#: computes its deep operands, ``_compute_wide_operands``: its graph depends on theirs).
_RECORDED = {_concatenated: recorded(_concatenated), _stacked: recorded(_stacked)}


def _joined(rest: Sequence[Array], how: Callable = _concatenated) -> Callable:
    """``how`` to join ``rest``: replayed for a signature met before, unless wide."""
    return _RECORDED[how] if len(rest) <= _WIDE_COUNT else how


def joined(parts: list[Array], axis: int) -> Array:
    """``parts``, of one dtype and alike but along ``axis``, concatenated as ``concat``
    does but not remembered (``extended.py``): for a function's own parts, which no
    caller can extend."""
    return _concatenate([], parts, axis)


def _concatenate(earlier: list[Array], parts: list[Array], axis: int) -> Array:
    """``earlier`` (a concatenation already made, or nothing) and ``parts`` as one op,
    or, where they are small values computed on the host, copied now (``trace/joins.py``).
    Parts with nothing along ``axis`` are left out when anything else remains (XLA's
    algebraic simplifier drops them too): an array grown from ``zeros((0, n))`` then
    records at its first step the graph of a row alone, not a concatenation with an
    empty constant that no later step has. A lone operand is copied, as NumPy copies:
    a new array on its node, never the operand itself or a view of its base. More than
    ``JOIN_OPERANDS`` operands are joined in groups of that many, then the groups."""
    filled = [p for p in parts if p._node.shape.dims[axis] != 0]
    if filled or earlier:
        parts = filled
    if len(earlier) + len(parts) == 1:
        return graph.copy_of([*earlier, *parts][0])
    _compute_wide_operands(parts)
    operands = [*earlier, *parts]
    if _ends_computed(operands):  # else ``_copied`` answers None: its list is not built
        made = _copied([(a, a._node.shape.dims) for a in operands], axis)
        if made is not None:
            return made
    while len(operands) > JOIN_OPERANDS:
        operands = [group[0] if len(group) == 1 else op("concatenate", *group, dimension=axis)
                    for group in (operands[i:i + JOIN_OPERANDS] for i in range(0, len(operands), JOIN_OPERANDS))]
    return op("concatenate", *operands, dimension=axis)


#: The most operands one ``concatenate`` records. The count of operands is part of an op
#: kernel's signature, and the kernels built at installation join up to this many
#: (``prebuild.py``): a stack of a row's ten features joins two groups of joins built
#: already instead of compiling a ten-operand kernel (~0.4 s). A join copies, so the
#: values are the same bits either way, and fused code reads each operand once alike.
JOIN_OPERANDS = 8

#: ``_graph.Join``'s attributes of a ``concatenate`` along each axis, shared by its nodes
#: (read only, as every node's attributes).
_JOIN_ATTRS = tuple({"dimension": axis} for axis in range(8))


def _joins_in_c(fn: Callable) -> Callable:
    """``concat`` (``fn``) with the joins that extend or slide the latest one recorded in
    C where the C module is in use (``_graph.Join``: 2 to ``JOIN_OPERANDS`` arrays alike
    off an int axis, none empty along it, the first the latest concatenation's result or a
    view of its array and not the start of a remembered one, the first or last pending: a loop's
    ``h = concat([h, row])`` or ring buffer's ``concat([buf[1:], x])``, ~7-9 us a step in
    Python), as ``fn`` records them; ``fn`` is called for everything else."""
    if node_module.GRAPH_IN_C is None:
        return fn
    return stands_for(node_module.GRAPH_IN_C.Join(_JOIN_ATTRS, vars(extended), JOIN_OPERANDS, fn), fn)


concat = _joins_in_c(concat)


#: A concatenation of more operands than this computes each operand of at least
#: ``_WIDE_DEPTH`` pending ops first, one at a time (see ``_compute_wide_operands``).
_WIDE_COUNT = 8
_WIDE_DEPTH = 8


def _compute_wide_operands(arrays: list[Array]) -> None:
    """The pending bound (``PLAIDARRAY_MAX_PENDING``) limits a graph's depth, not its
    width: ``stack`` of many values, each a graph of its own, is one graph as wide as all of
    them (SciPy's naive B-spline test stacks 50 graphs of 800 nodes: a 40,000-node compile
    took 22 GB). Computed one at a time, such operands are small graphs, and alike ones share
    one executable. Each is computed with the pending values the next one needs too (a
    loop's state, of which each operand is a reading), so no graph computes them again:
    a 25-step simulation's outputs, stacked, ran 20 graphs of a history longer each time
    (its values only: a tuple-valued node, a decomposition's, is computed through its
    elements, never as a result of its own)."""
    if len(arrays) <= _WIDE_COUNT:
        return
    deep = [a._node for a in arrays if a._node.buffer is None and a._node.depth >= _WIDE_DEPTH]
    for node, following in zip(deep, [*deep[1:], None]):
        if node.buffer is not None:
            continue
        needed = {id(n) for n in pending_graph(following)} if following is not None else set()
        value_read()
        read_several([node, *(n for n in pending_graph(node)[:-1] if id(n) in needed and type(n.shape) is Shape)])


def stack(arrays: Sequence[Array] | tuple[Array, ...], /, *, axis: int = 0) -> Array:
    """A concatenation of ``arrays`` each given an axis, which may extend a recent one
    (``extended.py``)."""
    arrays = graph.check_arrays(arrays, "stack")
    alike = _alike_stack(arrays, axis)
    if alike is not None:
        made = None
        if _ends_computed(arrays):  # as ``concat``'s
            dims = arrays[0]._node.shape.dims
            unit = (*dims[:alike], 1, *dims[alike:])
            made = _copied([(a, unit) for a in arrays], alike)
        if made is not None:  # as ``concat``'s
            return made
        return extended.extend(("stack", alike, arrays[0].dtype), arrays, functools.partial(_alike_stacked, alike))
    axis, dtype = _stack_checked(arrays, axis)

    def build(earlier: Array | None, rest: Sequence[Array]) -> Array:
        return _joined(rest, _stacked)([] if earlier is None else [earlier], list(rest), axis, dtype)

    return extended.extend(("stack", axis, dtype), arrays, build)


def _alike_stack(arrays: list[Array], axis: int) -> int | None:
    """The new axis of a stack that needs no check, conversion or planning (counted from
    the front), None for any other: arrays of one shape and dtype, an int ``axis`` in
    range (``_alike_along``'s counterpart)."""
    if type(axis) is not int or not arrays:
        return None
    shape = arrays[0]._node.shape
    rank = len(shape.dims) + 1
    if not -rank <= axis < rank:
        return None
    shapes = list(map(_SHAPE, arrays))  # each item's test below runs in C: a list stacked at each step grows
    if [s.dims for s in shapes].count(shape.dims) != len(shapes) or \
            [s.dtype for s in shapes].count(shape.dtype) != len(shapes):
        return None
    return axis % rank


_SHAPE = operator.attrgetter("_node.shape")


def _alike_stacked(axis: int, earlier: Array | None, rest: Sequence[Array]) -> Array:
    """``stack``'s join of arrays of one shape and dtype (``_alike_stack``): each given its
    unit axis by a reshape, as ``expand_dims`` records it, without making it a view; small
    values computed already copied with it at once (``_copied_stack``)."""
    shape = rest[0].shape if rest else ()
    unit = (*shape[:axis], 1, *shape[axis:])
    made = _copied_stack([] if earlier is None else [earlier], rest, axis, lambda _: unit)
    if made is not None:
        return made
    parts = graph.reshaped_alike(rest, unit)
    return _concatenate([] if earlier is None else [earlier], parts, axis)


def _copied(parts: list[tuple[Array, tuple[int, ...]]], axis: int) -> Array | None:
    """The arrays of ``parts``, each read at its dims (of as many elements), joined along
    ``axis`` by a copy made now, where they are small values computed on the host
    (``trace/joins.py``); None where the join is to be recorded."""
    if len(parts) < 2 or not _ends_computed((parts[0][0], parts[-1][0])):
        return None
    made = joins.joined([(a._node, dims) for a, dims in parts], axis)
    return None if made is None else Array(made)


def _ends_computed(arrays: Sequence[Array]) -> bool:
    """Whether the first and last of ``arrays`` are computed, which a join copied at once
    (``_copied``) needs of every operand: asked first, as a list's newest item is the
    likeliest pending, a ring buffer's window of the last join the first."""
    return arrays[-1]._node.buffer is not None and arrays[0]._node.buffer is not None


def _copied_stack(earlier: list[Array], rest: Sequence[Array], axis: int,
                  unit: Callable[[Array], tuple[int, ...]]) -> Array | None:
    """``_copied`` for a stack: ``rest`` each read with its unit axis (``unit``) after
    ``earlier``, its deep operands computed first where it is wide, as any join's."""
    if not earlier and len(rest) < 2:  # a copy of its one array's reshape, as NumPy's stack of one
        return None
    _compute_wide_operands(list(rest))
    return _copied([(e, e._node.shape.dims) for e in earlier] + [(a, unit(a)) for a in rest], axis)


@kept
def _stack_checked(arrays: list[Array], axis: int) -> tuple[int, np.dtype]:
    """``stack``'s checks: the new axis, counted from the front, and the dtype."""
    if not arrays:
        raise ValueError("stack: need at least one array")
    if len({a.shape for a in arrays}) != 1:
        raise ValueError(f"stack: all arrays must have the same shape, got {[a.shape for a in arrays]}")
    ndim = arrays[0].ndim + 1
    if not -ndim <= axis < ndim:
        raise IndexError(f"stack: axis {axis} out of range for rank {ndim}")
    return axis % ndim, dt.result_type(*(a.dtype for a in arrays), where="stack")


@recorded
def flip(x: Array, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    x = check_array(x, "flip")
    return view(x, Reverse(normalize_axes(axis, x.ndim, "flip")))


@recorded
def moveaxis(x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    x = check_array(x, "moveaxis")
    src, dst = int_tuple(source, "moveaxis", "source"), int_tuple(destination, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    src = tuple(normalize_axes(a, x.ndim, "moveaxis")[0] for a in src)
    dst = tuple(normalize_axes(a, x.ndim, "moveaxis")[0] for a in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis: repeated axis")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


@recorded
def roll(x: Array, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Array:
    """Rotate elements along ``axis`` (the flattened array when None) by ``shift``. An axis
    turns by a window of itself joined to itself (``_turned``), whose start is a run-time
    value: a loop over shifts (an autocorrelation's lags) reads one graph whatever the
    shift, where the two slices of each shift's sizes made a new plan and graph per shift."""
    x = check_array(x, "roll")
    shifts = int_tuple(shift, "roll", "shift")
    if axis is None:
        return graph.reshape(roll(graph.reshape(x, (x.size,)), sum(shifts), axis=0), x.shape)
    axes = int_tuple(axis, "roll", "axis")
    if len(shifts) == 1:
        shifts *= len(axes)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length")
    out = graph.copy_of(x)  # a new array even where nothing moves, as NumPy's
    for a, s in zip(axes, shifts):
        (a,) = normalize_axes(a, x.ndim, "roll")
        n = x.shape[a]
        if n and s % n:
            out = _turned(out, a, graph.scalar_for(-s % n, dt.int64, "roll"))
    return out


def _turned(x: Array, axis: int, start: Array) -> Array:
    """``x`` turned along ``axis``: the window of ``x`` joined to itself along the axis
    that begins at ``start`` (``-shift % n``, a 0-d int64 array), the axes before it and
    those after it each taken as one (of more than one element), so that a roll of any
    rank runs on a vector's, a matrix's or a cube's kernels."""
    shape = x.shape
    before, after = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    runs = tuple(n for n in (before, shape[axis], after) if n != 1)
    at = 1 if before != 1 else 0
    flat = graph.reshape(x, runs)
    origin = [graph.scalar_for(0, dt.int64, "roll")] * len(runs)
    origin[at] = start
    window = op("dynamic_slice", op("concatenate", flat, flat, dimension=at), *origin, slice_sizes=runs)
    return graph.reshape(window, shape)


@recorded
def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    x = check_array(x, "tile")
    reps = int_tuple(repetitions, "tile", "repetitions")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    rank = max(len(reps), x.ndim)
    reps = (1,) * (rank - len(reps)) + reps
    out = graph.reshape(x, (1,) * (rank - x.ndim) + x.shape)
    if 0 in reps or 0 in out.shape:
        return graph.full(tuple(r * s for r, s in zip(reps, out.shape)), 0, out.dtype)
    # one axis at a time: the copies along a new axis before it, then the two merged, a
    # broadcast of the axes before and after it whatever the rank (the kernels built at
    # installation), not one of every other axis of twice the rank
    for axis, r in enumerate(reps):
        if r == 1:
            continue
        shape = out.shape
        spread = op("broadcast_in_dim", out, dims=(*shape[:axis], r, *shape[axis:]),
                    broadcast_dimensions=(*range(axis), *range(axis + 1, rank + 1)))
        out = graph.reshape(spread, (*shape[:axis], r * shape[axis], *shape[axis + 1:]))
    return graph.copy_of(out) if all(r == 1 for r in reps) else out


@recorded
def repeat(x: Array, repeats: int | Array, /, *, axis: int | None = None) -> Array:
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None).

    With an array of repeats the output size depends on data: the repeats are
    materialised (compiled) to size the result, then a compiled gather builds it.
    """
    x = check_array(x, "repeat")
    if axis is None:
        x, axis = graph.reshape(x, (x.size,)), 0
    (axis,) = normalize_axes(axis, x.ndim, "repeat")
    n = x.shape[axis]
    if not isinstance(repeats, Array):
        repeats = as_int(repeats, "repeat", "repeats")
        if repeats < 0:
            raise ValueError("repeat: repeats must be non-negative")
        wide = x.shape[:axis + 1] + (repeats,) + x.shape[axis + 1:]
        dims = tuple(i if i <= axis else i + 1 for i in range(x.ndim))
        return graph.reshape(graph.spread(x, wide, dims), x.shape[:axis] + (n * repeats,) + x.shape[axis + 1:])
    repeats = check_array(repeats, "repeat")
    if repeats.dtype.kind not in "iu" or repeats.ndim > 1:
        raise TypeError("repeat: repeats must be an int or a 1-D integer array")
    from .indexing import take
    from .searching import searchsorted
    from .statistical import cumulative_sum

    flat = graph.reshape(repeats, (repeats.size,)) if repeats.ndim else repeats
    counts = graph.convert(graph.broadcast_to(flat, (n,)), dt.int64)
    ends = cumulative_sum(counts)
    total, lowest = stack([ends[-1], op("reduce", counts, dimensions=(0,), kind="minimum")]).tolist() if n else (0, 0)
    if lowest < 0:
        raise ValueError("repeat: repeats must be non-negative")
    positions = op("iota", dims=(total,), iota_dimension=0, dtype=dt.int64)
    return take(x, searchsorted(ends, positions, side="right"), axis=axis)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    x = check_array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: needs at least one dimension")
    (axis,) = normalize_axes(axis, x.ndim, "unstack")
    moved = moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(x.shape[axis]))
