"""The eager path's C modules against their Python definitions.

``trace/_graph.c`` makes nodes as ``node._derive_in_python`` does, walks a read's
pending graph as ``to_hlo.walk`` does, reads a value as ``materialize`` does (``_graph.read``,
its cached executable found in C) and records elementwise functions' and operators'
common cases as their Python definitions do; ``trace/_scalars.c`` evaluates the scalar tier's
common cases (compared with ``scalars.value`` in ``test_scalar_tier.py``);
``backend/llvm_cpu/_entry.c`` calls an executable's entry as its ctypes call does;
``hlo/ops/_units.c`` computes FFT twiddles as ``fft.unit_parts`` does (compared in
``tests/unit/hlo/test_fft_units.py``); ``backend/llvm_cpu/_catalogue.c`` finds an op
kernel in the installation's catalogue as ``op_catalogue.py`` does (compared in
``tests/unit/backend/test_op_catalogue_c.py``). All are
optional at build time: where they were not built (no C compiler at install) these tests
skip, saying so, and the rest of the suite runs on the Python twins. CI sets ``PLAIDARRAY_TEST_REQUIRE_C=1`` (``.ci/run``), so there a build
that failed silently fails the first test instead of leaving CI testing the Python paths
twice.
"""

from __future__ import annotations

import gc
import importlib.util
import math
import operator
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plaidarray as xp
from plaidarray.backend.cache import EXECUTABLES
from plaidarray.backend.llvm_cpu import executable as cpu_executable
from plaidarray.backend.llvm_cpu import op_catalogue
from plaidarray.hlo.ops import fft as fft_op
from plaidarray.trace import node as node_module
from plaidarray.trace import scalars
from plaidarray.trace import to_hlo
from plaidarray.trace.baseline import BaselineExecutable

#: The C modules, by the names they are imported by.
C_MODULES = ("plaidarray.trace._graph", "plaidarray.trace._scalars", "plaidarray.backend.llvm_cpu._entry",
             "plaidarray.hlo.ops._units", "plaidarray.backend.llvm_cpu._catalogue")
#: Those that were not built here.
UNBUILT = [name for name in C_MODULES if importlib.util.find_spec(name) is None]
REQUIRED = os.environ.get("PLAIDARRAY_TEST_REQUIRE_C") == "1"

#: Under PLAIDARRAY_PURE_PYTHON=1 (CI's second pass) the C modules are not loaded: there is
#: nothing to compare, and the rest of the suite is what runs on the Python twins.
pytestmark = [
    pytest.mark.skipif(os.environ.get("PLAIDARRAY_PURE_PYTHON") == "1",
                       reason="compares the C modules, which PLAIDARRAY_PURE_PYTHON=1 leaves unloaded"),
    pytest.mark.skipif(bool(UNBUILT) and not REQUIRED,
                       reason=f"the C modules {', '.join(UNBUILT)} were not built (no C compiler at install?); "
                              f"the suite runs on their Python twins"),
]


def test_the_c_modules_are_built_and_in_use():
    assert not UNBUILT, f"not built: {UNBUILT} (PLAIDARRAY_TEST_REQUIRE_C=1 requires them)"
    assert node_module.GRAPH_IN_C is not None and node_module.derive is node_module.GRAPH_IN_C.derive
    assert cpu_executable._run_in_c is not None
    assert scalars.evaluate is not scalars.value
    assert fft_op._UNITS is not None
    assert op_catalogue._C is not None


def test_the_pure_python_switch_turns_them_off():
    code = ("from plaidarray.trace import node, scalars; from plaidarray.backend.llvm_cpu import executable; "
            "from plaidarray.hlo.ops import fft; from plaidarray.backend.llvm_cpu import op_catalogue; "
            "print(node.GRAPH_IN_C, executable._run_in_c, scalars.evaluate is scalars.value, fft._UNITS, "
            "op_catalogue._C)")
    env = {**os.environ, "PLAIDARRAY_PURE_PYTHON": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["None", "None", "True", "None", "None"], done.stderr


def _c_walk(roots):
    return node_module.GRAPH_IN_C.walk(roots, to_hlo.KEPT_GENERATOR_BYTES)


def _slots(node):
    return {name: getattr(node, name) for name in node_module.Node.__slots__ if name != "__weakref__"}


def test_c_nodes_equal_python_nodes():
    x = xp.asarray(np.arange(3.0))
    traced = node_module.Node.placeholder(x._node.shape, trace=None)
    for operands in [(x._node,), (x._node, (x + 1.0)._node), (traced, x._node), ()]:
        attrs = {"k": 1} if operands else {}
        made_in_c = node_module.GRAPH_IN_C.derive("add", operands, attrs, x._node.shape)
        made_in_python = node_module._derive_in_python("add", operands, attrs, x._node.shape)
        assert type(made_in_c) is node_module.Node
        expected = _slots(made_in_python)
        got = _slots(made_in_c)
        assert got.pop("serial") < expected.pop("serial")  # numbered by the same counter, in order
        assert got == expected
    with pytest.raises(TypeError, match="expected a Node"):
        node_module.GRAPH_IN_C.derive("add", (x,), {}, x._node.shape)
    with pytest.raises(TypeError, match="expected a Shape"):
        node_module.GRAPH_IN_C.derive("add", (x._node,), {}, (3,))
    with pytest.raises(TypeError, match="expected a Node"):
        _c_walk([x])
    with pytest.raises(TypeError, match="a node's shape must be a Shape"):
        _c_walk([node_module.Node("negate", (x._node,), {}, (3,), depth=1)])  # type: ignore[arg-type]


UNARY = [xp.exp, xp.negative, xp.abs, xp.sqrt, lambda v: v[1:3], lambda v: xp.sum(v, keepdims=True) + v]
BINARY = [xp.add, xp.multiply, xp.maximum]
SCALARS = [0.5, 2.0, 0.5, 0.0, -1.0]  # repeated and zero values: shared and unshared scalar nodes

step = st.one_of(
    st.tuples(st.just("unary"), st.integers(0, len(UNARY) - 1), st.integers(0, 99)),
    st.tuples(st.just("binary"), st.integers(0, len(BINARY) - 1), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("scalar"), st.integers(0, len(SCALARS) - 1), st.integers(0, 99)),
    st.tuples(st.just("read"), st.integers(0, 99)),
    st.tuples(st.just("drop"), st.integers(0, 99)),
)


def _build(steps):
    """Values recorded by ``steps`` over two ready arrays: some read (ready), some dropped
    (no live array), the rest pending; None marks a dropped value's place."""
    rng = np.random.default_rng(0)
    values = [xp.asarray(rng.uniform(1, 2, 4)), xp.asarray(rng.uniform(1, 2, 4))]
    nodes = [v._node for v in values]
    for s in steps:
        live = [i for i, v in enumerate(values) if v is not None]
        pick = lambda k, live=live: values[live[k % len(live)]]
        if s[0] == "unary":
            out = UNARY[s[1]](pick(s[2]))
        elif s[0] == "binary":
            a, b = pick(s[2]), pick(s[3])
            out = BINARY[s[1]](a, b) if a.shape == b.shape else a * 3.0
        elif s[0] == "scalar":
            out = pick(s[2]) * SCALARS[s[1]]
        elif s[0] == "read":
            np.asarray(pick(s[1]))
            continue
        else:
            if len(live) > 1:
                values[live[s[1] % len(live)]] = None
            continue
        values.append(out)
        nodes.append(out._node)
    return values, nodes


@settings(max_examples=150, deadline=None)
@given(st.lists(step, min_size=1, max_size=25), st.integers(0, 99), st.integers(0, 99))
def test_the_c_walk_equals_the_python_walk(steps, first, second):
    values, nodes = _build(steps)
    pending = [n for n in nodes if n.buffer is None]
    if not pending:
        return
    for roots in ([pending[first % len(pending)]], [pending[first % len(pending)], pending[second % len(pending)]]):
        expected = _ids(to_hlo.walk(roots))
        got = _c_walk(roots)
        assert got is not None
        assert _ids(got) == expected
    del values


@settings(max_examples=100, deadline=None)
@given(st.lists(step, min_size=1, max_size=25), st.integers(0, 99))
def test_c_pending_graphs_equal_python_pending_graphs(steps, which):
    """``_graph.pending`` (a loop's cuts walk the graph at each) lists the nodes the Python
    walk lists, in its order: reused scalars' broadcasts and ready nodes left out."""
    values, nodes = _build(steps)
    node = nodes[which % len(nodes)]
    expected = [id(n) for n in node_module._pending_graph_in_python(node)]
    assert [id(n) for n in node_module.GRAPH_IN_C.pending(node)] == expected
    assert node_module.pending_graph is node_module.GRAPH_IN_C.pending
    del values


def _ids(walked: tuple) -> tuple:
    """A walk's key and its buffers', outputs' and nodes' identities, so that holding it
    holds no node: a walk counts a node's references from outside its graph, and another
    walk's lists of them would be such references."""
    key, buffers, outputs, order = walked
    return key, [id(b) for b in buffers], [id(n) for n in outputs], [id(n) for n in order]


def test_the_c_walk_leaves_a_placeholder_to_the_python_walk():
    def f(x):
        node = (xp.exp(x) + 1.0)._node
        assert _c_walk([node]) is None
        with pytest.raises(xp.TracerError):
            to_hlo.PendingGraph([node])
        return x

    xp.jit(f)(xp.ones(3))


def test_the_c_walk_keeps_small_generators_and_recomputes_large_ones():
    small, large = xp.zeros(8), xp.zeros(1 << 18)  # 64 bytes; 2 MiB, above KEPT_GENERATOR_BYTES
    root = (xp.sum(small) + xp.sum(large))._node
    expected = _ids(to_hlo.walk([root]))
    got = _c_walk([root])
    assert got is not None and _ids(got) == expected and got[2] == [root, small._node]


def test_runs_through_c_and_through_ctypes_give_the_same_bits(monkeypatch):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((70, 30)), rng.standard_normal(30)

    def compute():
        x, y = xp.asarray(a), xp.asarray(b)
        return [np.asarray(v) for v in (xp.exp(x) * y + 1.0, x @ y, xp.sort(x, axis=0), xp.fft.fft(x[:, 0]))]

    through_c = compute()
    monkeypatch.setattr(cpu_executable, "_run_in_c", None)
    # executables made while runs went through C (a binding's runner, made only for C, by
    # an earlier test of this process meeting these structures at other sizes) are not
    # run through ctypes: made anew
    xp.clear_cache()
    through_ctypes = compute()
    for got, expected in zip(through_c, through_ctypes):
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(through_c[0], np.exp(a) * b + 1.0, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(through_c[1], a @ b, rtol=1e-12)


def test_bindings_of_a_shape_generic_sequence_share_its_plan_and_read_their_ranges_from_their_dims(monkeypatch):
    """A shape-generic sequence's bindings at new sizes run one plan, each step's range
    read from the binding's own dims table (``_entry.run``'s negative stops), where each
    binding had a copy of the plan with its ranges written in: their values are NumPy's
    and the ctypes path's at every size, and the plan is one object for all of them. (Run
    by ``materialize.planned``, each binding's first run through its runner's Python run:
    the runs ``baseline.quick`` serves call the kernels from C, and so does a runner's
    prepared run, which its executable takes at once otherwise.)"""
    from plaidarray.trace import baseline

    monkeypatch.setattr(baseline, "quick", lambda *args: None)
    monkeypatch.setattr(cpu_executable._Runner, "prepared_cheaply", False)
    data = np.random.default_rng(2).standard_normal(4000)
    x = xp.asarray(data)

    def read(n):
        w = x[:n]
        return float(xp.max(w) - xp.min(w) + xp.mean(w * w))

    for n in (5, 6):  # the structure met twice: planned shape-generic
        read(n)
    plans = []
    run_in_c = cpu_executable._run_in_c
    monkeypatch.setattr(cpu_executable, "_run_in_c", lambda plan, *rest: (plans.append(plan), run_in_c(plan, *rest)))
    sizes = (7, 100, 999, 3000)
    through_c = [read(n) for n in sizes]
    assert len(plans) == len(sizes) and len({id(p) for p in plans}) == 1, "each binding ran a plan of its own"
    monkeypatch.setattr(cpu_executable, "_run_in_c", None)
    baseline.forget()
    xp.clear_cache()
    through_ctypes = [read(n) for n in (5, 6, *sizes)][2:]
    assert through_c == through_ctypes
    for n, got in zip(sizes, through_c):
        w = data[:n]
        assert got == pytest.approx(w.max() - w.min() + np.mean(w * w), rel=1e-13)


def test_a_runner_made_for_a_size_met_again_runs_from_c_from_its_first_run(monkeypatch):
    """The reads of a planned structure at new sizes call no Python to run their kernels:
    a size's first read runs the plan's sequence bound in C (``baseline.quick``), its
    next ones run that run again, found by their digest; the
    third size's read, ``materialize.planned``'s, binds a runner whose baseline executable
    takes its prepared run at its making (the runner's own ``run``, its buffers made and
    steps run from Python, took its first two); NumPy's values."""
    data = np.random.default_rng(3).standard_normal(500)
    x = xp.asarray(data)

    def read(n):
        w = x[:n]
        return float(xp.sum(w * w + 1.0))

    for n in (5, 6):  # the structure met twice: planned
        read(n)
    calls = []
    python_run = cpu_executable._Runner.run
    monkeypatch.setattr(cpu_executable._Runner, "run", lambda self, buffers: (calls.append(1), python_run(self, buffers))[1])
    for n in (7, 40, 333):
        for _ in range(3):  # bound and run from C, then that run found by the read's digest
            assert read(n) == pytest.approx(float(np.sum(data[:n] ** 2 + 1.0)), rel=1e-13)
    assert not calls


def test_a_plan_whose_stop_reads_past_its_dims_is_refused():
    """``_entry.run`` checks a negative stop's dims entry before any kernel runs."""
    from plaidarray.backend.llvm_cpu import _entry

    import struct
    step = struct.pack("<6q", 0, 0, -3, 0, 0, 0)  # no kernel is called: the check comes first
    with pytest.raises(ValueError, match="do not fit"):
        _entry.run(step, [], b"", [], [], struct.pack("<2q", 4, 5))


def test_the_c_walk_keys_attributes_as_attr_key_does():
    """The C walk sorts a node's attributes into its key itself (``attr_key`` is not
    called): ops with several attributes, inserted in different orders, key alike."""
    x = xp.asarray(np.arange(24.0).reshape(2, 3, 4))
    roots = [
        xp.sum(xp.permute_dims(x[:, 1:, ::2], (2, 0, 1)), axis=(0, 2))._node,
        xp.fft.fft(xp.astype(x, xp.complex128), n=6, axis=1, norm="ortho")._node,
        node_module.Node.apply("slice", (x._node,), {"strides": (1, 1, 1), "start": (0, 0, 0), "limit": (1, 2, 3)}),
        node_module.Node.apply("slice", (x._node,), {"limit": (1, 2, 3), "start": (0, 0, 0), "strides": (1, 1, 1)}),
    ]
    for root in roots:
        assert _c_walk([root])[0] == to_hlo.walk([root])[0]
    assert _c_walk([roots[2]])[0] == _c_walk([roots[3]])[0]


def test_untrack_untracks_tuples_of_atoms_and_leaf_dtypes_and_nothing_else():
    """``_graph.untrack`` stops the collector tracking a tuple only where nothing in it can
    be in a cycle (ints, strs, floats, None, NumPy's built-in dtypes, such tuples); a tuple
    with anything else in it stays tracked, and so does every tuple above it."""
    untrack = node_module.GRAPH_IN_C.untrack
    f8 = np.dtype("float64")
    row = tuple(["add", (("kind", "add"), ("dims", tuple([2, 3]))), tuple([0, 1]), tuple([4]), f8])
    key = (tuple([row, tuple([tuple([4]), f8])]), tuple([1.5, None, True]))
    assert gc.is_tracked(row) and gc.is_tracked(key)
    assert untrack(key) is True
    assert not gc.is_tracked(key) and not gc.is_tracked(row) and not gc.is_tracked(row[1][1])
    held = []
    mixed = tuple([tuple(["x", tuple([1])]), tuple([held]), frozenset({1})])
    assert untrack(mixed) is False
    assert gc.is_tracked(mixed) and gc.is_tracked(mixed[1])
    assert not gc.is_tracked(mixed[0]) and not gc.is_tracked(mixed[0][1])
    structured = tuple([tuple([2]), np.dtype([("a", "f8")])])
    assert untrack(structured) is False and gc.is_tracked(structured)


def test_the_cache_keeps_a_reads_rows_untracked():
    """A read at a new size leaves the executable cache a key whose walk rows the collector
    does not track (``_graph.untrack`` at the miss): a loop over ever new sizes keeps one
    per size, and tracked, they were what its collections traversed and promoted."""
    x = xp.asarray(np.arange(97.0))
    total = xp.sum(x[5:71] * 2.5)
    walked = to_hlo.walk_pending([total._node])[0]
    assert float(total) == float(np.sum(np.arange(5.0, 71.0) * 2.5))
    kept = [key for key in EXECUTABLES._lru if key[0] == walked]
    assert len(kept) == 1
    graph_key = kept[0][0]
    assert not gc.is_tracked(graph_key) and not any(gc.is_tracked(row) for row in graph_key[0])


def test_c_set_buffers_equals_python_set_buffers():
    """Both make the pending nodes ready slot by slot alike, leave a node another thread
    made ready with its own buffer, and refuse fewer buffers than nodes."""
    x = xp.asarray(np.arange(3.0))
    made = {}
    for name, set_buffers in (("c", node_module.GRAPH_IN_C.set_buffers), ("python", node_module._set_buffers_in_python)):
        pending = [(x + 1.0)._node, (x * 2.0)._node, x._node]
        buffers = [np.ones(3), np.zeros(3), np.full(3, 7.0)]
        set_buffers(pending, buffers)
        made[name] = [_slots(n) for n in pending]
        assert pending[0].buffer is buffers[0] and pending[2].buffer is not buffers[2]
    for c_slots, python_slots in zip(made["c"], made["python"]):
        assert c_slots.keys() == python_slots.keys()
        for name in c_slots:
            if name in ("buffer", "serial"):
                continue
            assert c_slots[name] == python_slots[name], name
    with pytest.raises(ValueError, match="fewer buffers"):
        node_module.GRAPH_IN_C.set_buffers([(x + 1.0)._node], [])
    with pytest.raises(TypeError, match="expected a Node"):
        node_module.GRAPH_IN_C.set_buffers([x], [np.ones(3)])


def _small_graph(x):
    return xp.exp(x) * 2.0 + x


def _close(got, n):
    """Whether ``got`` is ``_small_graph`` of ``arange(n)`` (exp within NumPy's ulps)."""
    expected = np.exp(np.arange(float(n))) * 2.0 + np.arange(float(n))
    return np.allclose(np.asarray(got), expected, rtol=1e-14, atol=0)


def test_a_cached_read_runs_in_c_and_counts_its_hit_as_lookup_does(counted_reads, monkeypatch):
    """A read whose executable is cached calls no Python of the read path (``decide``) and
    counts the hit where ``ExecutableCache.lookup`` counts it: in the cache's info, the
    executable's marks and its hit count. A miss is ``decide``'s, as in ``materialize``, and
    so is a baseline executable whose structure is due for fused code."""
    from plaidarray.trace import hot

    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)  # never due: the baseline executable stays
    x = xp.asarray(np.arange(5.0))
    total = float(np.sum(np.exp(np.arange(5.0)) * 2.0 + np.arange(5.0)))
    first = float(xp.sum(_small_graph(x)))  # cached now (outside an assert, which keeps its parts alive)
    assert first == pytest.approx(total, rel=1e-14)
    decided = counted_reads["decide"]
    y = xp.sum(_small_graph(x))
    from plaidarray.trace import materialize as m
    key = (_c_walk([y._node])[0], m._NONE, m.backend_for(None).cache_tag)  # the walk's nodes not kept: none shared
    exe = EXECUTABLES._lru[key]
    hits, marks = xp.cache_info().hits, EXECUTABLES._hit_counts.get(id(exe), 0)
    EXECUTABLES._used.discard(id(exe))
    read = float(y)  # the read made from C
    assert read == pytest.approx(total, rel=1e-14)
    assert counted_reads["decide"] == decided
    assert xp.cache_info().hits == hits + 1
    assert EXECUTABLES._hit_counts[id(exe)] == marks + 1 and id(exe) in EXECUTABLES._used
    z = np.asarray(xp.asarray(np.arange(7.0)) * 3.0 - 1.5)  # another graph: a miss, decided in Python
    assert np.array_equal(z, np.arange(7.0) * 3.0 - 1.5)
    assert counted_reads["decide"] == decided + 1
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 0.0)  # due now: decided in Python, which submits it
    again = float(xp.sum(_small_graph(x)))
    assert again == pytest.approx(total, rel=1e-14) and counted_reads["decide"] == decided + 2


