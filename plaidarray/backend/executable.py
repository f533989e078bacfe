"""The roles of XLA's backend guide: a ``Compiler`` turns an HLO module into an
``Executable`` (JIT, for the host) or into object code for a target (ahead of time,
``AotOptions`` -> ``AotArtifact``); an ``Executable`` runs on device buffers; a
``Backend`` bundles them with a name and a priority for the registry."""

from __future__ import annotations

import abc
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from ..cached_property import cached_property
from ..hlo import Instruction, Module
from ..hlo.shape import Shape
from ..hlo.symbolic import Dim


class NotShapeGeneric(NotImplementedError):
    """A shape-generic computation (``hlo/symbolic.py``) has an op whose lowering cannot
    take run-time sizes: it compiles per shape instead."""


class HostOpsError(NotImplementedError):
    """A module holds ops its compiler has no code for and runs only on the host, by a
    round trip at an eager call (``Compiler.host_ops``): a traced function's (``jit``
    then runs that function eagerly)."""


def runs_on_host(host_ops: Mapping[str, str], op: str | None, shape: Shape) -> bool:
    """Whether an op of result ``shape`` is one of a compiler's ``host_ops``: listed for its
    result's dtype kind, or for every kind (``""``; a tuple-shaped ``custom_call``'s)."""
    kinds = host_ops.get(op) if op is not None else None
    return kinds is not None and (not kinds or shape.dtype.kind in kinds)


class ExportError(ValueError):
    """A computation cannot be compiled ahead of time as asked (an unknown target, an op
    without code for it, a name that is no C identifier)."""


@dataclass(frozen=True)
class AotOptions:
    """What an ahead-of-time compile is for (XLA's ``AotCompilationOptions``): ``target``
    is ``"host"`` or the name of one of the compiler's targets, ``cpu`` and ``features`` override
    its defaults (LLVM's names), ``name`` prefixes the library's C symbols, and the first
    ``inputs`` of the entry's parameters are the caller's (the others are constants)."""

    name: str
    inputs: int
    target: str = "host"
    cpu: str | None = None
    features: str | None = None


@dataclass(frozen=True)
class AotArtifact:
    """Object code defining ``int <name>_run(const void *const *inputs, void *const
    *outputs)`` and ``void *<name>_routines[]``, for ``triple``/``cpu``/``features``:
    ``needed`` are the symbols it takes from elsewhere (the C library's), ``routines``
    the library routines (BLAS, LAPACK) the program puts in ``<name>_routines``, in order."""

    object_code: bytes
    triple: str
    cpu: str
    features: str
    needed: tuple[str, ...]
    routines: tuple[str, ...]


class Executable(abc.ABC):
    """A compiled HLO module, callable on buffers laid out by the transfer layer."""

    #: True when the code was loaded from a persistent cache instead of being compiled.
    from_disk: bool = False
    #: False when every result is a buffer the run made (never a parameter passed
    #: through), which spares a read the check of which results are its inputs.
    returns_parameters: bool = True
    #: True where its ``prepared`` run costs less to make than a run through Python (its
    #: parts are prepared already, or a runner's ~1.3 us): a caller takes it at once, not
    #: after its second run (``trace/baseline.py``'s ``PREPARED_AFTER``).
    prepared_cheaply: bool = False

    @abc.abstractmethod
    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        """Run on one buffer per entry parameter; return one buffer per output."""

    def bind(self, values: Sequence[int]) -> Executable | None:
        """A shape-generic executable's executable for the sizes ``values`` (its symbols'
        values, ``hlo/symbolic.py``), or None if it does not take them."""
        raise TypeError(f"{type(self).__name__} has no run-time sizes to bind")

    def runner(self, values: Sequence[int]) -> Executable | None:
        """``bind``'s executable, for a caller that only runs it (never merges it into a
        sequence): a backend may make it lighter."""
        return self.bind(values)

    def prepared(self, timed: Any = None) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        """Its run made once for the runs after it, the seconds each takes added to
        ``timed.seconds`` (unless None): a backend may make a run cheaper once it is known
        to run again (llvm-cpu: the allocators and the kernels' call in one C object,
        ``_entry.Prepared``). None where it makes none."""
        return None

    def any_size(self, n_values: int, timed: Any) -> Callable[[list[int]], Any] | None:
        """A shape-generic executable's runs at any sizes without ``runner``'s objects: a
        callable of its ``n_values`` symbols' values that returns an object whose
        ``run(buffers)`` runs it at them as ``runner``'s executable would (adding the
        seconds to ``timed.seconds``), or None for sizes it leaves to ``runner``. None
        where a backend makes none (llvm-cpu: ``_entry.AnySize``)."""
        return None

    def serves(self, values: Sequence[int]) -> bool:
        """Whether a shape-generic executable serves the sizes ``values`` as a class: an
        op of ``Compiler.sized_ops`` within it may serve some of the sizes its pattern
        matches only (an FFT template, lengths of one parity). Its ``bind`` may still
        refuse sizes past its limits."""
        return True


