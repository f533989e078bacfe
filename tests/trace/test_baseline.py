"""The baseline tier (``trace/baseline.py``, ``trace/hot.py``): a graph no compiled
executable serves runs op by op on per-op kernels, which any graph recording the same op
shares; a structure whose op-by-op runs pass ``PLAIDARRAY_FUSE_AFTER_MS`` is compiled
fused in the background. Both tiers compute the same bits: each op family is run on both
and compared bit for bit."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plaidarray as xp
from plaidarray.backend.cache import EXECUTABLES
from plaidarray.trace import baseline, hot
from plaidarray.trace.baseline import BaselineExecutable
from plaidarray.trace.to_hlo import walk_pending

pytestmark = pytest.mark.skipif("llvm-cpu" not in xp.backends(), reason="the compiled backend is not installed")


@pytest.fixture
def op_by_op(monkeypatch):
    """Graphs run op by op for as long as the test lasts (never hot), from an empty
    in-memory cache: a full one (512 entries, second-chance eviction) may evict a kernel
    a test met moments before, whose reload counts as a disk hit."""
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)
    xp.clear_cache()
    xp.set_backend("llvm-cpu")
    yield
    xp.set_backend(None)


def _executable_of(array: xp.Array):
    """The cached executable that computes ``array``'s pending graph."""
    from plaidarray.backend import registry

    key, _, _, _ = walk_pending([array._node])
    return EXECUTABLES.lookup((key, frozenset(), registry.current().cache_tag))


def test_a_graph_runs_op_by_op_and_is_cached_as_its_ops_kernels(op_by_op):
    x = xp.asarray(np.linspace(0.0, 1.0, 7))
    y = xp.exp(x) * 2.0 + x
    assert _executable_of(y) is None
    np.testing.assert_allclose(np.asarray(y), np.exp(np.linspace(0.0, 1.0, 7)) * 2.0 + np.linspace(0.0, 1.0, 7))
    z = xp.exp(x) * 2.0 + x
    assert type(_executable_of(z)) is BaselineExecutable


@pytest.mark.parametrize("built", [True, False])
def test_a_scalars_broadcast_runs_in_the_kernels_that_read_it(op_by_op, monkeypatch, tmp_path, built):
    """``x * 2.0 + 1.0`` and ``x - mean(x)``: each scalar's broadcast (a Python scalar's,
    a reduction's 0-d result) runs inside the elementwise kernel that reads it, not as a
    kernel of its own writing an array of the result's size, where that kernel is built
    (here compiled, as the installation's build compiles those of its corpus); where it is
    not, on the kernels of the operands as arrays (four kernels each). NumPy's values
    either way (the tiers' bits are compared with the op families below)."""
    monkeypatch.setattr(baseline, "COMPILE_FOLDED", built)
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "0")
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))  # holding no kernel of folded operands
    a = np.arange(1000.0)
    for program, numpy, kernels in ((lambda x: x * 2.0 + 1.0, a * 2.0 + 1.0, (2, 4)),  # multiply, add
                                    (lambda x: x - xp.mean(x), a - np.mean(a), (3, 4))):  # sum, divide, subtract
        np.testing.assert_allclose(np.asarray(program(xp.asarray(a))), numpy, rtol=1e-15)
        assert len(_executable_of(program(xp.asarray(a)))._sequence.steps) == kernels[not built]


def test_a_new_graph_of_known_ops_compiles_nothing(op_by_op):
    """Kernels are per op signature: another graph of the same ops at other sizes and
    shapes (an elementwise op's kernel serves every shape) compiles nothing."""
    a = xp.asarray(np.arange(12.0).reshape(3, 4))
    float(xp.sum(xp.exp(a) * 2.0 - a))
    before = xp.cache_info().compiles
    b = xp.asarray(np.arange(30.0).reshape(5, 6))
    c = xp.asarray(np.arange(7.0))
    assert float(xp.sum(xp.exp(b) * 2.0 - b)) == pytest.approx(float(np.sum(np.exp(np.arange(30.0)) * 2.0
                                                                               - np.arange(30.0))))
    np.testing.assert_allclose(np.asarray(xp.exp(c) * 2.0 - c), np.exp(np.arange(7.0)) * 2.0 - np.arange(7.0))
    assert xp.cache_info().compiles == before


def test_each_result_is_memory_of_its_own(op_by_op):
    """Results that are another value seen anew (a reshape of a result, a literal) are
    copies: writing into one through NumPy changes no other array."""
    x = xp.asarray(np.arange(6.0))
    y = x * 2.0
    shaped = xp.reshape(y * 1.0, (2, 3))
    literal = xp.zeros(())
    values = [np.asarray(v) for v in (y, shaped, literal)]
    for v in values:
        v[...] = -1.0
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(xp.zeros(())), 0.0)
    for v in (y, shaped, literal):
        assert (np.asarray(v) == -1.0).all()


def test_an_assignment_writes_into_the_buffer_it_alone_holds(op_by_op):
    """``a[i] = v`` op by op updates the array's buffer in place, at every size (the
    update's kernel is made once, with its first operand donated); an update whose array
    another op of the graph also reads (``y[1] = y[0] + 5``) is computed into new memory."""
    import weakref

    for n in (6, 40_000):
        x = xp.zeros((n, 3))
        x[0] = 1.0
        buffer = weakref.ref(x._node.buffer)
        want = np.zeros((n, 3))
        want[0] = 1.0
        for i in range(1, 6):
            x[i] = float(i)
            x[i, 2] = -1
            want[i], want[i, 2] = i, -1
        assert x._node.buffer is buffer()
        np.testing.assert_array_equal(np.asarray(x), want)
    y = xp.asarray(np.arange(6.0)) * 1.0
    y[2] = 1.0
    for i in range(1, 6):
        y[i] = y[i - 1] + y[i] * 2.0
    np.testing.assert_array_equal(np.asarray(y), [0.0, 2.0, 4.0, 10.0, 18.0, 28.0])


def test_a_scatter_writes_into_the_buffer_it_alone_holds(op_by_op):
    """``v[index] = values`` of a vector op by op writes the values into the buffer the
    vector alone holds (the scatter's kernel made with its first operand donated), the
    last of repeated positions winning as in NumPy; one whose vector another array
    sees writes into new memory and leaves the other's value as it was."""
    import weakref

    rng = np.random.default_rng(7)
    for n in (5, 30_000):
        x = xp.asarray(np.arange(n, dtype=np.float64)) * 1.0
        float(x[0])
        buffer = weakref.ref(x._node.buffer)
        want = np.arange(n, dtype=np.float64)
        for _ in range(4):
            index, values = rng.integers(-n, n, 9), rng.standard_normal(9)
            x[xp.asarray(index)] = xp.asarray(values)
            want[index] = values
        assert x._node.buffer is buffer()
        x[xp.asarray(index[:3])] += 1.0  # the values read the vector: new memory
        want[index[:3]] += 1.0
        np.testing.assert_array_equal(np.asarray(x), want)
    y = xp.asarray(np.zeros(4)) * 1.0
    seen = y
    y[xp.asarray([1, 3, 1])] = xp.asarray([5.0, 6.0, 7.0])
    np.testing.assert_array_equal(np.asarray(y), [0.0, 7.0, 0.0, 6.0])
    np.testing.assert_array_equal(np.asarray(seen), [0.0, 7.0, 0.0, 6.0])  # the same array
    kept = xp.asarray(np.zeros(4)) * 1.0
    other = kept[:]
    other[xp.asarray([0])] = 1.0
    np.testing.assert_array_equal(np.asarray(other), [1.0, 0.0, 0.0, 0.0])


