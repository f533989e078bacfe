"""The llvm-nvptx compiler (XLA's ``Compiler``): HLO modules to executables of PTX for an
NVIDIA GPU, run on a :class:`~.runtime.GpuRuntime` (the CUDA driver's, or the simulated
device's). Code is generated for the runtime's architecture, at -O3 unless told.

What it does not do yet, each a NotImplementedError naming the op where a module needs
it: run-time sizes (every module compiles for its shapes), library calls (BLAS, LAPACK,
sorts: no GPU lowering), and the persistent cache (each process generates its PTX)."""

from __future__ import annotations

import itertools
import threading

from ...hlo import Module
from ...hlo.fingerprint import digest, module_description
from ..executable import Compiler
from .executable import GpuExecutable
from .runtime import GpuRuntime
from .targets import gpu

_counter = itertools.count()
_counter_lock = threading.Lock()


class NvptxCompiler(Compiler):
    """HLO module -> :class:`~.executable.GpuExecutable` on ``runtime``."""

    def __init__(self, runtime: GpuRuntime, level: int = 3) -> None:
        self.runtime = runtime
        self.level = level
        self.target_object = gpu(runtime.architecture)
        self.target = f"{runtime.name}/{runtime.architecture}/O{level}"

    def compile(self, module: Module) -> GpuExecutable:
        with _counter_lock:
            name = f"plaid_{digest(module_description(module))}_{next(_counter)}"
        from .stages import compile_module  # the code generator, on first use

        return compile_module(module, name, self.level, self.target_object, self.runtime)
