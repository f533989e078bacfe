"""Constant folding: evaluate scalar instructions whose operands are all constants.

Only rank-0 results fold; folding a broadcast or an iota would turn a cheap generator
into a large literal that the compiled code must then read from memory. A rank-0
element of a tuple instruction over constants (a loop over constants) folds too: the
tuple instruction is evaluated once for all its elements.
"""

from __future__ import annotations

from ..ir import Computation, Instruction, rebuild
from ..literal import Literal
from ..opdef import Value, lookup
from ..shape import TupleShape


def _evaluate(inst: Instruction) -> Value:
    return lookup(inst.opcode).evaluate([o.attrs["value"].value for o in inst.operands], inst.attrs, inst.shape)


def _over_constants(inst: Instruction) -> bool:
    return all(o.opcode == "constant" for o in inst.operands)


def constant_folding(comp: Computation) -> Computation:
    tuples: dict[int, Value] = {}  # tuple instructions over constants, evaluated once, by id

    def fold(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        inst = rebuild(inst, operands)
        if inst.shape.rank or inst.opcode == "constant" or not operands or isinstance(inst.shape, TupleShape):
            return inst
        if inst.opcode == "get_tuple_element":
            (tup,) = operands
            if not _over_constants(tup):
                return inst
            if id(tup) not in tuples:
                tuples[id(tup)] = _evaluate(tup)
            value = tuples[id(tup)][inst.attrs["index"]]
        elif _over_constants(inst):
            value = _evaluate(inst)
        else:
            return inst
        return Instruction("constant", (), {"value": Literal(value.astype(inst.shape.dtype))}, inst.shape)

    return comp.rewrite(fold)
