"""How HLO ops lower: the kinds of lowering, the builder interfaces they use, and the
table of each op's lowering per platform.

An op's definition (``plaidarray.hlo.opdef``) says what it computes; its lowering says
*what* linalg it becomes, and the compiled backend decides where (which fused kernel,
which buffer). Lowerings are registered apart from the definitions, per platform, as
JAX registers a primitive's lowering per platform (``mlir.register_lowering``):
:func:`register_lowering` without a platform gives the target-neutral lowering
(``codegen/lowerings/``, linalg and the ``arith``/``math``/``complex`` dialects), with a
platform the one that platform uses instead (llvm-cpu's calls to BLAS, LAPACK, the C
math library and its runtime routines, ``backend/llvm_cpu/lowerings/``). Six kinds
cover XLA's op set:

* :class:`Elementwise` computes one scalar from its operands' scalars at the same
  coordinate (and may read the coordinate itself, as ``iota`` does). Fusible.
* :class:`Indexing` moves data: it says which operand coordinate each result
  coordinate reads, as affine expressions. Fusible: it becomes an indexing map.
* :class:`Reduction` folds dimensions away with a combiner; it fuses its operand chain
  (XLA's input fusion).
* :class:`Kernel` writes its whole result buffer with linalg ops of its own (an op of
  tuple shape, one buffer per element).
* :class:`TupleElement` (``get_tuple_element``) computes nothing: its buffer is the
  tuple instruction's buffer for that element.
* :class:`Expansion` rewrites the op into other HLO ops before fusion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from xdsl.ir import Attribute, Block, Operation, SSAValue
    from xdsl.ir.affine import AffineExpr

    from ..hlo.ir import Computation, Instruction
    from ..hlo.shape import Shape
    from ..hlo.symbolic import Dim


class ScalarBuilder(Protocol):
    """What a scalar emitter may do inside a ``linalg.generic`` body."""

    def insert(self, op: Operation) -> SSAValue: ...

    def const(self, value: object, dtype: np.dtype) -> SSAValue: ...

    def type(self, dtype: np.dtype) -> Attribute: ...

    def libm(self, name: str, args: Sequence[SSAValue], dtype: np.dtype) -> SSAValue:
        """Call the C math library's ``name`` for ``dtype``, as the target names it
        (``build_linalg``'s ``math_symbol``: C99's ``namef`` in single precision)."""
        ...

    def runtime(self, name: str, args: Sequence[SSAValue], dtype: np.dtype) -> SSAValue:
        """Call the runtime routine ``plaidarray_<name>`` (backend/llvm_cpu/runtime.py)."""
        ...

    def loop_index(self, dim: int) -> SSAValue:
        """The ``index`` value of loop dimension ``dim`` of the enclosing generic."""
        ...

    def load(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        """Read ``buffer`` (a kernel operand) at computed ``index`` values."""
        ...

    def coords(self, inst: Instruction) -> Sequence[SSAValue]:
        """The ``index`` values of ``inst``'s result coordinate at this iteration."""
        ...

    def dim(self, value: Dim) -> SSAValue:
        """A size or offset (maybe a run-time size, ``hlo/symbolic.py``) as an ``index``."""
        ...

    def elementwise(self, inst: Instruction, args: Sequence[SSAValue]) -> SSAValue:
        """The scalar code of ``inst``, an elementwise op, on ``args``, as this platform
        lowers it (a reduction's combiner is the elementwise op of the same name)."""
        ...


