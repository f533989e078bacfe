"""llvm-nvptx's executable (XLA's ``Executable``): one module's PTX and the kernel calls
that run it on a GPU's buffer table, as llvm-cpu's executable runs its kernels on the
host's.

The table holds the parameters, the bound constants, the outputs and the temporaries, in
that order. A step launches one kernel with a table of its own buffers' addresses in
device memory and the range of its chunkable loop, a thread an iteration, or a warp or a
CUDA block of warps where its iterations are reductions (``renderer.py``,
``warp_reductions.py``); a kernel with no chunkable loop runs on one thread, or on a
block of warps where it is a reduction, after launches over the grid that compute the
runs of a long one into a scratch buffer. Launches on one runtime run in order, so a step
sees what the steps before it wrote."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import numpy as np

from ...hlo.shape import Shape
from .. import memory
from ..executable import Executable
from ..llvm.kernel_source import Segment
from .runtime import DeviceArray, GpuRuntime


#: The range a launch computing a whole-array reduction's runs passes (no iteration's).
RUNS = (1 << 64) - 1


class Step(NamedTuple):
    """A kernel launch: its symbol, each of its buffers' index in the run's table (in the
    kernel's order), its segment (the chunkable loop's extent, or 0), the threads
    that run each iteration (``KernelSource.lanes``) and the runs of a whole-array
    reduction that a launch over the grid computes first (``KernelSource.runs``)."""

    symbol: str
    buffers: tuple[int, ...]
    segment: Segment
    lanes: int = 1
    runs: int = 0


class GpuExecutable(Executable):
    """The steps of one HLO module on ``runtime``, its PTX loaded at the first run (none
    and no steps where the module computes nothing: its results are empty)."""

    def __init__(self, ptx: str, steps: Sequence[Step], n_params: int, constants: list[np.ndarray],
                 output_slots: list[tuple[str, int]], output_shapes: list[Shape], temp_shapes: list[Shape],
                 runtime: GpuRuntime) -> None:
        self.ptx = ptx
        self.steps = tuple(steps)
        self.n_params, self.constants, self.output_slots = n_params, constants, output_slots
        self.output_shapes, self.temp_shapes = output_shapes, temp_shapes
        self.runtime = runtime
        self._module: Any = None
        self._constants: list[DeviceArray] | None = None
        self.returns_parameters = any(kind == "param" for kind, _ in output_slots)
        made = [(math.prod(s.dims) * s.dtype.itemsize, s) for s in (*output_shapes, *temp_shapes)]
        #: The bytes a run allocates, and its largest buffer (``memory.check_fits``).
        self._needed = sum(size for size, _ in made)
        self._largest = max(made, key=lambda m: m[0])[1] if made else None

    def run(self, buffers: list[Any]) -> list[Any]:
        """Run on the device's arrays (a host array among them, a value of no device's:
        copied to the device); the results are device arrays."""
        runtime = self.runtime
        if self._constants is None:
            self._module = runtime.load(self.ptx) if self.steps else None
            self._constants = [runtime.from_host(c) for c in self.constants]
        params = [b if type(b) is DeviceArray else runtime.from_host(np.asarray(b)) for b in buffers]
        if self._largest is not None and self._needed >= memory.CHECK_ABOVE_BYTES:  # fails before allocating
            memory.check_fits(self._needed, 0, self._largest, runtime.available_bytes())
        outputs = [runtime.empty(s.dims, s.dtype) for s in self.output_shapes]
        temps = [runtime.empty(s.dims, s.dtype) for s in self.temp_shapes]
        table = [*params, *cast("list[DeviceArray]", self._constants), *outputs, *temps]
        for step in self.steps:
            self._launch(step, table)
        return [params[i] if kind == "param" else outputs[i] for kind, i in self.output_slots]

    def run_on_host(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        """A run on host arrays: copied to the device, and the results back."""
        return [self.runtime.to_host(r) for r in self.run(buffers)]

    def _launch(self, step: Step, table: list[DeviceArray]) -> None:
        runtime = self.runtime
        addresses = runtime.from_host(np.array([table[i].address for i in step.buffers] or [0], np.uint64))
        extent = cast(int, step.segment.extent)
        if step.runs:  # the runs' sums over the grid (range [-1, -1)), then the kernel on them (warp_reductions.py)
            scratch = runtime.empty((step.runs,), np.dtype(np.float64))
            runtime.launch(self._module, step.symbol, min(step.runs, runtime.max_blocks), step.lanes,
                           [addresses.address, 0, RUNS, RUNS, scratch.address])
            runtime.launch(self._module, step.symbol, 1, step.lanes, [addresses.address, 0, 0, 0, scratch.address])
            return
        if step.lanes > runtime.block_threads:  # a block of warps an iteration: a CUDA block each
            grid, block = min(max(extent, 1), runtime.max_blocks), step.lanes
        else:
            grid, block = runtime.launch_shape(extent * step.lanes) if extent else (1, step.lanes)
        runtime.launch(self._module, step.symbol, grid, block, [addresses.address, 0, 0, extent, 0])
