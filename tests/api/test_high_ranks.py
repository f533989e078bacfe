"""Ops whose kernels the installation builds at low ranks only, recorded so that those
serve them at any rank: transposes as block swaps (``api/block_swaps.py``), reductions and
windows of more than ``graph.MERGED_RANK`` axes with their runs of adjacent axes merged
(reductions and broadcasts of more runs than ``graph.BUILT_RUNS`` a run at a time),
tensordots over several axes as one matrix product, slices with their runs of whole axes
merged, tiles one axis at a time, arg-extrema and diagonals of arrays of any rank as of
3-d ones. Each against NumPy, on both backends, and each graph checked for what it
records."""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plaidarray as xp
from helpers import assert_same
from plaidarray.api import indexing
from plaidarray.api.block_swaps import ONE_SWAP, swaps
from plaidarray.api.graph import MERGED_RANK
from plaidarray.hlo.opdef import runs


#: The most runs of axes of the reductions and broadcasts the installation builds
#: (``prebuild.py``: alternate axes of rank 5), which ``graph.BUILT_RUNS`` must not pass.
INSTALLED_RUNS = 5


def _runs_permutation(permutation: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation of ``permutation``'s runs of adjacent axes (what a transpose merges to)."""
    starts = [i for i, axis in enumerate(permutation) if i == 0 or axis != permutation[i - 1] + 1]
    firsts = [permutation[i] for i in starts]
    return tuple(sorted(firsts).index(f) for f in firsts)


def _recorded(array: xp.Array, op: str) -> list:
    """The pending nodes of ``op`` that ``array``'s value depends on."""
    found, pending, seen = [], [array._node], set()
    while pending:
        node = pending.pop()
        if id(node) in seen or node.op is None:
            continue
        seen.add(id(node))
        if node.op == op:
            found.append(node)
        pending.extend(node.operands)
    return found


@pytest.mark.parametrize("rank", range(1, 8))
def test_block_swaps_compose_to_every_permutation(rank):
    """Every permutation of up to 7 axes is one transpose of rank 2 or less once merged, or
    a chain of block swaps (the four forms the installation builds) moving the same
    elements to the same places, at most one swap per axis but the first."""
    source = np.arange(np.prod(range(2, 2 + rank))).reshape(tuple(range(2, 2 + rank)))
    for permutation in itertools.permutations(range(rank)):
        chain = swaps(permutation)
        assert 1 <= len(chain) <= max(rank - 1, 1)
        if len(chain) > 1:
            assert all(_runs_permutation(swap) in ONE_SWAP or len(_runs_permutation(swap)) <= 2 for swap in chain)
        moved = source
        for swap in chain:
            moved = np.transpose(moved, swap)
        assert np.array_equal(moved, np.transpose(source, permutation))


@given(data=st.data())
def test_transposes_of_any_rank_are_block_swaps_with_numpy_values(backend, data):
    """A pending array of rank 3 to 6 permuted: NumPy's elements, every transpose recorded
    one block swap (or of rank 2 or less); a write through the permuted view reaches its base."""
    rank = data.draw(st.integers(3, 6), label="rank")
    shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank), label="shape"))
    permutation = tuple(data.draw(st.permutations(range(rank)), label="permutation"))
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    permuted = xp.permute_dims(xp.asarray(values) * 2.0, permutation)
    for node in _recorded(permuted + 0.0, "transpose"):
        merged = _runs_permutation(node.attrs["permutation"])
        assert len(merged) <= 2 or merged in ONE_SWAP
    assert_same(permuted, np.transpose(values * 2.0, permutation), exact=True)
    base = xp.asarray(values.copy())
    view = xp.permute_dims(base, permutation)
    view[0] = -1.0
    expected = values.copy()
    np.transpose(expected, permutation)[0] = -1.0
    assert_same(base, expected, exact=True)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "count_nonzero"])
