"""Reductions shared by the threads of a warp, or of a CUDA block's warps, to the host's
bits.

A kernel whose iterations are reductions (:func:`lanes`: every innermost loop of an
iteration a reduction of one kind below, or writing only each thread's own memory; no
branch, no call) runs each iteration of its chunkable loop on a warp instead of a thread
(a row of a row reduction; loops that write elements too are the lanes' in turn:
``lane_loops.py``), and, without a chunkable loop (a whole-array reduction) or where its
rows are few and long, on a CUDA block of ``BLOCK_WARPS`` warps (``renderer.py``'s group
entry). The group's threads
run the iteration's code together on the same values, but for three things:

- **Accumulations** (a float sum or product, ``reassoc``: ``emitter._accumulate``, whose
  order of summation defines the bits) keep the host's order: within each block of
  ``_BLOCK`` elements partial ``p`` of ``K`` adds elements ``p, p + K, p + 2K...`` as the
  host's does, on lane ``p mod 32`` of a warp (a lane holds two partials where K is 64),
  so a warp's loads are 32 consecutive elements; the partials combine in the host's tree,
  its first level in the lane where K is 64, the others by ``shfl.sync.down`` pairing
  partial ``p`` with ``p + half`` as the host's tree does; the block's sum, sent to every
  lane (``shfl.sync.idx``), joins the host's cascade of block sums, which each thread
  keeps alike. A block of warps takes the host's blocks in rounds, warp ``w`` block
  ``r * W + w``, and every thread carries a round's sums (through shared memory) into its
  cascade in the blocks' order; the tail after the last whole block is each warp's. A
  whole-array reduction of a matrix is the host's rows one after another, each row's
  total added to the accumulator in turn: the grid's warps take the rows first (or the
  block's warps in rounds), a row each, and the totals are added in the rows' order.
- **Exact reductions** (integer sums, products and bitwise ones, integer and float max and
  min: their value does not depend on the order) take elements ``t, t + T...`` on thread
  ``t`` of ``T`` and combine the lanes' values by ``shfl.sync.bfly``, then the warps'
  through shared memory.
- **Stores** to memory that is not the thread's own (not an ``alloca``) are made by the
  group's thread 0, between the group's barriers (``bar.warp.sync``, or ``bar.sync`` for
  a block: a store seen by the group's later loads, its earlier loads made before it).

So a row reduction's loads are coalesced and its row is 32 threads' work, and a
whole-array reduction is a CUDA block's, and where it is long (a kernel's one loop, of
two runs of blocks at least) the grid's first: a launch over the grid computes the sums
of aligned runs of 2^p blocks, which are subtrees of the host's cascade, and the
kernel's own launch carries them onto its level p in order (:func:`_runs_over_the_grid`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from llvmlite import ir
from xdsl.dialects import func, memref, scf
from xdsl.ir import Operation, SSAValue

from ...codegen.linalg_to_loops import PARALLEL_LOOP
from ..llvm.emitter import (_BLOCK, _LEVELS, _RULES, INDEX, FunctionEmitter, _Accumulation, _accumulating,
                            _accumulations, _carry, _cascade_total, _constant_int, _counted, _fewer_partials,
                            llvm_type)
from ..llvm.kernel_source import Segment
from .lane_loops import split_loops
from .warp_ops import WARP, is_zero, private, shared_array, shared_at, shuffle, special, sync, thread_index

#: The warps of the CUDA block that runs a kernel without a chunkable loop (a whole-array
#: reduction): they take the host's blocks of elements in turn.
BLOCK_WARPS = 8


def _all_ones(ty: ir.Type) -> ir.Constant:
    return ir.Constant(ty, -1)


def _smallest(ty: ir.Type) -> ir.Constant:
    return ir.Constant(ty, -(1 << (ty.width - 1)))


def _largest(ty: ir.Type) -> ir.Constant:
    return ir.Constant(ty, (1 << (ty.width - 1)) - 1)


#: The reductions whose value does not depend on the order of their terms, by combining
#: operation: the identity a lane without terms starts from.
EXACT: dict[str, Callable[[ir.Type], ir.Constant]] = {
    "arith.addi": lambda ty: ir.Constant(ty, 0), "arith.muli": lambda ty: ir.Constant(ty, 1),
    "arith.andi": _all_ones, "arith.ori": lambda ty: ir.Constant(ty, 0), "arith.xori": lambda ty: ir.Constant(ty, 0),
    "arith.maxsi": _smallest, "arith.minsi": _largest,
    "arith.maxui": lambda ty: ir.Constant(ty, 0), "arith.minui": _all_ones,
    "arith.maximumf": lambda ty: ir.Constant(ty, float("-inf")),
    "arith.minimumf": lambda ty: ir.Constant(ty, float("inf")),
}

#: Operations a warp cannot run as one thread would: calls (the runtime's routines keep
#: state of their own) and heap allocations.
_PER_THREAD = frozenset({"func.call", "memref.alloc"})


def _exact(combine: Operation) -> bool:
    return combine.name in EXACT


def _reductions(loop: Any) -> tuple[list[_Accumulation], bool] | None:
    """The reductions of ``loop`` and whether they are accumulations (the host's order),
    if a warp can share it: all of one kind, and every store of its body theirs."""
    stores = {id(op) for op in loop.body.block.ops if isinstance(op, memref.StoreOp)}
    for combines in (_accumulating, _exact):
        found = _accumulations(loop, combines)
        if found and {id(a.store) for a in found} == stores:
            return found, combines is _accumulating
    return None


def _own(buffer: SSAValue) -> bool:
    """Whether ``buffer`` is each lane's own (an ``alloca``)."""
    return isinstance(buffer.owner, memref.AllocaOp)


def _is_reduction(loop: scf.ForOp) -> bool:
    return _reductions(loop) is not None


def _shared_reductions(ops: Sequence[Operation], split: frozenset[scf.ForOp]) -> bool | None:
    """Whether ``ops`` hold a reduction a warp can share; None where a warp cannot run them
    together: a branch, a call, or an innermost loop that is neither such a reduction, nor
    one of the loops ``split`` among the lanes (``lane_loops.py``), nor one writing only
    the lane's own memory (which every lane runs alike, as a variance's loop that keeps
    its mean)."""
    found = False
    for op in ops:
        if op.name in _PER_THREAD:
            return None
        if not op.regions:
            continue
        if not isinstance(op, scf.ForOp):
            return None
        inner = list(op.body.block.ops)
        if any(o.name in _PER_THREAD for o in inner):
            return None
        if any(o.regions for o in inner):
            nested = _shared_reductions(inner, split)
            if nested is None:
                return None
            found |= nested
        elif _reductions(op) is not None:
            found = True
        elif op not in split and not all(_own(o.memref) for o in inner if isinstance(o, memref.StoreOp)):
            return None
    return found


#: Rows few enough to take a block of warps each, if they are long (``FEW_ROWS`` warps
#: would leave a GPU's SMs idle).
FEW_ROWS = 64


def lanes(ops: list[Operation], segment: Segment) -> int:
    """A warp for each iteration of a kernel whose iterations are reductions it can share
    (the chunkable loop outermost), ``BLOCK_WARPS`` warps for such a kernel without a
    chunkable loop (a whole-array reduction) or of few long rows, a thread for any other."""
    if len(ops) == 1 and isinstance(ops[0], scf.ForOp) and PARALLEL_LOOP in ops[0].attributes:
        if segment.depth:
            return 1  # a column reduction: its threads' loads are coalesced already
        iteration = list(ops[0].body.block.ops)
    elif any(PARALLEL_LOOP in op.attributes for op in ops):
        return 1
    else:
        return WARP * BLOCK_WARPS if _shared_reductions(ops, frozenset()) else 1
    if not _shared_reductions(iteration, split_loops(ops[0], _is_reduction)):
        return 1
    longest = max((_constant_int(loop.ub) or 0 for loop in ops[0].walk()
                   if isinstance(loop, scf.ForOp) and _is_reduction(loop)), default=0)
    if (isinstance(segment.extent, int) and segment.extent <= FEW_ROWS and longest >= BLOCK_WARPS * _BLOCK
            and _shared_reductions(iteration, frozenset())):
        return WARP * BLOCK_WARPS
    return WARP


def emit_reduction(e: FunctionEmitter, loop: Any, lb: ir.Value, ub: ir.Value) -> bool:
    """Emit ``loop`` shared by the group, if it is a reduction it can share, or a block
    of warps' loop over reductions into the same accumulators (:func:`_rows_by_warps`)."""
    found = _reductions(loop)
    if found is None and e.lanes == WARP:
        return _by_lanes_in_turn(e, loop, lb, ub)
    if found is None:
        return _rows_by_warps(e, loop, lb, ub)
    totals = _totals(e, loop, lb, ub, found)
    for a, combine, total in zip(found[0], _combines(e, found), totals):
        _store_total(e, a, combine, total)
    return True


def _by_lanes_in_turn(e: FunctionEmitter, loop: Any, lb: ir.Value, ub: ir.Value) -> bool:
    """A loop of the warp's iteration that its lanes take in turn, lane ``l`` iterations
    ``l, l + 32...``, if it is one (``lane_loops.py``); its stores are each lane's own."""
    root = loop
    while not isinstance(root.parent_op(), func.FuncOp):
        root = root.parent_op()
    if loop not in split_loops(root, _is_reduction):
        return False
    b = e.builder
    lanes, e.lanes = e.lanes, 1

    def iteration(i: ir.Value) -> None:
        e.values[loop.body.block.args[0]] = i
        e.emit_ops(list(loop.body.block.ops)[:-1])
    _counted(e, b.add(lb, special(e, "laneid")), ub, ir.Constant(INDEX, WARP), iteration)
    e.lanes = lanes
    return True


def _count(e: FunctionEmitter, lb: ir.Value, ub: ir.Value) -> ir.Value:
    b = e.builder
    n = b.sub(ub, lb)
    return b.select(b.icmp_signed("<", n, ir.Constant(INDEX, 0)), ir.Constant(INDEX, 0), n)


def _totals(e: FunctionEmitter, loop: Any, lb: ir.Value, ub: ir.Value,
            found: tuple[list[_Accumulation], bool]) -> list[ir.Value]:
    """The totals of the reductions ``found`` in ``loop`` (every thread of the group holds
    them), their accumulators' slots released."""
    reductions, accumulating = found
    totals = (_accumulate if accumulating else _reduce_exactly)(e, loop, lb, ub, _count(e, lb, ub), reductions)
    for a in reductions:
        del e.slots[a.load], e.slots[a.store]
    return totals


def _combines(e: FunctionEmitter, found: tuple[list[_Accumulation], bool]
              ) -> list[Callable[[ir.Value, ir.Value], ir.Value]]:
    """How each reduction adds a total to its accumulator: as the host's ``_accumulate``
    does (``fadd``, ``fmul``), or by its own operation."""
    reductions, accumulating = found
    if accumulating:
        return [getattr(e.builder, "fmul" if a.combine.name == "arith.mulf" else "fadd") for a in reductions]
    return [_combine(e, a) for a in reductions]


def _rows_by_warps(e: FunctionEmitter, loop: Any, lb: ir.Value, ub: ir.Value) -> bool:
    """A loop whose body is one reduction loop into accumulators it does not move (a
    whole-array reduction of a matrix: the host's rows one after another), its iterations
    taken by the block's warps in rounds, warp ``w`` iteration ``r * W + w`` of round
    ``r``, a warp's reduction each; every thread adds the round's totals (through shared
    memory) to the accumulators' values in the iterations' order, as the host adds each
    row's total, and thread 0 stores them at the end. The rows of a kernel's one loop
    nest are the grid's first (:func:`_row_totals_over_the_grid`)."""
    body = list(loop.body.block.ops)[:-1]
    if len(body) != 1 or not isinstance(body[0], scf.ForOp):
        return False
    inner = body[0]
    found = _reductions(inner)
    if found is None:
        return False
    reductions, _ = found
    inside = {r for op in loop.walk() for r in op.results} | {*loop.body.block.args, *inner.body.block.args}
    if any(v in inside for a in reductions for v in (a.load.memref, *a.load.indices)):
        return False
    b = e.builder
    types = [llvm_type(a.load.results[0].type) for a in reductions]
    rows = _count(e, lb, ub)
    combines = _combines(e, found)

    def row_totals(row: ir.Value) -> list[ir.Value]:
        e.values[loop.body.block.args[0]] = b.add(lb, row)
        lanes, e.lanes = e.lanes, WARP
        totals = _totals(e, inner, e.v(inner.lb), e.v(inner.ub), found)
        e.lanes = lanes
        return totals

    grid = isinstance(lb, ir.Constant) and isinstance(ub, ir.Constant) and _one_loop_nest(loop)
    if grid:
        _row_totals_over_the_grid(e, max(ub.constant - lb.constant, 0), len(reductions), row_totals)
    running = [private(e, ty, 1) for ty in types]
    for a, ty, slot in zip(reductions, types, running):
        sync(e)  # the accumulator's first value, as thread 0 stored it
        address, elem = e.address(a.load.memref, list(a.load.indices))
        value = b.load(address, typ=elem)
        b.store(b.trunc(value, ty) if elem != ty else value, slot)
    def added(row: ir.Value, totals: list[ir.Value]) -> None:
        for ty, slot, combine, total in zip(types, running, combines, totals):
            b.store(combine(b.load(slot, typ=ty), total), slot)

    if grid:
        def add(row: ir.Value) -> None:
            added(row, [b.load(_scratch_slot(e, b.add(b.mul(row, ir.Constant(INDEX, len(types))),
                                                      ir.Constant(INDEX, k))), typ=ty) for k, ty in enumerate(types)])
        _counted(e, ir.Constant(INDEX, 0), rows, ir.Constant(INDEX, 1), add)
    else:
        _by_warps_in_rounds(e, types, ir.Constant(INDEX, 0), rows, row_totals, added)
    for a, ty, slot in zip(reductions, types, running):
        def store(a: _Accumulation = a, ty: ir.Type = ty, slot: ir.Value = slot) -> None:
            address, elem = e.address(a.load.memref, list(a.load.indices))
            value = b.load(slot, typ=ty)
            b.store(b.zext(value, elem) if elem != ty else value, address)
        once(e, a.load.memref, store)
    return True


def _one_loop_nest(loop: Any) -> bool:
    """Whether ``loop`` is its kernel's one loop nest (its body's others run once)."""
    return isinstance(loop.parent_op(), func.FuncOp) and not any(
        op.regions and op is not loop for op in loop.parent_block().ops)


def _scratch_slot(e: FunctionEmitter, index: ir.Value) -> ir.Value:
    """Slot ``index`` of the scratch buffer of a reduction over the grid (8 bytes each),
    which the executable passes as the kernel's table of imports."""
    assert e.imports_table is not None, "a kernel's body has its table of imports"
    return e.builder.gep(e.imports_table, [index], source_etype=ir.IntType(64))


def _row_totals_over_the_grid(e: FunctionEmitter, rows: int, count: int,
                              row_totals: Callable[[ir.Value], list[ir.Value]]) -> None:
    """In the launches over the grid (a range from -1): warp ``v`` of the grid's ``V``
    computes the totals of rows ``v, v + V...`` into the scratch buffer, ``count`` a row,
    and the launch returns. The kernel's own launch then adds them in the rows' order."""
    b = e.builder
    e.runs = rows * count
    with b.if_then(b.icmp_signed("<", e.function.args[-2], ir.Constant(INDEX, 0))):
        warps = e.lanes // WARP
        warp = b.add(b.mul(special(e, "ctaid.x"), ir.Constant(INDEX, warps)),
                     b.udiv(thread_index(e), ir.Constant(INDEX, WARP)))

        def row(index: ir.Value) -> None:
            totals = row_totals(index)
            with b.if_then(is_zero(e, special(e, "laneid"))):
                for k, total in enumerate(totals):
                    b.store(total, _scratch_slot(e, b.add(b.mul(index, ir.Constant(INDEX, count)),
                                                          ir.Constant(INDEX, k))))
        _counted(e, warp, ir.Constant(INDEX, rows), b.mul(special(e, "nctaid.x"), ir.Constant(INDEX, warps)), row)
        b.ret_void()


def _element(e: FunctionEmitter, loop: Any, lb: ir.Value, index: ir.Value, slots: dict[Any, ir.Value]) -> None:
    """The loop's body for element ``index`` (from ``lb``), each reduction's accumulator
    the lane's slot ``slots[reduction]``."""
    e.values[loop.body.block.args[0]] = e.builder.add(lb, index)
    for a, slot in slots.items():
        e.slots[a.load] = e.slots[a.store] = slot
    e.emit_ops(list(loop.body.block.ops)[:-1])  # its scf.yield aside


def _store_total(e: FunctionEmitter, a: _Accumulation, combine: Callable[[ir.Value, ir.Value], ir.Value],
                 total: ir.Value) -> None:
    """The accumulator combined with the group's ``total`` (every thread holds it)."""
    b = e.builder

    def store() -> None:
        address, elem = e.address(a.load.memref, list(a.load.indices))
        value = b.load(address, typ=elem)
        value = combine(b.trunc(value, total.type) if elem != total.type else value, total)
        b.store(b.zext(value, elem) if elem != total.type else value, address)
    once(e, a.load.memref, store)


def once(e: FunctionEmitter, buffer: SSAValue, store: Callable[[], None]) -> None:
    """``store`` into ``buffer`` made once for the group: by its thread 0 between the
    group's barriers, unless the buffer is the thread's own; by none in the launches
    that compute a reduction's runs (:func:`_runs_over_the_grid`: a range from -1)."""
    if _own(buffer):
        store()
        return
    sync(e)
    b = e.builder
    first = is_zero(e, thread_index(e))
    if e.lanes > WARP:
        first = b.and_(first, b.icmp_signed(">=", e.function.args[-2], ir.Constant(INDEX, 0)))
    with b.if_then(first):
        store()
    sync(e)


def _accumulate(e: FunctionEmitter, loop: Any, lb: ir.Value, ub: ir.Value, n: ir.Value,
                accumulations: list[_Accumulation]) -> list[ir.Value]:
    """``emitter._accumulate``'s order on the warp's lanes (the module's docstring)."""
    b = e.builder
    types = [llvm_type(a.load.results[0].type) for a in accumulations]
    k = min(e.renderer.partials[64 if isinstance(t, ir.DoubleType) else 32] for t in types)
    static = isinstance(lb, ir.Constant) and isinstance(ub, ir.Constant)
    if static:
        k = min(k, _fewer_partials(ub.constant - lb.constant))
    owned = max(k // WARP, 1)  # the partials of each lane: lane, lane + 32...
    methods = ["fmul" if a.combine.name == "arith.mulf" else "fadd" for a in accumulations]
    identities = [ir.Constant(ty, 1.0 if m == "fmul" else -0.0) for ty, m in zip(types, methods)]
    partials = [private(e, ty, owned) for ty in types]
    levels = [private(e, ty, _LEVELS) for ty in types]
    lane = special(e, "laneid")
    holds = b.icmp_unsigned("<", lane, ir.Constant(INDEX, k))  # every lane but where K < 32

    def block_sums(start: ir.Value, stop: ir.Value) -> list[ir.Value]:
        """The sum of elements ``start`` (a multiple of K) to ``stop``, in the host's
        order, in every lane."""
        for ty, partial, identity in zip(types, partials, identities):
            for q in range(owned):
                b.store(identity, b.gep(partial, [ir.Constant(INDEX, q)], source_etype=ty))
        for q in range(owned):
            first = b.add(start, b.add(lane, ir.Constant(INDEX, WARP * q)))
            last = b.select(holds, stop, start)
            slots = {a: b.gep(p, [ir.Constant(INDEX, q)], source_etype=ty)
                     for a, p, ty in zip(accumulations, partials, types)}
            _counted(e, first, last, ir.Constant(INDEX, k), functools.partial(_element, e, loop, lb, slots=slots))
        sums = []
        for ty, partial, method in zip(types, partials, methods):
            values = [b.load(b.gep(partial, [ir.Constant(INDEX, q)], source_etype=ty), typ=ty) for q in range(owned)]
            while len(values) > 1:  # the tree's levels that pair partials of one lane
                half = len(values) // 2
                values = [getattr(b, method)(x, y) for x, y in zip(values[:half], values[half:])]
            value = values[0]
            half = min(k, WARP) // 2
            while half:  # lane p (below half) adds partial p + half, as the host's tree does
                value = getattr(b, method)(value, shuffle(e, "down", value, half))
                half //= 2
            sums.append(shuffle(e, "idx", value, 0))
        return sums

    def block(index: ir.Value) -> list[ir.Value]:
        start = b.mul(index, ir.Constant(INDEX, _BLOCK))
        return block_sums(start, b.add(start, ir.Constant(INDEX, _BLOCK)))

    def carry(index: ir.Value, sums: list[ir.Value]) -> None:
        for ty, level, method, value in zip(types, levels, methods, sums):
            _carry(e, level, ty, method, value, index)

    blocks = b.udiv(n, ir.Constant(INDEX, _BLOCK))
    if not static or ub.constant - lb.constant >= _BLOCK:
        if e.lanes == WARP:
            _counted(e, ir.Constant(INDEX, 0), blocks, ir.Constant(INDEX, 1), lambda index: carry(index, block(index)))
        else:
            runs, size = _runs(loop, accumulations, ub.constant - lb.constant if static else None)
            done = ir.Constant(INDEX, 0)
            if runs:
                done = _runs_over_the_grid(e, types[0], methods[0], levels[0], runs, size, block, carry)
            _by_warps_in_rounds(e, types, done, blocks, block, carry)
    tails = block_sums(b.mul(blocks, ir.Constant(INDEX, _BLOCK)), n)
    return [_cascade_total(e, level, ty, method, tail, blocks)
            for ty, level, method, tail in zip(types, levels, methods, tails)]


#: The most runs of blocks a whole-array reduction is cut into, each a block of warps'
#: work in a launch over the grid.
MOST_RUNS = 1024


def _runs(loop: Any, accumulations: list[_Accumulation], n: int | None) -> tuple[int, int]:
    """How many runs of how many blocks (a power of two, a round of the warps at least)
    the grid computes first for ``loop``, if it is a kernel's one loop and one
    accumulation, of a static length of two runs at least: (0, 0) otherwise."""
    if n is None or len(accumulations) != 1 or not isinstance(loop.parent_op(), func.FuncOp):
        return 0, 0
    if any(op.regions and op is not loop for op in loop.parent_block().ops):
        return 0, 0
    blocks = n // _BLOCK
    size = max(BLOCK_WARPS, 1 << max(-(-blocks // MOST_RUNS) - 1, 0).bit_length())
    return (blocks // size, size) if blocks // size >= 2 else (0, 0)


def _runs_over_the_grid(e: FunctionEmitter, ty: ir.Type, method: str, level: ir.Value, runs: int, size: int,
                        block: Callable[[ir.Value], list[ir.Value]],
                        carry: Callable[[ir.Value, list[ir.Value]], None]) -> ir.Value:
    """The first ``runs * size`` blocks of a whole-array reduction, over the grid. The
    host's cascade is a pairwise tree: an aligned run of ``size`` (2^p) blocks is one of
    its subtrees, pushed onto level p. So launches with ``start`` -1 compute runs: block
    ``g`` of ``G`` of the grid runs ``g, g + G...``, each by its warps in rounds into a
    cascade of its own, whose level p is then the run's sum, which thread 0 writes to the
    scratch buffer the executable passes as the kernel's table of imports, and return.
    The kernel's own launch (one block) carries the runs' sums onto level p
    in order, as the host's counter would, and goes on with the blocks after them; the
    number of those blocks is returned."""
    b = e.builder
    scratch = e.imports_table
    assert scratch is not None, "a kernel's body has its table of imports"
    e.runs = runs
    p = size.bit_length() - 1
    level_p = b.gep(level, [ir.Constant(INDEX, p)], source_etype=ty)
    with b.if_then(b.icmp_signed("<", e.function.args[-2], ir.Constant(INDEX, 0))):
        def run(index: ir.Value) -> None:
            first = b.mul(index, ir.Constant(INDEX, size))
            _by_warps_in_rounds(e, [ty], first, b.add(first, ir.Constant(INDEX, size)), block,
                                lambda i, sums: carry(b.sub(i, first), sums))
            with b.if_then(is_zero(e, thread_index(e))):
                b.store(b.load(level_p, typ=ty), b.gep(scratch, [index], source_etype=ty))
        _counted(e, special(e, "ctaid.x"), ir.Constant(INDEX, runs), special(e, "nctaid.x"), run)
        b.ret_void()
    _counted(e, ir.Constant(INDEX, 0), ir.Constant(INDEX, runs), ir.Constant(INDEX, 1),
             lambda index: _carry(e, level_p, ty, method, b.load(b.gep(scratch, [index], source_etype=ty), typ=ty),
                                  index))
    return ir.Constant(INDEX, runs * size)


def _by_warps_in_rounds(e: FunctionEmitter, types: list[ir.Type], start: ir.Value, blocks: ir.Value,
                        block: Callable[[ir.Value], list[ir.Value]],
                        carry: Callable[[ir.Value, list[ir.Value]], None]) -> None:
    """Items ``start`` to ``blocks`` (the host's blocks of elements, or a matrix's rows),
    their values (``block``: sums, row totals) computed by the group's warps in rounds,
    warp ``w`` taking item ``start + r * W + w`` of round ``r``; every thread then
    ``carry``s a round's values, from shared memory, in the items' order, as the host
    takes them (into its cascade, onto a running total)."""
    b = e.builder
    warps = e.lanes // WARP
    memory = [shared_array(e, ty, warps) for ty in types]
    warp = b.udiv(thread_index(e), ir.Constant(INDEX, WARP))
    count = b.sub(blocks, start)
    count = b.select(b.icmp_signed("<", count, ir.Constant(INDEX, 0)), ir.Constant(INDEX, 0), count)
    rounds = b.udiv(b.add(count, ir.Constant(INDEX, warps - 1)), ir.Constant(INDEX, warps))

    def round_(r: ir.Value) -> None:
        first = b.add(start, b.mul(r, ir.Constant(INDEX, warps)))
        index = b.add(first, warp)
        with b.if_then(b.icmp_unsigned("<", index, blocks)):
            sums = block(index)
            with b.if_then(is_zero(e, special(e, "laneid"))):
                for m, value in zip(memory, sums):
                    b.store(value, shared_at(e, m, warp))
        sync(e)
        for w in range(warps):
            index = b.add(first, ir.Constant(INDEX, w))
            with b.if_then(b.icmp_unsigned("<", index, blocks)):
                carry(index, [b.load(shared_at(e, m, ir.Constant(INDEX, w)), typ=ty) for m, ty in zip(memory, types)])
        sync(e)
    _counted(e, ir.Constant(INDEX, 0), rounds, ir.Constant(INDEX, 1), round_)


def _combine(e: FunctionEmitter, a: _Accumulation) -> Callable[[ir.Value, ir.Value], ir.Value]:
    """The reduction's own operation (its rule) on two values: the accumulator's, the term."""
    combine = a.combine
    term = next(o for o in combine.operands if o is not a.load.results[0])
    rule = e.renderer.rules.get(combine.name) or _RULES[combine.name]

    def apply(accumulated: ir.Value, value: ir.Value) -> ir.Value:
        bound = {a.load.results[0]: accumulated, term: value}
        before = {v: e.values[v] for v in bound if v in e.values}
        e.values.update(bound)
        result = rule(e, combine)
        for v in bound:
            if v in before:
                e.values[v] = before[v]
            else:
                del e.values[v]
        return result
    return apply


def _reduce_exactly(e: FunctionEmitter, loop: Any, lb: ir.Value, ub: ir.Value, n: ir.Value,
                    reductions: list[_Accumulation]) -> list[ir.Value]:
    """A reduction of any order: elements ``lane, lane + 32...`` on each lane, then the
    lanes' values combined by butterflies (every lane holds the total)."""
    b = e.builder
    types = [llvm_type(a.load.results[0].type) for a in reductions]
    slots = {a: private(e, ty, 1) for a, ty in zip(reductions, types)}
    for a, ty in zip(reductions, types):
        b.store(EXACT[a.combine.name](ty), slots[a])
    _counted(e, thread_index(e), n, ir.Constant(INDEX, e.lanes), lambda i: _element(e, loop, lb, i, slots))
    totals = []
    for a, ty in zip(reductions, types):
        combine = _combine(e, a)
        value = b.load(slots[a], typ=ty)
        distance = WARP // 2
        while distance:
            value = combine(value, shuffle(e, "bfly", value, distance))
            distance //= 2
        totals.append(value)
    warps = e.lanes // WARP
    if warps > 1:  # each warp's total through shared memory to every thread
        memory = [shared_array(e, ty, warps) for ty in types]
        warp = b.udiv(thread_index(e), ir.Constant(INDEX, WARP))
        with b.if_then(is_zero(e, special(e, "laneid"))):
            for m, value in zip(memory, totals):
                b.store(value, shared_at(e, m, warp))
        sync(e)
        totals = [functools.reduce(_combine(e, a), [b.load(shared_at(e, m, ir.Constant(INDEX, w)), typ=ty)
                                                    for w in range(warps)])
                  for a, m, ty in zip(reductions, memory, types)]
        sync(e)
    return totals
