"""An executable as an entry of the persistent cache (``object_cache.py``): its steps, each
a kernel (by key; the kernels are entries of their own, ``kernels.py``), the buffers and
run-time sizes it runs on, its outputs and temporaries, and the constants its compile
bound as parameters (an FFT's twiddles), as the entry's payload when they are small; and
how an executable is made again from an entry. Sizes are stored as ``symbolic.encode``
writes them, run-time sizes of a shape-generic executable included."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np

from ...hlo.shape import Shape
from ...hlo.symbolic import Dim, decode, encode
from ..llvm import object_cache
from . import kernels
from .blas_lapack import is_import
from .executable import CpuExecutable, ShapeGenericExecutable, Step
from ..llvm.kernel_source import KERNEL_PREFIX, KernelSource, Segment


#: Bound constants of at most this many bytes in all are stored with the executable: a
#: load then needs none of the compiler's stages, where making them again ran the HLO
#: stages that bind them (~4 ms a load, and the import of the code generator). Larger
#: ones (a long transform's twiddles) cost less to make again than to read.
STORED_CONSTANT_BYTES = 1 << 20


def entry(sources: list[KernelSource], output_slots: list[tuple[str, int]], output_shapes: list[Shape],
          temp_shapes: list[Shape], limits: list[tuple[Dim, int]] | None,
          constants: list[np.ndarray], derived: Sequence[Dim] = ()) -> tuple[bytes, dict]:
    """What a cache entry holds: as metadata the steps, the output slots, the buffers'
    shapes, for a shape-generic executable the limits on its run-time sizes and the dims
    table entries binding computes (``ShapeGenericExecutable``), and the shapes
    of the constants the compile bound as parameters; as payload the constants' bytes, if
    they are small (``STORED_CONSTANT_BYTES``; else a load is given them again)."""
    stored = sum(c.nbytes for c in constants) <= STORED_CONSTANT_BYTES
    metadata = {"steps": [[s.key, list(s.buffers), [*_sizes([s.segment.extent, s.segment.work]), s.segment.depth],
                           list(s.dims), list(s.imports)] for s in sources],
                "output_slots": output_slots,
                "output_shapes": [[_sizes(s.dims), s.dtype.str] for s in output_shapes],
                "temp_shapes": [[_sizes(s.dims), s.dtype.str] for s in temp_shapes],
                "limits": None if limits is None else [[encode(value), limit] for value, limit in limits],
                "derived": _sizes(derived),
                "constants": [[list(c.shape), c.dtype.str] for c in constants],
                "constants_stored": stored}
    payload = b"".join(np.ascontiguousarray(c).tobytes() for c in constants) if stored else b""
    return payload, metadata


def _sizes(dims: Sequence[Dim]) -> list[list[int]]:
    return [encode(d) for d in dims]


def _dims(rows: list) -> tuple[Dim, ...]:
    return tuple(map(_dim, rows))


#: Sizes decoded, by their encoding: entries repeat a few (n, the product of two sizes),
#: and decoding one (a polynomial simplified) was a fifth of loading an op's kernel.
#: Emptied at ``KEPT_DECODED``.
_DECODED: dict[tuple[int, ...], Dim] = {}
KEPT_DECODED = 1024


def _dim(row: list) -> Dim:
    ints = tuple(map(int, row))
    found = _DECODED.get(ints)
    if found is None:
        if len(_DECODED) >= KEPT_DECODED:
            _DECODED.clear()
        found = _DECODED[ints] = decode(ints)[0]
    return found


def _shapes(rows: list) -> list[Shape]:
    return [Shape(cast("tuple[int, ...]", _dims(dims)), _dtype(dtype)) for dims, dtype in rows]


#: ``np.dtype`` of a dtype's ``str`` as entries store it: a few, met at every load, where
#: parsing the string again was ~1 us a buffer.
_dtype = functools.lru_cache(maxsize=64)(np.dtype)


def _stored_constants(payload: bytes, rows: list) -> list[np.ndarray] | None:
    """The constants an entry's payload holds (aligned copies), or None if it holds other bytes."""
    constants, offset = [], 0
    for dims, dtype in rows:
        constant = np.empty(tuple(int(d) for d in dims), np.dtype(dtype))
        end = offset + constant.nbytes
        if end > len(payload):
            return None
        constant.reshape(-1).view(np.uint8)[:] = np.frombuffer(payload, np.uint8, constant.nbytes, offset)
        constants.append(constant)
        offset = end
    return constants if offset == len(payload) else None


