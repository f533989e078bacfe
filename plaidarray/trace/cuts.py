"""Where a long pending graph is cut: at a point of the same structure each time.

A loop that records without reading would grow its graph without bound, so a node
deeper than ``PLAIDARRAY_MAX_PENDING`` runs (with every live value) where it is recorded.
Cut at the first node past the bound, the graphs of a loop start and end at points that
drift against its body, and no two share a structure: a 15-iteration k-means compiled
9 graphs. So the node where a graph is cut is remembered by its signature (its op,
attributes, rank and dtype, and its operands' ops); past the bound, later graphs run
only at a node of that signature, which a loop's body records again once per
iteration, so their graphs hold whole iterations from the same point and repeat. A graph
that meets none runs at twice the bound, and its node becomes the anchor.

The first graph of a loop also holds what the loop starts from, if that is still pending
(a running total's ``zeros``): cut at the anchor, it would be code for that graph alone.
When it holds several short iterations after such a prefix, it is cut at the earliest
node of the anchor's signature instead, and the depths of what follows are counted again
from there (``recorded_again``), so the next graph holds the iterations every later one
does: a small first graph, then one structure.

When the anchor comes back with other dimensions (a history grown at each step and
never read), or the graph cut where the anchor was chosen holds a node of the anchor's
signature at other dimensions (an earlier iteration of such a loop), the loop's sizes change from one
graph to the next: its graphs, and the read that ends the loop, compile with every size
a run-time value at once (``sizes_changing``), not first for their own sizes and again
shape-generic when the next graph brings others; the first graph's iterations, then
kernel groups of one key, are lowered once.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable

from . import node as node_module
from .node import Node, pending_graph

#: The signature of the node where the last graph was cut (None before any cut).
_anchor: Hashable | None = None
#: The dimensions of that node, and whether they differ from the cut's before at the anchor.
_anchor_dims: tuple = ()
_changing = False
#: Whether the graph cut at the anchor when it became the anchor had sizes changing between iterations.
_loop_changes = False
#: Whether a graph was cut since the last graph run otherwise (a read).
_since_read = False
#: Earlier iterations of a loop in its first cut graph from which that graph is cut at the
#: earliest (``_first_recurrence``).
SHORT_ITERATIONS = 2


def signature(node: Node) -> Hashable:
    """What a cut point looks like: sizes left out, so that loops whose shapes change
    find it too."""
    return (node.op, tuple(sorted(node.attrs.items())) if node.attrs else (), len(node.shape.dims),
            node.shape.dtype, tuple(o.op for o in node.operands))


#: Nodes recorded past the bound and not cut at (not of the anchor's signature), newest
#: last, at most ``WAITING`` of them: the next graph cut at its anchor runs them too. A
#: loop's values may not all be ancestors of the anchor (a position updated from the
#: velocity the cut runs, a count of bounces); left pending, each later graph would hold
#: their whole history again, and a longer one each time, until they reach twice the
#: bound: a 60-step simulation ran 11 graphs of 106 to 157 ops, no two of one structure.
#: Weak references: a node's references decide whether an update may be in place.
_waiting: list[weakref.ref[Node]] = []
WAITING = 64


def cut_at(node: Node) -> Node | None:
    """The node to run now for ``node``, deeper than the bound (see the module docstring):
    ``node`` itself, None to go on recording, or, at the first cut of a loop, the earliest
    pending node of its signature (:func:`recorded_again` then follows the run)."""
    global _anchor, _anchor_dims, _changing, _loop_changes, _since_read
    mark = signature(node)
    if _anchor is not None and mark != _anchor and node.depth <= 2 * node_module.MAX_PENDING:
        _waiting.append(weakref.ref(node))
        del _waiting[:-WAITING]
        return None
    first = node
    if mark != _anchor or not _since_read:
        first, _loop_changes = _first_recurrence(node)
    _changing = _loop_changes or (mark == _anchor and node.shape.dims != _anchor_dims)
    _anchor, _anchor_dims = mark, first.shape.dims
    _since_read = True
    return first


def _first_recurrence(node: Node) -> tuple[Node, bool]:
    """Where the first graph of a loop is cut, and whether the loop's sizes change (a node
    of ``node``'s signature in its pending graph has other dimensions: the same
    step of an earlier iteration). The graph is cut at ``node`` unless it holds at least
    ``SHORT_ITERATIONS`` earlier iterations after a prefix (the pending values a loop starts
    from): then at the earliest of them that leaves the rest within the bound, since such
    short iterations fuse together, and the first graph's code, prefix and all, would
    serve no other. Not if the sizes change: the next graph would start from sizes so
    small that they equal others by chance, and the symbols that ties
    (``dynamic.Pattern``) part again at a further compile."""
    recurrences = [o for o in pending_graph(node)[:-1] if o.op == node.op and _alike(o, node)]
    changes = any(o.shape.dims != node.shape.dims for o in recurrences)
    if len(recurrences) < SHORT_ITERATIONS or changes:
        return node, changes
    earliest = recurrences[0]
    # Cut at the first iteration only if it is deeper than later iterations add (their
    # mean), by more than the one of a Python scalar's broadcast at the graph's start; and
    # where what follows is within the bound, that broadcast's one included (a graph cut
    # at twice the bound holds more).
    if (earliest.depth - 1) * len(recurrences) <= node.depth - earliest.depth:
        return node, changes
    return next((r for r in recurrences if node.depth - r.depth < node_module.MAX_PENDING), node), changes


def _alike(a: Node, b: Node) -> bool:
    """Whether ``a`` and ``b`` have one ``signature``, compared without making either (a
    loop cut at every step compares its graph's nodes of the cut's op at each cut)."""
    sa, sb = a.shape, b.shape
    return (a.attrs == b.attrs and len(sa.dims) == len(sb.dims) and sa.dtype == sb.dtype
            and len(a.operands) == len(b.operands) and all(x.op == y.op for x, y in zip(a.operands, b.operands)))


def waiting(run: Node, node: Node) -> list[Node]:
    """The nodes to run with ``run``, cut for ``node``: those recorded past the bound
    since the last cut and still pending, where the cut is at ``node`` itself (a first
    graph cut at an earlier iteration leaves the later ones to the next graph)."""
    found = [n for n in (ref() for ref in _waiting) if n is not None and n.buffer is None] if run is node else []
    _waiting.clear()
    return found


#: ``node.reads_mark()`` when ``past_bound`` last counted a graph's depths again and found
#: it past the bound still, or when a cut ran (``counted_fresh``): depths go stale only
#: when a read computes some of a graph's nodes, so until the next read a loop recording
#: past the bound counts none again (each count walks the pending graph; a loop without
#: reads, cut every few steps, walked its graph again after each cut: 2000 steps of
#: ``x * 0.999 + 0.001`` took 9 ms against 6).
_counted_at = -1


def past_bound(node: Node) -> bool:
    """Whether ``node``, recorded deeper than the bound, is past it still once its pending
    graph's depths are counted again (``recorded_again``) where a read may have computed
    some of its nodes since. A node's depth is counted when it is recorded, from its
    operands' then: a loop's state that its read does not depend on (a Kalman filter's
    covariance, updated after the state it reads) was recorded on nodes that the next read
    computed, and its depth grew by a step's at every step until it was cut: a read and
    ~1.7 cuts a step, where its pending graph was 7 nodes deep."""
    global _counted_at
    mark = node_module.reads_mark()
    if mark == _counted_at:
        return True
    recorded_again(node)
    if node.depth <= node_module.MAX_PENDING:
        return False
    _counted_at = mark
    return True


def counted_fresh() -> None:
    """A cut ran (``api.graph.wrap``): what it leaves pending was recorded from the values
    it computed, or counted again (``recorded_again``), so no depth is stale until a read."""
    global _counted_at
    _counted_at = node_module.reads_mark()


def _recorded_again_in_python(node: Node) -> None:
    """Count the depths of ``node``'s pending graph again after an earlier node of it ran
    (``cut_at``): the iterations recorded after that node then reach the bound where
    every later graph of the loop does, so the next graph holds as many and repeats."""
    for n in pending_graph(node):
        n.depth = 1 + max((o.depth for o in n.operands), default=0)


#: ``_recorded_again_in_python``, in C where it is built (``_graph.recount_depths``).
recorded_again: Callable[[Node], None] = \
    node_module.GRAPH_IN_C.recount_depths if node_module.GRAPH_IN_C is not None else _recorded_again_in_python


def sizes_changing(cut: bool) -> bool | None:
    """Whether the last two graphs were cut at the anchor with other dimensions there, for
    a graph cut (``cut``) or the first graph run otherwise since (the read that ends such
    a loop holds its last iterations, whose groups the loop's graphs compiled already);
    None for a graph that neither is cut nor ends a loop that was."""
    global _changing, _since_read
    changing = _changing if _since_read else None
    if not cut:
        _changing = _since_read = False
    return changing
