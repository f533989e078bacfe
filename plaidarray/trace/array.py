"""The lazy ``Array``: a handle on a node of the pending graph.

Operations record HLO ops and return new arrays at once; values are computed on
materialisation (``np.asarray``, ``float``, ``bool``, ``repr``, ``tolist``,
``__dlpack__``...). In-place operators rebind this array's node to the new value, so
every name bound to the same Array object sees the update, as the spec requires.
"""

from __future__ import annotations

import operator
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..backend import devices, transfer
from ..backend.devices import Device
from ..backend.transfer import EXACT_SCALARS, HOST, TransferManager
from . import scalars, views
from .materialize import materialize, read
from .node import GRAPH_IN_C, GRAPH_LOCK, TRACED, Node, set_buffers, value_read


class _ArrayHandleInPython:
    """The base of ``Array``: its node, and ``Node.arrays`` counting the arrays on it as
    they are made and freed. ``_graph.ArrayHandle`` does the same in C (a Python
    ``__init__`` and ``__del__`` were a tenth of recording an op); this is its definition."""

    __slots__ = ("_node", "_base")

    def __init__(self, node: Node) -> None:
        self._node = node
        #: For a view: its ``views.ViewOf`` (root, steps, layout); for an array that
        #: has views: their ``views.Family``; else None.
        self._base: Any = None
        node.arrays += 1

    def __del__(self) -> None:
        self._node.arrays -= 1

    def __getitem__(self, key: Any) -> Any:
        """``x[key]``: ``Array._getitem`` (``_graph.ArrayHandle`` reads elements in C first)."""
        return self._getitem(key)  # type: ignore[attr-defined]  # Array's

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value``: ``Array._setitem`` (``_graph.ArrayHandle`` stores elements in C first)."""
        self._setitem(key, value)  # type: ignore[attr-defined]  # Array's

    def __delitem__(self, key: Any) -> None:
        raise ValueError("cannot delete array elements")  # NumPy's error


if TYPE_CHECKING:
    _ArrayHandle = _ArrayHandleInPython
else:
    _ArrayHandle = GRAPH_IN_C.ArrayHandle if GRAPH_IN_C is not None else _ArrayHandleInPython


def _no_check(node: Node) -> None:
    """``CHECK_WRITE``'s until the tracing module installs its own."""


#: What a write to an array whose value is ``node`` checks while a function is traced
#: (``tracing.check_write``, installed by that module, which builds on this one).
CHECK_WRITE: list[Callable[[Node], None]] = [_no_check]

#: Held by each assignment from reading the array's value to binding the new one: threads
#: writing parts of one array (scikit-learn's threaded pairwise distances fill columns of
#: one result) would otherwise each update the value they read, and all but the last
#: write would be lost. Reentrant: a write through a view stores into its base.
_STORES = threading.RLock()


