"""llvm-nvptx's entries in the persistent cache (``llvm_nvptx/cache_entry.py``): a process
that meets a module an earlier process compiled for the GPU loads its PTX and layout
without the code generator, and computes the same bits; ptxas's cubins are kept by PTX,
architecture and ptxas binary."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jit_helpers import child_env
from plaidarray.backend.llvm import object_cache
from plaidarray.backend.llvm_nvptx import cache_entry, ptxas, toolkit

PROGRAM = """
import json, sys
import numpy as np
import plaidarray as xp
a = np.random.default_rng(5).standard_normal((6, 40))
x = xp.asarray(a, device="cuda")
values = [np.asarray(xp.sum(xp.exp(x) * 2.0, axis=1)), np.asarray(xp.argsort(x, axis=1)), np.asarray(x[:, ::7] * 3.0)]
info = xp.cache_info()
print(json.dumps({"bytes": [v.tobytes().hex() for v in values], "compiles": info.compiles,
                  "disk_hits": info.disk_hits, "codegen": "plaidarray.backend.llvm_nvptx.stages" in sys.modules,
                  "xdsl": "xdsl" in sys.modules}))
"""


def _run(cache):
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=600,
                          env=child_env(cache, PLAIDARRAY_SIMULATED_GPUS="1"))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_process_loads_the_gpu_executables_an_earlier_one_compiled(tmp_path):
    cold, warm = _run(tmp_path), _run(tmp_path)
    assert cold["compiles"] == 3 and cold["codegen"] and cold["disk_hits"] == 0
    assert (warm["compiles"], warm["disk_hits"]) == (0, 3)
    assert not warm["codegen"] and not warm["xdsl"]
    assert warm["bytes"] == cold["bytes"]


def test_a_damaged_gpu_entry_is_a_miss(tmp_path, monkeypatch):
    """An entry whose metadata does not describe its payload is not loaded."""
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    key = cache_entry.executable_key("damaged", "unit")
    object_cache.store(key, b"ptx", {"ptx_bytes": 99, "n_params": 0, "steps": [], "output_slots": [],
                                     "output_shapes": [], "temp_shapes": [], "constants": []})
    assert cache_entry.load_executable(key, None) is None  # type: ignore[arg-type]


@pytest.mark.skipif(toolkit.ptxas() is None, reason=f"ptxas is not installed ({toolkit.INSTALL_HINT})")
def test_ptxas_assembles_a_ptx_once(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    ptx = (".version 7.8\n.target sm_80\n.address_size 64\n"
           ".visible .entry k(.param .u64 p) { .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ret; }\n")
    first = ptxas.cubin(ptx, "sm_80")
    assert first[:4] == b"\x7fELF"
    monkeypatch.setattr(ptxas, "assemble", lambda *args: pytest.fail("assembled again"))
    assert ptxas.cubin(ptx, "sm_80") == first
    with pytest.raises(pytest.fail.Exception):
        ptxas.cubin(ptx.replace("ret;", "ret; "), "sm_80")  # other PTX: assembled
