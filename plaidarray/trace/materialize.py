"""Materialisation: compile (or fetch from the cache) and run a pending graph.

A graph whose structure was compiled before for other sizes runs a shape-generic
executable instead, its sizes bound at run time (``dynamic.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import cast

from ..backend import registry
from ..backend.devices import Device
from ..backend.transfer import HOST
from ..backend.cache import EXECUTABLES, HashedKey
from ..backend.executable import Backend, Executable, NotShapeGeneric
from ..hlo import Computation, Module
from ..hlo.fingerprint import Hashed, structure
from . import baseline, cuts, dynamic, explain, host_round_trip, hot
from .baseline import BaselineExecutable
from .node import GRAPH_IN_C, GRAPH_LOCK, Node, set_buffers
from .to_hlo import KEPT_GENERATOR_BYTES, Walked, computation, keep_untracked, walk_pending


#: No parameter donated (most runs).
_NONE: frozenset[int] = frozenset()


@dataclass
class _Generic:
    """A miss served by a shape-generic executable: its cache key, the symbols' values,
    the executable if it is compiled already, and what compiling it takes: the pattern,
    the graph's sizes and the computation's structural key (``Module.structure_key``)."""

    key: Hashable
    structure: Hashable
    values: list[int]
    template: Executable | None
    pattern: dynamic.Pattern
    sizes: tuple[int, ...]
    why: str
    structure_key: Hashable
    comp: Computation | None = None


def materialize(nodes: list[Node], donated: Node | None = None, cut: bool = False,
                shape_generic: bool = True) -> None:
    """Give every node in ``nodes`` a buffer, running one executable for all of them:
    compiled code of the graph, or, until its structure is hot (``hot.py``), the
    sequence of its ops' kernels (``baseline.py``). On a device whose compiler has no
    code for some of its ops, those run on the host first (``host_round_trip.py``). The
    buffer of the ready node ``donated`` may be overwritten by the run (the caller knows
    that nothing else can see it); ``cut`` says the graph runs because it grew past the
    pending bound (for the compile log); ``shape_generic`` False compiles a miss for its
    own sizes.

    The cache key is read off the lazy graph; HLO is only built for a compile. Both happen
    under ``GRAPH_LOCK`` (``decide``), so they see the same graph even while other threads
    materialise parts of it; compiling and running happen outside it (``finish``).
    """
    with GRAPH_LOCK:
        if len(nodes) == 1:  # a read of one value: most calls
            pending = nodes if nodes[0].buffer is None else ()
        else:
            pending = [n for n in dict.fromkeys(nodes) if n.buffer is None]
        if not pending:
            return
        step = decide(walk_pending(pending), donated, cut, shape_generic)
    finish(nodes, step, donated, cut, shape_generic)


#: What ``decide`` found for a walked graph, for ``finish``: the nodes the device cannot
#: run (``host_round_trip.held``), else the cache key, the executable found, how a miss is
#: served (``_Miss``), the walk's buffers and computed nodes, the donated buffer and the
#: numbers of the parameters it is, the device, the backend and the graph's key.
Step = tuple


def decide(walked: Walked, donated: Node | None, cut: bool, shape_generic: bool) -> Step:
    """What a read of a walked graph runs (the caller holds ``GRAPH_LOCK``): its cached
    executable, or how a miss is served (``_miss``)."""
    every_size = cuts.sizes_changing(cut)  # consumed by the first read after such a loop, hit or miss
    graph_key, buffers, pending, order = walked
    if donated is None:
        given_buffer, given = None, _NONE
    else:
        given_buffer = donated.buffer
        given = frozenset(i for i, b in enumerate(buffers) if b is given_buffer)
    device = _device_of(pending)
    backend = backend_for(device)
    compiler = backend.compiler
    key = HashedKey((graph_key, given, backend.cache_tag))
    executable = EXECUTABLES.lookup(key)
    miss = held = None
    # a graph with nodes to run apart (host round trips, device calls) is never compiled
    # whole, so a cached executable says it has none: the walk for them is a miss's alone
    if executable is None and (compiler.host_ops or compiler.device_call_ops):
        held = host_round_trip.held(order, compiler)
        if held:
            return held, None, None, None, buffers, pending, given_buffer, given, device, backend, graph_key
    if executable is None or type(executable) is BaselineExecutable and executable.needs_attention:
        miss = _miss(graph_key, order, given, backend, key, cut, every_size, shape_generic, executable)
    return held, key, executable, miss, buffers, pending, given_buffer, given, device, backend, graph_key


def _device_of(pending: list[Node]) -> Device | None:
    """The device of a graph's pending nodes: they are on one, or of none."""
    device = pending[0].device
    if device is None and len(pending) > 1:
        device = next((n.device for n in pending if n.device is not None), None)
    return device


