"""``logaddexp`` lowered by expanding into the ops the namespace recorded for it before it
was one op: the larger operand plus ``log1p(exp(-|a - b|))``, and ``a + log(2)`` where the
operands are equal. Fusion sees and compiles the same code as before, every platform's
lowerings of those ops serve it, and the baseline tier loads one op kernel for it. The
steps are those of ``hlo/ops/elementwise.py``'s reference."""

from __future__ import annotations

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.literal import Literal
from ...hlo.ops.elementwise import LOG_2
from ...hlo.shape import Shape
from ..lowering import Expansion, register_lowering


def expand_logaddexp(inst: Instruction, a: Instruction, b: Instruction) -> Instruction:
    """``inst`` (``logaddexp`` of ``a`` and ``b``) as the ops of its steps (each built
    without a shape rule: its sizes may be run-time ones)."""
    shape = inst.shape
    dims, dtype = shape.dims, shape.dtype

    def node(op: str, *operands: Instruction, to: Shape = shape, **attrs: object) -> Instruction:
        return Instruction(op, operands, attrs, to)

    spread = node("negate", node("abs", node("subtract", a, b)))
    general = node("add", node("maximum", a, b), node("log1p", node("exp", spread)))
    log_2 = node("constant", to=Shape((), dtype), value=Literal(np.asarray(LOG_2, dtype)))
    same = node("add", a, node("broadcast_in_dim", log_2, dims=dims, broadcast_dimensions=()))
    equal = node("compare", a, b, to=Shape(dims, np.dtype(np.bool_)), direction="EQ")
    return node("select", equal, same, general)


register_lowering("logaddexp", Expansion(expand_logaddexp, shape_generic=True))
