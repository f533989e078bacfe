"""Bugs that real Array API clients (scikit-learn, array-api-extra, SciPy) met, one test
per cause, each checked against NumPy: masked assignments that select nothing, NumPy
scalars and NumPy index arrays, strings given to ``asarray``, ``copy=True`` returning the
same object, complex Python scalars and mixed-kind promotion, and the code generator
process's shutdown."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import plaidarray as xp
from helpers import assert_same, numpy_binary
from jit_helpers import start_child
from strategies import ALL, FLOAT, arrays, elementwise_shape_pairs, elements


# --- 1. a masked assignment that selects nothing ---------------------------------------

@pytest.mark.parametrize("selects", ["nothing", "some", "everything"])
@given(data=st.data())
def test_masked_assignment_of_the_selected_values(backend, selects, data):
    """``x[m] = x[m] * 2`` (rows) and ``x[m] = 0.5`` (a scalar) for masks over all or the
    leading dimensions, empty arrays included. Selecting nothing is a no-op, as in NumPy
    (it used to fail: "take: cannot take from an empty axis")."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=4), label="shape")
    a = data.draw(arrays(np.float64, shape, st.integers(-3, 3).map(float)), label="a")
    threshold = {"nothing": 10.0, "some": data.draw(st.sampled_from([-1.0, 0.0, 1.0])), "everything": -10.0}[selects]
    leading = a.ndim == 2 and data.draw(st.booleans(), label="mask over rows")
    scalar = data.draw(st.booleans(), label="scalar value")
    mask = np.all(a > threshold, axis=-1) if leading else a > threshold
    expected = a.copy()
    expected[mask] = 0.5 if scalar else expected[mask] * 2
    x = xp.asarray(a.copy())
    m = xp.all(x > threshold, axis=-1) if leading else x > threshold
    x[m] = 0.5 if scalar else x[m] * 2
    assert_same(x, expected, exact=True, err_msg=f"mask {mask.tolist()}")


# --- 2. NumPy scalars where Python scalars are accepted --------------------------------

NUMPY_SCALARS = [np.float64(1.5), np.float32(2.5), np.int64(3), np.int8(-2), np.uint8(7), np.bool_(True),
                 np.complex128(1 - 2j)]


def _python_scalar_fits(value, dtype):
    """Whether the spec lets the Python scalar ``value`` meet a ``dtype`` array."""
    kinds = {bool: "b", int: "iufc", float: "fc", complex: "c"}[type(value)]
    if dtype.kind in "iu" and type(value) is int:
        return np.iinfo(dtype).min <= value <= np.iinfo(dtype).max
    return dtype.kind in kinds


@pytest.mark.parametrize("value", NUMPY_SCALARS, ids=lambda v: type(v).__name__)
def test_numpy_scalars_as_setitem_values(backend, value):
    """Stored as NumPy 2 stores them: cast to the array's dtype, which does not change
    (as for a Python scalar of the same value, a float into an integer array is refused)."""
    python_value = value.item()
    for dtype in ALL + [np.dtype(np.complex64), np.dtype(np.complex128)]:
        if not _python_scalar_fits(python_value, dtype):
            with pytest.raises((TypeError, OverflowError)):  # as for the Python scalar
                xp.zeros(3, dtype=dtype)[1] = value
            continue
        a = np.zeros(3, dtype)
        a[1] = value
        x = xp.asarray(np.zeros(3, dtype))
        x[1] = value
        assert_same(x, a, exact=True, signed_zeros=dtype.kind != "c", err_msg=f"{value!r} into {dtype}")


def _numpy_scalar_calls(x, s):
    """(name, call) pairs passing the NumPy scalar ``s`` where a Python scalar may go;
    ``x`` is the array module (plaidarray or NumPy) and arrays are built from it."""
    a = x.asarray([0.25, 1.5, 3.0], dtype=x.float32)
    c = x.asarray([True, False, True])
    return [
        ("add", lambda: x.add(a, s)),
        ("reflected multiply", lambda: x.multiply(s, a)),
        ("operator", lambda: a * s),
        ("where", lambda: x.where(c, s, a)),
        ("where of two scalars", lambda: x.where(c, s, np.float32(0.5))),
        ("full", lambda: x.full(2, s)),
        ("full_like", lambda: x.full_like(a, s)),
        ("equal", lambda: x.equal(a, s)),
    ]


