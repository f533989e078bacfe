"""Buffer sharing: results that take over an operand's buffer and update it in place.

An op whose lowering names an ``in_place_operand`` (``dynamic_update_slice``) may
write its result into that operand's buffer when the operand has no other reader: it
then stores only what changes. Chains of such updates share one buffer. The operand
may be a parameter only when the caller donated its buffer (the executable then
returns that buffer as the result), as XLA's input/output aliasing lets a caller give
up an argument.
"""

from __future__ import annotations

from collections.abc import Collection

from ..hlo import Computation, Instruction
from .fusion import FusionPlan


def buffer_owners(comp: Computation, plan: FusionPlan, donated: Collection[int]) -> dict[int, Instruction]:
    """Map ``id(inst)`` -> the instruction whose buffer ``inst`` uses instead of its own
    (the owner of its group's buffer), for every instruction that shares one. Each group's owner is a donated parameter if the
    group starts at one, else its last member (which may be an output)."""
    users = comp.users()
    outputs = {id(o) for o in comp.outputs}
    owner: dict[int, Instruction] = {}
    members: dict[int, list[Instruction]] = {}
    for inst in plan.kernels:
        operand = getattr(plan.lowering(inst), "in_place_operand", None)
        if operand is None:
            continue
        base = inst.operands[operand]
        if len(users[id(base)]) != 1 or id(base) in outputs or not plan.is_buffer(base):
            continue
        if base.opcode == "parameter" and base.attrs["number"] not in donated:
            continue
        group = members.pop(id(base), [base])
        group.append(inst)
        members[id(inst)] = group
    for group in members.values():
        first = group[0]
        keeper = first if first.opcode == "parameter" else group[-1]
        for inst in group:
            if inst is not keeper:
                owner[id(inst)] = keeper
    return owner
