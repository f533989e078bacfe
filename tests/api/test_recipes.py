"""Recipes (``api/recipes.py``): a function marked ``@recorded`` that replays what an
earlier call of the same signature recorded must record the graph its own code records:
the same key (ops, attributes, shapes, operands, outputs), the same run-time values, the
same result (shape, dtype, view of the same base with the same step), the same errors.

Each case calls a function three times (the third replays) and its code once
(``__wrapped__``), on arrays of drawn shapes and dtypes and drawn arguments, and
compares. Nothing is computed but where a test says so: the walk that a read makes
(``to_hlo.walk_pending``) gives what would be compiled and run."""

from __future__ import annotations

import math
import weakref
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import plaidarray as xp
from plaidarray.api import data_types, elementwise, indexing, manipulation, recipes, statistical, views
from plaidarray.trace import node as node_module
from plaidarray.trace.to_hlo import walk_pending
from plaidarray.trace.views import ViewOf
from strategies import basic_keys

DTYPES = [np.dtype(d) for d in ("float64", "float32", "int64", "int32", "bool")]
FLOATS = [np.dtype("float64"), np.dtype("float32")]


def _array(shape, dtype, seed=0):
    values = np.random.default_rng(seed).uniform(-3, 3, shape)
    return xp.asarray(values.astype(dtype) if np.dtype(dtype).kind != "b" else values > 0)


def _described(result, arguments):
    """What a call recorded: the result's type, shape, dtype and view record, and the
    walk of its graph (key and run-time values); an argument returned as it is, by place."""
    if isinstance(result, (tuple, list)) and result and all(isinstance(e, xp.Array) for e in result):
        return ("group", type(result), tuple(_described(e, arguments) for e in result))
    if not isinstance(result, xp.Array):
        return ("other", type(result))
    for i, a in enumerate(arguments):
        if result is a:
            return ("argument", i)
    record = result._base
    view = (record.steps, record.writable, record.family is _family(arguments)) if type(record) is ViewOf else None
    key, buffers, _, _ = walk_pending([result._node])
    values = [(b.dtype, b.shape, _bytes(b, result)) for b in buffers]
    return (result.shape, result.dtype, view, key, values)


def _bytes(buffer, result):
    """A run-time value's bytes: a host buffer's own, a device buffer's copied to the host
    by ``result``'s device (a GPU's graphs read host buffers too: a Python scalar's)."""
    return (buffer if isinstance(buffer, np.ndarray) else result.device.transfers.to_host(buffer)).tobytes()


def _family(arguments):
    first = next((a for a in arguments if isinstance(a, xp.Array)), None)
    record = None if first is None else first._base
    return record.family if type(record) is ViewOf else record


def _outcome(fn, args, kwargs):
    try:
        return _described(fn(*args, **kwargs), args)
    except Exception as exc:  # the error itself is what is compared
        return ("raised", type(exc), str(exc))


def _by_code(fn, args, kwargs):
    """What ``fn``'s code (and that of every recorded function it calls) gives: with no
    signature, no call keeps or replays a recipe."""
    with mock.patch.object(recipes, "_signature", lambda *_: None), mock.patch.object(recipes, "signature",
                                                                                    lambda *_: None):
        return _outcome(fn, args, kwargs)


def check_replays(fn, *args, cached=True, recorder=None, **kwargs):
    """``fn`` gives what its code gives on its first, second (captured) and third
    (replayed) call; with ``cached``, the third one replayed a recipe (of ``fn``, or of
    the ``recorder`` it calls: ``zeros_like`` places ``zeros``' array on ``x``'s device).
    A function with a C path (``_graph.Reduction``, ``Product``) records its common cases
    there, without a recipe: its recorded function (``fallback``) is checked alike."""
    recorded = getattr(fn, "fallback", fn)
    code = _by_code(recorded, args, kwargs)
    for _ in range(3):
        assert _outcome(fn, args, kwargs) == code
        assert _outcome(recorded, args, kwargs) == code
    if cached and code[0] != "raised":
        assert (recorder or recorded).recipes, f"{fn.__name__} kept no recipe"
    return code


def _replays_uncached(fn, *args, **kwargs):
    return check_replays(fn, *args, cached=False, **kwargs)


def _replays(fn, *args, **kwargs):
    return check_replays(fn, *args, **kwargs)


# --- every family, on drawn shapes, dtypes and arguments ----------------------------------

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
axes = st.one_of(st.none(), st.integers(-4, 3), st.tuples(st.integers(-3, 2), st.integers(-3, 2)))


@given(shape=shapes, dtype=st.sampled_from(DTYPES), axis=axes, keepdims=st.booleans(), data=st.data())
def test_reductions(shape, dtype, axis, keepdims, data):
    x = _array(shape, dtype)
    name = data.draw(st.sampled_from(["sum", "prod", "max", "min", "mean", "var", "std", "all", "any",
                                      "count_nonzero"]))
    check_replays(getattr(xp, name), x, axis=axis, keepdims=keepdims)


@given(shape=shapes, dtype=st.sampled_from(DTYPES), pending=st.booleans())
def test_whole_reductions(shape, dtype, pending):
    """``sum(x)``, ``prod``, ``max``, ``min`` and ``mean`` of a floating-point array over
    all its axes or some (``axis``, ``keepdims``) are recorded without the rules' checks
    and signature (``statistical.along``), as the rules record them; empty, 0-d
    and other dtypes' arrays, axes out of range, repeated or of NumPy's types, and other
    keywords, as the rules say (an empty max raises)."""
    for dims in (shape, (), (0,), (1,), (1, 1), (2, 0, 3), (3,)):
        x = _array(dims, dtype)
        if pending and x.dtype.kind == "f":
            x = -x
        for name in ("sum", "prod", "max", "min", "mean"):
            fn = getattr(xp, name)
            for kwargs in ({}, {"keepdims": False}, {"axis": 0}, {"axis": -1, "keepdims": True}, {"axis": (0, -1)},
                           {"axis": None, "keepdims": True}, {"axis": (1, 0), "keepdims": True}, {"axis": 3},
                           {"axis": (0, 0)}, {"axis": np.int64(0)}, {"keepdims": 1}):
                with mock.patch.object(statistical, "along", lambda *_: None):
                    rules = _by_code(fn, (x,), kwargs)
                for _ in range(2):
                    assert _outcome(fn, (x,), kwargs) == rules, (name, dims)


class _RulesCalled(Exception):
    """Raised by a reduction's rules where a test says its first path records the call."""


def _by_rules(fn, module, *args, **kwargs) -> bool:
    """Whether ``fn``'s call ran its rules (their ``reduce_axes``, in ``module``)."""
    with mock.patch.object(module, "reduce_axes", mock.Mock(side_effect=_RulesCalled)):
        try:
            fn(*args, **kwargs)
        except _RulesCalled:
            return True
    return False


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "uint64"])
def test_integer_reductions_of_new_lengths_are_recorded_as_the_rules_record_them(dtype):
    """Sums, products and means of integer and boolean arrays (converted first where the
    rules convert them: ``statistical.ACCUMULATED``, ``AVERAGED``) and extrema of integer
    arrays are recorded without the rules (``statistical.along``: a loop's counts of new
    lengths, 8-10 us a call by the rules), record what the rules record and give NumPy's
    values."""
    data = np.random.default_rng(4).integers(0, 100, 300).astype(dtype)
    x = xp.asarray(data)
    accumulated = {"dtype": {"b": np.int64, "i": np.int64, "u": np.uint64}[data.dtype.kind]}
    fast = {"sum": (*statistical.SUMMED, *statistical.ACCUMULATED), "prod": (*statistical.SUMMED, *statistical.ACCUMULATED),
            "max": statistical.COMPARED, "min": statistical.COMPARED, "mean": statistical.AVERAGED}
    for name in ("sum", "prod", "max", "min", "mean"):
        fn = getattr(xp, name)
        for n in (17, 18, 19):
            for kwargs in ({}, {"axis": 0}, {"keepdims": True}):
                with mock.patch.object(statistical, "along", lambda *_: None):
                    rules = _by_code(fn, (x[:n],), kwargs)
                assert _outcome(fn, (x[:n],), kwargs) == rules, (name, n, kwargs)
            expected = getattr(np, name)(data[:n], **(accumulated if name in ("sum", "prod") else {}))
            assert float(fn(x[:n])) == pytest.approx(float(expected), rel=1e-15)
        assert _by_rules(fn, statistical, x[:41], axis=0) != (np.dtype(dtype) in fast[name]), name


