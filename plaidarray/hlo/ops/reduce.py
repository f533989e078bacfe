"""``reduce``: fold dimensions away with a monoid named by ``kind``.

XLA's reduce carries a combiner computation and an init operand; every reduction the
Array API needs is one of a few monoids, so the combiner is named and its identity is
implied. The combiner reuses the elementwise op of the same name, so its semantics
(NaN propagation of ``maximum``, wrapping integer ``add``) are defined once.

``arg_reduce``: the index of the first maximum or minimum along one dimension.
"""

from __future__ import annotations

import functools

import numpy as np

from ..opdef import Merge, OpDef, around_axis, laid_out, lookup, register, runs
from ..shape import Shape

_NUMPY = {"add": np.sum, "multiply": np.prod, "maximum": np.max, "minimum": np.min,
          "and": np.logical_and.reduce, "or": np.logical_or.reduce}


def identity(kind: str, dtype: np.dtype) -> object:
    """The identity of the monoid ``kind`` on ``dtype``."""
    if kind in ("add", "or"):
        return 0
    if kind in ("multiply",):
        return 1
    if kind == "and":  # all bits set
        return True if dtype.kind == "b" else -1 if dtype.kind == "i" else int(np.iinfo(dtype).max)
    if dtype.kind == "f":
        small, big = -np.inf, np.inf
    elif dtype.kind == "b":
        small, big = False, True
    else:
        small, big = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    return small if kind == "maximum" else big


def _infer(shapes, attrs):
    (x,), dims = shapes, tuple(attrs["dimensions"])
    if attrs["kind"] not in _NUMPY:
        raise ValueError(f"reduce: unknown kind {attrs['kind']!r}")
    if len(set(dims)) != len(dims) or any(not 0 <= d < x.rank for d in dims):
        raise ValueError(f"reduce: bad dimensions {dims} for {x}")
    check_combiner(attrs["kind"], x)
    return Shape(tuple(n for i, n in enumerate(x.dims) if i not in dims), x.dtype)


def _evaluate(args, attrs, shape):
    (x,), kind = args, attrs["kind"]
    if kind in ("and", "or"):  # np.all/np.any take no initial; the ufuncs do
        fn = np.bitwise_and if kind == "and" else np.bitwise_or
        initial = (kind == "and") if x.dtype.kind == "b" else identity(kind, x.dtype)
        return fn.reduce(x, axis=tuple(attrs["dimensions"]), initial=initial)
    with np.errstate(all="ignore"):
        out = _NUMPY[kind](x, axis=tuple(attrs["dimensions"]), initial=identity(kind, x.dtype))
    return np.asarray(out, dtype=shape.dtype)


def check_combiner(kind: str, x: Shape) -> None:
    """The combining elementwise op must accept ``x``'s dtype (its rule says which)."""
    _check_combiner(kind, x.dtype)


@functools.cache
def _check_combiner(kind: str, dtype: np.dtype) -> None:
    """``check_combiner`` once per kind and dtype that pass (a failure raises every time):
    every recorded reduction asks it."""
    scalar = Shape((), dtype)
    lookup(kind).infer([scalar, scalar], {})


def _ties(attrs, ranks):
    """The dimensions kept, in order, and the result's."""
    kept = (axis for axis in range(ranks[0]) if axis not in attrs["dimensions"])
    return ((i, 0, axis) for i, axis in enumerate(kept))