@pytest.mark.parametrize("value", [np.float32(1.5), np.float64(2.5)], ids=lambda v: type(v).__name__)
def test_numpy_scalars_take_part_in_promotion_with_their_dtype(backend, value):
    """NumPy 2's rule: a NumPy scalar is a 0-d array of its dtype (float32 array with a
    np.float64 gives float64), unlike a Python float, which takes the array's dtype."""
    got, expected = _numpy_scalar_calls(xp, value), _numpy_scalar_calls(np, value)
    for (name, call), (_, reference) in zip(got, expected):
        assert_same(call(), reference(), exact=True, err_msg=name)
    assert xp.result_type(xp.float32, value) == np.result_type(np.float32, value)
    a = np.asarray([0.25, 1.5, 3.0], np.float32)
    assert_same(xp.clip(xp.asarray(a), np.float64(0.5), value), np.clip(a, 0.5, float(value)), exact=True)
    assert_same(xp.searchsorted(xp.asarray(a), value), np.searchsorted(a, value))
    assert_same(xp.arange(value), np.arange(value), exact=True)


# --- 3. NumPy index arrays -------------------------------------------------------------

@given(data=st.data())
def test_numpy_index_arrays_index_like_plaidarray_arrays(backend, data):
    a = data.draw(arrays(np.float64, (4, 3)), label="a")
    rows = data.draw(hnp.arrays(data.draw(st.sampled_from([np.int64, np.int32, np.uint8])), (5,),
                                elements=st.integers(0, 3)), label="rows")
    mask = data.draw(hnp.arrays(np.bool_, (4,)), label="mask")
    full_mask = data.draw(hnp.arrays(np.bool_, (4, 3)), label="full mask")
    x = xp.asarray(a)
    # Integer arrays index every axis (the standard's rule, the same for plaidarray arrays).
    for key in ((rows, np.int64(2)), (rows, rows % 3), (np.int64(3), rows[:2] % 3), mask, full_mask,
                np.int64(1), (np.int64(-1), 2)):
        assert_same(x[key], a[key], exact=True, err_msg=f"x[{key!r}]")
    for key in (mask, full_mask, np.int64(1), (np.int64(-1), np.int32(2)), (1, rows[:2] % 3), (rows[:3], slice(None))):
        expected, y = a.copy(), xp.asarray(a.copy())
        expected[key] = -7.0
        y[key] = -7.0
        assert_same(y, expected, exact=True, err_msg=f"x[{key!r}] = -7")


# --- 4. strings and objects given to asarray ---------------------------------------------

@pytest.mark.parametrize("obj", [["yes", "no"], [["a"], ["b"]], [1, "a"], "yes", b"ab", [b"x"],
                                 [object()], np.array([1, None], dtype=object)],
                         ids=["strings", "nested strings", "int and string", "str", "bytes",
                              "list of bytes", "objects", "object array"])
def test_asarray_refuses_strings_and_objects(obj):
    with pytest.raises(TypeError, match=r"asarray: unsupported dtype (<U|\|S|object)"):
        xp.asarray(obj)


@pytest.mark.parametrize("obj", [[np.int8(1), np.int8(-2)], [np.float32(1.5), np.float32(2)],
                                 [np.float32(1.5), 2.0], [[np.uint16(3)], [np.uint16(4)]], [np.int64(5), True]],
                         ids=["int8", "float32", "float32 and float", "nested uint16", "int64 and bool"])
def test_asarray_of_lists_of_numpy_scalars(backend, obj):
    assert_same(xp.asarray(obj), np.asarray(obj), exact=True)


# --- 6. copy=True returning the same Array object --------------------------------------

COPIES = {
    "astype": lambda a: xp.astype(a, a.dtype, copy=True),
    "asarray": lambda a: xp.asarray(a, copy=True),
    "reshape": lambda a: xp.reshape(a, a.shape, copy=True),
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copy_true_gives_an_independent_array(backend, name):
    for computed in (False, True):
        a = xp.asarray([1.0, 2.0, 3.0]) * 2.0
        if computed:
            float(a[0])  # a holds its own buffer: the case an in-place write could reuse
        b = COPIES[name](a)
        assert b is not a
        b[0] = 5.0
        b += 1.0
        assert_same(a, np.array([2.0, 4.0, 6.0]), exact=True, err_msg=f"the original, computed={computed}")
        assert_same(b, np.array([6.0, 5.0, 7.0]), exact=True, err_msg=f"the copy, computed={computed}")


# --- 7. complex Python scalars and mixed-kind promotion ---------------------------------

COMPLEX_SCALAR_FUNCTIONS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                            "divide": np.divide, "equal": np.equal}


