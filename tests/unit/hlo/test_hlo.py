"""HLO IR: printer, verifier, passes, and ops the namespace does not reach directly
(checked on both backends against NumPy)."""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from backend_choice import BACKENDS
from hlo_builders import F32, I32, const, param

import plaidarray.backend
from plaidarray.backend import registry
from plaidarray.hlo import Computation, Instruction, Module, Shape
from plaidarray.hlo.literal import Literal
from plaidarray.hlo.opdef import NAMESPACES, OPS, lookup
from plaidarray.hlo.passes import HLO_PASSES, run_hlo_passes
from plaidarray.hlo.passes.algebraic_simplifier import algebraic_simplifier
from plaidarray.hlo.passes.bind_constants import bind_constants
from plaidarray.hlo.passes.constant_folding import constant_folding
from plaidarray.hlo.passes.cse import cse
from plaidarray.hlo.verifier import VerificationError, verify

def run(backend: str, params, outputs, buffers):
    module = Module("test", Computation("main", params, outputs))
    return registry.get(backend).compiler.compile(module).run([np.asarray(b) for b in buffers])


def test_printer_uses_xla_style():
    p = param(0, (2, 3))
    neg = Instruction.make("negate", [p])
    text = Module("m", Computation("main", [p], [neg])).to_text()
    assert "HloModule m, entry_computation_layout={(f32[2,3])->(f32[2,3])}" in text
    assert "ROOT negate.1 = f32[2,3] negate(p0)" in text


def test_the_op_set_holds_only_the_ops_of_hlo():
    """Every op in the global table is defined by a module of plaidarray/hlo/ (its shape
    rule and its reference both), once every backend module has registered what it
    defines: a backend's own ops are in its namespace, found by ``lookup`` all the same."""
    for module in pkgutil.walk_packages(plaidarray.backend.__path__, "plaidarray.backend."):
        importlib.import_module(module.name)
    defined_outside = {name: (op.infer.__module__, op.evaluate.__module__) for name, op in OPS.items()
                       if not all(f.__module__.startswith("plaidarray.hlo.") for f in (op.infer, op.evaluate))}
    assert defined_outside == {}
    backend_ops = [op for namespace in NAMESPACES.values() for op in namespace.ops.values()]
    assert "llvm_cpu.stockham_fft" in [op.name for op in backend_ops]
    assert all(lookup(op.name) is op and op.name not in OPS for op in backend_ops)


def test_shape_rules_reject_bad_operands():
    with pytest.raises(TypeError, match="elementwise operands differ"):
        Instruction.make("add", [param(0, (2,)), param(1, (3,))])
    with pytest.raises(ValueError, match="cannot broadcast"):
        Instruction.make("broadcast_in_dim", [param(0, (3,))], dims=(2, 4), broadcast_dimensions=(1,))


def test_verifier_catches_a_wrong_shape():
    p = param(0, (2,))
    bad = Instruction("negate", (p,), {}, Shape((3,), F32))
    with pytest.raises(VerificationError, match="its rule gives"):
        verify(Computation("main", [p], [bad]))
    with pytest.raises(VerificationError, match="its rule gives"):  # made by a pass over a verified computation
        verify(Computation("main", [p], [bad]), Computation("main", [p], [Instruction.make("negate", [p])]))


def test_cse_merges_identical_instructions():
    p = param(0, (4,))
    a, b = Instruction.make("exp", [p]), Instruction.make("exp", [p])
    comp = cse(Computation("main", [p], [Instruction.make("add", [a, b])]))
    assert sum(i.opcode == "exp" for i in comp.instructions) == 1


def test_constant_folding_evaluates_scalar_constant_expressions():
    c = Instruction.make("multiply", [const(3, I32), const(4, I32)])
    comp = constant_folding(Computation("main", [], [c]))
    (out,) = comp.outputs
    assert out.opcode == "constant" and out.attrs["value"].value == 12


def test_simplifier_removes_multiply_by_one_but_keeps_plus_zero_for_floats():
    p = param(0, (3,))
    one = Instruction.make("broadcast_in_dim", [const(1.0, F32)], dims=(3,), broadcast_dimensions=())
    zero = Instruction.make("broadcast_in_dim", [const(0.0, F32)], dims=(3,), broadcast_dimensions=())
    assert algebraic_simplifier(Computation("main", [p], [Instruction.make("multiply", [p, one])])).outputs[0] is p
    kept = algebraic_simplifier(Computation("main", [p], [Instruction.make("add", [p, zero])])).outputs[0]
    assert kept.opcode == "add"  # -0.0 + 0.0 is +0.0, so x + 0 is not x


