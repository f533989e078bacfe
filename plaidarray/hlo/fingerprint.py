"""Structural fingerprints: equal for graphs that compute the same thing the same way.

Instruction identity and names do not enter; opcodes, attributes, operand positions and
shapes do. Parameters enter by number and shape, never by their data, and all of them,
used or not: the executable takes a buffer for each, so ``f(x, y) = exp(x)`` and
``g(x) = exp(x)`` must not share one.
"""

from __future__ import annotations

import hashlib

from .ir import Computation


def structure(comp: Computation) -> tuple:
    index = {id(i): n for n, i in enumerate(comp.instructions)}
    rows = tuple(
        (i.opcode, i.attr_key(), tuple(index[id(o)] for o in i.operands), i.shape.dims, i.shape.dtype.str)
        for i in comp.instructions
    )
    params = tuple((p.attrs["number"], p.shape.dims, p.shape.dtype.str) for p in comp.parameters)
    return rows, tuple(index[id(o)] for o in comp.outputs), params


def fingerprint(comp: Computation) -> str:
    """A stable hex digest of :func:`structure` (stable across processes, unlike hash())."""
    return hashlib.blake2b(repr(structure(comp)).encode(), digest_size=12).hexdigest()