class Array(_ArrayHandle):
    """An n-dimensional array whose value is computed lazily by compiled code."""

    __slots__ = ("__weakref__",)
    __array_priority__ = 100  # NumPy defers binary operators to us

    @staticmethod
    def _checked(node: Node) -> None:
        """Check a write to an array whose value is ``node`` (``CHECK_WRITE``: while a
        function is traced, not an array it captured); views' steps write so."""
        CHECK_WRITE[0](node)

    def _rebind(self, node: Node) -> None:
        """Point this array at ``node`` (in-place operators and ``__setitem__``)."""
        node.arrays += 1
        self._node.arrays -= 1
        self._node = node

    def __reduce__(self) -> tuple:
        """Pickle the value, computed (so any graph depth pickles), never the graph. The
        value is the buffer itself, not a copy: with protocol 5 and a buffer callback (as
        Dask and multiprocessing's shared memory use it) it travels out of band. A traced
        value has none: pickling it raises the tracing error."""
        return _from_buffer, (self._value(),)

    # --- attributes -------------------------------------------------------------------
    @property
    def dtype(self) -> np.dtype:
        return self._node.shape.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape.dims

    @property
    def ndim(self) -> int:
        return len(self._node.shape.dims)

    @property
    def size(self) -> int:
        return self._node.shape.size

    @property
    def device(self) -> Device:
        """The device its value lives on: its operands', or the one it was made on; the
        default device for a value of none (made of Python scalars alone)."""
        return self._node.device or devices.default()

    @property
    def T(self) -> Array:
        if self.ndim != 2:
            raise ValueError(f"x.T requires a 2-D array, got {self.ndim}-D; use permute_dims or mT")
        return _NAMESPACE["module"].permute_dims(self, (1, 0))

    @property
    def mT(self) -> Array:
        return _NAMESPACE["module"].matrix_transpose(self)

    @property
    def real(self) -> Array:
        """NumPy's ``x.real`` (beyond the standard: ``fft(x).real``): ``real(x)``, a view of
        a complex array's real parts (a write through it reaches ``x``), as NumPy's is; the
        array itself, of a real one."""
        return _NAMESPACE["module"].real(self) if self.dtype.kind == "c" else self

    @property
    def imag(self) -> Array:
        """NumPy's ``x.imag``: ``imag(x)``, a view of a complex array's imaginary parts;
        zeros of a real array's dtype and shape."""
        ns = _NAMESPACE["module"]
        return ns.imag(self) if self.dtype.kind == "c" else ns.zeros_like(self)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """This array on ``device`` (a device or its name): itself where it is there,
        else its value computed and copied by the backend's transfer (``stream`` is for
        devices with queues; the host runs in order)."""
        target = devices.resolve(device, "to_device")
        if target is None:
            raise ValueError("to_device: expected a device, got None")
        if self.device is target:
            return self
        self._value()
        return Array(Node.ready(_transfers(self._node).copy_to(self._node.buffer, target), target))

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        namespace = _NAMESPACE["module"]
        if api_version not in (None, *namespace.SUPPORTED_VERSIONS):
            raise ValueError(f"unsupported Array API version {api_version!r}")
        return namespace

    # --- materialisation --------------------------------------------------------------
    def _computed(self) -> Node:
        """Its node, with a buffer: a value read, which runs its pending graph (a view of
        a computed root's elements copies them out of it, ``views.window_copy``)."""
        node = self._node
        value_read()
        if node.buffer is None:
            copy = views.window_copy(self) if type(self._base) is views.ViewOf else None
            if copy is None:
                read(node)
            else:
                with GRAPH_LOCK:
                    set_buffers([node], [copy])
        return node

    def _value(self) -> np.ndarray:
        """The computed value as a read-only NumPy view (compiles on first use)."""
        node = self._computed()
        return _transfers(node).to_host(node.buffer)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(x)``: ``x``'s memory, writable, as a NumPy array's is; writes into
        it are writes to ``x`` (``exports.py``). A copy for another dtype or ``copy=True``."""
        return exports.export(self, dtype, copy)

    def _scalar(self, kind: type, name: str) -> Any:
        """The value of a 0-d array as ``kind``: its element taken from the buffer by the
        transfers, with no read-only view (most loops read a value this way at every step),
        or the scalar tier's (``scalars.py``: ``if x[i] > 0.5``)."""
        node = self._node
        if node.shape.dims:
            raise TypeError(f"{name}() needs a 0-d array, got shape {self.shape}")
        if node.buffer is None:
            found = scalars.evaluate(node)
            if found is not None:
                value_read()
                return kind(found)
        node = self._computed()
        return kind(_transfers(node).item(node.buffer))

    def __bool__(self) -> bool:
        return self._scalar(bool, "bool")

    def __float__(self) -> float:
        return self._scalar(float, "float")

    def __int__(self) -> int:
        if self.dtype.kind == "f":
            value = float(self._scalar(float, "int"))
            if value != value or value in (float("inf"), float("-inf")):
                raise (ValueError if value != value else OverflowError)(f"cannot convert {value} to int")
        return self._scalar(int, "int")

    def __complex__(self) -> complex:
        return self._scalar(complex, "complex")

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"__index__ needs an integer array, got {self.dtype}")
        return self._scalar(int, "__index__")

    def tolist(self) -> Any:
        return self._value().tolist()

    def __repr__(self) -> str:
        from .tracing import TracerError

        try:
            value = self._value()
        except TracerError:  # printing inside a traced function shows what is known
            return f"Array(traced, shape={self.shape}, dtype={self.dtype.name})"
        body = np.array2string(value, separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype.name})"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        """``f"{x:.3g}"``: a 0-d array formats as its value does, as NumPy's does (SciPy
        formats results so); an empty spec gives ``str(x)``; other arrays take no spec."""
        if not spec:
            return str(self)
        if self.ndim:
            raise TypeError(f"unsupported format string {spec!r} passed to Array.__format__ "
                            f"(only 0-d arrays take one, got shape {self.shape})")
        return format(self._value().item(), spec)

    def __dlpack__(self, /, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """Its memory lent without a copy: a GPU's device memory where other libraries
        reach it (``transfers.to_dlpack``), else the host's, as ``np.asarray`` exports it."""
        transfers = self.device.transfers
        lent = transfers.dlpack_device()
        if lent is not None and (dl_device is None or tuple(dl_device) == lent):
            versioned = max_version is not None and max_version[0] >= 1
            return transfers.to_dlpack(self._computed().buffer, stream, versioned, bool(copy))
        if stream is not None and lent is None:
            raise BufferError("plaidarray's host arrays need no stream; stream must be None")
        kwargs: dict[str, Any] = {} if max_version is None else {"max_version": max_version}
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        # The array's memory, as np.asarray exports it (zero copy, as NumPy and PyTorch share it).
        return exports.export(self, None, None).__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device.transfers.dlpack_device() or (1, 0)  # else kDLCPU, device 0

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        """Each element or row in turn, as ``self[i]`` reads it at that step (a write in the
        loop's body shows in the next ones, as in NumPy's iteration). A pending array is
        computed first, so its elements are loaded from its buffer in C (``for v in
        y[a:b]: float(v)`` of a computed ``y``: 0.73 us an element, where each element of
        the pending window was copied out of its root in Python, 3.1 us)."""
        if not self.ndim:
            raise TypeError("iteration over a 0-d array")
        if self.shape[0] and type(self) is Array and self._node.depth != TRACED:  # an export's: as it is
            self._computed()
        return (self[i] for i in range(self.shape[0]))

    # --- indexing ---------------------------------------------------------------------
    if TYPE_CHECKING:
        def __getitem__(self, key: Any) -> Array: ...

    def _getitem(self, key: Any) -> Array:
        """``x[key]``; basic indexing gives a view, as in NumPy (``trace/views.py``). An
        element (an int for every axis: NumPy's scalar, a copy) of an array whose value is
        computed is read by the backend's transfer (``load_element``), as ``__setitem__``
        writes one: a loop's ``float(a[i, j])`` costs a load, not a recorded op and a run;
        so is an element of a pending view of a computed array (``views.element_copy``).
        With the C module, ``x[key]`` is ``_graph.ArrayHandle``'s, which reads an element of
        a computed host array itself and calls this for every other key."""
        node = self._node
        buffer = node.buffer
        rank = len(node.shape.dims)
        # an element has a key of one int per axis (a slice, a mask: never)
        if (type(key) is int and rank == 1) or (type(key) is tuple and len(key) == rank and (not rank or type(key[0]) is int)):
            index = key if type(key) is tuple else (key,)
            if buffer is not None:
                element = _transfers(node).load_element(buffer, index)
            else:  # a view's element out of its computed root (``m[i][j]``, ``row[j]``)
                element = views.element_copy(self, index) if type(self._base) is views.ViewOf else None
            if element is not None:
                found = Node.ready(element, node.device)
                found.owned = True
                return Array(found)
        if buffer is not None:
            parts = (key,) if type(key) is Array else key if type(key) is tuple else ()
            if len(parts) == rank and Array in map(type, parts):  # a loop's ``m[r[k], c[k]]``
                ints = _read_ints(parts)
                if ints is not None:
                    return self[ints]
        return _NAMESPACE["getitem"](self, key)

    if TYPE_CHECKING:
        def __setitem__(self, key: Any, value: Any) -> None: ...

    def _setitem(self, key: Any, value: Any) -> None:
        """``x[key] = value``. A window update (``dynamic_update_slice``) or a scatter of
        positions (an index array's key, ``scatter``) of a 1-D array runs at once,
        so a loop of assignments runs one cached executable per step instead of growing a
        graph; when this array alone holds its buffer, the update writes into it in place
        and costs the size of ``value``, not of the array; a Python scalar, or an array of
        this one's dtype (0-d or of the block's shape, its own graph run first), stored into
        one element or a block that ints and slices pick (a row, a column, ``x[1:]``) of
        an array that is no view (computed first where it is pending and this Array alone
        holds its node) is written by the backend's transfer (``store_element``)
        without an update's executable, into a copy (``stored_copy``) where others see its
        memory (a pending reader). When this array shares its elements with others (views),
        the write reaches them too (``views.changed``). With the C module, ``x[key] = value``
        is ``_graph.ArrayHandle``'s, which makes the in-place stores into an element or a
        block that ints and slices pick itself (a scalar the dtype takes exactly, a computed
        value, the scalar tier's: ``g[1:-1, 1:-1] = v`` ~1 us where this path took ~7.5) and
        calls this for every other store."""
        with _STORES:
            if self._base is None:
                self._store(key, value)
                return
            step = _NAMESPACE["index_step"](key)
            if views.is_view_at(value, self, step):
                return  # ``x[key] += v``: the view x[key] wrote itself through already
            views.check_writable(self, "__setitem__")
            self._store(key, value)
            views.changed(self, step)

    def _store(self, key: Any, value: Any) -> None:
        old = self._node
        self._checked(old)
        index = None
        if type(self._base) is not views.ViewOf and (old.buffer is not None or
                                                      old.depth != TRACED and old.arrays == 1):
            index = _block_key(key, len(old.shape.dims))
            if index and old.buffer is None:
                # ``d = sum((p - p[i]) ** 2, axis=1); d[i] = inf``: the array's pending graph
                # runs, then the block is written in place, where recording an update and
                # running the two took ~16 us of the store against ~6
                old = self._computed()
        if index and (slice not in map(type, index) or _sole_owner(old)):
            # the value first: its graph may read this array (``m[b] = copy of m[a]``), and
            # once computed it no longer does. Not for a slice of an array others see, as
            # where the value's graph reads it (``x[1:] = x[:-1]``, a stencil's
            # ``u[1:-1] = u[1:-1] + ...``): the update fused with that graph runs faster than
            # the graph alone and a copy
            block = _block_value(value, old)
            transfers = _transfers(old)
            if _sole_owner(old):
                if transfers.store_element(old.buffer, index, block):
                    return  # a block of memory nothing else sees, written as the in-place update would
            elif (copy := transfers.stored_copy(old.buffer, index, block)) is not None:
                stored = Node.ready(copy, old.device)  # the update's new value, as its run would make it
                stored.owned = True
                self._rebind(stored)
                return
        donated = old if _sole_owner(old) else None
        new = _NAMESPACE["setitem"](self, key, value)._node
        if new.op in _UPDATES and new.operands[0] is old and new.depth != TRACED:
            # Before the array takes the new value: an update interrupted (or failing) before
            # its run leaves the old one, and a run is never left half done (parallel.py).
            # Without a donation, as a read of one value (in C: a stencil's window store
            # whose graph others still read, ``u[1:-1, 1:-1] = inner``, took 60 us here).
            if donated is None:
                read(new)
            else:
                materialize([new], donated)
        self._rebind(new)

    # Arrays are mutable through in-place operators. (Typed as NumPy's stubs type ndarray's.)
    __hash__: ClassVar[None] = None  # type: ignore[assignment]


