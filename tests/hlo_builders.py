"""Small HLO graphs for the unit tests of hlo/, codegen/ and the backends: parameters,
constants and instructions built through the ops' own shape rules, and the llvm-cpu
compiler's stages run on them up to a named stage."""

from __future__ import annotations

import numpy as np

from plaidarray.hlo import Computation, Instruction, Module, Shape
from plaidarray.hlo.literal import Literal

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I32 = np.dtype(np.int32)


def param(n: int, dims: tuple[int, ...], dtype=F32) -> Instruction:
    shape = Shape(dims, np.dtype(dtype))
    return Instruction("parameter", (), {"number": n, "shape": shape}, shape)


def const(value, dtype) -> Instruction:
    return Instruction.make("constant", [], value=Literal(np.asarray(value, dtype=dtype)))


def make(opcode: str, *operands: Instruction, **attrs) -> Instruction:
    return Instruction.make(opcode, list(operands), **attrs)


def module_text(c) -> str:
    """The xDSL modules of ``c``'s kernel groups (``lowered``'s state), as text."""
    return "\n".join(str(g.module) for g in c.groups)


def lowered(params: list[Instruction], outputs: list[Instruction], until: str = "to-llvm-ir",
            platform: str | None = None, n_symbols: int = 0):
    """The llvm-cpu compiler's state (``stages.Compilation``) after its stages up to and
    including ``until``, for the computation of ``params`` and ``outputs`` (with
    ``n_symbols`` run-time sizes), generating for the host or for one of
    ``targets.PLATFORMS``."""
    from plaidarray.backend.llvm_cpu import targets
    from plaidarray.backend.llvm_cpu import stages
    from plaidarray.backend.pipeline import run_stages

    comp = Module("unit", Computation("main", params, outputs)).entry
    target = targets.host() if platform is None else targets.PLATFORMS[platform]
    c = stages.Compilation("unit", comp, frozenset(), 3, "unit-test", n_symbols, target=target)
    ordered = [*stages.FRONT, *stages.BACK]
    last = [s.name for s in ordered].index(until)
    run_stages(ordered[:last + 1], c, "unit", c.timings)
    return c
