"""Set functions (spec chapter "Set Functions"), from a stable sort.

Sorting the flattened input groups equal values; a value starts a new group where it
differs from its predecessor (NaN differs from everything, so each NaN is its own
group, as the spec asks). Group starts are found with ``true_positions``, whose size
is data-dependent; every other step is a compiled graph.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import dtypes as dt
from ..trace.array import Array
from . import graph
from .graph import check_array, op
from .recipes import recorded
from .searching import true_positions

__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]


class UniqueAll(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCounts(NamedTuple):
    values: Array
    counts: Array


class UniqueInverse(NamedTuple):
    values: Array
    inverse_indices: Array


def _stable_order(flat: Array) -> Array:
    """A stable sorting permutation; complex numbers order by (real, imag), built from two
    stable sorts (by the imaginary part, then by the real part)."""
    if flat.dtype.kind != "c":
        return op("argsort", flat, dimension=0, descending=False)
    by_imag = op("argsort", op("imag", flat), dimension=0, descending=False)
    real_in_that_order = op("take", op("real", flat), by_imag, axis=0)
    return op("take", by_imag, op("argsort", real_in_that_order, dimension=0, descending=False), axis=0)


def _groups(x: Array, where: str) -> tuple[Array, Array, Array, Array]:
    """(x as an array, stable sort order, sorted values, group-start positions in sorted order)."""
    x = check_array(x, where)
    order, ordered, starts = _sorted(x)
    if x.size == 0:
        return x, order, ordered, op("iota", dims=(0,), iota_dimension=0, dtype=dt.int64)
    return x, order, ordered, true_positions(starts)


@recorded
def _sorted(x: Array) -> tuple[Array, Array, Array]:
    """The stable sort order of ``x`` flattened, its values in that order, and where a
    group starts in it (a value that differs from the one before it, and the first): the
    part of ``_groups`` before its count's read, a function of ``x``'s signature alone, so
    kept as a recipe (~15 us of each set function's call recorded by the rules)."""
    flat = graph.reshape(x, (x.size,))
    order = _stable_order(flat)
    ordered = op("take", flat, order, axis=0)
    n = x.size
    if n < 2:
        return order, ordered, graph.full((n,), True, dt.bool_)
    head = op("slice", ordered, start=(1,), limit=(n,), strides=(1,))
    tail = op("slice", ordered, start=(0,), limit=(n - 1,), strides=(1,))
    differs = op("compare", head, tail, direction="NE")
    return order, ordered, op("concatenate", graph.full((1,), True, dt.bool_), differs, dimension=0)


def _counts(starts: Array, n: int) -> Array:
    ends = op("concatenate", op("slice", starts, start=(1,), limit=starts.shape, strides=(1,)),
              graph.size_operand(n, (1,), dt.int64, "unique_counts"), dimension=0) if starts.shape[0] else starts
    return op("subtract", ends, starts)


def _inverse(x: Array, order: Array, starts: Array, n: int) -> Array:
    """For each element, the index of its group: the running group count at its sorted
    position, moved back to the original position by the inverse permutation."""
    if n == 0:
        return graph.reshape(starts, x.shape)
    position = op("iota", dims=(n,), iota_dimension=0, dtype=dt.int64)
    group_of_sorted = op("subtract", op("searchsorted", starts, position, side="right"), graph.full((n,), 1, dt.int64))
    back = op("argsort", order, dimension=0, descending=False)
    return graph.reshape(op("take", group_of_sorted, back, axis=0), x.shape)


def unique_values(x: Array, /) -> Array:
    _, _, ordered, starts = _groups(x, "unique_values")
    return op("take", ordered, starts, axis=0)


def unique_counts(x: Array, /) -> UniqueCounts:
    x, _, ordered, starts = _groups(x, "unique_counts")
    return UniqueCounts(op("take", ordered, starts, axis=0), _counts(starts, x.size))


def unique_inverse(x: Array, /) -> UniqueInverse:
    x, order, ordered, starts = _groups(x, "unique_inverse")
    return UniqueInverse(op("take", ordered, starts, axis=0), _inverse(x, order, starts, x.size))


def unique_all(x: Array, /) -> UniqueAll:
    x, order, ordered, starts = _groups(x, "unique_all")
    return UniqueAll(op("take", ordered, starts, axis=0), op("take", order, starts, axis=0),
                     _inverse(x, order, starts, x.size), _counts(starts, x.size))


@recorded
def isin(x1: Array | int, x2: Array | int, /, *, invert: bool = False) -> Array:
    """Whether each element of ``x1`` equals some element of ``x2`` (by ``equal``):
    a binary search of ``x1`` in the sorted ``x2``."""
    x1, x2 = graph.numpy_scalar(x1, "isin"), graph.numpy_scalar(x2, "isin")
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin: at least one of x1, x2 must be an array")
    dtype = dt.result_type(*(a.dtype for a in (x1, x2) if isinstance(a, Array)), where="isin")
    if dtype.kind == "c":  # searched in sorted order, which complex numbers have none of
        raise TypeError(f"isin: complex arrays ({dtype}) are not supported (the standard asks for integers); "
                        "compare their real and imaginary parts instead")
    a = graph.convert(x1, dtype) if isinstance(x1, Array) else graph.scalar_for(x1, dtype, "isin")
    b = graph.convert(x2, dtype) if isinstance(x2, Array) else graph.scalar_for(x2, dtype, "isin")
    flat = graph.reshape(b, (b.size,))
    if b.size == 0:
        found = graph.full(a.shape, False, dt.bool_)
    else:
        ordered = op("take", flat, op("argsort", flat, dimension=0, descending=False), axis=0)
        where = op("searchsorted", ordered, a, side="left")
        found = op("compare", op("take", ordered, where, axis=0), a, direction="EQ")
    return op("not", found) if invert else found
