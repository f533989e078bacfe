"""``convert-linalg-to-loops`` with static loop bounds.

xDSL's pass derives loop bounds by inverting the indexing maps, which fails for the
maps fused reshapes produce (``floordiv``/``mod``). Every generic we build knows its
iteration space, recorded as the ``plaidarray.loop_dims`` attribute, so this pass
uses it and otherwise reuses xDSL's loop-nest construction unchanged. It also marks
the loop nests that may run in chunks on several threads (``PARALLEL_LOOP``), which
only the generic's iterator types and body can tell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.transforms.loop_nest_lowering_utils import indices_for_map, rewrite_linalg_structured_to_loops

LOOP_DIMS = "plaidarray.loop_dims"
#: On the outermost loop of a nest whose iterations along a ``parallel`` dimension are
#: independent: [depth of that dimension's loop, its trip count, iterations of the nest].
#: The executable may run that loop in chunks on several threads.
PARALLEL_LOOP = "plaidarray.parallel_loop"


def loop_dims_attr(dims: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(d) for d in dims])


def read_loop_dims(attr: Attribute) -> list[int]:
    """The ints of an attribute made by :func:`loop_dims_attr` (``Operation.attributes``
    holds plain ``Attribute``s)."""
    return [d.data for d in cast("ArrayAttr[IntAttr]", attr).data]


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
        dims = read_loop_dims(op.attributes[LOOP_DIMS])
        bounds = []
        for d in dims:
            const = arith.ConstantOp(IntegerAttr(d, IndexType()))
            rewriter.insert(const, where)
            bounds.append(const.result)
        chunked = _chunked_dimension(op)
        after, block = op.next_op, op.parent_block()
        assert block is not None  # the walker rewrites ops inside the module
        rewrite_linalg_structured_to_loops(rewriter, op, where, bounds, maps, maps[-len(op.outputs):],
                                           op.operands, op.outputs, op.body.block, insert_load, insert_store)
        outermost = after.prev_op if after is not None else block.last_op  # the nest replaced op
        if chunked is not None and isinstance(outermost, scf.ForOp):
            outermost.attributes[PARALLEL_LOOP] = loop_dims_attr([chunked, dims[chunked], math.prod(dims)])


def _chunked_dimension(op: GenericOp) -> int | None:
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
        PatternRewriteWalker(_LowerGeneric(), apply_recursively=False).rewrite_module(op)
