"""The llvm-cpu compiler (XLA's ``Compiler``): HLO modules to executables of machine code
for the host, or ahead of time to object code for a platform (``aot.py``).

A module whose executable the persistent cache holds (``object_cache.py``: its steps,
``cache_entry.py``, and their kernels, ``kernels.py``) is loaded without the code
generator: the executable's key is read off the module itself, and kernels stored as
shared objects load with the platform's loader, so neither xDSL nor LLVM is imported
(a program whose code is all cached gets its first result in milliseconds). Anything
else runs the code generator's stages (``stages.py``), imported on first use.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Hashable, Sequence
from types import ModuleType

import numpy as np

from ...cached_property import cached_property
from ...hlo import Instruction, Module
from ...hlo.fingerprint import digest, module_description
from ...hlo.shape import Shape, TupleShape
from ...hlo.symbolic import Dim
from .. import dump
from ..executable import AotArtifact, AotOptions, Call, Compiler, Executable, ListedKernel
from ..llvm import lazy_import, object_cache
from . import cache_entry, fft_library, op_catalogue
from .call_by_call import call_by_call
from .executable import CpuExecutable
from .host import host_id, opt_level
from .sequence import merge
from .tiering import SCALAR_MAX_ELEMENTS

#: LLVM's optimisation levels, as in ``clang -O<level>``.
OPT_LEVELS = (0, 1, 2, 3)

_counter = itertools.count()
_counter_lock = threading.Lock()


class CpuCompiler(Compiler):
    """HLO module -> :class:`CpuExecutable` for the host CPU, optimised at ``opt_level``
    (default: ``PLAIDARRAY_OPT_LEVEL``, else 3); a module with run-time sizes ->
    :class:`ShapeGenericExecutable`."""

    shape_generic = True
    #: First-tier code for kernels this small is unoptimised scalar code (``tiering.py``),
    #: whose loops cost the same with run-time bounds.
    generic_first_elements = SCALAR_MAX_ELEMENTS
    #: The ops whose lowering takes no run-time size (``codegen.lowering.shape_generic``;
    #: a test checks that the two agree).
    per_shape_ops = frozenset({"conditional", "fft", "while"})
    sized_ops = frozenset({"fft"})
    #: The ops whose lowering needs run-time sizes of at least 1 (``codegen.lowering.empty_sizes``;
    #: a test checks that the two agree).
    empty_sizes = True
    nonempty_ops = frozenset({"argsort", "cumulative", "custom_call", "dot_general", "dynamic_update_slice", "scatter",
                              "searchsorted", "take", "take_along_axis"})
    #: The ops whose lowering asks whether a run-time size is 1 (``codegen.lowering.unit_sizes``;
    #: a test checks that the two agree).
    unit_sizes = True
    nonunit_ops = frozenset({"broadcast_in_dim", "dot_general"})

    def __init__(self, opt_level: int | None = None) -> None:
        self._opt_level = opt_level

    @cached_property
    def opt_level(self) -> int:
        level = opt_level() if self._opt_level is None else self._opt_level
        if level not in OPT_LEVELS:
            raise ValueError(f"llvm-cpu: optimisation level must be one of {OPT_LEVELS}, got {level!r}")
        return level

    @cached_property
    def target(self) -> str:  # type: ignore[override]  # Compiler.target, looked up on first use
        return f"{host_id()}/O{self.opt_level}"

    def compile(self, module: Module) -> Executable:
        description = module_description(module)
        key = object_cache.entry_key("executable", description, self.target)
        if dump.dump_dir() is None:  # a dump shows every stage: compile, never load
            executable = self._load(key, module)
            if executable is not None:
                return executable
        with _counter_lock:
            name = f"plaid_{digest(description)}_{next(_counter)}"
        compile_module = lazy_import.imported(_stages).compile_module  # the code generator, on first use

        return compile_module(module, name, key, self.opt_level, self.target)

    def cached(self, module: Module) -> Executable | None:
        key = object_cache.entry_key("executable", module_description(module), self.target)
        return self._load(key, module)

    def listed(self, signature: Hashable) -> ListedKernel | None:
        """The op kernel of ``signature`` in the installation's catalogue (``op_catalogue.py``)."""
        if dump.dump_dir() is not None:  # a dump shows every stage: compile, never load
            return None
        found = op_catalogue.find(signature, self.target)
        if found is None:
            return None
        target, level = self.target, self.opt_level
        return ListedKernel(found.symbol_of, found.n_symbols, found.units,
                            lambda: cache_entry.from_entry(b"", found.meta, found.n_params, None, target, level))

    def list_op_kernel(self, signature: Hashable, module: Module, pattern: tuple[Sequence[int | None], int,
                                                                                   frozenset[int]]) -> None:
        """Record ``module``'s entry for the installation's catalogue (``op_catalogue.record``)."""
        key = object_cache.entry_key("executable", module_description(module), self.target)
        op_catalogue.record(signature, key, pattern, len(module.entry.parameters), self.target)

    def _load(self, key: str, module: Module) -> Executable | None:
        object_cache.wait_stored(key)  # compiled here before, and still being stored
        return cache_entry.load(key, len(module.entry.parameters), None, self.target, self.opt_level)

    def without_compiling(self, module: Module) -> Executable | None:
        """A module whose results are all empty (no code: its run allocates them), or an
        ``fft`` alone of a length the FFT library serves (``fft_library.py``)."""
        outputs = module.entry.outputs
        if not module.n_symbols and outputs and all(not isinstance(o.shape, TupleShape) and o.shape.size == 0
                                                    for o in outputs):
            return CpuExecutable([], len(module.entry.parameters), [], [("out", i) for i in range(len(outputs))],
                                 [o.shape for o in outputs], [])
        return fft_library.executable(module, self)

    def sequence(self, calls: Sequence[Call], n_params: int, constants: Sequence[np.ndarray],
                 shapes: Sequence[Shape], outputs: Sequence[int]) -> Executable:
        """The calls' kernels as one executable's steps (``sequence.py``): one call into C a run."""
        return merge(calls, n_params, constants, shapes, outputs) or \
            super().sequence(calls, n_params, constants, shapes, outputs)

    def sized_kernel(self, inst: Instruction, operand: Shape,
                     result: Shape) -> tuple[Executable, tuple[Dim, ...]] | None:
        """An ``fft`` as a call of a shape-generic sequence: its FFT library template,
        which plans per length when bound (``fft_library.py``)."""
        return fft_library.sized_kernel(inst, operand, result, self)

    def generic_sequence(self, calls: Sequence[Call], n_params: int, constants: Sequence[np.ndarray],
                         shapes: Sequence[Shape], outputs: Sequence[int], n_symbols: int) -> Executable | None:
        """The calls' kernels as one shape-generic executable's steps (``sequence.py``);
        without symbols of its own (a graph's op kernels at its sizes), of small values,
        run call by call until it runs again (``call_by_call.py``)."""
        if not n_symbols:
            made = call_by_call(calls, n_params, constants, shapes, outputs)
            if made is not None:
                return made
        return merge(calls, n_params, constants, shapes, outputs, n_symbols)

    def compile_ahead_of_time(self, module: Module, constants: Sequence[np.ndarray],
                              options: AotOptions) -> AotArtifact:
        """Object code for the host or one of ``targets.PLATFORMS`` (``aot.py``)."""
        from .aot import compile_ahead_of_time  # the code generator, on first use

        return compile_ahead_of_time(module, constants, options)


def _stages() -> ModuleType:
    """The code generator's module (``lazy_import``: imported at the first compile)."""
    from . import stages

    return stages
