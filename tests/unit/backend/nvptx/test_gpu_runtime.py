"""What a GPU runtime does besides running kernels, without a GPU: the caching allocator
(``block_pool.py``), launches prepared once per set of buffer addresses
(``executable.py``), and DLPack's capsules (``backend/dlpack.py``) lent and taken by a
device that other libraries reach, played here by a simulated GPU that says it is CUDA
device 0 (its addresses are its own memory's, so only plaidarray itself can take what
it lends)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend import devices, dlpack
from plaidarray.backend.llvm_nvptx import devices as gpu_devices
from plaidarray.backend.llvm_nvptx.block_pool import BlockPool, rounded
from plaidarray.backend.llvm_nvptx.compiler import NvptxCompiler
from plaidarray.backend.llvm_nvptx.simulated import SimulatedRuntime


class _Driver:
    """A driver's allocations: addresses counting up, ``limit`` bytes in all."""

    def __init__(self, limit: int) -> None:
        self.limit, self.used, self.next, self.live, self.synced = limit, 0, 4096, {}, 0

    def allocate(self, nbytes: int) -> int:
        if self.used + nbytes > self.limit:
            raise MemoryError(f"{nbytes} bytes")
        address, self.next = self.next, self.next + nbytes
        self.live[address] = nbytes
        self.used += nbytes
        return address

    def free(self, address: int) -> None:
        self.used -= self.live.pop(address)

    def synchronize(self) -> None:
        self.synced += 1


def test_sizes_round_up_to_512_bytes_and_past_2_mib_to_2_mib():
    assert [rounded(n) for n in (0, 1, 512, 513, 2 << 20)] == [512, 512, 512, 1024, 2 << 20]
    assert rounded((2 << 20) + 1) == 4 << 20


def test_a_freed_block_is_taken_again_by_a_request_of_its_size_without_the_driver():
    driver = _Driver(1 << 20)
    pool = BlockPool(driver.allocate, driver.free, driver.synchronize)
    a = pool.take(1000)
    pool.give(a)
    assert pool.kept_bytes == 1024
    assert pool.take(1024) == a and pool.kept_bytes == 0
    b = pool.take(100)  # another size: the driver's
    assert b != a and len(driver.live) == 2 and driver.synced == 0


def test_a_full_device_releases_the_kept_blocks_after_waiting_then_allocates_again():
    driver = _Driver(4096)
    pool = BlockPool(driver.allocate, driver.free, driver.synchronize)
    blocks = [pool.take(1024) for _ in range(4)]
    for block in blocks:
        pool.give(block)
    big = pool.take(3000)  # 3072 bytes: only after the four kept blocks go back
    assert driver.synced == 1 and pool.kept_bytes == 0 and list(driver.live) == [big]
    with pytest.raises(MemoryError):
        pool.take(2048)  # nothing kept to release: the driver's error


