"""Sorting functions (spec chapter "Sorting Functions"): both are stable and rest on the
HLO ``argsort`` op; sorted values are gathered with ``take_along_axis``."""

from __future__ import annotations

from .. import dtypes as dt
from ..trace.array import Array
from .graph import check_array, check_category, convert, normalize_axes, op
from .recipes import recorded

__all__ = ["argsort", "sort"]


def _checked(x: Array, axis: int, where: str) -> tuple[Array, int]:
    """``x`` as an array that can be sorted (real numbers, or booleans: beyond the
    standard, as NumPy sorts them, False first), and ``axis`` normalised."""
    x = check_array(x, where)
    if x.dtype != dt.bool_:
        check_category(x, "real numeric", where)
    if x.ndim == 0:
        raise ValueError(f"{where}: needs at least one dimension")
    (axis,) = normalize_axes(axis, x.ndim, where)
    return x, axis


def _order(x: Array, axis: int, descending: bool) -> Array:
    """The stable order of ``x`` along ``axis``; booleans ordered as their 0 and 1."""
    keys = convert(x, dt.uint8) if x.dtype == dt.bool_ else x
    return op("argsort", keys, dimension=axis, descending=bool(descending))


@recorded
def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis`` (always stable; NaN sorts last ascending)."""
    x, axis = _checked(x, axis, "argsort")
    return _order(x, axis, descending)


@recorded
def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """``x`` sorted along ``axis`` (always stable; NaN sorts last ascending)."""
    x, axis = _checked(x, axis, "sort")
    return op("take_along_axis", x, _order(x, axis, descending), axis=axis)
