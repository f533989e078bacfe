"""Writes through views, against NumPy on both backends: every function whose NumPy result
is a view (basic indexing, ``permute_dims``, ``matrix_transpose``/``.mT``/``.T``,
``reshape``, ``expand_dims``, ``squeeze``, ``flip``, ``moveaxis``, ``unstack``, ``real``,
``imag``, ``broadcast_to``, ``broadcast_arrays``, ``linalg.diagonal``, ``from_dlpack``)
shares its elements with its base as NumPy's does: a write through a view reaches the
base and the other views, a write to the base reaches the views, NumPy's read-only views
refuse writes, and where NumPy copies (a reshape of a transposed array) nothing is shared.
The random programs make views of views, write through any of them and drop arrays
(the root too), comparing every live array with NumPy's after each write."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from plaidarray.trace import views
from device_choice import ON_HOST
from strategies import basic_keys

# --- the view-making functions, each as (NumPy, plaidarray) on an array of a given shape -


def _permutation(data, ndim):
    return tuple(data.draw(st.permutations(range(ndim)), label="axes"))


def _reshape_target(data, shape):
    """A shape of the same size: flattened, or one axis split or merged."""
    size = int(np.prod(shape))
    choices = [(size,), (1, *shape), (*shape, 1)]
    if len(shape) >= 2:
        choices.append((shape[0] * shape[1], *shape[2:]))
    for i, n in enumerate(shape):
        for d in (2, 3):
            if n % d == 0 and n > d:
                choices.append((*shape[:i], d, n // d, *shape[i + 1:]))
    return data.draw(st.sampled_from(choices), label="shape")


def _view_ops(shape, dtype):
    """(name, applies, make) rows; ``make(data)`` gives (numpy_fn, plaidarray_fn)."""
    ndim = len(shape)
    return [
        ("index", True, lambda data: (lambda key: (lambda a: a[key], lambda x: x[key]))(
            data.draw(basic_keys(shape), label="key"))),
        ("permute_dims", ndim >= 1, lambda data: (lambda p: (lambda a: np.transpose(a, p),
                                                            lambda x: xp.permute_dims(x, p)))(_permutation(data, ndim))),
        ("mT", ndim >= 2, lambda data: (lambda a: np.swapaxes(a, -1, -2), lambda x: x.mT)),
        ("T", ndim == 2, lambda data: (lambda a: a.T, lambda x: x.T)),
        ("matrix_transpose", ndim >= 2, lambda data: (lambda a: np.swapaxes(a, -1, -2), xp.matrix_transpose)),
        ("reshape", True, lambda data: (lambda s: (lambda a: np.reshape(a, s), lambda x: xp.reshape(x, s)))(
            _reshape_target(data, shape))),
        ("expand_dims", True, lambda data: (lambda ax: (lambda a: np.expand_dims(a, ax),
                                                       lambda x: xp.expand_dims(x, axis=ax)))(
            data.draw(st.integers(-ndim - 1, ndim), label="axis"))),
        ("squeeze", 1 in shape, lambda data: (lambda ax: (lambda a: np.squeeze(a, ax), lambda x: xp.squeeze(x, axis=ax)))(
            data.draw(st.sampled_from([i for i, n in enumerate(shape) if n == 1]), label="axis"))),
        ("flip", ndim >= 1, lambda data: (lambda ax: (lambda a: np.flip(a, ax), lambda x: xp.flip(x, axis=ax)))(
            data.draw(st.integers(0, ndim - 1), label="axis"))),
        ("moveaxis", ndim >= 2, lambda data: (lambda s, d: (lambda a: np.moveaxis(a, s, d),
                                                           lambda x: xp.moveaxis(x, s, d)))(
            data.draw(st.integers(0, ndim - 1), label="source"), data.draw(st.integers(0, ndim - 1), label="dest"))),
        ("broadcast_to", True, lambda data: (lambda a: np.broadcast_to(a, (2, *shape)),
                                             lambda x: xp.broadcast_to(x, (2, *shape)))),
        ("diagonal", ndim >= 2, lambda data: (lambda k: (lambda a: np.diagonal(a, k, -2, -1),
                                                        lambda x: xp.linalg.diagonal(x, offset=k)))(
            data.draw(st.integers(-2, 2), label="offset"))),
        ("real", dtype.kind == "c", lambda data: (np.real, xp.real)),
        ("imag", dtype.kind == "c", lambda data: (np.imag, xp.imag)),
    ]


def _writes(shape, dtype):
    """(name, make) rows; ``make(data)`` gives a function writing into a NumPy array and,
    the same way, into a plaidarray array."""
    value = st.integers(-9, 9).map(float if dtype.kind == "f" else complex)
    rows = [
        ("setitem", lambda data: (lambda key, v: lambda a: a.__setitem__(key, v))(
            data.draw(basic_keys(shape, allow_none=False), label="key"), data.draw(value, label="value"))),
        ("iadd", lambda data: (lambda v: lambda a: a.__iadd__(v))(data.draw(value, label="value"))),
        ("key_iadd", lambda data: (lambda key, v: lambda a: _key_iadd(a, key, v))(
            data.draw(basic_keys(shape, allow_none=False), label="key"), data.draw(value, label="value"))),
    ]
    if dtype.kind == "f":
        rows.append(("mask", lambda data: (lambda v: lambda a: a.__setitem__(a > 3.0, v))(data.draw(value, label="v"))))
    return rows


def _key_iadd(a, key, v):
    a[key] += v


def _as_array(value):
    """NumPy gives a scalar where plaidarray gives a 0-d array (a copy in both)."""
    return value if isinstance(value, np.ndarray) else np.array(value)


def _check_all(pool):
    for name, (a, x) in pool.items():
        np.testing.assert_array_equal(np.asarray(x), a, err_msg=f"array {name}")


def _outcome(fn, *args):
    try:
        fn(*args)
    except (ValueError, IndexError) as exc:
        return type(exc)
    return None


def _draw_view(data, a, x, step):
    """A view-making function drawn for NumPy's ``a`` and plaidarray's ``x``: (its name,
    NumPy's view, plaidarray's), or None where NumPy refuses it."""
    ops = [row for row in _view_ops(a.shape, a.dtype) if row[1]]
    op_name, _, make = data.draw(st.sampled_from(ops), label=f"view {step}")
    numpy_fn, plaid_fn = make(data)
    try:
        made = _as_array(numpy_fn(a))
    except (ValueError, IndexError):
        return None
    return op_name, made, plaid_fn(x)


@given(data=st.data(), complex_root=st.booleans())
def test_random_programs_of_views_and_writes(backend, data, complex_root):
    root = np.arange(24.0).reshape(2, 3, 4) if not complex_root else (np.arange(6.0) + 1j * np.arange(6.0)).reshape(2, 3)
    pool = {"root": (root.copy(), xp.asarray(root.copy()))}
    for step in range(data.draw(st.integers(4, 9), label="steps")):
        name = data.draw(st.sampled_from(sorted(pool)), label=f"array {step}")
        a, x = pool[name]
        action = data.draw(st.sampled_from(["view", "view", "write", "write", "drop"]), label=f"action {step}")
        if action == "view":
            drawn = _draw_view(data, a, x, step)
            if drawn is not None:
                op_name, made, view = drawn
                pool[f"{name}.{op_name}{step}"] = (made, view)
        elif action == "write":
            _, make = data.draw(st.sampled_from(_writes(a.shape, a.dtype)), label=f"write {step}")
            write = make(data)
            expected = _outcome(write, a)
            assert _outcome(write, x) == expected, f"a write into {name}"
            _check_all(pool)
        elif len(pool) > 1:
            del pool[name], a, x
            gc.collect()
    _check_all(pool)


def _views_of_computed(data, dtype, exported):
    """A computed array ``x`` (its memory exported to NumPy, or not), and 1 to 3 views drawn
    on it: (``x``, NumPy's last view, plaidarray's), or None where NumPy refuses one."""
    a = np.arange(24).astype(dtype).reshape(2, 3, 4)
    x = xp.asarray(a.copy())
    if exported:
        np.asarray(x)
    else:
        x._computed()
    b, v = a, x
    for step in range(data.draw(st.integers(1, 3), label="views")):
        drawn = _draw_view(data, b, v, step)
        if drawn is None:
            return None
        _, b, v = drawn
    return x, b, v


@given(data=st.data(), dtype=st.sampled_from([np.float64, np.int32, np.complex128]))
def test_a_view_of_a_computed_array_is_copied_out_of_it(backend, data, dtype):
    """A view of a computed array, read alone (``asarray(v, copy=True)``, a store of it,
    a read of its value), holds its elements copied out of the array's memory
    (``views.window_copy``): NumPy's values, ready at once where the view is of the
    computed array (not of a copy a reshape made on the way) and keeps its dtype
    (``real``/``imag`` of complex elements run their graph), so that no pending copy reads
    the root."""
    drawn = _views_of_computed(data, dtype, exported=True)
    if drawn is None:
        return
    x, b, v = drawn
    copied = xp.asarray(v, copy=True)
    # Copied at once on the host, whose transfers copy windows (a device's run a kernel).
    if ON_HOST and type(v._base) is views.ViewOf and v._base.family.root() is x and v.dtype == x.dtype:
        assert copied._node.buffer is not None and (v._node is x._node or v._node.buffer is None)
    np.testing.assert_array_equal(np.asarray(copied), b)
    assert v._computed().buffer is not None
    np.testing.assert_array_equal(np.asarray(v), b)
    x[...] = 0
    np.testing.assert_array_equal(np.asarray(copied), b)


@given(data=st.data(), dtype=st.sampled_from([np.float64, np.int32, np.complex128]))
def test_an_element_of_a_view_of_a_computed_array_is_read_out_of_it(backend, data, dtype):
    """``m[i][j]``, ``row[j]`` of ``for row in m``, ``m.T[i, j]``: an element of a view of a
    computed array is NumPy's, a copy of the element as it is now, read out of the array's
    memory where the view is of the computed array itself (``views.element_copy``: ready at
    once, no graph run); a later write to the array leaves it, and a new read sees the write."""
    drawn = _views_of_computed(data, dtype, exported=False)
    if drawn is None:
        return
    x, b, v = drawn
    if not b.size or not b.ndim:
        return
    key = tuple(data.draw(st.integers(-n, n - 1), label=f"index {k}") for k, n in enumerate(b.shape))
    element = v[key if len(key) > 1 else key[0]]
    assert element.shape == ()
    if type(v._base) is views.ViewOf and v._base.family.root() is x and v.dtype == x.dtype and \
            v._node.buffer is None and views.window_copy(v) is not None:
        assert element._node.buffer is not None
    assert complex(element) == complex(b[key])
    x[...] = 0
    assert complex(element) == complex(b[key])
    of_x = v is x or type(v._base) is views.ViewOf and v._base.family.root() is x
    assert complex(v[key]) == (0 if of_x else complex(b[key]))


def test_iteration_reads_each_element_as_it_is_at_its_step(backend):
    """``for v in x``: a pending array (or a view) is computed once, then each element is
    read at its step, so a write in the loop's body shows in the later elements, as in
    NumPy's iteration: into the array itself, and into the root of a view iterated."""
    x = xp.asarray(np.arange(6.0)) * 1.0
    got = []
    for i, v in enumerate(x):
        got.append(float(v))
        if i == 0:
            x[3] = 9.0
    assert got == [0.0, 1.0, 2.0, 9.0, 4.0, 5.0]
    root = xp.asarray(np.arange(6.0)) * 1.0
    window = root[1:5]
    got = []
    for i, v in enumerate(window):
        got.append(float(v))
        if i == 0:
            root[3] = 9.0
    assert got == [1.0, 2.0, 9.0, 4.0]
    rows = xp.asarray(np.arange(6.0).reshape(3, 2)) * 2.0
    assert [float(xp.sum(row)) for row in rows] == [2.0, 10.0, 18.0]
    with pytest.raises(TypeError, match="0-d"):
        iter(xp.asarray(1.0))


