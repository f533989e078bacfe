"""The llvm-cpu executable (XLA's ``Executable``): the kernels of one HLO module, called in
order on a table of buffers, and the buffers around the calls.

The table holds the data pointers of the parameters, the bound constants, the outputs
and the temporaries (including the scratch buffers of nested computations), in that
order. A step calls one kernel (``kernels.py``: ``void k(ptr buffers, ptr dims, i64
start, i64 stop)``) with a table of its own buffers, picked from the run's table, and
the range of its chunkable loop: the whole of it, or chunks on several threads
(``parallel.py``). Kernels are shared between executables; an executable only says which
to call, on what. ``_entry.run`` makes the calls from C; without it they go through ctypes.
"""

from __future__ import annotations

import ctypes
import functools
import math
import operator
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, cast

import numpy as np

from ... import config
from ...cached_property import cached_property
from ...hlo.shape import Shape
from ...hlo import symbolic
from ...hlo.symbolic import Dim, evaluate, evaluator, is_static
from .. import memory, transfer
from ..buffer_pool import POOL
from ..executable import Executable
from . import kernel_abi, parallel, tiering
from .blas_lapack import routine_address
from .kernels import CompiledKernel
from ..llvm.kernel_source import Segment


class Step(NamedTuple):
    """A kernel call: ``buffers`` gives the run's table index of each of the kernel's
    buffers, in the kernel's order, ``dims`` the index of each of its run-time sizes in the
    executable's dims table (``hlo/symbolic.py``), ``imports`` the library routines it
    calls (``blas_lapack.py``)."""

    kernel: CompiledKernel
    buffers: tuple[int, ...]
    segment: Segment
    dims: tuple[int, ...] = ()
    imports: tuple[str, ...] = ()


class PerSize(NamedTuple):
    """Run-time sizes and constants that a shape-generic executable's binding makes itself
    from sizes it is given (an FFT's plan for its length, ``fft_library.py``): ``made``
    takes the values of ``given`` (sizes in the executable's symbols) and gives the values
    of its symbols ``symbols`` (the last ones, in order) and its constants at
    ``constants``; ``fits`` says whether it serves those values (an FFT template serves
    lengths of one parity, with or without a large prime factor)."""

    given: tuple[Dim, ...]
    symbols: tuple[int, ...]
    constants: tuple[int, ...]
    fits: Callable[[Sequence[int]], bool]
    made: Callable[[Sequence[int]], tuple[list[int], list[np.ndarray]]]


