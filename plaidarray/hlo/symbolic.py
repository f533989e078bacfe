"""Sizes known only when an executable runs.

A graph recorded again with other sizes is compiled once more only to make its sizes
run-time values (``trace/dynamic.py``; torch.compile's automatic dynamic shapes). In that
shape-generic computation a dimension, or an offset such as a slice's start, may be a
:class:`Sym`: entry ``index`` of the executable's dims table, read by the compiled code
when it runs. Sizes derived from them (a buffer's element count, a stride) are
:class:`SymExpr` polynomials with integer coefficients.

A symbolic size is at least 2 (sizes 0 and 1 are specialised, as torch does: a unit
dimension broadcasts), so comparing one with 0 or 1 has one answer; an offset may be
any value. Code made so runs with a size of 0 as well where its loops then run no
iteration and it reads nothing outside them (``codegen.lowering.empty_sizes``): the trace
layer binds such code to 0 (``trace/dynamic.py``), and to 1 only where no code asks
whether the size is 1 (``codegen.lowering.unit_sizes``, ``dynamic.unit_positions``: an op
kernel but a broadcast's or a matrix-vector product's; a parameter's dimension that nothing
but concatenations read, joining along it). Nothing else about a symbol is known: ordering comparisons raise TypeError,
and so does ``int()``, so code that would bake a compile-time value into an executable
meant for every size fails loudly. ``hint`` is the value a symbol had when the code was
compiled, for heuristics only (which values fusion stores, how loops are split).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Union, cast

#: A term's monomial: the sorted indices of the symbols it multiplies (repeats allowed).
Monomial = tuple[int, ...]


class Sym:
    """A run-time value: entry ``index`` of the dims table. ``size`` says it is a
    dimension (at least 2), not an offset (any non-negative value)."""

    __slots__ = ("index", "hint", "size")

    def __init__(self, index: int, hint: int, size: bool = True) -> None:
        self.index = index
        self.hint = hint
        self.size = size

    def __eq__(self, other: object) -> bool:
        return type(other) is Sym and other.index == self.index

    def __hash__(self) -> int:
        return hash(("Sym", self.index))

    def __repr__(self) -> str:
        return f"s{self.index}"

    def _expr(self) -> SymExpr:
        return SymExpr({(self.index,): 1}, {self.index: self})

    def __add__(self, other: Dim) -> Dim:
        return self._expr() + other

    __radd__ = __add__

    def __sub__(self, other: Dim) -> Dim:
        return self._expr() - other

    def __rsub__(self, other: Dim) -> Dim:
        return as_expr(other) - self._expr()

    def __mul__(self, other: Dim) -> Dim:
        if type(other) is int and other == 1:  # math.prod of dimensions starts with 1
            return self
        return _monomial_times(SymExpr._of({(self.index,): 1}, {self.index: self}), other)

    __rmul__ = __mul__

    def __neg__(self) -> Dim:
        return -self._expr()

    def __bool__(self) -> bool:
        if self.size:
            return True
        raise TypeError(f"whether the offset {self} is 0 is known only at run time")


class SymExpr:
    """A polynomial in symbols with integer coefficients (a size or offset derived from
    them): ``terms`` maps each monomial to its coefficient; ``()`` is the constant."""

    __slots__ = ("terms", "syms", "_hash")

    def __init__(self, terms: Mapping[Monomial, int], syms: Mapping[int, Sym]) -> None:
        self.terms = {m: c for m, c in terms.items() if c}
        self.syms = dict(syms)
        #: Its hash, made at the first ask: sizes key tables (a sequence's dims and free
        #: temporaries by byte count), and hashing sorts the terms.
        self._hash: int | None = None

    @classmethod
    def _of(cls, terms: dict[Monomial, int], syms: dict[int, Sym]) -> SymExpr:
        """A polynomial of ``terms``, none 0, and ``syms``, both the caller's own dicts
        (nothing filtered or copied: ``_monomial_times``)."""
        made = cls.__new__(cls)
        made.terms, made.syms, made._hash = terms, syms, None
        return made

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, Sym, SymExpr)):
            return self.terms == as_expr(other).terms
        return NotImplemented

    def __hash__(self) -> int:
        found = self._hash
        if found is None:
            found = self._hash = hash(tuple(sorted(self.terms.items())))
        return found

    def __repr__(self) -> str:
        parts = [f"{c}*{'*'.join(f's{i}' for i in m)}" if m and c != 1 else "*".join(f"s{i}" for i in m) or str(c)
                 for m, c in sorted(self.terms.items())]
        return "(" + " + ".join(parts) + ")" if len(parts) > 1 else parts[0] if parts else "0"

    def __add__(self, other: Dim) -> Dim:
        o = as_expr(other)
        terms = dict(self.terms)
        for m, c in o.terms.items():
            terms[m] = terms.get(m, 0) + c
        return _simplify(SymExpr(terms, {**self.syms, **o.syms}))

    __radd__ = __add__

    def __neg__(self) -> Dim:
        return _simplify(SymExpr({m: -c for m, c in self.terms.items()}, self.syms))

    def __sub__(self, other: Dim) -> Dim:
        return self + -as_expr(other)

    def __rsub__(self, other: Dim) -> Dim:
        return as_expr(other) - self

    def __mul__(self, other: Dim) -> Dim:
        if type(other) is int and other == 1:
            return self
        if len(self.terms) == 1:
            return _monomial_times(self, other)
        o = as_expr(other)
        return _simplify(SymExpr(_times(self.terms, o.terms), {**self.syms, **o.syms}))

    __rmul__ = __mul__

    def __bool__(self) -> bool:
        """A sum of products of sizes with positive coefficients is never 0."""
        if all(c > 0 for c in self.terms.values()) and all(s.size for s in self.syms.values()):
            return bool(self.terms)
        raise TypeError(f"whether {self} is 0 is known only at run time")

    def evaluate(self, values: Sequence[int] | Mapping[int, int]) -> int:
        """The value with each symbol ``k`` at ``values[k]``."""
        return sum(c * math.prod(values[i] for i in m) for m, c in self.terms.items())


#: A dimension or offset of a shape-generic computation.
Dim = Union[int, Sym, SymExpr]


def as_expr(value: Dim) -> SymExpr:
    if isinstance(value, SymExpr):
        return value
    if isinstance(value, Sym):
        return value._expr()
    if isinstance(value, int) and not isinstance(value, bool):
        return SymExpr({(): value}, {})
    return NotImplemented  # type: ignore[return-value]  # int.__add__ and friends then try the other side


def _simplify(expr: SymExpr) -> Dim:
    """A constant polynomial as its int, a single symbol as the symbol."""
    if not expr.terms:
        return 0
    if set(expr.terms) == {()}:
        return expr.terms[()]
    if len(expr.terms) == 1:
        ((m, c),) = expr.terms.items()
        if c == 1 and len(m) == 1:
            return expr.syms[m[0]]
    return expr


def is_static(dims: Iterable[Dim]) -> bool:
    """Whether every entry is a plain int."""
    return all(type(d) is int for d in dims)


def hint(value: Dim) -> int:
    """The value at compile time, for heuristics only (see the module docstring)."""
    if isinstance(value, Sym):
        return value.hint
    if isinstance(value, SymExpr):
        return value.evaluate(_hints(value))
    return value


def _hints(expr: SymExpr) -> dict[int, int]:
    return {i: s.hint for i, s in expr.syms.items()}


def evaluate(value: Dim, values: Sequence[int]) -> int:
    """The value for the dims table ``values``."""
    if isinstance(value, Sym):
        return values[value.index]
    if isinstance(value, SymExpr):
        return value.evaluate(values)
    return value


#: Calls an evaluator answers by walking its polynomials before it compiles them into
#: Python code: a compile costs about as much as ten walks (0.5-0.8 ms for the sizes of a
#: 36-op sequence), and most executables a script meets are bound once or twice (a
#: structure of fixed sizes once), while a loop over new sizes binds at every step.
COMPILE_AFTER = 8


def evaluator(derived: Sequence[Dim], values: Sequence[Dim]) -> Callable[[Sequence[int]], tuple[list[int], tuple]]:
    """A function of a dims table's run-time sizes that appends the ``derived`` entries
    (each in the entries before it) and evaluates ``values`` in the whole table: (the
    table, the values). Its first ``COMPILE_AFTER - 1`` calls walk each polynomial's
    terms (``evaluate``); then it is Python code made once and compiled, where walking
    was a third of binding. The code's text holds only ints (coefficients and indices)."""
    compiled: Callable[[Sequence[int]], tuple[list[int], tuple]] | None = None
    calls = 0

    def evaluate_sizes(v: Sequence[int]) -> tuple[list[int], tuple]:
        nonlocal compiled, calls
        if compiled is not None:
            return compiled(v)
        calls += 1
        if calls >= COMPILE_AFTER:
            compiled = _compiled(derived, values)
            return compiled(v)
        table = list(v)
        for d in derived:
            table.append(evaluate(d, table))
        return table, tuple([evaluate(value, table) for value in values])

    return evaluate_sizes