def test_an_element_of_a_view_is_checked_against_its_bounds_and_steps(backend):
    m = xp.asarray(np.arange(12.0).reshape(3, 4))
    with pytest.raises(IndexError):
        m[1][4]
    with pytest.raises(IndexError):
        m.T[0, -4]
    assert float(m[1][-4]) == 4.0 and float(m.T[3, -1]) == 11.0
    assert float(xp.flip(m, axis=1)[1][1]) == 6.0 and float(m[::-1, ::-2][0, 1]) == 9.0


def test_rows_swapped_through_copies_are_stored_in_place(monkeypatch):
    """A row swap (``kept = asarray(m[i], copy=True); m[i] = m[j]; m[j] = kept``, partial
    pivoting's) writes the rows into the matrix's memory: the copy and the row stored
    read no pending graph of the matrix, so no store copies the whole matrix
    (``stored_copy``: 0.7 ms a swap of a 1000 x 1000 matrix's rows)."""
    from plaidarray.backend import transfer

    def refused(*args):
        raise AssertionError("the whole matrix was copied")

    monkeypatch.setattr(transfer.HostTransfers, "stored_copy", refused)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 6))
    m = xp.asarray(a.copy())
    np.asarray(m)
    for i in range(39, 0, -1):
        j = int(rng.integers(0, i + 1))
        kept = xp.asarray(m[i], copy=True)
        m[i] = m[j]
        m[j] = kept
        a[[i, j]] = a[[j, i]]
    np.testing.assert_array_equal(np.asarray(m), a)


