"""``lu_determinant``: a determinant's parts from an LU factorisation.

``linalg.det`` and ``slogdet`` factor their matrices (the ``custom_call`` target ``lu``)
and then take the diagonal of U, its magnitudes and signs, the pivots' interchanges, a
product and a sum of logarithms: a dozen ops, each an op kernel's first use in a fresh
process (~2 ms for a script's first ``det``). As one op, it is one kernel's first use;
backends lower it by the expansion into those ops (``codegen/lowerings/determinant.py``),
so fused code and the values are as they were.

Operands: the factors ``lu`` (a stack of square matrices, L below the diagonal and U on and
above it) and ``pivots`` (the row each step interchanged with, stored in ``lu``'s dtype as
the custom call stores them). ``part``: ``sign`` (of the determinant, ``lu``'s dtype; a unit
complex number for a complex one, 0 where it is singular), ``logabsdet`` (the natural
logarithm of its magnitude, real) or ``det`` (``sign * exp(logabsdet)``, as NumPy computes
it: no overflow in the product of the pivots).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ...dtypes import real_dtype
from ..opdef import Attrs, DimTie, OpDef, register, stacked
from ..shape import Shape

PARTS = ("sign", "logabsdet", "det")


def _infer(shapes: list[Shape], attrs: Attrs) -> Shape:
    lu, pivots = shapes
    if attrs["part"] not in PARTS:
        raise ValueError(f"lu_determinant: part must be one of {PARTS}, got {attrs['part']!r}")
    if lu.rank < 2 or lu.dims[-1] != lu.dims[-2] or lu.dtype.kind not in "fc":
        raise TypeError(f"lu_determinant: factors are square floating-point matrices, got {lu}")
    if pivots.dims != lu.dims[:-1] or pivots.dtype != lu.dtype:
        raise TypeError(f"lu_determinant: pivots of {lu} factors are {Shape(lu.dims[:-1], lu.dtype)}, got {pivots}")
    return Shape(lu.dims[:-2], real_dtype(lu.dtype) if attrs["part"] == "logabsdet" else lu.dtype)


def _evaluate(args: list[np.ndarray], attrs: Attrs, shape: Shape) -> np.ndarray:
    lu, pivots = args
    u = np.diagonal(lu, axis1=-2, axis2=-1)
    magnitude = np.abs(u)
    interchange = np.where(pivots != np.arange(u.shape[-1]), -1, 1).astype(lu.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = np.where(magnitude == 0, 0, u / np.where(magnitude == 0, 1, magnitude)).astype(lu.dtype)
        sign = np.prod(interchange * unit, axis=-1)
        logabsdet = np.sum(np.log(magnitude), axis=-1)
    found = {"sign": sign, "logabsdet": logabsdet, "det": sign * np.exp(logabsdet)}[attrs["part"]]
    return np.asarray(found, dtype=shape.dtype)


def _ties(attrs: Attrs, ranks: Sequence[int]) -> Iterator[DimTie]:
    """The batch dimensions of both operands; the factors' rows, columns and the pivots' length."""
    batch = ranks[0] - 2
    yield from ((axis, operand, axis) for operand in (0, 1) for axis in range(batch))
    yield (0, batch + 1), 0, batch
    yield (1, batch), 0, batch


#: Its batch axes merge: the kernel of a stack of matrices serves stacks of any rank.
register(OpDef("lu_determinant", _infer, _evaluate, 2, dim_ties=_ties, merge=stacked(2, 1)))
