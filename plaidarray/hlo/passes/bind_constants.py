"""``bind-constants``: array constants become parameters bound to their data.

Run by a compiler after the HLO passes: code then refers to constants through the buffer
table instead of embedding them, so the compiled code (and its persistent cache key)
does not depend on their values, and a large table of twiddles or weights is not copied
into the object code. Scalar constants stay and become immediates in the code.
"""

from __future__ import annotations

import numpy as np

from ..ir import Computation, Instruction, rebuild


def bind_constants(comp: Computation) -> tuple[Computation, list[np.ndarray]]:
    """Turn array constants into extra parameters bound to their data (scalars stay
    constants and become immediates in the code); ``comp`` itself when it has none."""
    bound: list[np.ndarray] = []
    first = len(comp.parameters)

    def rebind(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        if inst.opcode == "constant" and inst.shape.rank:
            number = first + len(bound)
            bound.append(np.ascontiguousarray(inst.attrs["value"].value))
            return Instruction("parameter", (), {"number": number, "shape": inst.shape}, inst.shape)
        return rebuild(inst, operands)

    new = comp.rewrite(rebind)
    if new is comp:
        return comp, bound
    params = comp.parameters + [i for i in new.instructions if i.opcode == "parameter" and i.attrs["number"] >= first]
    return Computation(comp.name, sorted(params, key=lambda p: p.attrs["number"]), new.outputs,
                       new.instructions), bound
