"""The innermost loops of a warp's iteration that its lanes take in turn (lane ``l``
iterations ``l, l + 32...``), rather than each running them whole: a softmax's row
writes its exponentials and its quotients so, beside the row's reductions
(``warp_reductions.py``).

A loop's iterations may be split so when nothing in the iteration can tell: the loop
counts from 0 by 1, and each of its stores writes element ``[..., i]`` (``i`` its
induction variable, the other indices fixed in it) of an argument (an output or a
temporary) or of the lane's own memory (an ``alloca``), which the iteration reads or
writes elsewhere only at ``[..., j]`` in loops from 0 whose element ``j`` is this lane's
too: split loops, and the warp's reductions (element ``j`` on lane ``j mod 32``:
``warp_reductions.py``). So lane ``l`` reads back only what it wrote (a kernel's
iterations, its rows, never read each other's elements: each ran on a thread of its
own). The loops found so are the largest set that meets these rules together (a loop
that reads a split loop's memory must be split itself)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from xdsl.dialects import memref, scf
from xdsl.ir import BlockArgument, Operation

from ..llvm.emitter import _constant_int


def _from_zero(loop: scf.ForOp) -> bool:
    return _constant_int(loop.lb) == 0 and _constant_int(loop.step) == 1


def _innermost(root: Operation) -> Iterator[scf.ForOp]:
    for op in root.walk():
        if isinstance(op, scf.ForOp) and not any(inner.regions for inner in op.body.block.ops):
            yield op


def _at_element(access: memref.LoadOp | memref.StoreOp, loop: scf.ForOp) -> bool:
    """Whether ``access`` is to element ``[..., i]`` of ``loop``'s iteration ``i``, its
    other indices fixed in the loop."""
    block = loop.body.block
    inside = {r for op in block.ops for r in op.results} | set(block.args)
    indices = list(access.indices)
    return (bool(indices) and indices[-1] is block.args[0] and not inside & set(indices[:-1])
            and access.parent_block() is block)


def _writes_elements(loop: scf.ForOp) -> bool:
    """The rules a loop meets alone: from 0 by 1, every store at its element, into an
    argument (an output) or the lane's own memory."""
    stores = [op for op in loop.body.block.ops if isinstance(op, memref.StoreOp)]
    return _from_zero(loop) and bool(stores) and all(
        _at_element(s, loop) and (isinstance(s.memref, BlockArgument) or isinstance(s.memref.owner, memref.AllocaOp))
        for s in stores)


def split_loops(root: Operation, reduction: Callable[[scf.ForOp], bool]) -> frozenset[scf.ForOp]:
    """The innermost loops under ``root`` (a warp's iteration) whose iterations its lanes
    may take in turn; ``reduction`` says which loops the warp's reductions are."""
    split = {loop for loop in _innermost(root) if not reduction(loop) and _writes_elements(loop)}
    changed = True
    while changed:
        changed = False
        for loop in list(split):
            if not _keeps_to_its_lanes(loop, root, split, reduction):
                split.discard(loop)
                changed = True
    return frozenset(split)


def _keeps_to_its_lanes(loop: scf.ForOp, root: Operation, split: set[scf.ForOp],
                        reduction: Callable[[scf.ForOp], bool]) -> bool:
    """Whether every access under ``root`` to what ``loop`` writes reads or writes only
    the lane's elements (the module's rules)."""
    written = {op.memref for op in loop.body.block.ops if isinstance(op, memref.StoreOp)}
    for op in root.walk():
        if not isinstance(op, (memref.LoadOp, memref.StoreOp)) or op.memref not in written:
            continue
        parent = op.parent_op()
        if parent is loop and _at_element(op, loop):
            continue
        if not (isinstance(parent, scf.ForOp) and (parent in split or (isinstance(op, memref.LoadOp)
                                                                        and reduction(parent)))
                and _from_zero(parent) and _at_element(op, parent)):
            return False
    return True
