"""Differential tests of the element-wise functions against NumPy, on both backends.

One parametrized test per function family, over every dtype the spec's category
allows. Per-dtype tests draw shapes from a small fixed pool (0-d, empty, broadcasting
pairs) so that examples share compiled kernels; ``test_binary_broadcasting`` covers
Hypothesis-generated broadcast shapes for every binary function. Binary operands share
one dtype; type promotion between dtypes is tested at the end of this file. Special
values (NaN, +-inf, -0.0, subnormals) are mixed into every float array, and the
``*_special_value*`` tests run the full grid of them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from helpers import assert_same, numpy_binary, recorded_ops
from strategies import (ALL, BOOL, FLOAT, INTEGER, INTEGER_OR_BOOL, REAL_NUMERIC, SPECIAL_FLOATS, arrays,
                        broadcastable_shapes, dtype_ids, elements, elementwise_shape_pairs, elementwise_shapes)


def _numpy(fn, *args):
    if len(args) == 2:
        return numpy_binary(fn, *args)
    with np.errstate(all="ignore"):
        return np.asarray(fn(*args))


# --- unary ------------------------------------------------------------------------------

#: name -> (NumPy function, exactly rounded in IEEE arithmetic?)
UNARY_FLOATING = {
    "acos": (np.arccos, False), "acosh": (np.arccosh, False), "asin": (np.arcsin, False),
    "asinh": (np.arcsinh, False), "atan": (np.arctan, False), "atanh": (np.arctanh, False),
    "cos": (np.cos, False), "cosh": (np.cosh, False), "exp": (np.exp, False), "expm1": (np.expm1, False),
    "log": (np.log, False), "log1p": (np.log1p, False), "log2": (np.log2, False), "log10": (np.log10, False),
    "sin": (np.sin, False), "sinh": (np.sinh, False), "sqrt": (np.sqrt, True), "tan": (np.tan, False),
    "tanh": (np.tanh, False), "reciprocal": (np.reciprocal, True),
}


@pytest.mark.parametrize("dtype", FLOAT, ids=dtype_ids(FLOAT))
@pytest.mark.parametrize("name", sorted(UNARY_FLOATING))
@given(data=st.data())
def test_unary_floating_point(backend, name, dtype, data):
    np_fn, exact = UNARY_FLOATING[name]
    x = data.draw(arrays(dtype, elementwise_shapes()), label="x")
    assert_same(getattr(xp, name)(xp.asarray(x)), _numpy(np_fn, x), exact=exact)


#: name -> NumPy function (all exact)
UNARY_REAL_NUMERIC = {
    "abs": np.abs, "negative": np.negative, "positive": np.positive, "sign": np.sign, "square": np.square,
    "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc, "round": np.round,
    "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan,
}


@pytest.mark.parametrize("dtype", REAL_NUMERIC, ids=dtype_ids(REAL_NUMERIC))
@pytest.mark.parametrize("name", sorted(UNARY_REAL_NUMERIC))
@given(data=st.data())
def test_unary_real_numeric(backend, name, dtype, data):
    x = data.draw(arrays(dtype, elementwise_shapes()), label="x")
    expected = _numpy(UNARY_REAL_NUMERIC[name], x)
    if name in ("ceil", "floor", "trunc", "round"):
        expected = expected.astype(dtype)  # the spec keeps the input dtype (NumPy 2 does too)
    assert_same(getattr(xp, name)(xp.asarray(x)), expected, exact=True)


@pytest.mark.parametrize("dtype", FLOAT, ids=dtype_ids(FLOAT))
@given(data=st.data())
def test_signbit(backend, dtype, data):
    x = data.draw(arrays(dtype, elementwise_shapes()), label="x")
    assert_same(xp.signbit(xp.asarray(x)), np.signbit(x))


@given(x=arrays(BOOL[0], elementwise_shapes()))
def test_logical_not(backend, x):
    assert_same(xp.logical_not(xp.asarray(x)), np.logical_not(x))


@pytest.mark.parametrize("dtype", INTEGER_OR_BOOL, ids=dtype_ids(INTEGER_OR_BOOL))
@given(data=st.data())
def test_bitwise_invert(backend, dtype, data):
    x = data.draw(arrays(dtype, elementwise_shapes()), label="x")
    assert_same(xp.bitwise_invert(xp.asarray(x)), np.invert(x))


#: NumPy's result dtype of a floating-point function of an integer or boolean array, with
#: float32 for its float16 (which plaidarray lacks).
_FLOAT_OF = {np.dtype(np.bool_): np.float32, np.dtype(np.int8): np.float32, np.dtype(np.uint8): np.float32,
             np.dtype(np.int16): np.float32, np.dtype(np.uint16): np.float32, np.dtype(np.int32): np.float64,
             np.dtype(np.uint32): np.float64, np.dtype(np.int64): np.float64, np.dtype(np.uint64): np.float64}


@pytest.mark.parametrize("name", ["acos", "exp", "sin", "sqrt", "reciprocal", "log1p", "signbit", "atan2", "hypot",
                                  "copysign", "logaddexp"])
@pytest.mark.parametrize("dtype", INTEGER_OR_BOOL, ids=dtype_ids(INTEGER_OR_BOOL))
def test_floating_point_functions_compute_integers_and_bools_in_floating_point_as_numpy(backend, name, dtype):
    """Beyond the standard (its inputs "should" be floating-point): integer and boolean
    arrays enter in the float dtype NumPy computes them in, float32 where NumPy's is
    float16 (``dtypes.FLOAT_OF``): NumPy's values."""
    values = np.array([0, 1, 1, 0, 1]).astype(dtype)
    target = _FLOAT_OF[np.dtype(dtype)]
    expected = {"reciprocal": lambda v: 1 / v, "acos": np.arccos, "atan2": np.arctan2}.get(name, getattr(np, name, None))
    arguments = (values,) if name not in ("atan2", "hypot", "copysign", "logaddexp") else (values, values)
    got = getattr(xp, name)(*(xp.asarray(a) for a in arguments))
    want = expected(*(a.astype(target) for a in arguments))
    assert got.dtype == (np.dtype(np.bool_) if name == "signbit" else np.dtype(target))
    with np.errstate(divide="ignore"):
        assert_same(got, want, rtol=1e-6, atol=0)


