"""Fusion decisions (codegen/fusion.py), one rule per test: which values of a graph own
a buffer and which are computed inside their consumers' kernels."""

from __future__ import annotations

from hlo_builders import F32, const, make, param

from plaidarray.codegen.fusion import RECOMPUTE_LIMIT, plan_fusion
from plaidarray.hlo import Computation


def _buffered(params, outputs, platform="llvm-cpu") -> set[str]:
    """The opcodes (with a position when repeated) of the non-parameter values owning a buffer."""
    plan = plan_fusion(Computation("main", params, outputs), platform)
    return {f"{k.opcode}" for k in plan.kernels if plan.is_buffer(k)}


def test_a_chain_of_elementwise_ops_is_one_kernel_writing_only_the_output():
    x = param(0, (64,))
    out = make("add", make("multiply", make("negate", x), x), x)
    plan = plan_fusion(Computation("main", [x], [out]), "llvm-cpu")
    assert [k.opcode for k in plan.kernels] == ["add"]
    assert plan.buffered == {id(x), id(out)}


def test_a_cheap_value_with_two_users_is_computed_in_both():
    x = param(0, (64,))
    shared = make("add", x, x)
    assert _buffered([x], [make("multiply", shared, x), make("subtract", shared, x)]) == {"multiply", "subtract"}


def test_an_expensive_value_with_two_users_is_stored_once():
    x = param(0, (64,))
    shared = make("exp", x)
    assert "exp" in _buffered([x], [make("multiply", shared, x), make("subtract", shared, x)])


def test_a_cheap_value_with_three_users_is_stored():
    x = param(0, (64,))
    shared = make("add", x, x)
    users = [make(op, shared, x) for op in ("multiply", "subtract", "divide")]
    assert "add" in _buffered([x], users)


def test_a_value_of_more_than_the_recompute_limit_of_ops_is_stored_for_two_users():
    x = param(0, (64,))
    value = x
    for _ in range(RECOMPUTE_LIMIT + 1):
        value = make("add", value, x)
    assert _buffered([x], [make("multiply", value, x), make("subtract", value, x)]) == \
        {"add", "multiply", "subtract"}


def test_a_computed_value_broadcast_to_more_elements_is_stored_but_a_parameter_is_read_again():
    x = param(0, (8,))
    negated = make("negate", x)
    wide = make("broadcast_in_dim", negated, dims=(100, 8), broadcast_dimensions=(1,))
    assert _buffered([x], [make("add", wide, wide)]) == {"negate", "add"}
    direct = make("broadcast_in_dim", x, dims=(100, 8), broadcast_dimensions=(1,))
    assert _buffered([x], [make("add", direct, direct)]) == {"add"}


def test_generators_are_duplicated_into_every_consumer():
    x = param(0, (64,))
    ramp = make("iota", dims=(64,), dtype=F32, iota_dimension=0)
    one = make("broadcast_in_dim", const(1.0, F32), dims=(64,), broadcast_dimensions=())
    outputs = [make(op, make("add", ramp, one), x) for op in ("multiply", "subtract", "divide")]
    assert _buffered([x], outputs) == {"multiply", "subtract", "divide"}


def test_reductions_and_the_operands_of_kernel_ops_own_buffers():
    a, b = param(0, (4, 8)), param(1, (8, 3))
    scaled = make("negate", a)  # would fuse into an elementwise consumer, not into a kernel op
    product = make("dot_general", scaled, b, lhs_contracting=(1,), rhs_contracting=(0,),
                   lhs_batch=(), rhs_batch=())
    total = make("reduce", make("exp", product), dimensions=(1,), kind="add")
    assert _buffered([a, b], [make("negate", total)]) == {"negate", "dot_general", "reduce"}
