"""An executable as an entry of the persistent cache (``object_cache.py``): what is stored
besides its object code (the function's name, its buffers and its segments), and how
an executable is made again from an entry."""

from __future__ import annotations

import numpy as np

from ...hlo.shape import Shape
from . import jit, object_cache, tiering, vector_math
from .executable import CpuExecutable
from .llvm_emitter import Segment


def metadata(symbol: str, output_slots: list[tuple[str, int]], output_shapes: list[Shape],
             temp_shapes: list[Shape], segments: list[Segment]) -> dict:
    """What a cache entry holds besides the object code: the function, its buffers and
    its segments."""
    return {"symbol": symbol, "output_slots": output_slots,
            "output_shapes": [[list(s.dims), s.dtype.str] for s in output_shapes],
            "temp_shapes": [[list(s.dims), s.dtype.str] for s in temp_shapes],
            "segments": [[s.extent, s.work, s.depth] for s in segments]}


def _shapes(rows: list) -> list[Shape]:
    return [Shape(tuple(dims), np.dtype(dtype)) for dims, dtype in rows]


def load(key: str, n_params: int, constants: list[np.ndarray], n_bound: int, level: int) -> CpuExecutable | None:
    """The executable stored under ``key`` by an earlier compile, or None."""
    entry = object_cache.load(key)
    if entry is None:
        return None
    code, meta = entry
    try:
        slots = [(str(kind), int(i)) for kind, i in meta["output_slots"]]
        outputs, temps = _shapes(meta["output_shapes"]), _shapes(meta["temp_shapes"])
        segments = [Segment(*(int(field) for field in row)) for row in meta["segments"]]
        vector_math.load_libraries_for(code)
        loaded = jit.load_object(code, str(meta["symbol"]), level)
    except (KeyError, TypeError, ValueError, RuntimeError):
        return None
    if loaded is None:
        return None
    executable = CpuExecutable(loaded, n_params, constants, slots, outputs, temps,
                               n_bound + len(outputs) + len(temps), segments)
    executable.from_disk = True
    ir = meta.get("ir")
    if isinstance(ir, str) and tiering.first_tier(level):
        full = {name: value for name, value in meta.items() if name != "ir"}
        executable.upgrade = tiering.Upgrade(ir, str(meta["symbol"]), level, key, full)
    return executable