@given(data=st.data())
def test_reductions_of_rank_5_to_8_merge_their_runs(backend, name, data):
    """A reduction of a 5-d to 8-d array over any axes, kept or not: NumPy's values, the
    reduce recorded at most at rank 5, and of at most the installation's runs (alternate axes
    of rank 6 and more reduced a run at a time, ``graph.BUILT_RUNS``)."""
    rank = data.draw(st.integers(5, 8), label="rank")
    shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank), label="shape"))
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, rank - 1), min_size=1), label="axes")))
    keepdims = data.draw(st.booleans(), label="keepdims")
    values = np.random.default_rng(len(axes)).uniform(0.5, 1.5, shape)
    if name in ("any", "all"):
        values = values > 1.0
    got = getattr(xp, name)(xp.asarray(values), axis=axes, keepdims=keepdims)
    for node in _recorded(got, "reduce"):
        assert len(node.operands[0].shape.dims) <= MERGED_RANK + 1
        reduced = node.attrs["dimensions"]
        assert len(runs([a in reduced for a in range(len(node.operands[0].shape.dims))])) <= INSTALLED_RUNS
    expected = getattr(np, name)(values, axis=axes, keepdims=keepdims)
    assert_same(got, expected, dtype=got.dtype, rtol=1e-12)


@given(data=st.data())
def test_broadcasts_of_rank_5_to_8_spread_at_most_the_runs_built(backend, data):
    """Two arrays of rank 5 to 8 with unit axes anywhere (a Kronecker product by
    broadcasting) combined: NumPy's values, and each broadcast recorded of at most the
    installation's runs of spread and kept axes (alternate axes spread a run at a time,
    ``graph.BUILT_RUNS``)."""
    rank = data.draw(st.integers(5, 8), label="rank")
    shape = tuple(data.draw(st.lists(st.integers(2, 3), min_size=rank, max_size=rank), label="shape"))
    alternate = [[(axis + k) % 2 == 0 for axis in range(rank)] for k in range(2)]  # the most runs
    units = [data.draw(st.sampled_from([alternate[k]]) | st.lists(st.booleans(), min_size=rank, max_size=rank),
                       label=f"units {k}") for k in range(2)]
    lead = data.draw(st.integers(0, 2), label="leading axes the second lacks")
    left = np.random.default_rng(1).uniform(0.5, 1.5, tuple(1 if u else n for u, n in zip(units[0], shape)))
    right = np.random.default_rng(2).integers(-3, 4, tuple(1 if u else n for u, n in zip(units[1], shape)))[(0,) * lead]
    got = xp.asarray(left) * xp.asarray(right)
    for node in _recorded(got, "broadcast_in_dim"):
        own, dims = node.operands[0].shape.dims, node.shape.dims
        new = len(dims) - len(own)
        assert len(runs([n == d for n, d in zip(own, dims[new:])])) + (new > 0) <= INSTALLED_RUNS
    assert_same(got, left * right, exact=True)


@given(data=st.data())
def test_flips_of_rank_5_to_8_reverse_at_most_the_runs_built(backend, data):
    """A computed array of rank 5 to 8 flipped along any axes (alternate ones make the most
    runs), through ``flip``, negative steps and a write through a flipped view: NumPy's
    values, and each ``reverse`` recorded of at most the installation's runs of reversed
    and kept axes (one a run of reversed axes past ``graph.BUILT_RUNS``: one of rank 6
    along alternate axes compiled)."""
    rank = data.draw(st.integers(5, 8), label="rank")
    shape = tuple(data.draw(st.lists(st.integers(2, 3), min_size=rank, max_size=rank), label="shape"))
    alternate = tuple(a for a in range(rank) if a % 2 == data.draw(st.integers(0, 1), label="parity"))
    axes = data.draw(st.sampled_from([alternate]) | st.lists(st.integers(0, rank - 1), unique=True).map(
        lambda found: tuple(sorted(found))), label="axes")
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    x = xp.asarray(a) * 2.0
    flipped = xp.flip(x, axis=axes)
    stepped = x[tuple(slice(None, None, -1) if axis in axes else slice(None) for axis in range(rank))]
    for got in (flipped, stepped):
        for node in _recorded(got, "reverse"):
            dimensions = node.attrs["dimensions"]
            assert len(runs([axis in dimensions for axis in range(rank)])) <= INSTALLED_RUNS
        assert_same(got, np.flip(a * 2.0, axis=axes), exact=True)
    flipped[(0,) * rank] = -1.0
    expected = a * 2.0
    np.flip(expected, axis=axes)[(0,) * rank] = -1.0
    assert_same(x, expected, exact=True)


