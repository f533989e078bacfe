"""plaidarray's HLO: the IR between tracing and lowering (modelled on XLA's HLO)."""

from . import ops  # noqa: F401  (registers the op set)
from .ir import Computation, Instruction, Module
from .shape import Shape

__all__ = ["Computation", "Instruction", "Module", "Shape"]
