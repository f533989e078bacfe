"""Arrays on a GPU device, end to end, on the simulated device (``PLAIDARRAY_SIMULATED_GPUS``
puts it in the GPUs' place): made on ``cuda``, computed by llvm-nvptx's compiler (each
graph compiled fused, no baseline tier), read back by copies, moved with ``to_device``,
never mixed with another device's, and the same bits as the host's where the standard
fixes them."""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.trace import node as node_module
from plaidarray.backend import devices

RNG = np.random.default_rng(11)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_fused_chain_on_the_gpu_is_the_hosts_bits(cuda, dtype):
    a = RNG.standard_normal((5, 33)).astype(dtype)
    on_gpu = xp.asarray(a, device="cuda")
    assert on_gpu.device == "cuda" and on_gpu.device is cuda[0]
    got = xp.tanh(on_gpu) * 0.5 + xp.exp(-on_gpu * on_gpu) * 0.25 - xp.abs(on_gpu) * 0.1
    want = xp.tanh(xp.asarray(a)) * 0.5 + xp.exp(-xp.asarray(a) * xp.asarray(a)) * 0.25 - xp.abs(xp.asarray(a)) * 0.1
    assert got.device == "cuda"
    np.testing.assert_array_equal(_bits(np.asarray(got)), _bits(np.asarray(want)))
    np.testing.assert_allclose(np.asarray(got), np.tanh(a) * 0.5 + np.exp(-a * a) * 0.25 - np.abs(a) * 0.1,
                               rtol=2e-6 if dtype == np.float32 else 1e-14)


def test_reductions_reads_and_indexing_on_the_gpu(cuda):
    a = RNG.standard_normal((6, 7))
    x = xp.asarray(a, device="cuda")
    np.testing.assert_allclose(np.asarray(xp.sum(x, axis=1)), a.sum(axis=1), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(xp.mean(x, axis=0)), a.mean(axis=0), rtol=1e-14)
    assert float(xp.max(x)) == a.max()
    assert int(xp.argmax(x[2])) == int(np.argmax(a[2]))
    assert bool(xp.any(x > 2.0)) == bool(np.any(a > 2.0))
    np.testing.assert_array_equal(np.asarray(x[1:5:2, ::-3]), a[1:5:2, ::-3])
    np.testing.assert_array_equal(np.asarray(xp.concat([x, x[:2]])), np.concatenate([a, a[:2]]))
    y = xp.asarray(a, device="cuda")
    y[1, 2] = 100.0
    y[y < 0] = 0.0
    b = a.copy()
    b[1, 2] = 100.0
    b[b < 0] = 0.0
    np.testing.assert_array_equal(np.asarray(y), b)


def test_a_scatter_of_index_arrays_on_the_gpu(cuda):
    """``x[idx] = v`` (a vector's, in place once it alone holds its buffer) and
    ``m[rows, cols] += 1`` on the GPU: one thread's loop writes the values in order, so the
    last of repeated positions wins, as in NumPy."""
    a, index, values = RNG.standard_normal(40), np.array([3, -1, 3, 17, 0, 17]), RNG.standard_normal(6)
    x = xp.asarray(a, device="cuda") * 1.0
    float(x[0])
    x[xp.asarray(index, device="cuda")] = xp.asarray(values, device="cuda")
    x[xp.asarray(index[:2], device="cuda")] = 5.0
    want = a.copy()
    want[index] = values
    want[index[:2]] = 5.0
    assert x.device == "cuda"
    np.testing.assert_array_equal(np.asarray(x), want)
    m, rows, cols = RNG.standard_normal((4, 5)), np.array([0, 3, 0]), np.array([1, 4, 1])
    y = xp.asarray(m, device="cuda")
    y[xp.asarray(rows, device="cuda"), xp.asarray(cols, device="cuda")] += 1.0
    expected = m.copy()
    expected[rows, cols] += 1.0
    np.testing.assert_array_equal(np.asarray(y), expected)


