"""The llvmlite JIT: one MCJIT engine per process, one LLVM module added per kernel.

Code is optimised at O3 for the host CPU (name and features). A single engine with
``add_module`` per executable is used because engines sharing a TargetMachine crashed
on garbage collection; removing a module from the engine frees its machine code.
Object code from the persistent cache (``object_cache.py``) is added to the same
engine; MCJIT cannot remove object files, so each is loaded once and kept.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import llvmlite.binding as llvm

from . import lapack

_lock = threading.RLock()
_state: dict[str, object] = {}
#: Entry functions of the modules added by :func:`load` and not unloaded yet.
_modules: dict[str, llvm.ModuleRef] = {}
#: Function name -> address, for object code loaded so far (never unloaded).
_objects: dict[str, int] = {}
#: Modules added by :func:`load_library` (never unloaded).
_libraries: list[llvm.ModuleRef] = []


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
    target = llvm.Target.from_triple(triple)
    tm = target.create_target_machine(cpu=cpu, features=features, opt=3, codemodel="jitdefault")
    backing = llvm.parse_assembly("")
    backing.triple = triple
    _state.update(tm=tm, engine=llvm.create_mcjit_compiler(backing, tm),
                  target=Target(triple, cpu, features))


def host_target() -> Target:
    with _lock:
        _init()
        return _state["target"]


def optimize(module: llvm.ModuleRef) -> None:
    with _lock:
        _init()
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pb = llvm.create_pass_builder(_state["tm"], pto)
        pb.getModulePassManager().run(module, pb)


def compile_ir(text: str) -> llvm.ModuleRef:
    """Parse, verify and optimise LLVM IR text for the host."""
    with _lock:
        _init()
        module = llvm.parse_assembly(text)
        module.triple = _state["target"].triple
        module.data_layout = str(_state["tm"].target_data)
        module.verify()
        optimize(module)
        return module


def assembly(module: llvm.ModuleRef) -> str:
    with _lock:
        return _state["tm"].emit_assembly(module)


def load(module: llvm.ModuleRef, function: str) -> int:
    """Add ``module`` to the engine and return the address of ``function``."""
    with _lock:
        lapack.bind(f.name for f in module.functions if f.is_declaration)
        engine = _state["engine"]
        engine.add_module(module)
        engine.finalize_object()
        _modules[function] = module
        return engine.get_function_address(function)


def load_library(text: str) -> None:
    """Compile LLVM IR and add it to the engine for good: its external functions become
    callable by every module and object loaded afterwards (vector_math's sin and cos)."""
    with _lock:
        module = compile_ir(text)
        engine = _state["engine"]
        engine.add_module(module)
        engine.finalize_object()
        for fn in module.functions:
            if not fn.is_declaration and fn.linkage == llvm.Linkage.external:
                llvm.add_symbol(fn.name, engine.get_function_address(fn.name))
        _libraries.append(module)


def unload(module: llvm.ModuleRef) -> None:
    with _lock:
        if _state:
            _state["engine"].remove_module(module)
        for function, loaded in list(_modules.items()):
            if loaded is module:
                del _modules[function]


def emit_object(module: llvm.ModuleRef) -> bytes:
    """Object code of an optimised module, loadable by :func:`load_object` in any process
    on the same target."""
    with _lock:
        return _state["tm"].emit_object(module)


def load_object(code: bytes, function: str) -> int | None:
    """Add object code to the engine and return the address of ``function``; None when
    a module of this process still defines ``function`` (it is freed with its executable,
    so the object must not shadow it). The engine's own lookup cannot tell: it keeps
    returning the address of a removed module's function."""
    with _lock:
        if function in _objects:
            return _objects[function]
        if function in _modules:
            return None
        _init()
        engine = _state["engine"]
        lapack.bind_object(code)
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        address = engine.get_function_address(function)
        if address:
            _objects[function] = address
        return address or None
