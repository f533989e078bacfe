"""``true_positions``: the runtime's one pass over the mask (LLVM IR,
``backend/llvm/runtime_routines.py``), for every LLVM backend."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import i64

from ..lowering import Kernel, register_lowering


def _emit(k, inst, out, operands):
    (mask,) = operands
    n, count = (k.insert(arith.IndexCastOp(k.dim(d), i64)) for d in (inst.operands[0].shape.dims[0], inst.shape.dims[0]))
    k.call("plaidarray_positions_b1", [mask, n, out, count])


register_lowering("true_positions", Kernel(_emit, shape_generic=True, empty_sizes=True, unit_sizes=True))
