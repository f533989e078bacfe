"""Kernels shared between and within executables (``backend/llvm_cpu/kernels.py``): a
kernel is keyed by its own code, so a module holding the same loop nest twice generates it
once, and a new graph made of known kernels generates only what is new."""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend.cache import EXECUTABLES
from plaidarray.backend.llvm_cpu.executable import CpuExecutable, _Runner


@pytest.fixture(autouse=True)
def compiled_here(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", "0")  # generated here, not loaded from an earlier test
    xp.set_backend("llvm-cpu")
    xp.clear_cache()
    yield
    xp.set_backend(None)


def test_equal_loop_nests_of_one_module_are_generated_once():
    rng = np.random.default_rng(0)
    p, labels = rng.standard_normal((301, 2)), rng.integers(0, 4, 301)
    points, ids = xp.asarray(p), xp.asarray(labels)
    sums = [xp.sum(points * xp.astype(ids == k, xp.float64)[:, None], axis=0) for k in range(4)]
    got = np.asarray(xp.stack(sums))
    np.testing.assert_allclose(got, np.stack([(p * (labels == k)[:, None]).sum(0) for k in range(4)]), rtol=1e-12)
    (executable,) = [e for e in EXECUTABLES._lru.values() if isinstance(e, (CpuExecutable, _Runner))]  # bound
    assert len(executable.steps) >= 4
    assert xp.cache_info().kernel_compiles == len(executable.kernels) < len(executable.steps)


def test_a_new_graph_made_of_known_kernels_generates_only_what_is_new():
    rng = np.random.default_rng(1)
    a, m = rng.standard_normal(1000), rng.standard_normal((7, 3))
    x, y = xp.asarray(a), xp.asarray(m)
    np.testing.assert_allclose(np.asarray(xp.exp(x) + 1.0), np.exp(a) + 1.0, rtol=1e-14)
    first = xp.cache_info()
    # A second graph: the same loop nest, and a new one (a read computes every live value).
    both = xp.exp(x) + 1.0, xp.sum(y * y, axis=1)
    values = [np.asarray(v) for v in both]
    second = xp.cache_info()
    assert second.compiles == first.compiles + 1
    assert second.kernel_compiles == first.kernel_compiles + 1  # only the row sums' kernel
    np.testing.assert_allclose(values[0], np.exp(a) + 1.0, rtol=1e-14)
    np.testing.assert_allclose(values[1], (m * m).sum(1), rtol=1e-14)


def test_clear_cache_drops_the_kernels_too():
    x = xp.asarray(np.arange(50.0))
    np.asarray(xp.sin(x) * 3.0)
    assert xp.cache_info().kernel_compiles == 1
    xp.clear_cache()
    np.asarray(xp.sin(x) * 3.0)
    assert xp.cache_info().kernel_compiles == 1  # generated again, counted afresh


def test_the_kernel_abi_is_one_definition():
    """The emitter's kernels, the ctypes prototype and ``_entry.c``'s ``kernel_fn`` take the
    parameters ``kernel_abi.py`` defines (an export's C entry declares them by it too)."""
    import ctypes

    from hlo_builders import lowered, make, param
    from jit_helpers import REPO

    from plaidarray.backend.llvm_cpu import kernel_abi

    assert kernel_abi.C_TYPEDEF in (REPO / "plaidarray/backend/llvm_cpu/_entry.c").read_text()
    assert kernel_abi.CTYPES._argtypes_ == (ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_int64,
                                            ctypes.c_int64, ctypes.c_void_p)
    x = param(0, (4,))
    source = lowered([x], [make("exp", x)]).sources[0]
    entry = next(line for line in source.ir.splitlines() if line.startswith("define void"))
    assert entry.endswith('(ptr %".1", ptr %".2", i64 %".3", i64 %".4", ptr %".5")')