def load(key: str, n_params: int, constants: list[np.ndarray] | None, target: str,
         level: int) -> CpuExecutable | ShapeGenericExecutable | None:
    """The executable stored under ``key`` by an earlier compile, or None (also when one
    of its kernels is no longer stored, or it takes constants other than ``constants``).
    ``constants`` None: those the entry holds, if it holds them (else None: the caller
    makes them and asks again)."""
    entry = object_cache.load(key)
    if entry is None:
        return None
    return from_entry(*entry, n_params, constants, target, level)


def from_entry(payload: bytes, meta: dict, n_params: int, constants: list[np.ndarray] | None, target: str,
               level: int) -> CpuExecutable | ShapeGenericExecutable | None:
    """``load``'s executable, of an entry's payload and metadata (read from its file, or
    from the installation's catalogue of op kernels, ``op_catalogue.py``)."""
    try:
        rows = meta["constants"]
        if constants is None:
            constants = _stored_constants(payload, rows) if meta["constants_stored"] else None
        if constants is None or len(constants) != len(rows):
            return None
        slots = [(str(kind), int(i)) for kind, i in meta["output_slots"]]
        outputs, temps = _shapes(meta["output_shapes"]), _shapes(meta["temp_shapes"])
        steps = []
        found: dict[str, kernels.CompiledKernel] = {}
        described = meta.get(RESOLVED) or {}
        for kernel_key, buffers, (extent, work, depth), dims, imports in meta["steps"]:
            kernel_key = str(kernel_key)
            kernel = found.get(kernel_key) or kernels.KERNELS.get(kernel_key)
            if kernel is None:
                kernel_meta = described.get(kernel_key)
                kernel = (kernels.in_bundle(KERNEL_PREFIX + kernel_key, kernel_meta, level) if kernel_meta else
                          kernels.load(kernels.disk_key(kernel_key, target), KERNEL_PREFIX + kernel_key, level))
                if kernel is None:
                    return None
                kernels.KERNELS.put(kernel_key, kernel)
            found[kernel_key] = kernel
            extent_value, work_value = _dims([extent, work])
            segment = Segment(extent_value, work_value, int(depth))
            steps.append(Step(kernel, tuple(map(int, buffers)), segment, tuple(map(int, dims)),
                              tuple([str(name) for name in imports if is_import(str(name))]) if imports else ()))
        limits, derived = meta["limits"], _dims(meta["derived"])
        if limits is not None:
            bounds = [(_dim(value), int(limit)) for value, limit in limits]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None
    executable: CpuExecutable | ShapeGenericExecutable
    if limits is None:
        executable = CpuExecutable(steps, n_params, constants, slots, outputs, temps)
    else:
        executable = ShapeGenericExecutable(steps, n_params, constants, slots, outputs, temps, bounds, derived,
                                            stored=(meta["steps"], meta["output_shapes"], meta["temp_shapes"],
                                                    meta["derived"], limits))
    executable.from_disk = True
    return executable


#: The field of an installed executable's entry holding its kernels' entries' metadata
#: by kernel key (``resolve``).
RESOLVED = "kernels"


def resolve(directory: Path) -> int:
    """At installation, after ``bundles.unpack``: each executable's entry holds its
    kernels' metadata and their bundles' (``kernels.resolved``), so that a process loads
    an installed executable by reading one entry, not one for it, one a kernel and one a
    bundle (~0.1 ms of an op's first use). A kernel's entry is found by its symbol, where
    one entry alone defines it (the installation is built for one target). Returns the
    entries resolved."""
    entries = {key: (code, meta) for key, code, meta in object_cache.installed_entries(directory)}
    by_symbol: dict[str, list[dict]] = {}
    for _, meta in entries.values():
        if isinstance(meta.get("symbol"), str) and "bundle" in meta:
            by_symbol.setdefault(meta["symbol"], []).append(meta)
    count = 0
    for key, (code, meta) in entries.items():
        if "steps" not in meta or RESOLVED in meta:
            continue
        described: dict[str, dict] = {}
        for step in meta["steps"]:
            kernel_key = str(step[0])
            found = by_symbol.get(KERNEL_PREFIX + kernel_key, [])
            bundle = entries.get(str(found[0]["bundle"])) if len(found) == 1 else None
            kernel_meta = kernels.resolved(found[0], bundle[1]) if bundle is not None else None
            if kernel_meta is not None:
                described[kernel_key] = kernel_meta
        if described:
            object_cache.write_installed(directory, key, code, {**meta, RESOLVED: described})
            count += 1
    return count
