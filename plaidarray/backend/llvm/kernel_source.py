"""What code generation makes of a module's segments, before any code exists: each
kernel's LLVM IR and what it runs on (``KernelSource``, made by ``emitter.py``),
and the loop it may run in chunks (``Segment``). Executables and cache entries are
described with these, so loading an executable from the persistent cache needs nothing
of the code generator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ...hlo.symbolic import Dim


class Segment(NamedTuple):
    """A part of ``main`` compiled as a kernel of its own: a top-level loop nest, or the
    code between nests. ``extent`` is the trip count of the loop that may run in
    chunks (0: none), ``work`` the iterations of the nest, ``depth`` how many loops
    enclose the chunked one (0: it is the outermost). In a shape-generic module the
    sizes may be run-time sizes (``hlo/symbolic.py``), evaluated when sizes are bound.
    A named tuple, as ``executable.Step`` is: a binding makes one per sized step (half
    a frozen dataclass's time)."""

    extent: Dim = 0
    work: Dim = 0
    depth: int = 0


#: A kernel's function is named ``KERNEL_PREFIX`` + its key: kernels are shared by every
#: module that contains them, so their names say what they compute, not where they came from.
KERNEL_PREFIX = "plaidk_"
#: The kernel's name while its text is being made (the key is the text's digest).
PLACEHOLDER = "plaidarray.kernel.unnamed"


@dataclass(frozen=True)
class KernelSource:
    """One segment of ``main`` as an LLVM module of its own, defining
    ``void symbol(ptr buffers, ptr dims, i64 start, i64 stop, ptr imports)``: ``buffers``
    points to the data pointers of its own buffers, in its own order, ``dims`` to the
    run-time sizes it uses, ``imports`` to the routines it calls from libraries (BLAS,
    LAPACK: ``blas_lapack.py``), each in its own order; ``buffers``, ``dims`` and
    ``imports`` here say which of ``main``'s arguments and run-time sizes, and which
    routines, each one is. The module's text depends only on what the
    kernel computes, so equal kernels of any two modules have equal keys (TorchInductor
    keys its kernels by their code alike) and are compiled once. ``largest`` is the
    element count of its largest buffer (run-time sizes at the values of the compile that
    made them run-time, ``symbolic.hint``): a heuristic's input, never the code's.
    ``lanes`` are the threads that run each iteration of its chunkable loop together (the
    kernel, without one; ``emitter.Renderer.lanes``): 1 but on a GPU's warps; ``runs``
    the runs of a whole-array reduction's blocks that launches over a GPU's grid compute
    before the kernel's own (``emitter.FunctionEmitter.runs``)."""

    ir: str
    key: str
    buffers: tuple[int, ...]
    segment: Segment
    largest: int
    dims: tuple[int, ...] = ()
    imports: tuple[str, ...] = ()
    lanes: int = 1
    runs: int = 0

    @property
    def symbol(self) -> str:
        return KERNEL_PREFIX + self.key
