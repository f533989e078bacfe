"""What a compile costs, by stage, for graphs of 10 to 500 HLO instructions.

    python -m benchmarks.compile_cost [--sizes 10,30,100,300,500] [--runs 3]

Each graph is a jitted function of the given size in HLO instructions (as traced): a
chain of elementwise updates with a row normalisation (a reduction and its broadcast)
every eight steps and a column scaling every sixteen, on (64, 64) float64 arrays, so that
it fuses into several kernels.
Each (size, run) is a fresh process with an empty ``PLAIDARRAY_CACHE_DIR``, after the
start-up every process pays once (LLVM, a first tiny compile); it times tracing, and the
compile by stage (the llvm-cpu pipeline's own timings, ``backend/pipeline.py``).
Medians over runs; milliseconds, and microseconds per instruction.
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
from plaidarray.backend.llvm_cpu import stages

timings = {}
stages.dump_timings = lambda name, t: timings.update(t)
np.asarray(xp.sum(xp.asarray(np.ones(3)) * 2.0))  # start-up: LLVM, the first compile
timings.clear()
kernels_before = xp.cache_info().kernel_compiles

size = int(sys.argv[1])

def graph_of(steps):
    def graph(x, w):
        y = x
        for step in range(1, steps + 1):
            y = xp.tanh(y * w + x) if step % 2 else y * 0.5 + xp.exp(-y)
            if step % 8 == 0:
                y = y - xp.mean(y, axis=1, keepdims=True)
            if step % 16 == 0:
                y = y / (xp.max(xp.abs(y), axis=0) + 1.0)
        return y
    return graph

def instructions(steps):
    return len(xp.jit(graph_of(steps)).lower(x, w).module.entry.instructions)

x, w = np.random.default_rng(0).standard_normal((2, 64, 64))
steps = max(1, round(size * 16 / instructions(16)))  # about as many steps as make `size` instructions
start = time.perf_counter()
lowered = xp.jit(graph_of(steps)).lower(x, w)
traced = time.perf_counter()
lowered.compile()
done = time.perf_counter()
info = xp.cache_info()
print(json.dumps({"instructions": len(lowered.module.entry.instructions), "trace": traced - start,
                  "compile": done - traced, "kernels": info.kernel_compiles - kernels_before,
                  "stages": {k: v for k, v in timings.items() if "/" not in k}}))
"""


def _child(size: int) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run([sys.executable, "-c", CHILD, str(size)], capture_output=True, text=True, check=True,
                             cwd=REPO, env={**os.environ, "PLAIDARRAY_CACHE_DIR": cache}).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,30,100,300,500")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[int, list[dict]] = {size: [] for size in sizes}
    for _ in range(args.runs):  # rounds, so a noisy moment falls on every size
        for size in sizes:
            results[size].append(_child(size))
    names = list(results[sizes[0]][0]["stages"])
    print("| instructions | kernels | trace | compile | per instruction | "
          + " | ".join(names) + " |")
    print("|---:|---:|---:|---:|---:|" + "---:|" * len(names))
    for size in sizes:
        runs = results[size]
        n = runs[0]["instructions"]
        compile_s = statistics.median(r["compile"] for r in runs)
        stage_ms = [statistics.median(r["stages"].get(name, 0.0) for r in runs) * 1e3 for name in names]
        print(f"| {n} | {runs[0]['kernels']} | {statistics.median(r['trace'] for r in runs) * 1e3:.1f} ms | "
              f"{compile_s * 1e3:.1f} ms | {compile_s / n * 1e6:.0f} us | "
              + " | ".join(f"{ms:.1f}" for ms in stage_ms) + " |")


if __name__ == "__main__":
    main()
