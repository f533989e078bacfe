"""Matrix products computed by BLAS (``?gemm``, ``?gemv``; docs/custom-calls.md).

Differential tests against NumPy on both backends for the layouts the compiled code
reads in place (transposed operands, stacks times a matrix) or copies first (slices,
tensordot axes in any order), batches and broadcast batches, vectors and empty
dimensions, in every float and complex dtype; and, on the compiled code (its dumps),
that these products really call BLAS, outside fused kernels and threads, while
integer products, dot products of vectors and sizes beyond BLAS's 32-bit integers keep
the loop nest.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import plaidarray as xp
from device_choice import ON_HOST
from helpers import assert_same
from plaidarray.api import graph
from plaidarray.backend import registry
from plaidarray.hlo import Computation, Instruction, Module, Shape
from strategies import dtype_ids

pytestmark = pytest.mark.usefixtures("fused")  # what compiles, and what it compiles to

FLOAT_COMPLEX = [np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)]
LETTER = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def _random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def _assert_product(fn, shapes, dtype, contracted):
    """``fn(namespace, *operands)`` on plaidarray agrees with NumPy's, computed in double
    precision, within ``contracted`` roundings of the sum of the terms' magnitudes."""
    operands = [_random(s, dtype, seed) for seed, s in enumerate(shapes)]
    got = fn(xp, *(xp.asarray(o) for o in operands))
    wide = [o.astype(np.complex128 if o.dtype.kind == "c" else np.float64) for o in operands]
    expected = fn(np, *wide).astype(dtype)
    bound = np.abs(fn(np, *(np.abs(w) for w in wide)))
    atol = float(np.max(bound, initial=0.0)) * float(np.finfo(dtype).eps) * (contracted + 2)
    assert_same(got, expected, rtol=0, atol=atol + float(np.finfo(dtype).tiny), signed_zeros=False)


def _mT(m, x):
    return m.matrix_transpose(x) if m is xp else np.swapaxes(x, -1, -2)


#: name -> (fn(namespace, *operands), operand shapes, contracted length)
LAYOUTS = {
    "a @ b": (lambda m, a, b: a @ b, [(17, 33), (33, 9)], 33),
    "a.mT @ b": (lambda m, a, b: _mT(m, a) @ b, [(33, 17), (33, 9)], 33),
    "a @ b.mT": (lambda m, a, b: a @ _mT(m, b), [(17, 33), (9, 33)], 33),
    "a.mT @ b.mT": (lambda m, a, b: _mT(m, a) @ _mT(m, b), [(33, 17), (9, 33)], 33),
    "batched": (lambda m, a, b: a @ b, [(3, 17, 33), (3, 33, 9)], 33),
    "batched, transposed": (lambda m, a, b: _mT(m, a) @ _mT(m, b), [(3, 33, 17), (3, 9, 33)], 33),
    "stack @ matrix": (lambda m, a, b: a @ b, [(4, 5, 33), (33, 9)], 33),
    "matrix @ stack": (lambda m, a, b: a @ b, [(17, 33), (4, 33, 9)], 33),
    "broadcast batches": (lambda m, a, b: a @ b, [(2, 1, 17, 33), (3, 33, 9)], 33),
    "unit batch": (lambda m, a, b: a @ b, [(1, 17, 33), (4, 33, 9)], 33),
    "slices": (lambda m, a, b: a[1::2, ::3] @ b[::3, 2:], [(35, 99), (99, 11)], 33),
    "matrix @ vector": (lambda m, a, v: a @ v, [(17, 33), (33,)], 33),
    "matrix.mT @ vector": (lambda m, a, v: _mT(m, a) @ v, [(33, 17), (33,)], 33),
    "vector @ matrix": (lambda m, v, b: v @ b, [(33,), (33, 9)], 33),
    "vector @ matrix.mT": (lambda m, v, b: v @ _mT(m, b), [(33,), (9, 33)], 33),
    "strided vector @ matrix": (lambda m, v, b: v[::2] @ b, [(66,), (33, 9)], 33),
    "stack @ vector": (lambda m, a, v: a @ v, [(3, 17, 33), (33,)], 33),
    "vector @ vector": (lambda m, u, v: u @ v, [(33,), (33,)], 33),
    "one row @ matrix": (lambda m, a, b: a @ b, [(1, 33), (33, 9)], 33),
    "tensordot, axes in another order": (lambda m, a, b: m.tensordot(a, b, axes=([2, 0], [0, 2])),
                                         [(6, 4, 5), (5, 7, 6)], 30),
    "tensordot, interleaved axes": (lambda m, a, b: m.tensordot(a, b, axes=([0, 1], [2, 0])),
                                    [(3, 4, 5), (4, 6, 3)], 12),
    "tensordot, free axes permuted": (lambda m, a, b: m.tensordot(m.permute_dims(a, (2, 1, 0)), b, axes=1),
                                      [(33, 4, 5), (33, 9)], 33),
    "tensordot, outer product": (lambda m, a, b: m.tensordot(a, b, axes=0), [(5, 3), (4,)], 1),
    "vecdot as a matrix product": (lambda m, a, b: m.vecdot(m.expand_dims(a, axis=1), m.expand_dims(b, axis=0)),
                                   [(17, 33), (9, 33)], 33),
    "vecdot of rows": (lambda m, a, b: m.vecdot(a, b), [(17, 33), (17, 33)], 33),
    "vecdot of rows and a vector": (lambda m, a, v: m.vecdot(a, v), [(17, 33), (33,)], 33),
    "vecdot along axis 0": (lambda m, a, b: m.vecdot(a, b, axis=0), [(33, 17), (33, 1)], 33),
}


