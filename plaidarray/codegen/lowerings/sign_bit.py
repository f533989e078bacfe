"""``signbit`` lowered by expanding into the ops the namespace recorded for it before it
was one op: ``copysign(1, x) < 0``, which reads the sign bit of every value, zeros and
NaNs included. Fusion sees the same code as before and every platform's ``copysign``
serves it; the baseline tier loads one op kernel for it."""

from __future__ import annotations

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.literal import Literal
from ...hlo.shape import Shape
from ..lowering import Expansion, register_lowering


def expand_signbit(inst: Instruction, x: Instruction) -> Instruction:
    """``inst`` (``signbit`` of ``x``) as ``copysign(1, x) < 0`` (built without a shape
    rule: its sizes may be run-time ones)."""
    dims, dtype = x.shape.dims, x.shape.dtype

    def full(value: float) -> Instruction:
        scalar = Instruction("constant", (), {"value": Literal(np.asarray(value, dtype))}, Shape((), dtype))
        return Instruction("broadcast_in_dim", (scalar,), {"dims": dims, "broadcast_dimensions": ()}, x.shape)

    signed_one = Instruction("copysign", (full(1.0), x), {}, x.shape)
    return Instruction("compare", (signed_one, full(0.0)), {"direction": "LT"}, inst.shape)


register_lowering("signbit", Expansion(expand_signbit, shape_generic=True))
