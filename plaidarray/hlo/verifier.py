"""Structural checks run between passes: a pass that breaks the IR fails loudly here,
not as a wrong answer or a crash in generated code."""

from __future__ import annotations

from .ir import Computation, Instruction
from .opdef import lookup
from .shape import TupleShape
from .symbolic import Sym, SymExpr


class VerificationError(AssertionError):
    """The HLO broke an invariant (a bug in plaidarray, not in user code)."""


def verify(comp: Computation, verified: Computation | None = None) -> None:
    """Check ``comp``'s parameters, outputs, order and arities, and each instruction's shape
    against its op's rule. ``verified``: the computation, verified already, that a pass made
    ``comp`` from; the instructions it kept are unchanged (instructions never change), so
    their shapes are not inferred again, only those of the instructions it made."""
    position = {id(i): n for n, i in enumerate(comp.instructions)}
    kept = {id(i) for i in verified.instructions} if verified is not None else set()
    numbers = sorted(p.attrs["number"] for p in comp.parameters)
    if numbers != list(range(len(numbers))):
        raise VerificationError(f"parameter numbers {numbers} are not 0..n-1")
    for o in [*comp.parameters, *comp.outputs]:
        if isinstance(o.shape, TupleShape):  # values in buffers are arrays: tuples are taken apart
            raise VerificationError(f"{_name(comp, o)} has the tuple shape {o.shape}; parameters and outputs are arrays")
    for n, inst in enumerate(comp.instructions):
        op = lookup(inst.opcode)
        op.check_arity(len(inst.operands))
        for o in inst.operands:
            if position.get(id(o), n) >= n:
                raise VerificationError(f"{_name(comp, inst)} uses {_name(comp, o)} before it is defined")
        if inst.opcode == "parameter" or id(inst) in kept or _symbolic(inst):
            continue
        expected = op.infer([o.shape for o in inst.operands], inst.attrs)
        if expected != inst.shape:
            raise VerificationError(f"{_name(comp, inst)} has shape {inst.shape}, its rule gives {expected}")


def _name(comp: Computation, inst: Instruction) -> str:
    """``inst``'s name in ``comp``; an instruction the outputs do not reach has none there."""
    return comp.names.get(id(inst)) or repr(inst)


def _symbolic(inst: Instruction) -> bool:
    """Whether ``inst`` has run-time sizes (a shape-generic computation, ``hlo/symbolic.py``):
    its shape was inferred when its graph was recorded with concrete sizes, and shape rules
    compute with ints, so it is not inferred again."""
    values = [*inst.shape.dims, *(d for o in inst.operands for d in o.shape.dims)]
    values += [x for v in inst.attrs.values() if isinstance(v, tuple) for x in v]
    return any(isinstance(x, (Sym, SymExpr)) for x in values)
