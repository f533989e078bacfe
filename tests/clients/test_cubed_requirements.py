"""What Cubed asks of its backend array API beyond the standard (docs/distributed.md):
``mean(..., dtype=...)`` and NumPy's kinds of indices in ``take``. Expected values
come from NumPy, whose semantics these extensions follow."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from helpers import assert_same
from strategies import FLOAT, REAL_NUMERIC, arrays, dtype_ids, shapes


@pytest.mark.parametrize("dtype", REAL_NUMERIC, ids=dtype_ids(REAL_NUMERIC))
@given(data=st.data())
def test_mean_computes_in_the_dtype_asked_for(backend, dtype, data):
    finite = {"min_value": -1e6, "max_value": 1e6, "allow_nan": False, "allow_infinity": False}
    x = data.draw(arrays(dtype, shapes(min_dims=1), **(finite if dtype.kind == "f" else {})), label="x")
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    to = data.draw(st.sampled_from(FLOAT), label="dtype")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "Mean of empty slice": NaN, as the spec asks
        expected = np.asarray(np.mean(x, axis=axis, keepdims=keepdims, dtype=to))
    got = xp.mean(xp.asarray(x), axis=axis, keepdims=keepdims, dtype=to)
    assert_same(got, expected, rtol=1e-4 if to == np.float32 else 1e-12, atol=0)


def test_mean_to_a_complex_dtype(backend):
    x = np.array([[1 + 2j, 3 - 1j], [0.5j, -2]], dtype=np.complex64)
    assert_same(xp.mean(xp.asarray(x), axis=0, dtype=xp.complex128), np.mean(x, axis=0, dtype=np.complex128),
                rtol=1e-12, atol=0, signed_zeros=False)


@pytest.mark.parametrize("x, dtype", [
    (np.array([1 + 2j, 3j]), np.float64),  # NumPy drops the imaginary part, with a warning
    (np.array([1.0, 2.0]), np.int64),  # NumPy divides in integers: no mean
])
def test_mean_rejects_what_numpy_does_not_define_clearly(x, dtype):
    with pytest.raises(TypeError, match="mean"):
        xp.mean(xp.asarray(x), dtype=dtype)


@given(data=st.data())
def test_take_with_an_int_drops_the_axis_as_numpy_does(backend, data):
    x = data.draw(arrays(np.float64, shapes(min_dims=1), allow_nan=False).filter(lambda a: 0 not in a.shape),
                  label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    n = x.shape[axis]
    index = data.draw(st.integers(-n, n - 1), label="index")
    kind = data.draw(st.sampled_from([int, np.int32, np.uint8 if index >= 0 else np.int8]), label="kind")
    assert_same(xp.take(xp.asarray(x), kind(index), axis=axis), np.take(x, index, axis=axis), exact=True)


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32, np.uint16])
def test_take_and_take_along_axis_accept_numpy_index_arrays(backend, index_dtype):
    x = np.arange(12.0).reshape(3, 4)
    indices = np.array([3, 0, 2], dtype=index_dtype)
    assert_same(xp.take(xp.asarray(x), indices, axis=1), np.take(x, indices, axis=1), exact=True)
    along = np.array([[1], [0], [2]], dtype=index_dtype)
    assert_same(xp.take_along_axis(xp.asarray(x), along, axis=1), np.take_along_axis(x, along, axis=1), exact=True)


@pytest.mark.parametrize("indices", [1.0, True, np.array([0.0]), np.array([True, False])])
def test_take_rejects_indices_that_are_not_integers(indices):
    with pytest.raises(TypeError, match="take"):
        xp.take(xp.asarray(np.arange(3.0)), indices)
