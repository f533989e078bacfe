"""The GPU tier on an NVIDIA GPU, side by side with JAX jit, PyTorch (eager) and CuPy
where they are importable, in one process.

    python -m benchmarks.gpu [--rounds 5] [--calls 20] [--quick]

plaidarray's rows run one compiled module (``llvm_nvptx``'s compiler on the CUDA
driver's runtime) on device arrays: the calls of a round are launched back to back and
the round waits for the last (``synchronize``), as the others' rows do
(``block_until_ready``, ``torch.cuda.synchronize``, CuPy's stream). Medians over the
rounds, in milliseconds per call. ``first call`` traces the workload and compiles it in
a fresh compiler (HLO to PTX, ptxas, module load) in this process; the last row is what
a script waits for: the fused chain's first call in a fresh process with an empty
persistent cache, then in another on that cache. A library that is missing is a dash.
Only the GPU machine runs this (``tools/gpu_check.sh``); the table and the card go into
docs/gpu.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

import plaidarray as xp
from plaidarray.backend.llvm_nvptx.compiler import NvptxCompiler
from plaidarray.backend.llvm_nvptx.cuda_driver import CudaRuntime


def chain(ns, x):
    return ns.tanh(x) * 0.5 + ns.exp(-x * x) * 0.25 - ns.abs(x) * 0.1


def softmax(ns, x):
    e = ns.exp(x - ns.max(x, axis=1, keepdims=True))
    return e / ns.sum(e, axis=1, keepdims=True)


#: name -> (function of an array namespace and an array, input shape); float32 throughout.
WORKLOADS: dict[str, tuple[Callable, tuple[int, ...]]] = {
    "fused chain, 2^26 elements": (chain, (1 << 26,)),
    "row sum (16384, 4096)": (lambda ns, x: ns.sum(x, axis=1), (16384, 4096)),
    "column sum (16384, 4096)": (lambda ns, x: ns.sum(x, axis=0), (16384, 4096)),
    "softmax over rows (16384, 4096)": (softmax, (16384, 4096)),
    "x + 1 on 8 elements": (lambda ns, x: x + 1.0, (8,)),
}
QUICK: dict[str, tuple[Callable, tuple[int, ...]]] = {
    "fused chain, 2^20 elements": (chain, (1 << 20,)),
    "row sum (1024, 1024)": (lambda ns, x: ns.sum(x, axis=1), (1024, 1024)),
}


def _median_ms(run: Callable[[], None], wait: Callable[[], None], rounds: int, calls: int) -> float:
    run()
    wait()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        wait()
        times.append((time.perf_counter() - start) / calls * 1e3)
    return statistics.median(times)


def _plaidarray(fn, host: np.ndarray, runtime: CudaRuntime, rounds: int, calls: int) -> tuple[float, float]:
    start = time.perf_counter()
    module = xp.jit(lambda x: fn(xp, x)).lower(xp.asarray(host)).module
    executable = NvptxCompiler(runtime).compile(module)
    device = runtime.from_host(host)
    executable.run([device])
    runtime.synchronize()
    first = (time.perf_counter() - start) * 1e3
    return first, _median_ms(lambda: executable.run([device]), runtime.synchronize, rounds, calls)


def _others(fn: Callable, host: np.ndarray, rounds: int, calls: int) -> dict[str, float]:
    """The other libraries' rows, for those importable (PyTorch and CuPy through
    array-api-compat's namespaces, JAX's own)."""
    found: dict[str, float] = {}
    try:
        import jax
        import jax.numpy as jnp

        x = jax.device_put(host)
        jitted = jax.jit(lambda a: fn(jnp, a))
        found["JAX jit"] = _median_ms(lambda: jitted(x), lambda: jitted(x).block_until_ready(), rounds, calls)
    except ImportError:
        pass
    try:
        import torch
        from array_api_compat import torch as torch_namespace

        t = torch.from_numpy(host).cuda()
        found["torch"] = _median_ms(lambda: fn(torch_namespace, t), torch.cuda.synchronize, rounds, calls)
    except ImportError:
        pass
    try:
        import cupy
        from array_api_compat import cupy as cupy_namespace

        c = cupy.asarray(host)
        found["CuPy"] = _median_ms(lambda: fn(cupy_namespace, c), cupy.cuda.Device().synchronize, rounds, calls)
    except ImportError:
        pass
    return found


def _first_call() -> None:
    """In a fresh process (``--first-call``): the device brought up and one graph run,
    then the fused chain's first call through the array API and a second, as a script
    meets them; milliseconds on one line."""
    x = xp.asarray(np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32), device="cuda")
    float(xp.sum(x))
    runtime = x.device.transfers.runtime
    times = []
    for _ in range(2):
        start = time.perf_counter()
        chain(xp, x)._computed()
        runtime.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    print(*times)


def _first_calls() -> tuple[float, float]:
    """The fused chain's first call (2^20 elements) in a fresh process with an empty
    ``PLAIDARRAY_CACHE_DIR`` (cold: PTX, ptxas, load), then in another on that cache
    (disk-warm: the cubin loaded)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PLAIDARRAY_CACHE_DIR=cache)
        found = [float(subprocess.run([sys.executable, "-m", "benchmarks.gpu", "--first-call"], env=env, check=True,
                                      capture_output=True, text=True).stdout.split()[0]) for _ in range(2)]
    return found[0], found[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="two small rows (the check script's)")
    parser.add_argument("--first-call", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_call:
        return _first_call()
    runtime = CudaRuntime(0)
    rows = QUICK if args.quick else WORKLOADS
    print(f"| workload ({runtime.name}, {runtime.architecture}, float32) | plaidarray first call | plaidarray | "
          "others |\n|---|---:|---:|---|")
    rng = np.random.default_rng(0)
    for name, (fn, shape) in rows.items():
        host = rng.standard_normal(shape).astype(np.float32)
        first, ms = _plaidarray(fn, host, runtime, args.rounds, args.calls)
        others = ", ".join(f"{k} {v:.3f} ms" for k, v in _others(fn, host, args.rounds, args.calls).items()) or "-"
        print(f"| {name} | {first:.1f} ms | {ms:.3f} ms | {others} |", flush=True)
    cold, warm = _first_calls()
    print(f"| fused chain's first call in a fresh process, 2^20 elements | cold {cold:.1f} ms | disk-warm "
          f"{warm:.2f} ms | |")


if __name__ == "__main__":
    main()
