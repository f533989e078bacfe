"""Concatenations that extend an earlier one.

A NumPy-style loop that keeps a list and stacks it at every step (``rows.append(v);
m = xp.stack(rows)``) concatenates one more operand each time. As one op, that is a new
graph structure at every step, one parameter wider, and so a compile at every step, each
slower than the last (JAX eager compiles a concatenation per operand count alike). So
the results of the last few concatenations are remembered with their operands, and a
concatenation whose first operands are those of a remembered one concatenates that
result with the rest: the loop records the same two-operand concatenation at every step,
whose changing sizes one shape-generic executable serves. A concatenation copies, so
the values are the same bits either way.

Operands are matched by node, not by Array: an array written since (``a[i] = v``)
points to another node and no longer matches. A result is held by its node, so a write
to the array returned leaves it as it was (a node held elsewhere is never updated in
place: ``Array._store``), by an array of the table's own. At most ``KEPT`` results of at most ``KEPT_BYTES`` each are
held, and operands weakly: the table holds bounded memory. A concatenation whose first
operand is the latest one's result (``h = xp.concat([h, row])``: the caller extends it
already) is not remembered, nor are traced values: a trace's placeholders stand for other
values at each call.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple

from ..trace.array import Array
from ..trace.node import TRACED, Node

#: Concatenations remembered, the latest last.
KEPT = 4
#: The largest result remembered, in bytes.
KEPT_BYTES = 16 << 20


class _Made(NamedTuple):
    """A remembered concatenation (a tuple: made at every concatenation, a frozen
    dataclass cost a microsecond more)."""

    key: Hashable
    operands: tuple[weakref.ref[Node], ...]
    #: An array of the table's own: a pending result is computed with the graph that
    #: reads it, as for any live array, rather than recorded again into the next one.
    result: Array


_recent: deque[_Made] = deque(maxlen=KEPT)
#: The result of the latest concatenation: one that starts with it is extended already.
_last: weakref.ref[Node] | None = None
_lock = threading.Lock()


def _earlier(key: Hashable, nodes: Sequence[Node]) -> tuple[Array, int] | None:
    """The remembered result of ``key`` made of the most of ``nodes``' first operands,
    and how many."""
    best: tuple[Array, int] | None = None
    with _lock:
        for made in _recent:
            k = len(made.operands)
            # The first operand, then the key, tell most entries apart at once.
            if (made.operands[0]() is nodes[0] and made.key == key and k <= len(nodes)
                    and (best is None or k > best[1]) and all(ref() is n for ref, n in zip(made.operands, nodes))):
                best = (made.result, k)
    return best


def extend(key: Hashable, arrays: Sequence[Array], build: Callable[[Array | None, Sequence[Array]], Array]) -> Array:
    """The concatenation of ``arrays`` that ``key`` names (the function and its
    arguments), checked already: ``build(earlier, rest)`` concatenates ``rest`` after
    ``earlier``, the result of a remembered concatenation of the first arrays (None:
    ``rest`` is every array)."""
    nodes = [a._node for a in arrays]
    if any(n.depth == TRACED for n in nodes):
        return build(None, arrays)
    found = _earlier(key, nodes)
    if found is not None and found[1] == len(arrays):
        return Array(found[0]._node)  # remembered already
    result = build(None, arrays) if found is None else build(found[0], arrays[found[1]:])
    global _last
    made = result._node
    with _lock:
        extending = _last is not None and _last() is nodes[0]
        _last = weakref.ref(made)
        if not extending and made.depth != TRACED and made.shape.size * made.shape.dtype.itemsize <= KEPT_BYTES:
            _recent.append(_Made(key, tuple([weakref.ref(n) for n in nodes]), Array(made)))
    return result


def forget() -> None:
    """Drop every remembered result (``plaidarray.clear_cache``)."""
    with _lock:
        _recent.clear()