@pytest.mark.parametrize("dtype", FLOAT, ids=lambda d: d.name)
@given(data=st.data())
def test_complex_python_scalar_with_a_real_floating_array(backend, dtype, data):
    """2024.12: the result is the complex dtype of the array's precision, as in NumPy 2."""
    a = data.draw(arrays(dtype, (5,)), label="a")
    s = complex(data.draw(elements(dtype, allow_nan=False), label="real"), data.draw(st.sampled_from([-2.0, 0.5, 1.0])))
    name = data.draw(st.sampled_from(sorted(COMPLEX_SCALAR_FUNCTIONS)), label="function")
    reflected = data.draw(st.booleans(), label="scalar first")
    args = (s, a) if reflected else (a, s)
    typed = np.asarray(s, dtype=np.result_type(dtype, 1j))  # what NumPy 2 makes of the scalar
    expected = numpy_binary(COMPLEX_SCALAR_FUNCTIONS[name], *((typed, a) if reflected else (a, typed)))
    got = getattr(xp, name)(*(xp.asarray(v) if isinstance(v, np.ndarray) else v for v in args))
    tolerance = {"rtol": 1e-6 if dtype == np.float32 else 1e-14, "atol": 0, "signed_zeros": False}
    assert_same(got, expected, **tolerance, err_msg=f"{name}{args}")
    assert xp.result_type(dtype, 1j) == np.result_type(dtype, 1j)
    with np.errstate(invalid="ignore"):
        assert_same(xp.asarray(a) * 1j, a * 1j, **tolerance)


#: Python scalars of a higher kind than the array (the standard leaves these open).
HIGHER_KIND = [(d, s) for d in ALL for s in (3, -2.5, 0.5 + 1j) if d.kind in "biu" and type(s) is not int
               or d.kind == "b"]


@given(data=st.data())
def test_a_python_scalar_of_a_higher_kind_promotes_as_numpy_does(backend, data):
    """``int_array * 0.5`` is float64, ``bool_array + 1`` int64, ``int8 * 1j`` complex128:
    NumPy 2's dtypes and values (Cubed's var subtracts a float from an integer count)."""
    dtype, scalar = data.draw(st.sampled_from(HIGHER_KIND), label="dtype, scalar")
    a = data.draw(arrays(dtype, data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4), label="shape"),
                         **({} if dtype.kind == "b" else {"min_value": -100, "max_value": 100})))
    name = data.draw(st.sampled_from(sorted(MIXED_KIND_FUNCTIONS)), label="function")
    if name == "less" and type(scalar) is complex:
        name = "add"  # complex numbers have no order
    for args in ((a, scalar), (scalar, a)):
        expected = numpy_binary(MIXED_KIND_FUNCTIONS[name], *args)
        got = getattr(xp, name)(*(xp.asarray(v) if isinstance(v, np.ndarray) else v for v in args))
        assert_same(got, expected, exact=True, signed_zeros=np.asarray(expected).dtype.kind == "f",
                    err_msg=f"{name}{args}")


def test_an_in_place_update_never_changes_the_dtype():
    x = xp.ones(2, dtype=xp.int32)
    with pytest.raises(TypeError, match="in-place multiply would change the dtype int32 to float64"):
        x *= 0.5
    assert x.dtype == xp.int32 and np.asarray(x).tolist() == [1, 1]


def _kind(d):
    return {"b": "bool", "i": "int", "u": "int", "f": "inexact", "c": "inexact"}[d.kind]


MIXED_KIND_PAIRS = [(a, b) for a, b in itertools.product(ALL, ALL) if _kind(a) != _kind(b)]
MIXED_KIND_FUNCTIONS = {"add": np.add, "multiply": np.multiply, "divide": np.divide, "less": np.less}


