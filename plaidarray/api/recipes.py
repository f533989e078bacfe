"""Recipes: the nodes a function recorded for one signature, made again without deciding.

On a small array, recording an op costs mostly Python deciding what to record: checking
the arguments, promoting dtypes, normalising axes and indices, building attributes,
running shape rules. All of that is a pure function of the call's *signature*: its
arrays' shapes and dtypes (and which of them are the same node, and which are views)
and the values of its other arguments. So a function marked :func:`recorded` keeps, per
signature, the nodes one call of it made (ops, attributes, result shapes, operands) as a
*recipe*, and later calls of that signature make the same nodes over their own arrays:
the graph the function's code would have recorded, at the cost of making its nodes.

- **What a recipe holds** (``_capture``): the nodes the call made, in the order it made
  them (an order graph walks rely on), each an op over earlier nodes or a ready 0-d
  buffer on its device (a run-time scalar: an index, a Python scalar argument); and the
  shared nodes it met (``Node.reused``: a Python scalar's broadcast, which graphs may
  share); a node its code put on a device (``graph.placed``: a creation function's on an
  argument's device) is put there again. A call whose result reaches any other node (one
  made before the call that is no argument, such as a remembered concatenation) keeps no
  recipe, nor does one that read or computed a value (``node.reads_mark``: a size or an
  index taken from an array's value, a cut) or decided between a view and a copy by a
  view argument's layout (counted as a read), nor one whose result is a view of anything
  but the first array argument. A result may be a tuple or list of arrays, none of them a
  view (``eigh``'s, ``qr``'s and ``svd``'s named tuples): the recipe makes each element
  again.
- **Signatures** (``_signature``) hold only values whose equality means the same graph:
  Python ints, strings, None and ``...`` as they are; bools, floats (zeros and NaN by
  their text: -0.0 is not 0.0), complex numbers, dtypes, types, tuples, lists and slices
  tagged with their type; arrays as shape, dtype, device, whether a view, and which
  earlier array argument has the same node. Anything else (a NumPy array or scalar, an
  exported array) has no signature, and the call runs the function's code.
- **Errors** are never kept: a call that raised keeps nothing, and the next call of its
  signature runs the function's code and raises again.
- **Where it cannot hold**, the function's code runs: while a function is traced (a
  Python scalar then becomes a literal, not a run-time value), and where a node the
  recipe makes before its result is deeper than the pending bound (the code's own calls
  of ``graph.wrap`` decide where to cut). A result alone past the bound is wrapped as the
  code's last ``wrap`` wraps it, which cuts there.
- **When**: a signature's recipe is kept at its first call, so that a script's second run
  (and a loop's second step) replays what its first recorded, where keeping it at its
  second call left the second run to record everything again and capture it (the eager
  scripts' second runs now take 12% less, their first runs 1% more). A function whose
  recipes once fill ``RECIPES_MAX`` (a loop over ever new sizes: windows of 1,500 lengths)
  keeps them at a signature's second call from then on: a signature met once then costs a
  dictionary entry, not a capture (3-10 us a call: ``std`` of a new window ~6 us, ~9-18
  with its capture), and its table is not emptied by signatures that never come back.
- **Bounded**: each function's recipes and signatures are dropped when they reach
  ``RECIPES_MAX``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np

from ..trace import node as node_module
from ..trace.array import Array
from ..trace.exports import read_once, recording
from ..trace.node import Node, common_device, derive, reads_mark, serial_mark
from ..trace.tracing import is_tracing
from ..trace.views import Layout, Step, ViewOf, attach
from .graph import wrap

F = TypeVar("F", bound=Callable[..., Any])

#: How many recipes (and, apart, signatures seen once) a function keeps before it drops them all.
RECIPES_MAX = 256

#: Every function's tables, for ``forget``.
_TABLES: list[dict] = []


class Recipe(NamedTuple):
    """What one call made, numbered after its array arguments' nodes (``inputs`` of them)
    and the ``shared`` nodes: each step an op over earlier numbers, ``(op, gather, attrs,
    shape)`` (``_gather``; with the node's device last where its code gave it another than
    its operands'), or a ready buffer, ``(None, device, buffer, shape)``."""

    inputs: int
    shared: tuple[Node, ...]
    steps: tuple[tuple[Any, ...], ...]
    #: The result's number; ``-1 - i`` when the result is the ``i``-th array argument itself.
    result: int
    #: For a view of the first array argument: its step, and its layout if the step needed it.
    view: Step | None
    placed: Layout | None
    #: For a result of several arrays: the type that holds them (a tuple, a list, a named
    #: tuple) and each one's number, as ``result``'s.
    group: tuple[type, tuple[int, ...]] | None = None


def recorded(fn: F, first: Callable[..., Any] | None = None, *, check: Callable[..., None] | None = None) -> F:
    """``fn``, replaying a recipe for a signature met before (see the module docstring).
    ``fn`` must record nothing that depends on anything but its signature (no value of
    an array, no state of its own). ``first``, where given, is tried wherever ``fn``'s
    code would run for a signature without a recipe: its result (the graph ``fn``
    records, made faster for common calls, such as a reduction of a whole array at a new
    size) stands for ``fn``'s unless it is None; its recipe is kept alike. ``check``,
    where given, is called with every call's arguments first, replayed or not: what
    depends on values a recipe does not hold (an index array's computed positions)."""
    recipes: dict[tuple, Recipe] = {}
    seen: dict[tuple, None] = {}
    _TABLES.extend((recipes, seen))
    crowded = False  # its recipes filled their table once: kept at a signature's second call since

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        nonlocal crowded
        if check is not None:
            check(*args, **kwargs)
        if is_tracing():
            return fn(*args, **kwargs)
        arrays: list[Array] = []
        nodes: list[Node] = []
        key = signature(args, kwargs, arrays, nodes)
        if key is None:  # a pinned array among the arguments, or a value without a signature
            return recording(fn, *args, **kwargs)
        recipe = recipes.get(key)
        if recipe is not None:
            result = _replay(recipe, arrays, nodes)
            return fn(*args, **kwargs) if result is None else result
        if crowded and key not in seen:
            _keep(seen, key, None)
            return _code(fn, first, args, kwargs)
        serial, reads = serial_mark(), reads_mark()
        result = _code(fn, first, args, kwargs)
        if reads_mark() == reads:
            recipe = _capture(result, arrays, nodes, serial)
            if recipe is not None:
                crowded = crowded or len(recipes) >= RECIPES_MAX
                _keep(recipes, key, recipe)
        return result

    call.recipes = recipes  # type: ignore[attr-defined]  # what tests and benchmarks look at
    return call  # type: ignore[return-value]


def _code(fn: Callable[..., Any], first: Callable[..., Any] | None, args: tuple, kwargs: dict[str, Any]) -> Any:
    """What a call without a recipe records: ``first``'s result where it gives one, else ``fn``'s."""
    if first is not None:
        out = first(*args, **kwargs)
        if out is not None:
            return out
    return fn(*args, **kwargs)


def stands_for(fast: Any, fn: Callable[..., Any], name: str | None = None) -> Any:
    """``fast``, a C path of ``fn`` (``_graph.Elementwise``, ``Reduction``, ``Product``:
    its common cases in C, ``fn`` called for the rest), made to look like ``fn``: its name
    (``name`` where ``fn``'s is not the namespace's), docstring, module and signature
    (``inspect`` follows ``__wrapped__``), and the recipes ``fn`` keeps, if it is recorded."""
    fast.__name__ = fast.__qualname__ = name or fn.__name__
    fast.__doc__, fast.__module__, fast.__wrapped__ = fn.__doc__, fn.__module__, fn
    if hasattr(fn, "recipes"):
        fast.recipes = fn.recipes
    return fast


def reading_pins_once(make: Callable[[Callable[..., Any]], Any], fn: Callable[..., Any]) -> Any:
    """The C path ``make(fallback)`` of ``fn``, a function whose result is never a view of
    its arguments (an elementwise function, a reduction, a product), whose fallback for a
    call with exported arrays among its arguments (``Pinned``) reads each of them once
    (``exports.read_once``) and calls the C path again on plain arrays of their values.
    ``fn`` would sync each at every read of its node (five on ``y + 1.0``: 30 us, 0.2 us on
    an array not exported), and its recipes pass over pinned arguments. A result that is
    an argument itself (``real`` of a real array) is the caller's array, not the plain one.
    The fallback looks like ``fn`` (its name, signature and recipes)."""
    fast: Any = None

    @functools.wraps(fn)
    def fallback(*args: Any, **kwargs: Any) -> Any:
        plain = None if is_tracing() else read_once(args)
        if plain is None:
            return fn(*args, **kwargs)
        result = fast(*plain, **kwargs)
        return next((arg for arg, alias in zip(args, plain) if result is alias), result)

    fast = make(fallback)
    return fast


def kept(fn: F) -> F:
    """``fn``, a function of its signature that records nothing and returns no array
    (argument checks that decide attributes), with each result kept per signature; as
    for recipes, errors are never kept, nor results of a call that read a value."""
    results: dict[tuple, Any] = {}
    _TABLES.append(results)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        key = signature(args, kwargs, [], [])
        if key is None:
            return fn(*args, **kwargs)
        if key in results:
            return results[key]
        reads = reads_mark()
        result = fn(*args, **kwargs)
        if reads_mark() == reads:
            _keep(results, key, result)
        return result

    return call  # type: ignore[return-value]


def forget() -> None:
    """Drop every recipe and kept result (``plaidarray.clear_cache``)."""
    for table in _TABLES:
        table.clear()


def _keep(table: dict, key: tuple, value: Any) -> None:
    if len(table) >= RECIPES_MAX:
        table.clear()
    table[key] = value


# --- signatures -------------------------------------------------------------------------

class _Tag:
    """Marks what the values after it in a signature are (never equal to an argument)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_ARRAY, _VIEW, _TRUE, _FALSE, _FLOAT, _COMPLEX, _DTYPE, _TYPE, _SLICE, _KEYWORDS = (
    _Tag(name) for name in ("array", "view", "True", "False", "float", "complex", "dtype", "type", "slice", "keywords"))
_SEQUENCES: dict[type, _Tag] = {tuple: _Tag("tuple"), list: _Tag("list")}
_EXACT = (int, str, type(None), type(Ellipsis))


def _signature(args: tuple, kwargs: dict[str, Any], arrays: list[Array], nodes: list[Node]) -> tuple | None:
    """The call's signature, collecting its arrays and their nodes in order; None if an
    argument has none. (Arrays and ints, the common arguments, are asked first.)
    ``_graph.signature`` does the same in C."""
    key: list[Any] = []
    for value in args:
        if type(value) is Array:
            if not _add_array(key, value, arrays, nodes):
                return None
        elif type(value) is int:
            key.append(value)
        elif not _add(key, value, arrays, nodes):
            return None
    if kwargs:
        key.append(_KEYWORDS)
        for name, value in kwargs.items():
            key.append(name)
            if not _add(key, value, arrays, nodes):
                return None
    return tuple(key)


def _add_array(key: list[Any], array: Array, arrays: list[Array], nodes: list[Node]) -> bool:
    node = array._node
    if node.weak:
        return False
    shape = node.shape
    key += (_VIEW if type(array._base) is ViewOf else _ARRAY, shape.dims, shape.dtype, node.device,
            nodes.index(node) if node in nodes else -1)
    arrays.append(array)
    nodes.append(node)
    return True


#: Sequences nested deeper than this in an argument are not keyed: the call is not recorded.
MAX_NESTING = 8


def _add(key: list[Any], value: Any, arrays: list[Array], nodes: list[Node], depth: int = 0) -> bool:
    kind = type(value)
    if kind in _EXACT:
        key.append(value)
    elif kind is Array:
        return _add_array(key, value, arrays, nodes)
    elif kind is bool:
        key.append(_TRUE if value else _FALSE)
    elif kind is float:
        key += (_FLOAT, value if value and value == value else repr(value))
    elif kind in _SEQUENCES:
        if depth == MAX_NESTING:
            return False
        key += (_SEQUENCES[kind], len(value))
        for item in value:
            if type(item) is int:
                key.append(item)
            elif type(item) is Array:
                if not _add_array(key, item, arrays, nodes):
                    return False
            elif not _add(key, item, arrays, nodes, depth + 1):
                return False
    elif kind is slice:
        key.append(_SLICE)
        return (_add(key, value.start, arrays, nodes) and _add(key, value.stop, arrays, nodes)
                and _add(key, value.step, arrays, nodes))
    elif kind is complex:
        key += (_COMPLEX, repr(value))
    elif isinstance(value, np.dtype):
        key += (_DTYPE, value)
    elif kind is type:
        key += (_TYPE, value)
    else:
        return False
    return True


def _signature_in_c() -> Callable[[tuple, dict[str, Any], list[Array], list[Node]], tuple | None]:
    """``_signature`` in C (``_graph.signature``), configured with the tags above, where
    the C module is in use; else ``_signature``."""
    graph = node_module.GRAPH_IN_C
    if graph is None:
        return _signature
    graph.configure_signature((_ARRAY, _VIEW, _TRUE, _FALSE, _FLOAT, _COMPLEX, _DTYPE, _TYPE, _SLICE, _KEYWORDS,
                               _SEQUENCES[tuple], _SEQUENCES[list]), Array, ViewOf, np.dtype, MAX_NESTING)
    return graph.signature


#: A call's signature (``_signature``).
signature = _signature_in_c()


# --- capture and replay -------------------------------------------------------------------

def _capture(result: Any, arrays: list[Array], nodes: list[Node], first: int) -> Recipe | None:
    """The recipe of a call whose array arguments were ``arrays`` (on ``nodes``) and
    which made the nodes of serial ``first`` on; None where none may be kept."""
    if type(result) is not Array:
        return _capture_group(result, arrays, nodes, first)
    for i, array in enumerate(arrays):
        if result is array:
            return Recipe(len(nodes), (), (), -1 - i, None, None)
    view = _view_of(result, arrays)
    if view is None:
        return None
    found = made_steps([result._node], nodes, first)
    if found is None:
        return None
    shared, steps, (number,) = found
    return Recipe(len(nodes), shared, steps, number, *view)


def _capture_group(result: Any, arrays: list[Array], nodes: list[Node], first: int) -> Recipe | None:
    """The recipe of a call whose result holds several arrays (``_capture``): a tuple, a
    list or a named tuple of arrays that are no views, each made by the call or an array
    argument itself; None for any other result."""
    kind = type(result)
    if not (kind is tuple or kind is list or (issubclass(kind, tuple) and hasattr(kind, "_fields"))) or not result:
        return None
    if any(type(element) is not Array or type(element._base) is ViewOf for element in result):
        return None
    found = made_steps([element._node for element in result], nodes, first)
    if found is None:
        return None
    shared, steps, numbers = found
    return Recipe(len(nodes), shared, steps, 0, None, None,
                  (kind, tuple(_number(element, arrays, number) for element, number in zip(result, numbers))))


def _number(element: Array, arrays: list[Array], number: int) -> int:
    """An element of a result's number (``Recipe.result``'s): ``-1 - i`` for the ``i``-th
    array argument itself, else its node's ``number``."""
    for i, array in enumerate(arrays):
        if element is array:
            return -1 - i
    return number


