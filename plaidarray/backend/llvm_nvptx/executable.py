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
sees what the steps before it wrote.

A run costs its launches and little else: the table of every step's addresses is put in
device memory once per set of buffer addresses, with each launch prepared on it
(``runtime.prepare``), and kept for the runs that take the same blocks again (the device
pool gives a loop's runs the same few)."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import numpy as np

from ...hlo.shape import Shape
from .. import memory
from ..executable import Executable
from ..llvm.kernel_source import Segment
from .runtime import DeviceArray, GpuRuntime


#: The range a launch computing a whole-array reduction's runs passes (no iteration's).
RUNS = (1 << 64) - 1
#: The sets of buffer addresses an executable keeps prepared launches for.
_TABLES_KEPT = 8


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


class _Prepared(NamedTuple):
    """The launches of a run on one set of buffer addresses, and the device array of those
    addresses that they read."""

    table: DeviceArray
    launches: tuple[Callable[[], None], ...]


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
        self._scratch: list[DeviceArray | None] = []  # a step's runs of a whole-array reduction
        self._prepared: dict[tuple[int, ...], _Prepared] = {}  # by addresses, the most recently run last
        self._lock = threading.Lock()
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
            self._scratch = [runtime.empty((s.runs,), np.dtype(np.float64)) if s.runs else None for s in self.steps]
            self._constants = [runtime.from_host(c) for c in self.constants]
        kept = not self.returns_parameters  # a parameter it returns may be one it updated in place
        params = [b if type(b) is DeviceArray else _on_device(runtime, np.asarray(b), kept) for b in buffers]
        if self._largest is not None and self._needed >= memory.CHECK_ABOVE_BYTES:  # fails before allocating
            memory.check_fits(self._needed, 0, self._largest, runtime.available_bytes())
        outputs = [runtime.empty(s.dims, s.dtype) for s in self.output_shapes]
        temps = [runtime.empty(s.dims, s.dtype) for s in self.temp_shapes]
        table = [*params, *cast("list[DeviceArray]", self._constants), *outputs, *temps]
        with self._lock:  # one run's launches in a row: the next run may rewrite what they read
            for launch in self._launches(table):
                launch()
        return [params[i] if kind == "param" else outputs[i] for kind, i in self.output_slots]

    def _launches(self, table: list[DeviceArray]) -> tuple[Callable[[], None], ...]:
        """The launches over ``table``'s buffers: kept from an earlier run on the same
        addresses (a loop's runs take the same few blocks from the pool), else prepared."""
        key = tuple(b.address for b in table)
        found = self._prepared.pop(key, None)
        if found is None:
            found = self._prepare(table)
            if len(self._prepared) >= _TABLES_KEPT:
                del self._prepared[next(iter(self._prepared))]  # the least recently run
        self._prepared[key] = found
        return found.launches

    def _prepare(self, table: list[DeviceArray]) -> _Prepared:
        """Each step's launch on ``table``: one array of every step's buffer addresses in
        device memory, a step's kernel taking its own run of it."""
        runtime = self.runtime
        words = [table[i].address for step in self.steps for i in step.buffers]
        addresses = runtime.from_host(np.array(words or [0], np.uint64))
        launches: list[Callable[[], None]] = []
        start = addresses.address
        for step, scratch in zip(self.steps, cast("list[DeviceArray | None]", self._scratch)):
            extent = cast(int, step.segment.extent)
            if scratch is not None:  # the runs' sums over the grid (range [-1, -1)), then the kernel on them
                launches.append(runtime.prepare(self._module, step.symbol, min(step.runs, runtime.max_blocks),
                                                step.lanes, [start, 0, RUNS, RUNS, scratch.address]))
                launches.append(runtime.prepare(self._module, step.symbol, 1, step.lanes,
                                                [start, 0, 0, 0, scratch.address]))
            else:
                if step.lanes > runtime.block_threads:  # a block of warps an iteration: a CUDA block each
                    grid, block = min(max(extent, 1), runtime.max_blocks), step.lanes
                else:
                    grid, block = runtime.launch_shape(extent * step.lanes) if extent else (1, step.lanes)
                launches.append(runtime.prepare(self._module, step.symbol, grid, block, [start, 0, 0, extent, 0]))
            start += 8 * len(step.buffers)
        return _Prepared(addresses, tuple(launches))

    def run_on_host(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        """A run on host arrays: copied to the device, and the results back."""
        return [self.runtime.to_host(r) for r in self.run(buffers)]


def _on_device(runtime: GpuRuntime, value: np.ndarray, kept: bool) -> DeviceArray:
    """A host parameter (a value of no device) on the device: a scalar's kept copy where
    ``kept`` allows, else a new one."""
    return runtime.scalar(value) if kept and value.ndim == 0 else runtime.from_host(value)
