"""The scalar tier: a Python scalar read of one exact op on values already computed.

NumPy-style loops branch on one element at a time: ``if x[i] > 0.5``, ``float(x[i] * w)``.
Such a read is one op on 0-d values that are computed already (an element's view, a Python
scalar's constant), and running it as a graph (its walk, the executable cache's lookup, an
executable's run, the buffer set) cost ~3.5 us of a step's ~6. Where the op's reference
evaluation computes the compiled code's bits (``OpDef.exact_kinds``: comparisons, IEEE's
basic operations, integers wrapping), ``bool()``, ``float()``, ``int()`` and
``operator.index`` take the value from that evaluation instead, on the host: the same
bits, so no value depends on which tier computed it (tested against the kernels op by op).
The node stays pending (a later graph that reads it computes it again, one op); anything
else (another op or dtype, an operand pending or on a device) is a read as any other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend.transfer import HOST
from ..hlo.opdef import OPS
from .node import Node


def value(node: Node) -> Any:
    """The value of the pending 0-d ``node`` computed by its op's reference evaluation,
    where that is exact for its operands and they are computed 0-d values on the host;
    else None."""
    opdef = OPS.get(node.op)  # type: ignore[arg-type]  # None for a placeholder: no op
    operands = node.operands
    if opdef is None or not operands or operands[0].shape.dtype.kind not in opdef.exact_kinds:
        return None
    args = []
    for o in operands:
        buffer = o.buffer
        if type(buffer) is not np.ndarray or o.device is not None and o.device.transfers is not HOST:
            return None
        args.append(buffer)
    return opdef.evaluate(args, node.attrs, node.shape)
