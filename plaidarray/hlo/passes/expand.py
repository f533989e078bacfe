"""Expansion: rewrite each op lowered by an ``Expansion`` into the ops it stands for, in
nested computations too (XLA's expander passes). Runs before the other passes, so that
CSE, folding and fusion see what the expansions built."""

from __future__ import annotations

from ..ir import Computation, Instruction, rebuild
from ..lowering import Expansion
from ..opdef import lookup


def expand(comp: Computation) -> Computation:
    def rewrite(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        inst = _with_expanded_subcomputations(rebuild(inst, operands))
        lowering = lookup(inst.opcode).lowering
        return lowering.expand(inst, *inst.operands) if isinstance(lowering, Expansion) else inst

    return comp.rewrite(rewrite)


def _with_expanded_subcomputations(inst: Instruction) -> Instruction:
    """``inst`` with every nested computation among its attributes expanded."""
    nested = {name: value for name, value in inst.attrs.items() if hasattr(value, "computation")}
    if not nested:
        return inst
    attrs = dict(inst.attrs)
    for name, value in nested.items():
        expanded = expand(value.computation)
        if expanded.instructions != value.computation.instructions:
            attrs[name] = type(value)(expanded)
    return Instruction(inst.opcode, inst.operands, attrs, inst.shape)