def test_a_hot_structure_is_compiled_fused_in_the_background(monkeypatch):
    """Past ``FUSE_AFTER_SECONDS`` of op-by-op runs its fused code is compiled on the
    background thread and serves the next reads, with the same values."""
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e-5)  # a few op-by-op runs (~3 us each)
    xp.set_backend("llvm-cpu")
    try:
        x = xp.asarray(np.linspace(-1.0, 1.0, 50))
        seen = []
        for step in range(400):
            total = xp.sum(xp.tanh(x * float(step % 3)) + 1.0)
            seen.append(type(_executable_of(total)))
            float(total)
            if step > 2 and seen[-1] not in (type(None), BaselineExecutable):
                break
            hot.drain()
        assert BaselineExecutable in seen and seen[-1] not in (type(None), BaselineExecutable)
    finally:
        xp.set_backend(None)


def test_a_structure_whose_sizes_change_is_fused_shape_generic(monkeypatch):
    """Sizes that changed while it ran op by op make its fused code shape-generic, which
    then serves every size without a compile."""
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 0.001)
    xp.set_backend("llvm-cpu")
    try:
        data = np.random.default_rng(0).standard_normal(400)
        x = xp.asarray(data)
        for n in range(20, 120):
            assert float(xp.sum(x[:n] * x[:n])) == pytest.approx(float(np.sum(data[:n] ** 2)), rel=1e-12)
            hot.drain()
        before = xp.cache_info().compiles
        for n in range(150, 160):
            float(xp.sum(x[:n] * x[:n]))
        assert xp.cache_info().compiles == before
    finally:
        xp.set_backend(None)


def test_a_deep_graph_runs_op_by_op(op_by_op, monkeypatch):
    """A chain far deeper than the recursion limit assembles and runs (no walk recurses)."""
    from plaidarray.trace import node as node_module

    monkeypatch.setattr(node_module, "MAX_PENDING", 0)
    depth = sys.getrecursionlimit() * 2
    x = xp.asarray(np.ones(3, dtype=np.uint32))
    for _ in range(depth):
        x = x + x
    np.testing.assert_array_equal(np.asarray(x), np.full(3, pow(2, depth, 2**32), dtype=np.uint32))


def test_the_structures_kept_are_bounded(op_by_op):
    for n in range(hot.KEPT_STRUCTURES + 50):
        float(xp.sum(xp.reshape(xp.arange(n + 2, dtype=xp.float64), (1, n + 2)) * 1.5))
    assert len(hot.HEATS.by_structure) <= hot.KEPT_STRUCTURES


# --- the same bits in both tiers -------------------------------------------------------

def _both_tiers(monkeypatch, program):
    """``program()`` run op by op and fused, each from an empty in-memory cache."""
    results = []
    for fuse_after in (1e9, 0.0):
        monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", fuse_after)
        xp.clear_cache()
        started = time.perf_counter()
        out = program()
        results.append([np.asarray(v) for v in (out if isinstance(out, (list, tuple)) else [out])])
        assert time.perf_counter() - started < 120
    return results


