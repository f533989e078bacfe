"""A GPU's transfers (XLA's TransferManager, ``backend/transfer.py``): its buffers are
:class:`~.runtime.DeviceArray` objects in its memory, made from host arrays by copies,
read back by copies (``np.asarray`` of a GPU array copies, as CuPy's ``get`` does), and
moved to another device through the host. An element read (``a[i, j]`` of a computed
array) is a copy on the device; an element write runs a graph there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...dtypes import ALL, unsupported_dtype
from ..transfer import TransferManager, in_range
from .runtime import DeviceArray, GpuRuntime

if TYPE_CHECKING:
    from ..devices import Device


class GpuTransfers(TransferManager):
    """The transfers of the GPU ``runtime`` runs on."""

    def __init__(self, runtime: GpuRuntime) -> None:
        self.runtime = runtime

    def from_host(self, value: np.ndarray, where: str) -> DeviceArray:
        native = value.dtype.newbyteorder("=")  # a big-endian input is its value in the device's order
        if native not in ALL:
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
        offset = 0
        for i, n in zip(key, buffer.shape):
            offset = offset * n + (i + n if i < 0 else i)
        element = self.runtime.empty((), buffer.dtype)
        self.runtime.copy(element.address, buffer.address + offset * buffer.dtype.itemsize, buffer.dtype.itemsize)
        return element

    def store_element(self, buffer: DeviceArray, key: object, value: object) -> bool:
        return False
