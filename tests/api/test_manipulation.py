"""Differential tests of the manipulation functions against NumPy, on both backends."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from device_choice import ON_HOST
from helpers import assert_same
from loop_helpers import assembled_sizes, state_space_readings
from strategies import ALL, FLOAT, INTEGER, arrays, broadcastable_shapes, shapes

any_dtype = st.sampled_from(ALL)


@st.composite
def array_and_dtype(draw, shape=None, min_dims=0):
    dtype = draw(any_dtype, label="dtype")
    return draw(arrays(dtype, shapes(min_dims=min_dims) if shape is None else shape), label="x")


@st.composite
def reshape_targets(draw, shape):
    """A shape with the same number of elements: dims shuffled, merged and padded with
    ones; one entry may be -1 when that is unambiguous."""
    dims = list(draw(st.permutations(list(shape))))
    out = []
    for d in dims:
        if out and draw(st.booleans()):
            out[-1] *= d
        else:
            out.append(d)
    for _ in range(draw(st.integers(0, 2))):
        out.insert(draw(st.integers(0, len(out))), 1)
    if len(out) > 4:
        out = [math.prod(out)]
    if out and draw(st.booleans()):
        i = draw(st.integers(0, len(out) - 1))
        if math.prod(out[:i] + out[i + 1:]) != 0:
            out[i] = -1
    return tuple(out)


@given(data=st.data())
def test_reshape(backend, data):
    x = data.draw(array_and_dtype())
    target = data.draw(reshape_targets(x.shape), label="shape")
    assert_same(xp.reshape(xp.asarray(x), target), np.reshape(x, target), exact=True)
    # A computed (not yet materialized) input goes through the same code path as a graph node.
    assert_same(xp.reshape(xp.flip(xp.asarray(x)), target), np.reshape(np.flip(x), target), exact=True)


def test_reshape_invalid_shapes_raise():
    x = xp.asarray(np.arange(6))
    for bad in [(4,), (-1, -1), (5, -1), (-2, 3)]:
        with pytest.raises(ValueError):
            xp.reshape(x, bad)


@given(data=st.data())
def test_permute_dims(backend, data):
    x = data.draw(array_and_dtype())
    axes = data.draw(st.permutations(range(x.ndim)), label="axes")
    assert_same(xp.permute_dims(xp.asarray(x), tuple(axes)), np.transpose(x, axes), exact=True)


@given(data=st.data())
def test_expand_dims(backend, data):
    x = data.draw(array_and_dtype())
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim), label="axis")
    assert_same(xp.expand_dims(xp.asarray(x), axis=axis), np.expand_dims(x, axis), exact=True)


@given(data=st.data())
def test_squeeze(backend, data):
    shape = data.draw(st.lists(st.sampled_from([0, 1, 1, 1, 2, 3]), min_size=1, max_size=4).map(tuple)
                      .filter(lambda s: 1 in s), label="shape")
    x = data.draw(arrays(data.draw(any_dtype, label="dtype"), shape), label="x")
    ones = [i for i, s in enumerate(shape) if s == 1]
    chosen = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True), label="axes")
    chosen = [a - len(shape) if data.draw(st.booleans()) else a for a in chosen]
    axis = chosen[0] if len(chosen) == 1 and data.draw(st.booleans()) else tuple(chosen)
    assert_same(xp.squeeze(xp.asarray(x), axis=axis), np.squeeze(x, axis=axis), exact=True)


def test_squeeze_of_a_non_unit_axis_raises():
    with pytest.raises(ValueError):
        xp.squeeze(xp.asarray(np.zeros((1, 2))), axis=1)


@given(data=st.data())
def test_broadcast_to(backend, data):
    shape, target = data.draw(broadcastable_shapes(2), label="shapes")
    target = np.broadcast_shapes(shape, target)
    x = data.draw(arrays(data.draw(any_dtype, label="dtype"), shape), label="x")
    assert_same(xp.broadcast_to(xp.asarray(x), target), np.broadcast_to(x, target), exact=True)


def test_broadcast_to_a_smaller_shape_raises():
    with pytest.raises(ValueError):
        xp.broadcast_to(xp.asarray(np.zeros((2, 3))), (3,))
    with pytest.raises(ValueError):
        xp.broadcast_to(xp.asarray(np.zeros((2, 3))), (4, 3))


@given(data=st.data())
def test_broadcast_arrays(backend, data):
    shape_list = data.draw(broadcastable_shapes(3), label="shapes")
    xs = [data.draw(arrays(data.draw(any_dtype, label="dtype"), s), label="x") for s in shape_list]
    got = xp.broadcast_arrays(*(xp.asarray(x) for x in xs))
    expected = np.broadcast_arrays(*xs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_same(g, e, exact=True)


@st.composite
def concat_inputs(draw, same_shape=False):
    ndim = draw(st.integers(1, 3), label="ndim")
    base = list(draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim), label="base"))
    axis = draw(st.integers(-ndim, ndim - 1), label="axis")
    n = draw(st.integers(1, 3), label="count")
    dtype = draw(any_dtype, label="dtype")
    out = []
    for _ in range(n):
        shape = list(base)
        if not same_shape:
            shape[axis] = draw(st.integers(0, 3))
        out.append(draw(arrays(dtype, tuple(shape)), label="x"))
    return out, axis


@given(inputs=concat_inputs())
def test_concat(backend, inputs):
    xs, axis = inputs
    assert_same(xp.concat([xp.asarray(x) for x in xs], axis=axis), np.concatenate(xs, axis=axis), exact=True)


@pytest.mark.parametrize("count", [9, 16, 17, 65])
def test_joins_wider_than_one_op_takes_are_joins_of_groups(backend, count):
    """A join of more arrays than one ``concatenate`` records (``JOIN_OPERANDS``), with
    an extended one first, stacked and flattened, gives NumPy's values; the graph is
    joins of at most that many. The arrays are pending (negations): computed ones would
    be copied at once (``trace/joins.py``), nothing recorded."""
    from plaidarray.api.manipulation import JOIN_OPERANDS

    rng = np.random.default_rng(count)
    parts = [rng.standard_normal((2, int(rng.integers(0, 3)))) for _ in range(count)]
    arrays = [-xp.asarray(-p) for p in parts]
    joined = xp.concat(arrays, axis=1)
    widths, pending = [], [joined._node]
    while pending:
        node = pending.pop()
        if node.op == "concatenate":
            widths.append(len(node.operands))
        pending.extend(node.operands)
    assert widths and max(widths) <= JOIN_OPERANDS
    assert_same(joined, np.concatenate(parts, axis=1), exact=True)
    assert_same(xp.concat([joined, *arrays], axis=1), np.concatenate([np.concatenate(parts, axis=1), *parts], axis=1),
                exact=True)
    rows = [p[0, :1] for p in parts if p.shape[1]]
    assert_same(xp.stack([xp.asarray(r) for r in rows], axis=1), np.stack(rows, axis=1), exact=True)
    assert_same(xp.concat(arrays, axis=None), np.concatenate(parts, axis=None), exact=True)


@given(data=st.data())
def test_concat_axis_none_flattens(backend, data):
    dtype = data.draw(any_dtype, label="dtype")
    xs = data.draw(st.lists(arrays(dtype, shapes()), min_size=1, max_size=3), label="xs")
    assert_same(xp.concat([xp.asarray(x) for x in xs], axis=None), np.concatenate(xs, axis=None), exact=True)


PROMOTING = [(np.dtype(a), np.dtype(b)) for a, b in [("int8", "int32"), ("uint8", "int16"), ("uint16", "uint32"),
                                                     ("float32", "float64"), ("int16", "uint32")]]


@pytest.mark.parametrize("dtype1, dtype2", PROMOTING, ids=[f"{a.name}-{b.name}" for a, b in PROMOTING])
@given(data=st.data())
def test_concat_promotes_within_a_kind(backend, dtype1, dtype2, data):
    x1 = data.draw(arrays(dtype1, shapes(min_dims=1, max_dims=1)), label="x1")
    x2 = data.draw(arrays(dtype2, shapes(min_dims=1, max_dims=1)), label="x2")
    assert_same(xp.concat([xp.asarray(x1), xp.asarray(x2)]), np.concatenate([x1, x2]), exact=True)


@pytest.mark.parametrize("case", ["one array", "a view", "an empty array and a view", "stack of one view"])
def test_a_concatenation_of_one_array_is_a_copy(backend, case):
    """As in NumPy, writing to a concatenation (of one array, or of one with empty ones)
    leaves its operands, and the base of a view among them, as they were."""
    data = np.arange(12.0).reshape(3, 4)
    base = xp.asarray(data)
    make = {"one array": lambda: xp.concat([base]),
            "a view": lambda: xp.concat([base[1:2, :]]),
            "an empty array and a view": lambda: xp.concat([xp.zeros((0, 4)), base[1:2, :], xp.zeros((0, 4))]),
            "stack of one view": lambda: xp.stack([base[1]])}[case]
    out = make()
    out[0, 0] = -1.0
    np.testing.assert_array_equal(np.asarray(base), data)
    assert float(out[0, 0]) == -1.0


def test_concat_without_a_result_type_and_mismatched_shapes_raise():
    with pytest.raises(TypeError):  # mixed kinds promote as in NumPy; these have no result type
        xp.concat([xp.asarray(np.zeros(2, np.uint64)), xp.asarray(np.zeros(2, np.int32))])
    with pytest.raises(ValueError):
        xp.concat([xp.asarray(np.zeros((2, 3))), xp.asarray(np.zeros((2, 4)))], axis=0)


@given(data=st.data())
def test_stack(backend, data):
    dtype = data.draw(any_dtype, label="dtype")
    shape = data.draw(shapes(), label="shape")
    xs = data.draw(st.lists(arrays(dtype, shape), min_size=1, max_size=3), label="xs")
    ndim = len(shape) + 1
    axis = data.draw(st.integers(-ndim, ndim - 1), label="axis")
    assert_same(xp.stack([xp.asarray(x) for x in xs], axis=axis), np.stack(xs, axis=axis), exact=True)


def test_stack_of_different_shapes_raises():
    with pytest.raises(ValueError):
        xp.stack([xp.asarray(np.zeros(2)), xp.asarray(np.zeros(3))])


@st.composite
def axes_of(draw, ndim, repeated=False):
    """No axis, one (negative too), or a tuple of axes of an array of ``ndim`` dimensions:
    distinct ones, or (``repeated``) one to three that may repeat."""
    choice = draw(st.sampled_from(["none", "int", "tuple"]) if ndim else st.just("none"), label="kind")
    if choice == "none":
        return None
    if choice == "int":
        return draw(st.integers(-ndim, ndim - 1), label="axis")
    axes = st.integers(0, ndim - 1)
    return tuple(draw(st.lists(axes, min_size=1, max_size=3) if repeated else st.lists(axes, unique=True), label="axes"))


@given(data=st.data())
def test_flip(backend, data):
    x = data.draw(array_and_dtype())
    axis = data.draw(axes_of(x.ndim))
    assert_same(xp.flip(xp.asarray(x), axis=axis), np.flip(x, axis=axis), exact=True)


@given(data=st.data())
def test_roll(backend, data):
    """Any dtype and shape, shifts past the length and negative, along no axis, one or
    several (repeated too), against NumPy."""
    x = data.draw(array_and_dtype())
    axis = data.draw(axes_of(x.ndim, repeated=True))
    shifts = st.integers(-25, 25)
    shift = tuple(data.draw(shifts, label="shift") for _ in axis) if type(axis) is tuple else data.draw(shifts, label="shift")
    assert_same(xp.roll(xp.asarray(x), shift, axis=axis), np.roll(x, shift, axis=axis), exact=True)


def test_rolls_at_every_shift_read_one_graph(backend):
    """A loop over shifts (an autocorrelation's lags) reads one graph whatever the shift,
    its start a run-time value: after the first shifts, every read on the host is a cache
    hit (a device's compiler may make its executable once more as the loop goes on, where
    a graph per shift missed at every shift)."""
    values = np.random.default_rng(0).standard_normal(50)
    x = xp.asarray(values)
    for lag in (1, 2):
        float(xp.sum(x * xp.roll(x, lag)))
    before = xp.cache_info()
    for lag in range(3, 30):
        assert float(xp.sum(x * xp.roll(x, lag))) == pytest.approx(float(np.sum(values * np.roll(values, lag))),
                                                                   rel=1e-12)
    assert xp.cache_info().misses - before.misses <= (0 if ON_HOST else 1)


@given(data=st.data())
def test_composed_manipulations(backend, data):
    """Several manipulations chained in one graph (so fusion and the HLO passes see them
    together), against the same chain in NumPy."""
    dtype = data.draw(st.sampled_from(FLOAT + INTEGER[:2]), label="dtype")
    x = data.draw(arrays(dtype, shapes(min_dims=2)), label="x")
    axes = tuple(data.draw(st.permutations(range(x.ndim)), label="axes"))
    got = xp.flip(xp.permute_dims(xp.expand_dims(xp.asarray(x), axis=0), (0,) + tuple(a + 1 for a in axes)),
                  axis=-1)
    got = xp.concat([got, got], axis=0)
    expected = np.flip(np.transpose(np.expand_dims(x, 0), (0,) + tuple(a + 1 for a in axes)), axis=-1)
    expected = np.concatenate([expected, expected], axis=0)
    assert_same(got, expected, exact=True)


def test_stacking_many_deep_graphs_computes_them_one_at_a_time(backend):
    """A graph's depth is bounded, its width is not: ``stack`` of 50 values, each a graph
    of its own, made one compile of 50 times the size (22 GB for SciPy's naive B-spline
    test). Such operands are computed first, alike ones by one executable; then, computed
    and small, they are copied into the result at once (``trace/joins.py``)."""
    base = xp.asarray(np.arange(4.0))
    parts = []
    for i in range(20):
        value = base + float(i)
        for _ in range(10):
            value = value * 1.5 - 0.25
        parts.append(value)
    stacked = xp.stack(parts)
    assert all(part._node.buffer is not None for part in parts)
    if ON_HOST:  # a GPU's transfers copy nothing themselves: its join is recorded
        assert stacked._node.buffer is not None and not stacked._node.operands
    expected = []
    for i in range(20):
        value = np.arange(4.0) + i
        for _ in range(10):
            value = value * 1.5 - 0.25
        expected.append(value)
    np.testing.assert_allclose(np.asarray(stacked), np.stack(expected), rtol=1e-15)


def test_stacking_readings_of_a_loops_state_computes_the_state_once(backend, monkeypatch):
    """The outputs of a 25-step state-space simulation, never read, stacked: each operand
    is computed with the state the next one reads, so no graph holds the state's history
    again (20 graphs, a longer one each time, before), and the values are NumPy's."""
    sizes = assembled_sizes(monkeypatch)
    readings, expected = state_space_readings()
    np.testing.assert_allclose(np.asarray(xp.stack(readings)), expected, rtol=1e-12)
    if backend == "llvm-cpu":
        assert len(sizes) <= 12 and len(set(sizes[2:])) <= 4


@pytest.mark.parametrize("pattern", [(0, 1, 0), (0, 0, 0), (0, 1, 1), (1, 0, 0, 1, 2)])
@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.bool_, np.complex64])
def test_joins_of_an_array_repeated(backend, pattern, dtype):
    """An array joined with itself and others, in any pattern (op by op, the kernel of
    as many arrays, each repeat a parameter of its own): NumPy's values along each axis."""
    rng = np.random.default_rng(len(pattern))
    values = [(rng.standard_normal((2, 3)) > 0).astype(dtype) if dtype == np.bool_
              else rng.standard_normal((2, 3)).astype(dtype) for _ in range(3)]
    arrays = [xp.asarray(v) for v in values]
    for axis in (0, 1):
        for ours, numpy in ((xp.concat, np.concatenate), (xp.stack, np.stack)):
            got = np.asarray(ours([arrays[k] for k in pattern], axis=axis))
            expected = numpy([values[k] for k in pattern], axis=axis)
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


