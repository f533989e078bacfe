"""Algebraic simplification: identities that remove work without changing results.

Rules are a table of (opcode, rule); a rule returns a replacement or None. Only
identities exact in IEEE arithmetic are used: ``x * 1`` and ``x + (-0.0)`` are removed,
``x + 0.0`` is not (it turns -0.0 into +0.0).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..ir import Computation, Instruction, rebuild
from ..ops.dot import through_transpose
from ..symbolic import is_static


def _scalar_constant(inst: Instruction) -> object | None:
    """The value of a constant, seen through broadcasts of it; None otherwise."""
    while inst.opcode == "broadcast_in_dim":
        inst = inst.operands[0]
    if inst.opcode == "constant" and inst.attrs["value"].value.size == 1:
        return inst.attrs["value"].value.reshape(()).item()
    return None


def _is_identity_element(value: object, opcode: str, dtype: np.dtype) -> bool:
    if value is None:
        return False
    if opcode == "multiply":
        return value == 1
    if opcode == "add":
        return value == 0 and (dtype.kind != "f" or np.signbit(value))
    return False


def _neutral_binary(inst: Instruction) -> Instruction | None:
    lhs, rhs = inst.operands
    if _is_identity_element(_scalar_constant(rhs), inst.opcode, inst.shape.dtype) and lhs.shape == inst.shape:
        return lhs
    if _is_identity_element(_scalar_constant(lhs), inst.opcode, inst.shape.dtype) and rhs.shape == inst.shape:
        return rhs
    return None


def _same_shape_noop(inst: Instruction) -> Instruction | None:
    x = inst.operands[0]
    return x if x.shape == inst.shape else None


def _transpose(inst: Instruction) -> Instruction | None:
    """A transpose of a transpose is one transpose (the API records some as block swaps,
    ``api/block_swaps.py``, for the op kernels built at installation; fused code moves
    the data once), and a transpose that keeps every axis in place is its operand."""
    x, permutation = inst.operands[0], inst.attrs["permutation"]
    if x.opcode == "transpose":
        inner = x.attrs["permutation"]
        return Instruction("transpose", (x.operands[0],), {"permutation": tuple(inner[a] for a in permutation)},
                           inst.shape)
    return x if list(permutation) == sorted(permutation) else None


def _full_slice(inst: Instruction) -> Instruction | None:
    x = inst.operands[0]
    full = all(s == 0 and l == d and st == 1
               for s, l, st, d in zip(inst.attrs["start"], inst.attrs["limit"], inst.attrs["strides"], x.shape.dims))
    return x if full else None


def _double_negation(inst: Instruction) -> Instruction | None:
    x = inst.operands[0]
    return x.operands[0] if x.opcode == inst.opcode else None


def _reshape_of_reshape(inst: Instruction) -> Instruction | None:
    x = inst.operands[0]
    if x.opcode == "reshape":
        return Instruction("reshape", (x.operands[0],), inst.attrs, inst.shape)
    return _same_shape_noop(inst)


def _fold_transposes(inst: Instruction) -> Instruction | None:
    """A dot_general reads a transposed operand's source with renumbered dimensions, so
    the transpose is never materialised (XLA's transpose folding): ``x.mT @ y`` becomes
    a product with a transposed operand, which BLAS reads in place. The free dimensions
    must keep their order, which fixes the result's."""
    operands, attrs = list(inst.operands), dict(inst.attrs)
    for side, prefix in enumerate(("lhs", "rhs")):
        x = operands[side]
        folded = through_transpose(attrs, prefix, x.attrs["permutation"]) if x.opcode == "transpose" else None
        if folded is not None:
            operands[side], attrs = x.operands[0], folded
    return None if operands == list(inst.operands) else Instruction(inst.opcode, operands, attrs, inst.shape)


def _matrix_groups(x: Instruction, contracting: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The axes of a reshape's operand that make up each dimension of the matrix it
    reshapes to, (contracted, free), where the matrix's rows are a run of leading axes and
    its columns the rest; None where there is no such run, a unit axis makes it
    ambiguous, or the sizes are run-time values (a shape-generic module's operand runs
    might pair with the other's at the sizes it was made at and not at others)."""
    source, dims = x.operands[0].shape.dims, x.shape.dims
    if len(dims) != 2 or not is_static(source) or any(d == 1 for d in source):
        return None
    for split in range(1, len(source)):
        if math.prod(source[:split]) == dims[0] and math.prod(source[split:]) == dims[1]:
            groups = (tuple(range(split)), tuple(range(split, len(source))))
            return (groups[contracting], groups[1 - contracting])
    return None


def _fold_reshapes(inst: Instruction) -> Instruction | None:
    """A product of matrices that are both reshapes of arrays, each of a run of its axes by
    the rest, contracting runs of equal sizes, reads the arrays with those runs as its
    contracted and free dimensions (the result reshaped as the product's): the API records
    a ``tensordot`` over several axes so, for the op kernels built at installation, and
    fused code reads the operands where they lie, or through a transpose it folds
    (``_fold_transposes``), as it would the ``tensordot``."""
    lhs, rhs = inst.operands
    if inst.attrs["lhs_batch"] or len(inst.attrs["lhs_contracting"]) != 1 or lhs.opcode != "reshape" \
            or rhs.opcode != "reshape":  # an outer product (tensordot with axes=0) contracts nothing
        return None
    lhs_groups = _matrix_groups(lhs, inst.attrs["lhs_contracting"][0])
    rhs_groups = _matrix_groups(rhs, inst.attrs["rhs_contracting"][0])
    if lhs_groups is None or rhs_groups is None:
        return None
    a, b = lhs.operands[0], rhs.operands[0]
    if [a.shape.dims[i] for i in lhs_groups[0]] != [b.shape.dims[j] for j in rhs_groups[0]]:
        return None
    attrs = {"lhs_batch": (), "rhs_batch": (), "lhs_contracting": lhs_groups[0], "rhs_contracting": rhs_groups[0]}
    product = Instruction.make("dot_general", [a, b], **attrs)
    product = _fold_transposes(product) or product
    return Instruction("reshape", (product,), {"dims": inst.shape.dims}, inst.shape)


def _products(inst: Instruction) -> Instruction | None:
    return _fold_reshapes(inst) or _fold_transposes(inst)


def _flatten_concatenates(inst: Instruction) -> Instruction | None:
    """A join's operands that are joins along its axis are replaced by theirs (XLA's
    simplifier does so too): the API records a wide join as joins of groups
    (``api.manipulation.JOIN_OPERANDS``) for the op kernels built at installation, and
    fused code copies each operand once into the result, not through each group."""
    dimension = inst.attrs["dimension"]
    if not any(x.opcode == "concatenate" and x.attrs["dimension"] == dimension for x in inst.operands):
        return None
    operands = [y for x in inst.operands
                for y in (x.operands if x.opcode == "concatenate" and x.attrs["dimension"] == dimension else (x,))]
    return Instruction(inst.opcode, operands, inst.attrs, inst.shape)


RULES: dict[str, Callable[[Instruction], Instruction | None]] = {
    "concatenate": _flatten_concatenates,
    "dot_general": _products,
    "add": _neutral_binary,
    "multiply": _neutral_binary,
    "convert": _same_shape_noop,
    "broadcast_in_dim": _same_shape_noop,
    "reshape": _reshape_of_reshape,
    "transpose": _transpose,
    "slice": _full_slice,
    "negate": _double_negation,
    "not": _double_negation,
}


def algebraic_simplifier(comp: Computation) -> Computation:
    def simplify(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        inst = rebuild(inst, operands)
        rule = RULES.get(inst.opcode)
        while rule is not None:
            replacement = rule(inst)
            if replacement is None or replacement is inst:
                break
            inst = replacement
            rule = RULES.get(inst.opcode)
        return inst

    return comp.rewrite(simplify)