@pytest.mark.parametrize("dtype", ["bool", "int32", "float64"])
def test_truth_and_counts_of_new_lengths_are_recorded_as_the_rules_record_them(dtype):
    """``any``, ``all`` and ``count_nonzero`` of a mask are recorded without the rules (a
    loop's masks of new lengths, 5-10 us a call by the rules), record what the rules record
    (a mask's count converted to the default integer first) and give NumPy's values; of
    other dtypes (a comparison with 0 first) they are the rules'."""
    from plaidarray.api import searching, utility
    data = np.random.default_rng(5).integers(0, 3, 300).astype(dtype)
    x = xp.asarray(data)
    for name in ("any", "all", "count_nonzero"):
        fn = getattr(xp, name)
        for n in (17, 18, 19, 0):
            for kwargs in ({}, {"axis": 0}, {"keepdims": True}):
                with mock.patch.object(statistical, "along", lambda *_: None):
                    rules = _by_code(fn, (x[:n],), kwargs)
                assert _outcome(fn, (x[:n],), kwargs) == rules, (name, n, kwargs)
            expected = getattr(np, name)(data[:n])
            assert int(fn(x[:n])) == int(expected), (name, n)
        rules = searching if name == "count_nonzero" else utility
        assert _by_rules(fn, rules, x[:41]) != (dtype == "bool"), name


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
def test_arg_extrema_and_conversions_of_new_lengths_are_recorded_as_the_rules_record_them(dtype):
    """``argmax``/``argmin`` of vectors and along an axis, and ``astype`` to a dtype object,
    at lengths never met before: recorded without the rules (``searching._plain_arg``,
    ``data_types._plain_conversion``; 8 and 4 us a call by the rules), as the rules record
    them, with NumPy's values."""
    from plaidarray.api import searching

    data = np.random.default_rng(6).standard_normal((300, 3)).astype(dtype)
    x = xp.asarray(data)
    calls = [(xp.argmax, {}), (xp.argmin, {"axis": 0}), (xp.argmax, {"axis": -1, "keepdims": True}),
             (xp.argmin, {"keepdims": True})]
    for n in (21, 22, 23):
        for fn, kwargs in calls:
            window = x[:n, 0] if "axis" not in kwargs else x[:n]
            with mock.patch.object(searching, "_plain_arg", lambda *_, **__: None):
                rules = _outcome(fn, (window,), kwargs)
            assert _outcome(fn, (window,), kwargs) == rules, (fn.__name__, n, kwargs)
            expected = getattr(np, fn.__name__)(data[:n, 0] if "axis" not in kwargs else data[:n], **kwargs)
            np.testing.assert_array_equal(np.asarray(fn(window, **kwargs)), expected)
        for target in (xp.float64, xp.int32, xp.bool):
            with mock.patch.object(data_types, "_plain_conversion", lambda *_: None):
                rules = _by_code(xp.astype, (x[:n], target), {})
            assert _outcome(xp.astype, (x[:n], target), {}) == rules
            np.testing.assert_array_equal(np.asarray(xp.astype(x[:n], target)), data[:n].astype(target))
    rules_called = mock.Mock(side_effect=AssertionError("the rules were called"))
    with mock.patch.object(searching, "_arg_extremum", rules_called), \
            mock.patch.object(data_types, "check_array", rules_called):
        for n in (31, 32):
            assert int(xp.argmax(x[:n, 0])) == int(np.argmax(data[:n, 0]))
            np.testing.assert_array_equal(np.asarray(xp.argmin(x[:n], axis=0)), np.argmin(data[:n], axis=0))
            np.testing.assert_array_equal(np.asarray(xp.astype(x[:n], xp.int64)), data[:n].astype(np.int64))


def test_where_of_new_lengths_is_recorded_as_the_rules_record_it():
    """``where`` of a mask and arrays of its shape, or an array and a Python scalar, at
    lengths never met before: recorded without the rules (``searching._plain_where``; 15 us
    a call by them) as they record it, with NumPy's values; broadcasting takes the rules."""
    from plaidarray.api import searching

    data = np.random.default_rng(7).standard_normal(300)
    x = xp.asarray(data)
    for n in (21, 22):
        for args in ((x[:n] > 0, x[:n], 0.0), (x[:n] > 0, 2, x[:n]), (x[:n] > 0, x[:n], -x[:n])):
            with mock.patch.object(searching, "_plain_where", lambda *_: None):
                rules = _outcome(xp.where, args, {})
            assert _outcome(xp.where, args, {}) == rules
    rules_called = mock.Mock(side_effect=_RulesCalled)
    with mock.patch.object(searching, "operands", rules_called):
        for n in (31, 32):
            np.testing.assert_array_equal(np.asarray(xp.where(x[:n] > 0, x[:n], 0.0)),
                                          np.where(data[:n] > 0, data[:n], 0.0))
            np.testing.assert_array_equal(np.asarray(xp.where(x[:n] > 0, 1, x[:n])), np.where(data[:n] > 0, 1, data[:n]))
        with pytest.raises(_RulesCalled):
            xp.where(x[:33] > 0, x[:33], x[:1])  # a broadcast: the rules'


@given(shape=shapes, dtype=st.sampled_from(DTYPES), pending=st.booleans())
def test_whole_variances(shape, dtype, pending):
    """``var(x)`` and ``std(x)`` over all axes or some (``axis``, ``keepdims``), with or
    without a ``correction``, are recorded without the rules' checks and signatures
    (``statistical._whole_var``) as the rules record them; one element along the axes,
    ``N - correction`` not positive, other keywords, axes out of range, repeated or of
    NumPy's types, empty, 0-d and other dtypes' arrays as the rules say."""
    for dims in (shape, (), (0,), (1,), (1, 1), (2, 0, 3), (3,), (2, 1), (2, 3), (4, 1, 3)):
        x = _array(dims, dtype)
        if pending and x.dtype.kind == "f":
            x = -x
        for name in ("var", "std"):
            fn = getattr(xp, name)
            for kwargs in ({}, {"correction": 1}, {"correction": 0.5}, {"correction": 3}, {"keepdims": False},
                           {"correction": True}, {"axis": 0}, {"axis": -1, "keepdims": True, "correction": 1},
                           {"axis": (0, -1)}, {"axis": None, "keepdims": True}, {"axis": (1, 0), "keepdims": True},
                           {"axis": 1, "correction": 2}, {"axis": 3}, {"axis": (0, 0)}, {"axis": np.int64(0)},
                           {"keepdims": 1}):
                rules = _by_code(fn, (x,), kwargs)
                for _ in range(3):
                    assert _outcome(fn, (x,), kwargs) == rules, (name, dims, kwargs)


@pytest.mark.parametrize("name", ["var", "std"])
def test_variances_along_axes_of_new_lengths_skip_the_rules(name):
    """``std(b, axis=0)`` of batches of new lengths is recorded without the rules (60 us a
    call by them), with NumPy's values."""
    data = np.random.default_rng(8).standard_normal((300, 4))
    x = xp.asarray(data)
    assert not _by_rules(getattr(xp, name), statistical, x[:41], axis=0, correction=1)
    for n in (17, 18, 19):
        np.testing.assert_allclose(np.asarray(getattr(xp, name)(x[:n], axis=0, keepdims=True)),
                                   getattr(np, name)(data[:n], axis=0, keepdims=True), rtol=1e-13)


