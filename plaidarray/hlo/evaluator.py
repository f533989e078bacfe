"""The reference semantics of a computation: each instruction runs its op's NumPy
``evaluate`` rule, as XLA's HloEvaluator does. Ops with nested computations
(``conditional``, ``while``) evaluate them with it; the reference backend runs modules
with it, and the tests compare the compiled backend against it."""

from __future__ import annotations

import numpy as np

from .ir import Module
from .opdef import lookup


class Evaluator:
    """Interprets the module's entry computation instruction by instruction."""

    #: How many instructions have been evaluated, process-wide (tests read it).
    evaluated = 0

    def __init__(self, module: Module) -> None:
        self.computation = module.entry

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        """One array per entry parameter in; one array per output out."""
        values: dict[int, np.ndarray] = {}
        for p in self.computation.parameters:
            values[id(p)] = buffers[p.attrs["number"]]
        for inst in self.computation.instructions:
            if inst.opcode == "parameter":
                continue
            args = [values[id(o)] for o in inst.operands]
            out = lookup(inst.opcode).evaluate(args, inst.attrs, inst.shape)
            values[id(inst)] = np.ascontiguousarray(out, dtype=inst.shape.dtype).reshape(inst.shape.dims)
            Evaluator.evaluated += 1
        return [values[id(o)] for o in self.computation.outputs]