def test_a_cached_baseline_executable_made_before_fused_code_landed_goes_to_decide(counted_reads, monkeypatch):
    """``BaselineExecutable.needs_attention`` as C reads it: an executable whose heat's
    generation moved on since it was made (fused code of its structure landed) is
    ``decide``'s, which looks again, and one whose heat is submitted is not due."""
    from plaidarray.trace import hot
    from plaidarray.trace import materialize as m

    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)
    def graph(v):  # a structure of its own: no other test's fused code serves it
        return xp.sum(xp.cos(v) * 3.0 - v)

    x = xp.asarray(np.arange(6.0))
    total = float(np.sum(np.cos(np.arange(6.0)) * 3.0 - np.arange(6.0)))
    first = float(graph(x))  # cached now (outside an assert, which keeps its parts alive)
    assert first == pytest.approx(total, rel=1e-14)
    y = graph(x)
    exe = EXECUTABLES._lru[(_c_walk([y._node])[0], m._NONE, m.backend_for(None).cache_tag)]
    assert type(exe) is BaselineExecutable
    decided = counted_reads["decide"]
    exe.heat.seconds, exe.heat.submitted = 2e9, True  # past the threshold, but its compile is on its way
    assert float(y) == pytest.approx(total, rel=1e-14)
    assert counted_reads["decide"] == decided
    exe.heat.seconds, exe.heat.submitted = 0.0, False
    exe.heat.generation += 1  # fused code landed since it was made
    assert float(graph(x)) == pytest.approx(total, rel=1e-14)
    assert counted_reads["decide"] == decided + 1


def test_a_read_found_by_its_key_once_is_found_by_its_digest_after(counted_reads, monkeypatch):
    """A cached read's key is found once (its digest then remembered with the key, whose
    rows the collector does not track, as the cache's own; the executable and its hit
    counted as before); the next reads of that key are found by
    their digest, calling neither ``decide`` nor ``remember``."""
    from plaidarray.trace import hot

    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)
    remembered = []
    monkeypatch.setattr(EXECUTABLES, "remember", lambda *args: remembered.append(args))

    def graph(v):  # a structure of its own
        return xp.sum(xp.sin(v) * 5.0 + v * v)

    for n in (7, 7, 7, 7):
        values = np.arange(float(n)) + len(remembered)
        decided, hits = counted_reads["decide"], xp.cache_info().hits
        assert float(graph(xp.asarray(values))) == pytest.approx(float(np.sum(np.sin(values) * 5.0 + values * values)),
                                                                rel=1e-14)
        if decided == counted_reads["decide"]:
            assert xp.cache_info().hits == hits + 1
    assert len(remembered) == 3  # the key found at each read: nothing remembered (the stand-in keeps nothing)
    digest, key, exe = remembered[0]
    assert type(digest) is bytes and EXECUTABLES._lru[key] is exe
    assert not gc.is_tracked(key[0]) and not any(gc.is_tracked(row) for row in key[0][0])  # held untracked
    monkeypatch.undo()
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)
    EXECUTABLES.remember(digest, key, exe)
    assert EXECUTABLES.digests[digest] == (exe, key)
    calls = []
    monkeypatch.setattr(EXECUTABLES, "remember", lambda *args: calls.append(args))
    decided, hits, marks = counted_reads["decide"], xp.cache_info().hits, EXECUTABLES._hit_counts.get(id(exe), 0)
    values = np.linspace(-2.0, 3.0, 7)
    assert float(graph(xp.asarray(values))) == pytest.approx(float(np.sum(np.sin(values) * 5.0 + values * values)),
                                                            rel=1e-14)
    assert not calls and counted_reads["decide"] == decided
    assert xp.cache_info().hits == hits + 1 and EXECUTABLES._hit_counts[id(exe)] == marks + 1


#: Expressions of two (4, 4) arrays in a namespace that differ only where a digest could
#: confuse them: operand order and sharing, attributes (shapes, axes, slices), dtypes,
#: signed zeros; and whether the sum's results are compared by their bits.
_ALIKE = [
    (lambda ns, x, y: x + y, True),
    (lambda ns, x, y: y + x * 1.0, True),
    (lambda ns, x, y: x - y, True),
    (lambda ns, x, y: y - x, True),
    (lambda ns, x, y: x + x, True),
    (lambda ns, x, y: x * -0.0, True),
    (lambda ns, x, y: x * 0.0, True),
    (lambda ns, x, y: ns.reshape(x, (8, 2)) * 2.0, True),
    (lambda ns, x, y: ns.reshape(x, (2, 8)) * 2.0, True),
    (lambda ns, x, y: ns.sum(x, axis=0), False),
    (lambda ns, x, y: ns.sum(x, axis=1), False),
    (lambda ns, x, y: ns.flip(x, axis=0) * 3.0, True),
    (lambda ns, x, y: ns.flip(x, axis=1) * 3.0, True),
    (lambda ns, x, y: ns.permute_dims(x, (1, 0)) * 3.0, True),
    (lambda ns, x, y: ns.cumulative_sum(x, axis=0), False),
    (lambda ns, x, y: ns.cumulative_sum(x, axis=1), False),
    (lambda ns, x, y: x[1:3] + y[0:2], True),
    (lambda ns, x, y: x[0:2] + y[1:3], True),
    (lambda ns, x, y: ns.matrix_transpose(x) @ y, False),
    (lambda ns, x, y: x @ ns.matrix_transpose(y), False),
    (lambda ns, x, y: ns.astype(x, ns.float32) + 1.0, True),
    (lambda ns, x, y: ns.astype(x * 4.0, ns.int64) + 1, True),
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_ALIKE) - 1), st.integers(0, 2**16), st.booleans()),
                min_size=4, max_size=30))
def test_reads_found_by_their_digests_compute_what_numpy_computes(reads):
    """Reads of alike structures, each met several times at new values (so that most are
    found by their digests), give NumPy's bits: a digest stands for its key alone."""
    for which, seed, keep in reads:
        rng = np.random.default_rng(seed)
        a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
        fn, exact = _ALIKE[which]
        expected = fn(np, a, b)
        result = fn(xp, xp.asarray(a), xp.asarray(b))
        kept = result + 1.0 if keep else None  # pending on the result: a shared output of its read
        got = np.asarray(result)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        if exact:
            assert np.array_equal(got, expected) and np.array_equal(np.signbit(got), np.signbit(expected))
        else:
            assert np.allclose(got, expected, rtol=1e-13, atol=1e-13)
        if kept is not None:
            assert np.array_equal(np.asarray(kept), got + 1.0)


def test_the_digests_of_an_executable_go_when_it_leaves_the_cache(monkeypatch):
    """``ExecutableCache.remember`` keeps a digest only for the executable cached under its
    key, at most ``DIGESTS_PER_EXECUTABLE`` an executable and ``DIGESTS_PER_ENTRY`` times
    its size in all (then it starts again); an eviction, a replacement and ``clear`` drop an
    executable's digests with it."""
    from plaidarray.backend import cache

    monkeypatch.setattr(cache, "DIGESTS_PER_ENTRY", 100)
    made = cache.ExecutableCache(maxsize=2)
    first, second, third, other = (BaselineExecutable.__new__(BaselineExecutable) for _ in range(4))
    made.insert(("one",), first)
    made.insert(("two",), second)
    made.remember(b"1", ("one",), first)
    made.remember(b"x", ("one",), second)  # not what the key holds
    made.remember(b"2", ("two",), second)
    assert made.digests == {b"1": (first, ("one",)), b"2": (second, ("two",))}
    for k in range(cache.DIGESTS_PER_EXECUTABLE + 2):
        made.remember(b"2-%d" % k, ("two",), second)
    assert sum(exe is second for exe, _ in made.digests.values()) == cache.DIGESTS_PER_EXECUTABLE
    made.insert(("three",), third)  # evicts the first key (neither was used)
    assert ("one",) not in made.entries and not [d for d, (exe, _) in made.digests.items() if exe is first]
    made.insert(("two",), other)  # replaced
    assert not [d for d, (exe, _) in made.digests.items() if exe is second]
    made.remember(b"3", ("three",), third)
    monkeypatch.setattr(cache, "DIGESTS_PER_ENTRY", 1)  # two in all: the third starts again
    made.remember(b"4", ("two",), other)
    made.remember(b"5", ("two",), other)
    assert made.digests == {b"5": (other, ("two",))}
    made.clear()
    assert made.digests == {} and made._digests_of == {}


