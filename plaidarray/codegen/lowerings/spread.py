"""Scalars spread over an array's dimensions, as expansions build them: a
``broadcast_in_dim`` made without its shape rule, since an expansion's sizes may be
run-time ones, and a constant so spread (the zeros, ones and log 2 of an expansion's
steps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.literal import Literal
from ...hlo.shape import Shape


def spread(value: Instruction, dims: Sequence[Any], along: tuple[int, ...] = ()) -> Instruction:
    """``value`` broadcast to ``dims`` (its axes being those ``along`` names: none for a scalar)."""
    return Instruction("broadcast_in_dim", (value,), {"dims": tuple(dims), "broadcast_dimensions": along},
                       Shape(tuple(dims), value.shape.dtype))


def filled(value: complex, dims: Sequence[Any], dtype: np.dtype) -> Instruction:
    """The constant ``value`` in ``dtype`` at every element of ``dims``."""
    scalar = Instruction("constant", (), {"value": Literal(np.asarray(value, dtype))}, Shape((), np.dtype(dtype)))
    return spread(scalar, dims)
