"""The simulated GPU (``simulator/``) as a :class:`~.runtime.GpuRuntime`: the same PTX the
GPU would run, executed on the host with a warp's lanes in lockstep, its memory checked
for out-of-bounds accesses and races. Small blocks and grids keep it quick: a kernel's
grid-stride loop covers any range with them, and two blocks of two warps still exercise
what crosses warps and blocks."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import memory
from . import simulator
from .runtime import GpuRuntime
from .simulator import blas


class SimulatedRuntime(GpuRuntime):
    name = "simulated"
    block_threads = 64
    max_blocks = 2

    def __init__(self, architecture: str = "sm_80", name: str = "simulated") -> None:
        self.architecture, self.name = architecture, name
        self.memory = simulator.SimulatedMemory()

    def allocate(self, nbytes: int) -> int:
        try:
            return self.memory.allocate(nbytes)
        except MemoryError:
            raise MemoryError(f"the simulated device has no {nbytes} bytes free (its memory is the host's)") from None

    def available_bytes(self) -> int | None:
        return memory.available_bytes()

    def free(self, address: int) -> None:
        self.memory.free(address)

    def write(self, address: int, data: np.ndarray) -> None:
        self.memory.write(address, np.asarray(data, order="C"))

    def read(self, address: int, nbytes: int) -> bytes:
        return bytes(self.memory.read(address, nbytes))

    def synchronize(self) -> None:
        """Nothing to wait for: a launch has run when it returns."""

    def load(self, ptx: str) -> Any:
        return simulator.load_module(ptx)

    def launch(self, module: Any, kernel: str, grid: int, block: int, args: list[int]) -> None:
        simulator.launch(module, kernel, grid=(grid, 1, 1), block=(block, 1, 1), args=args, memory=self.memory)

    has_blas = True

    def gemm(self, dtype: np.dtype, *arguments: Any) -> None:
        blas.gemm(self.memory, np.dtype(dtype), *arguments)
