"""``factor_failed``: whether a factorisation of any matrix of a stack failed.

A factorisation kernel makes a failed factor all NaN (``custom_call``'s rule: a lazy array
learns the outcome only when it is computed), and ``linalg.cholesky`` raises as NumPy does,
so it reads at each call whether some matrix without NaN got a factor whose first element
is NaN. Recorded as the ops that say it (a corner sliced, two NaN tests, a reduction, a
negation, a conjunction, a reduction), that check was six op kernels' first uses in a fresh
process; as one op, one. Backends lower it by the expansion into those ops
(``codegen/lowerings/factor_check.py``).

Operands: the factors and the matrices factored, stacks of one shape and floating-point
dtype, each matrix of at least one row and column. The result is a 0-d bool.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ..opdef import Attrs, DimTie, OpDef, register, stacked
from ..shape import Shape


def _infer(shapes: list[Shape], attrs: Attrs) -> Shape:
    factor, matrices = shapes
    if factor.rank < 2 or factor.dims != matrices.dims or factor.dtype != matrices.dtype or \
            factor.dtype.kind not in "fc":
        raise TypeError(f"factor_failed: factors and matrices are stacks of one shape and floating-point dtype, "
                        f"got {factor} and {matrices}")
    return Shape((), np.dtype(np.bool_))


def _evaluate(args: list[np.ndarray], attrs: Attrs, shape: Shape) -> np.ndarray:
    factor, matrices = args
    failed = np.isnan(factor[..., 0, 0]) & ~np.isnan(matrices).any(axis=(-2, -1))
    return np.asarray(failed.any())


def _ties(attrs: Attrs, ranks: Sequence[int]) -> Iterator[DimTie]:
    """Each of the factors' dimensions is the matrices'."""
    return (((0, axis), 1, axis) for axis in range(ranks[0]))


#: Its batch axes merge (its result is one flag): the kernel of a stack serves stacks of any rank.
register(OpDef("factor_failed", _infer, _evaluate, 2, dim_ties=_ties, merge=stacked(2, 2, batch_kept=False)))
