"""DLPack's C interface (dlpack.h, versions 0.8 and 1.x) through ctypes: a device buffer
exported as a capsule another library takes without a copy, and a capsule another library
made read back as a device pointer, shape and dtype.

The host's arrays need none of this (NumPy's own ``__dlpack__`` and ``from_dlpack`` carry
them, ``trace/exports.py``); a device whose memory NumPy cannot reach (a GPU) exports and
imports through here. An export keeps what it lends alive until the consumer calls the
capsule's deleter, or until the capsule itself goes unconsumed."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

#: ``DLDeviceType`` values.
CPU, CUDA = 1, 2
#: ``DLDataTypeCode`` values, by NumPy's dtype kind.
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_KINDS = {code: kind for kind, code in _CODES.items()}
#: ``DLPACK_FLAG_BITMASK_READ_ONLY``: the consumer must not write the memory.
_READ_ONLY = 1
#: The version this module writes when the consumer takes versioned capsules.
VERSION = (1, 0)


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _ManagedVersioned(ctypes.Structure):
    _fields_ = [("version", _Version), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", _Tensor)]


_NAMES = {False: (b"dltensor", b"used_dltensor"), True: (b"dltensor_versioned", b"used_dltensor_versioned")}
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))  # of a capsule being destroyed, which a py_object would revive

#: What each export lends, by its structure's address: the structure, its shape, the
#: owner of the memory (a device buffer) and what to run before letting it go, until the
#: deleter runs.
_LENT: dict[int, tuple[Any, ...]] = {}
_LENT_LOCK = threading.Lock()


def _delete(pointer: int | None) -> None:
    """The deleter of every export's structure: ``release`` runs, then the lent objects go
    (and with the last reference, the buffer)."""
    with _LENT_LOCK:
        held = _LENT.pop(pointer or 0, None)
    if held is not None:
        held[-1]()


_DELETER = _Deleter(_delete)


def _destruct(capsule: int) -> None:
    """A capsule's destructor: an export no consumer took is deleted with its capsule."""
    for versioned in (False, True):
        name = _NAMES[versioned][0]
        if _api.PyCapsule_IsValid(capsule, name):
            _delete(_capsule_pointer(capsule, name))


_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_destruct)


def export(address: int, shape: tuple[int, ...], dtype: np.dtype, device: tuple[int, int], owner: Any,
           release: Callable[[], None], versioned: bool) -> Any:
    """A capsule lending ``shape`` elements of ``dtype`` at ``address`` (row-major) on
    ``device`` (a ``DLDevice`` pair), read-only; ``owner`` is kept alive until the
    consumer is done, when ``release`` runs first."""
    kind = _ManagedVersioned if versioned else _Managed
    managed = kind()
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    tensor = managed.dl_tensor
    tensor.data, tensor.device = address, _Device(*device)
    tensor.ndim, tensor.dtype = len(shape), _DataType(_CODES[dtype.kind], dtype.itemsize * 8, 1)
    tensor.shape, tensor.byte_offset = dims, 0
    managed.deleter = _DELETER
    if versioned:
        managed.version = _Version(*VERSION)
        managed.flags = _READ_ONLY
    with _LENT_LOCK:
        _LENT[ctypes.addressof(managed)] = (managed, dims, owner, release)
    return _api.PyCapsule_New(ctypes.addressof(managed), _NAMES[versioned][0], ctypes.cast(_DESTRUCTOR, ctypes.c_void_p))


class Imported(NamedTuple):
    """What a capsule of another library's lends: its memory's address (the byte offset
    added), shape, strides in elements (None: row-major), dtype and ``DLDevice``, and
    ``done``, to call once the memory is no longer used."""

    address: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    dtype: np.dtype
    device: tuple[int, int]
    done: Callable[[], None]


def take(capsule: Any, where: str) -> Imported:
    """Consume ``capsule`` (renamed "used_...", so its producer's destructor leaves it to
    us): a BufferError for a capsule of neither name or a dtype NumPy has no match for."""
    for versioned in (True, False):
        name, used = _NAMES[versioned]
        if _api.PyCapsule_IsValid(id(capsule), name):
            break
    else:
        raise BufferError(f"{where}: expected a DLPack capsule, got {capsule!r}")
    pointer = _api.PyCapsule_GetPointer(capsule, name)
    managed = (_ManagedVersioned if versioned else _Managed).from_address(pointer)
    tensor = managed.dl_tensor
    kind = _KINDS.get(tensor.dtype.code)
    if kind is None or tensor.dtype.lanes != 1 or tensor.dtype.bits % 8:
        raise BufferError(f"{where}: DLPack dtype (code {tensor.dtype.code}, {tensor.dtype.bits} bits, "
                          f"{tensor.dtype.lanes} lanes) has no NumPy dtype")
    dtype = np.dtype(f"{kind}{tensor.dtype.bits // 8}") if kind != "b" else np.dtype(np.bool_)
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    strides = tuple(tensor.strides[i] for i in range(tensor.ndim)) if tensor.strides else None
    deleter = managed.deleter
    _api.PyCapsule_SetName(capsule, used)

    def done() -> None:
        if deleter:
            deleter(pointer)

    return Imported((tensor.data or 0) + tensor.byte_offset, shape, strides, dtype,
                    (tensor.device.device_type, tensor.device.device_id), done)
