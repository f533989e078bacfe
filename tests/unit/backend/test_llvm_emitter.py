"""Rules of the LLVM emitter (backend/llvm/emitter.py) with llvm-cpu's renderer, read off the LLVM IR
it writes for small graphs: calls into the C library follow each platform's complex ABI,
reductions sum in partial sums written out in the IR (no fast-math flags anywhere), and a
kernel's text, so its key, depends only on what it computes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hlo_builders import F32, F64, lowered, make, param

import plaidarray as xp
from plaidarray.backend.llvm_cpu.renderer import RENDERER


def _ir(params, outputs, platform=None) -> str:
    return "\n".join(s.ir for s in lowered(params, outputs, platform=platform).sources)


@pytest.mark.parametrize(("platform", "single", "double"), [
    ("x86_64-linux-gnu", '<2 x float> @"cexpf"(<2 x float>', '{double, double} @"cexp"(double %".1", double'),
    ("aarch64-linux-gnu", '{float, float} @"cexpf"([2 x float]', '{double, double} @"cexp"([2 x double]'),
    ("riscv64-linux-gnu", '{float, float} @"cexpf"(float %".1", float', '{double, double} @"cexp"(double %".1", double'),
])
def test_complex_library_calls_follow_the_platforms_c_abi(platform, single, double):
    for dtype, declaration in ((np.complex64, single), (np.complex128, double)):
        x = param(0, (4,), dtype)
        declared = [line for line in _ir([x], [make("exp", x)], platform).splitlines() if "declare" in line]
        assert any(declaration in line for line in declared), declared


@pytest.mark.parametrize(("dtype", "kind", "identity"), [
    (F64, "add", "0x8000000000000000"),  # -0.0: the sum of no elements of -0.0 stays -0.0
    (F32, "add", "0x8000000000000000"),  # float constants print as doubles in LLVM IR
    (F64, "multiply", "0x3ff0000000000000"),
])
def test_a_float_reduction_accumulates_in_partial_sums_without_fast_math(dtype, kind, identity):
    x = param(0, (1000,), dtype)
    text = _ir([x], [make("reduce", make("multiply", x, x), dimensions=(0,), kind=kind)])
    element = "double" if dtype == F64 else "float"
    partials = RENDERER.partials[dtype.itemsize * 8]
    assert f"alloca {element}, i64 {partials}" in text
    assert re.search(rf"store {element} {identity}", text)  # the identity, stored in a loop over the partials
    assert re.search(rf'icmp slt i64 %"[.0-9]+", {partials}\b', text)
    assert not re.search(r"\b(fast|reassoc|nnan|ninf|nsz|arcp|contract|afn)\b", text)


def test_a_short_static_reduction_combines_as_many_partials_as_it_needs():
    """A row of 3 elements goes into 4 partials, not 32: the partials past the row hold the
    identity, whose passes of the tree change no bit, so the sums are those of the full
    scheme, element i in partial i and the tree pairing partial j with j + 2, then j + 1."""
    x = param(0, (500, 3), F64)
    text = _ir([x], [make("reduce", x, dimensions=(1,), kind="add")])
    assert "alloca double, i64 4" in text and "alloca double, i64 32" not in text
    rows = np.random.default_rng(3).standard_normal((500, 3)) * 10.0 ** np.arange(-4, 5, 4)
    got = np.asarray(xp.sum(xp.asarray(rows), axis=1))
    want = [((0.0 + a) + c) + b for a, b, c in rows.tolist()]
    assert got.tobytes() == np.array(want).tobytes()


def test_a_kernels_text_and_key_do_not_depend_on_its_buffers_positions():
    x, y = param(0, (16,)), param(1, (8,))
    alone = lowered([x], [make("negate", x)]).sources
    second = lowered([y, x], [make("add", y, y), make("negate", x)]).sources  # loops of unequal extents
    assert len(alone) == 1 and len(second) == 2
    assert [s.buffers for s in second if s.key == alone[0].key] == [(1, 3)]  # x and the second output
    assert alone[0].buffers == (0, 1)


def test_loops_alike_but_for_their_run_time_sizes_are_emitted_once(monkeypatch):
    """A concatenation's copies in a shape-generic module are loops over the length of
    each operand, a run-time size of its own, into the result at an offset read as one
    value: beyond the first (offset 0) they are one kernel, emitted once, though each
    loop's chunking mark names its own size."""
    from plaidarray.backend.llvm import emitter
    from plaidarray.hlo import Instruction, Shape
    from plaidarray.hlo.symbolic import Sym

    emitted = []
    real = emitter._emit_kernel
    monkeypatch.setattr(emitter, "_EMITTED", emitter._EmittedKernels(1024, 2 << 20))
    monkeypatch.setattr(emitter, "_emit_kernel", lambda *args: emitted.append(real(*args)) or emitted[-1])
    xs = [param(k, (Sym(k, 40 + k), 3)) for k in range(5)]
    joined = Instruction("concatenate", xs, {"dimension": 0}, Shape((Sym(5, 300), 3), F32))
    sources = lowered(xs, [joined], n_symbols=6).sources
    assert len(sources) == 5 and len({s.key for s in sources}) == 2
    assert len(emitted) == 2