def _made_steps_in_python(results: list[Node], nodes: list[Node], first: int
                          ) -> tuple[tuple[Node, ...], tuple[tuple[Any, ...], ...], tuple[int, ...]] | None:
    """What a call whose arguments' nodes are ``nodes`` made from serial ``first`` on to
    make its ``results`` (nodes): the shared nodes it met, the steps that make the rest
    again (``_made``, ``_steps``) and each result's number among them (an argument's node:
    its first position in ``nodes``); None where no recipe may be kept. ``_graph.made_steps``
    does the same in C."""
    numbers = {id(node): i for i, node in reversed(list(enumerate(nodes)))}
    made, shared = _made(results, numbers, first)
    if made is None:
        return None
    steps = _steps(made, shared, numbers, len(nodes))
    return tuple(shared), steps, tuple(numbers[id(result)] for result in results)


def _steps(made: list[Node], shared: list[Node], numbers: dict[int, int], first_number: int
           ) -> tuple[tuple[Any, ...], ...]:
    """The steps that make ``made`` again, each node numbered after the arguments' and the
    ``shared`` nodes (entered in ``numbers``)."""
    for number, node in enumerate([*shared, *made], first_number):  # an argument's node may come twice in nodes
        numbers[id(node)] = number
    steps: list[tuple[Any, ...]] = []
    for node in made:
        if node.buffer is not None and not node.operands:
            steps.append((None, node.device, node.buffer, node.shape))
            continue
        # an op, or a window showing an argument's memory (made again), with the device its
        # code gave it where ``derive`` would give it another (a creation's, ``graph.placed``)
        op = "dynamic_slice" if node.buffer is not None else cast(str, node.op)
        step = (op, _gather(node.operands, numbers), node.attrs, node.shape)
        steps.append(step if node.device is common_device(op, node.operands) else (*step, node.device))
    return tuple(steps)