def _same_bits(got, want):
    """The same bits in every element, but NaNs: IEEE 754 leaves a NaN result's sign and
    payload open, and x86 passes on an operand's NaN by operand order, which code
    generation may swap (first-tier and full code did); where NaNs are is compared."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        g, w = np.ascontiguousarray(g), np.ascontiguousarray(w)
        if g.dtype.kind in "fc":
            nan = np.isnan(g.view(g.real.dtype)) if g.dtype.kind == "c" else np.isnan(g)
            assert np.array_equal(nan, np.isnan(w.view(w.real.dtype)) if w.dtype.kind == "c" else np.isnan(w))
            g, w = (np.where(nan, 0, a.view(a.real.dtype) if a.dtype.kind == "c" else a) for a in (g, w))
        assert g.tobytes() == w.tobytes(), (g, w)


FAMILIES = {
    "elementwise math": lambda x: [xp.exp(x) * xp.sin(x) + xp.log1p(xp.abs(x)), xp.tanh(x) - xp.sqrt(x * x + 1.0),
                                   xp.pow(xp.abs(x) + 0.5, 1.7), xp.atan2(x, x + 2.0), xp.expm1(x) / 3.0,
                                   (x - 0.5) ** 2, x ** 0.5, (x + 1.0) ** -1, xp.pow(x, xp.where(x > 0.5, 2.0, 0.5))],
    "integer and logical": lambda x: [xp.astype(x * 100.0, xp.int32) // 7, xp.astype(x * 50.0, xp.int64) % 5,
                                      (x > 0.1) & (x < 0.8), xp.astype(x * 1e3, xp.int16) >> 2],
    "reductions": lambda x: [xp.sum(x), xp.mean(x), xp.var(x), xp.std(x), xp.max(x), xp.min(x), xp.prod(x * 0.1 + 1.0),
                             xp.argmax(x), xp.argmin(x), xp.sum(xp.reshape(x, (-1, 1)) * x, axis=0),
                             xp.sum(xp.reshape(x, (-1, 1)) * x, axis=1), xp.cumulative_sum(x)],
    "matrix products": lambda x: [xp.reshape(x, (-1, 1)) @ xp.reshape(x, (1, -1)), x @ x,
                                  (xp.reshape(x, (-1, 1)) * x) @ x],
    "movement": lambda x: [xp.flip(x), xp.roll(x, 2), xp.concat([x, x * 2.0]), xp.stack([x, -x]), x[1:-1:2],
                           xp.reshape(x, (1, -1)).T, xp.broadcast_to(x, (3, x.shape[0]))],
    "sorting and searching": lambda x: [xp.sort(x), xp.argsort(x), xp.searchsorted(xp.sort(x), x * 0.5),
                                        xp.where(x > 0.5, x, -x), xp.unique_values(xp.round(x * 4.0))],
    "indexing": lambda x: [x[xp.argsort(x)[:3]], xp.take(x, xp.asarray(np.array([2, 0, 1]))), x[x > 0.4],
                           xp.sum(x[2:5])],
    # a unit dimension is a run-time size of 1 in an op kernel (``dynamic.unit_positions``)
    # and a number in fused code
    # runs of adjacent axes merged in an op kernel (``hlo.opdef.Merge``), not in fused code
    "merged axes": lambda x: [xp.sum(xp.reshape(x[:24], (2, 3, 2, 2)), axis=3),
                              xp.max(xp.reshape(x[:24], (2, 3, 4)), axis=(1, 2)),
                              xp.sum(xp.reshape(x[:24], (2, 3, 4)) * 2.0, axis=0),
                              xp.permute_dims(xp.reshape(x[:24] * 2.0, (2, 3, 2, 2)), (2, 3, 0, 1)),
                              xp.reshape(x[:24], (2, 3, 1, 4)) * xp.reshape(x[:8], (1, 1, 2, 4)),
                              xp.broadcast_to(xp.reshape(x[:6] * 2.0, (2, 3, 1, 1)), (2, 3, 2, 2)),
                              xp.cumulative_sum(xp.reshape(x[:24], (2, 3, 4)), axis=2),
                              xp.argsort(xp.reshape(x[:24], (2, 3, 4)), axis=2),
                              xp.concat([xp.reshape(x[:24], (2, 3, 4)), xp.reshape(x[:24], (2, 3, 4)) * 2.0], axis=1),
                              xp.reshape(x[:24], (2, 3, 4)) @ xp.reshape(x[:8], (4, 2)),
                              xp.take(xp.reshape(x[:24], (2, 3, 4)), xp.asarray(np.array([2, 0])), axis=1),
                              xp.vecdot(xp.reshape(x[:24], (2, 3, 4)), xp.reshape(x[:24], (2, 3, 4)) * 2.0),
                              xp.flip(xp.reshape(x[:24] * 2.0, (2, 3, 2, 2)), axis=(0, 1, 3)),
                              xp.tile(xp.reshape(x[:4] * 2.0, (1, 4, 1)), (2, 1, 3))],
    "unit dimensions": lambda x: [xp.sum(xp.reshape(x, (1, -1)), axis=0), xp.sum(xp.reshape(x, (-1, 1)), axis=0),
                                  xp.mean(xp.reshape(x, (1, -1)), axis=1, keepdims=True),
                                  xp.cumulative_sum(xp.reshape(x, (1, -1)), axis=1),
                                  xp.cumulative_prod(xp.reshape(x, (-1, 1)) * 0.1 + 1.0, axis=0),
                                  xp.sort(xp.reshape(x, (1, -1)), axis=1), xp.reshape(x * 2.0, (1, -1)).T,
                                  xp.reshape(x, (1, -1)) @ xp.reshape(x, (-1, 1)),
                                  xp.broadcast_to(xp.reshape(x, (1, -1)) * 2.0, (3, x.shape[0])),
                                  xp.sum(xp.reshape(x[:12], (2, 1, 3, 1, 2, 1)), axis=(0, 2, 4)),
                                  xp.max(xp.reshape(x[:12], (1, 2, 1, 6)), axis=(1, 3), keepdims=True),
                                  xp.sum(xp.reshape(x[:12], (2, 1, 6)), axis=2),
                                  xp.sum(xp.reshape(x[:24], (2, 1, 3, 1, 4)), axis=(0, 2, 4)),
                                  xp.sum(xp.reshape(x[:24], (1, 6, 1, 4, 1)), axis=(1, 3)),
                                  xp.sum(xp.reshape(x[:24], (2, 1, 3, 4)), axis=(1, 2)),
                                  xp.max(xp.reshape(x[:24], (2, 1, 3, 1, 4)), axis=(1, 3, 4))],
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@given(values=st.lists(st.floats(0.0, 1.0, allow_subnormal=False), min_size=24, max_size=40),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_both_tiers_compute_the_same_bits(monkeypatch, family, values, dtype):
    data = np.asarray(values, dtype=dtype)
    baseline, fused = _both_tiers(monkeypatch, lambda: FAMILIES[family](xp.asarray(data)))
    _same_bits(baseline, fused)


def test_both_tiers_compute_the_same_bits_for_linear_algebra_and_transforms(monkeypatch):
    rng = np.random.default_rng(0)
    g = rng.standard_normal((5, 5))
    spd = g @ g.T + 5 * np.eye(5)
    signal = rng.standard_normal(24)

    def program():
        a = xp.asarray(spd)
        return [xp.linalg.cholesky(a), xp.linalg.solve(a, a[:, 0]), xp.linalg.inv(a), xp.linalg.eigvalsh(a),
                xp.linalg.det(a), xp.fft.rfft(xp.asarray(signal)), xp.fft.ifft(xp.asarray(signal + 0j)),
                xp.eye(5, k=1) * a, xp.eye(4, 6, k=-2, dtype=xp.complex64), xp.eye(3, dtype=xp.int8) + 1]
    baseline, fused = _both_tiers(monkeypatch, program)
    _same_bits(baseline, fused)


#: FFT lengths of one stage and several, of every radix kind (8, 4, 2, odd primes up to 31
#: in straight-line code, 37 and up in loops), odd and even (the real kinds' two ways),
#: with a prime factor above 127 (Bluestein's algorithm), and 262 = 2 * 131, whose real
#: kinds transform their half by Bluestein's.
FFT_LENGTHS = [2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 27, 30, 37, 49, 64, 74, 97, 100, 101, 127, 128, 131, 243, 254,
               262, 263, 393, 1000, 1024]


def test_both_tiers_compute_the_same_bits_for_ffts_of_many_lengths(monkeypatch):
    """The baseline tier runs an FFT on the library's routines of any length
    (``fft_library.py``), the fused tier on code made for its length: the same bits, kind
    by kind, on rows and along another axis, with signed zeros and infinities."""
    def program():
        rng = np.random.default_rng(3)
        out = []
        for n in FFT_LENGTHS:
            x = rng.standard_normal((2, n) if n % 3 else n)
            x.flat[0], x.flat[-1] = -0.0, (np.inf if n in (9, 131) else x.flat[-1])
            z = x + 1j * rng.standard_normal(x.shape)
            with np.errstate(invalid="ignore"):
                spectrum, doubled = np.fft.rfft(x), z * 2.0
            out += [xp.fft.fft(xp.asarray(z)), xp.fft.ifft(xp.asarray(z)), xp.fft.rfft(xp.asarray(x)),
                    xp.fft.irfft(xp.asarray(spectrum), n=n), xp.fft.irfft(xp.asarray(spectrum), n=n - 1 + n % 2)]
            if n < 40:
                out += [xp.fft.rfft(xp.asarray(x.astype(np.float32))), xp.fft.fft(xp.asarray(z.astype(np.complex64))),
                        xp.fft.fft(xp.asarray(np.stack([z, doubled], axis=-1)), axis=0)]
        return out
    baseline, fused = _both_tiers(monkeypatch, program)
    _same_bits(baseline, fused)


def test_a_graph_reading_a_value_and_its_reshape_binds_one_sequence_at_new_sizes(op_by_op, monkeypatch):
    """Outputs that are one value (a value and its reshape read together, as a graph cut
    at the pending bound reads them) are one result of the structure's sequence, copied
    for the other: the structure is planned once and bound at each new size, where the
    sequence asked for the value twice could not be merged and each size bound its ops
    one by one (the structure's first graph merges its ops' kernels at its sizes,
    ``baseline._met_before``); the results as NumPy's, in buffers of their own."""
    from plaidarray.trace.materialize import materialize

    bound_one_by_one = []
    original = baseline._kernel
    monkeypatch.setattr(baseline, "_kernel", lambda *args: bound_one_by_one.append(args) or original(*args))
    for n in (6, 9, 12, 15):
        data = np.linspace(-1.0, 1.0, 2 * n).reshape(n, 2)
        y = xp.asarray(data) * 2.0 + 1.0
        z = xp.reshape(y, (2 * n,))
        materialize([y._node, z._node])
        np.testing.assert_array_equal(np.asarray(y), data * 2.0 + 1.0)
        np.testing.assert_array_equal(np.asarray(z), (data * 2.0 + 1.0).reshape(-1))
        assert y._node.buffer is not z._node.buffer
    assert not bound_one_by_one


#: Lengths of a low-pass's signal: even and odd, of large prime factors (Bluestein's
#: algorithm: 131, 262 = 2 * 131 whose real kinds transform their half so), each class
#: met again at other lengths.
LOWPASS_LENGTHS = [96, 97, 98, 99, 100, 131, 262, 101, 102, 263, 524, 103]


