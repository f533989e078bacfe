"""The ``cuda`` platform's devices: each NVIDIA GPU the driver sees (``cuda``, ``cuda:1``...),
or, with ``PLAIDARRAY_SIMULATED_GPUS=n``, n simulated ones (``simulated.py``) in their
place, so that code written for ``device="cuda"`` runs and is tested in CI without a GPU.
Each device has its runtime, its transfers and a backend of its own (llvm-nvptx's
compiler for its runtime), which computes its arrays. Asking for them on a machine
without a GPU loads nothing but the attempt to open the driver."""

from __future__ import annotations

from ... import config
from ..devices import Device
from .cuda_driver import device_count
from .runtime import GpuRuntime


def cuda_devices() -> list[Device]:
    """The platform's devices, made when a device named ``cuda`` is first asked for."""
    simulated = config.get("PLAIDARRAY_SIMULATED_GPUS")
    count = simulated or device_count()
    if not count:
        return []
    from ..executable import Backend
    from .compiler import NvptxCompiler
    from .transfers import GpuTransfers

    runtimes = _simulated(simulated) if simulated else _gpus(count)
    return [Device("cuda", i, GpuTransfers(runtime),
                   Backend("llvm-nvptx", 0, NvptxCompiler(runtime), f"NVIDIA GPU code through LLVM's NVPTX back end "
                           f"({runtime.name}, {runtime.architecture})", baseline=False))
            for i, runtime in enumerate(runtimes)]


def _simulated(count: int) -> list[GpuRuntime]:
    from .simulated import SimulatedRuntime

    return [SimulatedRuntime(name=f"simulated:{i}") for i in range(count)]


def _gpus(count: int) -> list[GpuRuntime]:
    from .cuda_driver import CudaRuntime

    return [CudaRuntime(i) for i in range(count)]