class KernelBuilder(Protocol):
    """What a kernel emitter may do inside the module's entry function."""

    def insert(self, op: Operation) -> SSAValue | None: ...

    def const(self, value: object, dtype: np.dtype) -> SSAValue: ...

    def type(self, dtype: np.dtype) -> Attribute: ...

    def dim(self, value: Dim) -> SSAValue:
        """A size or offset (maybe a run-time size, ``hlo/symbolic.py``) as an ``index``."""
        ...

    def one_value(self, value: Dim) -> Dim:
        """``value`` as an int or one run-time value: a polynomial in run-time sizes
        becomes an entry of the dims table, computed when the executable is bound
        (``run_time_sizes.py``), which code reads as it reads a size. A running sum kept
        so (a concatenation's offsets) is at each step one entry plus a size, never the
        sum of every size before it."""
        ...

    def require(self, value: Dim, limit: int) -> None:
        """The code is valid only for sizes where ``value`` is at most ``limit`` (a size
        passed to a library as a 32-bit integer): a shape-generic executable takes no
        other sizes, and graphs with them compile for their own sizes (a guard)."""
        ...

    def generic(self, dims: Sequence[Dim], inputs: Sequence[tuple[SSAValue, Sequence[AffineExpr]]],
                output: tuple[SSAValue, Sequence[AffineExpr]], out_dtype: np.dtype,
                body: Callable[[ScalarBuilder, Sequence[SSAValue], SSAValue], SSAValue],
                reduction_dims: Sequence[int] = ()) -> None:
        """Emit a ``linalg.generic`` over ``dims``; ``body(builder, loaded_inputs,
        current_output)`` returns the value stored at the output coordinate."""
        ...

    def for_each(self, dims: Sequence[Dim], body: Callable[[Sequence[SSAValue]], None],
                 independent_work: Dim = 0) -> None:
        """An ``scf.for`` nest over ``dims``; ``body(indices)`` inserts into the innermost loop.
        ``independent_work`` > 0 says that the iterations of the outermost loop touch
        disjoint parts of the buffers (calls included) and cost about that many loop
        iterations in all: the backend may run them in chunks on several threads."""
        ...

    def call(self, symbol: str, args: Sequence[SSAValue]) -> None:
        """Call an external routine for its effect on buffers (``blas_sgemm``)."""
        ...

    def fill(self, buffer: SSAValue, value: object, dtype: np.dtype) -> None: ...

    def copy(self, source: SSAValue, target: SSAValue) -> None: ...

    def scratch(self, shape: Shape) -> SSAValue:
        """A buffer the executable allocates for each run."""
        ...

    def building(self, block: Block) -> AbstractContextManager[None]:
        """Insert into ``block`` (a region of an ``scf`` op) inside the ``with``."""
        ...

    def inline(self, comp: Computation, args: Sequence[SSAValue], results: Sequence[SSAValue]) -> None:
        """Emit a nested computation here: parameters read ``args``, outputs go to ``results``."""
        ...


@dataclass(frozen=True)
class Elementwise:
    """``emit`` computes the op on scalars. ``expensive`` marks ops costing many
    instructions per element (transcendentals, powers): fusion stores such a value once
    rather than computing it again in each consumer, as XLA's ``IsExpensive`` decides."""

    emit: Callable[[ScalarBuilder, Sequence[SSAValue], Instruction], SSAValue]
    expensive: bool = False


@dataclass(frozen=True)
class Indexing:
    """``operand_coords(inst, coords)``: the operand's element at the result's ``coords``.
    ``unit_sizes`` says that the map is the same for a size of 1 as for any other (not
    so for ``broadcast_in_dim``, where an operand's unit dimension broadcasts)."""

    operand_coords: Callable[[Instruction, Sequence[AffineExpr]], Sequence[AffineExpr]]
    unit_sizes: bool = True


@dataclass(frozen=True)
class Reduction:
    """``combine(b, accumulator, value, dtype)`` and the identity ``init(dtype)``."""

    combine: Callable[[ScalarBuilder, SSAValue, SSAValue, Instruction], SSAValue]
    init: Callable[[Instruction], object]


