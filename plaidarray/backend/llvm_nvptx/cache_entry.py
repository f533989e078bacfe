"""llvm-nvptx's entries in the persistent cache (``backend/llvm/object_cache.py``, with its
ownership and integrity checks): a compiled module's PTX with what runs it, and the
cubins ptxas made of PTX.

A GPU module compiles for its shapes in 50-300 ms of LLVM (and the import of the code
generator, ~0.5 s, at a process's first), then ptxas assembles it (~100 ms, a process
of its own). A process meeting a module an earlier one compiled loads its entry
instead: no code generator, no LLVM; and the cubin of PTX assembled before, which the
driver loads in a fraction of a millisecond.

- An executable's entry (``executable_key``: the module's description and the target:
  architecture, PTX version, level) holds its PTX, then its bound constants' bytes, as
  payload; as metadata its steps (kernel symbol, buffer indices, the loop's extent, work
  and depth, the threads an iteration, the runs over the grid), its outputs and temporaries. A module whose constants pass
  ``STORED_CONSTANT_BYTES`` is not stored (they cost less to bind again than to read).
- A cubin's entry (``cubin_key``: the PTX's digest, the architecture, and the ptxas
  binary's path, size and modification time, which stand for its version) holds it.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np

from ...hlo.shape import Shape
from ..llvm import object_cache
from ..llvm.kernel_source import Segment
from .executable import GpuExecutable, Step
from .runtime import GpuRuntime

#: Bound constants of at most this many bytes in all are stored with an executable.
STORED_CONSTANT_BYTES = 1 << 20


def executable_key(description: str, target: str) -> str:
    """The key of the executable compiled from a module described by ``description``."""
    return object_cache.entry_key("nvptx-executable", description, target)


def store_executable(key: str, executable: GpuExecutable) -> None:
    """Store ``executable`` under ``key``, unless its constants are too large."""
    if sum(c.nbytes for c in executable.constants) > STORED_CONSTANT_BYTES:
        return
    ptx = executable.ptx.encode()
    metadata = {"ptx_bytes": len(ptx), "n_params": executable.n_params,
                "steps": [[s.symbol, list(s.buffers), [s.segment.extent, s.segment.work, s.segment.depth], s.lanes,
                           s.runs]
                          for s in executable.steps],  # sizes of a module compiled for its shapes: ints
                "output_slots": [list(slot) for slot in executable.output_slots],
                "output_shapes": _rows(executable.output_shapes), "temp_shapes": _rows(executable.temp_shapes),
                "constants": [[list(c.shape), c.dtype.str] for c in executable.constants]}
    payload = ptx + b"".join(np.ascontiguousarray(c).tobytes() for c in executable.constants)
    object_cache.store(key, payload, metadata)


def load_executable(key: str, runtime: GpuRuntime) -> GpuExecutable | None:
    """The executable stored under ``key``, on ``runtime``; None if there is none (or it is
    damaged: an entry that does not describe itself is a miss)."""
    entry = object_cache.load(key)
    if entry is None:
        return None
    payload, meta = entry
    try:
        end = int(meta["ptx_bytes"])
        ptx = payload[:end].decode()
        constants = []
        for dims, dtype in meta["constants"]:
            constant = np.empty(tuple(int(d) for d in dims), np.dtype(dtype))
            constant.reshape(-1).view(np.uint8)[:] = np.frombuffer(payload, np.uint8, constant.nbytes, end)
            constants.append(constant)
            end += constant.nbytes
        if end != len(payload):
            return None
        steps = [Step(str(symbol), tuple(int(b) for b in buffers), Segment(int(extent), int(work), int(depth)),
                      int(lanes), int(runs))
                 for symbol, buffers, (extent, work, depth), lanes, runs in meta["steps"]]
        slots = [(str(kind), int(i)) for kind, i in meta["output_slots"]]
        executable = GpuExecutable(ptx, steps, int(meta["n_params"]), constants, slots,
                                   _shapes(meta["output_shapes"]), _shapes(meta["temp_shapes"]), runtime)
    except (KeyError, TypeError, ValueError, IndexError, UnicodeDecodeError):
        return None
    executable.from_disk = True
    return executable


def _rows(shapes: list[Shape]) -> list[list[Any]]:
    return [[[int(d) for d in s.dims], s.dtype.str] for s in shapes]


def _shapes(rows: list[Any]) -> list[Shape]:
    return [Shape(tuple(int(d) for d in dims), np.dtype(dtype)) for dims, dtype in rows]


def cubin_key(ptx: str, architecture: str, tool: str) -> str:
    """The key of the cubin ptxas at ``tool`` makes of ``ptx`` for ``architecture``."""
    st = os.stat(tool)
    return object_cache.entry_key("cubin", hashlib.sha256(ptx.encode()).hexdigest(), architecture,
                                  f"{tool}:{st.st_size}:{st.st_mtime_ns}")


def load_cubin(key: str) -> bytes | None:
    entry = object_cache.load(key)
    return entry[0] if entry is not None and entry[1].get("cubin") is True and entry[0] else None


def store_cubin(key: str, cubin: bytes) -> None:
    object_cache.store(key, cubin, {"cubin": True})