def test_simplifier_flattens_joins_of_joins_along_the_same_axis_only():
    """Fused code copies each operand of a wide join (recorded as joins of groups) once."""
    a, b, c = param(0, (2, 3)), param(1, (2, 3)), param(2, (2, 3))
    rows = Instruction.make("concatenate", [a, b], dimension=0)
    out = algebraic_simplifier(Computation("main", [a, b, c], [
        Instruction.make("concatenate", [rows, Instruction.make("concatenate", [c, rows], dimension=0)], dimension=0),
        Instruction.make("concatenate", [rows, rows], dimension=1)])).outputs
    assert out[0].opcode == "concatenate" and list(out[0].operands) == [a, b, c, a, b]
    assert [o.opcode for o in out[1].operands] == ["concatenate", "concatenate"]  # joins along another axis stay


def test_simplifier_folds_a_transpose_of_a_transpose():
    """Fused code moves a transpose recorded as block swaps once (``api/block_swaps.py``);
    swaps that compose to no move leave the operand."""
    p = param(0, (2, 3, 4))
    first = Instruction.make("transpose", [p], permutation=(1, 0, 2))
    second = Instruction.make("transpose", [first], permutation=(2, 0, 1))
    back = Instruction.make("transpose", [first], permutation=(1, 0, 2))
    out = algebraic_simplifier(Computation("main", [p], [second, back])).outputs
    assert out[0].opcode == "transpose" and out[0].operands[0] is p
    assert out[0].attrs["permutation"] == (2, 1, 0) and out[0].shape.dims == (4, 3, 2)
    assert out[1] is p


def test_simplifier_folds_a_product_of_flattened_arrays_whose_runs_pair():
    """A tensordot over two axes as the API records it (a product of matrices, each an
    operand's axes flattened) reads the operands themselves where their contracted runs
    pair axis by axis; runs of equal products but other sizes stay flattened."""
    a, b = param(0, (3, 4, 5)), param(1, (4, 6, 3))
    moved = Instruction.make("reshape", [Instruction.make("transpose", [b], permutation=(2, 0, 1))], dims=(12, 6))
    flat = Instruction.make("reshape", [a], dims=(12, 5))
    product = Instruction.make("dot_general", [flat, moved], lhs_batch=(), rhs_batch=(), lhs_contracting=(0,),
                               rhs_contracting=(0,))
    (folded,) = algebraic_simplifier(Computation("main", [a, b], [product])).outputs  # its reshape is no-op
    assert folded.opcode == "dot_general" and list(folded.operands) == [a, b] and folded.shape.dims == (5, 6)
    assert folded.attrs["lhs_contracting"] == (0, 1) and folded.attrs["rhs_contracting"] == (2, 0)
    c, d = param(0, (2, 6, 5)), param(1, (3, 4, 6))
    other = Instruction.make("dot_general", [Instruction.make("reshape", [c], dims=(12, 5)),
                                             Instruction.make("reshape", [d], dims=(12, 6))],
                             lhs_batch=(), rhs_batch=(), lhs_contracting=(0,), rhs_contracting=(0,))
    (kept,) = algebraic_simplifier(Computation("main", [c, d], [other])).outputs
    assert kept.opcode == "dot_general" and [o.opcode for o in kept.operands] == ["reshape", "reshape"]
    e, f = param(0, (2, 3)), param(1, (4,))
    outer = Instruction.make("dot_general", [Instruction.make("reshape", [e], dims=(6,)),
                                             Instruction.make("reshape", [f], dims=(2, 2))],
                             lhs_batch=(), rhs_batch=(), lhs_contracting=(), rhs_contracting=())
    (kept,) = algebraic_simplifier(Computation("main", [e, f], [outer])).outputs  # contracts nothing: kept
    assert kept.opcode == "dot_general" and kept.shape.dims == (6, 2, 2)


def listing(comp: Computation) -> list[tuple]:
    """Each instruction of ``comp`` as it is now: its name there, opcode, attributes,
    operands (by identity) and shape."""
    return [(comp.names[id(i)], i.opcode, dict(i.attrs), [id(o) for o in i.operands], i.shape)
            for i in comp.instructions]


@pytest.mark.parametrize(("name", "run"), [*HLO_PASSES, ("bind-constants", lambda comp: bind_constants(comp)[0])])
def test_a_pass_that_changes_nothing_returns_its_input(name, run):
    """No rebuild where there is nothing to do: the same Computation, not a copy."""
    p, q = param(0, (3,)), param(1, (3,))
    scaled = Instruction.make("multiply", [Instruction.make("exp", [p]), q])
    comp = Computation("main", [p, q], [scaled, Instruction.make("negate", [scaled])])
    assert run(comp) is comp


