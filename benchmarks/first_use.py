"""An op's first use in a fresh process: what a script pays for each op it has not run yet.

Each process (empty ``PLAIDARRAY_CACHE_DIR``, so only the kernels built at installation
serve it) reads one value first, so that the process's own first read (its first kernel,
the sources digest) is not counted, then applies each of 20 unary functions to a float64
and to a float32 array of 100 elements and reads each result alone: 40 ops met for the
first time, each planned, loaded (its executable's entry, its kernel's shared object, a
vector math function where it calls one) and run. Prints the median over processes of the
time per op, and each process's; no compile may happen (the count is checked).

    python -m benchmarks.first_use [--repeat 10]
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
import json, time
import numpy as np
import plaidarray as xp
x = xp.asarray(np.linspace(0.1, 1.0, 100))
y = xp.asarray(np.linspace(0.1, 1.0, 100).astype(np.float32))
float(xp.sum(x))
functions = [xp.exp, xp.log, xp.sin, xp.cos, xp.tanh, xp.sqrt, xp.abs, xp.negative, xp.floor, xp.ceil, xp.expm1,
             xp.log1p, xp.sinh, xp.cosh, xp.atan, xp.asin, xp.square, xp.round, xp.sign, xp.trunc]
start = time.perf_counter()
for a in (x, y):
    for f in functions:
        np.asarray(f(a))
seconds = time.perf_counter() - start
print(json.dumps({"per_op": seconds / (2 * len(functions)), "compiles": xp.cache_info().compiles}))
"""


def run_child() -> dict:
    with tempfile.TemporaryDirectory() as cache_dir:
        env = {**os.environ, "PLAIDARRAY_CACHE_DIR": cache_dir,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.first_use", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="fresh processes (default 10)")
    args = parser.parse_args()
    results = [run_child() for _ in range(args.repeat)]
    compiled = [r["compiles"] for r in results if r["compiles"]]
    per_op = sorted(r["per_op"] * 1e6 for r in results)
    print(f"an op's first use: median {statistics.median(per_op):.0f} us over {len(per_op)} fresh processes "
          f"({', '.join(f'{t:.0f}' for t in per_op)})")
    if compiled:
        print(f"warning: {len(compiled)} processes compiled (the installed kernels do not serve these sources)")


if __name__ == "__main__":
    main()
