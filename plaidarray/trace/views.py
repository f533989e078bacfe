"""Views: arrays that share another array's elements, as NumPy's views do.

NumPy code counts on views: ``v = c[k]; v[i, i] += r`` changes ``c``, and
``out = moveaxis(out, 0, -1); out[...] = y`` fills the array the caller passed. A lazy
array has no memory to share, so plaidarray does what PyTorch's functionalization does:
each view records the steps that made it from its root (the array that is no view), each
step knowing how to make the view from its base (``forward``) and how to put a new value
of the view back into its base (``inverse``). A write through a view is replayed on the
root, step by step; a write to any member of the family then refreshes every other live
view whose elements it may have touched, so the base and all its views keep agreeing as
NumPy's do.

Where NumPy would copy instead (a reshape of a transposed array), there is no view: each
view carries the layout NumPy would give it, its elements' offset and strides in units of
the root's elements, and a step whose result NumPy could not lay out that way is a copy.
The same layout bounds the elements a view covers, so a write refreshes only the views
that it may have reached (``rows = [x[i] for i in ...]`` stays cheap to write through).

Unlike a NumPy view, a view does not keep its root alive: a live array is computed and
stored whenever a graph it belongs to runs, so ``f(x)[0]`` or ``reshape(a * b, s)`` would
store the whole temporary besides the view. The family (root and views) is what the views
share; the root and the views are in it weakly. Once the root is gone, a write through a
view still reaches the family's other views: each is rebuilt from a blank root with its
own elements put back, then the written view's over them (``_without_root``), so no
element outside the two matters.

The steps are defined in the API layer (``api/views.py``); this module only runs them.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..backend.transfer import HOST, in_range
from .node import GRAPH_IN_C, value_read

if TYPE_CHECKING:
    from .array import Array


class Layout(NamedTuple):
    """Where an array's elements are among its root's: its shape, and the offset and
    strides (in elements, negative for reversed axes) NumPy would give it. Under jit, a
    view at a traced position (``out[i]`` of a traced int) has its shape and strides, and
    a NaN offset, which every offset made from it keeps: it may cover any element."""

    shape: tuple[int, ...]
    offset: int | float
    strides: tuple[int, ...]

    def bounds(self) -> tuple[int | float, int | float]:
        """The first and last root element covered (``low > high`` when none is; every
        element, from minus to plus infinity, at a traced position)."""
        if math.prod(self.shape) == 0:
            return 1, 0
        if self.offset != self.offset:
            return -math.inf, math.inf
        low = high = self.offset
        for n, s in zip(self.shape, self.strides):
            if s < 0:
                low += (n - 1) * s
            else:
                high += (n - 1) * s
        return low, high


class Step:
    """How one view is made from its base; subclasses are dataclasses (compared in
    ``is_view_at``), never changed once made."""

    __slots__ = ()

    #: The function that makes the view, for error messages.
    name: str = ""
    #: False for views NumPy gives read-only (``broadcast_to``, ``linalg.diagonal``).
    writable: bool = True
    #: True for a view of the imaginary parts of complex elements (``imag``): its elements
    #: start half an element into the root's (a layout counts whole root elements).
    imaginary: bool = False

    def forward(self, base: Array) -> Array:
        """The view's value, recorded from its base's (never itself a view)."""
        raise NotImplementedError

    def inverse(self, base: Array, value: Array) -> Array:
        """``base``'s value with the elements this view shows replaced by ``value`` (a
        read-only view has one too: ``_without_root`` puts its elements back)."""
        raise NotImplementedError

    def store(self, base: Array, value: Array) -> None:
        """Write ``value`` into ``base`` (the root) through this step; the write is checked
        as ``Array._store`` checks its own (``array.CHECK_WRITE``)."""
        base._checked(base._node)
        base._rebind(self.inverse(base, value)._node)

    def layout(self, base: Layout) -> Layout | None:
        """Where the view's elements are, given where its base's are; None where NumPy
        could not make it without copying (only if ``may_copy``)."""
        raise NotImplementedError

    #: Whether ``layout`` can be None: only such a step needs its base's layout when it
    #: is made; the others' layouts are worked out when a write needs them.
    may_copy: bool = False

    def basic_key(self) -> Any:
        """The key of NumPy's basic indexing (ints, slices, ``None``, ``...``) that picks
        the view's elements out of its base's, where the step is one (``x[key]``); else None."""
        return None


#: Views of a family up to which ``Family.overlapping`` compares bounds in Python, where
#: a pass of NumPy costs more than it saves.
_FEW_VIEWS = 16


class Family:
    """A root and its views: kept in the root's ``_base`` and in each view's record. The
    root's shape and dtype stay for the blank root once the root itself is gone."""

    __slots__ = ("root", "views", "prune_at", "shape", "dtype", "pin", "bounds", "known", "__weakref__")

    def __init__(self, root: Array) -> None:
        self.root = weakref.ref(root)
        #: While the root's memory is exported writable (``exports.py``): its ``Pin``.
        self.pin: Any = None
        #: Weak references in the order the views were made, those of dead views dropped
        #: when the list's length reaches ``prune_at``, twice the live views the last
        #: drop left (a weak dictionary's entry and callback cost more than the rest of
        #: making a view); so it holds at most about twice the live views, and a drop's
        #: pass over the list comes after as many new views as it keeps. (Dropped at each
        #: power of two, 4000 live windows of one array made each 96th view pass over
        #: 4096.) Made with the first view (a family is also made for an export,
        #: ``exports.py``). ``add`` drops them; so does the C module's window
        #: (``_graph.c: prune_views``, the same rule) where no ``bounds`` are worked out.
        self.views: list[weakref.ref[Array]] | None = None
        self.prune_at = 8
        self.shape = root.shape
        self.dtype = root.dtype
        #: The first and last root element each of ``views``' first ``known`` views
        #: covers (a row each), worked out when a write first asks (``overlapping``;
        #: the C module appends views without them).
        self.bounds: np.ndarray | None = None
        self.known = 0

    def add(self, view: Array) -> None:
        views = self.views
        if views is None:
            self.views = [weakref.ref(view)]
            return
        if len(views) >= self.prune_at:
            live = [i for i, ref in enumerate(views) if ref() is not None]
            views[:] = [views[i] for i in live]
            self.prune_at = max(8, 2 * len(views))
            if self.bounds is not None:  # the known rows of live views, still the first
                known = [i for i in live if i < self.known]
                self.bounds[:len(known)] = self.bounds[known]
                self.known = len(known)
        views.append(weakref.ref(view))

    def live_views(self) -> list[Array]:
        if self.views is None:
            return []
        return [view for ref in self.views if (view := ref()) is not None]

    def others_live(self, view: Array) -> bool:
        """Whether a view other than ``view`` may be live: a stencil's ``u[1:-1, 1:-1] = inner``
        after an expression of its slices finds the slices gone, and laying out the write and
        looking for overlaps (~15 us of the store) would find nothing. Past ``_FEW_VIEWS``
        references it answers yes without a pass: ``overlapping`` compares them in one."""
        views = self.views
        if not views:
            return False
        if len(views) > _FEW_VIEWS:
            return True
        for ref in views:
            other = ref()
            if other is not None and other is not view:
                return True
        return False

    def overlapping(self, low: float, high: float) -> list[Array]:
        """The live views that may cover a root element from ``low`` to ``high``: those
        whose bounds meet them (the bounds of views made since the last call worked out
        now). A store into an array with many live views (``rows = [m[i] for i in
        range(n)]``, then ``m[i] = ...`` in a loop) looked at every view's layout in
        Python, ~2.5 us each at every store; the rows are compared in one pass of NumPy."""
        views = self.views
        if not views:
            return []
        n = len(views)
        bounds = self.bounds
        if bounds is None or len(bounds) < n:
            grown = np.empty((max(8, 2 * n), 2))
            if bounds is not None:
                grown[:self.known] = bounds[:self.known]
            bounds = self.bounds = grown
        for i in range(self.known, n):
            view = views[i]()
            bounds[i] = view._base.layout().bounds() if view is not None else (1, 0)
        self.known = n
        if n <= _FEW_VIEWS:
            met = [i for i, (first, last) in enumerate(bounds[:n].tolist()) if last >= low and first <= high]
        else:
            met = np.flatnonzero((bounds[:n, 1] >= low) & (bounds[:n, 0] <= high)).tolist()
        return [view for i in met if (view := views[i]()) is not None]