def planned(walked: Walked, key: tuple, structure: Hashed, values: tuple[int, ...],
            sizes: tuple[bool, ...]) -> Executable | None:
    """What ``decide`` and ``finish`` make of a read at new sizes of a structure whose
    plan serves them (``baseline.from_plan``), for ``_graph.read``, whose cache lookup by
    ``key`` found nothing for a graph that donates nothing, has no cut loop's sizes to pass
    on and runs on the host, and which found its ``structure`` among those planned
    (``baseline.PLANNED``) by its rows generalised (``values``, ``sizes``): the executable,
    cached under ``key``; None where ``decide`` is to say (the caller holds ``GRAPH_LOCK``).
    Most of a loop's reads at new sizes are such (~3,600 in the eager benchmark's first
    runs), and ``decide`` and ``finish`` took ~40 us of each in Python, half of it other
    than binding the plan."""
    graph_key = walked[0]
    backend = backend_for(_device_of(walked[2]))
    if not backend.baseline or not hot.FUSE_AFTER_SECONDS:
        return None
    if not dynamic.HISTORIES.new(structure):  # fused code of it is compiled or due: ``_shape_generic``'s
        baseline.PLANNED.pop(structure.value, None)  # from now on
        return None
    heat = hot.HEATS.of(structure, values)
    if heat.due:
        return None
    executable = baseline.from_plan(graph_key[0], backend, heat, structure, values, sizes)
    if executable is None or executable.returns_parameters:
        return None
    baseline.cache_at_sizes(key, graph_key, executable, structure, values)
    baseline.quick(structure, backend, heat, sizes)
    return executable


def finish(nodes: list[Node], step: Step, donated: Node | None, cut: bool, shape_generic: bool) -> None:
    """Run what ``decide`` found (compiling or assembling a miss's executable first) and
    give the computed nodes their buffers; the caller does not hold ``GRAPH_LOCK``."""
    held, key, executable, miss, buffers, pending, given_buffer, given, device, backend, graph_key = step
    if held:  # ops the device has no code for: computed on the host first, then the rest
        assert device is not None  # a backend with host ops is a device's own
        host_round_trip.run(held, device)
        return materialize(nodes, donated, cut, shape_generic)
    if miss is not None:
        if miss.job is not None:
            hot.submit(miss.job)
        if miss.generic is not None:
            executable = _bind(miss.generic, key, backend, given)
            if executable is None:  # the computation cannot be compiled shape-generic, or not for these sizes
                return materialize(nodes, donated, cut, shape_generic=False)
        elif miss.comp is not None:
            comp = miss.comp
            why = explain.reason(graph_key[0], cut) if explain.enabled() else ""
            start = time.perf_counter()
            executable = EXECUTABLES.get(key, backend.name, lambda: _compile(backend, comp, given,
                                                                             structure_key=graph_key))
            if why:
                explain.log(why, time.perf_counter() - start, executable.from_disk)
        elif executable is None:
            assert miss.heat is not None and miss.nodes is not None  # a baseline run's
            executable = miss.bound or baseline.assemble(graph_key[0], graph_key[1], miss.nodes, backend, miss.heat,
                                                         miss.structure, miss.values, miss.sizes, given)
            EXECUTABLES.insert(key, executable, family=miss.structure, sizes=miss.values)
    assert executable is not None  # found, bound, compiled or assembled above
    outs = executable.run(buffers)
    if device is not None and device.transfers is not HOST:
        outs = _host_values(pending, outs, device)
    if executable.returns_parameters:  # a result that is an input passed through is not memory the run made
        inputs = {id(b) for b in buffers if b is not given_buffer}
        with GRAPH_LOCK:
            for node, out in zip(pending, outs):
                if node.buffer is None:  # another thread may have computed it meanwhile
                    node.set_buffer(out, owned=id(out) not in inputs)
        return
    with GRAPH_LOCK:
        set_buffers(pending, outs)


def _host_values(pending: list[Node], outs: list, device: Device) -> list:
    """The run's results, those of nodes of no device (a value made of constants alone,
    ``unique_counts``' group starts of one element) copied to the host: a value of no
    device is a host value (``array._transfers``), which a host graph reading it later
    takes as it is, where it would have read ``device``'s buffer as host memory."""
    return [device.transfers.to_host(out) if node.device is None else out for node, out in zip(pending, outs)]