@dataclass(frozen=True)
class Kernel:
    """``emit(builder, inst, out, operand_buffers)`` writes ``out``: the result's buffer,
    or for an op of tuple shape the list of its elements' buffers. An op that changes
    part of an operand (``dynamic_update_slice``) names it as ``in_place_operand``: when
    nothing else reads that operand's buffer, the compiler gives the result the same
    buffer (``out is operand_buffers[i]``) and the emitter writes only what changes, as
    XLA's buffer assignment shares a dynamic-update-slice's operand with its result.
    ``shape_generic`` says that ``emit`` takes run-time sizes (``hlo/symbolic.py``) where
    its instruction's shapes and attributes have them; a computation with an op whose
    lowering does not is compiled for its own sizes only. (The other kinds always do:
    their code is per element, and their sizes go through the fusion machinery.)
    ``ends``, when given, says from the instruction alone what the code starts and ends
    with once its generics are loop nests (the fields of ``kernel_groups.Nests``, None
    when unknown), so that kernel groups are cut around the op before any lowering of it
    of these sizes has been seen (a loop's ``concatenate`` has new sizes at every step).
    ``empty_sizes`` says that the code ``emit`` makes for run-time sizes computes the op
    when one of them is 0 (its loops run no iteration, and it reads nothing outside them);
    a computation with an op whose code needs them at least 1 (a library's leading
    dimension, an index clamped into a buffer) is compiled for a size of 0.  (The other
    kinds always do.) ``unit_sizes`` says the same of a run-time size of 1: nothing in the
    code asks whether a size is 1 (a run-time size is otherwise at least 2,
    ``hlo/symbolic.py``), so the baseline tier's op kernel of any size serves a unit
    dimension too (``trace/baseline.py``)."""

    emit: Callable[[KernelBuilder, Instruction, Any, Sequence[SSAValue]], None]
    in_place_operand: int | None = None
    shape_generic: bool = False
    empty_sizes: bool = False
    unit_sizes: bool = False
    ends: Callable[[Instruction], tuple[bool, Any, bool, Any] | None] | None = None


@dataclass(frozen=True)
class Expansion:
    """An op lowered by rewriting it into other HLO ops before fusion, as XLA's expander
    passes do (``codegen/expand.py``): ``expand(inst, *operands)`` returns the
    instruction computing the same value. What it builds is target-neutral HLO, so every
    backend that lowers those ops lowers this one. ``shape_generic`` says that ``expand``
    takes run-time sizes (it reads none as a number) and builds ops that do, sizes of 0
    and 1 included; an expansion that plans by the size (an FFT's) does not."""

    expand: Callable[..., Instruction]
    shape_generic: bool = False


@dataclass(frozen=True)
class TupleElement:
    """``get_tuple_element``: an element of a tuple instruction, which the fusion plan
    gives a buffer of its own and the tuple's kernel writes (XLA's buffer assignment
    aliases a get-tuple-element with the element of its operand)."""


class NotLowerable:
    """Marker for ops no platform lowers (``parameter`` is bound, not lowered)."""


#: (opcode, platform) -> lowering; platform None: the target-neutral lowering.
_LOWERINGS: dict[tuple[str, str | None], object] = {}


def register_lowering(opcode: str, lowering: object, platform: str | None = None) -> None:
    """Lower HLO op ``opcode`` with ``lowering`` (one of the kinds above) on ``platform``,
    or on every platform that has no lowering of its own when ``platform`` is None."""
    if (opcode, platform) in _LOWERINGS:
        raise ValueError(f"HLO op {opcode}: a lowering for {platform or 'every platform'} is registered twice")
    _LOWERINGS[opcode, platform] = lowering


def shape_generic(lowering: object) -> bool:
    """Whether a lowering takes run-time sizes (``Kernel.shape_generic``)."""
    if isinstance(lowering, (Kernel, Expansion)):
        return lowering.shape_generic
    return isinstance(lowering, (Elementwise, Indexing, Reduction, TupleElement))


def empty_sizes(lowering: object) -> bool:
    """Whether a lowering's code for run-time sizes takes sizes of 0 (``Kernel.empty_sizes``)."""
    if isinstance(lowering, Kernel):
        return lowering.shape_generic and lowering.empty_sizes
    return shape_generic(lowering)


def unit_sizes(lowering: object) -> bool:
    """Whether a lowering's code for run-time sizes takes sizes of 1 (``Kernel.unit_sizes``,
    ``Indexing.unit_sizes``; the code of the other kinds is per element)."""
    if isinstance(lowering, (Kernel, Indexing)):
        return shape_generic(lowering) and lowering.unit_sizes
    return shape_generic(lowering)


def lowering_for(opcode: str, platform: str | None = None) -> object:
    """``platform``'s lowering of ``opcode``, else the target-neutral one."""
    lowering = _LOWERINGS.get((opcode, platform)) or _LOWERINGS.get((opcode, None))
    if lowering is None:
        raise NotImplementedError(f"HLO op {opcode} has no lowering for {platform or 'a target-neutral backend'}")
    return lowering
