"""``cumulative``: an inclusive scan along one dimension with a reduce monoid.

XLA expresses scans with reduce_window; a direct op is simpler to lower here. The
kernel is one generic whose body reads the result at the previous position along the
scan dimension: the loop nest runs in lexicographic order, so that element is
already written. The scan dimension is marked as a reduction iterator because of
that dependency.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType

from ..lowering import Kernel
from ..opdef import OpDef, register
from .reduce import check_combiner, combine_scalars

_NUMPY = {"add": np.cumsum, "multiply": np.cumprod}


def _infer(shapes, attrs):
    (x,) = shapes
    if attrs["kind"] not in _NUMPY:
        raise ValueError(f"cumulative: unsupported kind {attrs['kind']!r}")
    if not 0 <= attrs["dimension"] < x.rank:
        raise ValueError(f"cumulative: dimension {attrs['dimension']} out of range for {x}")
    check_combiner(attrs["kind"], x)
    return x


def _evaluate(args, attrs, shape):
    with np.errstate(all="ignore"):
        return _NUMPY[attrs["kind"]](args[0], axis=attrs["dimension"], dtype=shape.dtype)


def _emit(k, inst, out, operands):
    from xdsl.ir.affine import AffineExpr

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


register(OpDef("cumulative", _infer, _evaluate, Kernel(_emit), 1))