@pytest.mark.parametrize("name", ["var", "std"])
def test_variances_of_windows_of_new_lengths_make_no_reused_scalars(name):
    """Over every axis the mean a variance centres on is 0-d, its count a value of its
    own: windows of ever new lengths add nothing to the reused scalars (a unit array's
    count was one there per length, each made in Python, and filled the table), and the
    values are NumPy's."""
    from plaidarray.api import graph

    data = np.random.default_rng(3).standard_normal(400)
    x = xp.asarray(data)
    graph.REUSED_SCALARS.clear()
    got = [float(getattr(xp, name)(x[:n], correction=1)) for n in range(40, 400, 3)]
    assert len(graph.REUSED_SCALARS) <= 2
    expected = [float(getattr(np, name)(data[:n], ddof=1)) for n in range(40, 400, 3)]
    np.testing.assert_allclose(got, expected, rtol=1e-13)


@given(shape=shapes, dtype=st.sampled_from(DTYPES[:4]), axis=st.integers(-3, 2), initial=st.booleans(),
       name=st.sampled_from(["cumulative_sum", "cumulative_prod"]))
def test_cumulative(shape, dtype, axis, initial, name):
    check_replays(getattr(xp, name), _array(shape, dtype), axis=axis if shape else None, include_initial=initial)


@given(shape=shapes, dtypes=st.lists(st.sampled_from(DTYPES[:4]), min_size=0, max_size=4),
       axis=st.one_of(st.none(), st.integers(-3, 2)), data=st.data())
def test_concat_and_stack(shape, dtypes, axis, data):
    """New arrays at each call (a concatenation of the same ones is remembered,
    ``extended.py``), so each call joins them."""
    name = data.draw(st.sampled_from(["concat", "stack"]))
    sizes = [data.draw(st.integers(0, 3)) for _ in dtypes]

    def arrays():
        if name == "stack":
            return [_array(shape, d, i) for i, d in enumerate(dtypes)]
        return [_array((n, *shape[1:]) if axis in (0, -len(shape)) and shape else shape, d, i)
                for i, (d, n) in enumerate(zip(dtypes, sizes))]

    fn = getattr(xp, name)
    kwargs = {"axis": 0 if axis is None and name == "stack" else axis}
    code = _by_code(fn, (arrays(),), kwargs)
    for _ in range(3):
        assert _outcome(fn, (arrays(),), kwargs) == code


@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple), dtype=st.sampled_from(DTYPES[:4]),
       axis=st.integers(-4, 3), count=st.integers(1, 11), data=st.data())
def test_alike_concatenations(shape, dtype, axis, count, data):
    """Arrays of one dtype and rank alike off the axis are joined without the checks'
    and the recipe's tables (``manipulation._alike_along``), as the rules join them;
    a last array of another dtype, rank or size on any axis, or an axis out of range,
    as the rules say."""
    sizes = [data.draw(st.integers(0, 3)) for _ in range(count)]

    def arrays(last, off=None):
        out = [_array(tuple(n if d == axis % len(shape) else s for d, s in enumerate(shape)), dtype, i)
               for i, n in enumerate(sizes)]
        if last == "dtype":
            out[-1] = xp.astype(out[-1], xp.float32 if dtype != np.float32 else xp.int64)
        elif last == "rank":
            out[-1] = out[-1][None]
        elif last == "size":
            out[-1] = _array(tuple(s + (d == off) for d, s in enumerate(out[-1].shape)), dtype)
        return out

    for case in [("alike",), ("dtype",), ("rank",), *(("size", off) for off in range(len(shape)))]:
        with mock.patch.object(manipulation, "_alike_along", lambda *_: None):
            rules = _by_code(xp.concat, (arrays(*case),), {"axis": axis})
        for _ in range(2):
            assert _outcome(xp.concat, (arrays(*case),), {"axis": axis}) == rules, case


@given(shape=shapes, dtype=st.sampled_from(DTYPES[:4]), axis=st.integers(-5, 4), count=st.integers(1, 11))
def test_alike_stacks(shape, dtype, axis, count):
    """Arrays of one shape and dtype are stacked without the checks' and the recipe's
    tables (``manipulation._alike_stack``), as the rules stack them; a last array of
    another dtype or shape, or an axis out of range, as the rules say."""
    def arrays(last):
        out = [_array(shape, dtype, i) for i in range(count)]
        if last == "dtype":
            out[-1] = xp.astype(out[-1], xp.float32 if dtype != np.float32 else xp.int64)
        elif last == "shape":
            out[-1] = _array((*shape, 1), dtype)
        return out

    for last in ("alike", "dtype", "shape"):
        with mock.patch.object(manipulation, "_alike_stack", lambda *_: None):
            rules = _by_code(xp.stack, (arrays(last),), {"axis": axis})
        for _ in range(2):
            assert _outcome(xp.stack, (arrays(last),), {"axis": axis}) == rules, last


@given(shape=shapes, dtype=st.sampled_from(DTYPES), axis=st.one_of(st.none(), st.integers(-4, 3)),
       keepdims=st.booleans(), name=st.sampled_from(["argmax", "argmin", "sort", "argsort"]))
def test_searching_and_sorting(shape, dtype, axis, keepdims, name):
    x = _array(shape, dtype)
    if name in ("sort", "argsort"):
        check_replays(getattr(xp, name), x, axis=-1 if axis is None else axis, descending=keepdims)
    else:
        check_replays(getattr(xp, name), x, axis=axis, keepdims=keepdims)


@given(rows=st.integers(0, 4), inner=st.integers(0, 4), cols=st.integers(0, 4),
       batch=st.sampled_from([(), (2,), (1,), (2, 1)]), form=st.sampled_from(["mm", "mv", "vm", "vv", "bm", "mb"]),
       dtypes=st.tuples(st.sampled_from(DTYPES[:4]), st.sampled_from(DTYPES[:4])), same=st.booleans())
def test_matmul(rows, inner, cols, batch, form, dtypes, same):
    a_shape = {"mm": (rows, inner), "mv": (rows, inner), "vm": (inner,), "vv": (inner,), "bm": (*batch, rows, inner),
               "mb": (rows, inner)}[form]
    b_shape = {"mm": (inner, cols), "mv": (inner,), "vm": (inner, cols), "vv": (inner,), "bm": (inner, cols),
               "mb": (*batch, inner, cols)}[form]
    a = _array(a_shape, dtypes[0])
    b = a if same and a_shape == b_shape and dtypes[0] == dtypes[1] else _array(b_shape, dtypes[1], 1)
    check_replays(xp.matmul, a, b)
    check_replays(xp.vecdot, a, b)


