"""``triangle`` (``tril``, ``triu``) lowered by expanding into the ops the namespace recorded
for it before it was one op: the columns' and the rows' iotas, the rows shifted by the
diagonal ``k``, their comparison, and a select of ``x`` or zero."""

from __future__ import annotations

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.literal import Literal
from ...hlo.shape import Shape
from ..lowering import Expansion, register_lowering


def expand_triangle(inst: Instruction, x: Instruction, k: Instruction) -> Instruction:
    """``inst`` as ``select(cols <= rows + k, x, 0)`` (``>=`` for the upper triangle), each
    op built without a shape rule: its sizes may be run-time ones."""
    shape = inst.shape
    dims, rank = shape.dims, len(shape.dims)
    counts = Shape(dims, np.dtype(np.int64))

    def iota(axis: int) -> Instruction:
        return Instruction("iota", (), {"dims": dims, "iota_dimension": axis, "dtype": counts.dtype}, counts)

    def spread(scalar: Instruction, to: Shape) -> Instruction:
        return Instruction("broadcast_in_dim", (scalar,), {"dims": dims, "broadcast_dimensions": ()}, to)

    diagonal = Instruction("add", (iota(rank - 2), spread(k, counts)), {}, counts)
    keep = Instruction("compare", (iota(rank - 1), diagonal), {"direction": "LE" if inst.attrs["lower"] else "GE"},
                       Shape(dims, np.dtype(np.bool_)))
    zero = Instruction("constant", (), {"value": Literal(np.zeros((), shape.dtype))}, Shape((), shape.dtype))
    return Instruction("select", (keep, x, spread(zero, shape)), {}, shape)


register_lowering("triangle", Expansion(expand_triangle, shape_generic=True))