class _Runs:
    """The time the runs of an executable (and of every binding of a shape-generic one:
    each runs the same kernels) spent in its kernels while some of them ran first-tier
    code (``tiering.py``): their full code is asked for once it reaches
    ``TIER_UP_AFTER_SECONDS``."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.seconds = 0.0
        self.first_tier = list({id(s.kernel): s.kernel for s in steps if s.kernel.upgrade is not None}.values())

    def add(self, seconds: float) -> None:
        self.seconds += seconds
        if self.seconds >= tiering.TIER_UP_AFTER_SECONDS:
            tiering.submit(self.first_tier)
            self.first_tier = []


#: The allocators of an executable's outputs and of its temporaries (``transfer.HostTransfers.allocator``).
Allocators = tuple[list[Callable[[], np.ndarray]], list[Callable[[], np.ndarray]]]


class CpuExecutable(Executable):
    """The steps of one HLO module, plus the buffers it needs around them. ``dims`` is
    the dims table of a shape-generic executable bound to sizes, which passes what it
    knew before the sizes (``runs``, ``allocators``, ``splitting``: whether to run steps in
    chunks, ``parallel.worth_splitting``). A binding (``bound``) is given no ``steps``: it
    has its template's, with the extent and work of each sized step from ``ranges``."""

    def __init__(self, steps: Sequence[Step], n_params: int, constants: list[np.ndarray],
                 output_slots: list[tuple[str, int]], output_shapes: list[Shape], temp_shapes: list[Shape],
                 dims: Sequence[int] = (), runs: _Runs | None = None, allocators: Allocators | None = None,
                 splitting: bool | None = None, bound: ShapeGenericExecutable | None = None,
                 ranges: tuple[int, ...] = (), facts: _RunFacts | None = None,
                 buffer_bytes: list[int] | None = None) -> None:
        self._steps: tuple[Step, ...] | None = tuple(steps) if bound is None else None
        #: The shape-generic executable this one binds: its plan is that one's, with its
        #: own steps' ranges (``ShapeGenericExecutable.plan_words``), the extent and work of
        #: each of its sized steps in turn (``ranges``); its steps are made from them when
        #: asked (most bindings run from C and never are).
        self._bound = bound
        self._ranges = ranges
        self._runs = runs or _Runs(self.steps)
        #: What a sequence of executables is merged from (``sequence.py``): the buffers'
        #: shapes and the run-time sizes.
        self.shapes = (list(output_shapes), list(temp_shapes))
        self.dim_values = tuple(dims)
        #: The dims table ``_entry.run`` reads: a binding's sizes, then its sized steps'
        #: extents, which its plan's steps read there (``ShapeGenericExecutable.plan_words``).
        self._dims = _words_packer(len(dims) + len(ranges) // 2)(*dims, *ranges[::2])
        self.n_params = n_params
        self.constants = constants
        self._n_buffers = n_params + len(constants) + len(output_shapes) + len(temp_shapes)
        self._generation = -1
        self._plan = b""
        self._parallel = parallel.worth_splitting([s.segment for s in self.steps]) if splitting is None else splitting
        self.output_slots = output_slots
        self._constant_pointers, self._results_are_outputs, self.returns_parameters = \
            facts or _RunFacts.of(constants, output_slots, len(output_shapes))
        if allocators is None:
            allocators = ([transfer.HOST.allocator(s.dims, s.dtype) for s in output_shapes],
                          [transfer.HOST.allocator(s.dims, s.dtype, temporary=True) for s in temp_shapes])
        self._output_allocators, self._temp_allocators = allocators
        #: The allocator of the one output most executables have (a list comprehension
        #: over one allocator costs 0.2 us more than a call).
        self._single_output = self._output_allocators[0] if len(output_shapes) == 1 else None
        #: Sets of temporaries not in use, when they are small (``KEPT_TEMP_BYTES``): a run
        #: takes one and gives it back. Temporaries are scratch, written before they are
        #: read, so reusing them is what allocating them was; allocating them is a tenth
        #: of a small run (an FFT's two, 0.4 us of 4). Kept from its second run on
        #: (``_keeps_temps``): most bindings to a size run once (a loop over windows of
        #: new lengths), and the executable cache held each one's, hundreds of temporaries
        #: no run reused, while each new binding's came from memory not in the caches:
        #: 82 against 70 us a read of a window's mean and spread.
        buffers = [*output_shapes, *temp_shapes]
        sizes = buffer_bytes if buffer_bytes is not None else _bytes(buffers)
        self._keeps_temps = bool(temp_shapes) and sum(sizes[len(output_shapes):]) <= KEPT_TEMP_BYTES
        self._spare_temps: list[list[np.ndarray]] | None = None
        #: Bytes a run allocates, known now so a run that cannot fit fails before it starts
        #: (naming its largest buffer).
        self._nbytes = sum(sizes)
        self._checks_memory = self._nbytes >= memory.CHECK_ABOVE_BYTES
        self._largest = buffers[sizes.index(max(sizes))] if self._checks_memory else None

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps it runs: a binding's, its shape-generic executable's with its own ranges."""
        if self._steps is None:
            assert self._bound is not None  # only a binding makes its steps when asked
            self._steps = self._bound.steps_at(self._ranges)
        return self._steps

    @property
    def kernels(self) -> list[CompiledKernel]:
        """The distinct kernels the steps call."""
        return list({id(s.kernel): s.kernel for s in self.steps}.values())

    def _read_addresses(self) -> None:
        """The plan ``_entry.run`` follows, with the kernels' addresses of now (full code
        replaces first-tier code between runs): per step the address, the range, the
        number of buffers, of dims (none yet) and the buffers' table indices; a binding
        follows its shape-generic executable's, which every binding shares (:func:`plan_words`)."""
        self._generation = tiering.generation
        if self._bound is not None:
            self._plan = self._bound.plan_words(len(self.dim_values))
        else:
            words = plan_words(self.steps)
            self._plan = struct.pack(f"<{len(words)}Q", *words)

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        if self._generation != tiering.generation:
            self._read_addresses()
        if self._checks_memory:
            assert self._largest is not None  # a run that allocates bytes has a largest buffer
            memory.check_fits(self._nbytes, POOL.free_bytes, self._largest)
        single = self._single_output
        outs = [single()] if single is not None else [new() for new in self._output_allocators]
        spare = self._spare_temps
        if spare is None:
            temps = [new() for new in self._temp_allocators] if self._temp_allocators else _NO_TEMPS
        else:
            try:
                temps = spare.pop() if spare else [new() for new in self._temp_allocators]
            except IndexError:  # another thread took the last set between the test and the pop
                temps = [new() for new in self._temp_allocators]
        timed = self._runs.first_tier
        if timed:
            start = time.perf_counter()
        if not self._parallel and _run_in_c is not None:
            if self._plan:
                _run_in_c(self._plan, buffers, self._constant_pointers, outs, temps, self._dims)
        else:
            self._run_steps([*buffers, *self.constants, *outs, *temps])
        if timed:
            self._runs.add(time.perf_counter() - start)
        if spare is not None:
            spare.append(temps)
        elif self._keeps_temps:
            self._spare_temps = []
        if self._results_are_outputs:
            return outs
        return [buffers[i] if kind == "param" else outs[i] for kind, i in self.output_slots]

    def prepared(self, timed: Any = None) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        """Its run as one C object (``_entry.Prepared``), where its runs go through C in
        one thread, check no memory and time no first-tier code; with the kernels'
        addresses of now (read here where new code landed since they were)."""
        if _ENTRY is None or self._parallel or self._checks_memory or self._runs.first_tier:
            return None
        if self._generation != tiering.generation:
            self._read_addresses()
        return _ENTRY.Prepared(self, self._plan, self._constant_pointers, self._dims, tuple(self._output_allocators),
                               tuple(self._temp_allocators), _slots(self.output_slots, self._results_are_outputs), timed,
                               self._keeps_temps, tiering, (), None)

    def _run_steps(self, table: list[np.ndarray]) -> None:
        """The steps through ctypes, large loops in chunks on several threads."""
        pointers = [transfer.HOST.address(b) for b in table]
        values = struct.unpack(f"<{len(self._dims) // 8}q", self._dims)
        calls: list[tuple[Callable[[int, int], None], Segment]] = []
        for step in self.steps:
            own = (ctypes.c_void_p * max(len(step.buffers), 1))(*(pointers[i] for i in step.buffers))
            dims = (ctypes.c_int64 * max(len(step.dims), 1))(*(values[i] for i in step.dims))
            imports = (ctypes.c_void_p * max(len(step.imports), 1))(*map(routine_address, step.imports))
            call = functools.partial(_call_kernel, kernel_abi.CTYPES(step.kernel.address), own, dims, imports)
            calls.append((call, step.segment))
        parallel.run(calls, complete=self.returns_parameters)


