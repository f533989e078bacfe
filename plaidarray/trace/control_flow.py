"""Control flow on array values: ``cond``, ``while_loop`` and ``fori_loop`` (as in ``jax.lax``).

Python's ``if`` and ``while`` cannot look at a traced array, whose value is unknown
while tracing. These primitives trace each branch or body once into a nested
computation and record one HLO ``conditional`` or ``while`` op (its results selected
by ``get_tuple_element``s), which the compiled backend lowers to ``scf.if`` / ``scf.while``. Outside ``jit`` they are lazy like every
other operation. Values a branch or body uses without receiving them (arrays it closes
over) are passed in as extra operands.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import dtypes as dt
from ..hlo.ops.control_flow import Subcomputation
from ..hlo.passes import run_hlo_passes
from ..hlo.shape import Shape
from . import pytree
from .array import Array, namespace
from .node import Node
from .tracing import Trace, Traced, function_name, trace

_FIX = ("Fix: inside a branch or loop body, branch on array values with plaidarray.cond and loop with "
        "plaidarray.while_loop or plaidarray.fori_loop.")


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, decided when the
    program runs. ``pred`` is a 0-d boolean array; ``operands`` is any pytree of arrays,
    and both branches must return the same structure of arrays with the same shapes and
    dtypes. Only the chosen branch runs."""
    pred = _array(pred, "cond: pred")
    if pred.shape != () or pred.dtype != dt.bool_:
        raise TypeError(f"cond: pred must be a 0-d boolean array, got shape {pred.shape} and dtype {pred.dtype}")
    args, structure = _flatten_arrays(operands, "cond: operands")
    true = _trace(true_fun, structure, args, f"cond(true_fun={function_name(true_fun)})")
    false = _trace(false_fun, structure, args, f"cond(false_fun={function_name(false_fun)})")
    _check_same(false, true.out_structure, _out_shapes(true),
                f"cond: false_fun {function_name(false_fun)} must return what true_fun returns")
    nodes = [a._node for a in args]
    return _record("conditional", [pred._node, *nodes, *true.captured, *nodes, *false.captured], true,
                   true_branch=_nested(true, "true_branch"), false_branch=_nested(false, "false_branch"))


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """``val = init_val; while cond_fun(val): val = body_fun(val)``; returns ``val``.

    ``init_val`` is any pytree of arrays (Python scalars become arrays of the default
    dtypes); ``body_fun`` must return the same structure with the same shapes and
    dtypes, and ``cond_fun`` a 0-d boolean array."""
    init, structure = _flatten_arrays(init_val, "while_loop: init_val")
    shapes = [a._node.shape for a in init]
    loop_structure = pytree.flatten((init_val,))[1]
    test = _trace(cond_fun, loop_structure, init, f"while_loop(cond_fun={function_name(cond_fun)})")
    _check_same(test, pytree.LEAF, [Shape((), dt.bool_)],
                f"while_loop: cond_fun {function_name(cond_fun)} must return a 0-d boolean array")
    body = _trace(body_fun, loop_structure, init, f"while_loop(body_fun={function_name(body_fun)})")
    _check_same(body, structure, shapes, f"while_loop: body_fun {function_name(body_fun)} must return the "
                                         f"structure, shapes and dtypes of init_val")
    return _record("while", [*(a._node for a in init), *test.captured, *body.captured], body,
                   cond=_nested(test, "cond"), body=_nested(body, "body"))


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``; returns
    ``val``. ``i`` is a 0-d array of the bounds' integer dtype; the bounds may be arrays
    computed at run time."""
    lower, upper = _array(lower, "fori_loop: lower"), _array(upper, "fori_loop: upper")
    if lower.shape or upper.shape or lower.dtype.kind not in "iu" or upper.dtype.kind not in "iu":
        raise TypeError(f"fori_loop: lower and upper must be 0-d integers, got {lower.dtype}{list(lower.shape)} "
                        f"and {upper.dtype}{list(upper.shape)}")
    index_dtype = dt.result_type(lower.dtype, upper.dtype)
    lower, upper = namespace().astype(lower, index_dtype), namespace().astype(upper, index_dtype)

    def step(state):
        i, val = state
        return i + 1, body_fun(i, val)

    def more(state):
        return state[0] < upper

    for wrapper in (step, more):  # errors name the user's function (its __wrapped__)
        functools.update_wrapper(wrapper, body_fun, assigned=(), updated=())
    return while_loop(more, step, (lower, init_val))[1]


def _array(value: Any, where: str) -> Array:
    if isinstance(value, Array):
        return value
    try:
        return namespace().asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where}: expected arrays or scalars, got {type(value).__name__} ({exc})") from None


def _flatten_arrays(tree: Any, where: str) -> tuple[list[Array], Any]:
    leaves, structure = pytree.flatten(tree)
    return [_array(leaf, where) for leaf in leaves], structure


def _trace(fun: Callable, structure: Any, args: list[Array], what: str) -> Traced:
    """Trace ``fun(*unflatten(structure, placeholders))``."""
    return trace(lambda arrays: fun(*pytree.unflatten(structure, arrays)), [a._node.shape for a in args],
                 Trace(what, fun, _FIX))


def _out_shapes(traced: Traced) -> list:
    return [o.shape for o in traced.computation.outputs]


def _check_same(traced: Traced, structure: Any, shapes: list, message: str) -> None:
    if traced.out_structure != structure or _out_shapes(traced) != shapes:
        got = ", ".join(map(str, _out_shapes(traced)))
        want = ", ".join(map(str, shapes))
        raise TypeError(f"{message}: expected {pytree.describe(structure)} of ({want}), got "
                        f"{pytree.describe(traced.out_structure)} of ({got})")


def _nested(traced: Traced, name: str) -> Subcomputation:
    comp = run_hlo_passes(traced.computation)
    comp.name = name
    return Subcomputation(comp)


def _record(op: str, operands: list[Node], results: Traced, **attrs: Any) -> Any:
    """Record ``op``, whose shape is a tuple of its results' shapes, and one
    ``get_tuple_element`` per result, rebuilt into the pytree."""
    node = Node.apply(op, tuple(operands), attrs)
    n = len(results.computation.outputs)
    arrays = [Array(Node.apply("get_tuple_element", (node,), {"index": i})) for i in range(n)]
    return pytree.unflatten(results.out_structure, arrays)
