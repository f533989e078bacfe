"""A baseline executable's prepared run (``Executable.prepared``; llvm-cpu's
``_entry.Prepared``): from its ``PREPARED_AFTER``-th run on, the executable runs through one
C object that allocates its buffers, calls its kernels and times the run against its
structure. It must give what the Python run gives, every run, count its time against the
structure's heat (which decides when fused code is compiled), keep to a buffer of its own
per result, and follow new code (other kernel addresses) when it lands."""

from __future__ import annotations

import gc
import os
import weakref

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend.cache import EXECUTABLES
from plaidarray.backend.llvm_cpu import call_by_call
from plaidarray.backend.llvm_cpu import executable as cpu_executable
from plaidarray.backend.llvm_cpu import tiering
from plaidarray.trace import baseline, hot

pytestmark = pytest.mark.skipif(cpu_executable._ENTRY is None or os.environ.get("PLAIDARRAY_PURE_PYTHON") == "1",
                                reason="prepared runs are made by the C module _entry, not loaded here")


def _merged(executable: baseline.BaselineExecutable):
    """Its sequence, merged where it has been: a graph met once runs call by call
    (``call_by_call.py``), chained in C, merged once it has run often."""
    return getattr(executable._sequence, "_merged", None) or executable._sequence


@pytest.fixture(autouse=True)
def op_by_op(monkeypatch):
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)  # the baseline executables stay


def _baseline_executables() -> list[baseline.BaselineExecutable]:
    return [e for e in EXECUTABLES.entries.values() if type(e) is baseline.BaselineExecutable]


def _prepared(executable: baseline.BaselineExecutable) -> bool:
    """Whether it runs through one C object: its sequence's prepared run, or its calls'
    prepared runs in turn (``_entry.Chain``)."""
    return type(vars(executable).get("run")).__name__ in ("Prepared", "Chain")


def _made_by(read) -> list[baseline.BaselineExecutable]:
    """The baseline executables that ``read()`` (run five times, new code drained after
    its first) added to the cache."""
    before = {id(e) for e in _baseline_executables()}
    read()
    tiering.drain()
    for _ in range(4):
        read()
    return [e for e in _baseline_executables() if id(e) not in before]


def _preparable(executable: baseline.BaselineExecutable) -> bool:
    """Whether its sequence runs full code (first-tier code compiled in this process is
    timed by the Python run until its full code lands, but where a call is bound in C,
    ``_entry.Bound``, which times it) and its results are its sequence's."""
    sequence = _merged(executable)
    if type(sequence) is baseline._QuickSequence:  # a run bound in C, which times it
        return executable._results is None
    parts = getattr(sequence, "_runners", None) or [sequence]
    return executable._results is None and not any(type(p) is not cpu_executable._ENTRY.Bound and
                                                   getattr(p, "_template", p)._runs.first_tier for p in parts)


@pytest.fixture(autouse=True)
def full_code_soon(monkeypatch):
    """Kernels compiled here (where the installation built none) ask for their full code at
    their first run, so that ``tiering.drain`` brings it: first-tier code is timed by the
    Python run, and its executables are prepared once it is replaced."""
    monkeypatch.setattr(tiering, "TIER_UP_AFTER_SECONDS", 0.0)


CASES = {
    "a sum of a product": (lambda x: xp.sum(x * 2.0 + x), lambda x: np.sum(x * 2.0 + x)),
    "rows' maxima": (lambda x: xp.max(xp.reshape(x, (-1, 5)), axis=1), lambda x: np.max(x.reshape(-1, 5), axis=1)),
    "a cumulative sum": (lambda x: xp.cumulative_sum(xp.exp(x)), lambda x: np.cumsum(np.exp(x))),
    "a window's spread": (lambda x: xp.max(x[3:]) - xp.min(x[3:]) + xp.mean(x[3:] * x[3:]),
                          lambda x: np.max(x[3:]) - np.min(x[3:]) + np.mean(x[3:] * x[3:])),
}


@pytest.mark.parametrize("case", CASES)
def test_prepared_runs_give_the_first_runs_values_at_every_size(case):
    """Each graph read five times at each of several sizes (the first sizes bound from a
    plan at the third: runners) gives NumPy's values every time, bit for bit with its
    first run, and its executables run prepared from their second or third run on (those
    this test made: earlier tests' may be another backend's)."""
    ours, numpys = CASES[case]
    before = {id(e) for e in _baseline_executables()}
    sizes = (20, 25, 30, 35)
    inputs = [np.linspace(-1.5, 2.0, n) for n in sizes]
    firsts = []
    for data in inputs:
        first = np.asarray(ours(xp.asarray(data)))
        np.testing.assert_allclose(first, numpys(data), rtol=1e-13, atol=1e-13)
        firsts.append(first)
    tiering.drain()
    for data, first in zip(inputs, firsts):
        x = xp.asarray(data)
        for _ in range(4):
            assert np.asarray(ours(x)).tobytes() == first.tobytes()
    made = [e for e in _baseline_executables() if id(e) not in before and _preparable(e)]
    assert any(_prepared(e) for e in made)
    assert all(e._sequence.prepared(None) is not None for e in made)


