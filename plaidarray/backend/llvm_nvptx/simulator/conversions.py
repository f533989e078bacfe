"""PTX's ``cvt``: every integer and float width, its rounding modifiers and saturation.

PTX defines more than C: float-to-integer conversions always saturate (NaN becomes 0), int-to-
float and narrowing float conversions take a rounding mode, and ``.ftz``/``.sat`` apply to float
results. Integer-to-float conversions go through float64 rounded to odd, so they are correct in
every mode without trusting the C library's 64-bit conversions.
"""

from __future__ import annotations

import numpy as np

from .arithmetic import flush_subnormal, saturate
from .rounding import adjust, narrow
from .scalars import SIGNED, ScalarType

INTEGER_ROUNDING = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _range(ty: ScalarType) -> tuple[int, int]:
    if ty.is_signed:
        return -(1 << (ty.width - 1)), (1 << (ty.width - 1)) - 1
    return 0, (1 << ty.width) - 1


def convert(value: np.ndarray, source: ScalarType, target: ScalarType, rounding: str | None, saturating: bool,
            ftz: bool) -> np.ndarray:
    """``cvt{.rounding}{.ftz}{.sat}.target.source``; ``rounding`` is one of rn/rz/rm/rp (float
    results) or rni/rzi/rmi/rpi (integral results), or None where PTX needs none."""
    value = np.asarray(value, source.dtype)
    if ftz and source.is_float and source.size == 4:
        value = flush_subnormal(value)
    if target.is_float:
        if source.is_float:
            result = _float_to_float(value, target, rounding)
        else:
            result = _integer_to_float(value, source, target, rounding or "rn")
        if ftz and target.size == 4:
            result = flush_subnormal(result)
        return saturate(result) if saturating else result
    if source.is_float:
        return _float_to_integer(value, target, rounding or "rzi")
    return _integer_to_integer(value, source, target, saturating)


def _float_to_float(value: np.ndarray, target: ScalarType, rounding: str | None) -> np.ndarray:
    if rounding in INTEGER_ROUNDING:
        return INTEGER_ROUNDING[rounding](value.astype(target.dtype)).astype(target.dtype)
    if target.size >= value.dtype.itemsize:
        return value.astype(target.dtype)
    return narrow(value, target.dtype, rounding or "rn")


def _integer_to_float(value: np.ndarray, source: ScalarType, target: ScalarType, mode: str) -> np.ndarray:
    if source.is_signed:
        negative = value < 0
        raw = value.astype(np.int64).view(np.uint64)
        magnitude = np.where(negative, np.uint64(0) - raw, raw)
    else:
        negative = np.zeros(value.shape, bool)
        magnitude = value.astype(np.uint64)
    flipped = {"rm": "rp", "rp": "rm"}
    magnitude_mode = np.where(negative, flipped.get(mode, mode), mode)
    nearest = magnitude.astype(np.float64)
    overflow = nearest >= 2.0**64
    back = np.where(overflow, np.uint64(0), nearest.astype(np.uint64))
    error_sign = np.where(overflow | (back > magnitude), -1.0, np.where(back < magnitude, 1.0, 0.0))
    if target.size == 8:
        result = np.empty(value.shape, np.float64)
        for m in np.unique(magnitude_mode):
            sel = magnitude_mode == m
            result[sel] = adjust(nearest[sel], error_sign[sel], str(m))
    else:
        to_odd = _odd(nearest, error_sign)
        result = np.empty(value.shape, target.dtype)
        for m in np.unique(magnitude_mode):
            sel = magnitude_mode == m
            result[sel] = narrow(to_odd[sel], target.dtype, str(m))
    return np.where(negative, -result, result).astype(target.dtype)


def _odd(nearest: np.ndarray, error_sign: np.ndarray) -> np.ndarray:
    """``nearest`` moved to the odd one of the two floats around the exact value when inexact."""
    even = (nearest.view(np.uint64) & np.uint64(1)) == 0
    step = np.nextafter(nearest, np.where(error_sign > 0, np.inf, -np.inf))
    return np.where((error_sign != 0) & even, step, nearest)


def _float_to_integer(value: np.ndarray, target: ScalarType, rounding: str) -> np.ndarray:
    low, high = _range(target)
    rounded = INTEGER_ROUNDING[rounding](value.astype(np.float64))
    too_low, too_high = rounded < float(low), rounded >= float(high) + 1.0
    safe = np.where(too_low | too_high | np.isnan(rounded), 0.0, rounded)
    wide = safe.astype(np.int64) if target.is_signed else safe.astype(np.uint64)
    result = wide.astype(target.dtype)
    result = np.where(too_low, np.array(low).astype(target.dtype), result)
    return np.where(too_high, np.array(high).astype(target.dtype), result).astype(target.dtype)


def _integer_to_integer(value: np.ndarray, source: ScalarType, target: ScalarType, saturating: bool) -> np.ndarray:
    if not saturating:
        if target.size <= source.size:
            return value.astype(target.dtype)
        extended = value.astype(SIGNED[target.size]) if source.is_signed else value.astype(target.bits)
        return extended.view(target.dtype)
    low, high = _range(target)
    if source.is_signed:
        wide = np.clip(value.astype(np.int64), max(low, -(1 << 63)), min(high, (1 << 63) - 1))
    else:
        wide = np.minimum(value.astype(np.uint64), np.uint64(min(high, (1 << 64) - 1)))
    return wide.astype(target.dtype)
