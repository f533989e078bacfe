"""The lowering of ``cumulative``: one generic whose body reads the result at the
previous position along the scan dimension. The loop nest runs in lexicographic order,
so that element is already written; the scan dimension is marked as a reduction
iterator because of that dependency."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir.affine import AffineExpr

from ..lowering import Kernel, register_lowering
from .reduce import combine_scalars


def _emit(k, inst, out, operands):
    dims, axis, kind, dtype = inst.shape.dims, inst.attrs["dimension"], inst.attrs["kind"], inst.shape.dtype
    identity = [AffineExpr.dimension(i) for i in range(len(dims))]

    def body(b, ins, cur):
        index = [b.loop_index(i) for i in range(len(dims))]
        zero = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType()))
        one = b.insert(arith.ConstantOp.from_int_and_width(1, IndexType()))
        first = b.insert(arith.CmpiOp(index[axis], zero, "eq"))
        previous = list(index)
        previous[axis] = b.insert(arith.SelectOp(first, zero, b.insert(arith.SubiOp(index[axis], one))))
        # The first element is taken as it is: combining it with the identity would not
        # be exact for complex numbers ((1 + 0j) * (nan + inf j) is nan + nan j).
        combined = combine_scalars(b, kind, dtype, b.load(out, previous), ins[0])
        return b.insert(arith.SelectOp(first, ins[0], combined))

    if inst.shape.size:
        k.generic(dims, [(operands[0], identity)], (out, identity), dtype, body, reduction_dims=(axis,))


register_lowering("cumulative", Kernel(_emit, shape_generic=True, unit_sizes=True))