def test_reads_are_counted_per_thread():
    """``node.reads_mark`` counts this thread's reads alone (a recipe recorded on one
    thread must not take another thread's read for its own), reads made in C among them."""
    import threading

    x = xp.asarray(np.arange(4.0))
    mark = node_module.reads_mark()
    float(xp.sum(x * 2.0))
    assert node_module.reads_mark() == mark + 1
    seen = []

    def other():
        before = node_module.reads_mark()
        for _ in range(5):
            float(xp.sum(x * 3.0))
        seen.append(node_module.reads_mark() - before)

    worker = threading.Thread(target=other)
    worker.start()
    worker.join()
    assert seen == [5] and node_module.reads_mark() == mark + 1


def test_a_read_after_cut_graphs_and_a_traced_placeholder_go_to_python(counted_reads):
    """The first read after a loop's cut graphs hands ``cuts`` its sizes, and a traced
    placeholder's read raises the trace's error: both are ``materialize``'s."""
    from plaidarray.trace import cuts

    x = xp.asarray(np.arange(4.0))
    assert _close(_small_graph(x), 4)
    cuts._since_read = True
    try:
        read = float(xp.sum(_small_graph(x)))
        assert read == pytest.approx(float(np.sum(np.exp(np.arange(4.0)) * 2 + np.arange(4))))
        assert counted_reads["materialize"] == 1 and cuts._since_read is False
    finally:
        cuts._since_read = False

    def f(v):
        with pytest.raises(xp.TracerError):
            node_module.GRAPH_IN_C.read((xp.exp(v) + 1.0)._node)
        return v

    xp.jit(f)(xp.ones(3))
    assert counted_reads["materialize"] == 2


def test_a_loops_read_at_a_new_size_is_bound_from_its_plan_without_decide(counted_reads, monkeypatch):
    """Once a structure's plan is made (its second size), a read at a third size is bound
    from it in C's read path (``materialize.planned``, and from the fourth size on from C
    alone, ``baseline.quick``), without ``decide``: computed as NumPy computes it, its run
    counted against the structure's heat; a size read again runs the run bound at its first
    read, found by the read's digest (``baseline.QUICK_RUNS``), and its
    ``QUICK_CACHED_AT``-th read caches that run under the read's key
    (``baseline._keep_quick``: the next read is a hit, its run counted against the heat). A
    structure due for fused code goes to ``decide``, which submits it."""
    from plaidarray.trace import hot
    from plaidarray.trace import materialize as m

    _afresh(monkeypatch)  # this test's structure the only one planned
    data = np.linspace(-2.0, 3.0, 64)
    x = xp.asarray(data)

    def read(n):
        window = x[:n]
        return float(xp.sum((window - xp.mean(window)) * 2.0))

    def expected(n):
        window = data[:n]
        return float(np.sum((window - np.mean(window)) * 2.0))

    for n in (40, 41):  # the first meeting, then the plan
        assert read(n) == pytest.approx(expected(n), rel=1e-12, abs=1e-12)
    decided = counted_reads["decide"]
    for n in (50, 51, 52):
        assert read(n) == pytest.approx(expected(n), rel=1e-12, abs=1e-12)
    assert counted_reads["decide"] == decided and counted_reads["planned"] == 1
    y = x[:52]
    key = (_c_walk([xp.sum((y - xp.mean(y)) * 2.0)._node])[0], m._NONE, m.backend_for(None).cache_tag)
    assert key not in EXECUTABLES._lru
    heat = _quick_entries()[0][1]
    for _ in range(node_module.GRAPH_IN_C.QUICK_CACHED_AT - 2):  # again: the run bound at its first read
        seconds = heat.seconds
        assert read(52) == pytest.approx(expected(52), rel=1e-12, abs=1e-12)
        assert key not in EXECUTABLES._lru and heat.seconds > seconds
    assert read(52) == pytest.approx(expected(52), rel=1e-12, abs=1e-12)  # its run cached
    assert counted_reads["decide"] == decided and counted_reads["planned"] == 1
    exe = EXECUTABLES._lru[key]
    hits = xp.cache_info().hits
    heat = exe.heat
    seconds = heat.seconds
    assert read(52) == pytest.approx(expected(52), rel=1e-12, abs=1e-12)
    assert xp.cache_info().hits == hits + 1 and heat.seconds > seconds
    heat.seconds = 2e9  # due now: decide's, which submits the fused compile
    submitted = []
    monkeypatch.setattr(hot, "submit", submitted.append)
    assert read(53) == pytest.approx(expected(53), rel=1e-12, abs=1e-12)
    assert counted_reads["decide"] == decided + 1 and len(submitted) == 1


def _quick_entries():
    """The structures whose reads at new sizes C runs itself (``baseline.quick``)."""
    from plaidarray.trace import baseline

    return [entry for entry in baseline.PLANNED.values() if type(entry) is tuple]


def _afresh(monkeypatch):
    """No fused compile, and every structure new: the cache cleared, and the structures the
    fused path has seen (``dynamic.HISTORIES``, which outlives it) forgotten for the test."""
    from plaidarray.trace import dynamic, hot

    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)
    monkeypatch.setattr(dynamic, "HISTORIES", dynamic.Histories(dynamic.KEPT_HISTORIES))
    xp.clear_cache()


def _windows(x, sizes, fn):
    """``fn`` of each window ``x[:n]`` for ``n`` in ``sizes``, read."""
    return [fn(x[:n]) for n in sizes]


def _spread(w):
    return float(xp.max(w) - xp.min(w) + xp.mean(w * w) + xp.sum(xp.exp(-w * w)))


def test_reads_at_new_sizes_of_a_planned_structure_run_from_c_as_planned_runs_them(counted_reads, monkeypatch):
    """A loop's reads at sizes its structure never met, once its plan is made, are run from
    C (``baseline.quick``: its plan's sequence at their sizes, ``_entry.AnySize``), without
    ``materialize.planned``: the same bits as ``planned``'s runs (``quick`` switched off),
    sized buffers of every size class (small, pooled), their seconds counted against the
    structure's heat, and nothing cached per size."""
    from plaidarray.trace import baseline

    _afresh(monkeypatch)
    data = np.random.default_rng(5).standard_normal(300_000)
    x = xp.asarray(data)
    sizes = [5, 6, 7, 9, 64, 1000, 33_333, 8]  # 33,333: buffers from the pool
    through_c = _windows(x, sizes, _spread)
    assert counted_reads["planned"] == 1  # the third size's, which made the structure's quick entry
    assert len(_quick_entries()) == 1
    heat = _quick_entries()[0][1]
    seconds = heat.seconds
    entries = xp.cache_info().size
    assert _spread(x[:12_345]) == pytest.approx(float(np.max(data[:12_345]) - np.min(data[:12_345]) + np.mean(
        data[:12_345] ** 2) + np.sum(np.exp(-data[:12_345] ** 2))), rel=1e-12)
    assert heat.seconds > seconds and xp.cache_info().size == entries
    monkeypatch.setattr(baseline, "quick", lambda *args: None)
    xp.clear_cache()
    assert not _quick_entries()
    in_python = _windows(x, sizes, _spread)
    assert counted_reads["planned"] == 1 + len(sizes) - 2  # but the first two sizes
    assert through_c == in_python
    for n, got in zip(sizes, through_c):
        w = data[:n]
        assert got == pytest.approx(w.max() - w.min() + np.mean(w * w) + np.sum(np.exp(-w * w)), rel=1e-12)


@pytest.mark.parametrize("case", ["element", "reshaped"])
def test_reads_at_new_sizes_whose_results_are_copies_run_from_c_as_planned_runs_them(counted_reads, monkeypatch,
                                                                                      case):
    """A planned structure whose result is a copy of a value seen anew (an element read,
    ``float(y[3])``: a slice reshaped to 0-d; a reshape whose dims are the plan's symbols)
    is run from C at new sizes too, each copy made at the read's sizes
    (``baseline._copied_at``): the same values as ``planned``'s runs (``quick`` switched
    off), results of their own memory."""
    from plaidarray.trace import baseline

    _afresh(monkeypatch)
    data = np.random.default_rng(7).standard_normal(400)
    x = xp.asarray(data)
    read, expected = {
        "element": (lambda w: float(xp.exp(w * 0.5)[3]), lambda w: float(np.exp(w * 0.5)[3])),
        "reshaped": (lambda w: np.asarray(xp.reshape(xp.cumulative_sum(w), (1, -1))),
                     lambda w: np.cumsum(w).reshape(1, -1)),
    }[case]
    sizes = [9, 10, 11, 17, 40, 301, 12]
    through_c = [read(x[:n]) for n in sizes]
    assert counted_reads["planned"] == 1  # the third size's, which made the structure's quick entry
    assert len(_quick_entries()) == 1
    monkeypatch.setattr(baseline, "quick", lambda *args: None)
    xp.clear_cache()
    in_python = [read(x[:n]) for n in sizes]
    assert counted_reads["planned"] == 1 + len(sizes) - 2
    for n, got, other in zip(sizes, through_c, in_python):
        want = expected(data[:n])
        assert np.shape(got) == np.shape(want) and np.array_equal(got, other)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    if case == "reshaped":
        through_c[4][...] = 0.0  # a quick run's result: memory of its own
        assert np.array_equal(np.asarray(x), data) and np.array_equal(through_c[5], in_python[5])
    monkeypatch.undo()
    _afresh(monkeypatch)
    for n in sizes:
        read(x[:n])
    hits, planned = xp.cache_info().hits, counted_reads["planned"]
    reads = node_module.GRAPH_IN_C.QUICK_CACHED_AT  # the first read's run found again, cached at the last
    again = [read(x[:n]) for _ in range(reads - 1) for n in sizes[3:]]
    assert xp.cache_info().hits == hits and counted_reads["planned"] == planned
    again += [read(x[:n]) for n in sizes[3:]]  # hits
    assert xp.cache_info().hits == hits + len(sizes[3:]) and counted_reads["planned"] == planned
    for n, got in zip(sizes[3:] * reads, again):
        np.testing.assert_allclose(got, expected(data[:n]), rtol=1e-12)
    if case == "reshaped":
        again[0][...] = 0.0  # a run's result: memory of its own at each run
        assert np.array_equal(np.asarray(x), data)
        for k in range(1, reads):
            np.testing.assert_allclose(again[k * len(sizes[3:])], expected(data[:sizes[3]]), rtol=1e-12)


def test_reads_quick_leaves_to_planned_are_planned_s(counted_reads, monkeypatch):
    """What ``baseline.quick`` does not serve goes to ``materialize.planned`` as before: a
    size of 1 where its pattern has a run-time size (``Pattern.match``'s rules), a
    structure whose heat is due (``decide`` submits its fused compile), and everything
    after ``clear_cache``, which empties it. A size read again is C's, which caches its run
    at its ``QUICK_CACHED_AT``-th read (the next is a hit)."""
    from plaidarray.trace import baseline, hot

    _afresh(monkeypatch)
    data = np.linspace(-1.0, 2.0, 500)
    x = xp.asarray(data)

    def total(w):
        return float(xp.sum(w * w))

    assert _windows(x, [10, 11, 12, 13], total) == [float(np.sum(data[:n] ** 2)) for n in (10, 11, 12, 13)]
    planned = counted_reads["planned"]
    assert len(_quick_entries()) == 1
    assert total(x[:1]) == float(data[0] ** 2) and counted_reads["planned"] == planned + 1  # a size of 1
    assert total(x[:301]) == float(np.sum(data[:301] ** 2))  # a new size again: C's, as before
    assert counted_reads["planned"] == planned + 1
    planned += 1
    hits = xp.cache_info().hits
    for _ in range(node_module.GRAPH_IN_C.QUICK_CACHED_AT - 1):
        assert total(x[:13]) == float(np.sum(data[:13] ** 2)) and counted_reads["planned"] == planned
    assert xp.cache_info().hits == hits
    assert total(x[:13]) == float(np.sum(data[:13] ** 2)) and xp.cache_info().hits == hits + 1
    heat = _quick_entries()[0][1]
    heat.seconds = 2e9  # due: decide's, which submits the fused compile
    submitted = []
    monkeypatch.setattr(hot, "submit", submitted.append)
    decided = counted_reads["decide"]
    assert total(x[:14]) == float(np.sum(data[:14] ** 2))
    assert counted_reads["decide"] == decided + 1 and len(submitted) == 1
    xp.clear_cache()
    assert not baseline.PLANNED


def test_a_run_found_by_its_digest_serves_only_while_its_entry_would(counted_reads, monkeypatch):
    """The run C bound at a size's first read (``baseline.QUICK_RUNS``) serves that size's
    next reads only as its quick entry would serve them: once the structure is due for fused
    code, the same size's read is ``decide``'s, which submits the compile, and the digest is
    forgotten; ``clear_cache`` forgets them all. NumPy's values throughout."""
    from plaidarray.trace import baseline, hot

    _afresh(monkeypatch)
    data = np.linspace(-1.0, 2.0, 300)
    x = xp.asarray(data)

    def total(n):
        return float(xp.sum(xp.exp(x[:n] * 0.5)))

    def expected(n):
        return float(np.sum(np.exp(data[:n] * 0.5)))

    for n in (10, 11, 12, 13):  # planned at the second size, C's quick entry from the third
        assert total(n) == pytest.approx(expected(n), rel=1e-12)
    found = dict(baseline.QUICK_RUNS)
    assert len(found) == 1 and next(iter(found.values()))[1][1] == 1  # 13's run, read once
    decided, planned = counted_reads["decide"], counted_reads["planned"]
    assert total(13) == pytest.approx(expected(13), rel=1e-12)  # its run found by its digest
    assert next(iter(baseline.QUICK_RUNS.values()))[1][1] == 2
    assert (counted_reads["decide"], counted_reads["planned"]) == (decided, planned)
    heat = _quick_entries()[0][1]
    heat.seconds = 2e9  # due: decide's
    submitted = []
    monkeypatch.setattr(hot, "submit", submitted.append)
    assert total(13) == pytest.approx(expected(13), rel=1e-12)
    assert counted_reads["decide"] == decided + 1 and len(submitted) == 1 and not baseline.QUICK_RUNS
    y = xp.asarray(data * 2.0)
    for n in (20, 21, 22, 23):  # another structure: its fourth size's run kept
        assert float(xp.sum(y[:n] * y[:n])) == pytest.approx(float(np.sum((2.0 * data[:n]) ** 2)), rel=1e-12)
    assert baseline.QUICK_RUNS
    xp.clear_cache()
    assert not baseline.QUICK_RUNS


