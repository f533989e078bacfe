"""Linear algebra functions of the main namespace (spec chapter "Linear Algebra
Functions"): each is one ``dot_general`` with the right batch/contracting dims (a
``tensordot`` over several axes, of its operands' axes flattened into a matrix's).

Broadcasting never copies an operand: an axis only one operand has is a free axis of
that operand's matrices, so ``x @ W`` with a stack ``x`` and a matrix ``W`` is one
matrix product (``llvm-cpu`` computes float and complex ones with BLAS)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from .. import dtypes as dt
from ..hlo.opdef import OPS
from ..trace import node as node_module
from ..trace.array import Array
from ..trace.views import view
from . import graph
from .graph import check_array, check_category, convert, op
from .recipes import reading_pins_once, recorded, stands_for
from .views import Transpose

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]


def _promote_pair(x1: Array, x2: Array, where: str) -> tuple[Array, Array]:
    x1 = check_array(x1, where)
    x2 = check_array(x2, where)
    check_category(x1, "numeric", where)
    check_category(x2, "numeric", where)
    dtype = dt.promote(x1.dtype, x2.dtype, where)
    return convert(x1, dtype), convert(x2, dtype)


@recorded
def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dims."""
    a, b = _promote_pair(x1, x2, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must be at least 1-D")
    a2 = a.shape if a.ndim > 1 else (1,) + a.shape
    b2 = b.shape if b.ndim > 1 else b.shape + (1,)
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: contracted dimensions differ: {a.shape} @ {b.shape}")
    if b.ndim == 1 or (b.ndim == 2 and a.ndim > 1) or (a.ndim == 1 and b.ndim == 2):
        # One product, no batch: all of a's rows times one matrix or vector, or a vector
        # times a matrix; its result axes are NumPy's.
        return _dot(a, b, lhs_batch=(), rhs_batch=(), lhs_contracting=(a.ndim - 1,), rhs_contracting=(0,))
    batch = graph.broadcast_shapes(a2[:-2], b2[:-2])
    a_batch, b_batch = ((1,) * (len(batch) + 2 - len(s)) + s[:-2] for s in (a2, b2))
    # Axes (batch..., m, k, n), k contracted.
    out = _broadcast_dot(a, a_batch + a2[-2:] + (1,), b, b_batch + (1,) + b2[-2:], len(batch) + 1)
    shape = batch + (a.shape[-2:-1] if a.ndim > 1 else ()) + (b.shape[-1:] if b.ndim > 1 else ())
    return graph.reshape(out, shape)


#: What ``_graph.Product`` records by: the dtypes it takes (``matmul``'s, numeric), and the
#: ``dot_general`` attributes of a product contracting an operand of each rank's last axis
#: with the other's first, and of the products of matrices ``_transpose_folded`` records
#: (``"a.T @ b"``: both contracted along their first axes, ``"a @ b.T"``: their last), shared
#: by its nodes, read only as every node's attributes.
_PRODUCT_ATTRS: dict[int | str, dict[str, tuple[int, ...]]] = {
    **{rank: {"lhs_batch": (), "rhs_batch": (), "lhs_contracting": (rank - 1,), "rhs_contracting": (0,)}
       for rank in range(1, 9)},
    **{name: {"lhs_batch": (), "rhs_batch": (), "lhs_contracting": (axis,), "rhs_contracting": (axis,)}
       for name, axis in (("a.T @ b", 0), ("a @ b.T", 1))}}
_PRODUCT_TABLES = (dict.fromkeys(dt.NUMERIC, True), _PRODUCT_ATTRS)


def _transpose_folded(x1: Any, x2: Any) -> Array | None:
    """``x1 @ x2`` where one operand is a matrix recorded as the transpose of another
    (``X.T @ r``, ``X.T @ X``, ``A @ B.T``, ``v @ Y.T``) and the other is not: the product
    of the matrix under it, contracted along its other axis, as ``tensordot`` records that
    (``v @ X`` for ``X.T @ v``, ``Y @ v`` for ``v @ Y.T``), which BLAS reads in place by its
    flags; op by op the transpose was a copy of the matrix before each product (a 2000 x 20
    gradient step's ``X.T @ r``: half its time). None for any other call (stacks, unit or
    empty sizes, dtypes that promote: as the rules record them)."""
    if type(x1) is not Array or type(x2) is not Array:
        return None
    n1, n2 = x1._node, x2._node
    s1, s2 = n1.shape, n2.shape
    d1, d2 = s1.dims, s2.dims
    first, second = len(d1) == 2 and n1.op == "transpose", len(d2) == 2 and n2.op == "transpose"
    if first == second or n1.weak or n2.weak or s1.dtype != s2.dtype or len(d1) + len(d2) < 3 or len(d1) > 2 or \
            len(d2) > 2 or min(d1) < 2 or min(d2) < 2:
        return None
    if first:
        under = Array(n1.operands[0])
        return matmul(x2, under) if len(d2) == 1 else tensordot(under, x2, axes=([0], [0]))
    under = Array(n2.operands[0])
    return matmul(under, x1) if len(d1) == 1 else tensordot(x1, under, axes=([1], [1]))


def _folding(fn: Any) -> Any:
    """``fn`` (``matmul``) with ``_transpose_folded``'s products taken first."""
    @functools.wraps(fn)
    def call(x1: Array, x2: Array, /) -> Array:
        out = _transpose_folded(x1, x2)
        return fn(x1, x2) if out is None else out
    return call


def _in_c(fn: Any) -> Any:
    """``matmul`` (``fn``) with its single products of one numeric dtype recorded in C
    where the C module is in use (``_graph.Product``: a matrix or vector times a matrix or
    vector, a stack times a matrix, as ``fn`` records them, without a recipe's signature
    and lookup or the Python path: 13.5 us a product of new sizes there). ``fn`` is
    called for everything else, as it is (its docstring, name and signature are the C
    path's, through ``__wrapped__``). A product of one operand recorded as a transpose of a
    matrix is recorded in C as ``_transpose_folded`` records it (4.3 -> ~1 us for a 4x4
    ``A @ B.T``); the rest of those are ``fn``'s (``_transpose_folded`` takes them first)."""
    if node_module.GRAPH_IN_C is None:
        return fn
    product = node_module.GRAPH_IN_C.Product
    return stands_for(reading_pins_once(lambda fallback: product(*_PRODUCT_TABLES, fallback), fn), fn)


matmul = _in_c(_folding(matmul))


def _broadcast_dot(a: Array, a_shape: tuple[int, ...], b: Array, b_shape: tuple[int, ...], axis: int) -> Array:
    """The sum over ``axis`` of ``a * b``, with ``a`` and ``b`` seen as arrays of
    ``a_shape`` and ``b_shape`` (unit axes inserted so that both have the same rank)
    broadcast together, as one ``dot_general`` of the unbroadcast operands: an axis
    both have is a batch axis, an axis only one has (the other's is 1) is a free axis
    of that one, an axis of size 1 in both is left out. The result's axes are in the
    broadcast order, ``axis`` removed. Broadcast operands are never materialised, and
    ``x @ W`` for a stack ``x`` and a matrix ``W`` is one matrix product.

    Adjacent axes of one role are merged (a row-major operand holds them as one), and the
    operand with free axes goes first where only one has them (``v @ M`` is ``M``'s
    product with ``v``, the same sums), but for a matrix whose free axes all follow the
    contracted one, which goes second, as ``matmul`` records ``v @ M``: a product of any
    rank then runs on the kernel of a product of rank 3 at most in one orientation, which
    the installation has (``vecdot`` of 4-d arrays along their second axis, and of a
    matrix's rows with a column, compiled at their first use). A contraction of length 1
    is its one term (``_one_term``). A free
    axis before a batch axis (a (5, 4, 3) stack's ``vecdot`` with a (4, 3) one) is
    broadcast in both operands, so that batch axes lead, as a product's kernels take them."""
    shape = tuple(sb if sa == 1 else sa for i, (sa, sb) in enumerate(zip(a_shape, b_shape)) if i != axis)
    if a_shape[axis] == 1:
        return _one_term(a, a_shape, b, b_shape, axis)
    roles = [_role(i == axis, sa, sb) for i, (sa, sb) in enumerate(zip(a_shape, b_shape))]
    last_batch = max((i for i, r in enumerate(roles) if r == "batch"), default=-1)
    if last_batch > 0 and any(r in ("lhs", "rhs") for r in roles[:last_batch]):
        common = tuple(sb if sa == 1 else sa for sa, sb in zip(a_shape[:last_batch], b_shape[:last_batch]))
        a = graph.broadcast_to(graph.reshape(a, a_shape), a_shape := common + a_shape[last_batch:])
        b = graph.broadcast_to(graph.reshape(b, b_shape), b_shape := common + b_shape[last_batch:])
        roles = [_role(i == axis, sa, sb) for i, (sa, sb) in enumerate(zip(a_shape, b_shape))]
    groups: list[list[int]] = []
    for i, role in enumerate(roles):
        if role == "unit":
            continue
        if groups and role != "contracted" and roles[groups[-1][-1]] == role:
            groups[-1].append(i)
        else:
            groups.append([i])
    kinds = [roles[g[0]] for g in groups]
    a_sizes, b_sizes = ([math.prod(shape[i] for i in g) for g in groups] for shape in (a_shape, b_shape))
    if "rhs" in kinds and "lhs" not in kinds:
        a, b, a_sizes, b_sizes = b, a, b_sizes, a_sizes
        kinds = ["lhs" if k == "rhs" else k for k in kinds]
    if kinds == ["contracted", "lhs"]:  # the vector times the matrix
        out = _dot(graph.reshape(b, (b_sizes[0],)), graph.reshape(a, tuple(a_sizes)), lhs_batch=(), rhs_batch=(),
                   lhs_contracting=(0,), rhs_contracting=(0,))
        return graph.reshape(out, shape)
    lhs_axes = [k for k, r in enumerate(kinds) if r in ("batch", "lhs", "contracted")]
    rhs_axes = [k for k, r in enumerate(kinds) if r in ("batch", "rhs", "contracted")]
    batch = [k for k, r in enumerate(kinds) if r == "batch"]
    contracted = kinds.index("contracted")
    out = _dot(graph.reshape(a, tuple(a_sizes[k] for k in lhs_axes)),
               graph.reshape(b, tuple(b_sizes[k] for k in rhs_axes)),
               lhs_batch=tuple(map(lhs_axes.index, batch)), rhs_batch=tuple(map(rhs_axes.index, batch)),
               lhs_contracting=(lhs_axes.index(contracted),), rhs_contracting=(rhs_axes.index(contracted),))
    produced = batch + [k for k, r in enumerate(kinds) if r == "lhs"] + [k for k, r in enumerate(kinds) if r == "rhs"]
    if produced != sorted(produced):
        out = graph.transpose(out, tuple(map(produced.index, sorted(produced))))
    return graph.reshape(out, shape)


def _one_term(a: Array, a_shape: tuple[int, ...], b: Array, b_shape: tuple[int, ...], axis: int | None) -> Array:
    """``_broadcast_dot`` along an ``axis`` of length 1: each sum has one term, the
    product, added to 0 as a product's sum starts (so -0.0 comes out 0.0, as NumPy's and
    the product kernel's do), in elementwise kernels, which the installation has at any
    shape (a product's kernel of a unit contraction compiled at its first use). Also a
    ``tensordot`` contracting nothing (``axis`` None: an outer product, as NumPy's is)."""
    shape = tuple(sb if sa == 1 else sa for sa, sb in zip(a_shape, b_shape))
    terms = op("multiply", graph.broadcast_to(graph.reshape(a, a_shape), shape),
               graph.broadcast_to(graph.reshape(b, b_shape), shape))
    sums = op("add", terms, graph.full(shape, 0, terms.dtype))
    return sums if axis is None else graph.reshape(sums, shape[:axis] + shape[axis + 1:])


def _role(contracted: bool, sa: int, sb: int) -> str:
    if contracted:
        return "contracted"
    if sa == sb:
        return "unit" if sa == 1 else "batch"
    return "lhs" if sb == 1 else "rhs"


@recorded
def matrix_transpose(x: Array, /) -> Array:
    x = check_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: needs at least 2 dimensions, got {x.ndim}")
    return view(x, Transpose((*range(x.ndim - 2), x.ndim - 1, x.ndim - 2), "matrix_transpose"))


@recorded
def tensordot(x1: Array, x2: Array, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    a, b = _promote_pair(x1, x2, "tensordot")
    axes = graph.traced_value(axes)
    if isinstance(axes, int):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={axes} out of range")
        la, lb = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        la, lb = (tuple(ax % n for ax in seq) for seq, n in zip(axes, (a.ndim, b.ndim)))
        if len(la) != len(lb):
            raise ValueError("tensordot: axes sequences differ in length")
    for i, j in zip(la, lb):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: dimension {i} of x1 and {j} of x2 differ")
    if not la:  # nothing contracted: each element of one times the other
        return _one_term(a, a.shape + (1,) * b.ndim, b, (1,) * a.ndim + b.shape, None)
    if any(a.shape[i] == 0 for i in la):
        return _dot(a, b, lhs_batch=(), rhs_batch=(), lhs_contracting=la, rhs_contracting=lb)
    if len(la) == 1 and a.ndim <= 2 and b.ndim <= 2 and 1 not in a.shape + b.shape:
        # one product, oriented as matmul records it (each operand's contracted axis its
        # last, the other's its first: the orientation the installation has), else the
        # operands swapped and the result transposed back
        if la[0] == a.ndim - 1 and lb[0] == 0:
            return _dot(a, b, lhs_batch=(), rhs_batch=(), lhs_contracting=la, rhs_contracting=lb)
        if lb[0] == b.ndim - 1 and la[0] == 0:
            out = _dot(b, a, lhs_batch=(), rhs_batch=(), lhs_contracting=lb, rhs_contracting=la)
            return graph.transpose(out, (1, 0)) if a.ndim == b.ndim == 2 else out
    # several axes contracted, operands of more than two axes, or a product of neither
    # orientation (both operands contracted along their first axes, or both their last):
    # a product of matrices, each
    # operand's free axes and contracted ones flattened (as NumPy computes it), so that a
    # product kernel of rank 2 serves any ranks; an operand whose contracted axes lead or
    # trail it in order is read as it lies (as a matrix or its transpose), the other moved
    # once (a 3-d array contracted along its middle axis compiled at its first use)
    (lhs, lhs_side), (rhs, rhs_side) = _as_matrix(a, la, 1), _as_matrix(b, lb, 0)
    out = _dot(lhs, rhs, lhs_batch=(), rhs_batch=(), lhs_contracting=(lhs_side,), rhs_contracting=(rhs_side,))
    return graph.reshape(out, (*(d for i, d in enumerate(a.shape) if i not in la),
                               *(d for j, d in enumerate(b.shape) if j not in lb)))


def _dot(a: Array, b: Array, **dimensions: tuple[int, ...]) -> Array:
    """The ``dot_general`` of ``a`` and ``b``; where a contracted axis is empty, the sums
    of nothing, zeros of its shape (NumPy's values; a product's code takes no empty
    contraction, so it compiled at its first use)."""
    if any(a.shape[i] == 0 for i in dimensions["lhs_contracting"]):
        return graph.full(OPS["dot_general"].infer([a._node.shape, b._node.shape], dimensions).dims, 0, a.dtype)
    return op("dot_general", a, b, **dimensions)


def _as_matrix(x: Array, contracted: tuple[int, ...], side: int) -> tuple[Array, int]:
    """``x`` as a matrix of its free axes by its ``contracted`` ones (in their order), each
    flattened, and the matrix's contracted dimension: ``x`` reshaped where its contracted
    axes lead or trail it in order, else transposed to put them on ``side``. A matrix of
    one row or column holds its elements in the same order either way round: it is
    reshaped to ``side``, as a matrix product's operand (a single feature's ``X X^T``
    compiled at its first use)."""
    free = tuple(i for i in range(x.ndim) if i not in contracted)
    depth, width = math.prod(x.shape[i] for i in contracted), math.prod(x.shape[i] for i in free)
    if depth == 1 or (width == 1 and contracted == tuple(sorted(contracted))):
        return graph.reshape(x, (width, depth) if side else (depth, width)), side
    if contracted == tuple(range(len(contracted))):
        return graph.reshape(x, (depth, width)), 0
    if contracted == tuple(range(len(free), x.ndim)):
        return graph.reshape(x, (width, depth)), 1
    order = (*free, *contracted) if side else (*contracted, *free)
    return graph.reshape(graph.transpose(x, order), (width, depth) if side else (depth, width)), side


@recorded
def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    a, b = _promote_pair(x1, x2, "vecdot")
    if not (-min(a.ndim, b.ndim) <= axis < 0 or 0 <= axis < min(a.ndim, b.ndim)) or a.ndim == 0:
        raise ValueError(f"vecdot: axis {axis} out of range")
    shape = graph.broadcast_shapes(a.shape, b.shape)
    a_shape, b_shape = ((1,) * (len(shape) - x.ndim) + x.shape for x in (a, b))
    axis %= len(shape)
    if a_shape[axis] != b_shape[axis]:
        raise ValueError(f"vecdot: sizes along axis {axis} differ")
    if a.dtype.kind == "c":  # the spec's vecdot is sum(conj(x1) * x2)
        a = op("conj", a)
    return _broadcast_dot(a, a_shape, b, b_shape, axis)