def test_a_list_stacked_at_every_step_reads_what_numpy_reads(backend):
    """A concatenation that extends a recent one reuses its result (``api/extended.py``):
    an operand written since, a written result, a new dtype and a shorter list must each
    still give NumPy's values."""
    rng = np.random.default_rng(0)
    rows, arrays = [], []
    for i in range(12):
        row = rng.standard_normal(3)
        rows.append(row)
        arrays.append(xp.asarray(row))
        if i == 4:
            arrays[1][0] = 99.0  # an operand written since it was last stacked
            rows[1] = rows[1].copy()
            rows[1][0] = 99.0
        got = xp.stack(arrays)
        if i == 6:
            got[0, 0] = -5.0  # the result written: the next stack still reads the operands
        expected = np.stack(rows)
        if i == 6:
            expected[0, 0] = -5.0
        assert_same(got, expected, exact=True)
        assert_same(xp.concat(arrays, axis=None), np.concatenate(rows, axis=None), exact=True)
    singles = [xp.astype(a, xp.float32) for a in arrays]
    assert_same(xp.stack(singles), np.stack(rows).astype(np.float32), exact=True)
    last = np.array([1.0, 2.0, 3.0]) / 3.0  # a float64 operand: a float64 result
    assert_same(xp.stack([*singles, xp.asarray(last)]), np.stack([*np.stack(rows).astype(np.float32), last]),
                exact=True)
    assert_same(xp.stack(arrays[:5]), np.stack(rows[:5]), exact=True)
    assert_same(xp.stack(arrays[::-1]), np.stack(rows[::-1]), exact=True)


