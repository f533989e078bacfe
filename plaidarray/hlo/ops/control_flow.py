"""``conditional`` and ``while``: control flow over nested computations (XLA's ops).

    conditional(pred, *true_operands, *false_operands) {true_branch, false_branch, index}
    while(*init, *cond_captured, *body_captured)       {cond, body, index}

The nested computations are :class:`Subcomputation` attributes. A branch's parameters
are its operands; ``cond`` and ``body`` take the carried values, then the values they
capture. Both ops have several results (one per output of the branch or body), and
an HLO value here is one array, so the op is recorded as one instruction per result,
alike but for the attribute ``index``. The reference evaluation computes result
``index``; the lowering emits the op once per group (``KernelBuilder.group_outputs``),
as ``scf.if`` or ``scf.while`` whose regions hold the nested computations, fused and
lowered like any other. Loop-carried values live in buffers: the body writes fresh
buffers, which are copied back before the next iteration.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import memref, scf
from xdsl.ir import Block, Region

from ..evaluator import Evaluator
from ..fingerprint import fingerprint, structure
from ..ir import Computation, Module
from ..lowering import Kernel
from ..opdef import OpDef, register
from ..shape import Shape

_PREDICATE = Shape((), np.dtype(bool))


class Subcomputation:
    """A nested computation as an HLO attribute: equal, hashed and printed by its
    structure, so CSE, fingerprints and the executable caches see through it."""

    __slots__ = ("computation", "digest", "_key", "_hash")

    def __init__(self, computation: Computation) -> None:
        self.computation = computation
        self.digest = fingerprint(computation)
        self._key = structure(computation)
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


def _result(outputs: list[Shape], attrs, op: str) -> Shape:
    if not 0 <= attrs["index"] < len(outputs):
        raise ValueError(f"{op}: result index {attrs['index']} out of range for {len(outputs)} results")
    return outputs[attrs["index"]]


def _listing(shapes: list[Shape]) -> str:
    return "(" + ", ".join(map(str, shapes)) + ")"


# --- conditional ----------------------------------------------------------------------

def _branches(attrs) -> tuple[Computation, Computation]:
    return attrs["true_branch"].computation, attrs["false_branch"].computation


def _conditional_infer(shapes, attrs):
    true, false = _branches(attrs)
    pred, *operands = shapes
    if pred != _PREDICATE:
        raise TypeError(f"conditional: the predicate must be a 0-d bool, got {pred}")
    expected = _shapes(true.parameters) + _shapes(false.parameters)
    if operands != expected:
        raise TypeError(f"conditional: operands {_listing(operands)} do not match the branches' parameters "
                        f"{_listing(expected)}")
    if _shapes(true.outputs) != _shapes(false.outputs):
        raise TypeError(f"conditional: the branches return different shapes: {_listing(_shapes(true.outputs))} "
                        f"and {_listing(_shapes(false.outputs))}")
    return _result(_shapes(true.outputs), attrs, "conditional")


def _conditional_evaluate(args, attrs, shape):
    true, false = _branches(attrs)
    pred, *operands = args
    n = len(true.parameters)
    branch, inputs = (true, operands[:n]) if pred else (false, operands[n:])
    return _evaluate(branch, inputs)[attrs["index"]]


def _conditional_emit(k, inst, out, operands):
    outs = k.group_outputs(inst)
    if outs is None:
        return
    true, false = _branches(inst.attrs)
    pred, *rest = operands
    n = len(true.parameters)
    results = [outs[i] if i in outs else k.scratch(o.shape) for i, o in enumerate(true.outputs)]
    regions = []
    for branch, args in ((true, rest[:n]), (false, rest[n:])):
        block = Block()
        with k.building(block):
            k.inline(branch, args, results)
            k.insert(scf.YieldOp())
        regions.append(Region(block))
    k.insert(scf.IfOp(k.insert(memref.LoadOp.get(pred, [])), [], *regions))


register(OpDef("conditional", _conditional_infer, _conditional_evaluate, Kernel(_conditional_emit)))


# --- while ----------------------------------------------------------------------------

def _loop(attrs) -> tuple[Computation, Computation, int]:
    """The cond and body computations and the number of carried values."""
    cond, body = attrs["cond"].computation, attrs["body"].computation
    return cond, body, len(body.outputs)


def _while_infer(shapes, attrs):
    cond, body, n = _loop(attrs)
    carried = _shapes(body.outputs)
    if _shapes(body.parameters[:n]) != carried or _shapes(cond.parameters[:n]) != carried:
        raise TypeError(f"while: the body maps {_listing(_shapes(body.parameters[:n]))} to {_listing(carried)}; "
                        f"carried values must keep their shapes and dtypes")
    if _shapes(cond.outputs) != [_PREDICATE]:
        raise TypeError(f"while: the condition must return one 0-d bool, got {_listing(_shapes(cond.outputs))}")
    expected = carried + _shapes(cond.parameters[n:]) + _shapes(body.parameters[n:])
    if list(shapes) != expected:
        raise TypeError(f"while: operands {_listing(list(shapes))} do not match {_listing(expected)}")
    return _result(carried, attrs, "while")


def _while_evaluate(args, attrs, shape):
    cond, body, n = _loop(attrs)
    c = len(cond.parameters) - n
    state, cond_captured, body_captured = list(args[:n]), args[n:n + c], args[n + c:]
    while _evaluate(cond, [*state, *cond_captured])[0]:
        state = _evaluate(body, [*state, *body_captured])
    return state[attrs["index"]]


def _while_emit(k, inst, out, operands):
    outs = k.group_outputs(inst)
    if outs is None:
        return
    cond, body, n = _loop(inst.attrs)
    c = len(cond.parameters) - n
    init, cond_captured, body_captured = operands[:n], operands[n:n + c], operands[n + c:]
    state = [outs[i] if i in outs else k.scratch(o.shape) for i, o in enumerate(body.outputs)]
    updated = [k.scratch(o.shape) for o in body.outputs]
    going = k.scratch(_PREDICATE)
    for source, target in zip(init, state):
        k.copy(source, target)
    before, after = Block(), Block()
    with k.building(before):
        k.inline(cond, [*state, *cond_captured], [going])
        k.insert(scf.ConditionOp(k.insert(memref.LoadOp.get(going, []))))
    with k.building(after):
        k.inline(body, [*state, *body_captured], updated)
        for source, target in zip(updated, state):
            k.copy(source, target)
        k.insert(scf.YieldOp())
    k.insert(scf.WhileOp([], [], Region(before), Region(after)))


register(OpDef("while", _while_infer, _while_evaluate, Kernel(_while_emit)))