def _compiled(derived: Sequence[Dim], values: Sequence[Dim]) -> Callable[[Sequence[int]], tuple[list[int], tuple]]:
    """``evaluator``'s function as compiled Python code."""
    lines = ["def evaluate(v):", "    v = list(v)"]
    lines += [f"    v.append({python_expression(d)})" for d in derived]
    lines.append(f"    return v, ({''.join(python_expression(value) + ', ' for value in values)})")
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<plaidarray.hlo.symbolic.evaluator>", "exec"), namespace)
    return namespace["evaluate"]


def python_expression(value: Dim) -> str:
    """``value`` as a Python expression of the dims table ``v``: only ints (coefficients
    and indices), for code made from it and compiled (``evaluator``)."""
    if isinstance(value, Sym):
        return f"v[{int(value.index)}]"
    if isinstance(value, SymExpr):
        terms = [str(int(c)) + "".join(f" * v[{int(i)}]" for i in m) for m, c in value.terms.items()]
        return "(" + " + ".join(terms) + ")" if terms else "0"
    return str(int(value))


def symbols(values: Iterable[Dim]) -> set[int]:
    """The indices of the symbols ``values`` depend on."""
    found: set[int] = set()
    for v in values:
        if isinstance(v, Sym):
            found.add(v.index)
        elif isinstance(v, SymExpr):
            found.update(v.syms)
    return found


