"""``triangle``: an array with the elements on one side of a diagonal of its last two axes
zeroed (the namespace's ``tril`` and ``triu``)."""

from __future__ import annotations

import numpy as np

from ..opdef import Merge, OpDef, register
from ..shape import Shape


def _triangle_infer(shapes: list[Shape], attrs: dict) -> Shape:
    x, k = shapes
    if x.rank < 2:
        raise ValueError(f"triangle: needs at least 2 dimensions, got {x}")
    if k.dims or k.dtype != np.int64:
        raise TypeError(f"triangle: the diagonal is an int64 scalar, got {k}")
    if not isinstance(attrs.get("lower"), bool):
        raise TypeError("triangle: lower is True (keep the lower triangle) or False (the upper)")
    return x


def _triangle_evaluate(args, attrs, shape):
    x, k = args
    return (np.tril if attrs["lower"] else np.triu)(x, int(k)).astype(shape.dtype, copy=False)


def _triangle_merge(attrs, operands, dims):
    """A stack's axes (those before the last two) merge into one: each matrix is the same
    memory however many axes index the stack, so the kernel of a 3-d stack serves any."""
    batch = len(dims) - 2
    if batch < 2:
        return None
    groups = (tuple(range(batch)), (batch,), (batch + 1,))
    return Merge((groups, ()), groups, {})


#: ``x`` with the elements above (``lower``) or below the diagonal ``k`` of its last two
#: axes zeroed (``k`` an int64 scalar, a run-time value: one kernel serves every
#: diagonal; NumPy's ``tril`` and ``triu``, a stack's matrices each): what ``select(cols
#: <= rows + k, x, 0)`` (``>=`` for the upper) computes, as one op, so that a script's
#: ``tril`` records one node, not seven, and loads one op kernel, not four. Backends lower
#: it by that expansion (``codegen/lowerings/triangle.py``).
register(OpDef("triangle", _triangle_infer, _triangle_evaluate, 2,
               dim_ties=lambda attrs, ranks: ((axis, 0, axis) for axis in range(ranks[0])), merge=_triangle_merge))