def _lowpass(signal: xp.Array, n: int) -> xp.Array:
    """A real spectrum cut to its lowest quarter and transformed back: two transforms
    of a length (RFFT, IRFFT with ``fft_length``), literals and elementwise ops around them."""
    spectrum = xp.fft.rfft(signal[:n] * 0.5)
    keep = xp.arange(spectrum.shape[0]) < spectrum.shape[0] // 4
    back = xp.fft.irfft(xp.where(keep, spectrum, xp.zeros_like(spectrum)), n=n)
    return back * back + 1.0


def test_a_graph_with_transforms_binds_its_sequence_at_each_new_length_of_a_class(monkeypatch):
    """A graph whose FFTs run on the library's templates (``Compiler.sized_kernel``) is
    planned once per class of lengths (parity, Bluestein's algorithm or not) and bound at
    every other length of that class, each binding making its transforms' plans; the
    bits of the fused tier's code made for each length."""
    from plaidarray.trace import baseline

    data = np.random.default_rng(11).standard_normal(600)
    plans = []
    original = baseline._generic_plan
    monkeypatch.setattr(baseline, "_generic_plan", lambda *args: plans.append(args[5]) or original(*args))
    baseline_results, fused = _both_tiers(monkeypatch, lambda: [_lowpass(xp.asarray(data), n) for n in LOWPASS_LENGTHS])
    _same_bits(baseline_results, fused)
    for got, n in zip(baseline_results, LOWPASS_LENGTHS):
        spectrum = np.fft.rfft(data[:n] * 0.5)
        want = np.fft.irfft(np.where(np.arange(spectrum.size) < spectrum.size // 4, spectrum, 0), n=n)
        np.testing.assert_allclose(got, want * want + 1.0, rtol=1e-12)
    # the structure's first graph (96) runs its ops' kernels bound one by one
    # (``baseline._met_before``); planned at the first length of each class met after it,
    # bound at the others: 98 to 102 are of classes planned before, 263 odd by Bluestein's
    # as 131, 524 even by Bluestein's half as 262
    planned = [values[1] for values in plans]
    assert planned and len(set(planned)) == len(planned) and not set(planned) & {96, 98, 99, 101, 102, 263, 524}, \
        planned


def test_lapack_calls_of_square_matrices_compile_once_for_every_size(op_by_op):
    """Cholesky, solve, inverse, determinant, eigh, QR and SVD of square matrices take
    run-time sizes: a matrix that grows compiles each call's kernel once."""
    rng = np.random.default_rng(1)

    def calls(n: int) -> None:
        g = rng.standard_normal((n, n))
        spd = g @ g.T + n * np.eye(n)
        a = xp.asarray(spd)
        np.testing.assert_allclose(np.asarray(xp.linalg.cholesky(a)), np.linalg.cholesky(spd), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(xp.linalg.solve(a, a[:, :2])), np.linalg.solve(spd, spd[:, :2]),
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.asarray(xp.linalg.inv(a)), np.linalg.inv(spd), rtol=1e-9, atol=1e-12)
        assert float(xp.linalg.det(a)) == pytest.approx(np.linalg.det(spd), rel=1e-9)
        np.testing.assert_allclose(np.asarray(xp.linalg.eigvalsh(a)), np.linalg.eigvalsh(spd), rtol=1e-9)
        np.testing.assert_allclose(np.abs(np.asarray(xp.linalg.qr(a)[1])), np.abs(np.linalg.qr(spd)[1]), rtol=1e-9)
        np.testing.assert_allclose(np.asarray(xp.linalg.svdvals(a)), np.linalg.svd(spd, compute_uv=False), rtol=1e-9)
    calls(3)
    calls(4)
    before = xp.cache_info()
    for n in range(5, 12):
        calls(n)
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_determinants_are_one_op_of_the_factors_with_the_bits_of_both_tiers(monkeypatch):
    """``det`` and each part of ``slogdet`` are one op of the LU factors
    (``hlo/ops/determinant.py``: one op kernel's first use where a dozen ops were), of
    real and complex stacks of any rank, and compute the same bits in both tiers."""
    rng = np.random.default_rng(3)
    real = rng.standard_normal((2, 1, 3, 4, 4))
    singular = rng.standard_normal((3, 3))
    singular[2] = singular[0] * 2.0
    complex_ = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))

    def program():
        made = []
        for matrices in (real, singular, complex_, real[0, 0, 0].astype(np.float32)):
            x = xp.asarray(matrices)
            made += [xp.linalg.det(x), *xp.linalg.slogdet(x)]
        return made
    for made in program():
        ops, pending = set(), [made._node]
        while pending:
            node = pending.pop()
            ops.add(node.op)
            pending.extend(node.operands)
        assert "lu_determinant" in ops and not ops & {"log", "reduce", "multiply"}, ops
    baseline, fused = _both_tiers(monkeypatch, program)
    _same_bits(baseline, fused)
    for got, matrices in zip(baseline[0::3], (real, singular, complex_)):
        np.testing.assert_allclose(got, np.linalg.det(matrices), rtol=1e-10, atol=1e-12)


def test_identity_matrices_of_every_size_and_diagonal_run_on_one_kernel_each(op_by_op):
    """``eye`` is one op (``hlo/ops/generators.py``), of run-time sizes: matrices of new
    shapes load or compile nothing once a square and an oblong one have run, whatever
    their diagonal, and hold NumPy's values."""
    def calls(rows: int, cols: int) -> None:
        for k in (0, 1, -2, cols + 3):
            got = np.asarray(xp.eye(rows, cols, k=k, dtype=xp.float32) + 0.5)
            assert got.tobytes() == (np.eye(rows, cols, k=k, dtype=np.float32) + np.float32(0.5)).tobytes()
    calls(3, 3)
    calls(4, 6)
    before = xp.cache_info()
    for n in range(5, 12):
        calls(n, n)
        calls(n, n + 2)
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_a_structure_met_at_new_sizes_binds_its_sequence_once_made(op_by_op):
    """The sequence of a structure's op kernels is made once, shape-generic, and bound for
    each graph's sizes (no op kernel looked up again, no sequence made again)."""
    from plaidarray.trace import baseline

    data = np.random.default_rng(2).standard_normal(2000)
    x = xp.asarray(data)
    for n in (90, 100):  # the first read's graph holds the scalars it made: a structure of its own
        float(xp.mean(x[:n]) + xp.std(x[:n]))
    plans = dict(baseline._PLANS)
    bound = dict(baseline._BOUND)
    for n in range(101, 400, 7):
        value = float(xp.mean(x[:n]) + xp.std(x[:n]))  # outside the assert, which keeps its operands alive
        assert value == pytest.approx(np.mean(data[:n]) + np.std(data[:n]), rel=1e-12)
    assert baseline._PLANS.keys() == plans.keys()
    assert baseline._BOUND == bound


