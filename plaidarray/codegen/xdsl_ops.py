"""The xDSL ops code generation makes by the thousand, made with ``create``.

An op's constructor checks and converts each of its arguments (``irdl_op_init``), which
costs three to five times what making the op does: 17 against 6 us for a load, 40
against 8 for a ``linalg.generic``, a tenth of lowering a graph to loops. These
functions make each op from its operands, result types and properties as given,
exactly what its constructor makes (``tests/unit/codegen/test_xdsl_ops.py`` compares
them); the values they are given are right by construction.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    i32,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Block, Region, SSAValue

INDEX = IndexType()


def index_constant(value: int) -> arith.ConstantOp:
    return arith.ConstantOp.create(result_types=[INDEX], properties={"value": IntegerAttr(value, INDEX)})


def constant(value: IntegerAttr | FloatAttr) -> arith.ConstantOp:
    return arith.ConstantOp.create(result_types=[value.type], properties={"value": value})


def load(buffer: SSAValue, indices: Sequence[SSAValue]) -> memref.LoadOp:
    element = buffer.type.element_type  # type: ignore[attr-defined]  # a memref
    return memref.LoadOp.create(operands=[buffer, *indices], result_types=[element])


def store(value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> memref.StoreOp:
    return memref.StoreOp.create(operands=[value, buffer, *indices])


def for_loop(lower: SSAValue, upper: SSAValue, step: SSAValue, body: Block) -> scf.ForOp:
    """An ``scf.for`` without loop-carried values; ``body``'s one argument is the index."""
    return scf.ForOp.create(operands=[lower, upper, step], regions=[Region(body)])


def loop_yield() -> scf.YieldOp:
    return scf.YieldOp.create()


def apply(operands: Sequence[SSAValue], affine_map: AffineMapAttr) -> affine.ApplyOp:
    return affine.ApplyOp.create(operands=list(operands), result_types=[INDEX], properties={"map": affine_map})


def loop_index(dim: int) -> IndexOp:
    return IndexOp.create(result_types=[INDEX], properties={"dim": IntegerAttr(dim, i64)})


def generic_yield(value: SSAValue) -> LinalgYieldOp:
    return LinalgYieldOp.create(operands=[value])


def generic(inputs: Sequence[SSAValue], outputs: Sequence[SSAValue], body: Block, maps: Sequence[AffineMapAttr],
            iterators: Sequence[IteratorTypeAttr]) -> GenericOp:
    """A ``linalg.generic`` on buffers (no results)."""
    assert all(isinstance(v.type, MemRefType) for v in outputs)  # on tensors it would have results
    return GenericOp.create(
        operands=[*inputs, *outputs], regions=[Region(body)],
        properties={"indexing_maps": ArrayAttr(maps), "iterator_types": ArrayAttr(iterators),
                    "operandSegmentSizes": DenseArrayBase.from_list(i32, [len(inputs), len(outputs)])})