#: The ops of a store that writes part of the array it updates (a window, positions).
_UPDATES = frozenset({"dynamic_update_slice", "scatter"})


def _block_key(key: Any, ndim: int) -> tuple | None:
    """``key`` as the Python ints and slices that pick an element or a block (a row, a
    plane, a column, ``x[1:]``, ``m[i, 2:5]``, ``x[::2]``: ``transfer.block_shape``) of an
    array, or as ints alone with its computed 0-d integer arrays read (``_read_ints``), its
    trailing full slices dropped and its ``...`` the full slices it stands for in an array
    of ``ndim`` dimensions (``m[i, :]`` and ``y[a:b, ...]`` are ``m[i]`` and ``y[a:b]``,
    ``t[..., 0]`` is ``t[:, :, 0]``); None for a key of other entries, or of none (a write
    of the whole array takes its value's node instead, ``api.indexing``)."""
    if type(key) is int:  # a loop's row or element
        return (key,)
    if type(key) is Array and key._node.shape.dims:  # a mask's or an index array's positions
        return None
    parts = key if type(key) is tuple else (key,)
    at = next((k for k, part in enumerate(parts) if part is Ellipsis), None)
    if at is not None:
        parts = (*parts[:at], *(_FULL,) * (ndim - len(parts) + 1), *parts[at + 1:])
    if len(parts) > ndim:  # too many indices (the rules raise), or new axes: no block
        return None
    end = len(parts)
    while end and type(parts[end - 1]) is slice and parts[end - 1] == _FULL:
        end -= 1
    if not end:
        return None
    kinds = [type(k) for k in parts[:end]]
    if all(kind is int or kind is slice for kind in kinds):
        return parts[:end]
    return _read_ints(parts[:end]) if Array in kinds else None


