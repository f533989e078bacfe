"""Matrix products on a GPU by cuBLAS (``llvm_nvptx/matrix_products.py``), on the simulated
device, whose cuBLAS reads exactly the bytes the real one's arguments name
(``simulator/blas.py``): every operand layout the recording makes (transposed by its
dimension numbers, batched, a vector, a slice's copy) gives NumPy's product through one
``gemm`` call, and the products cuBLAS does not take stay the generated loops."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from plaidarray.backend.llvm_nvptx import cublas, cuda_driver, matrix_products, simulated
from plaidarray.backend.llvm_nvptx.compiler import NvptxCompiler
from plaidarray.backend.llvm_nvptx.simulator import blas
from plaidarray.backend.llvm_nvptx.simulator.errors import SimulatorError
from plaidarray.backend.llvm_nvptx.simulator.memory import SimulatedMemory
from plaidarray.hlo.opdef import OPS
from plaidarray.hlo.shape import Shape

RNG = np.random.default_rng(5)


@pytest.fixture
def gemms(monkeypatch):
    """The simulated device's gemm calls: (dtype, flags and sizes) of each."""
    calls = []
    made = simulated.SimulatedRuntime.gemm

    def counted(self, dtype, *arguments):
        calls.append((np.dtype(dtype), *arguments[:5]))
        made(self, dtype, *arguments)
    monkeypatch.setattr(simulated.SimulatedRuntime, "gemm", counted)
    return calls


def _on(*arrays):
    return [xp.asarray(a, device="cuda") for a in arrays]