def test_several_nodes_whose_graph_is_cached_run_from_c_without_decide(counted_reads, monkeypatch):
    """``materialize.read_several`` (a graph cut at the pending bound with the values
    waiting on it, a wide concatenation's operands) walks in C (``_graph.read_several``):
    a cached graph's executable runs there, without ``decide``; a miss is ``decide``'s with
    that walk, which caches it; the first read after a loop's cut graphs, not itself a cut,
    is ``materialize``'s. Values as NumPy's; a loop cut at the bound runs its later cuts so."""
    from plaidarray.trace import cuts
    from plaidarray.trace import materialize as m

    data = np.arange(5.0)
    x = xp.asarray(data)
    assert float(xp.sum(x)) == 10.0  # a backend chosen (before, a read is materialize's)

    def pair():
        a = xp.exp(x) * 2.0
        return a, a + x

    a, b = pair()
    decided = counted_reads["decide"]
    assert node_module.GRAPH_IN_C.read_several([b._node, a._node, b._node], False)  # a miss: decide's
    assert counted_reads["decide"] == decided + 1 and a._node.buffer is not None and b._node.buffer is not None
    a, b = pair()
    m.read_several([b._node, a._node, b._node], cut=True)  # the same graph: a hit
    assert counted_reads["decide"] == decided + 1
    np.testing.assert_allclose(np.asarray(a), np.exp(data) * 2.0, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(b), np.exp(data) * 2.0 + data, rtol=1e-15)
    assert node_module.GRAPH_IN_C.read_several([a._node], False)  # nothing pending: nothing to run
    a, b = pair()
    monkeypatch.setattr(cuts, "_since_read", True)  # cuts' sizes to hand on: materialize's
    assert not node_module.GRAPH_IN_C.read_several([b._node, a._node], False) and a._node.buffer is None
    assert node_module.GRAPH_IN_C.read_several([b._node, a._node], True) and a._node.buffer is not None
    monkeypatch.undo()
    monkeypatch.setattr(node_module, "MAX_PENDING", 6)
    decided = counted_reads["decide"]
    y, want = xp.asarray(np.linspace(0.0, 1.0, 16)), np.linspace(0.0, 1.0, 16)
    for _ in range(120):
        y = xp.tanh(y) * 0.9 + 0.05
        want = np.tanh(want) * 0.9 + 0.05
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-13)
    assert 1 <= counted_reads["decide"] - decided <= 4  # the first cuts and the last read, then hits in C


class _Failing:
    """An executable whose run fails (what a run out of memory does)."""

    returns_parameters = False

    def run(self, buffers):
        raise MemoryError("a run that failed")


def test_a_failed_run_leaves_the_lock_free_and_the_nodes_pending(counted_reads):
    import threading

    x = xp.asarray(np.arange(6.0))
    assert _close(_small_graph(x), 6)
    y = _small_graph(x)
    from plaidarray.trace import materialize as m
    key = (_c_walk([y._node])[0], m._NONE, m.backend_for(None).cache_tag)
    kept = EXECUTABLES._lru[key]
    EXECUTABLES._lru[key] = _Failing()
    try:
        with pytest.raises(MemoryError, match="a run that failed"):
            node_module.GRAPH_IN_C.read(y._node)
    finally:
        EXECUTABLES._lru[key] = kept
    assert y._node.buffer is None
    free = []

    def try_lock():
        free.append(node_module.GRAPH_LOCK.acquire(blocking=False))
        if free[-1]:
            node_module.GRAPH_LOCK.release()
    thread = threading.Thread(target=try_lock)
    thread.start()
    thread.join()
    assert free == [True]
    assert _close(y, 6)


def test_a_read_waits_for_the_lock_another_thread_holds():
    import threading
    import time

    x = xp.asarray(np.arange(3.0))
    assert _close(_small_graph(x), 3)
    y = _small_graph(x)
    held, release = threading.Event(), threading.Event()

    def hold():
        with node_module.GRAPH_LOCK:
            held.set()
            release.wait(10)
    thread = threading.Thread(target=hold)
    thread.start()
    held.wait(10)
    threading.Timer(0.2, release.set).start()
    start = time.perf_counter()
    read = float(xp.sum(y))
    waited = time.perf_counter() - start
    assert read == pytest.approx(float(np.sum(np.exp(np.arange(3.0)) * 2 + np.arange(3))))
    assert waited >= 0.15
    thread.join()


@settings(max_examples=100, deadline=None)
@given(st.lists(step, min_size=1, max_size=25), st.integers(0, 99))
def test_reads_in_c_compute_what_materialize_computes(steps, which):
    """The same bits and the same nodes made ready, read from C and by ``materialize``."""
    results = {}
    for name in ("c", "python"):
        values, nodes = _build(steps)
        pending = [i for i, n in enumerate(nodes) if n.buffer is None]
        if not pending:
            return
        root = nodes[pending[which % len(pending)]]
        if name == "c":
            node_module.GRAPH_IN_C.read(root)
        else:
            from plaidarray.trace.materialize import materialize
            materialize([root])
        results[name] = ([n.buffer is None for n in nodes], root.buffer.tobytes())
        del values
    assert results["c"] == results["python"]


@pytest.mark.parametrize("where", ["c", "python"])
def test_array_handles_count_the_arrays_on_a_node(where):
    """``Node.arrays`` goes up as arrays are made on a node and down as they are freed,
    also when the garbage collector frees an array in a reference cycle, for the C handle
    that ``Array`` is built on as for its Python definition."""
    import gc

    from plaidarray.trace import array as array_module

    base = node_module.GRAPH_IN_C.ArrayHandle if where == "c" else array_module._ArrayHandleInPython

    class Handle(base):  # type: ignore[misc, valid-type]
        __slots__ = ("partner", "__weakref__")

    node = node_module.Node.ready(np.ones(3))
    first, second = Handle(node), Handle(node)
    assert node.arrays == 2 and first._node is node and first._base is None
    del first
    assert node.arrays == 1
    second.partner = second
    del second
    gc.collect()
    assert node.arrays == 0
    if where == "c":
        with pytest.raises(TypeError, match="expected a Node"):
            Handle(np.ones(3))


def test_an_array_freed_with_its_node_in_a_cycle_raises_nothing(monkeypatch):
    """The garbage collector may clear a node before an array on it that the same cycle
    holds; the handle then has no count left to keep, and says nothing (it once reported an
    AttributeError from every such array as an unraisable exception)."""
    import gc

    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    for order in range(40):
        node = node_module.Node("negate", (node_module.Node.ready(np.ones(2)),), {}, xp.asarray(np.ones(2))._node.shape)
        arrays = [xp.asarray(np.ones(2)) for _ in range(order % 4)] + [xp.asarray(np.ones(2))]
        arrays[-1]._rebind(node)
        node.attrs = {"cycle": arrays[-1], "order": [arrays, node][order % 2]}
        del node, arrays
    gc.collect()
    assert reported == []


# --- elementwise functions' common cases in C (``_graph.Elementwise``) ------------------

def _elementwise_in_c():
    from plaidarray.api import elementwise
    return {name: fn for name in elementwise.__all__
            if type(fn := getattr(elementwise, name)) is node_module.GRAPH_IN_C.Elementwise}


DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
          "complex64", "complex128"]
#: An operand: an array of a dtype and shape (the first argument's own, ``"same"``), or a scalar.
operand = st.one_of(
    st.tuples(st.just("array"), st.sampled_from(DTYPES), st.sampled_from([(3,), (2, 3), (), (1, 3)])),
    st.tuples(st.just("same"), st.booleans()),  # the first argument again (True) or an equal array
    st.tuples(st.just("scalar"), st.sampled_from([0, 1, -3, 2 ** 70, 0.5, -0.0, float("nan"), 1e300, True, 1j])),
)


def _make(spec, first=None):
    rng = np.random.default_rng(1)
    if spec[0] == "array":
        values = rng.uniform(-3, 3, spec[2]) + (1j * rng.uniform(-3, 3, spec[2]) if "complex" in spec[1] else 0)
        return xp.asarray(np.asarray(values).astype(spec[1]) if spec[1] != "bool" else np.asarray(values) > 0)
    if spec[0] == "same":
        return first if spec[1] or first is None else xp.asarray(np.asarray(first))
    return spec[1]


def _outcome(fn, *args):
    """What a call recorded (its graph's structure, buffers and value), or what it raised."""
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args)
            key, buffers, _, _ = to_hlo.walk([out._node]) if out._node.buffer is None else ((), [out._node.buffer], 0, 0)
            value = np.asarray(out)
    except Exception as e:  # noqa: BLE001 - the outcome compared
        return ("raised", type(e), str(e))
    return (type(out), key, [(b.dtype, b.shape, b.tobytes()) for b in buffers], out._node.weak, out._node.device,
            value.dtype, value.shape, value.tobytes())


@settings(max_examples=300, deadline=None)
@given(st.data(), operand, operand)
def test_elementwise_functions_in_c_record_what_their_python_definitions_record(data, spec1, spec2):
    functions = _elementwise_in_c()
    assert {"add", "multiply", "less", "exp", "negative", "divide"} <= set(functions)
    name = data.draw(st.sampled_from(sorted(functions)))
    fn = functions[name]
    x = _make(spec1 if spec1[0] == "array" else ("array", "float64", (3,)))
    if fn.fallback.__code__.co_argcount == 1:
        assert _outcome(fn, x) == _outcome(fn.fallback, x)
        return
    y = _make(spec2, x)
    for a, b in ((x, y), (y, x)):
        assert _outcome(fn, a, b) == _outcome(fn.fallback, a, b)


OPERATORS = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
             "__pow__", "__rpow__", "__lt__", "__ge__", "__eq__", "__ne__", "__and__", "__ror__", "__lshift__"]


@pytest.mark.parametrize("method", OPERATORS)
@settings(max_examples=25, deadline=None)
@given(operand, operand)
def test_operators_in_c_record_what_their_python_methods_record(method, spec1, spec2):
    fast = vars(xp.Array)[method]
    assert type(fast) is node_module.GRAPH_IN_C.Elementwise
    from plaidarray.trace.array import OPERATOR_FUNCTIONS
    x = _make(spec1 if spec1[0] == "array" else ("array", "float64", (2, 3)))
    y = _make(spec2, x)
    function, reflected = OPERATOR_FUNCTIONS[method]
    python = getattr(xp, function).fallback  # the Python definitions all the way
    expected = _outcome(python, y, x) if reflected else _outcome(python, x, y)
    assert _outcome(getattr(x, method), y) == expected
    assert _outcome(fast, x, y) == expected
    for unary in ("__neg__", "__abs__", "__invert__"):
        assert _outcome(getattr(x, unary)) == _outcome(getattr(xp, OPERATOR_FUNCTIONS[unary][0]).fallback, x)


INPLACE = ["__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__", "__iand__", "__ixor__",
           "__ilshift__"]


def _inplace_outcome(method, x, y):
    """What ``x <op>= y`` did: whether it gave ``x`` back, and ``x``'s new graph and value
    (``_outcome``), or what it raised and ``x``'s value, unchanged."""
    before = x._node
    try:
        out = method(x, y)
    except Exception as e:  # noqa: BLE001 - the outcome compared
        return ("raised", type(e), str(e), x._node is before)
    return (out is x, _outcome(lambda: x))


@pytest.mark.parametrize("method", INPLACE)
@settings(max_examples=25, deadline=None)
@given(operand, operand)
def test_in_place_operators_in_c_do_what_their_python_methods_do(method, spec1, spec2):
    """``x += y`` and the others rebind ``x`` as the Python method does, to the same graph,
    and refuse what it refuses (a result of another shape or dtype), leaving ``x``."""
    fast = vars(xp.Array)[method]
    assert type(fast) is node_module.GRAPH_IN_C.Elementwise
    python = fast.fallback
    spec = spec1 if spec1[0] == "array" else ("array", "float64", (2, 3))
    x, twin = _make(spec), _make(spec)
    y = _make(spec2, x)
    y_twin = twin if y is x else y
    assert _inplace_outcome(fast, x, y) == _inplace_outcome(python, twin, y_twin)


def test_the_common_in_place_cases_never_call_the_python_method_and_views_do():
    """An array of its own (no view record) with an array or Python scalar its dtype takes
    is rebound in C; a view, an array with views and a result of another dtype or shape
    go to the Python method (which checks views' writes and says what is refused)."""
    from plaidarray.api import elementwise
    Elementwise = node_module.GRAPH_IN_C.Elementwise
    iadd = Elementwise(*elementwise._C_TABLES["add"], _never, 2)
    itruediv = Elementwise(*elementwise._C_TABLES["divide"], _never, 2)
    iless = Elementwise(*elementwise._C_TABLES["less"], _never, 2)  # no operator: a result of another dtype
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    node = x._node
    assert iadd(x, 1.0) is x and x._node is not node
    assert iadd(x, xp.asarray(np.ones(3))) is x  # a row broadcast into x's shape
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(2, 3) + 2)
    ints = xp.asarray(np.arange(3))
    def fresh():
        return xp.asarray(np.arange(6.0).reshape(2, 3))
    viewed = fresh()
    for refused in ((itruediv, ints, ints), (iless, fresh(), fresh()), (iadd, xp.asarray(np.ones(3)), fresh()),
                    (iadd, viewed[0], 1.0), (iadd, viewed, 1.0)):
        with pytest.raises(AssertionError, match="Python definition was called"):
            refused[0](refused[1], refused[2])  # dtype, shape, a view, an array with views
    with pytest.raises(ValueError, match="reflected"):
        Elementwise(*elementwise._C_TABLES["negative"], _never, 2)


def _never(*args):
    raise AssertionError(f"the Python definition was called with {args}")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8", "complex128"])
def test_the_common_cases_never_call_the_python_definition(dtype):
    """Arrays of one dtype whose shapes are the same or broadcast, and an array with a
    Python scalar its dtype takes, are recorded in C (the differential tests above would
    pass with the fallback alone)."""
    from plaidarray.api import elementwise
    x = xp.asarray(np.arange(1, 7).reshape(2, 3).astype(dtype))
    y = xp.asarray(np.arange(2, 8).reshape(2, 3).astype(dtype))
    Elementwise = node_module.GRAPH_IN_C.Elementwise
    add = Elementwise(*elementwise._C_TABLES["add"], _never, False)
    radd = Elementwise(*elementwise._C_TABLES["add"], _never, True)
    less = Elementwise(*elementwise._C_TABLES["less"], _never, False) if dtype != "complex128" else None
    exp = Elementwise(*elementwise._C_TABLES["exp"], _never, False)
    expected = np.arange(1, 7).reshape(2, 3).astype(dtype)
    np.testing.assert_array_equal(np.asarray(add(x, y)), expected + expected + 1)
    np.testing.assert_array_equal(np.asarray(add(x, 2)), expected + 2)
    np.testing.assert_array_equal(np.asarray(radd(x, 2)), 2 + expected)
    if less is not None:
        np.testing.assert_array_equal(np.asarray(less(x, y)), expected < expected + 1)
    if dtype[0] in "fc":
        np.testing.assert_array_equal(np.asarray(add(x, 0.5)), expected + 0.5)
        np.testing.assert_allclose(np.asarray(exp(x)), np.exp(expected), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(add(x, xp.asarray(np.ones(3, dtype)))), expected + 1)  # broadcast
    np.testing.assert_array_equal(np.asarray(radd(xp.asarray(np.ones((2, 1), dtype)), x)), expected + 1)
    for other in (xp.asarray(np.ones(2, dtype)), xp.asarray(np.ones(3, "int8" if dtype != "int8" else "int16"))):
        with pytest.raises(AssertionError, match="Python definition was called"):
            add(x, other)  # shapes that do not broadcast, or another dtype: the Python rules


