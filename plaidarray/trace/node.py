"""Nodes of the lazy graph that arrays point to.

A node is either pending (an op over operand nodes, not yet computed) or ready (it
holds a device buffer). Materialising a node computes its buffer and drops its
operands, so a long-lived array does not keep its whole history alive. While a
function is traced (``plaidarray.jit``, the bodies of ``cond``/``while_loop``), its
arguments are placeholders: nodes that stand for any value of their shape and dtype.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..hlo.opdef import lookup
from ..hlo.shape import Shape

#: Held while the graph is walked (cache keys, HLO, traces) and while materialised nodes
#: get their buffers: ``set_buffer`` drops a node's operands, so a walk on another thread
#: could otherwise see a node that is neither pending nor ready.
GRAPH_LOCK = threading.RLock()


class Node:
    __slots__ = ("op", "operands", "attrs", "shape", "buffer", "__weakref__")

    def __init__(self, op: str | None, operands: tuple[Node, ...], attrs: dict[str, Any], shape: Shape,
                 buffer: np.ndarray | None = None) -> None:
        self.op = op
        self.operands = operands
        self.attrs = attrs
        self.shape = shape
        self.buffer = buffer

    @classmethod
    def ready(cls, buffer: np.ndarray) -> Node:
        return cls(None, (), {}, Shape(buffer.shape, buffer.dtype), buffer)

    @classmethod
    def apply(cls, op: str, operands: tuple[Node, ...], **attrs: Any) -> Node:
        """Record ``op`` over ``operands``; its shape rule runs now, so shape and dtype
        errors surface at the call that caused them."""
        opdef = lookup(op)
        opdef.check_arity(len(operands))
        return cls(op, operands, attrs, opdef.infer([o.shape for o in operands], attrs))

    @classmethod
    def placeholder(cls, shape: Shape, trace: Any) -> Node:
        """An argument of the function ``trace`` is tracing (see ``trace/tracing.py``):
        it has no value, so materialising anything that depends on it is an error."""
        return cls("parameter", (), {"trace": trace}, shape)

    @property
    def is_placeholder(self) -> bool:
        return self.op == "parameter"

    def set_buffer(self, buffer: np.ndarray) -> None:
        """Make the node ready (the caller holds ``GRAPH_LOCK``)."""
        self.buffer = buffer
        self.op, self.operands, self.attrs = None, (), {}

