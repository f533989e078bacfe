"""Differential tests of the Python operators on arrays (binary, reflected with Python
scalars, in-place, unary, comparisons) against the same operators on NumPy arrays.

The functions behind the operators are tested dtype by dtype in test_elementwise; here
each operator is parametrized and the dtype is drawn by Hypothesis among those it allows."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from helpers import assert_same, numpy_binary
from strategies import (BOOL, FLOAT, INTEGER, INTEGER_OR_BOOL, REAL_NUMERIC, arrays, broadcastable_shapes, dtype_ids,
                        elements, elementwise_shape_pairs, elementwise_shapes)

#: operator -> (operator function, dtypes it applies to)
ARITHMETIC = {
    "add": (operator.add, REAL_NUMERIC), "sub": (operator.sub, REAL_NUMERIC), "mul": (operator.mul, REAL_NUMERIC),
    "truediv": (operator.truediv, REAL_NUMERIC), "floordiv": (operator.floordiv, REAL_NUMERIC),
    "mod": (operator.mod, REAL_NUMERIC), "pow": (operator.pow, REAL_NUMERIC),
    "and": (operator.and_, INTEGER_OR_BOOL), "or": (operator.or_, INTEGER_OR_BOOL),
    "xor": (operator.xor, INTEGER_OR_BOOL), "lshift": (operator.lshift, INTEGER),
    "rshift": (operator.rshift, INTEGER),
}
COMPARISON = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
              "ge": operator.ge}



def _operand_elements(name, dtype, second):
    """Values for which NumPy's operator is defined and matches the spec (see test_elementwise)."""
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        if name in ("lshift", "rshift") and second:
            return st.integers(0, bits - 1)
        if name == "pow":
            return st.integers(0, 5) if second else st.integers(-2 if dtype.kind == "i" else 0, 2)
    if dtype.kind == "f" and name == "floordiv":
        # Infinite operands: the spec's floor(x1 / x2) differs from NumPy (see test_elementwise).
        return elements(dtype, allow_infinity=False)
    return elements(dtype)


def _expected(fn, name, a, b):
    if name == "truediv" and np.asarray(a).dtype.kind in "iu":
        return numpy_binary(fn, np.asarray(a, np.float64), np.asarray(b, np.float64))
    return numpy_binary(fn, a, b)


def _compare(got, expected, name, dtype=None):
    exact = name != "pow"
    assert_same(got, expected, exact=exact, signed_zeros=name != "pow", dtype=dtype)


def _dtype(data, name, table=None):
    return data.draw(st.sampled_from((table or ARITHMETIC)[name][1]), label="dtype")


@pytest.mark.parametrize("name", list(ARITHMETIC))
@given(data=st.data())
def test_binary_operator(backend, name, data):
    fn = ARITHMETIC[name][0]
    dtype = _dtype(data, name)
    shape1, shape2 = data.draw(broadcastable_shapes(), label="shapes")
    a = data.draw(arrays(dtype, shape1, _operand_elements(name, dtype, False)), label="a")
    b = data.draw(arrays(dtype, shape2, _operand_elements(name, dtype, True)), label="b")
    _compare(fn(xp.asarray(a), xp.asarray(b)), _expected(fn, name, a, b), name)


def _python_scalar(data, name, dtype, second):
    """A Python scalar of a kind the spec lets meet ``dtype`` (bool/int/float)."""
    if dtype.kind == "b":
        return data.draw(st.booleans(), label="scalar")
    if dtype.kind in "iu":
        return int(data.draw(_operand_elements(name, dtype, second), label="scalar"))
    return data.draw(st.one_of(_operand_elements(name, dtype, second).map(float),
                               st.integers(-3, 3)), label="scalar")


@pytest.mark.parametrize("name", list(ARITHMETIC))
@given(data=st.data())
def test_operator_with_python_scalar(backend, name, data):
    """``x op scalar`` and the reflected ``scalar op x``: the scalar takes the array's dtype."""
    fn = ARITHMETIC[name][0]
    dtype = _dtype(data, name)
    # NumPy 2 treats Python scalars as weakly typed too; make that explicit with a 0-d array.
    if data.draw(st.booleans(), label="reflected"):
        b = data.draw(arrays(dtype, elementwise_shapes(), _operand_elements(name, dtype, True)), label="b")
        r = _python_scalar(data, name, dtype, False)
        _compare(fn(r, xp.asarray(b)), _expected(fn, name, np.asarray(r, dtype=dtype), b), name)
    else:
        a = data.draw(arrays(dtype, elementwise_shapes(), _operand_elements(name, dtype, False)), label="a")
        s = _python_scalar(data, name, dtype, True)
        _compare(fn(xp.asarray(a), s), _expected(fn, name, a, np.asarray(s, dtype=dtype)), name)


