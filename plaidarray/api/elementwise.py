"""Elementwise functions (spec chapter "Element-wise Functions").

Families are generated from tables: (name, accepted dtype category, decomposition).
A decomposition receives operands already promoted and broadcast to one dtype and
shape, and records HLO ops on them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, TypeGuard, cast

import numpy as np

from .. import dtypes as dt
from ..hlo.opdef import OPS
from ..hlo.shape import Shape
from ..trace import array as array_module
from ..trace.array import Array
from ..trace import node as node_module
from ..trace import tracing
from ..trace.node import Node, derive
from ..trace.views import view
from .graph import (MADE_IN_C, NO_ATTRS, REUSED_SCALARS, REUSED_SCALARS_MAX, SCALAR_KINDS, Scalar, broadcast_node,
                    broadcast_shapes, check_array, check_category, convert, copy_of, op, operands, python_scalar,
                    scalar_like, scalar_operand, traced_value, wrap)
from .recipes import reading_pins_once, recorded, stands_for
from .views import Part

__all__: list[str] = []

if TYPE_CHECKING:
    def __getattr__(name: str) -> Callable[..., Array]:
        """The functions ``_export`` makes from the tables below, as a type checker sees
        them (``elementwise.multiply(a, b)`` is an Array)."""


def _export(name: str, fn: Callable) -> None:
    fn.__name__ = fn.__qualname__ = name
    globals()[name] = fn
    __all__.append(name)


#: The C module's fast paths (``_graph.Elementwise``), None where it is not in use: then
#: the Python functions below are called as they are.
_IN_C = node_module.GRAPH_IN_C
if _IN_C is not None:
    _IN_C.configure_elementwise(Array, REUSED_SCALARS, scalar_operand, wrap, vars(node_module), vars(tracing),
                                MADE_IN_C, np.array, REUSED_SCALARS_MAX)

#: The tables of each function with a C path (``_in_c``), by name, for its operators.
_C_TABLES: dict[str, tuple] = {}


def _in_c(name: str, fn: Callable, on_nodes: Callable | None, arity: int, accepted: Collection[np.dtype]
          ) -> Callable:
    """``fn`` with its common cases in C where the C module is in use and ``fn`` is one
    HLO op (``on_nodes`` from ``_hlo``): arrays alone of one shape and dtype, an array
    with a Python int or float of a kind its dtype takes. The tables give each dtype of
    ``accepted`` the op's shape rule takes its result dtype, found by running the rule
    once; ``fn`` is called for everything else, as it is (its docstring, name and
    signature are the C path's, through ``__wrapped__``)."""
    one_op = getattr(on_nodes, "one_op", None)
    if _IN_C is None or one_op is None:
        return fn
    op_name, attrs = one_op
    same = {}
    for dtype in accepted:
        try:
            result = OPS[op_name].infer([Shape((2,), dtype)] * arity, attrs)
        except TypeError:
            continue
        if result.dims == (2,):
            same[dtype] = result.dtype
    scalars = [{d: r for d, r in same.items() if d.kind in SCALAR_KINDS[kind]} if arity == 2 else {}
               for kind in (int, float)]
    _C_TABLES[name] = (op_name, name, attrs, arity, same, *scalars)
    tables = _C_TABLES[name]
    return stands_for(reading_pins_once(lambda fallback: _IN_C.Elementwise(*tables, fallback, False), fn), fn, name)


def _operators_in_c() -> None:
    """Array's operators whose functions have C paths (``_in_c``) get them too, their
    Python methods (``trace/array.py``) their fallback."""
    if _IN_C is None:
        return
    for method, (function, reflected) in array_module.OPERATOR_FUNCTIONS.items():
        tables = _C_TABLES.get(function)
        if tables is not None:
            fallback = vars(Array)[method]
            fast = _IN_C.Elementwise(*tables, getattr(fallback, "fallback", fallback), reflected)
            fast.__name__, fast.__qualname__, fast.__module__ = method, f"Array.{method}", Array.__module__
            fast.__doc__ = fallback.__doc__
            setattr(Array, method, fast)


def _full_like(x: Array, value: Scalar, dtype: np.dtype | None = None) -> Array:
    from .graph import full

    return full(x.shape, value, dtype or x.dtype)


def _compare(direction: str) -> Callable[[Array, Array], Array]:
    """A comparison, one HLO op recorded on the nodes (``_hlo``): ``x > 0`` in a loop
    needs no promotion rules and no Array for its scalar."""
    return _hlo("compare", direction=direction)


def _unary(name: str, category: str, decompose: Callable[[Array], Array]) -> None:
    accepted = dt.CATEGORIES[getattr(decompose, "one_op_category", category)]
    on_nodes = getattr(decompose, "on_nodes", None)  # one HLO op: recorded on the node directly
    if on_nodes is None:
        decompose = recorded(decompose)

    def fn(x: Array, /) -> Array:
        if type(x) is not Array or x._node.shape.dtype not in accepted:
            x = floating(check_array(x, name), category)  # a NumPy array or scalar becomes an array
            check_category(x, category, name)
            if on_nodes is not None and x._node.shape.dtype in accepted:
                return on_nodes(x._node)
        elif on_nodes is not None:
            return on_nodes(x._node)
        return decompose(x)

    fn.__doc__ = f"Element-wise {name} (spec: {category} input)."
    _export(name, _in_c(name, fn, on_nodes, 1, accepted))


def floating(x: Array, category: str) -> Array:
    """``x`` as a function of ``category`` takes it: an integer or boolean array in the
    floating-point dtype NumPy computes it in (``dtypes.FLOAT_OF``), where the function
    computes in floating point; else as it is (the category's check names the problem)."""
    target = dt.FLOAT_OF.get(x.dtype) if category in dt.FLOAT_CATEGORIES else None
    return x if target is None else convert(x, target)


def _binary(name: str, category: str, decompose: Callable[[Array, Array], Array],
            python_base: Callable[[Array | Scalar, Array | Scalar], Array | Scalar] | None = None) -> None:
    """Define the elementwise function ``name``; ``python_base``: the first operand as
    Python combines traced scalars where that differs from the arrays' rules (``pow``)."""
    on_nodes = getattr(decompose, "on_nodes", None)  # one HLO op: an array and a scalar need no Array for it
    if on_nodes is None:
        decompose = recorded(decompose)
    # The dtypes the common cases below take (those where the op is ``on_nodes``, if fewer).
    accepted = dt.CATEGORIES[getattr(decompose, "one_op_category", category)]

    def promoted(x1: Array | Scalar, x2: Array | Scalar) -> Array:
        """The general rules: promotion, broadcasting, traced scalars."""
        if python_base is not None:
            x1 = python_base(x1, x2)
        a, b = operands(name, x1, x2)
        if a.dtype in dt.FLOAT_OF and category in dt.FLOAT_CATEGORIES:
            a, b = floating(a, category), floating(b, category)
        check_category(a, category, name)
        out = decompose(a, b)
        if _all_weak(x1, x2):
            out._node.weak = True  # traced scalars combined stay scalars (s / 2, s > 0): they take an array's dtype later
        return out

    def broadcast(x1: Array | Scalar, x2: Array | Scalar) -> Array | None:
        """Two arrays of one dtype that broadcast, as the rules record them
        (``broadcast_pair``): where a signature has no recipe yet (new sizes)."""
        if type(x1) is not Array or type(x2) is not Array or x1._node.shape.dtype not in accepted:
            return None
        pair = broadcast_pair(x1._node, x2._node)
        return None if pair is None or on_nodes is None else on_nodes(*pair)

    promoted = recorded(promoted, broadcast if on_nodes is not None else None)

    def fn(x1: Array | bool | int | float, x2: Array | bool | int | float, /) -> Array:
        # The common cases first, without the general promotion rules: arrays of one
        # shape and dtype, and an array with a Python int or float, which takes its dtype.
        # They test type() identity, which mypy does not follow through t1 and t2: y1 and
        # y2 are the arguments as the tests found them (an annotation, not a cast's call).
        t1, t2 = type(x1), type(x2)
        y1: Any = x1
        y2: Any = x2
        if t1 is Array:
            n1 = y1._node
            if t2 is Array:
                n2 = y2._node
                if n1.shape == n2.shape and n1.shape.dtype in accepted and not (n1.weak or n2.weak):
                    return decompose(y1, y2) if on_nodes is None else on_nodes(n1, n2)
                if on_nodes is not None and n1.shape.dtype in accepted and not (n1.shape.dims and n2.shape.dims):
                    pair = broadcast_pair(n1, n2)  # with a 0-d array (``x - mean(x)``): before any signature
                    if pair is not None:
                        return on_nodes(*pair)
            elif (t2 is float or t2 is int) and not n1.weak and n1.shape.dtype in accepted \
                    and n1.shape.dtype.kind in SCALAR_KINDS[t2]:
                if on_nodes is not None:
                    return on_nodes(n1, scalar_operand(y2, n1.shape, name))
                return decompose(y1, Array(scalar_like(y2, n1.shape, name)))
        elif t2 is Array and (t1 is float or t1 is int):
            n2 = y2._node
            if not n2.weak and n2.shape.dtype in accepted and n2.shape.dtype.kind in SCALAR_KINDS[t1]:
                if on_nodes is not None:
                    return on_nodes(scalar_operand(y1, n2.shape, name), n2)
                return decompose(Array(scalar_like(y1, n2.shape, name)), y2)
        return promoted(x1, x2)

    fn.__doc__ = f"Element-wise {name} with broadcasting and type promotion (spec: {category} inputs)."
    _export(name, _in_c(name, fn, on_nodes, 2, accepted))


def broadcast_pair(n1: Node, n2: Node) -> tuple[Node, Node] | None:
    """The operands of an op of two arrays of one dtype and different shapes that
    broadcast together (``x - mean(x)``, ``y - mean(y, axis=0)``, ``x / norm``), each
    broadcast as the general rules broadcast it, without them (a loop over new sizes
    misses every recipe, and the rules took 25 us there); None for any
    other pair (other dtypes, a weak one, shapes that do not broadcast: the rules say
    why), and where a broadcast would be deeper than the pending bound (the rules decide
    where to cut)."""
    s1, s2 = n1.shape, n2.shape
    if s1.dtype != s2.dtype or n1.weak or n2.weak:
        return None
    try:
        dims = broadcast_shapes(s1.dims, s2.dims)
    except ValueError:
        return None
    shape = s1 if s1.dims == dims else s2 if s2.dims == dims else Shape(dims, s1.dtype)
    pair = []
    for n in (n1, n2):
        if n.shape.dims != dims:
            if n.depth + 1 > node_module.MAX_PENDING > 0:
                return None
            n = broadcast_node(n, shape)
        pair.append(n)
    return pair[0], pair[1]


def _all_weak(x1: object, x2: object) -> bool:
    """Whether the array arguments are all weakly typed (traced Python scalars)."""
    weak1 = x1._node.weak if isinstance(x1, Array) else None
    weak2 = x2._node.weak if isinstance(x2, Array) else None
    return weak1 is not False and weak2 is not False




def _hlo(name: str, **attrs: Any) -> Callable[..., Array]:
    """The decomposition that is one HLO op (of ``attrs``, one dict for all its nodes,
    read only as every node's), recorded with its shape rule looked up once (elementwise
    ops are most of what a user's loop records)."""
    infer = OPS[name].infer
    attributes = attrs or NO_ATTRS

    def on_nodes(*nodes: Node) -> Array:
        return wrap(derive(name, nodes, attributes, infer([n.shape for n in nodes], attributes)))

    def record(*xs: Array) -> Array:
        return on_nodes(*[x._node for x in xs])

    on_nodes.one_op = (name, attributes)  # type: ignore[attr-defined]  # for the C paths (``_in_c``)
    record.on_nodes = on_nodes  # type: ignore[attr-defined]
    return record


def _on_bools(on_bools: Callable[..., Array], numeric: Callable[..., Array]) -> Callable[..., Array]:
    """``numeric`` (one HLO op, ``_hlo``) and, on booleans, NumPy's meaning of it,
    ``on_bools`` (beyond the standard, which leaves booleans out of arithmetic): ``+`` is
    or, ``*`` is and, ``abs`` is the identity. The common cases stay ``numeric``'s
    (``one_op_category``); booleans take the general path, here."""
    def record(*xs: Array) -> Array:
        return numeric(*xs) if xs[0].dtype != dt.bool_ else on_bools(*xs)

    record.on_nodes = numeric.on_nodes  # type: ignore[attr-defined]
    record.one_op_category = "numeric"  # type: ignore[attr-defined]
    return record


def _float_only_for_floats(hlo_name: str) -> Callable[[Array], Array]:
    """Rounding functions are the identity on integers and booleans (a new array, as
    NumPy's: writes to it do not reach ``x``)."""
    return lambda x: op(hlo_name, x) if x.dtype.kind in "fc" else copy_of(x)


# --- decompositions ------------------------------------------------------------------

def _either_part(test: Callable[[Array], Array]) -> Callable[[Array], Array]:
    """A float predicate extended to complex numbers: true if it holds for either part."""
    def fn(x):
        if x.dtype.kind == "c":
            return op("or", test(op("real", x)), test(op("imag", x)))
        if x.dtype.kind != "f":
            return _full_like(x, False, dt.bool_)
        return test(x)
    return fn


_isnan = _either_part(lambda x: op("compare", x, x, direction="NE"))
_isinf = _either_part(lambda x: op("compare", op("abs", x), _full_like(x, math.inf), direction="EQ"))


def _isfinite(x):
    return op("is_finite", x) if x.dtype.kind in "fc" else _full_like(x, True, dt.bool_)


def _square(x):
    return op("multiply", x, x)


def _reciprocal(x):
    return op("divide", _full_like(x, 1), x)


def _divide(a, b):
    if a.dtype.kind not in "fc":
        a, b = convert(a, dt.default_float), convert(b, dt.default_float)
    return op("divide", a, b)


# On floating-point operands, the commonest, it is one HLO op (``_binary``'s common cases).
_divide.on_nodes = _hlo("divide").on_nodes  # type: ignore[attr-defined]
_divide.one_op_category = "floating-point"  # type: ignore[attr-defined]


def _select(cond, a, b):
    return op("select", cond, a, b)


def _shift_right(a, b):
    return op("shift_right_arithmetic" if a.dtype.kind == "i" else "shift_right_logical", a, b)


# --- tables -------------------------------------------------------------------------

for _name, _hlo_name in {
    "acos": "acos", "acosh": "acosh", "asin": "asin", "asinh": "asinh", "atan": "atan", "atanh": "atanh",
    "cos": "cos", "cosh": "cosh", "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p",
    "log2": "log2", "log10": "log10", "sin": "sin", "sinh": "sinh", "sqrt": "sqrt", "tan": "tan",
    "tanh": "tanh",
}.items():
    _unary(_name, "floating-point", _hlo(_hlo_name))

for _name, _hlo_name in {"ceil": "ceil", "floor": "floor", "trunc": "trunc"}.items():
    _unary(_name, "real numeric", _float_only_for_floats(_hlo_name))

for _name, _category, _fn in (
    ("abs", "any", _on_bools(copy_of, _hlo("abs"))),
    ("negative", "numeric", _hlo("negate")),
    ("positive", "numeric", copy_of),
    ("sign", "numeric", _hlo("sign")),
    ("square", "numeric", _square),
    ("round", "numeric", _float_only_for_floats("round_nearest_even")),
    ("isfinite", "numeric", _isfinite),
    ("isinf", "numeric", _isinf),
    ("isnan", "numeric", _isnan),
    ("conj", "numeric", lambda x: op("conj", x) if x.dtype.kind == "c" else copy_of(x)),
    ("real", "numeric", lambda x: view(x, Part("real")) if x.dtype.kind == "c" else x),
    ("imag", "complex floating-point", lambda x: view(x, Part("imag"))),
    ("logical_not", "bool", _hlo("not")),
    ("bitwise_invert", "integer or boolean", _hlo("not")),
    ("signbit", "real floating-point", _hlo("signbit")),
    ("reciprocal", "floating-point", _reciprocal),
):
    _unary(_name, _category, _fn)

def _python_power_base(x1: Array | Scalar, x2: Array | Scalar) -> Array | Scalar:
    """The base of ``x1 ** x2`` where both are Python ints, one of them traced (jit), as
    Python computes it: a negative exponent makes the power a float, so a traced exponent's
    value is needed (read: the function is traced again with its scalars static), and a
    traced base with a negative literal exponent is a float (``s ** -1``)."""
    base_int = _weak(x1) and x1.dtype.kind == "i" or type(x1) is int
    if not base_int or not (_weak(x1) or _weak(x2)):
        return x1
    if _weak(x2) and x2.dtype.kind == "i":
        traced_value(x2)
    elif type(x2) is int and x2 < 0:
        base = convert(cast(Array, x1), dt.float64)
        base._node.weak = True
        return base
    return x1


def _weak(value: object) -> TypeGuard[Array]:
    """Whether ``value`` is a traced Python scalar (a jitted function's argument), which
    takes the dtype of the array it meets."""
    return isinstance(value, Array) and value._node.weak


for _name, _category, _binary_fn in (
    ("add", "any", _on_bools(_hlo("or"), _hlo("add"))),
    ("subtract", "numeric", _hlo("subtract")),
    ("multiply", "any", _on_bools(_hlo("and"), _hlo("multiply"))),
    ("divide", "numeric", _divide),
    ("floor_divide", "real numeric", _hlo("floor_divide")),
    ("remainder", "real numeric", _hlo("floor_remainder")),
    ("maximum", "real numeric", _hlo("maximum")),
    ("minimum", "real numeric", _hlo("minimum")),
    ("atan2", "real floating-point", _hlo("atan2")),
    ("copysign", "real floating-point", _hlo("copysign")),
    ("hypot", "real floating-point", _hlo("hypot")),
    ("nextafter", "real floating-point", _hlo("nextafter")),
    ("logaddexp", "real floating-point", _hlo("logaddexp")),
    ("equal", "any", _compare("EQ")),
    ("not_equal", "any", _compare("NE")),
    ("less", "real numeric", _compare("LT")),
    ("less_equal", "real numeric", _compare("LE")),
    ("greater", "real numeric", _compare("GT")),
    ("greater_equal", "real numeric", _compare("GE")),
    ("logical_and", "bool", _hlo("and")),
    ("logical_or", "bool", _hlo("or")),
    ("logical_xor", "bool", _hlo("xor")),
    ("bitwise_and", "integer or boolean", _hlo("and")),
    ("bitwise_or", "integer or boolean", _hlo("or")),
    ("bitwise_xor", "integer or boolean", _hlo("xor")),
    ("bitwise_left_shift", "integer", _hlo("shift_left")),
    ("bitwise_right_shift", "integer", _shift_right),
):
    _binary(_name, _category, _binary_fn)
_binary("pow", "numeric", _hlo("power"), python_base=_python_power_base)

_operators_in_c()


@recorded
def clip(x: Array, /, min: Array | int | float | None = None, max: Array | int | float | None = None) -> Array:
    """Clamp ``x`` to ``[min, max]`` (either bound may be None); NaN bounds propagate.

    The result has ``x``'s dtype; ``x`` and array bounds broadcast together, as in
    ``maximum(minimum(x, max), min)``. Beyond the standard, as NumPy: an integer array
    clipped by a Python float is clipped in float64 (the standard leaves mixed kinds open).
    """
    fast = _clip_floats(x, min, max)
    if fast is not None:
        return fast
    x = check_array(x, "clip")
    check_category(x, "real numeric", "clip")
    if x.dtype.kind in "iu" and any(isinstance(b, (float, np.floating)) or _weak(b) and b.dtype.kind == "f"
                                    for b in (min, max)):
        x = convert(x, dt.float64)
    out = copy_of(x) if min is None and max is None else x
    for bound, hlo_name in ((min, "maximum"), (max, "minimum")):
        if bound is None:
            continue
        bound = python_scalar(bound, "clip")  # x fixes the dtype: a NumPy scalar bound is a value
        if _weak(bound):  # a traced Python scalar (jit): taken as the scalar is, below
            if x.dtype.kind in "iu" and bound.dtype.kind in "iu":  # past x's range: its end, not wrapped
                lo, hi = dt.iinfo_bounds(x.dtype)
                hi = hi if hi < 2**63 else 2**63 - 1  # the scalar is an int64
                bound = op("maximum", *operands("clip", bound, lo))
                bound = op("minimum", *operands("clip", bound, hi))
            bound = convert(bound, x.dtype)
        elif isinstance(bound, Array):
            if bound.dtype != x.dtype and dt.promote(bound.dtype, x.dtype, "clip") != x.dtype:
                raise TypeError(f"clip: bound dtype {bound.dtype} does not promote to {x.dtype}")
            bound = convert(bound, x.dtype)
        elif isinstance(bound, int) and x.dtype.kind in "iu" and not isinstance(bound, bool):
            lo, hi = dt.iinfo_bounds(x.dtype)
            bound = lo if bound < lo else hi if bound > hi else bound
        out = op(hlo_name, *operands("clip", out, bound))
    return out


def _clip_floats(x: object, low: object, high: object) -> Array | None:
    """``clip`` of a floating-point array by Python int or float bounds (or None), as the
    rules record it without promotion (16 us a call in a loop, most of it the rules'),
    each bound a run-time scalar of the array's shape and dtype (``scalar_like``, as the
    rules make it); None for anything else."""
    if type(x) is not Array or x._node.weak or x._node.shape.dtype.kind != "f" or \
            not all(b is None or type(b) is float or type(b) is int for b in (low, high)):
        return None
    node = x._node
    out: Array = x
    bound: Any
    for bound, name in ((low, "maximum"), (high, "minimum")):
        if bound is not None:
            out = wrap(derive(name, (out._node, scalar_like(bound, node.shape, "clip")), NO_ATTRS, node.shape))
    return copy_of(x) if out is x else out


__all__.append("clip")
