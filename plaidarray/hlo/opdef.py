"""The one place an HLO op is defined: shape/dtype rule, reference evaluation, lowering.

Every op in ``plaidarray.hlo.ops`` registers exactly one :class:`OpDef`. The trace layer
calls ``infer`` while recording, the reference backend calls ``evaluate``, and the
compiled backend looks up ``lowering``; nobody switches over op names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .shape import Shape

Attrs = dict[str, Any]
InferRule = Callable[[list[Shape], Attrs], Shape]
Evaluate = Callable[[list[np.ndarray], Attrs, Shape], np.ndarray]


@dataclass(frozen=True)
class OpDef:
    """An HLO opcode: how its result type follows from its operands, what it computes
    (NumPy, the reference semantics) and how it lowers (see ``plaidarray.hlo.lowering``)."""

    name: str
    infer: InferRule
    evaluate: Evaluate
    lowering: object
    arity: int | None = None  # None: variadic

    def check_arity(self, n: int) -> None:
        if self.arity is not None and n != self.arity:
            raise TypeError(f"HLO op {self.name} takes {self.arity} operands, got {n}")


OPS: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    if op.name in OPS:
        raise ValueError(f"HLO op {op.name} defined twice")
    OPS[op.name] = op
    return op


def lookup(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise NotImplementedError(f"unknown HLO op {name!r}") from None