@pytest.mark.parametrize("dtype", FLOAT_COMPLEX, ids=dtype_ids(FLOAT_COMPLEX))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_products_in_every_layout(backend, layout, dtype):
    fn, shapes, contracted = LAYOUTS[layout]
    _assert_product(fn, shapes, dtype, contracted)


EMPTY = {
    "m = 0": [(0, 5), (5, 3)],
    "n = 0": [(4, 5), (5, 0)],
    "k = 0": [(4, 0), (0, 3)],
    "k = 0, batched": [(2, 4, 0), (2, 0, 3)],
    "no matrices": [(0, 4, 5), (0, 5, 3)],
    "k = 0, vector": [(4, 0), (0,)],
    "m = 0, vector": [(0, 5), (5,)],
    "k = 0, vector @ vector": [(0,), (0,)],
}


@pytest.mark.parametrize("dtype", FLOAT_COMPLEX, ids=dtype_ids(FLOAT_COMPLEX))
@pytest.mark.parametrize("case", list(EMPTY))
def test_empty_dimensions(backend, case, dtype):
    a, b = (_random(s, dtype, seed) for seed, s in enumerate(EMPTY[case]))
    real = dtype.kind == "f"  # signbit has no complex loop
    assert_same(xp.asarray(a) @ xp.asarray(b), a @ b, exact=True, signed_zeros=real)
    if a.ndim > 1:
        transposed = xp.matrix_transpose(xp.asarray(_mT(np, a).copy()))
        assert_same(transposed @ xp.asarray(b), a @ b, exact=True, signed_zeros=real)


def test_integer_and_boolean_products_keep_working(backend):
    """They stay a loop nest."""
    a = np.arange(-12, 12, dtype=np.int64).reshape(4, 6)
    b = np.arange(18, dtype=np.int8).reshape(6, 3)
    assert_same(xp.asarray(a) @ xp.asarray(b.astype(np.int64)), a @ b.astype(np.int64))
    assert_same(xp.matrix_transpose(xp.asarray(b)) @ xp.matrix_transpose(xp.asarray(a.astype(np.int8))),
                b.T @ a.astype(np.int8).T)
    # Boolean dot_general (no namespace function takes booleans) is "any of ands".
    x, y = a % 2 == 0, b % 3 == 0
    assert_same(graph.op("dot_general", xp.asarray(x), xp.asarray(y), lhs_batch=(), rhs_batch=(),
                         lhs_contracting=(1,), rhs_contracting=(0,)), x @ y)


# --- the compiled code ---------------------------------------------------------------------