def test_elementwise_in_c_cuts_a_graph_deeper_than_the_pending_bound(monkeypatch):
    monkeypatch.setattr(node_module, "MAX_PENDING", 4)
    x = xp.asarray(np.linspace(0.0, 1.0, 5))
    y, expected = x, np.linspace(0.0, 1.0, 5)
    for _ in range(20):
        y, expected = y * 1.5 + x, expected * 1.5 + np.linspace(0.0, 1.0, 5)
        assert y._node.depth <= 2 * 4 + 1  # past the bound, the next cut may wait for its anchor (trace/cuts.py)
    np.testing.assert_allclose(np.asarray(y), expected)



def test_broadcasts_in_c_cut_a_graph_deeper_than_the_pending_bound_and_leave_traces_to_the_rules(monkeypatch):
    monkeypatch.setattr(node_module, "MAX_PENDING", 4)
    row, column = np.linspace(0.0, 1.0, 5), np.linspace(1.0, 2.0, 3).reshape(3, 1)
    y, expected = xp.asarray(row), row
    for _ in range(20):  # (5,) with (3, 1), then (3, 5) with (5,): each broadcast in turn
        y, expected = (y - xp.asarray(column)) * 0.5 + xp.asarray(row), (expected - column) * 0.5 + row
        y, expected = y[0], expected[0]
    np.testing.assert_allclose(np.asarray(y), expected)
    fn = xp.jit(lambda a, b: a * b + a)
    np.testing.assert_allclose(np.asarray(fn(xp.asarray(column), xp.asarray(row))), column * row + column)

def test_elementwise_functions_in_c_look_like_their_definitions():
    import inspect
    import pickle
    assert inspect.signature(xp.add) == inspect.signature(xp.add.fallback)
    assert str(inspect.signature(xp.exp)) == "(x: 'Array', /) -> 'Array'"
    assert xp.add.__name__ == "add" and xp.add.__doc__ == xp.add.fallback.__doc__
    assert pickle.loads(pickle.dumps(xp.multiply)) is xp.multiply
    assert pickle.loads(pickle.dumps(xp.Array.__radd__)) is xp.Array.__radd__
    x = xp.asarray(np.ones(2))
    assert x.__mul__(2.0).shape == (2,) and xp.Array.__mul__(x, x).shape == (2,)
    with pytest.raises(TypeError):
        xp.add(x)
    assert x.__add__(object()) is NotImplemented



# --- reductions' common cases in C (``_graph.Reduction``) -------------------------------

REDUCTIONS = ["sum", "prod", "max", "min", "mean", "var", "std"]
#: A reduction's keyword arguments: each drawn or left out (``_ABSENT``).
_ABSENT = object()
reduction_axis = st.sampled_from([_ABSENT, None, 0, 1, -1, 3, (0,), (1, 0), (0, 1), (0, 0), (), (-1,), True, [0], 1.0])
reduction_shape = st.sampled_from([(3,), (2, 3), (1, 4), (2, 0), (0,), (2, 3, 4), (1, 2, 1, 2, 3), ()])


def _reduction_pair(name):
    """A reduction's C path and its Python definition: the namespace's function and its
    fallback, or for ``var`` and ``std`` their first paths (a recipe replays a seen
    signature of theirs faster than C records it: only their first path is in C)."""
    from plaidarray.api import statistical
    if name in ("var", "std"):
        fast = {"var": statistical._VAR_FIRST, "std": statistical._STD_FIRST}[name]
        return fast, fast.fallback
    fn = getattr(xp, name)
    return fn, fn.fallback


reduction_correction = st.sampled_from([_ABSENT, 0, 1, 1.5, -1, 23, 2 ** 70, True, float("nan"), -1e300])


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(REDUCTIONS), st.sampled_from(["float64", "float32", "int64", "bool", "complex128"]),
       reduction_shape, reduction_axis, st.sampled_from([_ABSENT, False, True, 1]), st.booleans(),
       reduction_correction)
def test_reductions_in_c_record_what_their_python_definitions_record(name, dtype, shape, axis, keepdims, view,
                                                                     correction):
    from plaidarray.api import statistical
    fn, python = _reduction_pair(name)
    assert type(fn) is node_module.GRAPH_IN_C.Reduction
    if name in ("var", "std"):  # their C path takes a correction alone
        axis = keepdims = _ABSENT
        python = {"var": statistical._whole_var, "std": statistical._whole_std}[name]
    kwargs = {k: v for k, v in (("axis", axis), ("keepdims", keepdims), ("correction", correction))
              if v is not _ABSENT}

    def operand():  # made anew for each call: a read computes a pending view
        x = _make(("array", dtype, shape))
        return x[1:] if view and shape and shape[0] > 1 else x  # a view: the same nodes as any array's

    assert _outcome(lambda: fn(operand(), **kwargs)) == _outcome(lambda: python(operand(), **kwargs))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_reductions_common_cases_never_call_the_python_definition(dtype):
    """Floating-point arrays over all axes or some, with ``keepdims``, are recorded in C,
    a mean's division by its count too (the differential test above would pass with the
    fallback alone)."""
    from plaidarray.api import statistical
    values = np.arange(1, 25).reshape(2, 3, 4).astype(dtype)
    x = xp.asarray(values)
    shapes = {np.dtype(d): statistical._scalar_shape(np.dtype(d)) for d in ("float32", "float64")}

    def made(kind, mean=False, empty=True, variance=0):
        return node_module.GRAPH_IN_C.Reduction(kind, "mean" if mean else kind, statistical._REDUCE_ATTRS, shapes, {},
                                                statistical.NO_ATTRS, statistical._count_buffer, empty, mean,
                                                statistical.MERGED_RANK, variance, _never)

    total, mean, largest = made("add"), made("add", mean=True, empty=False), made("maximum", empty=False)
    var, std = made("add", empty=False, variance=1), made("add", empty=False, variance=2)
    np.testing.assert_allclose(np.asarray(var(x)), values.var(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(std(x, correction=1)), values.std(ddof=1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(var(x, correction=0.5)), values.var(ddof=0.5), rtol=1e-6)
    for other in (x[:1, :1, :1], x[:, :0]):  # one element: the mean is the sum; an empty one: NaN
        with pytest.raises(AssertionError, match="Python definition was called"):
            var(other)
    np.testing.assert_array_equal(np.asarray(total(x)), values.sum())
    np.testing.assert_array_equal(np.asarray(total(x, axis=(0, 2))), values.sum(axis=(0, 2)))
    np.testing.assert_array_equal(np.asarray(largest(x, axis=-1, keepdims=True)), values.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(mean(x)), values.mean(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(mean(x, axis=1, keepdims=True)), values.mean(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(total(x[:, :0])), 0.0)  # a sum of nothing: its identity
    for other in (xp.asarray(np.arange(3)), x[:, :0]):  # an integer array; an empty mean: the Python rules
        with pytest.raises(AssertionError, match="Python definition was called"):
            mean(other)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtype'"):
        total(x, dtype=xp.float64)  # any other keyword: the Python definition's


def test_reductions_in_c_cut_a_graph_deeper_than_the_pending_bound(monkeypatch):
    monkeypatch.setattr(node_module, "MAX_PENDING", 4)
    values = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    y, expected = xp.asarray(values), values
    for _ in range(20):
        y, expected = y - xp.mean(y, axis=0) * 0.5, expected - expected.mean(axis=0) * 0.5
        assert y._node.depth <= 2 * 4 + 2  # past the bound, the next cut may wait for its anchor (trace/cuts.py)
    np.testing.assert_allclose(np.asarray(y), expected)


def test_reductions_in_c_are_not_used_while_tracing():
    """A traced function's reduction is recorded by the rules (the trace's own path)."""
    values = np.arange(1.0, 7.0).reshape(2, 3)
    fn = xp.jit(lambda a: xp.mean(a, axis=1) + xp.sum(a) + xp.max(a))
    np.testing.assert_allclose(np.asarray(fn(xp.asarray(values))), values.mean(axis=1) + values.sum() + values.max())


def test_reductions_in_c_look_like_their_definitions():
    import inspect
    import pickle
    for name in ("sum", "prod", "max", "min", "mean"):
        fn = getattr(xp, name)
        assert inspect.signature(fn) == inspect.signature(fn.fallback)
        assert fn.__name__ == name and fn.__doc__ == fn.fallback.__doc__ and fn.recipes is fn.fallback.recipes
        assert pickle.loads(pickle.dumps(fn)) is fn
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    assert float(x.sum()) == 15.0 and x.mean(axis=0).shape == (3,)
    with pytest.raises(TypeError):
        xp.sum()
    with pytest.raises(TypeError):
        xp.sum(x, 0)  # axis is keyword-only



# --- matrix products' common cases in C (``_graph.Product``) ----------------------------

product_shape = st.sampled_from([(), (3,), (4,), (2, 3), (3, 4), (4, 2), (2, 2, 3), (0, 3), (3, 0), (1, 3), (3, 1)])


@settings(max_examples=300, deadline=None)
@given(product_shape, product_shape, st.sampled_from(["float64", "float32", "int64", "uint8", "complex128", "bool"]),
       st.sampled_from(["same", "float64", "int32"]), st.booleans())
def test_products_in_c_record_what_their_python_definition_records(shape1, shape2, dtype1, dtype2, reflected):
    fn = xp.matmul
    assert type(fn) is node_module.GRAPH_IN_C.Product
    dtype2 = dtype1 if dtype2 == "same" else dtype2

    def operands():
        return _make(("array", dtype1, shape1)), _make(("array", dtype2, shape2))

    assert _outcome(lambda: fn(*operands())) == _outcome(lambda: fn.fallback(*operands()))
    if reflected:
        assert _outcome(lambda: operator.matmul(*operands())) == _outcome(lambda: fn.fallback(*operands()))


@settings(max_examples=300, deadline=None)
@given(product_shape, product_shape, st.sampled_from(["float64", "float32", "int64", "uint8", "complex128", "bool"]),
       st.sampled_from(["same", "float64", "int32"]), st.sampled_from(["first", "second", "both"]))
def test_products_of_transposes_in_c_record_what_their_python_definition_records(shape1, shape2, dtype1, dtype2,
                                                                                   transposed):
    """A product of a matrix recorded as a transpose (``X.T @ v``, ``v @ Y.T``, ``X.T @ Y``,
    ``A @ B.T``) is recorded in C as ``linear_algebra._transpose_folded`` records it (the
    matrix under the transpose read in place); both transposed, and the other cases, are
    the fallback's in both."""
    fn = xp.matmul
    dtype2 = dtype1 if dtype2 == "same" else dtype2

    def operands():
        a, b = _make(("array", dtype1, shape1)), _make(("array", dtype2, shape2))
        return (a.T if transposed != "second" and a.ndim == 2 else a,
                b.T if transposed != "first" and b.ndim == 2 else b)

    assert _outcome(lambda: fn(*operands())) == _outcome(lambda: fn.fallback(*operands()))


def test_a_buffer_of_an_equal_dtype_object_leaves_the_shared_shape_builtin():
    """A buffer whose dtype is an object of its own equal to a built-in one (memory viewed
    with a dtype made anew) makes ready nodes whose shared Shape holds the built-in dtype,
    which C's recording tests by identity: the next array of those dims and dtype still
    has its product recorded in C (after a simulated GPU's test it went to Python)."""
    from plaidarray.api import linear_algebra
    odd = np.dtype("<f8", metadata={})
    assert odd == np.float64 and odd is not np.dtype(np.float64)
    assert node_module.Node.ready(np.zeros((5, 7), odd)).shape.dtype is np.dtype(np.float64)
    fast = node_module.GRAPH_IN_C.Product(*linear_algebra._PRODUCT_TABLES, _never)
    a, b = np.arange(35.0).reshape(5, 7), np.arange(14.0).reshape(7, 2)
    np.testing.assert_array_equal(np.asarray(fast(xp.asarray(a), xp.asarray(b))), a @ b)


def test_products_common_cases_never_call_the_python_definition():
    from plaidarray.api import linear_algebra
    fast = node_module.GRAPH_IN_C.Product(*linear_algebra._PRODUCT_TABLES, _never)
    a, b, v = np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2), np.arange(4.0)
    stack = np.arange(24.0).reshape(2, 3, 4)
    for x, y in ((a, b), (a, v), (v, b), (v, v), (stack, b), (stack, v), (a.astype(np.int64), b.astype(np.int64))):
        np.testing.assert_array_equal(np.asarray(fast(xp.asarray(x), xp.asarray(y))), x @ y)
    for x, y in ((b, a), (a, b.astype(np.float32)), (a[:, :0], b[:0]), (stack, stack.transpose(0, 2, 1))):
        with pytest.raises(AssertionError, match="Python definition was called"):
            fast(xp.asarray(x), xp.asarray(y))  # sizes that differ, dtypes, an empty sum, a batch: the rules
    m, w, n = np.arange(12.0).reshape(4, 3), np.arange(3.0), np.arange(8.0).reshape(2, 4)
    tm, tn = xp.asarray(m).T, xp.asarray(n).T  # a transposed matrix's products: X.T @ v, v @ Y.T, X.T @ Y, A @ B.T
    for x, y, want in ((tm, xp.asarray(v), m.T @ v), (xp.asarray(w), tm, w @ m.T), (tm, xp.asarray(b), m.T @ b),
                       (xp.asarray(a), tn, a @ n.T)):
        np.testing.assert_array_equal(np.asarray(fast(x, y)), want)
    with pytest.raises(AssertionError, match="Python definition was called"):
        fast(tm, xp.asarray(a).T)  # both transposed: the rules
    fn = xp.jit(lambda p, q: p @ q)  # while tracing: the rules
    np.testing.assert_array_equal(np.asarray(fn(xp.asarray(a), xp.asarray(b))), a @ b)

# --- joins that extend the latest in C (``_graph.Join``) --------------------------------

join_part = st.tuples(st.sampled_from([(2, 3), (1, 3), (0, 3), (2, 2), (3,), (2, 3, 1)]),
                      st.sampled_from(["float64", "float64", "float32", "int64"]), st.booleans())


def _join_scenario(first, parts, axis, wide):
    """A latest concatenation (``extended._last``) and a join of ``first`` (``"latest"``, a
    window of it, or an array of its own) and ``parts`` (shape, dtype, pending), made anew:
    the same state for the C path and its fallback. The latest is returned too: a view
    does not keep its root alive, and a loop's ``buf[1:]`` has ``buf`` still."""
    from plaidarray.api import extended
    extended.forget()
    rng = np.random.default_rng(2)

    def made(shape, dtype, pending):
        a = xp.asarray(rng.uniform(-3, 3, shape).astype(dtype))
        return a + a if pending else a

    latest = xp.concat([made((1, 3), "float64", True), made((1, 3), "float64", True)], axis=0)
    head = latest if first == "latest" else latest[1:] if first == "window" else made((2, 3), "float64", True)
    arrays = [head, *(made(*part) for part in parts)] * (5 if wide else 1)
    return arrays, {} if axis == "default" else {"axis": axis}, latest


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["latest", "window", "own"]), st.lists(join_part, min_size=0, max_size=3),
       st.sampled_from(["default", 0, 1, -1, -2, 2, None, True, 1.0]), st.booleans(), st.booleans())
def test_joins_in_c_record_what_their_python_definition_records(first, parts, axis, wide, as_tuple):
    fn = xp.concat
    assert type(fn) is node_module.GRAPH_IN_C.Join

    def call(how):
        arrays, kwargs, latest = _join_scenario(first, parts, axis, wide)
        return how(tuple(arrays) if as_tuple else arrays, **kwargs)

    assert _outcome(lambda: call(fn)) == _outcome(lambda: call(fn.fallback))


def test_joins_that_extend_or_slide_the_latest_never_call_the_python_definition():
    """A loop's ``h = concat([h, row])`` and ring buffer's ``concat([buf[1:], x])`` are
    recorded in C, and neither is remembered (``extended.py``): a window of the latest
    result is new at each step. Joins that start with anything else, or that the rules
    or a copy take, are the fallback's, as are joins while tracing."""
    from plaidarray.api import extended, manipulation

    def never(*args, **kwargs):
        _never(*args, *kwargs.items())

    fast = node_module.GRAPH_IN_C.Join(manipulation._JOIN_ATTRS, vars(extended), manipulation.JOIN_OPERANDS, never)
    rows = np.arange(24.0).reshape(8, 3)
    extended.forget()
    h = xp.concat([xp.asarray(rows[:1]) * 1.0, xp.asarray(rows[1:2]) * 1.0])  # the latest, by the definition
    for i in range(2, 8):
        h = fast([h, xp.asarray(rows[i:i + 1]) * 1.0], axis=0)
    np.testing.assert_array_equal(np.asarray(h), rows)
    stream = np.arange(40.0)
    buf = xp.concat([xp.zeros(4) + 0.0, xp.asarray(stream[:1]) + 0.0])
    remembered = list(extended._recent)
    for i in range(1, 40):  # past the pending bound: windows of a computed buffer too
        buf = fast((buf[1:], xp.asarray(stream[i:i + 1]) * 1.0))
    np.testing.assert_array_equal(np.asarray(buf), stream[-5:])
    slid = xp.concat([buf[1:], xp.asarray(stream[:1]) * 1.0])  # the definition's path: not remembered either
    assert list(extended._recent) == remembered and np.asarray(slid).tolist() == [*stream[-4:], 0.0]
    latest, pending = xp.concat([xp.ones((1, 3)) * 2.0, xp.ones((1, 3)) * 3.0]), xp.ones((1, 3)) * 4.0
    for arrays, kwargs in (([xp.ones((1, 3)) * 5.0, pending], {}),  # another first operand
                           ([latest, latest + 1.0], {"axis": None}), ([latest, pending.astype(xp.float32)], {}),
                           ([latest, xp.ones((0, 3)) * 1.0], {}), ([latest, xp.ones((1, 2)) * 1.0], {}),
                           ([latest, pending], {"axis": 2}), ([latest, *[pending] * 8], {}), ([latest], {}),
                           ([latest, pending], {"where": 0})):
        with pytest.raises(AssertionError, match="Python definition was called"):
            fast(arrays, **kwargs)
    computed = xp.concat([latest, pending])
    np.asarray(computed)
    with pytest.raises(AssertionError, match="Python definition was called"):
        fast([computed, xp.asarray(rows[:1])])  # both ends computed: perhaps copied now
    a, b, c = (xp.ones((1, 3)) * k for k in (1.0, 2.0, 3.0))
    xp.concat([a, b])
    latest = xp.concat([xp.concat([a, b]), c])  # remembered: ``[a, b]`` starts it
    xp.concat([a, b, c])
    with pytest.raises(AssertionError, match="Python definition was called"):
        fast([latest, c])  # not remembered itself, but a remembered join may start with its first operand
    traced = xp.jit(lambda p, q: xp.concat([p, q]))  # while tracing: the definition
    np.testing.assert_array_equal(np.asarray(traced(xp.asarray(rows[:2]), xp.asarray(rows[2:3]))), rows[:3])

# --- windows' common cases in C (``_graph.Window``) -------------------------------------

_bound = st.one_of(st.none(), st.integers(-7, 7), st.just(True), st.just(2 ** 70))
window_part = st.one_of(st.integers(-6, 6), st.builds(slice, _bound, _bound, st.sampled_from([None, 1, 2, -1, True])),
                        st.sampled_from([None, Ellipsis, 1.0, np.int64(1)]))
window_key = st.one_of(window_part, st.lists(window_part, max_size=6).map(tuple))


def _getitem_outcome(make, key, in_c):
    """What ``x[key]`` records and shows (``_outcome``), and the view it makes: its steps,
    and the base's value after a write through it; ``in_c`` False asks the Python path."""
    from plaidarray.api import views
    saved = views._WINDOW_IN_C
    if not in_c:
        views._WINDOW_IN_C = None
        node_module.GRAPH_IN_C.use_window(None)
    try:
        made = []
        outcome = _outcome(lambda: made.append(make()) or made[0][key])
        x = make()
        out = x[key]
    except Exception as e:  # noqa: BLE001 - the outcome compared
        return ("raised", type(e), str(e))
    finally:
        views._WINDOW_IN_C = saved
        node_module.GRAPH_IN_C.use_window(saved)
    record = out._base
    steps = getattr(record, "steps", None)
    family = getattr(record, "family", None)
    shared = family is not None and family is (x._base.family if type(x._base) is type(record) else x._base)
    kept = family is not None and any(ref() is out for ref in family.views)
    described = (type(record).__name__, shared, kept, getattr(record, "writable", None),
                 getattr(record, "_layout", None), getattr(record, "held", None))
    if steps and getattr(record, "writable", False) and out.ndim:
        out[...] = -1.0
    return outcome, steps, described, np.asarray(x).tobytes()


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([(6,), (3, 4), (2, 3, 4), (1, 2, 2, 3), (2, 1, 2, 2, 3), (0, 3), ()]), window_key,
       st.sampled_from(["computed", "view", "pending"]))
