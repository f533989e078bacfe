"""Hypothesis strategies shared by the differential tests: dtypes by category,
(broadcast-compatible) shapes with occasional zero-size dimensions, and array values
that include the floating-point special values (NaN, +-inf, -0.0, subnormals)."""

from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

BOOL = [np.dtype(np.bool_)]
SIGNED = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UNSIGNED = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
INTEGER = SIGNED + UNSIGNED
FLOAT = [np.dtype(np.float32), np.dtype(np.float64)]
REAL_NUMERIC = INTEGER + FLOAT
INTEGER_OR_BOOL = BOOL + INTEGER
ALL = BOOL + REAL_NUMERIC

#: Values every float array strategy mixes in explicitly, so each example is likely to
#: meet the spec's special cases.
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0)

MAX_DIMS = 3
MAX_SIDE = 4


def float_elements(dtype, *, min_value=None, max_value=None, allow_nan=True, allow_infinity=True,
                   allow_subnormal=None, specials=SPECIAL_FLOATS):
    """Floats representable in ``dtype``, with the special values sampled explicitly."""
    width = 32 if np.dtype(dtype) == np.float32 else 64
    lo = -math.inf if min_value is None else min_value
    hi = math.inf if max_value is None else max_value
    bounded = min_value is not None or max_value is not None
    base = st.floats(min_value=min_value, max_value=max_value, width=width, allow_nan=allow_nan and not bounded,
                     allow_infinity=allow_infinity and not bounded, allow_subnormal=allow_subnormal)
    chosen = [v for v in specials
              if (math.isnan(v) and allow_nan)
              or (math.isinf(v) and allow_infinity and lo <= v <= hi)
              or (math.isfinite(v) and lo <= v <= hi)]
    return st.one_of(st.sampled_from(chosen), base) if chosen else base


def int_elements(dtype, *, min_value=None, max_value=None):
    info = np.iinfo(dtype)
    lo = int(info.min) if min_value is None else max(int(info.min), min_value)
    hi = int(info.max) if max_value is None else min(int(info.max), max_value)
    return st.integers(lo, hi)


def elements(dtype, **kwargs):
    """An element strategy for any supported dtype (kwargs go to the kind's strategy)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        return int_elements(dtype, **kwargs)
    return float_elements(dtype, **kwargs)


def shapes(*, min_dims=0, max_dims=MAX_DIMS, max_side=MAX_SIDE):
    """Array shapes, mostly non-empty, sometimes with a zero-size dimension."""
    return st.one_of(
        hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side),
        hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side),
    )


#: Shapes for the per-function, per-dtype element-wise tests. Each distinct shape compiles
#: a kernel, and the kernel is the same loop whatever the shape, so a small fixed set
#: (0-d, empty, 1-3 dims) covers the cases while examples share compiled executables;
#: values still vary with every example. Broadcasting is tested separately with
#: Hypothesis-generated shapes (see ``broadcastable_shapes``).
ELEMENTWISE_SHAPES = ((), (0,), (7,), (2, 3), (3, 1, 2))
ELEMENTWISE_SHAPE_PAIRS = (((), ()), ((7,), (7,)), ((2, 3), ()), ((4, 1), (3, 1, 2)), ((0, 3), (1, 3)))


def elementwise_shapes():
    return st.sampled_from(ELEMENTWISE_SHAPES)


def elementwise_shape_pairs():
    return st.sampled_from(ELEMENTWISE_SHAPE_PAIRS)


def broadcastable_shapes(num_shapes=2, *, min_dims=0, max_dims=MAX_DIMS, max_side=MAX_SIDE):
    """``num_shapes`` mutually broadcastable shapes (a tuple), sometimes with zero-size dims."""
    return st.one_of(
        hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims,
                                          min_side=1, max_side=max_side),
        hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims,
                                          min_side=0, max_side=max_side),
    ).map(lambda b: b.input_shapes)


def arrays(dtype, shape, elements_strategy=None, **element_kwargs):
    """A NumPy array of ``dtype`` and ``shape`` (a shape or a strategy for one)."""
    dtype = np.dtype(dtype)
    return hnp.arrays(dtype, shape, elements=elements(dtype, **element_kwargs) if elements_strategy is None else elements_strategy)


def dtype_ids(dtypes):
    return [np.dtype(d).name for d in dtypes]


def examples_in_ci(n: int) -> settings:
    """``n`` examples under the ``ci`` profile and the profile's number otherwise: for
    tests with many parametrized cases, CI runs a thin slice and a campaign
    (``HYPOTHESIS_PROFILE=thorough``) the full count."""
    return settings(max_examples=n) if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else settings()


def index_for(n):
    """An in-range int (negative too) or a slice whose bounds may lie outside [-n, n]."""
    bound = st.one_of(st.none(), st.integers(-n - 3, n + 3))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
    a_slice = st.builds(slice, bound, bound, step)
    return st.one_of(st.integers(-n, n - 1), a_slice) if n else a_slice


@st.composite
def basic_keys(draw, shape, allow_none=True):
    parts = [draw(index_for(n)) for n in shape]
    form = draw(st.sampled_from(["full", "prefix", "ellipsis"]))
    if form == "prefix":
        parts = parts[:draw(st.integers(0, len(parts)))]
    elif form == "ellipsis":
        i = draw(st.integers(0, len(parts)))
        j = draw(st.integers(i, len(parts)))
        parts = parts[:i] + [Ellipsis] + parts[j:]
    if allow_none:
        for _ in range(draw(st.integers(0, 2))):
            parts.insert(draw(st.integers(0, len(parts))), None)
    if len(parts) == 1 and draw(st.booleans()):
        return parts[0]  # a bare int / slice / None / Ellipsis, not a tuple
    return tuple(parts)
