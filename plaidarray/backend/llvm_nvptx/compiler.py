"""The llvm-nvptx compiler (XLA's ``Compiler``): HLO modules to executables of PTX for an
NVIDIA GPU, run on a :class:`~.runtime.GpuRuntime` (the CUDA driver's, or the simulated
device's). Code is generated for the runtime's architecture, at -O3 unless told.

What it does not do yet, each a NotImplementedError naming the op where a module needs
it: run-time sizes (every module compiles for its shapes) and library calls (BLAS,
LAPACK: no GPU lowering). Executables and cubins are stored in the persistent cache
(``cache_entry.py``)."""

from __future__ import annotations

import itertools
import threading

from ...hlo import Module
from ...hlo.fingerprint import digest, module_description
from .. import dump
from ..executable import Compiler
from . import cache_entry
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
        #: What the PTX depends on besides the module: the runtimes of one architecture share it.
        self.code_target = f"{self.target_object}/{self.target_object.features}/O{level}"

    def compile(self, module: Module) -> GpuExecutable:
        """The module's executable: from the persistent cache where an earlier compile
        stored it (``cache_entry.py``: no code generator), else compiled and stored."""
        description = module_description(module)
        key = cache_entry.executable_key(description, self.code_target)
        if dump.dump_dir() is None:  # a dump shows every stage: compile, never load
            found = cache_entry.load_executable(key, self.runtime)
            if found is not None:
                return found
        with _counter_lock:
            name = f"plaid_{digest(description)}_{next(_counter)}"
        from .stages import compile_module  # the code generator, on first use

        executable = compile_module(module, name, self.level, self.target_object, self.runtime)
        cache_entry.store_executable(key, executable)
        return executable
