"""``argsort``: the stable sorting permutation along one dimension.

Sorting values is ``take_along_axis(x, argsort(x))``, so one op serves sort and
argsort. Ascending order puts NaN last; descending is its mirror (NaN first); equal
keys keep their order either way.
"""

from __future__ import annotations

import numpy as np

from ..opdef import OpDef, along_axis, register, same_dims
from ..shape import Shape


def _infer(shapes, attrs):
    (x,) = shapes
    if x.dtype.kind == "c":
        raise TypeError("argsort: complex numbers are unordered")
    if not 0 <= attrs["dimension"] < x.rank:
        raise ValueError(f"argsort: dimension {attrs['dimension']} out of range for {x}")
    return Shape(x.dims, np.dtype(np.int64))


def _evaluate(args, attrs, shape):
    (x,), axis = args, attrs["dimension"]
    if not attrs["descending"]:
        return np.argsort(x, axis=axis, kind="stable")
    # Stable descending with NaN first: sort the mirrored keys ascending.
    n = x.shape[axis]
    flipped = np.flip(x, axis=axis)
    order = np.argsort(flipped, axis=axis, kind="stable")
    return np.flip(n - 1 - order, axis=axis)


register(OpDef("argsort", _infer, _evaluate, 1, dim_ties=same_dims, merge=along_axis("dimension")))
