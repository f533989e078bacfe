"""Comparison helpers for the differential tests: a plaidarray result against the
NumPy result, checking shape and dtype exactly and values exactly or with tolerance."""

from __future__ import annotations

import numpy as np

RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}
ATOL = {np.dtype(np.float32): 1e-37, np.dtype(np.float64): 1e-30}


def to_numpy(result) -> np.ndarray:
    return np.asarray(result)


def assert_same(result, expected, *, exact=False, signed_zeros=True, rtol=None, atol=None,
                dtype=None, err_msg=""):
    """``result`` (plaidarray array or NumPy array) equals ``expected`` (NumPy).

    Shape and dtype must match exactly (``dtype`` overrides the expected dtype where the
    spec differs from NumPy). Integers and booleans must be equal. Floats must agree
    to ``rtol``/``atol`` (per-dtype defaults) with NaN where NumPy has NaN, or bit for
    bit (NaNs aside) if ``exact``; with ``signed_zeros``, a zero must carry NumPy's sign.
    """
    got = to_numpy(result)
    expected = np.asarray(expected)
    want_dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    assert got.shape == expected.shape, f"shape {got.shape} != expected {expected.shape}. {err_msg}"
    assert got.dtype == want_dtype, f"dtype {got.dtype} != expected {want_dtype}. {err_msg}"
    if got.dtype.kind in "fc":
        expected = expected.astype(got.dtype)
        if exact:
            np.testing.assert_array_equal(got, expected, err_msg=err_msg, strict=True)
        else:
            np.testing.assert_allclose(got, expected, equal_nan=True, err_msg=err_msg,
                                       rtol=RTOL[got.dtype] if rtol is None else rtol,
                                       atol=ATOL[got.dtype] if atol is None else atol)
        if signed_zeros:
            zeros = (got == 0) & (expected == 0)
            mismatch = zeros & (np.signbit(got) != np.signbit(expected))
            assert not mismatch.any(), (
                f"sign of zero differs at {np.argwhere(mismatch).tolist()}: got {got[mismatch]}, "
                f"expected {expected[mismatch]}. {err_msg}")
    else:
        np.testing.assert_array_equal(got, expected.astype(got.dtype), err_msg=err_msg, strict=True)


def numpy_binary(fn, x1, x2):
    """``fn(x1, x2)`` computed by NumPy on contiguous 1-D copies of the broadcast operands.

    NumPy's loops take shortcuts for a scalar (stride-0 or 0-d) operand that change
    special cases: ``power`` with a scalar exponent of 0.5 becomes ``sqrt``, so
    ``(-0.0) ** 0.5`` gives -0.0 and ``(-inf) ** 0.5`` gives NaN instead of C99's (and
    the spec's) +0 and +inf. Element-by-element operands avoid the shortcut.
    """
    a, b = np.broadcast_arrays(np.asarray(x1), np.asarray(x2))
    shape = a.shape
    with np.errstate(all="ignore"):
        out = fn(np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1))
    return np.asarray(out).reshape(shape)


def recorded_ops(array) -> list[str]:
    """The ops of ``array``'s pending graph, each node's once per path to it."""
    found, pending = [], [array._node]
    while pending:
        node = pending.pop()
        if node.op is not None:
            found.append(node.op)
            pending.extend(node.operands)
    return found