def rename(value: Dim, new: Mapping[int, int]) -> Dim:
    """``value`` with symbol ``k`` made symbol ``new[k]`` (hints and kinds kept)."""
    if isinstance(value, Sym):
        return Sym(new[value.index], value.hint, value.size)
    if isinstance(value, SymExpr):
        syms = {new[i]: Sym(new[i], s.hint, s.size) for i, s in value.syms.items()}
        return SymExpr({tuple(sorted(new[i] for i in m)): c for m, c in value.terms.items()}, syms)
    return value


def substitute(value: Dim, new: Mapping[int, Dim] | Sequence[Dim]) -> Dim:
    """``value`` with symbol ``k`` replaced by the size ``new[k]`` (a number or another
    polynomial in symbols): the sizes of one executable's code in the symbols of a
    sequence of them (``Compiler.sequence``). The terms are expanded in one dict, not
    through the operators (a polynomial made and simplified per product and per sum):
    merging a sequence substitutes every size of every step."""
    if isinstance(value, Sym):
        return new[value.index]
    if isinstance(value, SymExpr):
        terms: dict[Monomial, int] = {}
        syms: dict[int, Sym] = {}
        for monomial, coefficient in value.terms.items():
            product: dict[Monomial, int] = {(): coefficient}
            for index in monomial:
                size = new[index]
                if isinstance(size, int):
                    product = {m: c * size for m, c in product.items()}
                elif isinstance(size, Sym):
                    syms[size.index] = size
                    product = {tuple(sorted((*m, size.index))): c for m, c in product.items()}
                else:
                    syms.update(size.syms)
                    product = _times(product, size.terms)
            for m, c in product.items():
                terms[m] = terms.get(m, 0) + c
        return _simplify(SymExpr(terms, syms))
    return value


