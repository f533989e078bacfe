"""The target-neutral ``dot_general``: a zero fill, then one generic over (batch, lhs
free, rhs free, contracting) whose body multiplies and accumulates with the elementwise
ops ``multiply`` and ``add``; its float accumulation is marked ``reassoc`` like a
reduction's. Platforms call libraries for the products they can (llvm-cpu: BLAS).
"""

from __future__ import annotations

from xdsl.ir.affine import AffineExpr

from ...hlo.ops.dot import free_dimensions
from ..lowering import Kernel, register_lowering
from .reduce import combine_scalars


def emit_loops(k, inst, out, operands):
    """A zero fill, then one generic over (batch, lhs free, rhs free, contracting)."""
    lhs, rhs = (o.shape for o in inst.operands)
    lb, rb, lc, rc = (inst.attrs[n] for n in ("lhs_batch", "rhs_batch", "lhs_contracting", "rhs_contracting"))
    lf, rf = free_dimensions(lhs.rank, lb, lc), free_dimensions(rhs.rank, rb, rc)
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


register_lowering("dot_general", Kernel(emit_loops, shape_generic=True))
