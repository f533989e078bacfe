"""The lowering of ``reduce``: a fill with the monoid's identity, then the fused
operand chain folded in with the elementwise op the monoid is named after."""

from __future__ import annotations

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.ops.reduce import identity
from ...hlo.shape import Shape
from ..lowering import Reduction, ScalarBuilder, register_lowering


def combine_scalars(b: ScalarBuilder, kind: str, dtype: np.dtype, x, y):
    """Emit the elementwise op ``kind`` on two scalars of ``dtype``."""
    scalar = Instruction("parameter", (), {"number": 0}, Shape((), dtype))
    return b.elementwise(Instruction(kind, (scalar, scalar), {}, scalar.shape), (x, y))


register_lowering("reduce", Reduction(
    lambda b, acc, value, inst: combine_scalars(b, inst.attrs["kind"], inst.shape.dtype, acc, value),
    lambda inst: identity(inst.attrs["kind"], inst.shape.dtype)))
