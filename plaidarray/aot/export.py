"""``plaidarray.export``: a traced function as a library for a target, with its C header
and manifest (docs/aot.md).

The function is traced as ``jit`` traces it, for the shapes and dtypes of the example
arguments; the backend's compiler generates its object code ahead of time
(``Compiler.compile_ahead_of_time``); then the target's tools package it
(``toolchain.py``). Written to ``out``: ``<name>.o``, ``lib<name>.a`` (with ``ar``),
``lib<name>.so`` (with a C compiler for the target), ``<name>.h`` and ``<name>.json``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..backend.executable import AotOptions, ExportError
from .header import header

#: The manifest's format: a loader refuses any other.
FORMAT = 1


def export(fn: Callable | Any, *example_args: Any, target: str = "host", name: str | None = None,
           out: str | Path = ".", cpu: str | None = None, features: str | None = None) -> Path:
    """Compile ``fn`` for the shapes and dtypes of ``example_args`` into a library for
    ``target`` ("host", "x86_64-linux-gnu", "aarch64-linux-gnu" or "riscv64-linux-gnu"),
    written to the directory ``out`` under ``name`` (default: the function's name);
    ``cpu`` and ``features`` (LLVM's names) override the target's defaults. ``fn`` may
    also be a jitted function's lowered form (``plaidarray.jit(f).lower(*args)``), whose
    arguments it was traced for. Returns ``out``; raises ExportError if the function or
    target cannot be exported."""
    from ..backend import registry
    from ..trace.jit import Lowered, jit
    from .toolchain import shared_library, static_library, tools_for  # subprocess and shutil: an export's alone

    lowered = fn if isinstance(fn, Lowered) else jit(fn).lower(*example_args)
    module = lowered.module
    parameters = module.entry.parameters
    n_inputs = len(parameters) - len(lowered.constants)
    name = name or _identifier(lowered.name)
    options = AotOptions(name, n_inputs, target, cpu, features)
    artifact = registry.current().compiler.compile_ahead_of_time(module, lowered.constants, options)

    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    obj = directory / f"{name}.o"
    obj.write_bytes(artifact.object_code)
    tools = tools_for(target, artifact.triple.split("-", 1)[0])
    static = directory / f"lib{name}.a"
    shared = directory / f"lib{name}.so"
    made_static = static_library(tools, obj, static)
    shared.unlink(missing_ok=True)
    why_not_shared = shared_library(tools, obj, shared)
    names = lowered.input_names
    manifest = {
        "format": FORMAT,
        "name": name,
        "versions": _versions(),
        "target": {"name": target, "triple": artifact.triple, "cpu": artifact.cpu, "features": artifact.features},
        "requires": [f[1:] for f in artifact.features.split(",") if f.startswith("+")],
        "inputs": [dict(name=n, **_entry(p.shape)) for n, p in zip(names, parameters[:n_inputs])],
        "outputs": [_entry(o.shape) for o in module.entry.outputs],
        "routines": list(artifact.routines),
        "needed": list(artifact.needed),
        "files": {"object": obj.name, "static": static.name if made_static else None,
                  "shared": shared.name if why_not_shared is None else None},
        "no_shared_library": why_not_shared,
    }
    (directory / f"{name}.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (directory / f"{name}.h").write_text(header(manifest))
    return directory


def _entry(shape: Any) -> dict[str, Any]:
    dtype = np.dtype(shape.dtype)
    dims = [int(d) for d in shape.dims]
    return {"dtype": dtype.name, "shape": dims, "bytes": int(np.prod(dims, dtype=np.int64)) * dtype.itemsize}


def _identifier(text: str) -> str:
    name = re.sub(r"\W", "_", text)
    if not name or name[0].isdigit():
        raise ExportError(f"cannot name a library after {text!r}: pass name=")
    return name


def _versions() -> dict[str, str]:
    import importlib.metadata

    versions = {}
    for package in ("plaidarray", "llvmlite", "numpy"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "unknown"
    return versions
