"""The baseline tier: a pending graph run op by op, each op on a kernel compiled once per
op signature, not per graph.

A graph that no compiled executable serves yet runs here at once (``materialize.py``),
as PyTorch's eager mode runs each op on an ATen kernel built once: an op's kernel is the
shape-generic executable of the graph of that op alone (its operands as parameters),
every size a run-time value (``dynamic.Pattern.every_size``), 0 where the op's code takes
an empty size (``dynamic.empty_fits``) and 1 but where it asks whether a size is 1 (a
broadcast, a matrix-vector product: ``dynamic.unit_positions``), so one kernel serves the
op at any size; an op whose results are all empty runs no code. Its key is the op's
signature (op, attributes, ranks, dtypes), which any graph recording that op shares: a
kernel made for one graph or size is never made again, and kernels already built (in this
process, in the persistent cache, or in the cache built at installation, whose catalogue
finds an op's kernel by its signature alone: ``Compiler.listed``) serve a new graph with
no compile. An op whose lowering takes no run-time size (control flow) has a kernel
per shape; an FFT runs on its library's template of any length, which plans for the
length when bound (``Compiler.sized_kernel``), so a graph's transforms of new lengths
bind its structure's sequence as other sizes do.

The graph's executable is the sequence of its ops' kernels over one table of values
(``Compiler.sequence``: llvm-cpu merges their steps into one executable, one call into C
a run), cached under the graph's key like a compiled one, so a loop's next read of the
same graph assembles nothing. An op runs at its shapes with the runs of adjacent axes it
treats alike merged (``hlo.opdef.Merge``: a row-major buffer holds the same elements in the
same places): an elementwise op's operands flattened, so its kernel serves every shape of as
many elements; a broadcast's, a transpose's, a reduction's, a join's, a sort's and a
product's runs, so that a rank-5 broadcast of attention scores runs on a rank-3 one's
kernel. ``constant`` is a constant of the sequence, ``reshape`` and ``get_tuple_element``
the value they take (a row-major buffer reshaped is the same memory), so none runs code; a
tuple-valued op (a custom call, a loop) has each element of its tuple as a result. A result
that is such a value is copied, so that each result is memory of its own, as fused code's
are.

The values are those of the fused code of the same graph: an op's kernel is made by the
same lowering as the op within a fused graph, whose kernel IR carries no fast-math flag
(``tiering.py``), so fusing never changes how an element is computed; tests compare the
two tiers bit for bit, op family by op family.
"""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..backend.cache import EXECUTABLES, HashedKey
from ..backend.executable import Backend, Call, Executable, NotShapeGeneric
from ..hlo import Computation, Instruction, Module
from ..hlo.fingerprint import Hashed
from ..hlo.opdef import OPS, Merge, merge_of, merged
from ..hlo.shape import TUPLE, Shape, TupleShape
from ..hlo.symbolic import Dim, evaluate, is_static
from . import dynamic, explain, hot
from .hot import Heat
from .node import Node
from .to_hlo import keep_untracked

#: Op kernels bound to sizes, by the exact single-op graph (sizes included); emptied at
#: this many, so a loop over ever new sizes does not grow it.
KEPT_BOUND = 4096

_BOUND: dict[Hashable, Executable] = {}

#: ``_template``'s answers by exact op signature (sizes included): the graphs of a script
#: repeat their ops (a Kalman filter's 4x4 products), and finding an op's template again
#: (its single-op graph generalised, its symbols tied, the cache looked up) was a third
#: of planning a new graph's sequence, 0.25 ms an op. Emptied at ``KEPT_BOUND``.
_TEMPLATES: dict[Hashable, tuple[Executable | None, tuple, dynamic.Pattern | None]] = {}

#: Op signatures (structure keys) whose kernel compiles per shape: their op took no
#: run-time size (``NotShapeGeneric``), learnt at the first compile.
_PER_SHAPE: set[Hashable] = set()


def forget() -> None:
    """Drop the bound kernels and the structures' sequences (``plaidarray.clear_cache``:
    their code goes with them; the installation's build, so that each call of its corpus
    meets its ops as a new program would)."""
    _BOUND.clear()
    _TEMPLATES.clear()
    _GENERIC.clear()
    _PER_SHAPE.clear()
    _PLANS.clear()
    _MET.clear()
    _SIGNATURES.clear()
    _AT_SIZES.clear()
    _FOLDS.clear()
    PLANNED.clear()
    QUICK_RUNS.clear()


EXECUTABLES.on_clear.append(forget)


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
        self._runs = 0
        #: The run after which its prepared run is asked for (again: twice as many runs
        #: later where none was made, as while first-tier code runs, which is timed apart).
        self._prepare_after = PREPARED_AFTER
        if sequence.prepared_cheaply and not self._took(sequence.prepared(heat)):
            self._prepare_after = 1

    @property
    def needs_attention(self) -> bool:
        """Whether a read should look again before running it: its structure is due for
        fused code, or fused code of its structure has landed since it was made."""
        heat = self.heat
        return heat.generation != self.generation or heat.due

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        """Its sequence's run, timed against its structure; from its ``PREPARED_AFTER``-th
        run on, the sequence's prepared run (``Executable.prepared``, timed alike) is its
        ``run``: a loop's read that the cache serves then calls no Python to run it (a
        small graph's cached read ~0.3 us faster, a window's read at a size met before
        ~1 us), or only to copy the results that are not the sequence's own (a live view
        read with its base, ~10% of the eager benchmark's runs: ~2 us a run less). A
        sequence prepared cheaply (its calls chained at its making, ``call_by_call.py``)
        is taken so at once: its first run too calls no Python for its calls."""
        start = time.perf_counter()
        outs = self._sequence.run(buffers)
        if self._results is not None:
            outs = _copies(self._results, buffers, outs)
        self.heat.add(time.perf_counter() - start)
        self._runs += 1
        if self._runs == self._prepare_after and not self._took(self._sequence.prepared(self.heat)):
            self._prepare_after *= 2
        return outs

    def _took(self, prepared: Callable[[list[np.ndarray]], list[np.ndarray]] | None) -> bool:
        """Whether its sequence's ``prepared`` run is now its ``run`` (where there is one)."""
        if prepared is None:
            return False
        if self._results is None:
            self.run = prepared  # type: ignore[method-assign,assignment]  # the instance's, over the class's
        else:  # no reference to itself: an executable the cache lets go of is freed at once
            self.run = functools.partial(_copied_after, self._results, prepared)  # type: ignore[method-assign]
        return True


def _copies(results: list[tuple[Any, Any, Any]], buffers: list[np.ndarray], outs: list[np.ndarray]
            ) -> list[np.ndarray]:
    """The results a ``BaselineExecutable``'s ``results`` say, from its sequence's ``outs``
    and its run's ``buffers``."""
    return [outs[k] if dims is None else np.array((outs[k] if k is not None else buffers[source]
                                                   if type(source) is int else source).reshape(dims))
            for k, source, dims in results]


