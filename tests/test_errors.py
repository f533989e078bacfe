"""Bad input gives a clear Python exception naming the problem."""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp


def test_incompatible_shapes():
    with pytest.raises(ValueError, match=r"cannot be broadcast"):
        xp.asarray(np.ones((2, 3))) + xp.asarray(np.ones((4,)))


def test_matmul_shape_mismatch():
    with pytest.raises(ValueError, match="matmul"):
        xp.matmul(xp.ones((2, 3)), xp.ones((4, 2)))


@pytest.mark.parametrize("a, b", [(xp.int32, xp.float32), (xp.bool, xp.int8), (xp.uint64, xp.int64)])
def test_dtype_mixes_the_spec_does_not_define(a, b):
    with pytest.raises(TypeError, match="promotion"):
        xp.ones(3, dtype=a) + xp.ones(3, dtype=b)


def test_python_float_with_integer_array():
    with pytest.raises(TypeError, match="Python float"):
        xp.ones(3, dtype=xp.int32) + 1.5


def test_python_int_out_of_range_for_dtype():
    with pytest.raises(OverflowError):
        xp.ones(3, dtype=xp.int8) + 1000


def test_float_function_on_integers():
    with pytest.raises(TypeError, match="exp: expected an array of floating-point dtype"):
        xp.exp(xp.ones(3, dtype=xp.int64))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_integer_division_by_zero_is_guarded(dtype):
    a = np.array([7, 0, 1, np.iinfo(dtype).max], dtype=dtype)
    b = np.zeros(4, dtype=dtype)
    # No crash (SIGFPE) and the value NumPy defines: 0 for both quotient and remainder.
    np.testing.assert_array_equal(np.asarray(xp.asarray(a) // xp.asarray(b)), np.zeros(4, dtype))
    np.testing.assert_array_equal(np.asarray(xp.asarray(a) % xp.asarray(b)), np.zeros(4, dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_int_min_divided_by_minus_one_wraps(dtype):
    lo = np.iinfo(dtype).min
    a, b = np.array([lo], dtype), np.array([-1], dtype)
    np.testing.assert_array_equal(np.asarray(xp.asarray(a) // xp.asarray(b)), np.array([lo], dtype))
    np.testing.assert_array_equal(np.asarray(xp.asarray(a) % xp.asarray(b)), np.array([0], dtype))


def test_out_of_range_integer_index():
    x = xp.asarray(np.arange(5))
    with pytest.raises(IndexError, match="out of bounds"):
        x[5]
    with pytest.raises(IndexError, match="out of bounds"):
        x[-6]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0]


def test_unsupported_input_dtype():
    with pytest.raises(TypeError, match="unsupported dtype"):
        xp.asarray(np.array(["a", "b"]))


def test_reduction_axis_out_of_range():
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        xp.sum(xp.ones((2, 2)), axis=2)


def test_scalar_conversion_of_non_scalar():
    with pytest.raises(TypeError, match="0-d"):
        float(xp.ones(3))


def test_bad_input_leaves_other_arrays_intact():
    a = xp.asarray(np.arange(4.0))
    with pytest.raises(ValueError):
        a + xp.ones(5)
    np.testing.assert_array_equal(np.asarray(a), np.arange(4.0))
