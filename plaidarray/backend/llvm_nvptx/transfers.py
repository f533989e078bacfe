"""A GPU's transfers (XLA's TransferManager, ``backend/transfer.py``): its buffers are
:class:`~.runtime.DeviceArray` objects in its memory, made from host arrays by copies,
read back by copies (``np.asarray`` of a GPU array copies, as CuPy's ``get`` does), and
moved to another device through the host. An element read (``a[i, j]`` of a computed
array) is a copy on the device; an element write of a Python scalar is a copy to the
device, other writes run a graph there.

DLPack lends a GPU buffer to PyTorch, CuPy or JAX, and takes theirs, without a copy
(``backend/dlpack.py``), with the standard's stream rule: the producer's work is done
before the consumer's stream uses the memory. Here that is a wait for this runtime's
stream when lending; when taking, the producer is given this runtime's stream, and orders
its own work before it. A lent buffer is read-only to its consumer (DLPack 1's flag), as
plaidarray's buffers are values; a taken one is read, never written, by plaidarray, and
a graph recorded on it and run after the other library writes it sees the write (JAX's
arrays taken by DLPack behave alike)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...dtypes import SUPPORTED, unsupported_dtype
from .. import dlpack
from ..transfer import TransferManager, storable, in_range
from .runtime import DeviceArray, GpuRuntime

#: The log of host round trips (``trace/host_round_trip.py`` writes the graphs' own).
_ROUND_TRIPS = logging.getLogger("plaidarray.compiles.host_round_trips")

if TYPE_CHECKING:
    from ..devices import Device


class GpuTransfers(TransferManager):
    """The transfers of the GPU ``runtime`` runs on."""

    def __init__(self, runtime: GpuRuntime) -> None:
        self.runtime = runtime

    def from_host(self, value: np.ndarray, where: str) -> DeviceArray:
        native = value.dtype.newbyteorder("=")  # a big-endian input is its value in the device's order
        if native not in SUPPORTED:
            raise unsupported_dtype(value.dtype, where)
        return self.runtime.from_host(np.asarray(value, dtype=native, order="C"))  # 0-d stays 0-d

    def snapshot(self, value: np.ndarray, where: str) -> DeviceArray:
        return self.from_host(value, where)  # a copy already

    def to_host(self, buffer: DeviceArray) -> np.ndarray:
        out = self.runtime.to_host(buffer)
        out.flags.writeable = False
        return out

    def copy_to(self, buffer: DeviceArray, device: Device) -> Any:
        return device.transfers.from_host(self.runtime.to_host(buffer), "to_device")

    def load_element(self, buffer: DeviceArray, key: tuple) -> DeviceArray | None:
        """Element ``key`` (an int per dimension, in range, negative ones from the end) of
        ``buffer``, copied on the device into a 0-d buffer of its own (a copy ordered after
        the launches that write ``buffer``, no kernel); else None."""
        if len(key) != len(buffer.shape) or not in_range(key, buffer.shape):
            return None
        element = self.runtime.empty((), buffer.dtype)
        self.runtime.copy(element.address, _element_address(buffer, key), buffer.dtype.itemsize)
        return element

    def store_element(self, buffer: DeviceArray, key: object, value: object) -> bool:
        """A Python scalar the dtype takes exactly, written into one element (an int per
        dimension, in range) by a copy to the device, queued after the launches that read
        the buffer before: a loop's ``a[i] = v`` costs a small copy, not an update's run.
        Blocks (a row, ``x[1:]``) and array values run the update."""
        index = key if type(key) is tuple else (key,)
        if len(index) != len(buffer.shape) or not all(type(i) is int for i in index) or \
                not storable(buffer, index, value):
            return False
        self.runtime.write(_element_address(buffer, index), np.asarray(value, buffer.dtype))
        return True

    def dlpack_device(self) -> tuple[int, int] | None:
        return self.runtime.dlpack_device

    def to_dlpack(self, buffer: DeviceArray, stream: Any, versioned: bool, copy: bool) -> Any:
        runtime = self.runtime
        if runtime.dlpack_device is None:
            raise BufferError(f"{runtime.name}'s memory is not reachable by other libraries")
        if copy:
            buffer = self._copied(buffer.address, buffer.shape, buffer.dtype)
        if stream != -1:  # -1: the consumer asks for no synchronisation
            runtime.synchronize()
        return dlpack.export(buffer.address, buffer.shape, buffer.dtype, runtime.dlpack_device, buffer,
                             runtime.synchronize_device, versioned)

    def from_dlpack(self, x: Any, copy: bool | None, where: str) -> DeviceArray:
        runtime = self.runtime
        try:
            capsule = x.__dlpack__(stream=runtime.stream_handle, max_version=dlpack.VERSION)
        except TypeError:  # a producer of DLPack before 1.0, whose __dlpack__ takes no max_version
            capsule = x.__dlpack__(stream=runtime.stream_handle)
        got = dlpack.take(capsule, where)
        try:
            return self._taken(got, copy, where)
        except BaseException:
            got.done()
            raise

    def _taken(self, got: dlpack.Imported, copy: bool | None, where: str) -> DeviceArray:
        runtime = self.runtime
        if got.device != runtime.dlpack_device:
            raise BufferError(f"{where}: the input is on DLPack device {got.device}, not {runtime.name}'s")
        if got.dtype not in SUPPORTED:
            raise unsupported_dtype(got.dtype, where)
        rowmajor = [1] * len(got.shape)  # in elements, as DLPack's strides are
        for axis in range(len(got.shape) - 2, -1, -1):
            rowmajor[axis] = rowmajor[axis + 1] * got.shape[axis + 1]
        compact = got.strides is None or all(n == 1 or s == r for n, s, r in zip(got.shape, got.strides, rowmajor))
        if compact and not copy:
            return DeviceArray(runtime, got.address, got.shape, got.dtype, release=got.done)
        if not compact and copy is False:
            raise BufferError(f"{where}: a strided input (strides {got.strides}) needs a copy, but copy=False")
        if compact:
            own = self._copied(got.address, got.shape, got.dtype)
            runtime.synchronize()  # before the lender is told it is done
        else:  # the elements through the host, as NumPy lays out strides: a logged round trip
            strides = cast("tuple[int, ...]", got.strides)
            _ROUND_TRIPS.info("%s: a strided %s input of shape %s (strides %s) copied through the host",
                              where, got.dtype, got.shape, strides)
            if min(strides, default=0) < 0:
                raise BufferError(f"{where}: negative strides {strides} are not supported")
            size = got.dtype.itemsize
            span = (sum((n - 1) * s for n, s in zip(got.shape, strides)) + 1) * size if min(got.shape, default=1) else 0
            raw = np.frombuffer(runtime.read(got.address, span), got.dtype) if span else np.empty(0, got.dtype)
            own = runtime.from_host(np.lib.stride_tricks.as_strided(
                raw, got.shape, tuple(s * size for s in strides)) if span else np.empty(got.shape, got.dtype))
        got.done()
        return own

    def _copied(self, address: int, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        """A buffer of its own holding the row-major elements at ``address``, copied on the
        device after the work queued before."""
        own = self.runtime.empty(shape, dtype)
        if own.nbytes:
            self.runtime.copy(own.address, address, own.nbytes)
        return own


def _element_address(buffer: DeviceArray, key: tuple) -> int:
    """The device address of element ``key`` (an int per dimension, in range, negative
    ones from the end) of ``buffer``."""
    offset = 0
    for i, n in zip(key, buffer.shape):
        offset = offset * n + (i + n if i < 0 else i)
    return buffer.address + offset * buffer.dtype.itemsize
