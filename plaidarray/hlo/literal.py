"""Constant payloads carried by HLO ``constant`` instructions.

A literal is hashable by value so that two traces with the same constant fingerprint
identically (and two different constants do not). Its ``repr`` is part of the text a
compiled module is cached by on disk, so it names the value exactly: an array too long
to print in full carries a digest of its bytes after the abbreviated elements.
"""

from __future__ import annotations

import hashlib

import numpy as np

#: Elements printed in full; longer arrays print their ends and a digest.
PRINTED = 8


class Literal:
    """An immutable NumPy scalar or array usable as an HLO attribute."""

    __slots__ = ("value", "_key")

    def __init__(self, value: np.ndarray) -> None:
        value = np.array(value, copy=True)
        value.flags.writeable = False
        self.value = value
        self._key = (value.dtype.str, value.shape, value.tobytes())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        if self.value.ndim == 0:
            v = self.value.item()
            return repr(v).lower() if isinstance(v, bool) else repr(v)
        text = np.array2string(self.value, separator=",", threshold=PRINTED).replace("\n", "")
        if self.value.size <= PRINTED:
            return text
        dtype, shape, data = self._key
        return f"{text}#{hashlib.blake2b(repr((dtype, shape)).encode() + data, digest_size=8).hexdigest()}"
