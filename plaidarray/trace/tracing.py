"""Tracing a Python function into one HLO computation (for ``jit`` and the bodies of
``cond`` and ``while_loop``).

The function is called once with placeholder arrays standing for its array arguments.
The operations it records form a graph from the placeholders to its results; that
graph becomes a :class:`Computation` whose first parameters are the placeholders.
Values the function uses but did not compute from its arguments (arrays it closes
over, placeholders of an enclosing trace) are *captured*: they become further
parameters, and the caller passes them in. Pure generators (constants, iotas) are
recomputed inside instead, as they are cheaper than a buffer.

A placeholder has no value, so materialising anything that depends on it (``bool()``,
``float()``, ``np.asarray``, ...) raises :class:`TracerError`, naming the function, the
line that asked and the fix.
"""

from __future__ import annotations

import inspect
import linecache
import math
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any

from ..hlo import Computation
from ..hlo.ir import topological_order
from ..hlo.shape import Shape
from . import pytree
from . import array as array_module
from .array import Array, namespace
from .node import GRAPH_LOCK, TRACED, Node, serial_mark
from .to_hlo import graph_to_computation

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

#: How the Array methods that need a value are named in error messages.
_OPERATIONS = {
    "__bool__": "bool()", "__float__": "float()", "__int__": "int()", "__complex__": "complex()",
    "__index__": "using it as an index (__index__)", "__array__": "converting it to NumPy (__array__)",
    "__dlpack__": "__dlpack__()", "tolist": "tolist()",
}

_stack = threading.local()
#: Traces under way in all threads, and the lock that guards the count.
_ACTIVE = 0
_active_lock = threading.Lock()


class TracerError(TypeError):
    """A traced function needed the value of an array that depends on its arguments."""


class Trace:
    """One tracing of a user function: owns its placeholders and explains their misuse.
    ``guarded``: whether the checks eager code makes on values the trace computes are
    kept (``guard``), for a caller that runs them after each call (jit's); a body of
    ``cond`` or ``while_loop`` has no results to return them by."""

    def __init__(self, what: str, fun: Callable, fix: str, guarded: bool = False) -> None:
        self.what = what
        self.fun = fun
        self.fix = fix
        self.active = False
        self.guards: list[tuple[Node, Guard]] | None = [] if guarded else None

    def __enter__(self) -> Trace:
        global _ACTIVE
        #: Nodes numbered below this one were made before the trace (``check_write``).
        self.first_serial = serial_mark()
        self.active = True
        _traces().append(self)
        with _active_lock:
            _ACTIVE += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global _ACTIVE
        _traces().pop()
        self.active = False
        with _active_lock:
            _ACTIVE -= 1

    def value_error(self) -> TracerError:
        """The error for materialising a value that depends on this trace's placeholders."""
        where, operation = _user_site()
        name = function_name(self.fun)
        if not self.active:
            return TracerError(
                f"{self.what}: an array traced inside {name} escaped the trace (it was stored in a global, an "
                f"attribute or a closure during tracing), and its value was asked for at {where}\n"
                f"Return the array from the function instead.")
        return TracerError(
            f"{self.what}: {operation} needs the value of an array that depends on the arguments of {name}, "
            f"at {where}\nWhile a function is traced its arrays stand for every value of their shape and "
            f"dtype, so Python cannot branch, loop or convert on them. {self.fix}")


@dataclass(frozen=True)
class Guard:
    """A check eager code makes in Python on a value a traced function computes (a
    Python int argument meeting an int8 array, a Python int used as an index): the value
    must lie in ``[low, high]``, else ``error`` with ``message`` formatted with it. jit
    returns the value as a further result and checks it after each run (``Compiled.run``),
    so a call raises what the same call raises eagerly instead of wrapping or clamping."""

    low: int | float
    high: int | float
    error: type[Exception]
    message: str

    def check(self, value: int | float) -> None:
        if not self.low <= value <= self.high:  # NaN too: a ValueError, as a NaN's int() is
            error = ValueError if value != value or value in (math.inf, -math.inf) else self.error
            raise error(self.message.format(value=value))


def guard(node: Node, check: Guard) -> None:
    """Keep ``check`` on the value of ``node`` for the innermost trace, if it keeps
    guards (``Trace.guarded``); nothing outside a trace."""
    if is_tracing():
        guards = _traces()[-1].guards
        if guards is not None and not any(n is node and g == check for n, g in guards):
            guards.append((node, check))


