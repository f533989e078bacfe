"""Statistical functions (spec chapter "Statistical Functions") and the utility
reductions ``all``/``any``: each is one HLO ``reduce`` plus dtype handling."""

from __future__ import annotations

import builtins
import functools
import math
from typing import Any

import numpy as np

from .. import dtypes as dt
from ..hlo.shape import Shape
from ..trace import node as node_module
from ..trace.array import Array
from ..trace.node import Node, derive
from . import graph
from .graph import MERGED_RANK, NO_ATTRS, check_array, check_category, convert, normalize_axes, op, reduce_axes, wrap
from .recipes import reading_pins_once, recorded, stands_for

__all__ = ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]

Axis = int | tuple[int, ...] | None


def _accumulator(x: Array, dtype: Any, where: str) -> np.dtype:
    """The spec's default accumulation dtype: at least the default int for integers."""
    if dtype is not None:
        return dt.check_dtype(dtype, "numeric", where)
    return {"b": dt.int64, "i": dt.int64, "u": dt.uint64}.get(x.dtype.kind, x.dtype)


def _counted(x: Array, name: str) -> None:
    """A sum's, product's, scan's or converted mean's operand: numeric, or bool, whose
    values count in the default integer dtype (``_accumulator``), as NumPy and JAX count
    them (the standard leaves bool undefined; ``xp.sum(mask)`` is NumPy-style code's count)."""
    if x.dtype != dt.bool_:
        check_category(x, "numeric", name)


def _averaged(x: Array) -> Array:
    """A mean's or variance's operand: floating-point, or integer or bool, averaged in the
    default floating-point dtype as NumPy averages them (left undefined by the standard)."""
    if x.dtype.kind in "biu":
        return convert(x, dt.default_float)
    return x


#: The dtypes ``along`` reduces as the rules do: a mean's, a variance's and the floats'
#: own. A sum or product of an integer array smaller than 64 bits is taken in the default
#: integer dtype (``_accumulator``: a conversion first), of a 64-bit one in its own, and an
#: extremum of any integer array in its own; those are recorded by ``along`` too
#: (``SUMMED``, ``COMPARED``): a loop's counts and histograms of new lengths took the
#: rules' path, 8 us a ``sum`` or ``max``, where a float array's took 0.8.
FLOATS = (dt.float32, dt.float64)
SUMMED = (*FLOATS, dt.int64, dt.uint64)
COMPARED = (*FLOATS, dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint16, dt.uint32, dt.uint64)
#: What ``along`` converts an operand to first, as the rules convert it: a sum's or
#: product's of booleans and narrower integers (``_accumulator``: ``xp.sum(mask)``, the
#: commonest count, took 10 us by the rules at a new length), a mean's of booleans and
#: integers (``_averaged``: ``xp.mean(mask)``, a fraction).
ACCUMULATED = {dt.bool_: dt.int64, dt.int8: dt.int64, dt.int16: dt.int64, dt.int32: dt.int64,
               dt.uint8: dt.uint64, dt.uint16: dt.uint64, dt.uint32: dt.uint64}
AVERAGED = {d: dt.default_float for d in (dt.bool_, *COMPARED[2:])}
#: ``along``'s conversion of none.
_NO_CONVERSION: dict[np.dtype, np.dtype] = {}


def fast_reduction(fn: Any, kind: str, empty: bool, dtypes: tuple[np.dtype, ...],
                   converts: dict[np.dtype, np.dtype] = _NO_CONVERSION) -> Any:
    """``fn``, a reduction's rules (of ``kind``; ``empty``: an empty operand reduces to
    its identity), recorded as ``along`` records it for arrays of ``dtypes`` and of
    ``converts``, in C where it can be, from a recipe or by the rules otherwise."""
    first = functools.partial(_whole_call, kind, empty, dtypes, converts)
    return _in_c(recorded(fn, first), kind, empty, dtypes, converts)


