"""Tiered code generation (``backend/llvm_cpu/tiering.py``): a kernel's first-tier code is
replaced by full code once executables running it have run long enough, both compute the
same bits, the disk cache ends up with the full code, and a program exiting with upgrades
queued ends cleanly."""

from __future__ import annotations

import time

import numpy as np
import pytest
from jit_helpers import run_child, start_child

import plaidarray as xp

from plaidarray.backend.cache import EXECUTABLES
from plaidarray.backend.llvm_cpu import kernels as kernels_module
from plaidarray.backend.llvm_cpu import stockham, tiering

_CASES = {
    "sum": lambda x, m: xp.sum(x),
    "row sums": lambda x, m: xp.sum(m, axis=1),
    "exp * 2 + x": lambda x, m: xp.exp(x) * 2.0 + x,
    "max abs": lambda x, m: xp.max(xp.abs(x)),
    "matrix product": lambda x, m: m @ m.T,
    "cumulative sum": lambda x, m: xp.cumulative_sum(x),
    "argmin": lambda x, m: xp.argmin(m, axis=0),
    "sin + cos * x": lambda x, m: xp.sin(x) + xp.cos(x) * x,
    "integer arithmetic": lambda x, m: xp.astype(x * 1e3, xp.int64) * 7 // 3 % 11,
    "mask and divide": lambda x, m: xp.where(x > 0.5, 1.0 / x, -(x ** 3)),
    # Few elements: first-tier code is scalar and calls the functions without their vector
    # variants, emitted at O0 as it is (math_library.scalar_emit_level).
    "scalar math functions": lambda x, m: _scalar_math(xp.asarray(np.linspace(-2.5, 2.5, 500))),
}


def _scalar_math(s):
    return xp.tanh(s) + xp.log1p(xp.abs(s)) * xp.sin(s) + xp.exp(s) * xp.cos(s) - xp.expm1(s) * xp.log(xp.abs(s) + 1.0)


def _kernels() -> list:
    """The kernels of the cached executables, each once (a shape-generic executable and
    its bindings share theirs)."""
    return list({id(k): k for e in EXECUTABLES._lru.values() for k in e.kernels}.values())


def _both_tiers(fn) -> tuple[list, list[str]]:
    """``fn()``'s values from a new executable's first-tier code (its first and second
    runs) and from its full code, and the LLVM IR of the kernels made."""
    xp.clear_cache()
    first = np.asarray(fn())
    kernels = _kernels()
    assert kernels and all(k.upgrade is not None for k in kernels)  # first tier
    irs = [k.upgrade.ir for k in kernels]
    second = np.asarray(fn())
    kernels_module.finish_upgrades()
    assert all(k.upgrade is None and k._retired for k in kernels)
    return [first, second, np.asarray(fn())], irs


