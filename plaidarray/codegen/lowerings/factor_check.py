"""The expansion of ``factor_failed`` (``hlo/ops/factor_check.py``) into the ops
``linalg.cholesky`` recorded before it was one: each factor's first element tested for NaN,
each matrix tested for any NaN, the first without the second, over the stack. Every op is
built without a shape rule: its sizes may be run-time ones."""

from __future__ import annotations

import numpy as np

from ...dtypes import real_dtype
from ...hlo.ir import Instruction
from ...hlo.shape import Shape
from ..lowering import Expansion, register_lowering

_BOOL = np.dtype(np.bool_)


def _isnan(x: Instruction) -> Instruction:
    """NaN in either part (``elementwise.isnan``'s ops)."""
    flags = Shape(x.shape.dims, _BOOL)
    if x.shape.dtype.kind != "c":
        return Instruction("compare", (x, x), {"direction": "NE"}, flags)
    real = Shape(x.shape.dims, real_dtype(x.shape.dtype))
    parts = [Instruction(part, (x,), {}, real) for part in ("real", "imag")]
    return Instruction("or", tuple(Instruction("compare", (p, p), {"direction": "NE"}, flags) for p in parts), {},
                       flags)


def _any(flags: Instruction, axes: tuple[int, ...]) -> Instruction:
    kept = tuple(d for axis, d in enumerate(flags.shape.dims) if axis not in axes)
    return Instruction("reduce", (flags,), {"dimensions": axes, "kind": "or"}, Shape(kept, _BOOL))


def expand(inst: Instruction, factor: Instruction, matrices: Instruction) -> Instruction:
    """Whether some matrix of ``matrices`` has no NaN and a factor whose first element is NaN."""
    *batch, rows, cols = factor.shape.dims
    rank = len(batch) + 2
    corner = Instruction("slice", (factor,), {"start": (0,) * rank, "limit": (*batch, 1, 1), "strides": (1,) * rank},
                         Shape((*batch, 1, 1), factor.shape.dtype))
    first = Instruction("reshape", (corner,), {"dims": tuple(batch)}, Shape(tuple(batch), factor.shape.dtype))
    clean = Instruction("not", (_any(_isnan(matrices), (rank - 2, rank - 1)),), {}, Shape(tuple(batch), _BOOL))
    failed = Instruction("and", (_isnan(first), clean), {}, Shape(tuple(batch), _BOOL))
    return _any(failed, tuple(range(len(batch)))) if batch else failed


register_lowering("factor_failed", Expansion(expand, shape_generic=True))