# --- each view-making function, written through both ways ------------------------------

VIEWS = {
    "index": (lambda a: a[1, :, 1:3], lambda x: x[1, :, 1:3]),
    "index, steps and None": (lambda a: a[::-1, None, ::2], lambda x: x[::-1, None, ::2]),
    "permute_dims": (lambda a: np.transpose(a, (2, 0, 1)), lambda x: xp.permute_dims(x, (2, 0, 1))),
    "matrix_transpose": (lambda a: np.swapaxes(a, -1, -2), xp.matrix_transpose),
    "mT": (lambda a: np.swapaxes(a, -1, -2), lambda x: x.mT),
    "T of a row block": (lambda a: a[0].T, lambda x: x[0].T),
    "reshape": (lambda a: a.reshape(6, 4), lambda x: xp.reshape(x, (6, 4))),
    "expand_dims": (lambda a: np.expand_dims(a, 1), lambda x: xp.expand_dims(x, axis=1)),
    "squeeze": (lambda a: np.squeeze(a[:1], 0), lambda x: xp.squeeze(x[:1], axis=0)),
    "flip": (lambda a: np.flip(a, 1), lambda x: xp.flip(x, axis=1)),
    "moveaxis": (lambda a: np.moveaxis(a, 0, -1), lambda x: xp.moveaxis(x, 0, -1)),
    "unstack": (lambda a: a[1], lambda x: xp.unstack(x)[1]),
    "iteration": (lambda a: list(a)[0], lambda x: list(x)[0]),
    "from_dlpack": (lambda a: np.from_dlpack(a), xp.from_dlpack),
    "asarray": (np.asarray, xp.asarray),
    "astype, same dtype, copy=False": (lambda a: a.astype(a.dtype, copy=False),
                                       lambda x: xp.astype(x, x.dtype, copy=False)),
}