def _read_ints(parts: tuple) -> tuple | None:
    """``parts`` with its computed 0-d integer arrays read as the ints they hold, as NumPy
    reads them (``counts[labels[i]] += 1``, ``m[r[k], c[k]]``: an element, not an index
    array's gather or scatter), where every entry is one or an int; else None (a pending
    index, such as a traced one, stays an array: ``api.indexing`` takes it)."""
    ints = []
    for k in parts:
        if type(k) is int:
            ints.append(k)
        elif type(k) is Array and k._node.buffer is not None and not k._node.shape.dims and \
                k._node.shape.dtype.kind in "iu":
            ints.append(operator.index(k))
        else:
            return None
    return tuple(ints)


_FULL = slice(None)


#: The types of the scalar tier's values that C evaluated (``scalars.evaluate``).
_PYTHON_SCALARS = frozenset({float, int, bool})


def _block_value(value: Any, node: Node) -> Any:
    """What the transfers' ``store_element`` takes for a store into a block of ``node``'s
    buffer: a Python scalar as it is; an array of the node's dtype and device as its
    buffer, its pending graph run first (a loop's ``h[k] += 1``, the element read plus 1,
    or ``m[i, :] = r * v[i]``: its product runs, then is stored, where recording and
    running an update of the array cost 40-50 us a step); else None (nothing stored so).
    A pending 0-d value the scalar tier computes (``scalars.py``: the element read plus 1
    is one exact op on computed values) is its reference evaluation's, the kernels' bits,
    without the graph's run (~4.5 us of the step). Whether its shape is the block's the
    transfer decides."""
    if type(value) is not Array:
        return value
    given = value._node
    if given.shape.dtype != node.shape.dtype or given.device is not node.device:
        return None
    if given.buffer is None and not given.shape.dims:
        found = scalars.evaluate(given)
        if type(found) in _PYTHON_SCALARS:  # C's: its dtype's value exactly
            found = np.asarray(found, dtype=given.shape.dtype)
        if type(found) is np.ndarray and found.dtype == given.shape.dtype:
            value_read()
            return found
    return value._computed().buffer


