"""How element types of the loop-level IR are laid out in buffers."""

from __future__ import annotations

from xdsl.dialects.builtin import ComplexType, Float32Type, Float64Type, IndexType, IntegerType
from xdsl.ir import Attribute

#: Bytes of an index (loop counters and sizes are 64-bit).
INDEX_BYTES = 8


def element_bytes(t: Attribute) -> int:
    """The bytes an element of type ``t`` takes in a buffer: booleans (i1) take one, a
    complex number its two parts (NumPy's layout)."""
    if isinstance(t, IndexType):
        return INDEX_BYTES
    if isinstance(t, IntegerType):
        return max(1, t.width.data // 8)
    if isinstance(t, Float32Type):
        return 4
    if isinstance(t, Float64Type):
        return 8
    if isinstance(t, ComplexType):
        return 2 * element_bytes(t.element_type)
    raise NotImplementedError(f"no buffer layout for {t}")
