"""The scalar tier (``trace/scalars.py``): ``bool()``, ``float()``, ``int()`` of a short chain
of exact ops on computed 0-d values take their reference evaluations' value, which must be
the bits the compiled kernels compute, op by op, for every dtype of their ``exact_kinds`` and
the values where implementations differ (NaN, infinities, signed zeros, subnormals, integer
limits), and chained; an element store of such a chain (``h[k] += 1``) stores those bits."""

from __future__ import annotations

import itertools
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from plaidarray.hlo.opdef import OPS
from plaidarray.trace import scalars

_SPECIAL = {
    "f": [0.0, -0.0, 1.0, -1.5, 3.0, 1e-310, -2.5e-320, 1e308, -1e308, float("inf"), float("-inf"), float("nan")],
    "i": [0, 1, -1, 7, -128, 127, 2**31 - 1, -2**31, 2**62, -2**63, 2**63 - 1],
    "u": [0, 1, 2, 7, 128, 255, 2**16 - 1, 2**32 - 1, 2**63, 2**64 - 1],
    "b": [False, True],
    "c": [0j, complex(-0.0, 0.0), 1 + 2j, complex(float("nan"), 1.0), complex(1.0, float("inf")), 1e-310 + 0j],
}
_DTYPES = {"f": [np.float32, np.float64], "i": [np.int8, np.int32, np.int64], "u": [np.uint8, np.uint64],
           "b": [np.bool_], "c": [np.complex64, np.complex128]}

#: Each exact op as the API records it on two (or one, or three) 0-d arrays.
_RECORD = {
    "add": lambda a, b: xp.add(a, b),
    "subtract": lambda a, b: xp.subtract(a, b),
    "multiply": lambda a, b: xp.multiply(a, b),
    "divide": lambda a, b: xp.divide(a, b),
    "negate": lambda a, b: xp.negative(a),
    "and": lambda a, b: xp.bitwise_and(a, b) if a.dtype != xp.bool else xp.logical_and(a, b),
    "or": lambda a, b: xp.bitwise_or(a, b) if a.dtype != xp.bool else xp.logical_or(a, b),
    "xor": lambda a, b: xp.bitwise_xor(a, b) if a.dtype != xp.bool else xp.logical_xor(a, b),
    "not": lambda a, b: xp.bitwise_invert(a) if a.dtype != xp.bool else xp.logical_not(a),
    "select": lambda a, b: xp.where(a, b, a),
    "signbit": lambda a, b: xp.signbit(a),
    **{f"compare {d}": f for d, f in (("LT", xp.less), ("LE", xp.less_equal), ("EQ", xp.equal),
                                       ("NE", xp.not_equal), ("GT", xp.greater), ("GE", xp.greater_equal))},
}


def _values(kind: str, dtype) -> list:
    with np.errstate(all="ignore"):
        return [np.asarray(v).astype(dtype) for v in _SPECIAL[kind]]


def test_every_exact_op_is_tested():
    """An op marked exact without a case here would be trusted untested."""
    marked = {name for name, opdef in OPS.items() if opdef.exact_kinds}
    assert marked == {name.split()[0] for name in _RECORD}


#: Whether ``scalars.evaluate`` is C's (``_scalars.c``), which gives Python scalars.
_IN_C = scalars.evaluate is not scalars.value


def _evaluated_in_c(found, dtype) -> bool:
    """Whether ``found`` (``evaluate``'s) is C's value, as it must be for every dtype C
    evaluates (else the C path would go untested), but a float32 NaN (``scalars.value``'s,
    which keeps a signalling NaN's payload)."""
    if type(found) is np.ndarray and found.dtype == np.float32 and np.isnan(found):
        return True
    return type(found) in (float, int, bool) or not _IN_C or np.dtype(dtype) not in scalars.C_DTYPES


def _python_value(found):
    """``found`` as ``float()``, ``int()``, ``bool()`` give it, to be compared bit for bit
    (a float32 result must be the float32 value, not a double near it)."""
    value = np.asarray(found).item() if isinstance(found, (np.ndarray, np.generic)) else found
    return struct.pack("<d", value) if type(value) is float else (type(value), value)