def _bytes(shapes: Sequence[Shape]) -> list[int]:
    """The bytes of a buffer of each shape."""
    return [_nbytes(s.dims, s.dtype) for s in shapes]


def _nbytes(dims: Sequence[int], dtype: np.dtype) -> int:
    return math.prod(dims) * dtype.itemsize


@functools.cache
def _words_packer(n: int) -> Callable[..., bytes]:
    """The packer of ``n`` signed 64-bit words (a binding's dims table): made once per
    length, where formatting and parsing its format at each binding was a third of making
    the binding's executable."""
    return struct.Struct(f"<{n}q").pack


class _GenericLayout(NamedTuple):
    """Where a shape-generic executable's run-time sizes fall, which each binding reads:
    its steps whose range has run-time sizes (a binding evaluates them: a loop binds at
    every step); its buffers of run-time shape, each as (its group: 0 outputs, 1
    temporaries; its index there; its rank; its dtype; its index among all buffers), the
    outputs' first, in the order a binding's sizes give their dims after the ranges; each
    buffer's bytes, outputs then temporaries (0 for those of run-time shape: a binding's
    own), and their sum; and its limits' values."""

    sized_steps: tuple[int, ...]
    sized_buffers: tuple[tuple, ...]
    buffer_bytes: list[int]
    static_bytes: int
    limits: tuple[int, ...]


class _RunFacts(NamedTuple):
    """What an executable's constants and output slots tell each run, the same for every
    binding of a shape-generic executable (worked out once there, not at each binding):
    the constants' addresses, whether the results are the output buffers in order (no
    parameter returned as it is, no output twice: ``run`` returns them as they are), and
    whether a parameter is returned."""

    constant_pointers: bytes
    results_are_outputs: bool
    returns_parameters: bool

    @staticmethod
    def of(constants: list[np.ndarray], output_slots: list[tuple[str, int]], n_outputs: int) -> _RunFacts:
        return _RunFacts(b"".join(struct.pack("<Q", transfer.HOST.address(c)) for c in constants),
                      output_slots == [("out", i) for i in range(n_outputs)],
                      any(kind == "param" for kind, _ in output_slots))


def plan_words(steps: Sequence[Step], sized: Mapping[int, int] | None = None) -> list[int]:
    """The words of the plan ``_entry.run`` follows for ``steps``, with the kernels'
    addresses of now: per step the address, the range (its stop ``sized[i]`` for the
    steps in ``sized``: -1 - k, read from entry k of the dims table), the number of
    buffers, of dims and of imports, the buffers' table indices, the dims' and the
    imports' addresses."""
    words: list[int] = []
    sized = sized or {}
    for i, step in enumerate(steps):
        extent = sized[i] if i in sized else cast(int, step.segment.extent)
        words += (step.kernel.address, 0, extent, len(step.buffers), len(step.dims),
                  len(step.imports), *step.buffers, *step.dims, *map(routine_address, step.imports))
    return [w % (1 << 64) for w in words]