def test_windows_in_c_record_what_their_python_definitions_record(shape, key, of):
    """``x[key]`` of unit-step slices and ints is recorded in C as ``views._window``
    records it (nodes, value, view steps, writes through it), an element of a pending
    array as ``indexing.integer_index`` records it (no view); other keys are the Python
    path's in both."""
    values = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)

    def make():
        x = xp.asarray(values)
        if of == "pending":
            return x + 0.0
        return x[1:] if of == "view" and shape and shape[0] > 1 else x

    assert _getitem_outcome(make, key, True) == _getitem_outcome(make, key, False)


def test_windows_in_c_record_common_keys_without_the_python_path(monkeypatch):
    """A loop's windows (``x[i:j]``, ``x[i:j, k]``, ``x[k, i:]``) are recorded in C: the
    test above would pass with the Python path alone."""
    from plaidarray.api import views
    monkeypatch.setattr(views, "_window", _never)
    monkeypatch.setattr(views, "_getitem_rules", _never)
    values = np.arange(24.0).reshape(4, 6)
    x = xp.asarray(values)
    for key in (slice(1, 3), (slice(None, 2), 3), (2, slice(1, None)), (slice(-3, None), slice(2, 5))):
        np.testing.assert_array_equal(np.asarray(x[key]), values[key])
    window = x[1:3]
    window[0, 0] = 100.0  # a view: the write reaches its base
    assert float(x[1, 0]) == 100.0


def test_rows_in_c_are_views_recorded_without_the_python_path(monkeypatch):
    """A row ``x[i]`` (ints for some leading axes) is a window in C too: ~2 us, against
    4 us by ``indexing.integer_index`` and the view's attaching in Python."""
    from plaidarray.api import indexing, views
    monkeypatch.setattr(views, "_getitem_rules", _never)
    monkeypatch.setattr(indexing, "integer_index", _never)
    values = np.arange(24.0).reshape(2, 3, 4)
    x = xp.asarray(values)
    for key in (1, -1, (0, 2), (1, -3)):
        np.testing.assert_array_equal(np.asarray(x[key]), values[key])
    row = (x + 0.0)[1]
    np.testing.assert_array_equal(np.asarray(row), values[1])
    row = x[1]
    row[0, 0] = 100.0  # a view: the write reaches its base
    assert float(x[1, 0, 0]) == 100.0


def test_elements_of_pending_arrays_in_c_are_copies_recorded_without_the_python_path(monkeypatch):
    """An element of a pending array (``sort(x)[n // 2]``) is recorded in C as
    ``indexing.integer_index`` records it, ~0.5 us against 2.1: not a view (a later write
    to the array leaves it as it was, as NumPy's scalar); an element of a pending view is
    the Python path's (``views.element_copy`` copies it out of a computed root)."""
    from plaidarray.api import indexing, views
    values = np.arange(24.0).reshape(2, 3, 4)
    pending = xp.asarray(values) + 1.0
    monkeypatch.setattr(views, "_getitem_rules", _never)
    monkeypatch.setattr(indexing, "integer_index", _never)
    elements = [pending[key] for key in ((1, 2, 3), (-1, 0, -4), (0, -3, 1))]
    assert all(e._base is None and e.shape == () for e in elements)
    pending[1, 2, 3] = -5.0  # the array written after: the element read before keeps its value
    assert [float(e) for e in elements] == [values[1, 2, 3] + 1, values[-1, 0, -4] + 1, values[0, -3, 1] + 1]
    with pytest.raises(AssertionError, match="Python definition was called"):
        (xp.asarray(values) + 1.0)[1][2, 3]  # an element of a pending view


def _python_stores(monkeypatch) -> list:
    """The keys of the stores ``Array._store`` (Python's) makes from now on, as a list."""
    from plaidarray.trace.array import Array
    stores: list = []
    store = Array._store
    monkeypatch.setattr(Array, "_store", lambda self, key, value: stores.append(key) or store(self, key, value))
    return stores


def test_a_root_stored_from_its_own_view_apart_from_the_block_stores_in_c(monkeypatch):
    """``m[i] = m[j]`` (a row swap's store), whose value is the root's one live view and
    lies apart from the block, is stored in C as Python's store would store it (no other
    view to refresh); a view that covers the block (``m[0] = m[:, 1]`` of a square matrix)
    or another live view takes Python's store, which refreshes the views as NumPy's show
    the store."""
    values = np.arange(16.0).reshape(4, 4)
    m, expected = xp.asarray(values) + 0.0, values.copy()
    m[0, 0] = 0.5  # computed, its buffer its own
    expected[0, 0] = 0.5
    stores = _python_stores(monkeypatch)
    m[1] = m[3]
    m[-1] = m[0]
    expected[1], expected[-1] = expected[3], expected[0]
    assert stores == []
    column = m[:, 1]  # covers every row
    m[0] = column
    expected[0] = expected[:, 1].copy()
    row = m[2]
    m[1] = m[3]  # apart from the block, but not the only view
    expected[1] = expected[3]
    assert stores == [0, 1]
    np.testing.assert_array_equal(np.asarray(column), expected[:, 1])
    np.testing.assert_array_equal(np.asarray(row), expected[2])
    np.testing.assert_array_equal(np.asarray(m), expected)


def test_a_row_keyed_with_a_whole_axis_slice_stores_in_c_as_the_row(monkeypatch):
    """``m[i, :] = m[j, :]`` and ``t[i, j, :] = v`` are the stores of ``m[i] = m[j]`` and
    ``t[i, j] = v`` (``Array._store`` drops a trailing whole-axis slice from its key): C
    stores them in place, as it stores the row (~22 us a store through Python against ~8),
    and a whole-axis slice alone (``x[:] = v``) as a block of the whole array; a view of the
    array stored into part of an axis is still Python's, and so is a value whose view covers
    the block."""
    values = np.arange(75.0).reshape(3, 5, 5)
    t, expected = xp.asarray(values) + 0.0, values.copy()
    square, squared = xp.asarray(values[0]) + 0.0, values[0].copy()
    flat = xp.asarray(np.arange(6.0)) + 0.0
    for computed in (t, square, flat):
        computed[(0,) * computed.ndim] = 0.5  # computed, its buffer its own
    expected[0, 0, 0] = squared[0, 0] = 0.5
    stores = _python_stores(monkeypatch)
    t[1, :] = t[2, :]
    t[0, 3, :] = t[2, 1, :]
    t[2, -1, 0:5] = 7.0
    expected[1], expected[0, 3], expected[2, -1] = expected[2], expected[2, 1], 7.0
    assert stores == []
    t[0, 1, 1:] = t[0, 2, 1:]  # part of an axis
    expected[0, 1, 1:] = expected[0, 2, 1:]
    flat[:] = 2.0
    square[1, :] = square[:, 1]  # covers an element of the block
    squared[1] = squared[:, 1].copy()
    assert stores == [(0, 1, slice(1, None)), (1, slice(None))]
    np.testing.assert_array_equal(np.asarray(t), expected)
    np.testing.assert_array_equal(np.asarray(flat), np.full(6, 2.0))
    np.testing.assert_array_equal(np.asarray(square), squared)


