"""An NVIDIA GPU's runtime through the CUDA driver API (``libcuda``), called with ctypes.

Why ctypes and not NVIDIA's ``cuda-bindings``: the executables need about fifteen driver
functions (memory, modules, launches, a stream), which ctypes reaches with no dependency
and no import cost, as tinygrad's CUDA device does; the driver library itself comes with
the GPU's driver, never from PyPI. Each device works in its primary context, the one
PyTorch, CuPy and JAX use, so device pointers are shared with them.

Launches go on one stream per device, in order, and return at once; a read (``read``,
which copies to the host) waits for them. Memory comes from the driver as asked, with no
preallocation; out of device memory is a MemoryError naming the request. Modules load a
cubin from ``ptxas`` where it is installed, else the PTX itself (the driver assembles it).
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

from . import ptxas, toolkit
from .runtime import GpuRuntime
from .targets import ARCHITECTURES

_OUT_OF_MEMORY = 2
#: ``CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`` and ``_MINOR``.
_MAJOR, _MINOR = 75, 76


class CudaError(RuntimeError):
    """A CUDA driver call failed: the message names the call and the driver's error."""


@functools.cache
def _driver() -> ctypes.CDLL:
    """libcuda, initialised; a CudaError if this machine has no NVIDIA driver."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as error:
        raise CudaError(f"llvm-nvptx: no CUDA driver on this machine (libcuda.so.1: {error})") from None
    _check(lib, "cuInit", 0)
    return lib


def _check(lib: ctypes.CDLL, name: str, *args: Any) -> None:
    status = getattr(lib, name)(*args)
    if status != 0:
        text = ctypes.c_char_p()
        lib.cuGetErrorString(status, ctypes.byref(text))
        message = text.value.decode() if text.value else f"error {status}"
        if status == _OUT_OF_MEMORY:
            raise MemoryError(f"llvm-nvptx: {name}: the GPU is out of memory ({message})")
        raise CudaError(f"llvm-nvptx: {name} failed: {message}")


def device_count() -> int:
    """The NVIDIA GPUs the driver sees (0 without a driver)."""
    try:
        lib = _driver()
    except CudaError:
        return 0
    count = ctypes.c_int()
    _check(lib, "cuDeviceGetCount", ctypes.byref(count))
    return count.value


class CudaRuntime(GpuRuntime):
    """GPU ``ordinal``'s primary context and a stream of its own."""

    block_threads = 256
    max_blocks = 65535

    def __init__(self, ordinal: int = 0) -> None:
        lib = self._lib = _driver()
        self.name = f"cuda:{ordinal}"
        device = ctypes.c_int()
        _check(lib, "cuDeviceGet", ctypes.byref(device), ordinal)
        major, minor = ctypes.c_int(), ctypes.c_int()
        _check(lib, "cuDeviceGetAttribute", ctypes.byref(major), _MAJOR, device)
        _check(lib, "cuDeviceGetAttribute", ctypes.byref(minor), _MINOR, device)
        found = f"sm_{major.value}{minor.value}"
        # code for the newest architecture at or below the device's (sm_90 runs on later ones via PTX)
        known = sorted((a for a in ARCHITECTURES if int(a[3:]) <= int(found[3:])), key=lambda a: int(a[3:]))
        if not known:
            raise CudaError(f"llvm-nvptx: {self.name} is {found}; code is generated for {sorted(ARCHITECTURES)}")
        self.architecture = known[-1]
        self._context = ctypes.c_void_p()
        _check(lib, "cuDevicePrimaryCtxRetain", ctypes.byref(self._context), device)
        self._current()
        self._stream = ctypes.c_void_p()
        _check(lib, "cuStreamCreate", ctypes.byref(self._stream), 1)  # non-blocking with the default stream

    def _current(self) -> None:
        _check(self._lib, "cuCtxSetCurrent", self._context)

    def allocate(self, nbytes: int) -> int:
        self._current()
        address = ctypes.c_uint64()
        try:
            _check(self._lib, "cuMemAlloc_v2", ctypes.byref(address), ctypes.c_size_t(nbytes))
        except MemoryError:
            raise MemoryError(f"llvm-nvptx: {self.name} has no {nbytes} bytes free for a buffer") from None
        return address.value

    def available_bytes(self) -> int | None:
        self._current()
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        _check(self._lib, "cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        return free.value

    def copy(self, target: int, source: int, nbytes: int) -> None:
        self._current()
        _check(self._lib, "cuMemcpyDtoDAsync_v2", ctypes.c_uint64(target), ctypes.c_uint64(source),
               ctypes.c_size_t(nbytes), self._stream)

    def free(self, address: int) -> None:
        self.synchronize()  # a launch may still read it
        _check(self._lib, "cuMemFree_v2", ctypes.c_uint64(address))

    def write(self, address: int, data: np.ndarray) -> None:
        data = np.asarray(data, order="C")
        self._current()
        _check(self._lib, "cuMemcpyHtoDAsync_v2", ctypes.c_uint64(address), data.ctypes.data_as(ctypes.c_void_p),
               ctypes.c_size_t(data.nbytes), self._stream)
        self.synchronize()  # the host array may go away once this returns

    def read(self, address: int, nbytes: int) -> bytes:
        out = ctypes.create_string_buffer(nbytes)
        self._current()
        _check(self._lib, "cuMemcpyDtoHAsync_v2", out, ctypes.c_uint64(address), ctypes.c_size_t(nbytes), self._stream)
        self.synchronize()
        return out.raw

    def synchronize(self) -> None:
        _check(self._lib, "cuStreamSynchronize", self._stream)

    def load(self, ptx: str) -> Any:
        image: bytes = ptx.encode() + b"\0"
        if toolkit.ptxas() is not None:
            image = ptxas.cubin(ptx, self.architecture)
        self._current()
        module = ctypes.c_void_p()
        _check(self._lib, "cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(image))
        return module, {}

    def launch(self, module: Any, kernel: str, grid: int, block: int, args: list[int]) -> None:
        handle, functions = module
        function = functions.get(kernel)
        if function is None:
            function = functions[kernel] = ctypes.c_void_p()
            _check(self._lib, "cuModuleGetFunction", ctypes.byref(function), handle, kernel.encode())
        words = [ctypes.c_uint64(a % (1 << 64)) for a in args]
        pointers = (ctypes.c_void_p * len(words))(*(ctypes.cast(ctypes.byref(w), ctypes.c_void_p) for w in words))
        self._current()
        _check(self._lib, "cuLaunchKernel", function, grid, 1, 1, block, 1, 1, 0, self._stream, pointers, None)
