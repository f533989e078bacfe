"""Creation functions (spec chapter "Creation Functions").

Constant-filled arrays are broadcasts of a scalar constant and ranges are iotas: no
data is produced until the graph runs. ``asarray`` is the transfer layer's entry.
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from .. import dtypes as dt
from ..api_version import sequence
from ..backend import devices
from ..backend.devices import Device
from ..backend.transfer import frozen
from ..hlo.shape import Shape as HloShape
from ..trace import exports
from ..trace.array import Array
from ..trace.node import Node, derive, serial_mark
from ..trace.views import view
from . import graph
from .graph import check_array, convert, op
from .recipes import recorded
from .views import Index

__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace",
           "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"]

Shape = int | Sequence[int]


def placed(fn: Callable[..., Array]) -> Callable[..., Array]:
    """``fn`` taking a ``device`` argument (keyword-only, after ``dtype``, as the standard
    places it) and making its array there, the default device where it is None. What
    ``fn`` records combines values of no device (Python scalars' constants, iotas), and
    its result is then stamped with the device (``graph.placed``), outside ``fn``: a
    recipe replays what ``fn`` records (``recipes.py``), and the stamp records nothing."""
    @functools.wraps(fn)
    def made_on(*args: Any, device: Any = None, **kwargs: Any) -> Array:
        target = devices.resolve(device, fn.__name__) or devices.default()
        mark = serial_mark()
        return graph.placed(fn(*args, **kwargs), target, mark)

    signature = inspect.signature(fn)
    parameters = list(signature.parameters.values())
    after = next((k + 1 for k, p in enumerate(parameters) if p.name == "dtype" and p.kind == p.KEYWORD_ONLY),
                 len(parameters))
    parameters.insert(after, inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None,
                                               annotation="Any"))
    made_on.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return made_on


def _unplaced(fn: Callable[..., Array]) -> Callable[..., Array]:
    """The function ``placed`` made ``fn`` of: what it records, for another creation
    function's own recipe (which ``placed`` stamps once)."""
    return fn.__wrapped__  # type: ignore[attr-defined]  # functools.wraps set it


def _dtype(dtype: Any, default: np.dtype, where: str) -> np.dtype:
    return default if dtype is None else dt.check_dtype(dtype, "any", where)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Array:
    """Convert ``obj`` (array, NumPy array, DLPack/buffer object, scalar, nested sequence).

    Another library's array in a GPU's memory (a PyTorch tensor or a CuPy array on CUDA
    device 0) is taken by DLPack onto that GPU: shared with ``copy=False``, else copied
    there (``_taken``).

    ``copy=None`` copies memory that can still be written, once, as JAX does: an array
    sharing it is pinned on it (``exports.shared``) and pays a comparison of the memory
    at each op recorded on it, off the eager path's C fast path (user guide, "Memory
    shared with other libraries"). Memory nothing can write (``frozen``) is shared as
    an ordinary buffer. ``copy=False`` shares memory that can be used as it is
    (C-contiguous, aligned, native, of the dtype asked for), as NumPy, PyTorch and CuPy
    share it: writes by either side are seen by the other, and each op computes with the
    value the array had when the op was recorded; other layouts, and a read-only view of
    memory that can still be written, raise a ValueError.
    """
    place = devices.resolve(device, "asarray")
    target = None if dtype is None else dt.check_dtype(dtype, "any", "asarray")
    if isinstance(obj, Array):
        if place is not None and obj.device is not place:
            if copy is False:
                raise ValueError(f"asarray: moving an array from {obj.device} to {place} needs a copy, but copy=False")
            obj, copy = obj.to_device(place), None  # a copy already
        if target is not None and target != obj.dtype:
            if copy is False:
                raise ValueError("asarray: changing the dtype needs a copy, but copy=False")
            return convert(obj, target)
        if obj._node.weak:  # a traced Python scalar (jit): an array of its own dtype, as asarray(3) is eagerly
            return op("reshape", obj, dims=obj.shape)
        return graph.copy_asked(obj) if copy else obj
    lender = None if isinstance(obj, np.ndarray) else _dlpack_lender(obj, "asarray")
    if lender is not None:  # copied on the device unless copy=False: that library may still write it
        return _taken(obj, lender, place, target, True if copy is None else copy, "asarray")
    if isinstance(obj, (bool, int, float)) and target is None:
        target = graph.scalar_dtype(obj, "asarray")
    if isinstance(obj, (list, tuple)):
        found, device = _sequence_dtype(obj)
        target = found if target is None else target
        if device is not None and target is not None:  # arrays among the items: stacked, not exported
            return _stacked_items(obj, target, device, place, copy)
    try:
        value = np.asarray(obj, dtype=target) if copy is not True else np.array(obj, dtype=target, copy=True)
    except (OverflowError, ValueError) as exc:  # out-of-range ints, NaN to int, ragged nesting
        raise type(exc)(f"asarray: {exc}") from None
    if copy is False and not _shares_memory(obj, value):
        raise ValueError("asarray: the input cannot be used without a copy, but copy=False")
    fresh = copy is True or isinstance(obj, _CONVERTED) or _converted(obj, value)
    return _array_of(value, copy, fresh, copy is False, "asarray", place or devices.default())


#: Inputs that ``np.asarray`` turns into a new array of its own (shared with no one).
_CONVERTED = (bool, int, float, complex, list, tuple)


def _converted(obj: Any, value: np.ndarray) -> bool:
    """Whether ``np.asarray`` made ``value`` anew from the NumPy array ``obj`` (another
    dtype or layout): its own memory, which no one else holds. (Another object's
    ``__array__`` may return memory of its own: never taken as new.)"""
    return isinstance(obj, np.ndarray) and value is not obj and value.flags.owndata


def _array_of(value: np.ndarray, copy: bool | None, fresh: bool, share: bool, where: str, device: Device) -> Array:
    """An array on ``device`` of ``value``'s elements (``fresh``: memory made by this
    call, shared with no one): a caller's writable memory shared if ``share`` (see
    ``asarray``), else copied once (the device's ``snapshot``); with ``copy=False`` never a
    copy, but a ValueError where one is needed."""
    buffer = device.transfers.from_host(value, where)
    if fresh:
        return Array(Node.ready(buffer, device))
    if buffer is value:
        if frozen(value):
            return Array(Node.ready(value, device))
        if share and value.flags.writeable:
            return exports.shared(value, device)
    if copy is False:
        if device.platform != "cpu":
            raise ValueError(f"{where}: host memory is copied to {device}, but copy=False")
        raise ValueError(f"{where}: the input's layout needs a copy, but copy=False" if buffer is not value else
                         f"{where}: the input is a read-only view of memory that can still be written, which "
                         f"plaidarray cannot share (its own writes could not reach it); copy=None copies")
    return Array(Node.ready(device.transfers.snapshot(value, where), device))


_PYTHON_SCALAR_DTYPES = {bool: dt.bool_, int: dt.default_int, float: dt.default_float, complex: dt.default_complex}
#: Python's scalar kinds in the order their default dtypes promote (each to the next).
_PYTHON_SCALAR_ORDER = (bool, int, float, complex)
_PYTHON_SCALAR_KINDS = frozenset(_PYTHON_SCALAR_ORDER)


def _sequence_dtype(obj: Sequence) -> tuple[np.dtype | None, Device | None]:
    """The dtype NumPy gives nested Python scalars and arrays: their dtypes promoted two
    at a time in the order NumPy meets them (its promotion is not associative), a scalar
    counting as its default dtype (bool, int64, float64, complex128), so a list of int32
    or float32 arrays keeps their dtype (SciPy stacks results so and compares dtypes).
    None when anything else is nested (NumPy scalars or arrays, strings, objects): NumPy
    then chooses, and a dtype plaidarray lacks is refused. And the device of the first
    array nested (None: none is). A flat sequence of Python scalars takes their kinds'
    dtypes at once (``asarray([0.5, 1.5, ...])``: their defaults promote the same in any
    order), where the walk took ~0.2 us an item."""
    kinds = set(map(type, obj))
    if kinds <= _PYTHON_SCALAR_KINDS and kinds:
        return _PYTHON_SCALAR_DTYPES[max(kinds, key=_PYTHON_SCALAR_ORDER.index)], None
    found: np.dtype | None = None
    device: Device | None = None
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
            continue
        if isinstance(item, Array):
            dtype = item.dtype
            device = device or item.device
        elif type(item) in _PYTHON_SCALAR_DTYPES:
            dtype = _PYTHON_SCALAR_DTYPES[type(item)]
        else:
            return None, None
        found = dtype if found is None else np.promote_types(found, dtype)
    return dt.default_float if found is None else found, device


#: The most levels of nested sequences ``asarray`` takes, as NumPy's dimensions.
_MOST_LEVELS = 64


def _stacked_items(obj: Sequence, dtype: np.dtype, device: Device, place: Device | None,
                   copy: bool | None) -> Array:
    """``asarray`` of nested sequences holding arrays (``xp.asarray(losses)``, a list of
    0-d results): each level stacked (``stack``), the arrays converted to ``dtype`` and
    the Python scalars made arrays of it on ``device`` (the first array's). NumPy's
    conversion would export every array to read it (~10 us each, and each pinned from
    then on, paying a comparison of its memory at every op); stacked, arrays computed
    already are copied at once (``trace/joins.py``), pending ones recorded. Uneven
    nesting is a ValueError, as NumPy's; so is ``copy=False``: the result is new memory."""
    from .manipulation import stack  # manipulation builds on this module's functions

    if copy is False:
        raise ValueError("asarray: the input cannot be used without a copy, but copy=False")

    def level(items: Sequence, depth: int) -> Array:
        if depth > _MOST_LEVELS:
            raise ValueError(f"asarray: more than {_MOST_LEVELS} levels of nested sequences")
        if not items:
            raise ValueError("asarray: an empty sequence among arrays has no shape to stack")
        parts = [level(item, depth + 1) if isinstance(item, (list, tuple)) else
                 convert(item, dtype) if isinstance(item, Array) else asarray(item, dtype=dtype, device=device)
                 for item in items]
        if len({p.shape for p in parts}) != 1:
            raise ValueError(f"asarray: the nested sequence is uneven (items of shapes {[p.shape for p in parts]})")
        return stack(parts)

    made = level(obj, 1)
    return made.to_device(place) if place is not None and made.device is not place else made


def _shares_memory(obj: Any, value: np.ndarray) -> bool:
    """Whether ``value`` is ``obj``'s memory: ``obj`` itself or a view of it (an empty
    array shares no element, so NumPy's test of shared memory says no), else as NumPy
    finds it."""
    if value is obj or value.base is obj:
        return True
    try:
        return np.shares_memory(np.asarray(obj), value)
    except (TypeError, ValueError):
        return False


def _plain_fill(shape: Any, value: Any, dtype: Any, default: np.dtype) -> Array | None:
    """``full``'s record of ``value``, a Python bool, int or float that ``dtype`` (one of
    the standard's dtypes but bool for a number; ``default`` where None) holds as it is
    (a complex dtype as its real part: ``zeros_like`` of a spectrum), over ``shape``, an
    int or a tuple of ints: the constant, of a literal kept per value and dtype
    (``_FILLS``), broadcast to the shape, as the rules record it, without their checks and
    recipes (a new shape's ``zeros`` took ~30 us in a script's first run, 9 us in a loop);
    None where the rules decide (any other shape, value or dtype, a shape too large, an int
    the dtype cannot hold)."""
    dims = (shape,) if type(shape) is int else shape if type(shape) is tuple else None
    if dims is None:
        return None
    for n in dims:
        if type(n) is not int or n < 0:
            return None
    kind = type(value)
    if dtype is None:
        dtype = default
    if (kind, dtype) not in _FILLED_KINDS or math.prod(dims) > graph.MAX_SIZE:
        return None
    key = (kind, value, value.hex() if kind is float else None, dtype)
    literal = _FILLS.get(key)
    if literal is None:
        try:
            literal = graph.constant(value, dtype)._node.attrs["value"]
        except OverflowError:
            return None
        if len(_FILLS) >= KEPT_FILLS:
            _FILLS.clear()
        _FILLS[key] = literal
    node = derive("constant", (), {"value": literal}, HloShape((), dtype))
    if dims:
        node = derive("broadcast_in_dim", (node,), {"dims": dims, "broadcast_dimensions": ()}, HloShape(dims, dtype))
    return graph.wrap(node)


#: The (Python scalar type, dtype) pairs ``_plain_fill`` takes: the value held as it is
#: (a complex dtype's real part; a new shape's complex ``zeros`` took the rules, ~23 us).
_FILLED_KINDS = frozenset({(bool, dt.bool_)} | {(int, d) for d in dt.ALL if d.kind in "iufc"}
                          | {(float, d) for d in dt.ALL if d.kind in "fc"})
#: ``_plain_fill``'s literals by value and dtype, emptied at ``KEPT_FILLS``.
_FILLS: dict[tuple, Any] = {}
KEPT_FILLS = 1024


def _plain_full(shape: Shape, fill_value: Any, *, dtype: Any = None) -> Array | None:
    """``full``'s first path: ``_plain_fill`` of a Python scalar, in its default dtype."""
    if type(fill_value) not in _FILL_TYPES:
        return None
    return _plain_fill(shape, fill_value, dtype, graph.scalar_dtype(fill_value, "full"))


_FILL_TYPES = (bool, int, float)


@placed
@functools.partial(recorded, first=_plain_full)
def full(shape: Shape, fill_value: bool | int | float | complex | Array, *, dtype: Any = None) -> Array:
    """An array of ``shape`` filled with ``fill_value`` (default dtype from its type; a
    NumPy scalar's own dtype, as in NumPy 2). An array ``fill_value`` (beyond the
    standard, as in NumPy: SciPy passes 0-d arrays) is broadcast to ``shape`` and keeps
    its dtype unless ``dtype`` is given."""
    dims = graph.shape_tuple(shape, "full")
    if isinstance(fill_value, (Array, np.ndarray)):
        fill = check_array(fill_value, "full")
        target = _dtype(dtype, fill.dtype, "full")
        if fill.dtype.kind == "c" and target.kind != "c":
            raise TypeError(f"full: a {fill.dtype} fill value would lose its imaginary part in {target}")
        try:
            return graph.broadcast_to(convert(fill, target), dims)
        except ValueError:
            raise ValueError(f"full: a fill value of shape {fill.shape} does not broadcast to {dims}") from None
    target = _dtype(dtype, graph.scalar_dtype(fill_value, "full"), "full")
    fill_value = graph.python_scalar(fill_value, "full")
    if target.kind == "b":
        fill_value = bool(fill_value)
    elif target.kind in "iu" and isinstance(fill_value, float):
        if not math.isfinite(fill_value):
            raise ValueError(f"full: cannot fill a {target} array with {fill_value}")
        fill_value = int(fill_value)
    return graph.full(dims, cast("bool | int | float | complex", fill_value), target)


@placed
@functools.partial(recorded, first=lambda shape, *, dtype=None: _plain_fill(shape, 0, dtype, dt.default_float))
def zeros(shape: Shape, *, dtype: Any = None) -> Array:
    return _unplaced(full)(shape, 0, dtype=_dtype(dtype, dt.default_float, "zeros"))


@placed
@functools.partial(recorded, first=lambda shape, *, dtype=None: _plain_fill(shape, 1, dtype, dt.default_float))
def ones(shape: Shape, *, dtype: Any = None) -> Array:
    return _unplaced(full)(shape, 1, dtype=_dtype(dtype, dt.default_float, "ones"))


@placed
@functools.partial(recorded, first=lambda shape, *, dtype=None: _plain_fill(shape, 0, dtype, dt.default_float))
def empty(shape: Shape, *, dtype: Any = None) -> Array:
    """Uninitialised memory is never exposed: ``empty`` is ``zeros``."""
    return _unplaced(zeros)(shape, dtype=dtype)


def _like(name: str, make):
    def fn(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
        x = check_array(x, name)
        return make(x.shape, dtype=x.dtype if dtype is None else dtype, device=x.device if device is None else device)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Like ``{make.__name__}`` with the shape (and by default the dtype and device) of ``x``."
    return fn


zeros_like = _like("zeros_like", zeros)
ones_like = _like("ones_like", ones)
empty_like = _like("empty_like", empty)


def full_like(x: Array, /, fill_value: bool | int | float | complex | Array, *, dtype: Any = None,
              device: Any = None) -> Array:
    """Like ``full`` with the shape (and by default the dtype and device) of ``x``."""
    x = check_array(x, "full_like")
    return full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype,
                device=x.device if device is None else device)


@placed
@recorded
def arange(start: int | float, /, stop: int | float | None = None, step: int | float = 1, *,
           dtype: Any = None) -> Array:
    """Values ``start + i * step`` for ``i`` in ``[0, ceil((stop - start) / step))``."""
    start, stop, step = (graph.python_scalar(v, "arange") for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if any(isinstance(v, float) and not math.isfinite(v) for v in (start, stop, step)):
        raise ValueError(f"arange: start, stop and step must be finite, got {start}, {stop}, {step}")
    is_float = any(isinstance(v, float) for v in (start, stop, step))
    target = _dtype(dtype, dt.default_float if is_float else dt.default_int, "arange")
    n = max(0, math.ceil((stop - start) / step))
    if target.kind == "b" and n > 2:
        raise ValueError(f"arange: a bool range has at most 2 values (as in NumPy), not {n}")
    if target.kind in "iu":
        lo, hi = dt.iinfo_bounds(target)
        last = start + (n - 1) * step if n else start
        if not (lo <= start <= hi and lo <= last <= hi):
            raise OverflowError(f"arange: values out of range for {target}")
    # Counted in float64 for the floating and complex dtypes (iota has no complex values),
    # in int64 for bool (whose iota would wrap), else in the dtype itself.
    compute = dt.default_float if target.kind in "fc" else dt.int64 if target.kind == "b" else target
    ramp = op("iota", dims=(n,), iota_dimension=0, dtype=compute)
    # start +/- i * |step|: every value is representable even in unsigned dtypes, and each
    # is a run-time value as a Python scalar operand is (a loop's ranges of new bounds
    # share one structure). A unit step and a zero start (``arange(n)``, the common call)
    # leave the ramp as it is: i * 1 and 0 + i are i exactly (+0.0 at i = 0 either way).
    shape = HloShape((n,), compute)
    offsets = ramp if abs(step) == 1 else op("multiply", ramp, _operand(abs(step), shape))
    if start == 0 and step > 0:
        return convert(offsets, target)
    values = op("add" if step > 0 else "subtract", _operand(start, shape), offsets)
    return convert(values, target)


@placed
@recorded
def linspace(start: int | float | complex, stop: int | float | complex, /, num: int, *, dtype: Any = None,
             endpoint: bool = True) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop``, computed in float64 (each
    part of complex bounds apart). An integer ``dtype`` (beyond the standard, as in
    NumPy 2) takes the floor of each value."""
    num = operator.index(num) if isinstance(num, Array) and num.ndim == 0 else graph.python_scalar(num, "linspace")
    start, stop = (_read_bound(graph.python_scalar(v, "linspace")) for v in (start, stop))
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    target = _dtype(dtype, dt.default_complex if is_complex else dt.default_float, "linspace")
    dt.check_dtype(target, "numeric", "linspace")
    if is_complex and target.kind != "c":
        raise TypeError(f"linspace: complex bounds need a complex dtype, got {target}")
    if not isinstance(num, int) or num < 0:
        raise ValueError(f"linspace: num must be a non-negative int, got {num!r}")
    if is_complex:
        start, stop = complex(start), complex(stop)
        parts = (_spaced(start.real, stop.real, num, endpoint), _spaced(start.imag, stop.imag, num, endpoint))
        return convert(op("complex", *parts), target)
    values = _spaced(cast(float, start), cast(float, stop), num, endpoint)
    if target.kind in "iu":
        values = op("floor", values)
    return convert(values, target)


def _read_bound(value: Any) -> Any:
    """A 0-d array bound as the Python scalar it holds, read as NumPy reads it: the standard
    takes Python scalars, and NumPy-style code passes ``xp.min(x)`` (a real array's is read as
    a float, a complex one's as a complex)."""
    if isinstance(value, Array):
        if value.ndim != 0:
            raise TypeError(f"linspace: start and stop must be scalars or 0-d arrays, got an array of shape {value.shape}")
        return complex(value) if value.dtype.kind == "c" else float(value)
    return value


def _operand(value: bool | int | float, shape: HloShape) -> Array | Node:
    """``arange``'s bound or step as a run-time operand of ``shape``, as a Python scalar
    operand is; a constant where its type does not take the dtype (a float bound of an
    integer range, cast as NumPy casts it)."""
    if shape.dtype.kind in graph.SCALAR_KINDS[type(value)]:
        return graph.scalar_operand(value, shape, "arange")
    return graph.full(shape.dims, value, shape.dtype)


def _spaced(start: float, stop: float, num: int, endpoint: bool) -> Array:
    """``linspace`` in float64 of real bounds: ``start + i * step``, the last value ``stop``
    exactly when it is an endpoint (one op, ``hlo/ops/generators.py``'s ``linspace``: the
    bounds, step and last index run-time values, as ``arange``'s)."""
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    last = float(num - 1) if endpoint and num > 1 else -1.0
    return op("linspace", *(graph.scalar_for(float(v), dt.float64, "linspace") for v in (start, step, last, stop)),
              dims=(num,))


@placed
@recorded
def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None) -> Array:
    n_cols = n_rows if n_cols is None else n_cols
    shape = graph.shape_tuple((n_rows, n_cols), "eye")
    target = _dtype(dtype, dt.default_float, "eye")
    # An offset past either edge selects nothing, whatever its size (k may exceed int64).
    k = max(-shape[0], min(graph.as_int(k, "eye", "k"), shape[1]))
    return op("eye", graph.scalar_for(k, dt.int64, "eye"), dims=shape, dtype=target)



def meshgrid(*arrays: Array, indexing: str = "xy") -> list[Array] | tuple[Array, ...]:
    """Coordinate grids from 1-D arrays ('xy': Cartesian, 'ij': matrix indexing); each
    keeps its array's dtype where they differ (the standard asks for one, NumPy does not)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = tuple(check_array(a, "meshgrid") for a in arrays)
    for a in arrays:
        if a.ndim != 1:
            raise ValueError("meshgrid: inputs must be 1-D")
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    if len(arrays) == 1:  # its one grid is the array (a copy, as NumPy's), not a broadcast to its own shape
        return sequence([graph.copy_of(arrays[0])])
    out = []
    for i, a in enumerate(arrays):
        dim = (1 - i if i < 2 else i) if indexing == "xy" else i
        out.append(graph.spread(a, tuple(sizes), (dim,)))
    return sequence(out)


def _triangle(x: Array, k: int, keep_lower: bool, name: str) -> Array:
    """``x`` with the elements on one side of the ``k``-th diagonal of its last two axes
    zeroed: one ``triangle`` op (``hlo/ops/triangle.py``), ``k`` a run-time value, where
    the iotas, comparison and select it stands for were seven nodes and four op kernels'
    first uses."""
    x = check_array(x, name)
    if x.ndim < 2:
        raise ValueError(f"{name}: needs at least 2 dimensions")
    rows, cols = x.shape[-2:]
    k = max(-rows, min(graph.as_int(k, name, "k"), cols))  # past the matrix: the same mask, and no overflow
    return op("triangle", x, graph.scalar_for(k, dt.int64, name), lower=keep_lower)


@recorded
def tril(x: Array, /, *, k: int = 0) -> Array:
    """Zero the elements above the ``k``-th diagonal."""
    return _triangle(x, k, True, "tril")


@recorded
def triu(x: Array, /, *, k: int = 0) -> Array:
    """Zero the elements below the ``k``-th diagonal."""
    return _triangle(x, k, False, "triu")


def _dlpack_lender(x: Any, where: str) -> Device | None:
    """The device whose memory ``x`` lends by DLPack, where that is not the host's (a
    BufferError where plaidarray has no such device); None for the host's."""
    device_of = getattr(x, "__dlpack_device__", None)
    if device_of is None:
        return None
    pair = tuple(device_of())
    if pair[0] in (1, 3):  # kDLCPU, kDLCUDAHost: memory NumPy reads
        return None
    found = devices.of_dlpack(pair)
    if found is None:
        raise BufferError(f"{where}: the input is on DLPack device {pair}, which none of plaidarray's devices "
                          f"is (they are {', '.join(d.name for d in devices.every_device())})")
    return found


def _taken(x: Any, lender: Device, place: Device | None, target: np.dtype | None, copy: bool | None,
           where: str) -> Array:
    """Another library's array in the memory of ``lender``, a GPU (a PyTorch tensor or a
    CuPy array on CUDA device 0), taken by DLPack by its device's transfers: shared unless
    ``copy``, then in ``target``'s dtype and on ``place``, each a copy (a ValueError with
    ``copy=False``)."""
    taken = Array(Node.ready(lender.transfers.from_dlpack(x, copy, where), lender))
    if target is not None and target != taken.dtype:
        if copy is False:
            raise ValueError(f"{where}: changing the dtype ({taken.dtype} to {target}) needs a copy, but copy=False")
        taken = convert(taken, target)
    if place is not None and place is not lender:
        if copy is False:
            raise ValueError(f"{where}: moving an array from {lender} to {place} needs a copy, but copy=False")
        taken = taken.to_device(place)
    return taken


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """Import a DLPack-capable array: a plaidarray array unless ``copy`` shares its
    elements (a view); another library's memory (a NumPy array, a PyTorch tensor) is
    shared unless ``copy=True``, as ``asarray(copy=False)`` shares it (a layout that
    cannot be shared is copied unless ``copy=False``): writes by either side are seen
    by the other."""
    place = devices.resolve(device, "from_dlpack")
    if isinstance(x, Array):  # the same elements, as NumPy's from_dlpack shares them
        if place is not None and x.device is not place:
            if copy is False:
                raise ValueError(f"from_dlpack: moving an array from {x.device} to {place} needs a copy, "
                                 f"but copy=False")
            return x.to_device(place)
        return graph.copy_asked(x) if copy else view(x, Index(Ellipsis))
    lender = _dlpack_lender(x, "from_dlpack")
    if lender is not None:  # memory a GPU holds, taken without a copy by its device's transfers
        return _taken(x, lender, place, None, copy, "from_dlpack")
    try:
        value = np.from_dlpack(x, copy=copy)
    except AttributeError:  # NumPy looks the protocol up without checking for it
        raise TypeError(f"from_dlpack: expected an object supporting DLPack (__dlpack__), "
                        f"got {type(x).__name__}") from None
    except (TypeError, BufferError, ValueError, RuntimeError) as exc:
        raise type(exc)(f"from_dlpack: {exc}") from None
    if isinstance(x, np.ndarray) and copy is not True:
        value = x  # the same memory, and NumPy's flags say whether it can still be written
    return _array_of(value, copy, copy is True, True, "from_dlpack", place or devices.default())
