"""The default backend computes with compiled code, and the cache avoids recompiling."""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend import registry
from plaidarray.backend.llvm_cpu.compiler import CpuCompiler
from plaidarray.backend.reference import Evaluator
from plaidarray.trace import dynamic


@pytest.fixture(autouse=True)
def default_backend():
    xp.set_backend(None)
    yield
    xp.set_backend(None)


def _chain(x):
    return xp.sum(xp.sin(x) * 3.0 - xp.exp(x), axis=0)


def test_default_backend_is_compiled_and_never_calls_the_reference_evaluator():
    data = np.linspace(-1, 1, 24, dtype=np.float64).reshape(4, 6)
    before_eval, before = Evaluator.evaluated, xp.cache_info()
    # A shape unused elsewhere so this graph cannot already be cached.
    result = np.asarray(_chain(xp.asarray(data[:, :5] + 0.125)))
    after = xp.cache_info()
    assert after.compiles == before.compiles + 1
    assert after.per_backend_compiles.get("llvm-cpu", 0) == before.per_backend_compiles.get("llvm-cpu", 0) + 1
    assert Evaluator.evaluated == before_eval
    expected = np.sum(np.sin(data[:, :5] + 0.125) * 3.0 - np.exp(data[:, :5] + 0.125), axis=0)
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_same_graph_and_signature_hits_the_cache_without_compiling():
    a = np.arange(7, dtype=np.float32) / 7
    np.asarray(_chain(xp.asarray(a)))
    before = xp.cache_info()
    second = np.asarray(_chain(xp.asarray(a[::-1].copy())))  # new data, same signature
    after = xp.cache_info()
    assert after.compiles == before.compiles
    assert after.hits == before.hits + 1
    np.testing.assert_allclose(second, np.sum(np.sin(a[::-1]) * 3 - np.exp(a[::-1]), axis=0), rtol=1e-5)


def test_a_new_graph_compiles_exactly_once_however_often_it_runs(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", "0")  # compiled here, not loaded from an earlier run
    xp.clear_cache()
    dynamic.HISTORIES.clear()
    for _ in range(3):
        np.asarray(_chain(xp.asarray(np.ones(11, dtype=np.float32))))
    assert xp.cache_info().compiles == 1


def test_the_compilers_per_shape_ops_are_the_ops_whose_lowering_takes_no_run_time_size():
    """``CpuCompiler.per_shape_ops`` (what the trace layer reads, without importing the code
    generator) says what the lowerings say."""
    from plaidarray.backend.llvm_cpu import stages  # registers llvm-cpu's lowerings
    from plaidarray.codegen.lowering import lowering_for, shape_generic
    from plaidarray.hlo.opdef import OPS

    per_shape = {op for op in OPS if op != "parameter" and not shape_generic(lowering_for(op, stages.PLATFORM))}
    assert per_shape == CpuCompiler.per_shape_ops


def test_the_compilers_nonempty_ops_are_the_ops_whose_lowering_needs_sizes_of_at_least_1():
    """``CpuCompiler.nonempty_ops`` (what the trace layer reads) says what the lowerings
    say (``Kernel.empty_sizes``): a new kernel op is assumed to need them until its
    lowering says otherwise."""
    from plaidarray.backend.llvm_cpu import stages  # registers llvm-cpu's lowerings
    from plaidarray.codegen.lowering import empty_sizes, lowering_for, shape_generic
    from plaidarray.hlo.opdef import OPS

    lowerings = {op: lowering_for(op, stages.PLATFORM) for op in OPS if op != "parameter"}
    nonempty = {op for op, lowering in lowerings.items() if shape_generic(lowering) and not empty_sizes(lowering)}
    assert nonempty == CpuCompiler.nonempty_ops and CpuCompiler.empty_sizes


def test_the_compilers_nonunit_ops_are_the_ops_whose_lowering_asks_whether_a_size_is_1():
    """``CpuCompiler.nonunit_ops`` (what the trace layer reads) says what the lowerings
    say (``Kernel.unit_sizes``, ``Indexing.unit_sizes``): a new kernel op is assumed to
    ask until its lowering says otherwise."""
    from plaidarray.backend.llvm_cpu import stages  # registers llvm-cpu's lowerings
    from plaidarray.codegen.lowering import lowering_for, shape_generic, unit_sizes
    from plaidarray.hlo.opdef import OPS

    lowerings = {op: lowering_for(op, stages.PLATFORM) for op in OPS if op != "parameter"}
    nonunit = {op for op, lowering in lowerings.items() if shape_generic(lowering) and not unit_sizes(lowering)}
    assert nonunit == CpuCompiler.nonunit_ops and CpuCompiler.unit_sizes


def test_reference_backend_is_selectable_and_does_not_compile_native_code():
    xp.set_backend("reference")
    before_eval, before = Evaluator.evaluated, xp.cache_info()
    result = np.asarray(_chain(xp.asarray(np.full(13, 0.5))))
    assert Evaluator.evaluated > before_eval
    assert xp.cache_info().per_backend_compiles.get("llvm-cpu", 0) == before.per_backend_compiles.get("llvm-cpu", 0)
    np.testing.assert_allclose(result, np.sum(np.sin(np.full(13, 0.5)) * 3 - np.exp(np.full(13, 0.5))))


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        xp.set_backend("tpu")


def test_backend_registry_orders_by_priority():
    priorities = xp.backends()
    assert priorities["llvm-cpu"] > priorities["reference"]
    assert registry.DEFAULT == max(registry._BUILTIN, key=priorities.__getitem__)