def test_blocks_of_slices_and_steps_store_in_c_as_numpy_stores_them(monkeypatch):
    """A stencil's ``g[1:-1, 1:-1] = v``, a column's ``m[:, j] = v``, stepped and reversed
    slices (``x[::2]``, ``m[3:0:-2, 1:]``) and a slice before an int store in place in C
    (~1 us a store, where Python's store took ~7.5) into an array that alone holds its
    buffer, of a scalar or a computed array of the block's shape, as NumPy stores them; a
    key with ``...``, a step of 0 or a value of another shape is still Python's (which
    raises, or records the update), as is a store into an array others see."""
    values = np.arange(30.0).reshape(5, 6)
    m, expected = xp.asarray(values) + 0.0, values.copy()
    m[0, 0] = 0.5  # computed, its buffer its own
    expected[0, 0] = 0.5
    stores = _python_stores(monkeypatch)
    keys = [np.s_[1:-1, 1:-1], np.s_[:, 2], np.s_[::2], np.s_[3:0:-2, 1:], np.s_[1:4, -1], np.s_[:, ::-3],
            np.s_[4:2, :]]
    for n, key in enumerate(keys):
        block = expected[key].shape
        given = np.arange(float(n), n + np.prod(block)).reshape(block)
        m[key] = xp.asarray(given) if n % 2 else float(n)
        expected[key] = given if n % 2 else float(n)
    assert stores == []
    m[..., 1] = 9.0
    expected[..., 1] = 9.0
    with pytest.raises(ValueError):
        m[::0] = 1.0
    m[1:3] = xp.asarray(np.ones(6))  # broadcast: the update
    expected[1:3] = 1.0
    reader, before = m * 2.0, expected.copy()
    m[:, 0] = -1.0  # a pending reader sees the buffer: Python's store, into a copy
    expected[:, 0] = -1.0
    assert len(stores) == 4
    np.testing.assert_array_equal(np.asarray(m), expected)
    np.testing.assert_array_equal(np.asarray(reader), before * 2.0)


def _window_in_c(attach):
    """A ``_graph.Window`` as ``api.views`` makes it, calling ``attach`` where it attaches in Python."""
    from plaidarray.api import graph, indexing, views
    return node_module.GRAPH_IN_C.Window(
        indexing._SLICES, indexing.slice_plan, indexing._INDEX_BUFFERS, indexing._index_node(0).shape,
        indexing._index_node, attach, graph.MERGED_RANK, views.ViewOf, views.Family, views.Index, indexing._WINDOWS_MAX)


def test_windows_in_c_attach_views_as_attach_does_and_leave_the_rest_to_it():
    """A window is made a view in C: the record ``trace.views.attach`` makes (the family,
    made by its type for a root windowed first; the steps with ``Index(key)``, writable, no
    layout yet), the view in the family's list, a write through it reaching the root. A
    family whose list is due for its pruning is pruned in C as ``Family.add`` prunes it
    (the dead references dropped, ``prune_at`` twice the live ones, at least 8), except
    where its views' bounds are worked out: their rows move with the list in ``attach``."""
    from plaidarray.api import views
    calls = []

    def counted(x, out, key):
        calls.append(key)
        return views._attach_window(x, out, key)

    fast = _window_in_c(counted)
    values = np.arange(24.0).reshape(4, 6)
    x = xp.asarray(values)
    assert x._base is None
    first = fast(x, slice(1, 3))
    assert calls == [] and type(x._base) is views.Family  # the family is made in C, by its type
    assert x._base.root() is x and x._base.shape == (4, 6) and x._base.dtype == np.float64
    window = fast(x, (slice(0, 2), slice(1, 4)))
    row = fast(first, 1)
    assert calls == []  # all attached in C
    for out, steps in ((first, (views.Index(slice(1, 3)),)), (window, (views.Index((slice(0, 2), slice(1, 4))),)),
                       (row, (views.Index(slice(1, 3)), views.Index(1)))):
        record = out._base
        assert type(record) is views.ViewOf and record.family is x._base and record.steps == steps
        assert record.writable is True and record._layout is None and record.held is None
        assert any(ref() is out for ref in x._base.views)
    np.testing.assert_array_equal(np.asarray(row), values[2])
    row[3] = -5.0
    window[0, 0] = -7.0
    expected = values.copy()
    expected[2, 3], expected[0, 1] = -5.0, -7.0
    np.testing.assert_array_equal(np.asarray(x), expected)
    for k in range(2):  # pruned in C; then, with bounds worked out, by ``Family.add``
        y = xp.asarray(values)
        kept = [fast(y, (slice(None), slice(0, j))) for j in range(1, 6)]
        family = y._base
        dead = weakref.ref(xp.asarray(values))
        assert dead() is None
        family.views[1:1] = [dead] * (family.prune_at - len(family.views))
        if k:
            family.overlapping(0, 0)
        newest = fast(y, slice(0, 1))
        assert calls == [slice(0, 1)] * k
        assert [id(ref()) for ref in family.views] == [id(v) for v in (*kept, newest)] and family.prune_at == 10
        if k:
            assert family.known == len(kept) and family.bounds[:len(kept)].tolist() == [[0, 17 + j] for j in range(1, 6)]


def test_windows_of_a_read_only_view_are_read_only_in_c_too():
    from plaidarray.api import views
    fast = _window_in_c(views._attach_window)
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    spread = xp.broadcast_to(x[0], (2, 4))
    assert spread._base.writable is False
    out = fast(spread, slice(0, 1))
    assert out is not None and out._base.writable is False
    with pytest.raises(ValueError, match="read-only"):
        out[0, 0] = 1.0


def test_windows_in_c_are_not_used_while_tracing():
    values = np.arange(12.0).reshape(3, 4)
    fn = xp.jit(lambda a: a[1:3] * 2.0 + a[0, :])
    np.testing.assert_array_equal(np.asarray(fn(xp.asarray(values))), values[1:3] * 2.0 + values[0, :])

def _described(node, inputs):
    """A node's slots, with its operands as their places in ``inputs``, its buffer as the
    memory it shows (a window of a ready buffer is a view made at each replay) and its
    serial left out."""
    slots = _slots(node)
    slots.pop("serial")
    buffer = slots["buffer"]
    if isinstance(buffer, np.ndarray):
        slots["buffer"] = (buffer.__array_interface__["data"], buffer.shape, buffer.strides, buffer.dtype)
    slots["operands"] = tuple(inputs.index(o) for o in node.operands)
    return slots


def test_c_ready_nodes_equal_python_ready_nodes():
    buffer = np.arange(3.0)
    shape = node_module.Node.ready(buffer).shape
    made_in_c = node_module.GRAPH_IN_C.ready(buffer, shape, None)
    made_in_python = node_module._ready_in_python(buffer, shape, None)
    assert type(made_in_c) is node_module.Node
    assert _described(made_in_c, []) == _described(made_in_python, [])
    assert made_in_c.buffer is buffer and made_in_c.attrs is not made_in_python.attrs
    with pytest.raises(TypeError, match="ready"):
        node_module.GRAPH_IN_C.ready(buffer, (3,), None)


def test_c_replay_makes_the_nodes_python_replay_makes():
    from plaidarray.api import recipes
    x = xp.asarray(np.arange(24.0).reshape(4, 6))
    calls = [lambda: x[1:3], lambda: x[:, 2:5], lambda: xp.mean(x, axis=0), lambda: xp.std(x),
             lambda: xp.concat([x, x]), lambda: x @ xp.matrix_transpose(x), lambda: xp.flip(x, axis=1)]
    for call in calls:
        for _ in range(3):  # a recipe is kept at a signature's first call, and replayed after
            call()
    found = [r for table in recipes._TABLES for r in table.values() if isinstance(r, recipes.Recipe) and r.steps]
    assert any(step[0] is None for r in found for step in r.steps)  # ready buffers among the steps
    assert any(type(step[1]) is tuple for r in found for step in r.steps)  # ops of several operands
    for recipe in found:
        inputs = [x._node] * recipe.inputs + list(recipe.shared)
        in_c, in_python = list(inputs), list(inputs)
        node_module.GRAPH_IN_C.replay(recipe.steps, in_c)
        recipes._replay_in_python(recipe.steps, in_python)
        assert [_described(n, in_c) for n in in_c[len(inputs):]] == \
               [_described(n, in_python) for n in in_python[len(inputs):]]
    with pytest.raises(IndexError, match="not made yet"):
        node_module.GRAPH_IN_C.replay((("negate", 5, {}, x._node.shape),), [x._node])
    with pytest.raises(TypeError, match="a step is"):
        node_module.GRAPH_IN_C.replay((("negate", 0),), [x._node])


def _same(a, b) -> bool:
    """Whether two captures' answers hold the same objects: their tuples alike, ints and
    strings equal, anything else (nodes, attributes, shapes, buffers) the same object."""
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if type(a) in (int, str) and type(b) is type(a):
        return a == b
    return a is b


def test_c_made_steps_equal_python_made_steps(monkeypatch):
    """What a recipe makes (``made_steps``), found in C and in Python at every capture of
    calls of every kind: views, ready buffers, ops of several operands, shared scalars,
    results of several arrays, an argument given twice; and the walks that keep none."""
    from plaidarray.api import recipes
    answers = []

    def both(results, nodes, first):
        in_c = node_module.GRAPH_IN_C.made_steps(results, nodes, first)
        answers.append((in_c, recipes._made_steps_in_python(results, nodes, first)))
        return in_c

    monkeypatch.setattr(recipes, "made_steps", both)
    recipes.forget()
    x = xp.asarray(np.arange(24.0).reshape(4, 6))
    square = xp.asarray(np.eye(3) * 2.0 + 0.5)
    ints = xp.asarray(np.arange(6, dtype=np.int32))
    elsewhere = xp.asarray(np.eye(3) + 0.5, device=xp.__array_namespace_info__().devices()[1])
    calls = [lambda: x[1:3], lambda: x[:, 2:5], lambda: xp.mean(x, axis=0), lambda: xp.std(x),
             lambda: xp.concat([x, x]), lambda: x @ xp.matrix_transpose(x), lambda: xp.flip(x, axis=1),
             lambda: xp.linalg.qr(square), lambda: xp.linalg.eigh(square), lambda: xp.linspace(0.0, 1.0, 7),
             lambda: xp.arange(1.5, 7.0, 0.5),
             lambda: xp.where(x > 3.0, x, 0.5), lambda: ints + x[0], lambda: xp.eye(4), lambda: xp.stack([x, x]),
             lambda: xp.clip(x, 1.0, 5.0), lambda: xp.linalg.slogdet(square), lambda: xp.cumulative_sum(x, axis=1),
             lambda: xp.linalg.matrix_power(elsewhere, 0), lambda: xp.linalg.inv(elsewhere)]
    for call in calls:
        for _ in range(2):  # a recipe is kept at a signature's first call, and replayed at its second
            call()
    kept = [in_c for in_c, _ in answers if in_c is not None]
    assert len(kept) >= 10  # some calls are recorded in C, keeping no recipe
    assert any(step[0] is None for _, steps, _ in kept for step in steps)  # ready buffers among the steps
    assert any(type(step[1]) is tuple for _, steps, _ in kept for step in steps)  # ops of several operands
    assert any(shared for shared, _, _ in kept) and any(len(numbers) > 1 for _, _, numbers in kept)
    assert any(len(step) == 5 for _, steps, _ in kept for step in steps)  # an op its code put on a device
    for in_c, in_python in answers:
        assert _same(in_c, in_python)
    y = x * 2.0
    z = y + x
    weak = xp.asarray(np.float64(2.0))
    weak._node.weak = True
    made = node_module.GRAPH_IN_C.made_steps
    for results, nodes, first in [([z._node], [x._node], y._node.serial + 1), ([z._node], [x._node, x._node], 0),
                                  ([z._node, y._node], [x._node], y._node.serial), ([weak._node], [], 0),
                                  ([x._node], [], 0), ([x._node], [x._node], 0), ([z._node], [y._node], 0)]:
        assert _same(made(results, nodes, first), recipes._made_steps_in_python(results, nodes, first))
    assert made([z._node], [x._node], y._node.serial + 1) is None
    shared, steps, numbers = made([z._node], [x._node, x._node], 0)
    assert len(shared) == 1 and [step[0] for step in steps] == ["multiply", "add"]
    assert numbers == (4,)  # after both arguments, 2.0's broadcast and y
    with pytest.raises(TypeError, match="made_steps"):
        made((z._node,), [x._node], 0)
    with pytest.raises(TypeError, match="Node"):
        made([z._node], [1], 0)


def _pool():
    """Arrays a call may take: plain ones, one twice, a view, and a weakly typed one."""
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    weak = xp.asarray(np.float64(2.0))
    weak._node.weak = True
    return [x, xp.asarray(np.arange(3, dtype=np.int32)), x[0], weak]


leaf = st.one_of(
    st.integers(-5, 2 ** 70), st.booleans(), st.sampled_from([0.0, -0.0, 1.5, float("nan"), float("inf"), 1e-300]),
    st.sampled_from([1j, complex(0.0, -0.0), complex(float("nan"), 1.0), 2.5 + 1j]), st.text(max_size=3), st.none(), st.just(...),
    st.sampled_from([np.dtype("float32"), np.dtype("int64"), int, float, np.float64(1.0), np.ones(2)]),
    st.integers(0, 3).map(lambda i: ("pool", i)),
    st.tuples(st.none() | st.integers(-3, 3), st.none() | st.integers(-3, 3), st.none() | st.integers(1, 2)).map(
        lambda t: slice(*t)),
)
argument = st.recursive(leaf, lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple),
                        max_leaves=12)


def _resolved(value, pool):
    if type(value) is tuple and len(value) == 2 and type(value[0]) is str and value[0] == "pool":
        return pool[value[1]]
    if type(value) in (list, tuple):
        return type(value)(_resolved(v, pool) for v in value)
    return value