def _copied_after(results: list[tuple[Any, Any, Any]], prepared: Callable[[list[np.ndarray]], list[np.ndarray]],
                  buffers: list[np.ndarray]) -> list[np.ndarray]:
    """A run of a ``BaselineExecutable`` whose results are copies: its sequence's prepared
    run, then the copies."""
    return _copies(results, buffers, prepared(buffers))


#: The runs of a baseline executable after which its sequence's prepared run runs it (a
#: merged sequence's, whose preparing makes its allocators). A sequence prepared cheaply is
#: taken at once: a graph's calls chained already (``call_by_call.py``), and a runner bound
#: to a size (a plan's, ``_Runner``: ~1.3 us to prepare, where its Python run cost ~15 us
#: more than the prepared one at each of the first two runs of each new size).
PREPARED_AFTER = 2


def assemble(rows: tuple, outputs: tuple[int, ...], nodes: Sequence[Node], backend: Backend, heat: Heat,
             structure: Hashable | None = None, values: tuple[int, ...] = (), sizes: tuple[bool, ...] = (),
             given: frozenset[int] = frozenset()) -> BaselineExecutable:
    """The baseline executable of a walked graph (``to_hlo.walk``: its key rows, its output
    rows, and each row's node): its structure's shape-generic
    sequence bound to its sizes (``values``, ``sizes`` and ``structure``:
    ``dynamic.generalize``'s and the graph's structure key), made once per structure and
    pattern of sizes (from its second graph, ``_met_before``), else its ops' kernels merged
    at its sizes (``_templates_at_sizes``), or, where they cannot be, bound one by one
    first. The parameters numbered in ``given`` are donated (``materialize``): an update
    of one writes into its buffer (``_in_place``)."""
    in_place = _in_place(rows, outputs, given)
    if structure is not None and backend.compiler.shape_generic and _met_before(structure, backend):
        made = _bound(*_plan(rows, outputs, nodes, backend, structure, values, sizes, in_place), rows, heat)
        if made is not None:
            return made
    sources = _sources(nodes)
    layout = _Layout(rows, outputs, sources, [s for _, s in sources], fold=True)
    if layout.folded:
        _fold_where_built(layout, rows, sources, backend, in_place, exact=True)
    sequence = _templates_at_sizes(layout, rows, sources, backend, in_place)
    if sequence is None:
        layout.calls.clear()
        layout.shapes.clear()
        for i, operands in layout.ops():
            attrs, shape = sources[i]
            executable, params = _kernel(rows, rows[i], attrs, shape, backend, i in in_place, layout.folded)
            layout.call(i, operands, executable, tuple(p[0] for p in params))
        sequence = backend.compiler.sequence(layout.calls, layout.n_params, layout.literals, layout.shapes,
                                             layout.computed)
    return BaselineExecutable(sequence, layout.results(rows), heat)


def _sources(nodes: Sequence[Node]) -> list[tuple[dict, Shape]]:
    """Each node's attributes and shape: what planning a graph reads of its nodes, taken
    only where a plan is made (a read at new sizes of a structure planned before takes none)."""
    return [(n.attrs, n.shape) for n in nodes]


def _templates_at_sizes(layout: _Layout, rows: tuple, sources: Sequence[tuple[dict, Shape]], backend: Backend,
                        in_place: frozenset[int]) -> Executable | None:
    """The sequence of a graph's ops' shape-generic kernels at its sizes, made in one merge
    (``Compiler.generic_sequence`` with no symbol of its own: each call's run-time sizes are
    numbers), where binding each kernel to its sizes first made an executable per op, a
    third of a new graph's assembly. None where the compiler makes none (a call's binding
    makes what it needs per size, a size past a library call's limit): the caller binds
    each op's kernel then."""
    folded, tag = layout.folded, backend.cache_tag
    for i, operands in layout.ops():
        key = (_op_key(rows, rows[i], folded), i in in_place, tag)
        found = _AT_SIZES.get(key)
        if found is None:
            attrs, shape = sources[i]
            executable, kernel_rows, kernel_pattern, merge = _kernel_template(rows, rows[i], attrs, shape, backend,
                                                                              i in in_place, folded)
            found = executable, _kernel_symbols(kernel_rows, kernel_pattern, [sources[o][1].dims for o in operands],
                                                attrs, shape, merge)
            if len(_AT_SIZES) >= KEPT_BOUND:
                _AT_SIZES.clear()
            _AT_SIZES[key] = found
        if found[1] is None:
            return None
        layout.call(i, operands, found[0], (), found[1])
    return backend.compiler.generic_sequence(layout.calls, layout.n_params, layout.literals, layout.shapes,
                                             layout.computed, 0)


#: ``_templates_at_sizes``' kernel and run-time sizes of an op, by its row without its
#: operands' numbers (``_op_key``, which decides its shape: a tuple's elements too): a
#: script's new graphs are mostly ops met in other graphs at the same sizes (the same
#: arrays read in other expressions), and finding an op's template and working out its
#: sizes again was ~10 us an op. Emptied at ``KEPT_BOUND``.
_AT_SIZES: dict[Hashable, tuple[Executable, tuple[Dim, ...] | None]] = {}


#: Structures met once (by their ``_PLANS`` key), whose graph ran on its ops' kernels
#: merged at its sizes; emptied at ``KEPT_MET``.
_MET: dict[Hashable, None] = {}
KEPT_MET = 4096


def _met_before(structure: Hashable, backend: Backend) -> bool:
    """Whether a graph of ``structure`` was met before, so that it is worth its structure's
    shape-generic sequence (``_plan``), which serves it at any sizes. Met for the first time
    (most graphs of a script that runs once), its ops' kernels are merged at its sizes
    instead (``_templates_at_sizes``): ~0.25 against 0.4 ms for a new 7-op structure of
    1-d arrays, ~0.3 against 0.7 for a 6-op one of matrices. A graph met again at its
    sizes is the executable cache's; at other sizes it plans its structure then, once."""
    key = (structure, backend.cache_tag)
    if key in _PLANS or key in _MET:
        return True
    if len(_MET) >= KEPT_MET:
        _MET.clear()
    _MET[key] = None
    return False


#: Ops whose kernel may write its result into its first operand's buffer, when donated.
IN_PLACE_OPS = frozenset({"dynamic_update_slice", "scatter"})


def _in_place(rows: tuple, outputs: tuple[int, ...], given: frozenset[int]) -> frozenset[int]:
    """The rows whose op updates a donated parameter in place (``a[i] = v`` in a loop costs
    the size of ``v``, as fused code's does): an op of ``IN_PLACE_OPS`` whose first
    operand is a donated parameter that nothing else reads (not another op, not the
    graph's results), so no value the sequence still needs is overwritten."""
    if not given:
        return frozenset()
    readers: dict[int, list[int]] = {}
    number = 0
    donated: set[int] = set()
    for i, row in enumerate(rows):
        if len(row) == 2:
            if number in given:
                donated.add(i)
            number += 1
            continue
        for o in row[2]:
            if o in donated:
                readers.setdefault(o, []).append(i)
    found = set()
    for p, users in readers.items():
        i = users[0]
        if len(users) == 1 and rows[i][0] in IN_PLACE_OPS and rows[i][2][0] == p and p not in outputs:
            found.add(i)
    return frozenset(found)


