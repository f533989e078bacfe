"""``logaddexp`` lowered by expanding into the ops the namespace recorded for it before it
was one op: the larger operand plus ``log1p(exp(-|a - b|))``, and ``a + log(2)`` where the
operands are equal. Fusion sees and compiles the same code as before, every platform's
lowerings of those ops serve it, and the baseline tier loads one op kernel for it. The
steps are those of ``hlo/ops/elementwise.py``'s reference."""

from __future__ import annotations

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.ops.elementwise import LOG_2
from ...hlo.shape import Shape
from ..lowering import Expansion, register_lowering
from .spread import filled


def expand_logaddexp(inst: Instruction, a: Instruction, b: Instruction) -> Instruction:
    """``inst`` (``logaddexp`` of ``a`` and ``b``) as the ops of its steps (each built
    without a shape rule: its sizes may be run-time ones)."""
    shape = inst.shape
    dims, dtype = shape.dims, shape.dtype

    def node(op: str, *operands: Instruction, to: Shape = shape, **attrs: object) -> Instruction:
        return Instruction(op, operands, attrs, to)

    spread = node("negate", node("abs", node("subtract", a, b)))
    general = node("add", node("maximum", a, b), node("log1p", node("exp", spread)))
    same = node("add", a, filled(LOG_2, dims, dtype))
    equal = node("compare", a, b, to=Shape(dims, np.dtype(np.bool_)), direction="EQ")
    return node("select", equal, same, general)


register_lowering("logaddexp", Expansion(expand_logaddexp, shape_generic=True))
