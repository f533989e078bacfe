"""Indexing (spec "Indexing"): basic indexing lowers to slice/reverse/reshape, and
``__setitem__`` to a functional update of the whole array.

Unit-step windows become ``dynamic_slice`` / ``dynamic_update_slice`` with their
start positions passed as run-time 0-d buffers: ``x[i]`` for every ``i`` then shares
one compiled executable instead of compiling once per index (element-by-element
loops are common in user and test code). Strided windows use static ``slice`` (or
``pad`` + ``select``)."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import dtypes as dt
from ..backend.transfer import HOST
from ..hlo.opdef import OPS
from ..hlo.shape import Shape
from ..trace import node as node_module
from ..trace.array import Array
from ..trace.exports import Pinned
from ..trace.node import TRACED, Node, derive
from ..trace.tracing import Guard, guard
from . import graph
from .graph import NO_ATTRS, check_array, normalize_axes, op, wrap
from .recipes import recorded

__all__ = ["take", "take_along_axis"]


def expand_key(key: Any, ndim: int) -> list:
    """A basic key's entries, one per axis of the result's source plus each ``None``,
    its ``...`` expanded into full slices (IndexError for a key that does not apply)."""
    key = key if isinstance(key, tuple) else (key,)
    for k in key:
        if isinstance(k, Array) or not (k is None or k is Ellipsis or isinstance(k, slice) or _is_int(k)):
            raise IndexError(f"unsupported index {k!r}: only ints, slices, None and Ellipsis are supported")
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices: array is {ndim}-dimensional, but {consumed} were indexed")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        return [*key[:i], *[slice(None)] * (ndim - consumed), *key[i + 1:]]
    return [*key, *[slice(None)] * (ndim - consumed)]


def _numpy_indices(key: Any, x: Array) -> Any:
    """``key`` with its NumPy integer and boolean arrays, and its lists of ints or bools
    (``A[[k, p]] = A[[p, k]]``), as plaidarray arrays on ``x``'s device, which NumPy and
    JAX accept as indices (NumPy integer scalars and 0-d integer arrays index as ints
    already)."""
    if isinstance(key, tuple):  # of indices; a tuple in it is no index (getitem says so)
        return tuple(_numpy_index(k, x) for k in key)
    return _numpy_index(key, x)


def _numpy_index(k: Any, x: Array) -> Any:
    if isinstance(k, list):
        listed = np.asarray(k) if k else np.zeros(0, dt.int64)
        k = listed if listed.dtype == dt.bool_ or listed.dtype.kind in "iu" else k
    if isinstance(k, np.ndarray) and (k.dtype == dt.bool_ or (k.dtype.kind in "iu" and k.ndim)):
        from .creation import asarray

        return asarray(k, device=x.device)
    return k


def _numpy_value(value: Any, x: Array) -> Any:
    """A value to store into ``x`` given by NumPy, or as a list or tuple (``m[0, 1:3] =
    [1.0, 2.0]``, as NumPy takes it): an array as a plaidarray array on ``x``'s device
    (a list as NumPy's ``asarray`` types it, then cast as an array value is), a scalar as
    the Python scalar of its value (the array written to keeps its dtype)."""
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)
    if isinstance(value, np.ndarray):
        from .creation import asarray

        return asarray(value, device=x.device)
    return graph.python_scalar(value, "__setitem__")


def _is_int(k: Any) -> bool:
    if isinstance(k, bool):
        return False
    try:
        operator.index(k)
        return True
    except TypeError:
        return False


def _plan(x: Array, key: Any):
    """Per source dimension: (start, stop, step, count, keep) and the result shape with
    None axes inserted."""
    entries, out_shape = [], []
    dim = 0
    for k in expand_key(key, x.ndim):
        if k is None:
            out_shape.append(1)
            continue
        n = x.shape[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            entries.append((start, step, count, True))
            out_shape.append(count)
        else:
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            entries.append((i % n, 1, 1, False))
        dim += 1
    return entries, tuple(out_shape)


def _runtime_index(i: int) -> Array:
    """A start position as a run-time argument, not a constant."""
    return Array(_index_node(i))


#: The 0-d int64 buffers of the smallest start positions, made once and shared by the
#: nodes that hold them (read-only: nothing writes a run-time argument's buffer).
_INDEX_BUFFERS = tuple(np.asarray(i, dtype=dt.int64) for i in range(1024))
for _buffer in _INDEX_BUFFERS:
    _buffer.flags.writeable = False


def _index_node(i: int) -> Node:
    """A ready node holding start position ``i``."""
    return Node.ready(_INDEX_BUFFERS[i] if 0 <= i < len(_INDEX_BUFFERS) else np.asarray(i, dtype=dt.int64))


class _Window(NamedTuple):
    """What ``x[i, j, ...]`` and ``x[i, j, ...] = v`` record for some ints into an array of
    some shape and dtype, found once by the ops' own shape rules."""

    #: The ``dynamic_slice`` of the window, and its shape (a unit axis per int).
    sizes: dict[str, Any]
    window: Shape
    #: The ``reshape`` that drops the unit axes, and the result's shape.
    drop: dict[str, Any]
    dropped: Shape
    #: The ``reshape`` of a value of the result's shape to the window's, and the updated array's shape.
    lift: dict[str, Any]
    updated: Shape


#: ``_Window``s by (dims, dtype, number of ints): emptied when it reaches ``_WINDOWS_MAX``
#: entries, so a loop over ever new shapes does not grow it. As many as the executable
#: cache keeps graphs (``PLAIDARRAY_CACHE_SIZE``'s default): a loop over windows of 600
#: lengths, read again, found its reads cached and planned each window anew (2.2 us of a
#: window's 4 us), the table emptied at 256.
_WINDOWS: dict[tuple, _Window] = {}
_WINDOWS_MAX = 2048


def _window(x: Array, ints: tuple[int, ...], nodes: int) -> tuple[list[int], _Window] | None:
    """The start positions and the ``_Window`` of ``x[ints]`` for Python ints over ``x``'s
    leading axes, recording ``nodes`` nodes past ``x``'s; None where the rules decide
    otherwise (an index out of range, an empty array) or where a node would be deeper than
    the pending bound (the rules' ``wrap`` decides where to cut)."""
    node = x._node
    shape = node.shape
    dims = shape.dims
    if len(ints) > len(dims) or max(node.depth, 0) + nodes > node_module.MAX_PENDING > 0:
        return None
    starts = [0] * len(dims)
    for axis, i in enumerate(ints):
        n = dims[axis]
        if not -n <= i < n:
            return None
        starts[axis] = i % n
    plan = _planned(_WINDOWS, (dims, shape.dtype, len(ints)), dims, _window_plan, shape, len(ints))
    return None if plan is None else (starts, plan)


def _planned(table: dict[tuple, Any], key: tuple, dims: tuple[int, ...], make: Callable[..., Any],
             *args: Any) -> Any:
    """The plan of ``key`` in ``table`` (``_WINDOWS``, ``_SLICES``), ``make(*args)`` at
    its first use, the table emptied when it reaches ``_WINDOWS_MAX`` entries; None for
    an empty array (``dims``), whose windows the rules decide."""
    plan = table.get(key)
    if plan is None:
        if not math.prod(dims):
            return None
        if len(table) >= _WINDOWS_MAX:
            table.clear()
        plan = table[key] = make(*args)
    return plan


def _window_plan(shape: Shape, count: int) -> _Window:
    sizes = {"slice_sizes": (1,) * count + shape.dims[count:]}
    window = OPS["dynamic_slice"].infer([shape] + [_INDEX_SHAPE] * len(shape.dims), sizes)
    drop = {"dims": shape.dims[count:]}
    dropped = OPS["reshape"].infer([window], drop)
    lift = {"dims": window.dims}
    updated = OPS["dynamic_update_slice"].infer([shape, window] + [_INDEX_SHAPE] * len(shape.dims), {})
    return _Window(sizes, window, drop, dropped, lift, updated)


def integer_index(x: Array, ints: tuple[int, ...]) -> Array | None:
    """``x[i, j, ...]`` for Python ints over ``x``'s leading axes, recorded as ``getitem``
    records it (a ``dynamic_slice`` at run-time starts, then a ``reshape`` that drops the
    indexed axes) from attributes and shapes kept per shape, dtype and number of ints: a
    loop over rows, whose every index is new, plans nothing. None where ``getitem``'s
    rules decide (``_window``; an array of more than ``graph.MERGED_RANK`` axes)."""
    found = _window(x, ints, 2) if x.ndim <= graph.MERGED_RANK else None  # else by the rules, merged
    if found is None:
        return None
    starts, plan = found
    window = derive("dynamic_slice", (x._node, *map(_index_node, starts)), plan.sizes, plan.window)
    return wrap(derive("reshape", (window,), plan.drop, plan.dropped))


def read_at_positions(x: Array, key: Any) -> Array | None:
    """``x[key]`` for a key of Python ints and 0-d integer arrays, one of them an array at
    least (``x[argmax(y)]``, ``m[i, argmin(d)]``): its arrays read as ints (an IndexError
    out of range, as NumPy raises; the general path reads them for that too), then the
    element or block they pick, recorded as ``integer_index`` records ints. A copy, not a
    view, as NumPy's read by 0-d index arrays (advanced indexing) is: the general path's
    gather of each array cost ~40 us more a read. None for any other key (and under
    ``jit``, where a traced index has no value to read)."""
    parts = key if type(key) is tuple else (key,)
    if len(parts) > x.ndim:
        return None
    arrays = [_readable_position(k) for k in parts]
    if not any(arrays) or not all(a or type(k) is int for a, k in zip(arrays, parts)):
        return None
    return integer_index(x, tuple(_int_in(k, n, axis) for axis, (k, n) in enumerate(zip(parts, x.shape))))


def _readable_position(k: Any) -> bool:
    """Whether ``k`` is a 0-d integer array that a key reads as the int it holds: not a
    traced one (``jit``, a loop's body), which has no value to read."""
    return type(k) is Array and k.ndim == 0 and k.dtype.kind in "iu" and k._node.depth != TRACED


def window_index(x: Array, key: Any) -> Array | None:
    """``x[key]`` for a key of Python ints and unit-step slices with int or None bounds
    (``x[i:j]``, ``x[i:i + 1, :]``: a loop's windows, whose starts are new at each step),
    recorded as ``getitem`` records it (a ``dynamic_slice`` at run-time starts, then a
    ``reshape`` dropping the int-indexed axes where there are any) from attributes and
    shapes kept per shape, dtype and window (``_SLICES``); None where ``getitem``'s rules
    decide: other keys, whole axes only, an empty array, an int out of range, an array of
    more than ``graph.MERGED_RANK`` axes, a node past the pending bound."""
    parts = key if type(key) is tuple else (key,)
    node = x._node
    shape = node.shape
    dims = shape.dims
    if len(parts) > len(dims) or len(dims) > graph.MERGED_RANK or max(node.depth, 0) + 2 > node_module.MAX_PENDING > 0:
        return None
    starts = [0] * len(dims)
    counts = list(dims)
    kept = [True] * len(dims)
    for axis, k in enumerate(parts):
        found = _window_entry(k, dims[axis])
        if found is None:
            return None
        starts[axis], counts[axis] = found
        kept[axis] = type(k) is not int
    window = tuple(counts)
    if window == dims and all(kept):
        return None
    plan = slice_plan(shape, window, kept)
    if plan is None:
        return None
    sizes, sliced, drop, dropped = plan
    out = derive("dynamic_slice", (node, *map(_index_node, starts)), sizes, sliced)
    return wrap(out if drop is None else derive("reshape", (out,), drop, dropped))


def newaxis_window(x: Array, key: Any) -> Array | None:
    """``x[key]`` for a key with new axes (``None``: ``x[:, None]``, ``x[None]``,
    ``m[i:j, None]``, ``t[..., None]``) whose other entries ``window_index`` takes, with at
    most one ``...``, recorded as ``getitem`` records it (the window where it is not the
    whole array or an int picks, then one ``reshape`` to the result's dims where they differ) without
    planning: an outer product's operands at new lengths took ~12 us each by the rules;
    None where ``getitem``'s rules decide (as ``window_index``)."""
    if key is None:
        key = (None,)
    elif type(key) is not tuple or not any(k is None for k in key):
        return None
    node = x._node
    shape = node.shape
    dims = shape.dims
    ellipses = sum(1 for k in key if k is Ellipsis)
    indexing = len(key) - ellipses - sum(1 for k in key if k is None)
    if ellipses > 1 or indexing > len(dims) or len(dims) > graph.MERGED_RANK or not math.prod(dims) or \
            max(node.depth, 0) + 2 > node_module.MAX_PENDING > 0:
        return None
    starts = [0] * len(dims)
    counts = list(dims)
    result: list[int] = []
    axis = 0
    for k in key:
        if k is None:
            result.append(1)
        elif k is Ellipsis:
            result += dims[axis:axis + len(dims) - indexing]
            axis += len(dims) - indexing
        else:
            found = _window_entry(k, dims[axis])
            if found is None:
                return None
            starts[axis], counts[axis] = found
            if type(k) is not int:
                result.append(counts[axis])
            axis += 1
    result += dims[axis:]
    window = tuple(counts)
    out = node
    if window != dims or any(type(k) is int for k in key):  # an int picks by a slice, as the rules record it
        plan = slice_plan(shape, window, [True] * len(dims))
        if plan is None:
            return None
        sizes, sliced, _, _ = plan
        out = derive("dynamic_slice", (node, *map(_index_node, starts)), sizes, sliced)
    new_dims = tuple(result)
    if new_dims != out.shape.dims:
        out = derive("reshape", (out,), {"dims": new_dims}, Shape(new_dims, shape.dtype))
    return wrap(out)


def _window_entry(k: Any, n: int) -> tuple[int, int] | None:
    """The start and count along an axis of length ``n`` of a window key's entry ``k``: a
    Python int in range (count 1) or a unit-step slice of int or None bounds; None for
    any other entry (``window_index``, ``newaxis_window``)."""
    if type(k) is int:
        return (k % n, 1) if -n <= k < n else None
    if type(k) is slice and (k.step is None or (type(k.step) is int and k.step == 1)) and \
            type(k.start) in _BOUNDS and type(k.stop) in _BOUNDS:
        start, stop, _ = k.indices(n)
        return start, max(stop - start, 0)
    return None


#: A slice bound the window path takes as it is.
_BOUNDS = (int, type(None))

#: ``window_index``'s plans by (dims, dtype, window sizes, kept axes), bounded as ``_WINDOWS``.
_SLICES: dict[tuple, tuple] = {}


def slice_plan(shape: Shape, window: tuple[int, ...], kept: list[bool]) -> tuple | None:
    """``window_index``'s plan of ``window`` of an array of ``shape`` (``_slice_plan``),
    kept in ``_SLICES``; None for an empty array, whose windows the rules decide."""
    return _planned(_SLICES, (shape.dims, shape.dtype, window, tuple(kept)), shape.dims, _slice_plan, shape, window,
                    kept)


def _slice_plan(shape: Shape, window: tuple[int, ...], kept: list[bool]) -> tuple:
    """The ``dynamic_slice`` attributes and shape of ``window`` of an array of ``shape``,
    and the ``reshape`` that drops the axes not ``kept`` (None where there are none)."""
    sizes = {"slice_sizes": window}
    sliced = OPS["dynamic_slice"].infer([shape] + [_INDEX_SHAPE] * len(shape.dims), sizes)
    dims = tuple(n for n, keep in zip(window, kept) if keep)
    if dims == sliced.dims:
        return sizes, sliced, None, None
    drop = {"dims": dims}
    return sizes, sliced, drop, OPS["reshape"].infer([sliced], drop)


def integer_update(x: Array, ints: tuple[int, ...], value: bool | int | float) -> Array | None:
    """``x[i, j, ...] = value`` for Python ints and a Python scalar, recorded as
    ``setitem`` records it (the scalar as a run-time value of ``x``'s dtype, broadcast to
    the window, a ``dynamic_update_slice`` at run-time starts) without planning; None
    where ``setitem``'s rules decide (``_window``)."""
    found = _window(x, ints, 3)
    if found is None:
        return None
    starts, plan = found
    value_node = graph.scalar_for(value, x.dtype, "__setitem__")._node
    if plan.dropped.dims:
        value_node = graph.broadcast_node(value_node, plan.dropped)
    lifted = derive("reshape", (value_node,), plan.lift, plan.window)
    return wrap(derive("dynamic_update_slice", (x._node, lifted, *map(_index_node, starts)), NO_ATTRS, plan.updated))




_INDEX_SHAPE = Shape((), dt.int64)


def _dynamic_window(x: Array, entries: list) -> Array:
    """The unit-step window ``entries`` of ``x``: of an array of more than
    ``graph.MERGED_RANK`` axes, the window of ``x`` with each axis merged into the one
    before it where the window stays one block of their row-major elements
    (``_merged_window``), the rank the installation builds windows of. Where the merged
    axes are still more (ranges along four axes of a 5-d array, ``v[:, :-1, :-1, :-1,
    :-1]``), the window of the first half of its cut axes, then of the others (a window is
    separable: each step's whole axes merge into its cut ones)."""
    if x.ndim <= graph.MERGED_RANK:
        return op("dynamic_slice", x, *(_runtime_index(start) for start, _, _, _ in entries),
                  slice_sizes=tuple(count for _, _, count, _ in entries))
    if any(count == 0 for _, _, count, _ in entries):  # no element: none of the vector's (empty ranges merge with nothing)
        window = op("dynamic_slice", graph.reshape(x, (x.size,)), _runtime_index(0), slice_sizes=(0,))
        return graph.reshape(window, tuple(count for _, _, count, _ in entries))
    dims, starts, counts = _merged_window(x.shape, entries)
    if len(dims) > graph.MERGED_RANK:
        outer, inner = _halves(x.shape, entries)
        return _dynamic_window(_dynamic_window(x, outer), inner)
    window = op("dynamic_slice", graph.reshape(x, tuple(dims)), *map(_runtime_index, starts),
                slice_sizes=tuple(counts))
    return graph.reshape(window, tuple(count for _, _, count, _ in entries))


#: The highest rank of window stores the installation builds (``prebuild``: a 5-d window
#: written); a store into an array of more axes is merged and split as a window is.
WRITTEN_RANK = 5


def _window_update(x: Array, entries: list, value: Array) -> Array:
    """``x`` with its unit-step window ``entries`` (none empty) written with ``value`` (of
    the window's shape): one ``dynamic_update_slice``, of an array of more than
    ``WRITTEN_RANK`` axes with its axes merged as ``_dynamic_window`` merges them, and
    where they are still too many, the window of the first half of its cut axes read,
    written with ``value`` at the others, and written back."""
    if x.ndim <= WRITTEN_RANK:
        return op("dynamic_update_slice", x, value, *(_runtime_index(start) for start, _, _, _ in entries))
    dims, starts, counts = _merged_window(x.shape, entries)
    if len(dims) > graph.MERGED_RANK:
        outer, inner = _halves(x.shape, entries)
        return _window_update(x, outer, _window_update(_dynamic_window(x, outer), inner, value))
    updated = op("dynamic_update_slice", graph.reshape(x, tuple(dims)), graph.reshape(value, tuple(counts)),
                 *map(_runtime_index, starts))
    return graph.reshape(updated, x.shape)


def _merged_window(shape: tuple[int, ...], entries: list) -> tuple[list[int], list[int], list[int]]:
    """The dims, starts and counts of the window ``entries`` of an array of ``shape`` with
    each axis merged into the one before it where the window stays one block of their
    row-major elements (an axis taken whole, or any range after single elements:
    ``x[0, 0, 0, 0, 1]`` is one element of a vector)."""
    dims: list[int] = []
    starts: list[int] = []
    counts: list[int] = []
    for axis, ((start, _, count, _), n) in enumerate(zip(entries, shape)):
        if axis and (start == 0 and count == n or counts[-1] == 1 and dims[-1] and n):
            # a row-major block still: after single elements, any range; after any range, a whole axis
            dims[-1], starts[-1], counts[-1] = dims[-1] * n, starts[-1] * n + start, counts[-1] * count
        else:
            dims.append(n)
            starts.append(start)
            counts.append(count)
    return dims, starts, counts


def _halves(shape: tuple[int, ...], entries: list) -> tuple[list, list]:
    """A window's entries split in two windows taken in turn: the first half of its cut
    axes (the others whole), then the others (within the first's window)."""
    cut = [axis for axis, ((_, _, count, _), n) in enumerate(zip(entries, shape)) if count != n]
    middle = cut[len(cut) // 2]
    outer = [entry if axis < middle else (0, 1, n, True) for axis, (entry, n) in enumerate(zip(entries, shape))]
    inner = [(0, 1, entry[2], True) if axis < middle else entry for axis, entry in enumerate(entries)]
    return outer, inner


def _boolean_mask(x: Array, key: Any) -> Array | None:
    """``key`` if it is a boolean mask over ``x``'s leading dimensions, else None."""
    if not (isinstance(key, Array) and key.dtype == dt.bool_):
        return None
    _check_mask(key, x.shape[:key.ndim])
    return key


def _check_mask(mask: Array, dims: tuple[int, ...]) -> None:
    """IndexError unless ``mask`` fits the axes ``dims`` it indexes. As in NumPy, a
    mask axis of length 0 fits any axis (it selects nothing either way)."""
    if len(dims) != mask.ndim or any(m != n and m != 0 for m, n in zip(mask.shape, dims)):
        raise IndexError(f"boolean index of shape {mask.shape} does not match the indexed axes {dims}")


def _is_advanced(k: Any) -> bool:
    """Integer and boolean arrays, and Python booleans (a new axis masked by the bool)."""
    return isinstance(k, (Array, bool, np.bool_))


def _advanced(x: Array, parts: tuple) -> Array:
    """Indexing with integer arrays (any rank), boolean arrays (over any axes) and bools,
    alongside ints, slices, ``None`` and ``...``, as NumPy does it: the basic parts are
    applied first; then the index arrays broadcast together, a mask standing for the
    positions of its True elements over its axes (their count is computed first); their
    shape replaces the axes they index, in place if those are adjacent in the key (ints
    count as index arrays there), else in front. Out-of-range indices are clamped on
    their own axis, as ``take`` does."""
    parts = _with_ellipsis_expanded(parts, x.ndim)
    # Whether every index of the key is one position (ints, 0-d integer arrays): eager code
    # reads such 0-d arrays as ints, and checks them (``_scalar_indices_read``).
    scalars_only = all(_is_int(k) or isinstance(k, Array) and k.ndim == 0 and k.dtype.kind in "iu"
                       for k in parts if _is_advanced(k) or _is_int(k))
    basic: list[Any] = []
    # (first axis after the basic parts, axes it covers, index, key position); an int's index
    # is its position (a Python int, checked), which ``_gather`` adds without an op
    entries: list[tuple[int, int, Array | int, int]] = []
    axis = source = 0  # the next axis of the basic parts' result, and of x
    for at, k in enumerate(parts):
        if k is _SEPARATOR:
            continue
        if k is None:
            basic.append(None)
            axis += 1
        elif isinstance(k, (bool, np.bool_)) or (isinstance(k, Array) and k.dtype == dt.bool_ and k.ndim == 0):
            basic.append(None)  # a new axis of length 1, selected or not by the bool
            mask = graph.reshape(graph.constant(bool(k), dt.bool_) if not isinstance(k, Array) else k, (1,))
            entries.append((axis, 1, _positions(mask), at))
            axis += 1
        elif isinstance(k, Array) and k.dtype == dt.bool_:
            _check_mask(k, x.shape[source:source + k.ndim])
            basic.extend([slice(None)] * k.ndim)
            entries.append((axis, k.ndim, _positions(k), at))
            axis += k.ndim
            source += k.ndim
        elif isinstance(k, Array) or _is_int(k):
            if isinstance(k, Array) and k.dtype.kind not in "iu":
                raise IndexError(f"index arrays must be integers or booleans, got {k.dtype}")
            basic.append(slice(None))
            if isinstance(k, Array):
                index = _wide_index(k)
                if k.ndim == 0 and k._node.depth != TRACED:
                    _int_in(k, x.shape[source], source)  # read: IndexError out of range, as NumPy raises
                elif k._node.weak or scalars_only:
                    _guard_position(index, x.shape[source], source)
                entries.append((axis, 1, index, at))
            else:
                entries.append((axis, 1, _int_in(k, x.shape[source], source) % x.shape[source], at))
            axis += 1
            source += 1
        else:
            basic.append(k)
            axis += 1
            source += 1
    y = getitem(x, tuple(basic))
    if len(entries) == 1:
        first, count, only, _ = entries[0]
        index = only if isinstance(only, Array) else graph.constant(only, dt.int64)
        before, after = y.shape[:first], y.shape[first + count:]
        taken = math.prod(y.shape[first:first + count])
        if index.ndim == 0:
            # One position along an inner axis (``X[:, argmax(score)]``): the axes before it
            # and after it each as one, so a take of rank 3 at most, along axis 0 or 1, serves
            # every rank and axis (one along axis 1 of a 3-d array compiled at its first use).
            lead, tail = math.prod(before), math.prod(after)
            merged = graph.reshape(y, ((lead,) if lead != 1 else ()) + (taken,) + ((tail,) if tail != 1 else ()))
            return graph.reshape(op("take", merged, index, axis=int(lead != 1)), before + after)
        merged = graph.reshape(y, before + (taken,) + after)
        return op("take", merged, index, axis=first)
    return _gather(y, entries, _adjacent([at for *_, at in entries]))


def _int_in(k: Any, n: int, axis: int) -> int:
    """The int index ``k`` of an axis of ``n`` positions, IndexError if it names none (an
    index array's entries are clamped instead, not read)."""
    i = operator.index(k)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i


def _guard_position(index: Array, n: int, axis: int) -> None:
    """Under jit, a 0-d index that eager code checks (a traced Python int; an index of a
    key of single positions) must name a position of its axis: checked after each call."""
    guard(index._node, Guard(-n, n - 1, IndexError, f"index {{value}} is out of bounds for axis {axis} with size {n}"))


def selected(x: Array, mask: Array) -> Array:
    """``x[mask]``, ``mask`` of the shape of ``x``'s leading axes: the positions of its
    True elements taken from those axes merged, as ``_advanced`` takes them, without its
    bookkeeping for keys of several parts (the commonest advanced key, often once a loop
    step: ``v[v > t]`` of 200 elements took 35 us to record besides its count's read)."""
    merged = x if mask.ndim == x.ndim == 1 else graph.reshape(x, (math.prod(mask.shape), *x.shape[mask.ndim:]))
    return op("take", merged, _positions(mask), axis=0)


def is_leading_mask(x: Array, key: Any) -> bool:
    """Whether ``key`` is a boolean mask of ``x``'s leading axes (``selected``'s key)."""
    return isinstance(key, Array) and key.dtype == dt.bool_ and key.ndim > 0 and key.shape == x.shape[:key.ndim]


def _with_ellipsis_expanded(parts: tuple, ndim: int) -> tuple:
    """The key with ``...`` as the full slices it stands for (``...`` absent: appended)."""
    if sum(k is Ellipsis for k in parts) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(k.ndim if isinstance(k, Array) and k.dtype == dt.bool_ else
                   0 if k is None or k is Ellipsis or isinstance(k, (bool, np.bool_)) else 1 for k in parts)
    if consumed > ndim:
        raise IndexError(f"too many indices: array is {ndim}-dimensional, but {consumed} were indexed")
    fill = (slice(None),) * (ndim - consumed)
    if not any(k is Ellipsis for k in parts):
        return (*parts, *fill)
    at = next(i for i, k in enumerate(parts) if k is Ellipsis)
    # The ellipsis stays a separator between index arrays (NumPy's rule for their place).
    return (*parts[:at], *fill, _SEPARATOR, *parts[at + 1:])


#: Where ``...`` stood in an expanded key: no axis, but it keeps the index arrays on its
#: two sides apart.
_SEPARATOR = object()


def _adjacent(positions: list[int]) -> bool:
    return positions == list(range(positions[0], positions[0] + len(positions)))


def _positions(mask: Array) -> Array:
    from .searching import true_positions

    return true_positions(mask)


def _gather(y: Array, entries: list, adjacent: bool) -> Array:
    """``y`` gathered at several index arrays broadcast together (one linear position
    each into the block of the axes they index, moved in front)."""
    indexed = [a for first, count, _, _ in entries for a in range(first, first + count)]
    rest = [a for a in range(y.ndim) if a not in indexed]
    moved = graph.transpose(y, (*indexed, *rest)) if indexed + rest != list(range(y.ndim)) else y
    sizes = [math.prod(y.shape[first:first + count]) for first, count, _, _ in entries]
    block = graph.reshape(moved, (math.prod(sizes), *(y.shape[a] for a in rest)))
    shapes = [index.shape for _, _, index, _ in entries if type(index) is not int]
    try:
        shape = graph.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(f"index arrays of shapes {shapes} do not broadcast together") from None
    offset = sum(index * stride for (_, _, index, _), stride in zip(entries, _strides(sizes)) if type(index) is int)
    linear: Array | None = None
    for (_, _, index, _), n, stride in zip(entries, sizes, _strides(sizes)):
        if type(index) is int:
            continue
        k = graph.broadcast_to(graph.convert(index, dt.int64), shape)
        wrapped = op("select", op("compare", k, graph.full(shape, 0, dt.int64), direction="LT"),
                     op("add", k, graph.size_operand(n, shape, dt.int64, "__getitem__")), k)
        # Out of range even so: clamped on its own axis (as take does), never read out of bounds.
        clamped = op("minimum", op("maximum", wrapped, graph.full(shape, 0, dt.int64)),
                     graph.size_operand(max(n - 1, 0), shape, dt.int64, "__getitem__"))
        term = op("multiply", clamped, graph.size_operand(stride, shape, dt.int64, "__getitem__")) if stride != 1 \
            else clamped
        linear = term if linear is None else op("add", linear, term)
    if linear is None:
        linear = graph.full(shape, offset, dt.int64)
    elif offset:
        linear = op("add", linear, graph.size_operand(offset, shape, dt.int64, "__getitem__"))
    out = op("take", block, linear, axis=0)
    first = entries[0][0]
    before = sum(1 for a in rest if a < first)
    if not adjacent or before == 0:
        return out
    order = (*range(len(shape), len(shape) + before), *range(len(shape)), *range(len(shape) + before, out.ndim))
    return graph.transpose(out, order)


def _strides(sizes: list[int]) -> list[int]:
    out, step = [], 1
    for n in reversed(sizes):
        out.append(step)
        step *= n
    return out[::-1]


def getitem(x: Array, key: Any) -> Array:
    """``x[key]`` as a new value (``api/views.py`` makes basic indexing a view)."""
    if is_leading_mask(x, key):
        return selected(x, key)
    key = _numpy_indices(key, x)
    parts = key if isinstance(key, tuple) else (key,)
    if any(_is_advanced(k) for k in parts):
        return _advanced(x, parts)
    entries, out_shape = _plan(x, key)
    if all(start == 0 and step == 1 and count == n and keep for (start, step, count, keep), n in zip(entries, x.shape)):
        # Whole axes and new ones (x[:, None]): no window to take. A new array even for
        # x[:] (the view's write-back must not find x as its own base).
        return graph.reshape(x, out_shape) if out_shape != x.shape else Array(x._node)
    if all(step == 1 for _, step, _, _ in entries) and x.size:
        return graph.reshape(_dynamic_window(x, entries), out_shape)
    flipped = tuple(d for d, (_, step, count, _) in enumerate(entries) if step < 0 and count)
    y = graph.reverse(x, flipped)
    starts, limits, strides = [], [], []
    for d, (start, step, count, _) in enumerate(entries):
        if step < 0:
            start, step = x.shape[d] - 1 - start, -step
        start = min(start, x.shape[d]) if count else 0
        starts.append(start)
        limits.append(start + (count - 1) * step + 1 if count else start)
        strides.append(step)
    if any(s or l != n or st != 1 for s, l, st, n in zip(starts, limits, strides, x.shape)):
        y = graph.sliced(y, tuple(starts), tuple(limits), tuple(strides))
    return graph.reshape(y, out_shape)


_PYTHON_SCALARS = (bool, int, float)


def all_ints(key: tuple) -> bool:
    """Whether every entry of ``key`` is a Python int (the fast indexing paths' keys)."""
    for k in key:
        if type(k) is not int:
            return False
    return True


def _masked_update(x: Array, mask: Array, value: Array) -> Array:
    """``x[mask] = value``: scalars and rows broadcast; otherwise ``value`` has one row
    per True position (their count is read: ValueError where it has another number, as
    NumPy raises), written at the positions by ``scatter`` in a vector (run at once, in
    place where nothing else sees its memory: ``x[m] *= c``) or in an array of a mask over
    every axis flattened (``img[img > t] *= 0.5``), else (a mask over leading axes, a row
    per True position) the k-th True position takes ``value[k]``, found from the running
    count of True values. No values where
    the mask selects nothing (``x[m] = x[m] * 2``) leave ``x`` as it is, as in NumPy."""
    wide = mask if mask.shape == x.shape else graph.spread(mask, x.shape, tuple(range(mask.ndim)))
    if value.size == 1:
        return op("select", wide, graph.broadcast_to(graph.reshape(value, ()), x.shape), x)
    trailing = x.shape[mask.ndim:]
    if value.ndim <= len(trailing) or (value.ndim == len(trailing) + 1 and value.shape[0] == 1):
        # One value for every selected position (``x[row_mask] = row``), as NumPy broadcasts it.
        row = graph.broadcast_to(graph.reshape(value, value.shape[1:]) if value.ndim > len(trailing) else value,
                                 trailing)
        spread = graph.spread(row, x.shape, tuple(range(mask.ndim, x.ndim)))
        return op("select", wide, spread, x)
    from .searching import true_count, true_positions

    count = true_count(mask)
    if value.shape[0] != count:
        raise ValueError(f"__setitem__: cannot assign {value.shape[0]} values to the {count} positions "
                         "the boolean mask selects")
    if value.size == 0:
        return x
    if x.ndim == value.ndim == 1:
        return op("scatter", x, true_positions(mask, count), value)
    if value.ndim == 1 and mask.ndim == x.ndim:  # one value an element: the flattened array's scatter
        flat = op("scatter", graph.reshape(x, (x.size,)), true_positions(mask, count), value)
        return graph.reshape(flat, x.shape)
    flat_mask = graph.convert(graph.reshape(mask, (mask.size,)), dt.int64)
    rank = op("subtract", op("cumulative", flat_mask, dimension=0, kind="add"), graph.full((mask.size,), 1, dt.int64))
    rows = op("take", value, rank, axis=0)
    if rows.shape[1:] != x.shape[mask.ndim:]:
        rows = graph.broadcast_to(rows, (mask.size,) + x.shape[mask.ndim:])
    return op("select", wide, graph.reshape(rows, x.shape), x)


def setitem(x: Array, key: Any, value: Any) -> Array:
    """The array ``x`` with ``x[key] = value`` applied, as a new value. Python ints and a
    Python scalar, the assignments of a loop over elements or rows, are recorded without
    planning (``integer_update``). 0-d integer arrays among Python ints and slices are
    read and taken as the ints they hold (a write is where NumPy writes then: a count
    ``counts[labels[i]] += 1`` is a window update, not a scatter of a range-checked key,
    20 ops and a read, 0.3-1.5 ms a step)."""
    key = _scalar_indices_read(key)
    if type(value) in _PYTHON_SCALARS and type(x) is Array:
        ints = (key,) if type(key) is int else key if type(key) is tuple and all_ints(key) else None
        if ints:
            out = integer_update(x, ints, value)
            if out is not None:
                return out
        elif type(key) is Array:
            out = _masked_scalar(x, key, value)
            if out is not None:
                return out
    return _updated(x, key, value)


def _masked_scalar(x: Array, mask: Array, value: bool | int | float) -> Array | None:
    """``x[mask] = value`` of a boolean mask of ``x``'s shape and device and a Python
    scalar of a kind ``x``'s dtype holds as it is (a float or an int into floats, a bool
    into bools): ``where(mask, value, x)``, recorded as ``where`` records it (~18 us a
    store by the rules, ~4 so); None for any other (ints into integers, whose range the
    rules check)."""
    node, target = mask._node, x._node
    kind = target.shape.dtype.kind
    if node.shape.dtype != dt.bool_ or node.shape.dims != target.shape.dims or node.device is not target.device or \
            not (kind in "fc" and type(value) is not bool or kind == "b" and type(value) is bool):
        return None
    from .searching import where

    out = where(mask, value, x)
    return out if out._node.shape.dtype == target.shape.dtype else None


def _scalar_indices_read(key: Any) -> Any:
    """``key`` with its 0-d integer arrays read as Python ints, where its other entries
    are Python ints, slices, ``...`` or ``None`` (with index arrays of more dimensions
    they broadcast as arrays, and stay): a write at a 0-d integer array is where NumPy
    writes then (a read by one is a copy in NumPy, ``_advanced``, its position checked)."""
    if type(key) is Array and key._node.shape.dims:  # a mask, an index array: no int to read
        return key
    parts = key if type(key) is tuple else (key,)
    scalars = [_readable_position(k) for k in parts]  # a traced one stays an index array
    if not any(scalars) or not all(s or type(k) in _BASIC_PARTS for s, k in zip(scalars, parts)):
        return key
    read = tuple(operator.index(k) if s else k for s, k in zip(scalars, parts))
    return read if type(key) is tuple else read[0]


#: The basic entries of a key that 0-d integer arrays are read among.
_BASIC_PARTS = (int, slice, type(Ellipsis), type(None))


#: Kinds of dtypes in the order values are stored up it (``setitem``): an array of a kind no
#: higher than the target's is cast to the target's dtype, as NumPy's setitem casts (a
#: float64 mean into a float32 array, a count of a mask, int64, into an int32 one); one of a
#: higher kind (floats into integers, complex into reals, numbers into booleans) is refused,
#: since the cast would change the values silently.
_KINDS = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


@recorded
def _updated(x: Array, key: Any, value: Any) -> Array:
    """``setitem`` by its rules; a recipe per signature (``recorded``): a loop's store of a
    block of slices, a stencil's ``u[1:-1, 1:-1] = inner``, decided its plan, casts and
    window anew at each step (~30 us)."""
    key, value = _numpy_indices(key, x), _numpy_value(value, x)
    if isinstance(value, Array):
        if _KINDS[value.dtype.kind] > _KINDS[x.dtype.kind]:
            raise TypeError(f"__setitem__: cannot store {value.dtype} values into a {x.dtype} array "
                            f"(it would drop what they say: use astype to cast them)")
        value = graph.convert(value, x.dtype)
    else:
        value = graph.scalar_for(value, x.dtype, "__setitem__")
    mask = _boolean_mask(x, key)
    if mask is not None:
        return _masked_update(x, mask, value)
    parts = key if isinstance(key, tuple) else (key,)
    if any(_is_advanced(k) for k in parts):
        return _scattered(x, parts, value)
    entries, out_shape = _plan(x, key)
    region = tuple(count for _, _, count, _ in entries)
    value = graph.reshape(graph.broadcast_to(_fitted(value, out_shape), out_shape), region)
    if any(step < 0 for _, step, count, _ in entries):
        flips = tuple(d for d, (_, step, _, _) in enumerate(entries) if step < 0)
        value = graph.reverse(value, flips)
    low, high, interior = [], [], []
    for d, (start, step, count, _) in enumerate(entries):
        first = start if step > 0 else start + (count - 1) * step
        stride = abs(step)
        last = first + (count - 1) * stride if count else first
        low.append(first if count else 0)
        interior.append(stride - 1 if count else 0)
        high.append(x.shape[d] - 1 - last if count else x.shape[d])
    if 0 in region:
        return x
    whole = _whole(x, entries, value)
    if whole is not None:
        return whole
    if all(step == 1 for _, step, _, _ in entries):
        return _window_update(x, entries, value)
    mask = graph.full(region, True, dt.bool_)
    pad = dict(low=tuple(low), high=tuple(high), interior=tuple(interior))
    placed = graph.padded(value, graph.constant(0, x.dtype), **pad)
    where = graph.padded(mask, graph.constant(False, dt.bool_), **pad)
    return op("select", where, placed, x)


def _fitted(value: Array, shape: tuple[int, ...]) -> Array:
    """``value`` without the leading unit axes it has beyond the rank of ``shape``, the
    selection it is stored into: NumPy's assignment drops them (``x[i] = y[j:j + 1]``, a
    row of shape (1, n) into ``m[i]``), where broadcasting alone would refuse the value."""
    extra = value.ndim - len(shape)
    if extra > 0 and all(n == 1 for n in value.shape[:extra]):
        return graph.reshape(value, value.shape[extra:])
    return value


def _whole(x: Array, entries: list, value: Array) -> Array | None:
    """``x``'s new value where a basic key's ``entries`` (``_plan``'s) select every element
    of ``x`` in order (``x[...] = v``, ``x[:] = v``, ``x[()] = v`` of a 0-d array): ``value``
    itself, of ``x``'s shape and dtype by then, as the node it is (sharing a node is a copy,
    ``graph.copy_of``), or a Python scalar's buffer as a value of ``x``'s device (copied
    to a GPU);
    where an update of the whole array ran a kernel, one no installation held for a 0-d
    array (a compile at a script's first such write). None otherwise: not for a weakly
    typed value (a traced scalar), which would make ``x`` weak, nor across devices."""
    node, device = value._node, x._node.device
    if node.weak or node.shape != x._node.shape or \
            not all(start == 0 and step == 1 and count == n for (start, step, count, _), n in zip(entries, x.shape)):
        return None
    if node.device is device:
        return value
    if node.device is None and node.buffer is not None and device is not None:  # a Python scalar's, the host's
        transfers = device.transfers
        return Array(Node.ready(node.buffer if transfers is HOST else transfers.from_host(node.buffer, "__setitem__"),
                                device))
    return None


def _scatter_in_range(x: Array, parts: tuple, value: Array) -> None:
    """``_scattered``'s check (``recorded``'s): an index out of range raises IndexError
    (reads clamp; a write would land elsewhere)."""
    _check_in_range(x, parts)


@functools.partial(recorded, check=_scatter_in_range)
def _scattered(x: Array, parts: tuple, value: Array) -> Array:
    """``x[key] = value`` for any advanced key: the flat position in ``x`` of each element
    of ``x[key]`` is ``key`` applied to the positions ``0 .. x.size - 1`` (the reading rules
    once), and ``scatter`` writes each value at its position in order, so the last value
    naming a position stays, as in NumPy. Its recipe (``recorded``) replays the positions'
    and the scatter's nodes: a loop's ``x[idx] = v`` decided them at each step."""
    if x.ndim == 1 and len(parts) == 1 and isinstance(parts[0], Array) and parts[0].dtype.kind in "iu":
        positions = _wide_index(parts[0])  # a vector's positions are the indices: scatter wraps them as take does
    else:
        positions = getitem(graph.reshape(op("iota", dims=(x.size,), iota_dimension=0, dtype=dt.int64), x.shape),
                            parts)
    try:
        values = graph.broadcast_to(_fitted(value, positions.shape), positions.shape)
    except ValueError:
        raise ValueError(f"__setitem__: a value of shape {value.shape} does not broadcast to the "
                         f"{positions.shape} elements selected") from None
    count = positions.size
    if count == 0 or x.size == 0:
        return x
    written = op("scatter", graph.reshape(x, (x.size,)), graph.reshape(positions, (count,)),
                 graph.reshape(values, (count,)))
    return graph.reshape(written, x.shape)


#: Computed index arrays found in range, by their node's id and an axis length, with the
#: node (held, so that its id names it alone): a computed array's values never change, so
#: a loop writing at the same index array each step (``u[edge] = 0``) checks it once per
#: length, not with a read at each write (about half of such a write). Arrays of at most
#: ``CHECKED_ELEMENTS`` elements; emptied at ``CHECKED_MAX`` entries.
_CHECKED: dict[tuple[int, int], Node] = {}
CHECKED_MAX = 64
CHECKED_ELEMENTS = 4096


def _check_in_range(x: Array, parts: tuple) -> None:
    """IndexError if an integer index array of ``parts`` names a position outside its
    axis (computed: a read, or found in range before, ``_CHECKED``). Traced ones (jit)
    cannot be read: their least and greatest values are guards, checked after each call
    (``tracing.guard``). A loop's ``x[idx] = v`` asks first for its one index array found
    in range before."""
    if len(parts) == 1 and type(parts[0]) is Array and x.ndim:
        index = parts[0]._node
        if _CHECKED.get((id(index), x.shape[0])) is index:
            return
    checks, source = [], 0
    computed: list[tuple[Node, int]] = []
    for k in _with_ellipsis_expanded(parts, x.ndim):
        if k is None or k is _SEPARATOR or isinstance(k, (bool, np.bool_)):
            continue
        if isinstance(k, Array) and k.dtype == dt.bool_:
            source += k.ndim
            continue
        n = x.shape[source]
        node = k._node if isinstance(k, Array) and 0 < k.size <= CHECKED_ELEMENTS else None  # a pinned one syncs once
        if node is not None and node.buffer is not None:
            if _CHECKED.get((id(node), n)) is node:
                source += 1
                continue
            computed.append((node, n))
        if isinstance(k, Array) and k.size and k._node.depth == TRACED:
            wide = _wide_index(k)  # a uint64 past 2**63 wraps to a negative value, out of range too
            for extreme in ("minimum", "maximum"):
                _guard_position(graph.reshape(op("reduce", wide, dimensions=tuple(range(k.ndim)), kind=extreme), ())
                                if k.ndim else wide, n, source)
        elif isinstance(k, Array) and k.size and k.dtype == dt.uint64:  # past 2**63 as itself, not wrapped to int64
            checks.append(op("compare", k, graph.size_operand(n, k.shape, dt.uint64, "__setitem__"), direction="GE"))
        elif isinstance(k, Array) and k.size:
            wide = graph.convert(k, dt.int64)
            checks.append(op("or", op("compare", wide, graph.size_operand(-n, k.shape, dt.int64, "__setitem__"),
                                      direction="LT"),
                             op("compare", wide, graph.size_operand(n, k.shape, dt.int64, "__setitem__"),
                                direction="GE")))
        source += 1
    if checks:
        from .utility import any as any_

        if bool(any_(op("concatenate", *(graph.reshape(c, (c.size,)) for c in checks), dimension=0))
                if len(checks) > 1 else any_(checks[0])):
            raise IndexError(f"__setitem__: an index array names a position outside the array of shape {x.shape}")
    for node, n in computed:
        if len(_CHECKED) >= CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[id(node), n] = node


#: The types of index arrays whose values ``check_computed_indices`` may find computed
#: (an array exported to NumPy is ``Pinned``).
INDEX_ARRAYS = frozenset({Array, Pinned, np.ndarray})


def check_computed_indices(x: Array, key: Any) -> None:
    """IndexError where an integer index array of ``key`` whose values are computed on the
    host (or a NumPy array) names a position outside the axis of ``x`` it indexes, as NumPy
    raises (a read clamps such a position, as ``take`` does, and nothing else would say
    so). Its values are looked at where they lie, nothing is run; a pending index array is
    not read for this (a read of it would cut the graph at every gather): its out-of-range
    positions stay clamped. One computed on a GPU is copied to the host for this where it
    has at most ``CHECKED_ELEMENTS`` elements (a larger one's positions are clamped). Found
    in range, an array of at most ``CHECKED_ELEMENTS`` is not looked at again for that
    axis length (``_CHECKED``)."""
    parts = key if type(key) is tuple else (key,)
    for k in parts:
        if type(k) is np.ndarray or isinstance(k, Array) and k._node.buffer is not None:
            break
    else:
        return  # every index array pending
    if any(k is Ellipsis for k in parts):
        parts = _with_ellipsis_expanded(parts, x.ndim)
    source, shape = 0, x.shape
    for k in parts:
        kind = type(k)
        if k is None or k is _SEPARATOR or kind is bool or kind is np.bool_:
            continue
        if kind in INDEX_ARRAYS:
            dtype_kind = k.dtype.kind
            if dtype_kind == "b":
                source += k.ndim
                continue
            if dtype_kind in "iu" and source < len(shape):
                _check_computed(k, shape[source], source)
        source += 1


def _check_computed(indices: Array | np.ndarray, n: int, axis: int) -> None:
    """IndexError if the computed host values of ``indices`` (an array's, or a NumPy
    array) name no position of an axis of ``n``; nothing where they are pending, on a
    device or empty."""
    node = indices._node if isinstance(indices, Array) else None
    buffer = node.buffer if node is not None else indices
    if node is not None and node.device is not None and buffer is not None and type(buffer) is not np.ndarray and \
            0 < indices.size <= CHECKED_ELEMENTS and _CHECKED.get((id(node), n)) is not node:
        buffer = node.device.transfers.to_host(buffer)  # computed on a device: a small copy
    if type(buffer) is not np.ndarray or not buffer.size or not n or \
            node is not None and _CHECKED.get((id(node), n)) is node:
        return  # pending, on a device, empty, found in range before, or an empty axis (its op's rule raises)
    low, high = buffer.min(), buffer.max()
    if high >= n or low < -n:
        bad = int(high) if high >= n else int(low)
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    if node is not None and buffer.size <= CHECKED_ELEMENTS:
        if len(_CHECKED) >= CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[id(node), n] = node


def _check_along(x: Any, indices: Any, /, *, axis: Any = -1) -> None:
    """``take_along_axis``' check (``recorded``'s), and ``take``'s: ``indices`` along
    ``axis`` of ``x`` where their values are computed (on the host or a GPU) or a NumPy
    array's (``_check_computed``), and these are what the function takes (else its rules say what
    is wrong); pending ones are not read (clamped)."""
    if isinstance(indices, Array):
        if indices._node.buffer is None:
            return
    elif type(indices) is not np.ndarray:
        return
    if isinstance(x, Array) and type(axis) is int and -x.ndim <= axis < x.ndim and indices.dtype.kind in "iu":
        _check_computed(indices, x.shape[axis], axis % x.ndim)


def _index_array(indices: Any, where: str) -> Array:
    """``indices`` as an integer array. NumPy's indices are taken too (an extension that
    Cubed relies on): a NumPy array, and an int or NumPy integer, which picks one
    position and drops the axis as ``numpy.take`` does."""
    if isinstance(indices, (np.ndarray, np.generic)):
        from .creation import asarray

        indices = asarray(indices)
    elif _is_int(indices):
        indices = graph.runtime_scalar(operator.index(indices), dt.default_int)
    indices = check_array(indices, where)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{where}: indices must have an integer dtype, got {indices.dtype}")
    return _wide_index(indices)


def _wide_index(indices: Array) -> Array:
    """Integer ``indices`` of any other dtype as int64: a gather's index dtype is part of
    its op kernel's signature, and the kernels built at installation take int64 indices
    (what positions, argsorts and ``asarray`` of Python ints give), so int32, int16 or
    uint64 indices (a sum of uint8 flags is uint64) need no kernels of their own. A uint64
    index past 2**63 names no position of any array; converted, it reads as the negative
    index of its bits would (a write checks it as itself first, ``_check_in_range``)."""
    if indices.dtype == dt.int64:
        return indices
    return graph.convert(indices, dt.int64)


def _take_in_range(x: Any, indices: Any, /, *, axis: Any = None) -> None:
    """``take``'s check: ``_check_along``, a Python or NumPy integer's position too (a 1-D
    array's axis is 0 where none is given)."""
    if not isinstance(indices, (Array, np.ndarray)) and _is_int(indices):
        indices = np.asarray(operator.index(indices))
    _check_along(x, indices, axis=0 if axis is None else axis)


@functools.partial(recorded, check=_take_in_range)
def take(x: Array, indices: Array | int, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at ``indices`` along ``axis`` (negative indices count from the end;
    out-of-range indices raise IndexError where their values are known, else are clamped,
    never read out of bounds: ``_check_along``). An int picks one position and drops the
    axis, as in NumPy (an extension)."""
    x = check_array(x, "take")
    indices = _index_array(indices, "take")
    if axis is None:
        if x.ndim > 1:
            raise ValueError("take: axis is required for arrays of more than one dimension")
        axis = 0
    if x.ndim == 0:
        raise ValueError("take: x must have at least one dimension")
    (axis,) = normalize_axes(axis, x.ndim, "take")
    return op("take", x, indices, axis=axis)


@functools.partial(recorded, check=_check_along)
def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """Elements of ``x`` at per-position ``indices`` along ``axis`` (broadcast elsewhere);
    out-of-range indices as ``take``'s."""
    x = check_array(x, "take_along_axis")
    indices = _index_array(indices, "take_along_axis")
    if x.ndim == 0 or indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: x and indices must have the same rank, got {x.ndim} and {indices.ndim}")
    (axis,) = normalize_axes(axis, x.ndim, "take_along_axis")
    others = graph.broadcast_shapes(*(tuple(1 if i == axis else s for i, s in enumerate(a.shape)) for a in (x, indices)))
    x = graph.broadcast_to(x, tuple(x.shape[axis] if i == axis else s for i, s in enumerate(others)))
    indices = graph.broadcast_to(indices, tuple(indices.shape[axis] if i == axis else s for i, s in enumerate(others)))
    return op("take_along_axis", x, indices, axis=axis)
