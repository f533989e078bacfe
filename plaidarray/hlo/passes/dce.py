"""Dead-code elimination: keep what the outputs reach (unused parameters stay bound)."""

from __future__ import annotations

from ..ir import Computation


def dce(comp: Computation) -> Computation:
    return Computation(comp.name, comp.parameters, comp.outputs)
