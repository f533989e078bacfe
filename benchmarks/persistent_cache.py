"""Compile vs load from the persistent compile cache, each in a fresh process.

For each workload, a process with an empty cache directory compiles it ("cold"); then
processes sharing a directory that a first process filled load the object code
instead ("warm"). Each process times its first call, from arguments to values, after
the start-up of LLVM and of SciPy's BLAS (which both pay alike: importing scipy.linalg
takes about 0.3 s, at a process's first float matrix product). Medians of several processes are printed as a
Markdown table.

    python benchmarks/persistent_cache.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm_cpu import blas_lapack, jit

def softplus_layer(x, w, b):
    y = xp.matmul(x, w) + b
    return xp.mean(xp.log1p(xp.exp(-xp.abs(y))) + xp.maximum(y, 0.0), axis=1)

def control_flow(x, w, b):
    h = xp.fori_loop(0, 8, lambda i, h: xp.tanh(h @ w + b), x @ w)
    return xp.cond(xp.sum(h) > 0, lambda v: xp.exp(v), lambda v: -v, h)

rng = np.random.default_rng(0)
args = [xp.asarray(rng.standard_normal(s).astype(np.float32)) for s in ((256, 64), (64, 64), (64,))]
fun = xp.jit({"softplus_layer": softplus_layer, "control_flow": control_flow}[sys.argv[1]])
jit.host_target()
xp.backends()  # entry-point discovery, paid alike by both
blas_lapack.routine_address("blas_sgemm")  # SciPy's import, paid alike by both
start = time.perf_counter()
np.asarray(fun(*args))
seconds = time.perf_counter() - start
info = xp.cache_info()
print(json.dumps({"seconds": seconds, "compiles": info.compiles, "disk_hits": info.disk_hits}))
"""

WORKLOADS = ("softplus_layer", "control_flow")


def run_child(workload: str, cache_dir: str) -> dict:
    env = {**os.environ, "PLAIDARRAY_CACHE_DIR": cache_dir,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    env.pop("PLAIDARRAY_DUMP", None)
    done = subprocess.run([sys.executable, "-c", CHILD, workload], env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(workload: str, runs: int) -> tuple[float, float]:
    """Median seconds to the first result: compiling (cold) and loading (warm)."""
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as shared:
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as empty:
                result = run_child(workload, empty)
                assert result["compiles"] >= 1 and result["disk_hits"] == 0, result
                cold.append(result["seconds"])
        run_child(workload, shared)  # fills the shared directory
        for _ in range(runs):
            result = run_child(workload, shared)
            assert result["compiles"] == 0 and result["disk_hits"] >= 1, result
            warm.append(result["seconds"])
    return statistics.median(cold), statistics.median(warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="processes per measurement (default 5)")
    args = parser.parse_args()
    print("| workload | compile (cold process) | load from disk (warm process) | speed-up |")
    print("|---|---:|---:|---:|")
    for workload in WORKLOADS:
        cold, warm = measure(workload, args.runs)
        print(f"| {workload} | {cold * 1e3:.1f} ms | {warm * 1e3:.1f} ms | {cold / warm:.0f}x |")
    print(f"\nmedians of {args.runs} processes each; time from the first call to its values, after the "
          "start-up of LLVM and SciPy's BLAS")


if __name__ == "__main__":
    main()