class Call(NamedTuple):
    """One executable run within a sequence (``Compiler.sequence``): ``inputs`` are the
    sequence's values it runs on, one per entry parameter, seen with the dimensions
    ``input_dims`` (the same elements in row-major order: an elementwise op's flattened,
    a value reshaped), and ``outputs`` the values its results are, one per result. A
    named tuple: a new graph's assembly makes one per op, which as a frozen dataclass
    cost ~1 us each."""

    executable: Executable
    inputs: tuple[int, ...]
    input_dims: tuple[tuple[int, ...], ...]
    outputs: tuple[int, ...]
    #: For a shape-generic executable, the value of each of its run-time sizes in the
    #: sequence's own (``Compiler.sequence``'s ``n_symbols``).
    symbols: tuple[Dim, ...] = ()


class SequenceExecutable(Executable):
    """Executables run one after another over one table of values: the parameters, then
    the constants, then each call's results (``Compiler.sequence``'s default: each call
    runs as it does alone)."""

    def __init__(self, calls: Sequence[Call], n_params: int, constants: Sequence[np.ndarray],
                 shapes: Sequence[Shape], outputs: Sequence[int]) -> None:
        self._calls = tuple(calls)
        self._constants = list(constants)
        self._defined = n_params + len(constants)
        self._dims = [s.dims for s in shapes]
        self._outputs = tuple(outputs)

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        values: list = [*buffers, *self._constants]
        values += [None] * len(self._dims)
        for call in self._calls:
            inputs = [values[i] if values[i].shape == dims else values[i].reshape(dims)
                      for i, dims in zip(call.inputs, call.input_dims)]
            for value, out in zip(call.outputs, call.executable.run(inputs)):
                dims = self._dims[value - self._defined]
                values[value] = out if out.shape == dims else out.reshape(dims)  # an op run flattened
        results: list[np.ndarray] = []
        seen: set[int] = set()
        for o in self._outputs:
            out = values[o]
            if id(out) in seen or self._defined - len(self._constants) <= o < self._defined:
                out = out.copy()  # a result of its own: a constant, or a value another result is
            seen.add(id(out))
            results.append(out)
        return results


class ListedKernel(NamedTuple):
    """An op kernel the installation lists (``Compiler.listed``): the pattern of its
    run-time sizes (``trace.dynamic.Pattern``'s ``symbol_of``, ``n_symbols``, ``units``),
    and its executable, loaded by ``load`` (None where it is gone). A named tuple: each op
    kernel's first use makes one, which as a frozen dataclass took ~1.5 us."""

    symbol_of: tuple[int | None, ...]
    n_symbols: int
    units: frozenset[int]
    load: Callable[[], Executable | None]


