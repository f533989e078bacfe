"""The standard's functions whose NumPy results are views, one step each.

Each step is a row of what ``trace/views.py`` needs to keep a view and its root agreeing
(PyTorch's functionalization records the same per view op): the view's value from its
base's, how a new value of the view goes back into its base, and where NumPy would lay
the view's elements out. Which functions give which step:

| step        | functions                                                   | writable |
|-------------|-------------------------------------------------------------|----------|
| `Index`     | basic indexing `x[0, 1:, None, ...]`, `unstack`, iteration,  | yes      |
|             | `from_dlpack` of a plaidarray array                          |          |
| `Transpose` | `permute_dims`, `matrix_transpose`, `x.T`, `x.mT`, `moveaxis` | yes      |
| `Reshape`   | `reshape` (where NumPy needs no copy), `expand_dims`, `squeeze` | yes    |
| `Reverse`   | `flip`                                                       | yes      |
| `Part`      | `real`, `imag` of a complex array                            | yes      |
| `Broadcast` | `broadcast_to`, `broadcast_arrays`                           | no       |
| `Diagonal`  | `linalg.diagonal`                                            | no       |

Read-only views raise on a write, as NumPy's do. ``asarray(x)`` and ``astype(x, x.dtype,
copy=False)`` return ``x`` itself.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..trace import node as node_module
from ..trace.array import Array
from ..trace.tracing import is_tracing
from ..trace.views import Family, Layout, Step, ViewOf, attach, view
from . import graph, indexing
from .graph import op, transpose
from .recipes import recorded


def _is_basic(key: Any) -> bool:
    """Whether ``key`` is basic indexing (ints, slices, ``...``, ``None``), which gives a
    view in NumPy; integer arrays and masks give copies. Under jit, a traced int (a 0-d
    integer array being traced: ``out[i]`` of a traced Python int) is the int it will be:
    its view is one, at a position known when the function runs (``_traced_position``); a
    0-d integer array, traced or not, is a copy's index, as NumPy takes it."""
    parts = key if type(key) is tuple else (key,)
    return all(type(k) in _BASIC or (isinstance(k, (int, np.integer)) and not isinstance(k, bool)) or
               _traced_position(k) for k in parts)


def _traced_position(k: Any) -> bool:
    """Whether ``k`` is a traced Python int of a key (weak: a 0-d integer array argument
    indexes as NumPy's 0-d arrays do, a copy)."""
    return type(k) is Array and k._node.weak and k._node.depth == node_module.TRACED and k.ndim == 0 and \
        k.dtype.kind in "iu"


_BASIC = (int, slice, type(Ellipsis), type(None))


@dataclass(slots=True, eq=False)
class Index(Step):
    """``x[key]`` with a basic key. Two are the same view where their keys are, a traced
    int by identity (``==`` of arrays is elementwise, and of traced ones has no value)."""

    key: Any
    name = "__getitem__"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Index:
            return NotImplemented
        if type(self.key) is int and type(other.key) is int:  # a loop's rows
            return self.key == other.key
        mine, theirs = (k if type(k) is tuple else (k,) for k in (self.key, other.key))
        return len(mine) == len(theirs) and all(
            a is b or type(a) is not Array and type(b) is not Array and type(a) is type(b) and a == b
            for a, b in zip(mine, theirs))

    __hash__ = None  # type: ignore[assignment]  # as the generated equality left it

    def forward(self, base: Array) -> Array:
        """The view's value from its base's: a window as ``_recorded_window`` records it
        (the rules' nodes, without their plan: a write refreshing 30 kept row windows of
        its array took ~25 us each by the rules), other keys, and any while tracing (where
        ``getitem`` takes the rules too), by the rules."""
        out = None if is_tracing() else _recorded_window(base, self.key)
        return indexing.getitem(base, self.key) if out is None else out

    def inverse(self, base: Array, value: Array) -> Array:
        return indexing.setitem(base, self.key, value)

    def store(self, base: Array, value: Array) -> None:
        base._store(self.key, value)  # a window update, run at once, in place when it can be

    def basic_key(self) -> Any:
        key = self.key
        if type(key) is int or all(type(k) in _BASIC for k in (key if type(key) is tuple else (key,))):
            return key
        return None  # a traced int's position, known when the function runs

    def layout(self, base: Layout) -> Layout:
        if type(self.key) is int:  # a row of its base (or a plane): a loop's view, laid out at each write
            return Layout(base.shape[1:], base.offset + self.key % base.shape[0] * base.strides[0], base.strides[1:])
        parts = self.key if type(self.key) is tuple else (self.key,)
        if len(parts) <= len(base.shape) and all(type(k) is int or type(k) is slice for k in parts):
            return _laid_out(parts, base)  # a loop's ``m[i, :]``, ``m[:, j]``, ``x[a:b]``: no expansion (~1 us)
        if any(_traced_position(k) for k in parts):  # its shape and strides, at a position known when run
            placed = Index(tuple(0 if _traced_position(k) else k for k in parts)).layout(base)
            return placed._replace(offset=math.nan)
        return _laid_out(indexing.expand_key(self.key, len(base.shape)), base)


