"""``plaidarray.jit``: trace a function once per signature, compile it, call the executable.

The signature of a call is the pytree structure of its arguments, the shape and dtype
of each array in them, the values of its static arguments and of its Python scalars.
The first call with a new signature traces the function (see ``tracing.py``) into one
HLO computation and compiles it through the executable cache; later calls with that
signature only run the executable.

Python ``int``, ``float`` and ``complex`` arguments are traced too, as weakly typed 0-d
values (JAX's weak types): like the Python scalar they stand for, such a value takes the
dtype of the arrays it meets (``x * s`` stays ``float32`` for a ``float32`` ``x``), and only
its type is in the signature, so a new value runs the same executable. A function that
needs a scalar's value in Python (``range(n)``, ``if s > 0:``) is traced again with its
scalars' values in the signature, as before, from then on. ``bool`` arguments are always
part of the signature: they are flags that decide Python control flow. What eager code
checks of such a scalar's value (that it fits the int8 it meets, that an index names a
position) the trace keeps as guards, checked after each run (``tracing.Guard``).
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..backend import registry
from ..backend.cache import KeyLocks
from ..backend.devices import Device
from ..backend.executable import HostOpsError
from ..backend.transfer import HOST, frozen
from ..hlo import Computation, Module
from ..hlo.shape import Shape
from . import explain, host_round_trip, pytree
from .array import Array, namespace
from .materialize import backend_for, executable_for, materialize
from .node import Node, common_device
from .tracing import Guard, Trace, Traced, TracerError, function_name, is_tracing, trace

_PYTHON_SCALARS = (bool, int, float, complex)

#: The dtype a traced Python scalar argument has before it meets an array.
_WEAK_DTYPES = {int: np.dtype(np.int64), float: np.dtype(np.float64), complex: np.dtype(np.complex128)}


@dataclass(frozen=True)
class JitCacheInfo:
    """Per-function statistics: calls that reused a trace, traces made, traces held."""

    hits: int
    misses: int
    size: int


def jit(fun: Callable | None = None, *, static_argnums: int | Iterable[int] = (),
        static_argnames: str | Iterable[str] = (), dynamic: bool | None = None) -> Any:
    """Compile ``fun`` once per signature; usable as ``@jit`` or ``jit(f, static_argnums=...)``.

    Arguments may be arrays (plaidarray or NumPy), Python scalars, and tuples, lists and
    dicts of them; the result is an array or such a pytree of arrays. Static arguments
    (any hashable value) are passed to ``fun`` as they are and retrace it when they change:
    use them for values that decide Python control flow. Branching or looping on array
    values needs :func:`plaidarray.cond`, :func:`plaidarray.while_loop` or
    :func:`plaidarray.fori_loop`.

    ``dynamic`` (torch.compile's switch): each new shape is traced, but compiled only
    while needed. None (default): once the function is called with other sizes, they
    become run-time values of one executable that serves every later size (as lazy graphs
    do, ``PLAIDARRAY_AUTOMATIC_DYNAMIC``); True: from the first call; False: each shape
    compiles for itself (the fastest code for few shapes).
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 dynamic=dynamic)
    return JitFunction(fun, static_argnums, static_argnames, dynamic)


@dataclass
class _Call:
    """One call's arguments split into the signature (``key``) and its arrays."""

    key: tuple  # (structure, leaf signatures, statics, backend): see explain.jit_reason
    arrays: list[Array]
    leaves: list[Any]
    structure: Any
    statics: tuple[tuple[int | str, Any], ...]
    #: The caller's NumPy memory that ``arrays`` use as it is (``_argument``).
    lent: tuple[np.ndarray, ...] = ()
    #: The device of the arrays (None: of none), whose backend compiles the call.
    device: Device | None = None