@dataclass
class _Miss:
    """How a read no executable serves (or only a baseline one made before the last
    fused compile of its structure) is run: bound to a shape-generic executable
    (``generic``), compiled now (``comp``), or op by op (``heat``: its structure's, and the
    rows' ``nodes``, to assemble it from, when it has no baseline executable, unless its
    structure's plan served it: ``bound``), after submitting the fused ``job`` of its
    structure if it is hot."""

    generic: _Generic | None = None
    comp: Computation | None = None
    heat: hot.Heat | None = None
    nodes: list[Node] | None = None
    job: Callable[[], None] | None = None
    structure: Hashable | None = None
    values: tuple[int, ...] = ()
    sizes: tuple[bool, ...] = ()
    bound: BaselineExecutable | None = None


def _miss(graph_key: tuple, order: list[Node], given: frozenset[int], backend: Backend, key: Hashable, cut: bool,
          every_size: bool | None, shape_generic: bool, found: Executable | None) -> _Miss:
    """What a read runs when no compiled executable is cached for its graph (the caller
    holds ``GRAPH_LOCK``); ``found``: the graph's baseline executable, if it has one."""
    keep_untracked(graph_key)  # the cache is to keep it
    shape, values, sizes = dynamic.generalize(graph_key[0])
    structure = dynamic.canonical((shape, graph_key[1], given, backend.cache_tag))
    fuse_after = hot.FUSE_AFTER_SECONDS if backend.baseline else 0
    heat = hot.HEATS.of(structure, values) if fuse_after else None
    due = heat is not None and heat.due
    generic = None
    if (heat is None or due or not dynamic.HISTORIES.new(structure)) and shape_generic and \
            backend.compiler.shape_generic and dynamic.automatic():
        if due and heat is not None and heat.sizes_changed:
            every_size = True
        generic = _shape_generic(graph_key, structure, shape, values, sizes, backend, cut, every_size)
    if generic is not None and generic.template is not None:
        return _Miss(generic=generic)  # compiled for other sizes: bound, no compile
    if heat is None:  # no baseline tier: compiled now
        if generic is not None and _with_computation(generic, graph_key, order):
            return _Miss(generic=generic)
        return _Miss(comp=computation(graph_key, order))
    job = _fused_job(graph_key, order, given, backend, key, heat, generic, cut) if due else None
    if found is not None:
        cast(BaselineExecutable, found).generation = heat.generation
        return _Miss(heat=heat, job=job)
    return _Miss(heat=heat, nodes=order, job=job, structure=structure, values=values, sizes=sizes,
                 bound=baseline.from_plan(graph_key[0], backend, heat, structure, values, sizes))


def _fused_job(graph_key: tuple, order: list[Node], given: frozenset[int], backend: Backend, key: Hashable,
               heat: hot.Heat, generic: _Generic | None, cut: bool) -> Callable[[], None]:
    """The background compile of a hot structure's fused executable (its computation
    built now, while the caller holds ``GRAPH_LOCK`` and the nodes are pending), which
    caches it under the graph's ``key`` for the next read."""
    heat.submitted = True
    why = f"hot after {heat.seconds * 1e3:.1f} ms op by op, compiled in the background: " if explain.enabled() else ""
    if generic is not None and _with_computation(generic, graph_key, order):
        if why:
            generic.why = why + (generic.why or explain.reason(graph_key[0], cut))

        def compile_generic() -> None:
            try:
                _bind(generic, key, backend, given)
            finally:
                with GRAPH_LOCK:
                    heat.landed()
        return compile_generic
    comp = computation(graph_key, order)
    if why:
        why += explain.reason(graph_key[0], cut)

    def compile_static() -> None:
        try:
            start = time.perf_counter()
            executable = _compile(backend, comp, given, structure_key=graph_key)
            EXECUTABLES.insert(key, executable, compiled=True, seconds=time.perf_counter() - start,
                               backend=backend.name)
            if why:
                explain.log(why, time.perf_counter() - start, executable.from_disk)
        finally:
            with GRAPH_LOCK:
                heat.landed()
    return compile_static


def _with_computation(generic: _Generic, graph_key: tuple, order: list[Node]) -> bool:
    """Whether ``generic``'s shape-generic computation could be built (it is then kept
    in it): an op's shape rule may need a size as a number (to compare it with another),
    and then its structure compiles per shape from now on (the caller holds
    ``GRAPH_LOCK``)."""
    try:
        generic.comp = dynamic.symbolic_computation(graph_key, order, generic.pattern, generic.sizes)
    except (NotShapeGeneric, TypeError):
        dynamic.HISTORIES.static_only(generic.structure)
        return False
    return True


