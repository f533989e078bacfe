"""Windows of a caller's input share its memory (``node.shared_window``,
``HostTransfers.shared_window``): ``x[i:j]`` of an array made from NumPy data is a ready
node viewing the input's read-only buffer, as NumPy's view is, rather than a
``dynamic_slice`` that a read copies. These tests check when a window is shared, that
values and the view semantics (writes through either side) are NumPy's, and that C and
Python make the same node."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plaidarray as xp
from plaidarray.trace import node as node_module
from plaidarray.trace.node import Node


def _shares(window, base) -> bool:
    """Whether ``window`` is a ready node sharing ``base``'s buffer."""
    node = window._node
    return node.op is None and node.buffer is not None and np.shares_memory(node.buffer, base._node.buffer)


def test_windows_of_an_input_share_its_memory():
    data = np.arange(24.0).reshape(4, 6)
    m = xp.asarray(data)
    v = xp.asarray(np.arange(10.0))
    assert _shares(v[2:7], v) and v[:0]._node.op is None
    assert _shares(m[1:3], m) and _shares(m[1:2, :], m)
    row = m[2, 1:4]._node  # the window, then a reshape dropping the int's axis
    assert row.op == "reshape" and np.shares_memory(row.operands[0].buffer, m._node.buffer)
    assert not m._node.buffer.flags.writeable  # the snapshot of the caller's data: nothing writes it
    data[:] = -1.0  # the caller's array is not the input's memory
    np.testing.assert_array_equal(np.asarray(m[1:3]), np.arange(6.0, 18.0).reshape(2, 6))


def test_other_windows_are_recorded():
    """A window that is no contiguous block (columns), of memory an update may own (a
    computed array) or a caller can write (``asarray(copy=False)``) is a ``dynamic_slice``."""
    m = xp.asarray(np.arange(24.0).reshape(4, 6))
    assert m[:, 1:3]._node.op == "dynamic_slice"
    computed = m * 2.0
    float(computed[0, 0])
    assert computed._node.buffer is not None and computed._node.owned
    assert computed[1:3]._node.op == "dynamic_slice"
    writable = np.arange(8.0)
    shared = xp.asarray(writable, copy=False)
    window = shared[2:5]
    assert window._node.buffer is None or not np.shares_memory(window._node.buffer, writable)
    writable[3] = 100.0  # a write through the caller's memory is seen by a read after it, as NumPy's view sees it
    np.testing.assert_array_equal(np.asarray(window), writable[2:5])


def test_a_window_of_a_shared_window_is_recorded(backend):
    """A window of a shared window is recorded (a ``dynamic_slice`` of it), so a loop's
    ``w = w[1:]`` holds no chain of ready nodes, each holding the one before (a shared
    window keeps its operands): the values are NumPy's, the nodes bounded."""
    data = np.arange(2000.0)
    w = xp.asarray(data)
    for k in range(1, 1500):
        w = w[1:]
        if k % 300 == 0:
            assert float(xp.sum(w)) == float(np.sum(data[k:]))
            node = w._node
            assert all(not o.operands for o in node.operands if o.buffer is not None)
    np.testing.assert_array_equal(np.asarray(w), data[1499:])


def test_writes_through_a_shared_window_and_its_base_are_numpys():
    x = xp.asarray(np.arange(10.0))
    w = x[2:7]
    total = xp.sum(w)  # pending: recorded before the writes below, so it sees none of them
    w[0] = 100.0
    assert float(x[2]) == 100.0
    x[3] = -1.0
    np.testing.assert_array_equal(np.asarray(w), [100.0, -1.0, 4.0, 5.0, 6.0])
    assert float(total) == 20.0


