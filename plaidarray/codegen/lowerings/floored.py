"""Floored division (``floor_divide``, ``floor_remainder``: Python's ``//`` and ``%``),
lowered by expanding into the truncating ``divide`` and ``remainder`` and their sign
fix-ups: the ops the namespace recorded for them before they were one op each, so that
fusion sees, and compiles, the same code (a fused loop's ``fmod`` and integer division
stay in a loop of their own, and the fix-ups vectorise with their consumers), and every
platform's ``remainder`` lowering (the C library's ``fmod``, libdevice's) serves it. The
steps are those of ``hlo/ops/elementwise.py``'s reference."""

from __future__ import annotations

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.shape import Shape
from ..lowering import Expansion, register_lowering
from .spread import filled


def expand_floored(inst: Instruction, a: Instruction, d: Instruction) -> Instruction:
    """``inst`` (``floor_divide`` or ``floor_remainder`` of ``a`` by ``d``) as the ops of
    its steps (each built without a shape rule: its sizes may be run-time ones)."""
    shape = inst.shape
    dims, dtype = shape.dims, shape.dtype
    flags = Shape(dims, np.dtype(np.bool_))

    def node(op: str, *operands: Instruction, to: Shape = shape, **attrs: object) -> Instruction:
        return Instruction(op, operands, attrs, to)

    def compare(x: Instruction, y: Instruction, direction: str) -> Instruction:
        return node("compare", x, y, to=flags, direction=direction)

    quotient = inst.opcode == "floor_divide"
    if dtype.kind == "u":
        return node("divide" if quotient else "remainder", a, d)
    zero = filled(0, dims, dtype)
    mod = node("remainder", a, d)
    if dtype.kind == "i" or not quotient:  # the remainder's sign fixed where it is not the divisor's
        wrong_sign = compare(compare(mod, zero, "LT"), compare(d, zero, "LT"), "NE")
        fix = node("and", compare(mod, zero, "NE"), wrong_sign, to=flags)
        if quotient:
            return node("subtract", node("divide", a, d), node("convert", fix, dtype=dtype))
        fixed = node("select", fix, node("add", mod, d), mod)
        if dtype.kind == "i":
            return fixed
        signed_zero = node("select", compare(mod, zero, "EQ"), node("copysign", zero, d), fixed)
        return node("select", compare(d, zero, "EQ"), mod, signed_zero)
    one, half = filled(1.0, dims, dtype), filled(0.5, dims, dtype)
    div = node("divide", node("subtract", a, mod), d)
    fix = node("and", compare(mod, zero, "NE"), compare(compare(d, zero, "LT"), compare(mod, zero, "LT"), "NE"), to=flags)
    div = node("select", fix, node("subtract", div, one), div)
    floor = node("floor", div)
    floor = node("select", compare(node("subtract", div, floor), half, "GT"), node("add", floor, one), floor)
    whole = node("divide", a, d)
    floor = node("select", compare(div, zero, "NE"), floor, node("copysign", zero, whole))
    finite = node("and", node("is_finite", a, to=flags), node("is_finite", d, to=flags), to=flags)
    exact = node("and", finite, compare(d, zero, "NE"), to=flags)
    return node("select", exact, floor, node("floor", whole))


for _name in ("floor_divide", "floor_remainder"):
    register_lowering(_name, Expansion(expand_floored, shape_generic=True))