class _Reusing(SimulatedRuntime):
    """The simulated device with a pool as the GPU's has, counting the launches prepared."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = BlockPool(super().allocate, super().free, lambda: None)
        self.prepared = 0

    def allocate(self, nbytes: int) -> int:
        return self.pool.take(nbytes)

    def free(self, address: int) -> None:
        self.pool.give(address)

    def prepare(self, module, kernel, grid, block, args):
        self.prepared += 1
        return super().prepare(module, kernel, grid, block, args)


def test_runs_on_blocks_taken_again_launch_what_the_first_run_prepared():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    module = xp.jit(lambda x: xp.sum(x * 2.0, axis=1) + 1.0).lower(xp.asarray(a)).module
    runtime = _Reusing()
    executable = NvptxCompiler(runtime).compile(module)
    want = (a * 2.0).sum(axis=1) + 1.0
    x = runtime.from_host(a)
    np.testing.assert_array_equal(runtime.to_host(executable.run([x])[0]), want)
    first = runtime.prepared
    assert first >= 1
    for _ in range(3):  # each run's output is freed before the next: the same blocks again
        np.testing.assert_array_equal(runtime.to_host(executable.run([x])[0]), want)
    assert runtime.prepared == first
    held = [executable.run([x])[0] for _ in range(12)]  # the first on the kept block, then new ones: prepared anew
    assert runtime.prepared == first * 12 and len(executable._prepared) == 8  # at most 8 kept
    for out in held:
        np.testing.assert_array_equal(runtime.to_host(out), want)


def test_a_python_scalar_is_copied_to_the_device_once_per_value(cuda, monkeypatch):
    """``x + 1.0`` takes 1.0 as a parameter (so that ``x + 2.0`` shares its code): a loop's
    runs take the runtime's kept copy, one host-to-device copy per value, each run the
    value it was given."""
    runtime = cuda[0].transfers.runtime
    x = xp.asarray(np.arange(4, dtype=np.float32), device="cuda")
    copies = []
    made = SimulatedRuntime.from_host
    monkeypatch.setattr(SimulatedRuntime, "from_host", lambda self, a: (copies.append(a.shape), made(self, a))[1])
    for step in range(6):
        value = float(step % 2) + 1.0  # 1.0, 2.0, 1.0...
        np.testing.assert_array_equal(np.asarray(x + value), np.arange(4, dtype=np.float32) + value)
    assert copies.count(()) == 2  # 1.0 and 2.0, once each
    assert len(runtime._scalars) == 2


@pytest.fixture
def lending_gpu(monkeypatch):
    """``cuda`` as one simulated GPU that lends by DLPack as CUDA device 0."""
    monkeypatch.setattr(gpu_devices.config, "get",
                        lambda name, _get=gpu_devices.config.get: 1 if name == "PLAIDARRAY_SIMULATED_GPUS" else _get(name))
    made = tuple(gpu_devices.cuda_devices())
    monkeypatch.setattr(made[0].transfers.runtime, "dlpack_device", (dlpack.CUDA, 0), raising=False)
    monkeypatch.setitem(devices._provided, "cuda", made)
    for d in made:
        monkeypatch.setitem(devices._BY_NAME, d.name, d)
        monkeypatch.setitem(devices._BY_NAME, f"{d.platform}:{d.index}", d)
    return made[0]


def test_a_gpu_array_is_lent_and_taken_back_without_a_copy(lending_gpu):
    a = np.arange(10.0)
    x = xp.asarray(a, device="cuda") * 3.0
    assert x.__dlpack_device__() == (2, 0)
    lent = x._computed().buffer
    y = xp.from_dlpack(_Capsule(x))
    assert y.device is lending_gpu and y._computed().buffer.address == lent.address
    np.testing.assert_array_equal(np.asarray(y + 1.0), a * 3.0 + 1.0)
    copied = xp.from_dlpack(_Capsule(x), copy=True)
    assert copied._computed().buffer.address != lent.address
    np.testing.assert_array_equal(np.asarray(copied), a * 3.0)


class _Capsule:
    """Another library's array on the same device: its ``__dlpack__`` is the array's."""

    def __init__(self, array) -> None:
        self.array = array

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None):
        return self.array.__dlpack__(stream=stream, max_version=max_version)


def test_asarray_of_another_librarys_gpu_array_takes_it_onto_that_gpu(lending_gpu):
    """``asarray`` of a tensor in a GPU's memory (here a lent array standing for PyTorch's)
    takes it by DLPack onto that GPU: copied there by default (the other library may
    still write it, as host memory is copied), shared with ``copy=False``; another dtype
    or device is a copy, which ``copy=False`` refuses."""
    a = np.arange(6.0).reshape(2, 3)
    x = xp.asarray(a, device="cuda") * 2.0
    lent = x._computed().buffer.address
    copied = xp.asarray(_Capsule(x))
    assert copied.device is lending_gpu and copied._computed().buffer.address != lent
    np.testing.assert_array_equal(np.asarray(copied), a * 2.0)
    shared = xp.asarray(_Capsule(x), copy=False)
    assert shared.device is lending_gpu and shared._computed().buffer.address == lent
    single = xp.asarray(_Capsule(x), dtype=xp.float32)
    assert single.dtype == xp.float32 and single.device is lending_gpu
    np.testing.assert_array_equal(np.asarray(single), (a * 2.0).astype(np.float32))
    on_host = xp.asarray(_Capsule(x), device="cpu")
    assert on_host.device == xp.asarray(0.0, device="cpu").device
    np.testing.assert_array_equal(np.asarray(on_host), a * 2.0)
    with pytest.raises(ValueError, match="changing the dtype"):
        xp.asarray(_Capsule(x), dtype=xp.float32, copy=False)
    with pytest.raises(ValueError, match="needs a copy"):
        xp.asarray(_Capsule(x), device="cpu", copy=False)


@pytest.mark.parametrize("versioned", [False, True])
def test_a_lent_buffer_lives_until_the_consumer_is_done_then_the_device_is_waited_for(lending_gpu, versioned):
    runtime = lending_gpu.transfers.runtime
    waits = []
    runtime.synchronize_device = lambda: waits.append(1)  # the instance's, for this test's device alone
    x = xp.asarray(np.arange(4.0), device="cuda") + 1.0
    address = x._computed().buffer.address
    taken = dlpack.take(x.__dlpack__(max_version=(1, 0) if versioned else None), "test")
    assert taken.address == address and taken.shape == (4,) and taken.dtype == np.float64
    assert taken.device == (2, 0) and taken.strides is None
    del x
    gc.collect()
    assert runtime.read(address, 32) == np.arange(1.0, 5.0).tobytes()  # still lent
    assert not waits
    taken.done()
    assert waits == [1]


def test_an_export_nobody_takes_is_released_with_its_capsule():
    released = []
    owner = np.arange(3, dtype=np.int32)
    capsule = dlpack.export(owner.ctypes.data, owner.shape, owner.dtype, (dlpack.CPU, 0), owner,
                            lambda: released.append(1), True)
    assert len(dlpack._LENT) >= 1
    del capsule
    gc.collect()
    assert released == [1]


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float32, np.complex128])
def test_numpy_reads_an_export_of_host_memory_as_the_same_elements(dtype, versioned):
    owner = (np.arange(6) % 3).astype(dtype).reshape(2, 3)

    class Lender:
        def __dlpack_device__(self):
            return (dlpack.CPU, 0)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            return dlpack.export(owner.ctypes.data, owner.shape, owner.dtype, (dlpack.CPU, 0), owner,
                                 lambda: None, versioned and max_version is not None)

    got = np.from_dlpack(Lender())
    assert got.dtype == owner.dtype and got.ctypes.data == owner.ctypes.data
    np.testing.assert_array_equal(got, owner)
    if versioned:
        assert not got.flags.writeable  # DLPack 1's read-only flag


@pytest.mark.parametrize("take", ["from_dlpack", "asarray"])
def test_a_dlpack_device_no_plaidarray_device_is_raises_buffer_error(take):
    class OnGpu:
        def __dlpack_device__(self):
            return (dlpack.CUDA, 7)

        def __dlpack__(self, **kwargs):
            raise AssertionError("not asked for")

    with pytest.raises(BufferError, match=rf"{take}: the input is on DLPack device \(2, 7\)"):
        getattr(xp, take)(OnGpu())