@given(data=st.data())
def test_mixed_kind_promotion_follows_numpy(backend, data):
    """An integer array divided by a float array (scikit-learn's metrics, Cubed's mean)
    and every other pair of kinds: NumPy's result dtype and values."""
    dtype1, dtype2 = data.draw(st.sampled_from(MIXED_KIND_PAIRS), label="dtypes")
    shape1, shape2 = data.draw(elementwise_shape_pairs(), label="shapes")
    x1 = data.draw(arrays(dtype1, shape1, **({} if dtype1.kind in "bf" else {"min_value": -1000, "max_value": 1000})))
    x2 = data.draw(arrays(dtype2, shape2, **({} if dtype2.kind in "bf" else {"min_value": -1000, "max_value": 1000})))
    name = data.draw(st.sampled_from(sorted(MIXED_KIND_FUNCTIONS)), label="function")
    expected = numpy_binary(MIXED_KIND_FUNCTIONS[name], x1, x2)
    assert xp.result_type(dtype1, dtype2) == np.result_type(dtype1, dtype2)
    got = getattr(xp, name)(xp.asarray(x1), xp.asarray(x2))
    assert_same(got, expected, exact=True, err_msg=f"{name}({dtype1}, {dtype2})")


def test_mixed_kinds_in_concat_where_and_numpy_scalars(backend):
    i, f = np.arange(3, dtype=np.int32), np.linspace(0.0, 1.0, 3, dtype=np.float32)
    assert_same(xp.concat([xp.asarray(i), xp.asarray(f)]), np.concat([i, f]), exact=True)
    assert_same(xp.where(xp.asarray(i > 0), xp.asarray(i), xp.asarray(f)), np.where(i > 0, i, f), exact=True)
    assert_same(xp.asarray(f) * np.int64(3), f * np.int64(3), exact=True)
    assert_same(xp.mean(xp.asarray(f)) / xp.asarray(3), np.mean(f) / np.asarray(3), exact=True)


def test_same_kind_rules_are_unchanged():
    """The spec's table within a kind: uint64 with a signed integer has no result type."""
    with pytest.raises(TypeError, match="no Array API type promotion between uint64 and int64"):
        xp.ones(2, dtype=xp.uint64) + xp.ones(2, dtype=xp.int64)
    with pytest.raises(TypeError, match="no Array API type promotion between uint64 and int8"):
        xp.result_type(xp.float32, xp.uint64, xp.int8)
    assert xp.result_type(xp.int8, xp.uint8) == xp.int16


# --- 11. the code generator process at exit ----------------------------------------------

def test_a_code_generator_process_starting_at_exit_prints_nothing(tmp_path):
    """Past ``PLAIDARRAY_INPROCESS_COMPILES`` compiles go to a worker; a successor worker
    still starting when the program exits must end quietly (it used to print a
    BrokenPipeError traceback on writing ``ready`` to a closed pipe)."""
    code = """
import plaidarray as xp
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu.targets import host
codegen_worker.RECYCLE_AFTER = 3
xp.set_backend("llvm-cpu")
for n in range(1, 300):
    float(xp.sum(xp.ones(n)))  # a distinct kernel each time
    if codegen_worker._workers["serving"] is not None and codegen_worker._workers["starting"] is not None:
        break  # a successor is starting
assert n >= 64 and codegen_worker._workers["starting"] is not None
"""
    child = start_child(code, tmp_path, PLAIDARRAY_INPROCESS_COMPILES="64", PLAIDARRAY_CACHE_MAX_BYTES="0",
                        PLAIDARRAY_AUTOMATIC_DYNAMIC="0", PLAIDARRAY_FUSE_AFTER_MS="0")  # each size compiled for itself
    _, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert err == ""


@pytest.mark.parametrize("key, shape", [
    ((np.array([0, 2]), Ellipsis), (3, 2)),
    ((slice(None), np.array([1, 0])), (3, 2)),
    ((Ellipsis, np.array([1, 1, 0])), (2, 3, 2)),
    ((slice(None), np.array([2, 0]), Ellipsis), (2, 3, 2)),
])
def test_one_integer_array_with_full_slices_takes_along_its_axis(key, shape):
    # scikit-learn's _safe_indexing writes x[rows, ...]; NumPy, JAX and PyTorch accept it.
    data = np.arange(float(np.prod(shape))).reshape(shape)
    got = xp.asarray(data)[tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)]
    np.testing.assert_array_equal(np.asarray(got), data[key])
    np.testing.assert_array_equal(np.asarray(xp.asarray(data)[key]), data[key])  # NumPy index arrays too


def test_an_integer_array_with_a_partial_slice_indexes_as_in_numpy():
    """Beyond the take form: an index array beside any slice (tests/api/test_indexing.py has
    the general differential test)."""
    data = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(np.asarray(xp.asarray(data)[np.array([0, 1]), 1:]), data[np.array([0, 1]), 1:])


# --- 5. writes through a basic-indexing view reach the array it was taken from -------------