class Compiler(abc.ABC):
    """Turns an HLO module into an :class:`Executable` for one target."""

    #: The target the executables run on; part of the executable cache key.
    target: str = ""
    #: Whether it compiles computations with run-time sizes (``Module.n_symbols``).
    shape_generic: bool = False
    #: A lazy graph of a new structure whose nodes hold at most this many elements each
    #: compiles shape-generic at once (``trace/materialize.py``): where the code made for
    #: such graphs is as fast whether its sizes are numbers or run-time values, the next
    #: size then costs no compile. 0: never (graphs compile for their sizes first).
    generic_first_elements: int = 0
    #: The ops whose code it generates for their sizes only (a graph with one compiles
    #: for its sizes first, without a shape-generic attempt that would need the compiler).
    per_shape_ops: frozenset[str] = frozenset()
    #: Ops of ``per_shape_ops`` that a shape-generic sequence of op kernels may still run
    #: at any size, on code built once whose binding makes what it needs per size
    #: (``sized_kernel``: llvm-cpu's FFT library, which plans per length).
    sized_ops: frozenset[str] = frozenset()
    #: Whether its shape-generic code takes run-time sizes of 0 (loops that run no
    #: iteration), but for a graph with one of ``nonempty_ops``, whose code needs each size
    #: at least 1: a graph without them binds its shape-generic executable to an empty
    #: size rather than compiling for it (an empty chunk or selection in a loop).
    empty_sizes: bool = False
    nonempty_ops: frozenset[str] = frozenset()
    #: Whether its shape-generic code takes run-time sizes of 1 as well, but for
    #: ``nonunit_ops``, whose code asks whether a size is 1 (a unit dimension that
    #: broadcasts, a library's matrix-vector routine): the baseline tier's kernel of any
    #: other op then serves its unit dimensions too (``trace/baseline.py``).
    unit_sizes: bool = False
    nonunit_ops: frozenset[str] = frozenset()
    #: The ops it has no code for, each with the dtype kinds of its result it lacks code
    #: for ("" for every dtype): a graph of a device of its computes them on the host, by a
    #: logged round trip (``trace/host_round_trip.py``).
    host_ops: Mapping[str, str] = MappingProxyType({})
    #: The ops a library routine may compute on the device's own buffers, between a graph's
    #: compiled code (``device_call``; llvm-nvptx's products by cuBLAS): a read looks for
    #: them only where this lists some.
    device_call_ops: frozenset[str] = frozenset()

    def device_call(self, op: str, shape: Shape, operands: tuple[Shape, ...], attrs: Mapping
                    ) -> Callable[[list], Any] | None:
        """The library routine that computes an op of result ``shape`` on these operands
        from their device buffers (a list) to its result's, or None where compiled code does."""
        return None

    @abc.abstractmethod
    def compile(self, module: Module) -> Executable: ...

    def cached(self, module: Module) -> Executable | None:
        """``module``'s executable where a cache (the persistent one, the installation's)
        holds its code, else None: nothing compiled. A backend without such a cache has none."""
        return None

    def listed(self, signature: Hashable) -> ListedKernel | None:
        """The op kernel of ``signature`` (the baseline tier's: an op's single-op graph
        with its sizes erased, its outputs, whether it updates in place, and which of its
        sizes are equal, 0 or 1) as the installation lists it, found without its HLO
        (llvm-cpu's ``op_catalogue.py``), or None. A backend without such a list has none."""
        return None

    def list_op_kernel(self, signature: Hashable, module: Module, pattern: tuple[Sequence[int | None], int,
                                                                                   frozenset[int]]) -> None:
        """At the installation's build: note that the op kernel of ``signature`` is
        ``module``'s executable, with the pattern of run-time sizes (``symbol_of``,
        ``n_symbols``, ``units`` of ``trace.dynamic.Pattern``), for ``listed``. A backend
        without such a list notes nothing."""
        return None

    def without_compiling(self, module: Module) -> Executable | None:
        """An executable of ``module`` made without compiling it, from code built once for
        every size (a library routine that plans for its sizes when bound: llvm-cpu's FFT
        of any length), or None. The baseline tier asks before compiling one op for its
        sizes."""
        return None

    def sized_kernel(self, inst: Instruction, operand: Shape,
                     result: Shape) -> tuple[Executable, tuple[Dim, ...]] | None:
        """For ``inst``, an op of ``sized_ops`` alone on its one operand (in the run-time
        sizes of a shape-generic sequence; ``operand`` and ``result`` its shapes at the
        sizes met now), the shape-generic executable that runs it as a call of
        ``generic_sequence`` and its run-time sizes in the sequence's symbols (the
        ``symbols`` of its ``Call``); the executable makes what it needs per size when
        bound, and serves (``Executable.serves``) sizes of the class met now. None where
        there is none."""
        return None

    def sequence(self, calls: Sequence[Call], n_params: int, constants: Sequence[np.ndarray],
                 shapes: Sequence[Shape], outputs: Sequence[int]) -> Executable:
        """An executable that runs ``calls`` in order, made without compiling: its values
        are its ``n_params`` parameters, then ``constants``, then the values the calls
        define, of ``shapes`` in order, and its results are the values ``outputs``
        (the baseline tier runs a graph so, each op on its own kernel)."""
        return SequenceExecutable(calls, n_params, constants, shapes, outputs)

    def generic_sequence(self, calls: Sequence[Call], n_params: int, constants: Sequence[np.ndarray],
                         shapes: Sequence[Shape], outputs: Sequence[int], n_symbols: int) -> Executable | None:
        """``sequence`` of shape-generic executables, itself shape-generic: ``n_symbols``
        run-time sizes, which each call's ``symbols`` and the ``shapes`` are written in,
        bound (``Executable.bind``) for each graph's sizes. None where the compiler makes
        none (the caller then binds each call and makes a ``sequence`` per graph)."""
        return None

    def compile_ahead_of_time(self, module: Module, constants: Sequence[np.ndarray],
                              options: AotOptions) -> AotArtifact:
        """Object code of ``module`` for ``options.target``, its parameters past the
        caller's inputs bound to ``constants``."""
        raise ExportError(f"{type(self).__name__} does not compile ahead of time")


@dataclass(frozen=True)
class Backend:
    """A registered backend. Higher ``priority`` wins when none is chosen explicitly."""

    name: str
    priority: int
    compiler: Compiler
    description: str = ""
    #: Whether a graph no compiled code serves runs op by op on op kernels first (the
    #: baseline tier, ``trace/baseline.py``), or is compiled at once (a GPU's: its op
    #: kernels are neither built at installation nor shape-generic yet).
    baseline: bool = True

    @cached_property
    def cache_tag(self) -> tuple[str, str]:
        """What the executable cache's keys hold of the backend, made once (a read of a
        value looks it up): its name and its compiler's target."""
        return (self.name, self.compiler.target)
