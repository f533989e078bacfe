"""``signbit`` lowered by expanding into the ops the namespace recorded for it before it
was one op: ``copysign(1, x) < 0``, which reads the sign bit of every value, zeros and
NaNs included. Fusion sees the same code as before and every platform's ``copysign``
serves it; the baseline tier loads one op kernel for it."""

from __future__ import annotations

from ...hlo.ir import Instruction
from ..lowering import Expansion, register_lowering
from .spread import filled


def expand_signbit(inst: Instruction, x: Instruction) -> Instruction:
    """``inst`` (``signbit`` of ``x``) as ``copysign(1, x) < 0`` (built without a shape
    rule: its sizes may be run-time ones)."""
    dims, dtype = x.shape.dims, x.shape.dtype
    signed_one = Instruction("copysign", (filled(1.0, dims, dtype), x), {}, x.shape)
    return Instruction("compare", (signed_one, filled(0.0, dims, dtype)), {"direction": "LT"}, inst.shape)


register_lowering("signbit", Expansion(expand_signbit, shape_generic=True))