class _Layout:
    """A graph's values as a sequence numbers them (``Compiler.sequence``): parameters,
    literals, then each op's results, its ops' calls, and which results are another value
    seen anew (``aliased``: a reshape, a tuple's element, a literal). ``shapes`` gives each
    row's shape, as numbers or in a pattern's symbols. ``folded`` (with ``fold``):
    broadcasts of a 0-d value that one elementwise op reads (``x * 2.0``'s scalar,
    ``x - mean(x)``'s mean), which run no kernel: the reader's kernel takes the 0-d value
    and broadcasts it itself (``_signature``), where writing it out at every element cost a
    pass over memory and a temporary as large as the result (``x * 2.0`` of 1e5 float64
    values: 100 us, ``x * x`` 35). A reader whose kernel of folded operands is not built
    (``_fold_where_built``) keeps its broadcasts."""

    def __init__(self, rows: tuple, outputs: tuple[int, ...], sources: Sequence[tuple[dict, Shape]],
                 shapes: Sequence[Shape], fold: bool = False) -> None:
        self._rows, self._outputs, self._row_shapes = rows, outputs, shapes
        self.n_params = sum(1 for row in rows if len(row) == 2)
        self.literals = [attrs["value"].value for row, (attrs, _) in zip(rows, sources) if row[0] == "constant"]
        self._defined = self.n_params + len(self.literals)
        self.value: list[Any] = [None] * len(rows)  # each row's value (a list of them for a tuple)
        self.aliased = [False] * len(rows)
        self.shapes: list[Shape] = []
        self.calls: list[Call] = []
        self._sources = sources
        self.folded = _folded(rows, outputs) if fold else frozenset()

    def ops(self) -> Iterator[tuple[int, list[int]]]:
        """The rows that run a kernel, each with its operand rows, in order; the others are
        numbered on the way. An op's kernel takes each operand as a parameter of its own,
        the same value twice as two (``x * x``, ``where(m, m, n)``, ``take(p, p)``, a join
        of [x, y, x] and ``m @ m`` run on the kernels of distinct operands: each pattern of
        repeats was a kernel of its own, compiled at its first use)."""
        params = constants = 0
        for i, row in enumerate(self._rows):
            if len(row) == 2:
                self.value[i], params = params, params + 1
                continue
            op, at = row[0], row[2]
            if op == "constant":
                self.value[i], constants, self.aliased[i] = self.n_params + constants, constants + 1, True
            elif op == "reshape" or op == "get_tuple_element":
                attrs = self._sources[i][0]
                self.value[i] = self.value[at[0]] if op == "reshape" else self.value[at[0]][attrs["index"]]
                self.aliased[i] = True
            elif i not in self.folded:
                yield i, [self._rows[o][2][0] if o in self.folded else o for o in at]

    def call(self, i: int, operands: list[int], executable: Executable, input_dims: tuple,
             symbols: tuple[Dim, ...] = ()) -> None:
        shape, value = self._row_shapes[i], self.value
        first = self._defined + len(self.shapes)
        if self._rows[i][4] == TUPLE:
            elements = cast(TupleShape, shape).elements
            self.shapes += elements
            results = tuple(range(first, first + len(elements)))
            value[i] = list(results)
        else:
            self.shapes.append(shape)
            results = (first,)
            value[i] = first
        self.calls.append(Call(executable, tuple([value[o] for o in operands]), input_dims, results, symbols))

    @property
    def computed(self) -> list[int]:
        """The results the sequence itself gives: the outputs it computes, each value once.
        Outputs that are one value (a value and its reshape, both read: a graph cut at the
        pending bound keeps both) are copies made by ``BaselineExecutable`` (``results``);
        asked twice of the sequence, they kept it from being merged, so every new size of
        such a structure bound and merged its ops one by one."""
        return list(dict.fromkeys(self.value[o] for o in self._outputs if self.value[o] >= self._defined))

    @property
    def copies(self) -> bool:
        """Whether a result is a copy ``BaselineExecutable`` makes (``results``)."""
        return any(self.aliased[o] for o in self._outputs)

    def results(self, rows: tuple) -> list[tuple[Any, Any, Any]] | None:
        """``BaselineExecutable``'s ``results`` for a graph of these rows (None: the
        sequence's results are the graph's as they are)."""
        return self._results(lambda o: rows[o][3]) if self.copies else None

    def results_in_symbols(self) -> list[tuple[Any, Any, Any]]:
        """``results`` with each copy's dims as the layout's shapes give them: in a plan's
        symbols (``_generic_plan``), for every graph of its pattern (``quick``)."""
        return self._results(lambda o: self._row_shapes[o].dims)

    def _results(self, dims_of: Callable[[int], tuple]) -> list[tuple[Any, Any, Any]]:
        computed = self.computed
        results: list[tuple[Any, Any, Any]] = []
        for o in self._outputs:
            v, dims = self.value[o], dims_of(o) if self.aliased[o] else None
            if v >= self._defined:
                results.append((computed.index(v), None, dims))
            else:
                results.append((None, v if v < self.n_params else self.literals[v - self.n_params], dims))
        return results


def _folded(rows: tuple, outputs: tuple[int, ...]) -> frozenset[int]:
    """The rows of broadcasts of a 0-d value that one elementwise op reads (``_Layout``);
    their readers are looked for only where there are such broadcasts (a graph's layout is
    made at each new graph)."""
    spread = {i for i, row in enumerate(rows)
              if len(row) == 5 and row[0] == "broadcast_in_dim" and not rows[row[2][0]][-2] and i not in outputs}
    if not spread:
        return frozenset()
    readers: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        if len(row) == 5:
            for o in row[2]:
                if o in spread:
                    readers.setdefault(o, []).append(i)
    return frozenset(i for i in spread if len(readers.get(i, ())) == 1
                     and rows[readers[i][0]][0] in OPS and OPS[rows[readers[i][0]][0]].elementwise)


#: Whether kernels of folded operands (``_Layout.folded``) are compiled where no cache
#: holds them: at the installation's build (``prebuild.py``), which builds those of its
#: corpus. A program only loads them (from the installation or its cache), and runs an op
#: whose kernel of folded operands is not built on the kernels of its operands as arrays,
#: which the installation holds: folding never makes a first use wait for a compile.
COMPILE_FOLDED = False