@given(data=st.data())
def test_strided_slices_of_rank_5_to_8_take_at_most_the_runs_built(backend, data):
    """A computed array of rank 5 to 8 sliced with steps along every other axis (the most
    runs): NumPy's values (read through an export of the view, whose array is gone: a
    blank root with its elements put back by a strided write, pads), and each ``slice``
    recorded of at most the installation's runs of axes cut and whole (one axis at a
    time past ``graph.BUILT_RUNS``: one of rank 6 along every other axis compiled; the
    pads alike, ``FIRST_USES`` of ``test_installed_kernels.py``)."""
    rank = data.draw(st.integers(5, 8), label="rank")
    shape = tuple(data.draw(st.lists(st.integers(2, 4), min_size=rank, max_size=rank), label="shape"))
    parity = data.draw(st.integers(0, 1), label="parity")
    key = tuple(slice(None, None, data.draw(st.sampled_from([2, -2, 3]), label=f"step {axis}"))
                if axis % 2 == parity else slice(None) for axis in range(rank))
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    got = (xp.asarray(a) * 2.0)[key]
    for node in _recorded(got, "slice"):
        operand, result = node.operands[0].shape.dims, node.shape.dims
        assert len(runs([n == m for n, m in zip(operand, result)])) <= INSTALLED_RUNS
    assert_same(got, (a * 2.0)[key], exact=True)


@given(data=st.data())
def test_windows_of_rank_5_to_7_are_windows_the_installation_builds(backend, data):
    """A 5-d to 7-d array read at ints and unit-step slices, computed or pending: NumPy's
    elements, each window recorded at rank 4 or less (whole axes merged into cut ones, and
    windows with more cut axes than that taken in two steps)."""
    rank = data.draw(st.integers(5, 7), label="rank")
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank), label="shape"))
    key = []
    for n in shape[:data.draw(st.integers(1, rank), label="indexed")]:
        kind = data.draw(st.sampled_from(["int", "slice", "whole"]), label="kind")
        start = data.draw(st.integers(0, n - 1), label="start")
        key.append(start if kind == "int" else slice(start, data.draw(st.integers(start, n), label="stop"))
                   if kind == "slice" else slice(None))
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    for array in (xp.asarray(values), xp.asarray(values) * 1.0):
        got = array[tuple(key)] * 1.0
        assert all(len(node.shape.dims) <= MERGED_RANK for node in _recorded(got, "dynamic_slice"))
        assert_same(got, values[tuple(key)], exact=True)


@pytest.mark.parametrize("shape", [(3, 3, 4, 5, 6), (3, 3, 4, 3, 3, 4), (3, 3, 3, 3, 3, 3, 3)])
def test_windows_cut_along_every_axis_of_rank_5_to_7(backend, shape):
    """Ranges along every axis (``v[:, 1:, 1:, 1:, 1:] = v[:, :-1, :-1, :-1, :-1]``, a
    volume shifted by one voxel) are windows of rank 4 or less taken in turn."""
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    keys = [tuple(slice(None, -1) for _ in shape), (slice(None),) + tuple(slice(1, None) for _ in shape[1:]),
            tuple(slice(0, 1) if axis % 2 else slice(1, None) for axis in range(len(shape)))]
    for key in keys:
        got = (xp.asarray(values) * 1.0)[key] * 1.0
        assert all(len(node.shape.dims) <= MERGED_RANK for node in _recorded(got, "dynamic_slice"))
        assert_same(got, values[key], exact=True)
    shifted, expected = xp.asarray(values), values.copy()
    shifted[keys[1]] = shifted[tuple(slice(None) if i == 0 else slice(None, -1) for i in range(len(shape)))]
    expected[keys[1]] = values[tuple(slice(None) if i == 0 else slice(None, -1) for i in range(len(shape)))]
    assert_same(shifted, expected, exact=True)


