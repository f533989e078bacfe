"""Differential tests of matmul / @, matrix_transpose / .mT, .T, tensordot and vecdot
against NumPy, on both backends (test_matrix_products.py covers the BLAS path's layouts)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import plaidarray as xp
from helpers import assert_same
from strategies import ALL, FLOAT, REAL_NUMERIC, arrays, dtype_ids, elements, shapes

sides = st.integers(0, 4)
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
#: The dtypes of products: float and complex ones are computed by BLAS on llvm-cpu.
NUMERIC = REAL_NUMERIC + COMPLEX


def _values(dtype):
    """Small integers (products and sums stay in range, so results are exact) or finite
    floats (and complex numbers of them) of moderate magnitude (BLAS and plaidarray may
    add in different orders)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return elements(dtype, min_value=-5 if dtype.kind == "i" else 0, max_value=5)
    if dtype.kind == "c":
        part = _values(np.finfo(dtype).dtype)
        return st.builds(complex, part, part)
    return elements(dtype, min_value=-100.0, max_value=100.0, allow_nan=False, allow_infinity=False,
                    specials=(0.0, -0.0, 1.0, -1.0, 0.5))


def _assert_product(got, expected, x1, x2, contracted, dtype, product):
    """Integers exactly; floats within contracted * eps * (|x1| (product) |x2|)."""
    if np.dtype(dtype).kind in "iu":
        assert_same(got, expected)
        return
    bound = np.asarray(product(np.abs(x1).astype(np.float64), np.abs(x2).astype(np.float64)))
    eps = float(np.finfo(dtype).eps)
    atol = float(np.max(bound, initial=0.0)) * eps * (contracted + 2) + float(np.finfo(dtype).tiny)
    assert_same(got, expected, rtol=0, atol=atol, signed_zeros=False)


@st.composite
def matmul_operands(draw, dtype):
    kind = draw(st.sampled_from(["1d@1d", "1d@2d", "2d@1d", "2d@2d", "batched"]), label="kind")
    m, k, n = draw(sides, label="m"), draw(sides, label="k"), draw(sides, label="n")
    if kind == "batched":
        batch1, batch2 = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3),
                              label="batch").input_shapes
        shape1 = batch1 + (m, k) if draw(st.booleans()) or not batch2 else (k,)
        shape2 = batch2 + (k, n) if batch2 or len(shape1) > 1 else (k, n)
    else:
        shape1 = (k,) if kind.startswith("1d") else (m, k)
        shape2 = (k,) if kind.endswith("1d") else (k, n)
    x1 = draw(arrays(dtype, shape1, _values(dtype)), label="x1")
    x2 = draw(arrays(dtype, shape2, _values(dtype)), label="x2")
    return x1, x2


@pytest.mark.parametrize("dtype", NUMERIC, ids=dtype_ids(NUMERIC))
@given(data=st.data())
def test_matmul(backend, dtype, data):
    x1, x2 = data.draw(matmul_operands(dtype), label="operands")
    expected = np.matmul(x1, x2)
    got = xp.matmul(xp.asarray(x1), xp.asarray(x2))
    _assert_product(got, expected, x1, x2, x1.shape[-1], dtype, np.matmul)
    # The @ operator is matmul.
    _assert_product(xp.asarray(x1) @ xp.asarray(x2), expected, x1, x2, x1.shape[-1], dtype, np.matmul)


@pytest.mark.parametrize("dtype1, dtype2", [(np.int8, np.int16), (np.uint8, np.int32), (np.float32, np.float64)],
                         ids=["int8-int16", "uint8-int32", "float32-float64"])
@given(data=st.data())
def test_matmul_promotes_within_a_kind(backend, dtype1, dtype2, data):
    m, k, n = data.draw(sides, label="m"), data.draw(sides, label="k"), data.draw(sides, label="n")
    x1 = data.draw(arrays(dtype1, (m, k), _values(dtype1)), label="x1")
    x2 = data.draw(arrays(dtype2, (k, n), _values(dtype2)), label="x2")
    _assert_product(xp.matmul(xp.asarray(x1), xp.asarray(x2)), np.matmul(x1, x2), x1, x2, k,
                    np.result_type(dtype1, dtype2), np.matmul)