def _fold_where_built(layout: _Layout, rows: tuple, sources: Sequence[tuple[dict, Shape]], backend: Backend,
                      in_place: frozenset[int], exact: bool = False) -> None:
    """Keeps in ``layout.folded`` only the broadcasts whose reader's kernel of folded
    operands is built (or, with ``COMPILE_FOLDED``, compiled) for any size, and, if
    ``exact`` (the rows' sizes are numbers), fits these sizes."""
    folded = layout.folded
    kept = set(folded)
    for i, row in enumerate(rows):
        if len(row) == 5 and not kept.isdisjoint(row[2]):
            key = (_op_key(rows, row, folded), i in in_place, backend.cache_tag, exact)
            folds = _FOLDS.get(key)
            if folds is None:
                signature, attrs, _ = _signature(rows, row, sources[i][0], folded)
                template, kernel_rows, pattern = _found_template(signature, attrs, sources[i][1], backend,
                                                                 i in in_place, compile_missing=COMPILE_FOLDED)
                folds = not (template is None or pattern is None or exact and not _fits(kernel_rows, pattern, backend))
                if template is not None or COMPILE_FOLDED:  # a kernel not built may be built later
                    if len(_FOLDS) >= KEPT_BOUND:
                        _FOLDS.clear()
                    _FOLDS[key] = folds
            if not folds:
                kept.difference_update(row[2])
    layout.folded = frozenset(kept)


#: ``_fold_where_built``'s answer for an op's row (``_AT_SIZES``' key, and whether its
#: sizes are numbers), where its kernel of folded operands is found: ~15 us a reader of a
#: folded scalar (``x * 2.0``) in each new graph. Emptied at ``KEPT_BOUND``.
_FOLDS: dict[Hashable, bool] = {}


def _fits(kernel_rows: tuple, pattern: dynamic.Pattern, backend: Backend) -> bool:
    """Whether a kernel's single-op rows, of sizes that are numbers, fit its ``pattern``."""
    values, sizes = dynamic.generalize(kernel_rows)[1:]
    return pattern.match(values, sizes, dynamic.empty_fits(kernel_rows, values, backend.compiler)) is not None


@dataclass
class _Plan:
    """A structure's baseline executable for a pattern of sizes: the shape-generic
    sequence of its ops' kernels (None where one of them has code for its sizes only, or
    the backend makes none), and its layout."""

    pattern: dynamic.Pattern
    template: Executable | None
    layout: _Layout


#: Plans by structure (a few patterns each); the least recently used structure goes first.
_PLANS: OrderedDict[Hashable, list[_Plan]] = OrderedDict()
KEPT_PLANS = 512
#: Patterns a structure keeps plans for: sizes of 0 and 1 are specialised, so a loop meets a few.
PATTERNS_PER_STRUCTURE = 4

#: The structures (``dynamic.canonical``'s) with a plan that has a sequence, by their value
#: (``_Miss.structure``'s: the rows without sizes, the outputs, the donated parameters and
#: the backend's tag), where ``_graph.read`` finds a read's structure from its rows
#: generalised, without canonicalising it (``materialize.planned``): each the structure,
#: or, where C runs its reads at new sizes itself, its entry for that (``quick``: a
#: tuple whose first item is the structure). Emptied at ``KEPT_PLANS``; one whose plans
#: are gone is found, and ``from_plan`` finds no plan.
PLANNED: dict[Hashable, Hashed | tuple] = {}


def _plan(rows: tuple, outputs: tuple[int, ...], nodes: Sequence[Node], backend: Backend, structure: Hashable,
          values: tuple[int, ...], sizes: tuple[bool, ...], in_place: frozenset[int]) -> tuple[_Plan, list[int]]:
    """The plan of a structure that fits these sizes, and its symbols' values, made if need
    be: every size a run-time value but 0 and 1, tied where the ops'
    shape rules tie them (the structure says which parameters are donated, so which rows
    update in place, ``in_place``). A plan fits sizes its pattern matches and its
    sequence serves (``Executable.serves``: an FFT template, lengths of one parity)."""
    key = (structure, backend.cache_tag)
    fitting = _fitting(key, rows, values, sizes, backend)
    if fitting is not None:
        return fitting
    empty = dynamic.empty_fits(rows, values, backend.compiler)
    pattern = dynamic.Pattern.every_size(values, sizes, dynamic.ties(rows, values), frozenset())
    found = pattern.match(values, sizes, empty)
    compiler = backend.compiler
    sources = _sources(nodes)
    if found is None or not pattern.n_symbols or dynamic.has_op(rows, compiler.per_shape_ops - compiler.sized_ops):
        # sizes all 0 or 1, or an op with code for its sizes only (control flow): the
        # exact graph's kernels, bound
        plan = _Plan(pattern, None, _Layout(rows, outputs, sources, [s for _, s in sources]))
    else:
        plan = _generic_plan(rows, outputs, sources, backend, pattern, values, in_place)
    if isinstance(structure, Hashed) and (plan.template is not None or
                                          plan.pattern.n_symbols and structure.value in PLANNED):
        if len(PLANNED) >= KEPT_PLANS:
            PLANNED.clear()
        PLANNED[structure.value] = structure  # its quick entry, if any, was of the plan its reads found first
    plans = _PLANS.setdefault(key, [])
    plans.insert(0, plan)
    del plans[PATTERNS_PER_STRUCTURE:]
    while len(_PLANS) > KEPT_PLANS:
        _PLANS.popitem(last=False)
    return plan, found or []


def quick(structure: Hashable, backend: Backend, heat: Heat, sizes: tuple[bool, ...]) -> None:
    """Makes ``PLANNED``'s entry of a planned structure (whose read of ``sizes``,
    ``generalize``'s, its plan just served) what ``_graph.read`` runs its reads at new
    sizes with, without ``materialize.planned``'s Python (~15 us a read: a runner, its
    baseline executable and its cache entry, around ~3 us of work; ~4,100 reads of the
    eager benchmark's first runs), where its first plan with a sequence (after plans of
    fixed sizes alone: a size of 1 met, whose plan matches no other sizes) has one that runs
    at any sizes from C (``Executable.any_size``); a result that is a copy (``float(x[i])``'s
    element, a reshape) is made after the run (``_copied_at``), where such structures' reads
    at new sizes were all ``planned``'s (~320 over the eager benchmark's first runs). The entry holds the
    structure, its heat, the tables where that heat and the structure's fused history are
    found (``hot.HEATS.by_structure``, ``dynamic.HISTORIES.patterns``), the plan's pattern
    (the positions of its fixed sizes and their values, the positions of its symbols, the
    symbols, and whether each such position is a size), the number of sizes, the runs at
    any sizes, the sizes it served (each with its run and how often it ran) and what caches a
    run (``_keep_quick``). C serves a read
    by it only as ``planned`` would: the heat still the structure's and not due, the
    structure not seen by the fused path, the pattern matching the read's values with no
    size below 2 among its symbols (else ``planned`` decides: ``_fitting`` finds the same
    plan for what C serves), and the sequence's runs taking the sizes. The run bound at
    the first read of some sizes serves their next reads, found by the read's digest as a
    cache hit is (``QUICK_RUNS``), and their eighth caches it (``_keep_quick``, the entry's
    last item), so that a loop over a few sizes (batches and a last smaller one) runs on
    cache hits from then on, while sizes read a few times (a script's second and third
    runs, which read each size once more) are not cached: caching a run was ~13-20 us, the
    most of such a read. A new plan of the structure drops the entry (``_plan``); the runs
    it bound stay found by their digests, the same code at the same sizes."""
    if not isinstance(structure, Hashed) or type(PLANNED.get(structure.value)) is not Hashed:
        return
    plan = next((p for p in _PLANS.get((structure, backend.cache_tag), ()) if p.template is not None or p.pattern.n_symbols),
                None)
    if plan is None or plan.template is None:
        return
    any_size = plan.template.any_size(plan.pattern.n_symbols, heat)
    if any_size is None:
        return
    if plan.layout.copies:
        any_size = functools.partial(_copied_at, any_size, plan.layout.results_in_symbols())
    fixed, symbols = plan.pattern.code_key
    PLANNED[structure.value] = (structure, heat, hot.HEATS.by_structure, dynamic.HISTORIES.patterns,
                                tuple(p for p, _ in fixed), tuple(v for _, v in fixed), tuple(p for p, _ in symbols),
                                tuple(s for _, s in symbols), tuple(sizes[p] for p, _ in symbols),
                                plan.pattern.n_symbols, len(sizes), any_size, {}, _keep_quick)