def _dump(tmp_path, monkeypatch, compute) -> dict[str, str]:
    """The dumped stages (by suffix) of the one module that computing ``compute()``
    compiles on llvm-cpu."""
    if not ON_HOST:
        pytest.skip("llvm-cpu's BLAS calls: only the host's devices make them, and the default device is another")
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))
    xp.clear_cache()
    np.asarray(compute())
    stems = {p.name.split(".")[0] for p in tmp_path.iterdir()}
    assert len(stems) == 1, stems
    stem = stems.pop()
    return {suffix: (tmp_path / f"{stem}.{suffix}").read_text() for suffix in ("hlo.txt", "linalg.mlir", "loops.mlir", "ll")}


@pytest.mark.parametrize("dtype", FLOAT_COMPLEX, ids=dtype_ids(FLOAT_COMPLEX))
def test_matrix_products_call_gemm_on_the_operands_in_place(tmp_path, monkeypatch, dtype):
    a, b = xp.asarray(_random((24, 16), dtype)), xp.asarray(_random((24, 8), dtype))
    stages = _dump(tmp_path, monkeypatch, lambda: xp.matrix_transpose(a) @ b)
    assert f"blas_{LETTER[dtype.name]}gemm" in stages["loops.mlir"]
    assert "transpose" not in stages["hlo.txt"]  # folded into the product
    assert "linalg.generic" not in stages["linalg.mlir"]  # no copy, no loop nest


def test_matrix_vector_products_call_gemv(tmp_path, monkeypatch):
    a, v = xp.asarray(_random((24, 16), np.float64)), xp.asarray(_random((24,), np.float64))
    stages = _dump(tmp_path, monkeypatch, lambda: v @ a)
    assert "blas_dgemv" in stages["loops.mlir"] and "gemm" not in stages["loops.mlir"]
    assert "linalg.generic" not in stages["linalg.mlir"]


@pytest.mark.parametrize("compute, routine", [
    (lambda a, b: xp.tensordot(a, b, axes=([0], [0])), "blas_sgemm"),
    (lambda a, b: xp.vecdot(xp.expand_dims(a, axis=2), xp.expand_dims(b, axis=1), axis=0), "blas_sgemm"),
    (lambda a, b: xp.vecdot(a, b[:, :1], axis=0), "blas_sgemv"),
    (lambda a, b: xp.stack([a, a]).mT @ xp.stack([b, b]), "blas_sgemm"),
], ids=["tensordot", "vecdot as a matrix product", "vecdot of columns and a vector", "batched matmul"])
def test_namespace_functions_reach_blas(tmp_path, monkeypatch, compute, routine):
    a, b = xp.asarray(_random((12, 10), np.float32)), xp.asarray(_random((12, 6), np.float32, seed=1))
    assert routine in _dump(tmp_path, monkeypatch, lambda: compute(a, b))["loops.mlir"]


def test_a_stack_times_a_matrix_is_one_gemm(tmp_path, monkeypatch):
    x, w = xp.asarray(_random((4, 6, 16), np.float32)), xp.asarray(_random((16, 8), np.float32))
    stages = _dump(tmp_path, monkeypatch, lambda: x @ w)
    assert stages["loops.mlir"].count("func.call @blas_sgemm") == 1
    assert "scf.for" not in stages["loops.mlir"]


def test_batches_loop_over_gemm_calls_that_no_thread_splits(tmp_path, monkeypatch):
    a, b = xp.asarray(_random((300, 16, 24), np.float32)), xp.asarray(_random((300, 24, 16), np.float32))
    loops = _dump(tmp_path, monkeypatch, lambda: a @ b)["loops.mlir"]
    assert re.search(r"scf\.for[^\n]*\{\n[^\n]*memref\.subview", loops)
    assert "func.call @blas_sgemm" in loops
    assert "plaidarray.parallel_loop" not in loops


def test_elementwise_work_stays_out_of_the_gemm_call(tmp_path, monkeypatch):
    """The scaled operand is a buffer written before the call; the bias add and relu
    read the product's buffer in a fused kernel after it."""
    x, w = xp.asarray(_random((32, 16), np.float32)), xp.asarray(_random((16, 8), np.float32))
    bias = xp.asarray(_random((8,), np.float32))
    loops = _dump(tmp_path, monkeypatch, lambda: xp.maximum((x * 2.0) @ w + bias, 0.0))["loops.mlir"]
    call = loops.index("func.call @blas_sgemm")
    assert loops.index("arith.mulf") < call < loops.index("arith.addf") < loops.index("arith.maximumf")


