"""Graph-building helpers shared by the spec chapters: operands, constants,
broadcasting, promotion. Everything here records HLO ops; nothing computes values."""

from __future__ import annotations

import math
import operator
from collections.abc import Hashable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, SupportsIndex, TypeGuard, cast

import numpy as np

from .. import dtypes as dt
from ..backend.devices import Device
from ..backend.transfer import HOST
from ..hlo.ir import attr_key
from ..hlo.literal import Literal
from ..hlo.opdef import Groups, runs
from ..hlo.shape import MAX_SIZE, Shape
from ..trace.array import Array
from ..trace.cuts import counted_fresh, cut_at, past_bound, recorded_again, waiting
from ..trace import node as node_module
from ..trace.materialize import read_several
from ..trace.node import Node
from ..trace import views
from ..trace.tracing import Guard, TracerError, guard, is_tracing
from .block_swaps import swaps

Scalar = bool | int | float | complex


def op(name: str, *operands: Array | Node, **attrs: Any) -> Array:
    """Record HLO ``name`` over ``operands`` and wrap the result as an Array. A result
    deeper than the pending bound (``PLAIDARRAY_MAX_PENDING``) is run at once."""
    return wrap(Node.apply(name, tuple([o._node if isinstance(o, Array) else o for o in operands]), attrs))


def wrap(node: Node) -> Array:
    """The Array of a node just recorded, which runs at once if it is deeper than the
    pending bound (``PLAIDARRAY_MAX_PENDING``) and a good place to cut (``trace/cuts.py``)."""
    if node.depth > node_module.MAX_PENDING > 0 and past_bound(node):
        run = cut_at(node)
        if run is not None:
            node_module.value_read()
            read_several([run, *waiting(run, node)], cut=True)
            if run is not node:
                recorded_again(node)
            counted_fresh()
    return Array(node)


def runtime_scalar(value: Scalar | np.generic, dtype: np.dtype) -> Array:
    """A 0-d array of ``value`` held in a buffer: the executable takes it as a run-time
    argument, so graphs that differ only in such values share one compiled executable
    (the value stays out of the cache key, its dtype enters it)."""
    return Array(Node.ready(np.asarray(value, dtype=dtype)))


def check_array(x: object, where: str) -> Array:
    """``x`` as an array: a NumPy array or scalar becomes one as ``numpy_scalar`` makes it
    (jax.numpy takes them too; Dask calls functions on NumPy arrays to learn their result's
    dtype), a Python scalar a 0-d array of its default dtype (``xp.exp(1j * theta)``, as
    NumPy and JAX take it; where it meets an array, the functions that take scalars have
    typed it weakly before); anything else is a TypeError naming ``where``."""
    if type(x) is Array:
        return x
    if type(x) in _PYTHON_SCALARS:
        dtype = scalar_dtype(cast(Scalar, x), where)
        if dtype.kind == "i":
            check_fits(cast(int, x), dtype)
        return runtime_scalar(cast(Scalar, x), dtype)
    x = numpy_scalar(x, where)
    if not isinstance(x, Array):
        raise TypeError(f"{where}: expected a plaidarray array, got {type(x).__name__}")
    return x


#: The Python scalar types ``check_array`` makes 0-d arrays of.
_PYTHON_SCALARS = frozenset({bool, int, float, complex})


def check_arrays(arrays: Sequence[object], where: str) -> list[Array]:
    """Each of ``arrays`` as an array (``check_array``), a list of them: a sequence of
    arrays alone (a list stacked or joined at each step of a loop, longer each time) is
    taken as it is, its items' types asked in C rather than a call per item."""
    arrays = list(arrays)
    if set(map(type, arrays)) <= _ARRAY_ONLY:
        return cast("list[Array]", arrays)
    return [check_array(a, where) for a in arrays]


#: ``check_arrays``' test: the types of a sequence that holds arrays alone (or nothing).
_ARRAY_ONLY = frozenset({Array})


def constant(value: Scalar, dtype: np.dtype) -> Array:
    """A 0-d constant of ``dtype``; raises OverflowError when ``value`` does not fit."""
    dtype = np.dtype(dtype)
    check_fits(value, dtype)
    with _rounding_to_inf_allowed(dtype):
        return op("constant", value=Literal(np.asarray(value, dtype=dtype)))


def _rounding_to_inf_allowed(dtype: np.dtype) -> AbstractContextManager:
    """Silences NumPy's overflow warning where a Python float can round to inf in ``dtype``
    (float32, complex64), and only there: ``np.errstate`` costs microseconds per scalar."""
    narrow = dtype.kind == "f" and dtype.itemsize < 8 or dtype.kind == "c" and dtype.itemsize < 16
    return np.errstate(over="ignore") if narrow else nullcontext()