@pytest.mark.parametrize("tall", [True, False])
def test_qr_and_svd_of_matrices_of_one_orientation_compile_once_for_every_shape(op_by_op, tall):
    """QR (reduced and complete), SVD (reduced, full, values) and the pseudo-inverse of
    matrices with more rows than columns, or fewer, take run-time sizes: the orientation
    (``tall``) orders them, so matrices of new shapes of that orientation compile nothing."""
    rng = np.random.default_rng(4)

    def calls(rows: int, cols: int) -> None:
        m = rng.standard_normal((rows, cols) if tall else (cols, rows))
        a = xp.asarray(m)
        for mode in ("reduced", "complete"):
            q, r = (np.asarray(v) for v in xp.linalg.qr(a, mode=mode))
            want_q, want_r = np.linalg.qr(m, mode=mode)
            assert q.shape == want_q.shape and r.shape == want_r.shape
            np.testing.assert_allclose(np.abs(r), np.abs(want_r), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(q @ r, m, rtol=1e-9, atol=1e-12)
        for full in (False, True):
            u, s, vh = (np.asarray(v) for v in xp.linalg.svd(a, full_matrices=full))
            want_u, want_s, want_vh = np.linalg.svd(m, full_matrices=full)
            assert (u.shape, s.shape, vh.shape) == (want_u.shape, want_s.shape, want_vh.shape)
            np.testing.assert_allclose(s, want_s, rtol=1e-9)
            k = len(s)
            np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], m, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.asarray(xp.linalg.svdvals(a)), np.linalg.svd(m, compute_uv=False), rtol=1e-9)
        np.testing.assert_allclose(np.asarray(xp.linalg.pinv(a)), np.linalg.pinv(m), rtol=1e-8, atol=1e-12)
    calls(5, 3)
    before = xp.cache_info()
    for rows, cols in ((6, 3), (9, 4), (12, 7), (7, 6)):
        calls(rows, cols)
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_square_operands_share_the_kernels_of_any_shape(op_by_op):
    """Sizes equal by chance stay apart where the shape rule does not tie them (a
    product's free and contracted dimensions, a scan's or a sort's axes): a square
    matrix's product, running sum and sort, met first in a graph of their own, run on the
    kernels that matrices of other shapes made."""
    rng = np.random.default_rng(6)
    ops = [lambda x: x @ x.T, lambda x: xp.tensordot(x, x, axes=2), lambda x: xp.vecdot(x, x),
           lambda x: xp.cumulative_sum(x, axis=0), lambda x: xp.argsort(x, axis=1)]
    for f in ops:
        np.asarray(f(xp.asarray(rng.standard_normal((3, 4)))))
    for doubled in (xp.asarray(rng.standard_normal((2, 3))) * 2.0, xp.asarray(rng.standard_normal(5)) * 2.0,
                    xp.asarray(0.5) * 2.0, xp.asarray(np.ones((2, 3), np.int64)) + 1):
        np.asarray(doubled)  # the kernels of the scalar operations below
    before = xp.cache_info()
    for n in (4, 6):
        a = rng.standard_normal((n, n))
        x = xp.asarray(a)
        # each op in a graph of another structure than above (its plan is made anew)
        np.testing.assert_allclose(np.asarray((x @ x.T) * 2.0), (a @ a.T) * 2.0, rtol=1e-12)
        assert float(xp.tensordot(x, x, axes=2) * 2.0) == pytest.approx(np.sum(a * a) * 2.0, rel=1e-12)
        np.testing.assert_allclose(np.asarray(xp.vecdot(x, x) * 2.0), np.sum(a * a, axis=-1) * 2.0, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(xp.cumulative_sum(x, axis=0) * 2.0), np.cumsum(a, axis=0) * 2.0,
                                   rtol=1e-12)
        np.testing.assert_array_equal(np.asarray(xp.argsort(x, axis=1) + 1), np.argsort(a, axis=1, kind="stable") + 1)
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_an_operand_passed_twice_runs_on_the_kernel_of_two(op_by_op):
    """The same array as two operands of one op (``where(m, m, n)``, ``searchsorted(s, s)``,
    ``take(p, p)``, ``p[p]`` of a matrix of indices): NumPy's values, on the kernels that
    distinct operands made (each pattern of repeats compiled a kernel of its own, and a
    matrix indexing itself raised while its kernel was planned)."""
    rng = np.random.default_rng(8)
    mask, other = rng.random(6) > 0.5, rng.random(6) > 0.5
    values = np.sort(rng.integers(0, 5, 7)).astype(np.float64)
    order = rng.permutation(6)
    table = np.array([[1, 0, 2], [2, 1, 0], [0, 0, 1]], np.int64)
    m, o, s, p, t = (xp.asarray(a) for a in (mask, other, values, order, table))
    for distinct in (xp.where(m, o, False), xp.where(m, o, ~o), xp.searchsorted(s, s * 1.0),
                     xp.searchsorted(s, s * 1.0, side="right"),
                     xp.take(p, p + 0), xp.take_along_axis(t, t + 0, axis=0), t[t + 0]):
        np.asarray(distinct)  # the kernels of distinct operands
    before = xp.cache_info()
    np.testing.assert_array_equal(np.asarray(xp.where(m, m, False)), np.where(mask, mask, False))
    np.testing.assert_array_equal(np.asarray(xp.where(m, o, m)), np.where(mask, other, mask))
    np.testing.assert_array_equal(np.asarray(xp.searchsorted(s, s)), np.searchsorted(values, values))
    np.testing.assert_array_equal(np.asarray(xp.searchsorted(s, s, side="right")),
                                  np.searchsorted(values, values, side="right"))
    np.testing.assert_array_equal(np.asarray(xp.take(p, p)), order[order])
    np.testing.assert_array_equal(np.asarray(p[p]), order[order])
    np.testing.assert_array_equal(np.asarray(xp.take_along_axis(t, t, axis=0)), np.take_along_axis(table, table, 0))
    np.testing.assert_array_equal(np.asarray(t[t]), table[table])
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_slices_of_every_step_share_one_kernel(op_by_op):
    """A step above 1 is a run-time value of a slice's kernel (and the interior above 1 of
    the pad that writes an exported view back): slices of computed arrays with steps 4, 5
    and 7 run on the kernels that steps 2 and 3 made, their values NumPy's."""
    rng = np.random.default_rng(7)

    def calls(step: int, n: int) -> None:
        v, m = rng.standard_normal(n), rng.standard_normal((4, n))
        np.testing.assert_array_equal(np.asarray((xp.asarray(v) * 2.0)[1::step]), (v * 2.0)[1::step])
        np.testing.assert_array_equal(np.asarray((xp.asarray(m) * 2.0)[:, ::step]), (m * 2.0)[:, ::step])
    for step in (2, 3):
        calls(step, 20)
    before = xp.cache_info()
    for step, n in ((4, 20), (5, 23), (7, 30)):
        calls(step, n)
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_a_join_of_one_row_and_of_many_is_one_kernel(op_by_op):
    """An operand's length along the axis a concatenation joins may be 1 in its kernel
    (``dynamic.joined_only``): a window that drops its first element and takes one more,
    and a border of one row around a block, run on the kernels of longer pieces."""
    rng = np.random.default_rng(8)

    def calls(piece: int, n: int) -> None:
        v, m = rng.standard_normal(n), rng.standard_normal((n, 4))
        x, a = xp.asarray(v), xp.asarray(m)
        np.testing.assert_array_equal(np.asarray(xp.concat([x[piece:], x[:piece]]) * 2.0),
                                      np.concatenate([v[piece:], v[:piece]]) * 2.0)
        np.testing.assert_array_equal(np.asarray(xp.concat([a[:piece], a, a[-piece:]]) * 2.0),
                                      np.concatenate([m[:piece], m, m[-piece:]]) * 2.0)
    calls(3, 9)
    x, a = xp.asarray(rng.standard_normal(9)), xp.asarray(rng.standard_normal((9, 4)))
    for one_row in (x[:1], x[-1:], a[:1], a[-1:]):  # the kernels of one-row slices
        np.asarray(one_row * 2.0)
    before = xp.cache_info()
    for piece, n in ((1, 9), (1, 12), (2, 7)):
        calls(piece, n)
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