@pytest.mark.parametrize("evaluate", [scalars.value, scalars.evaluate], ids=["python", "c"])
@pytest.mark.parametrize("name", sorted(_RECORD))
def test_the_scalar_tier_computes_the_kernels_bits(name, evaluate):
    op = name.split()[0]
    for kind in OPS[op].exact_kinds:
        if kind in "bc" and name.split()[-1] in ("LT", "LE", "GT", "GE"):
            continue  # booleans and complex numbers are unordered: the API records no such comparison
        for dtype in _DTYPES[kind]:
            values = _values(kind, dtype)
            for a, b in itertools.product(values, values):
                recorded = _RECORD[name](xp.asarray(a), xp.asarray(b))
                assert recorded._node.op == op
                found = evaluate(recorded._node)
                assert found is not None, (name, dtype)
                # C evaluates the ops of ``C_OPS``; it hands the others (``signbit``) to Python
                assert evaluate is scalars.value or op not in scalars.C_OPS or _evaluated_in_c(found, dtype), (name, dtype)
                kernel = np.asarray(_RECORD[name](xp.asarray(a), xp.asarray(b)))  # a graph's run
                tier = np.asarray(found).astype(kernel.dtype)
                assert tier.tobytes() == kernel.tobytes(), (name, dtype, a, b, tier, kernel)
                assert _python_value(found) == _python_value(kernel), (name, dtype, a, b, found, kernel)


def test_reads_take_the_tiers_value_and_leave_the_rest_to_a_run():
    x = xp.asarray(np.array([0.25, 0.75, -1.0]))
    assert [bool(x[i] > 0.5) for i in range(3)] == [False, True, False]
    assert float(x[1] * 2.0) == 1.5
    assert int(xp.asarray(np.array([3, 4]))[1] + 2) == 6
    chain = x[0] * 2.0 + 1.0  # a short chain of exact ops: evaluated op by op
    assert scalars.value(chain._node) is not None and float(chain) == 1.5
    longer = x[0]
    for _ in range(scalars.MOST_OPS + 1):  # past the chain's bound: a run
        longer = longer + 1.0
    assert scalars.value(longer._node) is None and float(longer) == 0.25 + scalars.MOST_OPS + 1
    assert scalars.evaluate(longer._node) is None and scalars.evaluate(chain._node) == 1.5
    assert scalars.value(xp.exp(x[0])._node) is None  # the project's own polynomials: not exact
    assert scalars.value((x[0] > 0.0)._node) is not None


@pytest.mark.skipif(not _IN_C, reason="the C scalar tier is not built")
def test_what_python_would_refuse_is_refused_in_c():
    """A chain over a reduction of a pending array (a read's most common graph) is refused
    in C, where ``scalars.value`` walked it again to refuse it; a chain C has no code for
    (complex operands) still goes to it."""
    calls = []

    def counted(node):
        calls.append(node)
        return scalars.value(node)

    scalars._in_c(counted)
    try:
        w = xp.asarray(np.array([0.5, 2.0, -1.0]))[:2] * 1.0
        refused = [xp.max(w) - xp.min(w) + xp.mean(w * w), xp.sum(w) > 0.0, -xp.sum(w), xp.max(w)]
        assert [scalars.evaluate(r._node) for r in refused] == [None] * 4 and not calls
        z = xp.asarray(np.array([1 + 2j, 3j]))
        assert scalars.evaluate((z[0] == z[1])._node) is not None and len(calls) == 1
        assert [float(r) for r in refused] == [1.5 + (0.25 + 4.0) / 2, 1.0, -2.5, 2.0]
    finally:
        scalars._in_c()


#: Ops of a chain, each on the chain so far and one special value (of the chain's dtype).
_CHAIN_STEPS = ["add", "subtract", "multiply", "divide", "negate", "select"]