def test_devices_do_not_mix_and_to_device_moves(cuda):
    a = RNG.standard_normal(9)
    on_gpu, on_host = xp.asarray(a, device="cuda"), xp.asarray(a)
    with pytest.raises(ValueError, match="different devices"):
        on_gpu + on_host
    with pytest.raises(ValueError, match="different devices"):
        on_gpu + xp.asarray(a, device="cuda:1")
    back = (on_gpu * 2.0).to_device("cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(np.asarray(back + on_host), a * 2.0 + a)
    assert "cuda" in [d.name for d in xp.__array_namespace_info__().devices()]
    assert xp.zeros(3, device="cuda:1").device is cuda[1]


def test_a_jitted_function_runs_where_its_arrays_are(cuda):
    a = RNG.standard_normal((4, 4))
    f = xp.jit(lambda v, w: xp.sin(v) @ w + 1.0)
    on_gpu = f(xp.asarray(a, device="cuda"), xp.asarray(a, device="cuda"))
    on_host = f(xp.asarray(a), xp.asarray(a))
    assert on_gpu.device == "cuda" and on_host.device == "cpu"
    np.testing.assert_allclose(np.asarray(on_gpu), np.asarray(on_host), rtol=1e-13)
    with pytest.raises(ValueError, match="different devices"):
        f(xp.asarray(a, device="cuda"), xp.asarray(a))


@pytest.mark.parametrize("name, call", [
    ("inv", lambda la, m: la.inv(m)),
    ("solve", lambda la, m: la.solve(m, m[..., :1] + 1.0)),
    ("det", lambda la, m: la.det(m)),
    ("slogdet", lambda la, m: la.slogdet(m).logabsdet),
    ("eigh", lambda la, m: la.eigh(m + la.matrix_transpose(m)).eigenvectors),
    ("eigvalsh", lambda la, m: la.eigvalsh(m + la.matrix_transpose(m))),
    ("eigvals", lambda la, m: la.eigvals(m)),
    ("svd", lambda la, m: la.svd(m[..., :3]).Vh),
    ("svdvals", lambda la, m: la.svdvals(m)),
    ("qr", lambda la, m: la.qr(m[..., :2]).R),
    ("cholesky", lambda la, m: la.cholesky(m + la.matrix_transpose(m) + 8.0 * xp.eye(4, device=m.device))),
    ("pinv", lambda la, m: la.pinv(m[..., :3])),
    ("matrix_rank", lambda la, m: la.matrix_rank(m[..., :3] @ la.matrix_transpose(m[..., :3]))),
])
def test_a_decomposition_on_the_gpu_runs_on_the_host_and_comes_back(cuda, caplog, name, call):
    """llvm-nvptx has no code for ``custom_call`` (``host_ops``): LAPACK's decompositions
    run on the host by a logged round trip, their results on the GPU, the host's bits
    (``pinv``'s within rounding: its products run on the GPU's loops, the host's on BLAS)."""
    a = RNG.standard_normal((2, 4, 4))
    with caplog.at_level("INFO", logger="plaidarray.compiles.host_round_trips"):
        got = call(xp.linalg, xp.asarray(a, device="cuda"))
        assert got.device is cuda[0]
        on_gpu = np.asarray(got)
    assert any(r.getMessage().startswith("cuda: llvm-nvptx has no code for custom_call") for r in caplog.records)
    on_host = np.asarray(call(xp.linalg, xp.asarray(a)))
    if name == "pinv":
        np.testing.assert_allclose(on_gpu, on_host, rtol=1e-12, atol=1e-15)
    else:
        np.testing.assert_array_equal(on_gpu, on_host)


def test_a_jitted_function_with_a_host_op_runs_eagerly_on_the_gpu(cuda, caplog):
    """A traced function cannot hold a round trip: ``jit`` runs it eagerly for that
    signature (said once on the log), its decompositions by round trips."""
    a = RNG.standard_normal((3, 3))
    f = xp.jit(lambda m: xp.linalg.inv(m) * 2.0)
    with caplog.at_level("INFO", logger="plaidarray.compiles.host_round_trips"):
        first, again = (f(xp.asarray(a, device="cuda")) for _ in range(2))
    assert first.device is cuda[0] and again.device is cuda[0]
    said = [r.getMessage() for r in caplog.records if "runs eagerly" in r.getMessage()]
    assert len(said) == 1 and "llvm-nvptx has no code for custom_call" in said[0]
    want = np.asarray(f(xp.asarray(a)))  # compiled on the host
    np.testing.assert_array_equal(np.asarray(first), want)
    np.testing.assert_array_equal(np.asarray(again), want)


#: The complex functions the host takes from its C library, which a GPU runs on the host.
FROM_THE_C_LIBRARY = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos",
                      "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_functions_of_the_c_library_run_on_the_host_inside_a_gpu_graph(cuda, caplog, dtype):
    """Each is computed on the host between the GPU's ops before and after it (the
    graph split at it), with the host's bits and special values."""
    z = np.array([1 + 2j, 0.5 - 0.25j, -3 + 0.1j, 0j, complex(np.inf, 1), complex(np.nan, 0), -0.0 + 1e-30j], dtype)
    for name in FROM_THE_C_LIBRARY:
        fn = getattr(xp, name)
        with caplog.at_level("INFO", logger="plaidarray.compiles.host_round_trips"):
            caplog.clear()
            got = fn(xp.asarray(z, device="cuda") * 2.0) - 1.0
            assert got.device is cuda[0]
            on_gpu = np.asarray(got)
        assert any(f"no code for {name} ({np.dtype(dtype)})" in r.getMessage() for r in caplog.records), name
        np.testing.assert_array_equal(on_gpu, np.asarray(fn(xp.asarray(z) * 2.0) - 1.0), err_msg=name)
    w, v = xp.asarray(z[:4], device="cuda"), xp.asarray(z[:4])
    np.testing.assert_array_equal(np.asarray(w ** (w + 1.0)), np.asarray(v ** (v + 1.0)))
    np.testing.assert_array_equal(np.asarray(w ** 2.5), np.asarray(v ** 2.5))  # a Python scalar's shared node


def test_a_value_of_no_device_computed_on_the_host_stays_a_host_value(cuda):
    """A complex function of constants alone (no device) in a GPU graph runs on the host and
    keeps the host's value: a host graph reading it later took the device's buffer."""
    from plaidarray.api import graph

    constant = xp.exp(graph.full((3,), 1 + 1j, np.dtype(np.complex128)))
    on_gpu = xp.asarray(np.ones(3, complex), device="cuda") + constant
    np.testing.assert_allclose(np.asarray(on_gpu), np.ones(3) + np.exp(1 + 1j), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(constant + xp.asarray(np.ones(3, complex))), np.ones(3) + np.exp(1 + 1j),
                               rtol=1e-15)


def test_the_other_complex_functions_run_on_the_gpu(cuda, caplog):
    z = np.array([1 + 2j, 0.5 - 0.25j, -3 + 0.1j, 0j])
    with caplog.at_level("INFO", logger="plaidarray.compiles.host_round_trips"):
        for name in ("abs", "sign", "conj", "real", "imag", "negative", "square", "reciprocal", "round"):
            fn = getattr(xp, name)  # abs is libdevice's hypot on the GPU: within an ulp of the host's
            np.testing.assert_allclose(np.asarray(fn(xp.asarray(z, device="cuda"))), np.asarray(fn(xp.asarray(z))),
                                       rtol=1e-15, err_msg=name)
        quotient = xp.asarray(z, device="cuda") / xp.asarray(z[::-1] + 1.0, device="cuda")
        np.testing.assert_allclose(np.asarray(quotient), z / (z[::-1] + 1.0), rtol=1e-15)
    assert not caplog.records


def test_empty_arrays_and_libdevice_functions_on_the_gpu(cuda):
    """An empty array's loop runs no iteration (the simulator caught kernels reading
    element -1 when an empty range ran one), and the functions the host takes from its C
    library are libdevice's on the GPU, NumPy's values."""
    empty = xp.asarray(np.array([], dtype=np.float64), device="cuda")
    assert np.asarray(xp.acos(empty) + 1.0).shape == (0,)
    assert float(xp.sum(empty)) == 0.0
    a = np.array([3.0, -7.5, 0.0, 1e300, 2.5])
    b = np.array([4.0, 2.0, -1.0, 1e300, -1.5])
    x, y = xp.asarray(a, device="cuda"), xp.asarray(b, device="cuda")
    np.testing.assert_allclose(np.asarray(xp.hypot(x, y)), np.hypot(a, b), rtol=1e-15)
    np.testing.assert_array_equal(np.asarray(xp.remainder(x, y)), np.remainder(a, b))
    np.testing.assert_array_equal(np.asarray(xp.nextafter(x, y)), np.nextafter(a, b))


def test_the_runtime_routines_run_on_the_gpu(cuda):
    """A mask's positions and integer powers are the shared runtime routines, run by one
    thread on the GPU (sorting: ``test_sorts_and_set_functions_on_the_gpu``)."""
    a = np.array([3.0, -1.0, 2.5, np.nan, 0.0, 2.5])
    x = xp.asarray(a, device="cuda")
    np.testing.assert_array_equal(np.asarray(x[x > 0.5]), a[a > 0.5])
    np.testing.assert_array_equal(np.asarray(xp.nonzero(x > 0.5)[0]), np.nonzero(a > 0.5)[0])
    u = np.array([2, 3, 5, 7], np.uint32)
    np.testing.assert_array_equal(np.asarray(xp.asarray(u, device="cuda") ** xp.asarray(u, device="cuda")), u ** u)
    np.testing.assert_array_equal(np.asarray(xp.asarray(np.array([2, -3]), device="cuda") ** 3), np.array([8, -27]))


def test_empty_results_on_the_gpu_need_no_kernel(cuda):
    """A graph whose results are all empty has no kernel to compile (llvm-cpu's
    ``without_compiling``): its run allocates them."""
    x = xp.asarray(np.zeros((1, 0), np.int64), device="cuda")
    got = xp.cumulative_sum(x, axis=0)
    assert got.device == "cuda" and np.asarray(got).shape == (1, 0)
    assert np.asarray(xp.exp(xp.zeros((0, 3), device="cuda"))).shape == (0, 3)


def test_sorts_and_set_functions_on_the_gpu(cuda):
    """The runtime's merge sort runs on the GPU, a row a thread, on scratch the executable
    allocates: NumPy's stable order, NaN last, descending as the standard's mirror image."""
    a = np.round(RNG.standard_normal((4, 19)), 1)
    a[1, 3] = np.nan
    x = xp.asarray(a, device="cuda")
    np.testing.assert_array_equal(np.asarray(xp.argsort(x, axis=1)), np.argsort(a, axis=1, kind="stable"))
    np.testing.assert_array_equal(np.asarray(xp.sort(x, axis=0)), np.sort(a, axis=0))
    np.testing.assert_array_equal(np.asarray(xp.argsort(x[0], descending=True)),
                                  18 - np.argsort(a[0][::-1], kind="stable")[::-1])
    ints = xp.asarray(np.array([3, 1, 2, 3, 1, 7]), device="cuda")
    values, counts = xp.unique_counts(ints)
    np.testing.assert_array_equal(np.asarray(values), [1, 2, 3, 7])
    np.testing.assert_array_equal(np.asarray(counts), [2, 1, 2, 1])


def test_host_memory_reaches_the_gpu_by_a_copy_in_its_byte_order(cuda):
    """NumPy memory is copied to a GPU (``copy=False`` refuses, naming the device), a
    big-endian array as its value; an element of a computed array is read by a copy on
    the device, a later write to the array leaving it as it was."""
    with pytest.raises(ValueError, match="asarray: host memory is copied to cuda, but copy=False"):
        xp.asarray(np.arange(3.0), device="cuda", copy=False)
    big = np.arange(6.0).astype(">f8")
    np.testing.assert_array_equal(np.asarray(xp.asarray(big, device="cuda") * 2.0), np.arange(6.0) * 2.0)
    a = xp.asarray(np.arange(12, dtype=np.int16).reshape(3, 4), device="cuda") + 1
    np.asarray(a)
    element = a[-1, 2]
    assert element._node.buffer is not None  # copied at once, no graph
    a[2, 2] = 99
    assert int(element) == 11 and int(a[2, 2]) == 99
    with pytest.raises(IndexError):
        a[3, 0]


def test_a_gpu_run_larger_than_its_memory_raises_before_allocating(cuda, monkeypatch):
    monkeypatch.setattr(type(cuda[0].transfers.runtime), "available_bytes", lambda self: 1 << 30)
    x = xp.ones((20000, 20000), device="cuda") + 1.0  # 3 GiB
    with pytest.raises(MemoryError, match=r"float64 buffer of shape \(20000, 20000\): .* needs 2.98 GiB .* only "
                                          r"1.00 GiB of memory is available"):
        np.asarray(x)


def test_a_view_of_a_value_of_no_device_exports_host_memory_with_a_gpu_default(cuda, monkeypatch):
    """``xp.real(2 - 3j)`` is a view of a temporary value of no device (the host's) whose
    root is gone: exporting it makes a root on the host, not on the default device."""
    monkeypatch.setattr(devices, "_default", [cuda[0]])
    assert xp.zeros(1).device == "cuda"
    got = xp.real(2 - 3j)
    assert np.asarray(got) == 2.0 and np.asarray(got).shape == ()


def test_a_value_of_no_device_a_gpu_graph_computes_is_a_host_value(cuda):
    """``unique_counts`` of one element: its group starts are made of constants alone (no
    device); read with the values, they are computed on the GPU and copied to the host,
    so the counts' host graph reads them as host memory (it read the device's buffer)."""
    for a in ([5.0], [2.0, 2.0], [3.0, 1.0, 3.0]):
        values, counts = xp.unique_counts(xp.asarray(np.array(a), device="cuda"))
        want_values, want_counts = np.unique(a, return_counts=True)
        np.testing.assert_array_equal(np.asarray(values), want_values)
        np.testing.assert_array_equal(np.asarray(counts), want_counts)


def test_gathers_by_computed_gpu_indices_out_of_range_raise_as_numpy_does(cuda):
    x = xp.reshape(xp.arange(1.0, 13.0, device="cuda"), (3, 4))
    inside = xp.asarray(np.array([1, -1]), device="cuda")
    np.testing.assert_array_equal(np.asarray(x[:, inside]), np.arange(1.0, 13.0).reshape(3, 4)[:, [1, -1]])
    outside, row = (xp.asarray(np.array(i), device="cuda") for i in ([1, 7], [[1, 7]]))  # computed, not pending
    for read, axis, n in ((lambda: x[:, outside], 1, 4), (lambda: xp.take(x, outside, axis=0), 0, 3),
                          (lambda: xp.take_along_axis(x, row, axis=1), 1, 4)):
        with pytest.raises(IndexError, match=f"index 7 is out of bounds for axis {axis} with size {n}"):
            read()


def test_an_element_write_of_a_python_scalar_runs_no_executable(cuda):
    a = np.zeros((3, 4))
    x = xp.asarray(a, device="cuda")
    y = x + 1.0  # memory an executable made, which only y sees: written in place
    w = xp.asarray(np.zeros(3, np.int32), device="cuda") + 0
    float(y[0, 0]), int(w[0])
    before = xp.cache_info()
    for i, j, v in ((0, 1, 2.5), (2, -1, -7.0), (1, 0, 3)):
        y[i, j] = v
        a[i, j] = v - 1.0
    assert xp.cache_info() == before
    np.testing.assert_array_equal(np.asarray(y), a + 1.0)
    z = xp.asarray(np.zeros(()), device="cuda")
    z[...] = 4.0
    assert float(z) == 4.0 and xp.cache_info() == before
    w[1] = -7
    assert np.asarray(w).tolist() == [0, -7, 0] and xp.cache_info() == before


@pytest.mark.skipif(node_module.GRAPH_IN_C is None, reason="reads are made in C only where its modules are loaded")
def test_a_gpu_graphs_cached_read_runs_in_c_and_a_product_apart_in_python(cuda, counted_reads):
    """A GPU graph's read whose executable is cached is made in C (no ``decide``), as the
    host's; a graph with a product, which runs apart (cuBLAS between executables), and a
    miss are ``decide``'s at every read."""
    x = xp.asarray(np.arange(6, dtype=np.float32), device="cuda")
    want = float(np.sum(np.arange(6, dtype=np.float32) * 2.0 + 1.0))
    assert float(xp.sum(x * 2.0 + 1.0)) == want  # a miss: compiled
    decided = counted_reads["decide"]
    for _ in range(3):
        assert float(xp.sum(x * 2.0 + 1.0)) == want
    assert counted_reads["decide"] == decided
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    on_gpu = xp.asarray(a, device="cuda")
    for _ in range(2):
        assert float(xp.sum(on_gpu @ on_gpu.T)) == pytest.approx(float(np.sum(a @ a.T)), rel=1e-5)
    assert counted_reads["decide"] >= decided + 2