class ViewOf:
    """Kept in a view's ``_base``: its family, the steps from the root, whether it may be
    written, and its layout (worked out when first asked: most views are only read)."""

    __slots__ = ("family", "steps", "writable", "_layout", "held")

    def __init__(self, family: Family, steps: tuple[Step, ...], writable: bool, layout: Layout | None) -> None:
        self.family = family
        self.steps = steps
        self.writable = writable
        self._layout = layout
        #: The root, held while the family's memory is exported (``exports.py``): a write
        #: through the view reaches the memory by the root, which a NumPy view keeps alive
        #: as its base. None otherwise (a view does not keep its root alive).
        self.held: Any = None

    def layout(self) -> Layout:
        if self._layout is None:
            layout = root_layout(self.family.shape)
            for step in self.steps:
                layout = step.layout(layout)  # type: ignore[assignment]  # a view's steps all lay out
            self._layout = layout
        return self._layout


@functools.lru_cache(maxsize=256)
def root_layout(shape: tuple[int, ...]) -> Layout:
    """Row-major: every root is laid out so. (Kept by shape: a write and a view's copy
    ask for their root's at every store, ``changed`` and ``window_copy``.)"""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return Layout(shape, 0, tuple(reversed(strides)))


def _layout(array: Array) -> Layout:
    record = array._base
    return record.layout() if type(record) is ViewOf else root_layout(array.shape)


