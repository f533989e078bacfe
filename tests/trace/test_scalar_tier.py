"""The scalar tier (``trace/scalars.py``): ``bool()``, ``float()``, ``int()`` of one exact op
on computed 0-d values take its reference evaluation's value, which must be the bits the
compiled kernels compute, op by op, for every dtype of its ``exact_kinds`` and the values
where implementations differ (NaN, infinities, signed zeros, subnormals, integer limits)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

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


@pytest.mark.parametrize("name", sorted(_RECORD))
def test_the_scalar_tier_computes_the_kernels_bits(name):
    op = name.split()[0]
    for kind in OPS[op].exact_kinds:
        if kind in "bc" and name.split()[-1] in ("LT", "LE", "GT", "GE"):
            continue  # booleans and complex numbers are unordered: the API records no such comparison
        for dtype in _DTYPES[kind]:
            values = _values(kind, dtype)
            for a, b in itertools.product(values, values):
                recorded = _RECORD[name](xp.asarray(a), xp.asarray(b))
                assert recorded._node.op == op
                found = scalars.value(recorded._node)
                assert found is not None, (name, dtype)
                kernel = np.asarray(_RECORD[name](xp.asarray(a), xp.asarray(b)))  # a graph's run
                tier = np.asarray(found).astype(kernel.dtype)
                assert tier.tobytes() == kernel.tobytes(), (name, dtype, a, b, tier, kernel)


def test_reads_take_the_tiers_value_and_leave_the_rest_to_a_run():
    x = xp.asarray(np.array([0.25, 0.75, -1.0]))
    assert [bool(x[i] > 0.5) for i in range(3)] == [False, True, False]
    assert float(x[1] * 2.0) == 1.5
    assert int(xp.asarray(np.array([3, 4]))[1] + 2) == 6
    pending = x[0] * 2.0 + 1.0  # an operand pending: a run
    assert scalars.value(pending._node) is None and float(pending) == 1.5
    assert scalars.value(xp.exp(x[0])._node) is None  # the project's own polynomials: not exact
    assert scalars.value((x[0] > 0.0)._node) is not None
