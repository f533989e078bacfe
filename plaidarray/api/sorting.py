"""Sorting functions (spec chapter "Sorting Functions"): both are stable and rest on the
HLO ``argsort`` op; sorted values are gathered with ``take_along_axis``."""

from __future__ import annotations

from ..trace.array import Array
from .graph import check_array, check_category, normalize_axes, op
from .recipes import recorded

__all__ = ["argsort", "sort"]


def _checked(x: Array, axis: int, where: str) -> tuple[Array, int]:
    """``x`` as an array that can be sorted, and ``axis`` normalised."""
    x = check_array(x, where)
    check_category(x, "real numeric", where)
    if x.ndim == 0:
        raise ValueError(f"{where}: needs at least one dimension")
    (axis,) = normalize_axes(axis, x.ndim, where)
    return x, axis


@recorded
def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis`` (always stable; NaN sorts last ascending)."""
    x, axis = _checked(x, axis, "argsort")
    return op("argsort", x, dimension=axis, descending=bool(descending))


@recorded
def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """``x`` sorted along ``axis`` (always stable; NaN sorts last ascending)."""
    x, axis = _checked(x, axis, "sort")
    order = op("argsort", x, dimension=axis, descending=bool(descending))
    return op("take_along_axis", x, order, axis=axis)
