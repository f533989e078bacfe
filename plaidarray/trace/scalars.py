"""The scalar tier: a Python scalar read of one exact op on values already computed.

NumPy-style loops branch on one element at a time: ``if x[i] > 0.5``, ``float(x[i] * w)``.
Such a read is one op on 0-d values that are computed already (an element's view, a Python
scalar's constant), and running it as a graph (its walk, the executable cache's lookup, an
executable's run, the buffer set) cost ~3.5 us of a step's ~6. Where the op's reference
evaluation computes the compiled code's bits (``OpDef.exact_kinds``: comparisons, IEEE's
basic operations, integers wrapping), ``bool()``, ``float()``, ``int()`` and
``operator.index`` take the value from that evaluation instead, on the host: the same
bits, so no value depends on which tier computed it (tested against the kernels op by op).
A short chain of such ops is taken so too (``float(a[i] * w + b)``, ``counts[k] += 1``'s
element read plus 1 stored, ``if x[i] - y[i] > tol``: at most ``MOST_OPS``): each op's
evaluation is its kernel's bits, so their composition is the graph's. The node stays
pending (a later graph that reads it computes it again); anything else (another op or
dtype, an operand on a device or not 0-d, a longer chain) is a read as any other.

``evaluate`` is what reads call: the common cases in C (``_scalars.c``: the same operations
on C scalars, ~0.2 us a chain where ``value`` takes ~2.5), ``value`` for the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import config
from ..backend.transfer import HOST
from ..hlo.opdef import OPS
from ..hlo.shape import Shape
from .node import Node


#: The most ops a scalar read evaluates on the host: a loop's expression of an element or
#: two; past it, the graph's run is cheaper than evaluating its ops one by one in NumPy.
MOST_OPS = 6


def value(node: Node, _evaluated: dict | None = None) -> Any:
    """The value of the pending 0-d ``node`` computed by its ops' reference evaluations,
    where that is exact for their operands and the chain's leaves are computed 0-d values
    on the host; else None. Each pending operand is evaluated once (``where(c > o, c, o)``
    reads ``c`` twice), ``MOST_OPS`` in all with the node's own: entered before it is
    evaluated, so the count bounds the recursion, not the graph's depth."""
    opdef = OPS.get(node.op)  # type: ignore[arg-type]  # None for a placeholder: no op
    operands = node.operands
    if opdef is None or not operands or operands[0].shape.dtype.kind not in opdef.exact_kinds:
        return None
    args = []
    for o in operands:
        buffer = o.buffer
        if buffer is None:
            if _evaluated is None:
                _evaluated = {}
            if o in _evaluated:
                buffer = _evaluated[o]
            else:
                if o.shape.dims or len(_evaluated) >= MOST_OPS - 1:
                    return None
                _evaluated[o] = None  # entered: a DAG never reaches it again from below
                buffer = _evaluated[o] = value(o, _evaluated)
            if buffer is None:
                return None
        elif type(buffer) is not np.ndarray or o.device is not None and o.device.transfers is not HOST:
            return None
        args.append(buffer)
    return opdef.evaluate(args, node.attrs, node.shape)


#: The dtypes ``_scalars.c`` evaluates, by its codes.
C_DTYPES = {np.dtype(t): code for code, t in enumerate(
    [np.float64, np.float32, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8,
     np.bool_], start=1)}
#: The ops ``_scalars.c`` evaluates, by its codes, each with the kinds of its first operand
#: that it evaluates: its ``exact_kinds`` but complex numbers (Python's).
C_OPS = {name: (code, OPS[name].exact_kinds.replace("c", "").encode()) for code, name in enumerate(
    ["add", "subtract", "multiply", "divide", "negate", "not", "and", "or", "xor", "compare", "select"], start=1)}
#: The directions of ``compare``, by ``_scalars.c``'s codes.
C_DIRECTIONS = {name: code for code, name in enumerate(["EQ", "NE", "LT", "LE", "GT", "GE"], start=1)}


def _in_c(fallback: Callable[[Node], Any] = value) -> Callable[[Node], Any] | None:
    """``_scalars.value`` configured, calling ``fallback`` for what it does not evaluate
    (``value``; a test counts the calls), where it is built and ``PLAIDARRAY_PURE_PYTHON``
    does not switch it off; else None."""
    _scalars = config.c_module("plaidarray.trace._scalars")
    if _scalars is None:
        return None
    _scalars.configure(Node, Shape, np.ndarray, HOST, C_DTYPES, C_OPS, C_DIRECTIONS, MOST_OPS, fallback, OPS)
    return _scalars.value


#: The scalar tier's value of a pending 0-d node: a Python scalar of its dtype's value where
#: C evaluates it, else ``value``'s (a 0-d NumPy array, or None: the read runs its graph).
evaluate: Callable[[Node], Any] = _in_c() or value
