"""The llvmlite JIT: the code of each executable in an MCJIT engine of its own.

Code is optimised for the host CPU (name and features) at an optimisation level, 3
unless ``PLAIDARRAY_OPT_LEVEL`` (0-3) says otherwise; -O0 and -O3 must compute the
same results, which is how the tests check that generated code has no undefined
behaviour. Each executable owns an engine, created with a TargetMachine of its own
(an engine disposes of the one it is given, so engines sharing one crashed on garbage
collection), and closing it frees the machine code: removing a module from a shared
engine does not (MCJIT keeps its sections), so evicted executables leaked. Object code
from the persistent cache (``object_cache.py``) loads into an engine the same way.
Library modules (vector_math's functions) live in one engine for the whole process;
their symbols are published to the linker, which resolves them for every engine.
LLVM's global context is not thread-safe, so one lock serialises all LLVM work here.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

import llvmlite.binding as llvm

from . import blas_lapack

#: The optimisation levels, as in ``clang -O<level>``, and the default.
OPT_LEVELS = (0, 1, 2, 3)
DEFAULT_OPT_LEVEL = 3

_lock = threading.RLock()
_state: dict[str, object] = {}
#: TargetMachines by optimisation level, for optimising and emitting (never given to an engine).
_machines: dict[int, llvm.TargetMachine] = {}
#: Modules added by :func:`load_library` (never unloaded).
_libraries: list[llvm.ModuleRef] = []


def opt_level() -> int:
    """The optimisation level ``PLAIDARRAY_OPT_LEVEL`` asks for (default 3)."""
    configured = os.environ.get("PLAIDARRAY_OPT_LEVEL", "").strip()
    if not configured:
        return DEFAULT_OPT_LEVEL
    if configured not in {str(level) for level in OPT_LEVELS}:
        raise ValueError(f"PLAIDARRAY_OPT_LEVEL must be one of {', '.join(map(str, OPT_LEVELS))}, "
                         f"got {configured!r}")
    return int(configured)


@dataclass(frozen=True)
class Target:
    triple: str
    cpu: str
    features: str

    def __str__(self) -> str:
        return f"{self.triple}/{self.cpu}"


def _init() -> None:
    if _state:
        return
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    triple = llvm.get_process_triple()
    cpu = llvm.get_host_cpu_name()
    features = llvm.get_host_cpu_features().flatten()
    if "+avx512f" in features.split(","):
        # LLVM's Intel tunings cap vectors at 256 bits to avoid AVX-512 frequency drops;
        # the polynomial math of vector_math.py runs 1.5-2x faster at 512 bits.
        features += ",-prefer-256-bit"
    _state["target"] = Target(triple, cpu, features)


def _new_machine(level: int) -> llvm.TargetMachine:
    target = _state["target"]
    return llvm.Target.from_triple(target.triple).create_target_machine(
        cpu=target.cpu, features=target.features, opt=level, codemodel="jitdefault")


def _machine(level: int) -> llvm.TargetMachine:
    if level not in OPT_LEVELS:
        raise ValueError(f"optimisation level must be one of {OPT_LEVELS}, got {level!r}")
    if level not in _machines:
        _machines[level] = _new_machine(level)
    return _machines[level]


def _new_engine(module: llvm.ModuleRef, level: int) -> llvm.ExecutionEngine:
    """An engine owning ``module`` and a TargetMachine of its own."""
    return llvm.create_mcjit_compiler(module, _new_machine(level))


def host_target() -> Target:
    with _lock:
        _init()
        return _state["target"]


def optimize(module: llvm.ModuleRef, level: int) -> None:
    with _lock:
        _init()
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pto.loop_vectorization = level > 1
        pto.slp_vectorization = level > 1
        pb = llvm.create_pass_builder(_machine(level), pto)
        pb.getModulePassManager().run(module, pb)


def compile_ir(text: str, level: int) -> llvm.ModuleRef:
    """Parse, verify and optimise LLVM IR text for the host at ``level``, in an LLVM
    context of its own: a context keeps every type and constant ever made in it, so
    executables sharing the global one would never give that memory back."""
    with _lock:
        _init()
        module = llvm.parse_assembly(text, llvm.create_context())
        module.triple = _state["target"].triple
        module.data_layout = str(_machine(level).target_data)
        module.verify()
        optimize(module, level)
        return module


def assembly(module: llvm.ModuleRef, level: int) -> str:
    with _lock:
        return _machine(level).emit_assembly(module)


#: The engine and context of each live :class:`LoadedCode`, by its id. They are kept
#: here rather than on the LoadedCode: when a LoadedCode is garbage in a reference
#: cycle (a jitted function's closure, say), whatever only it refers to is garbage too,
#: and Python finalizes such objects in any order; a context disposed before its engine
#: frees the engine's module first, and the engine's disposal then crashes. From here
#: they are released by :meth:`LoadedCode.close` alone, engine first.
_owned: dict[int, tuple[llvm.ExecutionEngine, llvm.ContextRef | None]] = {}


class LoadedCode:
    """Machine code of one executable in its own engine (and LLVM context), freed with
    both by :meth:`close` or when the LoadedCode is collected: only its executable
    refers to it, and a run holds the executable, so no code is freed while it runs."""

    def __init__(self, engine: llvm.ExecutionEngine, context: llvm.ContextRef | None, function: str) -> None:
        self.address = engine.get_function_address(function)
        with _lock:
            _owned[id(self)] = (engine, context)

    def close(self, _finalizing=sys.is_finalizing) -> None:
        if _finalizing():  # at exit the process frees everything, and LLVM may be gone
            return
        with _lock:
            engine, context = _owned.pop(id(self), (None, None))
            if engine is not None:
                engine.close()
            if context is not None:
                context.close()

    __del__ = close


def load(module: llvm.ModuleRef, function: str, level: int) -> LoadedCode:
    """Give ``module`` (compiled at ``level``) an engine of its own and find ``function``."""
    with _lock:
        blas_lapack.bind(f.name for f in module.functions if f.is_declaration)
        engine = _new_engine(module, level)
        engine.finalize_object()
        return LoadedCode(engine, module._context, function)


def load_library(text: str) -> None:
    """Compile LLVM IR (at the level of the environment) and keep it for good: its
    external functions become callable by every module and object loaded afterwards
    (vector_math's sin and cos)."""
    with _lock:
        level = opt_level()
        module = compile_ir(text, level)
        engine = _state.get("library_engine")
        if engine is None:
            backing = llvm.parse_assembly("")
            backing.triple = _state["target"].triple
            engine = _state["library_engine"] = _new_engine(backing, level)
        engine.add_module(module)
        engine.finalize_object()
        for fn in module.functions:
            if not fn.is_declaration and fn.linkage == llvm.Linkage.external:
                llvm.add_symbol(fn.name, engine.get_function_address(fn.name))
        _libraries.append(module)


def emit_object(module: llvm.ModuleRef, level: int) -> bytes:
    """Object code of an optimised module, loadable by :func:`load_object` in any process
    on the same target."""
    with _lock:
        return _machine(level).emit_object(module)


def load_object(code: bytes, function: str, level: int) -> LoadedCode | None:
    """Give object code an engine of its own and find ``function`` (None if the code
    does not define it)."""
    with _lock:
        _init()
        blas_lapack.bind_object(code)
        backing = llvm.parse_assembly("")
        backing.triple = _state["target"].triple
        engine = _new_engine(backing, level)
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        loaded = LoadedCode(engine, None, function)
        if not loaded.address:
            loaded.close()
            return None
        return loaded
