"""Gathers: ``take``, ``take_along_axis`` and ``searchsorted``.

An index is first wrapped once if negative (``i + n``) and then clamped to
``[0, n - 1]``: no index reads out of bounds (the spec leaves out-of-range indices
unspecified).
"""

from __future__ import annotations

import numpy as np

from ..opdef import OpDef, register
from ..shape import Shape


def _safe_index_reference(idx: np.ndarray, n: int) -> np.ndarray:
    idx = idx.astype(np.int64)
    idx = np.where(idx < 0, idx + n, idx)
    return np.clip(idx, 0, max(n - 1, 0))


def _check_indices(indices: Shape, where: str) -> None:
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{where}: indices must be integers, got {indices.dtype}")


# --- take: out = x[..., indices, ...] along one axis ------------------------------------

def _take_infer(shapes, attrs):
    x, indices = shapes
    axis = attrs["axis"]
    _check_indices(indices, "take")
    if not 0 <= axis < x.rank:
        raise ValueError(f"take: axis {axis} out of range for {x}")
    if x.dims[axis] == 0 and indices.size:
        raise IndexError("take: cannot take from an empty axis")
    return Shape(x.dims[:axis] + indices.dims + x.dims[axis + 1:], x.dtype)


def _take_evaluate(args, attrs, shape):
    x, indices = args
    axis = attrs["axis"]
    return np.take(x, _safe_index_reference(indices, x.shape[axis]), axis=axis)


register(OpDef("take", _take_infer, _take_evaluate, 2))


# --- take_along_axis: indices has x's rank; out[.., i, ..] = x[.., indices[.., i, ..], ..] ---

def _along_infer(shapes, attrs):
    x, indices = shapes
    axis = attrs["axis"]
    _check_indices(indices, "take_along_axis")
    if indices.rank != x.rank or any(a != b for i, (a, b) in enumerate(zip(x.dims, indices.dims)) if i != axis):
        raise ValueError(f"take_along_axis: indices {indices} do not match {x} outside axis {axis}")
    if x.dims[axis] == 0 and indices.size:
        raise IndexError("take_along_axis: cannot take from an empty axis")
    return Shape(indices.dims, x.dtype)


def _along_evaluate(args, attrs, shape):
    x, indices = args
    axis = attrs["axis"]
    return np.take_along_axis(x, _safe_index_reference(indices, x.shape[axis]), axis=axis)


register(OpDef("take_along_axis", _along_infer, _along_evaluate, 2))


# --- searchsorted: insertion points of values in a sorted 1-D array -------------------

def _search_infer(shapes, attrs):
    sorted_, values = shapes
    if sorted_.rank != 1 or sorted_.dtype != values.dtype:
        raise TypeError(f"searchsorted: needs a 1-D array and values of its dtype, got {sorted_}, {values}")
    if attrs["side"] not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {attrs['side']!r}")
    return Shape(values.dims, np.dtype(np.int64))


def _search_evaluate(args, attrs, shape):
    sorted_, values = args
    return np.searchsorted(sorted_, values, side=attrs["side"]).astype(np.int64)


register(OpDef("searchsorted", _search_infer, _search_evaluate, 2))
