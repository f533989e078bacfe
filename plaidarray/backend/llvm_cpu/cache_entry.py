"""An executable as an entry of the persistent cache (``object_cache.py``): its steps, each
a kernel (by key; the kernels are entries of their own, ``kernels.py``) and the buffers it
runs on, and its outputs and temporaries; and how an executable is made again from an
entry."""

from __future__ import annotations

import numpy as np

from ...hlo.shape import Shape
from . import jit, kernels, object_cache
from .executable import CpuExecutable, Step
from .llvm_emitter import KERNEL_PREFIX, KernelSource, Segment


def metadata(sources: list[KernelSource], output_slots: list[tuple[str, int]], output_shapes: list[Shape],
             temp_shapes: list[Shape]) -> dict:
    """What a cache entry holds: the steps, the output slots and the buffers' shapes."""
    return {"steps": [[s.key, list(s.buffers), [s.segment.extent, s.segment.work, s.segment.depth]]
                      for s in sources],
            "output_slots": output_slots,
            "output_shapes": [[list(s.dims), s.dtype.str] for s in output_shapes],
            "temp_shapes": [[list(s.dims), s.dtype.str] for s in temp_shapes]}


def _shapes(rows: list) -> list[Shape]:
    return [Shape(tuple(int(d) for d in dims), np.dtype(dtype)) for dims, dtype in rows]


def load(key: str, n_params: int, constants: list[np.ndarray], target: str, level: int) -> CpuExecutable | None:
    """The executable stored under ``key`` by an earlier compile, or None (also when one
    of its kernels is no longer stored)."""
    entry = object_cache.load(key)
    if entry is None:
        return None
    _, meta = entry
    features = jit.host_target().features
    try:
        slots = [(str(kind), int(i)) for kind, i in meta["output_slots"]]
        outputs, temps = _shapes(meta["output_shapes"]), _shapes(meta["temp_shapes"])
        steps = []
        found: dict[str, kernels.CompiledKernel] = {}
        for kernel_key, buffers, segment in meta["steps"]:
            kernel_key = str(kernel_key)
            kernel = found.get(kernel_key) or kernels.KERNELS.get(kernel_key)
            if kernel is None:
                kernel = kernels.load(kernels.disk_key(kernel_key, target, features), KERNEL_PREFIX + kernel_key,
                                      level)
                if kernel is None:
                    return None
                kernels.KERNELS.put(kernel_key, kernel)
            found[kernel_key] = kernel
            steps.append(Step(kernel, tuple(int(b) for b in buffers), Segment(*(int(f) for f in segment))))
    except (KeyError, TypeError, ValueError):
        return None
    executable = CpuExecutable(steps, n_params, constants, slots, outputs, temps)
    executable.from_disk = True
    return executable
