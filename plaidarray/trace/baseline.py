"""The baseline tier: a pending graph run op by op, each op on a kernel compiled once per
op signature, not per graph.

A graph that no compiled executable serves yet runs here at once (``materialize.py``),
as PyTorch's eager mode runs each op on an ATen kernel built once: an op's kernel is the
shape-generic executable of the graph of that op alone (its operands as parameters),
every size a run-time value but 0 and 1 (``dynamic.Pattern.every_size``), so one kernel
serves the op at any size. Its key is the op's signature (op, attributes, ranks,
dtypes), which any graph recording that op shares: a kernel made for one graph or size
is never made again, and kernels already built (in this process, in the persistent
cache, or in the cache built at installation) serve a new graph with no compile. An op
whose lowering takes no run-time size (an FFT, a LAPACK call, control flow) has a
kernel per shape.

The graph's executable is the sequence of its ops' kernels over one table of values
(``Compiler.sequence``: llvm-cpu merges their steps into one executable, one call into C
a run), cached under the graph's key like a compiled one, so a loop's next read of the
same graph assembles nothing. An elementwise op (``OpDef.elementwise``) runs on its
operands flattened: its kernel serves every shape of as many elements. ``constant`` is a
constant of the sequence, ``reshape`` and ``get_tuple_element`` the value they take (a
row-major buffer reshaped is the same memory), so none runs code; a tuple-valued op (a
custom call, a loop) has each element of its tuple as a result. A result that is such a
value is copied, so that each result is memory of its own, as fused code's are.

The values are those of the fused code of the same graph: an op's kernel is made by the
same lowering as the op within a fused graph, whose kernel IR carries no fast-math flag
(``tiering.py``), so fusing never changes how an element is computed; tests compare the
two tiers bit for bit, op family by op family.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Sequence
from typing import Any, cast

import numpy as np

from ..backend.cache import EXECUTABLES
from ..backend.executable import Backend, Call, Executable, NotShapeGeneric
from ..hlo import Computation, Instruction, Module
from ..hlo.opdef import OPS
from ..hlo.shape import TUPLE, Shape, TupleShape
from . import dynamic
from .hot import Heat

#: Op kernels bound to sizes, by the exact single-op graph (sizes included); emptied at
#: this many, so a loop over ever new sizes does not grow it.
KEPT_BOUND = 4096

_BOUND: dict[Hashable, Executable] = {}

#: Op signatures (structure keys) whose kernel compiles per shape: their op took no
#: run-time size (``NotShapeGeneric``), learnt at the first compile.
_PER_SHAPE: set[Hashable] = set()


def _forget() -> None:
    """Drop the bound kernels (``plaidarray.clear_cache``: their code goes with them)."""
    _BOUND.clear()
    _PER_SHAPE.clear()


EXECUTABLES.on_clear.append(_forget)


class BaselineExecutable(Executable):
    """A graph's op kernels in sequence (``assemble``), counting the time its runs take
    against its structure (``hot.Heat``). ``results`` says where each result comes from
    when the sequence's results are not the graph's as they are: ``(k, None, None)`` the
    sequence's result ``k``; ``(k, None, dims)`` a copy of it, reshaped; ``(None, p, dims)``
    and ``(None, array, dims)`` a copy of parameter ``p`` or of a literal, reshaped (a
    result that is another value seen anew gets memory of its own, as fused code's)."""

    def __init__(self, sequence: Executable, results: list[tuple[Any, Any, Any]] | None, heat: Heat) -> None:
        self._sequence = sequence
        self._results = results
        self.heat = heat
        #: The fused compiles of its structure landed when it was made (``Heat.generation``).
        self.generation = heat.generation
        self.returns_parameters = sequence.returns_parameters

    @property
    def needs_attention(self) -> bool:
        """Whether a read should look again before running it: its structure is due for
        fused code, or fused code of its structure has landed since it was made."""
        heat = self.heat
        return heat.generation != self.generation or heat.due

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        start = time.perf_counter()
        outs = self._sequence.run(buffers)
        if self._results is not None:
            outs = [outs[k] if dims is None else np.array((outs[k] if k is not None else buffers[source]
                                                           if type(source) is int else source).reshape(dims))
                    for k, source, dims in self._results]
        self.heat.add(time.perf_counter() - start)
        return outs


def assemble(rows: tuple, outputs: tuple[int, ...], sources: Sequence[tuple[dict, Shape]], backend: Backend,
             heat: Heat) -> BaselineExecutable:
    """The baseline executable of a walked graph (``to_hlo.walk``: its key rows, its output
    rows, and each row's node's attributes and shape)."""
    n_params = sum(1 for row in rows if len(row) == 2)
    literals = [attrs["value"].value for row, (attrs, _) in zip(rows, sources) if row[0] == "constant"]
    defined = n_params + len(literals)
    value: list[Any] = [None] * len(rows)  # each row's value (a list of them for a tuple)
    aliased = [False] * len(rows)  # whether the row's value is another row's (or a literal)
    shapes: list[Shape] = []
    calls: list[Call] = []
    params = constants = 0
    for i, row in enumerate(rows):
        if len(row) == 2:
            value[i], params = params, params + 1
            continue
        op, _, at, dims, dtype = row
        attrs, shape = sources[i]
        if op == "constant":
            value[i], constants, aliased[i] = n_params + constants, constants + 1, True
        elif op == "reshape" or op == "get_tuple_element":
            value[i] = value[at[0]] if op == "reshape" else value[at[0]][attrs["index"]]
            aliased[i] = True
        else:
            distinct = list(dict.fromkeys(at))
            elements = list(cast(TupleShape, shape).elements) if dtype == TUPLE else [shape]
            value[i] = list(range(defined + len(shapes), defined + len(shapes) + len(elements)))
            shapes += elements
            executable, kernel_params = _kernel(rows, row, distinct, attrs, shape, backend)
            calls.append(Call(executable, tuple(value[o] for o in distinct), tuple(p[0] for p in kernel_params),
                              tuple(value[i])))
            if dtype != TUPLE:
                value[i] = value[i][0]
    computed = [value[o] for o in outputs if value[o] >= defined]
    sequence = backend.compiler.sequence(calls, n_params, literals, shapes, computed)
    results: list[tuple[Any, Any, Any]] | None = None
    if any(aliased[o] for o in outputs):
        results = []
        for o in outputs:
            v, dims = value[o], rows[o][3] if aliased[o] else None
            if v >= defined:
                results.append((computed.index(v), None, dims))
            else:
                results.append((None, v if v < n_params else literals[v - n_params], dims))
    return BaselineExecutable(sequence, results, heat)


def _kernel(rows: tuple, row: tuple, distinct: list[int], attrs: dict, shape: Shape,
            backend: Backend) -> tuple[Executable, tuple]:
    """The kernel of one row's op, bound to its sizes, and its parameters' rows (dims,
    dtype): its operands are the rows ``distinct`` (each passed once, as a graph passes a
    parameter used twice)."""
    op, attr_key, at, dims, dtype = row
    flat = op in OPS and OPS[op].elementwise
    params = tuple(((math.prod(rows[o][-2]),) if flat else rows[o][-2], rows[o][-1]) for o in distinct)
    out_dims = (math.prod(dims),) if flat else dims
    signature = params + ((op, attr_key, tuple(distinct.index(o) for o in at), out_dims, dtype),)
    executable = _BOUND.get((signature, backend.cache_tag))
    if executable is None:
        op_shape = Shape(out_dims, dtype) if dtype != TUPLE else shape
        executable = _bound(signature, attrs, op_shape, backend)
        if len(_BOUND) >= KEPT_BOUND:
            _BOUND.clear()
        _BOUND[signature, backend.cache_tag] = executable
    return executable, params


def _bound(rows: tuple, attrs: dict, op_shape: Shape, backend: Backend) -> Executable:
    """The kernel of an op signature (the single-op graph's rows) bound to its sizes:
    the shape-generic executable of its structure, found in the cache or compiled, else
    (an op that takes no run-time size, or sizes that are all 0 or 1) its executable for
    these sizes."""
    sources: list[tuple[str | None, dict, Shape]] = [(None, {}, Shape(r[0], r[1])) for r in rows[:-1]]
    sources.append((rows[-1][0], attrs, op_shape))
    if isinstance(op_shape, TupleShape):
        elements = op_shape.elements
        tuple_row = len(rows) - 1
        rows = rows + tuple(("get_tuple_element", (("index", k),), (tuple_row,), e.dims, e.dtype)
                            for k, e in enumerate(elements))
        sources += [("get_tuple_element", {"index": k}, e) for k, e in enumerate(elements)]
        outputs = tuple(range(tuple_row + 1, len(rows)))
    else:
        outputs = (len(rows) - 1,)
    shape, values, sizes = dynamic.generalize(rows)
    structure = dynamic.canonical((shape, outputs, frozenset(), backend.cache_tag))
    executable = None
    if structure not in _PER_SHAPE and backend.compiler.shape_generic and \
            not dynamic.has_op(rows, backend.compiler.per_shape_ops):
        executable = _generic(rows, outputs, structure, shape, values, sizes, sources, backend)
    if executable is None:
        key = (rows, outputs)
        executable = EXECUTABLES.get((key, frozenset(), backend.cache_tag), backend.name,
                                     lambda: _compile(backend, _computation(rows, outputs, sources), 0, key))
    return executable


def _generic(rows: tuple, outputs: tuple[int, ...], structure: Hashable, shape: tuple, values: tuple[int, ...],
             sizes: tuple[bool, ...], sources: list, backend: Backend) -> Executable | None:
    """The op's shape-generic kernel bound to ``values``; None where it has no run-time
    size (every size 0 or 1) or its op turns out to take none (then per shape from now on)."""
    pattern = dynamic.Pattern.every_size(values, sizes, dynamic.ties(rows, values), frozenset())
    found = pattern.match(values, sizes, empty=True)
    if not pattern.n_symbols or found is None:
        return None
    generic_key = ("op-kernel", structure, pattern.code_key)  # the code, whatever sizes it met first
    template = EXECUTABLES.lookup(generic_key)
    if template is None:
        structure_key = ("shape-generic", shape, outputs, pattern.code_key)
        try:
            comp = _computation(rows, outputs, sources, pattern, values)
            template = EXECUTABLES.get(generic_key, backend.name,
                                       lambda: _compile(backend, comp, pattern.n_symbols, structure_key))
        except (NotShapeGeneric, TypeError):  # a size its shape rule or lowering needs as a number
            _PER_SHAPE.add(structure)
            return None
    return template.bind(found)


def _computation(rows: tuple, outputs: tuple[int, ...], sources: Sequence[tuple], pattern: Any = None,
                 values: Sequence[int] = ()) -> Computation:
    """The single-op graph's HLO computation, its sizes symbols where ``pattern`` says."""
    if pattern is not None:
        built = dynamic.symbolic_instructions(rows, sources, pattern, values)
    else:
        built = []
        for (op, attrs, shape), row in zip(sources, rows):
            if len(row) == 2:
                built.append(Instruction("parameter", (), {"number": -1, "shape": shape}, shape))
            else:
                built.append(Instruction(op, [built[i] for i in row[2]], attrs, shape))
    params = [inst for inst, row in zip(built, rows) if len(row) == 2]
    for number, param in enumerate(params):
        param.attrs["number"] = number
    return Computation("main", params, [built[i] for i in outputs])


def _compile(backend: Backend, comp: Computation, n_symbols: int, structure_key: Hashable) -> Executable:
    return backend.compiler.compile(Module("op_kernel", comp, frozenset(), n_symbols, structure_key))