class ShapeGenericExecutable(Executable):
    """The steps of a shape-generic module (``hlo/symbolic.py``), whose sizes and shapes
    may be run-time sizes: ``bind`` evaluates them for a graph's sizes, making the
    :class:`CpuExecutable` that runs it. All bindings share the kernels and their runs.
    ``derived`` are the values of the dims table's entries after the sizes, which code
    reads as one value each (a concatenation's offsets, ``KernelBuilder.one_value``),
    each naming only entries before it."""

    def __init__(self, steps: Sequence[Step], n_params: int, constants: list[np.ndarray],
                 output_slots: list[tuple[str, int]], output_shapes: list[Shape], temp_shapes: list[Shape],
                 limits: Sequence[tuple[Dim, int]] = (), derived: Sequence[Dim] = (),
                 per_size: Sequence[PerSize] = (), stored: tuple[list, list, list, list, list] | None = None) -> None:
        self.steps = tuple(steps)
        #: What a binding makes itself before it binds, in order (``PerSize``).
        self.per_size = tuple(per_size)
        self.limits = tuple(limits)
        #: Sizes the kernels take that follow from the run-time sizes (a sequence's op run
        #: flattened takes its operand's element count, a concatenation each operand's
        #: offset): the dims table a binding passes is the run-time sizes, then these, each
        #: in the entries before it (``sequence.py``, ``KernelBuilder.one_value``).
        self.derived = tuple(derived)
        self.n_params, self.constants, self.output_slots = n_params, constants, output_slots
        self._args = (n_params, constants, output_slots)
        self._output_shapes, self._temp_shapes = output_shapes, temp_shapes
        self.shapes = (output_shapes, temp_shapes)
        self._runs = _Runs(steps)
        self._evaluate: Callable[[Sequence[int]], tuple[list[int], tuple]] | None = None
        self._words: tuple[int, int, bytes] | None = None
        #: ``runner``'s ``_sizes_program``, with the number of sizes it is for.
        self._program: tuple[int, bytes | None] | None = None
        #: ``any_size``'s untimed runs by the number of sizes (``untimed_any_size``).
        self._untimed: dict[int, Callable[[list[int]], Any] | None] = {}
        #: Where it was loaded from a cache entry, the entry's steps, output and temporary
        #: shapes, derived sizes and limits as it stores them (``cache_entry.from_entry``),
        #: until its first runs at any size take their program and plan from them
        #: (``_from_entry``).
        self.stored = stored

    # What a binding evaluates and keeps, made at the first binding: most templates loaded
    # (an op's kernel on its first use) are merged into sequences (``sequence.py``) and
    # never bound themselves, and making these was a third of loading one.

    @cached_property
    def _layout(self) -> _GenericLayout:
        """Where its run-time sizes fall (``_GenericLayout``), in one walk of its steps and
        buffers: a template's first runner read these as eight cached properties, each a
        walk and a lock of its own, ~10 us of each op kernel's first use."""
        sized_steps = tuple(i for i, s in enumerate(self.steps)
                            if not (type(s.segment.extent) is int and type(s.segment.work) is int))
        output_shapes, temp_shapes = self._output_shapes, self._temp_shapes
        sized_buffers: list[tuple] = []
        buffer_bytes: list[int] = []
        for group, shapes in enumerate((output_shapes, temp_shapes)):
            for i, shape in enumerate(shapes):
                if is_static(shape.dims):
                    buffer_bytes.append(_nbytes(shape.dims, shape.dtype))
                else:
                    buffer_bytes.append(0)
                    sized_buffers.append((group, i, len(shape.dims), shape.dtype, i + group * len(output_shapes)))
        return _GenericLayout(sized_steps, tuple(sized_buffers), buffer_bytes, sum(buffer_bytes),
                              tuple(limit for _, limit in self.limits))

    @cached_property
    def _allocators(self) -> tuple[list, list]:
        """The allocators of the outputs' and temporaries' buffers of static shapes (None
        where the shape has run-time sizes)."""
        allocator = transfer.HOST.allocator
        sized = {(group, i) for group, i, _, _, _ in self._layout.sized_buffers}
        return ([None if (0, i) in sized else allocator(shape.dims, shape.dtype)
                 for i, shape in enumerate(self._output_shapes)],
                [None if (1, i) in sized else allocator(shape.dims, shape.dtype, True)
                 for i, shape in enumerate(self._temp_shapes)])

    @cached_property
    def allocator_tuples(self) -> tuple[tuple, tuple]:
        """``_allocators`` as tuples (a prepared runner's, ``_Runner.prepared``)."""
        return tuple(self._allocators[0]), tuple(self._allocators[1])

    @cached_property
    def _static_splitting(self) -> bool:
        """Whether any step of static range is worth running in chunks."""
        sized = self._layout.sized_steps
        return parallel.worth_splitting([s.segment for i, s in enumerate(self.steps) if i not in sized])

    @cached_property
    def _facts(self) -> _RunFacts:
        return _RunFacts.of(self.constants, self.output_slots, len(self._output_shapes))

    @property
    def kernels(self) -> list[CompiledKernel]:
        return list({id(s.kernel): s.kernel for s in self.steps}.values())

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        raise TypeError("a shape-generic executable runs once bound to sizes (bind)")

    def _evaluator(self) -> Callable[[Sequence[int]], tuple[list[int], tuple]]:
        """What a binding evaluates, in one function of the run-time sizes
        (``symbolic.evaluator``): the limits, each sized step's range and work, then each
        sized buffer's dims. Made at the first binding; it compiles its code only once
        bound often (``symbolic.COMPILE_AFTER``: many templates loaded are bound once)."""
        shapes = (self._output_shapes, self._temp_shapes)
        layout = self._layout
        sized_shapes = [shapes[group][i] for group, i, _, _, _ in layout.sized_buffers]
        self._evaluate = evaluator(self.derived, [
            *(value for value, _ in self.limits),
            *(size for i in layout.sized_steps for size in (self.steps[i].segment.extent, self.steps[i].segment.work)),
            *(d for shape in sized_shapes for d in shape.dims)])
        return self._evaluate

    def serves(self, values: Sequence[int]) -> bool:
        """Whether what its bindings make per size (``per_size``) serves these sizes."""
        return not self.per_size or all(hook.fits([evaluate(d, values) for d in hook.given]) for hook in self.per_size)

    def bind(self, values: Sequence[int], seen_as: Sequence[Shape] | None = None) -> CpuExecutable | None:
        """Its executable for the sizes ``values`` (with ``per_size``, the symbols before
        those it makes), or None where they are past its limits or it does not serve them.
        ``seen_as``: its outputs' shapes as the caller sees them (the same elements in
        row-major order: an FFT of a batch of any rank, which its template takes as rows)."""
        constants: list[np.ndarray] | None = None
        if self.per_size:
            made = self._made(values)
            if made is None:
                return None
            values, constants = made
        found = self._sized_at(values)
        if found is None:
            return None
        table, ranges, sized = found
        outputs, temps = list(self._output_shapes), list(self._temp_shapes)
        nbytes = list(self._layout.buffer_bytes)
        for (group, i, _, dtype, slot), dims in zip(self._layout.sized_buffers, sized):
            (temps if group else outputs)[i] = Shape(dims, dtype)
            nbytes[slot] = math.prod(dims) * dtype.itemsize
        allocators = self.allocators_at(sized)[0]
        if seen_as is not None:
            outputs = list(seen_as)
            allocators[0][:] = [transfer.HOST.allocator(shape.dims, shape.dtype) for shape in seen_as]
        splitting = self._static_splitting or any(map(parallel.splits, ranges[::2], ranges[1::2]))
        n_params, own, slots = self._args
        facts = self._facts if constants is None else _RunFacts.of(constants, slots, len(outputs))
        executable = CpuExecutable((), n_params, own if constants is None else constants, slots, outputs, temps,
                                   table, self._runs, cast(Allocators, allocators), splitting, self, ranges, facts,
                                   nbytes)
        executable.from_disk = self.from_disk
        return executable

    def _made(self, values: Sequence[int]) -> tuple[list[int], list[np.ndarray]] | None:
        """What its ``per_size`` hooks make for the sizes ``values``: the sizes with
        theirs after, and its constants with theirs in place; None where a hook does not
        serve them."""
        values = list(values)
        constants = list(self.constants)
        for hook in self.per_size:
            given = [evaluate(d, values) for d in hook.given]
            if not hook.fits(given):
                return None
            made_sizes, made_constants = hook.made(given)
            values += made_sizes
            for at, array in zip(hook.constants, made_constants):
                constants[at] = array
        return values, constants

    def _sized_at(self, values: Sequence[int]
                  ) -> tuple[Sequence[int], tuple[int, ...], tuple[tuple[int, ...], ...]] | None:
        """What a binding to the sizes ``values`` evaluates (``_evaluator``): its dims
        table, each sized step's range and work in turn, and each sized buffer's dims (in
        ``_layout.sized_buffers``' order); None where they are past its limits."""
        table, sizes = (self._evaluate or self._evaluator())(values)
        layout = self._layout
        limits = layout.limits
        if limits and any(map(operator.gt, sizes, limits)):
            return None
        at = len(limits) + 2 * len(layout.sized_steps)
        ranges = tuple(sizes[len(limits):at])
        sized = []
        for _, _, rank, _, _ in layout.sized_buffers:
            sized.append(tuple(sizes[at:at + rank]))
            at += rank
        return table, ranges, tuple(sized)

    def runner(self, values: Sequence[int]) -> Executable | None:
        """Its executable for the sizes ``values`` that only runs (a read's, never merged
        into a sequence), most often once: a few objects where a binding made ~25 (its
        buffers' shapes and allocators), which makes its allocators if run again
        (``_Runner``). The executable cache holds hundreds of these, made and evicted as a
        loop meets new sizes, and the garbage collector walked each binding's objects: 87
        against 70 us a read of a window's mean and spread. Its sizes are evaluated in C
        (``_entry.sizes`` over ``_sizes_program``), after those its ``per_size`` hooks
        make (an FFT's plan for its length, whose constants the runner holds). Runs in
        chunks on several threads and sizes past int64 take ``bind``'s, as do runs
        without ``_entry``."""
        if _run_in_c is None or _sizes_in_c is None or self._static_splitting:
            return self.bind(values)
        given, constants = values, None
        if self.per_size:
            made_by_hooks = self._made(values)
            if made_by_hooks is None:
                return None
            values, constants = made_by_hooks
        program = self._program
        if program is None or program[0] != len(values):
            program = self._program = (len(values), self._sizes_program(len(values)))
        try:
            made = _sizes_in_c(program[1], values, parallel.split_work()) if program[1] is not None else False
        except OverflowError:
            made = False
        if not isinstance(made, tuple):  # None past a limit; False: a step worth running in chunks, or past int64
            return None if made is None else self.bind(given)  # rare: its hooks run again (an FFT's plans are cached)
        dims, n_table, ranges, sized, nbytes = made
        runner = _Runner(self, dims, n_table, ranges, sized, nbytes, constants)
        runner.from_disk = self.from_disk
        return runner

    def any_size(self, n_values: int, timed: Any) -> Callable[[list[int]], Any] | None:
        """Its runs at any ``n_values`` sizes from C (``_entry.AnySize``), each bound where
        ``runner`` would make a ``_Runner`` and run as that runner runs (first-tier code's
        runs timed for its upgrade alike), its seconds added to ``timed.seconds``; None
        where its runs need the runner's Python: no ``_entry``, sizes its binding makes per
        size (``per_size``: an FFT's plan), steps run in chunks, a parameter returned, or a
        program past int64. The caller decides which reads it serves
        (``trace/baseline.py``'s ``QUICK``)."""
        if self.stored is not None and _ENTRY is not None:
            self._from_entry(n_values)
        if _ENTRY is None or _sizes_in_c is None or self.per_size or self._static_splitting or \
                self._facts.returns_parameters:
            return None
        program = self._program
        if program is None or program[0] != n_values:
            program = self._program = (n_values, self._sizes_program(n_values))
        if program[1] is None:
            return None
        n_table = n_values + len(self.derived)
        return _ENTRY.AnySize(self, program[1], self.plan_words(n_table), self._facts.constant_pointers,
                              *self.allocator_tuples, _slots(self.output_slots, self._facts.results_are_outputs),
                              tuple([(group, i, dtype) for group, i, _, dtype, _ in self._layout.sized_buffers]),
                              np.empty, transfer.HOST.empty, timed, tiering, parallel.split_work, n_table,
                              _SMALLEST_POOLED, memory.CHECK_ABOVE_BYTES, self._runs)

    def _from_entry(self, n_values: int) -> None:
        """Its layout, static splitting, sizes program and plan for ``n_values`` sizes,
        made in C from its cache entry (``_entry.entry_runs``: the same words, ~12 us a
        template in a loop where walking its decoded polynomials in Python took ~31-36; most
        op kernels loaded on their first use are bound so), where they are not made yet and
        the entry is of that form."""
        steps, outputs, temps, derived, limits = cast(tuple, self.stored)
        self.stored = None
        if self._program is not None or self._words is not None:
            return
        shapes = (self._output_shapes, self._temp_shapes)
        made = _ENTRY.entry_runs(steps, outputs, temps, derived, limits,
                                 [s.dtype.itemsize for group in shapes for s in group],
                                 [s.kernel.address for s in self.steps],
                                 [[routine_address(name) for name in s.imports] for s in self.steps], n_values,
                                 parallel.split_work())
        if made is None:
            return
        program, plan, sized_steps, sized_buffers, buffer_bytes, static_bytes, splitting = made
        vars(self).update(
            _layout=_GenericLayout(sized_steps, tuple([(group, i, rank, shapes[group][i].dtype, slot)
                                                       for group, i, rank, slot in sized_buffers]),
                                   buffer_bytes, static_bytes, tuple(limit for _, limit in self.limits)),
            _static_splitting=splitting, _program=(n_values, program),
            _words=(tiering.generation, n_values + len(self.derived), plan))

    def untimed_any_size(self, n_values: int) -> Callable[[list[int]], Any] | None:
        """``any_size`` untimed (its caller times the runs), made once per number of sizes
        and kept: a graph met for the first time binds each op's kernel so to its sizes
        (``call_by_call.py``), where a runner and its prepared run were ~20 us an op."""
        untimed = self._untimed
        if n_values not in untimed:
            untimed[n_values] = self.any_size(n_values, None)
        return untimed[n_values]

    def _sizes_program(self, n_values: int) -> bytes | None:
        """What ``runner`` evaluates for ``n_values`` sizes, as ``_entry.sizes`` reads it
        (its words: the counts, the static buffers' bytes, then each derived size, limited
        size and its limit, sized step's extent and work, and sized buffer's rank, item
        size and dims, as ``symbolic.encode`` writes a polynomial); None where a
        coefficient is past int64 (``bind`` then). Made at its first runner: encoding is
        one walk of the polynomials, where code compiled from them cost ~0.8 ms."""
        encode = symbolic.encode
        layout = self._layout
        words = [n_values, len(self.derived), len(self.limits), 2 * len(layout.sized_steps), len(layout.sized_buffers),
                 layout.static_bytes]
        for value in self.derived:
            words += encode(value)
        for value, limit in self.limits:
            words += encode(value)
            words.append(int(limit))
        for i in layout.sized_steps:
            segment = self.steps[i].segment
            words += encode(segment.extent)
            words += encode(segment.work)
        shapes = (self._output_shapes, self._temp_shapes)
        for group, i, rank, dtype, _ in layout.sized_buffers:
            words += (rank, dtype.itemsize)
            for d in shapes[group][i].dims:
                words += encode(d)
        try:
            return struct.pack(f"<{len(words)}q", *words)
        except struct.error:
            return None

    def check_memory(self, sized: tuple[tuple[int, ...], ...], nbytes: int) -> None:
        """A MemoryError naming the largest buffer if a ``runner``'s buffers (its sized
        buffers' dims ``sized``, in ``_layout.sized_buffers``' order; ``nbytes`` in all) cannot fit."""
        if nbytes >= memory.CHECK_ABOVE_BYTES:
            shapes = [Shape(dims, buffer[3]) for buffer, dims in zip(self._layout.sized_buffers, sized)]
            shapes += [s for s in (*self._output_shapes, *self._temp_shapes) if is_static(s.dims)]
            memory.check_fits(nbytes, POOL.free_bytes, max(shapes, key=lambda s: _nbytes(s.dims, s.dtype)))

    def buffers_at(self, sized: tuple[tuple[int, ...], ...]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """New output and temporary buffers of a ``runner`` whose sized buffers' dims are
        ``sized``, made at each of its runs (``_Runner``)."""
        outputs, temps = self._allocators
        made = [new() if new is not None else None for new in outputs], \
            [new() if new is not None else None for new in temps] if temps else _NO_TEMPS
        empty = transfer.HOST.empty
        for (group, i, _, dtype, _), dims in zip(self._layout.sized_buffers, sized):
            made[group][i] = empty(dims, dtype, group == 1)
        return cast("tuple[list[np.ndarray], list[np.ndarray]]", made)  # every None replaced

    def allocators_at(self, sized: tuple[tuple[int, ...], ...]) -> tuple[Allocators, bool]:
        """The allocators of a binding's output and temporary buffers whose sized buffers'
        dims are ``sized``, and whether it keeps its temporaries (``KEPT_TEMP_BYTES``)."""
        outputs, temps = list(self._allocators[0]), list(self._allocators[1])
        temp_bytes = sum(self._layout.buffer_bytes[len(outputs):])
        allocator = transfer.HOST.allocator
        for (group, i, _, dtype, _), dims in zip(self._layout.sized_buffers, sized):
            (temps if group else outputs)[i] = allocator(dims, dtype, group == 1)
            if group:
                temp_bytes += math.prod(dims) * dtype.itemsize
        return (outputs, temps), bool(temps) and temp_bytes <= KEPT_TEMP_BYTES

    def steps_at(self, ranges: Sequence[int]) -> tuple[Step, ...]:
        """Its steps with each sized one's extent and work in turn from ``ranges`` (a binding's)."""
        steps = list(self.steps)
        for k, i in enumerate(self._layout.sized_steps):
            s = steps[i]
            steps[i] = Step(s.kernel, s.buffers, Segment(ranges[2 * k], ranges[2 * k + 1], s.segment.depth), s.dims,
                            s.imports)
        return tuple(steps)

    def plan_words(self, n_table: int) -> bytes:
        """The plan of its steps (:func:`plan_words`, packed) with the kernels' addresses of
        now, for bindings whose dims table has ``n_table`` sizes: each sized step's stop
        is read from the table's entries after them, where a binding puts its steps'
        extents in turn (``CpuExecutable._dims``). Made once per generation of code
        (``tiering.generation``) and shared by every binding, not made at each."""
        words = self._words
        if words is None or words[0] != tiering.generation or words[1] != n_table:
            stops = {i: -1 - (n_table + k) for k, i in enumerate(self._layout.sized_steps)}
            made = plan_words(self.steps, stops)
            words = self._words = (tiering.generation, n_table, struct.pack(f"<{len(made)}Q", *made))
        return words[2]


class _Runner(Executable):
    """A shape-generic executable's binding that only runs (``ShapeGenericExecutable.runner``):
    its dims table, its steps' ranges, its sized buffers' dims and the bytes its buffers
    take, and the constants its template's ``per_size`` hooks made for them (else the
    template's). Its template makes its buffers at each run (``buffers_at``): most runners
    run once or twice (a loop's windows of new lengths, a second pass over them), and
    allocators and kept temporaries made at a runner's second run, as a binding's, cost
    ~13 us a runner and made its later runs slower, not faster (the eager benchmark's
    ``many_windows``, 1,500 runners: 54 ms for the rerun that made them, 28 a rerun after,
    against 22 for each rerun without them; a runner run 2,000 times as fast either way)."""

    def __init__(self, template: ShapeGenericExecutable, dims: bytes, n_table: int, ranges: tuple[int, ...],
                 sized: tuple[tuple[int, ...], ...], nbytes: int, constants: list[np.ndarray] | None = None) -> None:
        self._template, self._dims, self._n_table = template, dims, n_table
        self._ranges, self._sized, self._nbytes = ranges, sized, nbytes
        self._generation, self._plan = -1, b""
        #: The constants the run's pointers point into, held while it can run.
        self.constants = template.constants if constants is None else constants
        self._facts = template._facts if constants is None else \
            _RunFacts.of(constants, template.output_slots, len(template.shapes[0]))
        self.returns_parameters = self._facts.returns_parameters

    #: Its ``prepared`` run (~1.3 us to make) is taken at once: its Python run, which its
    #: first two runs took, costs more (its buffers made and its steps run from Python).
    prepared_cheaply = True

    @property
    def steps(self) -> tuple[Step, ...]:
        return self._template.steps_at(self._ranges)

    @property
    def kernels(self) -> list[CompiledKernel]:
        return self._template.kernels

    def _read_addresses(self) -> None:
        """Its template's plan with the kernels' addresses of now (``CpuExecutable._read_addresses``)."""
        self._generation, self._plan = tiering.generation, self._template.plan_words(self._n_table)

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        template = self._template
        if self._generation != tiering.generation:
            self._read_addresses()
        if self._nbytes >= memory.CHECK_ABOVE_BYTES:
            template.check_memory(self._sized, self._nbytes)
        outs, temps = template.buffers_at(self._sized)
        first_tier = template._runs.first_tier
        if first_tier:
            start = time.perf_counter()
        if self._plan:
            assert _run_in_c is not None  # a runner is made only where runs go through C
            _run_in_c(self._plan, buffers, self._facts.constant_pointers, outs, temps, self._dims)
        if first_tier:
            template._runs.add(time.perf_counter() - start)
        if self._facts.results_are_outputs:
            return outs
        return [buffers[i] if kind == "param" else outs[i] for kind, i in template.output_slots]

    def prepared(self, timed: Any = None) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        """Its run as one C object (``_entry.Prepared``, ``CpuExecutable.prepared``), where
        its buffers are too small for the pool, so that those of run-time sizes are
        ``np.empty``'s, made in C from its sized buffers' dims (preparing makes no
        allocator: the runners of a loop's new sizes each run once or twice, and
        ``allocators_at`` was two thirds of preparing one). It keeps no temporaries
        between runs, as the runner does not: a loop over windows of new lengths prepares
        a runner per length, and each one's kept temporaries (150 MB for the eager
        benchmark's ``many_windows``) made its next pass 15 ms slower in page faults alone."""
        template = self._template
        if self._generation != tiering.generation:
            self._read_addresses()
        if self._nbytes >= _SMALLEST_POOLED or template._runs.first_tier or not self._plan:
            return None
        return _ENTRY.Prepared(self, self._plan, self._facts.constant_pointers, self._dims, *template.allocator_tuples,
                               _slots(template.output_slots, self._facts.results_are_outputs), timed, False, tiering,
                               tuple([(group, i, dims, dtype) for (group, i, _, dtype, _), dims
                                      in zip(template._layout.sized_buffers, self._sized)]), np.empty)


#: A prepared runner's buffers are all below this many bytes: none comes from the pool.
_SMALLEST_POOLED = min(transfer.MIN_POOLED_BYTES, transfer.MIN_POOLED_TEMP_BYTES)


def _slots(output_slots: list[tuple[str, int]], results_are_outputs: bool) -> tuple[int, ...] | None:
    """``_entry.Prepared``'s slots: None where the results are the outputs as they are,
    else per result its output's index, or -1 - its parameter's."""
    return None if results_are_outputs else tuple(i if kind == "out" else -1 - i for kind, i in output_slots)


#: Temporaries of at most this many bytes in all are kept by their executable between runs.
KEPT_TEMP_BYTES = 64 << 10

#: The temporaries of an executable without any (never written: a run only reads the list).
_NO_TEMPS: list[np.ndarray] = []

def _call_kernel(kernel: Callable[..., None], buffers: ctypes.Array, dims: ctypes.Array, imports: ctypes.Array,
                 start: int, stop: int) -> None:
    kernel(buffers, dims, start, stop, imports)


def _c_entry() -> Any:
    """``_entry`` (the steps called from C, a binding's sizes evaluated there) when it is
    built, the array objects' data pointer offset is known (``transfer.DATA_POINTER_OFFSET``)
    and ``PLAIDARRAY_PURE_PYTHON`` does not switch it off; else None, and runs go through
    ctypes."""
    _entry = config.c_module("plaidarray.backend.llvm_cpu._entry") if transfer.DATA_POINTER_OFFSET is not None else None
    if _entry is None:
        return None
    _entry.configure(transfer.DATA_POINTER_OFFSET)
    return _entry


_ENTRY = _c_entry()
_run_in_c: Callable[..., None] | None = _ENTRY.run if _ENTRY is not None else None
_sizes_in_c: Callable[..., Any] | None = _ENTRY.sizes if _ENTRY is not None else None
