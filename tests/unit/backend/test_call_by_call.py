"""A graph met for the first time runs call by call (``llvm_cpu/call_by_call.py``): each op on
its kernel bound to its sizes in C (``_entry.Bound``), with no merged executable made, all of
them in turn from one C object (``_entry.Chain``) from its first run, and it is merged once
its chain has run ``MERGED_AFTER`` times. Every run must give NumPy's values and the same
bits; a graph some call of which has no prepared run (a runner's, where a call cannot be
bound in C) is merged after its second run, and a graph of large values at once (its
temporaries come from the buffer pool)."""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend.cache import EXECUTABLES
from plaidarray.backend.llvm_cpu import call_by_call
from plaidarray.backend.llvm_cpu import executable as cpu_executable
from plaidarray.backend.llvm_cpu import tiering
from plaidarray.backend.llvm_cpu.call_by_call import CallByCall
from plaidarray.backend.llvm_cpu.executable import CpuExecutable, ShapeGenericExecutable
from plaidarray.trace import baseline, hot

from jit_helpers import run_child


@pytest.fixture(autouse=True)
def op_by_op(monkeypatch):
    """No structure is fused while the test reads it again; kernels compiled here (a
    folded constant's) ask for their full code at their first run, which ``tiering.drain``
    brings: first-tier code is timed by the Python run, and has no prepared run to chain."""
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)
    monkeypatch.setattr(tiering, "TIER_UP_AFTER_SECONDS", 0.0)


def _made_by(read) -> list[baseline.BaselineExecutable]:
    before = {id(e) for e in EXECUTABLES.entries.values()}
    read()
    return [e for e in EXECUTABLES.entries.values()
            if id(e) not in before and type(e) is baseline.BaselineExecutable]


rng = np.random.default_rng(5)
A, B, V = rng.standard_normal((7, 5)), rng.standard_normal((5, 3)), rng.standard_normal(11)

#: A new structure each (an odd constant, a combination no other test reads), of several op
#: families: elementwise with a folded scalar, a reduction along an axis, a product, a join,
#: a sort, a cumulative sum and a window.
CASES = {
    "elementwise": (lambda a, b, v: xp.exp(v * 0.731) - xp.sin(v), lambda a, b, v: np.exp(v * 0.731) - np.sin(v)),
    "reduction": (lambda a, b, v: xp.max(a * 1.377, axis=0) + xp.sum(a, axis=0),
                  lambda a, b, v: np.max(a * 1.377, axis=0) + np.sum(a, axis=0)),
    "product": (lambda a, b, v: (a @ b) * 0.413 + 1.0, lambda a, b, v: (a @ b) * 0.413 + 1.0),
    "join and sort": (lambda a, b, v: xp.sort(xp.concat([v, v * 0.293])), lambda a, b, v: np.sort(np.concatenate([v, v * 0.293]))),
    "cumulative window": (lambda a, b, v: xp.cumulative_sum(v[2:9] * 0.917),
                          lambda a, b, v: np.cumsum(v[2:9] * 0.917)),
}


def _chains() -> bool:
    return cpu_executable._ENTRY is not None