def _references(node: Node) -> tuple[int, int]:
    """The reference counts of ``node`` and of its buffer, as ``__setitem__`` sees them."""
    return sys.getrefcount(node), sys.getrefcount(node.buffer)


def _sole_owner(node: Node) -> bool:
    """Whether nothing but one Array can see ``node``'s buffer: no other array, no
    pending op that reads it, no NumPy view or DLPack export of it, and memory that an
    executable made (not a caller's NumPy array)."""
    return node.owned and node.arrays == 1 and _references(node) == _SOLE_REFERENCES


def _sole_references() -> tuple[int, int]:
    """The counts ``_references`` gives for a node that only one Array holds, measured
    once on this interpreter through the same calls ``__setitem__`` makes (how many
    references a frame or a call holds is the interpreter's business, and has changed
    between CPython versions), so an unexpected reference can never look like none."""
    probe = Array(Node.ready(np.empty(1)))
    old = probe._node
    return _probe_references(old)


def _transfers(node: Node) -> TransferManager:
    """The transfers of ``node``'s buffer: its device's, the host's for a value of no
    device (``backend/transfer.py``)."""
    device = node.device
    return HOST if device is None else device.transfers


def _probe_references(node: Node) -> tuple[int, int]:
    """Stands where ``_sole_owner`` stands in the calls, for the measurement."""
    return _references(node)


def _from_buffer(buffer: np.ndarray) -> Array:
    """An array holding ``buffer`` (how arrays are unpickled)."""
    return Array(Node.ready(HOST.from_host(buffer, "pickle")))


#: What the methods call in the API layer: the namespace module and the indexing
#: functions. The API layer installs them (``install_namespace``), so this layer never
#: imports it, and a method costs a dictionary lookup, not an import.
_NAMESPACE: dict[str, Any] = {}
_FUNCTIONS: dict[str, Any] = {}


