"""Writable NumPy exports: ``np.asarray(x)`` is ``x``'s memory, as it is for a NumPy array.

SciPy hands ``np.asarray(out)`` to compiled routines that fill it (``ndimage``'s
``output=``, ``sosfilt``) and expects ``out`` to hold the result; Cython routines ask for
a writable buffer even when they only read it (scikit-learn's ``chi2_kernel``). A lazy
array cannot simply lend its buffer: a graph recorded before a write into the export and
computed after it would read the written values, where NumPy computed at once. So while
an export lives, the array's family (its root and the root's views, ``views.py``) is
*pinned* (``Pinned``, the class its members take meanwhile):

- the family has one memory, its root's (``Pin.buffer``), as a NumPy array and its views
  share one: the root's own buffer when nothing else can see it (``array._sole_owner``),
  else a copy made at the export, the old node staying with its other readers. A view's
  export is the window of that memory at the view's layout, as NumPy's view would be, so
  any members are exported at once, writable (threads filling the rows of one output;
  an input and an output of one routine, which ``np.shares_memory`` finds overlapping
  as it would in NumPy);
- every read of a pinned member's node from Python (how every op records it) first
  syncs: a change found in the memory since the last snapshot is a write to the root,
  which takes an immutable snapshot of the memory and passes it on to the views
  (``views.changed``), so each op sees the value it had when it was recorded, as in NumPy.
  A comparison costs the bytes compared, so it is made once an op (``recording``; each
  method of ``Pinned`` is one op), a view's covers its own elements' bytes alone
  (``_span``), and an element read (``x[i]``) makes none: it reads the
  memory as it is, which is the value NumPy's ``x[i]`` gives, nor does basic indexing,
  whose view syncs when it is read. A Python scalar stored into an element (``x[i] = v``)
  is written into the memory, as through the export;
- a write through plaidarray to any member reaches the root (``views.changed``), whose
  new value is copied into the memory, so every export sees it.

When no export is left (the memory's reference count says so: NumPy's views of an export
hold the memory, not the export), the next read unpins: the root keeps the memory as its
buffer, immutable again. While pinned, each view holds its family's root
(``ViewOf.held``), as a NumPy view keeps its base alive, and writes through it reach the
memory by the root; a family whose root was gone gets one made of its views' elements
(``views.blank_root``), but where the view exported is all that is left of it, which
becomes a root of its own (``np.asarray(xp.sort(x)[-5:])``: nothing else can see the
old root's elements). Pinning, syncing and unpinning hold the lock that
assignments hold (``array._STORES``): threads export members of one family at once.

An array made of a caller's writable memory without a copy (``from_dlpack``,
``asarray(copy=False)``: :func:`shared`) is pinned on that memory from the start, and for good: who
else holds it (a NumPy array, a PyTorch tensor through DLPack, a pointer) no reference
count can tell, so it never unpins. Its first read for an op takes the first snapshot.
"""

from __future__ import annotations

import ctypes
import itertools
import math
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend import devices
from ..backend.devices import Device
from ..backend.transfer import HOST
from .array import _STORES, Array, _sole_owner
from .materialize import read
from .node import Node, value_read
from .views import Family, ViewOf, blank_root, changed

#: The slot behind ``Array._node``, read and written without ``Pinned``'s property.
_SLOT = next(klass.__dict__["_node"] for klass in Array.__mro__ if "_node" in klass.__dict__)


