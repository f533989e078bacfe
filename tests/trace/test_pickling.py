"""Sending plaidarray to other processes (Dask, Cubed, multiprocessing): jitted functions
pickle by reference or by value without their caches, arrays pickle their values out of
band, and Dask's tokens for a jitted function are the same in every process."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from jit_helpers import child_env

import plaidarray as xp
from plaidarray.backend.llvm_cpu import parallel

#: Where a child process finds this module (to unpickle its functions) and the helpers it imports.
PATHS = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]


@xp.jit
def scaled_sum(x, factor):
    """Importable under its own name: pickled by reference."""
    return xp.sum(x * factor)


def _cube(x):
    return x * x * x


#: Jitted under another name than the function's: pickled by value.
cube = xp.jit(_cube)


def test_an_importable_jitted_function_pickles_by_reference():
    data = pickle.dumps(scaled_sum)
    assert b"scaled_sum" in data and len(data) < 200
    assert pickle.loads(data) is scaled_sum


def test_a_jitted_function_pickles_by_value_without_its_traces():
    x = np.arange(5.0)
    np.testing.assert_allclose(np.asarray(cube(xp.asarray(x))), x**3)
    assert cube.cache_info().size == 1
    back = pickle.loads(pickle.dumps(cube))
    assert back is not cube and back.cache_info().size == 0
    np.testing.assert_allclose(np.asarray(back(xp.asarray(x + 1))), (x + 1) ** 3)


def test_static_arguments_survive_pickling():
    def power(x, n):
        return x**n

    jitted = xp.jit(power, static_argnums=1, dynamic=True)
    # A local function: by value, its function pickled by reference to this test module.
    reduced = jitted.__reduce__()
    assert reduced[1][1:] == ((1,), ("n",), True)


def test_a_jitted_function_unpickles_in_another_process():
    code = ("import pickle, sys, numpy as np, plaidarray as xp\n"
            f"sys.path[:0] = {PATHS!r}\n"
            "f = pickle.loads(sys.stdin.buffer.read())\n"
            "print(float(f(xp.asarray(np.arange(4.0)), 2.0)))\n")
    done = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(scaled_sum), capture_output=True,
                          env=child_env(os.environ["PLAIDARRAY_CACHE_DIR"]), timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert float(done.stdout) == 12.0


def test_arrays_pickle_their_buffer_out_of_band():
    x = xp.asarray(np.arange(1000.0)) * 2.0
    buffers = []
    data = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and len(data) < 1000
    back = pickle.loads(data, buffers=buffers)
    np.testing.assert_array_equal(np.asarray(back), np.arange(1000.0) * 2.0)


def test_dask_tokens_of_a_jitted_function_are_deterministic():
    tokenize = pytest.importorskip("dask.base", reason="Dask is in the distributed extra").tokenize
    assert tokenize(cube) == tokenize(pickle.loads(pickle.dumps(cube)))
    assert tokenize(cube) != tokenize(scaled_sum)
    code = (f"import sys; sys.path[:0] = {PATHS!r}\n"
            "from dask.base import tokenize; import test_pickling\n"
            "print(tokenize(test_pickling.cube))\n")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env=child_env(os.environ["PLAIDARRAY_CACHE_DIR"]))
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == tokenize(cube)


def test_numpy_arrays_are_taken_by_elementwise_functions_as_jax_takes_them():
    a, b = np.linspace(0.1, 1.0, 6), np.linspace(1.0, 2.0, 6).astype(np.float32)
    np.testing.assert_allclose(np.asarray(xp.exp(a)), np.exp(a))
    result = xp.add(b, xp.asarray(a))
    assert result.dtype == np.float64
    np.testing.assert_allclose(np.asarray(result), b + a)
    assert xp.multiply(b, 2.0).dtype == np.float32


def test_kernels_follow_omp_num_threads_unless_plaidarray_says_otherwise(monkeypatch):
    monkeypatch.delenv("PLAIDARRAY_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # what a Dask worker process is given
    assert parallel.num_threads() == 1
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "3")
    assert parallel.num_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "many")
    monkeypatch.delenv("PLAIDARRAY_NUM_THREADS")
    with pytest.raises(ValueError, match="OMP_NUM_THREADS must be a positive integer"):
        parallel.num_threads()