@pytest.mark.parametrize("case", CASES)
def test_a_new_graph_runs_call_by_call_chained_then_merged_with_the_same_bits(case, monkeypatch):
    monkeypatch.setattr(call_by_call, "MERGED_AFTER", 4)
    ours, numpys = CASES[case]
    a, b, v = xp.asarray(A), xp.asarray(B), xp.asarray(V)
    first: list[np.ndarray] = []
    made = _made_by(lambda: first.append(np.asarray(ours(a, b, v))))
    np.testing.assert_allclose(first[0], numpys(A, B, V), rtol=1e-13, atol=1e-13)
    sequences = [e._sequence for e in made if type(e._sequence) is CallByCall]
    assert sequences and all(s._merged is None for s in sequences)  # its first run made no merged executable
    if _chains():  # each call its kernel bound to its sizes in C (no runner made), chained at its making,
        # and the chain (one C object running its calls in turn) the executable's run from its first read
        assert all(type(r) is cpu_executable._ENTRY.Bound for s in sequences for r in s._runners)
        assert all(s._chained for s in sequences) and all(s.steps for s in sequences)
        executables = [e for e in made if type(e._sequence) is CallByCall]
        assert all(type(vars(e)["run"]).__name__ == "Chain" for e in executables if e._results is None)
    tiering.drain()
    # the chain's second to (MERGED_AFTER - 1)-th runs; without chains, the second run merges
    for _ in range(call_by_call.MERGED_AFTER - 2 if _chains() else 0):
        assert np.asarray(ours(a, b, v)).tobytes() == first[0].tobytes()
        assert all(s._merged is None for s in sequences)
    assert np.asarray(ours(a, b, v)).tobytes() == first[0].tobytes()
    assert all(type(s._merged) is CpuExecutable for s in sequences)  # merged at its chain's MERGED_AFTER-th run
    for _ in range(2):
        assert np.asarray(ours(a, b, v)).tobytes() == first[0].tobytes()


FRESH_GRAPH = """
import json
import numpy as np
import plaidarray as xp
from plaidarray.backend.cache import EXECUTABLES
from plaidarray.backend.llvm_cpu.call_by_call import CallByCall
from plaidarray.trace.baseline import BaselineExecutable
v = xp.asarray(np.linspace(-1.0, 2.0, 11))
first = np.asarray(xp.exp(v * 0.731) - xp.sin(v))
made = [e for e in EXECUTABLES.entries.values() if type(e) is BaselineExecutable and type(e._sequence) is CallByCall]
chained = [e._sequence._chained for e in made]
run = type(vars(made[0]).get("run")).__name__ if made else None
again = np.asarray(xp.exp(v * 0.731) - xp.sin(v))
print(json.dumps({"compiles": xp.cache_info().compiles, "chained": chained, "run": run,
                  "first": first.tolist(), "same": again.tobytes() == first.tobytes()}))
"""


@pytest.mark.skipif(not _chains(), reason="chains are made by the C module _entry, not loaded here")
def test_a_fresh_processs_new_graph_runs_chained_from_its_first_run(tmp_path):
    """In a fresh process whose op kernels all come from the installation, a new graph's
    calls are bound in C and its executable runs them from one C object (the chain) from
    its first run: neither that run nor a script's second run calls Python to run them."""
    found = run_child(FRESH_GRAPH, tmp_path, PLAIDARRAY_INSTALLED_KERNELS="1", PLAIDARRAY_FUSE_AFTER_MS="")
    if found["compiles"]:
        pytest.skip("the installation's kernels are not built for these sources (prebuild)")
    v = np.linspace(-1.0, 2.0, 11)
    np.testing.assert_allclose(found["first"], np.exp(v * 0.731) - np.sin(v), rtol=1e-14)
    assert found["chained"] == [True] and found["run"] == "Chain" and found["same"]


def test_a_graph_a_call_of_which_has_no_prepared_run_is_merged_after_its_second_run(monkeypatch):
    """A runner's first-tier code compiled in the process (which its Python run times), or
    a build without ``_entry``: no prepared run to chain, so it is merged after its second
    run."""
    monkeypatch.setattr(ShapeGenericExecutable, "untimed_any_size", lambda self, n_values: None)
    monkeypatch.setattr(cpu_executable._Runner, "prepared", lambda self, timed=None: None)
    monkeypatch.setattr(CpuExecutable, "prepared", lambda self, timed=None: None)
    a = xp.asarray(A)
    first: list[np.ndarray] = []
    made = _made_by(lambda: first.append(np.asarray(xp.tanh(a * 0.557) + a)))
    np.testing.assert_allclose(first[0], np.tanh(A * 0.557) + A, rtol=1e-14)
    sequences = [e._sequence for e in made if type(e._sequence) is CallByCall]
    assert sequences and all(s._merged is None for s in sequences)
    again = np.asarray(xp.tanh(a * 0.557) + a)  # outside an assert, which keeps its operands live
    assert again.tobytes() == first[0].tobytes()
    assert all(type(s._merged) is CpuExecutable and not s._chained for s in sequences)


