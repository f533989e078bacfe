"""``bind-constants``: array constants become parameters bound to their data.

Run by a compiler after the HLO passes: code then refers to constants through the buffer
table instead of embedding them, so the compiled code (and its persistent cache key)
does not depend on their values, and a large table of twiddles or weights is not copied
into the object code. Scalar constants stay and become immediates in the code.
"""

from __future__ import annotations

import numpy as np

from ..ir import Computation, Instruction


def bind_constants(comp: Computation) -> tuple[Computation, list[np.ndarray]]:
    """Turn array constants into extra parameters bound to their data (scalars stay
    constants and become immediates in the code)."""
    bound: list[np.ndarray] = []
    first = len(comp.parameters)

    def rebind(inst: Instruction, operands):
        if inst.opcode == "constant" and inst.shape.rank:
            number = first + len(bound)
            bound.append(np.ascontiguousarray(inst.attrs["value"].value))
            return Instruction("parameter", (), {"number": number, "shape": inst.shape}, inst.shape)
        return inst if all(a is b for a, b in zip(inst.operands, operands)) else \
            Instruction(inst.opcode, operands, inst.attrs, inst.shape)

    new = comp.rewrite(rebind)
    params = comp.parameters + [i for i in new.instructions if i.opcode == "parameter" and i.attrs["number"] >= first]
    return Computation(comp.name, sorted(params, key=lambda p: p.attrs["number"]), new.outputs), bound
