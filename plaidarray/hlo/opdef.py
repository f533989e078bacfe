"""The one place an HLO op is defined: its shape/dtype rule and reference evaluation.

Every op in ``plaidarray.hlo.ops`` registers exactly one :class:`OpDef` in ``OPS``, the op
set every backend lowers. The trace layer calls ``infer`` while recording and the evaluator
(``evaluator.py``) calls ``evaluate``; how an op lowers is registered apart, per platform
(``plaidarray.codegen.lowering``), as JAX keeps a primitive's abstract evaluation and its
per-platform lowerings in separate tables. Nobody switches over op names.

A backend's own ops (llvm-cpu's compiled FFT, which only its passes make) live in an
:class:`OpNamespace` of that backend, as MLIR keeps a target's ops in a dialect of its own:
their opcodes are ``<namespace>.<op>``, and :func:`lookup` finds them like any other, so the
verifier, the evaluator, the printer, fingerprints and the lowering table need nothing
more, while ``OPS`` stays the op set of ``plaidarray.hlo``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .shape import Shape

Attrs = dict[str, Any]
InferRule = Callable[[list[Shape], Attrs], Shape]
#: The value of an HLO instruction: an array, or for a tuple shape the list of its elements.
Value = np.ndarray | list[np.ndarray]
#: The operands' values, attributes and result shape -> the result's ``Value``.
Evaluate = Callable[[list[Any], Attrs, Shape], Any]
#: A size the shape rule makes equal to another, as ``(result axis, source, index)``: the
#: source is an operand's position (``index`` its axis) or a size attribute's name
#: (``index`` its entry). Two operands' dimensions that no result dimension holds (a
#: product's contracted ones) are tied by ``((operand, axis), source, index)``.
DimTie = tuple[int | tuple[int, int], int | str, int]
#: An op's ties, from its attributes and its operands' ranks.
DimTies = Callable[[Attrs, Sequence[int]], Iterable[DimTie]]


#: Runs of adjacent axes, in order, each merged into one axis (:class:`Merge`).
Groups = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Merge:
    """An op at shapes whose runs of adjacent axes that it treats alike are merged into
    one (``OpDef.merge``): each operand's groups of axes and the result's, the attributes
    that change, and the groups of each size attribute's entries. A row-major buffer holds
    the same elements in the same places with adjacent axes merged, so the op at the
    merged shapes reads and writes the same memory and computes the same values: the
    baseline tier runs it so (``trace/baseline.py``), and one kernel serves every rank
    that merges alike (an elementwise op's operands flattened; a broadcast of
    (b, h, l, 1, d) to (b, h, l, l, d) as one of (b*h*l, 1, d) to (b*h*l, l, d))."""

    operands: tuple[Groups, ...]
    result: Groups
    attrs: Attrs
    sized: tuple[tuple[str, Groups], ...] = ()


#: An op's merge from its attributes, its operands' dimensions and its result's; None where
#: no axes merge.
MergeRule = Callable[[Attrs, Sequence[Sequence[int]], Sequence[int]], "Merge | None"]


def merged(dims: Sequence[Any], groups: Groups) -> tuple:
    """``dims`` with each group's entries multiplied into one (numbers or run-time sizes);
    a group of one axis is that entry as it is (a product of run-time sizes is a
    polynomial made anew, and most groups are single axes)."""
    return tuple(dims[group[0]] if len(group) == 1 else math.prod(dims[axis] for axis in group) for group in groups)


def runs(keys: Sequence[Hashable]) -> Groups:
    """The axes ``0..len(keys)`` grouped into runs of adjacent axes of equal key."""
    groups: list[tuple[int, ...]] = []
    for axis, key in enumerate(keys):
        if groups and keys[groups[-1][0]] == key:
            groups[-1] += (axis,)
        else:
            groups.append((axis,))
    return tuple(groups)


def laid_out(groups: Iterable[Sequence[int]]) -> Groups:
    """Groups of as many axes as ``groups`` have, numbered one after another: a result's
    groups, where its axes are the operands' kept ones in order."""
    out: list[tuple[int, ...]] = []
    start = 0
    for group in groups:
        out.append(tuple(range(start, start + len(group))))
        start += len(group)
    return tuple(out)


def around_axis(rank: int, axis: int) -> Groups:
    """The axes of a rank-``rank`` array in three runs: those before ``axis``, the axis,
    those after it (each run present where it has an axis)."""
    return runs([(a > axis) - (a < axis) for a in range(rank)])


def along_axis(name: str) -> MergeRule:
    """The merge of an op along one axis (its attribute ``name``) whose operands and
    result have one rank: the axes before it merge, and those after it (a sort's, a
    scan's, a join's rows are the same lines of memory, however many axes index them)."""
    def merge(attrs: Attrs, operands: Sequence[Sequence[int]], dims: Sequence[int]) -> Merge | None:
        axis = attrs[name]
        groups = around_axis(len(dims), axis)
        if len(groups) == len(dims):
            return None
        return Merge(tuple(groups for _ in operands), groups, {name: int(axis > 0)})
    return merge


def stacked(*trailing: int, batch_kept: bool = True) -> MergeRule:
    """The merge of an op over stacks of matrices (or vectors): each operand's axes before
    its last ``trailing[i]``, its batch (the same for every operand), merge into one, and
    so do the result's where it keeps them (``batch_kept``), so that the kernel of a 3-d
    stack serves stacks of any rank (each matrix is the same memory however many axes
    index the stack)."""
    def merge(attrs: Attrs, operands: Sequence[Sequence[int]], dims: Sequence[int]) -> Merge | None:
        n = len(operands[0]) - trailing[0]
        if n < 2:
            return None
        batch = tuple(range(n))
        return Merge(tuple((batch, *((axis,) for axis in range(n, n + t))) for t in trailing),
                     (batch,) if batch_kept else (), {})
    return merge


