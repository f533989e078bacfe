"""Data type functions (spec chapter "Data Type Functions")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import dtypes as dt
from ..trace.array import Array
from .graph import SCALAR_KINDS, check_array, convert, convert_node, copy_of, weak_result_type, wrap
from .recipes import recorded

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]


def astype(x: Array, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """Convert ``x`` to ``dtype`` (floats to ints truncate; out-of-range saturates, NaN -> 0),
    on ``device`` if one is given (``to_device``), else where ``x`` is.

    With ``copy=True`` the result is a new array even when the dtype is ``x``'s own, so
    writing into one (``y[0] = 5``, ``y += 1``) never changes the other.
    """
    out = _converted(x, dtype, copy)
    return out if device is None else out.to_device(device)


def _converted(x: Array, dtype: Any, copy: bool) -> Array:
    """``astype`` on ``x``'s device."""
    x = check_array(x, "astype")
    target = dt.check_dtype(dtype, "any", "astype")
    if x.dtype.kind == "c" and target.kind not in "cb":  # to bool: whether it is non-zero, as the standard says
        raise TypeError(f"astype: casting complex {x.dtype} to {target} would drop the imaginary part")
    out = convert(x, target)
    return copy_of(x) if copy and out is x else out


def _plain_conversion(x: Array, dtype: Any, copy: bool) -> Array | None:
    """``astype`` of a real array to another dtype of plaidarray's, given as a dtype
    (``xp.float64``), recorded as the rules record it without their checks (a loop's masks
    of new lengths taken as numbers, ``astype(w > 0, xp.float64)``, missed every recipe:
    4 us by the rules); None where they decide: a dtype spelled otherwise, the array's own
    (a copy), a complex array, a weakly typed one."""
    if type(x) is not Array or not isinstance(dtype, np.dtype) or dtype not in dt.SUPPORTED:
        return None
    node = x._node
    if node.weak or node.shape.dtype == dtype or node.shape.dtype.kind == "c":
        return None
    return wrap(convert_node(node, dtype))

_converted = recorded(_converted, _plain_conversion)


def _as_dtype(x: Any, where: str) -> np.dtype:
    """The dtype of an array, a NumPy scalar (its own, as in NumPy 2) or a dtype."""
    if isinstance(x, (Array, np.generic)):
        return dt.check_dtype(x.dtype, "any", where)
    return dt.check_dtype(x, "any", where)


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether the spec's promotion lattice allows ``from_`` -> ``to`` without a change of kind."""
    a, b = _as_dtype(from_, "can_cast"), _as_dtype(to, "can_cast")
    try:
        return dt.promote(a, b) == b
    except TypeError:
        # Across kinds the standard leaves casting to the library: allow what loses no
        # value (bool -> anything, int8 -> float32, ...), as NumPy's "safe" rule.
        return bool(np.can_cast(a, b, casting="safe"))


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The promoted dtype of arrays, dtypes and (weakly typed) Python scalars; NumPy
    scalars count as arrays of their dtype, as in NumPy 2. Python scalars alone have
    none: ValueError, as NumPy and array-api-strict raise (SciPy catches it to fall back
    to the default dtype)."""
    scalars = [a for a in arrays_and_dtypes if type(a) in SCALAR_KINDS]
    dtypes = [_as_dtype(a, "result_type") for a in arrays_and_dtypes if type(a) not in SCALAR_KINDS]
    if not dtypes:
        raise ValueError("result_type: at least one array or dtype is required (Python scalars alone have no result type)")
    out = weak_result_type(dt.result_type(*dtypes, where="result_type"), scalars)
    for s in scalars:
        if out.kind not in SCALAR_KINDS[type(s)]:
            raise TypeError(f"result_type: a Python {type(s).__name__} cannot combine with {out}")
    return out


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype

    @property
    def tiny(self) -> float:
        """NumPy's name for ``smallest_normal`` (an extension: NumPy-style code reads it)."""
        return self.smallest_normal


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type: Any, /) -> finfo_object:
    d = _as_dtype(type, "finfo")
    if d.kind not in "fc":
        raise TypeError(f"finfo: {d} is not a floating-point dtype")
    info = np.finfo(d)
    return finfo_object(info.bits, float(info.eps), float(info.max), float(info.min),
                        float(info.smallest_normal), dt.real_dtype(d))


def iinfo(type: Any, /) -> iinfo_object:
    d = _as_dtype(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo: {d} is not an integer dtype")
    info = np.iinfo(d)
    return iinfo_object(info.bits, int(info.max), int(info.min), d)


_KINDS = {
    "bool": ("bool",), "signed integer": ("i",), "unsigned integer": ("u",), "integral": ("i", "u"),
    "real floating": ("f",), "complex floating": ("c",), "numeric": ("i", "u", "f", "c"),
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name, or a tuple of them)."""
    d = dt.check_dtype(dtype, "any", "isdtype")
    return any(_is_kind(d, k) for k in (kind if isinstance(kind, tuple) else (kind,)))


def _is_kind(d: np.dtype, kind: Any) -> bool:
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}")
        return (d.kind == "b") if kind == "bool" else d.kind in _KINDS[kind]
    return d == dt.check_dtype(kind, "any", "isdtype")
