"""Shapes of HLO values, printed the XLA way: an array's dimensions plus element type, or,
for an instruction with several results, a tuple of array shapes (XLA's tuple shapes)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

import numpy as np

#: XLA's short names for element types, used by the HLO text printer.
XLA_TYPE_NAMES = {
    "bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128",
}


@dataclass(frozen=True, slots=True, eq=False, init=False)
class Shape:
    """The static type of an HLO value: its dimensions and element dtype. Compared on
    every recorded op, so equality first asks whether both are the same object (ops that
    keep their operand's shape pass that object on)."""

    dims: tuple[int, ...]
    dtype: np.dtype

    def __init__(self, dims: tuple[int, ...], dtype: np.dtype) -> None:
        """Sets the slots through their descriptors: a frozen dataclass's own ``__init__``
        goes through ``object.__setattr__`` and costs half again as much (0.47 against
        0.30 us), on every op whose result shape differs from its operand's."""
        _set_dims(self, dims)
        _set_dtype(self, dtype)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not Shape:
            return NotImplemented
        return self.dims == other.dims and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash((self.dims, self.dtype))

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def size(self) -> int:
        return math.prod(self.dims)

    def with_dtype(self, dtype: np.dtype) -> Shape:
        return Shape(self.dims, np.dtype(dtype))

    def __str__(self) -> str:
        return f"{XLA_TYPE_NAMES[self.dtype.name]}[{','.join(map(str, self.dims))}]"


#: The slots' member descriptors' setters.
_set_dims = vars(Shape)["dims"].__set__
_set_dtype = vars(Shape)["dtype"].__set__


#: The element type of a tuple shape (XLA's ``TUPLE``): no NumPy array has it, so no buffer
#: of a tuple shape can be made by mistake.
TUPLE = np.dtype("V0")


@dataclass(frozen=True, slots=True, eq=False)
class TupleShape(Shape):
    """The shape of an instruction with several results (``while``, ``conditional``,
    ``custom_call``): a tuple of array shapes, whose elements ``get_tuple_element``
    selects. Like XLA's tuple shapes it has no dimensions (rank 0) and the element type
    ``TUPLE``, so a row of dims and dtype (the lazy graph's key, fingerprints) stays a
    plain value; the elements follow from the op, its attributes and its operands."""

    elements: tuple[Shape, ...] = ()

    def __init__(self, elements: Iterable[Shape]) -> None:
        object.__setattr__(self, "dims", ())
        object.__setattr__(self, "dtype", TUPLE)
        object.__setattr__(self, "elements", tuple(elements))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TupleShape) and self.elements == other.elements

    def __hash__(self) -> int:
        return hash(self.elements)

    def with_dtype(self, dtype: np.dtype) -> Shape:
        raise TypeError(f"a tuple shape {self} has no single dtype")

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.elements)) + ")"


#: The largest element count compiled code can index (loop counters are signed 64-bit).
MAX_SIZE = 2**63 - 1


def static_dims(dims: Iterable[object], op: str) -> tuple[int, ...]:
    """The dimensions an op's attribute asks for, checked: non-negative Python ints whose
    product a 64-bit index can count (the array API layer validates user input; this
    keeps a bad attribute from reaching a backend, where it would surface as a crash,
    an overflowing loop or an allocation error)."""
    dims = tuple(dims)
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise ValueError(f"{op}: dimensions must be non-negative ints, got {dims}")
    ints = cast("tuple[int, ...]", dims)
    if math.prod(ints) > MAX_SIZE:
        raise ValueError(f"{op}: {dims} has more elements than a 64-bit index can count")
    return ints
