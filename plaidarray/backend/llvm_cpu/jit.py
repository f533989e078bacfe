"""The llvmlite JIT: the object code of each executable in an MCJIT engine of its own.

Code is optimised for the host CPU (name and features) at an optimisation level, 3
unless ``PLAIDARRAY_OPT_LEVEL`` (0-3) says otherwise; -O0 and -O3 must compute the
same results, which is how the tests check that generated code has no undefined
behaviour. Object code comes from ``codegen.py`` (run in this process or in a code
generator process: ``llvm/codegen_worker.py``) or from the persistent cache
(``object_cache.py``). Each executable owns an engine, created with a TargetMachine of
its own (an engine disposes of the one it is given, so engines sharing one crashed on
garbage collection), and closing it frees the machine code: removing a module from a
shared engine does not (MCJIT keeps its sections), so evicted executables leaked.
Library modules (vector_math's functions) live in engines kept for the whole process;
their symbols are published to the linker, which resolves them for every engine.
LLVM's global context is not thread-safe: all LLVM work holds ``codegen.LLVM_LOCK``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import llvmlite.binding as llvm

from ..llvm import codegen
from ..llvm.target import Target
from .targets import host

#: The engines holding the library (vector_math's functions), made once per process and
#: kept for good.
_library_engines: list[llvm.ExecutionEngine] = []


def _new_engine(level: int) -> llvm.ExecutionEngine:
    """An empty engine with a TargetMachine of its own (an engine disposes of the one it
    is given, so engines sharing one crashed on garbage collection)."""
    backing = llvm.parse_assembly("")
    backing.triple = host().triple
    return llvm.create_mcjit_compiler(backing, codegen.new_machine(host(), level))


def generate_library(texts: Sequence[str], target: Target, level: int, exported: Sequence[str]) -> tuple[bytes, list[str]]:
    """:func:`codegen.generate_library` in this process (ahead-of-time export, for any target)."""
    with codegen.LLVM_LOCK:
        return codegen.generate_library(texts, target, level, exported)


#: The engine of each live :class:`LoadedCode`, by its id. It is kept here rather than
#: on the LoadedCode: when a LoadedCode is garbage in a reference cycle (a jitted
#: function's closure, say), whatever only it refers to is garbage too, and Python
#: finalizes such objects in any order, which crashed when a module's LLVM context went
#: before its engine. From here an engine is released by :meth:`LoadedCode.close` alone.
_owned: dict[int, llvm.ExecutionEngine] = {}


class LoadedCode:
    """Object code in an engine of its own, freed with it by :meth:`close` or when the
    LoadedCode is collected: only the kernels it holds refer to it, and a run holds
    them, so no code is freed while it runs."""

    def __init__(self, engine: llvm.ExecutionEngine) -> None:
        with codegen.LLVM_LOCK:
            _owned[id(self)] = engine

    def address(self, function: str) -> int:
        """The address of ``function`` (0 if the code does not define it)."""
        with codegen.LLVM_LOCK:
            engine = _owned.get(id(self))
            return engine.get_function_address(function) if engine is not None else 0

    def close(self, _finalizing=sys.is_finalizing) -> None:
        if _finalizing():  # at exit the process frees everything, and LLVM may be gone
            return
        with codegen.LLVM_LOCK:
            engine = _owned.pop(id(self), None)
            if engine is not None:
                engine.close()

    __del__ = close


def load_library(code: bytes, symbols: list[str], level: int) -> None:
    """Load object code for good and make its functions ``symbols`` callable by every
    module and object loaded afterwards (vector_math's sin and cos). Each library object
    has an engine of its own, so one that does not define its symbols (a RuntimeError)
    is closed and leaves nothing behind."""
    with codegen.LLVM_LOCK:
        engine = _new_engine(level)
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        addresses = {symbol: engine.get_function_address(symbol) for symbol in symbols}
        missing = [symbol for symbol, address in addresses.items() if not address]
        if missing:
            engine.close()
            raise RuntimeError(f"llvm-cpu: library object code does not define {', '.join(missing)}")
        _library_engines.append(engine)
        for symbol, address in addresses.items():
            llvm.add_symbol(symbol, address)


def load_object(code: bytes, level: int) -> LoadedCode:
    """Give object code an engine of its own."""
    with codegen.LLVM_LOCK:
        engine = _new_engine(level)
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        return LoadedCode(engine)
