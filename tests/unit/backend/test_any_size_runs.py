"""A shape-generic executable's runs at sizes met for the first time from C
(``Executable.any_size``; llvm-cpu's ``_entry.AnySize``), which ``_graph.read`` runs a loop's
reads at new sizes with (``baseline.quick``). Each run must give what the template's
``runner`` gives at those sizes, bit for bit, with buffers of its own; count its time
against its structure's heat and its first-tier kernels' runs (which ask for their full
code); follow new code when it lands; and leave to the runner the sizes it cannot take."""

from __future__ import annotations

import os

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend.llvm_cpu import executable as cpu_executable
from plaidarray.backend.llvm_cpu import tiering
from plaidarray.trace import baseline, hot

pytestmark = pytest.mark.skipif(cpu_executable._ENTRY is None or os.environ.get("PLAIDARRAY_PURE_PYTHON") == "1",
                                reason="runs at any size are made by the C module _entry, not loaded here")


class _Timed:
    """What a run adds its seconds to (a structure's ``hot.Heat``)."""

    def __init__(self) -> None:
        self.seconds = 0.0


class _Runs:
    """A template's first-tier runs (``executable._Runs``), recording what is added."""

    def __init__(self) -> None:
        self.first_tier = ["a kernel"]
        self.added: list[float] = []

    def add(self, seconds: float) -> None:
        self.added.append(seconds)


@pytest.fixture
def planned(monkeypatch):
    """The plan of ``max(w) - min(w) + mean(w * w) + sum(exp(-w * w))`` for windows of a
    new length each, made by three reads: (template, number of symbols); its parameters
    are the window and its mean's count (``_parameters``)."""
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)
    xp.clear_cache()
    x = xp.asarray(np.random.default_rng(3).standard_normal(200_000))
    for n in (17, 18, 19):
        w = x[:n]
        float(xp.max(w) - xp.min(w) + xp.mean(w * w) + xp.sum(xp.exp(-w * w)))
    plans = [p for plan_list in baseline._PLANS.values() for p in plan_list if p.template is not None]
    assert len(plans) == 1
    return plans[0].template, plans[0].pattern.n_symbols


def _parameters(data: np.ndarray) -> list[np.ndarray]:
    """The plan's parameters for the window ``data``: the window, and its mean's count."""
    return [data, np.asarray(float(len(data)))]


def _runs_alike(template, n_symbols, timed):
    """Each window length's run from C against the runner's, on the same parameters."""
    data = np.random.default_rng(4).standard_normal(200_000)
    any_size = template.any_size(n_symbols, timed)
    assert any_size is not None
    for n in (2, 3, 64, 1001, 40_000):  # 40,000: buffers from the pool
        buffers = _parameters(data[:n].copy())
        bound = any_size([n] * n_symbols)
        assert bound is not None
        got = bound.run(buffers)
        expected = template.runner([n] * n_symbols).run(buffers)
        assert [g.tobytes() for g in got] == [e.tobytes() for e in expected]
        again = bound.run(buffers)
        assert all(a is not g and not np.shares_memory(a, g) for a, g in zip(again, got))


def test_runs_at_any_size_give_the_runners_bits_and_time_the_heat(planned):
    template, n_symbols = planned
    timed = _Timed()
    _runs_alike(template, n_symbols, timed)
    assert timed.seconds > 0.0


def test_runs_of_first_tier_kernels_are_counted_for_their_upgrade(planned, monkeypatch):
    """While the template has first-tier kernels, each run's kernel seconds go to its
    ``_Runs.add``, as the runner's do; once they have none, nothing is added."""
    template, n_symbols = planned
    runs = _Runs()
    monkeypatch.setattr(template, "_runs", runs)
    bound = template.any_size(n_symbols, None)([100] * n_symbols)
    bound.run(_parameters(np.linspace(-1.0, 1.0, 100)))
    assert len(runs.added) == 1 and runs.added[0] > 0.0
    runs.first_tier = []
    bound.run(_parameters(np.linspace(-1.0, 1.0, 100)))
    assert len(runs.added) == 1


def test_runs_after_new_code_landed_take_its_addresses(planned):
    """New code moves the kernels (``tiering.generation``): the next run takes the
    template's plan of now (``plan_words``), and gives the same bits."""
    template, n_symbols = planned
    any_size = template.any_size(n_symbols, None)
    data = np.linspace(-2.0, 2.0, 300)
    before = any_size([300] * n_symbols).run(_parameters(data))
    tiering.generation += 1
    try:
        after = any_size([300] * n_symbols).run(_parameters(data))
    finally:
        tiering.generation -= 1
    assert [a.tobytes() for a in after] == [b.tobytes() for b in before]


def test_sizes_the_runner_takes_apart_are_left_to_it(planned, monkeypatch):
    """Sizes worth running in chunks (``parallel.split_work``) and buffers past the memory
    check's bytes bind no run here (None): the runner runs them."""
    from plaidarray.backend import memory
    from plaidarray.backend.llvm_cpu import parallel

    template, n_symbols = planned
    any_size = template.any_size(n_symbols, None)
    assert any_size([parallel.split_work() + 5] * n_symbols) is None
    monkeypatch.setattr(memory, "CHECK_ABOVE_BYTES", 1000)
    assert template.any_size(n_symbols, None)([5000] * n_symbols) is None
    assert any_size([5000] * n_symbols) is not None  # made before: its bound is its own


def test_bad_arguments_are_refused():
    from plaidarray.backend.llvm_cpu import _entry

    with pytest.raises(TypeError):
        _entry.AnySize()
    x = xp.asarray(np.arange(8.0))
    for n in (3, 4, 5):
        float(xp.sum(x[:n] * 2.0))
    template = next(p.template for plans in baseline._PLANS.values() for p in plans if p.template is not None)
    any_size = template.any_size(template._program[0] if template._program else 1, None)
    with pytest.raises(TypeError, match="one list"):
        any_size((3,))
