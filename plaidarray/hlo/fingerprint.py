"""Structural fingerprints: equal for graphs that compute the same thing the same way.

Instruction identity and names do not enter; opcodes, attributes, operand positions and
shapes do. Parameters enter by number and shape, never by their data, and all of them,
used or not: the executable takes a buffer for each, so ``f(x, y) = exp(x)`` and
``g(x) = exp(x)`` must not share one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable

from .ir import Computation, Module


def structure(comp: Computation) -> tuple:
    index = {id(i): n for n, i in enumerate(comp.instructions)}
    rows = tuple(
        (i.opcode, i.attr_key(), tuple(index[id(o)] for o in i.operands), i.shape.dims, i.shape.dtype.str)
        for i in comp.instructions
    )
    params = tuple((p.attrs["number"], p.shape.dims, p.shape.dtype.str) for p in comp.parameters)
    return rows, tuple(index[id(o)] for o in comp.outputs), params


def digest(description: str) -> str:
    """A short hex digest of ``description`` (a structural key's ``repr``: stable across
    processes, unlike ``hash()``)."""
    return hashlib.blake2b(description.encode(), digest_size=12).hexdigest()


def module_description(module: Module) -> str:
    """What a compiler names and caches ``module``'s code by: its entry's structural key
    (``Module.structure_key``, else :func:`structure`), its donated parameters and its
    number of run-time sizes, as text that is the same in every process."""
    key = structure(module.entry) if module.structure_key is None else module.structure_key
    return repr((key, sorted(module.donated), module.n_symbols))


class Hashed:
    """A value hashed once: structural keys are deep tuples, whose hash a cache would
    otherwise compute again at each lookup (a tenth of emitting a kernel; most of
    keying a kernel group)."""

    __slots__ = ("value", "_hash")

    def __init__(self, value: Hashable) -> None:
        self.value = value
        self._hash = hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hashed) and self._hash == other._hash and self.value == other.value