def test_a_copy_is_made_only_for_an_operand_blas_cannot_read(tmp_path, monkeypatch):
    """A tensordot over two axes, recorded as a product of matrices (the operands'
    axes flattened), compiled for its sizes: the simplifier folds the reshapes and the
    transpose back into the product, whose code copies only ``b``."""
    a, b = xp.asarray(_random((3, 4, 5), np.float64)), xp.asarray(_random((4, 6, 3), np.float64))
    product = xp.jit(lambda a, b: xp.tensordot(a, b, axes=([0, 1], [2, 0])))
    stages = _dump(tmp_path, monkeypatch, lambda: product(a, b))
    assert "blas_dgemm" in stages["loops.mlir"]
    assert stages["linalg.mlir"].count("linalg.generic") == 1  # b's copy; a is read in place


@pytest.mark.parametrize("compute", [
    lambda: xp.asarray(np.ones((16, 8), np.int32)) @ xp.asarray(np.ones((8, 4), np.int32)),
    lambda: xp.vecdot(xp.asarray(np.ones((16, 8), np.float32)), xp.asarray(np.ones((16, 8), np.float32))),
    lambda: xp.asarray(np.ones((16, 0), np.float32)) @ xp.asarray(np.ones((0, 4), np.float32)),
], ids=["integers", "dot products of vectors", "k = 0"])
def test_other_products_call_no_blas(tmp_path, monkeypatch, compute):
    assert "blas_" not in _dump(tmp_path, monkeypatch, compute)["loops.mlir"]


@pytest.mark.parametrize("lhs, rhs", [((2**31, 1), (1, 2)), ((2, 2**31), (2**31, 2)), ((2, 1), (1, 2**31))],
                         ids=["m", "k", "n"])
def test_sizes_beyond_blas_integers_keep_the_loop_nest(tmp_path, monkeypatch, lhs, rhs):
    """Compiled only (the operands would not fit in memory)."""
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))
    params = [Instruction("parameter", (), {"number": i, "shape": Shape(s, np.dtype(np.float32))},
                          Shape(s, np.dtype(np.float32))) for i, s in enumerate((lhs, rhs))]
    dot = Instruction.make("dot_general", params, lhs_batch=(), rhs_batch=(), lhs_contracting=(1,),
                           rhs_contracting=(0,))
    registry.get("llvm-cpu").compiler.compile(Module("huge", Computation("main", params, [dot])))
    (ll,) = tmp_path.glob("*.ll")
    text = ll.read_text()
    assert "blas_" not in text and "define void" in text


@pytest.mark.parametrize("lhs, rhs, axis", [
    ((2, 3, 4, 5), (3, 5, 2), None), ((5, 1, 4, 5), (3, 5, 2), None), ((3, 5, 2), (2, 3, 2, 4), None),
    ((5, 4, 3), (4, 3), -1), ((5, 4, 3), (4, 3), -2), ((4, 3), (5, 4, 3), -1), ((2, 5, 4, 3), (5, 4, 3), -1),
    ((3,), (4, 3), -1), ((2, 3, 4, 5), (2, 3, 4, 5), 1), ((0, 0, 2), (0, 1, 2), -3)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int32], ids=dtype_ids([np.float64, np.complex64, np.int32]))
def test_products_whose_free_axes_precede_batch_axes_or_stand_alone(backend, lhs, rhs, axis, dtype):
    """Products that ``_broadcast_dot`` reorders (the operand with free axes first), merges
    (adjacent axes of one role) or broadcasts (a free axis before a batch axis) give
    NumPy's values."""
    rng = np.random.default_rng(5)
    a, b = (rng.integers(-4, 5, s) + (1j * rng.integers(-4, 5, s) if np.dtype(dtype).kind == "c" else 0)
            for s in (lhs, rhs))
    a, b = a.astype(dtype), b.astype(dtype)  # small integers: every dtype's sums are exact
    if axis is None:
        got, want = xp.asarray(a) @ xp.asarray(b), a @ b
    else:
        got, want = xp.vecdot(xp.asarray(a), xp.asarray(b), axis=axis), np.vecdot(a, b, axis=axis)
    np.testing.assert_array_equal(np.asarray(got), want, strict=True)
