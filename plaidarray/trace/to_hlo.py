"""Lazy graph -> HLO computation, with ready nodes bound as numbered parameters."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..hlo import Computation, Instruction
from ..hlo.ir import attr_key, topological_order
from .node import Node


def pending_graph(roots: list[Node]) -> tuple[Computation, list[np.ndarray]]:
    """The HLO computation producing ``roots`` from the buffers of ready nodes, and those
    buffers in parameter order. Structurally equal graphs give equal computations."""
    comp, bound = graph_to_computation(roots, (), lambda node: node.buffer is not None)
    return comp, [node.buffer for node in bound]


def pending_key(roots: Sequence[Node]) -> tuple[tuple, list[np.ndarray], list[Node]]:
    """A structural key of the pending graph of ``roots``, the buffers of its ready nodes,
    and the nodes it computes: ``roots``, then every other pending node of the graph that
    a live array refers to. Read off the nodes without building HLO (the executable
    cache's hit path).

    Keeping the live values is what bounds a user's loop: ``x = f(x); float(loss(x))``
    computes ``x`` along with the loss, so the next step's graph starts from its buffer
    (PyTorch/XLA's LazyTensor realises live tensors at each sync point alike).

    Graphs with equal keys become equal computations under :func:`pending_graph`, whose
    parameters are the ready nodes in this same order (both walk the graph with
    ``topological_order`` and the same leaves: the live nodes are reached from
    ``roots``, so walking from them as well visits the nodes in the same order)."""
    index: dict[int, int] = {}
    rows: list[object] = []
    reads: list[bool] = []  # per row: whether its value depends on a buffer
    buffers: list[np.ndarray] = []
    outputs = list(roots)
    for node in topological_order(roots, _is_pending_leaf):
        index[id(node)] = len(rows)
        shape = node.shape
        if node.buffer is not None:
            rows.append((shape.dims, shape.dtype))
            reads.append(True)
            buffers.append(node.buffer)
        elif node.is_placeholder:
            raise node.attrs["trace"].value_error()
        else:
            operands = tuple(index[id(o)] for o in node.operands)
            rows.append((node.op, attr_key(node.attrs), operands, shape.dims, shape.dtype))
            reads.append(any(reads[i] for i in operands))
            if node.arrays and reads[-1]:  # a pure generator (xp.zeros(n)) is cheaper to recompute than to store
                outputs.append(node)
    outputs = list(dict.fromkeys(outputs))
    return (tuple(rows), tuple(index[id(r)] for r in outputs)), buffers, outputs


def _is_pending_leaf(node: Node) -> bool:
    return node.buffer is not None or node.is_placeholder


def graph_to_computation(roots: Sequence[Node], inputs: Sequence[Node],
                         is_bound: Callable[[Node], bool]) -> tuple[Computation, list[Node]]:
    """The HLO computation producing ``roots``. ``inputs`` become parameters 0..k-1; every
    node for which ``is_bound`` holds becomes a further parameter instead of being
    computed (returned in parameter order). Reaching any other placeholder raises the
    TracerError of the trace it belongs to."""
    built: dict[int, Instruction] = {}
    params: list[Instruction] = []
    bound: list[Node] = []

    def parameter(node: Node) -> Instruction:
        inst = Instruction("parameter", (), {"number": len(params), "shape": node.shape}, node.shape)
        params.append(inst)
        return inst

    for node in inputs:
        built[id(node)] = parameter(node)
    for node in topological_order(roots, lambda n: id(n) in built or is_bound(n) or n.is_placeholder):
        if id(node) in built:
            continue
        if is_bound(node):
            built[id(node)] = parameter(node)
            bound.append(node)
        elif node.is_placeholder:
            raise node.attrs["trace"].value_error()
        else:
            built[id(node)] = Instruction(node.op, [built[id(o)] for o in node.operands], node.attrs, node.shape)
    return Computation("main", params, [built[id(r)] for r in roots]), bound
