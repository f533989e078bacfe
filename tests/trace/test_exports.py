"""``np.asarray(x)`` is ``x``'s memory, writable, as a NumPy array's is (``trace/exports.py``),
against NumPy on both backends: writes into the export are writes to ``x`` and reach its
views; plaidarray's writes to ``x`` reach the export; and, the point for a lazy array,
every op sees ``x`` as it was when the op was recorded, whatever is written into the
export before the op runs. The random programs interleave these with exports dropped."""

from __future__ import annotations

import gc
import itertools
import threading
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from strategies import basic_keys
from plaidarray.trace.array import Array
from plaidarray.trace import node as node_module

SHAPE = (3, 4)


def _value():
    return st.integers(-9, 9).map(float)


@given(data=st.data())
def test_random_programs_of_exports_writes_and_ops(backend, data):
    a = np.arange(12.0).reshape(SHAPE)
    x = xp.asarray(a.copy())
    exports, results, views = [], [], []
    for step in range(data.draw(st.integers(3, 12), label="steps")):
        action = data.draw(st.sampled_from(["export", "write export", "write export", "record", "record view",
                                            "record view and x", "write x", "write x array", "iadd x", "view",
                                            "write view", "drop export", "check"]), label=f"action {step}")
        if action == "export":
            which = data.draw(st.integers(-1, len(views) - 1), label="which") if views else -1
            expected, plaid = (a, x) if which < 0 else views[which]
            export = np.asarray(plaid)
            if export.flags.writeable:
                exports.append((expected, export))
        elif action == "write export" and exports:
            expected, got = exports[data.draw(st.integers(0, len(exports) - 1), label="export")]
            key = data.draw(basic_keys(expected.shape, allow_none=False), label="key")
            value = data.draw(_value(), label="value")
            try:
                expected[key] = value
            except IndexError:
                continue
            got[key] = value
        elif action == "record":
            k = data.draw(_value(), label="k")
            results.append((a * 2 + k, x * 2 + k))
        elif action == "record view" and views:
            # a view's read compares only its own bytes of the memory (``exports._span``)
            expected, got = views[data.draw(st.integers(0, len(views) - 1), label="view")]
            k = data.draw(_value(), label="k")
            results.append((expected * 2 + k, got * 2 + k))
        elif action == "record view and x" and views:
            # one op reading a view, then the whole memory (a comparison of the view's bytes
            # alone spares nothing of the root's)
            expected, got = views[data.draw(st.integers(0, len(views) - 1), label="view")]
            try:
                product = expected * a
            except ValueError:
                continue
            results.append((product, got * x))
        elif action == "write x":
            key = data.draw(basic_keys(SHAPE, allow_none=False), label="key")
            value = data.draw(_value(), label="value")
            a[key] = value
            x[key] = value
        elif action == "write x array":  # a value of its own, not a Python scalar the memory takes
            key = data.draw(basic_keys(SHAPE, allow_none=False), label="key")
            a[key] = a[key] * 2.0
            x[key] = x[key] * 2.0
        elif action == "iadd x":
            a += 1.0
            x += 1.0
        elif action == "write view" and views:
            # through a view, which reaches the root: after a write through an export
            # outside the view's elements, storing into the root syncs it with the memory
            expected, got = views[data.draw(st.integers(0, len(views) - 1), label="view")]
            key = data.draw(basic_keys(expected.shape, allow_none=False), label="key")
            how = data.draw(st.sampled_from(["scalar", "+=", "array"]), label="how")
            value = data.draw(_value(), label="value")
            try:
                _write(np, expected, key, how, value)
            except IndexError:
                continue
            _write(xp, got, key, how, value)
        elif action == "view":
            key = data.draw(basic_keys(SHAPE), label="key")
            view = a[key]
            if isinstance(view, np.ndarray):
                views.append((view, x[key]))
        elif action == "drop export" and exports:
            exports.pop(data.draw(st.integers(0, len(exports) - 1), label="export"))
            gc.collect()
        elif action == "check":
            _check(a, x, exports, results, views)
    _check(a, x, exports, results, views)