class Pin:
    """A pinned family's state: its family and root (both weakly: the family refers to
    the pin and the root to the family, and a cycle would keep the memory, a pooled block
    perhaps, until the garbage collector ran), the memory, the node whose buffer the memory
    is (``node``) and the last snapshot of it (None until a read while exported)."""

    __slots__ = ("_family", "_root", "buffer", "node", "snapshot", "owner", "quiet", "compared", "span")

    def __init__(self, family: Family, root: Array, node: Node, foreign: bool = False) -> None:
        self._family = weakref.ref(family)
        self._root = weakref.ref(root)
        self.node = node
        self.buffer: np.ndarray = node.buffer  # type: ignore[assignment]  # a ready node
        self.snapshot: Node | None = None
        #: The op (``_OPS.epoch``) during which the bytes ``span`` (start, stop) of the
        #: memory were last found equal to the snapshot's: they are not compared again
        #: before that op returns.
        self.compared = -1
        self.span = (0, 0)
        #: What every NumPy view of the memory holds as its base (NumPy skips views that
        #: do not own their data: a pooled buffer's views hold its lease), and how many
        #: references it has with no export; None for a caller's memory (``foreign``),
        #: which counts as exported for good.
        self.owner = None if foreign else _owner(self.buffer)
        self.quiet = 0 if foreign else sys.getrefcount(self.owner)

    @property
    def root(self) -> Array:
        """The family's root; once it is gone, a root made again of the memory's node (the
        root's value), through which a change in the memory reaches the views."""
        root = self._root()
        family = self._family()
        if root is None:
            root = Array(self.node)
            if family is not None:
                root._base = family
                family.root = weakref.ref(root)
                if family.pin is self:  # a member while pinned: its writes reach the memory
                    root.__class__ = Pinned
            self._root = weakref.ref(root)
        return root

    def exported(self) -> bool:
        """Whether anything besides plaidarray holds the memory (an export, a NumPy view
        of one, a buffer acquired from one); always, for a caller's memory."""
        return self.owner is None or sys.getrefcount(self.owner) > self.quiet

    def window(self, member: Array) -> np.ndarray:
        """``member``'s elements in the memory, laid out as NumPy lays out the view (the
        whole memory for the root); read-only for a view NumPy gives read-only."""
        record = member._base
        if type(record) is not ViewOf:
            return self.buffer.view()
        layout, itemsize = record.layout(), self.buffer.itemsize
        # an exported member is computed: its offset is a number (never a traced position's NaN)
        start = int(layout.offset) * itemsize + (itemsize // 2 if any(s.imaginary for s in record.steps) else 0)
        strides = tuple(s * itemsize for s in layout.strides)
        if not math.prod(layout.shape):  # no element: its offset may lie outside (x[-5::-1] of 4)
            start, strides = 0, (0,) * len(strides)
        window = np.ndarray(layout.shape, member.dtype, buffer=self.buffer, offset=start, strides=strides)
        if not record.writable:
            window.flags.writeable = False
        return window

    def adopt(self, array: Array) -> None:
        """Pin a view made of a pinned array."""
        array.__class__ = Pinned
        _hold(array, self.root)


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


def shared(memory: np.ndarray, device: Device) -> Array:
    """An array on ``device`` whose memory is ``memory``, a caller's writable,
    C-contiguous, aligned and native NumPy memory, without a copy: its family pinned on
    it (see the module), so writes by either side are seen by the other and each op
    still sees the value it had when it was recorded."""
    root = Array(Node.ready(memory, device))
    family = root._base = Family(root)
    with _STORES:
        family.pin = Pin(family, root, _SLOT.__get__(root), foreign=True)
        root.__class__ = Pinned
    return root


def export(array: Array, dtype: Any, copy: bool | None) -> np.ndarray:
    """``array.__array__(dtype, copy)``: a copy when asked for one (or for a dtype
    conversion) or when the array's buffers are not host memory (its device's transfers
    are not the host's: ``backend/transfer.py``), else the array's memory (``Pin.window``)."""
    value_read()
    device = array._node.device
    if copy or (dtype is not None and np.dtype(dtype) != array.dtype) or \
            (device is not None and device.transfers is not HOST):
        if copy is False:
            raise ValueError("__array__: another dtype, or memory off the host, needs a copy, but copy=False")
        return np.array(array._value(), dtype=dtype, copy=True)
    with _STORES:
        return (_pin_of(array) or _pin(array)).window(array)


def _family(array: Array) -> Family | None:
    record = array._base
    return record.family if type(record) is ViewOf else record


def _pin_of(array: Array) -> Pin | None:
    family = _family(array)
    return family.pin if family is not None else None


def _pin(array: Array) -> Pin:
    """Pin ``array``'s family on its root's memory."""
    family = _family(array)
    if family is None:
        family = array._base = Family(array)
    root = family.root()
    if root is None and _last_of(family, array):
        family = array._base = Family(array)
        root = array
    elif root is None:
        root = blank_root(family)
        family.root = weakref.ref(root)
    node = _SLOT.__get__(root)
    if node.buffer is None:
        read(node)
    if not (_sole_owner(node) and _alone(node.buffer)):  # type: ignore[arg-type]  # materialized above
        node = Node.ready(node.buffer.copy(), node.device)  # type: ignore[union-attr]
        node.owned = True
        _set(root, node)
    pin = family.pin = Pin(family, root, node)
    for member in _members(family):
        member.__class__ = Pinned
        _hold(member, root)
    return pin


def _last_of(family: Family, array: Array) -> bool:
    """Whether ``array``, a writable view of ``family`` whose root is gone, is all that is
    left of it: its export (``np.asarray(xp.argsort(s)[:3])``, ``np.asarray(f(x)[-5:])``)
    then makes it a root of its own, its memory its own elements, as nothing else can
    see the elements of its old root a NumPy view's base would hold. A blank root with
    the view's elements put back (``views.blank_root``) recorded and ran an update of a
    whole root per export: 38 us of the 52 that exporting three indices of a sorted
    vector of 500 took."""
    record = array._base
    if type(record) is not ViewOf or not record.writable:
        return False
    live = family.live_views()
    return len(live) == 1 and live[0] is array


def _hold(member: Array, root: Array | None) -> None:
    """While the family is pinned, a view holds its root (``ViewOf.held``), as a NumPy view
    holds its base: a write through the view reaches the memory by the root, and a root
    made for the export (``views.blank_root``: the family's was gone) or dropped after it
    would be gone by then, the write kept by the view alone (lost from the memory, which
    its element reads and the export show)."""
    record = member._base
    if type(record) is ViewOf:
        record.held = root


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
    """Bring a pinned array's family up to date with the memory: a snapshot of it for
    reads while it is exported, the memory itself once it is not (unpinned)."""
    with _STORES:
        family = _family(array)
        pin = family.pin if family is not None else None
        if pin is None:  # unpinned by a read of another member: only its class is left
            array.__class__ = Array
            return
        if not pin.exported():
            _unpin(family, pin)  # type: ignore[arg-type]  # a pin has a family
            return
        if _OPS.viewing:  # a view made: each read of it syncs (``Pinned.__getitem__``)
            return
        epoch = _OPS.epoch if _OPS.depth else -1
        start, stop = _span(array, pin.buffer)
        if pin.snapshot is not None:
            same_op = epoch == pin.compared >= 0
            if same_op and pin.span[0] <= start and stop <= pin.span[1]:
                return
            if _same(pin.buffer, pin.snapshot, start, stop):
                pin.compared, pin.span = epoch, (start, stop)
                return
        snapshot = Node.ready(pin.buffer.copy(), pin.node.device)
        snapshot.owned = True
        pin.snapshot = snapshot
        pin.compared, pin.span = epoch, (0, pin.buffer.nbytes)
        _written(pin.root, snapshot)


def _span(array: Array, memory: np.ndarray) -> tuple[int, int]:
    """The bytes of ``memory`` (start, stop) that a pinned member's elements lie in: all
    of it for the root, a view's first to last element (``views.Layout.bounds``, in the
    root's elements), none for an empty view. A view's read compares only these with the
    snapshot: its value is the snapshot's there, whatever changed elsewhere in the memory
    (a later read of a member covering that finds it), so a window of an exported array of
    a million float64 is read at the cost of the window, not of the memory (0.66 ms)."""
    record = array._base
    if type(record) is not ViewOf:
        return 0, memory.nbytes
    low, high = record.layout().bounds()
    if low > high:
        return 0, 0
    return int(low) * memory.itemsize, (int(high) + 1) * memory.itemsize  # numbers: a pinned member is computed


class _Ops(threading.local):
    """Whether this thread is recording an op (``depth``, nested calls counted) and which
    (``epoch``, unique across threads): an op reads a pinned array's node several times
    (its checks, promotion, broadcasting), and no write of its thread can come between
    them, so its memory is compared once an op, not at each read (five times on
    ``x + 1``: 2.5 ms on a million float64). Per thread, so that another thread's op
    never spares a read outside one its comparison."""

    depth = 0
    epoch = 0
    #: Whether the op is basic indexing (``Pinned.__getitem__``), which compares nothing.
    viewing = False


_OPS = _Ops()
_EPOCHS = itertools.count(1)


def recording(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, a recorded op (``api/recipes.py``) over pinned arrays, with
    each pinned memory compared once (``_Ops``)."""
    if not _OPS.depth:
        _OPS.epoch = next(_EPOCHS)
    _OPS.depth += 1
    try:
        return fn(*args, **kwargs)
    finally:
        _OPS.depth -= 1


def read_once(args: tuple) -> tuple | None:
    """``args`` with each pinned array among them read once (its ``_node``, which syncs)
    and given as a plain Array of that node, its value for the op being recorded; None
    where none is pinned. Only for an op whose result is no view of its arguments
    (``api/recipes.reading_pins_once``): a view of a plain array would not be a member of
    the pinned family, and writes through it would not reach the memory."""
    if not any(type(a) is Pinned for a in args):
        return None
    return recording(_plain, args)  # one comparison per memory, however many of its members


def _plain(args: tuple) -> tuple:
    return tuple(Array(a._node) if type(a) is Pinned else a for a in args)


def _unpin(family: Family, pin: Pin) -> None:
    """The family's members take their plain class back; the root keeps the memory."""
    family.pin = None
    members = _members(family)
    for member in members:
        member.__class__ = Array
    if pin.snapshot is None or not _same(pin.buffer, pin.snapshot):
        _written(pin.root, pin.node)
    else:
        _set(pin.root, pin.node)
    for member in members:
        _hold(member, None)


def _written(root: Array, node: Node) -> None:
    """The memory was written (its value is ``node``'s): a write to the root, which
    reaches its views."""
    _set(root, node)
    changed(root)


def _same(memory: np.ndarray, node: Node, start: int = 0, stop: int | None = None) -> bool:
    """Whether ``node`` holds the bits ``memory`` holds, in its bytes from ``start`` to
    ``stop`` (all of them by default; both C-contiguous: ``memcmp``, a third of
    ``np.array_equal``'s time on megabytes)."""
    buffer: np.ndarray = node.buffer  # type: ignore[assignment]  # a snapshot is ready
    stop = memory.nbytes if stop is None else stop
    if stop <= start:
        return True
    return _memcmp(HOST.address(memory) + start, HOST.address(buffer) + start, stop - start) == 0


_memcmp = ctypes.CDLL(None).memcmp
_memcmp.restype = ctypes.c_int
_memcmp.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


def store(array: Array) -> None:
    """After a write through plaidarray to the pinned root (directly, or through a view:
    ``views.changed`` writes the root): copy its new value into the memory."""
    pin = _pin_of(array)
    if pin is None or pin.root is not array:
        return
    node = _SLOT.__get__(array)
    if node.buffer is None:
        read(node)
    np.copyto(pin.buffer, node.buffer)
    pin.snapshot = node


class Pinned(Array):
    """The class of an array while its family's memory is exported (see the module)."""

    __slots__ = ()

    if hasattr(Array, "__del__"):  # the Python array handle (the C one counts in its dealloc)
        def __del__(self) -> None:
            """Count the array off its node without the ``_node`` property: a read there
            would sync, and unpin a family whose export is being made (a blank root made
            for the export dies before the export is returned)."""
            _SLOT.__get__(self).arrays -= 1

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

    @property
    def device(self) -> Device:
        return _SLOT.__get__(self).device or devices.default()

    def _rebind(self, node: Node) -> None:
        _set(self, node)
        store(self)

    def __getitem__(self, key: Any) -> Array:
        """An element is read out of the memory as it is now, which is what NumPy's
        ``x[i]`` gives, without comparing the memory with its snapshot: a loop of
        ``float(x[i])`` over an exported array of a million elements cost 1.7 ms a read so,
        and costs a load now. Basic indexing makes its view without comparing (``_basic``);
        any other key is an op, which compares once (``recording``)."""
        element = _element_in_memory(self, key)
        if element is not None:
            node = Node.ready(element, _SLOT.__get__(self).device)
            node.owned = True
            return Array(node)
        if not _basic(key) or _OPS.viewing:
            return recording(Array._getitem, self, key)
        _OPS.viewing = True
        try:
            return recording(Array._getitem, self, key)
        finally:
            _OPS.viewing = False

    def __setitem__(self, key: Any, value: Any) -> None:
        """A Python scalar stored into an element of an exported array (or into the row,
        the plane, that leading ints pick) is written into the memory, as a write into the
        export is, which the next op's comparison finds (``sync``): a loop's ``x[i] = v``
        costs a store, where it compared and copied the whole memory (2 ms a store on a
        million float64). Any other write is an op."""
        if not _stored_in_memory(self, key, value):
            recording(Array._setitem, self, key, value)


# The fast paths of ``Pinned``'s indexing, functions of their own so that the pin they
# read is no longer referred to when the op runs: a reference to the pin is one to the
# memory, and an update that unpins the array would not see the memory as its alone
# (``array._sole_owner``) and copy it instead of writing it in place.

def _basic(key: Any) -> bool:
    """Whether ``key`` is basic indexing (ints, slices of int or None bounds, ``...``,
    None), whose result is a view: a member of the family, whose every read syncs, so it
    may be made from the snapshot as it is, without comparing the memory with it (``x[i:j]``
    on an exported array of a million float64 cost 0.6 ms so). Advanced indexing copies,
    and reads the memory as it is now. Stricter than the namespace's rule
    (``api.views._is_basic``), which the trace layer does not import: a slice bound that
    is an array would be read while nothing compares."""
    for part in key if type(key) is tuple else (key,):
        if type(part) is slice:
            if not all(type(b) in _BOUNDS for b in (part.start, part.stop, part.step)):
                return False
        elif type(part) is not int and part is not Ellipsis and part is not None:
            return False
    return True


_BOUNDS = (int, type(None))


def _element_in_memory(array: Array, key: Any) -> np.ndarray | None:
    """Element ``key`` of an exported array, read out of its memory (``Pinned.__getitem__``);
    None where the key is no element's or the array is no longer exported."""
    pin = _pin_of(array)
    if pin is None or not pin.exported():
        return None
    return HOST.load_element(pin.window(array), key if type(key) is tuple else (key,))


def _stored_in_memory(array: Array, key: Any, value: Any) -> bool:
    """Whether ``array[key] = value`` was written into an exported array's memory
    (``Pinned.__setitem__``): a Python scalar into elements its dtype takes exactly, of a
    writable member."""
    pin = _pin_of(array)
    record = array._base
    if pin is None or not pin.exported() or type(record) is ViewOf and not record.writable:
        return False
    with _STORES:
        return HOST.store_element(pin.window(array), key, value)


def _in_one_op(name: str) -> Any:
    """``Array``'s method or property ``name`` on a pinned array, as one op
    (``recording``): the memory is compared with its snapshot once a call, not at every
    read of the array's node (``x[2:5]`` read it three times, ``x[k] = v`` four)."""
    member = vars(Array)[name]
    if type(member) is property:
        read: Callable[[Array], Any] = member.fget  # type: ignore[assignment]  # Array's properties all read
        return property(lambda self: recording(read, self), doc=member.__doc__)
    method = getattr(Array, name)

    def call(self: Array, *args: Any, **kwargs: Any) -> Any:
        return recording(method, self, *args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = method.__doc__
    return call


#: ``Array``'s methods that read the array's node more than once, or record an op on it,
#: each called as one op on a pinned array (its element reads, ``Pinned.__getitem__``,
#: and the properties that need no value, ``shape``, ``dtype``, ``device``, are its own).
for _name, _member in vars(Array).items():
    public = _name.startswith("__") or not _name.startswith("_")
    if _name not in vars(Pinned) and _name not in {"__init__", "__reduce__", "__len__", "__iter__"} and \
            (type(_member) is property or callable(_member) and public):
        setattr(Pinned, _name, _in_one_op(_name))
del _name, _member, public
