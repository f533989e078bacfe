"""Where NVIDIA's tools are: ``ptxas`` (PTX to a cubin, and its register and spill report)
and libdevice (the math library as LLVM bitcode), from NVIDIA's PyPI wheel
``nvidia-cuda-nvcc-cu12`` (``pip install "plaidarray[cuda]"``), else a CUDA toolkit
(``CUDA_HOME``, ``/usr/local/cuda``), else ``ptxas`` on the ``PATH``. Found once a process."""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
from pathlib import Path

#: What to install when a tool is missing.
INSTALL_HINT = 'pip install "plaidarray[cuda]" (NVIDIA\'s nvidia-cuda-nvcc-cu12 wheel)'


def _roots() -> list[Path]:
    """The directories a toolkit may be in, in order: the wheel's, then a CUDA toolkit's."""
    roots = []
    spec = importlib.util.find_spec("nvidia.cuda_nvcc") if importlib.util.find_spec("nvidia") else None
    if spec is not None and spec.submodule_search_locations:
        roots += [Path(p) for p in spec.submodule_search_locations]
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(variable):
            roots.append(Path(os.environ[variable]))
    roots.append(Path("/usr/local/cuda"))
    return roots


@functools.cache
def ptxas() -> Path | None:
    """The ``ptxas`` executable, or None."""
    for root in _roots():
        if (root / "bin" / "ptxas").is_file():
            return root / "bin" / "ptxas"
    found = shutil.which("ptxas")
    return Path(found) if found else None


@functools.cache
def libdevice() -> Path | None:
    """libdevice's bitcode (``nvvm/libdevice/libdevice.10.bc``), or None."""
    for root in _roots():
        path = root / "nvvm" / "libdevice" / "libdevice.10.bc"
        if path.is_file():
            return path
    return None
