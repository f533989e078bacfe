"""Ops that make arrays of their own: ``parameter``, ``constant`` and ``iota`` of no operand,
``eye`` of its diagonal's number, ``linspace`` of its bounds and step."""

from __future__ import annotations

import numpy as np

from ..opdef import OpDef, register
from ..shape import Shape, static_dims


def _parameter_infer(shapes, attrs):
    return attrs["shape"]


def _parameter_evaluate(args, attrs, shape):
    raise RuntimeError("parameters are bound by the evaluator, not evaluated")


register(OpDef("parameter", _parameter_infer, _parameter_evaluate, 0))


def _constant_infer(shapes, attrs):
    value = attrs["value"].value
    return Shape(value.shape, value.dtype)


register(OpDef("constant", _constant_infer, lambda args, attrs, shape: attrs["value"].value, 0))


def _iota_infer(shapes, attrs):
    dims, dim = static_dims(attrs["dims"], "iota"), attrs["iota_dimension"]
    if not 0 <= dim < len(dims):
        raise ValueError(f"iota: dimension {dim} out of range for rank {len(dims)}")
    dtype = np.dtype(attrs["dtype"])
    if dtype.kind not in _IOTA_KINDS:
        # A count 0, 1, 2, ... has no complex or bool value past 1: convert an integer
        # or float iota instead (the backends' lowerings count in these kinds only).
        raise TypeError(f"iota: counts in integer or floating dtypes, not {dtype}")
    return Shape(dims, dtype)


_IOTA_KINDS = "iuf"


def _iota_evaluate(args, attrs, shape):
    dim = attrs["iota_dimension"]
    ramp = np.arange(shape.dims[dim]).astype(shape.dtype)
    view = [1] * shape.rank
    view[dim] = shape.dims[dim]
    return np.broadcast_to(ramp.reshape(view), shape.dims).copy()


register(OpDef("iota", _iota_infer, _iota_evaluate, 0, size_attrs=("dims",),
               dim_ties=lambda attrs, ranks: ((i, "dims", i) for i in range(len(attrs["dims"])))))


def _eye_infer(shapes, attrs):
    (k,), dims = shapes, static_dims(attrs["dims"], "eye")
    if len(dims) != 2:
        raise ValueError(f"eye: a matrix has 2 dimensions, got {dims}")
    if k.dims or k.dtype != np.int64:
        raise TypeError(f"eye: the diagonal is an int64 scalar, got {k}")
    return Shape(dims, np.dtype(attrs["dtype"]))


def _eye_evaluate(args, attrs, shape):
    return np.eye(*shape.dims, k=int(args[0]), dtype=shape.dtype)


#: A matrix of zeros with ones on its diagonal ``k`` (an int64 scalar, a run-time value:
#: one kernel serves every diagonal; NumPy's ``eye``): what ``compare(iota(0) + k,
#: iota(1))`` converted to ``dtype`` computes, as one op, so that a script's first
#: ``eye`` of a process loads one op kernel, not four (~0.5 ms). Backends lower it by that
#: expansion (``codegen/lowerings/generators.py``).
register(OpDef("eye", _eye_infer, _eye_evaluate, 1, size_attrs=("dims",),
               dim_ties=lambda attrs, ranks: ((i, "dims", i) for i in range(len(attrs["dims"])))))


def _linspace_infer(shapes, attrs):
    dims = static_dims(attrs["dims"], "linspace")
    if len(dims) != 1:
        raise ValueError(f"linspace: a vector has 1 dimension, got {dims}")
    if len(shapes) != 4 or any(s.dims or s.dtype != np.float64 for s in shapes):
        raise TypeError(f"linspace: start, step, last and stop are float64 scalars, got {shapes}")
    return Shape(dims, np.dtype(np.float64))


def _linspace_evaluate(args, attrs, shape):
    start, step, last, stop = (np.float64(a) for a in args)
    ramp = np.arange(shape.dims[0], dtype=np.float64)
    return np.where(ramp == last, stop, ramp * step + start)


#: ``start + i * step`` for each index i of a float64 vector, ``stop`` at the index
#: ``last`` (-1 for none: no endpoint; all four float64 scalars, run-time values: one
#: kernel serves every count and bound): what ``select(iota == last, stop, iota * step +
#: start)`` computes, as one op, so that ``linspace`` loads one op kernel, not five, and
#: records one node, not ten. Backends lower it by that expansion
#: (``codegen/lowerings/generators.py``).
register(OpDef("linspace", _linspace_infer, _linspace_evaluate, 4, size_attrs=("dims",),
               dim_ties=lambda attrs, ranks: ((i, "dims", i) for i in range(len(attrs["dims"])))))