def _laid_out(parts: Sequence[Any], base: Layout) -> Layout:
    """The layout of the view that ``parts`` (ints, slices and new axes, ``None``, for
    leading axes of ``base``; the axes after them whole) pick of an array laid out as
    ``base``."""
    shape: list[int] = []
    strides: list[int] = []
    offset, dim = base.offset, 0
    for k in parts:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n, s = base.shape[dim], base.strides[dim]
        dim += 1
        if type(k) is slice:
            start, stop, step = k.indices(n)
            shape.append(len(range(start, stop, step)))
            strides.append(s * step)
            offset += start * s
        else:
            offset += operator.index(k) % n * s
    return Layout((*shape, *base.shape[dim:]), offset, (*strides, *base.strides[dim:]))


@dataclass(slots=True)
class Transpose(Step):
    permutation: tuple[int, ...]
    name: str = "permute_dims"

    def forward(self, base: Array) -> Array:
        return transpose(base, self.permutation)

    def inverse(self, base: Array, value: Array) -> Array:
        back = tuple(sorted(range(len(self.permutation)), key=self.permutation.__getitem__))
        return transpose(value, back)

    def layout(self, base: Layout) -> Layout:
        return Layout(tuple(base.shape[a] for a in self.permutation), base.offset,
                      tuple(base.strides[a] for a in self.permutation))


@dataclass(slots=True)
class Reshape(Step):
    shape: tuple[int, ...]
    name: str = "reshape"
    may_copy = True

    def forward(self, base: Array) -> Array:
        return graph.reshape(base, self.shape)

    def inverse(self, base: Array, value: Array) -> Array:
        return graph.reshape(value, base.shape)

    def layout(self, base: Layout) -> Layout | None:
        strides = reshaped_strides(base.shape, base.strides, self.shape)
        return None if strides is None else Layout(self.shape, base.offset, strides)


