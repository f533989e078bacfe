"""An NVIDIA GPU's runtime through the CUDA driver API (``libcuda``), called with ctypes.

Why ctypes and not NVIDIA's ``cuda-bindings``: the executables need about fifteen driver
functions (memory, modules, launches, a stream), which ctypes reaches with no dependency
and no import cost, as tinygrad's CUDA device does; the driver library itself comes with
the GPU's driver, never from PyPI. Each device works in its primary context, the one
PyTorch, CuPy and JAX use, so device pointers are shared with them.

Launches go on one stream per device, in order, and return at once; a read (``read``,
which copies to the host) waits for them. Memory comes from the driver as asked, with no
preallocation, through a pool that keeps freed blocks for reuse (``block_pool.py``); out
of device memory is a MemoryError naming the request. A launch that runs again is
prepared once (``prepare``): its argument block is built then, and each run is one
driver call. Modules load a
cubin from ``ptxas`` where it is installed, else the PTX itself (the driver assembles it).
"""

from __future__ import annotations

import ctypes
import functools
import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from ...cached_property import cached_property
from .. import dlpack
from . import cublas, ptxas, toolkit
from .block_pool import BlockPool
from .runtime import GpuRuntime
from .targets import ARCHITECTURES

_LOG = logging.getLogger("plaidarray.compiles")
_OUT_OF_MEMORY = 2
#: ``CU_POINTER_ATTRIBUTE_MEMORY_TYPE``: asked of a host pointer, an error unless the
#: driver knows the memory (page-locked).
_MEMORY_TYPE = 2
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
        _fail(lib, name, status)


def _fail(lib: ctypes.CDLL, name: str, status: int) -> None:
    """Raise driver call ``name``'s error ``status``, in words."""
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
        self._pool = BlockPool(self._driver_allocate, self._driver_free, self.synchronize)
        self.dlpack_device = (dlpack.CUDA, ordinal)
        self.stream_handle = self._stream.value or 0

    def _current(self) -> None:
        _check(self._lib, "cuCtxSetCurrent", self._context)

    def allocate(self, nbytes: int) -> int:
        try:
            return self._pool.take(nbytes)
        except MemoryError:
            raise MemoryError(f"llvm-nvptx: {self.name} has no {nbytes} bytes free for a buffer") from None

    def _driver_allocate(self, nbytes: int) -> int:
        self._current()
        address = ctypes.c_uint64()
        _check(self._lib, "cuMemAlloc_v2", ctypes.byref(address), ctypes.c_size_t(nbytes))
        return address.value

    def _driver_free(self, address: int) -> None:
        _check(self._lib, "cuMemFree_v2", ctypes.c_uint64(address))

    def available_bytes(self) -> int | None:
        """The driver's free memory and the pool's kept blocks."""
        self._current()
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        _check(self._lib, "cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        return free.value + self._pool.kept_bytes

    def copy(self, target: int, source: int, nbytes: int) -> None:
        self._current()
        _check(self._lib, "cuMemcpyDtoDAsync_v2", ctypes.c_uint64(target), ctypes.c_uint64(source),
               ctypes.c_size_t(nbytes), self._stream)

    def free(self, address: int) -> None:
        self._pool.give(address)  # later work on the stream runs after the launches that read it

    def write(self, address: int, data: np.ndarray) -> None:
        """The copy is queued on the stream. From pageable memory (NumPy's), the driver
        has copied the bytes to a staging buffer when the call returns, so the caller's
        array may change or go at once; from page-locked memory (registered with the
        driver by another library) the copy reads the array later, and is waited for."""
        data = np.asarray(data, order="C")
        self._current()
        source = data.ctypes.data
        _check(self._lib, "cuMemcpyHtoDAsync_v2", ctypes.c_uint64(address), ctypes.c_void_p(source),
               ctypes.c_size_t(data.nbytes), self._stream)
        kind = ctypes.c_uint()
        if self._lib.cuPointerGetAttribute(ctypes.byref(kind), _MEMORY_TYPE, ctypes.c_uint64(source)) == 0:
            self.synchronize()  # the driver knows the pointer: page-locked, not staged

    def read(self, address: int, nbytes: int) -> bytes:
        out = ctypes.create_string_buffer(nbytes)
        self._current()
        _check(self._lib, "cuMemcpyDtoHAsync_v2", out, ctypes.c_uint64(address), ctypes.c_size_t(nbytes), self._stream)
        self.synchronize()
        return out.raw

    def synchronize(self) -> None:
        _check(self._lib, "cuStreamSynchronize", self._stream)

    @cached_property
    def _blas(self) -> cublas.Cublas | None:
        """A cuBLAS handle on this runtime's stream, made at the first product; None where
        no libcublas loads or it makes no handle (said once, as a warning: products then
        run on the generated loops)."""
        lib = cublas.library()
        if lib is None:
            return None
        try:
            return cublas.Cublas(lib, self._stream, self._current)
        except cublas.CublasError as error:
            _LOG.warning("%s: cuBLAS made no handle (%s): matrix products run on generated loops", self.name, error)
            return None

    @property
    def has_blas(self) -> bool:  # type: ignore[override]
        return self._blas is not None

    def gemm(self, dtype: np.dtype, *arguments: Any) -> None:
        blas = self._blas
        assert blas is not None, "gemm without has_blas"
        blas.gemm(dtype, *arguments)

    def synchronize_device(self) -> None:
        self._current()
        _check(self._lib, "cuCtxSynchronize")

    def load(self, ptx: str) -> Any:
        image: bytes = ptx.encode() + b"\0"
        if toolkit.ptxas() is not None:
            image = ptxas.cubin(ptx, self.architecture)
        self._current()
        module = ctypes.c_void_p()
        _check(self._lib, "cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(image))
        return module, {}

    def launch(self, module: Any, kernel: str, grid: int, block: int, args: list[int]) -> None:
        self.prepare(module, kernel, grid, block, args)()

    def prepare(self, module: Any, kernel: str, grid: int, block: int, args: list[int]) -> Callable[[], None]:
        """The launch as a call that builds nothing: the function, the argument words and
        the array of their addresses that ``cuLaunchKernel`` takes are made here, once."""
        handle, functions = module
        function = functions.get(kernel)
        if function is None:
            function = functions[kernel] = ctypes.c_void_p()
            _check(self._lib, "cuModuleGetFunction", ctypes.byref(function), handle, kernel.encode())
        words = (ctypes.c_uint64 * len(args))(*(a % (1 << 64) for a in args))
        pointers = (ctypes.c_void_p * len(args))(*(ctypes.addressof(words) + 8 * i for i in range(len(args))))
        return functools.partial(_launch, self._lib, self._context, function, grid, block, self._stream, pointers,
                                 words)


def _launch(lib: ctypes.CDLL, context: ctypes.c_void_p, function: ctypes.c_void_p, grid: int, block: int,
            stream: ctypes.c_void_p, pointers: ctypes.Array, words: ctypes.Array) -> None:
    """A prepared launch (``words`` is held for ``pointers``, which point into it)."""
    lib.cuCtxSetCurrent(context)  # current on this thread: a launch can come from any
    status = lib.cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, stream, pointers, None)
    if status:
        _fail(lib, "cuLaunchKernel", status)
