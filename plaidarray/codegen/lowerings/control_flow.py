"""Lowerings of ``conditional`` and ``while``: kernels of tuple shape, writing one buffer
per result, as ``scf.if`` or ``scf.while`` whose regions hold the nested computations,
fused and lowered like any other.
Loop-carried values live in buffers: the body writes fresh buffers, which are copied
back before the next iteration."""

from __future__ import annotations

from xdsl.dialects import memref, scf
from xdsl.ir import Block, Region

from ...hlo.ops.control_flow import PREDICATE, branches, loop
from ..lowering import Kernel, register_lowering


def _conditional_emit(k, inst, results, operands):
    true, false = branches(inst.attrs)
    pred, *rest = operands
    n = len(true.parameters)
    regions = []
    for branch, args in ((true, rest[:n]), (false, rest[n:])):
        block = Block()
        with k.building(block):
            k.inline(branch, args, results)
            k.insert(scf.YieldOp())
        regions.append(Region(block))
    k.insert(scf.IfOp(k.insert(memref.LoadOp.get(pred, [])), [], *regions))


register_lowering("conditional", Kernel(_conditional_emit))


def _while_emit(k, inst, state, operands):
    cond, body, n = loop(inst.attrs)
    c = len(cond.parameters) - n
    init, cond_captured, body_captured = operands[:n], operands[n:n + c], operands[n + c:]
    updated = [k.scratch(o.shape) for o in body.outputs]
    going = k.scratch(PREDICATE)
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


register_lowering("while", Kernel(_while_emit))