def _r(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


#: name -> (the product of a namespace's arrays, the arrays' shapes)
PRODUCTS = {
    "matrix @ matrix": (lambda ns, a, b: a @ b, [(5, 7), (7, 3)]),
    "transposed lhs": (lambda ns, a, b: a.T @ b, [(7, 5), (7, 3)]),
    "transposed rhs": (lambda ns, a, b: a @ b.T, [(5, 7), (3, 7)]),
    "both transposed": (lambda ns, a, b: a.T @ b.T, [(7, 5), (3, 7)]),
    "matrix @ vector": (lambda ns, a, v: a @ v, [(5, 7), (7,)]),
    "vector @ matrix": (lambda ns, v, b: v @ b, [(7,), (7, 3)]),
    "batched": (lambda ns, a, b: a @ b, [(4, 5, 6), (4, 6, 2)]),
    "batch broadcast": (lambda ns, a, b: a @ b, [(4, 5, 6), (6, 2)]),
    "batched, transposed": (lambda ns, a, b: ns.matrix_transpose(b) @ ns.matrix_transpose(a), [(2, 5, 6), (2, 6, 3)]),
    "slices": (lambda ns, a, b: a[1:, 2:] @ b[2:, ::2], [(5, 7), (7, 6)]),
    "tensordot": (lambda ns, a, b: ns.tensordot(a, b, axes=([0, 2], [0, 1])), [(3, 4, 5), (3, 5, 2)]),
    "in a chain": (lambda ns, a, b: ns.exp(a @ b) * 2.0 + 1.0, [(5, 7), (7, 3)]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_are_one_gemm_with_numpys_values(cuda, gemms, name, dtype):
    fn, shapes = PRODUCTS[name]
    hosts = [_r(*s, dtype=dtype) for s in shapes]
    found = np.asarray(fn(xp, *_on(*hosts)))
    expected = fn(np, *hosts)
    assert found.dtype == expected.dtype and found.shape == expected.shape
    np.testing.assert_allclose(found, expected, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    assert len(gemms) == 1 and gemms[0][0] == np.dtype(dtype)


#: The runtimes the library tests run on: the simulated device everywhere, and the first GPU's
#: cuBLAS where there is one (``tools/gpu_check.sh``; the ctypes binding meets the real library).
RUNTIMES = {"simulated": simulated.SimulatedRuntime, "cuda": lambda: cuda_driver.CudaRuntime(0)}
PRESENT = ["simulated", *(["cuda"] if cuda_driver.device_count() and cublas.library() is not None else [])]


@pytest.mark.parametrize("runtime", PRESENT)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("attrs, shapes", [
    ({"lhs_batch": (), "rhs_batch": (), "lhs_contracting": (1,), "rhs_contracting": (0,)}, [(33, 17), (17, 9)]),
    ({"lhs_batch": (), "rhs_batch": (), "lhs_contracting": (0,), "rhs_contracting": (1,)}, [(17, 33), (9, 17)]),
    ({"lhs_batch": (0,), "rhs_batch": (0,), "lhs_contracting": (2,), "rhs_contracting": (1,)}, [(3, 5, 6), (3, 6, 4)]),
    ({"lhs_batch": (1,), "rhs_batch": (0,), "lhs_contracting": (2,), "rhs_contracting": (2,)}, [(5, 3, 6), (3, 4, 6)]),
])
def test_the_library_computes_the_planned_product(runtime, dtype, attrs, shapes):
    """The planned call on each runtime's library, against the op's NumPy reference."""
    made = RUNTIMES[runtime]()
    hosts = [_r(*s, dtype=dtype) for s in shapes]
    dot = OPS["dot_general"]
    shape = dot.infer([Shape(h.shape, np.dtype(dtype)) for h in hosts], attrs)
    gemm = matrix_products.plan(shape, tuple(Shape(h.shape, np.dtype(dtype)) for h in hosts), attrs)
    assert gemm is not None
    out = matrix_products.run(made, gemm, made.from_host(hosts[0]), made.from_host(hosts[1]))
    np.testing.assert_allclose(made.to_host(out), dot.evaluate(hosts, attrs, shape),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_a_pending_transpose_is_read_through_by_the_librarys_flag(cuda, gemms):
    """``a @ b.mT`` of stacks: the call reads ``b`` with cuBLAS's transpose flag, and the
    transpose, still pending, is never computed (no copy)."""
    a, b = _r(2, 5, 6), _r(2, 4, 6)
    lhs, rhs = _on(a, b)
    transposed = xp.matrix_transpose(rhs)
    np.testing.assert_allclose(np.asarray(lhs @ transposed), a @ np.swapaxes(b, -1, -2), rtol=1e-5, atol=1e-6)
    assert [g[1:3] for g in gemms] == [("T", "N")] and transposed._node.buffer is None


@pytest.mark.parametrize("name, fn, hosts", [
    ("integers", lambda ns, a, b: a @ b, [RNG.integers(-9, 9, (4, 5)), RNG.integers(-9, 9, (5, 3))]),
    ("vector @ vector", lambda ns, a, b: a @ b, [_r(6), _r(6)]),
    ("empty contraction", lambda ns, a, b: a @ b, [_r(3, 0), _r(0, 4)]),
    ("empty result", lambda ns, a, b: a @ b, [_r(0, 5), _r(5, 4)]),
])
def test_other_products_stay_the_generated_loops(cuda, gemms, name, fn, hosts):
    found = np.asarray(fn(xp, *_on(*hosts)))
    np.testing.assert_allclose(found, fn(np, *hosts), rtol=1e-6)
    assert gemms == []


def test_a_traced_product_runs_eagerly_on_cublas(cuda, gemms):
    """jit cannot hold a call between executables: the function runs eagerly (as with a host
    round trip), its products cuBLAS's."""
    a, b = _r(5, 7), _r(7, 3)
    f = xp.jit(lambda x, y: xp.maximum(x @ y, 0.0) @ xp.matrix_transpose(y))
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(f(*_on(a, b))), np.maximum(a @ b, 0) @ b.T, rtol=1e-5, atol=1e-6)
    assert len(gemms) == 4


def test_without_cublas_products_are_the_generated_loops(cuda, gemms, monkeypatch):
    monkeypatch.setattr(simulated.SimulatedRuntime, "has_blas", False)
    a, b = _r(5, 7), _r(7, 3)
    np.testing.assert_allclose(np.asarray(_on(a)[0] @ _on(b)[0]), a @ b, rtol=1e-5, atol=1e-6)
    module = xp.jit(lambda x, y: x @ y).lower(xp.asarray(a), xp.asarray(b)).module
    runtime = simulated.SimulatedRuntime()
    runtime.has_blas = False
    NvptxCompiler(runtime).compile(module)  # no HostOpsError: the loops
    assert gemms == []


def test_the_plan_is_the_column_major_product_of_the_transposes():
    """Row-major C = A B is column-major C^T = B^T A^T: cuBLAS's A is the rhs, its B the lhs
    (worked out by hand for these shapes)."""
    f32 = np.dtype(np.float32)
    attrs = {"lhs_batch": (), "rhs_batch": (), "lhs_contracting": (1,), "rhs_contracting": (0,)}
    plain = matrix_products.plan(Shape((5, 3), f32), (Shape((5, 7), f32), Shape((7, 3), f32)), attrs)
    assert plain == ("N", "N", 3, 5, 7, 3, 0, 7, 0, 3, 15, 1, Shape((5, 3), f32))
    # lhs (7, 5) contracted on 0 (x.T @ y): read column-major it is lhs^T's transpose, flag T
    transposed = dict(attrs, lhs_contracting=(0,))
    assert matrix_products.plan(Shape((5, 3), f32), (Shape((7, 5), f32), Shape((7, 3), f32)), transposed)[:9] == \
        ("N", "T", 3, 5, 7, 3, 0, 5, 0)
    batched = {"lhs_batch": (0,), "rhs_batch": (0,), "lhs_contracting": (2,), "rhs_contracting": (1,)}
    assert matrix_products.plan(Shape((4, 5, 2), f32), (Shape((4, 5, 6), f32), Shape((4, 6, 2), f32)), batched) == \
        ("N", "N", 2, 5, 6, 2, 12, 6, 30, 2, 10, 4, Shape((4, 5, 2), f32))
    ints = np.dtype(np.int32)
    assert matrix_products.plan(Shape((5, 3), ints), (Shape((5, 7), ints), Shape((7, 3), ints)), attrs) is None


@st.composite
def _products(draw):
    """A dot_general of any dimension numbers: batch, contracting and free axes of each
    operand in any order, sizes 1-3."""
    counts = {"b": draw(st.integers(0, 2)), "c": draw(st.integers(1, 2))}
    shared = {(role, i): draw(st.integers(1, 3)) for role, n in counts.items() for i in range(n)}
    operands = []
    for _ in range(2):
        roles = [*shared, *(("f", i) for i in range(draw(st.integers(0, 2))))]
        roles = draw(st.permutations(roles))
        operands.append((roles, tuple(shared.get(r) or draw(st.integers(1, 3)) for r in roles)))
    (lroles, ldims), (rroles, rdims) = operands
    attrs = {f"{side}_{kind}": tuple(roles.index((key, i)) for i in range(counts[key]))
             for side, roles in (("lhs", lroles), ("rhs", rroles)) for kind, key in (("batch", "b"), ("contracting", "c"))}
    return ldims, rdims, attrs


@given(_products(), st.sampled_from([np.float32, np.float64]))
def test_every_planned_product_is_the_references(product, dtype):
    """Whatever the dimension numbers, a product the plan takes is the op's reference through
    the simulated cuBLAS (a wrong leading dimension, stride or flag reads other bytes)."""
    ldims, rdims, attrs = product
    made = simulated.SimulatedRuntime()
    dot, dtype = OPS["dot_general"], np.dtype(dtype)
    operands = (Shape(ldims, dtype), Shape(rdims, dtype))
    shape = dot.infer(list(operands), attrs)
    gemm = matrix_products.plan(shape, operands, attrs)
    if gemm is None:
        return
    a, b = _r(*ldims, dtype=dtype), _r(*rdims, dtype=dtype)
    out = matrix_products.run(made, gemm, made.from_host(a), made.from_host(b))
    np.testing.assert_allclose(made.to_host(out), dot.evaluate([a, b], attrs, shape), rtol=1e-5, atol=1e-6)


def test_the_simulated_cublas_reads_what_its_arguments_name():
    """Two column-major 3 x 2 matrices with leading dimension 4, 10 elements apart, times
    2 x 2 ones transposed: the simulator's gemm against the same product worked in NumPy."""
    memory = SimulatedMemory()
    a_values = np.arange(20, dtype=np.float64) + 1
    b_values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    a, b, c = memory.allocate(160), memory.allocate(64), memory.allocate(96)
    memory.write(a, a_values)
    memory.write(b, b_values)
    blas.gemm(memory, np.dtype(np.float64), "N", "T", 3, 2, 2, a, 4, 10, b, 2, 4, c, 3, 6, 2)
    found = memory.read_array(c, np.float64, 12)
    for i in range(2):
        a_i = a_values[10 * i:10 * i + 8].reshape(2, 4)[:, :3].T  # columns of 4, 3 rows used
        b_i = b_values[4 * i:4 * i + 4].reshape(2, 2).T
        np.testing.assert_array_equal(found[6 * i:6 * i + 6].reshape(2, 3).T, a_i @ b_i.T)
    with pytest.raises(SimulatorError, match="leading dimension 2"):
        blas.gemm(memory, np.dtype(np.float64), "N", "N", 3, 2, 2, a, 2, 0, b, 2, 0, c, 3, 0, 1)
