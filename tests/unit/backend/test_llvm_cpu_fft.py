"""llvm-cpu's FFT: its private ops (``llvm_cpu.stockham_fft``, ``llvm_cpu.stockham_real_fft``)
and the lowering that makes them (``backend/llvm_cpu/fft.py``). The transforms themselves,
on every backend, are ``tests/api/test_fft.py``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plaidarray as xp
import plaidarray.fft as xfft


#: (rows, n) of the real kinds' routine: one stage (n/2 = 8, 3, 17, 1), several, a looped
#: prime radix (n/2 = 74 = 2 * 37), one row per call (3 rows) and several (4, 8).
REAL_ROUTINE_CASES = [(1, 16), (3, 1024), (4, 1024), (8, 6), (2, 2), (5, 12), (4, 34), (2, 148), (1, 4096)]


def _real_routine(rows, n, sign):
    """``stockham_real_fft`` on a parameter of (rows, n) signals (sign -1) or (rows,
    n / 2 + 1) terms (sign 1), and an input."""
    from plaidarray.backend.llvm_cpu import fft_plan
    from plaidarray.backend.llvm_cpu.fft import STOCKHAM_REAL_FFT
    from plaidarray.hlo import Instruction
    from plaidarray.hlo.literal import Literal
    from plaidarray.hlo.shape import Shape

    rng = np.random.default_rng(n)
    if sign < 0:
        a = rng.standard_normal((rows, n))
    else:  # arbitrary imaginary parts of the first and last terms: they are ignored
        a = rng.standard_normal((rows, n // 2 + 1)) + 1j * rng.standard_normal((rows, n // 2 + 1))
    shape = Shape(a.shape, a.dtype)
    x = Instruction("parameter", (), {"number": 0, "shape": shape}, shape)
    table = Instruction.make("constant", (), value=Literal(fft_plan.real_twiddles(n, sign)))
    return x, Instruction.make(STOCKHAM_REAL_FFT, (x, table), sign=sign), a


@pytest.mark.parametrize("sign", [-1, 1])
@pytest.mark.parametrize(("rows", "n"), REAL_ROUTINE_CASES)
def test_the_real_kinds_routine(rows, n, sign):
    """``stockham_real_fft`` (llvm-cpu's RFFT and IRFFT of even n: the half-length
    transform and the step around it in one routine): the shape rule, the reference
    evaluation and the compiled routine, each against NumPy's rfft / irfft."""
    from plaidarray.backend.llvm_cpu.compiler import CpuCompiler
    from plaidarray.backend.reference import Evaluator
    from plaidarray.hlo import Computation, Module

    x, y, a = _real_routine(rows, n, sign)
    expected = np.fft.rfft(a) if sign < 0 else np.fft.irfft(a, n)
    assert (y.shape.dims, y.shape.dtype) == (expected.shape, expected.dtype)
    module = Module("real", Computation("main", [x], [y]))
    for run in (Evaluator(module).run, CpuCompiler().compile(module).run):
        (got,) = run([a])
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-14 * n * np.max(np.abs(expected)))
        if sign < 0:  # the zero-frequency and Nyquist terms are real, exactly
            assert not np.any(got[:, [0, -1]].imag)