def _shape_generic(graph_key: tuple, structure_key: Hashable, shape: tuple, values: tuple[int, ...],
                   sizes: tuple[bool, ...], backend: Backend, cut: bool, every_size: bool | None) -> _Generic | None:
    """How a miss is served by a shape-generic executable, or None if it compiles for its
    own sizes (the caller holds ``GRAPH_LOCK``); ``every_size``: a new structure's sizes
    are all run-time values at once (``cuts.sizes_changing``); None: the graph is neither
    cut nor ends a loop that was, and a small one's sizes are run-time values at once too
    (``Compiler.generic_first_elements``). A loop's graphs cut at the pending bound, and
    the read that ends it, whose iterations they lowered, compile as ``cuts`` says. The
    computation, if it is to be compiled, is the caller's to build."""
    if _per_shape(structure_key, graph_key[0], backend):
        return None
    why_every = dynamic.CUT_LOOP if every_size else ""
    if every_size is None and dynamic.HISTORIES.new(structure_key) and \
            dynamic.small(graph_key[0], backend.compiler.generic_first_elements):
        why_every = dynamic.SMALL_GRAPH
    decided = dynamic.HISTORIES.decide(structure_key, graph_key[0], values, sizes, every_size=bool(why_every),
                                       empty=dynamic.empty_fits(graph_key[0], values, backend.compiler))
    if decided is None:
        return None
    pattern, symbol_values = decided
    key = ("shape-generic", structure_key, pattern)
    template = EXECUTABLES.lookup(key)
    why = ""
    if template is None and explain.enabled():
        why = f"{explain.reason(graph_key[0], cut)}; shape-generic: {pattern.describe(graph_key[0], values, why_every)}"
    return _Generic(key, structure_key, symbol_values, template, pattern, values, why,
                    ("shape-generic", shape, graph_key[1], pattern.code_key))


def _per_shape(structure_key: Hashable, rows: tuple, backend: Backend) -> bool:
    """Whether a structure compiles per shape because it has an op whose code is made for
    its sizes (``Compiler.per_shape_ops``), decided when it is first seen: then no
    shape-generic compile is tried, which would fail after running the compiler's first
    stages (the caller holds ``GRAPH_LOCK``)."""
    if dynamic.HISTORIES.new(structure_key) and dynamic.has_op(rows, backend.compiler.per_shape_ops):
        dynamic.HISTORIES.static_only(structure_key)
    return dynamic.HISTORIES.static(structure_key)


def _bind(generic: _Generic, key: Hashable | None, backend: Backend, given: frozenset[int]) -> Executable | None:
    """The shape-generic executable of ``generic`` (compiled now if need be) bound to its
    sizes, cached under the graph's own ``key`` (if any); None if the computation has an op that
    cannot take run-time sizes (then its structure compiles per shape from now on), or
    the executable does not take these sizes (a guard: a size past what a library call
    takes)."""
    template = generic.template or EXECUTABLES.lookup(generic.key)
    if template is None:
        comp = generic.comp
        assert comp is not None  # built when no template was cached
        start = time.perf_counter()
        try:
            template = EXECUTABLES.get(generic.key, backend.name, lambda: _compile(
                backend, comp, given, generic.pattern.n_symbols, structure_key=generic.structure_key))
        except (NotShapeGeneric, TypeError) as error:
            # NotShapeGeneric: an op's code is generated for its sizes. TypeError: a lowering
            # asked a run-time size what only a number can say; a compile for the graph's own
            # sizes is always right, and the log says why.
            with GRAPH_LOCK:
                dynamic.HISTORIES.static_only(generic.structure)
            if explain.enabled():
                explain.LOG.info("compiles per shape from now on: %s", error)
            return None
        if generic.why:
            explain.log(generic.why, time.perf_counter() - start, template.from_disk)
    executable = template.runner(generic.values)
    if executable is not None and key is not None:
        EXECUTABLES.insert(key, executable, family=generic.structure, sizes=tuple(generic.values))
    return executable


def _compile(backend: Backend, comp: Computation, donated: frozenset[int], n_symbols: int = 0, *,
             structure_key: Hashable) -> Executable:
    """Compile ``comp``, whose structural key the caller computed already (a compiler names
    its code and looks it up on disk by it: one key per miss)."""
    return backend.compiler.compile(Module("lazy_graph", comp, donated, n_symbols, structure_key))


def backend_for(device: Device | None) -> Backend:
    """The backend that computes a graph on ``device`` (a graph's nodes are on one device,
    or of none): the device's own (a GPU's), else the chosen one (``registry.current``)."""
    return device.backend if device is not None and device.backend is not None else registry.current()