@pytest.mark.parametrize("fn, shape", [
    (xp.matmul, (3, 3)), (xp.matmul, (2, 3, 3)), (xp.vecdot, (3,)), (xp.linalg.solve, (3, 3)), (xp.linalg.outer, (3,)),
    (xp.divide, (2, 3)), (xp.logaddexp, (2,)), (xp.tensordot, (2, 2)),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_an_argument_given_twice_is_part_of_the_signature(fn, shape):
    """``f(a, a)`` then ``f(a, b)`` and back: one node twice, then two, of the same shapes."""
    a, b = _array(shape, "float64"), _array(shape, "float64", 1)
    for args in [(a, a)] * 3 + [(a, b)] * 3 + [(a, a)]:
        assert _outcome(fn, args, {}) == _by_code(fn, args, {})


@given(shape=nonempty_shapes, dtype=st.sampled_from(DTYPES), data=st.data())
def test_views(shape, dtype, data):
    """The view-making functions, on a root and on a view of one."""
    x = _array(shape, dtype)
    of_view = data.draw(st.booleans(), label="of a view")
    if of_view:
        x = xp.flip(x, axis=0)
    # A reshape of a view is laid out from the view's layout, which no signature holds.
    check_replays = _replays_uncached if of_view else _replays
    ndim = len(shape)
    name = data.draw(st.sampled_from(["permute_dims", "matrix_transpose", "reshape", "expand_dims", "squeeze",
                                      "flip", "moveaxis", "roll", "tile", "broadcast_to", "T", "diagonal"]))
    if name == "permute_dims":
        check_replays(xp.permute_dims, x, tuple(data.draw(st.permutations(range(ndim)))))
    elif name == "matrix_transpose":
        check_replays(xp.matrix_transpose, x)
    elif name == "reshape":
        size = math.prod(shape)
        check_replays(xp.reshape, x, data.draw(st.sampled_from([(size,), (-1,), (1, -1), (size, 1), shape])))
    elif name == "expand_dims":
        check_replays(xp.expand_dims, x, axis=data.draw(st.integers(-ndim - 2, ndim + 1)))
    elif name == "squeeze":
        check_replays(xp.squeeze, x, axis=data.draw(st.integers(-ndim, ndim - 1)))
    elif name == "flip":
        check_replays(xp.flip, x, axis=data.draw(axes))
    elif name == "moveaxis":
        check_replays(xp.moveaxis, x, data.draw(st.integers(-ndim, ndim - 1)), data.draw(st.integers(-ndim, ndim - 1)))
    elif name == "roll":
        check_replays(xp.roll, x, data.draw(st.integers(-5, 5)), axis=data.draw(st.one_of(st.none(), st.integers(0, ndim - 1))))
    elif name == "tile":
        check_replays(xp.tile, x, tuple(data.draw(st.lists(st.integers(0, 3), max_size=3))))
    elif name == "broadcast_to":
        check_replays(xp.broadcast_to, x, data.draw(st.sampled_from([(2, *shape), shape, (3,), ()])))
    elif name == "T":
        assume(ndim == 2)
        for _ in range(3):
            assert _described(x.T, (x,)) == _by_code(xp.permute_dims, (x, (1, 0)), {})
    else:
        check_replays(xp.linalg.diagonal, x, offset=data.draw(st.integers(-4, 4)))


def test_a_view_of_a_view_is_another_signature():
    """A reshape of a root is a view; of a transposed view, where NumPy copies, it is not."""
    a = _array((3, 3), "float64")
    t = a.T
    for x in [a] * 3 + [t] * 3:
        assert _outcome(xp.reshape, (x, (9,)), {}) == _by_code(xp.reshape, (x, (9,)), {})
    assert xp.reshape(t, (9,))._base is None


@given(shape=nonempty_shapes, dtype=st.sampled_from(DTYPES), data=st.data())
def test_basic_indexing(shape, dtype, data):
    """Ints (negative and out of range), slices, None and ``...``: a view or a copy."""
    x = _array(shape, dtype)
    key = data.draw(basic_keys(shape) | st.integers(-6, 6) | st.tuples(*(st.integers(-5, 5) for _ in shape)))
    code = check_replays(views._getitem, x, key)
    for _ in range(2):
        assert _outcome(views.getitem, (x, key), {}) == code


@given(shape=shapes, dtype=st.sampled_from(DTYPES), data=st.data())
def test_integer_keys(shape, dtype, data):
    """``x[i]``, ``x[i, j]``...: recorded without planning (``indexing.integer_index``),
    as ``getitem``'s rules record them; negative and out-of-range ints, empty and 0-d arrays."""
    x = _array(shape, dtype)
    if data.draw(st.booleans(), label="pending"):
        x = x * 2.0 if x.dtype.kind == "f" else x
    ints = tuple(data.draw(st.lists(st.integers(-6, 6), max_size=len(shape) + 1)))
    first = range(-shape[0] - 1, shape[0] + 1) if shape else [0]
    for key in (ints, *ints[:1], *first, *((i, -1) for i in first)):
        assert _outcome(views.getitem, (x, key), {}) == _by_code(views._getitem, (x, key), {})


@given(shape=shapes, dtype=st.sampled_from([*DTYPES, np.dtype("int8"), np.dtype("uint8")]),
       value=st.sampled_from([2.5, -0.0, 3, -1, 300, 2**70, True]), data=st.data())
def test_integer_updates(shape, dtype, value, data):
    """``x[i] = v``, ``x[i, j] = v``... with a Python scalar: recorded without planning
    (``indexing.integer_update``), as ``setitem``'s rules record them, errors included (a
    float into an integer array, an int that does not fit)."""
    x = _array(shape, dtype)
    if data.draw(st.booleans(), label="pending"):
        x = xp.negative(x) if x.dtype.kind != "b" else xp.logical_not(x)
    ints = tuple(data.draw(st.lists(st.integers(-6, 6), max_size=len(shape) + 1)))
    first = range(-shape[0] - 1, shape[0] + 1) if shape else [0]
    for key in (ints, *ints[:1], *first, *((i, -1) for i in first)):
        assert _outcome(indexing.setitem, (x, key, value), {}) == _by_code(indexing._updated, (x, key, value), {})


slices = st.builds(slice, st.one_of(st.none(), st.integers(-6, 6)), st.one_of(st.none(), st.integers(-6, 6)),
                   st.sampled_from([None, 1, 2, -1, -2]))


@given(shape=nonempty_shapes, dtype=st.sampled_from(DTYPES), data=st.data())
def test_block_updates(shape, dtype, data):
    """``x[key] = value`` of slices and ints by the rules (``indexing._updated``, whose
    recipe a stencil's ``u[1:-1, 1:-1] = inner`` replays): every step, a reversed or
    strided slice, an empty block, a value broadcast or of another dtype, a Python
    scalar, errors included, as the rules record them."""
    x = _array(shape, dtype)
    if data.draw(st.booleans(), label="pending"):
        x = xp.negative(x) if x.dtype.kind != "b" else xp.logical_not(x)
    parts = data.draw(st.lists(st.one_of(slices, st.integers(-5, 4)), min_size=1, max_size=len(shape)))
    key = tuple(parts) if data.draw(st.booleans(), label="tuple") else parts[0]
    try:
        block = np.empty(shape)[key].shape
    except IndexError:  # an int out of range: the rules raise, at every call
        block = ()
    kind = data.draw(st.sampled_from(["scalar", "block", "broadcast", "other dtype"]))
    if kind == "scalar":
        value = data.draw(st.sampled_from([2.5, -1, True]))
    elif kind == "block":
        value = _array(block, dtype, seed=1)
    elif kind == "broadcast":
        value = _array(block[-1:], dtype, seed=2)
    else:
        value = _array(block, np.dtype("bool" if dtype.kind != "b" else "float64"), seed=3)
    check_replays(indexing._updated, x, key, value)


def test_a_store_by_index_arrays_checks_their_range_at_every_call():
    """``x[idx] = v`` of index arrays keeps no recipe of its rules (``_updated``): its
    check reads the positions, so a replay never skips it (a recipe holds shapes)."""
    for _ in range(3):
        x = xp.zeros((4, 4))
        indexing.setitem(x, (xp.asarray([0, 1]), slice(1, 3)), 1.0)
        indexing.setitem(x, xp.asarray([1, 2]), 2.0)
    with pytest.raises(IndexError):
        indexing.setitem(x, (xp.asarray([0, 9]), slice(1, 3)), 1.0)
    with pytest.raises(IndexError):
        indexing.setitem(x, xp.asarray([1, 7]), 2.0)


def test_integer_updates_write_in_place():
    """The update a loop of assignments records runs at once, into the array's buffer."""
    x = xp.zeros((5, 3))
    x[0] = 1.0  # computed: the next writes update its buffer
    buffer = weakref.ref(x._node.buffer)  # a strong reference would forbid the in-place write
    compiles = xp.cache_info().compiles
    for i in range(5):
        x[i] = float(i)
        x[i, 2] = -1
    assert x._node.buffer is buffer()
    assert xp.cache_info().compiles - compiles <= 2
    want = np.repeat(np.arange(5.0)[:, None], 3, axis=1)
    want[:, 2] = -1
    np.testing.assert_array_equal(np.asarray(x), want)


@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple), dtype=st.sampled_from(DTYPES),
       data=st.data())