@pytest.mark.parametrize("join", ["concat", "stack"])
def test_an_operand_computed_and_written_in_place_since_its_join_is_read_anew(backend, join):
    """An operand that is a computed value of its array's own (a store writes it in
    place) and was joined before: written since, the next join that extends the earlier
    one reads its new values. (Remembered weakly, the operand's node was written in place
    and the join reused the stale result: ``[1, 1, 1, ...]`` where NumPy has 7.)"""
    ours, numpys = (xp.concat, np.concatenate) if join == "concat" else (xp.stack, np.stack)
    values = [np.full(3, 1.0), np.full(3, 2.0), np.full(3, 3.0)]
    arrays = [xp.asarray(v) * 1.0 for v in values]  # computed below: memory of their own
    for a in arrays:
        float(a[0])
    assert_same(ours(arrays[:2]), numpys(values[:2]), exact=True)
    arrays[0][0] = 7.0
    values[0][0] = 7.0
    assert_same(ours(arrays), numpys(values), exact=True)
    arrays[1][2] = -1.0
    values[1][2] = -1.0
    assert_same(ours([*arrays, arrays[0]]), numpys([*values, values[0]]), exact=True)


@pytest.mark.parametrize("join", ["concat", "stack", "flat"])
def test_a_pending_row_computed_by_a_read_and_written_since_its_join_is_read_anew(backend, join):
    """Rows appended pending and joined at each step, each read computing the rows its
    list holds: a row written in place after that (its array alone holds it) is read anew
    by the next join, whichever row it is, the newest included (a signed zero and a NaN
    among the values written: compared bit for bit), and a row written to the bits it
    held reads as it is."""
    ours, numpys = {"concat": (xp.concat, np.concatenate), "stack": (xp.stack, np.stack),
                    "flat": (lambda a: xp.concat(a, axis=None), lambda a: np.concatenate(a, axis=None))}[join]
    data = np.random.default_rng(5).standard_normal((12, 3))
    x = xp.asarray(data)
    rows, expected = [], []
    for i in range(12):
        rows.append(x[i] * 2.0)
        expected.append(data[i] * 2.0)
        if i in (4, 7):
            rows[1][1] = float(i)  # a row computed by an earlier read, written in place
            expected[1][1] = float(i)
        if i in (5, 9):
            rows[-2][0] = -0.0 if i == 5 else np.nan  # the row the last join read as it was pending
            expected[-2][0] = -0.0 if i == 5 else np.nan
        if i == 8:
            rows[2][2] = float(rows[2][2])  # the same bits again
        got = np.asarray(ours(rows))
        assert got.tobytes() == numpys(expected).tobytes(), i


