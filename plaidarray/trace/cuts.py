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

When the anchor comes back with other dimensions (a history grown at each step and
never read), or the graph cut where the anchor was chosen holds a node of the anchor's
signature at other dimensions (an earlier iteration of such a loop), the loop's sizes change from one
graph to the next: its graphs, and the read that ends the loop, compile with every size
a run-time value at once (``sizes_changing``), not first for their own sizes and again
shape-generic when the next graph brings others; the first graph's iterations, then
kernel groups of one key, are lowered once.
"""

from __future__ import annotations

from collections.abc import Hashable

from . import node as node_module
from .node import Node

#: The signature of the node where the last graph was cut (None before any cut).
_anchor: Hashable | None = None
#: The dimensions of that node, and whether they differ from the cut's before at the anchor.
_anchor_dims: tuple = ()
_changing = False
#: Whether the graph cut at the anchor when it became the anchor had sizes changing between iterations.
_loop_changes = False
#: Whether a graph was cut since the last graph run otherwise (a read).
_since_read = False


def signature(node: Node) -> Hashable:
    """What a cut point looks like: sizes left out, so that loops whose shapes change
    find it too."""
    return (node.op, tuple(sorted(node.attrs.items())) if node.attrs else (), len(node.shape.dims),
            node.shape.dtype, tuple(o.op for o in node.operands))


def cut_here(node: Node) -> bool:
    """Whether ``node``, deeper than the bound, should run now (see the module docstring)."""
    global _anchor, _anchor_dims, _changing, _loop_changes, _since_read
    mark = signature(node)
    if _anchor is not None and mark != _anchor and node.depth <= 2 * node_module.MAX_PENDING:
        return False
    if mark != _anchor:
        _loop_changes = _recurs_at_other_dims(node, mark)
    _changing = _loop_changes or (mark == _anchor and node.shape.dims != _anchor_dims)
    _anchor, _anchor_dims = mark, node.shape.dims
    _since_read = True
    return True


def _recurs_at_other_dims(node: Node, mark: Hashable) -> bool:
    """Whether the pending graph of ``node`` holds a node of its signature ``mark`` with
    other dimensions: the same step of an earlier iteration of a loop whose sizes change."""
    seen = {id(node)}
    frontier = list(node.operands)
    while frontier:
        above: list[Node] = []
        for o in frontier:
            if o.buffer is not None or id(o) in seen:
                continue
            seen.add(id(o))
            if o.op == node.op and o.shape.dims != node.shape.dims and signature(o) == mark:
                return True
            above.extend(o.operands)
        frontier = above
    return False


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
