"""The GPU tier on an NVIDIA GPU, side by side with JAX jit, PyTorch (eager, and
``torch.compile`` with ``--torch-compile``) and CuPy where they are importable, in one process.

    python -m benchmarks.gpu [--rounds 5] [--calls 20] [--torch-compile] [--only SUBSTRING]
    python -m benchmarks.gpu --dry-run      # every row at tiny sizes on the device "cuda"
                                            # (PLAIDARRAY_SIMULATED_GPUS=1 without a GPU)

Each row is a workload written once against an array namespace, float32 throughout.
plaidarray's columns: *first call* traces the workload and compiles it in a fresh compiler
(HLO to PTX, ptxas, module load) and runs it; *jit* runs that compiled module on device
arrays ("eager only" where the workload holds a matrix product: cuBLAS's call runs between
executables, which a compiled module cannot hold, and the first call is the eager one);
*eager* records the workload through the array API at every call and computes it on the
device (its graph's executable found in the cache), as a script does, with no copy to the
host. The calls of a round are launched back to back and the round waits for the last
(``synchronize``), as the others' rows do (``block_until_ready``,
``torch.cuda.synchronize``, CuPy's stream). Medians over the rounds, in milliseconds per
call; heavy rows make fewer calls a round (``Workload.calls``). Matrix products are full
float32 everywhere (JAX's ``precision="highest"``, PyTorch's TF32 off). The device-to-device
copy row is the bandwidth ceiling of the elementwise and reduction rows: it moves 2^26
float32 values, as the fused chain reads and writes them. The scikit-learn rows fit PCA,
LinearDiscriminantAnalysis and Ridge through ``array_api_dispatch`` on each library's GPU
arrays, each fit timed until its fitted value reaches the host, and report the largest
difference from PyTorch's fitted values; then the fused chain's first call in a fresh
process with an empty persistent cache, then in another on that cache (what a script waits
for); the products last, so that a timeout cuts them first. A library that is missing is a
dash.

``--dry-run`` runs plaidarray's columns alone at tiny sizes and checks each row's result
against NumPy's (``tests/unit/backend/nvptx/test_gpu_benchmark.py`` runs it on the
simulated GPU), so that the rows a GPU machine's few minutes run are known to work before.
Only the GPU machine times them (``tools/gpu_check.sh``); the table and the card go into
docs/gpu.md.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # scikit-learn's array API dispatch needs it before SciPy's import

import numpy as np  # noqa: E402

import plaidarray as xp  # noqa: E402
from plaidarray.backend.executable import HostOpsError  # noqa: E402
from plaidarray.backend.llvm_nvptx.compiler import NvptxCompiler  # noqa: E402
from plaidarray.backend.llvm_nvptx.runtime import GpuRuntime  # noqa: E402


def chain(ns, x):
    return ns.tanh(x) * 0.5 + ns.exp(-x * x) * 0.25 - ns.abs(x) * 0.1


def chain_30(ns, x):
    """Thirty elementwise ops: ten rounds of a sine, a scaling and a shift."""
    for _ in range(10):
        x = ns.sin(x) * 0.9 + 0.1
    return x


def softmax(ns, x):
    e = ns.exp(x - ns.max(x, axis=1, keepdims=True))
    return e / ns.sum(e, axis=1, keepdims=True)


def layer_norm(ns, x, gain, bias):
    mean = ns.mean(x, axis=1, keepdims=True)
    centred = x - mean
    return centred / ns.sqrt(ns.mean(centred * centred, axis=1, keepdims=True) + 1e-5) * gain + bias


def mlp(ns, x, w1, b1, w2, b2):
    hidden = x @ w1 + b1
    return ns.maximum(hidden, ns.zeros_like(hidden)) @ w2 + b2


@dataclass(frozen=True)
class Workload:
    """A row: the function of a namespace and its arrays, their shapes (and at ``--dry-run``),
    and how many calls a round makes (None: ``--calls``')."""

    fn: Callable
    shapes: tuple[tuple[int, ...], ...]
    dry_shapes: tuple[tuple[int, ...], ...]
    calls: int | None = None


WORKLOADS: dict[str, Workload] = {
    "fused chain tanh(x)*.5+exp(-x*x)*.25-abs(x)*.1, 2^26 elements": Workload(chain, ((1 << 26,),), ((300,),)),
    "row sum (16384, 4096)": Workload(lambda ns, x: ns.sum(x, axis=1), ((16384, 4096),), ((5, 70),)),
    "column sum (16384, 4096)": Workload(lambda ns, x: ns.sum(x, axis=0), ((16384, 4096),), ((70, 5),)),
    "softmax over rows (16384, 4096)": Workload(softmax, ((16384, 4096),), ((5, 70),)),
    "layer norm over rows (16384, 4096)": Workload(layer_norm, ((16384, 4096), (4096,), (4096,)),
                                                   ((5, 70), (70,), (70,))),
    "30-op chain, 1e3 elements": Workload(chain_30, ((1000,),), ((40,),)),
    "30-op chain, 1e5 elements": Workload(chain_30, ((100_000,),), ((90,),)),
    "30-op chain, 1e7 elements": Workload(chain_30, ((10_000_000,),), ((130,),)),
    "x + 1 on 8 elements": Workload(lambda ns, x: x + 1.0, ((8,),), ((8,),)),
    # products run on the target-neutral loops (no cuBLAS yet), seconds a call perhaps: run last
    "matmul 8192 x 8192, full float32": Workload(lambda ns, a, b: a @ b, ((8192, 8192), (8192, 8192)),
                                                 ((9, 7), (7, 5)), calls=2),
    "2-layer MLP: (4096, 1024) @ (1024, 4096), relu, @ (4096, 1024)": Workload(
        mlp, ((4096, 1024), (1024, 4096), (4096,), (4096, 1024), (1024,)), ((6, 5), (5, 7), (7,), (7, 3), (3,)),
        calls=3),
}


def _median_ms(run: Callable[[], object], wait: Callable[[], object], rounds: int, calls: int) -> float:
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


def _inputs(shapes: tuple[tuple[int, ...], ...], rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal(shape).astype(np.float32) for shape in shapes]


def _plaidarray(fn: Callable, hosts: list[np.ndarray], rounds: int, calls: int
                ) -> tuple[float, float, float, Callable[[], tuple[np.ndarray, np.ndarray]]]:
    """plaidarray's columns (first call, jit, eager, ms) and how to read the jit's and
    the eager call's results (``--dry-run`` checks them)."""
    arrays = [xp.asarray(host, device="cuda") for host in hosts]
    runtime: GpuRuntime = arrays[0].device.transfers.runtime
    start = time.perf_counter()
    module = xp.jit(lambda *a: fn(xp, *a)).lower(*[xp.asarray(host) for host in hosts]).module
    try:
        executable = NvptxCompiler(runtime).compile(module)
    except HostOpsError:  # cuBLAS's products run between executables: eager calls alone (nan: no jit column)
        fn(xp, *arrays)._computed()
        runtime.synchronize()
        first = (time.perf_counter() - start) * 1e3
        eager = _median_ms(lambda: fn(xp, *arrays)._computed(), runtime.synchronize, rounds, calls)
        return first, math.nan, eager, lambda: (np.asarray(fn(xp, *arrays)),) * 2
    buffers = [a._computed().buffer for a in arrays]
    (out,) = executable.run(buffers)
    runtime.synchronize()
    first = (time.perf_counter() - start) * 1e3
    jit = _median_ms(lambda: executable.run(buffers), runtime.synchronize, rounds, calls)
    eager = _median_ms(lambda: fn(xp, *arrays)._computed(), runtime.synchronize, rounds, calls)
    return first, jit, eager, lambda: (runtime.to_host(out), np.asarray(fn(xp, *arrays)))


def _copy_ceiling(rounds: int, calls: int, n: int) -> float:
    """The device-to-device copy of ``n`` float32 values on plaidarray's runtime, ms."""
    x = xp.asarray(np.ones(n, np.float32), device="cuda")
    runtime: GpuRuntime = x.device.transfers.runtime
    source = x._computed().buffer
    target = runtime.empty(source.shape, source.dtype)
    return _median_ms(lambda: runtime.copy(target.address, source.address, source.nbytes), runtime.synchronize,
                      rounds, calls)


def _others(fn: Callable, hosts: list[np.ndarray], rounds: int, calls: int, torch_compile: bool) -> dict[str, float]:
    """The other libraries' rows, for those importable (PyTorch and CuPy through
    array-api-compat's namespaces, JAX's own)."""
    found: dict[str, float] = {}
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_default_matmul_precision", "highest")
        args = [jax.device_put(h) for h in hosts]
        jitted = jax.jit(lambda *a: fn(jnp, *a))
        found["JAX jit"] = _median_ms(lambda: jitted(*args), lambda: jitted(*args).block_until_ready(), rounds, calls)
    except ImportError:
        pass
    try:
        import torch
        from array_api_compat import torch as torch_namespace

        torch.backends.cuda.matmul.allow_tf32 = False
        tensors = [torch.from_numpy(h).cuda() for h in hosts]
        found["torch"] = _median_ms(lambda: fn(torch_namespace, *tensors), torch.cuda.synchronize, rounds, calls)
        if torch_compile:
            compiled = torch.compile(lambda *a: fn(torch_namespace, *a))
            start = time.perf_counter()
            compiled(*tensors)
            torch.cuda.synchronize()
            found["torch.compile first call"] = (time.perf_counter() - start) * 1e3
            found["torch.compile"] = _median_ms(lambda: compiled(*tensors), torch.cuda.synchronize, rounds, calls)
    except ImportError:
        pass
    try:
        import cupy
        from array_api_compat import cupy as cupy_namespace

        arrays = [cupy.asarray(h) for h in hosts]
        found["CuPy"] = _median_ms(lambda: fn(cupy_namespace, *arrays), cupy.cuda.Device().synchronize, rounds, calls)
    except ImportError:
        pass
    return found


#: The device-to-device copy's row.
COPY_ROW = "device-to-device copy, 2^26 float32 (the ceiling)"

#: scikit-learn estimators fitted through ``array_api_dispatch``: module, class, options
#: (20 components, 2 at ``--dry-run``'s 4 features) and the fitted value compared.
ESTIMATORS = {
    "PCA (full SVD, 20 components)": ("sklearn.decomposition", "PCA", {"svd_solver": "full"}, "explained_variance_"),
    "LinearDiscriminantAnalysis": ("sklearn.discriminant_analysis", "LinearDiscriminantAnalysis", {}, "coef_"),
    "Ridge (svd)": ("sklearn.linear_model", "Ridge", {"solver": "svd"}, "coef_"),
}


def _sklearn_rows(rounds: int, dry_run: bool, only: str) -> list[str]:
    """Fit times (median of ``rounds`` fits, ms) of each estimator on 100,000 x 500 float32
    (12 x 4 at ``--dry-run``), labels of three classes, on plaidarray's, PyTorch's and CuPy's GPU
    arrays, and each fit's largest difference from PyTorch's fitted value (NumPy's at ``--dry-run``)."""
    try:
        import importlib

        import sklearn
    except ImportError:
        return ["| scikit-learn | not installed | | |"]
    rng = np.random.default_rng(0)
    n, d = (12, 4) if dry_run else (100_000, 500)
    host_x = rng.standard_normal((n, d)).astype(np.float32)
    host_y = (np.arange(n) % 3).astype(np.float32)
    libraries: dict[str, tuple[Callable[[np.ndarray], object], Callable[[], object], Callable[[object], np.ndarray]]]
    libraries = {"plaidarray": (lambda a: xp.asarray(a, device="cuda"), lambda: None, np.asarray)}
    if not dry_run:
        try:
            import torch

            libraries["torch"] = (lambda a: torch.from_numpy(a).cuda(), torch.cuda.synchronize,
                                  lambda t: t.cpu().numpy())
        except ImportError:
            pass
        try:
            import cupy

            libraries["CuPy"] = (cupy.asarray, cupy.cuda.Device().synchronize, cupy.asnumpy)
        except ImportError:
            pass
    rows = []
    for name, (module, cls, options, fitted) in ESTIMATORS.items():
        if only not in f"scikit-learn {name}":
            continue
        if cls == "PCA":
            options = {**options, "n_components": 2 if dry_run else 20}
        estimator_type = getattr(importlib.import_module(module), cls)
        cells, values = [], {}
        if dry_run:
            with sklearn.config_context(array_api_dispatch=False):
                reference = getattr(estimator_type(**options).fit(host_x, host_y), fitted)
        for library, (to_device, wait, to_host) in libraries.items():
            x, y = to_device(host_x), to_device(host_y)
            with sklearn.config_context(array_api_dispatch=True):
                estimator = estimator_type(**options)
                # a fit ends when its fitted value reaches the host (plaidarray's is pending until read)
                ms = _median_ms(lambda e=estimator, x=x, y=y, h=to_host, f=fitted: h(getattr(e.fit(x, y), f)), wait,
                                rounds, 1)
                values[library] = to_host(getattr(estimator, fitted))
            cells.append(f"{library} {ms:.0f} ms")
        if not dry_run:
            reference = values.get("torch", values["plaidarray"])
        gap = max(float(np.max(np.abs(np.abs(v) - np.abs(reference)))) for v in values.values())
        if dry_run and not gap < 1e-3:
            raise AssertionError(f"{name}: plaidarray's {fitted} differs from NumPy's by {gap}")
        rows.append(f"| scikit-learn {name}, {n} x {d} | {', '.join(cells)} | largest difference {gap:.2e} | |")
    return rows


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


def _check(name: str, found: np.ndarray, expected: np.ndarray) -> None:
    if not np.allclose(found, expected, rtol=1e-4, atol=1e-4):
        raise AssertionError(f"{name}: plaidarray's result differs from NumPy's by "
                             f"{float(np.max(np.abs(found - expected)))}")


def _fits_and_first_calls(args: argparse.Namespace) -> None:
    """The scikit-learn rows, then the fused chain's first calls in fresh processes."""
    for row in _sklearn_rows(1 if args.dry_run else 3, args.dry_run, args.only):
        print(row, flush=True)
    if not args.dry_run and not args.only:
        cold, warm = _first_calls()
        print(f"| fused chain's first call in a fresh process, 2^20 elements | cold {cold:.1f} ms | disk-warm "
              f"{warm:.2f} ms | | |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--only", default="", help="the rows whose name holds this")
    parser.add_argument("--torch-compile", action="store_true", help="time torch.compile too (seconds a row)")
    parser.add_argument("--dry-run", action="store_true", help="tiny sizes, plaidarray alone, results checked")
    parser.add_argument("--first-call", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_call:
        return _first_call()
    rounds, calls = (1, 1) if args.dry_run else (args.rounds, args.calls)
    device = xp.asarray(np.zeros(1, np.float32), device="cuda").device
    runtime: GpuRuntime = device.transfers.runtime
    print(f"| workload ({runtime.name}, {runtime.architecture}, float32) | plaidarray first call | plaidarray jit | "
          "plaidarray eager | others |\n|---|---:|---:|---:|---|", flush=True)
    if args.only in COPY_ROW:  # first: the ceiling of the rows below
        ms = _copy_ceiling(rounds, calls, 1000 if args.dry_run else 1 << 26)
        print(f"| {COPY_ROW} | | {ms:.3f} ms | | |", flush=True)
    rng = np.random.default_rng(0)
    # rows of a few calls (the products, seconds a call on the target-neutral loops) last,
    # after the fits and the first calls, so that a timeout cuts them first
    light = [name for name, workload in WORKLOADS.items() if workload.calls is None]
    heavy = [name for name in WORKLOADS if name not in light]
    for name in light + ["fits and first calls"] + heavy:
        if name == "fits and first calls":
            _fits_and_first_calls(args)
            continue
        workload = WORKLOADS[name]
        if args.only not in name:
            continue
        hosts = _inputs(workload.dry_shapes if args.dry_run else workload.shapes, rng)
        row_calls = calls if args.dry_run or workload.calls is None else workload.calls
        first, jit, eager, results = _plaidarray(workload.fn, hosts, rounds, row_calls)
        if args.dry_run:
            expected = workload.fn(np, *hosts)
            jit_out, eager_out = results()
            _check(name + " (jit)", jit_out, expected)
            _check(name + " (eager)", eager_out, expected)
            others = "-"
        else:
            others = ", ".join(f"{k} {v:.3f} ms" for k, v in
                               _others(workload.fn, hosts, rounds, row_calls, args.torch_compile).items()) or "-"
        jit_cell = "eager only" if math.isnan(jit) else f"{jit:.3f} ms"
        print(f"| {name} | {first:.1f} ms | {jit_cell} | {eager:.3f} ms | {others} |", flush=True)


if __name__ == "__main__":
    main()
