"""The numeric semantics of PTX's ALU instructions on NumPy arrays, exactly as the ISA defines
them (integer wrap-around, shift clamping, ``bfe``'s sign rules, ``min.f32``'s treatment of NaN
and signed zeros) so that a simulated kernel gets the GPU's bits, not NumPy's or C's.

Where PTX leaves a result unspecified the simulator picks one and says so here:
integer division by zero gives all ones (the quotient) and the dividend (the remainder), as the
hardware does; ``INT_MIN / -1`` wraps to ``INT_MIN`` with remainder 0.
Approximate transcendentals (``ex2.approx``, ``sin.approx``, ...) and ``div.full``/``div.approx``
are computed by NumPy, correctly or nearly correctly rounded: their bits are not the hardware's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .scalars import BITS, SIGNED, ScalarType

CANONICAL_NAN = {4: np.uint32(0x7FFFFFFF), 2: np.uint16(0x7FFF)}


# ---- integers ------------------------------------------------------------------------------
def _magnitude(a: np.ndarray, ty: ScalarType) -> tuple[np.ndarray, np.ndarray]:
    """Sign and magnitude (uint64) of integers: the magnitude of INT_MIN is representable."""
    if not ty.is_signed:
        return np.zeros(np.shape(a), bool), np.asarray(a).astype(np.uint64)
    negative = np.asarray(a) < 0
    raw = np.asarray(a).astype(np.int64).view(np.uint64)
    return negative, np.where(negative, np.uint64(0) - raw, raw)


def divide(a: np.ndarray, b: np.ndarray, ty: ScalarType) -> tuple[np.ndarray, np.ndarray]:
    """Truncating quotient and remainder (the remainder has the dividend's sign)."""
    a, b = np.broadcast_arrays(np.asarray(a, ty.dtype), np.asarray(b, ty.dtype))
    sign_a, mag_a = _magnitude(a, ty)
    sign_b, mag_b = _magnitude(b, ty)
    zero = mag_b == 0
    mag_q = mag_a // np.where(zero, np.uint64(1), mag_b)
    q = np.where(sign_a ^ sign_b, np.uint64(0) - mag_q, mag_q).astype(BITS[ty.size]).view(ty.dtype)
    q = np.where(zero, np.array(-1).astype(ty.dtype), q)
    r = np.where(zero, a, a - q * b)
    return q.astype(ty.dtype), r.astype(ty.dtype)


def mul_high(a: np.ndarray, b: np.ndarray, ty: ScalarType) -> np.ndarray:
    """The high half of the double-width product (``mul.hi``)."""
    if ty.size < 8:
        wide = SIGNED[8] if ty.is_signed else BITS[8]
        return ((np.asarray(a).astype(wide) * np.asarray(b).astype(wide)) >> ty.width).astype(ty.dtype)
    ua, ub = np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64)
    low32 = np.uint64(0xFFFFFFFF)
    a0, a1, b0, b1 = ua & low32, ua >> np.uint64(32), ub & low32, ub >> np.uint64(32)
    ll, hl, lh, hh = a0 * b0, a1 * b0, a0 * b1, a1 * b1
    cross = (ll >> np.uint64(32)) + (hl & low32) + (lh & low32)
    high = hh + (hl >> np.uint64(32)) + (lh >> np.uint64(32)) + (cross >> np.uint64(32))
    if ty.is_signed:
        high = high - np.where(np.asarray(a) < 0, ub, 0) - np.where(np.asarray(b) < 0, ua, 0)
    return high.view(ty.dtype)


def mul_wide(a: np.ndarray, b: np.ndarray, ty: ScalarType) -> np.ndarray:
    """The double-width product (``mul.wide``), of type s/u with twice ``ty``'s width."""
    wide = (SIGNED if ty.is_signed else BITS)[2 * ty.size]
    return np.asarray(a).astype(wide) * np.asarray(b).astype(wide)


def shift_left(a: np.ndarray, amount: np.ndarray, ty: ScalarType) -> np.ndarray:
    """``shl``: amounts of the width or more give 0 (PTX clamps, C leaves it undefined)."""
    amount = np.asarray(amount).astype(np.uint32)
    limited = np.minimum(amount, ty.width - 1).astype(ty.dtype)
    return np.where(amount >= ty.width, np.zeros((), ty.dtype), np.asarray(a, ty.dtype) << limited)


