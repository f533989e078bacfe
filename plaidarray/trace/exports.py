"""Writable NumPy exports: ``np.asarray(x)`` is ``x``'s memory, as it is for a NumPy array.

SciPy hands ``np.asarray(out)`` to compiled routines that fill it (``ndimage``'s
``output=``, ``sosfilt``) and expects ``out`` to hold the result; Cython routines ask for
a writable buffer even when they only read it (scikit-learn's ``chi2_kernel``). A lazy
array cannot simply lend its buffer: a graph recorded before a write into the export and
computed after it would read the written values, where NumPy computed at once. So while
an export lives its array is *pinned* (``Pinned``, the class it takes meanwhile):

- the export is the array's memory (``Pin.buffer``): the array's own buffer when nothing
  else can see it (``array._sole_owner``), else a copy made at the export, the old node
  staying with its other readers;
- every read of the pinned array's node from Python (how every op records it) first
  syncs: it gets an immutable snapshot of the memory as it is now, copied only when the
  memory changed since the last snapshot, so each op sees the value it had when it was
  recorded, as in NumPy;
- a write through plaidarray (``x[k] = v``, ``x += v``) is copied into the memory, so
  the export sees it;
- the whole family (root and views) is pinned, and a change found in the memory is a
  write to the exported member: it reaches its base and the other views
  (``views.changed``), as a write to the base reaches the exported memory.

When no export is left (the memory's reference count says so: NumPy's views of an export
hold the memory, not the export), the next read unpins: the array keeps the memory as its
buffer, immutable again. One member of a family is exported at a time; another member's
export meanwhile is read-only.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

import numpy as np

from .array import Array, _sole_owner
from .materialize import materialize
from .node import Node
from .views import Family, ViewOf, changed

#: The slot behind ``Array._node``, read and written without ``Pinned``'s property.
_SLOT = next(klass.__dict__["_node"] for klass in Array.__mro__ if "_node" in klass.__dict__)


class Pin:
    """A pinned family's state: the member whose memory is exported (weakly: the family
    refers to the pin, and the member to the family) with its steps from the root, the
    memory, the node whose buffer the memory is (``node``) and the last snapshot of it
    (None until a read while exported)."""

    __slots__ = ("member", "steps", "buffer", "node", "snapshot", "owner", "quiet")

    def __init__(self, member: Array, node: Node) -> None:
        self.member = weakref.ref(member)
        self.steps = member._base.steps if type(member._base) is ViewOf else ()
        self.node = node
        self.buffer: np.ndarray = node.buffer  # type: ignore[assignment]  # a ready node
        self.snapshot: Node | None = None
        #: What every NumPy view of the memory holds as its base (NumPy skips views that
        #: do not own their data: a pooled buffer's views hold its lease), and how many
        #: references it has with no export.
        self.owner = _owner(self.buffer)
        self.quiet = sys.getrefcount(self.owner)

    def exported(self) -> bool:
        """Whether anything besides plaidarray holds the memory (an export, a NumPy view
        of one, a buffer acquired from one)."""
        return sys.getrefcount(self.owner) > self.quiet

    def adopt(self, array: Array) -> None:
        """Pin a view made of a pinned array."""
        array.__class__ = Pinned


def _owner(memory: np.ndarray) -> object:
    """The base NumPy gives a view of ``memory``: the first array up its chain of bases
    that owns its data, or the first object that is no array."""
    while isinstance(memory, np.ndarray) and not memory.flags.owndata and memory.base is not None:
        memory = memory.base
    return memory


def _owner_references(memory: np.ndarray) -> int:
    return sys.getrefcount(_owner(memory))


#: ``_owner_references`` of memory whose owner only that memory holds (measured on this
#: interpreter through the same call, as ``array._sole_references`` measures its counts).
_ONE_VIEWER = _owner_references(np.frombuffer(bytearray(8), dtype=np.uint8))


def _alone(memory: np.ndarray) -> bool:
    """Whether ``memory`` is the only array on its memory (a reshape made by the
    reference backend is a view of its operand's buffer; a pooled buffer views a lease)."""
    return _owner(memory) is memory or _owner_references(memory) == _ONE_VIEWER


def export(array: Array, dtype: Any, copy: bool | None) -> np.ndarray:
    """``array.__array__(dtype, copy)``: a copy when asked for one (or for a dtype
    conversion), else the array's memory, writable (read-only for a second member of a
    family whose memory is exported already)."""
    if copy or (dtype is not None and np.dtype(dtype) != array.dtype):
        if copy is False:
            raise ValueError("converting the dtype requires a copy")
        return np.array(array._value(), dtype=dtype, copy=True)
    pin = _pin_of(array)
    if pin is not None and pin.member() is not array:
        sync(array)  # a pin whose exports are all gone is released here, not at a later read
        pin = _pin_of(array)
    if pin is None:
        pin = _pin(array, _family(array))
    elif pin.member() is not array:
        return array._value()
    return pin.buffer.view()


def _family(array: Array) -> Family | None:
    record = array._base
    return record.family if type(record) is ViewOf else record


def _pin_of(array: Array) -> Pin | None:
    family = _family(array)
    return family.pin if family is not None else None


def _pin(array: Array, family: Family | None) -> Pin:
    """Pin ``array``'s family on ``array``'s memory."""
    node = _SLOT.__get__(array)
    if node.buffer is None:
        materialize([node])
    if not (_sole_owner(node) and _alone(node.buffer)):  # type: ignore[arg-type]  # materialized above
        node = Node.ready(node.buffer.copy())  # type: ignore[union-attr]
        node.owned = True
        _set(array, node)
    if family is None:
        family = array._base = Family(array)
    pin = family.pin = Pin(array, node)
    for member in _members(family):
        member.__class__ = Pinned
    return pin


def _members(family: Family) -> list[Array]:
    root = family.root()
    return [*([root] if root is not None else []), *family.live_views()]


def _set(array: Array, node: Node) -> None:
    """Point ``array`` at ``node`` (``Array._rebind`` on the slot)."""
    old = _SLOT.__get__(array)
    node.arrays += 1
    old.arrays -= 1
    _SLOT.__set__(array, node)


def sync(array: Array) -> None:
    """Bring a pinned array's family up to date with the exported memory: a snapshot of
    it for reads while it is exported, the memory itself once it is not (unpinned)."""
    family = _family(array)
    pin = family.pin if family is not None else None
    if pin is None:  # unpinned by a read of another member: only its class is left
        array.__class__ = Array
        return
    if not pin.exported():
        family.pin = None  # type: ignore[union-attr]  # a pin has a family
        for member in _members(family):  # type: ignore[arg-type]
            member.__class__ = Array
        if pin.snapshot is None or not _same(pin.buffer, pin.snapshot):
            _written(pin, family, pin.node)  # type: ignore[arg-type]
        else:
            _place(pin, family, pin.node)  # type: ignore[arg-type]
        return
    if pin.snapshot is not None and _same(pin.buffer, pin.snapshot):
        return
    snapshot = Node.ready(pin.buffer.copy())
    snapshot.owned = True
    pin.snapshot = snapshot
    _written(pin, family, snapshot)  # type: ignore[arg-type]


def _place(pin: Pin, family: Family, node: Node) -> Array:
    """The exported member pointed at ``node``; a stand-in in its place in the family
    when it is gone (its views may not be)."""
    member = pin.member()
    if member is None:
        member = Array(node)
        member._base = ViewOf(family, pin.steps, True, None) if pin.steps else family
    else:
        _set(member, node)
    return member


def _written(pin: Pin, family: Family, node: Node) -> None:
    """The exported memory was written (its value is ``node``'s): a write to the member,
    which reaches its base and the other views."""
    changed(_place(pin, family, node))


def _same(memory: np.ndarray, node: Node) -> bool:
    """Whether ``node`` holds the bits ``memory`` holds."""
    return np.array_equal(memory.reshape(-1).view(np.uint8), node.buffer.reshape(-1).view(np.uint8))  # type: ignore[union-attr]


def store(array: Array) -> None:
    """After a write through plaidarray to the pinned member (directly, or through the
    family: a refresh): copy its new value into the exported memory."""
    pin = _pin_of(array)
    if pin is None or pin.member() is not array:
        return
    node = _SLOT.__get__(array)
    if node.buffer is None:
        materialize([node])
    np.copyto(pin.buffer, node.buffer)
    pin.snapshot = node


class Pinned(Array):
    """The class of an array while its family's memory is exported (see the module)."""

    __slots__ = ()

    @property  # type: ignore[override]
    def _node(self) -> Node:
        sync(self)
        return _SLOT.__get__(self)

    @_node.setter
    def _node(self, node: Node) -> None:
        _SLOT.__set__(self, node)

    @property
    def shape(self) -> tuple[int, ...]:
        return _SLOT.__get__(self).shape.dims

    @property
    def dtype(self) -> np.dtype:
        return _SLOT.__get__(self).shape.dtype

    @property
    def ndim(self) -> int:
        return len(_SLOT.__get__(self).shape.dims)

    @property
    def size(self) -> int:
        return _SLOT.__get__(self).shape.size

    def _rebind(self, node: Node) -> None:
        _set(self, node)
        store(self)
