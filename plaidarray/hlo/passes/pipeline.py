"""The HLO pass pipeline: a readable list of named passes. The computation is verified
before the first and after each pass that changed it (XLA's pipeline runs its invariant
checkers so); a pass that changes nothing returns its input."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..ir import Computation
from ..verifier import verify
from .algebraic_simplifier import algebraic_simplifier
from .constant_folding import constant_folding
from .cse import cse

HLO_PASSES: list[tuple[str, Callable[[Computation], Computation]]] = [
    ("cse", cse),
    ("constant-folding", constant_folding),
    ("algebraic-simplifier", algebraic_simplifier),
    ("cse", cse),
]


#: Called after each pass with its position, its name, the computation it made and the
#: seconds it took (a compiler times and dumps the passes through it).
AfterPass = Callable[[int, str, Computation, float], None]


def run_hlo_passes(comp: Computation, after: AfterPass | None = None) -> Computation:
    """``comp`` after every pass of ``HLO_PASSES``, in order."""
    verify(comp)
    for i, (name, run) in enumerate(HLO_PASSES):
        start = time.perf_counter()
        result = run(comp)
        seconds = time.perf_counter() - start
        if result is not comp:
            verify(result, comp)
            comp = result
        if after is not None:
            after(i, name, comp, seconds)
    return comp