@pytest.mark.parametrize(("shape", "dtype", "sign", "table_of"), [
    ((2, 7), np.float64, -1, 8),  # odd n
    ((2, 8), np.complex128, -1, 8),  # RFFT of complex rows
    ((2, 5), np.float64, 1, 8),  # IRFFT of real rows
    ((2, 1), np.complex128, 1, 2),  # one term: no even n
    ((2, 8), np.float64, -1, 16),  # the table of another n
    ((2, 2 * 131), np.float64, -1, 2 * 131),  # n / 2 = 131: no kernel length
    ((2, 8), np.float64, 0, 8),
])
def test_bad_operands_of_the_real_kinds_routine(shape, dtype, sign, table_of):
    from plaidarray.backend.llvm_cpu import fft_plan
    from plaidarray.backend.llvm_cpu.fft import STOCKHAM_REAL_FFT
    from plaidarray.hlo import Instruction
    from plaidarray.hlo.literal import Literal
    from plaidarray.hlo.shape import Shape

    x = Instruction("parameter", (), {"number": 0, "shape": Shape(shape, np.dtype(dtype))}, Shape(shape, np.dtype(dtype)))
    table = Instruction.make("constant", (), value=Literal(np.zeros(fft_plan.real_table_size(table_of), np.complex128)))
    with pytest.raises(ValueError, match="llvm_cpu.stockham_real_fft: "):
        Instruction.make(STOCKHAM_REAL_FFT, (x, table), sign=sign)


def test_an_inner_axis_is_transformed_without_transposes(tmp_path, monkeypatch, fused):
    """plaidarray.fft moves the axis last and back; llvm-cpu's lowering reads the strided
    lines instead, and the two transposes cancel."""
    xp.set_backend("llvm-cpu")
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))
    xp.clear_cache()
    a = np.random.default_rng(0).standard_normal((64, 32)) + 0j
    np.testing.assert_allclose(np.asarray(xfft.fft(xp.asarray(a), axis=0)), np.fft.fft(a, axis=0), atol=1e-12)
    final = max(tmp_path.glob("*.hlo.*-*.txt"), key=lambda p: int(p.name.split(".hlo.")[1].split("-")[0]))
    hlo = final.read_text()
    assert "llvm_cpu.stockham_fft" in hlo and "axis=0" in hlo
    assert "transpose" not in hlo


def test_the_fft_stages_rebuild_only_a_graph_with_an_fft_and_leave_their_input():
    """llvm-cpu's FFT lowering and the expansion return a graph without an fft as it is
    (the expansion also the lowering's result: the kernel op is not expanded), and the
    lowering lowers an fft without changing an instruction of its input."""
    from plaidarray.backend.llvm_cpu.fft import STOCKHAM_FFT, lower_fft
    from plaidarray.backend.llvm_cpu.lowerings import PLATFORM
    from plaidarray.codegen.expand import expand
    from plaidarray.hlo import Computation, Instruction
    from plaidarray.hlo.shape import Shape

    shape = Shape((4, 8), np.dtype(np.complex128))
    x = Instruction("parameter", (), {"number": 0, "shape": shape}, shape)
    plain = Computation("main", [x], [Instruction.make("exp", [x])])
    assert lower_fft(plain) is plain and expand(plain, PLATFORM) is plain
    spectrum = Instruction.make("fft", [Instruction.make("exp", [x])], fft_type="FFT")
    transformed = Computation("main", [x], [Instruction.make("multiply", [spectrum, spectrum])])
    before = [(i.opcode, dict(i.attrs), [id(o) for o in i.operands]) for i in transformed.instructions]
    lowered = lower_fft(transformed)
    assert STOCKHAM_FFT in [i.opcode for i in lowered.instructions]
    assert "fft" not in [i.opcode for i in lowered.instructions] and expand(lowered, PLATFORM) is lowered
    assert [(i.opcode, dict(i.attrs), [id(o) for o in i.operands]) for i in transformed.instructions] == before


# --- the FFT library: any length on routines built once (fft_library.py) ----------------

