"""The GPU tier on an NVIDIA GPU, side by side with JAX jit, PyTorch (eager and
``torch.compile``) and CuPy where they are importable, in one process.

    python -m benchmarks.gpu [--rounds 5] [--calls 20] [--quick]

plaidarray's rows run one compiled module (``llvm_nvptx``'s compiler on the CUDA
driver's runtime) on device arrays: the calls of a round are launched back to back and
the round waits for the last (``synchronize``), as the others' rows do
(``block_until_ready``, ``torch.cuda.synchronize``, CuPy's stream). Medians over the
rounds, in milliseconds per call; the device-to-device copy of the largest input is the
bandwidth ceiling. ``first call`` compiles the fused chain in a fresh compiler (PTX,
ptxas, module load), the others' first calls likewise. A library that is missing is a
dash. Only the GPU machine runs this (``tools/gpu_check.sh``); the table and the card
go into docs/gpu.md.
"""

from __future__ import annotations

import argparse
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="two small rows (the check script's)")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
