"""Transfers (XLA's TransferManager): each platform's buffers in and out of host memory,
between its devices, and their allocation. A device carries its platform's
:class:`TransferManager` (``devices.Device.transfers``); api/ and trace/ reach buffers
through it alone, so a buffer is whatever its platform makes it (``Node.buffer`` is
opaque above the backend), and a value of no device (a Python scalar, a NumPy operand,
an index) is host memory (:data:`HOST`).

The host's platform, ``cpu`` (both host backends, llvm-cpu and the reference, compute
on it), keeps NumPy memory as its buffers (:class:`HostTransfers`): C-contiguous,
aligned NumPy arrays that compiled code reads through raw pointers. A NumPy array that
already has that layout is used as it is (zero copy); anything else (strided, negative
strides, unaligned, non-native byte order) is copied once. Buffers are never written
after they are produced (but in place by the update that owns them), so sharing is safe.

A caller's memory is another matter: an array's value is fixed when it is made, while
the graphs reading it run later (at a read, or when the pending bound is reached), so
memory that the caller can still write is copied when it comes in (``snapshot``), and
what a graph computes never depends on when it runs, as if each operation ran when it
was recorded (NumPy's and JAX's semantics). Memory nothing can write (``frozen``) is
shared. (Memory the caller asks to share, ``from_dlpack`` and ``asarray(copy=False)``, is
not a buffer: the trace layer pins an array on it, ``trace/exports.py``.)
"""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..dtypes import SUPPORTED, unsupported_dtype
from .buffer_pool import MIN_POOLED_BYTES, MIN_POOLED_TEMP_BYTES, POOL

if TYPE_CHECKING:
    from .devices import Device


def frozen(value: np.ndarray) -> bool:
    """Whether no NumPy array can write ``value``'s memory: it and every array it views
    are read-only, down to an array owning its memory or an immutable ``bytes``. (The
    owner of a read-only array could make it writable again; a read-only array given to
    plaidarray is taken as the promise that it stays so.)"""
    base: object = value
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        if base.base is None:
            return True
        base = base.base
    return isinstance(base, bytes)


def in_range(index: tuple, shape: tuple[int, ...]) -> bool:
    """Whether ``index`` is Python ints in range of ``shape``'s leading dimensions (negative
    ones from the end): what an element transfer (``load_element``, ``store_element``) takes.
    A loop, not ``all`` of a generator, which was two thirds of a loop's element read."""
    if len(index) > len(shape):
        return False
    for i, n in zip(index, shape):
        if type(i) is not int or not -n <= i < n:
            return False
    return True


