"""The reference backend: HLO interpreted with NumPy (``hlo/evaluator.py``, XLA's
HloEvaluator). Tests compare the compiled backend against it, and it is the example of
a backend plugin (see docs/user-guide.md).
"""

from __future__ import annotations

from ...hlo import Module
from ...hlo.evaluator import Evaluator as _HloEvaluator
from ..executable import Backend, Compiler, Executable


class Evaluator(_HloEvaluator, Executable):
    """The interpreter as an executable of this backend."""


class ReferenceCompiler(Compiler):
    target = "numpy"

    def compile(self, module: Module) -> Executable:
        return Evaluator(module)


backend = Backend("reference", priority=0, compiler=ReferenceCompiler(),
                  description="NumPy interpreter of HLO (XLA's HloEvaluator role); for tests")
