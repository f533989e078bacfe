"""Run-time sizes (``hlo/symbolic.py``): the polynomials a shape-generic executable is
bound with, evaluated term by term and by the evaluator alike, walked or compiled."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from plaidarray.hlo import symbolic
from plaidarray.hlo.symbolic import COMPILE_AFTER, Sym, evaluate, evaluator

SYMBOLS = [Sym(i, 4 + i) for i in range(3)]


@st.composite
def polynomials(draw, symbols=SYMBOLS):
    """Sums of products of symbols and ints, with negative coefficients too."""
    total = draw(st.integers(-5, 5))
    for _ in range(draw(st.integers(0, 4))):
        term = draw(st.integers(-3, 3))
        for _ in range(draw(st.integers(0, 3))):
            term = term * draw(st.sampled_from(symbols))
        total = total + term
    return total


@given(st.lists(st.integers(0, 1000), min_size=3, max_size=3), st.lists(polynomials(), max_size=3),
       st.lists(polynomials(), min_size=1, max_size=6), st.data())
def test_the_evaluator_computes_what_evaluate_does(values, derived, targets, data):
    """Derived entries are each in the entries before them; the values in the whole table."""
    derived_in_table = []
    for i, d in enumerate(derived):  # the i-th derived entry may name those before it
        extra = [Sym(3 + j, 1) for j in range(i)]
        derived_in_table.append(d + (data.draw(st.sampled_from(extra)) if extra else 0))
    table = list(values)
    for d in derived_in_table:
        table.append(evaluate(d, table))
    every = SYMBOLS + [Sym(3 + j, 1) for j in range(len(derived))]
    targets = [t + data.draw(st.sampled_from(every)) for t in targets]
    evaluate_sizes = evaluator(derived_in_table, targets)
    for _ in range(COMPILE_AFTER + 1):  # walked, then compiled
        got_table, got = evaluate_sizes(values)
        assert got_table == table
        assert list(got) == [evaluate(t, table) for t in targets]


def test_an_evaluator_compiles_only_once_called_often(monkeypatch):
    """A binding that happens once or twice (most executables a script meets) walks the
    polynomials; the ``COMPILE_AFTER``-th call compiles them, once."""
    compiled = []
    original = symbolic._compiled
    monkeypatch.setattr(symbolic, "_compiled", lambda *args: compiled.append(args) or original(*args))
    evaluate_sizes = evaluator([Sym(0, 2) * Sym(1, 3)], [Sym(2, 6) + 1])
    for k in range(1, 3 * COMPILE_AFTER):
        assert evaluate_sizes([k, 2]) == ([k, 2, 2 * k], (2 * k + 1,))
        assert len(compiled) == (k >= COMPILE_AFTER)


def test_an_evaluator_of_constants_and_of_nothing():
    assert evaluator([], [7, Sym(1, 2)])([3, 4]) == ([3, 4], (7, 4))
    assert evaluator([], [])([3]) == ([3], ())


@given(polynomials(), st.lists(st.one_of(st.integers(-4, 9), polynomials(), st.sampled_from(SYMBOLS)),
                               min_size=3, max_size=3),
       st.lists(st.integers(0, 50), min_size=3, max_size=3))
def test_substitute_is_the_polynomial_of_the_substituted_sizes(value, new, at):
    """``substitute`` expands the terms itself: equal to the same polynomial made by the
    operators (each term a product of the new sizes, summed), and evaluating to the value
    at the new sizes' values."""
    by_operators = 0
    for monomial, coefficient in symbolic.as_expr(value).terms.items():
        term = coefficient
        for index in monomial:
            term = term * new[index]
        by_operators = by_operators + term
    substituted = symbolic.substitute(value, new)
    assert substituted == by_operators and type(substituted) is type(by_operators)
    assert evaluate(substituted, at) == evaluate(value, [evaluate(n, at) for n in new])


@given(polynomials(), st.lists(st.integers(0, 1000), min_size=3, max_size=3))
def test_encoding_decodes_to_the_same_values_asked_twice(value, values):
    """``encode`` keeps its answers by value: an answer given again is the same ints
    (not a list a caller's extension changed), and decodes to a polynomial of the same
    values as the one encoded."""
    first = symbolic.encode(value)
    first.append(99)  # a caller extends its words with it
    again = symbolic.encode(value)
    assert again == first[:-1]
    decoded, end = symbolic.decode(again)
    assert end == len(again)
    assert evaluate(decoded, values) == evaluate(value, values)


@given(polynomials(), st.one_of(st.integers(-4, 9), polynomials(), st.sampled_from(SYMBOLS)),
       st.lists(st.integers(0, 50), min_size=3, max_size=3))
def test_a_product_is_the_expanded_product_of_the_terms(left, right, at):
    """Products of one term take a shorter way (``_monomial_times``): the same
    polynomial as expanding every pair of terms, simplified alike (an int, a symbol or a
    polynomial), whichever side the one term is on, and its value the product's."""
    a, b = symbolic.as_expr(left), symbolic.as_expr(right)
    expanded = symbolic._simplify(symbolic.SymExpr(symbolic._times(a.terms, b.terms), {**a.syms, **b.syms}))
    for product in (left * right, right * left):
        assert product == expanded and type(product) is type(expanded)
        assert evaluate(product, at) == evaluate(left, at) * evaluate(right, at)
        if type(product) is symbolic.SymExpr:
            assert set(product.syms) == {i for m in product.terms for i in m}
            assert all(product.terms.values())


def test_products_of_symbols_in_any_order_are_one_polynomial():
    """A monomial is its symbols' sorted indices whatever order they were multiplied in
    (equal sizes hash and compare equal: a sequence's dims table keys by them)."""
    s0, s1, s2 = SYMBOLS
    for left, right in ((s2 * s0, s0 * s2), (2 * s2 * s0, s0 * (s2 * 2)), ((s1 * s2) * s0, s0 * s1 * s2),
                        (s2 * s1 * s2, s2 * s2 * s1)):
        assert left == right and hash(left) == hash(right)
        assert all(list(m) == sorted(m) for m in left.terms)
    assert s0 * -1 * -1 is s0 and (3 * s1) * 0 == 0 and type((3 * s1) * 0) is int
