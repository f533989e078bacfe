"""The llvm-nvptx compiler (XLA's ``Compiler``): HLO modules to executables of PTX for an
NVIDIA GPU, run on a :class:`~.runtime.GpuRuntime` (the CUDA driver's, or the simulated
device's). Code is generated for the runtime's architecture, at -O3 unless told.

What it does not do yet: run-time sizes (every module compiles for its shapes) and
LAPACK's calls. Matrix products are cuBLAS calls between a graph's executables where the
runtime has cuBLAS (``device_call``, ``matrix_products.py``). The decompositions
(``custom_call``) and the complex functions of the C library run on the host by a round
trip (``host_ops``); any other op without GPU code is a NotImplementedError naming it.
Executables and cubins are stored in the persistent cache (``cache_entry.py``)."""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any, cast

from ...hlo import Module
from ...hlo.fingerprint import digest, module_description
from ...hlo.shape import Shape
from .. import dump
from ..executable import Compiler, HostOpsError, runs_on_host
from ..llvm import lazy_import
from . import cache_entry, matrix_products
from .executable import GpuExecutable
from .runtime import DeviceArray, GpuRuntime
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

    #: Matrix products by cuBLAS (``matrix_products.py``), where the runtime has it.
    device_call_ops = frozenset({"dot_general"})

    def device_call(self, op: str, shape: Shape, operands: tuple[Shape, ...], attrs: Mapping
                    ) -> Callable[[list], Any] | None:
        if op != "dot_general" or not self.runtime.has_blas:
            return None
        gemm = matrix_products.plan(shape, cast("tuple[Shape, Shape]", operands), attrs)
        return None if gemm is None else functools.partial(_product, self.runtime, gemm)

    def compile(self, module: Module) -> GpuExecutable:
        """The module's executable: from the persistent cache where an earlier compile
        stored it (``cache_entry.py``: no code generator), else compiled and stored."""
        held = sorted({i.opcode for i in module.entry.instructions if runs_on_host(self.host_ops, i.opcode, i.shape)})
        if held:  # what reaches the compiler so is a traced function's (jit): eager calls go round
            raise HostOpsError(
                f"llvm-nvptx has no code for {', '.join(held)}, which runs on the host by a round trip at "
                f"an eager call (trace/host_round_trip.py); a traced function (jit) cannot hold one")
        calls = sorted({i.opcode for i in module.entry.instructions if i.opcode in self.device_call_ops and
                        self.device_call(i.opcode, i.shape, tuple(o.shape for o in i.operands), i.attrs)})
        if calls:  # the same: a library call runs between a graph's executables, at an eager call
            raise HostOpsError(
                f"llvm-nvptx computes {', '.join(calls)} by a library call between executables at an eager "
                f"call (backend/llvm_nvptx/matrix_products.py); a traced function (jit) cannot hold one")
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


def _product(runtime: GpuRuntime, gemm: matrix_products.Gemm, buffers: list) -> DeviceArray:
    return matrix_products.run(runtime, gemm, *buffers)


def _stages() -> ModuleType:
    """The code generator's module (``lazy_import``: imported at the first compile)."""
    from . import stages

    return stages
