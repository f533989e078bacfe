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
points to another node and no longer matches, as long as a store could not write the
node in place, which a store does where nothing else holds it (``Array._store``). So a
result is held by its node, by an array of the table's own (a write to the array returned
leaves it as it was), and so are the operands that are values already (computed, or a
caller's); a pending operand is held weakly, since holding it would make it a value its
graph keeps (``to_hlo._shared``), and a read may compute it later (a row of a stacked list
that its array holds), after which a store may write it in place. Such an operand,
computed since, is matched only while the result still holds what was copied from it,
bit for bit, or while the result is pending (its graph holds the operand: no store writes
it in place); once matched, the next entry holds it. (Held weakly alone, a row computed by
a read and then written in place was joined again from the stale result.) At most
``KEPT`` results of at most ``KEPT_BYTES`` each are held, with the values among their
operands, which are no larger: the table holds bounded memory. A concatenation whose first
operand is the latest one's result (``h = xp.concat([h, row])``: the caller extends it
already) or a view of it (a ring buffer's ``xp.concat([buf[1:], x])``, whose window is new
at each step) is not remembered, nor are traced values: a trace's placeholders stand for
other values at each call. ``_graph.Join`` (``concat``'s C path) records such a
concatenation that no remembered one starts with, reading ``_recent`` and setting
``_last`` in this module's globals as ``extend`` does.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple, cast

import numpy as np

from ..trace.array import Array
from ..trace.node import TRACED, Node
from ..trace.views import ViewOf

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
    #: The operands that were values when it was made, held: no store writes them in place.
    held: tuple[Node, ...]
    #: The positions of the operands that were pending when it was made.
    pending: tuple[int, ...]


_recent: deque[_Made] = deque(maxlen=KEPT)
#: The result of the latest concatenation: one that starts with it is extended already.
_last: weakref.ref[Node] | None = None
_lock = threading.Lock()


def _earlier(key: Hashable, nodes: Sequence[Node]) -> _Made | None:
    """The remembered concatenation of ``key`` made of the most of ``nodes``' first
    operands. The latest are looked at first (a list stacked at each step is longer each
    time), each only where it has more operands than the best found: its operands'
    identity, one list comparison whose test per item runs in C, is the one part that
    grows with the list."""
    best: _Made | None = None
    with _lock:
        for made in reversed(_recent):
            operands = made.operands
            k = len(operands)
            # The first operand, then the key, tell most entries apart at once.
            if (k <= len(nodes) and (best is None or k > len(best.operands)) and operands[0]() is nodes[0]
                    and made.key == key and [ref() for ref in operands] == nodes[:k] and _unchanged(made, nodes)):
                best = made
    return best


def _unchanged(made: _Made, nodes: Sequence[Node]) -> bool:
    """Whether each operand of ``made`` that was pending when it was made (``nodes``'
    first) and is a value now holds what ``made``'s result copied from it, bit for bit
    (see the module): true while the result is pending; false where either is not a host
    array of the result's dtype, which is not compared."""
    result = made.result._node.buffer
    if result is None or not made.pending:
        return True
    kind, axis = cast(tuple, made.key)[:2]  # (the function's name, its axis, the dtype)
    k = len(made.operands)
    for i in made.pending:
        buffer = nodes[i].buffer
        if buffer is None:
            continue
        if type(buffer) is not np.ndarray or type(result) is not np.ndarray or buffer.dtype != result.dtype:
            return False
        # counted from the end: the operand computed since is most often the newest
        if kind == "stack":
            copied = result[i] if axis == 0 else result[(slice(None),) * axis + (i,)]
        elif axis is None:
            start = result.size - sum([n.shape.size for n in nodes[i:k]])
            copied = result[start:start + buffer.size]
        else:
            start = result.shape[axis] - sum([n.shape.dims[axis] for n in nodes[i:k]])
            copied = result[(slice(None),) * axis + (slice(start, start + buffer.shape[axis]),)]
        if copied.tobytes() != buffer.tobytes():
            return False
    return True


def extend(key: Hashable, arrays: Sequence[Array], build: Callable[[Array | None, Sequence[Array]], Array]) -> Array:
    """The concatenation of ``arrays`` that ``key`` names (the function and its
    arguments), checked already: ``build(earlier, rest)`` concatenates ``rest`` after
    ``earlier``, the result of a remembered concatenation of the first arrays (None:
    ``rest`` is every array). A remembered one's operands were never traced (no traced
    concatenation is remembered), so only the rest are asked, and the new entry's weak
    references are the earlier one's and the rest's, its values the earlier one's, those
    of its pending operands computed since and the rest's: a list stacked at each step
    costs the new operands' work, not the whole list's, beyond the identity test."""
    nodes = [a._node for a in arrays]
    found = _earlier(key, nodes)
    done = len(found.operands) if found is not None else 0
    if TRACED in [n.depth for n in nodes[done:]]:
        return build(None, arrays)
    if found is not None and done == len(arrays):
        return Array(found.result._node)  # remembered already
    result = build(None, arrays) if found is None else build(found.result, arrays[done:])
    global _last
    made = result._node
    with _lock:
        extending = _extends_latest(arrays[0])
        _last = weakref.ref(made)
        if not extending and made.depth != TRACED and made.shape.size * made.shape.dtype.itemsize <= KEPT_BYTES:
            earlier, held, pending = (found.operands, found.held, found.pending) if found is not None else ((), (), ())
            if pending:  # those a read computed since were checked by ``_earlier``: held from now on
                held += tuple([nodes[i] for i in pending if nodes[i].buffer is not None])
                pending = tuple([i for i in pending if nodes[i].buffer is None])
            rest = nodes[done:]
            _recent.append(_Made(key, earlier + tuple([weakref.ref(n) for n in rest]), Array(made),
                                 held + tuple([n for n in rest if n.buffer is not None]),
                                 pending + tuple([done + j for j, n in enumerate(rest) if n.buffer is None])))
    return result


def _extends_latest(first: Array) -> bool:
    """Whether ``first``, a concatenation's first operand, is the latest one's result or a
    view of it (see the module)."""
    last = _last() if _last is not None else None
    if last is None:
        return False
    if first._node is last:
        return True
    record = first._base
    root = record.family.root() if type(record) is ViewOf else None
    return root is not None and root._node is last


def forget() -> None:
    """Drop every remembered result (``plaidarray.clear_cache``)."""
    with _lock:
        _recent.clear()