def _write(namespace, view, key, how, value):
    """``view[key]`` written ``how``: a Python scalar stored, ``+= 1``, or an array value."""
    if how == "scalar":
        view[key] = value
    elif how == "+=":
        view[key] += 1.0
    else:
        view[key] = view[key] * 2.0 + namespace.asarray(value)


def _check(a, x, exports, results, views):
    np.testing.assert_array_equal(np.asarray(x), a)
    for expected, got in exports:
        np.testing.assert_array_equal(got, expected, err_msg="an export")
    for expected, got in results:
        np.testing.assert_array_equal(np.asarray(got), expected, err_msg="an op's result")
    for expected, got in views:
        np.testing.assert_array_equal(np.asarray(got), expected, err_msg="a view")


#: A store into the root that is no Python scalar the memory takes (it leaves a node of
#: its own), and writes through a view that are no such scalar either.
_ROOT_STORES = {"array value": lambda m, a: a.__setitem__(3, a[3] * 2),
                "inexact scalar": lambda m, a: a.__setitem__(3, 0.1)}
_VIEW_WRITES = {"+=": lambda m, a, v: v.__setitem__(1, v[1] + 1),
                "element of the root": lambda m, a, v: v.__setitem__(1, a[0] + 1),
                "0-d array": lambda m, a, v: v.__setitem__(1, m.asarray(np.float32(9.0))),
                "slice": lambda m, a, v: v.__setitem__(slice(0, 2), m.asarray(np.array([7.0, 8.0], np.float32)))}


@pytest.mark.parametrize("root_store", sorted(_ROOT_STORES))
@pytest.mark.parametrize("view_write", sorted(_VIEW_WRITES))
def test_a_write_through_a_view_after_a_write_through_the_export_is_kept(backend, root_store, view_write):
    """Storing a view's new value into its pinned root syncs the root with its memory
    first (the export's write, outside the view's elements), which refreshed the view from
    the memory before its value was read: the write through the view was lost, from the
    root and from the view (a helper's hunt: ``a = [3, 1, 2, 6]`` for ``[3, 1, 3, 6]``)."""
    def program(m):
        a = m.asarray(np.arange(4, dtype=np.float32))
        export = np.asarray(a)
        v = a[1:3]
        _ROOT_STORES[root_store](m, a)
        export[0] = 3
        _VIEW_WRITES[view_write](m, a, v)
        return np.asarray(a).copy(), np.asarray(v).copy(), export.copy()

    for got, expected in zip(program(xp), program(np)):
        np.testing.assert_array_equal(got, expected)


def _plus_one(x):
    x += 1.0


#: Writes through a view, on plaidarray and on NumPy.
_WRITES = {
    "+=": (_plus_one, _plus_one),
    "slice": (lambda x: x.__setitem__(slice(0, 2), xp.asarray([5.0, 6.0])),
              lambda e: e.__setitem__(slice(0, 2), [5.0, 6.0])),
    "mask": (lambda x: x.__setitem__(x > 1.5, 9.0), lambda e: e.__setitem__(e > 1.5, 9.0)),
    "index array": (lambda x: x.__setitem__(xp.asarray([3, 0]), xp.asarray([7.0, 8.0])),
                    lambda e: e.__setitem__([3, 0], [7.0, 8.0])),
    "ellipsis": (lambda x: x.__setitem__(..., xp.asarray([4.0, 3.0, 2.0, 1.0])),
                 lambda e: e.__setitem__(..., [4.0, 3.0, 2.0, 1.0])),
}