@settings(max_examples=25)
@given(data=st.data())
def test_window_stores_of_rank_6_and_7_are_stores_the_installation_builds(backend, data):
    """``x[key] = value`` of unit-step ranges along any axes of a 6-d or 7-d array: NumPy's
    elements, each store recorded at rank 4 or less (axes merged as a window's, and a
    window with more cut axes read, written and written back)."""
    rank = data.draw(st.integers(6, 7), label="rank")
    shape = tuple(data.draw(st.lists(st.integers(2, 3), min_size=rank, max_size=rank), label="shape"))
    key = [data.draw(st.sampled_from([slice(None), slice(1, None), slice(0, n - 1)]), label="range") for n in shape]
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    scalar = data.draw(st.booleans(), label="scalar")
    value = -1.0 if scalar else -np.arange(values[tuple(key)].size, dtype=np.float64).reshape(values[tuple(key)].shape)
    for computed in (True, False):
        target = xp.asarray(values) if computed else xp.asarray(values) * 1.0
        with mock.patch.object(indexing, "op", wraps=indexing.op) as recording:
            target[tuple(key)] = value if scalar else xp.asarray(value)
        arrays = [c.args[1] for c in recording.call_args_list if c.args[0] in ("dynamic_update_slice", "dynamic_slice")]
        assert all(array.ndim <= MERGED_RANK for array in arrays)
        expected = values.copy()
        expected[tuple(key)] = value
        assert_same(target, expected, exact=True)


@pytest.mark.parametrize(("lhs", "rhs", "axes"), [
    ((2, 3, 4, 5), (6, 3, 4, 2), ((1, 2), (1, 2))), ((2, 3, 4, 5), (5, 3, 4, 2), ((0, 3), (3, 0))),
    ((2, 3, 4), (3, 4, 5), 2), ((3, 4), (3, 4), 2), ((2, 3, 4, 5), (5, 3, 4), ((1, 2, 3), (1, 2, 0))),
    ((2, 0, 4), (0, 4, 3), 2)])
def test_tensordots_over_several_axes_are_one_matrix_product(backend, lhs, rhs, axes):
    """Several axes contracted: NumPy's values, one product of matrices recorded (none
    where nothing is contracted: sums of nothing, zeros)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(lhs), rng.standard_normal(rhs)
    got = xp.tensordot(xp.asarray(a), xp.asarray(b), axes=axes)
    products = _recorded(got, "dot_general")
    if 0 in lhs:
        assert not products
    else:
        assert len(products) == 1 and len(products[0].attrs["lhs_contracting"]) == 1
        assert all(len(operand.shape.dims) == 2 for operand in products[0].operands)
    assert_same(got, np.tensordot(a, b, axes=axes), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 4), (2, 1, 3, 5), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_rolls_differences_tiles_and_arg_extrema_of_any_rank(backend, shape, dtype):
    """Each along every axis, against NumPy: a roll's join and window of the axes before
    and after the rolled one taken as one each (rank 3 at most, one of each a rolled axis),
    the tiles' broadcasts of one new axis at a time, the arg-extrema's ops of rank 3 at most."""
    values = np.random.default_rng(len(shape)).integers(-3, 4, shape).astype(dtype)
    x = xp.asarray(values)
    for axis in range(len(shape)):
        rolled = xp.roll(x, 2, axis=axis)
        turned = _recorded(rolled, "concatenate") + _recorded(rolled, "dynamic_slice")
        assert len(turned) == (2 if 2 % shape[axis] else 0)
        assert all(len(node.shape.dims) <= 3 for node in turned)
        assert_same(rolled, np.roll(values, 2, axis=axis), exact=True)
        if dtype != np.bool_:
            assert_same(xp.diff(x, axis=axis), np.diff(values, axis=axis), exact=True)
            for name in ("argmax", "argmin"):
                found = getattr(xp, name)(x, axis=axis, keepdims=axis % 2 == 1)
                assert all(len(node.shape.dims) <= 3 for node in _recorded(found, "iota"))
                assert_same(found, getattr(np, name)(values, axis=axis, keepdims=axis % 2 == 1))
    for reps in [(2,) * len(shape), (3, 1), (1,) * len(shape), (0, 2)]:
        tiled = xp.tile(x, reps)
        assert 0 in reps or all(len(node.operands[0].shape.dims) + 1 == len(node.shape.dims)
                                for node in _recorded(tiled, "broadcast_in_dim"))
        assert_same(tiled, np.tile(values, reps), exact=True)


@pytest.mark.parametrize("shape", [(2, 3, 3), (2, 2, 3, 4), (2, 1, 2, 4, 3)])
def test_diagonals_of_stacks_of_any_rank(backend, shape):
    """The diagonals of a stack of matrices, of every offset, as of a 3-d stack."""
    values = np.random.default_rng(0).integers(-9, 9, shape).astype(np.int8)
    for offset in (-1, 0, 2):
        got = xp.linalg.diagonal(xp.asarray(values) * 1, offset=offset)
        assert all(len(node.shape.dims) <= 3 for node in _recorded(got, "slice"))
        assert_same(got, np.diagonal(values, offset=offset, axis1=-2, axis2=-1), exact=True)


@pytest.mark.parametrize("shape", [(6, 5), (1, 5), (6, 1), (2, 3, 4), (2, 3, 4, 5), (1, 3, 1, 2)])
@pytest.mark.parametrize("index", [0, 1, -1])
def test_one_position_along_an_inner_axis_by_a_0d_index(backend, shape, index):
    """``X[:, i]`` and ``X[..., i]`` with a 0-d integer array: NumPy's elements (negative
    positions counted from the end), one take of rank 3 at most along its first or second
    axis whatever the array's rank and axis."""
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    array = xp.asarray(values)
    for axis in range(1, len(shape)):
        position = index % shape[axis]
        key = (slice(None),) * axis + (xp.asarray(index if -shape[axis] <= index < shape[axis] else position),)
        got = array[key]
        takes = _recorded(got, "take")
        assert len(takes) == 1 and len(takes[0].operands[0].shape.dims) <= 3 and takes[0].attrs["axis"] in (0, 1)
        assert_same(got, values[(slice(None),) * axis + (position,)], exact=True)
    assert_same(array[..., xp.asarray(-1)], values[..., -1], exact=True)


