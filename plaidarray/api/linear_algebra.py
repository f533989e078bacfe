"""Linear algebra functions of the main namespace (spec chapter "Linear Algebra
Functions"): all are one ``dot_general`` with the right batch/contracting dims."""

from __future__ import annotations

from collections.abc import Sequence

from .. import dtypes as dt
from ..trace.array import Array
from . import graph
from .graph import check_array, check_category, convert, op

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]


def _promote_pair(x1: Array, x2: Array, where: str) -> tuple[Array, Array]:
    check_array(x1, where)
    check_array(x2, where)
    check_category(x1, "numeric", where)
    check_category(x2, "numeric", where)
    dtype = dt.promote(x1.dtype, x2.dtype)
    return convert(x1, dtype), convert(x2, dtype)


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dims."""
    a, b = _promote_pair(x1, x2, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must be at least 1-D")
    a2 = graph.reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
    b2 = graph.reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: contracted dimensions differ: {a.shape} @ {b.shape}")
    batch = graph.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a2 = graph.broadcast_to(a2, batch + a2.shape[-2:])
    b2 = graph.broadcast_to(b2, batch + b2.shape[-2:])
    nb = len(batch)
    out = op("dot_general", a2, b2, lhs_batch=tuple(range(nb)), rhs_batch=tuple(range(nb)),
             lhs_contracting=(nb + 1,), rhs_contracting=(nb,))
    shape = batch + (a.shape[-2:-1] if a.ndim > 1 else ()) + (b.shape[-1:] if b.ndim > 1 else ())
    return graph.reshape(out, shape)


def matrix_transpose(x: Array, /) -> Array:
    check_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: needs at least 2 dimensions, got {x.ndim}")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return op("transpose", x, permutation=perm)


def tensordot(x1: Array, x2: Array, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    a, b = _promote_pair(x1, x2, "tensordot")
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={axes} out of range")
        la, lb = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        la, lb = (tuple(ax % n for ax in seq) for seq, n in zip(axes, (a.ndim, b.ndim)))
        if len(la) != len(lb):
            raise ValueError("tensordot: axes sequences differ in length")
    for i, j in zip(la, lb):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: dimension {i} of x1 and {j} of x2 differ")
    return op("dot_general", a, b, lhs_batch=(), rhs_batch=(), lhs_contracting=la, rhs_contracting=lb)


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    a, b = _promote_pair(x1, x2, "vecdot")
    if not (-min(a.ndim, b.ndim) <= axis < 0 or 0 <= axis < min(a.ndim, b.ndim)) or a.ndim == 0:
        raise ValueError(f"vecdot: axis {axis} out of range")
    shape = graph.broadcast_shapes(a.shape, b.shape)
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: sizes along axis {axis} differ")
    a, b = graph.broadcast_to(a, shape), graph.broadcast_to(b, shape)
    if a.dtype.kind == "c":  # the spec's vecdot is sum(conj(x1) * x2)
        a = op("conj", a)
    axis %= len(shape)
    batch = tuple(i for i in range(len(shape)) if i != axis)
    return op("dot_general", a, b, lhs_batch=batch, rhs_batch=batch, lhs_contracting=(axis,),
              rhs_contracting=(axis,))
