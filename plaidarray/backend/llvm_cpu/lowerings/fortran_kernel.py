"""Kernels that call BLAS and LAPACK routines through their Fortran ABI.

``dot_general`` calls BLAS's ``?gemm`` and the ``custom_call`` targets call LAPACK
(docs/custom-calls.md lists the routines); both build their kernel with
:class:`FortranKernel`. Fortran passes every argument by pointer: integers (``INTEGER``,
32-bit in the BLAS and LAPACK SciPy exports), characters and scalars live in
one-element heap cells, matrices and workspaces in heap scratch or in the kernel's
buffers. Cells and scratch are allocated once, before the loop over the stack of
matrices, and freed after it. Routines are called as ``<library>_<routine>`` symbols
(``blas_sgemm``), which the llvm-cpu backend binds to SciPy's functions
(``backend/llvm_cpu/blas_lapack.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import cast

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, IntegerType, MemRefType
from xdsl.ir import Operation, SSAValue

from ....codegen.lowering import KernelBuilder
from ....hlo.symbolic import Dim

#: The type letter of each dtype's BLAS and LAPACK routines (``dgemm``, ``zgesdd``).
TYPE_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}
#: The largest Fortran ``INTEGER``: BLAS and LAPACK cannot take larger sizes.
MAX_INTEGER = 2**31 - 1


class FortranKernel:
    """What a kernel calling BLAS or LAPACK builds with: argument cells, heap scratch,
    routine calls and the loop over a stack of matrices (index arithmetic hidden).

    ``dtype`` selects the routines' type letter; ``batch`` is the shape of the stack."""

    def __init__(self, k: KernelBuilder, dtype: np.dtype, batch: Sequence[Dim]) -> None:
        self.k = k
        self.dtype = np.dtype(dtype)
        self.real_dtype = np.finfo(self.dtype).dtype
        self.batch = tuple(batch)
        self._scratch: list[SSAValue] = []
        self._ints: dict[Dim, SSAValue] = {}

    # --- scratch and arguments ------------------------------------------------------------
    # Scratch and argument cells must be created before ``per_matrix``: they are
    # allocated once, outside the loop over the stack.
    def scratch(self, size: Dim, dtype: np.dtype | type | None = None) -> SSAValue:
        """An uninitialised heap buffer of ``size`` elements, a number or a run-time size
        (freed after the last matrix)."""
        element = self.k.type(np.dtype(dtype or self.dtype))
        if isinstance(size, int):
            alloc = memref.AllocOp.get(element, shape=[max(size, 1)])
        else:
            alloc = memref.AllocOp.get(element, shape=[DYNAMIC_INDEX], dynamic_sizes=[self.k.dim(size)])
        buffer = self.value_of(alloc)
        self._scratch.append(buffer)
        return buffer

    def integer(self, value: Dim) -> SSAValue:
        """A Fortran ``INTEGER`` argument holding ``value``, a size that may be a run-time
        size: the executable then takes only sizes that fit (``KernelBuilder.require``)."""
        if value not in self._ints:
            if isinstance(value, int):
                if not -MAX_INTEGER <= value <= MAX_INTEGER:
                    raise OverflowError(f"llvm-cpu: {value} does not fit a 32-bit INTEGER argument of BLAS/LAPACK")
                self._ints[value] = self._cell(value, np.int32)
            else:
                self.k.require(value, MAX_INTEGER)
                cell = self.scratch(1, np.int32)
                as_int = self.value_of(arith.IndexCastOp(self.k.dim(value), IntegerType(32)))
                self.store(as_int, cell, self.index(0))
                self._ints[value] = cell
        return self._ints[value]

    def char(self, letter: str) -> SSAValue:
        """A Fortran ``CHARACTER`` argument (``'U'``, ``'T'``...)."""
        return self._cell(ord(letter), np.int8)

    def scalar(self, value: complex) -> SSAValue:
        """A scalar argument of the routines' dtype (gemm's ``alpha``, ``beta``)."""
        return self._cell(value, self.dtype)

    def _cell(self, value: complex, dtype: np.dtype | type) -> SSAValue:
        cell = self.scratch(1, dtype)
        self.store(self.k.const(value, np.dtype(dtype)), cell, self.index(0))
        return cell

    # --- calls --------------------------------------------------------------------------
    def blas(self, routine: str, *args: SSAValue) -> None:
        """Call BLAS's ``routine`` for this dtype (``"gemm"`` -> ``sgemm``)."""
        self._call("blas", routine, args)

    def lapack(self, routine: str, *args: SSAValue) -> None:
        """Call LAPACK's ``routine`` for this dtype (``"potrf"`` -> ``dpotrf``)."""
        self._call("lapack", routine, args)

    def _call(self, library: str, routine: str, args: Sequence[SSAValue]) -> None:
        self.k.call(f"{library}_{TYPE_PREFIX[self.dtype.name]}{routine}", list(args))

    def succeeded(self, info: SSAValue) -> SSAValue:
        """``INFO == 0`` after a call, as an ``i1``."""
        zero = self.k.const(0, np.dtype(np.int32))
        return self.value_of(arith.CmpiOp(self.load(info, self.index(0)), zero, "eq"))

    def per_matrix(self, body: Callable[[Sequence[SSAValue]], None]) -> None:
        """Run ``body(batch_indices)`` for every matrix of the stack, then free the scratch."""
        self.k.for_each(self.batch, body)
        for buffer in self._scratch:
            self.k.insert(memref.DeallocOp.get(buffer))

    def part(self, buffer: SSAValue, at: Mapping[int, SSAValue]) -> SSAValue:
        """The part of ``buffer`` whose dimension ``d`` is fixed at ``at[d]`` (the other
        dimensions whole), passed to a routine as the address of its first element."""
        if not at:
            return buffer
        buffer_type = cast(MemRefType, buffer.type)  # kernel buffers and scratch are memrefs
        shape = buffer_type.get_shape()
        offsets = [at.get(d, 0) for d in range(len(shape))]
        # A run-time size stands as 1: a routine is given the part's first address, and
        # its size and strides travel as the routine's own arguments.
        sizes = [1 if d in at or n == DYNAMIC_INDEX else n for d, n in enumerate(shape)]
        ones = [1] * len(shape)
        view = memref.SubviewOp.infer_result_type(buffer_type, offsets, sizes, ones)
        return self.value_of(memref.SubviewOp.get(buffer, offsets, sizes, ones, view))

    # --- scalar code --------------------------------------------------------------------
    def value_of(self, op: Operation) -> SSAValue:
        """Insert ``op``, an operation with one result, and return that result."""
        self.k.insert(op)
        return op.results[0]

    def index(self, value: int) -> SSAValue:
        return self.value_of(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self.value_of(arith.AddiOp(a, self.index(b) if isinstance(b, int) else b))

    def mul(self, a: SSAValue, b: Dim) -> SSAValue:
        return self.value_of(arith.MuliOp(a, self.index(b) if isinstance(b, int) else self.k.dim(b)))

    def col(self, i: SSAValue, j: SSAValue, ld: Dim) -> SSAValue:
        """The position of element (i, j) of a column-major matrix with leading dimension
        ``ld`` (a number or a run-time size)."""
        return self.add(i, self.mul(j, ld))

    def load(self, buffer: SSAValue, *indices: SSAValue) -> SSAValue:
        return self.value_of(memref.LoadOp.get(buffer, list(indices)))

    def store(self, value: SSAValue, buffer: SSAValue, *indices: SSAValue) -> None:
        self.k.insert(memref.StoreOp.get(value, buffer, list(indices)))

    def compare(self, a: SSAValue, predicate: str, b: SSAValue) -> SSAValue:
        return self.value_of(arith.CmpiOp(a, b, predicate))

    def select(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.value_of(arith.SelectOp(condition, a, b))

    def const(self, value: object) -> SSAValue:
        return self.k.const(value, self.dtype)