def block_shape(index: tuple, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape of the block of an array of ``shape`` that ``index`` picks by basic
    indexing, an entry per leading dimension: Python ints in range, slices of int or None
    bounds and step (not 0): ``x[1:]``, ``m[i, 2:5]``, ``m[:, j]``, ``x[::2]``; None for an
    index of other entries."""
    if len(index) > len(shape):
        return None
    dims = []
    for i, n in zip(index, shape):
        if type(i) is int:
            if not -n <= i < n:
                return None
        elif type(i) is slice and type(i.start) in _BOUNDS and type(i.stop) in _BOUNDS and type(i.step) in _BOUNDS \
                and i.step != 0:
            dims.append(len(range(*i.indices(n))))
        else:
            return None
    return (*dims, *shape[len(index):])


_BOUNDS = (int, type(None))


def storable(buffer: Any, index: tuple, value: object) -> bool:
    """Whether ``HostTransfers.store_element`` stores ``value`` at ``index`` of ``buffer``
    (its rules; of any buffer with a ``shape`` and a ``dtype``, a GPU's too)."""
    block = block_shape(index, buffer.shape)
    if block is None:
        return False
    if type(value) is np.ndarray:
        return value.dtype == buffer.dtype and (not value.shape or value.shape == block)
    rule = EXACT_SCALARS.get(buffer.dtype, _NONE).get(type(value))
    return rule is not None and _exact(rule, value)


_NONE: dict = {}


def _data_pointer_offset() -> int | None:
    """Where CPython + NumPy keep an array's data pointer inside the array object
    (``PyArrayObject_fields.data``, right after the object header), checked on sample
    arrays; None if this interpreter lays objects out otherwise."""
    samples = [np.empty(n, np.uint8) for n in (1, 3, 1000)]
    for offset in (16, 24, 32):
        if all(ctypes.c_void_p.from_address(id(a) + offset).value == a.ctypes.data for a in samples):
            return offset
    return None


_OFFSET = _data_pointer_offset()


def _flags_offset() -> int | None:
    """Where CPython + NumPy keep an array's flags word inside the array object
    (``PyArrayObject_fields.flags``), checked on sample arrays of every combination of
    the bits it is read for (writeable, contiguous); None if found nowhere."""
    base = np.arange(12.0).reshape(3, 4)
    frozen_base = base.copy()
    frozen_base.flags.writeable = False
    samples = [base, base[:, ::2], frozen_base, frozen_base[1:], frozen_base[:, 1:], np.empty(0)]
    for offset in range(16, 96, 4):
        if all(bool(ctypes.c_int.from_address(id(a) + offset).value & WRITEABLE_FLAG) == a.flags.writeable and
               bool(ctypes.c_int.from_address(id(a) + offset).value & 1) == a.flags.c_contiguous for a in samples):
            return offset
    return None


#: NumPy's flag bit of a writeable array (``NPY_ARRAY_WRITEABLE``).
WRITEABLE_FLAG = 0x0400

#: Where C code finds an array's flags word (``_graph``'s windows of read-only buffers,
#: ``HostTransfers.shared_window``); None where this interpreter lays objects out otherwise.
FLAGS_OFFSET = _flags_offset()

#: Where compiled code finds a buffer's data pointer inside the array object (its ``data``
#: field; the C entry gets each buffer's object, ``_entry.c``); None where this
#: interpreter lays objects out otherwise (the data pointer is then read in Python).
DATA_POINTER_OFFSET = _OFFSET


def _single(value: float) -> bool:
    """Whether single precision holds the float ``value`` exactly (NaN: left to the update).
    A finite value past its range is not held, and is not cast here (NumPy would warn)."""
    if not abs(value) <= _SINGLE_MAX:
        return abs(value) == math.inf
    return float(np.float32(value)) == value


_SINGLE_MAX = float(np.finfo(np.float32).max)

#: A rule of ``EXACT_SCALARS``: a float single precision must hold (both parts of a complex).
SINGLE = "single"


def _int_range(t: type) -> tuple[int, int]:
    info = np.iinfo(t)
    return int(info.min), int(info.max)


#: The Python scalars each dtype's element takes exactly, by type, with the rule a value
#: meets: True (any), an int's (least, greatest) (the integer dtype's range, or 53 (24)
#: bits into a double (single) float), or ``SINGLE``. Any other value is stored by the
#: update (``api.indexing``), whose rules then apply: its rounding, its errors (an int out
#: of an integer dtype's range, a float into one). A loop's ``D[i, j] = min(...)`` into an
#: int32 table was an update's recording and run, ~30 us. Data, not code: the C module's
#: element stores read the same table (``_graph.configure_elements``).
EXACT_SCALARS: dict[np.dtype, dict[type, bool | tuple[int, int] | str]] = {
    np.dtype(np.bool_): {bool: True},
    **{np.dtype(t): {int: _int_range(t)} for t in (
        np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)},
    np.dtype(np.float64): {float: True, int: (-(1 << 53), 1 << 53)},
    np.dtype(np.complex128): {complex: True, float: True, int: (-(1 << 53), 1 << 53)},
    np.dtype(np.float32): {float: SINGLE, int: (-(1 << 24), 1 << 24)},
    np.dtype(np.complex64): {complex: SINGLE, float: SINGLE, int: (-(1 << 24), 1 << 24)}}


def _exact(rule: bool | tuple[int, int] | str, value: Any) -> bool:
    """Whether ``value`` meets an ``EXACT_SCALARS`` rule."""
    if rule is True:
        return True
    if rule == SINGLE:
        return _single(value.real) and _single(value.imag) if type(value) is complex else _single(value)
    low, high = cast("tuple[int, int]", rule)
    return low <= value <= high


class TransferManager:
    """A platform's transfers (XLA's TransferManager): what api/ and trace/ do with its
    buffers, which they hold and never look into. ``where`` names the function asking,
    for errors."""

    def from_host(self, value: np.ndarray, where: str) -> Any:
        """A buffer holding the host array ``value``."""
        raise NotImplementedError

    def snapshot(self, value: np.ndarray, where: str) -> Any:
        """``from_host`` for memory of a caller's: a buffer that no later write to
        ``value`` changes."""
        raise NotImplementedError

    def to_host(self, buffer: Any) -> np.ndarray:
        """The buffer's elements as a read-only NumPy array."""
        raise NotImplementedError

    def item(self, buffer: Any) -> Any:
        """The one element of a 0-d buffer as a Python scalar (``float(x)``, ``bool(x)``)."""
        return self.to_host(buffer).item()

    def copy_to(self, buffer: Any, device: Device) -> Any:
        """A buffer on ``device`` holding ``buffer``'s elements, of its own."""
        raise NotImplementedError

    def load_element(self, buffer: Any, key: tuple) -> Any | None:
        """Element ``key`` (an int per dimension) of ``buffer`` as a 0-d buffer of its
        own, where the platform reads one without running code; else None."""
        return None

    def dlpack_device(self) -> tuple[int, int] | None:
        """The ``DLDevice`` other libraries reach this platform's buffers at, for
        ``__dlpack__`` and ``from_dlpack`` without copies (``to_dlpack``,
        ``from_dlpack``); None where DLPack carries them through the host's memory (the
        host's own, NumPy's protocol)."""
        return None

    def to_dlpack(self, buffer: Any, stream: Any, versioned: bool, copy: bool) -> Any:
        """A DLPack capsule lending ``buffer`` (a copy of it if ``copy``), ready for use on
        the consumer's ``stream``."""
        raise NotImplementedError

    def from_dlpack(self, x: Any, copy: bool | None, where: str) -> Any:
        """A buffer of ``x``'s memory (on this platform's ``dlpack_device``), shared unless
        ``copy``; a BufferError where it cannot be shared and ``copy`` is False."""
        raise NotImplementedError

    def store_element(self, buffer: Any, key: object, value: object) -> bool:
        """Write the Python scalar ``value`` into element ``key`` of ``buffer`` in place,
        where the platform does so without running code; else write nothing, False."""
        return False

    def stored_copy(self, buffer: Any, key: object, value: object) -> Any | None:
        """A copy of ``buffer`` with ``store_element``'s store made into it, where the
        platform makes one without running code; else None."""
        return None

    def shared_window(self, buffer: Any, starts: tuple[Any, ...], counts: tuple[int, ...]) -> Any | None:
        """A buffer of the elements a ``dynamic_slice`` of ``counts`` at ``starts`` (0-d
        integer buffers of this platform's) picks from ``buffer`` (one no update owns),
        sharing its memory, where the platform makes one without running code; else None
        (the window is recorded, and copied by a kernel when it is read)."""
        return None

    def window_copy(self, buffer: Any, offset: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any | None:
        """A buffer of its own holding the elements of ``buffer`` that a view of ``shape``
        picks from ``offset`` by ``strides`` (in elements, negative for reversed axes, of
        ``buffer`` read in row-major order), where the platform copies them without running
        code; else None."""
        return None

    def picked_copy(self, buffer: Any, shape: tuple[int, ...], keys: list[Any], dims: tuple[int, ...]) -> Any | None:
        """A buffer of its own holding the elements of ``buffer`` (an array of ``shape``)
        that NumPy's basic indexing by each of ``keys`` in turn picks, which are of
        ``dims``, where the platform copies them without running code; else None
        (``window_copy`` then)."""
        return None

    def joined(self, parts: list[tuple[Any, tuple[int, ...]]], axis: int) -> Any | None:
        """A buffer of its own holding the buffers of ``parts`` (each with the dims it is
        read at: a reshape's, row-major) one after another along ``axis``, where the
        platform copies them without running code; else None (the concatenation is
        recorded, and a kernel copies them when it is read)."""
        return None


class HostTransfers(TransferManager):
    """The host's memory as buffers: NumPy arrays, shared where their layout allows."""

    def from_host(self, value: np.ndarray, where: str) -> np.ndarray:
        """A buffer holding ``value``: the same memory when its layout allows it. ``where``
        names the function asking, for the error on an unsupported dtype."""
        dtype = value.dtype
        native = dtype if dtype.isnative else dtype.newbyteorder("=")
        if native not in SUPPORTED:
            raise unsupported_dtype(dtype, where)
        flags = value.flags
        if flags.c_contiguous and flags.aligned and native is dtype:
            return value
        return np.asarray(value, dtype=native, order="C")  # ascontiguousarray makes 0-d 1-d

    def snapshot(self, value: np.ndarray, where: str) -> np.ndarray:
        """``from_host`` for memory of a caller's: a buffer holding ``value`` as it is now,
        which no later write to ``value`` changes (a copy, unless ``value`` is ``frozen``)."""
        buffer = self.from_host(value, where)
        if buffer is value:
            if frozen(value):
                return buffer
            buffer = value.copy()
        buffer.setflags(write=False)  # ours, and never written: its windows share it (``shared_window``)
        return buffer

    def to_host(self, buffer: np.ndarray) -> np.ndarray:
        """A read-only NumPy view of a buffer (no copy): our buffers are immutable. (Every
        read makes one: ``setflags`` is ~0.3 us cheaper than setting ``flags.writeable``,
        which first makes a flags object.)"""
        view = buffer.view()
        view.setflags(write=False)
        return view

    def item(self, buffer: np.ndarray) -> Any:
        """Read from the buffer itself: a loop's ``float(loss)`` makes no read-only view
        (0.5 us of a cached read's 8)."""
        return buffer.item()

    def copy_to(self, buffer: np.ndarray, device: Device) -> np.ndarray:
        """A buffer on ``device`` holding ``buffer``'s elements: on the host's devices, which
        are one memory, a copy of its own (so no write through one device's array reaches
        another's)."""
        if device.platform != "cpu":
            raise ValueError(f"no transfer from the host to {device}")
        return buffer.copy()

    def load_element(self, buffer: np.ndarray, key: tuple) -> np.ndarray | None:
        """Element ``key`` (an int per dimension, in range, negative ones from the end) of
        ``buffer`` as a 0-d buffer of its own; else None. The CPU's transfer of one value out
        of device memory: a loop's ``float(a[i, j])`` on a computed array costs a load, not an
        executable's run (10-13 us a read)."""
        if len(key) != buffer.ndim or not in_range(key, buffer.shape):
            return None
        return np.array(buffer[key])

    def store_element(self, buffer: np.ndarray, key: object, value: object) -> bool:
        """Write the Python scalar ``value`` into element ``key`` (an int per dimension,
        in range) of ``buffer`` in place, or into every element of the block it picks
        (ints and slices for the leading dimensions: a row, a plane, a column,
        ``x[1:]``, ``m[i, 2:5]``, ``block_shape``), where its dtype takes
        the value exactly; or a buffer ``value`` of ``buffer``'s dtype, 0-d or of the
        block's shape; else write nothing and return False. The CPU's transfer of values into
        device memory: a loop's ``a[i] = v`` or ``m[i] = 0.0`` on an array nobody else
        sees (``Array.__setitem__``) costs a store, not an executable's run (14-19 us a
        store)."""
        index = key if type(key) is tuple else (key,)
        if not storable(buffer, index, value):
            return False
        buffer[index] = value
        return True

    def stored_copy(self, buffer: np.ndarray, key: object, value: object) -> np.ndarray | None:
        """A copy of ``buffer`` with ``value`` stored into it as ``store_element`` stores
        it, or None where that would store nothing: a store into an array whose memory
        others see (a pending reader, another array of its value) costs a copy, as the
        update's run would, not the update's recording and run (~40 us)."""
        index = key if type(key) is tuple else (key,)
        if not storable(buffer, index, value):
            return None
        copy = buffer.copy()
        copy[index] = value
        return copy

    def shared_window(self, buffer: np.ndarray, starts: tuple[np.ndarray, ...],
                      counts: tuple[int, ...]) -> np.ndarray | None:
        """A NumPy view of the window where it is contiguous and ``buffer`` is read-only (a
        caller's input, snapshot or frozen: no update writes it in place, which only an
        executable's own memory takes), as NumPy's ``x[i:j]`` is a view: a window read in
        a loop (``float(max(x[:n]))``) is then a parameter of its graph, where its copy by a
        ``dynamic_slice`` kernel cost as much as the reduction over it (the read 60 against
        24 us at 1e5 float64 elements). The starts are clamped into range as
        ``dynamic_slice`` clamps them. The view holds ``buffer``'s memory alive, as a NumPy
        view does."""
        if buffer.flags.writeable:
            return None
        dims = buffer.shape
        first = 0  # the window is contiguous where its axes past its first one of a count other than 1 are whole
        while first < len(counts) and counts[first] == 1:
            first += 1
        if counts[first + 1:] != dims[first + 1:]:
            return None
        return buffer[tuple([slice(s, s + c) for s, c in
                             zip([min(max(int(s), 0), n - c) for s, n, c in zip(starts, dims, counts)], counts)])]

    def window_copy(self, buffer: np.ndarray, offset: int, shape: tuple[int, ...],
                    strides: tuple[int, ...]) -> np.ndarray:
        """The picked elements, copied in row-major order: a row or a window of a computed
        array read alone (``m[i] = m[j]``) costs a copy, not a slice's graph run (~10 us)."""
        if not math.prod(shape):
            return np.empty(shape, buffer.dtype)
        size = buffer.itemsize
        flat = buffer.reshape(-1)  # a view: buffers are contiguous
        picked = np.ndarray(shape, buffer.dtype, flat, offset * size, tuple(s * size for s in strides))
        return picked.copy()

    def picked_copy(self, buffer: np.ndarray, shape: tuple[int, ...], keys: list[Any],
                    dims: tuple[int, ...]) -> np.ndarray | None:
        """The picked elements, copied in row-major order: a row of a computed matrix read
        alone (``asarray(m[i], copy=True)``) without working out its layout (None where
        the buffer is not laid out as an array of ``shape``)."""
        if buffer.shape != shape:
            return None
        picked = buffer
        for key in keys:
            picked = picked[key]
        return np.array(picked) if picked.shape == dims else None

    def joined(self, parts: list[tuple[np.ndarray, tuple[int, ...]]], axis: int) -> np.ndarray:
        """The parts copied one after another: a loop's running mean of its last 20 losses
        (a stack of 20 scalars) costs a copy, not 24 ops recorded and a graph's read."""
        return np.concatenate([buffer if buffer.shape == dims else buffer.reshape(dims) for buffer, dims in parts],
                              axis=axis)

    def address(self, buffer: np.ndarray) -> int:
        """The address of a buffer's first element, for compiled code. Reading it from the
        array object takes a fifth of the time of ``buffer.ctypes.data``, which is felt on
        small arrays."""
        if _OFFSET is None:
            return buffer.ctypes.data
        return ctypes.c_void_p.from_address(id(buffer) + _OFFSET).value or 0

    def allocator(self, dims: tuple[int, ...], dtype: np.dtype, temporary: bool = False) -> Callable[[], np.ndarray]:
        """How an executable makes a result or (``temporary``) temporary buffer at every
        run, decided once: large ones come from the pool of already mapped memory
        (``buffer_pool.py``, which raises MemoryError, not a crash, when one cannot
        exist), those too small for it straight from ``np.empty``, which saves a tenth of a
        cached call on tiny arrays."""
        least = MIN_POOLED_TEMP_BYTES if temporary else MIN_POOLED_BYTES
        if math.prod(dims) * dtype.itemsize < least:
            return functools.partial(np.empty, dims, dtype)
        return functools.partial(POOL.empty, dims, dtype, least)

    def empty(self, dims: tuple[int, ...], dtype: np.dtype, temporary: bool = False) -> np.ndarray:
        """A result or (``temporary``) temporary buffer, made as ``allocator``'s are: for
        an executable that makes its buffers' allocators at no run (``_Runner``)."""
        least = MIN_POOLED_TEMP_BYTES if temporary else MIN_POOLED_BYTES
        if math.prod(dims) * dtype.itemsize < least:
            return np.empty(dims, dtype)
        return POOL.empty(dims, dtype, least)


#: The host's transfers: those of its CPU devices, and of values of no device.
HOST = HostTransfers()