@pytest.mark.parametrize("write", sorted(_WRITES))
@pytest.mark.parametrize("base_gone", ["before the export", "after the export"])
def test_a_write_through_an_exported_view_of_a_gone_base_reaches_the_memory(backend, write, base_gone):
    """A view of a temporary (its base gone before the export), or whose base is dropped
    after the export: its writes reach the memory, as a NumPy view's reach the base it
    keeps alive (they were kept by the view alone: its element reads and the export
    showed the old values, and a write into the export then overwrote them)."""
    if base_gone == "before the export":
        x = xp.arange(5.0)[1:]
        export = np.asarray(x)
    else:
        base = xp.reshape(xp.arange(8.0), (2, 4))
        x = base[1]
        export = np.asarray(x)
        del base
    gc.collect()
    expected = export.copy()
    ours, numpy_write = _WRITES[write]
    ours(x)
    numpy_write(expected)
    np.testing.assert_array_equal(export, expected, err_msg="the export")
    assert [float(x[i]) for i in range(4)] == expected.tolist()
    assert float(xp.sum(x)) == expected.sum()
    export[1] = -1.0
    expected[1] = -1.0
    np.testing.assert_array_equal(np.asarray(x), expected, err_msg="after a write into the export")


def test_each_op_sees_the_value_of_its_time(backend):
    """Ops recorded between writes into the export: each gets the memory as it was then."""
    x = xp.zeros(3)
    export = np.asarray(x)
    export[0] = 1.0
    first = x + 0.0
    export[0] = 2.0
    second = x + 0.0
    export[0] = 3.0
    assert [float(first[0]), float(second[0]), float(x[0])] == [1.0, 2.0, 3.0]


def test_a_routine_that_fills_its_output_argument(backend):
    """SciPy's ``ndimage`` pattern: ``output = np.asarray(output)``, filled in place."""
    def correlate_into(values, output):
        out = np.asarray(output)
        out[...] = np.asarray(values) * 2
    x = xp.reshape(xp.arange(6.0), (2, 3))
    expected = x * 2  # recorded before the output is filled: the old values
    correlate_into(x, x)
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(2, 3) * 2)
    np.testing.assert_array_equal(np.asarray(expected), np.arange(6.0).reshape(2, 3) * 2)
    np.testing.assert_array_equal(np.asarray(x + 1), np.arange(6.0).reshape(2, 3) * 2 + 1)


def test_a_writable_buffer_for_routines_that_only_read_it(backend):
    """A Cython typed memoryview asks for a writable buffer (scikit-learn's chi2_kernel)."""
    view = memoryview(np.asarray(xp.ones((2, 2))))
    assert not view.readonly
    assert view.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_an_array_sharing_the_node_keeps_its_value(backend):
    x = xp.ones(3)
    copied = xp.asarray(x, copy=True)  # a new array on the same value
    np.asarray(x)[0] = 5.0
    np.testing.assert_array_equal(np.asarray(copied), np.ones(3))
    np.testing.assert_array_equal(np.asarray(x), [5.0, 1.0, 1.0])


