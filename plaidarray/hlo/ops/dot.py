"""``dot_general``: XLA's general contraction (batch, free and contracting dimensions).

The result's dimensions are batch, then lhs free, then rhs free, as in XLA. For each
batch index a dot_general is the matrix product of its lhs, with the free dimensions
flattened into rows and the contracting ones into columns, and the transpose of its
rhs, flattened likewise.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np

from ..opdef import Attrs, DimTie, Merge, OpDef, laid_out, register, runs
from ..shape import Shape


def free_dimensions(rank: int, batch, contracting) -> list[int]:
    """An operand's dimensions that are neither batch nor contracting, in order."""
    return [d for d in range(rank) if d not in batch and d not in contracting]


def through_transpose(attrs: Attrs, side: str, permutation: Sequence[int]) -> dict | None:
    """The dimension numbers of a product whose ``side`` operand ("lhs" or "rhs") is read
    from the source of a transpose by ``permutation`` instead of the transpose (XLA's
    transpose folding), or None where that would reorder its free dimensions, which fix
    the result's."""
    batch, contracting = attrs[f"{side}_batch"], attrs[f"{side}_contracting"]
    free = [permutation[d] for d in free_dimensions(len(permutation), batch, contracting)]
    if free != sorted(free):
        return None
    return {**attrs, f"{side}_batch": tuple(permutation[d] for d in batch),
            f"{side}_contracting": tuple(permutation[d] for d in contracting)}


def _infer(shapes, attrs):
    lhs, rhs = shapes
    lb, rb = attrs["lhs_batch"], attrs["rhs_batch"]
    lc, rc = attrs["lhs_contracting"], attrs["rhs_contracting"]
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"dot_general: operand dtypes differ ({lhs.dtype}, {rhs.dtype})")
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise ValueError("dot_general: batch/contracting dimension lists differ in length")
    for a, b in (*zip(lb, rb), *zip(lc, rc)):
        if lhs.dims[a] != rhs.dims[b]:
            raise ValueError(f"dot_general: size mismatch {lhs} dim {a} vs {rhs} dim {b}")
    dims = ([lhs.dims[d] for d in lb] + [lhs.dims[d] for d in free_dimensions(lhs.rank, lb, lc)]
            + [rhs.dims[d] for d in free_dimensions(rhs.rank, rb, rc)])
    return Shape(tuple(dims), lhs.dtype)


def _as_batched_matrix(x, batch, free, contracting, contracting_last):
    order = list(batch) + (list(free) + list(contracting) if contracting_last else list(contracting) + list(free))
    t = np.transpose(x, order)
    b = math.prod(x.shape[d] for d in batch)
    f = math.prod(x.shape[d] for d in free)
    c = math.prod(x.shape[d] for d in contracting)
    return t.reshape((b, f, c) if contracting_last else (b, c, f))


def _evaluate(args, attrs, shape):
    lhs, rhs = args
    lb, rb, lc, rc = attrs["lhs_batch"], attrs["rhs_batch"], attrs["lhs_contracting"], attrs["rhs_contracting"]
    a = _as_batched_matrix(lhs, lb, free_dimensions(lhs.ndim, lb, lc), lc, True)
    b = _as_batched_matrix(rhs, rb, free_dimensions(rhs.ndim, rb, rc), rc, False)
    with np.errstate(all="ignore"):
        return np.matmul(a, b).reshape(shape.dims)


def _ties(attrs: Attrs, ranks: Sequence[int]) -> Iterator[DimTie]:
    """The sizes the shape rule makes equal: each batch dimension the operands' and the
    result's, the contracted ones each other's, each free one its operand's and the
    result's. No others: a square matrix's product is the template of any matrix's."""
    lb, rb, lc, rc = attrs["lhs_batch"], attrs["rhs_batch"], attrs["lhs_contracting"], attrs["rhs_contracting"]
    for axis, (a, b) in enumerate(zip(lb, rb)):
        yield axis, 0, a
        yield axis, 1, b
    for a, b in zip(lc, rc):
        yield (0, a), 1, b
    lhs_free, rhs_free = free_dimensions(ranks[0], lb, lc), free_dimensions(ranks[1], rb, rc)
    yield from ((axis, 0, d) for axis, d in enumerate(lhs_free, len(lb)))
    yield from ((axis, 1, d) for axis, d in enumerate(rhs_free, len(lb) + len(lhs_free)))


def _merge(attrs, operands, dims):
    """Each operand's runs of adjacent free dimensions merge: they are the rows (the
    columns) of its matrices, flattened as the product's code flattens them; and the batch
    dimensions, where they are the leading ones of both operands, in order (the code runs
    one product per batch index, in row-major order either way)."""
    names = (("lhs_batch", "lhs_contracting"), ("rhs_batch", "rhs_contracting"))
    batch = len(attrs["lhs_batch"])
    leading = all(tuple(attrs[b]) == tuple(range(batch)) for b, _ in names)
    groups = [runs([("batch", d if not leading else 0) if d in attrs[b] else ("contracting", d) if d in attrs[c]
                    else "free" for d in range(len(x))]) for x, (b, c) in zip(operands, names)]
    if sum(map(len, groups)) == sum(map(len, operands)):
        return None
    renumbered = {}
    for operand, (b, c) in zip(groups, names):
        group_of = {axis: i for i, group in enumerate(operand) for axis in group}
        renumbered.update({name: tuple(dict.fromkeys(group_of[d] for d in attrs[name])) for name in (b, c)})
    batch_groups = [range(batch)] if leading and batch else [(axis,) for axis in range(batch)]
    free = [group for operand, (b, c) in zip(groups, names) for group in operand
            if group[0] not in attrs[b] and group[0] not in attrs[c]]
    return Merge(tuple(groups), laid_out([*batch_groups, *free]), renumbered)


register(OpDef("dot_general", _infer, _evaluate, 2, dim_ties=_ties, merge=_merge))