def install_namespace(module: Any, getitem: Any, setitem: Any, index_step: Any) -> None:
    """Called once by ``plaidarray/__init__.py``: the namespace (``xp``) the operators
    and ``__array_namespace__`` use, the functions behind ``x[key]`` and ``x[key] = v``
    (``setitem`` gives the new value), and the view step a basic key makes."""
    _NAMESPACE.update(module=module, getitem=getitem, setitem=setitem, index_step=index_step)


def namespace() -> Any:
    """The array namespace the API layer installed (``xp``): how this layer calls the
    standard's functions (``asarray``, ``astype``) without importing the layer above it."""
    return _NAMESPACE["module"]


def _function(name: str):
    """The namespace function an operator maps to, looked up once."""
    fn = _FUNCTIONS.get(name)
    if fn is None:
        fn = _FUNCTIONS[name] = getattr(_NAMESPACE["module"], name)
    return fn


def _operand(other: Any, device: Device) -> Any:
    """The other operand of an operator: arrays and Python scalars as they are, NumPy
    arrays and scalars as arrays of their dtype (as NumPy 2 types them) on ``device``
    (the array's: host memory joins an array wherever it lives), else None."""
    if isinstance(other, (np.ndarray, np.generic)):
        return _function("asarray")(other, device=device)
    return other if isinstance(other, (Array, bool, int, float, complex)) else None


#: Operands of operators taken as they are, asked first (most operators see these).
_AS_THEY_ARE = frozenset({Array, float, int})


def _binary(name: str, reflected: bool = False):
    def method(self: Array, other: Any) -> Array:
        if type(other) not in _AS_THEY_ARE:
            if isinstance(other, (list, tuple)):
                # NumPy would compare a list element by element; Python's fallback for ==
                # and != (identity) would give one bool, silently: an error instead.
                raise TypeError(f"{name}: an array and a {type(other).__name__} (arrays and Python scalars "
                                "only, as the standard says): convert it with asarray first")
            other = _operand(other, self.device)
            if other is None:
                return NotImplemented
        fn = _FUNCTIONS.get(name) or _function(name)
        return fn(other, self) if reflected else fn(self, other)
    return method


def _inplace(name: str):
    def method(self: Array, other: Any) -> Array:
        operand = _operand(other, self.device)
        if operand is None:
            return NotImplemented
        if self._base is not None:
            views.check_writable(self, name)
        result = _function(name)(self, operand)
        if result.shape != self.shape:
            raise ValueError(f"in-place {name} would change the shape {self.shape} to {result.shape}")
        if result.dtype != self.dtype:
            raise TypeError(f"in-place {name} would change the dtype {self.dtype} to {result.dtype}")
        self._checked(self._node)
        self._rebind(result._node)
        if self._base is not None:
            views.changed(self)
        return self
    return method


def _unary(name: str):
    def method(self: Array) -> Array:
        out = _function(name)(self)
        if self._node.weak:  # -s, abs(s), ~s of a traced Python scalar: a Python scalar still
            out._node.weak = True
        return out
    return method


_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "pow", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift", "matmul": "matmul",
}
#: Each operator method of Array: the namespace function it calls, and the order of its
#: operands: 0 as they are, 1 swapped (``__radd__``), 2 in place (``__iadd__``: the array
#: rebound to the result). ``api.elementwise`` puts an operator's common cases in C where
#: its function has them (``_graph.Elementwise``), these methods their fallback.
OPERATOR_FUNCTIONS: dict[str, tuple[str, int]] = {}
for _op, _fn in _OPERATORS.items():
    setattr(Array, f"__{_op}__", _binary(_fn))
    setattr(Array, f"__r{_op}__", _binary(_fn, reflected=True))
    setattr(Array, f"__i{_op}__", _inplace(_fn))
    OPERATOR_FUNCTIONS.update({f"__{_op}__": (_fn, 0), f"__r{_op}__": (_fn, 1), f"__i{_op}__": (_fn, 2)})
for _op, _fn in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
                 "ge": "greater_equal"}.items():
    setattr(Array, f"__{_op}__", _binary(_fn))
    OPERATOR_FUNCTIONS[f"__{_op}__"] = (_fn, 0)
for _op, _fn in {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}.items():
    setattr(Array, f"__{_op}__", _unary(_fn))
    OPERATOR_FUNCTIONS[f"__{_op}__"] = (_fn, 0)


def _divmod(self: Array, other: Any) -> tuple[Any, Any]:
    """``divmod(x, y)``: ``(x // y, x % y)``, as NumPy's arrays give it (beyond the standard)."""
    return self // other, self % other