def can_view(base: Array, step: Step) -> bool:
    """Whether ``step`` on ``base`` is a view (NumPy would not copy)."""
    return step.layout(_layout(base)) is not None


def view(base: Array, step: Step) -> Array:
    """``step``'s result on ``base``: a view of ``base``'s root, or a new array where
    NumPy would copy."""
    result = step.forward(base)
    placed = None
    if step.may_copy:
        if type(base._base) is ViewOf:
            value_read()  # whether it views or copies follows from a layout no signature holds
        placed = step.layout(_layout(base))
        if placed is None:
            return result
    return attach(base, result, step, placed)


def attach(base: Array, result: Array, step: Step, placed: Layout | None) -> Array:
    """``result``, the value of ``step`` on ``base``, made a view of ``base``'s root
    (``placed``: its layout, when ``step.may_copy`` needed it already): in C where the
    module is in use and ``base`` has its record (``_graph.attach_view``), else here."""
    if _ATTACH_IN_C is not None and _ATTACH_IN_C(base, result, step, placed):
        return result
    if result is base:
        result = type(base)(base._node)
    record = base._base
    if type(record) is ViewOf:
        family, steps, writable = record.family, record.steps, record.writable
    else:
        family, steps, writable = record or Family(base), (), True
        base._base = family
    result._base = ViewOf(family, (*steps, step), writable and step.writable, placed)
    family.add(result)
    if family.pin is not None:
        family.pin.adopt(result)
    return result


_ATTACH_IN_C = GRAPH_IN_C.attach_view if GRAPH_IN_C is not None else None

#: The ops a view's steps record (``api/views.py``), each reading its base as its first operand.
_SELECTIONS = frozenset({"slice", "dynamic_slice", "reshape", "transpose", "reverse", "broadcast_in_dim", "pad"})


def window_copy(array: Array) -> Any | None:
    """A buffer of its own holding the elements of ``array``, a pending view, copied out of
    its root's computed buffer by the transfers (``window_copy``), where its node is its
    steps' ops on the root's node of now (so its elements are the root's at its layout);
    else None (also for a family pinned by an export, whose memory a write may change).
    A view read or stored alone (``m[i] = m[j]``, ``asarray(m[i], copy=True)``) costs a copy
    of its elements, not its graph's run, and the copy reads no root: a pending reader of
    the root would make the next store into it copy all of it (``stored_copy``)."""
    found = _in_root(array)
    if found is None:
        return None
    transfers, buffer, record = found
    keys = [step.basic_key() for step in record.steps]
    if None not in keys:  # a row's or window's view: NumPy's indexing picks it (~1.5 us less)
        copy = transfers.picked_copy(buffer, record.family.shape, keys, array._node.shape.dims)
        if copy is not None:
            return copy
    layout = _placed(array, record)
    if layout is None:
        return None
    return transfers.window_copy(buffer, layout.offset, layout.shape, layout.strides)


def element_copy(array: Array, key: tuple) -> Any | None:
    """Element ``key`` (an int per axis, in range, negative ones from the end) of ``array``,
    a pending view, as a 0-d buffer of its own copied out of its root's computed buffer
    (``window_copy``'s conditions); else None. NumPy's ``m[i][j]``, ``row[j]`` of ``for row
    in m`` and ``m.T[i, j]`` give the element as it is now: reading it costs a copy of one
    element, not a run of the view's and the element's graph (``float(m[2][3])``: 5.5 us,
    the row's view most of it, against 9.8)."""
    found = _in_root(array)
    if found is None:
        return None
    transfers, buffer, record = found
    layout = _placed(array, record)
    if layout is None or not in_range(key, layout.shape):  # its length is the view's rank (``Array._getitem``)
        return None
    offset = layout.offset
    for i, n, stride in zip(key, layout.shape, layout.strides):
        offset += (i + n if i < 0 else i) * stride
    return transfers.window_copy(buffer, offset, (), ())


def _in_root(array: Array) -> tuple[Any, Any, ViewOf] | None:
    """The transfers, root buffer and view record through which ``array``, a pending view,
    reads its elements out of its root's computed buffer (``window_copy``), or None."""
    record = array._base
    if type(record) is not ViewOf or record.family.pin is not None:
        return None
    root = record.family.root()
    node = array._node
    if root is None or node.buffer is not None:
        return None
    base = root._node
    buffer = base.buffer
    if buffer is None or node.shape.dtype != base.shape.dtype or node.device is not base.device:
        return None
    reached = node
    while reached is not base:  # the steps' ops, each pending (a ready node ends the walk: the pending bound)
        if reached.buffer is not None or reached.op not in _SELECTIONS or not reached.operands:
            return None
        reached = reached.operands[0]
    return (HOST if base.device is None else base.device.transfers), buffer, record


