"""Expansion: rewrite each op lowered by an ``Expansion`` into the ops it stands for, in
nested computations too (XLA's expander passes). Runs before the other passes, so that
CSE, folding and fusion see what the expansions built."""

from __future__ import annotations

from ..hlo.ir import Computation, Instruction, rebuild
from ..hlo.ops.control_flow import Subcomputation
from .lowering import Expansion, lowering_for


def expand(comp: Computation, platform: str | None = None) -> Computation:
    """``comp`` with every op that ``platform`` lowers by an :class:`Expansion` expanded."""
    def rewrite(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        inst = _with_expanded_subcomputations(rebuild(inst, operands), platform)
        lowering = lowering_for(inst.opcode, platform)
        return lowering.expand(inst, *inst.operands) if isinstance(lowering, Expansion) else inst

    return comp.rewrite(rewrite)


def _with_expanded_subcomputations(inst: Instruction, platform: str | None) -> Instruction:
    """``inst`` with every nested computation among its attributes expanded (itself when
    none changes)."""
    attrs = None
    for name, value in inst.attrs.items():
        if isinstance(value, Subcomputation):
            expanded = expand(value.computation, platform)
            if expanded.instructions != value.computation.instructions:
                _check_no_array_constants(expanded, inst.opcode)
                attrs = attrs or dict(inst.attrs)
                attrs[name] = Subcomputation(expanded)
    return inst if attrs is None else Instruction(inst.opcode, inst.operands, attrs, inst.shape)


def _check_no_array_constants(comp: Computation, where: str) -> None:
    """Array constants are bound to the executable as parameters of its entry
    computation only, so an expansion that needs tables (``fft``'s twiddles) cannot run
    inside a nested one: a clear error, not a failure deep in the lowering."""
    for inst in comp.instructions:
        if inst.opcode == "constant" and inst.shape.rank:
            raise NotImplementedError(
                f"llvm-cpu: an op expanded with constant tables (fft) inside a {where} body (jit's cond, "
                f"while_loop, fori_loop) is not supported yet; compute it outside the loop or branch")