def shift_right(a: np.ndarray, amount: np.ndarray, ty: ScalarType) -> np.ndarray:
    """``shr``: arithmetic for ``.s`` types; amounts past the width clamp to the width."""
    amount = np.minimum(np.asarray(amount).astype(np.uint32), ty.width)
    a = np.asarray(a, ty.dtype)
    if ty.is_signed:
        return a >> np.minimum(amount, ty.width - 1).astype(ty.dtype)
    return np.where(amount >= ty.width, np.zeros((), ty.dtype), a >> np.minimum(amount, ty.width - 1).astype(ty.dtype))


def popcount(a: np.ndarray) -> np.ndarray:
    return np.bitwise_count(np.asarray(a)).astype(np.uint32)


def count_leading_zeros(a: np.ndarray, ty: ScalarType) -> np.ndarray:
    x = np.asarray(a).view(BITS[ty.size]).astype(np.uint64)
    length = np.zeros(x.shape, np.uint32)
    for step in (32, 16, 8, 4, 2, 1):
        big = x >= np.uint64(1 << step)
        length += np.where(big, step, 0).astype(np.uint32)
        x = np.where(big, x >> np.uint64(step), x)
    return (ty.width - (length + x.astype(np.uint32))).astype(np.uint32)


_REVERSED_BYTES = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)


def reverse_bits(a: np.ndarray, ty: ScalarType) -> np.ndarray:
    data = np.ascontiguousarray(np.asarray(a, ty.dtype).reshape(-1))
    rows = data.view(np.uint8).reshape(-1, ty.size)
    return _REVERSED_BYTES[rows[:, ::-1]].copy().view(ty.dtype).reshape(np.shape(a))


def bit_field_extract(a: np.ndarray, position: np.ndarray, length: np.ndarray, ty: ScalarType) -> np.ndarray:
    """``bfe``: ``length`` bits from ``position`` (each the low 8 bits of its operand),
    zero-extended for ``.u``, sign-extended from the field's top bit (or ``a``'s) for ``.s``."""
    n = ty.width
    pos = (np.asarray(position).astype(np.uint64) & np.uint64(0xFF)).astype(np.int64)
    length = (np.asarray(length).astype(np.uint64) & np.uint64(0xFF)).astype(np.int64)
    bits = np.asarray(a, ty.dtype).view(BITS[ty.size]).astype(np.uint64)
    shifted = np.where(pos >= n, np.uint64(0), bits >> np.minimum(pos, 63).astype(np.uint64))
    keep = np.minimum(length, np.maximum(n - pos, 0))
    mask = np.where(keep >= 64, ~np.uint64(0), (np.uint64(1) << np.minimum(keep, 63).astype(np.uint64)) - np.uint64(1))
    field = shifted & mask
    if ty.is_signed:
        top = np.minimum(np.where(pos >= n, n - 1, pos + length - 1), n - 1)
        sign = ((bits >> np.maximum(top, 0).astype(np.uint64)) & np.uint64(1)).astype(bool) & (length > 0)
        field = np.where(sign, field | ~mask, field)
    field = np.where(length == 0, np.uint64(0), field)
    return field.astype(BITS[ty.size]).view(ty.dtype)


def bit_field_insert(f: np.ndarray, b: np.ndarray, position: np.ndarray, length: np.ndarray,
                     ty: ScalarType) -> np.ndarray:
    """``bfi``: ``b`` with ``length`` bits at ``position`` replaced by ``f``'s low bits."""
    n = ty.width
    pos = (np.asarray(position).astype(np.uint64) & np.uint64(0xFF)).astype(np.int64)
    length = (np.asarray(length).astype(np.uint64) & np.uint64(0xFF)).astype(np.int64)
    keep = np.minimum(length, np.maximum(n - pos, 0))
    mask = np.where(keep >= 64, ~np.uint64(0), (np.uint64(1) << np.minimum(keep, 63).astype(np.uint64)) - np.uint64(1))
    mask = np.where(pos >= n, np.uint64(0), mask << np.minimum(pos, 63).astype(np.uint64))
    fv = np.asarray(f, ty.dtype).view(BITS[ty.size]).astype(np.uint64)
    bv = np.asarray(b, ty.dtype).view(BITS[ty.size]).astype(np.uint64)
    inserted = np.where(pos >= n, np.uint64(0), fv << np.minimum(pos, 63).astype(np.uint64))
    return ((bv & ~mask) | (inserted & mask)).astype(BITS[ty.size]).view(ty.dtype)