def test_matmul_errors():
    with pytest.raises(ValueError):
        xp.matmul(xp.asarray(np.zeros((2, 3))), xp.asarray(np.zeros((4, 2))))
    with pytest.raises(ValueError):
        xp.matmul(xp.asarray(np.zeros(())), xp.asarray(np.zeros((2,))))
    with pytest.raises(TypeError):  # no result type (mixed kinds promote as in NumPy)
        xp.matmul(xp.asarray(np.zeros((2, 2), np.uint64)), xp.asarray(np.zeros((2, 2), np.int64)))


@given(data=st.data())
def test_matrix_transpose_and_mT(backend, data):
    dtype = data.draw(st.sampled_from(ALL), label="dtype")
    x = data.draw(arrays(dtype, shapes(min_dims=2)), label="x")
    expected = np.swapaxes(x, -1, -2)
    assert_same(xp.matrix_transpose(xp.asarray(x)), expected, exact=True)
    assert_same(xp.asarray(x).mT, expected, exact=True)


@given(data=st.data())
def test_T(backend, data):
    dtype = data.draw(st.sampled_from(ALL), label="dtype")
    x = data.draw(arrays(dtype, shapes(min_dims=2, max_dims=2)), label="x")
    assert_same(xp.asarray(x).T, x.T, exact=True)


def test_matrix_transpose_needs_two_dimensions():
    with pytest.raises(ValueError):
        xp.matrix_transpose(xp.asarray(np.zeros(3)))
    with pytest.raises(ValueError):
        xp.asarray(np.zeros(3)).mT  # noqa: B018


@st.composite
def tensordot_operands(draw, dtype):
    """Shapes where the contracted axes match; axes as an int or as a pair of sequences."""
    n_contract = draw(st.integers(0, 2), label="n_contract")
    contracted = draw(st.lists(sides, min_size=n_contract, max_size=n_contract), label="contracted")
    free1 = draw(st.lists(sides, max_size=2), label="free1")
    free2 = draw(st.lists(sides, max_size=2), label="free2")
    if draw(st.booleans(), label="int axes"):
        shape1, shape2, axes = tuple(free1 + contracted), tuple(contracted + free2), n_contract
    else:
        # Place the contracted axes anywhere in each operand, in any order.
        ndim1, ndim2 = len(free1) + n_contract, len(free2) + n_contract
        pos1 = draw(st.permutations(range(ndim1)), label="pos1")[:n_contract]
        pos2 = draw(st.permutations(range(ndim2)), label="pos2")[:n_contract]
        shape1, shape2 = [None] * ndim1, [None] * ndim2
        for p1, p2, size in zip(pos1, pos2, contracted):
            shape1[p1], shape2[p2] = size, size
        rest1, rest2 = iter(free1), iter(free2)
        shape1 = tuple(s if s is not None else next(rest1) for s in shape1)
        shape2 = tuple(s if s is not None else next(rest2) for s in shape2)
        neg = draw(st.booleans(), label="negative axes")
        axes = ([p - ndim1 if neg else p for p in pos1], [p - ndim2 if neg else p for p in pos2])
    x1 = draw(arrays(dtype, shape1, _values(dtype)), label="x1")
    x2 = draw(arrays(dtype, shape2, _values(dtype)), label="x2")
    return x1, x2, axes


@pytest.mark.parametrize("dtype", NUMERIC, ids=dtype_ids(NUMERIC))
@given(data=st.data())
def test_tensordot(backend, dtype, data):
    x1, x2, axes = data.draw(tensordot_operands(dtype), label="operands")
    expected = np.tensordot(x1, x2, axes=axes)
    if isinstance(axes, int):
        contracted = int(np.prod(x1.shape[x1.ndim - axes:])) if axes else 1
    else:
        contracted = int(np.prod([x1.shape[a] for a in axes[0]]))
    got = xp.tensordot(xp.asarray(x1), xp.asarray(x2), axes=axes)
    _assert_product(got, expected, x1, x2, contracted, dtype, lambda a, b: np.tensordot(a, b, axes=axes))


