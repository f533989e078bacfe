"""``convert-linalg-to-loops`` with known loop bounds.

xDSL's pass derives loop bounds by inverting the indexing maps, which fails for the
maps fused reshapes produce (``floordiv``/``mod``). Every generic we build knows its
iteration space, recorded as the ``plaidarray.loop_dims`` attribute (constants, or the
run-time sizes of a shape-generic module: ``run_time_sizes.py``), so this pass uses it
and otherwise reuses xDSL's loop-nest construction; indices go through ``affine.apply``
with the symbols' values as its symbol operands. It also marks the loop nests that may
run in chunks on several threads (``PARALLEL_LOOP``), which only the generic's iterator
types and body can tell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from xdsl.context import Context
from xdsl.dialects import affine, arith, func, memref, scf
from xdsl.dialects.builtin import AffineMapAttr, IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap, AffineSymExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.transforms.loop_nest_lowering_utils import rewrite_linalg_structured_to_loops

from ..hlo.symbolic import Sym
from .run_time_sizes import dims_attr, read_dims, symbol_values, symbols_renumbered

LOOP_DIMS = "plaidarray.loop_dims"
#: On the outermost loop of a nest whose iterations along a ``parallel`` dimension are
#: independent: [depth of that dimension's loop, its trip count, iterations of the nest]
#: (``run_time_sizes.dims_attr``). The executable may run that loop in chunks on several
#: threads.
PARALLEL_LOOP = "plaidarray.parallel_loop"


def _indices(rewriter: PatternRewriter, where: InsertPoint, affine_map: AffineMap, ivs: Sequence[SSAValue],
             symbols: dict[int, SSAValue]) -> list[SSAValue]:
    """The indices a map gives at the loop indices ``ivs``: a loop index itself, or an
    ``affine.apply`` over all of them and the symbols its expression uses (only those: a
    kernel reads the run-time sizes its code uses, so that its code and the sizes it
    reads depend on what it computes, not on how its module numbers sizes)."""
    out: list[SSAValue] = []
    for expr in affine_map.results:
        if isinstance(expr, AffineDimExpr):
            out.append(ivs[expr.position])
            continue
        used = sorted({e.position for e in expr.dfs() if isinstance(e, AffineSymExpr)})
        compact = symbols_renumbered(expr, {k: i for i, k in enumerate(used)})
        apply = affine.ApplyOp([*ivs, *(symbols[k] for k in used)],
                               AffineMapAttr(AffineMap(affine_map.num_dims, len(used), (compact,))))
        rewriter.insert(apply, where)
        out.append(apply.result)
    return out


class _LowerGeneric(RewritePattern):
    def __init__(self, symbols: dict[int, SSAValue]) -> None:
        super().__init__()
        #: The values of the module's run-time sizes, by symbol.
        self.symbols = symbols

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        maps = op.get_indexing_maps().data
        ins_count = len(op.inputs)

        def insert_load(index: int, ind_vars: Sequence[SSAValue], rewriter: PatternRewriter,
                        where: InsertPoint) -> SSAValue:
            value = op.operands[index]
            if not isinstance(value.type, MemRefType):
                return value
            load = memref.LoadOp.get(value, _indices(rewriter, where, maps[index].data, ind_vars, self.symbols))
            rewriter.insert(load, where)
            return load.res

        def insert_store(output: int, value: SSAValue, ind_vars: Sequence[SSAValue], rewriter: PatternRewriter,
                         where: InsertPoint):
            index = ins_count + output
            store = memref.StoreOp.get(value, op.operands[index],
                                       _indices(rewriter, where, maps[index].data, ind_vars, self.symbols))
            rewriter.insert(store, where)
            return store

        where = InsertPoint.before(op)
        dims = read_dims(op.attributes[LOOP_DIMS])
        bounds = []
        for d in dims:
            if isinstance(d, Sym):
                bounds.append(self.symbols[d.index])
                continue
            const = arith.ConstantOp(IntegerAttr(cast(int, d), IndexType()))
            rewriter.insert(const, where)
            bounds.append(const.result)
        chunked = chunked_dimension(op)
        after, block = op.next_op, op.parent_block()
        assert block is not None  # the walker rewrites ops inside the module
        rewrite_linalg_structured_to_loops(rewriter, op, where, bounds, maps, maps[-len(op.outputs):],
                                           op.operands, op.outputs, op.body.block, insert_load, insert_store)
        outermost = after.prev_op if after is not None else block.last_op  # the nest replaced op
        if chunked is not None and isinstance(outermost, scf.ForOp):
            outermost.attributes[PARALLEL_LOOP] = dims_attr([chunked, dims[chunked], math.prod(dims)])


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
        PatternRewriteWalker(_LowerGeneric(symbols), apply_recursively=False).rewrite_module(op)
