"""A sequence of executables merged into one (``Compiler.sequence``), made without compiling.

The baseline tier runs a graph op by op, each op on its own kernel (``trace/baseline.py``).
Each op's executable is a list of kernel calls on its own table of buffers; here the calls of
all of them become one executable's steps over one table (the graph's parameters, every
constant, its results, and the values passed between the ops as temporaries), each step's
buffers and run-time sizes renumbered into it. A run is then one call into C however many
ops the graph has, the kernels are those the ops' executables hold (nothing is generated),
and small temporaries are kept between runs like any executable's. A temporary's buffer
serves a later value of as many bytes once the last call using it has run, so a graph's
op-by-op run holds about as much memory at once as its fused code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, cast

import numpy as np

from ...hlo.shape import Shape
from ...hlo.symbolic import Dim, Sym, is_static, substitute
from ..cache import EXECUTABLES
from ..executable import Call
from .executable import CpuExecutable, PerSize, ShapeGenericExecutable, Step
from ..llvm.kernel_source import Segment


def merge(calls: Sequence[Call], n_params: int, constants: Sequence[np.ndarray], shapes: Sequence[Shape],
          outputs: Sequence[int], n_symbols: int = 0) -> CpuExecutable | ShapeGenericExecutable | None:
    """The executable of ``Compiler.sequence``'s arguments as one executable, or None
    where the default sequence runs them instead: some call's executable is neither kind,
    or a result is a constant or the same value as another result (which the default
    sequence copies; a merged executable's results are its own buffers or parameters).

    Without, a call's executable may be shape-generic too, its ``symbols`` numbers (a
    graph's op kernels at its sizes, made in one merge rather than each bound first).
    With ``n_symbols``, the calls' executables may be shape-generic (each call's
    ``symbols`` are its run-time sizes in the sequence's) and so is the result: its dims
    table is the sequence's symbols, then every size a kernel takes that follows from them
    (``ShapeGenericExecutable.derived``), its steps' ranges and buffers' shapes in the
    sequence's symbols; a binding to sizes then makes the whole sequence's executable at
    once. A part whose binding makes sizes and constants itself (``PerSize``: an FFT
    template's plan for its length) has the sequence's binding make them: its made sizes
    are symbols of the sequence after its own, its constants at their place in the
    sequence's."""
    taken = mergeable(calls, n_params, len(constants), outputs, n_symbols)
    if taken is None:
        return None
    parts, root, results = taken
    defined = n_params + len(constants)  # the first value a call defines
    merged_constants = list(constants)
    constant_starts = []
    for part in parts:
        constant_starts.append(len(merged_constants))
        merged_constants += part.constants
    table = _Table(n_params, len(merged_constants), [r for r in results if r >= defined], shapes, defined)
    next_made = n_symbols  # the next symbol a part's binding makes (``PerSize``): the sequence's, after its own
    dims = _Dims(n_symbols + sum(len(hook.symbols) for part in parts if isinstance(part, ShapeGenericExecutable)
                                 for hook in part.per_size))
    per_size: list[PerSize] = []
    last_use = _last_uses(calls, root)
    steps: list[Step] = []
    limits: dict[Dim, int] = {}  # each value once, at its least limit: a binding evaluates each
    for index, (call, part, constant_start) in enumerate(zip(calls, parts, constant_starts)):
        hooks = part.per_size if isinstance(part, ShapeGenericExecutable) else ()
        if hooks:
            own_made = [Sym(next_made + k, 0) for k in range(sum(len(hook.symbols) for hook in hooks))]
            next_made += len(own_made)
            form = _shaped(call, part, own_made, dims, limits)
        else:
            form = _shaped(call, part, (), dims, limits)
        if form is None:  # a size past a library call's: the caller binds each call
            return None
        own = [table.slot(root.get(v, v)) for v in call.inputs]
        own += range(n_params + constant_start, n_params + constant_start + len(part.constants))
        out_slots: list[int | None] = [None] * len(form.output_shapes)
        for value, (kind, i) in zip(call.outputs, part.output_slots):
            if kind == "out":
                out_slots[i] = table.define(value)
        own += [slot if slot is not None else table.scratch(shape)
                for slot, shape in zip(out_slots, form.output_shapes)]
        scratch = [table.scratch(shape) for shape in form.temp_shapes]
        own += scratch
        for s, segment, at in zip(part.steps, form.segments, form.step_dims):
            steps.append(Step(s.kernel, tuple([own[b] for b in s.buffers]), segment, at, s.imports))
        if hooks:
            sizes = form.sizes
            per_size += [PerSize(tuple(substitute(d, sizes) for d in hook.given),
                                 tuple(cast(Sym, sizes[k]).index for k in hook.symbols),
                                 tuple(constant_start + c for c in hook.constants), hook.fits, hook.made)
                         for hook in hooks]
        unused = [own[len(call.inputs) + len(part.constants) + i] for i, slot in enumerate(out_slots) if slot is None]
        table.release(scratch + unused + [table.slot(v) for v in {root.get(v, v) for v in (*call.inputs, *call.outputs)}
                                          if v >= defined and last_use.get(v) == index and v not in table.results])
    slots = [("param", r) if r < n_params else ("out", table.slot(r) - table.outputs_start) for r in results]
    if n_symbols:
        return ShapeGenericExecutable(steps, n_params, merged_constants, slots, table.output_shapes, table.temp_shapes,
                                      list(limits.items()), dims.derived, per_size)
    return CpuExecutable(steps, n_params, merged_constants, slots, table.output_shapes, table.temp_shapes,
                         cast("list[int]", dims.derived))


def mergeable(calls: Sequence[Call], n_params: int, n_constants: int, outputs: Sequence[int], n_symbols: int = 0
              ) -> tuple[list[CpuExecutable | ShapeGenericExecutable], dict[int, int], list[int]] | None:
    """What ``merge`` takes of its calls (their executables, each passed-through result's
    source, ``_roots``, and the results' values followed to it), or None where it makes no
    executable: a call's executable of another kind, or without ``n_symbols`` a
    shape-generic one with sizes that are not numbers or that it makes per size (an FFT's
    plan), or a result that is a constant or another result."""
    parts: list[CpuExecutable | ShapeGenericExecutable] = []
    for call in calls:
        made = type(call.executable)
        if made is ShapeGenericExecutable and not n_symbols:  # its run-time sizes are numbers here
            template = cast(ShapeGenericExecutable, call.executable)
            if template.per_size or not all(type(size) is int for size in call.symbols):
                return None
        elif made is not CpuExecutable and not (n_symbols and made is ShapeGenericExecutable):
            return None
        parts.append(cast("CpuExecutable | ShapeGenericExecutable", call.executable))
    root = _roots(calls, parts)
    results = [root.get(o, o) for o in outputs]
    return (parts, root, results) if results_taken(results, n_params, n_constants) else None


def results_taken(results: Sequence[int], n_params: int, n_constants: int) -> bool:
    """Whether a sequence's results (each value followed to its root) are ``merge``'s to
    give: none is a constant, none is asked twice."""
    return not any(n_params <= r < n_params + n_constants for r in results) and len(set(results)) == len(results)


class _Shaped(NamedTuple):
    """What a call's steps and buffers are in the sequence's sizes, which follows from its
    part and its run-time sizes alone (``_shaped``)."""

    sizes: list[Dim]
    output_shapes: list[Shape]
    temp_shapes: list[Shape]
    segments: list[Segment]
    step_dims: list[tuple[int, ...]]


class _Form(NamedTuple):
    """A ``_Shaped`` before the dims table: what follows from a part and its call's sizes
    alone, and its library calls' limits in those sizes (None: a size past one)."""

    part: CpuExecutable | ShapeGenericExecutable
    sizes: list[Dim]
    output_shapes: list[Shape]
    temp_shapes: list[Shape]
    segments: list[Segment]
    limits: list[tuple[Dim, int]] | None


#: ``_Form``s of parts whose binding makes nothing per size, by the part's identity and
#: its call's sizes: a script's new graphs repeat ops at the sizes met before (the same
#: arrays read in other expressions), and substituting each buffer's and step's sizes was
#: a quarter of merging a new graph's op kernels. Emptied at ``KEPT_FORMS``.
_FORMS: dict[tuple[int, tuple], _Form] = {}
KEPT_FORMS = 1024
EXECUTABLES.on_clear.append(_FORMS.clear)  # the parts' code goes with the cache's


def _shaped(call: Call, part: CpuExecutable | ShapeGenericExecutable, made: Sequence[Sym], dims: _Dims,
            limits: dict[Dim, int]) -> _Shaped | None:
    """A call's ``_Shaped``, its sizes' slots in the dims table and its library calls'
    limits entered; None where a size is past a limit."""
    key = (id(part), call.symbols)
    form = _FORMS.get(key) if not made else None
    if form is None or form.part is not part:
        form = _form(call, part, made)
        if not made:
            if len(_FORMS) >= KEPT_FORMS:
                _FORMS.clear()
            _FORMS[key] = form
    if form.limits is None:
        return None
    for size, limit in form.limits:
        limits[size] = min(limit, limits.get(size, limit))
    at = [dims.slot(size) for size in form.sizes]
    return _Shaped(form.sizes, form.output_shapes, form.temp_shapes, form.segments,
                   [tuple([at[d] for d in s.dims]) for s in part.steps])


def _form(call: Call, part: CpuExecutable | ShapeGenericExecutable, made: Sequence[Sym]) -> _Form:
    """A call's ``_Form``, worked out."""
    sizes = _sizes(call, part, made)  # each entry of the part's dims table, in the sequence's symbols
    bounds: list[tuple[Dim, int]] | None = []
    if isinstance(part, ShapeGenericExecutable):
        for bounded, limit in part.limits:
            size = substitute(bounded, sizes)
            if type(size) is int and size > limit:
                bounds = None
                break
            cast("list[tuple[Dim, int]]", bounds).append((size, limit))
    output_shapes, temp_shapes = ([_in(shape, sizes) for shape in group] for group in part.shapes)
    segments = []
    for s in part.steps:
        extent, work = s.segment.extent, s.segment.work
        segments.append(s.segment if type(extent) is int and type(work) is int else
                        Segment(substitute(extent, sizes), substitute(work, sizes), s.segment.depth))
    return _Form(part, sizes, output_shapes, temp_shapes, segments, bounds)


def _sizes(call: Call, part: CpuExecutable | ShapeGenericExecutable, made: Sequence[Sym] = ()) -> list[Dim]:
    """The entries of a part's dims table in the sequence's symbols: its sizes as numbers
    (an executable bound to them), or its run-time sizes as the call gives them and those
    its binding makes (``made``: symbols of the sequence's own, made by its binding in
    turn), then the sizes derived from them."""
    if isinstance(part, CpuExecutable):
        return list(part.dim_values)
    sizes: list[Dim] = [*call.symbols, *made]
    for value in part.derived:  # each in the entries before it
        sizes.append(substitute(value, sizes))
    return sizes


def _in(shape: Shape, sizes: Sequence[Dim]) -> Shape:
    """A part's buffer shape in the sequence's symbols."""
    if is_static(shape.dims):
        return shape
    return Shape(cast("tuple[int, ...]", tuple([d if type(d) is int else substitute(d, sizes) for d in shape.dims])),
                 shape.dtype)


class _Dims:
    """The merged dims table: the sequence's symbols, then each other size a kernel takes,
    once (``ShapeGenericExecutable.derived``; a bound sequence's table is these, numbers)."""

    def __init__(self, n_symbols: int) -> None:
        self._n_symbols = n_symbols
        self._at: dict[Dim, int] = {}
        self.derived: list[Dim] = []

    def slot(self, size: Dim) -> int:
        if isinstance(size, Sym) and size.index < self._n_symbols:
            return size.index
        found = self._at.get(size)
        if found is None:
            found = self._at[size] = self._n_symbols + len(self.derived)
            self.derived.append(size)
        return found


def _roots(calls: Sequence[Call], parts: Sequence[CpuExecutable | ShapeGenericExecutable]) -> dict[int, int]:
    """The value each result that is an input passed through stands for (an op its
    compile found to be the identity: a transpose of unit dimensions), followed to the
    value first defined."""
    root: dict[int, int] = {}
    for call, part in zip(calls, parts):
        for value, (kind, i) in zip(call.outputs, part.output_slots):
            if kind == "param":
                source = call.inputs[i]
                root[value] = root.get(source, source)
    return root


def _last_uses(calls: Sequence[Call], root: dict[int, int]) -> dict[int, int]:
    """The index of the last call using (or defining) each value (or a value standing for it)."""
    last: dict[int, int] = {}
    for index, call in enumerate(calls):
        for value in (*call.inputs, *call.outputs):
            last[root.get(value, value)] = index
    return last


class _Table:
    """The merged executable's table: parameters, constants, results (the values that
    ``outputs`` name, in order), then temporaries, a temporary's slot reused by a later
    value of as many bytes once it is released."""

    def __init__(self, n_params: int, n_constants: int, results: list[int], shapes: Sequence[Shape],
                 defined: int) -> None:
        self._shapes = shapes
        self._defined = defined
        self.results = {value: i for i, value in enumerate(results)}
        self.outputs_start = n_params + n_constants
        self.output_shapes = [shapes[value - defined] for value in results]
        self.temp_shapes: list[Shape] = []
        #: Each temporary's bytes: a symbolic size is a product of run-time sizes, which
        #: made again at each release were a tenth of merging a Kalman filter's sequence.
        self._temp_bytes: list[Dim] = []
        self._temps_start = self.outputs_start + len(results)
        self._slots: dict[int, int] = {}
        self._free: dict[Dim, list[int]] = {}
        #: Bytes by (dims, itemsize): a sequence's values share a few shapes, and a
        #: product of run-time sizes is a polynomial made anew at each ask.
        self._bytes: dict[tuple, Dim] = {}

    def slot(self, value: int) -> int:
        if value < self._defined:  # a parameter, or a constant of the sequence's own
            return value
        return self._slots[value]

    def define(self, value: int) -> int:
        """The slot of a value a call defines: its result slot, else a temporary."""
        if value in self.results:
            slot = self._slots[value] = self.outputs_start + self.results[value]
            return slot
        slot = self._slots[value] = self.scratch(self._shapes[value - self._defined])
        return slot

    def scratch(self, shape: Shape) -> int:
        """A temporary's slot for ``shape``: a released one of as many bytes, else a new one."""
        key = (shape.dims, shape.dtype.itemsize)
        nbytes = self._bytes.get(key)
        if nbytes is None:
            nbytes = self._bytes[key] = shape.size * shape.dtype.itemsize
        free = self._free.get(nbytes)
        if free:
            return free.pop()
        self.temp_shapes.append(shape)
        self._temp_bytes.append(nbytes)
        return self._temps_start + len(self.temp_shapes) - 1

    def release(self, slots: Sequence[int]) -> None:
        """Slots no later call reads: temporaries among them serve later values."""
        for slot in dict.fromkeys(slots):
            if slot >= self._temps_start:
                self._free.setdefault(self._temp_bytes[slot - self._temps_start], []).append(slot)
