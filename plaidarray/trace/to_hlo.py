"""Lazy graph -> HLO computation, with ready nodes bound as numbered parameters."""

from __future__ import annotations

import numpy as np

from ..hlo import Computation, Instruction
from .node import Node


def pending_graph(roots: list[Node]) -> tuple[Computation, list[np.ndarray]]:
    """The HLO computation producing ``roots`` from the buffers of ready nodes, and those
    buffers in parameter order. Structurally equal graphs give equal computations."""
    built: dict[int, Instruction] = {}
    buffers: list[np.ndarray] = []
    params: list[Instruction] = []
    for root in roots:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in built:
                continue
            if node.buffer is not None:
                inst = Instruction("parameter", (), {"number": len(params), "shape": node.shape}, node.shape)
                params.append(inst)
                buffers.append(node.buffer)
                built[id(node)] = inst
            elif expanded:
                built[id(node)] = Instruction(node.op, [built[id(o)] for o in node.operands], node.attrs, node.shape)
            else:
                stack.append((node, True))
                stack.extend((o, False) for o in reversed(node.operands) if id(o) not in built)
    return Computation("main", params, [built[id(r)] for r in roots]), buffers