def test_the_passes_leave_their_input_as_it_was():
    """Every pass of the pipeline changes this graph (a duplicate, a constant expression,
    a product by one), sharing what it keeps with its input: the input's instructions,
    their names there, attributes and operands stay as they were."""
    p = param(0, (3,))
    one = Instruction.make("broadcast_in_dim", [Instruction.make("multiply", [const(0.5, F32), const(2.0, F32)])],
                           dims=(3,), broadcast_dimensions=())
    a, b = Instruction.make("exp", [p]), Instruction.make("exp", [p])
    comp = Computation("main", [p], [Instruction.make("multiply", [Instruction.make("add", [a, b]), one])])
    before = listing(comp)
    optimized = run_hlo_passes(comp)
    assert [i.opcode for i in optimized.instructions] == ["parameter", "exp", "add"]
    assert listing(comp) == before
    assert optimized.names[id(optimized.outputs[0])] == "add.2" and comp.names[id(comp.outputs[0])] == "multiply.8"


@pytest.mark.parametrize("backend", BACKENDS)
@given(data=st.data())
def test_dynamic_slice_clamps_like_xla(backend, data):
    rows, cols = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    sr, sc = data.draw(st.integers(0, rows)), data.draw(st.integers(0, cols))
    start_r, start_c = data.draw(st.integers(-3, 8)), data.draw(st.integers(-3, 8))
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    p, s0, s1 = param(0, (rows, cols)), param(1, (), I32), param(2, (), I32)
    out = Instruction.make("dynamic_slice", [p, s0, s1], slice_sizes=(sr, sc))
    (got,) = run(backend, [p, s0, s1], [out], [x, np.int32(start_r), np.int32(start_c)])
    r0, c0 = min(max(start_r, 0), rows - sr), min(max(start_c, 0), cols - sc)
    np.testing.assert_array_equal(got, x[r0:r0 + sr, c0:c0 + sc])


@pytest.mark.parametrize("backend", BACKENDS)
@given(data=st.data())
def test_dynamic_update_slice_clamps_like_xla(backend, data):
    n = data.draw(st.integers(1, 6))
    m = data.draw(st.integers(0, n))
    start = data.draw(st.integers(-4, 9))
    x = np.arange(n, dtype=np.int32)
    u = -1 - np.arange(m, dtype=np.int32)
    p, q, s = param(0, (n,), I32), param(1, (m,), I32), param(2, (), np.int64)
    out = Instruction.make("dynamic_update_slice", [p, q, s])
    (got,) = run(backend, [p, q, s], [out], [x, u, np.int64(start)])
    expected = x.copy()
    b = min(max(start, 0), n - m)
    expected[b:b + m] = u
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pad_with_interior_and_concatenate(backend):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = param(0, (2, 3))
    padded = Instruction.make("pad", [p, const(-1.0, F32)], low=(1, 0), high=(0, 2), interior=(1, 1))
    joined = Instruction.make("concatenate", [p, p], dimension=1)
    got_pad, got_cat = run(backend, [p], [padded, joined], [x])
    expected = np.full((4, 7), -1.0, np.float32)
    expected[1::2, 0:5:2] = x
    np.testing.assert_array_equal(got_pad, expected)
    np.testing.assert_array_equal(got_cat, np.concatenate([x, x], axis=1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_iota_reshape_and_transpose_fuse_correctly(backend):
    iota = Instruction.make("iota", [], dims=(4, 6), iota_dimension=1, dtype=I32)
    reshaped = Instruction.make("reshape", [iota], dims=(3, 8))
    out = Instruction.make("transpose", [reshaped], permutation=(1, 0))
    (got,) = run(backend, [], [out], [])
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(6, dtype=np.int32), (4, 6)).reshape(3, 8).T)


def _counting_loop(step_op: str = "add") -> Instruction:
    """``while n < 3: x, n = x (step_op) x, n + 1`` over parameters x: f32[2], n: s32[]."""
    from plaidarray.hlo.ops.control_flow import Subcomputation

    def carried():
        return param(0, (2,)), param(1, (), I32)

    x, n = carried()
    cond = Computation("cond", [x, n], [Instruction.make("compare", [n, const(3, I32)], direction="LT")])
    x, n = carried()
    body = Computation("body", [x, n], [Instruction.make(step_op, [x, x]),
                                        Instruction.make("add", [n, const(1, I32)])])
    x, n = carried()
    return Instruction.make("while", [x, n], cond=Subcomputation(cond), body=Subcomputation(body))


def _elements(loop: Instruction) -> list[Instruction]:
    return [Instruction.make("get_tuple_element", [loop], index=i) for i in range(2)]


