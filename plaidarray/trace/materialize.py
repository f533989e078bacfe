"""Materialisation: compile (or fetch from the cache) and run a pending graph."""

from __future__ import annotations

from ..backend import registry
from ..backend.cache import EXECUTABLES
from ..backend.executable import Executable
from ..hlo import Computation, Module
from ..hlo.fingerprint import fingerprint, structure
from .node import Node
from .to_hlo import pending_graph


def materialize(nodes: list[Node]) -> None:
    """Give every node in ``nodes`` a buffer, running one compiled module for all of them."""
    pending = [n for n in dict.fromkeys(nodes) if n.buffer is None]
    if not pending:
        return
    comp, buffers = pending_graph(pending)
    for node, out in zip(pending, executable_for(comp).run(buffers)):
        node.set_buffer(out)


def executable_for(comp: Computation) -> Executable:
    """The current backend's executable for ``comp``, compiled on a cache miss."""
    backend = registry.current()
    key = (structure(comp), backend.name, backend.compiler.target)
    return EXECUTABLES.get(
        key, backend.name, lambda: backend.compiler.compile(Module(f"m_{fingerprint(comp)}", comp)))
