"""The reference backend: a NumPy interpreter of HLO, like XLA's HloEvaluator.

Each instruction runs its op's ``evaluate`` rule. Tests compare the compiled backend
against it, and it is the example of a backend plugin (see docs/user-guide.md).
"""

from __future__ import annotations

import numpy as np

from ...hlo import Module
from ...hlo.opdef import lookup
from ..executable import Backend, Compiler, Executable


class Evaluator(Executable):
    """Interprets the module's entry computation instruction by instruction."""

    #: How many instructions the evaluator has run, process-wide (tests read it).
    evaluated = 0

    def __init__(self, module: Module) -> None:
        self.computation = module.entry

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
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


class ReferenceCompiler(Compiler):
    target = "numpy"

    def compile(self, module: Module) -> Executable:
        return Evaluator(module)


backend = Backend("reference", priority=0, compiler=ReferenceCompiler(),
                  description="NumPy interpreter of HLO (XLA's HloEvaluator role); for tests")
