"""``custom_call``: matrix decompositions (XLA's CustomCall).

A custom call names a *target*. Each target is declared once, in ``TARGETS``, with

* ``results``: the shapes of the results it computes for one matrix problem,
* ``reference``: those results computed with NumPy (the reference semantics),
* ``ties``: which of its operands' matrix dimensions its rule makes equal (a square
  matrix's rows and columns, a solve's right-hand rows), which with the batch dimensions
  the operands share are the op's ``dim_ties``: sizes equal by chance (a batch of three
  3 x 3 matrices, a batch of one and a single right-hand column) keep their own run-time
  values, and the kernel of one batch serves every other.

Its kernel is a platform's lowering (llvm-cpu calls LAPACK: ``backend/llvm_cpu/
lowerings/custom_call.py``; docs/custom-calls.md lists the routines).

Operands are stacks of matrices with the same leading (batch) dimensions and the same
floating-point dtype. A custom call has a tuple shape, as in XLA: result ``i`` has the
shape ``batch + results[i]``, in the operands' dtype, and ``get_tuple_element``
selects it. Real results of complex problems (eigenvalues, singular values) are stored
with a zero imaginary part, integer results (pivots) as floats.

When a decomposition fails (not positive definite, exactly singular, no convergence)
that matrix's results are NaN. NumPy raises LinAlgError instead, but a lazy array only
learns the outcome when it is computed; the lowerings follow the same rule, so the
backends agree.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..opdef import Attrs, DimTie, OpDef, register
from ..shape import Shape, TupleShape
from ..symbolic import is_static

#: Each operand's (rows, cols): the last two dims of its shape (typed as what slicing a shape gives).
MatrixShapes = Sequence[tuple[int, ...]]
#: The dtypes of the decompositions.
DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


@dataclass(frozen=True)
class Target:
    """One custom-call target: see the module docstring."""

    arity: int
    results: Callable[[MatrixShapes, Attrs], list[tuple[int, ...]]]
    reference: Callable[[list[np.ndarray], Attrs], list[np.ndarray]]
    ties: Callable[[Sequence[int]], Iterable[DimTie]]


TARGETS: dict[str, Target] = {}


def result_shapes(target: str, matrix_shapes: MatrixShapes, attrs: Attrs) -> list[tuple[int, ...]]:
    """The shapes of ``target``'s results for one problem, in order."""
    return _target(target).results(matrix_shapes, attrs)


def _target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"custom_call: unknown target {name!r}") from None


def _infer(shapes, attrs):
    target = _target(attrs["target"])
    name = f"custom_call {attrs['target']}"
    if len(shapes) != target.arity:
        raise TypeError(f"{name}: takes {target.arity} operands, got {len(shapes)}")
    first = shapes[0]
    for s in shapes:
        if s.rank < 2:
            raise ValueError(f"{name}: operands must be (stacks of) matrices, got {s}")
        if s.dims[:-2] != first.dims[:-2] or s.dtype != first.dtype:
            raise ValueError(f"{name}: operands must share batch dimensions and dtype, got {', '.join(map(str, shapes))}")
    if first.dtype not in DTYPES:
        raise TypeError(f"{name}: expected a floating-point dtype, got {first.dtype}")
    results = target.results([s.dims[-2:] for s in shapes], attrs)
    batch = first.dims[:-2]
    return TupleShape(Shape(batch + r, first.dtype) for r in results)


def _evaluate(args, attrs, shape):
    target = _target(attrs["target"])
    outs = [np.empty(s.dims, s.dtype) for s in shape.elements]
    for index in np.ndindex(*args[0].shape[:-2]):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                results = target.reference([a[index] for a in args], attrs)
            for out, result in zip(outs, results):
                out[index] = np.asarray(result, out.dtype)
        except np.linalg.LinAlgError:
            for out in outs:
                out[index] = np.nan
    return outs


def _ties(attrs: Attrs, ranks: Sequence[int]) -> Iterator[DimTie]:
    """Every operand's batch dimensions and the first operand's, and the target's own."""
    for operand, rank in enumerate(ranks[1:], 1):
        yield from (((operand, axis), 0, axis) for axis in range(rank - 2))
    yield from _target(attrs["target"]).ties(ranks)


register(OpDef("custom_call", _infer, _evaluate, dim_ties=_ties))


def _square_ties(ranks: Sequence[int]) -> Iterator[DimTie]:
    """The first operand's rows and columns."""
    yield (0, ranks[0] - 1), 0, ranks[0] - 2