_VIEW_KEYS = st.sampled_from([
    0, 1, -1, (0, slice(None)), (slice(None), 1), (slice(1, None), slice(None, None, 2)),
    (Ellipsis, 0), (slice(None, None, -1),), (None, 1), (1, Ellipsis),
])
_WRITE_KEYS = st.sampled_from([0, -1, (0, 0), slice(None), slice(1, None), Ellipsis, (Ellipsis, 0)])


@given(view_key=_VIEW_KEYS, write_key=_WRITE_KEYS, inplace=st.booleans(), value=st.integers(-5, 5).map(float))
def test_a_write_through_a_view_reaches_its_base(backend, view_key, write_key, inplace, value):
    """``v = a[view_key]; v[write_key] = value`` (or ``+=``) changes ``a`` as NumPy's views
    do; scikit-learn's GaussianMixture adds its regularisation to each covariance this way
    (it used to be lost: NaN weights)."""
    base = np.arange(24.0).reshape(3, 4, 2)
    a = xp.asarray(base.copy())
    expected_view, view = base[view_key], a[view_key]
    try:
        expected_view[write_key]
    except IndexError:
        return  # the key does not apply to this view's rank
    if inplace:
        expected_view[write_key] += value
        view[write_key] += value
    else:
        expected_view[write_key] = value
        view[write_key] = value
    np.testing.assert_array_equal(np.asarray(view), expected_view)
    np.testing.assert_array_equal(np.asarray(a), base)


def test_writes_reach_every_array_up_a_chain_of_views(backend):
    a = xp.zeros((3, 4))
    row = a[1]
    middle = row[1:3]
    middle[0] = 5.0
    middle += 1.0
    expected = np.zeros((3, 4))
    expected[1, 1:3] = [6.0, 1.0]
    np.testing.assert_array_equal(np.asarray(row), expected[1])
    np.testing.assert_array_equal(np.asarray(a), expected)


def test_the_gaussian_mixture_covariance_pattern(backend):
    """scikit-learn's ``_estimate_gaussian_covariances_full`` + ``_add_to_diagonal``."""
    rng = np.random.default_rng(0)
    blocks = rng.standard_normal((2, 3, 3))
    covariances = xp.empty((2, 3, 3))
    for k in range(2):
        covariances[k, :, :] = xp.asarray(blocks[k])
        view = covariances[k, :, :]
        diagonal = xp.linalg.diagonal(view) + 1e-6
        for i in range(3):
            view[i, i] = diagonal[i]
    np.testing.assert_array_equal(np.asarray(covariances), blocks + 1e-6 * np.eye(3))


def test_a_view_stored_back_through_a_mask_or_index_array(backend):
    """``a[mask] = a[0]``: the view's key is compared with the new key only when both are
    basic (comparing an int with an array would record an array, not answer), and one row
    is stored into every selected row, as NumPy broadcasts it (it used to be taken along
    its own first axis: a ValueError)."""
    a = xp.reshape(xp.arange(6.0), (3, 2))
    a[xp.asarray([False, True, True])] = a[0]
    b = np.arange(6.0).reshape(3, 2)
    b[np.array([False, True, True])] = b[0]
    np.testing.assert_array_equal(np.asarray(a), b)


def test_integer_array_and_mask_indexing_give_copies(backend):
    """As in NumPy: only basic indexing gives a view."""
    a = xp.zeros(4)
    taken = a[xp.asarray([1, 2])]
    taken[0] = 3.0
    masked = a[a == 0.0]
    masked[0] = 4.0
    np.testing.assert_array_equal(np.asarray(a), np.zeros(4))


def test_a_view_does_not_keep_its_base_alive():
    import gc
    import weakref

    a = xp.zeros(1000)
    view = a[1:]
    alive = weakref.ref(a)
    del a
    gc.collect()
    assert alive() is None
    view[0] = 1.0  # the base is gone: nothing can see the write but the view
    assert float(view[0]) == 1.0


# --- 12. NumPy behaviours SciPy's own suite relies on --------------------------------------

@pytest.mark.parametrize("value", [2.5, -1e-300, 7, True, 1 + 2j])
@pytest.mark.parametrize("spec", ["g", ".3f", ">10", ""])
def test_a_0d_array_takes_a_format_spec_as_numpy(backend, value, spec):
    """``f"{x:g}"`` (SciPy's messages format results so): a 0-d array formats as its value."""
    if spec and spec[-1] == "f" and isinstance(value, complex):
        spec = ".3g"
    expected = format(np.asarray(value), spec) if spec else None
    got = format(xp.asarray(value), spec)
    if spec:
        assert got == expected
    else:
        assert got == str(xp.asarray(value))


