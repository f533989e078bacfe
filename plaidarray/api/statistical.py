"""Statistical functions (spec chapter "Statistical Functions") and the utility
reductions ``all``/``any``: each is one HLO ``reduce`` plus dtype handling."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import dtypes as dt
from ..trace.array import Array
from . import graph
from .graph import check_array, check_category, convert, normalize_axes, op

__all__ = ["all", "any", "max", "mean", "min", "prod", "sum"]

Axis = int | tuple[int, ...] | None


def _reduce(x: Array, kind: str, axis: Axis, keepdims: bool, where: str) -> Array:
    axes = normalize_axes(axis, x.ndim, where)
    out = op("reduce", x, dimensions=axes, kind=kind) if axes else x
    if keepdims:
        out = graph.reshape(out, tuple(1 if i in axes else s for i, s in enumerate(x.shape)))
    return out


def _accumulator(x: Array, dtype: Any, where: str) -> np.dtype:
    """The spec's default accumulation dtype: at least the default int for integers."""
    if dtype is not None:
        return dt.check_dtype(dtype, "numeric", where)
    return {"b": dt.int64, "i": dt.int64, "u": dt.uint64}.get(x.dtype.kind, x.dtype)


def _sum_like(kind: str, name: str):
    def fn(x: Array, /, *, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> Array:
        check_array(x, name)
        check_category(x, "numeric", name)
        return _reduce(convert(x, _accumulator(x, dtype, name)), kind, axis, keepdims, name)
    fn.__name__ = name
    fn.__doc__ = f"Reduce with {kind} over ``axis`` (all axes when None)."
    return fn


sum = _sum_like("add", "sum")
prod = _sum_like("multiply", "prod")


def _extremum(kind: str, name: str):
    def fn(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
        check_array(x, name)
        check_category(x, "real numeric", name)
        axes = normalize_axes(axis, x.ndim, name)
        if builtins.any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{name}: zero-size reduction has no identity")
        return _reduce(x, kind, axis, keepdims, name)
    fn.__name__ = name
    fn.__doc__ = f"{name.capitalize()}imum over ``axis``; NaN propagates. Empty reductions raise ValueError."
    return fn


max = _extremum("maximum", "max")
min = _extremum("minimum", "min")


def mean(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """Arithmetic mean over ``axis``; NaN for an empty reduction."""
    check_array(x, "mean")
    check_category(x, "real floating-point", "mean")
    axes = normalize_axes(axis, x.ndim, "mean")
    count = 1
    for a in axes:
        count *= x.shape[a]
    total = _reduce(x, "add", axis, keepdims, "mean")
    return op("divide", total, graph.full(total.shape, float(count) if count else np.nan, x.dtype)) \
        if count != 1 else total


def _truth(kind: str, name: str):
    def fn(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
        check_array(x, name)
        truth = x if x.dtype == dt.bool_ else op("compare", x, graph.full(x.shape, 0, x.dtype), direction="NE")
        return _reduce(truth, kind, axis, keepdims, name)
    fn.__name__ = name
    fn.__doc__ = f"Logical {kind.upper()} of the elements over ``axis``."
    return fn


all = _truth("and", "all")
any = _truth("or", "any")
