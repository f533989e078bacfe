"""``codegen/xdsl_ops.py`` makes each op with ``create``: it must be the op the op's
constructor makes (its operands, result types, properties and attributes, as printed)."""

from __future__ import annotations

import pytest

from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import AffineMapAttr, FloatAttr, IndexType, IntegerAttr, MemRefType, f64, i32
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineMap

from plaidarray.codegen import xdsl_ops as ops


def _values():
    block = Block(arg_types=[MemRefType(f64, [4, 5]), IndexType(), IndexType(), f64, MemRefType(f64, [4, 5])])
    return block.args


def _body():
    block = Block(arg_types=[f64, f64])
    block.add_op(YieldOp(block.args[0]))
    return block


def _loop_body():
    block = Block(arg_types=[IndexType()])
    block.add_op(scf.YieldOp())
    return block


_MAP = AffineMapAttr(AffineMap.from_callable(lambda d0, d1: (d0 * 5 + d1,)))
_IDENTITY = AffineMapAttr(AffineMap.identity(2))

#: Each helper's op, and the constructor's, from the same values.
_CASES = {
    "index constant": (lambda m, i, j, v, o: ops.index_constant(7),
                       lambda m, i, j, v, o: arith.ConstantOp(IntegerAttr(7, IndexType()))),
    "float constant": (lambda m, i, j, v, o: ops.constant(FloatAttr(1.5, f64)),
                       lambda m, i, j, v, o: arith.ConstantOp(FloatAttr(1.5, f64))),
    "integer constant": (lambda m, i, j, v, o: ops.constant(IntegerAttr(-3, i32)),
                         lambda m, i, j, v, o: arith.ConstantOp(IntegerAttr(-3, i32))),
    "load": (lambda m, i, j, v, o: ops.load(m, [i, j]), lambda m, i, j, v, o: memref.LoadOp.get(m, [i, j])),
    "store": (lambda m, i, j, v, o: ops.store(v, m, [i, j]), lambda m, i, j, v, o: memref.StoreOp.get(v, m, [i, j])),
    "for": (lambda m, i, j, v, o: ops.for_loop(i, j, i, _loop_body()),
            lambda m, i, j, v, o: scf.ForOp(i, j, i, [], Region(_loop_body()))),
    "loop yield": (lambda m, i, j, v, o: ops.loop_yield(), lambda m, i, j, v, o: scf.YieldOp()),
    "apply": (lambda m, i, j, v, o: ops.apply([i, j], _MAP), lambda m, i, j, v, o: affine.ApplyOp([i, j], _MAP)),
    "loop index": (lambda m, i, j, v, o: ops.loop_index(1), lambda m, i, j, v, o: IndexOp(1)),
    "generic yield": (lambda m, i, j, v, o: ops.generic_yield(v), lambda m, i, j, v, o: YieldOp(v)),
    "generic": (lambda m, i, j, v, o: ops.generic([m], [o], _body(), [_IDENTITY] * 2,
                                                  [IteratorTypeAttr.parallel(), IteratorTypeAttr.reduction()]),
                lambda m, i, j, v, o: GenericOp([m], [o], Region(_body()), [_IDENTITY] * 2,
                                                [IteratorTypeAttr.parallel(), IteratorTypeAttr.reduction()])),
}


@pytest.mark.parametrize("name", _CASES)
def test_each_op_is_the_one_its_constructor_makes(name):
    made, constructed = (make(*_values()) for make in _CASES[name])
    made.verify()
    assert str(made) == str(constructed)
    assert dict(made.properties) == dict(constructed.properties) and dict(made.attributes) == dict(constructed.attributes)
    assert [r.type for r in made.results] == [r.type for r in constructed.results]