def _made(name):
    """(NumPy base, plaidarray base, NumPy view, plaidarray view) of ``VIEWS[name]``."""
    numpy_fn, plaid_fn = VIEWS[name]
    a = np.arange(24.0).reshape(2, 3, 4)
    x = xp.asarray(a.copy())
    return a, x, numpy_fn(a), plaid_fn(x)


@pytest.mark.parametrize("name", VIEWS)
def test_a_write_through_the_view_reaches_the_base(backend, name):
    a, x, expected_view, view = _made(name)
    for array in (view, expected_view):
        array[(0,) * array.ndim] = -1.0
        array += 100.0
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(view), expected_view)


@pytest.mark.parametrize("name", VIEWS)
def test_a_write_to_the_base_reaches_the_view(backend, name):
    a, x, expected_view, view = _made(name)
    x[1, 1:, :] = -5.0
    a[1, 1:, :] = -5.0
    x *= 2.0
    a *= 2.0
    np.testing.assert_array_equal(np.asarray(view), expected_view)


def test_real_and_imag_of_a_complex_array_are_views(backend):
    z = np.array([1 + 2j, 3 + 4j, 5 + 6j])
    w = xp.asarray(z.copy())
    xp.real(w)[0] = 9.0
    z.real[0] = 9.0
    part = xp.imag(w)
    part += 1.0
    z.imag[:] += 1.0
    np.testing.assert_array_equal(np.asarray(w), z)


