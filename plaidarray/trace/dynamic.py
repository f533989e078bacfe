"""Automatic dynamic shapes: a graph structure compiled before, only for other sizes, is
compiled once more with those sizes as run-time values, and that shape-generic executable
serves every later size (torch.compile's automatic dynamic shapes, which compile a
dimension as a symbol once it has changed).

A graph's key (``to_hlo.walk``) holds its sizes: each node's dimensions and the size and
offset attributes of its ops (``OpDef.size_attrs``, ``offset_attrs``: a reshape's
dimensions, a slice's start). :func:`generalize` takes them out, in order ("positions"),
leaving the structure. The first time a structure is seen it compiles as it is, for its
sizes (the fastest code), unless it is small: a lazy graph whose nodes hold at most the
compiler's ``generic_first_elements`` each compiles with every size a run-time value at
once, since the code of such graphs (first-tier code) is the same loops either way, and
a loop's next size then binds it instead of compiling (windows, chunks, a smaller last
batch). A structure with an op whose code is made for its sizes
(``Compiler.per_shape_ops``) always compiles for them. When a structure comes back
with other sizes, the positions that changed become run-time values, every other
position keeps its value (:class:`Pattern`). Positions share one symbol where an op's
shape rule makes them equal (``OpDef.dim_ties``: an elementwise op's operands and
result, the dimensions a concatenation does not join; :func:`ties`) and they were equal
each time: torch's duck sizing, which ties every size of equal value, tied a growing
history's rows to its columns in the graph where they passed each other, and that
graph's kernels then differed from every other graph's. The executable
compiled for the pattern serves every later graph of that structure whose sizes fit it:
the static positions equal, each symbol's positions equal to each other, and sizes at
least 2 (size 1 is specialised, as torch does: a unit dimension broadcasts; but a
parameter's dimension that only concatenations join along, :func:`joined_only`), or 0 where
the compiler's code takes it (``Compiler.empty_sizes``: its loops run no iteration; not
for a graph with one of ``Compiler.nonempty_ops``): an empty chunk or selection binds.
Sizes that do not fit widen the pattern (more positions become run-time values, symbols
split) and one more executable is compiled, so a loop whose sizes change at every step
compiles its body a bounded number of times, however many steps it takes.
"""

from __future__ import annotations

import functools
import math
import operator
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from .. import config
from ..cached_property import cached_property
from ..hlo import Computation, Instruction
from ..hlo.fingerprint import Hashed
from ..hlo.opdef import OPS
from ..hlo.shape import Shape, TupleShape
from ..hlo.symbolic import Dim, Sym
from .node import GRAPH_IN_C, Node

if TYPE_CHECKING:
    from ..backend.executable import Compiler

#: Structures remembered; the least recently seen goes first, so a program making ever
#: new graphs does not grow this.
KEPT_HISTORIES = 1024


def automatic() -> bool:
    """Whether graphs whose sizes change compile shape-generic (``PLAIDARRAY_AUTOMATIC_DYNAMIC``)."""
    return config.get("PLAIDARRAY_AUTOMATIC_DYNAMIC") == "1"


