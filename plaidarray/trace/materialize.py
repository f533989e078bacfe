"""Materialisation: compile (or fetch from the cache) and run a pending graph."""

from __future__ import annotations

import time

from ..backend import registry
from ..backend.cache import EXECUTABLES
from ..backend.executable import Backend, Executable
from ..hlo import Computation, Module
from ..hlo.fingerprint import structure
from . import explain
from .node import GRAPH_LOCK, Node, set_buffers
from .to_hlo import computation, walk_pending


#: No parameter donated (most runs).
_NONE: frozenset[int] = frozenset()


def materialize(nodes: list[Node], donated: Node | None = None, cut: bool = False) -> None:
    """Give every node in ``nodes`` a buffer, running one compiled module for all of them.
    The buffer of the ready node ``donated`` may be overwritten by the run (the caller
    knows that nothing else can see it); ``cut`` says the graph runs because it grew past
    the pending bound (for the compile log).

    The cache key is read off the lazy graph; HLO is only built on a miss. Both happen
    under ``GRAPH_LOCK``, so they see the same graph even while other threads
    materialise parts of it; compiling and running happen outside it.
    """
    with GRAPH_LOCK:
        if len(nodes) == 1:  # a read of one value: most calls
            pending = nodes if nodes[0].buffer is None else ()
        else:
            pending = [n for n in dict.fromkeys(nodes) if n.buffer is None]
        if not pending:
            return
        graph_key, buffers, pending, order = walk_pending(pending)
        if donated is None:
            given_buffer, given = None, _NONE
        else:
            given_buffer = donated.buffer
            given = frozenset(i for i, b in enumerate(buffers) if b is given_buffer)
        backend = registry.current()
        key = (graph_key, given, backend.cache_tag)
        executable = EXECUTABLES.lookup(key)
        if executable is None:
            comp = computation(graph_key, order)
    if executable is None:
        why = explain.reason(graph_key[0], cut) if explain.enabled() else ""
        start = time.perf_counter()
        executable = EXECUTABLES.get(key, backend.name, lambda: _compile(backend, comp, given))
        if why:
            explain.log(why, time.perf_counter() - start, executable.from_disk)
    outs = executable.run(buffers)
    if executable.returns_parameters:  # a result that is an input passed through is not memory the run made
        inputs = {id(b) for b in buffers if b is not given_buffer}
        with GRAPH_LOCK:
            for node, out in zip(pending, outs):
                if node.buffer is None:  # another thread may have computed it meanwhile
                    node.set_buffer(out, owned=id(out) not in inputs)
        return
    with GRAPH_LOCK:
        set_buffers(pending, outs)


def _compile(backend: Backend, comp: Computation, donated: frozenset[int] = frozenset()) -> Executable:
    return backend.compiler.compile(Module("lazy_graph", comp, donated))  # a compiler names its code itself


def executable_for(comp: Computation) -> Executable:
    """The current backend's executable for ``comp``, compiled on a cache miss."""
    backend = registry.current()
    key = (structure(comp), backend.cache_tag)
    return EXECUTABLES.get(key, backend.name, lambda: _compile(backend, comp))