def test_window_keys(shape, dtype, data):
    """``x[i:j]``, ``x[i, j:k]``...: ints and unit-step slices, recorded without planning
    (``indexing.window_index``) as ``getitem``'s rules record them (a view of the same
    base by the same step); bounds past either end, empty windows and arrays, ints out
    of range."""
    x = _array(shape, dtype)
    if data.draw(st.booleans(), label="pending"):
        x = x * 2.0 if x.dtype.kind == "f" else x
    bound = st.one_of(st.none(), st.integers(-7, 7))
    part = st.one_of(st.integers(-6, 6), st.builds(slice, bound, bound, st.sampled_from([None, 1])))
    parts = data.draw(st.lists(part, min_size=1, max_size=len(shape) + 1))
    for key in (tuple(parts), parts[0]):
        assert _outcome(views.getitem, (x, key), {}) == _by_code(views._getitem, (x, key), {})


@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple), dtype=st.sampled_from(DTYPES),
       data=st.data())
def test_new_axis_window_keys(shape, dtype, data):
    """``x[:, None]``, ``x[None]``, ``m[i:j, None]``, ``t[..., None]``: new axes among
    ints and unit-step slices, recorded without planning (``indexing.newaxis_window``) as
    ``getitem``'s rules record them (the same nodes, a view of the same base by the same
    step), with NumPy's values; more than one ``...``, steps and ints out of range go to
    the rules."""
    x = _array(shape, dtype)
    if data.draw(st.booleans(), label="pending"):
        x = x * 2.0 if x.dtype.kind == "f" else x
    bound = st.one_of(st.none(), st.integers(-7, 7))
    part = st.one_of(st.integers(-6, 6), st.builds(slice, bound, bound, st.sampled_from([None, 1, 2])),
                     st.just(None), st.just(None), st.just(Ellipsis))
    key = tuple(data.draw(st.lists(part, min_size=1, max_size=len(shape) + 2), label="key"))
    described = _outcome(views.getitem, (x, key), {})
    assert described == _by_code(views._getitem, (x, key), {})
    if described[0] != "raised":
        np.testing.assert_array_equal(np.asarray(x[key]), np.asarray(x)[key])


def test_new_axes_of_new_lengths_are_recorded_without_the_rules():
    """A new length's ``w[:, None]`` and ``w[None, 1:]`` (an outer product's operands,
    ``w[:, None] - w[None, :]``) take no plan of ``getitem``'s rules."""
    x = xp.asarray(np.arange(40.0))
    rules = mock.Mock(side_effect=AssertionError("getitem's rules ran"))
    with mock.patch.object(views, "view", rules), mock.patch.object(indexing, "getitem", rules):
        for n in (7, 9, 12):
            w = x[:n]
            np.testing.assert_array_equal(np.asarray(w[:, None] - w[None, 1:]),
                                          np.arange(n)[:, None] - np.arange(1, n)[None, :])


def test_window_keys_past_the_pending_bound(monkeypatch):
    monkeypatch.setattr(node_module, "MAX_PENDING", 4)
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    for _ in range(3):
        x = x + 1.0
    assert indexing.window_index(x, (slice(1, 3),)) is None  # getitem's rules decide where to cut
    np.testing.assert_array_equal(np.asarray(x[1:3, 1]), np.array([5.0, 9.0]) + 3)


def test_integer_keys_past_the_pending_bound(monkeypatch):
    monkeypatch.setattr(node_module, "MAX_PENDING", 4)
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    for _ in range(3):
        x = x + 1.0
    assert indexing.integer_index(x, (1,)) is None  # getitem's rules decide where to cut
    np.testing.assert_array_equal(np.asarray(x[1]), np.arange(4.0, 8.0) + 3)


@given(shape=nonempty_shapes, dtype=st.sampled_from(DTYPES), index=st.integers(-5, 4), axis=st.integers(-2, 1),
       as_array=st.booleans())
def test_take(shape, dtype, index, axis, as_array):
    x = _array(shape, dtype)
    indices = xp.asarray([index, 0]) if as_array else index
    check_replays(xp.take, x, indices, axis=axis)


@given(shape=nonempty_shapes, dtype=st.sampled_from(DTYPES), positions=st.lists(st.integers(-5, 4), min_size=1,
                                                                                   max_size=3),
       two_keys=st.booleans())
def test_scatters(shape, dtype, positions, two_keys):
    """``x[idx] = v`` of index arrays (``indexing._scattered``) replays its positions and
    scatter, and still raises for an index out of range at every call (its check runs
    before any recipe: a recipe holds shapes, not positions)."""
    x = _array(shape, dtype)
    key = (xp.asarray(positions),) + ((xp.asarray([0] * len(positions)),) if two_keys and len(shape) > 1 else ())
    value = _array((len(positions),), dtype)
    check_replays(indexing._scattered, x, key, value)
    if all(-n <= p < n for p, n in ((p, shape[0]) for p in positions)):
        out_of_range = (xp.asarray([shape[0]] + positions[1:]),) + key[1:]
        with pytest.raises(IndexError):
            indexing._scattered(x, out_of_range, value)


def test_a_value_read_keeps_no_recipe():
    """``take`` reads a 0-d index array's value: a recipe would keep the first one."""
    x = xp.asarray(np.arange(5.0))
    xp.take.recipes.clear()
    for i in (1, 1, 1, 2, 3):
        assert float(xp.take(x, xp.asarray(i))) == i
    assert not xp.take.recipes


@given(data=st.data())
def test_creation(data):
    name = data.draw(st.sampled_from(["zeros", "ones", "full", "eye", "arange", "linspace", "empty"]))
    dtype = data.draw(st.sampled_from([None, *DTYPES]))
    if name in ("zeros", "ones", "empty"):
        check_replays(getattr(xp, name), data.draw(shapes | st.integers(-1, 4)), dtype=dtype)
    elif name == "full":
        value = data.draw(st.sampled_from([0, 1, -2, 0.0, -0.0, 1.5, math.nan, math.inf, True, False, 2**70]))
        check_replays(xp.full, data.draw(shapes), value, dtype=dtype)
    elif name == "eye":
        check_replays(xp.eye, data.draw(st.integers(0, 4)), data.draw(st.one_of(st.none(), st.integers(0, 4))),
                      k=data.draw(st.integers(-5, 5)), dtype=dtype)
    elif name == "arange":
        bounds = st.one_of(st.integers(-5, 5), st.floats(-5, 5, allow_nan=False))
        check_replays(xp.arange, data.draw(bounds), data.draw(bounds), data.draw(st.sampled_from([1, 2, -1, 0.5, 0])),
                      dtype=dtype)
    else:
        check_replays(xp.linspace, data.draw(st.floats(-5, 5)), data.draw(st.integers(-5, 5)),
                      data.draw(st.integers(0, 5)), endpoint=data.draw(st.booleans()), dtype=dtype)