class JitFunction:
    """A function compiled per signature by :func:`jit`."""

    __qualname__: str  # the function's, as functools.update_wrapper sets it on the instance

    def __init__(self, fun: Callable, static_argnums: int | Iterable[int],
                 static_argnames: str | Iterable[str], dynamic: bool | None = None) -> None:
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._dynamic = dynamic
        self._name = getattr(fun, "__name__", type(fun).__name__)
        self._static_argnums, self._static_argnames = _static_arguments(fun, static_argnums, static_argnames)
        try:
            self._signature: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None
        self._compiled: dict[tuple, Compiled] = {}
        #: Calls with only positional array arguments, indexed by their shapes alone, so
        #: the common call skips binding and flattening (see :meth:`_plain_key`).
        self._plain: dict[Hashable, Compiled] = {}
        self._plain_arities = _plain_arities(self._signature, self._static_argnums, self._static_argnames)
        self._lock = threading.Lock()
        self._tracing = KeyLocks()
        self._hits = self._misses = 0
        #: Whether Python scalar arguments are signature values rather than traced (set
        #: once tracing them failed).
        self._static_scalars = False
        #: Signatures whose trace holds an op their device computes on the host alone
        #: (``HostOpsError``): those calls run the function eagerly, its host ops by round trips.
        self._eager: dict[Hashable, None] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_tracing():  # called from a function being traced: becomes part of that trace
            positional, keywords = _own_handles((args, kwargs))
            return self._fun(*positional, **keywords)
        plain = None if kwargs else self._plain_key(args)
        if plain is not None:
            compiled = self._plain.get(plain)
            if compiled is not None:
                with self._lock:
                    self._hits += 1
                return compiled.run(args)
        call = self._bind(args, kwargs)
        with self._lock:
            compiled = self._compiled.get(call.key)
            if compiled is not None:
                self._hits += 1
        if compiled is None:
            if call.key in self._eager:
                return self._fun(*args, **kwargs)
            try:
                compiled, call = self._compile_traced_or_static(call, args, kwargs)
            except HostOpsError as error:
                host_round_trip.LOG.info("jit(%s): %s; it runs eagerly for this signature", self._name, error)
                with self._lock:
                    _kept(self._eager, call.key, None)
                return self._fun(*args, **kwargs)
        if plain is not None:
            _kept(self._plain, plain, compiled)
        return compiled.run(call.arrays, call.lent)

    def _compile_traced_or_static(self, call: _Call, args: tuple, kwargs: dict) -> tuple[Compiled, _Call]:
        """Compile ``call``; if tracing its scalar arguments failed because the function
        needs their values, trace again with the values in the signature (the call as
        bound then is returned with the executable), and keep doing so for this function."""
        try:
            return self._compile_once(call), call
        except TracerError:
            if self._static_scalars or not any(a._node.weak for a in call.arrays):
                raise
        self._static_scalars = True
        call = self._bind(args, kwargs)
        return self._compile_once(call), call

    def _compile_once(self, call: _Call) -> Compiled:
        """Trace and compile the signature of ``call``; threads calling with a new
        signature at once wait for one of them to do it."""
        with self._tracing.hold(call.key):
            with self._lock:
                compiled = self._compiled.get(call.key)
                if compiled is not None:
                    self._hits += 1
                    return compiled
            why = explain.jit_reason(self._name, call.key, list(self._compiled)) if explain.enabled() else ""
            start = time.perf_counter()
            compiled = self._lower(call).compile()
            if why:
                explain.log(why, time.perf_counter() - start, compiled.from_disk)
            with self._lock:
                self._misses += 1
                _kept(self._compiled, call.key, compiled)
            return compiled

    def _plain_key(self, args: tuple) -> Hashable | None:
        """The signature of a call whose arguments are all arrays passed by position
        (no statics, no pytrees), from their shapes alone; None for any other call."""
        if len(args) not in self._plain_arities:
            return None
        key: list[object] = [registry.current().name]
        for a in args:
            if type(a) is not Array:
                return None
            key.append(a._node.shape)
            key.append(a._node.device)
        return tuple(key)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Trace for these arguments without compiling; ``.as_text()`` shows the HLO."""
        return self._lower(self._bind(args, kwargs))

    def cache_info(self) -> JitCacheInfo:
        with self._lock:
            return JitCacheInfo(self._hits, self._misses, len(self._compiled))

    def clear_cache(self) -> None:
        with self._lock:
            self._compiled.clear()
            self._plain.clear()
            self._hits = self._misses = 0

    def __repr__(self) -> str:
        return f"<plaidarray.jit of {function_name(self._fun)}>"

    # --- sending it to other processes (Dask, Cubed, multiprocessing) ------------------
    def __reduce__(self) -> str | tuple:
        """Pickled by reference (its module and name) when importing that name gives this
        very object, else by value: the function (a pickler like cloudpickle sends a
        lambda or a closure by value) and the static arguments. Never the traces, locks or
        executables: the receiving process traces again, and compiles or loads the code
        from the persistent cache."""
        if _importable(self):
            return self.__qualname__
        return JitFunction, (self._fun, self._static_argnums, self._static_argnames, self._dynamic)

    def __dask_tokenize__(self) -> tuple[str, str]:
        """The same token in every process for the same function and static arguments
        (Dask names tasks by it); called by Dask only, which is then importable."""
        from dask.base import tokenize

        return "plaidarray.jit", tokenize(self._fun, self._static_argnums, self._static_argnames)

    # --- signatures -----------------------------------------------------------------
    def _bind(self, args: tuple, kwargs: dict) -> _Call:
        if self._signature is not None:  # f(x, 3) and f(x, n=3) are one signature
            try:
                bound = self._signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"jit({self._name}): {exc}") from None
            args, kwargs = bound.args, bound.kwargs
        positional, keywords = list(args), dict(kwargs)
        statics: list[tuple[int | str, Any]] = []
        for i in self._static_argnums:
            if -len(args) <= i < len(args):
                statics.append((i % len(args), args[i]))
                positional[i] = None
        statics += [(name, keywords.pop(name)) for name in self._static_argnames if name in keywords]
        for where, value in statics:
            try:
                hash(value)
            except TypeError:
                raise TypeError(f"jit({self._name}): static argument {where!r} must be hashable, "
                                f"got a {type(value).__name__}") from None
        leaves, structure = pytree.flatten((tuple(positional), keywords))
        lent: list[np.ndarray] = []
        leaves = [self._argument(leaf, lent) for leaf in leaves]
        arrays = [leaf for leaf in leaves if isinstance(leaf, Array)]
        device = common_device(f"jit({self._name})", [a._node for a in arrays])
        backend = backend_for(device)
        on = backend.name if backend is registry.current() else f"{backend.name} on {device}"
        key = (structure, tuple(_leaf_signature(leaf) for leaf in leaves), tuple(statics), on)
        return _Call(key, arrays, leaves, structure, tuple(statics), tuple(lent), device)

    def _argument(self, leaf: Any, lent: list[np.ndarray]) -> Any:
        """A leaf of the arguments as the executable takes it. A NumPy array's memory is
        used as it is, without ``asarray``'s copy of writable memory: the call runs now
        and is done with it when it returns, except for a result that is the argument
        itself, which ``Compiled.run`` copies (``lent`` collects such memory)."""
        if isinstance(leaf, Array):
            return leaf
        if type(leaf) in _PYTHON_SCALARS:
            if type(leaf) is bool or self._static_scalars or type(leaf) is int and not _INT64[0] <= leaf <= _INT64[1]:
                return leaf  # a value of the signature: an int past int64's has no traced dtype to take
            scalar = Array(Node.ready(np.asarray(leaf, dtype=_WEAK_DTYPES[type(leaf)])))
            scalar._node.weak = True
            return scalar
        if isinstance(leaf, np.ndarray) and not frozen(leaf):
            buffer = HOST.from_host(leaf, f"jit({self._name})")
            if buffer is leaf:
                lent.append(buffer)
            return Array(Node.ready(buffer))
        if isinstance(leaf, (np.ndarray, np.generic)):
            return namespace().asarray(leaf)
        raise TypeError(f"jit({self._name}): cannot pass a {type(leaf).__name__} as a traced argument; pass "
                        f"arrays, Python scalars, or tuples/lists/dicts of them, or mark the argument static "
                        f"(static_argnums=... or static_argnames=...)")

    def _lower(self, call: _Call) -> Lowered:
        def run_traced(arrays: list[Array]) -> Any:
            for given, placeholder in zip(call.arrays, arrays):
                placeholder._node.weak = given._node.weak
            it = iter(arrays)
            leaves = [next(it) if isinstance(leaf, Array) else leaf for leaf in call.leaves]
            positional, keywords = pytree.unflatten(call.structure, leaves)
            positional = list(positional)
            for where, value in call.statics:
                if isinstance(where, int):
                    positional[where] = value
                else:
                    keywords[where] = value
            return self._fun(*positional, **keywords)

        owner = Trace(f"jit({self._name})", self._fun, _FIX.format(name=self._name), guarded=True)
        traced = trace(run_traced, [a._node.shape for a in call.arrays], owner)
        materialize(traced.captured)  # values the function closes over are computed once, now
        return Lowered(self, call.key, traced, call.device, call)

    def _input_names(self, call: _Call) -> list[str]:
        """A name for each array the call passes (an export's inputs): its parameter's,
        followed by where it lies in a tuple or dict the parameter holds (``pair_1``,
        ``params_w``); ``input<i>`` for all where two would share one."""
        parameters = list(self._signature.parameters) if self._signature is not None else []
        names = []
        for leaf, path in zip(call.leaves, pytree.paths(pytree.unflatten(call.structure, call.leaves))):
            if isinstance(leaf, Array):
                where, first, *rest = path
                base = str(first) if where == 1 else parameters[first] if first < len(parameters) else f"arg{first}"
                names.append(re.sub(r"\W", "_", "_".join([base, *map(str, rest)])))
        if len(set(names)) < len(names) or any(not n.isidentifier() for n in names):
            return [f"input{i}" for i in range(len(names))]
        return names


#: The signatures a jitted function keeps (each table): a loop calling it with a new
#: static value or shape at every step (``x[i:i + 3]`` with ``i`` static) would otherwise
#: grow it without bound. The oldest kept goes first; met again, it is traced again (its
#: executable is most often still the executable cache's).
KEPT_SIGNATURES = 1024


def _kept(table: dict, key: Hashable, value: Any) -> None:
    """``table[key] = value``, dropping the oldest entry past ``KEPT_SIGNATURES``."""
    if len(table) >= KEPT_SIGNATURES and key not in table:
        try:
            del table[next(iter(table))]
        except (StopIteration, KeyError, RuntimeError):  # another thread emptied or changed it meanwhile
            pass
    table[key] = value


_FIX = ("Fix: if the value should decide the Python control flow, make the argument static "
        "(plaidarray.jit({name}, static_argnums=...) or static_argnames=...); to branch or loop on array "
        "values, use plaidarray.cond, plaidarray.while_loop or plaidarray.fori_loop.")


#: The range of a traced Python int (int64, the dtype it is traced in).
_INT64 = (-2**63, 2**63 - 1)


def _leaf_signature(leaf: Any) -> Hashable:
    if isinstance(leaf, Array):
        return ("weak" if leaf._node.weak else "array", leaf.shape, leaf.dtype.str)
    if isinstance(leaf, float):  # hex keeps -0.0 and nan distinct and equal to themselves
        return ("float", leaf.hex())
    if isinstance(leaf, complex):
        return ("complex", leaf.real.hex(), leaf.imag.hex())
    return (type(leaf).__name__, leaf)


def _plain_arities(signature: inspect.Signature | None, static_argnums: tuple[int, ...],
                   static_argnames: tuple[str, ...]) -> frozenset[int]:
    """The numbers of positional arguments a call can have and still take the plain path:
    every one binds to its own positional parameter and none is static."""
    if signature is None or static_argnums or static_argnames:
        return frozenset()
    kinds = inspect.Parameter
    params = list(signature.parameters.values())
    positional = [p for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == kinds.VAR_POSITIONAL for p in params) or \
            any(p.kind == kinds.KEYWORD_ONLY and p.default is p.empty for p in params):
        return frozenset()
    required = sum(p.default is p.empty for p in positional)
    return frozenset(range(required, len(positional) + 1))


def _importable(obj: Any) -> bool:
    """Whether ``obj`` is what its module's attribute of its qualified name holds (not in
    ``__main__``, which another process does not share), so pickle can send it by name."""
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    if module is None or module.__name__ == "__main__":
        return False
    found: Any = module
    for part in getattr(obj, "__qualname__", "<locals>").split("."):
        found = getattr(found, part, None)
    return found is obj


def _static_arguments(fun: Callable, argnums: int | Iterable[int],
                      argnames: str | Iterable[str]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Static arguments by position and by name, each completed from the other through
    ``fun``'s signature (so ``static_argnums=0`` also covers passing it by keyword)."""
    nums = {argnums} if isinstance(argnums, int) else set(argnums)
    names = {argnames} if isinstance(argnames, str) else set(argnames)
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return tuple(sorted(nums)), tuple(sorted(names))
    kinds = inspect.Parameter
    positional = [p.name for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    keyword = {p.name for p in params if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)}
    if not any(p.kind == kinds.VAR_KEYWORD for p in params):
        unknown = names - keyword - set(positional)
        if unknown:
            raise ValueError(f"jit({getattr(fun, '__name__', fun)}): static_argnames {sorted(unknown)} are not "
                             f"parameters of it")
    nums |= {positional.index(n) for n in names if n in positional}
    names |= {positional[i] for i in nums if 0 <= i < len(positional) and positional[i] in keyword}
    return tuple(sorted(nums)), tuple(sorted(names))