def test_c_and_python_make_the_same_window_node():
    if node_module.GRAPH_IN_C is None:
        pytest.skip("the C module is not in use (PLAIDARRAY_PURE_PYTHON=1)")
    base = xp.asarray(np.arange(24.0).reshape(4, 6))._node
    starts = (Node.ready(np.asarray(1)), Node.ready(np.asarray(0)))
    for dims in ((2, 6), (1, 3), (2, 3)):  # a block of rows, part of a row, no block
        shape = node_module.Node.apply("dynamic_slice", (base, *starts), {"slice_sizes": dims}).shape
        made = [make("dynamic_slice", (base, *starts), {"slice_sizes": dims}, shape)
                for make in (node_module.GRAPH_IN_C.derive, node_module._derive_in_python)]
        assert [n.op for n in made] == ([None, None] if dims != (2, 3) else ["dynamic_slice"] * 2)
        if dims != (2, 3):
            assert [n.buffer.__array_interface__["data"] for n in made] == \
                [made[0].buffer.__array_interface__["data"]] * 2
            assert [n.owned for n in made] == [False, False]


@st.composite
def _windows(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    key = []
    for n in shape[:draw(st.integers(1, len(shape)))]:
        if draw(st.booleans()):
            key.append(draw(st.integers(-n, n - 1)))
        else:
            start, stop = sorted(draw(st.lists(st.integers(-n - 1, n + 1), min_size=2, max_size=2)))
            key.append(slice(start, stop))
    return shape, tuple(key)


@settings(max_examples=150, deadline=None)
@given(_windows(), st.integers(0, 3))
def test_windows_and_their_reductions_are_numpys(backend, window, write):
    """Any window of ints and unit-step slices, shared or recorded: its values, a reduction
    over it, and the base and window after a write through one or the other."""
    shape, key = window
    data = np.arange(float(np.prod(shape))).reshape(shape)
    x = xp.asarray(data)
    w = x[key]
    expected = data[key]
    np.testing.assert_array_equal(np.asarray(w), expected)
    element = len(key) == len(shape) and all(type(k) is int for k in key)  # a copy, as NumPy's scalar
    if expected.size and not element:
        assert float(xp.max(w) - xp.min(w)) == float(np.max(expected) - np.min(expected))
        if write == 1:  # through the window: the base sees it
            w[(0,) * w.ndim] = -5.0
            data[key][(0,) * expected.ndim] = -5.0
        elif write == 2:  # through the base: the window sees it
            x[(0,) * x.ndim] = -7.0
            data[(0,) * data.ndim] = -7.0
    np.testing.assert_array_equal(np.asarray(x), data)
    np.testing.assert_array_equal(np.asarray(w), expected if element else data[key])


@pytest.mark.parametrize("shape, key", [((8,), (..., 3)), ((8,), (Ellipsis, slice(2, 5))), ((3, 4), (1, ...)),
                                        ((3, 4), (..., slice(None))), ((1,), (..., 0))])
def test_a_recipe_never_keeps_a_window_of_its_argument(backend, shape, key):
    """A call that makes a shared window of its argument (keys that ``getitem`` replays from
    a recipe kept at its first call) makes it of each call's own argument: a recipe that
    kept the first call's window as a constant returned the first input's values."""
    for value in range(6):
        data = np.arange(value, value + np.prod(shape), dtype=np.int32).reshape(shape)
        picked = xp.asarray(data)[key]
        np.testing.assert_array_equal(np.asarray(picked[()] if picked.ndim == 0 else picked), data[key])


def test_a_recipe_makes_a_shared_window_again_of_its_own_argument():
    """The recipe of a call that windows its argument keeps the window as a step of its op
    (the node keeps its operands and attributes), so later calls replay it, a view of their
    own argument's memory, where keeping no recipe recorded each call by the rules (3 ->
    21-28 us a call of ``m[i:i + 3, ...]``)."""
    from plaidarray.api import recipes

    for value in range(4):
        data = np.arange(value, value + 12.0).reshape(3, 4)
        m = xp.asarray(data)
        window = m[1:3, ...]
        assert _shares(window, m)
        np.testing.assert_array_equal(np.asarray(window), data[1:3])
    kept = [r for table in recipes._TABLES for r in table.values() if isinstance(r, recipes.Recipe)]
    assert any(step[0] == "dynamic_slice" and step[3].dims == (2, 4) for recipe in kept for step in recipe.steps)
