"""PTX's scalar types as NumPy dtypes.

Registers hold raw bits (an unsigned integer array per register, ``bool`` for predicates);
an instruction's type says how to read those bits, exactly as in PTX, where LLVM emits
``.b32`` registers that carry floats and integers alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ScalarType:
    """One PTX scalar type: ``kind`` is ``b`` (bits), ``u``, ``s``, ``f`` or ``pred``."""

    name: str
    dtype: np.dtype[Any]
    size: int
    kind: str

    @property
    def bits(self) -> np.dtype[Any]:
        """The unsigned dtype of the same width: how a register of this type is stored."""
        return BITS[self.size] if self.kind != "pred" else np.dtype(bool)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        return self.kind == "s"

    @property
    def width(self) -> int:
        return 8 * self.size


BITS: dict[int, np.dtype[Any]] = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
SIGNED: dict[int, np.dtype[Any]] = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}

TYPES: dict[str, ScalarType] = {
    t.name: t
    for t in [
        *(ScalarType(f"b{8 * n}", BITS[n], n, "b") for n in (1, 2, 4, 8)),
        *(ScalarType(f"u{8 * n}", BITS[n], n, "u") for n in (1, 2, 4, 8)),
        *(ScalarType(f"s{8 * n}", SIGNED[n], n, "s") for n in (1, 2, 4, 8)),
        ScalarType("f16", np.dtype(np.float16), 2, "f"),
        ScalarType("f32", np.dtype(np.float32), 4, "f"),
        ScalarType("f64", np.dtype(np.float64), 8, "f"),
        ScalarType("pred", np.dtype(bool), 1, "pred"),
    ]
}


def scalar_type(name: str) -> ScalarType:
    """The type named ``name`` (without its dot); KeyError for a type the simulator lacks."""
    return TYPES[name.lstrip(".")]


def as_bits(value: np.ndarray, size: int) -> np.ndarray:
    """``value``'s bits as the unsigned dtype of ``size`` bytes (a view, never a conversion)."""
    return np.asarray(value).view(BITS[size])


def resize_bits(bits: np.ndarray, from_type: ScalarType, size: int) -> np.ndarray:
    """Bits of ``from_type`` made ``size`` bytes wide: truncated, or extended with the sign
    when ``from_type`` is signed and zeros otherwise (PTX's rule for ``ld``, ``cvt`` and
    registers wider than an instruction's type)."""
    if from_type.size == size:
        return bits
    if size < from_type.size or not from_type.is_signed:
        return bits.astype(BITS[size])
    return bits.view(SIGNED[from_type.size]).astype(SIGNED[size]).view(BITS[size])