UNIT_OPS = {
    "sum over rows": (lambda x: xp.sum(x, axis=0), lambda a: np.sum(a, axis=0)),
    "sum over columns": (lambda x: xp.sum(x, axis=1), lambda a: np.sum(a, axis=1)),
    "maximum kept": (lambda x: xp.max(x, axis=1, keepdims=True), lambda a: np.max(a, axis=1, keepdims=True)),
    "transpose": (lambda x: (x * 2.0).T, lambda a: (a * 2.0).T),
    "scan over rows": (lambda x: xp.cumulative_sum(x, axis=0), lambda a: np.cumsum(a, axis=0)),
    "scan over columns": (lambda x: xp.cumulative_sum(x, axis=1), lambda a: np.cumsum(a, axis=1)),
    "sort": (lambda x: xp.sort(x, axis=0), lambda a: np.sort(a, axis=0)),
    "argsort": (lambda x: xp.argsort(x, axis=1), lambda a: np.argsort(a, axis=1, kind="stable")),
    "flip": (lambda x: xp.flip(x * 2.0, axis=0), lambda a: np.flip(a * 2.0, axis=0)),
    "columns taken": (lambda x: xp.take(x, xp.asarray(np.array([0, 0])), axis=1), lambda a: a[:, [0, 0]]),
    "join": (lambda x: xp.concat([x, x * 2.0], axis=1), lambda a: np.concatenate([a, a * 2.0], axis=1)),
}


@pytest.mark.parametrize("op", sorted(UNIT_OPS))
def test_unit_dimensions_run_on_the_kernels_of_any_size(op_by_op, op):
    """A size of 1 is a run-time value of an op kernel whose code never asks whether a
    size is 1 (``codegen.lowering.unit_sizes``, ``dynamic.unit_positions``): a row, a
    column and a 1 x 1 matrix run on the kernel a (4, 5) matrix made, with NumPy's
    values (a sum's up to its order of summation)."""
    ours, numpy = UNIT_OPS[op]
    rng = np.random.default_rng(9)
    np.asarray(ours(xp.asarray(rng.standard_normal((4, 5)))))
    before = xp.cache_info()
    for shape in ((1, 5), (4, 1), (1, 1), (1, 7)):
        a = rng.standard_normal(shape)
        np.testing.assert_allclose(np.asarray(ours(xp.asarray(a))), numpy(a), rtol=1e-14, atol=0)
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


MERGED = {
    "a rank-5 broadcast of attention scores": (
        lambda q, k: xp.sum(q[:, :, :, None, :] * k[:, :, None, :, :], axis=-1),
        lambda q, k: np.sum(q[:, :, :, None, :] * k[:, :, None, :, :], axis=-1)),
    "a batch's channel means broadcast back": (
        lambda q, k: q - xp.mean(q, axis=(2, 3), keepdims=True),
        lambda q, k: q - np.mean(q, axis=(2, 3), keepdims=True)),
    "a transpose of the last two axes": (
        lambda q, k: xp.permute_dims(q * 2.0, (0, 1, 3, 2)), lambda q, k: np.transpose(q * 2.0, (0, 1, 3, 2))),
    "a join along the third axis": (lambda q, k: xp.concat([q * 2.0, k * 2.0], axis=2),
                                    lambda q, k: np.concatenate([q * 2.0, k * 2.0], axis=2)),
    "a sort and a scan along the last axis": (
        lambda q, k: xp.cumulative_sum(xp.take_along_axis(q, xp.argsort(q, axis=-1), axis=-1), axis=-1),
        lambda q, k: np.cumsum(np.take_along_axis(q, np.argsort(q, axis=-1, kind="stable"), axis=-1), axis=-1)),
    "a batch of rows times a matrix": (lambda q, k: q @ k[0, 0].T, lambda q, k: q @ k[0, 0].T),
    "a take along the third axis": (lambda q, k: xp.take(q, xp.asarray(np.array([4, 0, 2])), axis=2),
                                    lambda q, k: np.take(q, [4, 0, 2], axis=2)),
    "a dot product over a 3-d batch": (lambda q, k: xp.vecdot(q, k), lambda q, k: np.sum(q * k, axis=-1)),
    "a reversal of the first two and the last axes": (lambda q, k: xp.flip(q * 2.0, axis=(0, 1, 3)),
                                                      lambda q, k: np.flip(q * 2.0, axis=(0, 1, 3))),
    "a search for a 4-d array of values": (lambda q, k: xp.searchsorted(xp.sort(k[0, 0, 0]), q),
                                           lambda q, k: np.searchsorted(np.sort(k[0, 0, 0]), q)),
    "a block of unit axes tiled": (lambda q, k: xp.tile((q * 2.0)[:1, :, :1, :1], (2, 1, 3, 5)),
                                   lambda q, k: np.tile((q * 2.0)[:1, :, :1, :1], (2, 1, 3, 5))),
}