def test_tuple_shapes_print_fingerprint_and_cse():
    from plaidarray.hlo.fingerprint import module_description
    from plaidarray.hlo.shape import TupleShape

    def fingerprint(comp):
        return module_description(Module("m", comp))

    loop = _counting_loop()
    assert isinstance(loop.shape, TupleShape) and str(loop.shape) == "(f32[2], s32[])"
    comp = Computation("main", list(loop.operands), _elements(loop))
    text = Module("m", comp).to_text()
    assert "while.2 = (f32[2], s32[]) while(p0, p1)" in text
    assert "get_tuple_element.3 = f32[2] get_tuple_element(while.2), index=0" in text
    again = _counting_loop()
    assert fingerprint(comp) == fingerprint(Computation("main", list(again.operands), _elements(again)))
    other = _counting_loop("multiply")
    assert fingerprint(comp) != fingerprint(Computation("main", list(other.operands), _elements(other)))
    # Two identical loops over the same operands, and their elements, become one of each.
    twin = Instruction.make("while", list(loop.operands), **loop.attrs)
    doubled = Computation("main", list(loop.operands), _elements(loop) + _elements(twin))
    merged = cse(doubled)
    assert [i.opcode for i in merged.instructions].count("while") == 1
    assert [i.opcode for i in merged.instructions].count("get_tuple_element") == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_of_tuple_shape_runs_on_both_backends(backend):
    loop = _counting_loop()
    n, x = run(backend, list(loop.operands), _elements(loop)[::-1], [np.array([1.0, -2.0], F32), np.array(0, I32)])
    np.testing.assert_array_equal(x, np.array([8.0, -16.0], F32))
    assert int(n) == 3


def test_get_tuple_element_rejects_a_bad_index_or_operand():
    loop = _counting_loop()
    with pytest.raises(ValueError, match=r"get_tuple_element: index 2 is out of range for the 2 elements of "
                                         r"\(f32\[2\], s32\[\]\)"):
        Instruction.make("get_tuple_element", [loop], index=2)
    with pytest.raises(ValueError, match="index -1 is out of range"):
        Instruction.make("get_tuple_element", [loop], index=-1)
    with pytest.raises(TypeError, match=r"get_tuple_element: the operand must have a tuple shape, got f32\[2\]"):
        Instruction.make("get_tuple_element", [param(0, (2,))], index=0)


def test_a_tuple_cannot_be_an_output():
    loop = _counting_loop()
    with pytest.raises(VerificationError, match="tuple shape"):
        verify(Computation("main", list(loop.operands), [loop]))


def test_a_custom_call_has_one_tuple_element_per_result():
    svd = Instruction.make("custom_call", [param(0, (5, 4, 3))], target="svd", vectors=True, full_matrices=False,
                           tall=True)
    assert str(svd.shape) == "(f32[5,4,3], f32[5,3], f32[5,3,3])"


def test_constants_differing_only_where_their_text_abbreviates_have_different_disk_keys():
    """A module's disk key is built from its text; NumPy prints a long array's ends only,
    so two constants differing in the middle must still be told apart (else one module
    would run the other's code)."""
    from plaidarray.hlo.fingerprint import digest, module_description

    def description(values):
        return digest(module_description(Module("m", Computation("main", [], [const_array(values)]))))

    def const_array(values):
        return Instruction("constant", (), {"value": Literal(values)}, Shape(values.shape, values.dtype))

    base = np.arange(20.0, dtype=F32)
    changed = base.copy()
    changed[10] = -1.0
    assert description(base) == description(base.copy())
    assert description(base) != description(changed)
    assert description(base) != description(base.reshape(4, 5))


#: Values where NumPy warns if any op does (integer limits, zeros to divide by, NaN,
#: infinities, overflow), per dtype kind.
_WARNING_VALUES = {"b": [False, True], "i": [0, 1, -1, -128, 127], "u": [0, 1, 255],
                   "f": [0.0, -0.0, 1.0, 1e38, -3e38, float("inf"), float("nan")],
                   "c": [0j, 1e38 + 1e38j, complex(float("inf"), 0.0), complex(float("nan"), 1.0)]}


@pytest.mark.parametrize("name", sorted(name for name, opdef in OPS.items() if opdef.elementwise))
def test_an_elementwise_reference_never_warns(name):
    """The compiled code computes IEEE's values and wraps integers silently, so reference
    evaluations (the scalar tier's values among them) must not warn either: those that
    skip ``np.errstate`` for some kinds (``quiet_kinds``) must be right that they cannot."""
    opdef = OPS[name]
    attrs = {"compare": {"direction": "LT"}, "convert": {"dtype": np.dtype(np.int8)}}.get(name, {})
    for dtype in (np.bool_, np.int8, np.uint8, np.float32, np.complex64):
        values = [np.asarray(v).astype(dtype) for v in _WARNING_VALUES[np.dtype(dtype).kind]]
        for combo in itertools.product(*[values] * (opdef.arity or 2)):
            args = [np.asarray(c != 0) if name == "select" and k == 0 else c for k, c in enumerate(combo)]
            shapes = [Shape((), a.dtype) for a in args]
            try:
                shape = opdef.infer(shapes, attrs)
            except (TypeError, ValueError):  # not an operand dtype of the op
                break
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                opdef.evaluate(args, attrs, shape)