@pytest.mark.skipif(not tiering.first_tier(3), reason="tiers are off (PLAIDARRAY_TIER_UP_MS=0)")
@pytest.mark.parametrize("name", _CASES)
def test_full_code_replaces_first_tier_code_and_computes_the_same_bits(name, monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", "0")  # compiled here, not loaded from an earlier test
    xp.set_backend("llvm-cpu")
    rng = np.random.default_rng(7)
    x = xp.asarray(rng.standard_normal(10_007))
    m = xp.asarray(rng.standard_normal((97, 101)))
    (first, second, full), _ = _both_tiers(lambda: _CASES[name](x, m))
    np.testing.assert_array_equal(second, first)
    np.testing.assert_array_equal(full, first)


#: Transforms through each kind of Stockham routine: radix stages, mixed radices, a prime
#: radix's loops (89), Bluestein's chirps (1009), the real kinds' packing.
_FFT_CASES = {
    "fft 1024": (1024, lambda z, r: xp.fft.fft(z)),
    "ifft 3*5*7*16": (1680, lambda z, r: xp.fft.ifft(z)),
    "fft 1009": (1009, lambda z, r: xp.fft.fft(z)),
    "rfft 178": (178, lambda z, r: xp.fft.rfft(r)),
    "irfft 600": (600, lambda z, r: xp.fft.irfft(z[:301], n=600)),
    "fft 65537, large": (65537, lambda z, r: xp.fft.fft(z)),
}


@pytest.mark.skipif(not tiering.first_tier(3), reason="tiers are off (PLAIDARRAY_TIER_UP_MS=0)")
@pytest.mark.parametrize("name", _FFT_CASES)
def test_transforms_skip_the_ir_pipeline_and_compute_the_full_codes_bits(name, monkeypatch):
    """The FFT routines' arithmetic has no fast-math flag (its multiply-adds are explicit
    ``llvm.fma``), so a transform's first tier skips the IR pipeline, which took most of
    its first call, at any size, and still computes what the full code computes."""
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", "0")
    xp.set_backend("llvm-cpu")
    n, fn = _FFT_CASES[name]
    rng = np.random.default_rng(n)
    z = xp.asarray(rng.standard_normal(n) + 1j * rng.standard_normal(n))
    r = xp.asarray(rng.standard_normal(n))
    (first, second, full), irs = _both_tiers(lambda: fn(z, r))
    transforms = [ir for ir in irs if stockham.PREFIX in ir]
    assert transforms and {tiering.ir_level(ir, 3, n) for ir in transforms} == {tiering.SCALAR_IR_LEVEL}
    np.testing.assert_array_equal(second, first)
    np.testing.assert_array_equal(full, first)


_PROGRAM = """
import json, numpy as np, plaidarray as xp
from plaidarray.backend.llvm import object_cache, storing
from plaidarray.backend.llvm_cpu import tiering
from plaidarray.backend.cache import EXECUTABLES
x = xp.asarray(np.arange(1000.0))
values = [float(xp.sum(xp.sqrt(x) * 3.0)) for _ in range(RUNS)]
tiering.drain()
storing.drain()
tiers = [k.upgrade is None for k in {id(k): k for e in EXECUTABLES._lru.values() for k in e.kernels}.values()]
kernels = [object_cache.load(p.stem)[1] for p, _ in object_cache.entries() if not p.stem.startswith("library-")]
irs = sorted("ir" in meta for meta in kernels if "symbol" in meta)
print(json.dumps({"values": values, "full": tiers, "from_disk": xp.cache_info().disk_hits, "irs": irs}))
"""


@pytest.mark.skipif(not tiering.first_tier(3), reason="tiers are off (PLAIDARRAY_TIER_UP_MS=0)")
def test_small_exact_kernels_skip_the_o3_ir_pipeline_in_the_first_tier(monkeypatch):
    """Small kernels skip the IR pipeline in the first tier, reductions too (their partial
    sums are written in the IR, which defines every bit); large kernels stay vectorised,
    and so do kernels calling the vector math library from a smaller size on."""
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", "0")
    xp.set_backend("llvm-cpu")
    x = xp.asarray(np.linspace(0.0, 1.0, 1000))
    sizes = (1000, tiering.SCALAR_MAX_ELEMENTS_WITH_MATH + 1, tiering.SCALAR_MAX_ELEMENTS + 1)
    levels = {}
    for name, fn in {"exp": lambda: xp.exp(x) * 2.0 + x, "sum": lambda: xp.sum(x * x)}.items():
        xp.clear_cache()
        np.asarray(fn())
        (kernel,) = _kernels()
        levels[name] = [tiering.ir_level(kernel.upgrade.ir, 3, n) for n in sizes]
    scalar = tiering.SCALAR_IR_LEVEL
    assert levels == {"exp": [scalar, 3, 3], "sum": [scalar, scalar, 3]}


#: A first-tier time every run exceeds: full code is asked for after the first run.
_AT_ONCE = "0.000001"


@pytest.mark.skipif(not tiering.first_tier(3), reason="tiers are off (PLAIDARRAY_TIER_UP_MS=0)")
def test_kernels_tier_up_once_their_runs_have_taken_the_first_tiers_time(monkeypatch):
    """A kernel running microseconds a call keeps its first-tier code however often it
    runs; one running long gets its full code, asked for only once its runs took the time."""
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", "0")
    monkeypatch.setattr(tiering, "TIER_UP_AFTER_SECONDS", 0.05)
    xp.set_backend("llvm-cpu")
    xp.clear_cache()
    small = xp.asarray(np.ones(8))
    for _ in range(200):
        float(xp.sum(small * 3.0))
    tiering.drain()
    assert all(k.upgrade is not None and not k.upgrade.submitted for k in _kernels())

    xp.clear_cache()
    large = xp.asarray(np.linspace(0.0, 1.0, 2_000_000))
    running, kernel = 0.0, None
    for _ in range(10_000):
        start = time.perf_counter()
        np.asarray(xp.exp(large) * 2.0)
        running += time.perf_counter() - start
        (kernel,) = _kernels()
        if kernel.upgrade is None or kernel.upgrade.submitted:
            break
    assert kernel is not None and (kernel.upgrade is None or kernel.upgrade.submitted)
    assert running >= 0.05  # the kernels' time is part of the runs' time
    tiering.drain()
    assert kernel.upgrade is None


def test_the_disk_cache_ends_up_with_the_full_code(tmp_path):
    once = run_child(_PROGRAM.replace("RUNS", "1"), tmp_path)
    assert once["full"] == [False] and once["irs"] == [True]  # first tier stored, with its IR
    twice = run_child(_PROGRAM.replace("RUNS", "2"), tmp_path, PLAIDARRAY_TIER_UP_MS=_AT_ONCE)
    assert twice["from_disk"] == 1  # loaded the first-tier entry...
    assert twice["full"] == [True] and twice["irs"] == [False]  # ...and rewrote it with full code
    again = run_child(_PROGRAM.replace("RUNS", "1"), tmp_path)
    assert again["from_disk"] == 1 and again["full"] == [True]  # full code from the start
    assert once["values"][0] == twice["values"][1] == again["values"][0]


def test_no_first_tier_when_tiers_are_off(tmp_path):
    result = run_child(_PROGRAM.replace("RUNS", "1"), tmp_path, PLAIDARRAY_TIER_UP_MS="0")
    assert result["full"] == [True] and result["irs"] == [False]


def test_a_program_exiting_with_upgrades_queued_ends_cleanly(tmp_path):
    code = """
import plaidarray as xp
for n in range(1, 40):
    x = xp.ones(n)
    float(xp.sum(x * 2.0)); float(xp.sum(x * 2.0))  # each kernel asks for its full code
"""
    child = start_child(code, tmp_path, PLAIDARRAY_TIER_UP_MS=_AT_ONCE)
    _, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert err == ""


def test_a_bad_setting_is_refused(tmp_path):
    child = start_child("import plaidarray as xp; float(xp.sum(xp.ones(3)))", tmp_path, PLAIDARRAY_TIER_UP_MS="soon")
    _, err = child.communicate(timeout=120)
    assert child.returncode != 0 and "PLAIDARRAY_TIER_UP_MS" in err
