"""Lowerings of ``conditional`` and ``while``: the op is emitted once per group of
result instructions (``KernelBuilder.group_outputs``), as ``scf.if`` or ``scf.while``
whose regions hold the nested computations, fused and lowered like any other.
Loop-carried values live in buffers: the body writes fresh buffers, which are copied
back before the next iteration."""

from __future__ import annotations

from xdsl.dialects import memref, scf
from xdsl.ir import Block, Region

from ...hlo.ops.control_flow import PREDICATE, branches, loop
from ..lowering import Kernel, register_lowering


def _conditional_emit(k, inst, out, operands):
    outs = k.group_outputs(inst)
    if outs is None:
        return
    true, false = branches(inst.attrs)
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


register_lowering("conditional", Kernel(_conditional_emit))


def _while_emit(k, inst, out, operands):
    outs = k.group_outputs(inst)
    if outs is None:
        return
    cond, body, n = loop(inst.attrs)
    c = len(cond.parameters) - n
    init, cond_captured, body_captured = operands[:n], operands[n:n + c], operands[n + c:]
    state = [outs[i] if i in outs else k.scratch(o.shape) for i, o in enumerate(body.outputs)]
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
