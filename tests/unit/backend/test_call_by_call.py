"""A graph met for the first time runs call by call (``llvm_cpu/call_by_call.py``): each op on
its kernel's runner, with no merged executable made, and is merged when it runs again. Both
runs must give NumPy's values and the same bits; a graph of large values is merged at once
(its temporaries come from the buffer pool)."""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend.cache import EXECUTABLES
from plaidarray.backend.llvm_cpu.call_by_call import CallByCall
from plaidarray.backend.llvm_cpu.executable import CpuExecutable
from plaidarray.trace import baseline, hot


@pytest.fixture(autouse=True)
def op_by_op(monkeypatch):
    """No structure is fused while the test reads it again."""
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)


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


@pytest.mark.parametrize("case", CASES)
def test_a_new_graph_runs_call_by_call_then_merged_with_the_same_bits(case):
    ours, numpys = CASES[case]
    a, b, v = xp.asarray(A), xp.asarray(B), xp.asarray(V)
    first: list[np.ndarray] = []
    made = _made_by(lambda: first.append(np.asarray(ours(a, b, v))))
    np.testing.assert_allclose(first[0], numpys(A, B, V), rtol=1e-13, atol=1e-13)
    sequences = [e._sequence for e in made if type(e._sequence) is CallByCall]
    assert sequences and all(s._merged is None for s in sequences)  # its first run made no merged executable
    again = np.asarray(ours(a, b, v))
    assert again.tobytes() == first[0].tobytes()
    assert all(type(s._merged) is CpuExecutable for s in sequences)  # merged at its second run
    assert np.asarray(ours(a, b, v)).tobytes() == first[0].tobytes()


def test_a_new_graph_of_large_values_is_merged_at_once():
    n = (128 << 10) // 8 + 1  # float64 values over the pool's bound for temporaries
    x = xp.asarray(np.linspace(0.0, 1.0, n))
    made = _made_by(lambda: np.testing.assert_allclose(np.asarray(xp.exp(x * 0.613) + x),
                                                       np.exp(np.linspace(0.0, 1.0, n) * 0.613)
                                                       + np.linspace(0.0, 1.0, n), rtol=1e-15))
    assert made and all(type(e._sequence) is CpuExecutable for e in made)
