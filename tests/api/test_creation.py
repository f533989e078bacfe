"""Differential tests of the creation functions against their NumPy equivalents."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from helpers import assert_same, recorded_ops
from strategies import ALL, FLOAT, INTEGER, REAL_NUMERIC, arrays, dtype_ids, elements, shapes

dtypes_or_none = st.one_of(st.none(), st.sampled_from(ALL))


def _scalar_for(dtype):
    """A Python scalar of the kind that may fill an array of ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        return elements(dtype).map(int)
    return st.one_of(elements(dtype).map(float), st.integers(-1000, 1000))


# --- asarray ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL, ids=dtype_ids(ALL))
@given(data=st.data())
def test_asarray_from_numpy_round_trips(backend, dtype, data):
    a = data.draw(arrays(dtype, shapes()), label="a")
    x = xp.asarray(a)
    assert x.dtype == a.dtype and x.shape == a.shape and x.ndim == a.ndim and x.size == a.size
    assert_same(x, a, exact=True)
    # Also through a computation, so the value crosses the compiled code.
    assert_same(xp.reshape(xp.flip(x), (-1,)), np.flip(a).reshape(-1), exact=True)


@given(data=st.data())
def test_asarray_from_non_contiguous_numpy_views(backend, data):
    a = data.draw(arrays(np.float64, shapes(min_dims=2)), label="a")
    for view in (a.T, a[::-1], a[..., ::2]):
        assert_same(xp.asarray(view), view, exact=True)


def _nested(values, shape):
    return np.asarray(values, dtype=object).reshape(shape).tolist() if shape else values[0]