def check_fits(value: Scalar, dtype: np.dtype) -> None:
    """OverflowError when a Python int does not fit an integer ``dtype``."""
    if dtype.kind in "iu" and not isinstance(value, bool):
        lo, hi = dt.iinfo_bounds(dtype)
        if not lo <= int(cast("int | float", value)) <= hi:  # a complex never has an integer dtype
            raise OverflowError(f"Python int {value} out of bounds for {dtype}")


def full(shape: Sequence[int], value: Scalar, dtype: np.dtype) -> Array:
    return broadcast_to(constant(value, dtype), tuple(shape))


def scalar_dtype(value: Scalar | np.generic, where: str) -> np.dtype:
    """The default dtype of a scalar: the standard's for Python scalars, its own for a
    NumPy scalar (as NumPy 2 has it)."""
    if isinstance(value, np.generic):
        return _numpy_scalar_dtype(value, where)
    if isinstance(value, bool):
        return dt.bool_
    if isinstance(value, int):
        return dt.default_int
    if isinstance(value, float):
        return dt.default_float
    if isinstance(value, complex):
        return dt.default_complex
    raise TypeError(f"{where}: expected an array or a Python scalar, got {type(value).__name__}")


#: Which array dtype kinds a Python scalar type may meet (the spec's weak typing).
SCALAR_KINDS = {bool: "b", int: "iufc", float: "fc", complex: "c"}


def check_scalar_kind(kind: type, dtype: np.dtype, where: str) -> None:
    """TypeError unless a Python scalar of type ``kind`` may meet an array of ``dtype``."""
    kinds = SCALAR_KINDS.get(kind)
    if kinds is None:
        raise TypeError(f"{where}: expected an array or a Python scalar, got {kind.__name__}")
    if dtype.kind not in kinds:
        raise TypeError(f"{where}: a Python {kind.__name__} cannot combine with an array of dtype {dtype}")


def scalar_for(value: Scalar, dtype: np.dtype, where: str) -> Array:
    """A Python scalar taking the dtype of the array it meets, as a run-time argument
    (a constant while a function is traced: there it is a literal of the function)."""
    return Array(_scalar_node(value, dtype, where))


def _scalar_node(value: Scalar, dtype: np.dtype, where: str) -> Node:
    """The node of ``scalar_for``; recording ``x * 0.5`` makes no Array for it."""
    kind = dtype.kind
    if kind not in SCALAR_KINDS.get(type(value), ""):
        check_scalar_kind(type(value), dtype, where)
    if is_tracing():  # a literal of the traced function: part of its structure
        return constant(value, dtype)._node
    if kind in "iu":
        check_fits(value, dtype)
    with _rounding_to_inf_allowed(dtype):
        return Node.ready(np.asarray(value, dtype=dtype))


def numpy_scalar(value: Any, where: str) -> Any:
    """A NumPy scalar (``np.float32(1)``, ``np.int64(2)``...) as a 0-d array of its dtype,
    which is how NumPy 2 promotes it, and a NumPy array as an array holding it, as
    ``asarray`` makes it (extensions: the standard knows only Python scalars and its own
    arrays; ``jax.numpy`` takes both, and Dask calls a function given to ``map_blocks``
    on a NumPy array to learn its result's dtype); any other value as it is."""
    if isinstance(value, np.generic):
        return runtime_scalar(value, _numpy_scalar_dtype(value, where))
    if isinstance(value, np.ndarray):
        return Array(Node.ready(HOST.snapshot(value, where)))
    return value


def python_scalar(value: Any, where: str) -> Any:
    """A NumPy scalar as the Python scalar of its value, for arguments that do not take
    part in promotion because an array fixes the result's dtype (``x[i] = v``, clip's
    bounds, a fill value); any other value as it is."""
    if isinstance(value, np.generic):
        _numpy_scalar_dtype(value, where)
        return value.item()
    return value


def traced_value(value: Any) -> Any:
    """A traced Python scalar (a jitted function's argument, weakly typed) as the Python
    scalar it stands for, where a function's structure depends on it (``diff``'s ``n``, a
    norm's ``ord``, ``tensordot``'s ``axes``, the type of a power of ints): reading it
    under the trace raises TracerError, and jit traces the function again with its
    scalars static. Any other value as it is."""
    if isinstance(value, Array) and value._node.weak:
        return _WEAK_SCALARS[value.dtype.kind](value)
    return value


def _numpy_scalar_dtype(value: np.generic, where: str) -> np.dtype:
    if value.dtype not in dt.SUPPORTED:
        raise dt.unsupported_dtype(value.dtype, where)
    return value.dtype


