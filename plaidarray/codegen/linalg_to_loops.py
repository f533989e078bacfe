"""``convert-linalg-to-loops`` with known loop bounds.

xDSL's pass derives loop bounds by inverting the indexing maps, which fails for the
maps fused reshapes produce (``floordiv``/``mod``). Every generic we build knows its
iteration space, recorded as the ``plaidarray.loop_dims`` attribute (constants, or the
run-time sizes of a shape-generic module: ``run_time_sizes.py``), so this pass uses it
and builds the loop nests itself, as xDSL's loop-nest lowering would (with ops made by
``xdsl_ops``, not under a pattern walker: under half the time); indices go through
``affine.apply`` with the symbols' values as its symbol operands. It also marks the loop
nests that may run in chunks on several threads (``PARALLEL_LOOP``), which only the
generic's iterator types and body can tell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, ModuleOp
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass

from ..hlo.symbolic import Sym
from . import xdsl_ops as ops
from .run_time_sizes import dims_attr, read_dims, symbol_positions, symbol_values, symbols_renumbered

LOOP_DIMS = "plaidarray.loop_dims"
#: On the outermost loop of a nest whose iterations along a ``parallel`` dimension are
#: independent: [depth of that dimension's loop, its trip count, iterations of the nest]
#: (``run_time_sizes.dims_attr``). The executable may run that loop in chunks on several
#: threads.
PARALLEL_LOOP = "plaidarray.parallel_loop"


def _indices(block: Block, affine_map: AffineMap, ivs: Sequence[SSAValue],
             symbols: dict[int, SSAValue]) -> list[SSAValue]:
    """The indices a map gives at the loop indices ``ivs``: a loop index itself, or an
    ``affine.apply`` (appended to ``block``) over all of them and the symbols its
    expression uses (only those: a kernel reads the run-time sizes its code uses, so that
    its code and the sizes it reads depend on what it computes, not on how its module
    numbers sizes)."""
    out: list[SSAValue] = []
    for expr in affine_map.results:
        if isinstance(expr, AffineDimExpr):
            out.append(ivs[expr.position])
            continue
        used = sorted(symbol_positions([expr]))
        compact = symbols_renumbered(expr, {k: i for i, k in enumerate(used)})
        apply = ops.apply([*ivs, *(symbols[k] for k in used)],
                          AffineMapAttr(AffineMap(affine_map.num_dims, len(used), (compact,))))
        block.add_op(apply)
        out.append(apply.results[0])
    return out


def _lower_generic(op: GenericOp, symbols: dict[int, SSAValue]) -> None:
    """Replace ``op`` by a loop nest over its ``LOOP_DIMS`` (bounds from 0, step 1) whose
    innermost body loads the operands its body reads, runs that body and stores what it
    yields, each at the indices its indexing map gives."""
    parent = op.parent_block()
    assert parent is not None  # generics are built inside main
    dims = read_dims(op.attributes[LOOP_DIMS])
    chunked = chunked_dimension(op)
    bounds = []
    for d in dims:
        if isinstance(d, Sym):
            bounds.append(symbols[d.index])
            continue
        const = ops.index_constant(cast(int, d))
        parent.insert_op_before(const, op)
        bounds.append(const.results[0])
    outermost, innermost, ivs = _loop_nest(parent, op, bounds)
    body = innermost if outermost is not None else Block()  # without loops, moved before ``op``
    _move_body(op, body, ivs, symbols)
    if outermost is None:
        for moved in list(body.ops):
            body.detach_op(moved)
            parent.insert_op_before(moved, op)
    else:
        innermost.add_op(ops.loop_yield())
        if chunked is not None:
            outermost.attributes[PARALLEL_LOOP] = dims_attr([chunked, dims[chunked], math.prod(dims)])
    parent.erase_op(op)


def _loop_nest(parent: Block, before: Operation, bounds: Sequence[SSAValue]) -> tuple[Operation | None, Block,
                                                                                        list[SSAValue]]:
    """Loops over ``bounds``, one inside the other, put in ``parent`` before ``before``: the
    outermost (None for no bounds), the innermost's body (``parent`` for none) and the
    loop indices. Each loop but the innermost ends its body with its yield already."""
    if not bounds:
        return None, parent, []
    zero, one = ops.index_constant(0), ops.index_constant(1)
    parent.insert_op_before(zero, before)
    parent.insert_op_before(one, before)
    outermost: Operation | None = None
    inner = parent
    ivs: list[SSAValue] = []
    for ub in bounds:
        block = Block(arg_types=[ops.INDEX])
        loop = ops.for_loop(zero.results[0], ub, one.results[0], block)
        if outermost is None:
            parent.insert_op_before(loop, before)
            outermost = loop
        else:
            inner.add_op(loop)
            inner.add_op(ops.loop_yield())
        ivs.append(block.args[0])
        inner = block
    return outermost, inner, ivs


def _move_body(op: GenericOp, target: Block, ivs: Sequence[SSAValue], symbols: dict[int, SSAValue]) -> None:
    """Append to ``target`` the loads of the operands ``op``'s body reads, its body (loop
    indices for its ``linalg.index``) and the stores of what it yields."""
    maps = [m.data for m in op.get_indexing_maps().data]
    body = op.body.block
    for index, (arg, operand) in enumerate(zip(body.args, op.operands)):
        if not arg.uses:
            continue
        if isinstance(operand.type, MemRefType):
            load = ops.load(operand, _indices(target, maps[index], ivs, symbols))
            target.add_op(load)
            arg.replace_all_uses_with(load.results[0])
        else:
            arg.replace_all_uses_with(operand)
    yielded = body.last_op
    assert yielded is not None  # a generic's body ends with its yield
    for inner in list(body.ops):
        if inner is yielded:
            continue
        body.detach_op(inner)
        if isinstance(inner, IndexOp):
            inner.results[0].replace_all_uses_with(ivs[inner.dim.value.data])
            inner.erase()
        else:
            target.add_op(inner)
    first_output = len(op.inputs)
    for output, value in enumerate(yielded.operands):
        index = first_output + output
        target.add_op(ops.store(value, op.operands[index], _indices(target, maps[index], ivs, symbols)))


def chunked_dimension(op: GenericOp) -> int | None:
    """The outermost ``parallel`` dimension, if the iterations along it are independent:
    the body neither stores nor calls a routine for its effect, and reads no output
    (a scan reads its earlier results)."""
    parallel = [i for i, t in enumerate(op.iterator_types.data) if t.data == IteratorType.PARALLEL]
    outputs = set(op.outputs)
    for inner in op.body.walk():
        if isinstance(inner, memref.StoreOp) or (isinstance(inner, func.CallOp) and not inner.results):
            return None
        if isinstance(inner, memref.LoadOp) and inner.memref in outputs:
            return None
    return parallel[0] if parallel else None


class ConvertLinalgToStaticLoops(ModulePass):
    name = "convert-linalg-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        main = next(f for f in op.body.block.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main")
        symbols = symbol_values(main.body.block)
        for generic in [inner for inner in op.walk() if isinstance(inner, GenericOp)]:
            _lower_generic(generic, symbols)
