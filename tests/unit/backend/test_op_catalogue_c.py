"""``_catalogue.c`` against its definition, ``op_catalogue.py``: the same key for every
signature (the same written form, the same hash), other keys for unequal values, no key
for a value with no written form, and the same record found in a catalogue, or none where
it is damaged."""

from __future__ import annotations

import functools
import hashlib
import marshal
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plaidarray.backend.llvm_cpu import op_catalogue

_catalogue = pytest.importorskip("plaidarray.backend.llvm_cpu._catalogue",
                                 reason="the C module was not built (no C compiler at install?)")


def python_key(signature: object) -> bytes | None:
    """``signature_key`` as Python computes it, where the C module is not loaded."""
    out = bytearray()
    return hashlib.blake2b(out, digest_size=16).digest() if op_catalogue._written(signature, out) else None


DTYPES = [np.dtype(c) for c in op_catalogue.STANDARD] + [np.dtype("V"), np.dtype([("a", "<f8"), ("b", "<i4")]),
                                                         np.dtype(">f8"), np.dtype("U3"), np.dtype("M8[s]")]
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-2**64, 2**64), st.floats(allow_nan=True),
                    st.complex_numbers(allow_nan=True), st.text(), st.binary(), st.sampled_from(DTYPES))
signatures = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5).map(tuple), max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(signatures)
def test_c_keys_every_signature_as_python_does(signature):
    assert _catalogue.key(signature) == python_key(signature)


@pytest.mark.parametrize("value", [[1], frozenset({1}), {"a": 1}, object(), (1, [2]), "\ud800", 10 ** 5000,
                                   type("Named", (tuple,), {})((1,)), functools.reduce(lambda t, _: (t,), range(40), 1)],
                         ids=lambda value: type(value).__name__)
def test_a_value_without_a_written_form_has_no_key_in_either(value):
    assert _catalogue.key(value) is None and python_key(value) is None


def test_unequal_values_have_other_keys():
    values = [1, 1.0, True, 0.0, -0.0, 0, False, None, "1", b"1", np.dtype("float64"), np.dtype("float32"),
              ((1,), 2), (1, (2,)), (1, 2), ((1, 2),), 2 ** 63, -2 ** 63 - 1]
    keys = [_catalogue.key((v,)) for v in values]
    assert len(set(keys)) == len(values)
    assert _catalogue.key((np.dtype("q"),)) == _catalogue.key((np.dtype("int64"),))  # equal dtypes alike


def test_a_dtype_is_written_as_it_is_now_each_time():
    """The written forms of dtypes kept by the C module (those of standard kinds) stay
    Python's at every later key, and a structured dtype whose fields are renamed is written
    as it is now."""
    signature = (np.dtype("float64"), (np.dtype("int32"), np.dtype(">f8")))
    assert [_catalogue.key(signature) for _ in range(3)] == [python_key(signature)] * 3
    structured = np.dtype([("a", "<f8"), ("b", "<i4")])
    before = _catalogue.key((structured,))
    structured.names = ("c", "d")
    assert _catalogue.key((structured,)) == python_key((structured,)) != before


def catalogue_of(records: dict[bytes, bytes], n_slots: int = 8) -> bytes:
    """A catalogue's bytes (``op_catalogue.write``'s layout) of records by key."""
    header = op_catalogue._HEADER.size
    table = bytearray(n_slots * op_catalogue._SLOT.size)
    body = bytearray()
    for digest, data in records.items():
        slot = op_catalogue._first_slot(digest, n_slots)
        while table[slot * op_catalogue._SLOT.size:slot * op_catalogue._SLOT.size + 16] != bytes(16):
            slot = (slot + 1) % n_slots
        op_catalogue._SLOT.pack_into(table, slot * op_catalogue._SLOT.size, digest,
                                     header + len(table) + len(body), len(data), op_catalogue._checksum(digest, data))
        body += data
    return bytes(header) + bytes(table) + bytes(body)


def both(memory: bytes, n_slots: int, signature: object) -> object:
    """What C finds, checked to be what Python finds."""
    found = _catalogue.find(memory, n_slots, op_catalogue._HEADER.size, signature)
    assert found == op_catalogue._Catalogue(memory, n_slots).record(python_key(signature))  # type: ignore[arg-type]
    return found


def test_c_finds_the_record_python_finds_and_none_where_it_is_damaged():
    record = ("key", {"kernels": {}}, 2, (0, None), 1, (0,))
    signatures = [(("add", (), (0, 1)), k) for k in range(5)]
    records = {python_key(s): marshal.dumps((*record[:2], k, *record[3:])) for k, s in enumerate(signatures)}
    memory = catalogue_of(records)
    for k, s in enumerate(signatures):
        assert both(memory, 8, s) == (*record[:2], k, *record[3:])
    assert both(memory, 8, (("add", (), (0, 1)), 9)) is None  # not catalogued
    data = bytearray(memory)
    data[-1] ^= 0xFF  # the last record's last byte: its checksum fails
    last = next(s for s in signatures if records[python_key(s)] == memory[-len(records[python_key(s)]):])
    assert both(bytes(data), 8, last) is None
    garbage = {python_key(signatures[0]): b"\xff\x00not marshal"}  # its checksum holds, it does not load
    assert both(catalogue_of(garbage), 8, signatures[0]) is None
    table = bytearray(catalogue_of({python_key(signatures[0]): records[python_key(signatures[0])]}))
    at = op_catalogue._HEADER.size + op_catalogue._first_slot(python_key(signatures[0]), 8) * op_catalogue._SLOT.size
    struct.pack_into("<I", table, at + 16, len(table))  # its offset past the end
    assert both(bytes(table), 8, signatures[0]) is None
    assert _catalogue.find(memory[:op_catalogue._HEADER.size + 8], 8, op_catalogue._HEADER.size, signatures[0]) is None


def test_c_finds_in_the_installation_what_python_finds(monkeypatch):
    """The op kernels a few first uses look up in the installation's catalogue: C finds
    each one's record as Python does (both found, all but a few)."""
    import plaidarray as xp
    from plaidarray.backend import registry
    from plaidarray.trace import hot

    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)  # op by op, on the installation's kernels
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "1")
    catalogue = op_catalogue.opened(registry.get("llvm-cpu").compiler.target)
    if catalogue is None:
        pytest.skip("no installed catalogue for this environment (its kernels are not built)")
    asked: list[object] = []
    found = op_catalogue.find
    monkeypatch.setattr(op_catalogue, "find", lambda signature, target: asked.append(signature) or
                        found(signature, target))
    xp.clear_cache()
    x = xp.asarray(np.linspace(0.0, 1.0, 30))
    m = xp.reshape(xp.asarray(np.arange(12.0)), (3, 4))
    float(xp.sum(xp.exp(x) * 2.0 + x))
    float(xp.max(m @ m.T))
    int(xp.argmax(xp.cumulative_sum(x[3:17])))
    assert len(asked) >= 5
    records = [_catalogue.find(catalogue._memory, catalogue._n_slots, op_catalogue._HEADER.size, s) for s in asked]
    assert records == [catalogue.record(python_key(s)) for s in asked]
    assert sum(r is not None for r in records) >= len(records) - 1
