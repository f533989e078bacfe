"""The reference semantics of a computation: each instruction runs its op's NumPy
``evaluate`` rule, as XLA's HloEvaluator does. Ops with nested computations
(``conditional``, ``while``) evaluate them with it; the reference backend runs modules
with it, and the tests compare the compiled backend against it. The value of an
instruction with a tuple shape is the list of its elements' arrays, computed once."""

from __future__ import annotations

from typing import cast

import numpy as np

from .ir import Module
from .opdef import Value, lookup
from .shape import Shape, TupleShape


class Evaluator:
    """Interprets the module's entry computation instruction by instruction."""

    #: How many instructions have been evaluated, process-wide (tests read it).
    evaluated = 0

    def __init__(self, module: Module) -> None:
        self.computation = module.entry

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        """One array per entry parameter in; one array per output out."""
        values: dict[int, Value] = {}
        for p in self.computation.parameters:
            values[id(p)] = buffers[p.attrs["number"]]
        for inst in self.computation.instructions:
            if inst.opcode == "parameter":
                continue
            args = [values[id(o)] for o in inst.operands]
            out = lookup(inst.opcode).evaluate(args, inst.attrs, inst.shape)
            shape = inst.shape
            if isinstance(shape, TupleShape):
                values[id(inst)] = [_array(element, s) for element, s in zip(out, shape.elements)]
            else:
                values[id(inst)] = _array(out, shape)
            Evaluator.evaluated += 1
        return [cast(np.ndarray, values[id(o)]) for o in self.computation.outputs]


def _array(value: object, shape: Shape) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=shape.dtype).reshape(shape.dims)
