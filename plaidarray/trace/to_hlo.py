"""Lazy graph -> HLO computation, with ready nodes bound as numbered parameters."""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Sequence
from operator import attrgetter
from typing import cast

import numpy as np

from ..hlo import Computation, Instruction
from ..hlo.shape import Shape
from ..hlo.ir import attr_key, topological_order
from .node import GRAPH_IN_C, Node


_SERIAL = attrgetter("serial")

#: Pure generators of at most this many bytes that live arrays refer to are stored by a
#: read like any live value; larger ones are recomputed where they are used.
KEPT_GENERATOR_BYTES = 1 << 20


#: What a walk gives: the key, the buffers, the outputs, the nodes of the key's rows in order.
Walked = tuple[tuple, list[np.ndarray], list[Node], list[Node]]


class PendingGraph:
    """The pending graph of some roots, walked once: the structural key the executable
    cache is looked up by, the buffers of its ready nodes (the parameters, in order), the
    nodes it computes, and, on a cache miss, its HLO.

    The nodes computed are the roots, then every other pending node of the graph that a
    live array refers to and whose value depends on a buffer. Keeping those values is what
    bounds a user's loop: ``x = f(x); float(loss(x))`` computes ``x`` along with the loss,
    so the next step's graph starts from its buffer (PyTorch/XLA's LazyTensor realises
    live tensors at each sync point alike). A large pure generator (``xp.zeros(n)``) is
    cheaper to recompute than to store, and stays pending; a small one is stored, so that
    the step after it has the structure of every later step (one compile fewer)."""

    __slots__ = ("key", "buffers", "outputs", "_order")

    def __init__(self, roots: list[Node]) -> None:
        self.key, self.buffers, self.outputs, self._order = walk_pending(roots)

    def computation(self) -> Computation:
        """The HLO computation of this graph: ready nodes become parameters in the order
        of ``buffers``. Structurally equal graphs give equal computations."""
        return computation(self.key, self._order)


def walk_pending(roots: list[Node]) -> Walked:
    """What ``PendingGraph`` holds, as a tuple: what a read needs when its executable is
    cached (every read of a value walks; building the object would add a third to the
    walk). The walk of ``_graph.c`` when it is built, else ``walk``."""
    walked: Walked | None = GRAPH_IN_C.walk(roots, KEPT_GENERATOR_BYTES) if GRAPH_IN_C is not None else None
    return walked or walk(roots)


def keep_untracked(graph_key: Hashable) -> None:
    """Have the garbage collector stop tracking what a walk's graph key holds that can be
    in no reference cycle (``_graph.untrack``: its rows), before the executable cache keeps
    it in a key, one per size a loop meets; in Python, the collector untracks what it can
    itself."""
    if GRAPH_IN_C is not None:
        GRAPH_IN_C.untrack(graph_key)


def computation(key: tuple, order: list[Node]) -> Computation:
    """The HLO computation of a walked graph (``PendingGraph.computation``)."""
    built: list[Instruction] = []
    params: list[Instruction] = []
    for node, row in zip(order, key[0]):
        if len(row) == 2:  # (dims, dtype): a parameter
            inst = Instruction("parameter", (), {"number": len(params), "shape": node.shape}, node.shape)
            params.append(inst)
        else:
            inst = Instruction(cast(str, node.op), [built[i] for i in row[2]], node.attrs, node.shape)
        built.append(inst)
    # ``built`` is in the rows' order, the nodes' creation order: the computation orders its
    # instructions by a walk from its outputs, as every computation does (its kernels' order).
    return Computation("main", params, [built[i] for i in key[1]])


