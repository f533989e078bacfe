"""``plaidarray.aot.load``: an exported library run from Python without the compiler.

Neither xDSL nor llvmlite is imported: the library is a shared object the platform's
loader maps (``ctypes``). Before any of its code runs, the loader checks that this
machine has the processor the library was generated for (its architecture and every CPU
feature in its manifest, ``cpu_features.py``: a library using AVX-512 on a machine
without would die of SIGILL) and, at each call, that the arguments have the shapes and
dtypes it was exported for. BLAS and LAPACK routines it imports come from SciPy, as the
JIT's do (``blas_lapack.py``).
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path
from typing import Any

import numpy as np

from ..backend.llvm_cpu import cpu_features
from .export import FORMAT


class LoadError(RuntimeError):
    """A library that cannot run here: another format, another processor, no shared object."""


class Artifact:
    """An exported function, loaded: call it with arrays (anything ``np.asarray`` takes)
    of the exported shapes and dtypes; it returns a new NumPy array per result (one
    array, or a tuple of several)."""

    def __init__(self, manifest: dict[str, Any], library: ctypes.CDLL) -> None:
        self.manifest = manifest
        self._library = library
        name = manifest["name"]
        self._run = getattr(library, f"{name}_run")
        self._run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self._run.restype = ctypes.c_int
        self._inputs = [(e["name"], np.dtype(e["dtype"]), tuple(e["shape"])) for e in manifest["inputs"]]
        self._outputs = [(np.dtype(e["dtype"]), tuple(e["shape"])) for e in manifest["outputs"]]
        if manifest["routines"]:
            from ..backend.llvm_cpu.blas_lapack import routine_address

            table = (ctypes.c_void_p * len(manifest["routines"])).in_dll(library, f"{name}_routines")
            for i, routine in enumerate(manifest["routines"]):
                table[i] = routine_address(routine)

    def __call__(self, *args: Any) -> np.ndarray | tuple[np.ndarray, ...]:
        name = self.manifest["name"]
        if len(args) != len(self._inputs):
            raise TypeError(f"{name} takes {len(self._inputs)} arguments, got {len(args)}")
        arrays = []
        for i, (arg, (arg_name, dtype, shape)) in enumerate(zip(args, self._inputs)):
            array = np.asarray(arg)
            if array.dtype != dtype or array.shape != shape:
                raise ValueError(f"{name}: argument {i} ({arg_name!r}) must be {dtype.name}{list(shape)}, "
                                 f"got {array.dtype.name}{list(array.shape)}")
            arrays.append(np.ascontiguousarray(array))
        results = [np.empty(shape, dtype) for dtype, shape in self._outputs]
        inputs = (ctypes.c_void_p * max(len(arrays), 1))(*(a.ctypes.data for a in arrays))
        outputs = (ctypes.c_void_p * max(len(results), 1))(*(r.ctypes.data for r in results))
        status = self._run(inputs, outputs)
        if status == 1:
            raise MemoryError(f"{name}: its temporary buffers could not be allocated")
        if status != 0:
            raise RuntimeError(f"{name}_run returned {status}")
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self) -> str:
        target = self.manifest["target"]
        return f"<plaidarray.aot.Artifact {self.manifest['name']} for {target['triple']} ({target['cpu']})>"


def load(directory: str | Path, name: str | None = None) -> Artifact:
    """The library exported to ``directory`` (under ``name``, needed only if the
    directory holds several), checked against this machine's processor."""
    directory = Path(directory)
    manifests = [directory / f"{name}.json"] if name else sorted(directory.glob("*.json"))
    if len(manifests) != 1 or not manifests[0].is_file():
        raise LoadError(f"{directory} holds {len(manifests)} exported libraries' manifests; pass name=")
    manifest = json.loads(manifests[0].read_text())
    if manifest.get("format") != FORMAT:
        raise LoadError(f"{manifests[0]} is not a manifest of format {FORMAT}")
    target = manifest["target"]
    lacking = cpu_features.missing(manifest["requires"], target["triple"].split("-", 1)[0])
    if lacking:
        raise LoadError(f"{manifest['name']} was generated for {target['triple']} ({target['cpu']}); this machine "
                        f"lacks {', '.join(lacking)}")
    shared = manifest["files"]["shared"]
    if shared is None:
        raise LoadError(f"{manifest['name']} has no shared library ({manifest['no_shared_library']})")
    return Artifact(manifest, ctypes.CDLL(str(directory / shared), mode=ctypes.RTLD_LOCAL))