def permute_bytes(a: np.ndarray, b: np.ndarray, selector: np.ndarray) -> np.ndarray:
    """``prmt.b32`` (default mode): each result byte picks one of the 8 bytes of {b, a},
    replicating its sign bit when the selector nibble's bit 3 is set."""
    source = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
    sel = np.asarray(selector).astype(np.uint64)
    out = np.zeros(np.broadcast(source, sel).shape, np.uint64)
    for i in range(4):
        nibble = (sel >> np.uint64(4 * i)) & np.uint64(0xF)
        byte = (source >> ((nibble & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
        byte = np.where(nibble & np.uint64(8), np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0)), byte)
        out |= byte << np.uint64(8 * i)
    return out.astype(np.uint32)


# ---- floats --------------------------------------------------------------------------------
def flush_subnormal(x: np.ndarray) -> np.ndarray:
    """``.ftz``: subnormal f32 values become zeros of the same sign."""
    x = np.asarray(x)
    tiny = (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)
    return np.where(tiny, np.copysign(np.zeros((), x.dtype), x), x)


def saturate(x: np.ndarray) -> np.ndarray:
    """``.sat`` on floats: clamp to [0.0, 1.0], NaN to 0.0."""
    x = np.asarray(x)
    return np.where(np.isnan(x), np.zeros((), x.dtype), np.clip(x, 0, 1).astype(x.dtype) + np.zeros((), x.dtype))


def _canonical_nan(like: np.ndarray) -> np.ndarray:
    size = like.dtype.itemsize
    return np.array(CANONICAL_NAN[size]).view(like.dtype) if size in CANONICAL_NAN else np.array(np.nan, like.dtype)


def float_min_max(a: np.ndarray, b: np.ndarray, is_max: bool, propagate_nan: bool) -> np.ndarray:
    """PTX ``min``/``max`` on floats: -0.0 orders below +0.0; a NaN operand yields the other
    operand (the canonical NaN if both are NaN), or the canonical NaN with ``.NaN``."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    pick_a = (a > b if is_max else a < b) | ((a == b) & (np.signbit(b) if is_max else np.signbit(a)))
    result = np.where(pick_a, a, b)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    nan = _canonical_nan(a)
    if propagate_nan:
        return np.where(nan_a | nan_b, nan, result)
    return np.where(nan_a & nan_b, nan, np.where(nan_a, b, np.where(nan_b, a, result)))


def float_abs(a: np.ndarray) -> np.ndarray:
    bits = np.asarray(a).view(BITS[a.dtype.itemsize])
    return (bits & ~np.array(1 << (8 * a.dtype.itemsize - 1)).astype(bits.dtype)).view(a.dtype)


def float_neg(a: np.ndarray) -> np.ndarray:
    bits = np.asarray(a).view(BITS[a.dtype.itemsize])
    return (bits ^ np.array(1 << (8 * a.dtype.itemsize - 1)).astype(bits.dtype)).view(a.dtype)


def copy_sign(sign_source: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """``copysign d, a, b``: ``b``'s magnitude with ``a``'s sign (note the operand order)."""
    return np.copysign(magnitude, sign_source)


TEST_PROPERTIES: dict[str, Callable[[Any], Any]] = {
    "finite": np.isfinite,
    "infinite": np.isinf,
    "number": lambda x: ~np.isnan(x),
    "notanumber": np.isnan,
    "normal": lambda x: np.isfinite(x) & (np.abs(x) >= np.finfo(x.dtype).tiny),
    "subnormal": lambda x: (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny),
}


def compare(op: str, a: np.ndarray, b: np.ndarray, ty: ScalarType) -> np.ndarray:
    """``setp``'s comparison ``op``: ordered (false on NaN) or, with a ``u`` suffix, unordered."""
    if ty.is_float:
        unordered = np.isnan(a) | np.isnan(b)
        if op == "num":
            return ~unordered
        if op == "nan":
            return unordered
        if op.endswith("u") and op[:-1] in _ORDERED:
            return _ORDERED[op[:-1]](a, b) | unordered
        return _ORDERED[op](a, b) & ~unordered if op == "ne" else _ORDERED[op](a, b)
    if op in _UNSIGNED:
        u = BITS[ty.size]
        return _ORDERED[_UNSIGNED[op]](np.asarray(a).view(u), np.asarray(b).view(u))
    return _ORDERED[op](a, b)


_ORDERED = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal}
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