def reshaped_strides(shape: tuple[int, ...], strides: tuple[int, ...],
                     new_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides ``new_shape`` has over the elements of an array of ``shape`` and
    ``strides``, or None if no strides can lay them out (NumPy then copies). Axes of
    length 1 go anywhere; the other axes are matched in runs of equal element counts, and
    a run of the old axes must be one contiguous stretch (each stride the next one's
    times the next length) for the new axes to split it."""
    new_strides = [0] * len(new_shape)
    if math.prod(shape) == 0:
        return tuple(new_strides)
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new = [j for j, n in enumerate(new_shape) if n != 1]
    i = j = 0
    while i < len(old):
        i_end, j_end = i + 1, j + 1
        old_count, new_count = old[i][0], new_shape[new[j]]
        while old_count != new_count:
            if old_count < new_count:
                old_count *= old[i_end][0]
                i_end += 1
            else:
                new_count *= new_shape[new[j_end]]
                j_end += 1
        if any(old[k][1] != old[k + 1][1] * old[k + 1][0] for k in range(i, i_end - 1)):
            return None
        stride = old[i_end - 1][1]
        for axis in reversed(new[j:j_end]):
            new_strides[axis] = stride
            stride *= new_shape[axis]
        i, j = i_end, j_end
    return tuple(new_strides)


@dataclass(slots=True)
class Reverse(Step):
    axes: tuple[int, ...]
    name = "flip"

    def forward(self, base: Array) -> Array:
        return graph.reverse(base, self.axes)

    def inverse(self, base: Array, value: Array) -> Array:
        return self.forward(value)

    def layout(self, base: Layout) -> Layout:
        offset, strides = base.offset, list(base.strides)
        for a in self.axes:
            if base.shape[a]:
                offset += (base.shape[a] - 1) * strides[a]
            strides[a] = -strides[a]
        return Layout(base.shape, offset, tuple(strides))


@dataclass(slots=True)
class Part(Step):
    """``real(z)`` or ``imag(z)`` of a complex ``z``."""

    part: str

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.part

    @property
    def imaginary(self) -> bool:  # type: ignore[override]
        return self.part == "imag"

    def forward(self, base: Array) -> Array:
        return op(self.part, base)

    def inverse(self, base: Array, value: Array) -> Array:
        if self.part == "real":
            return op("complex", value, op("imag", base))
        return op("complex", op("real", base), value)

    def layout(self, base: Layout) -> Layout:
        return base


@dataclass(slots=True)
class Broadcast(Step):
    shape: tuple[int, ...]
    name: str = "broadcast_to"
    writable = False

    def forward(self, base: Array) -> Array:
        return graph.broadcast_to(base, self.shape)

    def inverse(self, base: Array, value: Array) -> Array:
        """The first of each broadcast copy: every copy shows the same element. An empty
        broadcast shows none, and leaves the base as it is."""
        if 0 in self.shape:
            return base
        new = len(self.shape) - len(base.shape)
        key = (0,) * new + tuple(slice(0, 1) if n == 1 else slice(None) for n in base.shape)
        return indexing.getitem(value, key)

    def layout(self, base: Layout) -> Layout:
        new = len(self.shape) - len(base.shape)
        strides = (0,) * new + tuple(0 if n == 1 else s for n, s in zip(base.shape, base.strides))
        return Layout(self.shape, base.offset, strides)


@dataclass(slots=True)
class Diagonal(Step):
    """The ``offset``-th diagonal of each matrix (the last two axes)."""

    offset: int
    name = "linalg.diagonal"
    writable = False

    def _extent(self, shape: tuple[int, ...]) -> tuple[int, int, int]:
        """(first row, first column, length) of the diagonal."""
        m, n = shape[-2:]
        row, col = max(-self.offset, 0), max(self.offset, 0)
        return row, col, max(0, min(m - row, n - col))

    def forward(self, base: Array) -> Array:
        """Along the flattened matrix the diagonal is every (n + 1)-th element from its
        first: one strided slice, whose step is a run-time size as its bounds are (one op
        kernel serves a matrix that grows; padding the flattened matrix to rows of n + 1
        and slicing their first column was five ops and a constant). A batch of several
        axes is one axis here (a reshape), so that a stack of any rank takes the ops of a
        3-d one."""
        if base.ndim <= 3:
            return self._forward(base)
        *batch, m, n = base.shape
        flat = self._forward(graph.reshape(base, (math.prod(batch), m, n)))
        return graph.reshape(flat, (*batch, flat.shape[-1]))

    def _forward(self, base: Array) -> Array:
        *batch, m, n = base.shape
        row, col, size = self._extent(base.shape)
        zeros = (0,) * len(batch)
        if not size:
            return op("slice", graph.reshape(base, (*batch, m * n)), start=(*zeros, 0), limit=(*batch, 0),
                      strides=(1,) * (len(batch) + 1))
        start = row * n + col
        return op("slice", graph.reshape(base, (*batch, m * n)), start=(*zeros, start),
                  limit=(*batch, start + (size - 1) * (n + 1) + 1), strides=(*(1,) * len(batch), n + 1))

    def inverse(self, base: Array, value: Array) -> Array:
        *batch, m, n = base.shape
        row, col, size = self._extent(base.shape)
        if not size:
            return base
        start = row * n + col
        flat = indexing.setitem(graph.reshape(base, (*batch, m * n)),
                                (Ellipsis, slice(start, start + (size - 1) * (n + 1) + 1, n + 1)), value)
        return graph.reshape(flat, base.shape)

    def layout(self, base: Layout) -> Layout:
        row, col, size = self._extent(base.shape)
        *outer, rows, cols = base.strides
        return Layout((*base.shape[:-2], size), base.offset + row * rows + col * cols, (*outer, rows + cols))


def getitem(x: Array, key: Any) -> Array:
    """``x[key]``: a view for basic indexing, as in NumPy, except where NumPy gives a
    scalar (an int for every axis, no ``...``); a copy otherwise. Python ints alone, the
    key of a loop over rows or elements, are recorded without planning
    (``indexing.integer_index``); other keys replay what their first calls recorded, and
    unit-step windows without a recipe (a loop's, whose starts change) are recorded
    without planning too (``indexing.window_index``)."""
    if type(key) is Array and type(x) is Array and indexing.is_leading_mask(x, key):
        # ``x[x > t]``: no recipe holds a selection, whose length is its mask's count (a
        # value), so the rules' own path is taken at once (~4 us of 10 at a known count)
        return indexing.selected(x, key)
    ints = (key,) if type(key) is int else key if type(key) is tuple and indexing.all_ints(key) else None
    element = ints and type(x) is Array and len(ints) == len(x._node.shape.dims)
    if _WINDOW_IN_C is not None and not element:
        out = _WINDOW_IN_C(x, key)
        if out is not None:
            return out
    if ints and type(x) is Array:
        out = indexing.integer_index(x, ints)
        if out is not None:
            return out if element else attach(x, out, Index(key), None)
    if type(key) in indexing.INDEX_ARRAYS or type(key) is tuple and not indexing.INDEX_ARRAYS.isdisjoint(map(type, key)):
        if type(x) is Array:
            out = indexing.read_at_positions(x, key)
            if out is not None:
                return out
        if isinstance(x, Array):
            indexing.check_computed_indices(x, key)  # a recipe holds no values
    return _getitem(x, key)


def _getitem_rules(x: Array, key: Any) -> Array:
    """``getitem`` by its rules."""
    if not _is_basic(key):
        return indexing.getitem(x, key)
    parts = key if type(key) is tuple else (key,)
    if len(parts) == x.ndim and all(k is not None and k is not Ellipsis and type(k) is not slice for k in parts):
        return indexing.getitem(x, key)
    return view(x, Index(key))


def _window(x: Array, key: Any) -> Array | None:
    """A window of unit-step slices and ints, maybe with new axes, whose key has no recipe
    (its start moves along a loop, its length changes), recorded as the rules record it
    (``_recorded_window``) and made a view of ``x``; None for any other key."""
    out = _recorded_window(x, key)
    return None if out is None else attach(x, out, Index(key), None)


def _recorded_window(x: Array, key: Any) -> Array | None:
    """``x[key]`` for a window of unit-step slices and ints, maybe with new axes, as the
    rules record it (``indexing.window_index``, ``newaxis_window``), not made a view;
    None for any other key."""
    if type(x) is not Array or type(key) not in _WINDOW_KEYS or (type(key) is tuple and indexing.all_ints(key)):
        return None  # ints alone: integer_index's, or the rules' (an element is no view)
    out = indexing.window_index(x, key) if key is not None else None
    return indexing.newaxis_window(x, key) if out is None else out


#: Keys ``indexing.window_index`` and ``newaxis_window`` may take (of slices, or a tuple
#: of ints, slices, new axes and ``...``; a new axis alone).
_WINDOW_KEYS = (slice, tuple, type(None))

_getitem = recorded(_getitem_rules, _window)


def _attach_window(x: Array, out: Array, key: Any) -> Array:
    """``out``, the window ``x[key]``, made a view of ``x`` as ``_window`` makes it."""
    return attach(x, out, Index(key), None)


#: ``_window``'s windows recorded in C (``_graph.Window``: the same nodes and view, without
#: a recipe's signature and lookup or the Python path, which took ~11 us a window of a new
#: length; the view made as ``attach`` makes it, which it calls where the array has no
#: family yet), None where the C module is not in use. ``getitem`` asks it first, and so
#: does ``x[key]`` of an Array for a slice, tuple or int key (``_graph.use_window``); it
#: answers None where ``_window`` would not record the window (and while tracing, for
#: weakly typed arrays: there the recipes' rules run).
_WINDOW_IN_C = None if node_module.GRAPH_IN_C is None else node_module.GRAPH_IN_C.Window(
    indexing._SLICES, indexing.slice_plan, indexing._INDEX_BUFFERS, indexing._index_node(0).shape,
    indexing._index_node, _attach_window, graph.MERGED_RANK, ViewOf, Family, Index, indexing._WINDOWS_MAX)
if node_module.GRAPH_IN_C is not None:
    node_module.GRAPH_IN_C.use_window(_WINDOW_IN_C)


def index_step(key: Any) -> Index | None:
    """The step ``x[key]`` makes, for a basic ``key`` (where ``x[key] = v`` writes)."""
    return Index(key) if _is_basic(key) else None