def _merge(attrs, operands, dims):
    """Runs of kept axes merge (the result is the same elements in the same order), and
    axes of size 1 that order nothing are left out: a run of kept ones between two
    reduced axes, and a reduced one before the last axis where a reduced axis of more
    elements remains (its one element is added to the same sum in the same place). A sum
    of (b, 1, n, 1, m) over axes 0, 2 and 4 is so the kernel of a (b, n, m) sum over all
    three, where such axes kept as axes of their own made ranks no installed kernel has.
    Each other reduced axis stays one, as the loops that order its sum in compiled code
    are; other axes of size 1 stay too: a (1, n) row's maximum runs on the kernel of a
    (m, n) matrix's, and the last axis decides the order (compiled code sums along the
    axes before a kept last axis for each of its elements, a column sum's order, and along
    a reduced one by blocks)."""
    reduced, (x,) = set(attrs["dimensions"]), operands
    unit = {axis for axis, n in enumerate(x) if type(n) is int and n == 1}
    kinds = runs([("reduced", axis) if axis in reduced else "kept" for axis in range(len(x))])
    left_out = {axis for k, run in enumerate(kinds) if 0 < k < len(kinds) - 1 and run[0] not in reduced
                and unit.issuperset(run) for axis in run}
    if reduced - unit:
        left_out |= (reduced & unit) - {len(x) - 1}
    axes = [axis for axis in range(len(x)) if axis not in left_out]
    groups = tuple(tuple(axes[i] for i in run)
                   for run in runs([("reduced", axis) if axis in reduced else "kept" for axis in axes]))
    if len(groups) == len(x):
        return None
    result_axis = {axis: i for i, axis in enumerate(a for a in range(len(x)) if a not in reduced)}
    return Merge((groups,), tuple(tuple(result_axis[a] for a in group) for group in groups if group[0] not in reduced),
                 {"dimensions": tuple(i for i, group in enumerate(groups) if group[0] in reduced)})


register(OpDef("reduce", _infer, _evaluate, 1, dim_ties=_ties, merge=_merge))


# --- arg_reduce: the index of an extremum ----------------------------------------------------

_ARG_NUMPY = {"maximum": np.argmax, "minimum": np.argmin}


def _arg_infer(shapes, attrs):
    (x,), axis, kind = shapes, attrs["dimension"], attrs["kind"]
    if kind not in _ARG_NUMPY:
        raise ValueError(f"arg_reduce: kind must be maximum or minimum, got {kind!r}")
    if x.dtype.kind == "c":
        raise TypeError("arg_reduce: complex numbers are unordered")
    if not 0 <= axis < x.rank:
        raise ValueError(f"arg_reduce: dimension {axis} out of range for {x}")
    if type(x.dims[axis]) is int and x.dims[axis] == 0:
        raise ValueError(f"arg_reduce: an empty dimension has no {kind}")
    return Shape(tuple(n for i, n in enumerate(x.dims) if i != axis), np.dtype(np.int64))


def _arg_evaluate(args, attrs, shape):
    (x,) = args
    return np.asarray(_ARG_NUMPY[attrs["kind"]](x, axis=attrs["dimension"]), dtype=np.int64)


def _arg_ties(attrs, ranks):
    """The dimensions kept, in order, and the result's."""
    kept = (axis for axis in range(ranks[0]) if axis != attrs["dimension"])
    return ((i, 0, axis) for i, axis in enumerate(kept))


def _arg_merge(attrs, operands, dims):
    """The axes before the dimension merge, and those after it (each row's elements are
    the same lines of memory)."""
    axis = attrs["dimension"]
    groups = around_axis(len(operands[0]), axis)
    if len(groups) == len(operands[0]):
        return None
    return Merge((groups,), laid_out(group for group in groups if axis not in group),
                 {"dimension": next(i for i, group in enumerate(groups) if axis in group)})


#: The index of the first ``kind`` (``maximum`` or ``minimum``) along ``dimension``, the
#: first NaN if there is one (NumPy's ``argmax`` and ``argmin``); an empty dimension has
#: none. What ``reduce`` with an index would compute, as XLA writes it (a variadic reduce
#: of values and iotas); a backend without a kernel of its own expands it into the
#: reduction, a comparison and a reduction of the indices that hold the extremum.
register(OpDef("arg_reduce", _arg_infer, _arg_evaluate, 1, dim_ties=_arg_ties, merge=_arg_merge))