@given(shape=shapes, dtype=st.sampled_from(DTYPES), data=st.data())
def test_creation_like_and_triangles(shape, dtype, data):
    x = _array(shape, dtype)
    name = data.draw(st.sampled_from(["zeros_like", "ones_like", "full_like", "tril", "triu", "astype"]))
    if name == "full_like":
        check_replays(xp.full_like, x, data.draw(st.sampled_from([0, 2, -0.0, 0.5, True])), recorder=xp.full)
    elif name in ("tril", "triu"):
        check_replays(getattr(xp, name), x, k=data.draw(st.integers(-3, 3)))
    elif name == "astype":
        check_replays(xp.astype, x, data.draw(st.sampled_from(DTYPES)), copy=data.draw(st.booleans()),
                      recorder=data_types._converted)
    else:
        check_replays(getattr(xp, name), x, dtype=data.draw(st.sampled_from([None, *DTYPES])),
                      recorder=getattr(xp, name.removesuffix("_like")))


def test_fills_of_new_shapes_are_recorded_without_the_rules():
    """``zeros``, ``ones``, ``empty`` and ``full`` of a Python scalar at shapes met for the
    first time (a batch's, a window's) take no step of ``full``'s rules
    (``creation._plain_fill``), with NumPy's values, dtypes and the device."""
    from plaidarray.api import creation

    rules = mock.Mock(side_effect=AssertionError("full's rules ran"))
    cases = [(xp.zeros, (), np.zeros), (xp.ones, (), np.ones), (xp.empty, (), np.zeros),
             (xp.full, (2.5,), lambda s, dtype=None: np.full(s, 2.5, dtype)),
             (xp.full, (-3,), lambda s, dtype=None: np.full(s, -3, dtype)),
             (xp.full, (True,), lambda s, dtype=None: np.full(s, True, dtype))]
    with mock.patch.object(creation.graph, "shape_tuple", rules):
        for n in (13, 17, 19):
            for fn, args, numpy_fn in cases:
                for shape in (n, (n, 2), (1, n, 3)):
                    made = fn(shape, *args)
                    assert made.device == xp.__array_namespace_info__().default_device()
                    want = numpy_fn(shape)
                    assert made.dtype == want.dtype
                    np.testing.assert_array_equal(np.asarray(made), want)
            np.testing.assert_array_equal(np.asarray(xp.zeros(n, dtype=xp.float32)), np.zeros(n, np.float32))
            np.testing.assert_array_equal(np.asarray(xp.full(n, 7, dtype=xp.int8)), np.full(n, 7, np.int8))
            for dtype in (xp.complex64, xp.complex128):  # a spectrum's zeros_like: the value its real part
                for value in (0, 3, -0.0, 2.5):
                    made = np.asarray(xp.full((n, 2), value, dtype=dtype))
                    want = np.full((n, 2), value, dtype)
                    assert made.dtype == want.dtype and made.tobytes() == want.tobytes()
                spectrum = xp.asarray(np.ones(n + 1, dtype))
                assert np.asarray(xp.zeros_like(spectrum)).tobytes() == np.zeros(n + 1, dtype).tobytes()


@given(shapes=st.tuples(shapes, shapes, shapes), dtypes=st.tuples(*(st.sampled_from(DTYPES[:4]) for _ in range(2))),
       scalar=st.sampled_from([None, 0.0, -0.0, 2, 1.5, True]), data=st.data())
def test_promotion_and_broadcasting(shapes, dtypes, scalar, data):
    """The general rules behind the elementwise functions and ``where``."""
    a = _array(shapes[0][-2:], dtypes[0])
    b = _array(shapes[1][-2:], dtypes[1], 1) if scalar is None else scalar
    name = data.draw(st.sampled_from(["add", "multiply", "divide", "floor_divide", "remainder", "maximum",
                                      "equal", "logaddexp", "pow"]))
    check_replays(getattr(xp, name), a, b, cached=False)
    check_replays(xp.where, _array(shapes[2][-2:], "bool", 2), a, b, cached=False)


@given(shape=shapes, other=shapes, dtypes=st.tuples(*(st.sampled_from(DTYPES) for _ in range(2))),
       pending=st.booleans(), data=st.data())
def test_arrays_that_broadcast(shape, other, dtypes, pending, data):
    """Two arrays of one dtype and shapes that broadcast (``x - mean(x)``, ``y - mean(y,
    axis=0)``), either first, are broadcast without the general rules
    (``elementwise.broadcast_pair``) as they broadcast them; other dtypes, shapes that do
    not broadcast, categories an op refuses, as the rules say."""
    x = _array(shape, dtypes[0])
    kept = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    suffix = tuple(d if keep else 1 for d, keep in zip(shape, kept))[data.draw(st.integers(0, len(shape))):]
    for dims in (suffix, (), other):
        y = _array(dims, dtypes[1], 1)
        if pending and y.dtype.kind in "iuf":
            y = -y
        for name in ("add", "subtract", "multiply", "divide", "maximum", "less", "bitwise_and", "atan2", "logical_or"):
            fn = getattr(xp, name)
            for args in ((x, y), (y, x)):
                with mock.patch.object(elementwise, "broadcast_pair", lambda *_: None):
                    rules = _by_code(fn, args, {})
                for _ in range(2):
                    assert _outcome(fn, args, {}) == rules, (name, shape, dims)


def test_a_0d_operand_past_the_pending_bound(monkeypatch):
    monkeypatch.setattr(node_module, "MAX_PENDING", 4)
    x = xp.asarray(np.arange(6.0))
    m = xp.mean(x)
    for _ in range(2):
        m = m + 1.0  # 4 pending ops: the broadcast would be the fifth
    assert m._node.depth == 4
    assert elementwise.broadcast_pair(x._node, m._node) is None  # the rules decide where to cut
    assert elementwise.broadcast_pair(m._node, x._node) is None
    np.testing.assert_array_equal(np.asarray(x - m), np.arange(6.0) - 4.5)


@given(shape=shapes, dtype=st.sampled_from(DTYPES),
       name=st.sampled_from(["square", "isnan", "isinf", "isfinite", "signbit", "reciprocal", "positive", "conj",
                             "real", "floor"]))
def test_unary_decompositions(shape, dtype, name):
    check_replays(getattr(xp, name), _array(shape, dtype), cached=False)


@given(n=st.integers(1, 3), batch=st.sampled_from([(), (2,)]), dtype=st.sampled_from(FLOATS), data=st.data())
def test_linalg(n, batch, dtype, data):
    a = _array((*batch, n, n), dtype)
    name = data.draw(st.sampled_from(["inv", "solve", "det", "trace", "vector_norm", "matrix_norm", "outer",
                                      "matrix_power", "eigvalsh", "svdvals", "pinv", "matrix_rank"]))
    la = xp.linalg
    if name == "solve":
        check_replays(la.solve, a, _array(data.draw(st.sampled_from([(n,), (n, 2), (*batch, n, 1)])), dtype, 1))
    elif name == "vector_norm":
        check_replays(la.vector_norm, a, axis=data.draw(axes), ord=data.draw(st.sampled_from([2, 1, 0, math.inf, 3])))
    elif name == "matrix_norm":
        check_replays(la.matrix_norm, a, ord=data.draw(st.sampled_from(["fro", "nuc", 1, -1, 2, math.inf])))
    elif name == "outer":
        check_replays(la.outer, _array((n,), dtype), _array((n + 1,), dtype, 1))
    elif name == "matrix_power":
        check_replays(la.matrix_power, a, data.draw(st.integers(-2, 4)))
    elif name == "trace":
        check_replays(la.trace, a, offset=data.draw(st.integers(-2, 2)))
    else:
        check_replays(getattr(la, name), a)


@given(rows=st.integers(1, 4), cols=st.integers(1, 4), batch=st.sampled_from([(), (2,), (2, 1)]),
       dtype=st.sampled_from(FLOATS), data=st.data())