@pytest.mark.parametrize("name", list(ARITHMETIC))
@given(data=st.data())
def test_inplace_operator(backend, name, data):
    """``x op= y`` updates x (same dtype and shape) and every name bound to it."""
    dtype = _dtype(data, name)
    if name == "truediv" and dtype.kind in "iu":
        x = xp.asarray(np.ones(2, dtype))
        with pytest.raises(TypeError):  # the float result cannot be stored in an integer array
            x /= xp.asarray(np.ones(2, dtype))
        return
    fn = getattr(operator, f"i{name}")
    shape1, shape2 = data.draw(elementwise_shape_pairs(), label="shapes")
    shape1 = np.broadcast_shapes(shape1, shape2)  # the left operand keeps its shape
    a = data.draw(arrays(dtype, shape1, _operand_elements(name, dtype, False)), label="a")
    if data.draw(st.booleans(), label="python scalar operand"):
        s = _python_scalar(data, name, dtype, True)
        rhs, expected = s, _expected(ARITHMETIC[name][0], name, a, np.asarray(s, dtype=dtype))
    else:
        b = data.draw(arrays(dtype, shape2, _operand_elements(name, dtype, True)), label="b")
        rhs, expected = xp.asarray(b), _expected(ARITHMETIC[name][0], name, a, b)
    x = xp.asarray(a)
    alias = x
    x = fn(x, rhs)
    assert x is alias  # the same object is updated, so every name bound to it sees the result
    _compare(alias, expected, name)


def test_inplace_operator_that_would_change_shape_or_dtype_raises(backend):
    x = xp.asarray(np.ones(3, np.float32))
    with pytest.raises(ValueError):
        x += xp.asarray(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError):
        x += xp.asarray(np.ones(3, np.float64))
    assert_same(x, np.ones(3, np.float32), exact=True)
    y = xp.asarray(np.ones(3, np.int16))
    with pytest.raises(TypeError):
        y += 1.5


@pytest.mark.parametrize("name", sorted(COMPARISON))
@given(data=st.data())
def test_comparison_operator(backend, name, data):
    fn = COMPARISON[name]
    dtype = data.draw(st.sampled_from(REAL_NUMERIC), label="dtype")
    shape1, shape2 = data.draw(elementwise_shape_pairs(), label="shapes")
    pool = st.sampled_from(data.draw(st.lists(elements(dtype), min_size=1, max_size=3), label="pool"))
    a = data.draw(arrays(dtype, shape1, pool), label="a")
    b = data.draw(arrays(dtype, shape2, pool), label="b")
    form = data.draw(st.sampled_from(["arrays", "scalar", "reflected"]), label="form")
    if form == "arrays":
        assert_same(fn(xp.asarray(a), xp.asarray(b)), fn(a, b))
        return
    s = _python_scalar(data, "add", dtype, True)
    if form == "scalar":
        assert_same(fn(xp.asarray(a), s), fn(a, np.asarray(s, dtype=dtype)))
    else:  # ``scalar < x`` becomes ``x > scalar``
        assert_same(fn(s, xp.asarray(a)), fn(np.asarray(s, dtype=dtype), a))


@pytest.mark.parametrize("name", ["eq", "ne"])
@given(data=st.data())
def test_bool_equality_operators(backend, name, data):
    shape1, shape2 = data.draw(broadcastable_shapes(), label="shapes")
    a = data.draw(arrays(BOOL[0], shape1), label="a")
    b = data.draw(arrays(BOOL[0], shape2), label="b")
    fn = COMPARISON[name]
    assert_same(fn(xp.asarray(a), xp.asarray(b)), fn(a, b))
    assert_same(fn(xp.asarray(a), True), fn(a, True))


UNARY = {"neg": (operator.neg, REAL_NUMERIC), "pos": (operator.pos, REAL_NUMERIC), "abs": (abs, REAL_NUMERIC),
         "invert": (operator.invert, INTEGER_OR_BOOL)}


@pytest.mark.parametrize("name", list(UNARY))
@given(data=st.data())
def test_unary_operator(backend, name, data):
    fn = UNARY[name][0]
    dtype = _dtype(data, name, UNARY)
    a = data.draw(arrays(dtype, elementwise_shapes()), label="a")
    with np.errstate(all="ignore"):
        expected = np.asarray(fn(a))
    assert_same(fn(xp.asarray(a)), expected, exact=True)


def test_operators_reject_operands_without_a_result_type(backend):
    """Mixed kinds promote as in NumPy (test_client_regressions.py); these do not."""
    i = xp.asarray(np.arange(3, dtype=np.int32))
    b = xp.asarray(np.array([True, False, True]))
    with pytest.raises(TypeError):
        xp.asarray(np.arange(3, dtype=np.uint64)) + xp.asarray(np.arange(3, dtype=np.int64))  # noqa: B018
    with pytest.raises(TypeError):
        b - b  # NumPy refuses it too (``b + b`` is or, as NumPy's: test_elementwise.py)
    with pytest.raises(TypeError):
        i + "a"  # noqa: B018
    with pytest.raises(OverflowError):
        xp.asarray(np.arange(3, dtype=np.int8)) + 1000


@pytest.mark.parametrize("dtype", FLOAT, ids=dtype_ids(FLOAT))
def test_operator_expression_in_one_graph(backend, dtype):
    """A longer expression mixing operators and scalars, built lazily and computed once."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4)).astype(dtype)
    b = rng.standard_normal(4).astype(dtype)
    x, y = xp.asarray(a), xp.asarray(b)
    got = -(x * 2 - y) / (abs(y) + 1) ** 2
    expected = -(a * 2 - b) / (np.abs(b) + 1) ** 2
    assert_same(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert_same((x >= 0) & (y < 0), (a >= 0) & (b < 0))