def test_a_plan_holds_the_stages_and_the_table_of_code_made_for_its_length():
    """``fft_plan.plan``: a header of int64 words (its length in complex elements, the
    stages, where the real kinds' factors start) and the twiddle table that per-length
    code binds, unchanged."""
    from plaidarray.backend.llvm_cpu import fft_plan

    for n, sign, real in [(12, -1, False), (1000, 1, False), (254, -1, True), (7, 1, False), (2, 1, True)]:
        plan = fft_plan.plan(n, sign, real)
        words = plan.view(np.int64)
        header, count = int(words[0]), int(words[1])
        points = n // 2 if real else n
        stages = fft_plan.stages(points)
        assert count == len(stages) and int(words[2]) == fft_plan.table_size(points)
        assert [tuple(words[4 + 4 * i:8 + 4 * i]) for i in range(count)] == \
            [(stage.radix, stage.m, stage.s, stage.table) for stage in stages]
        table = fft_plan.real_twiddles(n, sign) if real else fft_plan.twiddles(n, sign)
        assert plan[header:].tobytes() == table.tobytes()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5000), min_size=1, max_size=4), st.sampled_from([-1, 1]), st.integers(0, 2**32 - 1))
def test_unit_of_an_array_of_lengths_is_bit_for_bit_a_call_per_length(lengths, sign, seed):
    """``unit`` with each element's own n (a real plan's two tables in one call) computes
    the bits of one call per n, which every lowering's twiddles come from."""
    from plaidarray.hlo.ops.fft import unit

    rng = np.random.default_rng(seed)
    turns = [rng.integers(0, n, 1 + int(rng.integers(0, 40))) for n in lengths]
    together = unit(np.concatenate(turns), np.repeat(lengths, [len(t) for t in turns]), sign)
    apart = np.concatenate([unit(t, n, sign) for t, n in zip(turns, lengths)])
    assert together.tobytes() == apart.tobytes()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.sampled_from([-1, 1]))
def test_a_real_table_is_the_half_length_table_then_the_split_factors(half, sign):
    """``real_twiddles``: the n/2-point table, then ``t[k]`` (``-i w^k`` forward, ``i w^-k``
    backward, ``w = unit(k, n)``) and ``i t[k]``, bit for bit as each made alone."""
    from plaidarray.backend.llvm_cpu import fft_plan
    from plaidarray.hlo.ops.fft import unit

    n = 2 * half
    w = unit(np.arange(half), n, sign)
    factors = w.imag - 1j * w.real if sign < 0 else -w.imag + 1j * w.real
    expected = np.concatenate([fft_plan.twiddles(half, sign), factors, 1j * factors])
    assert fft_plan.real_twiddles(n, sign).tobytes() == expected.tobytes()


