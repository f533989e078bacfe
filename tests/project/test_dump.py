"""PLAIDARRAY_DUMP writes the stages of every compiled module and their timings."""

from __future__ import annotations

import numpy as np

import plaidarray as xp
from plaidarray.backend.llvm_cpu.stages import STAGES
from plaidarray.hlo.passes import HLO_PASSES


def test_dump_writes_hlo_linalg_llvm_and_assembly(tmp_path, monkeypatch, fused):
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))
    xp.set_backend("llvm-cpu")
    try:
        # A shape no other test uses, so this module is compiled (not a cache hit).
        x = xp.asarray(np.arange(17 * 3, dtype=np.float32).reshape(17, 3))
        np.asarray(xp.max(xp.tanh(x) + 1.0, axis=1))
    finally:
        xp.set_backend(None)
    files = sorted(p.name for p in tmp_path.iterdir())
    stems = {f.split(".")[0] for f in files}
    assert len(stems) == 1
    stem = stems.pop()
    for suffix, marker in (("hlo.txt", "HloModule"), ("linalg.mlir", "linalg.generic"),
                           ("ll", "define void"), ("s", "\t.globl\tplaidk_")):
        text = (tmp_path / f"{stem}.{suffix}").read_text()
        assert marker in text, suffix
    assert "reduce" in (tmp_path / f"{stem}.hlo.txt").read_text()
    passes = [f.split(".")[2] for f in files if f.startswith(f"{stem}.hlo.") and f != f"{stem}.hlo.txt"]
    assert passes == [f"{i}-{name}" for i, (name, _) in enumerate(HLO_PASSES)]
    timings = dict(line.rsplit(None, 2)[:2] for line in (tmp_path / f"{stem}.timings.txt").read_text().splitlines())
    assert [name for name in timings if "/" not in name] == [*STAGES, "total"]
    stages = sum(float(v) for name, v in timings.items() if "/" not in name and name != "total")
    assert abs(stages - float(timings["total"])) < 0.01 and float(timings["total"]) > 0


def test_the_fft_lowering_is_a_stage_that_dumps_its_hlo(tmp_path, monkeypatch, fused):
    """llvm-cpu's FFT lowering is a declared stage before the expansion, timed and dumped
    like the others: its HLO has the backend's kernel op where the fft was (in fused code:
    op by op, an FFT runs on the FFT library's template)."""
    assert STAGES.index("lower-fft") < STAGES.index("expand")
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))
    xp.set_backend("llvm-cpu")
    xp.clear_cache()
    try:
        a = np.arange(3 * 40, dtype=np.complex128).reshape(3, 40)
        np.testing.assert_allclose(np.asarray(xp.fft.fft(xp.asarray(a))), np.fft.fft(a), atol=1e-9)
    finally:
        xp.set_backend(None)
    (lowered,) = tmp_path.glob("*.lower-fft.txt")
    text = lowered.read_text()
    assert "llvm_cpu.stockham_fft(" in text and " fft(" not in text
    timings = lowered.with_name(lowered.name.replace("lower-fft.txt", "timings.txt")).read_text()
    assert any(line.split()[0] == "lower-fft" for line in timings.splitlines())