def test_each_prepared_run_makes_results_of_their_own():
    """Reads of one cached graph give arrays of their own, none another's memory: a later
    run never writes into a result already handed out."""
    x = xp.asarray(np.arange(12.0))
    made: list[np.ndarray] = []
    executables = _made_by(lambda: made.append(np.asarray(xp.exp(x) * 3.0)))
    assert any(_prepared(e) for e in executables)
    assert len({m.ctypes.data for m in made}) == len(made)
    for m in made[1:]:
        assert m.tobytes() == made[0].tobytes()
    np.testing.assert_allclose(made[0], np.exp(np.arange(12.0)) * 3.0, rtol=1e-15)


def test_a_prepared_run_adds_its_seconds_to_its_structures_heat():
    """The heat decides when a structure is compiled fused: a prepared run adds its time
    as the Python run does."""
    x = xp.asarray(np.linspace(0.0, 1.0, 4000))
    executable = next(e for e in _made_by(lambda: float(xp.sum(xp.sin(x) * x))) if _prepared(e))
    before = executable.heat.seconds
    for _ in range(20):
        float(xp.sum(xp.sin(x) * x))
    assert executable.heat.seconds > before


def test_a_prepared_run_after_new_code_landed_runs_it():
    """Full code replacing first-tier code moves the kernels (``tiering.generation``): the
    prepared run then runs its sequence's own run, which reads the new addresses, and
    takes that plan for the runs after it."""
    data = np.linspace(-3.0, 3.0, 50)
    x = xp.asarray(data)
    results: list[np.ndarray] = []
    executable = next(e for e in _made_by(lambda: results.append(np.asarray(xp.tanh(x) + 1.0))) if _prepared(e))
    expected = results[0]
    np.testing.assert_allclose(expected, np.tanh(data) + 1.0, rtol=1e-13)
    assert all(r.tobytes() == expected.tobytes() for r in results)
    prepared = vars(executable)["run"]
    tiering.generation += 1
    try:
        for _ in range(3):
            assert np.asarray(xp.tanh(x) + 1.0).tobytes() == expected.tobytes()
        assert vars(executable)["run"] is prepared
    finally:
        tiering.generation -= 1


def test_a_prepared_run_returns_a_parameter_its_sequence_passes_through(monkeypatch):
    """A result that is one of the run's parameters (``_slots``' negative entries) is that
    very buffer, as the Python run returns it. (The cache cleared first: a structure an
    earlier test met at other sizes is bound from its plan, a runner of another layout;
    the graph merged at its chain's first run.)"""
    monkeypatch.setattr(call_by_call, "MERGED_AFTER", 1)
    xp.clear_cache()
    x = xp.asarray(np.arange(6.0))
    executable = next(e for e in _made_by(lambda: np.asarray(x * 2.5)) if _prepared(e))
    sequence = _merged(executable)
    prepared = cpu_executable._ENTRY.Prepared(
        sequence, sequence._plan, sequence._constant_pointers, sequence._dims, tuple(sequence._output_allocators),
        tuple(sequence._temp_allocators), (0, -1), None, False, tiering, (), None)
    given = np.arange(6.0)
    out, passed = prepared([given, np.array(2.5)])
    np.testing.assert_array_equal(out, np.arange(6.0) * 2.5)
    assert passed is given
    with pytest.raises(TypeError, match="one list of buffers"):
        prepared((given,))


def test_a_read_whose_results_are_not_its_sequences_runs_prepared_then_copies_them():
    """A read with a live value and its live reshape among its results has a result that
    the sequence does not give as it is (``BaselineExecutable.results``: a copy of the
    value, reshaped): from its ``PREPARED_AFTER``-th run on, its sequence runs prepared and
    the copy is made after it, giving what the Python run gives, each read's results
    memory of their own."""
    data = np.linspace(-2.0, 2.0, 12)
    x = xp.asarray(data)
    reads: list[tuple[float, xp.Array, xp.Array]] = []

    def read() -> None:
        y = xp.exp(x) - 1.0
        r = xp.reshape(y, (3, 4))
        reads.append((float(xp.sum(r)), r, y))

    made = [e for e in _made_by(read) if e._results is not None]
    assert made and all("run" in vars(e) for e in made)
    kept = [weakref.ref(e) for e in made]
    del made
    gc.disable()  # its run refers to no executable: one the cache lets go of is freed at once
    try:
        xp.clear_cache()
        assert all(ref() is None for ref in kept)
    finally:
        gc.enable()
    expected = np.exp(data) - 1.0
    for total, r, y in reads:
        assert total == reads[0][0]
        np.testing.assert_allclose(np.asarray(r), expected.reshape(3, 4), rtol=1e-13)
        np.testing.assert_array_equal(np.asarray(y), np.asarray(reads[0][2]))
    for i, (_, r, _) in enumerate(reads):  # no read's values in another's memory
        assert not any(np.shares_memory(np.asarray(r), np.asarray(other)) for _, _, other in reads[i + 1:])