@pytest.mark.parametrize(("lhs", "rhs", "axes"), [
    ((4, 1), (4, 1), ([1], [1])), ((1, 3), (1, 3), ([0], [0])), ((1, 3), (1, 3), ([1], [1])),
    ((1, 5, 4), (1, 5, 4), ([1, 2], [1, 2])), ((1, 1), (1, 1), 2), ((3,), (3, 1), ([0], [0])),
    ((2, 1, 3), (3, 1), ([2], [0])), ((5, 1), (1, 5), ([0, 1], [1, 0]))])
def test_tensordots_with_groups_of_one_element_are_products_of_matrices(backend, lhs, rhs, axes):
    """A single feature's ``X X^T``, a single sample's outer product: NumPy's values, as one
    product of matrices in a matrix product's orientation (contracting the first operand's
    last axis and the second's first)."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(lhs), rng.standard_normal(rhs)
    got = xp.tensordot(xp.asarray(a), xp.asarray(b), axes=axes)
    products = _recorded(got, "dot_general")
    assert len(products) == 1
    assert products[0].attrs["lhs_contracting"] == (1,) and products[0].attrs["rhs_contracting"] == (0,)
    assert_same(got, np.tensordot(a, b, axes=axes), rtol=1e-12, atol=1e-12)


def test_determinants_of_stacks_of_any_rank(backend):
    """det and slogdet of a 5-d stack: NumPy's values (the sign from one matrix's steps,
    broadcast, not an iota of the stack's rank)."""
    rng = np.random.default_rng(2)
    stack = rng.standard_normal((2, 1, 3, 4, 4)) + 4 * np.eye(4)
    assert_same(xp.linalg.det(xp.asarray(stack)), np.linalg.det(stack), rtol=1e-12, atol=1e-12)
    sign, logabsdet = xp.linalg.slogdet(xp.asarray(-stack))
    assert_same(sign, np.linalg.slogdet(-stack).sign, exact=True)
    assert_same(logabsdet, np.linalg.slogdet(-stack).logabsdet, rtol=1e-12, atol=1e-12)
    assert all(len(node.shape.dims) <= 1 for node in _recorded(sign, "iota"))


@pytest.mark.parametrize("n", [8, 13])
def test_transforms_of_5d_arrays_padded_to_a_longer_length(backend, n):
    """A transform longer than its axis zero-pads it: NumPy's values, the pad of the axes
    it does not pad merged (a pad of rank 5 compiled at its first use)."""
    rng = np.random.default_rng(3)
    z = rng.standard_normal((2, 1, 3, 4, 5)) + 1j * rng.standard_normal((2, 1, 3, 4, 5))
    got = xp.fft.fft(xp.asarray(z), n=n, axis=2)
    assert all(len(node.shape.dims) <= 3 for node in _recorded(got, "pad"))
    assert_same(got, np.fft.fft(z, n=n, axis=2), rtol=1e-12, atol=1e-12, signed_zeros=False)
