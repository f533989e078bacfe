"""The one place an HLO op is defined: its shape/dtype rule and reference evaluation.

Every op in ``plaidarray.hlo.ops`` registers exactly one :class:`OpDef`. The trace layer
calls ``infer`` while recording and the evaluator (``evaluator.py``) calls ``evaluate``;
how an op lowers is registered apart, per platform (``plaidarray.codegen.lowering``), as
JAX keeps a primitive's abstract evaluation and its per-platform lowerings in separate
tables. Nobody switches over op names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .shape import Shape

Attrs = dict[str, Any]
InferRule = Callable[[list[Shape], Attrs], Shape]
#: The value of an HLO instruction: an array, or for a tuple shape the list of its elements.
Value = np.ndarray | list[np.ndarray]
#: The operands' values, attributes and result shape -> the result's ``Value``.
Evaluate = Callable[[list[Any], Attrs, Shape], Any]


@dataclass(frozen=True)
class OpDef:
    """An HLO opcode: how its result type follows from its operands and what it
    computes (NumPy, the reference semantics)."""

    name: str
    infer: InferRule
    evaluate: Evaluate
    arity: int | None = None  # None: variadic
    #: Attributes holding sizes (``reshape``'s dims) or offsets (``slice``'s start): tuples
    #: of ints that, like the dimensions of shapes, a shape-generic executable takes at
    #: run time (``hlo/symbolic.py``); every other attribute is part of a graph's structure.
    size_attrs: tuple[str, ...] = ()
    offset_attrs: tuple[str, ...] = ()

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
