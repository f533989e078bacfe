"""A GPU's runtime as llvm-nvptx's executables use it: device memory, loading a module's
code and launching its kernels. Two implement it: the CUDA driver's on an NVIDIA GPU, and
the simulated device (``simulated.py``) that runs the same PTX on the host, lanes in
lockstep, so that CI without a GPU runs every kernel the GPU tier generates.

Addresses are device addresses (integers); what a host array becomes on the device is a
:class:`DeviceArray`, opaque above the backend."""

from __future__ import annotations

import abc
import functools
import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ...cached_property import cached_property

#: The host scalars' device copies a runtime keeps (``GpuRuntime.scalar``).
_SCALARS_KEPT = 256


class DeviceArray:
    """``shape`` elements of ``dtype`` in row-major order at ``address`` of ``runtime``'s
    memory, which it owns: freed when it is collected (a buffer of a node, of an
    executable's run), or, for memory another library lends (``release``: DLPack's
    deleter), handed back to its owner. By ``__del__`` rather than ``weakref.finalize``,
    which cost ~0.8 us an array more (every run of a GPU executable makes its outputs);
    at the interpreter's exit nothing is handed back (another library's deleter may be
    gone by then, and the process's device memory goes with it)."""

    __slots__ = ("runtime", "address", "shape", "dtype", "_release", "__weakref__")

    def __init__(self, runtime: GpuRuntime, address: int, shape: tuple[int, ...], dtype: np.dtype,
                 release: Callable[[], None] | None = None) -> None:
        self.runtime, self.address, self.shape, self.dtype = runtime, address, tuple(shape), np.dtype(dtype)
        self._release = release

    def __del__(self, _finalizing: Callable[[], bool] = sys.is_finalizing) -> None:
        if _finalizing():  # bound at definition: the module's globals may be gone at the exit
            return
        release = self._release
        if release is None:
            self.runtime.free(self.address)
        else:
            release()

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"DeviceArray({self.runtime.name}, {self.shape}, {self.dtype})"


class GpuRuntime(abc.ABC):
    """Device memory, modules and launches of one GPU (or of the simulated one)."""

    #: What the runtime is, in messages ("cuda:0", "simulated").
    name: str = ""
    #: The architecture its code is generated for (``targets.ARCHITECTURES``).
    architecture: str = "sm_80"
    #: Threads per block of a launch, and the most blocks one launch asks for (a kernel's
    #: grid-stride loop covers any range with them).
    block_threads: int = 256
    max_blocks: int = 65535
    #: The ``DLDevice`` its memory is to other libraries (``backend/dlpack.py``); None
    #: where they cannot reach it (the simulated device's is the host's, at its own
    #: addresses), whose arrays DLPack carries through the host.
    dlpack_device: tuple[int, int] | None = None
    #: The stream its work goes on, as DLPack's ``stream`` argument names it (0: none).
    stream_handle: int = 0

    @abc.abstractmethod
    def allocate(self, nbytes: int) -> int:
        """The address of ``nbytes`` of new device memory (a MemoryError naming the
        request if there is not so much)."""

    @abc.abstractmethod
    def free(self, address: int) -> None: ...

    @abc.abstractmethod
    def write(self, address: int, data: np.ndarray) -> None:
        """Copy ``data``'s bytes (C order) to ``address``."""

    @abc.abstractmethod
    def read(self, address: int, nbytes: int) -> bytes: ...

    @abc.abstractmethod
    def load(self, ptx: str) -> Any:
        """A module of ``ptx``'s code, ready to launch its kernels."""

    @abc.abstractmethod
    def launch(self, module: Any, kernel: str, grid: int, block: int, args: list[int]) -> None:
        """Run ``kernel`` of ``module`` on ``grid`` blocks of ``block`` threads, its
        arguments 64-bit words (addresses and sizes)."""

    def prepare(self, module: Any, kernel: str, grid: int, block: int, args: list[int]) -> Callable[[], None]:
        """The launch as a call to make later, as often as wanted (a runtime builds what it
        can of it here, once)."""
        return functools.partial(self.launch, module, kernel, grid, block, list(args))

    def launch_shape(self, extent: int) -> tuple[int, int]:
        """Blocks and threads for a loop of ``extent`` iterations, a thread each (or, past
        ``max_blocks`` blocks, several)."""
        block = min(self.block_threads, max(extent, 1))
        return min(-(-max(extent, 1) // block), self.max_blocks), block

    @abc.abstractmethod
    def synchronize(self) -> None:
        """Wait for the work queued on this runtime."""

    def synchronize_device(self) -> None:
        """Wait for all work on the device, other libraries' streams too (before memory
        lent to them is reused)."""
        self.synchronize()

    def available_bytes(self) -> int | None:
        """Device memory free for new buffers now; None where it is not known."""
        return None

    #: Whether ``gemm`` is there (cuBLAS found; ``matrix_products.py``).
    has_blas: bool = False

    def gemm(self, dtype: np.dtype, trans_a: str, trans_b: str, m: int, n: int, k: int,
             a: int, lda: int, stride_a: int, b: int, ldb: int, stride_b: int,
             c: int, ldc: int, stride_c: int, batch: int) -> None:
        """``C = op(A) op(B)`` for each of ``batch`` column-major matrices at device addresses
        ``a``, ``b``, ``c`` (leading dimensions, and strides in elements), as cuBLAS's
        ``?gemmStridedBatched`` with alpha 1 and beta 0, after the launches before it."""
        raise NotImplementedError(f"{self.name} has no BLAS")

    def copy(self, target: int, source: int, nbytes: int) -> None:
        """Copy ``nbytes`` from ``source`` to ``target`` on the device, after the launches
        before it (through the host unless the runtime copies on the device)."""
        self.write(target, np.frombuffer(self.read(source, nbytes), np.uint8))

    @cached_property
    def _scalars(self) -> dict[tuple[str, bytes], DeviceArray]:
        return {}

    def scalar(self, value: np.ndarray) -> DeviceArray:
        """A device copy of the host scalar ``value`` (a Python scalar's value, which a graph
        takes as a parameter so that ``x + 1.0`` and ``x + 2.0`` share code), kept by value
        (``_SCALARS_KEPT``, the least recently used given up): a loop's ``x + 1.0`` copies its
        1.0 to the device once rather than at every run (a host-to-device copy, ~10 us). Only
        the runs of executables that update no parameter in place take it (``GpuExecutable.run``).
        """
        key = (value.dtype.str, value.tobytes())
        kept = self._scalars
        found = kept.pop(key, None)
        if found is None:
            found = self.from_host(value)
            if len(kept) >= _SCALARS_KEPT:
                kept.pop(next(iter(kept)), None)
        kept[key] = found
        return found

    def from_host(self, array: np.ndarray) -> DeviceArray:
        data = np.asarray(array, order="C")
        found = self.empty(data.shape, data.dtype)
        if data.nbytes:
            self.write(found.address, data)
        return found

    def to_host(self, array: DeviceArray) -> np.ndarray:
        data = self.read(array.address, array.nbytes) if array.nbytes else b""
        return np.frombuffer(bytearray(data), array.dtype).reshape(array.shape)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> DeviceArray:
        """New device memory for ``shape`` elements of ``dtype``: a MemoryError naming the
        buffer where there is not so much."""
        nbytes = math.prod(shape) * dtype.itemsize
        try:
            address = self.allocate(max(nbytes, 1))
        except MemoryError as exc:
            raise MemoryError(f"cannot allocate a {dtype} buffer of shape {tuple(shape)} on {self.name}: {exc}") from None
        return DeviceArray(self, address, tuple(shape), dtype)