def test_the_export_of_a_view_writes_through_to_its_base(backend):
    """``xp.reshape(xp.arange(6), (2, 3))`` is a view (SciPy's tests make their outputs so)."""
    x = xp.zeros((2, 3))
    row = x[1]
    column = x[:, 2]
    np.asarray(row)[2] = 1.0
    np.testing.assert_array_equal(np.asarray(x), [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(np.asarray(column), [0.0, 1.0])


def test_writes_into_the_export_reach_the_views_of_a_base_that_is_gone(backend):
    x = xp.zeros(4)
    middle = x[1:3]
    export = np.asarray(x)
    del x
    gc.collect()
    export[1] = 5.0
    np.testing.assert_array_equal(np.asarray(middle), [5.0, 0.0])


def test_members_of_a_family_are_exported_at_once_on_one_memory(backend):
    """The base and its views share one memory, as NumPy's do: every export is writable
    and ``np.shares_memory`` answers as it would in NumPy (SciPy's ``correlate`` copies
    its output first when it overlaps the input)."""
    a = np.zeros(4)
    x = xp.zeros(4)
    pairs = [(a, x), (a[:2], x[:2]), (np.flip(a)[:2], xp.flip(x)[:2]), (a[1:3], x[1:3])]
    exports = [(expected, np.asarray(got)) for expected, got in pairs]
    for (e1, g1), (e2, g2) in zip(exports, exports[1:]):
        assert np.shares_memory(g1, g2) == np.shares_memory(e1, e2)
    for i, (expected, got) in enumerate(exports[1:]):
        expected[0] += i + 1
        got[0] += i + 1
    np.testing.assert_array_equal(np.asarray(x), a)
    for (expected, _), (_, got) in zip(pairs, pairs):
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_another_member_is_exported_writable_once_the_first_export_is_gone(backend):
    """SciPy's assertions export a broadcast view of an output (``np.testing`` on
    ``broadcast_to(out, shape)``); ``np.asarray(out)`` right after, with no read between,
    was read-only, so ndimage's next ``output=out`` failed."""
    x = xp.zeros(3)
    exported = np.asarray(xp.broadcast_to(x, (3,)))
    del exported
    gc.collect()
    again = np.asarray(x)
    again[0] = 7.0
    np.testing.assert_array_equal(np.asarray(x + 0.0), [7.0, 0.0, 0.0])


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_the_export_of_a_jitted_result_is_its_memory_and_equal_results_stay_apart(backend):
    """A jitted function's results are memory its run made, as a read's are: exported
    without a copy (a 2048x2048 result's copy doubled the cost of reading it). Two equal
    results (one buffer) and a result that is the argument are copied at the export, so a
    write into one reaches neither the other nor the argument."""
    x = xp.asarray(np.zeros(16))
    first, second, doubled, same = xp.jit(lambda u: (u + 1.0, u + 1.0, u * 2.0, u))(x)
    made = _address(doubled._value())
    exported = np.asarray(doubled)
    assert _address(exported) == made
    exported[0] = 7.0
    np.asarray(first)[0] = 9.0
    np.asarray(same)[0] = 3.0
    assert [float(a[0]) for a in (doubled, first, second, same, x)] == [7.0, 9.0, 1.0, 3.0, 0.0]


def test_the_export_of_an_empty_broadcast_leaves_its_base_alone(backend):
    """Exporting a view whose root is gone exports a root rebuilt through the view's
    inverse; an empty broadcast of a 0-d array has no element to give back (it raised
    IndexError)."""
    empty = xp.broadcast_to(xp.asarray(np.array(True)), (0,))  # the root dies here
    gc.collect()
    assert np.asarray(empty).shape == (0,)
    kept = xp.asarray(np.array(True))
    alongside = xp.broadcast_to(kept, (0,))
    assert np.asarray(alongside).shape == (0,) and bool(kept) is True


def test_the_export_of_the_last_view_of_a_gone_root_is_the_views_own_memory(backend):
    """``np.asarray(xp.sort(s)[-3:])``: nothing but the view is left of the sorted vector,
    so the export is the view's own elements, which it then keeps as a root of its own:
    writes into the export reach the view and views made of it later, and a second export
    shares the memory."""
    s = xp.asarray(np.array([3.0, 1.0, 2.0, 5.0, 4.0]))
    top = xp.sort(s)[-3:]  # the sorted vector dies here
    gc.collect()
    exported = np.asarray(top)
    np.testing.assert_array_equal(exported, [3.0, 4.0, 5.0])
    assert top._base.root() is top  # no blank root of five elements made and updated
    exported[0] = 9.0
    assert float(top[0]) == 9.0 and float(xp.sum(top)) == 18.0
    assert np.shares_memory(np.asarray(top), exported)
    later = top[1:]
    exported[1] = 7.0
    assert float(later[0]) == 7.0
    np.testing.assert_array_equal(np.asarray(s), [3.0, 1.0, 2.0, 5.0, 4.0])


def test_the_export_of_one_of_two_views_of_a_gone_root_reaches_the_other(backend):
    """Two live views of a root that is gone share its elements where they overlap, as
    NumPy's views of one base do: the export of one is a window of a root made again of
    both, so a write into it shows through the other; a read-only view's export stays
    read-only."""
    r = xp.sort(xp.asarray(np.array([3.0, 1.0, 2.0, 5.0, 4.0])))
    first, second = r[:3], r[2:]
    del r
    gc.collect()
    exported = np.asarray(first)
    exported[2] = 9.0
    assert float(second[0]) == 9.0
    np.testing.assert_array_equal(np.asarray(second), [9.0, 4.0, 5.0])
    spread = xp.broadcast_to(xp.asarray(np.array([1.0, 2.0])) * 2.0, (3, 2))  # its root dies here
    gc.collect()
    assert not np.asarray(spread).flags.writeable
    np.testing.assert_array_equal(np.asarray(spread), [[2.0, 4.0]] * 3)


def test_dlpack_exports_the_same_memory(backend):
    x = xp.zeros(3)
    np.from_dlpack(x)[1] = 4.0
    np.testing.assert_array_equal(np.asarray(x), [0.0, 4.0, 0.0])


def test_an_array_takes_its_plain_class_back_once_the_exports_are_gone(backend):
    x = xp.ones(4)
    export = np.asarray(x)
    export[0] = 2.0
    derived = export[1:]  # NumPy's view of the export holds the memory, not the export
    del export
    gc.collect()
    derived[0] = 3.0
    float(x[0])
    assert type(x) is not Array  # a NumPy view of the memory still writes into it
    np.testing.assert_array_equal(np.asarray(x), [2.0, 3.0, 1.0, 1.0])
    del derived
    gc.collect()
    float(xp.sum(x))
    assert type(x) is Array
    np.testing.assert_array_equal(np.asarray(x + 0.0), [2.0, 3.0, 1.0, 1.0])


#: (name, NumPy function, plaidarray function) of the standard's functions that give
#: views; each applies to an array of any shape.
VIEW_FUNCTIONS = [
    ("permute_dims", lambda m, a: m.permute_dims(a, tuple(reversed(range(a.ndim))))),
    ("flip", lambda m, a: m.flip(a, axis=0) if a.ndim else m.flip(a)),
    ("reshape", lambda m, a: m.reshape(a, (-1,))),
    ("expand_dims", lambda m, a: m.expand_dims(a, axis=0)),
    ("broadcast_to", lambda m, a: m.broadcast_to(a, (2, *a.shape))),
    ("real", lambda m, a: m.real(a) if a.dtype.kind == "c" else a),
    ("imag", lambda m, a: m.imag(a) if a.dtype.kind == "c" else a),
]


@given(data=st.data(), complex_=st.booleans())
def test_exports_of_any_views_at_once_are_numpys_views(backend, data, complex_):
    """Views made by a chain of the standard's view functions and basic indexing, all
    exported at once: each export is writable where NumPy's view is, overlaps the others
    where NumPy's do, and writes into any of them reach the base and every view."""
    a = np.arange(12.0).reshape(SHAPE) * (1 + 1j if complex_ else 1)
    x = xp.asarray(a.copy())
    pairs = [(a, x)]
    for step in range(data.draw(st.integers(1, 4), label="views")):
        expected, got = pairs[data.draw(st.integers(0, len(pairs) - 1), label=f"base {step}")]
        if data.draw(st.booleans(), label=f"index {step}"):
            key = data.draw(basic_keys(expected.shape), label=f"key {step}")
            if not isinstance(expected[key], np.ndarray):
                continue
            pairs.append((expected[key], got[key]))
        else:
            _, fn = data.draw(st.sampled_from(VIEW_FUNCTIONS), label=f"function {step}")
            if not isinstance(fn(np, expected), np.ndarray):  # NumPy's flip of a 0-d array: a scalar
                continue
            pairs.append((fn(np, expected), fn(xp, got)))
    exports = [(expected, np.asarray(got)) for expected, got in pairs]
    for (e1, g1), (e2, g2) in itertools.combinations(exports, 2):
        assert np.shares_memory(g1, g2) == np.shares_memory(e1, e2)
    for expected, got in exports:
        assert got.flags.writeable == expected.flags.writeable
    for write in range(data.draw(st.integers(1, 3), label="writes")):
        expected, got = exports[data.draw(st.integers(0, len(exports) - 1), label=f"export {write}")]
        if not expected.flags.writeable or not expected.size:
            continue
        position = data.draw(st.integers(0, expected.size - 1), label=f"position {write}")
        index = np.unravel_index(position, expected.shape)
        expected[index] = got[index] = -1.0 - write
    for expected, got in pairs:
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_threads_fill_the_rows_of_one_output(backend):
    """SciPy's ndimage threading tests: four threads each fill ``np.asarray(out[i])``
    (an ``output=`` argument) while the others do; every row is written."""
    values = np.arange(4 * 1000.0).reshape(4, 1000)
    out = xp.zeros((4, 1000))
    rows = [out[i, ...] for i in range(4)]
    barrier = threading.Barrier(4)

    def fill(i):
        memory = np.asarray(rows[i])
        barrier.wait()  # every export made before any row is written
        memory[...] = values[i] * 2

    threads = [threading.Thread(target=fill, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    np.testing.assert_array_equal(np.asarray(out), values * 2)


def test_an_element_read_after_the_last_export_died_is_the_memorys():
    """Once its last export is gone, an exported array's element read (``Pinned``'s, which
    falls back to ``Array._getitem``, reading the node through the syncing property) sees
    what was written through the export after the last op: the C element read of the
    node slot returned the op's snapshot (a helper's hunt: 0.0 for 2.0)."""
    a = xp.zeros(5)
    a[0] = 0.0
    export = np.asarray(a)
    float(xp.sum(a))  # an op: the memory's snapshot
    export[2] = 2.0
    b = xp.zeros(6)
    b[0] = 0.0
    view = b[2:5]
    b_export = np.asarray(b)
    float(xp.sum(b)), float(xp.sum(view))
    b_export[4] = 4.0
    del export, b_export
    assert (float(a[2]), float(view[2]), float(b[4])) == (2.0, 4.0, 4.0)


def test_an_element_is_read_out_of_the_exported_memory_as_it_is_now(backend, monkeypatch):
    """``float(x[i])`` on an exported array (or a view of it) reads the memory, written or
    not since, without comparing the whole memory with its snapshot (which made each read
    of an element cost the array's size)."""
    from plaidarray.trace import exports
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    column = x[:, 1]
    export = np.asarray(x)
    compared = []
    same = exports._same
    monkeypatch.setattr(exports, "_same", lambda *args: compared.append(args) or same(*args))
    before = x[2, 3]  # a copy of the element, as NumPy's scalar is
    export[2, 3] = -7.0
    export[1, 1] = -5.0
    assert [float(before), float(x[2, 3]), float(x[-1, -1]), float(column[1]), float(column[-2])] == \
        [11.0, -7.0, -7.0, -5.0, -5.0]
    assert [float(v) for v in x[1]] == [4.0, -5.0, 6.0, 7.0]
    assert not compared
    np.testing.assert_array_equal(np.asarray(x[1:, 3] * 1.0), [7.0, -7.0])  # an op: the memory's first snapshot


def test_an_op_on_an_exported_array_compares_its_memory_once_and_a_view_none(backend, monkeypatch):
    """An op compares the memory with its snapshot once, however often it reads the
    array's node; basic indexing makes a view, which compares nothing where it is made
    (its reads sync), and still shows what was written into the memory before or after."""
    from plaidarray.trace import exports
    x = xp.asarray(np.arange(10.0))
    export = np.asarray(x)
    float(xp.sum(x))  # the first snapshot
    compared = []
    same = exports._same
    monkeypatch.setattr(exports, "_same", lambda *args: compared.append(args) or same(*args))
    export[3] = 30.0
    window = x[2:5]
    strided = x[::3][1:]
    assert not compared
    total = x + x
    x[7:9] = xp.full(2, 70.0, dtype=xp.float64)  # an update of an array's value: an op
    assert len(compared) == 2  # one comparison each
    export[4] = 40.0
    expected = np.arange(10.0)
    expected[3] = 30.0
    np.testing.assert_array_equal(np.asarray(total), expected * 2)
    expected[7:9], expected[4] = 70.0, 40.0
    np.testing.assert_array_equal(np.asarray(window * 1.0), expected[2:5])
    np.testing.assert_array_equal(np.asarray(strided - 0.0), expected[::3][1:])
    np.testing.assert_array_equal(np.asarray(window), expected[2:5])
    np.testing.assert_array_equal(export, expected)


def test_a_scalar_stored_into_an_exported_array_is_written_into_its_memory(backend, monkeypatch):
    """``x[i] = v`` (and ``x[i, a:b] = v``) on an exported array writes the memory, as a
    write into the export does: ops recorded before keep the values they read, views and the export see it, and
    no store compares or copies the whole memory; a read-only view still refuses it."""
    from plaidarray.trace import exports
    expected = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(expected.copy())
    row, column = x[1], x[:, 2]
    export = np.asarray(x)
    before = x * 1.0
    compared = []
    same = exports._same
    monkeypatch.setattr(exports, "_same", lambda *args: compared.append(args) or same(*args))
    for k in range(4):
        x[1, k] = -1.0 - k
        row[k] = float(row[k]) - 0.5 if k else 10.0
    x[2] = 7.0
    x[0, 1:3] = 5.0
    column[0] = 3
    assert not compared
    expected[1] = [10.0, -2.5, -3.5, -4.5]
    expected[2] = 7.0
    expected[0, 1] = 5.0
    expected[0, 2] = 3.0
    np.testing.assert_array_equal(export, expected)
    np.testing.assert_array_equal(np.asarray(row), expected[1])
    np.testing.assert_array_equal(np.asarray(column), expected[:, 2])
    np.testing.assert_array_equal(np.asarray(x + 0.0), expected)
    np.testing.assert_array_equal(np.asarray(before), np.arange(12.0).reshape(3, 4))
    read_only = xp.broadcast_to(x, (2, 3, 4))
    with pytest.raises(ValueError, match="read-only"):
        read_only[0, 0, 0] = 1.0


def test_an_update_after_the_export_is_gone_is_written_in_place():
    """Once no export is left, ``x[k] = v`` unpins ``x`` and updates its buffer in place,
    as for an array never exported: nothing of the pin still refers to the memory (the
    compiled backend's updates; the reference interpreter's copy)."""
    x = xp.asarray(np.arange(6.0), copy=True)
    x[0] = 0.5  # computed
    buffer = weakref.ref(x._node.buffer)
    np.asarray(x)  # an export, gone at once: the next write unpins
    for k in range(6):
        x[k] = xp.asarray(float(k) * 2.0)  # an array: the update's executable, donated
    assert type(x) is Array
    assert x._node.buffer is buffer()
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0) * 2.0)


@pytest.mark.skipif(node_module.GRAPH_IN_C is None, reason="the C paths are what take the plain arrays")
@pytest.mark.parametrize("op, reads", [("x + 1.0", 1), ("2.0 * x", 1), ("x + x", 2), ("xp.exp(x)", 1),
                                       ("xp.add(x, x)", 2), ("xp.sum(x)", 1), ("xp.mean(x, axis=0)", 1),
                                       ("x @ m", 1), ("xp.matmul(m.T, x)", 1)])
def test_an_exported_array_is_read_once_by_an_elementwise_op_a_reduction_or_a_product(backend, monkeypatch, op,
                                                                                      reads):
    """Those ops never make a view of their arguments, so an exported (pinned) argument is
    read once, synced, and the op recorded by its C path on a plain array of that value:
    the Python path read the node at each of its steps, each read a sync (30 us for
    ``x + 1.0`` on 8 elements, against 0.2 us on an array not exported). The ops still see
    what was written into the export before them, and not what is written after."""
    from plaidarray.trace import exports
    a = np.arange(1.0, 9.0)
    x = xp.asarray(a.copy())
    m = xp.asarray(np.arange(16.0).reshape(8, 2))
    export = np.asarray(x)
    export[2] = 30.0
    syncs = []
    sync = exports.sync
    monkeypatch.setattr(exports, "sync", lambda array: syncs.append(array) or sync(array))
    result = eval(op, {"xp": xp, "x": x, "m": m})
    assert len(syncs) == reads  # once per operand
    expected = eval(op.replace("xp.", "np."), {"np": np, "x": export.copy(), "m": np.asarray(m)})
    export[3] = -1.0
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-15)
    assert float(x[3]) == -1.0