#: The runs that quick entries bound at a read's sizes (``quick``), by the read's digest:
#: ``(entry, [run, reads])``, written and read by C's read path (``_graph.read``), which
#: forgets them all past a bound; a run's entry is checked again at each read.
QUICK_RUNS: dict[bytes, tuple] = {}


def _keep_quick(structure: Hashed, heat: Heat, run: Any, key: tuple, graph_key: tuple, values: tuple[int, ...],
                digest: bytes | None) -> None:
    """Cache a quick entry's ``run`` at a read's sizes ``values`` under the read's ``key``
    (``_graph.read``'s, at the second read of those sizes), as ``materialize.planned``
    caches the executable it binds from the plan: that binding (the pattern matched again,
    a runner and its prepared run) was ~25 us of the ~45 a loop's second read of a size
    took, where the run C made is the same code at the same sizes. The read's ``digest``
    (None: it has none) finds it from the next read on, as a hit's does
    (``ExecutableCache.remember``), without making the walk's key again."""
    executable = BaselineExecutable(_QuickSequence(run), None, heat)
    hashed = cache_at_sizes(key, graph_key, executable, structure, values)
    if digest is not None:
        EXECUTABLES.remember(digest, hashed, executable)


def cache_at_sizes(key: tuple, graph_key: tuple, executable: Executable, structure: Hashable,
                   values: tuple[int, ...]) -> HashedKey:
    """Cache the executable of a read at new sizes of a planned structure under the read's
    ``key`` (``materialize.planned``'s, ``_keep_quick``'s), counted among its structure's
    sizes, the walk's graph key untracked by the collector as the cache keeps it; the key,
    hashed once for every later lookup of it."""
    keep_untracked(graph_key)
    hashed = HashedKey(key)
    EXECUTABLES.insert(hashed, executable, family=structure, sizes=values)
    return hashed


class _QuickSequence(Executable):
    """A quick entry's run at one read's sizes (an ``_entry.Bound``, or a ``_CopiedRun``) as
    the sequence of the ``BaselineExecutable`` that caches it: its run, timed against its
    structure's heat as it runs (``Executable.any_size``), is the executable's run."""

    returns_parameters = False
    prepared_cheaply = True

    def __init__(self, run: Any) -> None:
        self._run = run

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        return self._run.run(buffers)

    def prepared(self, timed: Any = None) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
        return self._run.run


def _copied_at(any_size: Callable[[list[int]], Any], results: list[tuple[Any, Any, Any]], sizes: list[int]
               ) -> _CopiedRun | None:
    """``any_size``'s run at the symbols' values ``sizes`` (None where it makes none) with
    the copies ``results`` say (``_Layout.results_in_symbols``, their dims evaluated at
    ``sizes``), as ``materialize.planned``'s ``BaselineExecutable`` would run it."""
    bound = any_size(sizes)
    if bound is None:
        return None
    return _CopiedRun(bound.run, [(k, source, dims if dims is None or is_static(dims) else
                                   tuple([evaluate(d, sizes) for d in dims])) for k, source, dims in results])


class _CopiedRun:
    """A quick entry's run whose results are copies (``_copied_at``)."""

    __slots__ = ("_run", "_results")

    def __init__(self, run: Callable[[list[np.ndarray]], list[np.ndarray]], results: list[tuple[Any, Any, Any]]) -> None:
        self._run, self._results = run, results

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        return _copied_after(self._results, self._run, buffers)


def _fitting(key: Hashable, rows: tuple, values: tuple[int, ...], sizes: tuple[bool, ...],
             backend: Backend) -> tuple[_Plan, list[int]] | None:
    """The plan of the structure (``_PLANS``' ``key``) that fits these sizes, and its
    symbols' values; None where none is made."""
    plans = _PLANS.get(key)
    if plans is None:
        return None
    _PLANS.move_to_end(key)
    empty = 0 in values and dynamic.empty_fits(rows, values, backend.compiler)
    for plan in plans:
        found = plan.pattern.match(values, sizes, empty)
        if found is not None and (plan.template is None or plan.template.serves(found)):
            return plan, found
    return None


def from_plan(rows: tuple, backend: Backend, heat: Heat, structure: Hashable, values: tuple[int, ...],
              sizes: tuple[bool, ...]) -> BaselineExecutable | None:
    """A graph's baseline executable when its structure's plan is made and serves its sizes
    (``assemble``'s, the plan's sequence bound to them), made without planning or looking
    at its nodes: a loop's read at a new size (~3,600 in the eager benchmark's first
    runs), which ``materialize`` makes under ``GRAPH_LOCK`` where it looks for a cached
    executable, in C's read path too; None where ``assemble`` is to make it."""
    fitting = _fitting((structure, backend.cache_tag), rows, values, sizes, backend)
    return None if fitting is None else _bound(*fitting, rows, heat)


def _bound(plan: _Plan, found: list[int], rows: tuple, heat: Heat) -> BaselineExecutable | None:
    """The plan's sequence bound to its symbols' values ``found`` for a graph of these
    rows; None where it has no sequence or its binding takes no such sizes."""
    bound = plan.template.runner(found) if plan.template is not None else None
    return None if bound is None else BaselineExecutable(bound, plan.layout.results(rows), heat)


