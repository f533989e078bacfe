"""Run-time sizes in the linalg and loop-level IR of a shape-generic module.

A shape-generic computation (``hlo/symbolic.py``) has dimensions and offsets that are
symbols. In its module, ``main`` takes one more argument, last: the dims table, a
``memref<?xindex>`` (``SYMBOLS`` on ``main`` says how many entries it holds). Symbol
``k`` is a ``memref.load`` of entry ``k`` at the top of ``main``, marked ``SYMBOL``; code
uses that value as any other index (loop bounds, offsets, strides), and indexing maps
use it as the affine symbol ``s<k>``. Attributes holding sizes (a generic's loop dims, a
chunkable loop's extent) hold them encoded by ``symbolic.encode``. A static module has
no dims table and every size a constant, as before.

Entries past the symbols hold values computed from them when the executable is bound
(``KernelBuilder.one_value``, ``ShapeGenericExecutable.bind``): code reads such a value as
it reads a size, so a sum that grows with the graph (a concatenation's offsets, one per
operand) is one value in each kernel, not an expression as long as the sum.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, IndexType, IntAttr, MemRefType
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineExpr, AffineSymExpr

from ..hlo.symbolic import Dim, Sym, decode, encode

T = TypeVar("T")

#: On ``main``: the number of entries of its dims table (its last argument).
SYMBOLS = "plaidarray.symbols"
#: On the ``memref.load`` of a dims table entry: the entry's index.
SYMBOL = "plaidarray.symbol"


def dims_table_type() -> MemRefType:
    return MemRefType(IndexType(), [DYNAMIC_INDEX])


def memref_dims(dims: Sequence[Dim]) -> list[int]:
    """A memref type's shape: run-time sizes are dynamic (``?``)."""
    return [d if isinstance(d, int) else DYNAMIC_INDEX for d in dims]


def affine(value: AffineExpr | Dim) -> AffineExpr:
    """A size or offset as an affine expression: symbol ``k`` is ``s<k>``; a product of
    symbols is semi-affine, which the loop lowering and the emitter evaluate as well.
    The terms are summed pairwise, so the expression is as deep as the logarithm of
    their number (xDSL's own walks over it recurse), and a coefficient of 1 is left out."""
    if isinstance(value, AffineExpr):
        return value
    if isinstance(value, int):
        return AffineExpr.constant(value)
    if isinstance(value, Sym):
        return AffineExpr.symbol(value.index)
    terms: list[AffineExpr] = []
    for monomial, coefficient in sorted(value.terms.items()):
        factors = [AffineExpr.symbol(index) for index in monomial]
        term = AffineExpr.constant(coefficient) if coefficient != 1 or not factors else factors.pop(0)
        for factor in factors:
            term = AffineBinaryOpExpr(AffineBinaryOpKind.Mul, term, factor)
        terms.append(term)
    while len(terms) > 1:
        pairs = [AffineBinaryOpExpr(AffineBinaryOpKind.Add, a, b) for a, b in zip(terms[::2], terms[1::2])]
        terms = pairs + terms[len(pairs) * 2:]
    return terms[0] if terms else AffineExpr.constant(0)


def multiply(a: AffineExpr | Dim, b: Dim) -> AffineExpr:
    """``a * b``, semi-affine when ``b`` is a run-time size."""
    if isinstance(b, int):
        return affine(a) * b
    return AffineBinaryOpExpr(AffineBinaryOpKind.Mul, affine(a), affine(b))


def floor_divide(a: AffineExpr | Dim, b: Dim) -> AffineExpr:
    """``a // b`` for non-negative ``a``, semi-affine when ``b`` is a run-time size."""
    if isinstance(b, int):
        return affine(a) // b
    return AffineBinaryOpExpr(AffineBinaryOpKind.FloorDiv, affine(a), affine(b))


def modulo(a: AffineExpr | Dim, b: Dim) -> AffineExpr:
    """``a % b`` for non-negative ``a``, semi-affine when ``b`` is a run-time size."""
    if isinstance(b, int):
        return affine(a) % b
    return AffineBinaryOpExpr(AffineBinaryOpKind.Mod, affine(a), affine(b))


def fold(expr: AffineExpr, leaf: Callable[[AffineExpr], T],
         binary: Callable[[AffineBinaryOpExpr, T, T], T]) -> T:
    """``expr`` evaluated from its leaves up: ``leaf`` of each symbol, dimension and
    constant, ``binary(e, lhs, rhs)`` of each binary expression after its operands (the
    left one first), as a recursive walk would, but with a stack of its own: an
    expression may be as deep as it is long."""
    values: list[T] = []
    stack: list[tuple[AffineExpr, bool]] = [(expr, False)]
    while stack:
        e, operands_done = stack.pop()
        if not isinstance(e, AffineBinaryOpExpr):
            values.append(leaf(e))
        elif operands_done:
            rhs = values.pop()
            values.append(binary(e, values.pop(), rhs))
        else:
            stack += ((e, True), (e.rhs, False), (e.lhs, False))
    return values[0]


def symbols_renumbered(expr: AffineExpr, new: dict[int, int]) -> AffineExpr:
    """``expr`` with symbol ``s<k>`` made ``s<new[k]>``, products and quotients by symbols
    (semi-affine) kept as they are (xDSL's operators refuse to build them)."""
    return fold(expr, lambda e: AffineExpr.symbol(new[e.position]) if isinstance(e, AffineSymExpr) else e,
                lambda e, lhs, rhs: AffineBinaryOpExpr(e.kind, lhs, rhs))


def symbol_positions(exprs: Iterable[AffineExpr]) -> set[int]:
    """The symbols ``exprs`` use."""
    found: set[int] = set()
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if isinstance(e, AffineSymExpr):
            found.add(e.position)
        elif isinstance(e, AffineBinaryOpExpr):
            stack += (e.lhs, e.rhs)
    return found


def symbols_used(exprs: Sequence[AffineExpr]) -> int:
    """How many symbols a map over ``exprs`` declares: one past the highest used."""
    return max(symbol_positions(exprs), default=-1) + 1


def symbol_index(value: SSAValue) -> int | None:
    """The dims table entry ``value`` was loaded from, if it is a symbol's load."""
    owner = value.owner
    if isinstance(owner, memref.LoadOp) and SYMBOL in owner.attributes:
        return owner.attributes[SYMBOL].data  # type: ignore[attr-defined]  # an IntAttr
    return None


def symbol_values(block: Block) -> dict[int, SSAValue]:
    """The symbols' loads at the top of ``main``'s block, by index."""
    found: dict[int, SSAValue] = {}
    for op in block.ops:
        if isinstance(op, memref.LoadOp) and SYMBOL in op.attributes:
            found[op.attributes[SYMBOL].data] = op.res  # type: ignore[attr-defined]
    return found


def dims_attr(dims: Sequence[Dim]) -> ArrayAttr[IntAttr]:
    """Sizes as an attribute (``symbolic.encode`` of each, after their count)."""
    ints = [len(dims)]
    for d in dims:
        ints += encode(d)
    return ArrayAttr([IntAttr(i) for i in ints])


def read_dims(attr: Attribute) -> list[Dim]:
    """The sizes of an attribute made by :func:`dims_attr`."""
    ints = [i.data for i in attr.data]  # type: ignore[attr-defined]  # an ArrayAttr of IntAttr
    dims, at = [], 1
    for _ in range(ints[0]):
        d, at = decode(ints, at)
        dims.append(d)
    return dims

