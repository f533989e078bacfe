"""NumPy's array methods that NumPy-style code calls (``x.sum()``, ``x.reshape(2, 3)``,
``x.std(ddof=1)``, ``x.item()``...), beyond the standard (user guide, "Beyond the
standard"), against the same methods of NumPy arrays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import plaidarray as xp
from helpers import assert_same
from strategies import arrays

FLOAT = np.dtype(np.float64)

#: method -> the arguments it is called with, from an array's rank.
CALLS = {
    "sum": lambda ndim: [(), (ndim - 1,)] if ndim else [()],
    "prod": lambda ndim: [()],
    "mean": lambda ndim: [(), (0,)] if ndim else [()],
    "max": lambda ndim: [()],
    "min": lambda ndim: [(0,)] if ndim else [()],
    "argmax": lambda ndim: [()],
    "argmin": lambda ndim: [(0,)] if ndim else [()],
    "cumsum": lambda ndim: [(), (ndim - 1,)] if ndim else [()],
    "ravel": lambda ndim: [()],
    "flatten": lambda ndim: [()],
    "transpose": lambda ndim: [()],
    "copy": lambda ndim: [()],
    "squeeze": lambda ndim: [()],
    "clip": lambda ndim: [(-0.5, 0.5)],
    "round": lambda ndim: [(), (2,)],
}


@given(a=arrays(FLOAT, hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5)))
@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_numpy_method_gives_numpys_values(backend, name, a):
    x = xp.asarray(a)
    for args in CALLS[name](a.ndim):
        # the sign of a zero sum, mean or extremum of signed zeros is left open, as test_statistical leaves it
        assert_same(getattr(x, name)(*args), np.asarray(getattr(a, name)(*args)), rtol=1e-12, atol=1e-12,
                    signed_zeros=False)


@given(a=arrays(FLOAT, hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=5)), ddof=st.integers(0, 1))
def test_std_and_var_take_numpys_ddof(backend, a, ddof):
    x = xp.asarray(a)
    assert_same(x.std(ddof=ddof), np.asarray(a.std(ddof=ddof)), rtol=1e-12, signed_zeros=False)
    assert_same(x.var(axis=0, ddof=ddof), a.var(axis=0, ddof=ddof), rtol=1e-12, signed_zeros=False)


def test_reshape_transpose_item_tolist_and_astype_take_numpys_arguments(backend):
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a)
    assert_same(x.reshape(4, 3), a.reshape(4, 3), exact=True)
    assert_same(x.reshape((2, -1)), a.reshape((2, -1)), exact=True)
    assert_same(x.transpose(1, 0), a.transpose(1, 0), exact=True)
    assert_same(x.astype(xp.int32), a.astype(np.int32), exact=True)
    assert x.tolist() == a.tolist()
    for value in (np.array([2.5]), np.array(7), np.array([[True]]), np.array(1 + 2j)):
        got = xp.asarray(value).item()
        assert got == value.item() and type(got) is type(value.item())
    with pytest.raises(ValueError, match="size 1"):
        x.item()
    view = x.view(float)
    view[0, 0] = 5.0  # a write through a view of its own dtype reaches the array, as in NumPy
    assert float(x[0, 0]) == 5.0 and x.view() is x
    with pytest.raises(TypeError, match="reinterpreting float64 as int64"):
        x.view(np.int64)
