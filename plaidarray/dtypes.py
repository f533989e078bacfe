"""Data types and the Array API type-promotion lattice.

plaidarray uses NumPy's dtype objects as its dtype objects: they compare equal to the
names users already write (``xp.float32 == np.float32``) and carry itemsize and kind.
Within a kind (bool, integer, floating) promotion follows the standard's table, so
``uint64`` with a signed integer has no result type. Across kinds, where the standard
defines nothing, plaidarray does what NumPy and JAX do, since clients rely on it (an
integer array divided by a floating one): each kind's dtypes are promoted by the table,
then the kinds by NumPy's ``result_type`` (int32 with float32 gives float64).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, cast

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float32, float64 = np.dtype(np.float32), np.dtype(np.float64)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
INTEGER = SIGNED + UNSIGNED
REAL_FLOATING = (float32, float64)
COMPLEX = (complex64, complex128)
FLOATING = REAL_FLOATING + COMPLEX
REAL_NUMERIC = INTEGER + REAL_FLOATING
NUMERIC = INTEGER + FLOATING
ALL: tuple[np.dtype, ...] = (bool_,) + NUMERIC
#: ``ALL`` as a set, for membership: found by its hash, where the tuple compared a dtype
#: with each in turn (~0.4 us of each ``asarray``, ``astype`` and promotion).
SUPPORTED: frozenset[np.dtype] = frozenset(ALL)

default_int = int64
default_float = float64
default_complex = complex128

#: Categories used by the spec to say which dtypes a function accepts.
CATEGORIES: dict[str, tuple[np.dtype, ...]] = {
    "bool": (bool_,),
    "integer": INTEGER,
    "integer or boolean": (bool_,) + INTEGER,
    "real floating-point": REAL_FLOATING,
    "complex floating-point": COMPLEX,
    "floating-point": FLOATING,
    "real numeric": REAL_NUMERIC,
    "numeric": NUMERIC,
    "any": ALL,
}


#: The floating-point dtype NumPy computes a floating-point function of an integer or
#: boolean array in (``sqrt``, ``exp``, ``atan2`` of counts): the narrowest that holds the
#: integers exactly, float32 where NumPy's is float16 (plaidarray has none). The standard
#: leaves such inputs to the library (they "should" be floating-point); NumPy-style code
#: and SciPy pass them.
FLOAT_OF: dict[np.dtype, np.dtype] = {
    bool_: float32, int8: float32, uint8: float32, int16: float32, uint16: float32,
    int32: float64, uint32: float64, int64: float64, uint64: float64}

#: The categories of functions that compute in floating point, which integer and boolean
#: arrays enter as ``FLOAT_OF`` says.
FLOAT_CATEGORIES = frozenset({"floating-point", "real floating-point"})


def _kind(dtype: np.dtype) -> str:
    return {"b": "bool", "i": "int", "u": "int", "f": "inexact", "c": "inexact"}[dtype.kind]


_REAL_PARTS: dict[np.dtype, np.dtype] = {complex64: float32, complex128: float64}
_COMPLEX_OF: dict[np.dtype, np.dtype] = {float32: complex64, float64: complex128}


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype of a complex dtype's parts (a real dtype maps to itself)."""
    return _REAL_PARTS.get(dtype, dtype)


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts are ``dtype``."""
    return _COMPLEX_OF.get(dtype, dtype)


def promote(a: np.dtype, b: np.dtype, where: str = "") -> np.dtype:
    """Result dtype of a binary operation between arrays of dtypes ``a`` and ``b``.

    Raises TypeError where the standard's table has no result within a kind (uint64
    with a signed integer), rather than silently picking a wider type; the message
    starts with ``where``, the function asking, when given.
    """
    if a == b:
        return a
    return result_type(a, b, where=where)


def result_type(*dtypes: np.dtype, where: str = "") -> np.dtype:
    """Promote any number of dtypes: by the standard's table within each kind, then
    across the kinds present as NumPy does (an extension: the standard leaves mixed
    kinds undefined). Grouping by kind first makes the result independent of order."""
    if not dtypes:
        raise ValueError("result_type needs at least one dtype")
    if all(d == dtypes[0] for d in dtypes[1:]):
        return dtypes[0]
    prefix = f"{where}: " if where else ""
    by_kind: dict[str, np.dtype] = {}
    for d in dtypes:
        if d not in SUPPORTED:
            raise TypeError(f"{prefix}unsupported dtype {d}")
        kind = _kind(d)
        by_kind[kind] = _promote_within_kind(by_kind[kind], d, prefix) if kind in by_kind else d
    if len(by_kind) == 1:
        return next(iter(by_kind.values()))
    return np.result_type(*by_kind.values())


def _promote_within_kind(a: np.dtype, b: np.dtype, prefix: str) -> np.dtype:
    """The standard's promotion table for two dtypes of one kind."""
    if a == b:
        return a
    if a.kind in "fc":
        precision = max(real_dtype(a).itemsize, real_dtype(b).itemsize)
        real = float64 if precision == 8 else float32
        return complex_dtype(real) if "c" in (a.kind, b.kind) else real
    if a.kind == b.kind:
        return a if a.itemsize > b.itemsize else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    if unsigned.itemsize == 8:
        raise TypeError(f"{prefix}no Array API type promotion between {a} and {b}")
    return np.dtype(f"int{unsigned.itemsize * 16}")


def unsupported_dtype(dtype: np.dtype, where: str) -> TypeError:
    return TypeError(f"{where}: unsupported dtype {dtype}; plaidarray supports {', '.join(d.name for d in ALL)}")


def check_dtype(dtype: object, category: str, where: str) -> np.dtype:
    """Validate that ``dtype`` is one of ``category``; name the function when it is not."""
    try:
        d = np.dtype(cast("DTypeLike", dtype))  # anything else is the TypeError below
    except TypeError:
        raise TypeError(f"{where}: {dtype!r} is not a dtype") from None
    if d not in CATEGORIES[category]:
        if category == "any":
            raise unsupported_dtype(d, where)
        raise TypeError(f"{where}: expected a {category} dtype, got {d}")
    return d


@functools.cache
def iinfo_bounds(dtype: np.dtype) -> tuple[int, int]:
    """The least and greatest value of an integer dtype (cached: every Python int that
    meets an integer array is checked against them, and ``np.iinfo`` costs microseconds)."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)