def executable_for(comp: Computation, dynamic_sizes: bool | None = None, device: Device | None = None) -> Executable:
    """The executable of ``device``'s backend (``backend_for``) for ``comp`` (a traced
    function), compiled on a cache miss. ``dynamic_sizes`` (``jit``'s ``dynamic``): None
    makes sizes run-time values once the structure comes back with other sizes
    (automatic dynamic shapes), True from the first call, False never."""
    backend = backend_for(device)
    if dynamic_sizes is not False and backend.compiler.shape_generic and (dynamic_sizes or dynamic.automatic()):
        rows, outputs = dynamic.computation_rows(comp)
        shape, values, sizes = dynamic.generalize(rows)
        structure_key = dynamic.canonical(("traced", shape, outputs, backend.cache_tag))
        with GRAPH_LOCK:
            decided = None if _per_shape(structure_key, rows, backend) else \
                dynamic.HISTORIES.decide(structure_key, rows, values, sizes, every_size=bool(dynamic_sizes),
                                         empty=dynamic.empty_fits(rows, values, backend.compiler))
        try:
            symbolic = None if decided is None else dynamic.symbolic_copy(comp, decided[0], values)
        except (NotShapeGeneric, TypeError):  # a shape rule needs a size as a number: per shape from now on
            with GRAPH_LOCK:
                dynamic.HISTORIES.static_only(structure_key)
            decided = None
        if decided is not None:
            pattern, symbol_values = decided
            generic = _Generic(("shape-generic", structure_key, pattern), structure_key, symbol_values, None,
                               pattern, values, "", ("shape-generic", "traced", shape, outputs, pattern.code_key),
                               symbolic)
            executable = _bind(generic, None, backend, frozenset())
            if executable is not None:
                return executable
    comp_key = structure(comp)
    return EXECUTABLES.get((comp_key, backend.cache_tag), backend.name,
                           lambda: _compile(backend, comp, frozenset(), structure_key=comp_key))


def _read_in_python(node: Node) -> None:
    """A read of one value: ``materialize([node])``. ``_graph.read`` does the same in C."""
    materialize([node])


def _read_in_c(decided: Callable[..., Step] | None = None, general: Callable[[list[Node]], None] | None = None,
               plans: Callable[..., Executable | None] | None = None) -> Callable[[Node], None] | None:
    """``_graph.read``, configured with what it reads: the lock, the cache's entries and the
    cache (whose hits it counts as ``ExecutableCache.hit`` does), ``hot``'s namespace (whose
    ``FUSE_AFTER_SECONDS`` says when a baseline executable is due), the key's parts, the
    registry's and ``cuts``' state, ``planned`` (with the planned structures, some of them
    entries it runs itself, ``baseline.quick``, the runs those bound, and what generalising
    rows reads) for a read it finds no executable for, ``decide`` and ``finish`` for every
    read it does not run itself, ``materialize`` for those it does not walk (tests count their calls through
    ``decided``, ``general`` and ``plans``, which stand for ``decide``, ``materialize`` and
    ``planned``); None where the C module is not in use."""
    if GRAPH_IN_C is None:
        return None
    GRAPH_IN_C.configure_reads(GRAPH_LOCK, EXECUTABLES.entries, EXECUTABLES, vars(hot), _NONE, vars(registry), vars(cuts),
                               BaselineExecutable, HOST, decided or decide, finish, general or materialize,
                               KEPT_GENERATOR_BYTES, plans or planned, baseline.PLANNED, baseline.QUICK_RUNS,
                               dynamic.SIZED, dynamic.describe_sized)
    return cast("Callable[[Node], None]", GRAPH_IN_C.read)


#: Computes one pending node (``Array._computed``: most reads of a value): its walk,
#: cached executable and buffers found in C when the module is in use.
read: Callable[[Node], None] = _read_in_c() or _read_in_python


def read_several(nodes: list[Node], cut: bool = False) -> None:
    """``materialize(nodes, cut=cut)`` for callers of several nodes (a graph cut at the
    pending bound with the values waiting on it, ``graph.wrap``; a concatenation's wide
    operand with what the next one needs), walked in C (``_graph.read_several``): a cache
    hit is found and run there, where ``decide`` and ``finish`` cost ~75 us of each of a
    loop's cuts (a cut's hit is ``decide``'s alike: ``cuts.sizes_changing`` changes nothing
    for one), and a miss is ``decide``'s and ``finish``'s with that walk."""
    if GRAPH_IN_C is None or not GRAPH_IN_C.read_several(nodes, cut):
        materialize(nodes, cut=cut)