def walk(roots: list[Node]) -> Walked:
    """The walk of ``PendingGraph``: its key, buffers, outputs and the nodes of its rows
    in order. ``_graph.c`` does the same in C; this is its definition, and the walk where
    that is not built."""
    # The pending nodes, found without regard to order; then numbered in creation
    # order (``Node.serial``), which is topological since a node is made after its
    # operands, and which repeats whenever a loop records the same ops again. A ready
    # operand is numbered (a parameter) where it is first used.
    seen = set(roots)
    stack = list(seen)
    pop, push, add = stack.pop, stack.append, seen.add
    while stack:
        for o in pop().operands:
            if o.buffer is None and o not in seen and o.reused is None:
                add(o)
                push(o)
    pending = sorted(seen, key=_SERIAL) if len(seen) > 1 else list(seen)
    index: dict[Node, int] = {}
    order: list[Node] = []
    rows: list[tuple] = []
    reads: list[bool] = []  # per row: whether its value depends on a buffer
    buffers: list[np.ndarray] = []
    outputs = list(roots)
    root = roots[0] if len(roots) == 1 else None  # a read of one value, live itself: not again
    for node in pending:
        at = []
        depends = False
        for o in node.operands:
            i = index.get(o)
            if i is None:
                head = o.reused
                if head is None:  # a ready node, first used here: a parameter
                    i = index[o] = len(rows)
                    shape = o.shape
                    rows.append((shape.dims, shape.dtype))
                    reads.append(True)
                    buffers.append(cast(np.ndarray, o.buffer))
                    order.append(o)
                else:  # a reused scalar: its parameter and broadcast, again at each use
                    (scalar,) = o.operands
                    shape = scalar.shape
                    i = len(rows) + 1
                    rows += ((shape.dims, shape.dtype), (head[0], head[1], (i - 1,), head[2], head[3]))
                    buffers.append(cast(np.ndarray, scalar.buffer))
                    order += (scalar, o)
                    reads += (True, True)
                depends = True
            elif reads[i]:
                depends = True
            at.append(i)
        if node.depth < 0 and node.is_placeholder:
            raise node.attrs["trace"].value_error()
        shape = node.shape
        attrs = node.attrs
        index[node] = len(rows)
        rows.append((node.op, attr_key(attrs) if attrs else (), tuple(at), shape.dims, shape.dtype))
        reads.append(depends)
        order.append(node)
        if node.arrays and node is not root and _kept(shape, depends):
            outputs.append(node)
    seen.clear()  # the references left are the graph's own and the walk's ``pending``, ``index`` and ``order``
    o = node = _NO_NODE
    outputs += _shared(pending, index, rows, reads, root)
    if len(outputs) > len(roots):
        outputs = list(dict.fromkeys(outputs))
    return (tuple(rows), tuple([index[r] for r in outputs])), buffers, outputs, order


#: What ``walk``'s loop variables hold once its walk is done: no pending node of any graph.
_NO_NODE = Node.ready(np.empty(0))


def _shared(pending: list[Node], index: dict[Node, int], rows: list[tuple], reads: list[bool],
            root: Node | None) -> list[Node]:
    """The pending nodes of a walk that no array holds but something outside the graph
    refers to (a pending node of another graph: the state a loop's later readings are
    computed from), kept as outputs by the rule live values are kept by (``_kept``), so
    that no later graph computes them again (not tuples: their elements are the values).
    Each is referred to by its consumers' operand tuples and by the walk's ``pending``,
    ``index`` and ``order``; anything more is outside."""
    uses = [0] * len(rows)
    for row in rows:
        if len(row) == 5:
            for i in row[2]:
                uses[i] += 1
    found = []
    for node in pending:
        i = index[node]
        # getrefcount's argument and this loop's variable are two references more
        if node is not root and not node.arrays and sys.getrefcount(node) > uses[i] + 5 and \
                type(node.shape) is Shape and _kept(node.shape, reads[i]):
            found.append(node)
    return found


def _kept(shape: Shape, depends: bool) -> bool:
    """Whether a pending value others will read is computed as an output: where it depends
    on a buffer, or is a generator of at most ``KEPT_GENERATOR_BYTES`` (larger ones are
    cheaper to compute again than to keep)."""
    return depends or shape.size * shape.dtype.itemsize <= KEPT_GENERATOR_BYTES


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
    order = topological_order(roots, lambda n: id(n) in built or is_bound(n) or n.is_placeholder)
    for node in order:
        if id(node) in built:
            continue
        if is_bound(node):
            built[id(node)] = parameter(node)
            bound.append(node)
        elif node.is_placeholder:
            raise node.attrs["trace"].value_error()
        else:
            built[id(node)] = Instruction(cast(str, node.op), [built[id(o)] for o in node.operands], node.attrs,
                                          node.shape)
    # The nodes' order is the instructions' (one each, with the same operands): not walked again.
    return Computation("main", params, [built[id(r)] for r in roots], [built[id(n)] for n in order]), bound