python_scalars = st.one_of(
    st.booleans(),
    st.integers(-2**63, 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
)


@given(data=st.data())
def test_asarray_from_nested_lists(backend, data):
    shape = data.draw(shapes(min_dims=1), label="shape")
    kind = data.draw(st.sampled_from(["bool", "int", "float", "bool+int", "int+float"]), label="kind")
    pool = {
        "bool": st.booleans(), "int": st.integers(-2**63, 2**63 - 1), "float": st.floats(),
        "bool+int": st.one_of(st.booleans(), st.integers(-100, 100)),
        "int+float": st.one_of(st.integers(-2**53, 2**53), st.floats()),
    }[kind]
    values = data.draw(st.lists(pool, min_size=math.prod(shape), max_size=math.prod(shape)), label="values")
    obj = _nested(values, shape)
    # The spec's default dtypes: bool, else the default int, else the default float.
    types = {type(v) for v in values}
    expected_dtype = (np.float64 if float in types or not types  # no elements: the default float
                      else np.int64 if int in types else np.bool_)
    expected = np.asarray(obj, dtype=expected_dtype)
    assert_same(xp.asarray(obj), expected, exact=True)


@given(value=python_scalars)
def test_asarray_from_python_scalars(backend, value):
    expected = np.asarray(value, dtype={bool: np.bool_, int: np.int64, float: np.float64}[type(value)])
    assert_same(xp.asarray(value), expected, exact=True)
    assert_same(xp.reshape(xp.asarray(value), (1, 1)), expected.reshape(1, 1), exact=True)


def test_asarray_python_int_out_of_int64_range_raises():
    with pytest.raises(OverflowError):
        xp.asarray(2**63)
    with pytest.raises(OverflowError):
        xp.asarray([1, -2**63 - 1])


@pytest.mark.parametrize("dtype", ALL, ids=dtype_ids(ALL))
@given(data=st.data())
def test_asarray_with_dtype_from_python_lists(backend, dtype, data):
    shape = data.draw(shapes(min_dims=1), label="shape")
    values = data.draw(st.lists(_scalar_for(dtype), min_size=math.prod(shape), max_size=math.prod(shape)),
                       label="values")
    obj = _nested(values, shape)
    assert_same(xp.asarray(obj, dtype=dtype), np.asarray(obj, dtype=dtype), exact=True)


def _castable_values(src, dst):
    """Source values whose conversion to ``dst`` NumPy defines (float -> int: in range)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src.kind == "f" and dst.kind in "iu":
        return elements(src, min_value=0.0 if dst.kind == "u" else -100.0, max_value=100.0, allow_nan=False,
                        allow_infinity=False)
    return elements(src)


@pytest.mark.parametrize("src", ALL, ids=dtype_ids(ALL))
@given(data=st.data())
def test_asarray_of_a_plaidarray_array_with_dtype_converts_like_numpy_astype(backend, src, data):
    dst = data.draw(st.sampled_from([d for d in ALL if d != src]), label="dst")
    a = data.draw(arrays(src, shapes(), _castable_values(src, dst)), label="a")
    with np.errstate(all="ignore"):
        expected = a.astype(dst)
    assert_same(xp.asarray(xp.asarray(a), dtype=dst), expected, exact=True)


def _cast_edge_values(src, dst):
    """Fixed edge values of ``src`` whose conversion to ``dst`` NumPy defines."""
    if src.kind == "b":
        return np.array([True, False], src)
    if src.kind in "iu":
        info = np.iinfo(src)
        return np.array([info.min, info.max, 0, 1, info.max // 3, info.min // 3, 2**(info.bits - 2)], src)
    if dst.kind in "iu":  # float -> int: in range of every integer dtype (truncates toward zero)
        values = [0.0, -0.0, 1.9, 100.5, 127.0, 0.25] + ([-1.9, -128.0, -100.5] if dst.kind == "i" else [])
        return np.array(values, src)
    return np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.25, np.finfo(src).max, np.finfo(src).tiny,
                     np.finfo(src).smallest_subnormal, 1e-40, 3.4028235e38, 16777217.0], src)


def test_asarray_with_dtype_every_pair_on_edge_values(backend):
    """Every (source, target) dtype pair, exhaustively, on fixed edge values."""
    for src in ALL:
        for dst in ALL:
            if src == dst:
                continue
            a = _cast_edge_values(src, dst)
            with np.errstate(all="ignore"):
                expected = a.astype(dst)
            assert_same(xp.asarray(xp.asarray(a), dtype=dst), expected, exact=True, err_msg=f"{src} -> {dst}")


def _saturated(value, dtype):
    """plaidarray's documented float -> int conversion: truncate toward zero, saturate
    out-of-range values (and infinities) to the dtype's bounds, NaN -> 0."""
    info = np.iinfo(dtype)
    if math.isnan(value):
        return 0
    if value >= info.max:  # Python compares float and int exactly
        return int(info.max)
    if value <= info.min:
        return int(info.min)
    return int(value)


FLOAT_TO_INT = [(f, i) for f in FLOAT for i in INTEGER]
@pytest.mark.parametrize("src, dst", FLOAT_TO_INT, ids=[f"{a.name}->{b.name}" for a, b in FLOAT_TO_INT])
def test_float_to_int_conversion_saturates(backend, src, dst):
    info = np.iinfo(dst)
    values = [math.nan, math.inf, -math.inf, 1e20, -1e20, 300.7, -300.7, 2.0**63, 2.0**64, -0.0, 0.99, -0.99,
              float(info.max) * 0.5, float(info.min) * 0.5]
    a = np.array(values, src)
    expected = np.array([_saturated(float(v), dst) for v in a], dst)
    assert_same(xp.asarray(xp.asarray(a), dtype=dst), expected, exact=True)
    assert_same(xp.astype(xp.asarray(a), dst), expected, exact=True)


@pytest.mark.parametrize("dtype", ALL, ids=dtype_ids(ALL))
def test_asarray_copy_true_is_independent_of_the_source(backend, dtype):
    source = np.arange(6).reshape(2, 3).astype(dtype)
    original = source.copy()
    x = xp.asarray(source, copy=True)
    source[...] = np.ones_like(source) if dtype != np.bool_ else ~source
    assert_same(x, original, exact=True)
    assert_same(x * xp.asarray(np.ones((2, 3), dtype)) if dtype != np.bool_ else x, original, exact=True)


def test_asarray_copy_true_of_an_array_is_a_distinct_object_with_the_same_value(backend):
    x = xp.asarray(np.array([1.0, 2.0, 3.0]))
    y = xp.asarray(x, copy=True)
    assert y is not x
    x += 1.0  # an in-place update of x must not show through y
    assert_same(y, np.array([1.0, 2.0, 3.0]), exact=True)
    assert_same(x, np.array([2.0, 3.0, 4.0]), exact=True)


# --- zeros / ones / empty / full ---------------------------------------------------------

@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
@given(shape=shapes(), dtype=dtypes_or_none)
def test_zeros_ones_empty(backend, name, shape, dtype):
    fill = {"zeros": 0, "ones": 1, "empty": 0}[name]  # empty is zeros by design
    expected = np.full(shape, fill, dtype=np.float64 if dtype is None else dtype)
    assert_same(getattr(xp, name)(shape, dtype=dtype), expected, exact=True)


def test_creation_accepts_an_int_shape(backend):
    assert_same(xp.zeros(3), np.zeros(3), exact=True)
    assert_same(xp.ones(0, dtype=xp.int8), np.ones(0, np.int8), exact=True)
    assert_same(xp.full(2, 7), np.full(2, 7, np.int64), exact=True)


@given(data=st.data())
def test_full(backend, data):
    shape = data.draw(shapes(), label="shape")
    dtype = data.draw(dtypes_or_none, label="dtype")
    if dtype is None:
        fill = data.draw(st.one_of(st.booleans(), st.integers(-2**63, 2**63 - 1), elements(np.float64)),
                         label="fill_value")
        expected = np.full(shape, fill, dtype={bool: np.bool_, int: np.int64, float: np.float64}[type(fill)])
    else:
        fill = data.draw(_scalar_for(dtype), label="fill_value")
        expected = np.full(shape, fill, dtype=dtype)
    assert_same(xp.full(shape, fill, dtype=dtype), expected, exact=True)


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
@given(data=st.data())
def test_like_functions(backend, name, data):
    src = data.draw(st.sampled_from(ALL), label="src dtype")
    x = data.draw(arrays(src, shapes()), label="x")
    dtype = data.draw(dtypes_or_none, label="dtype")
    target = src if dtype is None else dtype
    if name == "full_like":
        fill = data.draw(_scalar_for(target), label="fill_value")
        got = xp.full_like(xp.asarray(x), fill, dtype=dtype)
        expected = np.full_like(x, fill, dtype=target)
    else:
        got = getattr(xp, name)(xp.asarray(x), dtype=dtype)
        expected = np.full_like(x, 1 if name == "ones_like" else 0, dtype=target)
    assert_same(got, expected, exact=True)


# --- arange -------------------------------------------------------------------------------

@given(start=st.integers(-20, 20), stop=st.one_of(st.none(), st.integers(-20, 20)),
       step=st.integers(-5, 5).filter(bool))
def test_arange_ints(backend, start, stop, step):
    if stop is None:
        got, expected = xp.arange(start), np.arange(start, dtype=np.int64)
    else:
        got, expected = xp.arange(start, stop, step), np.arange(start, stop, step, dtype=np.int64)
    assert_same(got, expected, exact=True)


@pytest.mark.parametrize("dtype", REAL_NUMERIC, ids=dtype_ids(REAL_NUMERIC))
@given(start=st.integers(0, 20), stop=st.integers(0, 20), step=st.integers(-4, 4).filter(bool))
def test_arange_with_dtype(backend, dtype, start, stop, step):
    if dtype.kind == "u":
        step = abs(step)  # negative steps with unsigned dtypes: see the test below
    assert_same(xp.arange(start, stop, step, dtype=dtype), np.arange(start, stop, step, dtype=dtype), exact=True)


UNSIGNED = [d for d in INTEGER if d.kind == "u"]


@pytest.mark.parametrize("dtype", UNSIGNED, ids=dtype_ids(UNSIGNED))
@pytest.mark.parametrize("start, stop, step", [(5, 0, -1), (20, 3, -4), (0, 5, -1)])
def test_arange_unsigned_with_negative_step(backend, dtype, start, stop, step):
    assert_same(xp.arange(start, stop, step, dtype=dtype), np.arange(start, stop, step, dtype=dtype), exact=True)


# Quarter-integers keep every value exact, so NumPy's and plaidarray's ways of computing
# start + i * step agree bit for bit.
quarters = st.integers(-40, 40).map(lambda k: k / 4)


@given(start=quarters, stop=quarters, step=quarters.filter(bool), dtype=st.sampled_from([None, *FLOAT]))
def test_arange_floats(backend, start, stop, step, dtype):
    expected = np.arange(start, stop, step, dtype=np.float64 if dtype is None else dtype)
    assert_same(xp.arange(start, stop, step, dtype=dtype), expected, exact=True)


def test_arange_empty_and_negative_ranges(backend):
    assert_same(xp.arange(5, 2), np.arange(5, 2), exact=True)
    assert_same(xp.arange(2, 5, -1), np.arange(2, 5, -1), exact=True)
    assert_same(xp.arange(0), np.arange(0), exact=True)
    assert_same(xp.arange(10, 0, -3), np.arange(10, 0, -3), exact=True)
    assert_same(xp.arange(1.0, 0.0, -0.25), np.arange(1.0, 0.0, -0.25), exact=True)
    assert_same(xp.arange(0.0, 1.0, 0.1), np.arange(0.0, 1.0, 0.1), rtol=1e-15, atol=1e-16)
    with pytest.raises(ValueError):
        xp.arange(0, 5, 0)


# --- linspace -----------------------------------------------------------------------------

@given(start=st.floats(-1e6, 1e6), stop=st.floats(-1e6, 1e6), num=st.integers(0, 7), endpoint=st.booleans(),
       dtype=st.sampled_from([None, *FLOAT]))
def test_linspace(backend, start, stop, num, endpoint, dtype):
    target = np.dtype(np.float64 if dtype is None else dtype)
    expected = np.linspace(start, stop, num, endpoint=endpoint, dtype=target)
    got = xp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    # Both compute start + i * step in float64; allow rounding relative to the range.
    eps = float(np.finfo(target).eps)
    assert_same(got, expected, rtol=4 * eps, atol=4 * eps * max(abs(start), abs(stop)))
    if num >= 1:
        assert np.asarray(got)[0] == target.type(start)
    if endpoint and num >= 2:
        assert np.asarray(got)[-1] == target.type(stop)


@pytest.mark.parametrize("num", [0, 1, 2, 5])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_small_counts(backend, num, endpoint):
    assert_same(xp.linspace(2, 3, num, endpoint=endpoint), np.linspace(2, 3, num, endpoint=endpoint),
                rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", INTEGER, ids=dtype_ids(INTEGER))
@pytest.mark.parametrize("start, stop, num", [(-1, 1, 4), (0, 10, 4), (0, 100, 7), (3, -2, 6)])
def test_linspace_with_an_integer_dtype_takes_the_floor_as_numpy(backend, dtype, start, stop, num):
    """Beyond the standard (SciPy asks for it): NumPy 2 floors the float values."""
    if np.dtype(dtype).kind == "u" and min(start, stop) < 0:
        return
    assert_same(xp.linspace(start, stop, num, dtype=dtype), np.linspace(start, stop, num, dtype=dtype), exact=True)


def test_linspace_of_complex_bounds(backend):
    assert_same(xp.linspace(0, 1 + 2j, 5), np.linspace(0, 1 + 2j, 5), rtol=1e-15, atol=1e-15, signed_zeros=False)
    assert_same(xp.linspace(1j, 3, 4, dtype=xp.complex64, endpoint=False),
                np.linspace(1j, 3, 4, dtype=np.complex64, endpoint=False), rtol=1e-6, atol=1e-6, signed_zeros=False)
    with pytest.raises(TypeError, match="complex bounds need a complex dtype"):
        xp.linspace(0, 1j, 3, dtype=xp.float64)


# --- every creation and conversion function over every dtype --------------------------------

EVERY_DTYPE = [*ALL, np.dtype(np.complex64), np.dtype(np.complex128)]

#: name -> (NumPy, plaidarray), each given the dtype. Where NumPy refuses (arange of three
#: bools), plaidarray must refuse too, with TypeError or ValueError.
CREATION = {
    "arange(3)": (lambda d: np.arange(3, dtype=d), lambda d: xp.arange(3, dtype=d)),
    "arange(2)": (lambda d: np.arange(2, dtype=d), lambda d: xp.arange(2, dtype=d)),
    "arange(0.5, 3)": (lambda d: np.arange(0.5, 3, dtype=d), lambda d: xp.arange(0.5, 3, dtype=d)),
    "arange(5, 0, -2)": (lambda d: np.arange(5, 0, -2, dtype=d), lambda d: xp.arange(5, 0, -2, dtype=d)),
    "linspace": (lambda d: np.linspace(0, 4, 5, dtype=d), lambda d: xp.linspace(0, 4, 5, dtype=d)),
    "zeros": (lambda d: np.zeros((2, 3), d), lambda d: xp.zeros((2, 3), dtype=d)),
    "ones": (lambda d: np.ones((2, 3), d), lambda d: xp.ones((2, 3), dtype=d)),
    "empty": (lambda d: np.zeros(4, d), lambda d: xp.empty(4, dtype=d)),
    "full": (lambda d: np.full(3, 1, d), lambda d: xp.full(3, 1, dtype=d)),
    "full of a 0-d array": (lambda d: np.full(3, np.asarray(1, d)), lambda d: xp.full(3, xp.asarray(1, dtype=d))),
    "eye": (lambda d: np.eye(3, 4, 1, dtype=d), lambda d: xp.eye(3, 4, k=1, dtype=d)),
    "asarray of a list": (lambda d: np.asarray([1, 0, 1], d), lambda d: xp.asarray([1, 0, 1], dtype=d)),
    "asarray of a scalar": (lambda d: np.asarray(1, d), lambda d: xp.asarray(1, dtype=d)),
    "asarray of NumPy": (lambda d: np.ones(3, d), lambda d: xp.asarray(np.ones(3, d))),
    "zeros_like": (lambda d: np.zeros(3, d), lambda d: xp.zeros_like(xp.ones(3), dtype=d)),
    "ones_like": (lambda d: np.ones(3, d), lambda d: xp.ones_like(xp.ones(3, dtype=d))),
    "full_like": (lambda d: np.full(3, 1, d), lambda d: xp.full_like(xp.ones(3, dtype=d), 1)),
    "tril": (lambda d: np.tril(np.ones((3, 3), d)), lambda d: xp.tril(xp.ones((3, 3), dtype=d))),
    "triu": (lambda d: np.triu(np.ones((3, 3), d), 1), lambda d: xp.triu(xp.ones((3, 3), dtype=d), k=1)),
    "meshgrid": (lambda d: np.meshgrid(np.ones(2, d), np.zeros(3, d))[1],
                 lambda d: xp.meshgrid(xp.ones(2, dtype=d), xp.zeros(3, dtype=d))[1]),
    "from_dlpack": (lambda d: np.ones(2, d), lambda d: xp.from_dlpack(np.ones(2, d))),
    "astype from int64": (lambda d: np.arange(4).astype(d), lambda d: xp.astype(xp.arange(4), d)),
    "astype from float64": (lambda d: np.linspace(0, 3, 4).astype(d), lambda d: xp.astype(xp.linspace(0, 3, 4), d)),
    "astype from bool": (lambda d: np.array([True, False]).astype(d), lambda d: xp.astype(xp.asarray([True, False]), d)),
    "astype to int64": (lambda d: np.ones(3, d).astype(np.int64) if np.dtype(d).kind != "c" else None,
                        lambda d: xp.astype(xp.ones(3, dtype=d), xp.int64)),
    "astype to complex128": (lambda d: np.ones(3, d).astype(np.complex128), lambda d: xp.astype(xp.ones(3, dtype=d), xp.complex128)),
}


@pytest.mark.parametrize("dtype", EVERY_DTYPE, ids=dtype_ids(EVERY_DTYPE))
@pytest.mark.parametrize("name", CREATION)
def test_every_creation_and_conversion_function_on_every_dtype(backend, name, dtype):
    """No dtype reaches the compiler in a form it cannot lower (``arange(3,
    dtype=complex128)`` failed in LLVM): each call gives NumPy's values or, where NumPy
    refuses (or the standard does: a complex array to an integer one), a clear error."""
    numpy_fn, plaid_fn = CREATION[name]
    try:
        expected = numpy_fn(dtype)
    except (TypeError, ValueError):
        expected = None
    if expected is None or (name == "linspace" and dtype.kind == "b"):
        with pytest.raises((TypeError, ValueError)):
            np.asarray(plaid_fn(dtype))
        return
    assert_same(plaid_fn(dtype), expected, exact=True, signed_zeros=np.asarray(expected).dtype.kind != "c")


# --- eye ----------------------------------------------------------------------------------

@given(n_rows=st.integers(0, 5), n_cols=st.one_of(st.none(), st.integers(0, 5)), k=st.integers(-6, 6),
       dtype=dtypes_or_none)
def test_eye(backend, n_rows, n_cols, k, dtype):
    expected = np.eye(n_rows, n_cols, k=k, dtype=np.float64 if dtype is None else dtype)
    assert_same(xp.eye(n_rows, n_cols, k=k, dtype=dtype), expected, exact=True)


@pytest.mark.parametrize("k", [2**63, -2**63 - 1, 2**64, 3, -3])
@pytest.mark.parametrize("n_rows", [0, 2])
def test_eye_offsets_past_the_edges(backend, n_rows, k):
    """array-api-tests drew k = 2**63 and got an OverflowError; NumPy gives zeros."""
    assert_same(xp.eye(n_rows, 3, k=k), np.eye(n_rows, 3, k=k), exact=True)


@pytest.mark.parametrize("k", [0, 1, -2, 7, -9, 2**62])
@pytest.mark.parametrize("shape", [(3, 4), (4, 2), (2, 3, 4), (2, 2, 3, 3), (0, 3)])
def test_tril_and_triu_are_one_op_of_any_diagonal(shape, k):
    """``tril`` and ``triu`` record one op whatever the diagonal and the stack's rank
    (``hlo/ops/triangle.py``: its first use loads one op kernel, where iotas, a comparison
    and a select were four; the diagonal is a run-time value, one kernel serving every
    one); their values are NumPy's, diagonals past the matrix included."""
    a = np.arange(math.prod(shape), dtype=np.float64).reshape(shape) - 5.0
    for fn, numpy_fn in ((xp.tril, np.tril), (xp.triu, np.triu)):
        made = fn(xp.asarray(a), k=k)
        assert recorded_ops(made) == ["triangle"]
        assert_same(made, numpy_fn(a, k))


@pytest.mark.parametrize("k", [0, 1, -3, 9])
def test_eye_is_one_op_of_any_diagonal(k):
    """``eye`` records one op whatever its diagonal (``hlo/ops/generators.py``: its first
    use loads one op kernel, where iotas, a comparison and a conversion were four), and
    its diagonal is its operand, a run-time value: one kernel serves every diagonal."""
    made = xp.eye(4, 5, k=k)
    assert recorded_ops(made) == ["eye"]
    assert np.array_equal(np.asarray(made), np.eye(4, 5, k=k))


@pytest.mark.parametrize("start, stop, num, endpoint", [(0.0, 1.0, 9, True), (0.0, 1.0, 9, False), (-2, 5.5, 7, True),
                                                      (0.1, 0.7, 1, True), (0.1, 0.7, 0, True), (1e300, -1e300, 5, True),
                                                      (3.0, 3.0, 4, True), (-1.5, 2.25, 100, False)])
def test_linspace_is_one_op_with_numpys_bits(start, stop, num, endpoint):
    """``linspace`` records one op of its bounds, step and last index as run-time values
    (``hlo/ops/generators.py``: its first use loads one op kernel, where the iota, product,
    sum, comparison and selection it expands into were five), and computes NumPy's bits."""
    made = xp.linspace(start, stop, num, endpoint=endpoint)
    assert recorded_ops(made) == ["linspace"]
    assert np.asarray(made).tobytes() == np.linspace(start, stop, num, endpoint=endpoint).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_finfo_gives_numpys_values_and_its_name_tiny(dtype):
    """``finfo``'s fields are NumPy's, of the real dtype of a complex one, and ``tiny`` (an
    extension: NumPy-style code reads it) is ``smallest_normal``."""
    got, want = xp.finfo(dtype), np.finfo(dtype)
    assert (got.bits, got.eps, got.max, got.min, got.smallest_normal) == \
        (want.bits, float(want.eps), float(want.max), float(want.min), float(want.smallest_normal))
    assert got.tiny == float(want.tiny) and got.dtype == np.finfo(dtype).dtype


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_astype_of_complex_to_bool_is_whether_it_is_nonzero(backend, dtype):
    """The standard's cast (NumPy's too): 0 is False, any other value, imaginary or not, True."""
    z = np.array([0, 1j, -2, 0j, 3 + 4j, complex(0, -0.0)], dtype)
    got = xp.astype(xp.asarray(z), xp.bool)
    np.testing.assert_array_equal(np.asarray(got), z.astype(bool), strict=True)


def test_linspace_reads_0d_array_bounds_and_counts_as_numpy(backend):
    """Beyond the standard, which takes Python scalars: NumPy-style code passes
    ``xp.min(x)``, ``xp.max(x)`` and a mask's count (read as NumPy reads them)."""
    values = np.array([3.0, -1.0, 7.5, 2.0])
    x = xp.asarray(values)
    assert_same(xp.linspace(xp.min(x), xp.max(x), 5), np.linspace(values.min(), values.max(), 5), exact=True)
    assert_same(xp.linspace(0, 1, xp.sum(x > 0)), np.linspace(0, 1, 3), exact=True)
    z = xp.asarray(np.array([1 + 2j]))
    assert_same(xp.linspace(0, z[0], 3), np.linspace(0, 1 + 2j, 3), rtol=1e-15, atol=0, signed_zeros=False)
    with pytest.raises(TypeError, match="linspace: start and stop must be scalars or 0-d arrays"):
        xp.linspace(x, 1, 3)