def weak_result_type(dtype: np.dtype, scalars: Sequence[Any]) -> np.dtype:
    """The dtype arrays of ``dtype`` take with Python ``scalars``: their own when the
    scalars' kinds fit it; a complex scalar makes a real floating dtype complex of the
    same precision (2024.12; ``float32 * 1j`` is complex64). A scalar of a higher kind
    than the arrays (``int_array * 0.5``, ``bool_array + 1``), which the standard leaves
    to the library, gives that kind's default dtype, as NumPy 2 does (``int8 * 0.5`` is
    float64; JAX gives its default float)."""
    kinds = {type(s) for s in scalars}
    if complex in kinds and dtype.kind != "c":
        return dt.complex_dtype(dtype) if dtype.kind == "f" else dt.default_complex
    if float in kinds and dtype.kind in "biu":
        return dt.default_float
    if int in kinds and dtype.kind == "b":
        return dt.default_int
    return dtype


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The spec's broadcasting rule; ValueError names the incompatible shapes. (Asked on
    most recorded ops of differing shapes, so it pads the shapes and walks the axes once
    rather than building a set per axis.)"""
    rank = max(map(len, shapes), default=0)
    out = []
    for sizes in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]):
        size = 1
        for n in sizes:
            if n != 1 and n != size:
                if size != 1:
                    raise ValueError(f"shapes {', '.join(map(str, shapes))} cannot be broadcast together")
                size = n
        out.append(size)
    return tuple(out)


def broadcast_to(x: Array, shape: tuple[int, ...]) -> Array:
    if x.shape == shape:
        return x
    if x.ndim and broadcast_shapes(x.shape, shape) != shape:  # a 0-d array broadcasts to any shape
        raise ValueError(f"cannot broadcast an array of shape {x.shape} to {shape}")
    return _expand(x, shape)


def spread(x: Array, dims: tuple[int, ...], broadcast_dimensions: tuple[int, ...]) -> Array:
    """``broadcast_in_dim`` of ``x`` to ``dims``; where it repeats no element (new axes of
    1 alone: ``repeat(x, 1)``, a mask of (n,) over an array of (n, 1)), the reshape it is,
    since such a broadcast merges to an identity (``hlo.ops.data_movement._broadcast_merge``),
    which no installed kernel is."""
    if math.prod(dims) == x.size:
        return reshape(x, dims)
    return op("broadcast_in_dim", x, dims=dims, broadcast_dimensions=broadcast_dimensions)


def _expand(x: Array, shape: tuple[int, ...]) -> Array:
    """``x`` broadcast to ``shape``, which the caller knows it broadcasts to (the result of
    ``broadcast_shapes`` over its shape and others'): recorded without checking again."""
    if x.shape == shape:
        return x
    return wrap(broadcast_node(x._node, Shape(shape, x._node.shape.dtype)))


def broadcast_node(node: Node, shape: Shape) -> Node:
    """``node`` broadcast to ``shape`` along its trailing axes, recorded without the shape
    rule (the callers know that it broadcasts). Of more runs of adjacent axes than the
    installation's broadcasts have (``BUILT_RUNS``: each of an array of rank 6 and more
    spread along alternate axes, ``(2, 1, 3, 1, 2, 1)`` to ``(2, 2, 3, 3, 2, 2)``), it is
    spread one run at a time, each a broadcast of at most three runs."""
    dims, own = shape.dims, node.shape.dims
    lead = len(dims) - len(own)
    spread = runs([n == d for n, d in zip(own, dims[lead:])])
    if len(spread) + (lead > 0) > BUILT_RUNS:
        for group in reversed(spread):
            if own[group[0]] != dims[lead + group[0]]:
                wide = tuple(dims[lead + a] if group[0] <= a <= group[-1] else n for a, n in enumerate(node.shape.dims))
                node = Node.derived("broadcast_in_dim", (node,), {"dims": wide, "broadcast_dimensions": tuple(range(len(own)))},
                                    Shape(wide, shape.dtype))
        if not lead:
            return node
    attrs = {"dims": dims, "broadcast_dimensions": tuple(range(lead, len(dims)))}
    return Node.derived("broadcast_in_dim", (node,), attrs, shape)


def reverse(x: Array, axes: tuple[int, ...]) -> Array:
    """``x`` reversed along ``axes`` (in order): one ``reverse``; of more runs of adjacent
    axes reversed or kept than the installation builds (``BUILT_RUNS``: alternate axes of
    rank 6 and more, ``flip(t, axis=(0, 2, 4))``), one ``reverse`` a run of reversed axes,
    each of at most three runs, where one of their own compiled a kernel for its rank at
    its first use (~0.4 s)."""
    if not axes:
        return x
    groups = runs([a in axes for a in range(x.ndim)])
    if len(groups) <= BUILT_RUNS:
        return op("reverse", x, dimensions=axes)
    for group in groups:
        if group[0] in axes:
            x = op("reverse", x, dimensions=group)
    return x


def convert(x: Array, dtype: np.dtype) -> Array:
    if x.dtype == dtype:
        return x
    if x._node.weak and x.dtype.kind in "if" and np.dtype(dtype).kind in "iu":
        _guard_range(x._node, x.dtype.kind, np.dtype(dtype))
    return op("convert", x, dtype=np.dtype(dtype))


def _guard_range(node: Node, kind: str, dtype: np.dtype) -> None:
    """A traced Python int or float (jit) taking an integer dtype must fit it, as it does
    eagerly (OverflowError for ``int8_array + 300`` or ``full(3, 1e39, dtype=int32)``,
    ValueError for a NaN or an infinity); checked after each call."""
    info = np.iinfo(dtype)
    if kind == "i":
        first, last = max(int(info.min), -2**63), min(int(info.max), 2**63 - 1)
        if (first, last) != (-2**63, 2**63 - 1):
            guard(node, Guard(first, last, OverflowError, f"Python int {{value}} out of bounds for {dtype}"))
        return
    # A float converts by truncation: anything above min - 1 and below max + 1 fits.
    below, above = float(info.min) - 1.0, float(info.max) + 1.0
    low = float(info.min) if below == float(info.min) else math.nextafter(below, math.inf)
    guard(node, Guard(low, math.nextafter(above, -math.inf), OverflowError,
                      f"Python float {{value}} out of bounds for {dtype}"))


def placed(x: Array, device: Device, mark: int) -> Array:
    """``x``, which a creation function made, on ``device``: a node the function made
    (numbered past ``mark``, ``node.serial_mark``) of values of no device (constants,
    iotas) is stamped with it; a node of no device made before (a Python scalar's
    constant that graphs share) gets a new node, its reshape to its own shape, stamped; an
    array on another device is copied there (``to_device``)."""
    node = x._node
    if node.device is device:
        return x
    if node.device is not None:
        return x.to_device(device)
    if node.serial < mark or node.reused is not None:
        node = node_module.derive("reshape", (node,), {"dims": node.shape.dims}, node.shape)
    node.device = device
    return x if node is x._node else wrap(node)


def copy_of(x: Array) -> Array:
    """A new Array object with ``x``'s value: sharing the node is a copy, since an
    in-place operator rebinds only the array it is applied to and writes into a buffer
    only when no other array holds it (``Array.__setitem__``)."""
    return Array(x._node)


def copy_asked(x: Array) -> Array:
    """``copy_of`` for ``copy=True`` (``asarray``, ``from_dlpack``): a view of a computed
    array's elements is copied out of it now (``views.window_copy``). Shared, its pending
    node would read the array, and a store into the array would copy all of it (a row
    swap's ``kept = asarray(m[i], copy=True); m[i] = m[j]; m[j] = kept``)."""
    copy = views.window_copy(x) if type(x._base) is views.ViewOf else None
    if copy is None:
        return copy_of(x)
    node = Node.ready(copy, x._node.device)
    node.owned = True
    return Array(node)


def operands(where: str, *args: Array | Scalar) -> list[Array]:
    """Promote and broadcast a function's arguments to one dtype and shape.

    Arrays (and NumPy scalars, as 0-d arrays) promote by ``dtypes.result_type``; Python
    scalars then take the result dtype, a complex one making it complex.
    """
    common = common_operands(where, *args)
    if common is not None:
        return common
    if _strong_arrays(args):  # arrays of several shapes or dtypes
        dtype = dt.result_type(*[a._node.shape.dtype for a in args], where=where)
        shape = broadcast_shapes(*[a._node.shape.dims for a in args])
        return [_expand(convert(a, dtype), shape) for a in args]
    args = tuple(numpy_scalar(a, where) for a in args)
    arrays = [a for a in args if isinstance(a, Array)]
    if not arrays:
        raise TypeError(f"{where}: at least one argument must be an array")
    strong = [a for a in arrays if not a._node.weak]
    if not strong and any(type(a) is bool for a in args):  # traced Python scalars alone: a bool counts as an int
        args = tuple(int(a) if type(a) is bool else a for a in args)
    weak = [_WEAK_SCALARS[a.dtype.kind](0) for a in arrays if a._node.weak] if strong else []
    dtype = weak_result_type(dt.result_type(*(a.dtype for a in strong or arrays), where=where), [*args, *weak])
    shape = broadcast_shapes(*(a.shape for a in arrays))
    out = []
    for a in args:
        if isinstance(a, Array):
            if strong and a._node.weak:
                check_scalar_kind(_WEAK_SCALARS[a.dtype.kind], dtype, where)
            a = convert(a, dtype)
        else:
            a = scalar_for(a, dtype, where)
        out.append(_expand(a, shape))
    return out


#: The Python scalar type a weakly typed array stands for (a traced scalar argument of a
#: jitted function), by its dtype's kind: it promotes as that scalar would.
_WEAK_SCALARS = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _array_and_scalar(x: object, value: object, where: str) -> list[Array] | None:
    """``[x, value]`` promoted, for the other common case, an array and a Python int or
    float (``x * 0.5``): the scalar takes the array's dtype. None for anything else."""
    if type(x) is not Array or type(value) not in (int, float) or x._node.weak:
        return None
    shape = x._node.shape
    if shape.dtype.kind not in SCALAR_KINDS[type(value)]:  # the scalar's kind is higher: promotion
        return None
    return [x, Array(scalar_like(cast("int | float", value), shape, where))]


def scalar_like(value: int | float, shape: Shape, where: str) -> Node:
    """A Python int or float as a value of ``shape`` (the shape and dtype of the array it
    meets): a run-time scalar broadcast. Made without the broadcasting checks and shape
    rules, which hold by construction, since it is recorded on most steps of a loop."""
    scalar = _scalar_node(value, shape.dtype, where)
    return broadcast_node(scalar, shape) if shape.dims else scalar


#: ``scalar_operand``'s nodes by (type, value, a float's ``hex``, dims, dtype), which the
#: elementwise functions' C paths look up too (``_graph.Elementwise``), and the 0-d values
#: they broadcast, by the same key without dims: an array of a new size (a window, a batch)
#: meets a scalar it met before (``w - 1.0``) at the cost of the broadcast alone, where
#: making the value again (its checks, the buffer) was a third of recording the op there.
#: Emptied when it reaches ``REUSED_SCALARS_MAX`` entries, so a loop over ever new scalars
#: does not grow it.
REUSED_SCALARS: dict[tuple, Node] = {}
REUSED_SCALARS_MAX = 256

#: The (Python type, dtype) pairs whose value's 0-d node the elementwise functions' C
#: paths make themselves where ``REUSED_SCALARS`` has none, as ``_scalar_node`` makes it
#: (a 0-d array of the value, ``np.array(value, dtype)``, entered in ``REUSED_SCALARS``),
#: each with its Shape: kinds the dtype takes with nothing to check but an int's range
#: (int64's, which C checks) and no overflow to silence. A loop's ``x / n`` or ``x > t``
#: meets a new value at each step, and ``scalar_operand``'s Python path took ~3.5 us of it.
MADE_IN_C: dict[tuple[type, np.dtype], Shape] = {
    (kind, np.dtype(dtype)): Shape((), np.dtype(dtype)) for kind, dtype in ((float, np.float64), (int, np.int64),
                                                                            (int, np.float64))}


def scalar_operand(value: int | float, shape: Shape, where: str) -> Node:
    """``scalar_like`` for a node that is only ever an operand of the op being recorded
    (never wrapped in an Array, so never computed, stored or updated in place): such a
    node is reused by every op that meets the same scalar at the same shape, so a loop's
    ``x * 0.5`` records one node per step instead of three. A graph holds a reused node
    once per use (``Node.reused``): which scalars happen to be equal never changes its
    structure. A float's key holds its sign, since 0.0 and -0.0 are equal values but
    different scalars (``x > 0`` is the commonest comparison of a loop). At a 0-d shape
    (``x[i] > 0.5``) the operand is a ready node of its own at each use, a parameter of
    its graph as the broadcast's scalar is, holding the buffer of the value's reused 0-d
    node (made anew each time, it was three quarters of recording the op). Nothing
    recorded while tracing is reused (there the scalar is a literal of the function)."""
    if is_tracing():
        return scalar_like(value, shape, where)
    hexed = value.hex() if type(value) is float else None
    key = (type(value), value, hexed, shape.dims, shape.dtype)
    node = REUSED_SCALARS.get(key)
    if node is None:
        value_key = (type(value), value, hexed, shape.dtype)
        scalar = REUSED_SCALARS.get(value_key)
        if scalar is None:
            if len(REUSED_SCALARS) >= REUSED_SCALARS_MAX:
                REUSED_SCALARS.clear()
            scalar = REUSED_SCALARS[value_key] = _scalar_node(value, shape.dtype, where)
        if not shape.dims:  # a node of its own, a parameter at each use, holding the value's buffer
            return Node.ready(cast(np.ndarray, scalar.buffer))
        node = broadcast_node(scalar, shape)
        node.reused = (node.op, attr_key(node.attrs), shape.dims, shape.dtype)
        if len(REUSED_SCALARS) >= REUSED_SCALARS_MAX:
            REUSED_SCALARS.clear()
        REUSED_SCALARS[key] = node
    return node


def size_operand(value: int | float, dims: tuple[int, ...], dtype: np.dtype, where: str) -> Node:
    """A number computed from sizes (an element count for a mean, an axis length) as an
    operand of ``dims`` and ``dtype``: a run-time scalar like a Python scalar argument,
    not a literal, so that graphs that differ only in their sizes keep one structure and
    share one shape-generic executable (``trace/dynamic.py``)."""
    return scalar_operand(value, Shape(dims, np.dtype(dtype)), where)


#: The attributes of an op that has none (elementwise ops, ``select``, a window update):
#: one dict serves every such node, since nothing mutates a node's attributes.
NO_ATTRS: dict[str, Any] = {}


def common_operands(where: str, *args: Array | Scalar) -> list[Array] | None:
    """``operands`` of the common cases, answered before its general rules: arrays of one
    shape and dtype already, or an array and a Python int or float of a kind its dtype
    takes; None for any other arguments."""
    if _alike(args):
        return list(args)
    if len(args) == 2:
        pair = _array_and_scalar(args[0], args[1], where) or _array_and_scalar(args[1], args[0], where)
        if pair is not None:
            return pair if type(args[0]) is Array else pair[::-1]
    return None


def convert_node(node: Node, dtype: np.dtype) -> Node:
    """``node`` converted to ``dtype`` as ``convert`` records it, without its rules (the
    caller knows the conversion is one the rules make: a count of a mask in the default
    integer, an astype of a real array)."""
    attrs = _CONVERT_ATTRS.get(dtype)
    if attrs is None:
        attrs = _CONVERT_ATTRS[dtype] = {"dtype": dtype}
    return Node.derived("convert", (node,), attrs, node.shape.with_dtype(dtype))


#: ``convert_node``'s attributes by dtype (read only, as every node's are).
_CONVERT_ATTRS: dict[np.dtype, dict[str, np.dtype]] = {}


def _strong_arrays(args: tuple[Array | Scalar, ...]) -> TypeGuard[tuple[Array, ...]]:
    """Whether ``args`` are all arrays, none of them weakly typed (no Python scalar,
    traced or not, whose kind could change the result dtype)."""
    return all(type(a) is Array and not a._node.weak for a in args)


def _alike(args: tuple[Array | Scalar, ...]) -> TypeGuard[tuple[Array, ...]]:
    """Whether ``args`` are arrays of one shape and dtype already (the common case, worth
    answering before the general rules on every recorded operation)."""
    shape = args[0]._node.shape if type(args[0]) is Array else None
    return shape is not None and all(type(a) is Array and a._node.shape == shape for a in args)


def as_int(value: object, where: str, what: str) -> int:
    """``value`` as a Python int: ints and integer scalars, never bools or floats. A traced
    value's TracerError passes through: a jitted function whose Python scalar argument
    is a size, an axis or a count is traced again with it static, as for ``range(n)``."""
    if not isinstance(value, bool):
        try:
            return operator.index(cast(SupportsIndex, value))  # anything else is the TypeError below
        except TracerError:
            raise
        except TypeError:
            pass
    raise TypeError(f"{where}: {what} must be an int, got {value!r}")


def int_tuple(value: object, where: str, what: str) -> tuple[int, ...]:
    """An int or a sequence of ints, as a tuple of Python ints."""
    if type(value) is int:
        return (value,)
    if type(value) is tuple and all(type(v) is int for v in value):
        return value
    if isinstance(value, (Sequence, np.ndarray)) and not isinstance(value, (str, bytes)):
        return tuple(as_int(v, where, f"each entry of {what}") for v in value)
    try:
        return (as_int(value, where, what),)
    except TracerError:
        raise
    except TypeError:
        raise TypeError(f"{where}: {what} must be an int or a tuple of ints, got {value!r}") from None


def shape_tuple(shape: object, where: str, *, allow_unknown: bool = False) -> tuple[int, ...]:
    """A shape argument as a tuple of non-negative ints (one -1 if ``allow_unknown``)."""
    dims = int_tuple(shape, where, "shape")
    lowest = -1 if allow_unknown else 0
    if any(d < lowest for d in dims) or (allow_unknown and dims.count(-1) > 1):
        expected = "non-negative (one may be -1)" if allow_unknown else "non-negative"
        raise ValueError(f"{where}: shape entries must be {expected}, got {dims}")
    if abs(math.prod(dims)) > MAX_SIZE:
        raise ValueError(f"{where}: shape {dims} has more elements than a 64-bit index can count")
    return dims


def in_float64(x: Array) -> Array:
    """``x`` in float64 if it is an integer or bool array, as NumPy's ``linalg`` and
    ``fft`` compute one (the standard's inputs "should" be floating-point; user guide,
    "Beyond the standard"); else as it is."""
    return convert(x, dt.float64) if x.dtype.kind in "biu" else x


def check_category(x: Array, category: str, where: str) -> None:
    if x.dtype not in dt.CATEGORIES[category]:
        raise TypeError(f"{where}: expected an array of {category} dtype, got {x.dtype}")


def normalize_axes(axis: int | Sequence[int] | None, ndim: int, where: str) -> tuple[int, ...]:
    """Axes as sorted non-negative ints; IndexError-free ValueError naming the axis in
    NumPy's words (clients' tests match them: SciPy's ``axis 10 is out of bounds for array``)."""
    if axis is None:
        return tuple(range(ndim))
    axes = int_tuple(axis, where, "axis")
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise ValueError(f"{where}: axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: repeated axis in {axes}")
    return tuple(sorted(out)) if ndim else ()


def reshape(x: Array, shape: tuple[int, ...]) -> Array:
    return x if x.shape == shape else op("reshape", x, dims=tuple(shape))


def reshaped_alike(arrays: Sequence[Array], shape: tuple[int, ...]) -> list[Array]:
    """Each of ``arrays``, all of one shape and dtype, reshaped to ``shape``: the shape
    rule runs for the first alone, whose result shape the others share (a stack of a
    list's tail of 20 losses recorded 20 reshapes, each through the rule, ~3 us apiece)."""
    if not arrays:
        return []
    first = reshape(arrays[0], shape)
    if first is arrays[0]:
        return list(arrays)
    result = first._node.shape
    return [first, *[wrap(Node.derived("reshape", (a._node,), {"dims": tuple(shape)}, result)) for a in arrays[1:]]]


def transpose(x: Array, permutation: tuple[int, ...]) -> Array:
    """``x`` transposed by ``permutation``, recorded as block swaps (``block_swaps.py``):
    the transposes the installation has kernels for."""
    if tuple(permutation) == tuple(range(x.ndim)):
        return x
    for swap in swaps(tuple(permutation)):
        x = op("transpose", x, permutation=swap)
    return x


def _runs_merged(x: Array, keys: Sequence[Hashable]) -> tuple[Array, Groups] | None:
    """``x`` with each run of adjacent axes of equal key merged into one (a reshape: the
    same elements in the same order), and the groups of axes; None where no run merges."""
    groups = runs(keys)
    if len(groups) == x.ndim:
        return None
    return reshape(x, tuple(math.prod(x.shape[a] for a in group) for group in groups)), groups


def sliced(x: Array, start: tuple[int, ...], limit: tuple[int, ...], strides: tuple[int, ...]) -> Array:
    """``x[start:limit:strides]`` per axis, each run of adjacent axes taken whole sliced as
    one axis (``_runs_merged``), so that a slice of any rank runs on the kernel of its
    runs' (a 4-d array rolled or differenced along its last axis is a matrix's slice).
    Of more runs of axes sliced and taken whole than the installation builds
    (``BUILT_RUNS``: every other axis of rank 6 and more, ``t[:, ::2, :, ::2, :, ::2]``),
    one axis is sliced at a time, each a slice of at most three runs, where one of their
    own compiled a kernel for its rank at its first use (~0.3 s)."""
    cut = [a for a, (s, l, st, n) in enumerate(zip(start, limit, strides, x.shape)) if s or l != n or st != 1]
    for axes in _in_turn(cut, x.ndim):
        x = _slice_runs(x, {a: (start[a], limit[a], strides[a]) for a in axes})
    return x


def _in_turn(axes: list[int], ndim: int) -> list[tuple[int, ...]]:
    """The axes of an array of ``ndim`` that a separable op (a slice, a pad) changes, as
    the groups it takes one op each: all at once, or one axis at a time where they and the
    others make more runs of adjacent axes than the installation builds (``BUILT_RUNS``)."""
    if len(runs([a if a in axes else -1 for a in range(ndim)])) > BUILT_RUNS:
        return [(a,) for a in axes]
    return [tuple(axes)]


def _slice_runs(x: Array, picked: dict[int, tuple[int, int, int]]) -> Array:
    """``x`` sliced along the axes of ``picked`` (each its start, limit and stride), each
    run of the others, taken whole, one axis (``sliced``)."""
    per_axis = [picked.get(a, (0, n, 1)) for a, n in enumerate(x.shape)]
    start, limit, strides = (tuple(p[k] for p in per_axis) for k in range(3))
    found = _runs_merged(x, [a if a in picked else -1 for a in range(x.ndim)])  # each axis sliced alone
    if found is None:
        return op("slice", x, start=start, limit=limit, strides=strides)
    merged, groups = found
    out = op("slice", merged, start=tuple(start[g[0]] for g in groups),
             limit=tuple(n if len(g) > 1 else limit[g[0]] for g, n in zip(groups, merged.shape)),
             strides=tuple(strides[g[0]] for g in groups))
    return reshape(out, tuple(len(range(s, l, st)) for s, l, st in zip(start, limit, strides)))


def padded(x: Array, value: Array, low: tuple[int, ...], high: tuple[int, ...], interior: tuple[int, ...]) -> Array:
    """``x`` padded with ``value`` (a 0-d array), each run of adjacent axes it does not
    pad as one axis (``_runs_merged``): a strided write into a 5-d array pads as a 3-d
    one does. Of more runs of axes padded and not than the installation builds
    (``BUILT_RUNS``: every other axis of rank 6 and more), one axis is padded at a time
    (padding is separable), each a pad of at most three runs."""
    grown = [a for a, (lo, hi, inner) in enumerate(zip(low, high, interior)) if lo or hi or inner]
    for axes in _in_turn(grown, x.ndim):
        x = _pad_runs(x, value, {a: (low[a], high[a], interior[a]) for a in axes})
    return x


def _pad_runs(x: Array, value: Array, grown: dict[int, tuple[int, int, int]]) -> Array:
    """``x`` padded along the axes of ``grown`` (each its low, high and interior padding),
    each run of the others one axis (``padded``)."""
    per_axis = [grown.get(a, (0, 0, 0)) for a in range(x.ndim)]
    low, high, interior = (tuple(p[k] for p in per_axis) for k in range(3))
    found = _runs_merged(x, [a if a in grown else -1 for a in range(x.ndim)])  # each axis padded alone
    if found is None:
        return op("pad", x, value, low=low, high=high, interior=interior)
    merged, groups = found
    out = op("pad", merged, value, low=tuple(low[g[0]] for g in groups), high=tuple(high[g[0]] for g in groups),
             interior=tuple(interior[g[0]] for g in groups))
    return reshape(out, tuple(lo + hi + n + max(n - 1, 0) * inner
                              for lo, hi, inner, n in zip(low, high, interior, x.shape)))


#: Reductions and windows (``indexing.py``) of arrays of more axes than this are of their
#: runs of adjacent axes merged by a reshape (the same elements in the same order; for a
#: reduction, runs reduced or kept alike): the installation builds them at ranks up to
#: this (reductions of rank 5 over alternate axes too, ``prebuild.py``), so those of any
#: rank run on its kernels.
MERGED_RANK = 4
#: The most runs of adjacent axes (reduced or kept; spread or kept) that the installation
#: builds reductions and broadcasts for (alternate axes of rank 5, ``prebuild.py``). Past
#: it (alternate axes of rank 6 and more: a Kronecker product's, a Tucker core's), they
#: are recorded a run at a time, each on a kernel of at most three runs, where one op of
#: their own compiled a kernel for their rank at its first use (~0.25 s).
BUILT_RUNS = 5


def reduce_axes(x: Array, kind: str, axis: int | Sequence[int] | None, keepdims: bool, where: str) -> Array:
    """Reduce ``x`` with ``kind`` over ``axis``, keeping unit dimensions if asked."""
    axes = normalize_axes(axis, x.ndim, where)
    if not axes:
        out = copy_of(x)  # a new array, as NumPy's reduction over no axes
    elif x.ndim > MERGED_RANK:
        groups = runs([a in axes for a in range(x.ndim)])
        merged = x if len(groups) == x.ndim else reshape(x, tuple(math.prod(x.shape[a] for a in g) for g in groups))
        reduced = tuple(i for i, group in enumerate(groups) if group[0] in axes)
        if len(groups) > BUILT_RUNS:  # a monoid's runs reduced one at a time, the last first
            out = merged
            for i in reversed(reduced):
                out = reduce_axes(out, kind, i, False, where)
        else:
            out = op("reduce", merged, dimensions=reduced, kind=kind)
        out = reshape(out, tuple(d for a, d in enumerate(x.shape) if a not in axes))
    else:
        out = op("reduce", x, dimensions=axes, kind=kind)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else s for i, s in enumerate(x.shape)))
    return out