def _generic_plan(rows: tuple, outputs: tuple[int, ...], sources: Sequence[tuple[dict, Shape]], backend: Backend,
                  pattern: dynamic.Pattern, values: tuple[int, ...], in_place: frozenset[int]) -> _Plan:
    """The structure's sequence of op-kernel templates in ``pattern``'s symbols: each
    kernel's run-time sizes are sizes of the graph (of merged axes, products of them: an
    elementwise op's element count)."""
    try:
        built = dynamic.symbolic_instructions(rows, [(row[0] if len(row) == 5 else "parameter", attrs, shape)
                                                     for row, (attrs, shape) in zip(rows, sources)], pattern, values)
    except (NotShapeGeneric, TypeError):  # a shape rule needs a size as a number (to compare two)
        return _Plan(pattern, None, _Layout(rows, outputs, sources, [s for _, s in sources]))
    layout = _Layout(rows, outputs, sources, [inst.shape for inst in built], fold=True)
    template: Executable | None = None
    try:
        if layout.folded:
            _fold_where_built(layout, rows, sources, backend, in_place)
        for i, operands in layout.ops():
            attrs, shape = sources[i]
            if rows[i][0] in backend.compiler.sized_ops:  # code built once that plans per size when bound
                sized = backend.compiler.sized_kernel(built[i], sources[rows[i][2][0]][1], shape)
                if sized is None:
                    return _Plan(pattern, None, layout)
                layout.call(i, operands, sized[0], (), sized[1])
                continue
            executable, kernel_rows, kernel_pattern, merge = _kernel_template(rows, rows[i], attrs, shape,
                                                                              backend, i in in_place, layout.folded)
            symbols = _kernel_symbols(kernel_rows, kernel_pattern, [built[o].shape.dims for o in operands],
                                      built[i].attrs, built[i].shape, merge)
            if symbols is None:
                return _Plan(pattern, None, layout)
            layout.call(i, operands, executable, (), symbols)
        template = backend.compiler.generic_sequence(layout.calls, layout.n_params, layout.literals, layout.shapes,
                                                     layout.computed, pattern.n_symbols)
    except (NotShapeGeneric, TypeError):  # a shape rule or lowering needs a size as a number
        template = None
    return _Plan(pattern, template, layout)


def _kernel_symbols(kernel_rows: tuple, kernel_pattern: dynamic.Pattern | None, operands: list[tuple],
                    attrs: dict, shape: Shape, merge: Merge | None) -> tuple[Dim, ...] | None:
    """The value of each of an op kernel's run-time sizes in the graph's symbols (or its
    numbers): the graph's size at the first of its positions (its ``operands``' dimensions,
    its own size attributes (of ``attrs``) and dimensions (of ``shape``); merged as
    ``merge`` says, products of the graph's). None where the kernel has none but its sizes
    are run-time values of the graph (its code is for one size only)."""
    graph_sizes: list[Dim] = []
    op_at = len(kernel_rows) - 1 - _tuple_rows(kernel_rows)
    op_row = kernel_rows[op_at]
    for k, dims in enumerate(operands):
        if kernel_rows[k][0]:  # not a folded operand's 0-d value
            graph_sizes += merged(dims, merge.operands[k]) if merge is not None else dims
    result_sizes = merged(shape.dims, merge.result) if merge is not None else shape.dims
    for _ in kernel_rows[len(operands):op_at]:  # each folded operand's broadcast: its dims, then its shape's
        graph_sizes += [*result_sizes, *result_sizes]
    sized, offsets = dynamic.size_attrs(op_row[0])
    groups = dict(merge.sized) if merge is not None else {}
    for name, _ in op_row[1]:
        if name in sized or name in offsets:
            graph_sizes += merged(attrs[name], groups[name]) if name in groups else list(attrs[name])
    graph_sizes += result_sizes
    if isinstance(shape, TupleShape):
        for element in shape.elements:
            graph_sizes += list(element.dims)
    if kernel_pattern is None:
        return () if is_static(graph_sizes) else None
    symbols: list[Dim | None] = [None] * kernel_pattern.n_symbols
    for position, symbol in enumerate(kernel_pattern.symbol_of):
        if symbol is not None and symbols[symbol] is None:
            symbols[symbol] = graph_sizes[position]
    return tuple(cast("list[Dim]", symbols))


def _tuple_rows(kernel_rows: tuple) -> int:
    """How many ``get_tuple_element`` rows follow a tuple-valued op's row."""
    return sum(1 for row in kernel_rows if len(row) == 5 and row[0] == "get_tuple_element")


#: ``_signature``'s rows and merge by the op's row without its operands' numbers (their
#: dims and dtypes instead, and which are folded): a new graph's ops are mostly ops met in
#: other graphs (a loop reads several expressions of the same arrays), and working out an
#: op's merge was ~5 us an op, twice for a folded operand's reader. Emptied at ``KEPT_BOUND``.
_SIGNATURES: dict[Hashable, tuple[tuple, Merge | None]] = {}


def _signature(rows: tuple, row: tuple, attrs: dict, folded: frozenset[int] = frozenset()
               ) -> tuple[tuple, dict, Merge | None]:
    """The rows of the graph of one row's op alone (each operand a parameter), its
    attributes (``attrs``, the row's) and how it merges its axes: the op at its shapes with
    its runs of adjacent axes that it treats alike merged (``hlo.opdef.merge_of``: an
    elementwise op's operands flattened, a broadcast's kept and repeated runs), so that one
    kernel serves every rank that merges alike. An operand of ``folded`` (``_Layout``) is
    its 0-d value, broadcast by a row of the kernel's own graph."""
    key = _op_key(rows, row, folded)
    found = _SIGNATURES.get(key)
    if found is None:
        found = _merged_signature(rows, row, attrs, folded)
        if len(_SIGNATURES) >= KEPT_BOUND:
            _SIGNATURES.clear()
        _SIGNATURES[key] = found
    signature, merge = found
    return signature, {**attrs, **merge.attrs} if merge is not None and merge.attrs else attrs, merge


def _op_key(rows: tuple, row: tuple, folded: frozenset[int]) -> tuple:
    """An op's row without its operands' numbers: their dims and dtypes instead, and which
    are folded (``_Layout``); what the op's kernel and its signature depend on."""
    op, attr_key, at, dims, dtype = row
    return op, attr_key, dims, dtype, tuple([rows[o][-2:] for o in at]), folded and tuple([o in folded for o in at])