READ_ONLY = {
    "broadcast_to": lambda x: xp.broadcast_to(x, (2, 3)),
    "broadcast_arrays": lambda x: xp.broadcast_arrays(x, xp.ones((2, 3)))[0],
    "linalg.diagonal": lambda x: xp.linalg.diagonal(xp.reshape(x, (3, 1))),
    "a transpose of broadcast_to": lambda x: xp.broadcast_to(x, (2, 3)).mT,
}


@pytest.mark.parametrize("name", READ_ONLY)
def test_views_numpy_makes_read_only_refuse_writes(backend, name):
    x = xp.asarray([1.0, 2.0, 3.0])
    view = READ_ONLY[name](x)
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        view += 1.0
    x[0] = 7.0  # yet they show the base's writes
    assert float(view[(0,) * view.ndim]) == 7.0


def test_reshape_copies_where_numpy_does(backend):
    """A transposed array's elements are not in row-major order: NumPy's reshape copies."""
    a = np.arange(6.0).reshape(2, 3)
    x = xp.asarray(a.copy())
    flat = xp.reshape(x.T, (-1,))
    flat[0] = 100.0
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(flat), a.T.reshape(-1) + np.eye(1, 6)[0] * 100)
    with pytest.raises(ValueError, match="without a copy"):
        xp.reshape(x.T, (-1,), copy=False)
    split = xp.reshape(x.T, (3, 2, 1), copy=False)  # keeps the transposed axes apart: a view
    split[2, 1, 0] = -1.0
    assert float(x[1, 2]) == -1.0