@pytest.mark.parametrize("name", ["negative", "sign", "floor", "round", "isnan"])
def test_numeric_functions_reject_bool_input(name):
    """Those NumPy refuses too (``-mask``, ``sign``) or would give float16 (``floor``)."""
    with pytest.raises(TypeError):
        getattr(xp, name)(xp.asarray(np.array([True, False])))


def test_subtracting_booleans_is_refused_as_in_numpy():
    with pytest.raises(TypeError):
        xp.asarray(np.array([True, False])) - xp.asarray(np.array([True, True]))


@given(data=st.data())
def test_arithmetic_on_booleans_is_numpys(backend, data):
    """Beyond the standard: ``+`` is or, ``*`` is and, ``abs`` the identity, ``max`` any
    and ``min`` all, with NumPy's result dtypes (a Python int makes ``int64``)."""
    x1, x2 = _binary_operands(data, BOOL[0])
    a1, a2 = xp.asarray(x1), xp.asarray(x2)
    assert_same(a1 + a2, x1 + x2)
    assert_same(a1 * a2, x1 * x2)
    assert_same(xp.add(a1, True), np.add(x1, True))
    assert_same(xp.multiply(a1, 2), np.multiply(x1, 2))
    assert_same(xp.abs(a1), np.abs(x1))
    axis = data.draw(st.sampled_from([None] + list(range(x1.ndim))), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    if x1.size and (axis is None or x1.shape[axis]):
        assert_same(xp.max(a1, axis=axis, keepdims=keepdims), np.max(x1, axis=axis, keepdims=keepdims))
        assert_same(xp.min(a1, axis=axis, keepdims=keepdims), np.min(x1, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", INTEGER, ids=dtype_ids(INTEGER))
@pytest.mark.parametrize("bounds", [(0.5, 3.5), (None, 2.25), (-1.5, None), (np.float64(0.5), 2)])
def test_clip_of_integers_by_float_bounds_is_numpys(backend, dtype, bounds):
    """Beyond the standard (mixed kinds): clipped in float64, as NumPy 2 clips them."""
    x = np.array([0, 1, 2, 3, 4, 100], dtype=dtype)
    assert_same(xp.clip(xp.asarray(x), *bounds), np.clip(x, *bounds))


#: Functions whose NumPy result is a new array even where its values are the input's.
NEW_ARRAYS = {
    "positive": xp.positive, "round": xp.round, "floor": xp.floor, "ceil": xp.ceil, "trunc": xp.trunc,
    "conj": xp.conj, "clip": xp.clip, "abs of bools": xp.abs,
    "roll by 0": lambda x: xp.roll(x, 0), "roll by 0 along 0": lambda x: xp.roll(x, 0, axis=0),
    "sum over no axes": lambda x: xp.sum(x, axis=()), "max over no axes": lambda x: xp.max(x, axis=()),
    "mean over no axes": lambda x: xp.mean(xp.astype(x, xp.float64), axis=()),
}


@pytest.mark.parametrize("name", sorted(NEW_ARRAYS))
def test_results_equal_to_their_input_are_new_arrays(backend, name):
    """A write into the result does not reach the input, as with NumPy's results
    (returning the input itself aliased them: ``y = xp.round(counts); y[0] = 0``
    changed ``counts``)."""
    x = xp.asarray(np.array([True, False, True]) if name == "abs of bools" else np.array([4, 5, 6]))
    before = np.asarray(x).copy()
    y = NEW_ARRAYS[name](x)
    y[0] = False if y.dtype == xp.bool else 0
    np.testing.assert_array_equal(np.asarray(x), before)
    assert np.asarray(y)[0] == 0


# --- binary -----------------------------------------------------------------------------

def _binary_operands(data, dtype, elements1=None, elements2=None, shapes=None):
    shape1, shape2 = data.draw(elementwise_shape_pairs() if shapes is None else shapes, label="shapes")
    x1 = data.draw(arrays(dtype, shape1, elements1), label="x1")
    x2 = data.draw(arrays(dtype, shape2, elements2), label="x2")
    return x1, x2


def _int_pow_elements(dtype):
    """Small bases whose fifth power fits the dtype, and exponents 0..5 (NumPy raises
    for negative integer exponents; plaidarray defines them, see the docs)."""
    info = np.iinfo(dtype)
    bound = 1
    while (bound + 1) ** 5 <= info.max:
        bound += 1
    base = st.integers(max(-bound, int(info.min)), bound)
    return base, st.integers(0, 5)


def _float_floor_divide(x1, x2):
    """NumPy's floor_divide, except where an operand is infinite (or the divisor is
    zero): there the spec says floor(x1 / x2) (``inf // 2 == inf``, ``1 // -inf == -0``)
    while NumPy pairs ``//`` with ``%`` and gives NaN or -1."""
    numpy_result = numpy_binary(np.floor_divide, x1, x2)
    with np.errstate(all="ignore"):
        floor_of_quotient = np.floor(np.true_divide(x1, x2))
    regular = np.isfinite(x1) & np.isfinite(x2) & (x2 != 0)
    return np.asarray(np.where(regular, numpy_result, floor_of_quotient))


#: name -> (NumPy function, exactly rounded for floats?)
BINARY_REAL_NUMERIC = {
    "add": (np.add, True), "subtract": (np.subtract, True), "multiply": (np.multiply, True),
    "divide": (np.true_divide, True), "floor_divide": (np.floor_divide, True),
    "remainder": (np.remainder, True), "pow": (np.power, False), "maximum": (np.maximum, True),
    "minimum": (np.minimum, True), "less": (np.less, True), "less_equal": (np.less_equal, True),
    "greater": (np.greater, True), "greater_equal": (np.greater_equal, True),
}


@pytest.mark.parametrize("dtype", REAL_NUMERIC, ids=dtype_ids(REAL_NUMERIC))
@pytest.mark.parametrize("name", sorted(BINARY_REAL_NUMERIC))
@given(data=st.data())
def test_binary_real_numeric(backend, name, dtype, data):
    np_fn, exact = BINARY_REAL_NUMERIC[name]
    int_pow = name == "pow" and dtype.kind in "iu"
    x1, x2 = _binary_operands(data, dtype, *(_int_pow_elements(dtype) if int_pow else (None, None)))
    if name == "divide" and dtype.kind in "iu":
        # Integer true division: plaidarray promotes to the default float, float64.
        expected = _numpy(np_fn, x1.astype(np.float64), x2.astype(np.float64))
    elif name == "floor_divide" and dtype.kind == "f":
        expected = _float_floor_divide(x1, x2)
    else:
        expected = _numpy(np_fn, x1, x2)
    got = getattr(xp, name)(xp.asarray(x1), xp.asarray(x2))
    # maximum/minimum may pick either zero of +0.0 and -0.0 (the spec leaves it open).
    assert_same(got, expected, exact=exact, signed_zeros=name not in ("maximum", "minimum"))


@pytest.mark.parametrize("dtype", INTEGER, ids=dtype_ids(INTEGER))
@given(data=st.data())
def test_integer_pow_wraps_like_numpy(backend, dtype, data):
    """Any base with any non-negative exponent: both wrap modulo 2**bits (exponentiation by
    squaring), so the results agree with NumPy's exactly."""
    exponents = st.integers(0, int(np.iinfo(dtype).max))
    x1, x2 = _binary_operands(data, dtype, None, exponents)
    if dtype.kind == "u":  # make sure exponents with the top bit set occur (not negative: unsigned)
        x2 = np.concatenate([x2.ravel(), np.array([np.iinfo(dtype).max, 2 ** (dtype.itemsize * 8 - 1)], dtype)])
        x1 = np.full(x2.shape, 3, dtype)
    assert_same(xp.pow(xp.asarray(x1), xp.asarray(x2)), _numpy(np.power, x1, x2))


#: Inputs whose ``pow(x, 0.5)`` or ``pow(x, -1)`` glibc 2.36's ``pow``/``powf`` rounds an
#: ulp away from the square root's or the reciprocal's correctly rounded value.
POW_ROUNDED_APART = {
    np.dtype(np.float64): [float.fromhex(h) for h in ("0x1.f4c29bf4f040dp+875", "0x1.a9d2481df801p+811",
                                                      "0x1.0233c6f77167ap+674", "-0x1.1f67fb586b49cp-86")],
    np.dtype(np.float32): [float.fromhex(h) for h in ("0x1.db299ep-33", "0x1.e2bbf6p+85", "-0x1.278cbap-12",
                                                      "0x1.344dd8p-6")],
}


@pytest.mark.parametrize("dtype", FLOAT, ids=dtype_ids(FLOAT))
@given(data=st.data())
def test_float_powers_of_2_half_and_minus_1_are_correctly_rounded(backend, dtype, data):
    """``x ** 2``, ``x ** 0.5`` and ``x ** -1`` (and ``pow`` where an array's exponent is
    one of them) give the square rounded once, the square root and the reciprocal: NumPy's
    ``**`` of them, where the C library's ``pow`` is an ulp off for about one input in
    1500; at every magnitude, overflow and underflow included, with the standard's
    special cases (``-0 ** 0.5`` is +0, ``-inf ** 0.5`` +inf). Elements of other
    exponents beside them keep ``pow``'s results."""
    magnitudes = st.floats(-200.0 if dtype == np.float64 else -30.0, 200.0 if dtype == np.float64 else 30.0)
    x = data.draw(arrays(dtype, st.integers(1, 40).map(lambda n: (n,)), elements(dtype)), label="x")
    scale = np.asarray(10.0 ** data.draw(magnitudes, label="scale"), dtype)
    with np.errstate(all="ignore"):
        x = np.concatenate([x, x * scale, np.asarray(SPECIAL_FLOATS + tuple(POW_ROUNDED_APART[x.dtype]), dtype)])
        expected = {2: x * x, 0.5: np.where(x == -np.inf, np.inf, np.sqrt(x) + 0.0), -1: 1 / x}
    for exponent, want in expected.items():
        assert_same(xp.asarray(x) ** exponent, want, exact=True, err_msg=str(exponent))
        assert_same(xp.pow(xp.asarray(x), float(exponent)), want, exact=True, err_msg=str(exponent))
    y = np.asarray([2.0, 0.5, -1.0, 1.5])[np.arange(x.size) % 4].astype(dtype)
    got = np.asarray(xp.pow(xp.asarray(x), xp.asarray(y)))
    for k, exponent in enumerate((2, 0.5, -1)):
        assert_same(got[k::4], expected[exponent][k::4], exact=True, err_msg=str(exponent))
    assert_same(got[3::4], _numpy(np.power, x[3::4], y[3::4]))


SIGNED = [d for d in INTEGER if d.kind == "i"]


@pytest.mark.parametrize("dtype", SIGNED, ids=dtype_ids(SIGNED))
@given(data=st.data())
def test_integer_negative_pow_is_truncated_reciprocal(backend, dtype, data):
    """A negative exponent (NumPy raises; the standard leaves it unspecified) gives the
    reciprocal of the power truncated toward zero, as docs/user-guide.md says: 1 for a
    base of 1, +-1 for -1 by the exponent's parity, 0 for any other base (0 too), from
    an array exponent and from a Python int alike."""
    base = data.draw(arrays(dtype, st.integers(1, 8).map(lambda n: (n,)), st.integers(-3, 3)), label="base")
    exponent = data.draw(st.integers(-7, -1), label="exponent")
    expected = np.where(base == 1, 1, np.where(base == -1, (-1) ** (-exponent), 0)).astype(dtype)
    assert_same(xp.asarray(base) ** exponent, expected)
    assert_same(xp.pow(xp.asarray(base), xp.full(base.shape, exponent, dtype=dtype)), expected)


@pytest.mark.parametrize("dtype", ALL, ids=dtype_ids(ALL))
@pytest.mark.parametrize("name", ["equal", "not_equal"])
@given(data=st.data())
def test_equality(backend, name, dtype, data):
    # Draw from a small pool half of the time so equal elements actually occur.
    pool = st.sampled_from(data.draw(st.lists(elements(dtype), min_size=1, max_size=3), label="pool"))
    use_pool = data.draw(st.booleans(), label="use_pool")
    x1, x2 = _binary_operands(data, dtype, *((pool, pool) if use_pool else (None, None)))
    expected = _numpy(getattr(np, name), x1, x2)
    assert_same(getattr(xp, name)(xp.asarray(x1), xp.asarray(x2)), expected)


BINARY_REAL_FLOATING = {"atan2": (np.arctan2, False), "copysign": (np.copysign, True),
                        "logaddexp": (np.logaddexp, False)}


@pytest.mark.parametrize("dtype", FLOAT, ids=dtype_ids(FLOAT))
@pytest.mark.parametrize("name", sorted(BINARY_REAL_FLOATING))
@given(data=st.data())
def test_binary_real_floating(backend, name, dtype, data):
    np_fn, exact = BINARY_REAL_FLOATING[name]
    x1, x2 = _binary_operands(data, dtype)
    assert_same(getattr(xp, name)(xp.asarray(x1), xp.asarray(x2)), _numpy(np_fn, x1, x2), exact=exact)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
@given(data=st.data())
def test_binary_logical(backend, name, data):
    x1, x2 = _binary_operands(data, BOOL[0])
    assert_same(getattr(xp, name)(xp.asarray(x1), xp.asarray(x2)), getattr(np, name)(x1, x2))


@pytest.mark.parametrize("dtype", INTEGER_OR_BOOL, ids=dtype_ids(INTEGER_OR_BOOL))
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@given(data=st.data())
def test_binary_bitwise(backend, name, dtype, data):
    x1, x2 = _binary_operands(data, dtype)
    assert_same(getattr(xp, name)(xp.asarray(x1), xp.asarray(x2)), getattr(np, name)(x1, x2))


def _category_dtypes(name):
    if name in BINARY_REAL_NUMERIC:
        return REAL_NUMERIC
    if name in BINARY_REAL_FLOATING:
        return FLOAT
    if name.startswith("logical"):
        return BOOL
    if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        return INTEGER_OR_BOOL
    if name in ("equal", "not_equal"):
        return ALL
    return INTEGER


BINARY_NUMPY = {**{n: f for n, (f, _) in BINARY_REAL_NUMERIC.items()},
                **{n: f for n, (f, _) in BINARY_REAL_FLOATING.items()},
                "equal": np.equal, "not_equal": np.not_equal, "logical_and": np.logical_and,
                "logical_or": np.logical_or, "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and,
                "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
                "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift}


@pytest.mark.parametrize("name", sorted(BINARY_NUMPY))
@given(data=st.data())
def test_binary_broadcasting(backend, name, data):
    """Hypothesis-generated broadcast-compatible shapes (up to 3 dims, sides 0-4) for
    every binary function, with a dtype of its category."""
    dtype = data.draw(st.sampled_from(_category_dtypes(name)), label="dtype")
    e1 = e2 = None
    if name == "pow" and dtype.kind in "iu":
        e1, e2 = _int_pow_elements(dtype)
    elif name.startswith("bitwise_") and name.endswith("shift"):
        e2 = st.integers(0, dtype.itemsize * 8 - 1)
    x1, x2 = _binary_operands(data, dtype, e1, e2, shapes=broadcastable_shapes())
    if name == "divide" and dtype.kind in "iu":
        expected = _numpy(np.true_divide, x1.astype(np.float64), x2.astype(np.float64))
    elif name == "floor_divide" and dtype.kind == "f":
        expected = _float_floor_divide(x1, x2)
    else:
        expected = _numpy(BINARY_NUMPY[name], x1, x2)
    exact = name not in ("pow", "atan2", "logaddexp")
    assert_same(getattr(xp, name)(xp.asarray(x1), xp.asarray(x2)), expected, exact=exact,
                signed_zeros=name not in ("maximum", "minimum"))


@pytest.mark.parametrize("dtype", INTEGER, ids=dtype_ids(INTEGER))
@pytest.mark.parametrize("name, np_fn", [("bitwise_left_shift", np.left_shift),
                                         ("bitwise_right_shift", np.right_shift)])
@given(data=st.data())
def test_binary_shift(backend, name, np_fn, dtype, data):
    bits = dtype.itemsize * 8
    x1, x2 = _binary_operands(data, dtype, None, st.integers(0, bits - 1))
    assert_same(getattr(xp, name)(xp.asarray(x1), xp.asarray(x2)), _numpy(np_fn, x1, x2))


@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("dtype", [np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.uint16), np.dtype(np.uint64)],
                         ids=["int8", "int32", "uint16", "uint64"])
def test_shift_by_bit_width_or_more(backend, name, dtype):
    """Documented: shifting by >= the bit width gives 0, or -1 for an arithmetic right
    shift of a negative number."""
    bits = dtype.itemsize * 8
    info = np.iinfo(dtype)
    x1 = np.array([1, info.max, info.min, info.min + 1 if info.min else 5], dtype)
    x2 = np.array([bits, bits + 1, bits, 2 * bits - 1], dtype)
    if name == "bitwise_left_shift":
        expected = np.zeros(4, dtype)
    else:
        expected = np.where(x1 < 0, -1, 0).astype(dtype)
    assert_same(getattr(xp, name)(xp.asarray(x1), xp.asarray(x2)), expected)


@pytest.mark.parametrize("dtype", INTEGER, ids=dtype_ids(INTEGER))
def test_integer_division_by_zero_gives_zero(backend, dtype):
    x1 = np.array([0, 1, 7, np.iinfo(dtype).max], dtype)
    x2 = np.zeros(4, dtype)
    zeros = np.zeros(4, dtype)
    assert_same(xp.floor_divide(xp.asarray(x1), xp.asarray(x2)), zeros)
    assert_same(xp.remainder(xp.asarray(x1), xp.asarray(x2)), zeros)


@pytest.mark.parametrize("name", ["logical_and", "logical_not"])
def test_logical_functions_reject_non_bool(name):
    a = xp.asarray(np.array([1, 0], np.int32))
    with pytest.raises(TypeError):
        getattr(xp, name)(a, a) if name != "logical_not" else xp.logical_not(a)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_left_shift", "bitwise_invert"])
def test_bitwise_functions_reject_floats(name):
    a = xp.asarray(np.array([1.0, 0.0]))
    with pytest.raises(TypeError):
        getattr(xp, name)(a) if name == "bitwise_invert" else getattr(xp, name)(a, a)


@pytest.mark.parametrize("name", ["atan2", "copysign", "logaddexp"])
def test_real_floating_functions_reject_complex_values(name):
    a = xp.asarray(np.array([1, 2j]))
    with pytest.raises(TypeError, match=f"{name}: expected an array of real floating-point dtype, got complex128"):
        getattr(xp, name)(a, a)


def test_incompatible_shapes_raise_value_error():
    with pytest.raises(ValueError):
        xp.add(xp.asarray(np.zeros((2, 3))), xp.asarray(np.zeros((4,))))


GRID = SPECIAL_FLOATS + (3.0, -3.0, 0.25, -1.5, 1e30, -1e30, 5e-324, -5e-324, 1e300, 88.5, -710.0)


def _grid(dtype):
    with np.errstate(all="ignore"):
        return np.array(GRID, dtype)


FLOAT_BINARY = {**BINARY_REAL_NUMERIC, **BINARY_REAL_FLOATING,
                "equal": (np.equal, True), "not_equal": (np.not_equal, True)}


@pytest.mark.parametrize("dtype", FLOAT, ids=dtype_ids(FLOAT))
def test_binary_floating_special_value_grid(backend, dtype):
    """Every pair of special values (signed zeros, infinities, NaN, +-1, 0.5, subnormals,
    huge values) for every floating-point binary function: the spec's special cases."""
    x1, x2 = _grid(dtype)[:, None], _grid(dtype)[None, :]
    for name, (np_fn, exact) in FLOAT_BINARY.items():
        expected = _float_floor_divide(x1, x2) if name == "floor_divide" else _numpy(np_fn, x1, x2)
        got = getattr(xp, name)(xp.asarray(x1), xp.asarray(x2))
        assert_same(got, expected, exact=exact, signed_zeros=name not in ("maximum", "minimum"), err_msg=name)


@pytest.mark.parametrize("dtype", FLOAT, ids=dtype_ids(FLOAT))
def test_unary_floating_special_values(backend, dtype):
    x = _grid(dtype)
    for name, (np_fn, exact) in UNARY_FLOATING.items():
        assert_same(getattr(xp, name)(xp.asarray(x)), _numpy(np_fn, x), exact=exact, err_msg=name)
    for name, np_fn in UNARY_REAL_NUMERIC.items():
        assert_same(getattr(xp, name)(xp.asarray(x)), _numpy(np_fn, x), exact=True, err_msg=name)
    assert_same(xp.signbit(xp.asarray(x)), np.signbit(x))


# --- type promotion ---------------------------------------------------------------------

def _kind(d):
    return {"b": "bool", "i": "int", "u": "int", "f": "float"}[d.kind]


def _promotable(a, b):
    if a == b or _kind(a) != _kind(b):
        return False
    return not ({a.kind, b.kind} == {"i", "u"} and np.dtype(np.uint64) in (a, b))


PARTNERS = {a: [b for b in ALL if _promotable(a, b)] for a in ALL}
PROMOTING_DTYPES = [a for a in ALL if PARTNERS[a]]
UINT64_WITH_SIGNED = [(a, b) for a, b in itertools.product(INTEGER, INTEGER)
                      if {a.kind, b.kind} == {"i", "u"} and np.dtype(np.uint64) in (a, b)]

PROMOTING_FUNCTIONS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
                       "less": np.less, "equal": np.equal}


@pytest.mark.parametrize("dtype1", PROMOTING_DTYPES, ids=dtype_ids(PROMOTING_DTYPES))
@given(data=st.data())
def test_type_promotion_within_a_kind(backend, dtype1, data):
    dtype2 = data.draw(st.sampled_from(PARTNERS[dtype1]), label="dtype2")
    name = data.draw(st.sampled_from(sorted(PROMOTING_FUNCTIONS)), label="function")
    shape1, shape2 = data.draw(elementwise_shape_pairs(), label="shapes")
    x1 = data.draw(arrays(dtype1, shape1), label="x1")
    x2 = data.draw(arrays(dtype2, shape2), label="x2")
    expected = _numpy(PROMOTING_FUNCTIONS[name], x1, x2)
    got = getattr(xp, name)(xp.asarray(x1), xp.asarray(x2))
    promoted = np.result_type(dtype1, dtype2)
    assert xp.result_type(dtype1, dtype2) == promoted
    assert_same(got, expected, exact=True, signed_zeros=name != "maximum",
                dtype=np.bool_ if name in ("less", "equal") else promoted)


def _edge_values(dtype):
    if dtype.kind == "b":
        return np.array([True, False, True], dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, info.max, 0, 1, info.max // 2, info.min // 2 + 1], dtype)
    return np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.25, np.finfo(dtype).max,
                     np.finfo(dtype).smallest_subnormal], dtype)


def test_type_promotion_every_pair_on_edge_values(backend):
    """Every pair the spec defines, exhaustively, on fixed edge values (broadcast against
    each other as a column and a row)."""
    for dtype1 in PROMOTING_DTYPES:
        for dtype2 in PARTNERS[dtype1]:
            x1, x2 = _edge_values(dtype1)[:, None], _edge_values(dtype2)[None, :]
            expected = _numpy(np.add, x1, x2)
            assert expected.dtype == np.result_type(dtype1, dtype2)
            got = xp.add(xp.asarray(x1), xp.asarray(x2))
            assert_same(got, expected, exact=True, err_msg=f"{dtype1} with {dtype2}")


@pytest.mark.parametrize("name", ["add", "multiply", "equal", "maximum"])
def test_uint64_with_signed_raises_type_error(backend, name):
    """The standard's table has no result; mixed kinds promote as in NumPy (tested in
    test_client_regressions.py)."""
    for a, b in UINT64_WITH_SIGNED:
        with pytest.raises(TypeError):
            getattr(xp, name)(xp.asarray(np.ones(2, a)), xp.asarray(np.ones(2, b)))
    with pytest.raises(TypeError):
        xp.maximum(xp.asarray(np.ones(2, bool)), xp.asarray(np.ones(2, bool)))


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.uint64, np.float32, np.float64])
def test_floored_division_is_one_op_with_numpys_values(dtype):
    """``//`` and ``%`` record one op each (``floor_divide``, ``floor_remainder``), where
    the sign fix-ups of floored division were 8-25 ops, each an op kernel's first use of
    the baseline tier's; their values are NumPy's, negative operands, zero divisors and
    an array with a Python scalar on either side included."""
    signed = np.dtype(dtype).kind != "u"
    a = np.array([7, -7, 5, -5, 0, 9, 3] if signed else [7, 255, 5, 0, 9, 3, 1], dtype=dtype)
    b = np.array([2, 2, -3, -3, 4, 0, -1] if signed else [2, 2, 3, 4, 0, 7, 9], dtype=dtype)
    x, y = xp.asarray(a), xp.asarray(b)
    for got, name in ((x // y, "floor_divide"), (x % y, "floor_remainder")):
        assert recorded_ops(got) == [name]
    with np.errstate(divide="ignore", invalid="ignore"):
        cases = [(x // y, np.floor_divide(a, b)), (x % y, np.remainder(a, b)), (x // 3, np.floor_divide(a, dtype(3))),
                 (x % 3, np.remainder(a, dtype(3))), (9 % x, np.remainder(dtype(9), a))]
    for got, want in cases:
        assert [op for op in recorded_ops(got) if op != "broadcast_in_dim"] in (["floor_divide"], ["floor_remainder"])
        assert_same(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logaddexp_is_one_op_with_numpys_values(dtype):
    """``logaddexp`` records one op, where its larger operand, ``log1p(exp(-|a - b|))``
    and the equal operands' ``a + log(2)`` were ten nodes, each an op kernel's first use
    of the baseline tier's (a log-space recursion cut its pending graph every other
    step); its values are NumPy's on infinities of either sign, equal operands, NaN and
    operands far apart, and the fused tier's (``jit``) bits are the baseline tier's."""
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 30.0, -30.0, 80.0], dtype=dtype)
    a, b = np.repeat(special, len(special)), np.tile(special, len(special))
    x, y = xp.asarray(a), xp.asarray(b)
    got = xp.logaddexp(x, y)
    assert recorded_ops(got) == ["logaddexp"]
    with np.errstate(all="ignore"):
        want = np.logaddexp(a, b)
    np.testing.assert_allclose(np.asarray(got), want, rtol=4 * np.finfo(dtype).eps, atol=0)
    assert np.array_equal(np.isnan(np.asarray(got)), np.isnan(want))
    fused = xp.jit(lambda p, q: xp.logaddexp(p, q))(x, y)
    assert np.asarray(fused).tobytes() == np.asarray(got).tobytes()
    assert float(xp.logaddexp(x[20], 1.0)) == pytest.approx(float(np.logaddexp(a[20], dtype(1.0))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_signbit_is_one_op_with_numpys_values(dtype):
    """``signbit`` records one op, where ``copysign(1, x) < 0`` was four nodes; its values
    are NumPy's on zeros, infinities, NaNs and subnormals of either sign, on the baseline
    tier, the fused tier (``jit``) and an element's read (the scalar tier: the op is exact)."""
    a = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 1e-40, -1e-40], dtype=dtype)
    x = xp.asarray(a)
    got = xp.signbit(x)
    assert recorded_ops(got) == ["signbit"]
    assert_same(got, np.signbit(a))
    assert_same(xp.jit(xp.signbit)(x), np.signbit(a))
    assert [bool(xp.signbit(x[i])) for i in range(len(a))] == np.signbit(a).tolist()
