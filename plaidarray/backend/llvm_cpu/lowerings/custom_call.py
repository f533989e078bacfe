"""llvm-cpu's ``custom_call`` kernels: the decompositions computed by LAPACK.

Kernels work per matrix: copy the operands into heap scratch in the layout LAPACK's
column-major routines expect, call the routine through its Fortran ABI (every
argument by pointer; integers are 32-bit scratch cells) and copy the results into the
outputs (a custom call has a tuple shape: one buffer per result). A buffer read as column-major is the transpose of the row-major matrix it
holds, which several targets use instead of copying transposed. When a routine
reports failure, that matrix's results are NaN (``hlo/ops/custom_call.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import complex as cx
from xdsl.dialects.builtin import AnyFloat, ComplexType
from xdsl.ir import SSAValue

from ....codegen.lowering import Kernel, register_lowering
from ....hlo.ops.custom_call import result_shapes, sides
from .fortran_kernel import FortranKernel
from ..platform import PLATFORM

#: Extra workspace per row/column so that blocked algorithms can use their block size.
_BLOCK = 64


class _Kernel(FortranKernel):
    """What a target's kernel builds with: a :class:`FortranKernel` over the stack of
    operand matrices, plus the operands and one output buffer per result."""

    def __init__(self, k, inst, outs, operands) -> None:
        first = inst.operands[0].shape
        super().__init__(k, first.dtype, first.dims[:-2])
        self.inst, self.outs, self.operands = inst, outs, operands
        self.attrs = inst.attrs
        self.matrices = [o.shape.dims[-2:] for o in inst.operands]
        self.results = result_shapes(inst.attrs["target"], self.matrices, inst.attrs)

    # --- moving data ------------------------------------------------------------------
    def copy_in(self, batch: Sequence[SSAValue], operand: int, buffer: SSAValue, column_major: bool) -> None:
        """Copy this matrix of ``operand`` into ``buffer``, row-major or column-major."""
        rows, cols = self.matrices[operand]
        source = self.operands[operand]

        def element(ij):
            i, j = ij
            value = self.load(source, *batch, i, j)
            self.store(value, buffer, self.col(i, j, rows) if column_major else self.col(j, i, cols))
        self.k.for_each((rows, cols), element)

    def store_result(self, batch: Sequence[SSAValue], result: int, value: Callable[..., SSAValue]) -> None:
        """Write result number ``result`` of this matrix: ``value(*indices)`` gives each element."""
        self.k.for_each(self.results[result], lambda indices: self.store(value(*indices), self.outs[result],
                                                                         *batch, *indices))

    # --- results ------------------------------------------------------------------------
    def or_nan(self, ok: SSAValue, value: SSAValue) -> SSAValue:
        """``value`` if the LAPACK call succeeded, else NaN."""
        return self.select(ok, value, self.const(np.nan))

    def lower(self, i: SSAValue, j: SSAValue, value: SSAValue) -> SSAValue:
        """``value`` on and below the diagonal, 0 above it."""
        return self.select(self.compare(j, "sle", i), value, self.const(0))

    def upper(self, i: SSAValue, j: SSAValue, value: SSAValue) -> SSAValue:
        return self.select(self.compare(i, "sle", j), value, self.const(0))

    def from_real(self, value: SSAValue) -> SSAValue:
        """A real scratch value (eigenvalue, singular value) in the output dtype."""
        if self.dtype.kind != "c":
            return value
        # k.type gives the dtype's element type: ComplexType here, a float type in from_int
        complex_type = cast(ComplexType, self.k.type(self.dtype))
        return self.value_of(cx.CreateOp(value, self.k.const(0.0, self.real_dtype), complex_type))

    def from_int(self, value: SSAValue) -> SSAValue:
        return self.from_real(self.value_of(arith.SIToFPOp(value, cast(AnyFloat, self.k.type(self.real_dtype)))))

    def conj(self, value: SSAValue) -> SSAValue:
        return self.value_of(cx.ConjOp(value)) if self.dtype.kind == "c" else value


#: Each target's kernel, by target name.
KERNELS: dict[str, Callable[[_Kernel], None]] = {}


def kernel(name: str):
    """Make the decorated function the kernel of target ``name``."""
    def register_kernel(emit: Callable[[_Kernel], None]) -> Callable[[_Kernel], None]:
        if name in KERNELS:
            raise ValueError(f"custom_call target {name}: two llvm-cpu kernels")
        KERNELS[name] = emit
        return emit
    return register_kernel


def _emit(k, inst, outs, operands):
    name = inst.attrs["target"]
    if name not in KERNELS:
        raise NotImplementedError(f"custom_call: target {name!r} has no llvm-cpu kernel")
    if any(element.size for element in inst.shape.elements):
        KERNELS[name](_Kernel(k, inst, outs, operands))


register_lowering("custom_call", Kernel(_emit, shape_generic=True, unit_sizes=True), PLATFORM)


# --- targets -------------------------------------------------------------------------------

@kernel("cholesky")
def _cholesky(c: _Kernel) -> None:
    """potrf('U') of the buffer read column-major (x^T, i.e. conj(x), whose upper triangle is
    x's lower triangle, as NumPy reads): x^T = U^H U, and U^T read back row-major is L."""
    n = c.matrices[0][0]
    a, info = c.scratch(n * n), c.scratch(1, np.int32)
    uplo, n_ = c.char("U"), c.integer(n)

    def factor(batch):
        c.copy_in(batch, 0, a, column_major=False)
        c.lapack("potrf", uplo, n_, a, n_, info)
        ok = c.succeeded(info)
        c.store_result(batch, 0, lambda i, j: c.or_nan(ok, c.lower(i, j, c.load(a, c.col(j, i, n)))))
    c.per_matrix(factor)


@kernel("lu")
def _lu(c: _Kernel) -> None:
    """getrf: P x = L U as scipy.linalg.lu_factor returns it (unit L below the diagonal of
    the first result, U on and above it) and the 0-based row interchanges. An exactly
    singular U is a result, not a failure."""
    n = c.matrices[0][0]
    a, pivots, info = c.scratch(n * n), c.scratch(n, np.int32), c.scratch(1, np.int32)
    n_ = c.integer(n)

    def factor(batch):
        c.copy_in(batch, 0, a, column_major=True)
        c.lapack("getrf", n_, n_, a, n_, pivots, info)
        c.store_result(batch, 0, lambda i, j: c.load(a, c.col(i, j, n)))
        one = c.k.const(1, np.dtype(np.int32))
        c.store_result(batch, 1, lambda i: c.from_int(c.value_of(arith.SubiOp(c.load(pivots, i), one))))
    c.per_matrix(factor)


@kernel("solve")
def _solve(c: _Kernel) -> None:
    """gesv: LU with partial pivoting, then the triangular solves."""
    n, k = c.matrices[1]
    a, b = c.scratch(n * n), c.scratch(n * k)
    pivots, info = c.scratch(n, np.int32), c.scratch(1, np.int32)
    n_, k_ = c.integer(n), c.integer(k)

    def solve(batch):
        c.copy_in(batch, 0, a, column_major=True)
        c.copy_in(batch, 1, b, column_major=True)
        c.lapack("gesv", n_, k_, a, n_, pivots, b, n_, info)
        ok = c.succeeded(info)
        c.store_result(batch, 0, lambda i, j: c.or_nan(ok, c.load(b, c.col(i, j, n))))
    c.per_matrix(solve)


@kernel("eigh")
def _eigh(c: _Kernel) -> None:
    """syevd/heevd (divide and conquer) on the buffer read column-major, conj(x), whose
    upper triangle is x's lower triangle: its eigenvectors Z give x's as conj(Z).
    Eigenvalues ascend; ``vectors=False`` skips the eigenvectors."""
    n, vectors, complex_ = c.matrices[0][0], c.attrs["vectors"], c.dtype.kind == "c"
    # LAPACK's documented minimum workspaces (for eigenvectors) plus room to block.
    lwork = (2 * n + n * n if complex_ else 1 + 6 * n + 2 * n * n) + _BLOCK * n
    lrwork, liwork = 1 + 5 * n + 2 * n * n, 3 + 5 * n
    a, w, info = c.scratch(n * n), c.scratch(n, c.real_dtype), c.scratch(1, np.int32)
    work, iwork = c.scratch(lwork), c.scratch(liwork, np.int32)
    rwork = [c.scratch(lrwork, c.real_dtype), c.integer(lrwork)] if complex_ else []
    args = [c.char("V" if vectors else "N"), c.char("U"), c.integer(n), a, c.integer(n), w, work, c.integer(lwork),
            *rwork, iwork, c.integer(liwork), info]

    def decompose(batch):
        c.copy_in(batch, 0, a, column_major=False)
        c.lapack("heevd" if complex_ else "syevd", *args)
        ok = c.succeeded(info)
        c.store_result(batch, 0, lambda i: c.or_nan(ok, c.from_real(c.load(w, i))))
        if vectors:
            c.store_result(batch, 1, lambda i, j: c.or_nan(ok, c.conj(c.load(a, c.col(i, j, n)))))
    c.per_matrix(decompose)


@kernel("eig")
def _eig(c: _Kernel) -> None:
    """cgeev/zgeev on a complex general matrix (the API layer makes real input complex):
    eigenvalues in LAPACK's order, right eigenvectors as columns, normalised by LAPACK."""
    n, vectors = c.matrices[0][0], c.attrs["vectors"]
    lwork = 2 * n + _BLOCK * n
    a, w, info = c.scratch(n * n), c.scratch(n), c.scratch(1, np.int32)
    vl, vr = c.scratch(1), c.scratch(n * n if vectors else 1)
    work, rwork = c.scratch(lwork), c.scratch(2 * n, c.real_dtype)
    args = [c.char("N"), c.char("V" if vectors else "N"), c.integer(n), a, c.integer(n), w, vl, c.integer(1), vr,
            c.integer(n if vectors else 1), work, c.integer(lwork), rwork, info]

    def decompose(batch):
        c.copy_in(batch, 0, a, column_major=True)
        c.lapack("geev", *args)
        ok = c.succeeded(info)
        c.store_result(batch, 0, lambda i: c.or_nan(ok, c.load(w, i)))
        if vectors:
            c.store_result(batch, 1, lambda i, j: c.or_nan(ok, c.load(vr, c.col(i, j, n))))
    c.per_matrix(decompose)


@kernel("svd")
def _svd(c: _Kernel) -> None:
    """gesdd (divide and conquer) on x copied column-major, as NumPy calls it: LAPACK
    fixes each singular vector's sign, and decomposing x^T instead (which needs no
    transposed copy) gives other signs than NumPy's, on which clients' results depend
    (SciPy's kmeans2 draws its initial centroids through Vh). Singular values descend;
    ``vectors=False`` computes only them."""
    (m, n), vectors = c.matrices[0], c.attrs["vectors"]
    full = vectors and c.attrs["full_matrices"]
    (k, mx), complex_ = sides("svd", (m, n), c.attrs), c.dtype.kind == "c"
    if k == 0:  # nothing to decompose: the full singular vectors are identities
        c.per_matrix(lambda batch: _identities(c, batch))
        return
    u_cols, vt_rows = (m, n) if full else (k, k)
    # LAPACK's documented minimum workspaces (the largest over its versions) plus room to block.
    lwork = (k * k + 3 * k + mx if complex_ else 4 * k * k + 7 * k + mx) + _BLOCK * (m + n)
    # At least the largest of LAPACK's minimums (7k, 5k^2 + 5k, 2 mx k + 2k^2 + k): of a
    # square matrix's (mx = k) the second, for every k >= 1; else the sum of the last two,
    # a polynomial in run-time sizes, which are not ordered.
    lrwork = 5 * k * k + 5 * k if mx == k else 5 * k * k + 5 * k + 2 * mx * k + 2 * k * k + k
    a, s, info = c.scratch(m * n), c.scratch(k, c.real_dtype), c.scratch(1, np.int32)
    u, vt = (c.scratch(m * u_cols), c.scratch(vt_rows * n)) if vectors else (c.scratch(1), c.scratch(1))
    work, iwork = c.scratch(lwork), c.scratch(8 * k, np.int32)
    rwork = [c.scratch(lrwork, c.real_dtype)] if complex_ else []
    jobz = c.char(("A" if full else "S") if vectors else "N")
    args = [jobz, c.integer(m), c.integer(n), a, c.integer(m), s, u, c.integer(m if vectors else 1), vt,
            c.integer(vt_rows if vectors else 1), work, c.integer(lwork), *rwork, iwork, info]

    def decompose(batch):
        c.copy_in(batch, 0, a, column_major=True)
        c.lapack("gesdd", *args)
        ok = c.succeeded(info)
        singular_values = 1 if vectors else 0
        c.store_result(batch, singular_values, lambda i: c.or_nan(ok, c.from_real(c.load(s, i))))
        if vectors:
            c.store_result(batch, 0, lambda i, j: c.or_nan(ok, c.load(u, c.col(i, j, m))))
            c.store_result(batch, 2, lambda i, j: c.or_nan(ok, c.load(vt, c.col(i, j, vt_rows))))
    c.per_matrix(decompose)


def _identities(c: _Kernel, batch: Sequence[SSAValue]) -> None:
    for result, shape in enumerate(c.results):
        if len(shape) == 2:
            c.store_result(batch, result, lambda i, j: c.select(c.compare(i, "eq", j), c.const(1), c.const(0)))


@kernel("qr")
def _qr(c: _Kernel) -> None:
    """geqrf (R and Householder reflectors), then orgqr/ungqr to form Q from them, in a
    buffer wide enough for the complete Q."""
    (m, n), q_cols = c.matrices[0], c.results[0][1]
    k, mx = sides("qr", (m, n), c.attrs)
    width = mx if c.attrs["mode"] == "complete" else n  # the more of Q's columns and R's
    lwork = (width if not isinstance(width, int) else max(width, 1)) * _BLOCK  # a run-time size is at least 1
    a, tau, info = c.scratch(m * width), c.scratch(k), c.scratch(1, np.int32)
    work = c.scratch(lwork)
    m_, n_, q_cols_, k_, lwork_ = (c.integer(v) for v in (m, n, q_cols, k, lwork))

    def decompose(batch):
        c.copy_in(batch, 0, a, column_major=True)
        c.lapack("geqrf", m_, n_, a, m_, tau, work, lwork_, info)
        c.store_result(batch, 1, lambda i, j: c.upper(i, j, c.load(a, c.col(i, j, m))))
        c.lapack("ungqr" if c.dtype.kind == "c" else "orgqr", m_, q_cols_, k_, a, m_, tau, work, lwork_, info)
        c.store_result(batch, 0, lambda i, j: c.load(a, c.col(i, j, m)))
    c.per_matrix(decompose)