@pytest.mark.parametrize("case", sorted(MERGED))
def test_runs_of_axes_an_op_treats_alike_merge_into_the_kernels_of_lower_ranks(op_by_op, case):
    """An op kernel runs at its shapes with runs of adjacent axes that it treats alike
    merged (``hlo.opdef.Merge``): rank-4 and rank-5 broadcasts, reductions, transposes,
    joins, sorts, scans, takes and products run on kernels that rank-3 and rank-2 ones
    made, with NumPy's values; reversals, searches, and broadcasts whose unit axes join
    the runs beside them, too."""
    ours, numpy = MERGED[case]
    rng = np.random.default_rng(11)
    three = rng.standard_normal((6, 4, 3))
    for warm in (lambda x: xp.broadcast_to(x[:, None, :, :] * 2.0, (6, 5, 4, 3)),  # (6, 1, 4, 3) to (6, 5, 4, 3)
                 lambda x: xp.broadcast_to(x[:, :, None, :] * 2.0, (6, 4, 5, 3)),
                 lambda x: xp.sum(x * x, axis=-1), lambda x: xp.mean(x, axis=(1, 2)),
                 lambda x: x - xp.mean(x, axis=(1, 2), keepdims=True), lambda x: xp.permute_dims(x * 2.0, (0, 2, 1)),
                 lambda x: xp.concat([x * 2.0, x * 3.0], axis=1), lambda x: xp.argsort(x[0], axis=-1),
                 lambda x: xp.take_along_axis(x[0], xp.argsort(x[0], axis=-1), axis=-1),
                 lambda x: xp.cumulative_sum(x[0] * 2.0, axis=-1), lambda x: (x[0] * 2.0) @ (x[1].T * 1.0),
                 lambda x: xp.take(x, xp.asarray(np.array([1, 0])), axis=1), lambda x: xp.vecdot(x, x * 2.0),
                 lambda x: xp.flip(x * 2.0, axis=(0, 2)), lambda x: xp.broadcast_to(x[0, :, :1] * 2.0, (5, 4, 3)),
                 lambda x: xp.searchsorted(xp.sort(x[0, 0]), x[1, 1]),
                 lambda x: xp.broadcast_to(x[0, 0] * 2.0, (5, 3))):  # a tile's first axis (one at a time)
        np.asarray(warm(xp.asarray(three)))
    q, k = rng.standard_normal((2, 3, 5, 4)), rng.standard_normal((2, 3, 5, 4))
    before = xp.cache_info()
    np.testing.assert_allclose(np.asarray(ours(xp.asarray(q), xp.asarray(k))), numpy(q, k), rtol=1e-13)
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_empty_sizes_run_on_the_kernels_of_any_size_or_on_none(op_by_op):
    """A size of 0 is a run-time value where the op's code takes it (``empty_fits``): a sum
    of nothing selected, a join with an empty part, a slice of nothing run on the kernels
    that other lengths made. An op whose results are all empty (a take of no indices, a
    sort of nothing) runs no code at all (``Compiler.without_compiling``)."""
    rng = np.random.default_rng(12)
    data = rng.standard_normal(9)
    x = xp.asarray(data)
    for warm in (lambda: xp.sum(x[x > 0.0]), lambda: xp.concat([x[:2], x[3:5]]) * 2.0, lambda: xp.sort(x[:4]),
                 lambda: xp.take(x, xp.asarray(np.array([2, 0]))), lambda: xp.argsort(x[:5]), lambda: xp.max(x[2:7])):
        np.asarray(warm())
    before = xp.cache_info()
    assert float(xp.sum(x[x > 9.0])) == 0.0
    np.testing.assert_array_equal(np.asarray(xp.concat([x[:0], x[3:3]]) * 2.0), np.zeros(0))
    np.testing.assert_array_equal(np.asarray(xp.concat([x[:0], x[3:5]]) * 2.0), data[3:5] * 2.0)
    assert np.asarray(xp.sort(x[:0])).shape == (0,) and np.asarray(xp.argsort(x[:0])).dtype == np.int64
    assert np.asarray(xp.take(x, xp.asarray(np.array([], np.int64)))).shape == (0,)
    assert float(xp.sum(x[:1])) == data[0]
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_a_broadcast_keeps_its_operands_unit_dimensions_in_its_code(op_by_op):
    """An operand's unit dimension broadcasts, so a broadcast's kernel keeps it: a row
    broadcast to a matrix is not the kernel of a matrix broadcast to itself, and a
    product of a row keeps its matrix-vector code (``Compiler.nonunit_ops``). A new axis
    of length 1 is a run-time size like any other."""
    rng = np.random.default_rng(10)
    m, row, column = rng.standard_normal((3, 4)), rng.standard_normal((1, 4)), rng.standard_normal((4, 1))
    v = rng.standard_normal(4)
    np.asarray(xp.broadcast_to(xp.asarray(v) * 2.0, (3, 4)))
    before = xp.cache_info()
    np.testing.assert_array_equal(np.asarray(xp.broadcast_to(xp.asarray(v) * 2.0, (1, 4))), (v * 2.0)[None])
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits
    np.testing.assert_array_equal(np.asarray(xp.broadcast_to(xp.asarray(m) * 2.0, (3, 4))), m * 2.0)
    np.testing.assert_array_equal(np.asarray(xp.broadcast_to(xp.asarray(row) * 2.0, (3, 4))),
                                  np.broadcast_to(row * 2.0, (3, 4)))
    np.testing.assert_allclose(np.asarray(xp.asarray(m) @ xp.asarray(m).T), m @ m.T, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(xp.asarray(row) @ xp.asarray(column)), row @ column, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(xp.asarray(column) @ xp.asarray(row)), column @ row, rtol=1e-13)


def test_batched_decompositions_at_sizes_equal_by_chance_share_the_kernels_of_any_batch(op_by_op):
    """A custom call declares its ties (its operands' batch dimensions, a square matrix's
    rows and columns, a solve's right-hand rows) and a tuple's element none: a batch of
    one, a batch as long as its matrices are wide and a single right-hand column run on
    the kernels of a batch of two 4 x 4 matrices with three right-hand columns."""
    rng = np.random.default_rng(12)

    def spd(k: int, n: int) -> np.ndarray:
        a = rng.standard_normal((k, n, n))
        return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(n)

    def calls(k: int, n: int, m: int) -> None:
        a, b = spd(k, n), rng.standard_normal((k, n, m))
        x = xp.asarray(a)
        np.testing.assert_allclose(np.asarray(xp.linalg.solve(x, xp.asarray(b))), np.linalg.solve(a, b), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(xp.linalg.det(x)), np.linalg.det(a), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(xp.linalg.eigvalsh(x)), np.linalg.eigvalsh(a), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(xp.linalg.cholesky(x)), np.linalg.cholesky(a), rtol=1e-10)
    calls(2, 4, 3)
    before = xp.cache_info()
    for k, n, m in ((1, 3, 1), (3, 3, 3), (2, 5, 1), (4, 4, 4)):
        calls(k, n, m)
    after = xp.cache_info()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_a_custom_call_ordering_its_sizes_wrongly_is_an_error():
    """``tall`` says how ``qr``'s and ``svd``'s sizes order; a wrong one is refused at the
    shape rule, not computed with the wrong workspace."""
    from plaidarray.hlo.opdef import OPS
    from plaidarray.hlo.shape import Shape

    with pytest.raises(ValueError, match="tall=True for a matrix of shape"):
        OPS["custom_call"].infer([Shape((3, 5), np.dtype(np.float64))], {"target": "qr", "mode": "reduced", "tall": True})


def test_op_kernels_met_at_new_sizes_bind_the_templates_found_before(op_by_op, monkeypatch):
    """A graph met again at new sizes (one with a transform, whose plan its binding makes
    per length) ties nothing anew: its structure's sequence is bound, and an op's
    template is found by the op's structure and which of its sizes are equal, 0 or 1
    (``baseline._size_classes``); the results as NumPy's."""
    from plaidarray.trace import baseline, dynamic

    data = np.random.default_rng(5).standard_normal(600)
    x = xp.asarray(data)

    def step(n: int) -> float:
        return float(xp.sum(xp.abs(xp.fft.rfft(x[:n] * 2.0))))

    for n in (64, 66):
        step(n)
    tied = []
    original = dynamic.ties
    monkeypatch.setattr(dynamic, "ties", lambda *args: tied.append(args) or original(*args))
    for n in range(68, 200, 6):
        value = step(n)
        assert value == pytest.approx(np.sum(np.abs(np.fft.rfft(data[:n] * 2.0))), rel=1e-12)
    assert not tied
    reshaped = ((((5, 7), np.dtype(np.float64)), ("reshape", (("dims", (35,)),), (0,), (35,), np.dtype(np.float64))))
    assert baseline._size_classes(reshaped, (5, 1, 7, 5, 0, 7, 2)) == (2, 1, 3, 2, 0, 3, 4)
    added = (((5, 7), np.dtype(np.float64)), ((5, 7), np.dtype(np.float64)),
             ("add", (), (0, 1), (5, 7), np.dtype(np.float64)))
    assert baseline._size_classes(added, (5, 1, 7, 5, 0, 7, 2)) == (2, 1, 2, 2, 0, 2, 2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 3, 5]), min_size=4, max_size=4), st.sampled_from(["product", "sum", "transpose",
                                                                                          "window", "broadcast"]))
