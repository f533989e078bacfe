"""Expansion: rewrite each op lowered by an ``Expansion`` into the ops it stands for, in
nested computations too (XLA's expander passes). Runs before the other passes, so that
CSE, folding and fusion see what the expansions built; a computation with nothing to
expand is returned as it is."""

from __future__ import annotations

from ..hlo.ir import Computation, Instruction, rebuild
from ..hlo.literal import Literal
from ..hlo.ops.control_flow import Subcomputation, operands_feeding
from ..hlo.passes.bind_constants import bind_constants
from ..hlo.shape import Shape
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
    none changes). Array constants an expansion leaves in a nested computation (``fft``'s
    twiddles in a loop body) are hoisted out: the computation takes each as a new
    parameter, and ``inst`` passes it as a new operand, so that ``bind-constants`` binds it
    to the executable like any constant of the entry computation."""
    attrs = None
    hoisted: dict[str, list[Instruction]] = {}
    for name, value in inst.attrs.items():
        if isinstance(value, Subcomputation):
            expanded, constants = _hoist_array_constants(expand(value.computation, platform))
            if expanded is not value.computation:
                attrs = attrs or dict(inst.attrs)
                attrs[name] = Subcomputation(expanded)
            if constants:
                hoisted[name] = constants
    if attrs is None:
        return inst
    return Instruction(inst.opcode, _with_hoisted_operands(inst, hoisted), attrs, inst.shape)


def _hoist_array_constants(comp: Computation) -> tuple[Computation, list[Instruction]]:
    """``comp`` with its array constants turned into parameters after its own (as
    ``bind-constants`` turns them), and those constants for the computation around it."""
    comp, values = bind_constants(comp)
    return comp, [Instruction("constant", (), {"value": Literal(v)}, Shape(v.shape, v.dtype)) for v in values]


def _with_hoisted_operands(inst: Instruction, hoisted: dict[str, list[Instruction]]) -> tuple[Instruction, ...]:
    """``inst``'s operands with the constants hoisted out of each nested computation
    inserted right after the operands that feed that computation's parameters."""
    ends = operands_feeding(inst.opcode, len(inst.operands), inst.attrs)
    if ends is None:
        if hoisted:
            raise NotImplementedError(f"llvm-cpu: array constants in a nested computation of {inst.opcode}")
        return inst.operands
    operands = list(inst.operands)
    for name, end in sorted(ends.items(), key=lambda item: -item[1]):  # the last first: earlier ends hold
        operands[end:end] = hoisted.get(name, [])
    return tuple(operands)