def _rdivmod(self: Array, other: Any) -> tuple[Any, Any]:
    return other // self, other % self


for _dunder, _implementation in (("__divmod__", _divmod), ("__rdivmod__", _rdivmod)):
    setattr(Array, _dunder, _implementation)


def _numpy_method(name: str, fn: Callable[..., Any]):
    def method(self: Array, *args: Any, **kwargs: Any) -> Any:
        return fn(_NAMESPACE["module"], self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"NumPy's ``ndarray.{name}``, beyond the standard (the user guide's \"Beyond the standard\")."
    return method


def _no_out(name: str, out: Any) -> None:
    """NumPy's ``out``, which its functions pass on (``np.sum(x)`` calls ``x.sum(axis=None,
    dtype=None, out=None)``): None only, as a result is a new array, never written into
    another's memory."""
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (a result is a new array: assign it)")


def _cast(ns: Any, x: Any, dtype: Any) -> Any:
    return x if dtype is None else ns.astype(x, dtype)


def _summed(name: str) -> Callable[..., Any]:
    """``sum`` and ``prod`` with NumPy's ``(axis, dtype, out, keepdims)``."""
    def method(ns: Any, x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        _no_out(name, out)
        return getattr(ns, name)(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return method


def _reduction(name: str) -> Callable[..., Any]:
    """Extrema, their positions and truth tests with NumPy's ``(axis, out, keepdims)``."""
    def method(ns: Any, x: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        _no_out(name, out)
        return getattr(ns, name)(x, axis=axis, keepdims=keepdims)
    return method


def _mean(ns: Any, x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """``mean`` with NumPy's ``(axis, dtype, out, keepdims)``: the mean of the values in ``dtype``."""
    _no_out("mean", out)
    return ns.mean(_cast(ns, x, dtype), axis=axis, keepdims=keepdims)


def _deviation(name: str) -> Callable[..., Any]:
    """``std`` and ``var`` with NumPy's ``(axis, dtype, out, ddof, keepdims)``."""
    def method(ns: Any, x: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
               keepdims: bool = False) -> Any:
        _no_out(name, out)
        return getattr(ns, name)(_cast(ns, x, dtype), axis=axis, correction=ddof, keepdims=keepdims)
    return method


def _shape_arguments(shape: tuple) -> Any:
    """NumPy's ``reshape(2, 3)`` and ``reshape((2, 3))`` alike."""
    return shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


#: NumPy's array methods that NumPy-style code calls, beyond the standard's operators and
#: attributes: each the namespace's function of the same meaning, with NumPy's arguments
#: (``ddof`` for ``correction``, ``reshape(2, 3)``, ``transpose()`` reversing the axes,
#: ``cumsum``/``ravel``/``flatten`` of the flattened array without an axis, ``item`` of a
#: one-element array as a Python scalar). The reductions take NumPy's ``dtype`` where
#: NumPy's do, and ``out`` as None only: NumPy's functions call them so (``np.mean(x)``).
_NUMPY_METHODS: dict[str, Callable[..., Any]] = {
    **{name: _summed(name) for name in ("sum", "prod")},
    **{name: _reduction(name) for name in ("max", "min", "any", "all", "argmax", "argmin")},
    "mean": _mean,
    **{name: _deviation(name) for name in ("std", "var")},
    "cumsum": lambda ns, x, axis=None: ns.cumulative_sum(ns.reshape(x, (-1,)) if axis is None else x,
                                                         axis=0 if axis is None else axis),
    "reshape": lambda ns, x, *shape: ns.reshape(x, _shape_arguments(shape)),
    "transpose": lambda ns, x, *axes: ns.permute_dims(x, _shape_arguments(axes) if axes
                                                      else tuple(range(x.ndim - 1, -1, -1))),
    "ravel": lambda ns, x: ns.reshape(x, (-1,)),
    "flatten": lambda ns, x: ns.reshape(x, (-1,), copy=True),
    "squeeze": lambda ns, x, axis=None: ns.squeeze(x, axis=tuple(i for i, n in enumerate(x.shape) if n == 1)
                                                   if axis is None else axis),
    "copy": lambda ns, x: ns.asarray(x, copy=True),
    "astype": lambda ns, x, dtype, copy=True: ns.astype(x, dtype, copy=copy),
    "clip": lambda ns, x, min=None, max=None: ns.clip(x, min, max),
    "round": lambda ns, x, decimals=0: _round(ns, x, operator.index(decimals)),
    "__contains__": lambda ns, x, value: bool(ns.any(x == value)),
    "dot": lambda ns, x, other: ns.matmul(x, other) if x.ndim and other.ndim else x * other,
    "item": lambda ns, x: _item(x),
    "view": lambda ns, x, dtype=None: _same_view(x, dtype),
}


def _round(ns: Any, x: Any, decimals: int) -> Array:
    """NumPy's ``round(decimals)``: half to even at ``decimals`` decimal places, as NumPy
    computes it (``_round_real``), a complex array's parts each rounded (a complex scale
    would make an infinite part's product with the scale's zero a NaN)."""
    if not ns.isdtype(x.dtype, "complex floating"):
        return _round_real(ns, x, decimals)
    rounded = ns.asarray(x, copy=True)
    ns.real(rounded)[...] = _round_real(ns, ns.real(x), decimals)
    ns.imag(rounded)[...] = _round_real(ns, ns.imag(x), decimals)
    return rounded


def _round_real(ns: Any, x: Any, decimals: int) -> Array:
    """``_round`` of a real array: scaled by ``10.0 ** decimals``, or divided by
    ``10.0 ** -decimals`` where ``decimals`` < 0, rounded and scaled back, so that the bits
    are NumPy's; an integer array's values kept in its dtype (rounded so in float64 where
    ``decimals`` < 0)."""
    if decimals >= 0 and ns.isdtype(x.dtype, "integral"):
        return ns.asarray(x, copy=True)
    if decimals == 0:
        return ns.round(x)
    if decimals > 0:
        return ns.round(x * 10.0 ** decimals) / 10.0 ** decimals
    scale = 10.0 ** -decimals
    if ns.isdtype(x.dtype, "integral"):
        return ns.astype(ns.round(ns.astype(x, ns.float64) / scale) * scale, x.dtype)
    return ns.round(x / scale) * scale


def _same_view(x: Array, dtype: Any) -> Array:
    """``x.view()`` or ``x.view(its dtype)``: ``x`` itself (a write through either is a
    write to both, as NumPy's views share memory). Reinterpreting its bytes as another
    dtype is refused."""
    if dtype is not None and np.dtype(dtype) != x.dtype:
        raise TypeError(f"view: reinterpreting {x.dtype} as {np.dtype(dtype)} is not supported; use astype to convert")
    return x


def _item(x: Array) -> bool | int | float | complex:
    """The one element of ``x`` as a Python scalar of its kind (NumPy's ``item()``)."""
    if x.size != 1:
        raise ValueError(f"item: can only convert an array of size 1 to a Python scalar, got shape {x.shape}")
    element = x[(0,) * x.ndim]
    convert = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[x.dtype.kind]
    return convert(element)


for _method, _definition in _NUMPY_METHODS.items():
    setattr(Array, _method, _numpy_method(_method, _definition))

#: See ``_sole_references``.
_SOLE_REFERENCES = _sole_references()

#: ``Array``'s scalar reads as Python defines them; with the C module, its base's number
#: slots read computed host values first and call these for the rest.
SCALAR_READS_IN_PYTHON = {name: vars(Array)[name] for name in ("__float__", "__int__", "__bool__", "__index__")}

if GRAPH_IN_C is not None:
    GRAPH_IN_C.configure_elements(Array, Array._getitem, Array._setitem, HOST, np.array, np.ndarray, EXACT_SCALARS,
                                  scalars.evaluate, _STORES, views.Family)
    if transfer.FLAGS_OFFSET is not None:  # windows of read-only host buffers made views in C (``node.shared_window``)
        GRAPH_IN_C.configure_windows(transfer.FLAGS_OFFSET, transfer.WRITEABLE_FLAG)
    # ``float(x)``, ``int(x)``, ``bool(x)``, ``operator.index(x)`` of a computed 0-d host
    # array in C (``_graph.ArrayHandle``'s number slots), these methods their definitions:
    # taken off ``Array`` so that its type's slots are its base's
    GRAPH_IN_C.configure_scalar_reads(*SCALAR_READS_IN_PYTHON.values())
    for _name in SCALAR_READS_IN_PYTHON:
        delattr(Array, _name)

from . import exports  # noqa: E402  (it builds on Array)
