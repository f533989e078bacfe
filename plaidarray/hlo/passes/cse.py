"""Common-subexpression elimination: one instruction per (opcode, operands, attributes)."""

from __future__ import annotations

from ..ir import Computation, Instruction, rebuild


def cse(comp: Computation) -> Computation:
    seen: dict[tuple, Instruction] = {}

    def canonical(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        key = (inst.opcode, tuple(id(o) for o in operands), inst.attr_key())
        return seen.setdefault(key, rebuild(inst, operands))

    return comp.rewrite(canonical)