@pytest.mark.skipif(not _chains(), reason="chains are made by the C module _entry, not loaded here")
def test_a_chain_refuses_steps_and_indices_it_cannot_run():
    chain = cpu_executable._ENTRY.Chain
    with pytest.raises(TypeError, match="step is"):
        chain(((len,),), (), 1, (), False, None, 0, None)([np.zeros(2)])
    with pytest.raises(TypeError, match="result is"):
        chain((), (), 1, ((1,),), False, None, 0, None)
    with pytest.raises(IndexError, match="past its table"):
        chain(((lambda bs: bs, (5,), (1,), ()),), (), 1, ((1, (2,)),), False, None, 0, None)([np.zeros(2)])
    with pytest.raises(RuntimeError, match="not made"):
        chain(((lambda bs: bs, (1,), (1,), ()),), (), 1, ((1, (2,)),), False, None, 0, None)([np.zeros(2)])
    with pytest.raises(TypeError, match="one list of buffers"):
        chain((), (), 0, (), False, None, 0, None)((np.zeros(2),))
    doubled = chain(((lambda bs: [bs[0] * 2.0], (0,), (1,), ()),), (), 1, ((1, (2, 1)),), False, None, 0, None)
    np.testing.assert_array_equal(doubled([np.arange(2.0)]), [[[0.0], [2.0]]])


def test_a_new_graph_of_large_values_is_merged_at_once():
    n = (128 << 10) // 8 + 1  # float64 values over the pool's bound for temporaries
    x = xp.asarray(np.linspace(0.0, 1.0, n))
    made = _made_by(lambda: np.testing.assert_allclose(np.asarray(xp.exp(x * 0.613) + x),
                                                       np.exp(np.linspace(0.0, 1.0, n) * 0.613)
                                                       + np.linspace(0.0, 1.0, n), rtol=1e-15))
    assert made and all(type(e._sequence) is CpuExecutable for e in made)


@pytest.mark.skipif(not _chains(), reason="runs bound in C are made by the C module _entry, not loaded here")
def test_a_new_graph_of_ops_met_before_at_its_sizes_runs_on_their_runs_bound_before():
    """The second graph's ops that the first met at these sizes (the scaling, exp, sin and
    the sum) are bound in C already (``_RUNS``): its chain runs those very runs, its
    results are right, and each value is let go after its last use, none of its results."""
    v = xp.asarray(V)
    made = _made_by(lambda: np.testing.assert_allclose(np.asarray(xp.exp(v * 0.377) + xp.sin(v)),
                                                       np.exp(V * 0.377) + np.sin(V), rtol=1e-14))
    first = next(e._sequence for e in made if type(e._sequence) is CallByCall)
    made = _made_by(lambda: np.testing.assert_allclose(np.asarray(xp.sin(v) * (xp.exp(v * 0.377) + xp.sin(v))),
                                                       np.sin(V) * (np.exp(V * 0.377) + np.sin(V)), rtol=1e-14))
    second = next(e._sequence for e in made if type(e._sequence) is CallByCall)
    assert second._chained
    # every run of the first graph is among the second's (its product runs on the scaling's multiply)
    assert {id(r) for r in first._runners} <= {id(r) for r in second._runners}
    kept = {value for value, _ in second._results}
    computed = {value for _, _, outputs, _ in second._steps for value in outputs}  # no parameter or literal
    for index, (_, inputs, outputs, freed) in enumerate(second._steps):
        later = {value for _, i, o, _ in second._steps[index + 1:] for value in (*i, *o)}
        assert freed == tuple(dict.fromkeys(value for value in (*inputs, *outputs)
                                            if value in computed and value not in later and value not in kept))
