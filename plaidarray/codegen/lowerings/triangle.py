"""``triangle`` (``tril``, ``triu``) lowered by expanding into the ops the namespace recorded
for it before it was one op: the columns' and the rows' iotas, the rows shifted by the
diagonal ``k``, their comparison, and a select of ``x`` or zero."""

from __future__ import annotations

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.shape import Shape
from ..lowering import Expansion, register_lowering
from .spread import filled, spread


def expand_triangle(inst: Instruction, x: Instruction, k: Instruction) -> Instruction:
    """``inst`` as ``select(cols <= rows + k, x, 0)`` (``>=`` for the upper triangle), each
    op built without a shape rule: its sizes may be run-time ones."""
    shape = inst.shape
    dims, rank = shape.dims, len(shape.dims)
    counts = Shape(dims, np.dtype(np.int64))

    def iota(axis: int) -> Instruction:
        return Instruction("iota", (), {"dims": dims, "iota_dimension": axis, "dtype": counts.dtype}, counts)

    diagonal = Instruction("add", (iota(rank - 2), spread(k, dims)), {}, counts)
    keep = Instruction("compare", (iota(rank - 1), diagonal), {"direction": "LE" if inst.attrs["lower"] else "GE"},
                       Shape(dims, np.dtype(np.bool_)))
    return Instruction("select", (keep, x, filled(0, dims, shape.dtype)), {}, shape)


register_lowering("triangle", Expansion(expand_triangle, shape_generic=True))
