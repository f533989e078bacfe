"""``reduce``: fold dimensions away with a monoid named by ``kind``.

XLA's reduce carries a combiner computation and an init operand; every reduction the
Array API needs is one of a few monoids, so the combiner is named and its identity is
implied. The combiner reuses the elementwise op of the same name, so its semantics
(NaN propagation of ``maximum``, wrapping integer ``add``) are defined once.
"""

from __future__ import annotations

import functools

import numpy as np

from ..opdef import Merge, OpDef, laid_out, lookup, register, runs
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
    """Runs of kept axes merge (the result is the same elements in the same order); each
    reduced axis stays one, as the loops that order its sum in compiled code are."""
    reduced = set(attrs["dimensions"])
    groups = runs([("reduced", axis) if axis in reduced else "kept" for axis in range(len(operands[0]))])
    if len(groups) == len(operands[0]):
        return None
    return Merge((groups,), laid_out(group for group in groups if group[0] not in reduced),
                 {"dimensions": tuple(i for i, group in enumerate(groups) if group[0] in reduced)})


register(OpDef("reduce", _infer, _evaluate, 1, dim_ties=_ties, merge=_merge))