def test_decompositions_of_several_results(rows, cols, batch, dtype, data):
    """Functions whose result is a named tuple of arrays keep a recipe that makes each
    array again (``Recipe.group``), as their code records them."""
    a = _array((*batch, rows, cols), dtype)
    square = _array((*batch, rows, rows), dtype)
    la = xp.linalg
    name = data.draw(st.sampled_from(["eigh", "eig", "slogdet", "qr", "svd"]))
    if name == "qr":
        code = check_replays(la.qr, a, mode=data.draw(st.sampled_from(["reduced", "complete"])))
    elif name == "svd":
        code = check_replays(la.svd, a, full_matrices=data.draw(st.booleans()))
    else:
        code = check_replays(getattr(la, name), square)
    assert code[0] == "group"


def test_a_replayed_decomposition_computes_numpys_values():
    rng = np.random.default_rng(3)
    for _ in range(4):  # the last two replay
        m = rng.standard_normal((4, 4))
        a = m @ m.T + 4 * np.eye(4)
        w, v = xp.linalg.eigh(xp.asarray(a))
        np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(a), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(v) * np.asarray(w) @ np.asarray(v).T, a, rtol=1e-12, atol=1e-12)
        sign, logdet = xp.linalg.slogdet(xp.asarray(m))
        assert (float(sign), float(logdet)) == pytest.approx(tuple(np.linalg.slogdet(m)), rel=1e-12)
    assert xp.linalg.eigh.recipes and xp.linalg.slogdet.recipes


def _pair(x, y):
    return x, xp.add(x, y)


def _with_a_view(x, y):
    return x[1:], xp.add(x, y)


def test_a_group_may_hold_an_argument_itself():
    pair = recipes.recorded(_pair)
    x, y = _array((3,), "float64"), _array((3,), "float64", 1)
    code = check_replays(pair, x, y)
    assert code[2][0] == ("argument", 0)
    first, total = pair(x, y)
    assert first is x
    np.testing.assert_array_equal(np.asarray(total), np.asarray(x) + np.asarray(y))


def test_a_group_holding_a_view_keeps_no_recipe():
    with_a_view = recipes.recorded(_with_a_view)
    x, y = _array((3,), "float64"), _array((3,), "float64", 1)
    check_replays(with_a_view, x, y, cached=False)
    assert not with_a_view.recipes


def test_a_group_past_the_pending_bound_is_recorded_by_the_code(monkeypatch):
    """A replay whose nodes would pass the pending bound gives way to the function's code,
    which decides where to cut, so the graph recorded is the code's."""
    def deep():
        """Pending, two ops deep (qr's nodes pass a bound of 3). A cut computes its
        argument, so each call takes one of its own, of the same values."""
        return ((_array((3, 3), "float64") + 3.0) * 1.0,)
    for _ in range(2):  # met, then captured, below the default bound: no cut
        xp.linalg.qr(*deep())
    assert xp.linalg.qr.recipes
    monkeypatch.setattr(node_module, "MAX_PENDING", 3)
    code = _by_code(xp.linalg.qr, deep(), {})
    answers = []
    replay_group = recipes._replay_group

    def answered(*args):
        answers.append(replay_group(*args))
        return answers[-1]

    monkeypatch.setattr(recipes, "_replay_group", answered)
    for _ in range(3):
        assert _outcome(xp.linalg.qr, deep(), {}) == code
    assert answers and all(answer is None for answer in answers)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), dtype=st.sampled_from(DTYPES[:4]),
       data=st.data())
def test_diff(shape, dtype, data):
    x = _array(shape, dtype)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ends = {}
    if data.draw(st.booleans()):
        ends["prepend"] = _array(shape[:axis % len(shape)] + (1,) + shape[axis % len(shape) + 1:], dtype, 1)
    check_replays(xp.diff, x, axis=axis, n=data.draw(st.integers(0, 3)), **ends)


@given(batch=st.sampled_from([(), (2,), (2, 1)]), dtype=st.sampled_from(DTYPES[:4]), axis=st.sampled_from([-1, 0]))
def test_cross(batch, dtype, axis):
    shape = (*batch, 3) if axis == -1 else (3, *batch)
    check_replays(xp.linalg.cross, _array(shape, dtype), _array(shape, dtype, 1), axis=axis)


@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), dtype=st.sampled_from(FLOATS),
       data=st.data())
def test_transforms(shape, dtype, data):
    """The FFT module's transforms, shifts and frequencies keep recipes as recorded
    functions do: plain one-dimensional calls, lengths, axes and norms drawn."""
    x = _array(shape, dtype)
    z = xp.astype(x, xp.complex128 if dtype == np.float64 else xp.complex64)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    norm = data.draw(st.sampled_from(["backward", "ortho", "forward"]))
    n = data.draw(st.one_of(st.none(), st.integers(2, 6)))
    name = data.draw(st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn",
                                      "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]))
    fn = getattr(xp.fft, name)
    if name in ("fftfreq", "rfftfreq"):
        check_replays(fn, data.draw(st.integers(1, 9)), d=data.draw(st.sampled_from([1.0, 0.25])),
                      recorder=fn.__wrapped__)
    elif name in ("fftshift", "ifftshift"):
        check_replays(fn, x, axes=data.draw(st.one_of(st.none(), st.just(axis))))
    elif name.endswith("n"):
        check_replays(fn, x if name == "rfftn" else z, axes=(axis,), norm=norm)
    else:
        check_replays(fn, x if name in ("rfft", "ihfft") else z, n=n, axis=axis, norm=norm)
    if n is None and axis == -1 and norm == "backward" and name in ("fft", "rfft"):
        check_replays(fn, x if name == "rfft" else z)  # the plain one-dimensional path


@given(shape=shapes, dtype=st.sampled_from(DTYPES[:4]), data=st.data())
def test_clip_repeat_and_isin(shape, dtype, data):
    x = _array(shape, dtype)
    bounds = st.one_of(st.none(), st.floats(-2, 2), st.integers(-2, 2), st.just(_array((), dtype, 1)))
    check_replays(xp.clip, x, data.draw(bounds), data.draw(bounds))
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1))) if shape else None
    check_replays(xp.repeat, x, data.draw(st.integers(0, 3)), axis=axis)
    check_replays(xp.isin, x, _array(data.draw(shapes), dtype, 2), invert=data.draw(st.booleans()))


# --- signatures: values that compare equal but record differently --------------------------

def _sum_over(axis):
    return (_array((2, 3), "float64"),), {"axis": axis}


def _fill(value):
    return ((2,), value), {}


def _zeros_of(dtype):
    return ((2,),), {"dtype": dtype}


@pytest.mark.parametrize("fn, arguments, first, then", [
    (xp.sum, _sum_over, 1, True), (xp.sum, _sum_over, 0, False), (xp.sum, _sum_over, 1, 1.0),
    (xp.sum, _sum_over, 1, np.int64(1)), (xp.sum, _sum_over, (1,), [1]),
    (xp.full, _fill, 1, True), (xp.full, _fill, 1, 1.0), (xp.full, _fill, 0.0, -0.0), (xp.full, _fill, -0.0, 0.0),
    (xp.full, _fill, 2, np.int64(2)), (xp.zeros, _zeros_of, "float64", np.float64),
    (xp.zeros, _zeros_of, np.dtype("float32"), "float32"),
], ids=lambda v: getattr(v, "__name__", repr(v)))
def test_equal_values_of_other_kinds_are_other_signatures(fn, arguments, first, then):
    """Each pair is equal in Python, so a signature holding them as they are would let
    the second replay the first's recipe (or skip its error)."""
    for _ in range(3):
        args, kwargs = arguments(first)
        fn(*args, **kwargs)
    args, kwargs = arguments(then)
    assert _outcome(fn, args, kwargs) == _by_code(fn, args, kwargs)


