"""Memory shared with other libraries (user guide, "Memory shared with other libraries").

``from_dlpack`` and ``asarray(copy=False)`` use a caller's memory without a copy, and
``np.asarray``, ``np.from_dlpack`` and ``__dlpack__`` export an array's memory without one,
so ``np.shares_memory`` holds both ways, writes by either side are seen by the other at
once, and ops recorded before a write compute with the values they were recorded on.
NumPy is the peer here; the same paths with PyTorch run where PyTorch is installed.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plaidarray as xp
from device_choice import host_only
from plaidarray.trace.exports import recording

pytestmark = host_only("sharing a caller's memory without a copy (a GPU's arrays are copies of it)")

#: The zero-copy imports of a caller's writable NumPy memory.
IMPORTS = {
    "from_dlpack": lambda a: xp.from_dlpack(a),
    "from_dlpack(copy=False)": lambda a: xp.from_dlpack(a, copy=False),
    "asarray(copy=False)": lambda a: xp.asarray(a, copy=False),
}
#: The zero-copy exports of an array's memory.
EXPORTS = {
    "np.asarray": np.asarray,
    "np.from_dlpack": np.from_dlpack,
    "__array__": lambda x: x.__array__(),
}

imports = pytest.mark.parametrize("share", IMPORTS.values(), ids=IMPORTS.keys())
exports = pytest.mark.parametrize("export", EXPORTS.values(), ids=EXPORTS.keys())


@imports
@exports
def test_memory_is_shared_both_ways(share, export):
    a = np.arange(12.0).reshape(3, 4)
    x = share(a)
    back = export(x)
    assert np.shares_memory(back, a) and back.flags.writeable
    assert np.shares_memory(export(x[1:, ::2]), a[1:, ::2])  # a view's export is its window


@imports
def test_writes_by_numpy_are_seen_by_reads(share):
    a = np.arange(5, dtype=np.int32)
    x = share(a)
    a[2] = 40
    assert int(x[2]) == 40
    assert int(xp.sum(x)) == 0 + 1 + 40 + 3 + 4
    a[:] = 7
    np.testing.assert_array_equal(np.asarray(x * 2), np.full(5, 14, np.int32))
    a[0] = 8  # read with no op between the write and the read, nor between the reads
    assert x.tolist() == [8, 7, 7, 7, 7]
    a[1] = 9
    assert x.tolist() == [8, 9, 7, 7, 7]
    scalar = np.array(1.0)
    y = share(scalar)
    assert float(y + 1.0) == 2.0
    scalar[()] = 5.0
    assert float(y) == 5.0


@imports
def test_writes_by_plaidarray_reach_the_memory_at_once(share):
    a = np.zeros((3, 3))
    x = share(a)
    x[1, 2] = 5.0
    assert a[1, 2] == 5.0
    x += 1.0
    np.testing.assert_array_equal(a, np.array([[1, 1, 1], [1, 1, 6], [1, 1, 1.0]]))
    row = x[2]
    row[0] = -3.0  # through a view, to its base and so to the memory
    assert a[2, 0] == -3.0
    x[xp.asarray(a > 5.0)] = 0.0  # a boolean-mask update
    assert a[1, 2] == 0.0


@imports
def test_ops_recorded_before_a_write_see_the_values_they_were_recorded_on(backend, share):
    a = np.ones(8)
    x = share(a)
    short = x * 2.0
    long = x
    for _ in range(40):  # past the pending bound: part of it may run before the write
        long = long + 1.0
    window = x[2:4]  # a view follows its base, as NumPy's does
    a[:] = 10.0
    np.testing.assert_array_equal(np.asarray(short), np.full(8, 2.0))
    np.testing.assert_array_equal(np.asarray(long), np.full(8, 41.0))
    np.testing.assert_array_equal(np.asarray(window), [10.0, 10.0])
    np.testing.assert_array_equal(np.asarray(x + 0.5), np.full(8, 10.5))


def test_asarray_with_copy_none_copies_writable_memory_once():
    a = np.arange(4.0)
    x = xp.asarray(a)
    assert not np.shares_memory(np.asarray(x), a)
    a[0] = 99.0
    assert float(x[0]) == 0.0


def test_copy_true_copies():
    a = np.arange(4.0)
    for x in (xp.from_dlpack(a, copy=True), xp.asarray(a, copy=True)):
        assert not np.shares_memory(np.asarray(x), a)
        a[1] = -1.0
        assert float(x[1]) == 1.0
        a[1] = 1.0


def test_layouts_that_cannot_be_shared_are_copied_or_refused():
    a = np.arange(12.0).reshape(3, 4)
    for other in (a[:, ::2], np.asfortranarray(a), a.astype(">f8")):
        x = xp.from_dlpack(other) if other.dtype.isnative else xp.asarray(other)
        assert not np.shares_memory(np.asarray(x), other)
        np.testing.assert_array_equal(np.asarray(x), other)
        with pytest.raises(ValueError, match="layout needs a copy"):
            xp.asarray(other, copy=False)


def test_a_read_only_view_of_writable_memory_is_copied_and_copy_false_refuses_it():
    base = np.arange(6.0)
    view = base[1:]
    view.flags.writeable = False
    x = xp.from_dlpack(view)
    base[1] = 50.0
    assert float(x[0]) == 1.0
    with pytest.raises(ValueError, match="read-only view of memory that can still be written"):
        xp.asarray(view, copy=False)


def test_the_buffer_protocol_shares_a_bytearray():
    memory = bytearray(np.arange(4, dtype=np.uint8).tobytes())
    x = xp.asarray(memory, copy=False)
    memory[0] = 9
    assert int(x[0]) == 9
    x[3] = 200
    assert memory[3] == 200


def test_an_export_imported_again_is_one_memory():
    x = xp.arange(4.0) * 1.0
    y = xp.from_dlpack(np.asarray(x))
    assert np.shares_memory(np.asarray(y), np.asarray(x))
    y[0] = 7.0
    assert float(x[0]) == 7.0
    x[1] = 8.0
    assert float(y[1]) == 8.0


@given(st.lists(st.tuples(st.sampled_from(["numpy write", "plaidarray write", "record", "read"]),
                          st.integers(0, 5), st.integers(-9, 9)), max_size=25))
@settings(deadline=None)
def test_any_order_of_writes_records_and_reads_matches_numpy(backend, steps):
    """Against a model: NumPy computes each recorded op at once on the shared memory."""
    a = np.zeros(6)
    x = xp.from_dlpack(a)
    recorded: list[tuple[xp.Array, np.ndarray]] = []
    for action, i, v in steps:
        if action == "numpy write":
            a[i] = v
        elif action == "plaidarray write":
            x[i] = float(v)
            assert a[i] == v
        elif action == "record":
            recorded.append((x * float(v) + xp.sum(x), a * v + a.sum()))
        elif recorded:
            got, expected = recorded[i % len(recorded)]
            np.testing.assert_array_equal(np.asarray(got), expected)
    np.testing.assert_array_equal(np.asarray(x), a)
    for got, expected in recorded:
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_another_threads_op_spares_no_read_its_comparison():
    """An op compares a pinned memory once (``recording``); a read in another
    thread meanwhile, after a write, still compares it."""
    a = np.zeros(4)
    x = xp.from_dlpack(a)
    inside, written = threading.Event(), threading.Event()

    def op(y):
        out = y + 1.0  # compares the memory, inside this thread's op
        inside.set()
        assert written.wait(30)
        return out

    worker = threading.Thread(target=lambda: recording(op, x))
    worker.start()
    assert inside.wait(30)
    a[0] = 5.0
    try:
        assert float(x[0]) == 5.0
    finally:
        written.set()
        worker.join(30)


def test_pytorch_shares_both_ways():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (docs/reliability.md says how this case runs)")
    t = torch.arange(5, dtype=torch.float32)
    x = xp.from_dlpack(t)
    back = torch.from_dlpack(x)
    assert back.data_ptr() == t.data_ptr()
    pending = x + 1.0
    t[0] = 10.0
    assert float(x[0]) == 10.0
    assert float(pending[0]) == 1.0
    x[1] = -2.0
    assert float(t[1]) == -2.0
    mine = xp.arange(3.0) * 2.0
    assert torch.from_dlpack(mine).data_ptr() == np.asarray(mine).ctypes.data