def _monomial_times(term: SymExpr, other: Dim) -> Dim:
    """The product of a polynomial of one term and ``other``, where that is one term again
    (an int or a symbol: a buffer's element count or bytes, a merged run of axes, a size
    times a stride): its monomial extended and coefficient scaled at once, where the
    general product (``_times``, ``_simplify``) made and compared dicts and sets, ~9 us
    a 2-d shape's bytes (``sequence.py`` works out each temporary's); else that product."""
    ((monomial, coefficient),) = term.terms.items()
    if type(other) is int:
        if not other:
            return 0
        coefficient *= other
    elif type(other) is Sym:
        symbol = cast(Sym, other)
        return SymExpr._of({tuple(sorted((*monomial, symbol.index))): coefficient}, {**term.syms, symbol.index: symbol})
    else:
        o = as_expr(other)
        return _simplify(SymExpr(_times(term.terms, o.terms), {**term.syms, **o.syms}))
    if coefficient == 1 and len(monomial) == 1:
        return term.syms[monomial[0]]
    return SymExpr._of({monomial: coefficient}, dict(term.syms)) if monomial else coefficient


def _times(left: Mapping[Monomial, int], right: Mapping[Monomial, int]) -> dict[Monomial, int]:
    """The terms of the product of two polynomials' terms."""
    out: dict[Monomial, int] = {}
    for m1, c1 in left.items():
        for m2, c2 in right.items():
            m = tuple(sorted(m1 + m2))
            out[m] = out.get(m, 0) + c1 * c2
    return out


def encode(value: Dim) -> list[int]:
    """``value`` as ints (for IR attributes and cache entries): the number of terms, then
    per term its coefficient, its number of symbols and their indices."""
    if type(value) is int:
        return [1, value, 0] if value else [0]
    found = _ENCODED.get(value)
    if found is None:
        expr = as_expr(value)
        out = [len(expr.terms)]
        for m, c in sorted(expr.terms.items()):
            out += [c, len(m), *m]
        if len(_ENCODED) >= KEPT_ENCODED:
            _ENCODED.clear()
        found = _ENCODED[value] = tuple(out)
    return list(found)


#: ``encode``'s answers by value: a shape-generic executable's sizes program (its first
#: binding at a structure's second size) encodes each step's extent and work and each
#: buffer's dims, a few polynomials repeated across a sequence's steps (n, a product of two
#: sizes), and sorting each one's terms anew was most of making it. Emptied at ``KEPT_ENCODED``.
_ENCODED: dict[Dim, tuple[int, ...]] = {}
KEPT_ENCODED = 1024


def decode(ints: Sequence[int], at: int = 0, syms: Mapping[int, Sym] | None = None) -> tuple[Dim, int]:
    """The value :func:`encode` wrote at ``at`` and the position after it; its symbols are
    those of ``syms`` (new ones with hint 0 where it has none)."""
    n, at = ints[at], at + 1
    terms: dict[Monomial, int] = {}
    for _ in range(n):
        c, k = ints[at], ints[at + 1]
        terms[tuple(ints[at + 2:at + 2 + k])] = c
        at += 2 + k
    known = syms or {}
    found = {i: known.get(i) or Sym(i, 0) for m in terms for i in m}
    return _simplify(SymExpr(terms, found)), at
