"""The op kernels built when plaidarray is installed, so that a fresh install's first
script runs on kernels already built.

The baseline tier (``trace/baseline.py``) runs each op of a graph on a kernel compiled
once per op signature and kept in the persistent cache. Installation runs ``build`` (the
build hook in ``setup.py`` calls ``python -m plaidarray.prebuild <directory>``): the
functions of the standard on every dtype they take, at the ranks and axes NumPy-style code
uses, run op by op with the persistent cache pointed at ``directory``, which then holds
their kernels (full code, optimised), the vector math library and the code's bundles. The
persistent cache reads that directory, inside the installed package, before the user's own
(``object_cache.installed_directory``); after the build the bundles' object code, which the
build kept, is linked into one shared object, the installation's library, loaded once
(``installed_library.py``), each vector math function's shared object (and that of a
bundle left out of the library) becomes a file of its own, loaded where it is
(``bundles.unpack``), each executable's entry holds what its kernels' and their bundles'
entries say (``cache_entry.resolve``), so an op's first use reads one entry, the op kernels
met are catalogued by their signature, so an op's first use finds its kernel without making
its HLO (``op_catalogue.py``), and stamps of the sources they were built from and of llvmlite's version let a process take their digest
without reading them and the version without importing llvmlite (``sources.py``). Kernels are keyed like any compiled code (the HLO,
the host CPU, the versions of LLVM and of plaidarray's sources): built on the machine that
installs, they serve it; a copy of the package on another CPU, or sources edited since,
simply miss, and the kernels missed are compiled on first use and kept in the user's cache.

What the corpus does not cover (an op signature it never records: an unusual rank,
broadcast or axis) compiles on first use, once per machine. Operations whose code is made
for their sizes (control flow) are not built here; FFTs of every length run on the FFT
library's templates, which are.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from . import config
from .api.manipulation import JOIN_OPERANDS
from .backend.llvm import object_cache, sources
from .backend.llvm_cpu import bundles, cache_entry, installed_library, op_catalogue

#: The environment of the build: every read runs op by op (no fused compile), kernels are
#: built in their full code at once (no first tier), and in this process, none of them
#: taken from an installation already there (a rebuild builds every kernel anew).
BUILD_ENVIRONMENT = {"PLAIDARRAY_FUSE_AFTER_MS": "1e12", "PLAIDARRAY_TIER_UP_MS": "0",
                     "PLAIDARRAY_INSTALLED_KERNELS": "0", "PLAIDARRAY_INPROCESS_COMPILES": "1000000",
                     "PLAIDARRAY_MAX_PENDING": "0"}

Thunk = Callable[[], Any]

#: The dtypes of the corpus, by the namespace's names.
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
          "complex64", "complex128")


def _arrays(xp: Any, dtype: np.dtype) -> dict[str, Any]:
    """Arrays of ``dtype`` of the ranks the corpus uses, with values every function takes
    (positive, below 1, so that logs, roots and inverse sines are defined)."""
    rng = np.random.default_rng(0)

    def make(shape: tuple[int, ...]) -> Any:
        values: np.ndarray = rng.uniform(0.1, 0.9, shape)
        if dtype.kind == "c":
            values = values + 0.5j * rng.uniform(0.1, 0.9, shape)
        elif dtype.kind in "iu":
            values = rng.integers(1, 5, shape)
        elif dtype.kind == "b":
            values = values > 0.5
        return xp.asarray(values.astype(dtype))
    return {"scalar": make(()), "vector": make((5,)), "matrix": make((3, 4)), "cube": make((2, 3, 4)),
            "column": make((3, 1)), "row": make((1, 4)), "hyper": make((2, 3, 4, 5)), "penta": make((2, 3, 2, 2, 3))}


def _elementwise(xp: Any, a: dict[str, Any]) -> Iterator[Thunk]:
    """Every elementwise function on 0-d and on longer operands (an elementwise op's
    kernel serves any shape, flattened), with a Python scalar, and broadcast across ranks."""
    from .api import elementwise

    for name in elementwise.__all__:
        fn = getattr(xp, name)
        if name == "clip":
            continue
        if _arity(fn) == 1:
            yield from (partial(fn, a["scalar"]), partial(fn, a["vector"]))
            continue
        for kind in ("scalar", "vector"):
            x = a[kind]
            yield from (partial(fn, x, x), partial(fn, x, 2), partial(fn, x, 0.5), partial(fn, 2, x))
        yield from (partial(fn, a["matrix"], a["vector"][:4]), partial(fn, a["column"], a["row"]),
                    partial(fn, a["matrix"], a["column"]), partial(fn, a["cube"], a["matrix"]),
                    partial(fn, a["matrix"], a["scalar"]))
    def select(x: Any, other: Any) -> Any:
        return xp.where(x == x, x, other)
    for kind in ("scalar", "vector", "matrix"):
        x = a[kind]
        yield from (partial(xp.clip, x, 0.2, 0.7), partial(select, x, x), partial(select, x, 0))


def _arity(fn: Callable) -> int:
    import inspect

    return sum(1 for p in inspect.signature(fn).parameters.values() if p.kind == p.POSITIONAL_ONLY)


def _conversions(xp: Any, dtypes: tuple[np.dtype, ...], arrays: dict[np.dtype, dict[str, Any]]) -> Iterator[Thunk]:
    for source in dtypes:
        for target in dtypes:
            for kind in ("scalar", "vector"):
                yield partial(xp.astype, arrays[source][kind], target)


def _statistics(xp: Any, a: dict[str, Any]) -> Iterator[Thunk]:
    """Reductions over every axis of ranks 1 to 3, kept or not, over every set of axes of
    rank 4 that no lower rank's merge to (no two kept axes adjacent: ``hlo.opdef.Merge``
    merges kept runs only), over all axes and alternate ones of rank 5 (higher ranks' runs of
    reduced and of kept axes are merged before, ``api.graph.MERGED_RANK``, so every
    reduction of rank 5 or more runs on these or lower ranks'), and scans along every kind
    of axis (first, last, between two: any rank's merge to these)."""
    names = ("sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "argmax", "argmin", "count_nonzero")
    for name in names:
        fn = getattr(xp, name)
        for kind, axes in (("vector", (None, 0)), ("matrix", (None, 0, 1)), ("row", (None, 0, 1)),
                           ("column", (None, 0, 1)), ("cube", (None, 0, 1, 2, (1, 2), (0, 2), (0, 1))),
                           ("hyper", (None, (1, 3), (0, 2), (1, 2), (0, 1, 3), (0, 1, 2), (0, 2, 3), (1, 2, 3))),
                           ("penta", (None, (1, 3), (0, 2, 4)))):
            for axis in axes:
                yield partial(fn, a[kind], axis=axis)
        yield from (partial(fn, a["matrix"], axis=1, keepdims=True), partial(fn, a["matrix"], axis=0, keepdims=True),
                    partial(fn, a["hyper"], axis=-1, keepdims=True))
    for name in ("cumulative_sum", "cumulative_prod"):
        fn = getattr(xp, name)
        yield from (partial(fn, a["vector"]), partial(fn, a["vector"], include_initial=True),
                    partial(fn, a["matrix"], axis=0), partial(fn, a["matrix"], axis=1), partial(fn, a["cube"], axis=1))
    # sums and products accumulated in the array's own dtype (``dtype=x.dtype``: an int32
    # row-times-column loop's), which for integers is not the default accumulator
    own = a["vector"].dtype
    for name in ("sum", "prod", "cumulative_sum", "cumulative_prod"):
        fn = getattr(xp, name)
        yield from (partial(fn, a["vector"], dtype=own), partial(fn, a["matrix"], axis=0, dtype=own),
                    partial(fn, a["matrix"], axis=1, dtype=own), partial(fn, a["cube"], axis=1, dtype=own))
    yield from (partial(xp.sum, a["matrix"], dtype=own), partial(xp.prod, a["matrix"], dtype=own))
    # a reduced run of axes is not merged (``hlo.opdef.Merge`` merges kept runs): each set of
    # a 3-d array's, and the whole of a 4-d one (from rank 5 runs of reduced axes merge)
    for axis in (None, 0, 2, (0, 1), (1, 2), (0, 2)):
        yield from (partial(xp.sum, a["cube"], axis=axis, dtype=own), partial(xp.prod, a["cube"], axis=axis, dtype=own))
    yield from (partial(xp.sum, a["hyper"], dtype=own), partial(xp.prod, a["hyper"], dtype=own))


def _normalisations(xp: Any, a: dict[str, Any]) -> Iterator[Thunk]:
    """Statistics over several axes of 3-d and 4-d arrays, kept and broadcast back as a
    batch normalisation does (an image batch's channels, ``(0, 2, 3)``), for the dtypes
    whose statistics are their own (floating point)."""
    if np.dtype(a["vector"].dtype).kind not in "fc":
        return
    for kind, axes in (("cube", ((0, 2), (0, 1), (1, 2))), ("hyper", ((0, 2, 3), (1, 2, 3), (2, 3), (0, 1)))):
        x = a[kind]
        for axis in axes:
            yield from (lambda x=x, axis=axis: (x - xp.mean(x, axis=axis, keepdims=True)) / xp.std(x, axis=axis, keepdims=True),
                        partial(xp.max, x, axis=axis), partial(xp.sum, x, axis=axis))


def _manipulation(xp: Any, a: dict[str, Any]) -> Iterator[Thunk]:
    """Views, joins, reorderings and creation functions at ranks 1 to 3."""
    v, m, c = a["vector"], a["matrix"], a["cube"]
    thunks: list[Thunk] = [lambda: m.T, lambda: xp.permute_dims(c, (2, 0, 1)), lambda: xp.permute_dims(c, (0, 2, 1)),
                lambda: xp.permute_dims(c, (1, 0, 2)), lambda: xp.permute_dims(a["hyper"], (0, 2, 1, 3)),
                lambda: xp.reshape(m, (4, 3)), lambda: xp.reshape(c, (6, 4)),
                lambda: v[1:4], lambda: v[::2], lambda: v[::-1], lambda: m[1:, :2], lambda: m[:, 1], lambda: m[1],
                lambda: m[::-1], lambda: c[:, 1:], lambda: c[..., 0], lambda: v[None, :], lambda: v[:, None],
                lambda: xp.flip(m, axis=0), lambda: xp.flip(m, axis=1), lambda: xp.flip(v), lambda: xp.flip(c, axis=1),
                lambda: xp.flip(c, axis=(0, 2)),  # with matrices', every rank's reversals (their runs merge)
                lambda: xp.roll(v, 2), lambda: xp.roll(m, 1, axis=1), lambda: xp.roll(m, 1, axis=0),
                lambda: xp.roll(c, 1, axis=1), lambda: xp.concat([v, v]),
                lambda: xp.concat([v, v, v]), lambda: xp.concat([m, m]), lambda: xp.concat([m, m], axis=1),
                lambda: xp.concat([c, c], axis=2), lambda: xp.stack([v, v]), lambda: xp.stack([v, v, v]),
                lambda: xp.stack([v, v], axis=1), lambda: xp.stack([m, m]), lambda: xp.broadcast_to(v, (3, 5)),
                lambda: xp.broadcast_to(a["scalar"], (5,)), lambda: xp.broadcast_to(a["scalar"], (3, 4)),
                lambda: xp.broadcast_to(c[:, :1], c.shape), lambda: xp.broadcast_to(c[:1, :, :1], c.shape),
                lambda: xp.tile(v, (2,)), lambda: xp.tile(m, (2, 1)), lambda: xp.tile(a["row"], (2, 1)), lambda: xp.repeat(v, 2),
                lambda: xp.expand_dims(v, axis=0), lambda: xp.squeeze(a["column"], axis=1),
                lambda: xp.moveaxis(c, 0, -1), lambda: xp.tril(m), lambda: xp.triu(m), lambda: xp.tril(c),
                lambda: xp.triu(a["hyper"], k=1), lambda: xp.diff(v),
                lambda: xp.diff(m, axis=0), lambda: xp.zeros_like(m), lambda: xp.ones_like(v),
                lambda: xp.full_like(v, 3), lambda: xp.permute_dims(c, (0, 1, 2))]
    yield from thunks
    def several(x: Any, count: int) -> list:
        """``count`` distinct arrays like ``x`` (the same array twice is one operand)."""
        return [xp.flip(x, axis=-1) for _ in range(count)]
    for count in range(2, JOIN_OPERANDS + 1):  # joins of as many arrays as a loop's list holds (the operands are structure)
        yield from (lambda count=count: xp.concat(several(v, count)), lambda count=count: xp.concat(several(m, count)),
                    lambda count=count: xp.stack(several(v, count)),
                    lambda count=count: xp.concat(several(a["row"], count)),
                    lambda count=count: xp.concat(several(a["column"], count), axis=1),
                    lambda count=count: xp.stack(several(v, count), axis=1),
                    lambda count=count: xp.concat(several(c, count), axis=1))  # a join between two runs of axes
    # a join with one element or one edge row or column (an array grown by one value, a
    # stencil's padding): a size of 1 among a join's operands is a signature of its own
    yield from (lambda: xp.concat([v, v[:1]]), lambda: xp.concat([v[:1], v]),
                lambda: xp.concat([m[:, :1], m, m[:, -1:]], axis=1), lambda: xp.concat([m[:1], m, m[-1:]]))
    yield from (lambda: xp.concat([m, m[:, :2]], axis=1), lambda: xp.concat([m, m[:2]]), lambda: a["hyper"][:, :, 1:3],
                lambda: xp.stack([m, xp.flip(m, axis=0)], axis=1), lambda: xp.concat([c, xp.flip(c, axis=0)], axis=1))
    yield from _alternating(xp, a["hyper"], a["penta"])
    yield from _computed_views(xp, a)


def _alternating(xp: Any, h: Any, p: Any) -> Iterator[Thunk]:
    """What runs of axes cannot merge below rank 4: every other axis of a 4-d and a 5-d
    array reversed, broadcast (a mask of (2, 1, 3, 1) against (2, 4, 3, 5)) or sliced with
    a step (a video's frames and pixels downsampled)."""
    for x, odd, even in ((h, (1, 3), (0, 2)), (p, (1, 3), (0, 2, 4))):
        kept = [slice(None) if axis in even else slice(None, 1) for axis in range(x.ndim)]
        new = [slice(None, 1) if axis in even else slice(None) for axis in range(x.ndim)]
        yield from (partial(xp.flip, x, axis=odd), partial(xp.flip, x, axis=even),
                    partial(xp.broadcast_to, x[tuple(kept)], x.shape), partial(xp.broadcast_to, x[tuple(new)], x.shape))
    yield from (lambda: h[:, :2, ::2, ::2], lambda: h[1:, :, ::2, :], lambda: p[1:, :, ::2, :, 1:])
    every_other = (slice(None, None, 2), slice(None), slice(None, None, 2), slice(None), slice(None, None, 2))
    yield from (partial(_stored, xp, p, every_other, 1), partial(_stored, xp, p, every_other[1:], 1),
                partial(_stored, xp, p, every_other, p[every_other]))


def _stored(xp: Any, x: Any, key: Any, value: Any, computed: bool | None = False) -> Any:
    """``x[key] = value`` on a copy of ``x``, pending or ``computed`` (then the write
    updates the buffer the copy alone holds in place, as a loop's writes do); ``None``:
    into a view of the whole of a computed copy, which writes through to it."""
    x = xp.asarray(x, copy=True)
    if computed is not False:
        np.asarray(x)
    target = x[...] if computed is None else x
    target[key] = value
    return x


#: The dtypes whose computed arrays' views the corpus indexes (on every dtype, 23 s of the
#: build's 180 s in one process): the default ones and single precision; others compile
#: on first use.
VIEW_DTYPES = ("float32", "float64", "complex64", "complex128", "int32", "int64")


def _twice_indexed(x: Any, key: Any) -> Any:
    """A view of an array not computed yet: ``(x + x)[key]``."""
    return (x + x)[key]


def _computed_views(xp: Any, a: dict[str, Any]) -> Iterator[Thunk]:
    """Basic indexing of arrays not computed yet, which nothing else holds (a computed
    array's view is its memory seen with other strides; a pending one's is a ``slice``, or
    a ``dynamic_slice`` for an integer index, and its export, its base gone, writes it into
    memory of the base's shape with a ``pad``): every pattern of unit and other steps at
    ranks 1 to 3 (a step above 1 is a run-time value), steps of 3 (a pad's interior
    above 1 is one), backwards, and integer indices, of arrays with a unit last axis too;
    such arrays reversed, and their differences."""
    integer_views: dict[str, list[Any]] = {  # a frame, a channel or a plane of a stack, of every dtype
        "cube": [1, (slice(None), 1), (Ellipsis, 1), (slice(None), slice(1, 2))],
        "hyper": [1, (slice(None), 1), (Ellipsis, 1), (slice(None), slice(1, 3)), (slice(None), slice(None), 2)]}
    if np.dtype(a["vector"].dtype).name not in VIEW_DTYPES:
        yield from (partial(_twice_indexed, a[kind], key) for kind, indices in integer_views.items() for key in indices)
        return
    keys: dict[str, list[Any]] = {
        "vector": [slice(None, None, 2), slice(1, None, 3), slice(None, None, -1), slice(None, None, -2), 2],
        "matrix": [slice(None, None, 2), (slice(None), slice(None, None, 2)), (slice(None, None, 2),) * 2,
                   (slice(None), slice(None, None, 3)), slice(None, None, -1), (slice(None), slice(None, None, -1)),
                   (slice(1, None), slice(1, -1)), (slice(None), -1), 2],
        "cube": [slice(None, None, 2), (slice(None), slice(None, None, 2)), (Ellipsis, slice(None, None, 2)),
                 (slice(None, None, 2),) * 2, (slice(None), slice(None, None, 2), slice(None, None, 2)),
                 (slice(None, None, 2), slice(None), slice(None, None, 2)), (slice(None, None, 2),) * 3,
                 (slice(None), slice(1, -1), slice(None, None, 2)), (Ellipsis, slice(None, None, 3)),
                 (slice(None), 2), (Ellipsis, 0), 1, (slice(None), slice(1, None), slice(None, 2))],
        "column": [(slice(None), 0)], "thin": [(Ellipsis, 0)], "hyper": integer_views["hyper"]}
    arrays = {**a, "thin": a["cube"][..., :1]}  # a result of keepdims=True, or of x[..., None]

    def reversed_(x: Any, axes: tuple[int, ...]) -> Any:
        return xp.flip(x + x, axis=axes)

    def differences(x: Any, axis: int) -> Any:
        return xp.diff(x + x, axis=axis)  # two slices of a computed array
    for kind, indices in keys.items():
        yield from (partial(_twice_indexed, arrays[kind], key) for key in indices)
    for kind, axes in (("vector", (0,)), ("matrix", (0,)), ("matrix", (1,)), ("matrix", (0, 1)), ("cube", (0, 1, 2))):
        yield partial(reversed_, arrays[kind], axes)
    for kind, axis in (("vector", 0), ("matrix", 0), ("matrix", 1)):
        yield partial(differences, arrays[kind], axis)


def _indexing(xp: Any, a: dict[str, Any]) -> Iterator[Thunk]:
    """Reading and writing by integers, index arrays and masks."""
    v, m, c, h = a["vector"], a["matrix"], a["cube"], a["hyper"]
    index = xp.asarray(np.array([0, 2, 1]))
    rows, columns = xp.asarray(np.array([[0, 2, 1, 0], [1, 1, 0, 2]])), xp.asarray(np.array([[0, 3], [1, 2], [3, 0]]))
    thunks: list[Thunk] = [lambda: xp.take(v, index), lambda: xp.take(m, index, axis=1), lambda: xp.take(m, index[:2], axis=0),
                lambda: xp.take_along_axis(m, xp.argsort(m, axis=1), axis=1), lambda: v[index],
                lambda: xp.take_along_axis(m, xp.argsort(m, axis=1)[:, :1], axis=1),
                lambda: xp.take_along_axis(m, xp.argsort(m, axis=0)[:1], axis=0),
                # by 0-d indices not computed yet (computed ones are read as ints: an element's load)
                lambda: m[index[:2]], lambda: v[index[0] * 1], lambda: m[index[0]], lambda: m[index[0] * 1, index[1] * 1],
                lambda: m[:, index[0]], lambda: c[:, index[0]],  # one position along an inner axis (``_advanced``)
                lambda: v[v > v[0]], lambda: m[m > m[0, 0]], lambda: xp.nonzero(v > v[0])[0],
                lambda: xp.take(a["cube"], index[:2], axis=1),  # between two runs of axes (``take``'s merge)
                # along each kind of axis by indices of any dtype's (an argsort's are of real dtypes only)
                lambda: xp.take_along_axis(m, rows, axis=0), lambda: xp.take_along_axis(m, columns, axis=1),
                lambda: xp.take_along_axis(v, index, axis=0),
                lambda: xp.take_along_axis(a["cube"], xp.broadcast_to(columns[:2, None, :2], (2, 3, 2)), axis=2),
                lambda: xp.take_along_axis(a["cube"], xp.broadcast_to(rows[:, None, :], (2, 1, 4)), axis=1)]
    yield from thunks

    def writes(computed: bool | None) -> list[Thunk]:
        return [lambda: _stored(xp, v, 1, v[0], computed), lambda: _stored(xp, v, 1, 2, computed),
                lambda: _stored(xp, v, slice(1, 3), v[:2], computed), lambda: _stored(xp, v, v > v[0], v[0], computed),
                # a slice's block of a value broadcast: an update (in place where the array
                # alone holds its buffer), where one of the block's shape is the transfer's store
                lambda: _stored(xp, v, slice(1, 3), v[:1], computed), lambda: _stored(xp, m, slice(1, 3), m[:1], computed),
                lambda: _stored(xp, v, v > v[0], 0, computed), lambda: _stored(xp, m, 1, v[:4], computed),
                lambda: _stored(xp, m, 1, 2.0, computed), lambda: _stored(xp, m, (1, 2), m[0, 0], computed),
                lambda: _stored(xp, m, (1, 2), 1, computed), lambda: _stored(xp, m, (slice(None), 1), m[:, 0], computed),
                lambda: _stored(xp, m, m > m[0, 0], 0, computed), lambda: _stored(xp, v, index, v[:3], computed),
                # scatters: a vector's positions, a matrix's rows, columns and elements
                lambda: _stored(xp, v, index, 1, computed), lambda: _stored(xp, v, index, v[index] + v[0], computed),
                lambda: _stored(xp, m, index[:2], 0, computed), lambda: _stored(xp, m, index[:2], m[:2], computed),
                lambda: _stored(xp, m, (slice(None), index), 1, computed),
                lambda: _stored(xp, m, (index, index), v[:3], computed),
                lambda: _stored(xp, m, slice(1, 3), 0.0, computed), lambda: _stored(xp, m, slice(1, 3), m[:2], computed),
                lambda: _stored(xp, m, (slice(None), slice(1, 3)), 0.0, computed),
                lambda: _stored(xp, a["penta"], (slice(None), 1), a["penta"][:, 0], computed),  # a 5-d window written (a view of one exported)
                # 3-d and 4-d windows written (a frame, a channel, an image's block; views of them exported)
                lambda: _stored(xp, c, 1, c[0], computed), lambda: _stored(xp, c, (slice(None), 1), 0, computed),
                lambda: _stored(xp, c, (slice(None), slice(1, 3), slice(1, 3)), c[:, :2, :2], computed),
                lambda: _stored(xp, h, 1, 0, computed), lambda: _stored(xp, h, (slice(None), slice(1, 3)), h[:, :2], computed),
                lambda: _stored(xp, h, (Ellipsis, 0), h[..., 1], computed),
                lambda: _stored(xp, h, (0, slice(None), slice(1, 3), slice(2, 4)), h[1, :, :2, :2], computed),
                # strided 3-d windows written (an image's pixels marked, a signal decimated: any
                # rank whose axes merge to three runs)
                lambda: _stored(xp, c, (slice(None), slice(None, None, 2), slice(None, None, 2)), 0, computed),
                lambda: _stored(xp, c, (slice(None), slice(None, None, 2), 1), c[:, ::2, 0], computed),
                # a strided 2-d window written (every other column; a diagonal's, ``Diagonal.inverse``)
                lambda: _stored(xp, m, (slice(None), slice(None, None, 2)), 0, computed),
                # strided 4-d windows written (a zero-inserting upsample)
                lambda: _stored(xp, h, (slice(None), slice(1, None), slice(None, None, 2)), 0, computed),
                lambda: _stored(xp, h, (slice(None), slice(None, None, 2), slice(None, None, 2), slice(None, 3)),
                               h[:, :2, :2, :3], computed)]
    yield from writes(False)
    yield from writes(True)
    yield from writes(None)


def _sorting(xp: Any, a: dict[str, Any]) -> Iterator[Thunk]:
    v, m = a["vector"], a["matrix"]
    thunks: list[Thunk] = [lambda: xp.sort(v), lambda: xp.argsort(v), lambda: xp.sort(m, axis=1), lambda: xp.sort(m, axis=0),
                lambda: xp.argsort(m, axis=1), lambda: xp.sort(v, descending=True),
                lambda: xp.argsort(v, descending=True), lambda: xp.searchsorted(xp.sort(v), v),
                lambda: xp.searchsorted(xp.sort(v), v, side="right"), lambda: xp.searchsorted(xp.sort(v), v[0]),
                lambda: xp.searchsorted(xp.sort(v), v[0], side="right"), lambda: xp.unique_values(v),
                lambda: xp.unique_counts(v), lambda: xp.unique_inverse(v), lambda: xp.unique_all(v),
                lambda: xp.isin(v, v[:2])]
    yield from thunks
    c = a["cube"]  # along an axis between two others (any rank's axes merge to these, ``hlo.opdef.along_axis``)
    yield from (lambda: xp.sort(c, axis=1), lambda: xp.argsort(c, axis=1), lambda: xp.argsort(m, axis=0),
                lambda: xp.take_along_axis(c, xp.argsort(c, axis=1), axis=1))
    for x, axis in ((m, 1), (m, 0), (c, 1)):  # descending, alike
        yield from (partial(xp.sort, x, axis=axis, descending=True), partial(xp.argsort, x, axis=axis, descending=True))


def _products(xp: Any, dtype: np.dtype) -> Iterator[Thunk]:
    """Matrix products of every rank combination NumPy-style code writes, at sizes that
    are equal and that differ (a product's own sizes are tied only as its shape rule ties
    them, but the reshapes around a batch of products tie sizes of equal value,
    ``trace/dynamic.py``)."""
    rng = np.random.default_rng(1)

    def array(*shape: int) -> Any:
        return xp.asarray(rng.uniform(0.1, 0.9, shape).astype(dtype) if dtype.kind != "b" else rng.uniform(size=shape) > 0.5)
    for m, k, n in ((3, 4, 5), (4, 4, 4), (3, 4, 4), (4, 4, 3), (4, 3, 4), (3, 3, 4), (4, 3, 3)):
        yield from (partial(xp.matmul, array(m, k), array(k, n)), partial(xp.matmul, array(m, k), array(k)),
                    partial(xp.matmul, array(k), array(k, n)), partial(xp.matmul, array(2, m, k), array(2, k, n)),
                    partial(xp.matmul, array(2, m, k), array(k, n)), partial(xp.matmul, array(m, k), array(2, k, n)))
    # a product's unit dimensions stay in its code (a matrix-vector routine,
    # ``Compiler.nonunit_ops``): a batch of one row, a column, an outer product
    for m, k, n in ((1, 4, 5), (3, 4, 1), (1, 4, 1), (3, 1, 5), (1, 1, 5), (3, 1, 1), (1, 1, 1)):
        yield from (partial(xp.matmul, array(m, k), array(k, n)),
                    partial(xp.matmul, array(2, m, k), array(2, k, n)))  # a batch's: R @ v[..., None]
    yield from (partial(xp.matmul, array(1, 4), array(4)), partial(xp.matmul, array(4), array(4, 1)),
                partial(xp.matmul, array(3, 1), array(1)), partial(xp.matmul, array(1), array(1, 5)),
                partial(xp.matmul, array(1), array(1)), partial(xp.matmul, array(1, 1), array(1)),
                partial(xp.matmul, array(1), array(1, 1)))


def _linear_algebra(xp: Any, a: dict[str, Any]) -> Iterator[Thunk]:
    """Products of the corpus's arrays, and the functions built on them."""
    v, m, c = a["vector"], a["matrix"], a["cube"]
    square, other = m[:, :3], xp.flip(m, axis=0)  # another array of m's shape (one twice is one operand)
    thunks: list[Thunk] = [lambda: m @ m.T, lambda: m.T @ m, lambda: m @ v[:4], lambda: v[:3] @ m, lambda: v @ v,
                lambda: square @ square, lambda: c @ m.T, lambda: m.T @ c[0], lambda: c @ xp.permute_dims(c, (0, 2, 1)),
                lambda: xp.vecdot(m, m), lambda: xp.vecdot(m, m, axis=0), lambda: xp.tensordot(m, m, axes=([1], [1])),
                lambda: xp.vecdot(m, other), lambda: xp.vecdot(m, other, axis=0), lambda: xp.tensordot(m, m, axes=2),
                lambda: xp.tensordot(m, other, axes=2), lambda: xp.tensordot(m, other, axes=([1], [1])),
                lambda: xp.tensordot(m, other, axes=([0], [0])),
                lambda: xp.tensordot(m, other.T, axes=([0], [1])), lambda: xp.vecdot(c, xp.flip(c, axis=0), axis=1),
                lambda: xp.vecdot(c, xp.flip(c, axis=0), axis=0), lambda: xp.vecdot(c, c, axis=1),
                lambda: xp.vecdot(c, c, axis=0), lambda: xp.tensordot(v, xp.flip(v), axes=0),
                lambda: v @ xp.flip(v), lambda: xp.vecdot(v, xp.flip(v)),
                lambda: v[:3] @ c,  # a batch's middle axis contracted, free axes on both sides
                lambda: a["hyper"] @ xp.matrix_transpose(a["hyper"]),
                lambda: a["hyper"] - xp.max(a["hyper"], axis=-1, keepdims=True),
                lambda: xp.linalg.outer(v, v), lambda: xp.linalg.vector_norm(v), lambda: xp.linalg.vector_norm(m, axis=1),
                lambda: xp.linalg.matrix_norm(m), lambda: xp.linalg.trace(square), lambda: xp.linalg.diagonal(m),
                lambda: xp.linalg.diagonal(c), lambda: xp.vecdot(c[:, :, None, :], c[:, None, :, :]),  # pairwise, batched
                lambda: xp.linalg.cross(v[:3], v[1:4]), lambda: xp.eye(3), lambda: xp.eye(3, 4, k=1)]
    yield from thunks
    yield from _decompositions(xp, square)
    yield from _rectangular_decompositions(xp, m)


def _rectangular_decompositions(xp: Any, wide: Any) -> Iterator[Thunk]:
    """QR and SVD of matrices with fewer rows than columns and with more: each kernel
    takes any sizes of its orientation (``hlo.ops.custom_call.sides``)."""
    if np.dtype(wide.dtype).kind not in "fc":
        return
    linalg = xp.linalg
    for x in (wide, wide.T, xp.stack([wide, wide * 2]), xp.stack([wide.T, wide.T * 2])):  # and batches of them
        yield from (partial(linalg.qr, x), partial(linalg.qr, x, mode="complete"), partial(linalg.svd, x),
                    partial(linalg.svd, x, full_matrices=False), partial(linalg.svdvals, x), partial(linalg.pinv, x),
                    partial(linalg.matrix_rank, x))


def _decompositions(xp: Any, square: Any) -> Iterator[Thunk]:
    """The LAPACK calls of square matrices (whose kernels take any size), with right-hand
    sides of the matrix's size and of others (floating-point matrices: the others have none)."""
    if np.dtype(square.dtype).kind not in "fc":
        return
    spd = square @ square.T + xp.eye(square.shape[0], dtype=square.dtype) * 3
    rhs = xp.concat([spd, spd[:, :1]], axis=1)
    linalg = xp.linalg
    thunks: list[Thunk] = [lambda: linalg.cholesky(spd), lambda: linalg.solve(spd, spd[:, 0]),
                           lambda: linalg.solve(spd, rhs), lambda: linalg.solve(spd, spd), lambda: linalg.inv(spd),
                           lambda: linalg.det(spd), lambda: linalg.slogdet(spd), lambda: linalg.eigh(spd),
                           lambda: linalg.eigvalsh(spd), lambda: linalg.eigvals(spd), lambda: linalg.qr(spd),
                           lambda: linalg.svd(spd), lambda: linalg.svdvals(spd), lambda: linalg.matrix_rank(spd),
                           lambda: linalg.pinv(spd)]
    yield from thunks
    stack = xp.stack([spd, spd * 2])  # a batch of matrices, with right-hand sides of one column and of many
    yield from (lambda: linalg.solve(stack, stack[..., :1]), lambda: linalg.solve(stack, stack),
                lambda: linalg.inv(stack), lambda: linalg.det(stack), lambda: linalg.cholesky(stack),
                lambda: linalg.eigh(stack), lambda: linalg.slogdet(stack), lambda: linalg.eigvalsh(stack),
                lambda: linalg.svdvals(stack), lambda: linalg.qr(stack), lambda: linalg.svd(stack),
                lambda: linalg.eigvals(stack), lambda: linalg.eig(spd), lambda: linalg.eig(stack))


def _transforms(xp: Any, a: dict[str, Any], dtype: np.dtype) -> Iterator[Thunk]:
    """FFTs of even and odd lengths along rows and columns: the templates of the FFT
    library (``backend/llvm_cpu/fft_library.py``), which serve every length (Bluestein's:
    131 points, and the real kinds of 262, whose half is 131), and the ops around them
    (an axis moved last and back, the norms' scales)."""
    fft = xp.fft
    m, v = a["matrix"], a["vector"]
    if dtype.kind not in "fc":
        return
    long = xp.asarray(np.linspace(0.1, 0.9, 131).astype(dtype))  # a prime above 127: Bluestein's algorithm
    if dtype.kind == "c":
        yield from [lambda: fft.fft(v), lambda: fft.ifft(v), lambda: fft.fft(m), lambda: fft.ifft(m, axis=0),
                    lambda: fft.fft(m, norm="ortho"), lambda: fft.irfft(v), lambda: fft.irfft(v, n=9),
                    lambda: fft.irfft(m, axis=0), lambda: fft.fft(long), lambda: fft.ifft(long),
                    lambda: fft.irfft(long[:66], n=131), lambda: fft.irfft(xp.concat([long, long[:1]]), n=262),
                    lambda: fft.fft(m, n=m.shape[-1] + 3), lambda: fft.fft(v, n=v.shape[0] + 3)]  # zero-padded first
    else:
        pairs = xp.concat([long, long])
        yield from [lambda: fft.rfft(v), lambda: fft.rfft(m), lambda: fft.rfft(m, axis=0), lambda: fft.rfft(v[:4]),
                    lambda: fft.irfft(fft.rfft(v), n=5), lambda: fft.irfft(fft.rfft(m)), lambda: fft.rfft(long),
                    lambda: fft.rfft(pairs), lambda: fft.rfft(m, n=m.shape[-1] + 3),
                    lambda: fft.rfft(v, n=v.shape[0] + 3)]  # a vector zero-padded (SciPy's fftconvolve)


def _creation(xp: Any, dtype: np.dtype) -> Iterator[Thunk]:
    thunks: list[Thunk] = [lambda: xp.zeros(5, dtype=dtype), lambda: xp.ones((3, 4), dtype=dtype),
                lambda: xp.full((5,), 1, dtype=dtype), lambda: xp.eye(4, dtype=dtype)]
    yield from thunks
    if dtype.kind in "iuf":
        yield lambda: xp.arange(5, dtype=dtype)
        yield lambda: xp.arange(1, 9, 2, dtype=dtype)
    if dtype.kind in "fc":
        yield lambda: xp.linspace(0, 1, 7, dtype=dtype)
        yield lambda: xp.meshgrid(xp.linspace(0, 1, 3, dtype=dtype), xp.linspace(0, 1, 4, dtype=dtype))


def corpus(xp: Any, part: int = 0, parts: int = 1) -> Iterator[Thunk]:
    """The calls whose op kernels are built: each a thunk whose result is read. ``part`` of
    ``parts``: the calls of every ``parts``-th dtype from the ``part``-th (the conversions
    in the last part, which has fewest dtypes), so that parts share few kernels."""
    dtypes = tuple(np.dtype(getattr(xp, name)) for name in DTYPES)
    arrays = {dtype: _arrays(xp, dtype) for dtype in dtypes}
    for dtype in dtypes[part::parts]:
        a = arrays[dtype]
        yield from _elementwise(xp, a)
        yield from _statistics(xp, a)
        yield from _normalisations(xp, a)
        yield from _manipulation(xp, a)
        yield from _indexing(xp, a)
        yield from _sorting(xp, a)
        yield from _linear_algebra(xp, a)
        yield from _products(xp, dtype)
        yield from _transforms(xp, a, dtype)
        yield from _creation(xp, dtype)
    if part == parts - 1:
        yield from _conversions(xp, dtypes, arrays)


def _read(value: Any) -> None:
    """Read a call's results; each also as an operand of another op (joined to itself), since
    a view read on its own is its base's memory, while one an op reads is computed by its
    op's kernel (a row of a matrix minus a vector)."""
    if isinstance(value, (list, tuple)):
        for v in value:
            _read(v)
    elif hasattr(value, "__array_namespace__"):
        np.asarray(value)
        if value.ndim:
            np.asarray(value.__array_namespace__().concat([value, value]))


def build(directory: Path, part: int = 0, parts: int = 1) -> tuple[int, int, float]:
    """Run part ``part`` of ``parts`` of the corpus with the persistent cache in
    ``directory`` (this process's environment must be ``BUILD_ENVIRONMENT``: ``main`` makes
    it so); (calls run, calls refused by the functions, seconds)."""
    import plaidarray as xp
    from .backend.llvm import storing
    from .trace import baseline, joins

    start = time.perf_counter()
    ran = refused = 0
    baseline.COMPILE_FOLDED = True  # the installation holds the kernels of its corpus's folded scalars
    installed_library.OBJECTS_KEPT_IN = directory / installed_library.OBJECTS  # for the library (``main``)
    baseline.LIST_OP_KERNELS = True  # and the catalogue of op kernels
    joins.MOST_BYTES = -1  # the corpus's joins of computed values are recorded: their kernels join pending ones
    op_catalogue.RECORDS_KEPT_IN = directory / op_catalogue.RECORDS
    for thunk in corpus(xp, part, parts):
        baseline.forget()  # a graph's ops met as a new program meets them, not as an earlier call's sizes
        try:
            _read(thunk())
            ran += 1
        except (TypeError, ValueError, NotImplementedError):  # a dtype or rank the function does not take
            refused += 1
    storing.drain()
    return ran, refused, time.perf_counter() - start


def _parts() -> int:
    """Build processes: one a core this process may run on (compiling is single-threaded),
    at most one a dtype."""
    return max(1, min(config.available_cores(), len(DTYPES)))


def main(argv: list[str] | None = None) -> int:
    """``python -m plaidarray.prebuild DIRECTORY``: build the kernels into ``DIRECTORY``
    (made, mode 0755), in child processes with the build's environment, one a core, each
    building its part of the corpus (the persistent cache takes concurrent writers)."""
    args = sys.argv[1:] if argv is None else argv
    if len([a for a in args if not a.startswith("--")]) != 1:
        print("usage: python -m plaidarray.prebuild DIRECTORY", file=sys.stderr)
        return 2
    directory = Path(next(a for a in args if not a.startswith("--"))).resolve()
    part_option = next((a for a in args if a.startswith("--part=")), None)
    if part_option is None:
        directory.mkdir(mode=0o755, parents=True, exist_ok=True)
        for entry in [*directory.glob("*" + object_cache.SUFFIX), *directory.glob("*.so"),
                      *directory.glob(sources.STAMP), *directory.glob(sources.TOOLCHAIN_STAMP)]:  # an earlier build's
            entry.unlink()
        shutil.rmtree(directory / installed_library.OBJECTS, ignore_errors=True)
        shutil.rmtree(directory / op_catalogue.RECORDS, ignore_errors=True)
        (directory / op_catalogue.CATALOGUE).unlink(missing_ok=True)
        env = {**os.environ, **BUILD_ENVIRONMENT, "PLAIDARRAY_CACHE_DIR": str(directory)}
        built_from = object_cache.sources_digest_now()
        parts = _parts()
        builds = [subprocess.Popen([sys.executable, "-m", "plaidarray.prebuild", str(directory),
                                    f"--part={part}/{parts}"], env=env) for part in range(parts)]
        codes = [build.wait() for build in builds]
        shutil.rmtree(directory / object_cache.LOCK_DIRECTORY, ignore_errors=True)  # the build's alone
        failed = next((code for code in codes if code), 0)
        if not failed:
            installed_library.link(directory)
            bundles.unpack(directory)
            cache_entry.resolve(directory)
            op_catalogue.write(directory)
            if not object_cache.write_sources_stamp(directory, built_from):
                print("plaidarray: the sources changed while the kernels were built; they are not stamped, so each "
                      "process reads the sources, and kernels are compiled on first use", file=sys.stderr)
            object_cache.write_toolchain_stamp(directory)
        return failed
    part, parts = (int(n) for n in part_option.removeprefix("--part=").split("/"))
    ran, refused, seconds = build(directory, part, parts)
    print(f"plaidarray: built the kernels of {ran} calls ({refused} refused by their functions) "
          f"in {seconds:.1f} s into {directory} (part {part + 1} of {parts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
