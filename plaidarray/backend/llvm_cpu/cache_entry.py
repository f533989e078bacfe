"""An executable as an entry of the persistent cache (``object_cache.py``): its steps, each
a kernel (by key; the kernels are entries of their own, ``kernels.py``), the buffers and
run-time sizes it runs on, and its outputs and temporaries; and how an executable is made
again from an entry. Sizes are stored as ``symbolic.encode`` writes them, run-time sizes
of a shape-generic executable included."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ...hlo.shape import Shape
from ...hlo.symbolic import Dim, decode, encode
from . import kernels, object_cache
from .blas_lapack import is_import
from .executable import CpuExecutable, ShapeGenericExecutable, Step
from .kernel_source import KERNEL_PREFIX, KernelSource, Segment


def metadata(sources: list[KernelSource], output_slots: list[tuple[str, int]], output_shapes: list[Shape],
             temp_shapes: list[Shape], limits: list[tuple[Dim, int]] | None, n_constants: int) -> dict:
    """What a cache entry holds: the steps, the output slots, the buffers' shapes, for a
    shape-generic executable the limits on its run-time sizes, and the number of constants
    the compile bound as parameters (which a load is given again)."""
    return {"steps": [[s.key, list(s.buffers), [*_sizes([s.segment.extent, s.segment.work]), s.segment.depth],
                       list(s.dims), list(s.imports)] for s in sources],
            "output_slots": output_slots,
            "output_shapes": [[_sizes(s.dims), s.dtype.str] for s in output_shapes],
            "temp_shapes": [[_sizes(s.dims), s.dtype.str] for s in temp_shapes],
            "limits": None if limits is None else [[encode(value), limit] for value, limit in limits],
            "constants": n_constants}


def _sizes(dims: Sequence[Dim]) -> list[list[int]]:
    return [encode(d) for d in dims]


def _dims(rows: list) -> tuple[Dim, ...]:
    return tuple(decode([int(i) for i in row])[0] for row in rows)


def _shapes(rows: list) -> list[Shape]:
    return [Shape(cast("tuple[int, ...]", _dims(dims)), np.dtype(dtype)) for dims, dtype in rows]


def load(key: str, n_params: int, constants: list[np.ndarray], target: str,
         level: int) -> CpuExecutable | ShapeGenericExecutable | None:
    """The executable stored under ``key`` by an earlier compile, or None (also when one
    of its kernels is no longer stored, or it takes constants other than ``constants``)."""
    entry = object_cache.load(key)
    if entry is None:
        return None
    _, meta = entry
    if meta.get("constants") != len(constants):
        return None
    try:
        slots = [(str(kind), int(i)) for kind, i in meta["output_slots"]]
        outputs, temps = _shapes(meta["output_shapes"]), _shapes(meta["temp_shapes"])
        steps = []
        found: dict[str, kernels.CompiledKernel] = {}
        for kernel_key, buffers, (extent, work, depth), dims, imports in meta["steps"]:
            kernel_key = str(kernel_key)
            kernel = found.get(kernel_key) or kernels.KERNELS.get(kernel_key)
            if kernel is None:
                kernel = kernels.load(kernels.disk_key(kernel_key, target), KERNEL_PREFIX + kernel_key, level)
                if kernel is None:
                    return None
                kernels.KERNELS.put(kernel_key, kernel)
            found[kernel_key] = kernel
            extent_value, work_value = _dims([extent, work])
            segment = Segment(extent_value, work_value, int(depth))
            steps.append(Step(kernel, tuple(int(b) for b in buffers), segment, tuple(int(d) for d in dims),
                              tuple(str(name) for name in imports if is_import(str(name)))))
        limits = meta["limits"]
        if limits is not None:
            bounds = [(decode([int(i) for i in value])[0], int(limit)) for value, limit in limits]
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    executable: CpuExecutable | ShapeGenericExecutable
    if limits is None:
        executable = CpuExecutable(steps, n_params, constants, slots, outputs, temps)
    else:
        executable = ShapeGenericExecutable(steps, n_params, constants, slots, outputs, temps, bounds)
    executable.from_disk = True
    return executable
