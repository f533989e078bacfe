"""The HLO pass pipeline: a readable list of named passes, verified after each."""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Computation
from ..verifier import verify
from .algebraic_simplifier import algebraic_simplifier
from .constant_folding import constant_folding
from .cse import cse
from .dce import dce

HLO_PASSES: list[tuple[str, Callable[[Computation], Computation]]] = [
    ("cse", cse),
    ("constant-folding", constant_folding),
    ("algebraic-simplifier", algebraic_simplifier),
    ("cse", cse),
    ("dce", dce),
]


def run_hlo_passes(comp: Computation) -> Computation:
    verify(comp)
    for _, run in HLO_PASSES:
        comp = run(comp)
        verify(comp)
    return comp