def _nested(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


@settings(max_examples=300, deadline=None)
@given(st.lists(argument, max_size=4), st.dictionaries(st.sampled_from(["axis", "keepdims", "dtype"]), argument,
                                                       max_size=2))
def test_c_signatures_equal_python_signatures(args, kwargs):
    from plaidarray.api import recipes
    pool = _pool()
    args, kwargs = _resolved(tuple(args), pool), {k: _resolved(v, pool) for k, v in kwargs.items()}
    arrays_c, nodes_c, arrays_py, nodes_py = [], [], [], []
    got = node_module.GRAPH_IN_C.signature(args, kwargs, arrays_c, nodes_c)
    expected = recipes._signature(args, kwargs, arrays_py, nodes_py)
    assert got == expected and (got is None or [type(k) for k in got] == [type(k) for k in expected])
    assert [id(a) for a in arrays_c] == [id(a) for a in arrays_py]
    assert [id(n) for n in nodes_c] == [id(n) for n in nodes_py]


def test_c_signatures_of_deep_nesting_and_bad_calls():
    from plaidarray.api import recipes
    for depth in (7, 8, 9, 10):
        for args in ((_nested(depth),), (slice(None, _nested(depth)),)):
            assert node_module.GRAPH_IN_C.signature(args, {}, [], []) == recipes._signature(args, {}, [], [])
    assert recipes._signature((_nested(recipes.MAX_NESTING + 1),), {}, [], []) is None
    with pytest.raises(TypeError, match="signature"):
        node_module.GRAPH_IN_C.signature([1], {}, [], [])


def test_scalar_operands_are_found_again_in_c():
    """``x * 0.5`` finds the reused node of 0.5 at x's shape in C's own table, also after
    the dictionary scalar_operand keeps them in was emptied; other values, signs and types
    are other nodes, and many scalars in turn all give their own values."""
    from plaidarray.api import graph
    x = xp.asarray(np.arange(4.0))
    first = (x * 0.5)._node.operands[1]
    assert first.reused is not None
    graph.REUSED_SCALARS.clear()
    assert (x * 0.5)._node.operands[1] is first
    assert (x * -0.0)._node.operands[1] is not (x * 0.0)._node.operands[1]
    assert np.asarray(x * -0.0).tobytes() == (np.arange(4.0) * -0.0).tobytes()
    ints = xp.asarray(np.arange(4))
    assert (ints + 1)._node.operands[1] is not (x + 1)._node.operands[1]
    for i in range(300):
        value = float(i % 150) * (1 if i < 150 else -1)
        np.testing.assert_array_equal(np.asarray(x * value), np.arange(4.0) * value)
        np.testing.assert_array_equal(np.asarray(ints + i), np.arange(4) + i)
    with pytest.raises(OverflowError):
        ints + 2 ** 70


def test_a_scalar_operand_of_a_0d_array_is_a_node_of_its_own_sharing_the_values_buffer():
    """``a + 0.5`` of a 0-d array (an element read in a loop): the scalar is a ready node of
    its own at each use (so ``a + 0.5 > 0.5`` and ``a + 0.5 > 0.8`` have one structure,
    two parameters), holding the buffer of the value's reused 0-d node, found again in C;
    -0.0 and 0.0, an int and a float, are values of their own, and many scalars in turn
    all give their own values."""
    from plaidarray.api import graph
    from plaidarray.trace.to_hlo import walk_pending
    a, ints = xp.asarray(np.array(0.25)), xp.asarray(np.array(3))
    first, second = (a + 0.5)._node.operands[1], (a + 0.5)._node.operands[1]
    assert first is not second and first.buffer is second.buffer and first.reused is None
    assert (a * -0.0)._node.operands[1].buffer is not (a * 0.0)._node.operands[1].buffer
    assert (ints + 1)._node.operands[1].buffer.dtype == np.int64
    same, other = a + 0.5 > 0.5, a + 0.5 > 0.8
    assert walk_pending([same._node])[0] == walk_pending([other._node])[0]
    assert bool(same) and not bool(other)
    graph.REUSED_SCALARS.clear()
    for i in range(300):
        value = float(i % 150) * (1 if i < 150 else -1)
        assert np.asarray(a * value).tobytes() == (np.float64(0.25) * value).tobytes()
        assert int(ints + i) == 3 + i
    assert len(graph.REUSED_SCALARS) <= graph.REUSED_SCALARS_MAX
    with pytest.raises(OverflowError):
        ints + 2 ** 70


def test_a_new_scalar_value_is_made_in_c_as_scalar_operand_makes_it():
    """``x / n`` for an ``n`` not met before: C makes the value's 0-d node (a 0-d array of
    the dtype, entered in the reused scalars under the value's key, ``graph.MADE_IN_C``)
    and spreads it, the broadcast as ``scalar_operand`` makes it, without its Python path,
    which entered the broadcast too; at a 0-d shape the operand holds the value's buffer.
    The values are NumPy's, an int past int64's range still raises OverflowError for an
    int64 array and takes float64's rounding for a float64 one."""
    from plaidarray.api import graph
    from plaidarray.hlo.shape import Shape

    x, ints, zero_d = xp.asarray(np.arange(4.0)), xp.asarray(np.arange(4)), xp.asarray(np.array(0.25))
    graph.REUSED_SCALARS.clear()
    for value, array, dtype in ((1234.5, x, np.float64), (77, x, np.float64), (91, ints, np.int64)):
        hexed = value.hex() if type(value) is float else None
        spread = (array * value)._node.operands[1]
        scalar = graph.REUSED_SCALARS[type(value), value, hexed, np.dtype(dtype)]
        assert spread.operands[0] is scalar and scalar.shape == Shape((), np.dtype(dtype))
        assert scalar.buffer.shape == () and scalar.buffer.dtype == dtype and scalar.buffer == value
        assert (type(value), value, hexed, (4,), np.dtype(dtype)) not in graph.REUSED_SCALARS
        python = graph.scalar_operand(value, array._node.shape, "test")
        assert (spread.op, spread.attrs, spread.shape, spread.reused) == (python.op, python.attrs, python.shape,
                                                                         python.reused)
    operand = (zero_d + 4321.25)._node.operands[1]
    assert operand.buffer is graph.REUSED_SCALARS[float, 4321.25, (4321.25).hex(), np.dtype(np.float64)].buffer
    for k in range(300, 600):
        assert np.asarray(x / k).tobytes() == (np.arange(4.0) / k).tobytes()
        assert np.asarray(ints + k).tobytes() == (np.arange(4) + k).tobytes()
        assert float(zero_d * (k + 0.5)) == 0.25 * (k + 0.5)
    assert len(graph.REUSED_SCALARS) <= graph.REUSED_SCALARS_MAX
    with pytest.raises(OverflowError):
        ints + 2 ** 63
    assert np.asarray(x * 2 ** 70).tobytes() == (np.arange(4.0) * 2.0 ** 70).tobytes()


def test_a_scalar_met_at_a_new_size_is_spread_in_c_as_scalar_operand_spreads_it():
    """At a new shape, C spreads the value's 0-d node itself: the same op, attributes,
    shape and ``reused`` mark as ``graph.scalar_operand``'s broadcast, and the table of
    reused scalars does not grow with each new length (it took scalar_operand's Python
    path, 3 us, and added an entry a length)."""
    from plaidarray.api import graph
    from plaidarray.hlo.shape import Shape

    x = xp.asarray(np.arange(60.0))
    assert (x[:3] * 2.5)._node.operands[1].operands[0].buffer is not None  # the value's 0-d node, made once
    before = len(graph.REUSED_SCALARS)
    spread = [(x[:n] * 2.5)._node.operands[1] for n in range(10, 50)]
    assert len(graph.REUSED_SCALARS) == before
    python = graph.scalar_operand(2.5, Shape((49,), np.dtype(np.float64)), "test")
    made = spread[-1]
    assert made is not python and made.operands[0] is python.operands[0]
    assert (made.op, made.attrs, made.shape, made.reused) == (python.op, python.attrs, python.shape, python.reused)
    for n in (10, 33, 49):
        np.testing.assert_array_equal(np.asarray(x[:n] * 2.5), np.arange(60.0)[:n] * 2.5)


def test_a_scalar_met_at_a_new_size_broadcasts_the_value_it_made_before():
    """``w - 1.0`` on windows of new lengths: each length's broadcast of 1.0 is a node of
    its own, of the one 0-d value of 1.0 (but -0.0 and 0.0, and an int and a float, are
    values of their own), and each window computes its own difference."""
    from plaidarray.api import graph
    graph.REUSED_SCALARS.clear()  # not emptied at its bound between the three
    values = np.linspace(-1.0, 1.0, 40)
    x = xp.asarray(values)
    broadcasts = [(x[:n] - 1.0)._node.operands[1] for n in (5, 6, 7)]
    assert len({id(b) for b in broadcasts}) == 3
    assert len({id(b.operands[0]) for b in broadcasts}) == 1
    assert (x[:8] * 0.0)._node.operands[1].operands[0] is not (x[:8] * -0.0)._node.operands[1].operands[0]
    ints = xp.asarray(np.arange(9))
    assert (ints[:3] + 1)._node.operands[1].operands[0] is not (x[:3] + 1)._node.operands[1].operands[0]
    for n in range(2, 40, 3):
        np.testing.assert_array_equal(np.asarray(x[:n] - 1.0), values[:n] - 1.0)
        np.testing.assert_array_equal(np.asarray(x[:n] * -0.0), values[:n] * -0.0)


_SIZED_OPS = {"broadcast_in_dim": (("dims",), ()), "reshape": (("dims",), ()), "slice": (("strides",), ("start", "limit")),
              "pad": (("interior",), ("low", "high")), "dynamic_slice": (("slice_sizes",), ()), "iota": (("dims",), ())}
_small = st.integers(0, 9)
_dims = st.lists(_small, max_size=3).map(tuple)
_param_rows = st.tuples(_dims, st.sampled_from([np.dtype(np.float64), np.dtype(np.int32)]))


@st.composite
def _op_rows(draw):
    op = draw(st.sampled_from([*_SIZED_OPS, "add", "reduce", "exp"]))
    names = [name for group in _SIZED_OPS.get(op, ((), ())) for name in group]
    attrs = [(name, draw(_dims)) for name in names] + draw(st.lists(st.tuples(st.sampled_from(["kind", "axis"]),
                                                                              st.sampled_from(["add", 1, (2, 3)])),
                                                                    max_size=1))
    return op, tuple(attrs), draw(st.lists(st.integers(0, 5), max_size=2).map(tuple)), draw(_dims), np.dtype(np.float32)


@settings(max_examples=200)
@given(rows=st.lists(st.one_of(_param_rows, _op_rows()), max_size=8).map(tuple))
def test_c_generalize_equals_python_generalize(rows):
    """``dynamic.generalize`` in C erases the sizes of a walked graph's rows (parameters,
    ops with size and offset attributes, ops without) as its Python definition does:
    the same structure, sizes and flags, in the same order."""
    from plaidarray.trace import dynamic

    assert dynamic.generalize is not dynamic._generalize_in_python
    assert dynamic.generalize(rows) == dynamic._generalize_in_python(rows)


def test_c_generalize_raises_on_rows_it_cannot_read():
    """A row of neither width, and a size attribute that is no sequence, are TypeErrors
    (as in Python), not a crash."""
    from plaidarray.trace import dynamic

    for rows in [((1, 2, 3),), ("row",), (("reshape", (("dims", 3),), (), (2,), np.dtype(np.float32)),)]:
        with pytest.raises(TypeError):
            dynamic.generalize(rows)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint64", "bool", "complex128"])
def test_scalar_reads_in_c_give_what_their_python_definitions_give(dtype):
    """``float()``, ``int()``, ``bool()`` and ``operator.index()`` of computed 0-d arrays
    (``_graph.ArrayHandle``'s number slots), of pending ones (a chain the scalar tier
    evaluates, a reduction that runs), of 1-d ones and of special
    values (NaN, infinities, -0.0, integer limits) give the Python definitions' values and
    errors (``array.SCALAR_READS_IN_PYTHON``), and the definitions are no longer Array's own."""
    import operator

    from plaidarray.trace.array import SCALAR_READS_IN_PYTHON

    assert not set(SCALAR_READS_IN_PYTHON) & set(vars(xp.Array))
    values = {"f": [1.5, -0.0, float("nan"), float("inf"), -2.75], "i": [0, -1, 127, -128], "u": [0, 1, 2**63],
              "b": [True, False], "c": [1 + 2j, 0j]}[np.dtype(dtype).kind]
    data = np.array([v for v in values if np.can_cast(np.min_scalar_type(v), dtype) or np.dtype(dtype).kind in "fc"],
                    dtype=dtype)
    x = xp.asarray(data)
    # computed elements, pending ones (the scalar tier's, a reduction's run), 1-d ones
    cases = [x[k] for k in range(data.size)] + [x[0] * 1, x[0] + x[-1], xp.sum(x), x, x[:1]]
    for read, name in ((float, "__float__"), (int, "__int__"), (bool, "__bool__"), (operator.index, "__index__")):
        for case in cases:
            outcomes = []
            for fn in (read, SCALAR_READS_IN_PYTHON[name]):
                try:
                    value = fn(case)
                    outcomes.append((type(value), repr(value)))
                except (TypeError, ValueError, OverflowError) as error:
                    outcomes.append((type(error), str(error)))
            assert outcomes[0] == outcomes[1], (name, case.shape, outcomes)


def test_a_window_of_a_new_length_is_planned_in_c_as_python_plans_it():
    """A window of ranges on every axis at a length no window had (a loop's, at each step)
    is planned in C, its plan the one ``indexing._slice_plan`` makes, kept with the others
    for the next window of that length; the table is emptied at ``_WINDOWS_MAX`` plans as
    the Python path empties it."""
    from plaidarray.api import graph, indexing, views

    def never(*args):
        raise AssertionError("planned in Python")

    fast = node_module.GRAPH_IN_C.Window(
        indexing._SLICES, never, indexing._INDEX_BUFFERS, indexing._index_node(0).shape, indexing._index_node,
        views._attach_window, graph.MERGED_RANK, views.ViewOf, views.Family, views.Index, indexing._WINDOWS_MAX)
    values = np.arange(3000.0 * 3).reshape(3000, 3)
    x = xp.asarray(values)
    shape = x._node.shape
    for length in (1, 17, 29, 17):
        window = fast(x, (slice(3, 3 + length), slice(1, 3)))
        # its value read, not exported: an export pins the family, whose windows are Python's
        np.testing.assert_array_equal(window._value(), values[3:3 + length, 1:3])
        assert indexing._SLICES[(shape.dims, shape.dtype, (length, 2), (True, True))] == \
            indexing._slice_plan(shape, (length, 2), [True, True])
    for length in range(2, indexing._WINDOWS_MAX + 40):
        fast(x, slice(0, length))
        assert len(indexing._SLICES) <= indexing._WINDOWS_MAX


def test_depths_are_counted_again_in_c_as_in_python(monkeypatch):
    """``_graph.recount_depths`` gives each pending node of a graph the depth
    ``cuts._recorded_again_in_python`` gives it, after part of the graph was computed
    (its nodes' depths stale: a loop's state left pending past its read). No graph is cut
    while they are recorded: a cut met before (``cuts.py``) computed the second graph at its
    recording wherever an earlier test had not cut the first (run alone, it failed)."""
    from plaidarray.trace import cuts
    monkeypatch.setattr(node_module, "MAX_PENDING", 0)

    def stale(seed: float) -> node_module.Node:
        x = xp.asarray(np.arange(6.0) + seed)
        y = x
        for k in range(6):
            y = xp.exp(y * 0.5) - float(k)
        z = y
        for _ in range(5):
            z = xp.sin(z) * z + x
        np.asarray(y)  # computed now: z was recorded on it while it was pending
        return z._node

    in_c, in_python = stale(0.0), stale(1.0)
    before = [n.depth for n in node_module.pending_graph(in_c)]
    assert before == [n.depth for n in node_module.pending_graph(in_python)]
    node_module.GRAPH_IN_C.recount_depths(in_c)
    cuts._recorded_again_in_python(in_python)
    after = [n.depth for n in node_module.pending_graph(in_c)]
    assert after == [n.depth for n in node_module.pending_graph(in_python)]
    assert max(after) < max(before)
    with pytest.raises(TypeError):
        node_module.GRAPH_IN_C.recount_depths(3)
