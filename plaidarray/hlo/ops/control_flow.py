"""``conditional`` and ``while``: control flow over nested computations (XLA's ops).

    conditional(pred, *true_operands, *false_operands) {true_branch, false_branch}
    while(*init, *cond_captured, *body_captured)       {cond, body}

The nested computations are :class:`Subcomputation` attributes. A branch's parameters
are its operands; ``cond`` and ``body`` take the carried values, then the values they
capture. Both ops have several results, one per output of the branch or body: their
shape is the tuple of those outputs' shapes (a :class:`TupleShape`, as in XLA), their
reference evaluation runs the branch or the loop once and gives the list of results,
and ``get_tuple_element`` selects each result used. The lowering
(``codegen/lowerings/control_flow.py``) writes one buffer per result.
"""

from __future__ import annotations

import numpy as np

from ..evaluator import Evaluator
from ..fingerprint import digest, structure
from ..ir import Computation, Module
from ..opdef import OpDef, register
from ..shape import Shape, TupleShape

#: The shape of a predicate: a 0-d bool.
PREDICATE = Shape((), np.dtype(bool))


class Subcomputation:
    """A nested computation as an HLO attribute: equal, hashed and printed by its
    structure, so CSE, fingerprints and the executable caches see through it."""

    __slots__ = ("computation", "digest", "_key", "_hash")

    def __init__(self, computation: Computation) -> None:
        self.computation = computation
        self._key = structure(computation)
        self.digest = digest(repr(self._key))
        self._hash = hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Subcomputation) and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"%{self.computation.name}.{self.digest}"


def _evaluate(comp: Computation, args: list[np.ndarray]) -> list[np.ndarray]:
    """The reference semantics of a nested computation."""
    return Evaluator(Module(comp.name, comp)).run(list(args))


def _shapes(insts) -> list[Shape]:
    return [i.shape for i in insts]


def _listing(shapes: list[Shape]) -> str:
    return "(" + ", ".join(map(str, shapes)) + ")"


# --- conditional ----------------------------------------------------------------------

def branches(attrs) -> tuple[Computation, Computation]:
    """A conditional's true and false branches."""
    return attrs["true_branch"].computation, attrs["false_branch"].computation


def _conditional_infer(shapes, attrs):
    true, false = branches(attrs)
    pred, *operands = shapes
    if pred != PREDICATE:
        raise TypeError(f"conditional: the predicate must be a 0-d bool, got {pred}")
    expected = _shapes(true.parameters) + _shapes(false.parameters)
    if operands != expected:
        raise TypeError(f"conditional: operands {_listing(operands)} do not match the branches' parameters "
                        f"{_listing(expected)}")
    if _shapes(true.outputs) != _shapes(false.outputs):
        raise TypeError(f"conditional: the branches return different shapes: {_listing(_shapes(true.outputs))} "
                        f"and {_listing(_shapes(false.outputs))}")
    return TupleShape(_shapes(true.outputs))


def _conditional_evaluate(args, attrs, shape):
    true, false = branches(attrs)
    pred, *operands = args
    n = len(true.parameters)
    branch, inputs = (true, operands[:n]) if pred else (false, operands[n:])
    return _evaluate(branch, inputs)


register(OpDef("conditional", _conditional_infer, _conditional_evaluate))


# --- while ----------------------------------------------------------------------------

def loop(attrs) -> tuple[Computation, Computation, int]:
    """The cond and body computations and the number of carried values."""
    cond, body = attrs["cond"].computation, attrs["body"].computation
    return cond, body, len(body.outputs)


def _while_infer(shapes, attrs):
    cond, body, n = loop(attrs)
    carried = _shapes(body.outputs)
    if _shapes(body.parameters[:n]) != carried or _shapes(cond.parameters[:n]) != carried:
        raise TypeError(f"while: the body maps {_listing(_shapes(body.parameters[:n]))} to {_listing(carried)}; "
                        f"carried values must keep their shapes and dtypes")
    if _shapes(cond.outputs) != [PREDICATE]:
        raise TypeError(f"while: the condition must return one 0-d bool, got {_listing(_shapes(cond.outputs))}")
    expected = carried + _shapes(cond.parameters[n:]) + _shapes(body.parameters[n:])
    if list(shapes) != expected:
        raise TypeError(f"while: operands {_listing(list(shapes))} do not match {_listing(expected)}")
    return TupleShape(carried)


def _while_evaluate(args, attrs, shape):
    cond, body, n = loop(attrs)
    c = len(cond.parameters) - n
    state, cond_captured, body_captured = list(args[:n]), args[n:n + c], args[n + c:]
    while _evaluate(cond, [*state, *cond_captured])[0]:
        state = _evaluate(body, [*state, *body_captured])
    return state


register(OpDef("while", _while_infer, _while_evaluate))


def operands_feeding(opcode: str, operands: int, attrs) -> dict[str, int] | None:
    """Where the operands that feed each nested computation's parameters end, by the
    attribute holding it: ``conditional(pred, *true_operands, *false_operands)`` and
    ``while(*carried, *cond_captured, *body_captured)``. None for an op without nested
    computations. (A pass that gives a nested computation new parameters inserts their
    operands at these ends: ``codegen/expand.py``.)"""
    if opcode == "conditional":
        return {"true_branch": 1 + len(attrs["true_branch"].computation.parameters), "false_branch": operands}
    if opcode == "while":
        return {"cond": len(attrs["cond"].computation.parameters), "body": operands}
    return None