def test_a_concatenation_its_caller_extends_is_not_kept(backend):
    """``h = xp.concat([h, row])`` extends the latest result itself: remembering each
    result (``api/extended.py``) would keep copies of a growing history alive."""
    import gc
    import weakref

    h, made = xp.zeros((1, 3)), []
    for i in range(6):
        h = xp.concat([h, xp.ones((1, 3)) * float(i)])
        made.append(weakref.ref(h._node))
    assert_same(h, np.concatenate([np.zeros((1, 3))] + [np.full((1, 3), float(i)) for i in range(6)]), exact=True)
    gc.collect()
    assert sum(r() is not None for r in made[:-1]) <= 1  # the first, whose operand was no result


@pytest.mark.parametrize("decomposition", ["det", "inv", "solve"])
def test_a_wide_stack_of_pending_decompositions_gives_numpys_values(backend, decomposition):
    """A stack of more values than its graph joins at once computes its deep operands one
    by one with what the next needs (``_compute_wide_operands``): a decomposition's tuple
    of results is among what they share, and is computed through its elements (it raised
    TypeError: a tuple taken for a result)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 3)), rng.standard_normal(3)
    fns = {"det": (lambda m: xp.linalg.det(m), np.linalg.det),
           "inv": (lambda m: xp.linalg.inv(m), np.linalg.inv),
           "solve": (lambda m: xp.linalg.solve(m.T @ m, xp.asarray(b)), lambda m: np.linalg.solve(m.T @ m, b))}
    ours, numpys = fns[decomposition]
    value = ours(xp.asarray(a))
    got = xp.stack([value + float(g) for g in range(9)])
    assert_same(got, np.stack([numpys(a) + float(g) for g in range(9)]), rtol=1e-12)