class Lowered:
    """A traced call, not compiled yet (``jit(f).lower(*args)``)."""

    def __init__(self, function: JitFunction, key: Hashable, traced: Traced, device: Device | None = None,
                 call: _Call | None = None) -> None:
        self._function = function
        self._key = key
        self._traced = traced
        self._device = device
        self._call = call

    @property
    def input_names(self) -> list[str]:
        """Each argument array's name (``JitFunction._input_names``), for an export's inputs."""
        return self._function._input_names(self._call) if self._call is not None else []

    @property
    def name(self) -> str:
        """The traced function's name."""
        return self._function._name

    @property
    def module(self) -> Module:
        """The function's computation, its results alone: without the values its guards
        check (an exported library has no Python to raise their errors)."""
        comp = self._traced.computation
        if self._traced.guards:
            comp = Computation(comp.name, comp.parameters, comp.outputs[:-len(self._traced.guards)])
        return Module(f"jit_{self._function._name}", comp)

    @property
    def constants(self) -> list[np.ndarray]:
        """The values the function closes over: the computation's parameters after the
        arguments' (``plaidarray.export`` builds them into the library)."""
        return cast("list[np.ndarray]", [node.buffer for node in self._traced.captured])  # _lower made them

    def as_text(self) -> str:
        """The traced HLO in XLA's text format (before the compiler's HLO passes)."""
        return self.module.to_text()

    def compile(self) -> Compiled:
        """Compile (or fetch from the executable cache) for the backend of its arrays' device."""
        executable = executable_for(self._traced.computation, self._function._dynamic, self._device)
        return Compiled(self._function, self._key, executable, self.constants, self._traced.out_structure,
                        [o.shape for o in self._traced.computation.outputs], self._traced.guards)


