"""Exported libraries against the JIT: run time at one thread, and a fresh process's first
result through the loader.

    PLAIDARRAY_NUM_THREADS=1 python -m benchmarks.aot [--repeat 15] [--starts 9]

Each workload is exported for the host (``plaidarray.export``) and loaded
(``plaidarray.aot.load``); its calls alternate with calls of the jitted function's
compiled executable on the same arguments, both single-threaded (exported code always
is; the JIT's thread count is ``PLAIDARRAY_NUM_THREADS``), and medians are shown with
their ratio. The loader's call includes its argument checks (a few microseconds), as a
Python user's does. Then ``--starts`` fresh processes each import ``plaidarray.aot``,
load one library and call it once: the median of that time after the import is the
"first result" figure. For BLAS rows, unset OPENBLAS_CORETYPE (it slows OpenBLAS here).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np

import plaidarray as xp
from benchmarks.__main__ import _median_seconds
from plaidarray import aot


def _softmax(x):
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    return e / xp.sum(e, axis=1, keepdims=True)


def _layer(x, w, b):
    return xp.tanh(x @ w + b)


def _chain(x, y):
    return xp.exp(x) * xp.sin(y) + x * 2.0


WORKLOADS: list[tuple[str, Callable, Callable[[np.random.Generator], tuple]]] = [
    ("exp(x)*sin(y)+x*2, 1e6 f32", _chain, lambda r: (r.standard_normal(10**6, np.float32),
                                                      r.standard_normal(10**6, np.float32))),
    ("softmax (1024,1024) f32", _softmax, lambda r: (r.standard_normal((1024, 1024), np.float32),)),
    ("sum of squares 4e6 f64", lambda x: xp.sum(x * x), lambda r: (r.standard_normal(4 * 10**6),)),
    ("tanh(x@W+b) (256x512x256) f32 [BLAS]", _layer,
     lambda r: (r.standard_normal((256, 512), np.float32), r.standard_normal((512, 256), np.float32) * 0.05,
                r.standard_normal(256, np.float32))),
    ("a+b, 8 elements f64 (call overhead)", lambda a, b: a + b, lambda r: (r.standard_normal(8), r.standard_normal(8))),
]

FIRST_RESULT = """
import sys, time
import numpy as np
start = time.perf_counter()
import plaidarray.aot as aot
imported = time.perf_counter()
artifact = aot.load(sys.argv[1])
x = np.full(1000, 0.5, np.float32)
artifact(x, x)
done = time.perf_counter()
print(imported - start, done - imported)
"""


def _to_numpy(compiled: Callable, arguments: list) -> np.ndarray:
    return np.asarray(compiled(*arguments))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15, help="calls per median")
    parser.add_argument("--starts", type=int, default=9, help="fresh processes for the first-result time")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| workload | JIT executable | exported (loader) | exported / JIT |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        for i, (name, fn, inputs) in enumerate(WORKLOADS):
            arguments = inputs(rng)
            artifact = aot.load(xp.export(fn, *arguments, out=Path(scratch) / f"w{i}", name=f"w{i}"))
            compiled = xp.jit(fn).lower(*arguments).compile()
            device = [xp.asarray(a) for a in arguments]
            run_jit = functools.partial(_to_numpy, compiled, device)
            run_exported = functools.partial(artifact, *arguments)
            jit_times, aot_times = [], []
            for _ in range(3):  # interleaved rounds: a noisy moment falls on both
                jit_times.append(_median_seconds(run_jit, args.repeat))
                aot_times.append(_median_seconds(run_exported, args.repeat))
            jit_s, aot_s = statistics.median(jit_times), statistics.median(aot_times)
            print(f"| {name} | {jit_s * 1e6:.1f} us | {aot_s * 1e6:.1f} us | {aot_s / jit_s:.2f}x |")
        directory = xp.export(_chain, np.zeros(1000, np.float32), np.zeros(1000, np.float32),
                              out=Path(scratch) / "first", name="first")
        imports, firsts = [], []
        for _ in range(args.starts):
            out = subprocess.run([sys.executable, "-c", textwrap.dedent(FIRST_RESULT), str(directory)],
                                 capture_output=True, text=True, check=True).stdout.split()
            imports.append(float(out[0]))
            firsts.append(float(out[1]))
    print(f"\nfresh process: import plaidarray.aot {statistics.median(imports) * 1e3:.1f} ms, then load and first "
          f"result {statistics.median(firsts) * 1e3:.2f} ms (medians of {args.starts})")


if __name__ == "__main__":
    main()