@given(kind=st.sampled_from("fiu"), data=st.data())
def test_chains_and_their_stores_compute_the_kernels_bits(kind, data):
    """A chain of up to ``MOST_OPS`` exact ops on elements and special values: the tier's
    value is the graph's run's bits, and an element store of the pending chain (the C
    store's path, ``_graph.ArrayHandle``) stores those bits."""
    dtype = data.draw(st.sampled_from(_DTYPES[kind]))
    values = _values(kind, dtype)
    source = xp.asarray(np.stack(values))
    chain = source[data.draw(st.integers(0, len(values) - 1))]
    left = data.draw(st.integers(1, scalars.MOST_OPS))  # ops (a select is two: its comparison)
    while left:
        step = data.draw(st.sampled_from([s for s in _CHAIN_STEPS if (s != "divide" or kind == "f") and
                                          (s != "select" or left > 1)]))
        other = source[data.draw(st.integers(0, len(values) - 1))]
        chain = xp.where(chain > other, chain, other) if step == "select" else _RECORD[step](chain, other)
        left -= 2 if step == "select" else 1
    found = scalars.value(chain._node)
    assert found is not None
    in_c = scalars.evaluate(chain._node)
    assert _evaluated_in_c(in_c, dtype)
    stored = xp.asarray(np.zeros(2, dtype))
    stored[1] = chain  # stored while pending: the tier's value
    kernel = np.asarray(chain)  # the graph's run
    assert np.asarray(found).tobytes() == kernel.tobytes(), (dtype, found, kernel)
    assert np.asarray(in_c).astype(dtype).tobytes() == kernel.tobytes(), (dtype, in_c, kernel)
    assert _python_value(in_c) == _python_value(kernel), (dtype, in_c, kernel)
    assert np.asarray(stored)[1:].tobytes() == kernel.reshape(1).tobytes()


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint64, np.float32, np.float64, np.complex64])
def test_element_reads_and_stores_in_c_are_the_python_definitions(dtype):
    """``x[k]`` and ``x[k] = v`` of one element, and stores into blocks (a row, a row's
    slice, rows; ``_graph.ArrayHandle``'s, in C) give what ``Array._getitem`` and
    ``Array._setitem`` (their definitions) give, errors included: values the dtype holds
    and others, arrays of the block's shape and others, empty and strided slices."""
    from plaidarray.trace.array import Array

    data = np.arange(12).reshape(3, 4).astype(dtype)
    fast, slow = xp.asarray(data), xp.asarray(data)
    for key in [(0, 0), (2, -1), (-3, 3), (1, 2)]:
        got, want = fast[key], Array._getitem(slow, key)
        assert (got.dtype, got.shape, np.asarray(got).tobytes()) == (want.dtype, want.shape, np.asarray(want).tobytes())
    row = np.arange(4).astype(dtype)
    for key, value in [((0, 1), 1), ((2, -1), True), ((1, 1), 2.5), ((0, 0), fast[2, 3]), ((1, 0), fast[0, 1] + 1),
                       (1, 3), ((2, slice(None)), xp.asarray(row)), ((0, slice(1, 3)), xp.asarray(row[:2])),
                       ((2, slice(-2, None)), 0), (slice(0, 2), xp.asarray(row)), ((1, slice(2, 2)), 1),
                       ((1, slice(0, 4, 2)), 1), ((0, slice(0, 3)), xp.asarray(row))]:
        outcomes = []
        for array, store in ((fast, type(fast).__setitem__), (slow, Array._setitem)):
            try:
                store(array, key, value)
                outcomes.append(np.asarray(array).tobytes())
            except (TypeError, OverflowError, ValueError) as error:
                outcomes.append(type(error))
        assert outcomes[0] == outcomes[1], (key, value)
    for key in [(3, 0), (0, 4), (-4, 0)]:
        with pytest.raises(IndexError):
            fast[key]
        with pytest.raises(IndexError):
            fast[key] = data.flat[0].item()  # a Python scalar of its kind
    with pytest.raises(ValueError, match="cannot delete"):
        del fast[0, 0]


def test_a_float32_signalling_nan_keeps_its_payload_through_a_chain_and_its_store():
    """A float32 NaN that a chain passes on (a negation, a ``where``) is stored with the
    bits NumPy's float32 ops give it: C evaluates in doubles, which quiet a signalling
    NaN, so it leaves float32 NaNs to ``scalars.value``."""
    raw = np.array([0x7FA00001, 0x3F800000], np.uint32).view(np.float32)
    a = xp.asarray(raw.copy())
    out = xp.zeros(3, dtype=xp.float32)
    out[0] = 1.0
    out[1] = -a[0]
    out[2] = xp.where(a[1] > 0, a[0], a[1])
    with np.errstate(invalid="ignore"):
        want = np.array([1.0, -raw[0], np.where(raw[1] > 0, raw[0], raw[1])], np.float32)
    assert np.asarray(out).view(np.uint32).tolist() == want.view(np.uint32).tolist()
