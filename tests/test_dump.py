"""PLAIDARRAY_DUMP writes the stages of every compiled module and their timings."""

from __future__ import annotations

import numpy as np

import plaidarray as xp
from plaidarray.backend.llvm_cpu.stages import STAGES
from plaidarray.hlo.passes import HLO_PASSES


def test_dump_writes_hlo_linalg_llvm_and_assembly(tmp_path, monkeypatch):
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