class Compiled:
    """A compiled call signature; calling it with matching arguments runs the executable."""

    def __init__(self, function: JitFunction, key: Hashable, executable, constants: list[np.ndarray],
                 out_structure: Any, out_shapes: list[Shape], guards: Sequence[Guard] = ()) -> None:
        self._function = function
        self._key = key
        self._executable = executable
        self._constants = constants
        self._out_structure = out_structure
        self._out_shapes = out_shapes
        self._guards = tuple(guards)

    @property
    def from_disk(self) -> bool:
        """Whether the executable was loaded from the persistent cache."""
        return self._executable.from_disk

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = self._function._bind(args, kwargs)
        if call.key != self._key:
            raise TypeError(f"jit({self._function._name}): these arguments do not match the signature this "
                            f"executable was compiled for (shapes, dtypes, structure or static values differ)")
        return self.run(call.arrays, call.lent)

    def run(self, arrays: Sequence[Array], lent: Sequence[np.ndarray] = ()) -> Any:
        """Run on ``arrays``; a result that is memory of the caller's (``lent``) is copied,
        so that no later write to the caller's array changes it."""
        nodes = [a._node for a in arrays]
        device = common_device(f"jit({self._function._name})", nodes)  # where the results live
        if any(n.buffer is None for n in nodes):
            materialize(nodes)
        buffers = [n.buffer for n in nodes]
        buffers += self._constants
        results = self._executable.run(buffers)
        if lent:
            results = [b.copy() if any(b is given for given in lent) else b for b in results]
        outs = [Array(Node(None, (), {}, shape, b, device=device)) for shape, b in zip(self._out_shapes, results)]
        if self._guards:
            checked = outs[len(outs) - len(self._guards):]
            outs = outs[:len(outs) - len(self._guards)]
            for check, value in zip(self._guards, checked):
                check.check(float(value) if value.dtype.kind == "f" else int(value))
        _mark_owned(outs, buffers)
        if self._out_structure == pytree.LEAF:
            return outs[0]
        return pytree.unflatten(self._out_structure, outs)


def _mark_owned(outs: Sequence[Array], inputs: Sequence[np.ndarray | None]) -> None:
    """Mark the results whose memory the run made for them alone (``Node.owned``), as a
    read's results are: an update may then write into it in place, and ``np.asarray``
    lends it without a copy (``exports.py``). Not a result that is an input or a constant
    passed through, nor one buffer returned for two equal results."""
    given = {id(b) for b in inputs}
    counts: dict[int, int] = {}
    for out in outs:
        counts[id(out._node.buffer)] = counts.get(id(out._node.buffer), 0) + 1
    for out in outs:
        key = id(out._node.buffer)
        out._node.owned = counts[key] == 1 and key not in given


def _own_handles(tree: Any) -> Any:
    """``tree`` with each of its arrays a new array of the same value: a jitted function
    traced into its caller's trace writes its arguments' handles, never its caller's
    arrays (a write to an argument stays inside the function, as when it is called)."""
    leaves, structure = pytree.flatten(tree)
    return pytree.unflatten(structure, [Array(leaf._node) if isinstance(leaf, Array) else leaf for leaf in leaves])