def _gather(operands: tuple[Node, ...], numbers: dict[int, int]) -> int | tuple[int, ...] | None:
    """How a step takes its ``operands`` from the nodes made so far (``numbers``): the
    number of its one operand, the numbers of several, or None for none (``replay_steps``)."""
    if len(operands) == 1:
        return numbers[id(operands[0])]
    return tuple([numbers[id(o)] for o in operands]) if operands else None


def _view_of(result: Array, arrays: list[Array]) -> tuple[Step | None, Layout | None] | None:
    """The step and layout of a result that is a view of the first array argument, (None,
    None) for a result that is no view; None for any other view: no recipe. (A view or a
    copy decided by a view's layout, which the signature does not hold, keeps none either:
    ``node.value_read`` counts it as a read.)"""
    record = result._base
    if type(record) is not ViewOf:
        return None, None
    if not arrays:
        return None
    base = arrays[0]._base
    family, steps = (base.family, base.steps) if type(base) is ViewOf else (base, ())
    step = record.steps[-1]
    if record.family is not family or record.steps[:-1] != steps:
        return None
    return step, record._layout


def _made(results: list[Node], numbers: dict[int, int], first: int) -> tuple[list[Node] | None, list[Node]]:
    """The nodes between the arguments' nodes (``numbers``) and ``results`` that the call
    made, by serial, and the shared nodes it met; None for the first if it met any other,
    or if a result is a value computed at the call."""
    made: list[Node] = []
    shared: list[Node] = []
    seen: set[int] = set()
    result_ids = {id(result) for result in results}
    stack = list(results)
    while stack:
        node = stack.pop()
        if id(node) in numbers or id(node) in seen:
            continue
        seen.add(id(node))
        is_result = id(node) in result_ids
        if node.reused is not None and not is_result:
            shared.append(node)
            continue
        if node.serial < first or node.weak:
            return None, shared
        if node.buffer is not None and is_result and not node.operands:  # a window is made again (``_steps``)
            return None, shared
        made.append(node)
        stack.extend(node.operands)
    made.sort(key=_serial)
    return made, shared


