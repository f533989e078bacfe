"""A write interrupted anywhere leaves an array and its views agreeing (``views.changed``).

A KeyboardInterrupt (Ctrl-C) is raised where a signal's handler would run it: between two
lines of the code that writes an array and its views (``trace/array.py``, ``trace/views.py``,
``api/views.py``), at every line a write through a family of views runs there, one run
each. (Not in the caches' code: a trace function's exception at the first line of a
``with`` block lands before the block's handler, where no signal's handler runs, and
leaves the lock held.) Afterwards the base and every view must all hold the old values or all the
new ones, and a later write through a view must not bring old values back (an interrupt
between the refresh of two views left them disagreeing, and such a write then wrote the
stale ones into the base)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.trace.node import GRAPH_IN_C

_PACKAGE = os.path.dirname(xp.__file__)
_WRITERS = tuple(os.path.join(_PACKAGE, *path) for path in (("trace", "array.py"), ("trace", "views.py"),
                                                            ("api", "views.py")))

_KEYS = {"v1": slice(0, 3), "v2": slice(None, None, -1), "v3": slice(2, 5)}


def _family():
    a = xp.asarray(np.zeros(6))
    views = {name: a[key] for name, key in _KEYS.items()}
    float(xp.sum(a))
    return a, views


def _root_add(a, views):
    a += 1.0


def _view_add(a, views):
    views["v3"] += 1.0


def _view_store(a, views):
    views["v1"][1] = 7.0


def _root_store(a, views):
    a[2] = 5.0


def _view_window_store(a, views):
    views["v2"][0:2] = 9.0


_WRITES = {"a += 1": _root_add, "v3 += 1": _view_add, "v1[1] = 7": _view_store, "a[2] = 5": _root_store,
           "v2[0:2] = 9": _view_window_store}


def _values(a, views) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The values read through new arrays (not the members' exports, which share memory)."""
    return np.asarray(a + 0.0), {name: np.asarray(v + 0.0) for name, v in views.items()}


def _interrupted(write, at: int) -> bool:
    """Run ``write`` on a new family, raising KeyboardInterrupt at its ``at``-th line of
    plaidarray's code; whether it was interrupted (False: it ran to its end)."""
    a, views = _family()
    seen = [0]

    def local(frame, event, arg):
        if event == "line":
            seen[0] += 1
            if seen[0] == at:
                raise KeyboardInterrupt
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename in _WRITERS else None

    sys.settrace(tracer)
    try:
        write(a, views)
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    finally:
        sys.settrace(None)
    _check(write, a, views)
    return interrupted


def _check(write, a, views) -> None:
    old = np.zeros(6)
    new = old.copy()
    expected = {"v1": new[_KEYS["v1"]], "v2": new[_KEYS["v2"]], "v3": new[_KEYS["v3"]]}
    reference = {name: new[key] for name, key in _KEYS.items()}  # NumPy views of new
    write(new, reference)
    base, members = _values(a, views)
    agree = [all(np.array_equal(members[name], state[key]) for name, key in _KEYS.items()) and
             np.array_equal(base, state) for state in (old, new)]
    assert any(agree), (base, members, expected)
    views["v3"][0] = 100.0  # a later write through a view keeps the rest of whichever state it was
    state = old if agree[0] else new
    state = state.copy()
    state[2] = 100.0
    base, members = _values(a, views)
    assert np.array_equal(base, state), (base, state)
    assert all(np.array_equal(members[name], state[key]) for name, key in _KEYS.items())


@pytest.mark.skipif(GRAPH_IN_C is None, reason="the members change at once in C (_graph.rebind), step by step without it")
@pytest.mark.parametrize("name", sorted(_WRITES))
def test_an_interrupted_write_leaves_the_family_old_or_new(name):
    write = _WRITES[name]
    at = 1
    while _interrupted(write, at):
        at += 1
    assert at > 5  # the write ran lines of plaidarray's code that the interrupts landed on
