"""Joins of values computed already: a small concatenation of host values copied at once.

A NumPy-style loop keeps values in a list and stacks or joins them at each step: the
mean of the last 20 losses (``xp.mean(xp.stack(losses[-20:]))``), rows appended to a
table and joined. Recorded, a stack of 20 scalars is 20 reshapes and three
concatenations (``JOIN_OPERANDS`` operands each) and a fourth of those, ~30 us, and its
read walks and keys them all, ~15 us more, where NumPy's whole stack takes 12. A
concatenation copies its operands, so where every operand is a value computed on the
host (``stack``'s each read with its unit axis) and the result is at most
``MOST_BYTES``, the device's transfers copy them into the result now
(``TransferManager.joined``): the bits the op's kernel would write, nothing recorded,
and a result that is a computed value itself, so a later graph reads it as a parameter.
A pending operand, one of a device whose transfers copy nothing themselves, and a large
result (whose join fused code may read without writing it out) are recorded as before.
"""

from __future__ import annotations

import math

from .node import Node, value_read

#: The largest result joined at once, in bytes: a loop's list of scalars or short rows.
MOST_BYTES = 64 << 10


def joined(parts: list[tuple[Node, tuple[int, ...]]], axis: int) -> Node | None:
    """A node holding the values of ``parts`` (nodes, each with the dims it is read at:
    ``stack`` reads each operand with a unit axis; of one dtype, alike off ``axis``: the
    caller checked) concatenated along ``axis``, copied now; None where they are to be
    recorded (see the module)."""
    device = parts[0][0].device  # every operand's: a value of no array's (a literal) is recorded
    if device is None:
        return None
    buffers = []
    nbytes = 0
    for node, dims in parts:
        buffer = node.buffer
        if buffer is None or node.device is not device:
            return None
        nbytes += math.prod(dims) * node.shape.dtype.itemsize
        if nbytes > MOST_BYTES:
            return None
        buffers.append((buffer, dims))
    buffer = device.transfers.joined(buffers, axis)
    if buffer is None:
        return None
    value_read()  # a value taken: no recipe keeps this copy (``api/recipes.py``)
    node = Node.ready(buffer, device)
    node.owned = True  # memory of its own, which a store may write in place
    return node
