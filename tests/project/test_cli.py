"""The ``plaidarray`` command: demo, info, cache, bench and dump."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from jit_helpers import child_env, isolated_cache_dir  # noqa: F401  (autouse: tests write a temporary cache)

import plaidarray as xp
from plaidarray.backend.llvm import object_cache
from plaidarray.backend.llvm_cpu import targets
from plaidarray.cli import main
from plaidarray.hlo.passes import HLO_PASSES


def test_info_shows_versions_target_backends_and_cache(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PLAIDARRAY_CACHE_MAX_BYTES", raising=False)
    object_cache.store("some-entry", b"\0" * 3000, {})
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    target = targets.host()
    assert f"plaidarray {xp.__version__}" in out and "llvmlite" in out and "LLVM" in out and "xdsl" in out
    assert f"target: {target.triple}, cpu {target.cpu}" in out
    assert f"features: {target.features}" in out
    assert "backend llvm-cpu: priority 100 (in use)" in out and "backend reference: priority 0" in out
    assert f"compile cache: {tmp_path}" in out and "1 entry, 3.0 KiB of 2.0 GiB" in out


def test_cache_info_and_clear(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    for key in ("a", "b"):
        object_cache.store(key, b"code", {})
    assert main(["cache", "info"]) == 0
    assert "2 entries" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert f"removed 2 entries from {tmp_path}" in capsys.readouterr().out
    assert object_cache.entries() == []


def test_bench_without_a_harness_says_so_and_fails(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert main(["bench"]) == 1
    assert "no benchmark harness here" in capsys.readouterr().err


def test_bench_runs_the_harness_with_its_arguments(monkeypatch, tmp_path):
    harness = tmp_path / "benchmarks"
    harness.mkdir()
    (harness / "__init__.py").write_text("")
    (harness / "__main__.py").write_text("import sys\nopen('ran.txt', 'w').write(' '.join(sys.argv[1:]))\n"
                                         "sys.exit(3)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--quick", "matmul"]) == 3  # the harness's exit status
    assert (tmp_path / "ran.txt").read_text() == "--quick matmul"


def test_dump_writes_every_stage_of_every_compiled_module(capsys, tmp_path, fused):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import sys
        import numpy as np
        import plaidarray as xp
        assert sys.argv[1:] == ["--size", "19"]
        x = xp.asarray(np.arange(19.0))
        print(float(xp.sum(xp.fori_loop(0, 3, lambda i, v: v * 2.0, x))))
        print(float(xp.max(xp.sqrt(x))))
    """))
    out = tmp_path / "dumps"
    assert main(["dump", str(script), "--out", str(out), "--size", "19"]) == 0
    printed = capsys.readouterr().out
    assert "2 compiled modules dumped to" in printed
    modules = sorted(p.name.removesuffix(".hlo.txt") for p in out.glob("*.hlo.txt"))
    assert len(modules) == 2
    passes = " ".join(sorted(f"hlo.{i}-{name}.txt" for i, (name, _) in enumerate(HLO_PASSES)))
    for module in modules:
        assert f"{module}: {passes} hlo.txt linalg.mlir ll loops.mlir lower-fft.txt s timings.txt" in printed
    assert any("scf.while" in p.read_text() for p in out.glob("*.linalg.mlir"))


def test_python_dash_m_and_argument_errors(tmp_path):
    done = subprocess.run([sys.executable, "-m", "plaidarray", "cache", "info"], env=child_env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and f"compile cache: {tmp_path}" in done.stdout
    with pytest.raises(SystemExit):
        main(["info", "--unknown"])


def test_demo(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "HloModule" in out and "matches NumPy: True" in out
