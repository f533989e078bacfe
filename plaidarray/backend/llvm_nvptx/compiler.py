"""The llvm-nvptx compiler (XLA's ``Compiler``): HLO modules to executables of PTX for an
NVIDIA GPU, run on a :class:`~.runtime.GpuRuntime` (the CUDA driver's, or the simulated
device's). Code is generated for the runtime's architecture, at -O3 unless told.

What it does not do yet: run-time sizes (every module compiles for its shapes) and
library calls (BLAS, LAPACK). The decompositions (``custom_call``) and the complex
functions of the C library run on the host by a round trip (``host_ops``); any other op
without GPU code is a NotImplementedError naming it. Executables and cubins are stored in
the persistent cache (``cache_entry.py``)."""

from __future__ import annotations

import itertools
import threading
from types import MappingProxyType, ModuleType

from ...hlo import Module
from ...hlo.fingerprint import digest, module_description
from .. import dump
from ..executable import Compiler, HostOpsError, runs_on_host
from ..llvm import lazy_import
from . import cache_entry
from .executable import GpuExecutable
from .runtime import GpuRuntime
from .targets import gpu

_counter = itertools.count()
_counter_lock = threading.Lock()


class NvptxCompiler(Compiler):
    """HLO module -> :class:`~.executable.GpuExecutable` on ``runtime``."""

    #: LAPACK's decompositions (until cuSOLVER is called) and the complex functions the
    #: host takes from its C library (libdevice has none) run on the host (docs/gpu.md).
    host_ops = MappingProxyType({"custom_call": "", **{name: "c" for name in (
        "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "power", "sin", "cos", "tan", "asin", "acos",
        "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh")}})

    def __init__(self, runtime: GpuRuntime, level: int = 3) -> None:
        self.runtime = runtime
        self.level = level
        self.target_object = gpu(runtime.architecture)
        #: The executable cache's key for it (``Backend.cache_tag``): its runtime's name and,
        #: since an executable holds its module and constants loaded on that runtime, the
        #: runtime object's identity too (its executables keep it alive, so no later runtime
        #: of the same name, such as a test's devices made again, takes its id while they live).
        self.target = f"{runtime.name}@{id(runtime):x}/{runtime.architecture}/O{level}"
        #: What the PTX depends on besides the module: the runtimes of one architecture share it.
        self.code_target = f"{self.target_object}/{self.target_object.features}/O{level}"

    def compile(self, module: Module) -> GpuExecutable:
        """The module's executable: from the persistent cache where an earlier compile
        stored it (``cache_entry.py``: no code generator), else compiled and stored."""
        held = sorted({i.opcode for i in module.entry.instructions if runs_on_host(self.host_ops, i.opcode, i.shape)})
        if held:  # what reaches the compiler so is a traced function's (jit): eager calls go round
            raise HostOpsError(
                f"llvm-nvptx has no code for {', '.join(held)}, which runs on the host by a round trip at "
                f"an eager call (trace/host_round_trip.py); a traced function (jit) cannot hold one")
        description = module_description(module)
        key = cache_entry.executable_key(description, self.code_target)
        if dump.dump_dir() is None:  # a dump shows every stage: compile, never load
            found = cache_entry.load_executable(key, self.runtime)
            if found is not None:
                return found
        with _counter_lock:
            name = f"plaid_{digest(description)}_{next(_counter)}"
        compile_module = lazy_import.imported(_stages).compile_module  # the code generator, on first use

        executable = compile_module(module, name, self.level, self.target_object, self.runtime)
        cache_entry.store_executable(key, executable)
        return executable


def _stages() -> ModuleType:
    """The code generator's module (``lazy_import``: imported at the first compile)."""
    from . import stages

    return stages