def test_an_array_of_more_dimensions_takes_no_format_spec():
    with pytest.raises(TypeError, match="only 0-d arrays"):
        format(xp.ones(2), "g")


@pytest.mark.parametrize(("x1", "x2"), [(1.0, 0.0), (1, 0), (True, False), (1, 0.5), (2j, 1.0), (False, 3)])
def test_where_of_two_python_scalars(backend, x1, x2):
    """``where(c, 1.0, 0.0)``: NumPy gives the default dtype of the scalars' higher kind."""
    c = np.array([True, False, True])
    assert_same(xp.where(xp.asarray(c), x1, x2), np.where(c, x1, x2), exact=True, signed_zeros=False)


@pytest.mark.parametrize(("fill", "dtype"), [
    (np.float64(2.5), None), (np.asarray(3), None), (np.asarray(3), np.float32), (np.asarray([1.0, 2.0]), None),
    (np.asarray(True), np.int8),
])
def test_full_of_an_array(backend, fill, dtype):
    """``full(shape, <0-d array>)``: SciPy runs 187 tests with it on backends other than
    array-api-strict; NumPy broadcasts the array and keeps its dtype."""
    expected = np.full((3, 2), fill, dtype=dtype)
    got = xp.full((3, 2), xp.asarray(fill) if isinstance(fill, np.ndarray) else fill, dtype=dtype)
    assert_same(got, expected, exact=True)


def test_full_of_an_array_that_does_not_broadcast():
    with pytest.raises(ValueError, match=r"fill value of shape \(3,\) does not broadcast to \(2, 2\)"):
        xp.full((2, 2), xp.ones(3))


@pytest.mark.parametrize("scalars", [(), (-2, 1, 10.0), (1j,), (True, 3)])
def test_result_type_of_python_scalars_alone_is_a_value_error(scalars):
    """SciPy's ``_logspace`` asks ``result_type(start, stop, base)`` of Python scalars
    and catches ValueError, the exception NumPy raises for no array or dtype (and
    array-api-strict for scalars alone), to fall back to the default dtype."""
    with pytest.raises(ValueError):
        np.result_type()
    with pytest.raises(ValueError, match="result_type: at least one array or dtype is required"):
        xp.result_type(*scalars)


@pytest.mark.parametrize(("name", "call", "numpy_call"), [
    ("moveaxis", lambda x: xp.moveaxis(x, 10, -1), lambda x: np.moveaxis(x, 10, -1)),
    ("sum", lambda x: xp.sum(x, axis=-3), lambda x: np.sum(x, axis=-3)),
])
def test_an_axis_out_of_bounds_is_described_in_numpys_words(name, call, numpy_call):
    """SciPy's input-validation tests match NumPy's message for an axis out of bounds
    (``axis 10 is out of bounds for array of dimension 1``); the function is named first."""
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(np.exceptions.AxisError) as numpy_error:
        numpy_call(x)
    words = str(numpy_error.value).split(": ")[-1]
    with pytest.raises(ValueError, match=rf"^{name}: {words}$"):
        call(xp.asarray(x))


@given(data=st.data())
def test_asarray_of_a_list_of_arrays_keeps_numpys_dtype(backend, data):
    """``asarray([res00.status, res01.status])`` of int32 arrays is int32 in NumPy (SciPy's
    differentiate tests compare it with a result's dtype); a list of arrays and Python
    scalars takes the dtype NumPy gives it, the scalars counting as default dtypes."""
    dtype = data.draw(st.sampled_from(ALL), label="dtype")
    items = []
    for i in range(data.draw(st.integers(1, 3), label="items")):
        if data.draw(st.booleans(), label=f"scalar {i}"):
            items.append(data.draw(st.sampled_from([True, 2, 1.5]), label=f"value {i}"))
        else:
            items.append(data.draw(arrays(dtype if i == 0 else data.draw(st.sampled_from(ALL), label=f"dtype {i}"), (),
                                          **({} if dtype.kind in "bf" else {"min_value": 0, "max_value": 100})),
                                   label=f"array {i}"))
    expected = np.asarray(items)
    got = xp.asarray([xp.asarray(item) if isinstance(item, np.ndarray) else item for item in items])
    assert_same(got, expected, exact=True)