@pytest.mark.parametrize("dtype", NUMERIC, ids=dtype_ids(NUMERIC))
@given(data=st.data())
def test_vecdot(backend, dtype, data):
    shape1, shape2 = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3,
                                                                 min_side=0, max_side=4), label="shapes").input_shapes
    ndim = min(len(shape1), len(shape2))
    axis = data.draw(st.integers(-ndim, -1), label="axis")
    k = data.draw(sides, label="k")
    shape1 = shape1[:len(shape1) + axis] + (k,) + shape1[len(shape1) + axis + 1:]
    shape2 = shape2[:len(shape2) + axis] + (k,) + shape2[len(shape2) + axis + 1:]
    x1 = data.draw(arrays(dtype, shape1, _values(dtype)), label="x1")
    x2 = data.draw(arrays(dtype, shape2, _values(dtype)), label="x2")
    expected = np.vecdot(x1, x2, axis=axis)
    got = xp.vecdot(xp.asarray(x1), xp.asarray(x2), axis=axis)
    _assert_product(got, expected, x1, x2, k, dtype, lambda a, b: np.vecdot(a, b, axis=axis))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int32])
def test_one_term_sums_are_numpys_bits(backend, dtype):
    """A contraction of length 1 and a tensordot contracting nothing are products added to
    0, as a product's sum starts: -0.0 comes out 0.0, as NumPy's does (and as the product
    kernel did before they ran elementwise; NumPy's complex products keep -0.0, its real
    ones do not, so the sign of a complex zero is not compared)."""
    a = np.array([[-1.0, 2.0, -0.0]]).astype(dtype)
    b = np.array([[0.0, -3.0, -5.0]]).astype(dtype)
    cases = [(xp.vecdot(xp.asarray(a), xp.asarray(b), axis=0), np.vecdot(a, b, axis=0)),
             (xp.tensordot(xp.asarray(a[0]), xp.asarray(b[0]), axes=0), np.tensordot(a[0], b[0], axes=0)),
             (xp.tensordot(xp.asarray(a), xp.asarray(b), axes=([0], [0])), np.tensordot(a, b, axes=([0], [0])))]
    for got, want in cases:
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        if np.dtype(dtype).kind == "f":
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_vecdot_mismatched_sizes_raise():
    with pytest.raises(ValueError):
        xp.vecdot(xp.asarray(np.zeros((2, 3))), xp.asarray(np.zeros((2, 4))))


@pytest.mark.parametrize("dtype", FLOAT, ids=dtype_ids(FLOAT))
def test_matmul_chain_in_one_graph(backend, dtype):
    """Products composed with elementwise work in one graph, as fused code sees them."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(dtype)
    b = rng.standard_normal((4, 5)).astype(dtype)
    v = rng.standard_normal(5).astype(dtype)
    got = (xp.asarray(a) @ xp.asarray(b) * 2 + 1) @ xp.asarray(v)
    expected = (a @ b * 2 + 1) @ v
    assert_same(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5 if dtype == np.float32 else 1e-12)


@given(sizes=st.tuples(*(st.integers(0, 5) for _ in range(3))), pattern=st.sampled_from(["X.T @ v", "X.T @ B",
                                                                                        "A @ Y.T", "v @ Y.T"]),
       dtype=st.sampled_from([np.float64, np.float32, np.int64, np.complex128]))
def test_a_product_of_a_transpose_reads_the_matrix_under_it(backend, sizes, pattern, dtype):
    """``X.T @ v``, ``X.T @ B``, ``A @ Y.T`` and ``v @ Y.T`` are one ``dot_general`` of the
    matrix under the transpose, contracted along its other axis
    (``linear_algebra._transpose_folded``: op by op the transpose was a copy of the matrix
    before each product), with NumPy's values; unit and empty sizes as the rules record
    them."""
    m, k, n = sizes
    rng = np.random.default_rng(m * 36 + k * 6 + n)
    left, right = {"X.T @ v": ((k, m), (k,)), "X.T @ B": ((k, m), (k, n)), "A @ Y.T": ((m, k), (n, k)),
                   "v @ Y.T": ((k,), (n, k))}[pattern]
    a, b = (rng.standard_normal(s).astype(dtype) for s in (left, right))
    x, y = xp.asarray(a), xp.asarray(b)
    got = (x.T @ y) if pattern.startswith("X.T") else (x @ y.T)
    if 0 not in sizes and 1 not in sizes:
        assert got._node.op == "dot_general" and "transpose" not in [o.op for o in got._node.operands]
    want = (a.T @ b) if pattern.startswith("X.T") else (a @ b.T)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