def test_a_table_made_after_other_tables_of_its_length_is_the_one_made_alone():
    """A length's cosines and sines serve both directions and are kept (``fft_plan._parts``,
    by length and kind): a table made after the other direction's, or the other kind's of
    the same n, is bit for bit ``unit``'s for its own sign and turns."""
    from plaidarray.backend.llvm_cpu import fft_plan
    from plaidarray.hlo.ops.fft import unit

    def alone(n, sign, real):
        if real:
            w = unit(np.arange(n // 2), n, sign)
            factors = w.imag - 1j * w.real if sign < 0 else -w.imag + 1j * w.real
            return np.concatenate([alone(n // 2, sign, False), factors, 1j * factors])
        turns = fft_plan._turns(fft_plan.stages(n))
        return unit(turns % n, n, sign) if turns is not None else np.ones(1, np.complex128)

    for n in (240, 1000, 98, 4):
        for order in [(-1, False), (1, False), (-1, True), (1, True)], [(1, True), (1, False), (-1, True), (-1, False)]:
            fft_plan._PARTS.clear()
            for sign, real in order:
                made = fft_plan.real_twiddles(n, sign) if real else fft_plan.twiddles(n, sign)
                assert made.tobytes() == alone(n, sign, real).tobytes(), (n, sign, real)


@pytest.mark.parametrize("n", [131, 179, 257])
def test_bluesteins_spectra_of_both_signs_are_conjugates_and_the_exact_dft(n, monkeypatch):
    """The response's spectrum of sign 1 is the conjugate of sign -1's, bit for bit, in
    either order made, and each is the response's DFT over m points (divided by m) to
    within an ulp or so, against the sum taken term by term in long double. Kept
    spectra stay within their bound (the newest always kept)."""
    from plaidarray.backend.llvm_cpu.fft_plan import bluestein_length
    from plaidarray.hlo.ops import fft

    m = bluestein_length(n)
    for first in (-1, 1):
        fft._SPECTRA.clear()
        made = {sign: fft.bluestein_tables(n, m, sign) for sign in (first, -first)}
        assert made[1][1].tobytes() == np.conj(made[-1][1]).tobytes()
    j = np.arange(m)
    for sign in (-1, 1):
        chirp, spectrum = made[sign]
        response = np.zeros(m, np.clongdouble)
        response[:n] = np.conj(chirp)
        response[m - n + 1:] = np.conj(chirp[1:])[::-1]
        angles = -4 * fft._QUARTER_TURN * (np.outer(j, j) % m).astype(np.longdouble) / m  # turns reduced exactly
        exact = (response[None, :] * (np.cos(angles) + 1j * np.sin(angles))).sum(axis=1) / m
        assert np.abs(spectrum - exact).max() <= 4e-16 * np.abs(exact).max()
    monkeypatch.setattr(fft, "KEPT_SPECTRUM_BYTES", 3 * 16 * m)
    fft._SPECTRA.clear()
    for k in range(5):
        fft.bluestein_tables(n + 2 * k, bluestein_length(n + 2 * k), -1)
    assert 1 <= len(fft._SPECTRA) <= 3 and (n + 8, bluestein_length(n + 8)) in fft._SPECTRA
    monkeypatch.setattr(fft, "KEPT_SPECTRA", 2)
    fft.bluestein_tables(n + 10, bluestein_length(n + 10), 1)
    assert list(fft._SPECTRA) == [(n + 8, bluestein_length(n + 8)), (n + 10, bluestein_length(n + 10))]
    xp.clear_cache()
    assert not fft._SPECTRA


@pytest.mark.parametrize(("kind", "n", "served"), [("FFT", 1000, True), ("IFFT", 127 * 2, True), ("FFT", 131, True),
                                                   ("RFFT", 262, True), ("IRFFT", 262, True), ("RFFT", 254, True),
                                                   ("IRFFT", 127, True), ("IRFFT", 263, True), ("RFFT", 3 * 131, True),
                                                   ("FFT", 1, False)])
def test_the_lengths_the_library_serves(kind, n, served):
    from plaidarray.backend.llvm_cpu import fft_library

    assert fft_library.served(kind, n) is served


@pytest.mark.parametrize("attrs", [{"sign": 0, "real": False, "length": 8}, {"sign": -1, "real": 1, "length": 8},
                                   {"sign": -1, "real": False, "length": 9}, {"sign": -1, "real": False},
                                   {"sign": -1, "real": False, "odd": True, "length": 8},
                                   {"sign": 1, "real": True, "odd": True, "length": 14}])
def test_bad_attributes_of_the_library_op(attrs):
    from plaidarray.backend.llvm_cpu.fft_library import FFT_ROWS
    from plaidarray.hlo import Instruction
    from plaidarray.hlo.shape import Shape

    shape = Shape((3, 8), np.dtype(np.complex128))
    x = Instruction("parameter", (), {"number": 0, "shape": shape}, shape)
    plan = Instruction("parameter", (), {"number": 1, "shape": Shape((40,), shape.dtype)}, Shape((40,), shape.dtype))
    with pytest.raises(ValueError, match="llvm_cpu.fft_rows: "):
        Instruction.make(FFT_ROWS, (x, plan), **attrs)


def test_ffts_of_new_lengths_compile_nothing_once_the_library_has_its_templates(monkeypatch):
    """Op by op, an FFT of any length binds a template compiled once per kind and dtype
    (and parity of the real kinds, and Bluestein's algorithm or not): 43 signals of new
    lengths (primes above 127 among them, and twice such primes, whose real kinds
    transform their halves by Bluestein's), each through RFFT and IRFFT and transformed
    both ways, compile nothing and load nothing. The templates come from the kernels
    built at installation where they are there (else compiled by the first signals: ~30 s
    of this test alone), as a user's first script gets them."""
    from plaidarray.trace import hot

    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "1")
    xp.set_backend("llvm-cpu")
    try:
        rng = np.random.default_rng(5)

        def transforms(n: int) -> None:
            x = rng.standard_normal(n)
            spectrum = xfft.rfft(xp.asarray(x))
            np.testing.assert_allclose(np.asarray(spectrum), np.fft.rfft(x), atol=1e-12 * n)
            np.testing.assert_allclose(np.asarray(xfft.irfft(spectrum, n=n)), x, atol=1e-12 * n)
            z = xp.asarray(x + 1j)
            np.testing.assert_allclose(np.asarray(xfft.ifft(xfft.fft(z))), x + 1j, atol=1e-12 * n)

        for n in (20, 21, 103, 131, 2 * 131):  # the templates, and the kernel of the scale 1 / n * n of some n
            transforms(n)
        before = xp.cache_info()
        for n in [*range(100, 140), 2 * 139 + 1, 3 * 137, 2 * 149]:
            transforms(n)
        after = xp.cache_info()
        assert (after.compiles, after.disk_hits) == (before.compiles, before.disk_hits)
    finally:
        xp.set_backend(None)


@pytest.mark.parametrize(("kind", "n"), [("FFT", 12), ("IFFT", 74), ("FFT", 131), ("IFFT", 263), ("RFFT", 30),
                                         ("IRFFT", 30), ("IRFFT", 27), ("IRFFT", 131)])
def test_the_library_op_against_numpy(kind, n):
    """``llvm_cpu.fft_rows`` (the FFT library's transform of rows): its reference
    evaluation and its compiled routine, for static sizes, each against NumPy, on a plan
    made for n (Bluestein's above 127)."""
    from plaidarray.backend.llvm_cpu import fft_plan
    from plaidarray.backend.llvm_cpu.compiler import CpuCompiler
    from plaidarray.backend.llvm_cpu.fft_library import FFT_ROWS
    from plaidarray.backend.reference import Evaluator
    from plaidarray.hlo import Computation, Instruction, Module
    from plaidarray.hlo.shape import Shape

    rng = np.random.default_rng(n)
    real, sign = kind in ("RFFT", "IRFFT"), -1 if kind in ("FFT", "RFFT") else 1
    odd, bluestein = real and n % 2 == 1, fft_plan.radices(n // 2 if real and n % 2 == 0 else n) is None
    columns = n // 2 + 1 if kind == "IRFFT" else n
    a = rng.standard_normal((3, columns))
    if kind != "RFFT":
        a = a + 1j * rng.standard_normal((3, columns))
    plan = fft_plan.bluestein_plan(n, sign) if bluestein else fft_plan.plan(n, sign, real and not odd)
    x, p = (Instruction("parameter", (), {"number": i, "shape": Shape(v.shape, v.dtype)}, Shape(v.shape, v.dtype))
            for i, v in enumerate((a, plan)))
    length = n // 2 + 1 if kind == "RFFT" else n
    y = Instruction.make(FFT_ROWS, (x, p), sign=sign, real=real, odd=odd, bluestein=bluestein, length=length)
    expected = {"FFT": lambda: np.fft.fft(a), "IFFT": lambda: np.fft.ifft(a) * n, "RFFT": lambda: np.fft.rfft(a),
                "IRFFT": lambda: np.fft.irfft(a, n)}[kind]()
    module = Module("rows", Computation("main", [x, p], [y]))
    for run in (Evaluator(module).run, CpuCompiler().compile(module).run):
        (got,) = run([a, plan])
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * n * np.max(np.abs(expected)))