def size_attrs(op: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An op's size attributes and offset attributes (``OpDef.size_attrs``, ``offset_attrs``)."""
    opdef = OPS[op]
    return opdef.size_attrs, opdef.offset_attrs


#: Each op's size and offset attributes seen so far, None for an op without any (most):
#: :func:`generalize` runs at every new size of a shape-generic loop, once per node.
SIZED: dict[str, tuple[tuple[str, ...], tuple[str, ...]] | None] = {}


def describe_sized(op: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """An op's size and offset attributes, noted in ``SIZED`` (None for an op with neither)."""
    spec = size_attrs(op)
    SIZED[op] = spec if spec[0] or spec[1] else None
    return SIZED[op]


def _generalize_in_python(rows: tuple) -> tuple[tuple, tuple[int, ...], tuple[bool, ...]]:
    """The structure of a walked graph's rows with their sizes erased (ranks and attribute
    lengths kept), the sizes in order, and which of them are sizes rather than offsets.
    ``_graph.generalize`` does the same in C."""
    erased: list[tuple] = []
    values: list[int] = []
    offsets: list[int] = []
    for row in rows:
        if len(row) == 2:  # a parameter: (dims, dtype)
            dims, dtype = row
            erased.append((len(dims), dtype))
        else:
            op, attrs, operands, dims, dtype = row
            spec = SIZED[op] if op in SIZED else describe_sized(op)
            if spec is not None:
                sized, offsets_named = spec
                kept = []
                for name, value in attrs:
                    if name in sized:
                        values.extend(value)
                        kept.append((name, len(value)))
                    elif name in offsets_named:
                        offsets.extend(range(len(values), len(values) + len(value)))
                        values.extend(value)
                        kept.append((name, len(value)))
                    else:
                        kept.append((name, value))
                attrs = tuple(kept)
            erased.append((op, attrs, operands, len(dims), dtype))
        values.extend(dims)
    sizes = [True] * len(values)
    for p in offsets:
        sizes[p] = False
    return tuple(erased), tuple(values), tuple(sizes)


def _generalize_in_c() -> Callable[[tuple], tuple[tuple, tuple[int, ...], tuple[bool, ...]]]:
    """``_generalize_in_python`` in C (``_graph.generalize``, reading ``SIZED``), where the
    C module is in use: a read of a structure met at new sizes generalises its graph, and
    a new op's kernel its single-op graph (5 us on 24 rows in Python)."""
    graph = GRAPH_IN_C
    if graph is None:
        return _generalize_in_python
    return functools.partial(graph.generalize, SIZED, describe_sized)


#: A walked graph's rows generalised (``_generalize_in_python``).
generalize = _generalize_in_c()


def _picker(positions: Sequence[int]) -> Callable[[Sequence[int]], tuple[int, ...]]:
    """What picks ``positions`` out of a sequence, as a tuple (``itemgetter`` gives one
    position's item alone)."""
    if len(positions) > 1:
        return operator.itemgetter(*positions)
    if positions:
        position = positions[0]
        return lambda values: (values[position],)
    return lambda values: ()


@dataclass(frozen=True)
class Pattern:
    """Which positions are run-time values: ``symbol_of[p]`` is the symbol of position
    ``p``, None where the position keeps the value ``first[p]``; the symbols of
    ``units`` may be 1 (:func:`joined_only`)."""

    first: tuple[int, ...]
    symbol_of: tuple[int | None, ...]
    n_symbols: int
    units: frozenset[int] = frozenset()
    _static: tuple[tuple[int, int], ...] = field(init=False, repr=False, compare=False)
    _dynamic: tuple[tuple[int, int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_static", tuple((p, v) for p, (v, s) in enumerate(zip(self.first, self.symbol_of))
                                                  if s is None))
        object.__setattr__(self, "_dynamic", tuple((p, s) for p, s in enumerate(self.symbol_of) if s is not None))

    @cached_property
    def _quick(self) -> tuple | None:
        """``match``'s pickers (see there), made at the first match: most patterns of op
        kernels are never matched (a sequence ties their sizes to its own)."""
        firsts: dict[int, int] = {}
        for p, s in self._dynamic:
            firsts.setdefault(s, p)
        tied = [(p, s) for p, s in self._dynamic if firsts[s] != p]
        if len(firsts) < self.n_symbols:
            return None
        return (_picker([p for p, _ in self._static]), tuple(v for _, v in self._static),
                _picker([firsts[s] for s in range(self.n_symbols)]), _picker([p for p, _ in tied]),
                _picker([s for _, s in tied]))

    @property
    def code_key(self) -> tuple:
        """What of the pattern its executable's code depends on: the positions that keep a
        value, with it, and each run-time position's symbol, not the value it had first
        (processes that met other sizes first compile the same code)."""
        return self._static, self._dynamic

    def match(self, values: Sequence[int], sizes: Sequence[bool], empty: bool = False) -> list[int] | None:
        """Each symbol's value for a graph of these sizes, or None if they do not fit
        (a size of 0 fits if ``empty``). A loop at a new size matches at every read: where
        every symbol has a position and its values are past 1, the positions are picked by
        ``itemgetter``s (``_quick``: the static ones' values, each symbol's first position's,
        the tied positions' against their symbols'), a third of the loop below."""
        quick = self._quick
        if quick is not None:
            static, static_values, firsts, tied, tied_symbols = quick
            if static(values) != static_values:
                return None
            picked = firsts(values)
            if not picked or min(picked) > 1:
                return list(picked) if tied(values) == tied_symbols(picked) else None
        for p, v in self._static:
            if values[p] != v:
                return None
        found: list[int | None] = [None] * self.n_symbols
        for p, s in self._dynamic:
            v = values[p]
            if sizes[p] and v < 2 and (s not in self.units if v else not empty):
                return None
            known = found[s]
            if known is None:
                found[s] = v
            elif known != v:
                return None
        return cast("list[int]", found)

    @classmethod
    def every_size(cls, values: tuple[int, ...], sizes: tuple[bool, ...], tied: Sequence[int],
                   units: frozenset[int], zeros: bool = False) -> Pattern:
        """Every position a run-time value from the start (``jit(dynamic=True)``), but
        sizes 0 (unless ``zeros``: the code takes them, :func:`empty_fits`) and 1 (but in
        ``units``: :func:`unit_positions`); positions tied (``tied``: :func:`ties`) share
        a symbol."""
        groups: dict[int, int] = {}
        symbol_of = tuple(None if size and v < 2 and not (p in units if v else zeros) else groups.setdefault(tie, len(groups))
                          for p, (v, size, tie) in enumerate(zip(values, sizes, tied)))
        return cls(values, symbol_of, len(groups), _unit_symbols(symbol_of, units))

    def widen(self, values: Sequence[int], tied: Sequence[int], units: frozenset[int]) -> Pattern:
        """The pattern that also fits ``values`` (its sizes may be 0 or 1 all the same):
        a position that changed becomes a run-time value, and a symbol splits where its
        positions now differ or are not tied (``tied``: :func:`ties`); a symbol may be 1
        if its positions are all in ``units`` (:func:`joined_only`). Positions share a
        symbol only if they were tied and equal every time: those that change now had
        their first value every time, those of a symbol equal values."""
        groups: dict[Hashable, int] = {}
        symbol_of: list[int | None] = []
        for p, v in enumerate(values):
            s = self.symbol_of[p]
            if s is None and v == self.first[p]:
                symbol_of.append(None)
                continue
            group = ("new", tied[p], self.first[p], v) if s is None else ("old", s, tied[p], v)
            symbol_of.append(groups.setdefault(group, len(groups)))
        return Pattern(self.first, tuple(symbol_of), len(groups), _unit_symbols(symbol_of, units))

    def describe(self, rows: tuple, values: Sequence[int], every_size: str = "") -> str:
        """Which sizes are run-time values and why (their first value and now, or: every
        size at once, for the reason ``every_size``), for the compile log (``rows``: the
        key rows of the graph whose ``values`` these are)."""
        if every_size:
            return (f"{every_size}: every size at once, "
                    f"{len(self._dynamic)} of {len(self.first)} as {self.n_symbols} run-time values")
        names: list[str] = []
        for p, (row_index, name, i) in enumerate(_row_positions(rows)):
            if self.symbol_of[p] is not None and len(names) < 3:
                row = rows[row_index]
                what = "parameter" if len(row) == 2 else row[0]
                where = f"dim {i}" if name is None else f"{name}[{i}]"
                names.append(f"{what} (node {row_index}) {where}: {self.first[p]} -> {values[p]}")
        more = ", ..." if len(self._dynamic) > len(names) else ""
        return (f"sizes changed since the first graph of this structure ({'; '.join(names)}{more}): "
                f"{len(self._dynamic)} of {len(self.first)} sizes as {self.n_symbols} run-time values")


def _unit_symbols(symbol_of: Sequence[int | None], units: frozenset[int]) -> frozenset[int]:
    """The symbols whose positions are all in ``units``."""
    unit = {s for s in symbol_of if s is not None}
    for p, s in enumerate(symbol_of):
        if s is not None and p not in units:
            unit.discard(s)
    return frozenset(unit)


#: Why a new structure's sizes are all run-time values at once (``Histories.decide``'s
#: ``every_size``), as the compile log says it.
CUT_LOOP = "sizes change between the graphs of a loop cut at the pending bound (this one, or the one it ends)"
SMALL_GRAPH = "a small graph, whose code is as fast with run-time sizes"


#: ``canonical``'s keys, each its own value; emptied when it reaches ``KEPT_HISTORIES``.
_CANONICAL: dict[Hashed, Hashed] = {}


def canonical(structure: Hashable) -> Hashed:
    """``structure`` hashed once, as the one object equal to it that this process has
    made: the histories and the executable cache then find it by identity. A miss of a
    loop whose sizes change (or a jitted function's call with new sizes) looks its
    structure (a deep tuple, made anew at each step) up several times, and each found
    entry compared it row by row (~10 us a step)."""
    key = Hashed(structure)
    found = _CANONICAL.get(key)
    if found is None:
        if len(_CANONICAL) >= KEPT_HISTORIES:
            _CANONICAL.clear()
        _CANONICAL[key] = found = key
    return found


def small(rows: tuple, limit: int) -> bool:
    """Whether no node of a walked graph's rows holds more than ``limit`` elements."""
    return all(math.prod(row[0] if len(row) == 2 else row[3]) <= limit for row in rows)


def empty_fits(rows: tuple, values: tuple[int, ...], compiler: Compiler) -> bool:
    """Whether a graph's sizes ``values`` hold a 0 that ``compiler``'s shape-generic code
    takes (``Compiler.empty_sizes``, ``nonempty_ops``)."""
    return compiler.empty_sizes and 0 in values and not has_op(rows, compiler.nonempty_ops)


def has_op(rows: tuple, ops: frozenset[str]) -> bool:
    """Whether a node of a walked graph's rows is an op of ``ops``."""
    return any(len(row) == 5 and row[0] in ops for row in rows)


def ties(rows: tuple, values: Sequence[int]) -> list[int]:
    """Each position's class (``generalize``'s order, ``values`` its sizes): positions an
    op's shape rule makes equal (``OpDef.dim_ties``) and equal here share one, as do an
    undeclared op's dimensions, its operands' and its size attributes of equal value.
    Union-find over the positions, one pass over the rows (no recursion)."""
    parent = list(range(len(values)))

    def find(p: int) -> int:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    def tie(p: int, q: int) -> None:
        if values[p] == values[q]:
            parent[find(p)] = find(q)

    starts = _starts(rows)
    dims_at = [own for _, own in starts]
    for row, (attr_at, own) in zip(rows, starts):
        if len(row) == 2:
            continue
        op, attrs, operands, dims, _ = row
        opdef = OPS[op]
        if opdef.dim_ties is None:
            sized = [own + axis for axis in range(len(dims))]
            sized += [dims_at[o] + axis for o in operands for axis in range(len(rows[o][-2]))]
            sized += [attr_at[name] + i for name, value in attrs if name in opdef.size_attrs for i in range(len(value))]
            first_of: dict[int, int] = {}
            for p in sized:
                tie(p, first_of.setdefault(values[p], p))
            continue
        for axis, source, i in opdef.dim_ties(dict(attrs), [len(rows[o][-2]) for o in operands]):
            tie(own + axis if isinstance(axis, int) else dims_at[operands[axis[0]]] + axis[1],
                attr_at[source] + i if isinstance(source, str) else dims_at[operands[source]] + i)
    return [find(p) for p in range(len(values))]


def joined_only(rows: tuple) -> frozenset[int]:
    """The positions of parameters' dimensions that only concatenations join along: an
    array grown by ``concat`` from one row, whose code copies it whatever its length,
    so a symbol of these may be 1 (one compile fewer as the array passes from one row
    to two). Any other size-1 symbol might be a unit dimension that broadcasts."""
    users: dict[int, list[tuple]] = {}
    for row in rows:
        if len(row) == 5:
            for o in row[2]:
                users.setdefault(o, []).append(row)
    joined: set[int] = set()
    for index, (row, (_, dims_at)) in enumerate(zip(rows, _starts(rows))):
        if len(row) == 2 and index in users:
            axes = {dict(user[1])["dimension"] if user[0] == "concatenate" else -1 for user in users[index]}
            if len(axes) == 1 and -1 not in axes:
                joined.add(dims_at + axes.pop())
    return frozenset(joined)


def unit_positions(rows: tuple, sizes: Sequence[bool], tied: Sequence[int], compiler: Compiler) -> frozenset[int]:
    """The positions whose symbols may be 1 in a graph of ``rows`` (``sizes``: which of
    its positions are sizes; ``tied``: :func:`ties`), where ``compiler``'s code takes
    sizes of 1 (``Compiler.unit_sizes``): every size but the operands' dimensions of an op
    whose code asks whether a size is 1 (``nonunit_ops``: a broadcast's unit dimension, a
    matrix-vector product's) and the positions tied to them. So an op kernel of a (1, n)
    row and of an (m, n) matrix is one, and so is a broadcast's to (1, n) and to (m, n).
    Without ``unit_sizes``: the dimensions that only concatenations join
    (:func:`joined_only`)."""
    if not compiler.unit_sizes:
        return joined_only(rows)
    kept: set[int] = set()
    starts = _starts(rows)
    for row in rows:
        if len(row) == 5 and row[0] in compiler.nonunit_ops:
            for o in row[2]:
                first = starts[o][1]
                kept.update(tied[p] for p in range(first, first + len(rows[o][-2])))
    return frozenset(p for p, size in enumerate(sizes) if size and tied[p] not in kept)


#: What ``Histories`` holds for a structure that compiles per shape: one of its ops has
#: no lowering that takes run-time sizes.
STATIC_ONLY = None


class Histories:
    """The pattern of each structure seen (callers hold ``GRAPH_LOCK``), the least recently
    seen dropped first."""

    def __init__(self, kept: int) -> None:
        #: Each structure's pattern (``_graph.read`` finds here whether a structure is
        #: seen, for reads that ``baseline.quick``'s entries serve).
        self.patterns: OrderedDict[Hashable, Pattern | None] = OrderedDict()
        self._kept = kept

    def decide(self, structure: Hashable, rows: tuple, values: tuple[int, ...], sizes: tuple[bool, ...],
               every_size: bool = False, empty: bool = False) -> tuple[Pattern, list[int]] | None:
        """The pattern a graph of ``structure`` (its walked ``rows``) and these sizes runs
        with, and each of its symbols' values; None when the graph compiles for its own
        sizes (the structure is new, or compiles per shape, or a size of a symbol is 1, or
        0 unless ``empty``). ``every_size``: a new structure's sizes are run-time values
        from the start."""
        if structure not in self.patterns:
            self._remember(structure, Pattern.every_size(values, sizes, ties(rows, values), joined_only(rows))
                           if every_size else Pattern(values, (None,) * len(values), 0))
            if not every_size:
                return None
        self.patterns.move_to_end(structure)
        pattern = self.patterns[structure]
        if pattern is STATIC_ONLY:
            return None
        found = pattern.match(values, sizes, empty)
        if found is None:
            pattern = self.patterns[structure] = pattern.widen(values, ties(rows, values), joined_only(rows))
            found = pattern.match(values, sizes, empty)
        if found is None or not pattern.n_symbols:
            return None
        return pattern, found

    def new(self, structure: Hashable) -> bool:
        """Whether ``structure`` was not seen (or was forgotten)."""
        return structure not in self.patterns

    def static(self, structure: Hashable) -> bool:
        """Whether ``structure`` compiles per shape (``static_only``)."""
        return structure in self.patterns and self.patterns[structure] is STATIC_ONLY

    def static_only(self, structure: Hashable) -> None:
        """Compile ``structure`` per shape from now on."""
        self._remember(structure, STATIC_ONLY)

    def _remember(self, structure: Hashable, pattern: Pattern | None) -> None:
        """Hold ``pattern`` for ``structure``, dropping the least recently seen past ``kept``."""
        self.patterns[structure] = pattern
        self.patterns.move_to_end(structure)
        while len(self.patterns) > self._kept:
            self.patterns.popitem(last=False)

    def clear(self) -> None:
        self.patterns.clear()


HISTORIES = Histories(KEPT_HISTORIES)


def _positions(row: tuple) -> Iterator[tuple[str | None, int]]:
    """The positions of a row in ``generalize``'s order, as (attribute name, index), the
    name None for the node's dimensions."""
    if len(row) == 5:
        sized, offsets = size_attrs(row[0])
        for name, value in row[1]:
            if name in sized or name in offsets:
                for i in range(len(value)):
                    yield name, i
    for i in range(len(row[-2])):
        yield None, i


def _starts(rows: tuple) -> list[tuple[dict[str, int], int]]:
    """Where each row's positions start (``generalize``'s order): its size and offset
    attributes' first entries, by name, and its first dimension."""
    starts = []
    position = 0
    for row in rows:
        attr_at: dict[str, int] = {}
        for name, i in _positions(row):
            if name is not None and i == 0:
                attr_at[name] = position
            position += 1
        starts.append((attr_at, position - len(row[-2])))
    return starts


def _row_positions(rows: tuple) -> Iterator[tuple[int, str | None, int]]:
    """Every position of ``rows`` in ``generalize``'s order, with its row's index."""
    for row_index, row in enumerate(rows):
        for name, i in _positions(row):
            yield row_index, name, i


def symbolic_computation(key: tuple, order: list[Node], pattern: Pattern, values: Sequence[int]) -> Computation:
    """The HLO computation of a walked graph (``to_hlo.computation``) with the run-time
    positions of ``pattern`` as symbols (``values``: the graph's sizes, the symbols'
    hints)."""
    sources = [(cast(str, n.op), n.attrs, n.shape) for n in order]
    built = symbolic_instructions(key[0], sources, pattern, values)
    params = [inst for inst, row in zip(built, key[0]) if len(row) == 2]
    for number, param in enumerate(params):
        param.attrs["number"] = number
    return Computation("main", params, [built[i] for i in key[1]])


def computation_rows(comp: Computation) -> tuple:
    """A computation's instructions as rows of a walked graph's key (``to_hlo.walk``), for
    :func:`generalize`: parameters are ``(dims, dtype)`` rows, in parameter order first."""
    index = {id(p): i for i, p in enumerate(comp.parameters)}
    rows: list[tuple] = [(p.shape.dims, p.shape.dtype) for p in comp.parameters]
    for inst in comp.instructions:
        if inst.opcode != "parameter":
            index[id(inst)] = len(rows)
            rows.append((inst.opcode, inst.attr_key(), tuple(index[id(o)] for o in inst.operands), inst.shape.dims,
                         inst.shape.dtype))
    return tuple(rows), tuple(index[id(o)] for o in comp.outputs)


def symbolic_copy(comp: Computation, pattern: Pattern, values: Sequence[int]) -> Computation:
    """``comp`` (whose rows are :func:`computation_rows`) with the run-time positions of
    ``pattern`` as symbols."""
    rows, outputs = computation_rows(comp)
    order = [*comp.parameters, *(i for i in comp.instructions if i.opcode != "parameter")]
    built = symbolic_instructions(rows, [(i.opcode, i.attrs, i.shape) for i in order], pattern, values)
    for param, inst in zip(comp.parameters, built):
        inst.attrs["number"] = param.attrs["number"]
    return Computation(comp.name, built[:len(comp.parameters)], [built[i] for i in outputs])


def symbolic_instructions(rows: tuple, sources: Sequence[tuple[str, dict, Shape]], pattern: Pattern,
              values: Sequence[int]) -> list[Instruction]:
    """The instructions of ``rows`` (each from its op, attributes and shape in
    ``sources``), with the run-time positions of ``pattern`` as symbols; parameters'
    numbers are the caller's to set."""
    symbols = [Sym(s, 0) for s in range(pattern.n_symbols)]
    for p, s in enumerate(pattern.symbol_of):
        if s is not None:
            symbols[s].hint = values[p]
    # A symbol is a size (at least 2: ``Pattern.match``) if any of its positions is one.
    size_of = {s: False for s in range(pattern.n_symbols)}
    built: list[Instruction] = []
    position = 0
    for (op, node_attrs, node_shape), row in zip(sources, rows):
        attrs = dict(node_attrs) if len(row) == 5 else {}
        dims: list[Dim] = list(node_shape.dims)
        changed = False
        for name, i in _positions(row):
            s = pattern.symbol_of[position]
            position += 1
            if s is None:
                continue
            changed = True
            if name is None:
                dims[i] = symbols[s]
                size_of[s] = True
            else:
                entries = list(attrs[name])
                entries[i] = symbols[s]
                attrs[name] = tuple(entries)
                size_of[s] = size_of[s] or name in OPS[row[0]].size_attrs
        shape = Shape(cast("tuple[int, ...]", tuple(dims)), node_shape.dtype) if changed else node_shape
        if isinstance(node_shape, TupleShape):  # its elements follow from its operands' shapes, maybe symbolic now
            shape = OPS[op].infer([built[i].shape for i in row[2]], attrs)
        if len(row) == 2:
            built.append(Instruction("parameter", (), {"number": -1, "shape": shape}, shape))
        else:
            built.append(Instruction(op, [built[i] for i in row[2]], attrs if changed else node_attrs, shape))
    for s, size in size_of.items():
        symbols[s].size = size
    return built
