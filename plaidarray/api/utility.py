"""Utility functions (spec chapter "Utility Functions"): ``all``, ``any``, ``diff``."""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from ..trace.array import Array
from . import graph
from .graph import check_array, normalize_axes, op, reduce_axes
from .recipes import recorded
from .statistical import fast_reduction

__all__ = ["all", "any", "diff"]


def _truth(kind: str, name: str):
    def fn(x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
        x = check_array(x, name)
        truth = x if x.dtype == dt.bool_ else op("compare", x, graph.full(x.shape, 0, x.dtype), direction="NE")
        return reduce_axes(truth, kind, axis, keepdims, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Logical {kind.upper()} of the elements over ``axis``."
    return fast_reduction(fn, kind, True, (dt.bool_,))  # a mask's, as it is


all = _truth("and", "all")
any = _truth("or", "any")


@recorded
def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None,
         append: Array | None = None) -> Array:
    """The ``n``-th forward difference along ``axis`` (bools: ``!=``, as NumPy does)."""
    x = check_array(x, "diff")
    n = graph.traced_value(n)
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"diff: n must be a non-negative int, got {n!r}")
    (axis,) = normalize_axes(axis, x.ndim, "diff")
    if prepend is not None or append is not None:
        from .manipulation import concat

        parts = [x]
        if prepend is not None:
            parts.insert(0, _edge(prepend, x, axis))
        if append is not None:
            parts.append(_edge(append, x, axis))
        x = concat(parts, axis=axis)
    for _ in range(n):
        m = x.shape[axis]
        if m == 0:
            break
        lo, hi = [0] * x.ndim, list(x.shape)
        a = graph.sliced(x, tuple(lo), tuple(hi[:axis] + [m - 1] + hi[axis + 1:]), (1,) * x.ndim)
        b = graph.sliced(x, tuple(lo[:axis] + [1] + lo[axis + 1:]), tuple(hi), (1,) * x.ndim)
        x = op("xor" if x.dtype == dt.bool_ else "subtract", b, a)
    return x


def _edge(value: Any, x: Array, axis: int) -> Array:
    """``diff``'s ``prepend`` or ``append``: an array of ``x``'s rank as it is (another
    library's converted, as any argument); a Python scalar or a zero-dimensional array,
    as NumPy takes them, one element along ``axis`` broadcast across the others
    (``np.diff(g, prepend=1.0)``), a Python scalar of the dtype the standard's promotion
    with ``x`` gives (``x + 1.0``'s: float32 stays float32, where NumPy's ``asarray(1.0)``
    would make it float64)."""
    shape = (*x.shape[:axis], 1, *x.shape[axis + 1:])
    if type(value) in (bool, int, float, complex):
        from .data_types import result_type

        return graph.full(shape, value, result_type(x, value))
    from .creation import asarray
    from .manipulation import broadcast_to

    value = asarray(value)  # an array of another library, as every function takes it
    return broadcast_to(value, shape) if value.ndim == 0 else value
