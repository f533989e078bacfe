"""Bugs that real Array API clients (scikit-learn, array-api-extra, SciPy) met, one test
per cause, each checked against NumPy: masked assignments that select nothing, NumPy
scalars and NumPy index arrays, strings given to ``asarray``, ``copy=True`` returning the
same object, complex Python scalars and mixed-kind promotion, and the code generator
process's shutdown."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import plaidarray as xp
from helpers import assert_same
from jit_helpers import start_child
from strategies import arrays


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


# --- 11. the code generator process at exit ----------------------------------------------

def test_a_code_generator_process_starting_at_exit_prints_nothing(tmp_path):
    """Past ``PLAIDARRAY_INPROCESS_COMPILES`` compiles go to a worker; a successor worker
    still starting when the program exits must end quietly (it used to print a
    BrokenPipeError traceback on writing ``ready`` to a closed pipe)."""
    pytest.importorskip("llvmlite")
    code = """
import plaidarray as xp
from plaidarray.backend.llvm_cpu import codegen_worker
codegen_worker.RECYCLE_AFTER = 3
xp.set_backend("llvm-cpu")
for n in range(1, 300):
    float(xp.sum(xp.ones(n)))  # a distinct kernel each time
    if codegen_worker._workers["starting"] is not None:
        break
assert n >= 64 and codegen_worker._workers["starting"] is not None
"""
    child = start_child(code, tmp_path, PLAIDARRAY_INPROCESS_COMPILES="64", PLAIDARRAY_CACHE_MAX_BYTES="0")
    _, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert err == ""
