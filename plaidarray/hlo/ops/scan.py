"""``cumulative``: an inclusive scan along one dimension with a reduce monoid.

XLA expresses scans with reduce_window; a direct op is simpler to lower here.
"""

from __future__ import annotations

import numpy as np

from ..opdef import OpDef, along_axis, register, same_dims
from .reduce import check_combiner

_NUMPY = {"add": np.cumsum, "multiply": np.cumprod}


def _infer(shapes, attrs):
    (x,) = shapes
    if attrs["kind"] not in _NUMPY:
        raise ValueError(f"cumulative: unsupported kind {attrs['kind']!r}")
    if not 0 <= attrs["dimension"] < x.rank:
        raise ValueError(f"cumulative: dimension {attrs['dimension']} out of range for {x}")
    check_combiner(attrs["kind"], x)
    return x


def _evaluate(args, attrs, shape):
    with np.errstate(all="ignore"):
        return _NUMPY[attrs["kind"]](args[0], axis=attrs["dimension"], dtype=shape.dtype)


register(OpDef("cumulative", _infer, _evaluate, 1, dim_ties=same_dims, merge=along_axis("dimension")))
