"""Loop passes after ``convert-linalg-to-loops``: sibling loop fusion and array contraction.

Each ``linalg.generic`` became its own loop nest, so softmax is five nests (two fills,
the max, the sum of exponentials, the division), each streaming the whole array from
memory and each a separate hand-off to the thread pool. When consecutive nests walk
the same rows, and a buffer one writes is read by the other only at the row being
computed, they can run as one nest: row ``i`` of every nest before row ``i + 1``
(XLA's sibling and multi-output fusion; MLIR's ``scf-parallel-loop-fusion``). A row then
stays in the L1 cache from the first nest to the last, and the data is read from memory
once.

``fuse-parallel-loops`` merges adjacent top-level loops that ``convert-linalg-to-loops``
marked parallel on their outermost dimension (``PARALLEL_LOOP``) and whose trip counts
match, when every buffer one of them writes and the other touches is accessed, in both,
only at the current iteration along some dimension (the loop's induction variable is
that index). Iterations then touch disjoint parts of every shared buffer, so running
them interleaved computes the same values, and the merged loop stays parallel.

``contract-temporaries`` then shrinks a temporary buffer that is used inside a single
top-level loop, only at the current iteration along one dimension, to that one slice:
a stack buffer (``memref.alloca``) of the other dimensions, reused by every iteration
and private to each thread. Softmax's row maxima and sums become scalars in registers,
its exponentials a row on the stack: no temporary touches memory beyond the L1 cache.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ..hlo.symbolic import Dim, Sym
from .element_types import element_bytes
from .linalg_to_loops import PARALLEL_LOOP
from .run_time_sizes import dims_attr, read_dims, symbol_index

def _main(module: ModuleOp) -> func.FuncOp:
    """``main``, whose body's operations are the top-level loop nests."""
    return next(op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")


def _constant_value(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _size_value(value: SSAValue) -> Dim | None:
    """The size ``value`` holds: a constant, or a run-time size (``run_time_sizes.py``)."""
    k = symbol_index(value)
    return _constant_value(value) if k is None else Sym(k, 0)


def _row_loop_extent(op: Operation) -> Dim | None:
    """The trip count of ``op`` if it is a loop from 0 by 1, parallel along its own
    (outermost) dimension and carrying no values; else None."""
    if not isinstance(op, scf.ForOp) or op.iter_args or PARALLEL_LOOP not in op.attributes:
        return None
    depth, extent, _ = read_dims(op.attributes[PARALLEL_LOOP])
    if depth != 0 or _constant_value(op.lb) != 0 or _constant_value(op.step) != 1:
        return None
    return extent if _size_value(op.ub) == extent else None


@dataclass(frozen=True)
class _Access:
    buffer: SSAValue
    indices: tuple[SSAValue, ...]
    is_store: bool


def _accesses(loop: scf.ForOp) -> list[_Access] | None:
    """The loads and stores in ``loop``; None if a buffer is used otherwise (passed to
    a call, viewed), which this analysis cannot follow."""
    found = []
    for inner in loop.body.walk():
        if isinstance(inner, memref.LoadOp):
            found.append(_Access(inner.memref, tuple(inner.indices), False))
        elif isinstance(inner, memref.StoreOp):
            found.append(_Access(inner.memref, tuple(inner.indices), True))
        elif any(isinstance(v.type, MemRefType) for v in inner.operands):
            return None
    return found


def _row_dims(access: _Access, induction: SSAValue) -> set[int]:
    """The dimensions of ``access`` indexed by the loop's induction variable itself."""
    return {d for d, index in enumerate(access.indices) if index is induction}


def _common_row_dim(accesses: Iterable[tuple[_Access, SSAValue]]) -> int | None:
    """A dimension that every access indexes by its own loop's induction variable."""
    dims: set[int] | None = None
    for access, induction in accesses:
        rows = _row_dims(access, induction)
        dims = rows if dims is None else dims & rows
        if not dims:
            return None
    return min(dims) if dims else None


def _induction(loop: scf.ForOp) -> SSAValue:
    return loop.body.block.args[0]


def _movable(loop: scf.ForOp, block: Block) -> bool:
    """Whether every value ``loop`` uses is defined inside it, is an argument of
    ``main``, a top-level ``arith`` constant (hoisted before every loop) or a run-time
    size (loaded at the top of ``main``): then its body may move into an earlier loop."""
    for inner in loop.body.walk():
        for value in inner.operands:
            if isinstance(value, BlockArgument):
                if value.block is block or _inside(value.block.parent_op(), loop):
                    continue
            elif _inside(value.owner, loop) or symbol_index(value) is not None or (
                    isinstance(value.owner, arith.ConstantOp) and value.owner.parent_block() is block):
                continue
            return False
    return True


def _inside(op: Operation | Block | None, loop: scf.ForOp) -> bool:
    while op is not None and op is not loop:
        op = op.parent_op()
    return op is loop


@dataclass
class _Summary:
    """What fusion needs to know of a top-level loop: the buffers it writes, and for
    each buffer it touches, the dimensions that every access of it indexes by the
    loop's induction variable. Kept up to date as loops are fused into it, so that each
    loop's body is walked once however long the run of fused loops grows."""

    written: set[SSAValue]
    rows: dict[SSAValue, set[int]]

    def merge(self, other: _Summary) -> None:
        self.written |= other.written
        for buffer, dims in other.rows.items():
            self.rows[buffer] = self.rows[buffer] & dims if buffer in self.rows else dims


def _summary(loop: scf.ForOp) -> _Summary | None:
    """The summary of a row loop (see ``_row_loop_extent``); None for any other
    operation, or if the loop uses a buffer otherwise than by loads and stores."""
    if _row_loop_extent(loop) is None:
        return None
    accesses = _accesses(loop)
    if accesses is None:
        return None
    summary = _Summary(set(), {})
    induction = _induction(loop)
    for access in accesses:
        if access.is_store:
            summary.written.add(access.buffer)
        dims = _row_dims(access, induction)
        summary.rows[access.buffer] = summary.rows.get(access.buffer, dims) & dims
    return summary


def _can_fuse(first: scf.ForOp, first_summary: _Summary, second: scf.ForOp, second_summary: _Summary,
              block: Block) -> bool:
    if _row_loop_extent(second) != _row_loop_extent(first) or not _movable(second, block):
        return False
    # Every buffer one loop writes and the other touches must be accessed only at the
    # current row along a dimension common to both loops.
    for buffer, dims in second_summary.rows.items():
        written = buffer in first_summary.written or buffer in second_summary.written
        if written and buffer in first_summary.rows and not dims & first_summary.rows[buffer]:
            return False
    return True


def _fuse(first: scf.ForOp, second: scf.ForOp) -> None:
    """Append ``second``'s body to ``first``'s, then erase ``second``."""
    _induction(second).replace_all_uses_with(_induction(first))
    body, terminator = first.body.block, first.body.block.last_op
    assert terminator is not None  # first's scf.yield
    for op in list(second.body.block.ops)[:-1]:  # all but second's scf.yield
        op.detach()
        body.insert_op_before(op, terminator)
    depth, extent, work = read_dims(first.attributes[PARALLEL_LOOP])
    second_work = read_dims(second.attributes[PARALLEL_LOOP])[2]
    first.attributes[PARALLEL_LOOP] = dims_attr([depth, extent, work + second_work])
    second.detach()
    second.erase()


def _hoist_constants(block: Block) -> None:
    """Move the top-level ``arith`` constants before every other operation, so that a
    body moved into an earlier loop still sees the constants it uses defined before it."""
    anchor = next((op for op in block.ops if not isinstance(op, arith.ConstantOp)), None)
    if anchor is None:
        return
    passed = False
    for op in list(block.ops):
        passed = passed or op is anchor
        if passed and isinstance(op, arith.ConstantOp):
            op.detach()
            block.insert_op_before(op, anchor)


class FuseParallelLoops(ModulePass):
    """Merge adjacent top-level parallel loops over the same rows (module docstring)."""

    name = "fuse-parallel-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        block = _main(op).body.block
        _hoist_constants(block)
        previous: tuple[scf.ForOp, _Summary] | None = None
        for current in list(block.ops):
            if isinstance(current, arith.ConstantOp):
                continue
            if not isinstance(current, scf.ForOp) or (summary := _summary(current)) is None:
                previous = None
            elif previous is not None and _can_fuse(*previous, current, summary, block):
                _fuse(previous[0], current)
                previous[1].merge(summary)
            else:
                previous = (current, summary)


def _top_level_loop(op: Operation, block: Block) -> scf.ForOp | None:
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current if isinstance(current, scf.ForOp) else None


def _slice_bytes(t: MemRefType, dim: int) -> int | None:
    """The bytes of a slice of a buffer of type ``t`` without dimension ``dim``; None if
    that depends on run-time sizes (such a slice is not put on the stack)."""
    sizes = [n for d, n in enumerate(t.get_shape()) if d != dim]
    if DYNAMIC_INDEX in sizes:
        return None
    return math.prod(sizes) * element_bytes(t.element_type)


def _contract(buffer: SSAValue, loop: scf.ForOp, dim: int) -> None:
    """Replace ``buffer`` in ``loop`` by a stack slice without dimension ``dim``."""
    t = cast(MemRefType, buffer.type)
    shape = [n for d, n in enumerate(t.get_shape()) if d != dim]
    alloca = memref.AllocaOp.get(t.element_type, alignment=64, shape=shape)
    Rewriter.insert_op(alloca, InsertPoint.at_start(loop.body.block))
    for use in list(buffer.uses):
        access = cast("memref.LoadOp | memref.StoreOp", use.operation)  # the only uses ContractTemporaries admits
        indices = [index for d, index in enumerate(access.indices) if d != dim]
        new: memref.LoadOp | memref.StoreOp
        if isinstance(access, memref.LoadOp):
            new = load = memref.LoadOp.get(alloca.memref, indices)
            access.results[0].replace_all_uses_with(load.res)
        else:
            new = memref.StoreOp.get(access.value, alloca.memref, indices)
        Rewriter.insert_op(new, InsertPoint.before(access))
        access.detach()
        access.erase()


class ContractTemporaries(ModulePass):
    """Shrink temporaries used in one loop at its current iteration to one slice
    (module docstring). ``temporaries`` are the indices of ``main``'s arguments that
    are temporaries (not parameters or outputs, whose contents are seen outside);
    ``max_slice_bytes`` is the target's limit on a slice, which lives on the stack of
    every thread running the loop (``Target.stack_slice_bytes`` on llvm-cpu)."""

    name = "contract-temporaries"

    def __init__(self, temporaries: Sequence[int], max_slice_bytes: int) -> None:
        self.temporaries = tuple(temporaries)
        self.max_slice_bytes = max_slice_bytes

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        block = _main(op).body.block
        for index in self.temporaries:
            buffer = block.args[index]
            uses = [use.operation for use in buffer.uses]
            if not uses or not all(isinstance(u, (memref.LoadOp, memref.StoreOp)) and u.memref is buffer
                                   for u in uses):
                continue
            loops = {id(loop): loop for loop in (_top_level_loop(u, block) for u in uses)}
            if len(loops) != 1:
                continue
            (loop,) = loops.values()
            if loop is None:
                continue
            induction = _induction(loop)
            dim = _common_row_dim((_Access(u.memref, tuple(u.indices), False), induction) for u in uses)
            if dim is None:
                continue
            size = _slice_bytes(cast(MemRefType, buffer.type), dim)
            if size is not None and size <= self.max_slice_bytes:
                _contract(buffer, loop, dim)


def drop_unused_arguments(module: ModuleOp, candidates: Sequence[int]) -> list[int]:
    """Erase the arguments of ``main`` among ``candidates`` that nothing uses any more
    (contracted temporaries); return the candidates kept, in order."""
    main = _main(module)
    block = main.body.block
    args = [block.args[i] for i in candidates]
    kept = [i for i, arg in zip(candidates, args) if arg.uses]
    for arg in args:
        if not arg.uses:
            block.erase_arg(arg)
    main.update_function_type()
    return kept