def _serial(node: Node) -> int:
    return node.serial


def _replay(recipe: Recipe, arrays: list[Array], nodes: list[Node]) -> Array | None:
    """The result of ``recipe`` made over ``nodes``; None where a node is deeper than the
    pending bound (the function's code decides where to cut)."""
    if recipe.group is not None:
        return _replay_group(recipe, arrays, nodes)
    number = recipe.result
    if number < 0:
        return arrays[-1 - number]
    nodes.extend(recipe.shared)
    replay_steps(recipe.steps, nodes)
    node = nodes[number]
    if number < recipe.inputs:
        result = Array(node)
    elif node.depth > node_module.MAX_PENDING > 0 and not _cut_at_result(recipe, nodes, node):
        return None
    else:
        result = wrap(node)
    if recipe.view is not None:
        return attach(arrays[0], result, recipe.view, recipe.placed)
    return result


def _replay_group(recipe: Recipe, arrays: list[Array], nodes: list[Node]) -> Any:
    """The result of a recipe of several arrays (``Recipe.group``); None where a node it
    makes is deeper than the pending bound (the function's code decides where to cut)."""
    kind, numbers = cast("tuple[type, tuple[int, ...]]", recipe.group)
    nodes.extend(recipe.shared)
    replay_steps(recipe.steps, nodes)
    bound = node_module.MAX_PENDING
    if bound > 0 and any(n.depth > bound for n in nodes[recipe.inputs + len(recipe.shared):]):
        return None
    elements = [arrays[-1 - number] if number < 0 else Array(nodes[number]) if number < recipe.inputs
                else wrap(nodes[number]) for number in numbers]
    return kind(elements) if kind is tuple or kind is list else kind(*elements)