def _no_ties(ranks: Sequence[int]) -> Iterator[DimTie]:
    return iter(())


def declare(name: str, arity: int, results, reference, ties: Callable[[Sequence[int]], Iterable[DimTie]]) -> None:
    """Declare target ``name``: its operand count, result shapes, NumPy reference and
    the ties of its operands' matrix dimensions."""
    if name in TARGETS:
        raise ValueError(f"custom_call target {name} declared twice")
    TARGETS[name] = Target(arity, results, reference, ties)


def _square(where: str, shape: tuple[int, int]) -> int:
    if shape[0] != shape[1]:
        raise ValueError(f"custom_call {where}: expected square matrices, got {shape}")
    return shape[0]


# --- targets -------------------------------------------------------------------------------

declare("cholesky", 1, lambda shapes, attrs: [(_square("cholesky", shapes[0]),) * 2],
        lambda args, attrs: [np.linalg.cholesky(args[0])], _square_ties)


def _lu_reference(args, attrs):
    from scipy.linalg import lu_factor

    lu, pivots = lu_factor(args[0], check_finite=False)
    return [lu, pivots]


declare("lu", 1, lambda shapes, attrs: [(_square("lu", shapes[0]),) * 2, (shapes[0][0],)], _lu_reference, _square_ties)


def _solve_results(shapes, attrs):
    n = _square("solve", shapes[0])
    if shapes[1][0] != n:
        raise ValueError(f"custom_call solve: {shapes[0]} matrices cannot solve {shapes[1]} right-hand sides")
    return [shapes[1]]


def _solve_ties(ranks: Sequence[int]) -> Iterator[DimTie]:
    """The matrices' rows and columns, and the right-hand sides' rows."""
    yield from _square_ties(ranks)
    yield (1, ranks[1] - 2), 0, ranks[0] - 2


declare("solve", 2, _solve_results, lambda args, attrs: [np.linalg.solve(args[0], args[1])], _solve_ties)


def _eigh_results(shapes, attrs):
    n = _square("eigh", shapes[0])
    return [(n,), (n, n)] if attrs["vectors"] else [(n,)]


def _eigh_reference(args, attrs):
    if attrs["vectors"]:
        return list(np.linalg.eigh(args[0], UPLO="L"))
    return [np.linalg.eigvalsh(args[0], UPLO="L")]


declare("eigh", 1, _eigh_results, _eigh_reference, _square_ties)


def _eig_results(shapes, attrs):
    n = _square("eig", shapes[0])
    return [(n,), (n, n)] if attrs["vectors"] else [(n,)]


def _eig_reference(args, attrs):
    if attrs["vectors"]:
        return list(np.linalg.eig(args[0]))
    return [np.linalg.eigvals(args[0])]


declare("eig", 1, _eig_results, _eig_reference, _square_ties)


def sides(target: str, shape: tuple[int, ...], attrs: Attrs) -> tuple[int, int]:
    """The smaller and the larger of a matrix's two dimensions (of ``qr`` and ``svd``), as
    its ``tall`` attribute orders them (rows at least as many as columns). Run-time sizes
    are not ordered, so the API layer, which records the matrix at its sizes, says which
    is which: one shape-generic kernel then serves every matrix of that orientation."""
    m, n = shape
    tall = attrs["tall"]
    if is_static(shape) and tall != (m >= n):
        raise ValueError(f"custom_call {target}: tall={tall} for a matrix of shape {tuple(shape)}")
    return (n, m) if tall else (m, n)


def _svd_results(shapes, attrs):
    m, n = shapes[0]
    k = sides("svd", shapes[0], attrs)[0]
    if not attrs["vectors"]:
        return [(k,)]
    return [(m, m), (k,), (n, n)] if attrs["full_matrices"] else [(m, k), (k,), (k, n)]


def _svd_reference(args, attrs):
    if attrs["vectors"]:
        return list(np.linalg.svd(args[0], full_matrices=attrs["full_matrices"]))
    return [np.linalg.svd(args[0], compute_uv=False)]


declare("svd", 1, _svd_results, _svd_reference, _no_ties)


def _qr_results(shapes, attrs):
    m, n = shapes[0]
    k = m if attrs["mode"] == "complete" else sides("qr", shapes[0], attrs)[0]
    return [(m, k), (k, n)]


declare("qr", 1, _qr_results, lambda args, attrs: list(np.linalg.qr(args[0], mode=attrs["mode"])), _no_ties)