def test_a_write_reaches_the_other_views_after_the_root_is_gone(backend):
    """The family outlives its root: the siblings still share their elements."""
    x = xp.zeros((3, 4))
    left, right, column = x[:, :3], x[:, 1:], x.mT[2]
    alive = weakref.ref(x)
    del x
    gc.collect()
    assert alive() is None
    left[0, 2] = 5.0
    assert float(right[0, 1]) == 5.0 and float(column[0]) == 5.0
    column += 1.0
    np.testing.assert_array_equal(np.asarray(left)[:, 2], [6.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(right)[:, 1], [6.0, 1.0, 1.0])


def test_a_view_of_a_temporary_does_not_keep_it(backend):
    """``f(x)[0]``: the temporary is not kept, so reading the view does not also store it."""
    x = xp.ones(1000)
    temporary = x * 2.0
    alive = weakref.ref(temporary)
    first = temporary[:10]
    del temporary
    gc.collect()
    assert alive() is None
    assert float(xp.sum(first)) == 20.0


def test_the_output_argument_pattern_of_vectorized_filter(backend):
    """SciPy's ``vectorized_filter(output=out)``: the output is moved into place, then
    filled through the moved view."""
    out = xp.zeros((2, 3))
    moved = xp.moveaxis(out, 0, -1)
    moved[...] = xp.reshape(xp.arange(6.0), (3, 2))
    np.testing.assert_array_equal(np.asarray(out), np.moveaxis(np.arange(6.0).reshape(3, 2), -1, 0))


def test_overlap_add_through_a_transposed_view(backend):
    """The issue's reproducer: ``t[1:3, ...] += 1`` on ``permute_dims(a)`` changes ``a``."""
    a = xp.zeros((2, 3))
    t = xp.permute_dims(a, (1, 0))
    t[1:3, ...] += 1
    expected = np.zeros((2, 3))
    expected.T[1:3, ...] += 1
    np.testing.assert_array_equal(np.asarray(a), expected)


def test_writes_to_views_of_rows_touch_only_overlapping_views(backend):
    """A write refreshes the views whose elements it may reach; the others keep their
    nodes (their values are right as they are)."""
    x = xp.zeros((4, 3))
    rows = [x[i] for i in range(4)]
    kept = [row._node for row in rows]
    x[2] = 1.0
    assert [row._node is node for row, node in zip(rows, kept)] == [True, True, False, True]
    np.testing.assert_array_equal(np.asarray(rows[2]), np.ones(3))


@pytest.mark.parametrize("made", [4, 40])
def test_a_stencil_store_after_its_slices_are_gone_still_reaches_a_live_view(backend, made):
    """A store after an expression of slices that are gone (``Family.others_live`` finds
    no other live view among a few references, or answers yes past ``_FEW_VIEWS``) leaves
    every live view, and a view written through, holding NumPy's values."""
    rng = np.random.default_rng(made)
    want = rng.standard_normal((8, 8))
    u = xp.asarray(want.copy())
    corner = u[:3, :3]  # live, overlapping the stores
    far = u[7]  # live, apart from them
    wanted_corner = want[:3, :3]
    for _ in range(3):
        for _each in range(made // 4):
            inner = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        want_inner = 0.25 * (want[:-2, 1:-1] + want[2:, 1:-1] + want[1:-1, :-2] + want[1:-1, 2:])
        u[1:-1, 1:-1] = inner
        want[1:-1, 1:-1] = want_inner
        # read through an op: an export would show the root's memory at the view's layout
        np.testing.assert_array_equal(np.asarray(corner * 1.0), wanted_corner)
        np.testing.assert_array_equal(np.asarray(far * 1.0), want[7])
    alone = u[2:5]  # the only live view besides the two: written through itself
    alone[0, 0] = 9.0
    want[2, 0] = 9.0
    np.testing.assert_array_equal(np.asarray(alone * 1.0), want[2:5])
    np.testing.assert_array_equal(np.asarray(corner * 1.0), want[:3, :3])
    np.testing.assert_array_equal(np.asarray(u * 1.0), want)


def test_family_views_are_bounded():
    """A family keeps weak references to its views, the dead ones dropped as it grows."""
    a = xp.asarray(np.ones((3, 3)))
    for _ in range(1000):
        a[0]
    family = a._base
    assert isinstance(family, views.Family)
    assert len(family.views) <= 16
    keep = [a[i] for i in range(3)]
    assert [id(view) for view in family.live_views()] == [id(view) for view in keep]


def test_a_family_with_many_live_views_drops_dead_ones_seldom():
    """Thousands of live windows of one array, and views made and dropped after them: the
    family's list passes over its live views once per as many new views as it keeps (at
    most twice here), not each time its length comes back to a power of two (4000 live
    views made each 96th new view pass over 4096), and it never holds more than about
    twice the live views."""
    x = xp.asarray(np.arange(5000.0))
    kept = [x[:n] for n in range(1, 4001)]
    family = x._base
    drops, before = 0, len(family.views)
    for k in range(3000):
        kept[k % 4000][1:]
        after = len(family.views)
        drops += after <= before
        before = after
    assert drops <= 2
    assert len(family.views) <= 2 * len(kept) + 8
    np.testing.assert_array_equal(np.asarray(kept[2999][1:]), np.arange(1.0, 3000.0))


_VIEW_MAKERS = {
    "flip": lambda a: xp.flip(a, axis=0),
    "transpose": lambda a: a.T,
    "reshape": lambda a: xp.reshape(a, (a.shape[1], a.shape[0])),
    "expand_dims": lambda a: xp.expand_dims(a, axis=0),
    "broadcast_to": lambda a: xp.broadcast_to(a, (2, *a.shape)),
    "diagonal": lambda a: xp.linalg.diagonal(a),
    "window of a view": lambda a: a.T[1:, ::2],
}


@pytest.mark.parametrize("make", list(_VIEW_MAKERS))
def test_a_view_attached_in_c_is_the_view_python_attaches(make, monkeypatch):
    """``_graph.attach_view`` makes a view's record as ``views.attach`` does: its family,
    steps, writability (a read-only step's view is read-only), layout, place in the
    family's views and values."""
    if views._ATTACH_IN_C is None:
        pytest.skip("the C module is not in use")
    made = {}
    for where in ("c", "python"):
        if where == "python":
            monkeypatch.setattr(views, "_ATTACH_IN_C", None)
        data = np.arange(12.0).reshape(3, 4)
        root = xp.asarray(data) * 1.0
        first = root[1:]  # the root's family, made by Python's attach (none yet) or C's window
        view = _VIEW_MAKERS[make](root)
        record = view._base
        assert type(record) is views.ViewOf and record.family is first._base.family is root._base
        assert any(ref() is view for ref in record.family.views)
        made[where] = (record.steps, record.writable, record.layout(), np.asarray(view))
    c, python = made["c"], made["python"]
    assert c[0] == python[0] and c[1] == python[1] and c[2] == python[2]
    np.testing.assert_array_equal(c[3], python[3])


@pytest.mark.parametrize("count", [3, 60])
def test_a_write_refreshes_exactly_the_live_views_it_meets_among_many(backend, count):
    """Rows, columns and windows of one array kept alive, some dropped (the family's list
    pruned), then rows and blocks written: every live view holds NumPy's view's values."""
    rng = np.random.default_rng(count)
    want = rng.standard_normal((count, 5))
    m = xp.asarray(want.copy())
    rows = {i: m[i] for i in range(count)}
    columns = {j: m[:, j] for j in range(5)}
    windows = {i: m[i:i + 3, 1:4] for i in range(0, count, 2)}
    for i in range(0, count, 3):  # dropped: a write must not look at them, nor lose the rest
        del rows[i]
    gc.collect()
    for _ in range(3 * count):  # new views of other arrays and of this one, so the list is pruned
        _ = m[0] + 1.0
    for step, i in enumerate(rng.permutation(count)[:count // 2 + 1].tolist()):
        m[i] = float(step)
        want[i] = float(step)
        m[i, 1:3] = m[i, 1:3] * 2.0
        want[i, 1:3] *= 2.0
    family = m._base
    assert len(family.views) < 4 * count + 16
    for i, row in rows.items():
        np.testing.assert_array_equal(np.asarray(row), want[i])
    for j, column in columns.items():
        np.testing.assert_array_equal(np.asarray(column), want[:, j])
    for i, window in windows.items():
        np.testing.assert_array_equal(np.asarray(window), want[i:i + 3, 1:4])
    np.testing.assert_array_equal(np.asarray(m), want)


@pytest.mark.parametrize("count", [3, 60])
def test_the_views_a_write_meets_are_those_whose_elements_it_may_cover(backend, count):
    """``Family.overlapping`` (a row of bounds per view, compared in NumPy past
    ``_FEW_VIEWS``) gives the live views whose first and last root elements meet the
    range, in the order they were made, as a pass over every view's layout would; views
    made since the last call (as the C module appends them) and the list's pruning of
    dead ones included."""
    m = xp.asarray(np.arange(count * 5.0).reshape(count, 5))
    kept = [m[i] for i in range(count)] + [m[:, j] for j in range(5)] + [m[i:i + 2, 1:4] for i in range(0, count, 4)]
    family = m._base

    def expected(low, high):
        return [v for v in family.live_views() if not (v._base.layout().bounds()[1] < low or
                                                       v._base.layout().bounds()[0] > high)]

    ranges = [(0, 0), (5, 9), (7, 7), (count * 5 - 1, count * 5 - 1), (-3, -1), (0, count * 5), (12, 31)]
    for low, high in ranges:
        assert family.overlapping(low, high) == expected(low, high)
    del kept[::3]
    gc.collect()
    kept += [m[i, 2:] for i in range(count)]  # made after the bounds were known, pruning the list
    for low, high in ranges:
        assert family.overlapping(low, high) == expected(low, high)
