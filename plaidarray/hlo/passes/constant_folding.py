"""Constant folding: evaluate scalar instructions whose operands are all constants.

Only rank-0 results fold; folding a broadcast or an iota would turn a cheap generator
into a large literal that the compiled code must then read from memory.
"""

from __future__ import annotations

from ..ir import Computation, Instruction, rebuild
from ..literal import Literal
from ..opdef import lookup


def constant_folding(comp: Computation) -> Computation:
    def fold(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        inst = rebuild(inst, operands)
        if inst.shape.rank or inst.opcode == "constant" or not operands:
            return inst
        if not all(o.opcode == "constant" for o in operands):
            return inst
        value = lookup(inst.opcode).evaluate([o.attrs["value"].value for o in operands], inst.attrs, inst.shape)
        return Instruction("constant", (), {"value": Literal(value.astype(inst.shape.dtype))}, inst.shape)

    return comp.rewrite(fold)