def _merged_signature(rows: tuple, row: tuple, attrs: dict, folded: frozenset[int]) -> tuple[tuple, Merge | None]:
    """``_signature``'s rows and merge, worked out."""
    op, attr_key, at, dims, dtype = row
    merge = merge_of(OPS[op], attrs, [rows[o][-2] for o in at], dims) if op in OPS else None
    positions = tuple(range(len(at)))
    if merge is None:
        params = tuple((rows[o][-2], rows[o][-1]) for o in at)
        return params + ((op, attr_key, positions, dims, dtype),), None
    result = merged(dims, merge.result)
    params = tuple(((), rows[o][-1]) if o in folded else (merged(rows[o][-2], merge.operands[k]), rows[o][-1])
                   for k, o in enumerate(at))
    spread = tuple(("broadcast_in_dim", (("broadcast_dimensions", ()), ("dims", result)), (k,), result, rows[o][-1])
                   for k, o in enumerate(at) if o in folded)
    if spread:
        numbers = iter(range(len(at), len(at) + len(spread)))
        positions = tuple(next(numbers) if o in folded else k for k, o in enumerate(at))
    if merge.attrs:
        merged_attrs = {**attrs, **merge.attrs}
        attr_key = tuple((name, merged_attrs[name]) for name, _ in attr_key)
    return params + spread + ((op, attr_key, positions, result, dtype),), merge


def _kernel(rows: tuple, row: tuple, attrs: dict, shape: Shape, backend: Backend, in_place: bool,
            folded: frozenset[int] = frozenset()) -> tuple[Executable, tuple]:
    """The kernel of one row's op, bound to its sizes, and its parameters' rows (dims,
    dtype), one per operand; ``in_place``: its result is written into its first operand;
    ``folded``: ``_signature``'s."""
    signature, attrs, _ = _signature(rows, row, attrs, folded)
    executable = _BOUND.get((signature, in_place, backend.cache_tag))
    if executable is None:
        template, kernel_rows, pattern = _template(signature, attrs, shape, backend, in_place)
        if template is not None and pattern is not None:
            shape_values, sizes = dynamic.generalize(kernel_rows)[1:]
            found = pattern.match(shape_values, sizes, dynamic.empty_fits(kernel_rows, shape_values, backend.compiler))
            bound = template.bind(found) if found is not None else None
        if template is None or pattern is None or bound is None:  # per shape, or a size past a library call's
            bound = _static_kernel(kernel_rows, attrs, shape, backend, in_place)
        executable = bound
        if len(_BOUND) >= KEPT_BOUND:
            _BOUND.clear()
        _BOUND[signature, in_place, backend.cache_tag] = executable
    return executable, signature[:len(row[2])]


def _kernel_template(rows: tuple, row: tuple, attrs: dict, shape: Shape, backend: Backend, in_place: bool,
                     folded: frozenset[int] = frozenset()
                     ) -> tuple[Executable, tuple, dynamic.Pattern | None, Merge | None]:
    """The kernel of one row's op as made for any size (its template, its single-op rows
    and the pattern of its run-time sizes), else (an op with code for its sizes only, or
    sizes all 0 or 1) made for these sizes, with no pattern; and how it merges the row's
    axes (``_signature``, with ``folded``)."""
    signature, attrs, merge = _signature(rows, row, attrs, folded)
    template, kernel_rows, pattern = _found_template(signature, attrs, shape, backend, in_place)
    if template is None or pattern is None:
        return _static_kernel(kernel_rows, attrs, shape, backend, in_place), kernel_rows, None, merge
    return template, kernel_rows, pattern, merge


def _found_template(signature: tuple, attrs: dict, shape: Shape, backend: Backend, in_place: bool,
                    compile_missing: bool = True) -> tuple[Executable | None, tuple, dynamic.Pattern | None]:
    """``_template``'s answer, kept in ``_TEMPLATES`` where it is the answer of a compile
    allowed (``compile_missing``) or a template found: a folded operand's reader asks
    first whether its kernel is built (``_fold_where_built``), then for it."""
    key = (signature, shape, in_place, backend.cache_tag)
    found = _TEMPLATES.get(key)
    if found is None:
        found = _template(signature, attrs, shape, backend, in_place, compile_missing)
        if compile_missing or found[0] is not None:
            if len(_TEMPLATES) >= KEPT_BOUND:
                _TEMPLATES.clear()
            _TEMPLATES[key] = found
    return found


def _single_op(signature: tuple, shape: Shape) -> tuple[tuple, tuple[int, ...]]:
    """The single-op graph of ``signature`` (its rows and outputs): a tuple-valued op's
    elements are its outputs."""
    if signature[-1][4] == TUPLE and isinstance(shape, TupleShape):
        tuple_row = len(signature) - 1
        rows = signature + tuple(("get_tuple_element", (("index", k),), (tuple_row,), e.dims, e.dtype)
                                 for k, e in enumerate(shape.elements))
        return rows, tuple(range(tuple_row + 1, len(rows)))
    return signature, (len(signature) - 1,)


def _single_sources(signature: tuple, attrs: dict, shape: Shape) -> list[tuple[str | None, dict, Shape]]:
    """Each row's op, attributes and shape of ``_single_op``'s graph, for its HLO
    (``_computation``): made only where a kernel is compiled or looked up by its HLO, not
    where the catalogue or this process holds it (most first uses: ~15 us of Shapes)."""
    op_row = signature[-1]
    op_shape = shape if op_row[4] == TUPLE else Shape(op_row[3], op_row[4])
    sources: list[tuple[str | None, dict, Shape]] = [(None, {}, Shape(r[0], r[1])) if len(r) == 2 else
                                                     (r[0], dict(r[1]), Shape(r[3], r[4])) for r in signature[:-1]]
    sources.append((op_row[0], attrs, op_shape))
    if isinstance(op_shape, TupleShape):
        sources += [("get_tuple_element", {"index": k}, e) for k, e in enumerate(op_shape.elements)]
    return sources


def _template(signature: tuple, attrs: dict, shape: Shape, backend: Backend, in_place: bool,
              compile_missing: bool = True) -> tuple[Executable | None, tuple, dynamic.Pattern | None]:
    """The shape-generic kernel of an op signature, found in the cache or compiled (only
    found, unless ``compile_missing``), its single-op rows and the pattern of its run-time
    sizes; no pattern where it has none (every size 0 or 1) or its op takes none (then per
    shape from now on)."""
    rows, outputs = _single_op(signature, shape)
    shape_key, values, sizes = dynamic.generalize(rows)
    classes = _size_classes(rows, values)
    alias = (shape_key, outputs, in_place, backend.cache_tag, classes)
    found = _GENERIC.get(alias)
    if found is not None:
        return found[0], rows, found[1]
    template, pattern = _generic_template(rows, outputs, functools.partial(_single_sources, signature, attrs, shape),
                                          shape_key, values, sizes, classes, backend, in_place, compile_missing)
    if len(_GENERIC) >= KEPT_BOUND:
        _GENERIC.clear()
    _GENERIC[alias] = template, pattern
    return template, rows, pattern


#: ``_template``'s answers by the single-op graph's structure and which of its sizes are
#: 0 or 1 (or equal: ``_size_classes``), which decide its template and pattern: an op met
#: again at new sizes (each length of a script's windows, signals, batches) is bound to
#: the template it met before without generalising, tying and looking up again (60 us an
#: op). Emptied at ``KEPT_BOUND``.
_GENERIC: dict[Hashable, tuple[Executable | None, dynamic.Pattern | None]] = {}


