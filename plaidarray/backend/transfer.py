"""The transfer layer (XLA's TransferManager): NumPy memory <-> plaidarray buffers.

Buffers are C-contiguous, aligned NumPy arrays that the compiled code reads through raw
pointers. A NumPy array that already has that layout is used as it is (zero copy);
anything else (strided, negative strides, unaligned, non-native byte order) is copied
once. Device buffers are never written after they are produced, so sharing is safe.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import ALL


def to_device(value: np.ndarray) -> np.ndarray:
    """A buffer holding ``value``: the same memory when its layout allows it."""
    if value.dtype not in ALL:
        raise TypeError(f"unsupported dtype {value.dtype}; plaidarray supports {', '.join(d.name for d in ALL)}")
    if value.flags.c_contiguous and value.flags.aligned and value.dtype.isnative:
        return value
    return np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("="))


def to_host(buffer: np.ndarray) -> np.ndarray:
    """A read-only NumPy view of a buffer (no copy): our buffers are immutable."""
    view = buffer.view()
    view.flags.writeable = False
    return view


def allocate(dims: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A fresh output buffer. Raises MemoryError (not a crash) when it cannot exist."""
    try:
        return np.empty(dims, dtype=dtype)
    except (MemoryError, ValueError) as exc:
        raise MemoryError(f"cannot allocate a {dtype} buffer of shape {dims}: {exc}") from None