def test_an_op_kernels_pattern_depends_on_its_size_classes_alone(dims, family):
    """An op that declares the sizes its shape rule ties (``OpDef.dim_ties``) has one
    pattern of run-time sizes for all sizes of one ``baseline._size_classes`` (which are 0
    or 1), whichever happen to be equal: the classes key its kernel in the installation's
    catalogue and in a process. Its pattern at sizes met here equals its pattern at sizes
    of the same classes all distinct (primes past those drawn)."""
    from plaidarray.backend import registry
    from plaidarray.trace import baseline, dynamic

    compiler = registry.current().compiler
    distinct = iter((7, 11, 13, 17, 19, 23, 29, 31))
    other = [d if d < 2 else next(distinct) for d in dims]

    def pattern(d):
        a, b, c, e = d
        graph = {"product": lambda: xp.ones((a, b)) @ xp.ones((b, c)),
                 "sum": lambda: xp.sum(xp.ones((a, b, c)), axis=1),
                 "transpose": lambda: xp.permute_dims(xp.ones((a, b, c)), (2, 0, 1)),
                 "window": lambda: xp.ones((a + e, b))[:a],
                 "broadcast": lambda: xp.broadcast_to(xp.ones((1, b)), (a, b)) * xp.ones((a, b))}[family]()
        walked = walk_pending([graph._node])
        rows = walked[0][0]
        i = len(rows) - 1
        while rows[i][0] not in ("dot_general", "reduce", "transpose", "dynamic_slice", "multiply", "slice"):
            i -= 1
        signature, attrs, _ = baseline._signature(rows, rows[i], walked[3][i].attrs, frozenset())
        single, _ = baseline._single_op(signature, walked[3][i].shape)
        _, values, sizes = dynamic.generalize(single)
        tied = dynamic.ties(single, values)
        made = dynamic.Pattern.every_size(values, sizes, tied, dynamic.unit_positions(single, sizes, tied, compiler),
                                          dynamic.empty_fits(single, values, compiler))
        return baseline._size_classes(single, values), made.code_key

    here, there = pattern(dims), pattern(other)
    assert here[0] == there[0]
    assert here[1] == there[1]


def test_sizes_and_bounds_enter_graphs_as_run_time_values(op_by_op):
    """``unique_counts``, ``nonzero`` and a gather at two index arrays compute with their
    operands' sizes as run-time values (``graph.size_operand``), and ``arange``,
    ``linspace`` and ``fftfreq`` take their bounds and spacing so, not as constants of
    the graph: batches of new sizes and bounds plan no new structure after the first ones."""
    from plaidarray.trace import baseline

    rng = np.random.default_rng(6)
    data, grid = rng.integers(0, 50, 2000), rng.standard_normal((40, 40))
    x, m = xp.asarray(data), xp.asarray(grid)

    def batch(n: int) -> None:
        values, counts = xp.unique_counts(x[n:3 * n])
        want_values, want_counts = np.unique(data[n:3 * n], return_counts=True)
        np.testing.assert_array_equal(np.asarray(values), want_values)
        np.testing.assert_array_equal(np.asarray(counts), want_counts)
        rows, cols = xp.nonzero(m[:n, :n] > 0.5)
        want_rows, want_cols = np.nonzero(grid[:n, :n] > 0.5)
        np.testing.assert_array_equal(np.asarray(rows), want_rows)
        np.testing.assert_array_equal(np.asarray(cols), want_cols)
        i, j = rng.integers(0, n, 7), rng.integers(0, n, 7)
        np.testing.assert_array_equal(np.asarray(m[:n, :n][xp.asarray(i), xp.asarray(j)]), grid[:n, :n][i, j])
        np.testing.assert_array_equal(np.asarray(xp.arange(n, n + 10)), np.arange(n, n + 10))
        np.testing.assert_array_equal(np.asarray(xp.arange(0.5 * n, n + 5.0, 0.5)), np.arange(0.5 * n, n + 5.0, 0.5))
        np.testing.assert_allclose(np.asarray(xp.linspace(0.5 * n, n, 9)), np.linspace(0.5 * n, n, 9), rtol=1e-15)
        np.testing.assert_allclose(np.asarray(xp.fft.fftfreq(12, d=1.0 / n)), np.fft.fftfreq(12, d=1.0 / n),
                                   rtol=1e-15)

    for n in (20, 21, 22):  # a structure's first graph runs on its ops' kernels bound one by one, its next plans it
        batch(n)
    structures = len(baseline._PLANS)
    for n in range(23, 40, 3):
        batch(n)
    assert len(baseline._PLANS) == structures


def test_the_compile_log_names_each_op_kernel_compiled(op_by_op, monkeypatch, tmp_path, caplog):
    """Where no kernel of an op's signature is installed or cached, the op-by-op tier
    compiles one, and the compile log (``PLAIDARRAY_EXPLAIN_COMPILES``) says which op, on
    what, and why: one line per compile, as ``cache_info`` counts them; a kernel met
    again compiles and logs nothing."""
    import logging

    caplog.set_level(logging.INFO, logger="plaidarray.compiles")
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "0")
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    before = xp.cache_info().compiles
    for n in (5, 7):
        float(xp.sum(xp.sin(xp.asarray(np.ones(n)))))
    compiled = xp.cache_info().compiles - before
    messages = [r.getMessage() for r in caplog.records]
    assert compiled >= 2 and len(messages) == compiled
    assert any("op kernel sin(float64[" in m and "no kernel of its signature installed or cached" in m
               for m in messages)
    assert any("op kernel reduce(" in m for m in messages)


def test_new_graphs_of_ops_met_before_reuse_their_signatures_and_forms(op_by_op, monkeypatch):
    """A new graph's ops met before in other graphs, at the same sizes, take their
    signatures (``baseline._SIGNATURES``) and their sizes in a merge (``sequence._FORMS``)
    as worked out before, and at other sizes work them out again: the results are
    NumPy's at every size, and new graphs of the same ops at the same sizes work nothing
    out."""
    from plaidarray.backend.llvm_cpu import sequence

    rng = np.random.default_rng(8)
    data = {n: rng.standard_normal((n, 3)) for n in (4, 7, 12)}
    counts = {"signature": 0, "form": 0, "assembled": 0}
    for module, name, counted in ((baseline, "_merged_signature", "signature"), (sequence, "_form", "form"),
                                  (baseline, "_templates_at_sizes", "assembled")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _f=original, _c=counted: counts.__setitem__(_c, counts[_c] + 1)
                            or _f(*a))
    functions = [(xp.sin, np.sin), (xp.exp, np.exp), (xp.abs, np.abs)]

    def read(n: int, pair: tuple[int, int]) -> None:
        (f, g), (h, k) = functions[pair[0]], functions[pair[1]]
        m = xp.asarray(data[n])
        got = float(xp.sum(f(m) * 2.0 - h(m) - xp.mean(m, axis=0)))
        want = float(np.sum(g(data[n]) * 2.0 - k(data[n]) - np.mean(data[n], axis=0)))
        assert got == pytest.approx(want, rel=1e-12), (n, pair)

    for n in data:
        for pair in ((0, 1), (1, 2), (2, 0)):
            read(n, pair)
    before = dict(counts)
    assert before["signature"] and before["form"]
    for n in data:
        for pair in ((1, 0), (2, 1), (0, 2)):  # new graphs of the ops met at these sizes
            read(n, pair)
    assert counts["assembled"] > before["assembled"]
    assert (counts["signature"], counts["form"]) == (before["signature"], before["form"])