def _cut_at_result(recipe: Recipe, nodes: list[Node], result: Node) -> bool:
    """Whether the code would cut the graph where ``wrap`` of the replayed ``result``
    cuts it: every other node the recipe made is within the pending bound, so no call of
    ``wrap`` the code made on them cut, and the result, past it, is what its last one
    wraps. (A chain of products past the bound, a Kalman filter's covariance, replays so.)"""
    bound = node_module.MAX_PENDING
    return all(n.depth <= bound for n in nodes[recipe.inputs + len(recipe.shared):] if n is not result)


def _replay_in_python(steps: tuple[tuple[Any, ...], ...], nodes: list[Node]) -> None:
    """Append the nodes of a recipe's ``steps`` to ``nodes`` (those its steps number):
    each op's node over the nodes its step gathers, each ready buffer's node as
    ``Node.ready`` makes one. ``_graph.replay`` does the same in C."""
    for step in steps:
        op, gather, attrs, shape = step[:4]
        if op is None:  # a ready buffer: (None, its device, the buffer, its shape)
            nodes.append(Node(None, (), {}, shape, attrs, device=gather))
            continue
        operands = (nodes[gather],) if type(gather) is int else tuple([nodes[i] for i in gather]) if gather else ()
        node = derive(op, operands, attrs, shape)
        if len(step) == 5:  # a device its code gave it (``graph.placed``)
            node.device = step[4]
        nodes.append(node)


#: What a capture's call made (``_made_steps_in_python``): in C where the C module is in use.
made_steps: Callable[[list[Node], list[Node], int],
                     tuple[tuple[Node, ...], tuple[tuple[Any, ...], ...], tuple[int, ...]] | None] = \
    node_module.GRAPH_IN_C.made_steps if node_module.GRAPH_IN_C is not None else _made_steps_in_python

#: Makes a recipe's nodes (``_replay``): in C where the C module is in use.
replay_steps: Callable[[tuple[tuple[Any, ...], ...], list[Node]], None] = \
    node_module.GRAPH_IN_C.replay if node_module.GRAPH_IN_C is not None else _replay_in_python