def _sum_like(kind: str, name: str):
    def fn(x: Array, /, *, axis: Axis = None, dtype: Any = None, keepdims: bool = False) -> Array:
        x = check_array(x, name)
        _counted(x, name)
        return reduce_axes(convert(x, _accumulator(x, dtype, name)), kind, axis, keepdims, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Reduce with {kind} over ``axis`` (all axes when None)."
    return fast_reduction(fn, kind, True, SUMMED, ACCUMULATED)


def along(x: Array, kind: str, axis: Any, keepdims: bool, empty: bool, dtypes: tuple[np.dtype, ...] = FLOATS,
          converts: dict[np.dtype, np.dtype] = _NO_CONVERSION) -> Array | None:
    """The reduction ``kind`` of an array of one of ``dtypes`` (those the rules reduce
    as they are: floating-point ones unless the caller says), or of one of ``converts``,
    converted first to the dtype it gives as the rules convert it, over ``axis`` (a Python int
    or a tuple of them; None: all axes), its reduced axes kept as units if ``keepdims``,
    recorded as the rules record it without their checks (a loop's windows and batches of
    new lengths miss every recipe: ``mean(y, axis=0)`` ran its rules in 24 us); None where
    the rules decide: another dtype, 0-d, of more than ``MERGED_RANK`` axes, weakly
    typed, empty unless ``empty``, an axis of another type, out of range or repeated."""
    if type(x) is not Array:
        return None
    node = x._node
    shape = node.shape
    dims = shape.dims
    rank = len(dims)
    converted = converts.get(shape.dtype)
    if converted is None and shape.dtype not in dtypes or not rank or rank > MERGED_RANK or node.weak or \
            not (empty or 0 not in dims):
        return None
    axes = _axes(axis, rank)
    if not axes:
        return None
    if converted is not None:
        node = graph.convert_node(node, converted)
        shape = node.shape
    attrs = _REDUCE_ATTRS.get((axes, kind))
    if attrs is None:
        attrs = _REDUCE_ATTRS[axes, kind] = {"dimensions": axes, "kind": kind}
    reduced = tuple(d for i, d in enumerate(dims) if i not in axes) if len(axes) < rank else ()
    out = wrap(derive("reduce", (node,), attrs, Shape(reduced, shape.dtype) if reduced else _scalar_shape(shape.dtype)))
    if keepdims:
        kept = tuple(1 if i in axes else d for i, d in enumerate(dims))
        if kept != reduced:
            out = wrap(derive("reshape", (out._node,), {"dims": kept}, Shape(kept, shape.dtype)))
    return out


def _axes(axis: Any, rank: int) -> tuple[int, ...] | None:
    """``axis`` as ``normalize_axes`` gives it, where it is None, a Python int or a tuple
    of them, in range and not repeated; else None (the rules' error, or their conversions)."""
    if axis is None:
        return tuple(range(rank))
    found = (axis,) if type(axis) is int else axis if type(axis) is tuple else None
    if found is None or not all(type(a) is int and -rank <= a < rank for a in found):
        return None
    axes = tuple(sorted(a % rank for a in found))
    return axes if len(set(axes)) == len(axes) else None


#: ``along``'s reduce attributes by axes and kind (read only, as every node's attributes are).
_REDUCE_ATTRS: dict[tuple[tuple[int, ...], str], dict[str, Any]] = {}


def _scalar_shape(dtype: np.dtype) -> Shape:
    found = _SCALAR_SHAPES.get(dtype)
    if found is None:
        found = _SCALAR_SHAPES[dtype] = Shape((), dtype)
    return found


_SCALAR_SHAPES: dict[np.dtype, Shape] = {}



def _whole_call(kind: str, empty: bool, dtypes: tuple[np.dtype, ...], converts: dict[np.dtype, np.dtype], x: Array,
                /, **kwargs: Any) -> Array | None:
    """A reduction's call on an array of one of ``dtypes`` (or that ``converts`` converts
    to one) alone, or with an ``axis`` and ``keepdims`` at most, by ``along``."""
    keepdims = kwargs.get("keepdims", False)
    if kwargs.keys() - {"axis", "keepdims"} or type(keepdims) is not bool:
        return None
    return along(x, kind, kwargs.get("axis"), keepdims, empty, dtypes, converts)


def _count_buffer(count: float, dtype: np.dtype) -> np.ndarray:
    """The buffer of a mean's count, or a variance's ``N - correction``, as a 0-d operand
    of ``graph.scalar_operand``'s (``_graph.Reduction`` makes its node; the count is never
    past what ``dtype`` holds, so no rounding to inf needs silencing)."""
    return np.asarray(count, dtype=dtype)


def _count_node(count: float, shape: Shape) -> Node:
    """A mean's or variance's count as the operand of ``shape`` that the rules make
    (``graph.size_operand``'s node), as ``_graph.Reduction`` makes it: at 0-d a ready node
    of its own, where ``scalar_operand`` kept each count in its table of reused scalars (a
    loop's windows of new lengths, each count met once, filled it); else its reused
    broadcast."""
    if not shape.dims:
        return Node.ready(_count_buffer(count, shape.dtype))
    return graph.scalar_operand(count, shape, "mean")


#: The C module (``_graph.Reduction``), None where it is not in use.
_IN_C = node_module.GRAPH_IN_C


def _reduction_in_c(fn: Any, kind: str, empty: bool, mean: bool = False, variance: int = 0,
                    dtypes: tuple[np.dtype, ...] = FLOATS, converts: dict[np.dtype, np.dtype] = _NO_CONVERSION) -> Any:
    """``_graph.Reduction`` of ``fn``: ``along``'s cases of ``dtypes`` and ``converts``
    recorded in C (it takes the dtypes it is given 0-d shapes of, and those it is given
    conversions of, converted first), for ``mean`` with the division by the count as
    ``_whole_mean`` records it, for ``var`` (``variance`` 1) and ``std`` (2) as
    ``_whole_var`` and ``_whole_std`` do; ``fn`` called for the rest. None where the C
    module is not in use."""
    if _IN_C is None:
        return None
    shapes = {dtype: _scalar_shape(dtype) for dtype in dtypes}
    conversions = {dtype: ({"dtype": to}, to, _scalar_shape(to)) for dtype, to in converts.items()}
    return reading_pins_once(lambda fallback: _IN_C.Reduction(kind, fn.__name__, _REDUCE_ATTRS, shapes, conversions,
                                                              NO_ATTRS, _count_buffer, empty, mean, MERGED_RANK,
                                                              variance, fallback), fn)


def _in_c(fn: Any, kind: str, empty: bool, dtypes: tuple[np.dtype, ...] = FLOATS,
          converts: dict[np.dtype, np.dtype] = _NO_CONVERSION, mean: bool = False) -> Any:
    """``fn`` (a recorded reduction) with its common cases recorded in C
    (``_reduction_in_c``): the same nodes, without a recipe's signature and lookup or the
    Python path (a window of a new length took 2-9 us a reduction there; a recipe's replay
    ~1 us). ``fn`` is called for everything else, as it is (its docstring, name and
    signature are the C path's, through ``__wrapped__``)."""
    fast = _reduction_in_c(fn, kind, empty, mean, dtypes=dtypes, converts=converts)
    return fn if fast is None else stands_for(fast, fn)


def _first_in_c(first: Any, variance: int) -> Any:
    """``var``'s or ``std``'s first path (``first``, ``_whole_var`` or ``_whole_std``)
    recorded in C (``_reduction_in_c``) where the C module is in use: their seven or eight
    nodes replay faster from a recipe at a signature met before (2.2 us against 3 us in
    C), so C takes only the calls no recipe serves (a window of a new length: 8 us against
    17.6 in Python)."""
    return _reduction_in_c(first, "add", False, variance=variance) or first


sum = _sum_like("add", "sum")
prod = _sum_like("multiply", "prod")


#: The extremum of booleans, NumPy's: True is the larger (the standard's ``max`` and
#: ``min`` take real numbers; NumPy-style code takes the max of a mask for ``any``).
_ON_BOOLS = {"maximum": "or", "minimum": "and"}


def _extremum(kind: str, name: str):
    def fn(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
        x = check_array(x, name)
        if x.dtype != dt.bool_:
            check_category(x, "real numeric", name)
        axes = normalize_axes(axis, x.ndim, name)
        if builtins.any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{name}: zero-size reduction has no identity")
        return reduce_axes(x, _ON_BOOLS[kind] if x.dtype == dt.bool_ else kind, axis, keepdims, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{name.capitalize()}imum over ``axis``; NaN propagates. Empty reductions raise ValueError. "
                  "Of booleans (beyond the standard, as NumPy): ``any`` for max, ``all`` for min.")
    return fast_reduction(fn, kind, False, COMPARED)


max = _extremum("maximum", "max")
min = _extremum("minimum", "min")


def mean(x: Array, /, *, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Array:
    """Arithmetic mean over ``axis``; NaN for an empty reduction.

    ``dtype`` (an extension, as NumPy's): a floating-point dtype to convert ``x`` to and
    compute in; ``x`` may then be of any numeric dtype, a complex one only with a complex
    ``dtype`` (Cubed averages the chunks of float32 and integer arrays in float64 so)."""
    x = check_array(x, "mean")
    if dtype is not None:
        x = _mean_operand(x, dt.check_dtype(dtype, "floating-point", "mean"))
    x = _averaged(x)
    check_category(x, "floating-point", "mean")
    axes = normalize_axes(axis, x.ndim, "mean")
    count = 1
    for a in axes:
        count *= x.shape[a]
    total = reduce_axes(x, "add", axis, keepdims, "mean")
    return op("divide", total, graph.size_operand(float(count) if count else np.nan, total.shape, x.dtype, "mean")) \
        if count != 1 else total


def _whole_mean(x: Array, /, **kwargs: Any) -> Array | None:
    """``mean`` of an array of at least one element alone, or with an ``axis`` and
    ``keepdims`` at most, by ``along``, then the division by its run-time count, as the
    rules record them."""
    total = _whole_call("add", False, FLOATS, AVERAGED, x, **kwargs)
    if total is None:
        return None
    node = total._node
    count = x._node.shape.size // node.shape.size
    if count == 1:
        return total
    divisor = _count_node(float(count), node.shape)
    return wrap(derive("divide", (node, divisor), NO_ATTRS, node.shape))


mean = _in_c(recorded(mean, _whole_mean), "add", False, FLOATS, AVERAGED, mean=True)


def _mean_operand(x: Array, dtype: np.dtype) -> Array:
    """``x`` in ``dtype`` for ``mean(x, dtype=...)``; a complex ``x`` needs a complex
    ``dtype``, since dropping the imaginary part is no mean of ``x``."""
    if x.dtype.kind == "c" and dtype.kind != "c":
        raise TypeError(f"mean: dtype {dtype} cannot hold the mean of a {x.dtype} array")
    _counted(x, "mean")
    return convert(x, dtype)


def var(x: Array, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False) -> Array:
    """Variance: mean squared deviation, divided by ``N - correction`` (NaN when <= 0).
    Of a complex array (beyond the standard, as NumPy): the mean squared modulus of the
    deviation, real."""
    x = _averaged(check_array(x, "var"))
    check_category(x, "floating-point", "var")
    axes = normalize_axes(axis, x.ndim, "var")
    n = 1
    for a in axes:
        n *= x.shape[a]
    # Over every axis the mean is 0-d (its count a value of its own, the subtraction's
    # broadcast of it folded: ``baseline._Layout``); along some, kept as units to spread back.
    centre = mean(x, axis=axes, keepdims=len(axes) < x.ndim)
    deviation = op("subtract", x, graph.broadcast_to(centre, x.shape))
    if x.dtype.kind == "c":  # NumPy's order: the real parts squared plus the imaginary parts squared
        re, im = op("real", deviation), op("imag", deviation)
        squares = op("add", op("multiply", re, re), op("multiply", im, im))
    else:
        squares = op("multiply", deviation, deviation)
    total = reduce_axes(squares, "add", axes, keepdims, "var")
    divisor = n - correction
    return op("divide", total, graph.size_operand(float(divisor) if divisor > 0 else np.nan, total.shape,
                                                  total.dtype, "var"))


def _whole_var(x: Array, /, **kwargs: Any) -> Array | None:
    """``var`` of an array alone, over all its axes or some (``axis``, ``keepdims``), with
    a ``correction`` at most, as the rules record it, without their checks and the
    signatures of ``var`` and ``mean`` (a loop's windows of new lengths missed every
    recipe: 60 us a ``std``, of all axes or along one): the mean (``_whole_mean``: 0-d
    over every axis, as ``var`` has it, its count a value of its own, where a unit array's
    count was a reused scalar that each new length made anew in Python, half of a ``std``
    at a new length; else with its axes kept as units), the deviations from it squared and
    summed (``along``), divided by ``N - correction``. None where the rules decide
    otherwise: one element along the axes (the mean is the sum), ``N - correction`` not
    positive (NaN), any other keyword, and the arrays and axes ``along`` leaves to them."""
    correction = kwargs.get("correction", 0.0)
    keepdims = kwargs.get("keepdims", False)
    if kwargs.keys() - {"correction", "axis", "keepdims"} or type(correction) not in (int, float) or \
            type(keepdims) is not bool or type(x) is not Array or x._node.shape.dtype not in FLOATS:
        return None  # the mean's conversion (``AVERAGED``) is the rules' alone here
    node = x._node
    dims = node.shape.dims
    axes = _axes(kwargs.get("axis"), len(dims))
    if not axes:
        return None
    n = math.prod(dims[a] for a in axes)
    if n == 1 or n - correction <= 0:
        return None
    centre = _whole_mean(x) if len(axes) == len(dims) else _whole_mean(x, axis=axes, keepdims=True)
    if centre is None:
        return None
    deviation = wrap(derive("subtract", (node, graph.broadcast_node(centre._node, node.shape)), NO_ATTRS, node.shape))
    summed = along(wrap(derive("multiply", (deviation._node, deviation._node), NO_ATTRS, node.shape)), "add", axes,
                   keepdims, False)
    assert summed is not None  # a floating-point array of the shape along took
    divisor = _count_node(float(n - correction), summed._node.shape)
    return wrap(derive("divide", (summed._node, divisor), NO_ATTRS, summed._node.shape))


#: ``var``'s first path, in C where it can be (``_first_in_c``).
_VAR_FIRST = _first_in_c(_whole_var, 1)
var = recorded(var, _VAR_FIRST)


def std(x: Array, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False) -> Array:
    """Standard deviation: the square root of :func:`var`."""
    x = check_array(x, "std")
    return op("sqrt", var(x, axis=axis, correction=correction, keepdims=keepdims))


def _whole_std(x: Array, /, **kwargs: Any) -> Array | None:
    """``std`` of an array alone (over all its axes or some, as ``_whole_var`` takes
    them): the square root of ``_whole_var``'s."""
    variance = _whole_var(x, **kwargs)
    if variance is None:
        return None
    return wrap(derive("sqrt", (variance._node,), NO_ATTRS, variance._node.shape))


#: ``std``'s first path, in C where it can be (``_first_in_c``).
_STD_FIRST = _first_in_c(_whole_std, 2)
std = recorded(std, _STD_FIRST)


def _cumulative(kind: str, name: str):
    def fn(x: Array, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Array:
        x = check_array(x, name)
        _counted(x, name)
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"{name}: axis is required for arrays of more than one dimension")
            axis = 0
        if x.ndim == 0:
            raise ValueError(f"{name}: needs at least one dimension")
        (axis,) = normalize_axes(axis, x.ndim, name)
        acc = convert(x, _accumulator(x, dtype, name))
        out = op("cumulative", acc, dimension=axis, kind=kind) if acc.shape[axis] else acc
        if include_initial:
            from .manipulation import joined

            initial_shape = tuple(1 if i == axis else s for i, s in enumerate(acc.shape))
            out = joined([graph.full(initial_shape, 0 if kind == "add" else 1, acc.dtype), out], axis)
        return out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Inclusive cumulative {kind} along ``axis`` (optionally with the identity first)."
    return recorded(fn)


cumulative_sum = _cumulative("add", "cumulative_sum")
cumulative_prod = _cumulative("multiply", "cumulative_prod")
