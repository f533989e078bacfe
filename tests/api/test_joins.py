"""Joins of values computed already (``trace/joins.py``): stacks and concatenations of
small host values copied at once, and ``asarray`` of sequences holding arrays, against
NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from device_choice import ON_HOST, host_only
from helpers import assert_same
from plaidarray.trace import joins
from plaidarray.trace.exports import Pinned
from strategies import ALL, arrays, shapes


def _computed(values: np.ndarray) -> xp.Array:
    array = xp.asarray(values)
    assert array._node.buffer is not None
    return array


@given(dtype=st.sampled_from(ALL), shape=shapes(max_dims=3), count=st.integers(2, 12), data=st.data())
def test_computed_values_are_stacked_and_joined_by_a_copy_with_numpys_values(backend, dtype, shape, count, data):
    """Arrays computed already, stacked along any axis and concatenated along any axis or
    flattened, give NumPy's values exactly, as ready values (nothing recorded) where the
    result is small and on the host (a GPU's transfers copy nothing themselves), and as a
    recorded join where it is past ``MOST_BYTES``."""
    parts = [data.draw(arrays(dtype, st.just(shape)), label=f"part {i}") for i in range(count)]
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)), label="stack axis")
    stacked = xp.stack([_computed(p) for p in parts], axis=axis)
    copied = stacked._node.buffer is not None  # before the read below computes a recorded join
    assert_same(stacked, np.stack(parts, axis=axis), exact=True)
    assert copied == (sum(p.nbytes for p in parts) <= joins.MOST_BYTES and ON_HOST)
    if shape:
        along = data.draw(st.integers(-len(shape), len(shape) - 1), label="concat axis")
        assert_same(xp.concat([_computed(p) for p in parts], axis=along), np.concatenate(parts, axis=along),
                    exact=True)
    assert_same(xp.concat([_computed(p) for p in parts], axis=None), np.concatenate(parts, axis=None), exact=True)


def test_a_join_past_the_bound_is_recorded_with_the_same_values(monkeypatch):
    parts = [np.arange(6.0).reshape(2, 3) + i for i in range(3)]
    monkeypatch.setattr(joins, "MOST_BYTES", parts[0].nbytes)
    recorded = xp.concat([_computed(p) for p in parts], axis=1)
    assert recorded._node.buffer is None
    assert_same(recorded, np.concatenate(parts, axis=1), exact=True)


def test_a_join_with_a_pending_value_is_recorded():
    first, second = _computed(np.arange(3.0)), xp.exp(_computed(np.arange(3.0)))
    joined = xp.stack([first, second])
    assert joined._node.buffer is None
    assert_same(joined, np.stack([np.arange(3.0), np.exp(np.arange(3.0))]))


def test_a_copied_join_is_memory_of_its_own_both_ways():
    """Stores into an operand after the join leave the result as it was, and stores into
    the result leave the operands, as NumPy's copies do."""
    a, b = _computed(np.zeros(4)), _computed(np.ones(4))
    joined = xp.stack([a, b])
    a[0] = 5.0
    joined[1, 1] = 7.0
    np.testing.assert_array_equal(np.asarray(joined), [[0, 0, 0, 0], [1, 7, 1, 1]])
    np.testing.assert_array_equal(np.asarray(a), [5, 0, 0, 0])
    np.testing.assert_array_equal(np.asarray(b), [1, 1, 1, 1])


@host_only("sharing a caller's memory without a copy")
def test_a_join_of_shared_memory_holds_its_value_when_joined():
    """An array on memory shared with NumPy (``copy=False``), written through NumPy after
    the join: the join holds the values of when it was made."""
    memory = np.arange(4.0)
    shared = xp.asarray(memory, copy=False)
    joined = xp.concat([shared, _computed(np.ones(2))])
    memory[0] = 9.0
    np.testing.assert_array_equal(np.asarray(joined), [0, 1, 2, 3, 1, 1])


def test_joins_in_recorded_functions_keep_no_copy_in_a_recipe(backend):
    """``concat(axis=None)`` and ``stack`` with an axis of a NumPy int run the rules'
    recorded functions (``recipes.recorded``): the copy made in a call is a value taken, so
    no recipe keeps it, and each call of the same signature gives its own arrays' values."""
    for i in range(4):
        a, b = _computed(np.full((2, 2), float(i))), _computed(np.full((2, 2), -float(i)))
        np.testing.assert_array_equal(np.asarray(xp.concat([a, b], axis=None)), [i] * 4 + [-i] * 4)
        np.testing.assert_array_equal(np.asarray(xp.stack([a, b], axis=np.int64(1))),
                                      np.stack([np.full((2, 2), float(i)), np.full((2, 2), -float(i))], axis=1))


def test_a_recorded_function_joining_computed_arguments_keeps_no_recipe_of_the_copy():
    """A function kept as recipes (``recipes.recorded``) that joins its computed arguments
    and records an op on the join: the copy is a value taken, so no recipe holds it as a
    constant, and each call gives its own arguments' values."""
    from plaidarray.api.recipes import recorded

    doubled = recorded(lambda a, b: xp.stack([a, b]) * 2.0)
    for i in range(4):
        made = doubled(_computed(np.full(3, float(i))), _computed(np.full(3, 1.0 + i)))
        np.testing.assert_array_equal(np.asarray(made), [[2.0 * i] * 3, [2.0 + 2 * i] * 3])


@pytest.mark.parametrize("nested", [
    lambda v: v,
    lambda v: [v[:2], v[2:4]],
    lambda v: [[v[0], 1.5], [2, v[1]]],
    lambda v: (v[0], v[1], 3),
])
def test_asarray_of_sequences_holding_arrays_stacks_them(backend, nested):
    """``asarray`` of (nested) lists and tuples of 0-d arrays and Python scalars gives
    NumPy's array and dtype, and exports none of the arrays (an exported one is pinned)."""
    values = [np.float64(i) / 3 for i in range(4)]
    arrays_ = [xp.asarray(v) for v in values]
    pending = [xp.exp(a) for a in arrays_]  # pending values: recorded into the stack
    for items, expected in ((arrays_, values), (pending, [np.exp(v) for v in values])):
        made = xp.asarray(nested(items))
        reference = np.asarray(nested(expected))
        assert made.dtype == reference.dtype and made.shape == reference.shape
        np.testing.assert_allclose(np.asarray(made), reference, rtol=1e-15)  # exp within an ulp of NumPy's
        assert not any(type(a) is Pinned for a in items)


def test_asarray_of_sequences_holding_arrays_takes_dtype_and_refuses_uneven_ones():
    a = xp.asarray(np.arange(3, dtype=np.int32))
    assert xp.asarray([a, a]).dtype == xp.int32
    assert xp.asarray([a, a], dtype=xp.float32).dtype == xp.float32
    with pytest.raises(ValueError, match="uneven"):
        xp.asarray([a, 1])
    with pytest.raises(ValueError, match="uneven"):
        xp.asarray([a, xp.asarray(np.arange(2, dtype=np.int32))])
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray([a, a], copy=False)