def _placed(array: Array, record: ViewOf) -> Layout | None:
    """The layout of ``array``'s elements in its root's buffer (``record``'s), where it is
    known before a run (not at a traced position) and is the array's shape; else None."""
    layout = record.layout()
    if type(layout.offset) is not int or layout.shape != array._node.shape.dims:
        return None
    return layout


def check_writable(array: Array, where: str) -> None:
    """ValueError for a write into a read-only view, as NumPy raises it."""
    record = array._base
    if type(record) is ViewOf and not record.writable:
        made_by = next(step.name for step in record.steps if not step.writable)
        raise ValueError(f"{where}: assignment destination is read-only (a view made by {made_by})")


def is_view_at(value: Any, array: Array, step: Step | None) -> bool:
    """Whether ``value`` is the view ``array[key]`` (``step`` made from ``key``), whose
    elements are ``array``'s already: ``x[key] += v`` stores the view back after the
    in-place operator wrote it through."""
    record = getattr(value, "_base", None)
    if step is None or type(record) is not ViewOf:
        return False
    own = array._base
    if type(own) is ViewOf:
        return record.family is own.family and record.steps == (*own.steps, step)
    return record.family is own and record.steps == (step,)


def changed(array: Array, step: Step | None = None) -> None:
    """After ``array`` took a new value (``array[key] = v``, with ``step`` the view
    ``key`` makes, or an in-place operator): replay the write on its root and refresh
    the other views that cover the elements written."""
    record = array._base
    if record is None:
        return
    family, steps = (record.family, record.steps) if type(record) is ViewOf else (record, ())
    root = family.root()
    if steps and root is not None:
        if family.pin is None:
            steps[0].store(root, _through(root, steps, array))
        else:
            _store_pinned(root, steps, array)
    if not family.others_live(array):
        return
    layout = _layout(array)
    low, high = ((step.layout(layout) if step is not None else None) or layout).bounds()
    for other in family.overlapping(low, high):
        if other is array:
            continue
        value = root if root is not None else _without_root(family, other, array)
        for each in other._base.steps:
            value = each.forward(value)
        other._rebind(value._node)


def _store_pinned(root: Array, steps: tuple[Step, ...], array: Array) -> None:
    """``changed``'s store of a view's new value into its root, where the family is pinned
    (exported): the value as written, held apart, since storing it may sync the root with
    its memory first (``exports.sync``: a write through the export outside this view's
    elements), which refreshes every view of the root from the memory, this one too; a view
    refreshed so takes its value from the root, which holds the write now."""
    from .array import Array

    written = array._node
    steps[0].store(root, _through(root, steps, Array(written)))
    if array._node is not written:
        value = root
        for each in steps:
            value = each.forward(value)
        array._rebind(value._node)


def _through(root: Array, steps: tuple[Step, ...], value: Array) -> Array:
    """What the view ``steps`` of ``root`` taking ``value`` makes of the base that
    ``steps[0]`` views: the inverses applied from the view up to that base, each given the
    base it views (made again from the root: those arrays may be gone)."""
    bases = [root]
    for step in steps[:-1]:
        bases.append(step.forward(bases[-1]))
    for step, base in zip(reversed(steps[1:]), reversed(bases[1:])):
        value = step.inverse(base, value)
    return value


def _put(root: Array, steps: tuple[Step, ...], value: Array) -> Array:
    """``root``'s value with the view ``steps`` of it replaced by ``value``."""
    return steps[0].inverse(root, _through(root, steps, value)) if steps else value


def _without_root(family: Family, other: Array, written: Array) -> Array:
    """A root value to refresh ``other`` from after ``written`` changed, once the root
    is gone: blank, with ``other``'s elements put back, then ``written``'s over them."""
    return _blank_with(family, (other, written))


def blank_root(family: Family) -> Array:
    """A root for a family whose root is gone, to export its views' memory
    (``exports.py``): blank, with every live view's elements put back."""
    from .array import Array

    root = Array(_blank_with(family, family.live_views())._node)  # a new array: the value may be a view's own
    root._base = family
    return root


def _blank_with(family: Family, members: Iterable[Array]) -> Array:
    """A blank root value with ``members``' elements put back, each over the previous, on
    the members' device (the host for values of no device, whatever the default device)."""
    from .array import namespace

    members = list(members)
    device = next((m._node.device for m in members if m._node.device is not None), None)
    value = namespace().zeros(family.shape, dtype=family.dtype, device=device or "cpu")
    for member in members:
        value = _put(value, member._base.steps if type(member._base) is ViewOf else (), member)
    return value