def merge_of(op: OpDef, attrs: Attrs, operands: Sequence[Sequence[int]], dims: Sequence[int]) -> Merge | None:
    """How ``op`` at these dimensions merges its axes (:class:`Merge`): an elementwise
    op's into one, else as its own rule says; None where none merge."""
    if op.elementwise:
        return Merge(tuple((tuple(range(len(d))),) for d in operands), (tuple(range(len(dims))),), {})
    return op.merge(attrs, operands, dims) if op.merge is not None else None


def same_dims(attrs: Attrs, ranks: Sequence[int]) -> Iterable[DimTie]:
    """The ties of an op whose operands have its result's dimensions (elementwise ops)."""
    return ((axis, operand, axis) for operand, rank in enumerate(ranks) for axis in range(rank))


def no_dims(attrs: Attrs, ranks: Sequence[int]) -> Iterable[DimTie]:
    """The ties of an op whose result's dimensions follow from offsets (a slice, a pad):
    none, whatever the values."""
    return ()


@dataclass(frozen=True)
class OpDef:
    """An HLO opcode: how its result type follows from its operands and what it
    computes (NumPy, the reference semantics)."""

    name: str
    infer: InferRule
    evaluate: Evaluate
    arity: int | None = None  # None: variadic
    #: Attributes holding sizes (``reshape``'s dims) or offsets (``slice``'s start): tuples
    #: of ints that, like the dimensions of shapes, a shape-generic executable takes at
    #: run time (``hlo/symbolic.py``); every other attribute is part of a graph's structure.
    size_attrs: tuple[str, ...] = ()
    offset_attrs: tuple[str, ...] = ()
    #: Which sizes the shape rule makes equal to which result dimensions
    #: (:data:`DimTies`), so that a shape-generic executable gives them one run-time
    #: value and sizes equal by chance keep their own (``trace/dynamic.py``). None: not
    #: declared, and the op's sizes of equal value are taken as tied.
    dim_ties: DimTies | None = None
    #: Whether each element of the result is computed from the operands' elements at its
    #: own index alone, every operand having the result's dimensions: then the op's values
    #: do not depend on the shape, and a kernel for one length serves any shape of as many
    #: elements (the baseline tier runs such an op on its operands flattened, ``trace/baseline.py``).
    elementwise: bool = False
    #: The dtype kinds of its first operand for which ``evaluate`` computes the bits the
    #: compiled code computes, whatever the values (IEEE's basic operations, integers
    #: wrapping, comparisons; ``select``'s predicate, bool, whatever it selects): a read of
    #: one value of such an op on values already computed is computed by ``evaluate``
    #: itself (``trace/scalars.py``). Empty for the others: functions whose code is the
    #: project's own polynomials, reductions whose order is a kernel's.
    exact_kinds: str = ""
    #: Which of its runs of adjacent axes it treats alike (:class:`Merge`); an elementwise
    #: op's are all one (``merge_of``).
    merge: MergeRule | None = None

    def check_arity(self, n: int) -> None:
        if self.arity is not None and n != self.arity:
            raise TypeError(f"HLO op {self.name} takes {self.arity} operands, got {n}")


#: The op set, by opcode: the ops of ``plaidarray.hlo.ops``.
OPS: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    """Add ``op`` to the op set (``plaidarray.hlo.ops`` does, for each of its ops)."""
    if "." in op.name:
        raise ValueError(f"HLO op {op.name}: a dotted opcode belongs to the namespace of a backend (OpNamespace)")
    if op.name in OPS:
        raise ValueError(f"HLO op {op.name} defined twice")
    OPS[op.name] = op
    return op


class OpNamespace:
    """The ops of one backend, named ``<name>.<op>``: ops that its own passes make and its
    own lowerings lower (no other backend meets them), kept out of the op set. Made by
    :func:`op_namespace`, which lets :func:`lookup` find them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ops: dict[str, OpDef] = {}

    def register(self, op: OpDef) -> OpDef:
        """Add ``op``, whose name must be ``<namespace>.<op>``."""
        if op.name.partition(".")[0] != self.name:
            raise ValueError(f"HLO op {op.name}: an op of namespace {self.name} is named {self.name}.<op>")
        if op.name in self.ops:
            raise ValueError(f"HLO op {op.name} defined twice")
        self.ops[op.name] = op
        return op


#: The backends' op namespaces, by name.
NAMESPACES: dict[str, OpNamespace] = {}


def op_namespace(name: str) -> OpNamespace:
    """A new namespace for a backend's own ops, whose opcodes ``name`` prefixes."""
    if "." in name:
        raise ValueError(f"op_namespace: the name prefixes dotted opcodes, so it has no dot; got {name!r}")
    if name in NAMESPACES:
        raise ValueError(f"HLO op namespace {name} defined twice")
    namespace = NAMESPACES[name] = OpNamespace(name)
    return namespace


def lookup(name: str) -> OpDef:
    """The definition of opcode ``name``: an op of the op set, or of a backend's namespace."""
    op = OPS.get(name)
    if op is None:
        namespace = NAMESPACES.get(name.partition(".")[0])
        op = namespace.ops.get(name) if namespace is not None else None
        if op is None:
            raise NotImplementedError(f"unknown HLO op {name!r}")
    return op
