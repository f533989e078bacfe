"""The lowering of ``reduce``: a fill with the monoid's identity, then the fused
operand chain folded in with the elementwise op the monoid is named after; and the
expansion of ``arg_reduce`` into reductions."""

from __future__ import annotations

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.literal import Literal
from ...hlo.ops.reduce import identity
from ...hlo.shape import Shape
from ..lowering import Expansion, Reduction, ScalarBuilder, register_lowering
from .spread import spread


def combine_scalars(b: ScalarBuilder, kind: str, dtype: np.dtype, x, y):
    """Emit the elementwise op ``kind`` on two scalars of ``dtype``."""
    scalar = Instruction("parameter", (), {"number": 0}, Shape((), dtype))
    return b.elementwise(Instruction(kind, (scalar, scalar), {}, scalar.shape), (x, y))


register_lowering("reduce", Reduction(
    lambda b, acc, value, inst: combine_scalars(b, inst.attrs["kind"], inst.shape.dtype, acc, value),
    lambda inst: identity(inst.attrs["kind"], inst.shape.dtype)))


def expand_arg_reduce(inst: Instruction, x: Instruction) -> Instruction:
    """``arg_reduce`` as reductions: the extremum along the dimension, then the least index
    holding it, or holding a NaN (the extremum is NaN exactly where a NaN is there, since
    ``maximum`` and ``minimum`` propagate it). Every step is parallel (a GPU's threads
    reduce each row); llvm-cpu has a kernel of its own, one pass a row."""
    axis, kind, dims = inst.attrs["dimension"], inst.attrs["kind"], x.shape.dims
    if x.shape.dtype.kind == "b":
        x = Instruction.make("convert", (x,), dtype=np.dtype(np.uint8))
    kept = tuple(i for i in range(len(dims)) if i != axis)
    extremum = Instruction.make("reduce", (x,), dimensions=(axis,), kind=kind)

    hit = Instruction.make("compare", (x, spread(extremum, dims, kept)), direction="EQ")
    if x.shape.dtype.kind == "f":
        hit = Instruction.make("or", (hit, Instruction.make("compare", (x, x), direction="NE")))
    index = Instruction("iota", (), {"dims": dims, "iota_dimension": axis, "dtype": np.dtype(np.int64)},
                        Shape(dims, np.dtype(np.int64)))
    past = Instruction.make("constant", (), value=Literal(np.asarray(np.iinfo(np.int64).max, dtype=np.int64)))
    candidates = Instruction.make("select", (hit, index, spread(past, dims)))
    return Instruction.make("reduce", (candidates,), dimensions=(axis,), kind="minimum")


register_lowering("arg_reduce", Expansion(expand_arg_reduce, shape_generic=True))