def _size_classes(rows: tuple, values: tuple[int, ...]) -> tuple[int, ...]:
    """What of a single-op graph's sizes ``values`` (of its ``rows``) its pattern
    (``Pattern.every_size``) and the ties it takes (``dynamic.ties``) depend on: which
    are 0 or 1, where each op of the rows declares the positions its shape rule makes
    equal (``OpDef.dim_ties``: ties join those alone, equal whatever the sizes), so that a
    product of square matrices and one of other shapes share their kernel's signature,
    which the installation's catalogue lists (a signature it did not list, such as a
    script's sizes that happen to be equal where its build's were not, was looked up by
    its HLO, ~0.4 ms, or compiled); else also which are equal, each other value numbered
    by its first position (an op without ``dim_ties`` ties every equal size)."""
    if all(len(row) == 2 or row[0] in OPS and OPS[row[0]].dim_ties is not None for row in rows):
        return tuple(v if v < 2 else 2 for v in values)
    numbers: dict[int, int] = {}
    return tuple(v if v < 2 else numbers.setdefault(v, len(numbers) + 2) for v in values)


def _generic_template(rows: tuple, outputs: tuple[int, ...], sources: Callable[[], list], shape_key: tuple,
                      values: tuple[int, ...], sizes: tuple[bool, ...], classes: tuple[int, ...], backend: Backend,
                      in_place: bool, compile_missing: bool = True
                      ) -> tuple[Executable | None, dynamic.Pattern | None]:
    """``_template``'s answer, found: the template and pattern, (None, None) for none (an
    op whose results are all empty has none: its kernel for these sizes runs no code,
    ``Compiler.without_compiling``; and one that no cache holds, unless ``compile_missing``).
    ``classes``: its sizes' ``_size_classes``."""
    if all(0 in rows[o][-2] for o in outputs):
        return None, None
    donated = _DONATED[in_place]
    structure = dynamic.canonical((shape_key, outputs, donated, backend.cache_tag))
    if structure in _PER_SHAPE or not backend.compiler.shape_generic or \
            dynamic.has_op(rows, backend.compiler.per_shape_ops):
        return None, None
    signature = (shape_key, outputs, in_place, classes)
    listed = backend.compiler.listed(signature)
    if listed is not None:  # built at installation: its pattern and executable as listed there
        pattern = dynamic.Pattern(values, listed.symbol_of, listed.n_symbols, listed.units)
        generic_key = ("op-kernel", structure, pattern.code_key)
        template = EXECUTABLES.lookup(generic_key)
        if template is None:
            loaded = listed.load()
            if loaded is not None:
                template = EXECUTABLES.loaded(generic_key, backend.name, loaded)  # a disk hit, counted
        if template is not None:
            return template, pattern
    # a size may be 1 where the op's code takes it (``dynamic.unit_positions``): the kernel
    # of a product's (m, n) sum serves a row's (1, n); and 0 (``dynamic.empty_fits``): a sum
    # of nothing selected runs the kernel of any length, which adds no term
    tied = dynamic.ties(rows, values)
    pattern = dynamic.Pattern.every_size(values, sizes, tied, dynamic.unit_positions(rows, sizes, tied, backend.compiler),
                                         dynamic.empty_fits(rows, values, backend.compiler))
    if not pattern.n_symbols:
        return None, None
    generic_key = ("op-kernel", structure, pattern.code_key)  # the code, whatever sizes it met first
    template = EXECUTABLES.lookup(generic_key)
    if template is None:
        structure_key = ("shape-generic", shape_key, outputs, donated, pattern.code_key)
        try:
            comp = _computation(rows, outputs, sources(), pattern, values)
            if not compile_missing:
                found = backend.compiler.cached(Module("op_kernel", comp, donated, pattern.n_symbols, structure_key))
                if found is None:
                    return None, None
                return EXECUTABLES.loaded(generic_key, backend.name, found), pattern  # a disk hit, counted
            template = EXECUTABLES.get(generic_key, backend.name,
                                       lambda: _compile(backend, comp, pattern.n_symbols, structure_key, donated))
        except (NotShapeGeneric, TypeError):  # a size its shape rule or lowering needs as a number
            _PER_SHAPE.add(structure)
            return None, None
    if LIST_OP_KERNELS:
        module = Module("op_kernel", _computation(rows, outputs, sources(), pattern, values), donated, pattern.n_symbols,
                        ("shape-generic", shape_key, outputs, donated, pattern.code_key))
        backend.compiler.list_op_kernel(signature, module, (pattern.symbol_of, pattern.n_symbols, pattern.units))
    return template, pattern


#: Whether the op kernels found or compiled are listed for the installation's catalogue
#: (``Compiler.list_op_kernel``): at the installation's build (``prebuild.py``), whose
#: kernels a process then finds by their signature alone (``Compiler.listed``), without
#: tying sizes or making and describing HLO (~0.13 ms of an op's first use).
LIST_OP_KERNELS = False


def _static_kernel(rows: tuple, attrs: dict, shape: Shape, backend: Backend, in_place: bool) -> Executable:
    """The kernel of a single-op graph (``_single_op``'s rows) made for its sizes."""
    signature = rows[:len(rows) - _tuple_rows(rows)]
    rows, outputs = _single_op(signature, shape)
    key, donated = (rows, outputs), _DONATED[in_place]
    cache_key = (key, donated, backend.cache_tag)
    found = EXECUTABLES.lookup(cache_key)
    if found is not None:
        return found
    module = Module("op_kernel", _computation(rows, outputs, _single_sources(signature, attrs, shape)), donated, 0, key)
    made = backend.compiler.without_compiling(module)
    if made is not None:  # a library routine planned for these sizes: nothing compiled
        EXECUTABLES.insert(cache_key, made)
        return made
    return EXECUTABLES.get(cache_key, backend.name, lambda: _logged(backend, module, "for these sizes"))


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


#: An op kernel's donated parameters: its first operand's, where it updates it in place.
_DONATED = {False: frozenset(), True: frozenset({0})}


def _compile(backend: Backend, comp: Computation, n_symbols: int, structure_key: Hashable,
             donated: frozenset[int]) -> Executable:
    return _logged(backend, Module("op_kernel", comp, donated, n_symbols, structure_key),
                   f"shape-generic, {n_symbols} run-time size{'s' if n_symbols != 1 else ''}")


def _logged(backend: Backend, module: Module, how: str) -> Executable:
    """``module`` (an op kernel's) compiled, or loaded from a cache; a compile logged to the
    compile log (``explain.py``), which a script meets where the installation has no
    kernel for an op's signature (loads of installed kernels, a script's normal path, are
    not logged)."""
    start = time.perf_counter()
    executable = backend.compiler.compile(module)
    if not executable.from_disk and explain.enabled():
        explain.log(explain.op_kernel(module.entry, how), time.perf_counter() - start, False)
    return executable