def test_a_recorded_function_calling_another_keeps_its_recipe():
    """``empty`` calls ``zeros``, which keeps its own recipe during ``empty``'s capture (of
    a bool dtype, whose 0 their first paths leave to the rules)."""
    xp.empty.recipes.clear()
    xp.zeros.recipes.clear()
    for _ in range(3):
        xp.empty((7, 5), dtype=xp.bool)
    assert xp.empty.recipes and xp.zeros.recipes


def test_a_negative_zero_fill_keeps_its_sign():
    for value in (0.0, 0.0, 0.0, -0.0):
        out = np.asarray(xp.full((2,), value))
    assert np.signbit(out).all()


def test_keywords_are_not_positions():
    """``f(x, 'axis', 1)`` and ``f(x, axis=1)`` have other signatures."""
    assert recipes._signature(("a", 1), {}, [], []) != recipes._signature((), {"a": 1}, [], [])


# --- what replays must keep -----------------------------------------------------------------

def test_a_replayed_view_writes_through():
    a = xp.asarray(np.arange(12.0).reshape(3, 4))
    for _ in range(3):
        row = a[1]
    row[0] = 100.0
    t = a.T
    t[0, 2] = -1.0
    want = np.arange(12.0).reshape(3, 4)
    want[1, 0], want[2, 0] = 100.0, -1.0
    np.testing.assert_array_equal(np.asarray(a), want)
    np.testing.assert_array_equal(np.asarray(row), want[1])
    with pytest.raises(ValueError, match="read-only"):
        xp.broadcast_to(a, (2, 3, 4))[0, 0, 0] = 1.0


def test_deep_graphs_are_cut_where_the_code_cuts(monkeypatch):
    """Past the pending bound the code's own ``wrap`` decides where to cut: a chain of
    replayed calls gives the graphs of the code's calls."""
    monkeypatch.setattr(node_module, "MAX_PENDING", 6)

    def chain():
        x = xp.asarray(np.ones((2, 3)))
        out = []
        for _ in range(12):
            x = xp.mean(x, axis=1, keepdims=True) * 1.0 + xp.ones((2, 3))
            out.append((x._node.depth, x._node.buffer is None))
        return out, np.asarray(x)

    with mock.patch.object(recipes, "_signature", lambda *_: None), mock.patch.object(recipes, "signature",
                                                                                    lambda *_: None):
        chain()  # where the cuts fall depends on the last cut's: the second chain is the steady one
        want, value = chain()
    for _ in range(2):
        got, got_value = chain()
        assert got == want
        np.testing.assert_array_equal(got_value, value)



def test_a_result_alone_past_the_bound_replays_and_cuts_where_the_code_cuts(monkeypatch):
    """A recipe whose result alone is past the pending bound (a chain of products, a
    Kalman filter's covariance) is replayed and its result wrapped: the graphs and cuts
    are those of the code's calls, which ran there before."""
    monkeypatch.setattr(node_module, "MAX_PENDING", 5)
    f = np.eye(3) + 0.1 * np.eye(3, k=1)
    replayed = []

    matmul = getattr(xp.matmul, "fallback", xp.matmul)  # the recorded function (its C path keeps no recipe)

    def chain():
        a, m = xp.asarray(np.eye(3)), xp.asarray(f)
        out = []
        for _ in range(15):
            a = matmul(matmul(m, a), m)
            out.append((a._node.depth, a._node.buffer is None))
        return out, np.asarray(a)

    real_replay = recipes._replay

    def counting(recipe, arrays, nodes):
        past = max(a._node.depth for a in arrays) + 1 > 5  # its result is made past the bound
        result = real_replay(recipe, arrays, nodes)
        replayed.append(past and result is not None)
        return result

    with mock.patch.object(recipes, "signature", lambda *_: None):  # every call by the code
        chain()
        want, value = chain()
    with mock.patch.object(recipes, "_replay", counting):
        for _ in range(2):
            got, got_value = chain()
            assert got == want
            np.testing.assert_array_equal(got_value, value)
    assert any(replayed)  # results past the bound were replayed, not left to the code

def test_a_recipe_is_kept_at_the_first_call_until_the_table_fills():
    """A signature's recipe is kept at its first call, so its second call replays; a
    function whose recipes once filled ``RECIPES_MAX`` (a loop over ever new sizes) keeps
    one at a signature's second call from then on, and a signature met once keeps none."""
    scaled = recipes.recorded(lambda x: x * 2.0 + 1.0)
    x = xp.asarray(np.arange(3.0))
    scaled(x)
    assert len(scaled.recipes) == 1
    np.testing.assert_array_equal(np.asarray(scaled(x)), np.arange(3.0) * 2.0 + 1.0)  # replayed
    for n in range(4, recipes.RECIPES_MAX + 4):
        scaled(xp.asarray(np.arange(float(n))))
    kept = len(scaled.recipes)
    assert kept < recipes.RECIPES_MAX  # emptied once full, then kept at second calls
    new = xp.asarray(np.arange(1000.0))
    scaled(new)
    assert len(scaled.recipes) == kept
    np.testing.assert_array_equal(np.asarray(scaled(new)), np.arange(1000.0) * 2.0 + 1.0)
    assert len(scaled.recipes) == kept + 1


def test_recipes_are_bounded():
    for n in range(recipes.RECIPES_MAX * 3):
        for _ in range(2):
            xp.zeros((n % 500 + 1,))
    assert len(xp.zeros.recipes) <= recipes.RECIPES_MAX


def test_tracing_runs_the_code():
    """Under ``jit`` a Python scalar is a literal: nothing recorded outside is replayed."""
    x = xp.asarray(np.ones((2, 2)))
    for _ in range(3):
        xp.full_like(x, 2.0)
    f = xp.jit(lambda y: xp.full_like(y, 2.0) + y)
    np.testing.assert_array_equal(np.asarray(f(x)), np.full((2, 2), 3.0))



def test_clear_cache_drops_the_recipes():
    x = _array((2, 2), "int32")
    for _ in range(3):
        xp.sum(x, dtype=xp.int64)  # a sum with a dtype is recorded by its rules (the others in C, without a recipe)
        xp.concat([x, x])
    assert xp.sum.recipes
    xp.clear_cache()
    assert not xp.sum.recipes and not any(recipes._TABLES)


def test_arguments_nested_past_the_bound_are_not_keyed():
    """A key walks an argument's sequences MAX_NESTING deep at most: a call with a list
    nested 100,000 deep is not recorded (nor a RecursionError), a shallow one is."""
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert recipes._signature((deep,), {}, [], []) is None
    shallow: list = [1]
    for _ in range(recipes.MAX_NESTING - 1):
        shallow = [shallow]
    assert recipes._signature((shallow,), {}, [], []) is not None


def test_a_view_or_copy_decided_by_a_views_layout_is_no_recipe(backend):
    """``reshape`` of a view copies or views as the view's layout allows, which the
    signature (shape, dtype, a view) does not hold: after a reshape of a view that must
    copy, one of a view of the same signature that can view is a view, and a write
    through it reaches its base (and the other way round)."""
    a = np.arange(12.0).reshape(3, 4)
    for _ in range(3):  # a signature is kept at its first call, and replayed after
        flipped = xp.flip(xp.asarray(a.copy()), axis=1)  # (3, 4), not contiguous: copies
        copied = xp.reshape(flipped, (-1,))
        copied[0] = -1.0
        assert float(flipped[0, 0]) == 3.0
        base = xp.asarray(a.copy())
        back = xp.permute_dims(xp.permute_dims(base, (1, 0)), (1, 0))  # (3, 4), contiguous: views
        viewed = xp.reshape(back, (-1,))
        viewed[0] = -1.0
        assert float(base[0, 0]) == -1.0
    np.testing.assert_array_equal(np.asarray(copied), np.r_[-1.0, a[:, ::-1].reshape(-1)[1:]])
