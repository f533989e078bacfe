"""``dot_general``: XLA's general contraction (batch, free and contracting dimensions).

The result's dimensions are batch, then lhs free, then rhs free, as in XLA.
"""

from __future__ import annotations

import math

import numpy as np

from ..lowering import Kernel
from ..opdef import OpDef, register
from ..shape import Shape


def _free(rank, batch, contracting):
    return [d for d in range(rank) if d not in batch and d not in contracting]


def _infer(shapes, attrs):
    lhs, rhs = shapes
    lb, rb = attrs["lhs_batch"], attrs["rhs_batch"]
    lc, rc = attrs["lhs_contracting"], attrs["rhs_contracting"]
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"dot_general: operand dtypes differ ({lhs.dtype}, {rhs.dtype})")
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise ValueError("dot_general: batch/contracting dimension lists differ in length")
    for a, b in (*zip(lb, rb), *zip(lc, rc)):
        if lhs.dims[a] != rhs.dims[b]:
            raise ValueError(f"dot_general: size mismatch {lhs} dim {a} vs {rhs} dim {b}")
    dims = ([lhs.dims[d] for d in lb] + [lhs.dims[d] for d in _free(lhs.rank, lb, lc)]
            + [rhs.dims[d] for d in _free(rhs.rank, rb, rc)])
    return Shape(tuple(dims), lhs.dtype)


def _as_batched_matrix(x, batch, free, contracting, contracting_last):
    order = list(batch) + (list(free) + list(contracting) if contracting_last else list(contracting) + list(free))
    t = np.transpose(x, order)
    b = math.prod(x.shape[d] for d in batch)
    f = math.prod(x.shape[d] for d in free)
    c = math.prod(x.shape[d] for d in contracting)
    return t.reshape((b, f, c) if contracting_last else (b, c, f))


def _evaluate(args, attrs, shape):
    lhs, rhs = args
    lb, rb, lc, rc = attrs["lhs_batch"], attrs["rhs_batch"], attrs["lhs_contracting"], attrs["rhs_contracting"]
    a = _as_batched_matrix(lhs, lb, _free(lhs.ndim, lb, lc), lc, True)
    b = _as_batched_matrix(rhs, rb, _free(rhs.ndim, rb, rc), rc, False)
    with np.errstate(all="ignore"):
        return np.matmul(a, b).reshape(shape.dims)


def _emit(k, inst, out, operands):
    """A zero fill, then one generic over (batch, lhs free, rhs free, contracting)."""
    from xdsl.ir.affine import AffineExpr

    from .reduce import combine_scalars

    lhs, rhs = (o.shape for o in inst.operands)
    lb, rb, lc, rc = (inst.attrs[n] for n in ("lhs_batch", "rhs_batch", "lhs_contracting", "rhs_contracting"))
    lf, rf = _free(lhs.rank, lb, lc), _free(rhs.rank, rb, rc)
    loops = [lhs.dims[d] for d in lb] + [lhs.dims[d] for d in lf] + [rhs.dims[d] for d in rf] \
        + [lhs.dims[d] for d in lc]
    d = [AffineExpr.dimension(i) for i in range(len(loops))]
    nb, nlf, nrf = len(lb), len(lf), len(rf)
    lhs_map, rhs_map = [None] * lhs.rank, [None] * rhs.rank
    for i, (a, b) in enumerate(zip(lb, rb)):
        lhs_map[a] = rhs_map[b] = d[i]
    for i, a in enumerate(lf):
        lhs_map[a] = d[nb + i]
    for i, b in enumerate(rf):
        rhs_map[b] = d[nb + nlf + i]
    for i, (a, b) in enumerate(zip(lc, rc)):
        lhs_map[a] = rhs_map[b] = d[nb + nlf + nrf + i]
    dtype = inst.shape.dtype
    k.fill(out, 0, dtype)

    def body(b, ins, acc):
        return combine_scalars(b, "add", dtype, acc, combine_scalars(b, "multiply", dtype, *ins))

    k.generic(loops, [(operands[0], lhs_map), (operands[1], rhs_map)], (out, d[:nb + nlf + nrf]),
              dtype, body, reduction_dims=range(nb + nlf + nrf, len(loops)))


register(OpDef("dot_general", _infer, _evaluate, Kernel(_emit), 2))
