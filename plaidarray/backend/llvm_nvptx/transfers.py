"""A GPU's transfers (XLA's TransferManager, ``backend/transfer.py``): its buffers are
:class:`~.runtime.DeviceArray` objects in its memory, made from host arrays by copies,
read back by copies (``np.asarray`` of a GPU array copies, as CuPy's ``get`` does), and
moved to another device through the host. No element is read or written in place: an
indexed read or write runs a graph on the device."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...dtypes import ALL, unsupported_dtype
from ..transfer import TransferManager
from .runtime import DeviceArray, GpuRuntime

if TYPE_CHECKING:
    from ..devices import Device


class GpuTransfers(TransferManager):
    """The transfers of the GPU ``runtime`` runs on."""

    def __init__(self, runtime: GpuRuntime) -> None:
        self.runtime = runtime

    def from_host(self, value: np.ndarray, where: str) -> DeviceArray:
        if value.dtype not in ALL:
            raise unsupported_dtype(value.dtype, where)
        return self.runtime.from_host(np.asarray(value, order="C"))

    def snapshot(self, value: np.ndarray, where: str) -> DeviceArray:
        return self.from_host(value, where)  # a copy already

    def to_host(self, buffer: DeviceArray) -> np.ndarray:
        out = self.runtime.to_host(buffer)
        out.flags.writeable = False
        return out

    def copy_to(self, buffer: DeviceArray, device: Device) -> Any:
        return device.transfers.from_host(self.runtime.to_host(buffer), "to_device")

    def load_element(self, buffer: DeviceArray, key: tuple) -> Any | None:
        return None

    def store_element(self, buffer: DeviceArray, key: object, value: object) -> bool:
        return False