def check_write(node: Node) -> None:
    """TracerError for a write, while a function is traced, to an array it did not make
    nor receive (``node`` its value, made before the trace and not traced): the traced
    function would make it once, while tracing, where the function means it at each call
    (jit) or iteration (a ``fori_loop``, ``while_loop`` or ``cond`` body, which it reached
    in the branch not taken too). Installed in ``array.py``, which calls it at each write
    (``Array._checked``: its stores, in-place operators and views' steps) and so cannot
    import this module."""
    if _ACTIVE and is_tracing():
        trace = _traces()[-1]
        if node.depth != TRACED and node.serial < trace.first_serial:
            where, _ = _user_site()
            raise TracerError(
                f"{trace.what}: {function_name(trace.fun)} writes an array it neither made nor received (captured "
                f"from outside it), at {where}\nThe write would be made once, while the function is traced, not at "
                f"each call or iteration. Pass the array in (an argument, a loop's carried value) and return its new "
                f"value.")


def is_tracing() -> bool:
    """True while some function is being traced on this thread (asked on every recorded
    scalar: the count of traces in all threads answers the common case without touching
    the thread-local stack)."""
    return _ACTIVE > 0 and bool(getattr(_stack, "traces", None))


def _traces() -> list[Trace]:
    if not hasattr(_stack, "traces"):
        _stack.traces = []
    return _stack.traces


def function_name(fun: Callable) -> str:
    """``name (file:line)`` of a Python function, for messages."""
    fun = inspect.unwrap(fun)
    name = getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None) or repr(fun)
    name = name.rpartition("<locals>.")[2]
    code = getattr(fun, "__code__", None)
    if code is None:
        return name
    return f"{name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


def _user_site() -> tuple[str, str]:
    """The innermost frame outside plaidarray (``file:line`` and its source) and the
    plaidarray entry point it called (which operation asked for a value)."""
    frame: FrameType | None = sys._getframe(1)
    entry = "materialising it"
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        entry = frame.f_code.co_name
        frame = frame.f_back
    operation = _OPERATIONS.get(entry, f"{entry}()" if entry.isidentifier() else entry)
    if frame is None:
        return "an unknown line", operation
    filename, line = frame.f_code.co_filename, frame.f_lineno
    source = linecache.getline(filename, line).strip()
    where = f"{os.path.basename(filename)}:{line}"
    return (f"{where}:\n    {source}" if source else where), operation


@dataclass
class Traced:
    """A traced function: its computation (parameters: the arguments, then the captured
    nodes), the captured nodes, and the pytree structure of its result."""

    computation: Computation
    captured: list[Node]
    out_structure: Any
    #: The checks on the computation's last results, one each (``Guard``); the function's
    #: own results come before them.
    guards: list[Guard]


def trace(fun: Callable[[list[Array]], Any], shapes: Sequence[Shape], owner: Trace) -> Traced:
    """Call ``fun`` on placeholder arrays of ``shapes`` and build the computation of its
    result (a pytree of arrays; Python scalars and NumPy arrays in it become arrays)."""
    placeholders = [Node.placeholder(s, owner) for s in shapes]
    with owner:
        out = fun([Array(p) for p in placeholders])
    leaves, structure = pytree.flatten(out)
    roots = [_result_array(leaf, owner)._node for leaf in leaves]
    guards = owner.guards or []
    roots += [node for node, _ in guards]
    with GRAPH_LOCK:  # captured values may be materialised by other threads meanwhile
        captured = _captured(roots, placeholders)
        comp, bound = graph_to_computation(roots, placeholders, lambda node: id(node) in captured)
    return Traced(comp, bound, structure, [check for _, check in guards])


def _result_array(leaf: Any, owner: Trace) -> Array:
    if isinstance(leaf, Array):
        return leaf
    try:
        return namespace().asarray(leaf)
    except (TypeError, ValueError):
        raise TypeError(f"{owner.what}: {function_name(owner.fun)} returned a {type(leaf).__name__}; results must "
                        f"be arrays, scalars, or tuples/lists/dicts of them") from None


_INNER, _GENERATED, _CAPTURED = range(3)


def _captured(roots: Sequence[Node], inputs: Sequence[Node]) -> set[int]:
    """Ids of the nodes the trace receives instead of computing: ready buffers, foreign
    placeholders, and what is computed from them alone (possibly with generators).
    Nodes that depend on ``inputs`` are computed by the trace (they are ``_INNER``), and
    so are pure generators (``_GENERATED``)."""
    kind = {id(n): _INNER for n in inputs}
    for node in topological_order(roots, lambda n: id(n) in kind or n.buffer is not None or n.is_placeholder):
        if id(node) in kind:
            continue
        if node.buffer is not None or node.is_placeholder:
            kind[id(node)] = _CAPTURED
        else:
            kinds = {kind[id(o)] for o in node.operands}
            kind[id(node)] = _INNER if _INNER in kinds else _CAPTURED if _CAPTURED in kinds else _GENERATED
    return {k for k, v in kind.items() if v == _CAPTURED}


array_module.CHECK_WRITE[0] = check_write
