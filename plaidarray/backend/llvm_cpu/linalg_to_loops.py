"""``convert-linalg-to-loops`` with static loop bounds.

xDSL's pass derives loop bounds by inverting the indexing maps, which fails for the
maps fused reshapes produce (``floordiv``/``mod``). Every generic we build knows its
iteration space, recorded as the ``plaidarray.loop_dims`` attribute, so this pass
uses it and otherwise reuses xDSL's loop-nest construction unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.transforms.loop_nest_lowering_utils import indices_for_map, rewrite_linalg_structured_to_loops

LOOP_DIMS = "plaidarray.loop_dims"


def loop_dims_attr(dims: Sequence[int]) -> ArrayAttr:
    return ArrayAttr([IntAttr(d) for d in dims])


class _LowerGeneric(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        maps = op.get_indexing_maps().data
        ins_count = len(op.inputs)

        def insert_load(index: int, ind_vars: Sequence[SSAValue], rewriter: PatternRewriter,
                        where: InsertPoint) -> SSAValue:
            value = op.operands[index]
            if not isinstance(value.type, MemRefType):
                return value
            load = memref.LoadOp.get(value, indices_for_map(rewriter, where, maps[index].data, ind_vars))
            rewriter.insert(load, where)
            return load.res

        def insert_store(output: int, value: SSAValue, ind_vars: Sequence[SSAValue], rewriter: PatternRewriter,
                         where: InsertPoint):
            index = ins_count + output
            store = memref.StoreOp.get(value, op.operands[index],
                                       indices_for_map(rewriter, where, maps[index].data, ind_vars))
            rewriter.insert(store, where)
            return store

        where = InsertPoint.before(op)
        bounds = []
        for d in op.attributes[LOOP_DIMS].data:
            const = arith.ConstantOp(IntegerAttr(d.data, IndexType()))
            rewriter.insert(const, where)
            bounds.append(const.result)
        rewrite_linalg_structured_to_loops(rewriter, op, where, bounds, maps, maps[-len(op.outputs):],
                                           op.operands, op.outputs, op.body.block, insert_load, insert_store)


class ConvertLinalgToStaticLoops(ModulePass):
    name = "convert-linalg-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_LowerGeneric(), apply_recursively=False).rewrite_module(op)
