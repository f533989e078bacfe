"""Side-by-side timings of plaidarray, NumPy and JAX (``jax.jit``, when importable).

    python -m benchmarks [--repeat 9] [--only SUBSTRING]

Each workload is one function written against an array namespace, run unchanged on the
three libraries, in one process. A timed call goes from existing arrays to computed
values: ``np.asarray`` of plaidarray's lazy result, used eagerly (the graph is recorded
again and its cached executable run, after a first call that compiled it) and through a
``plaidarray.jit`` function; ``block_until_ready`` for JAX (after a first call that
traced and compiled it). Like is compared with like: plaidarray eager with NumPy,
``plaidarray.jit`` with ``jax.jit``. The libraries are timed in turns: each of
``--repeat`` rounds times one batch of calls of every library (a batch lasts about two
milliseconds, after a warm-up, see ``WARM_UP_SECONDS``), so a noisy moment of a shared
machine falls on all of them alike. Medians over the rounds are printed, with
plaidarray's speed-ups (>1: plaidarray is faster) and, for memory-bound workloads, the
bandwidth ``plaidarray.jit`` reached. Reference figures of the machine come first: the
bandwidth of a large copy and the GFLOP/s of NumPy's sgemm (its BLAS).

The persistent compile cache is switched off here (``PLAIDARRAY_CACHE_MAX_BYTES=0``), so
the first-compile row measures the compiler, not a disk load; so are the kernels built at
installation (``PLAIDARRAY_INSTALLED_KERNELS=0``). The rows time fused code: graphs are
compiled fused at their first read (``PLAIDARRAY_FUSE_AFTER_MS=0``), as they are once hot
in a program that runs them long (the baseline tier's op-by-op runs are the eager
scripts' concern, ``benchmarks/eager.py``).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

os.environ.setdefault("PLAIDARRAY_CACHE_MAX_BYTES", "0")
os.environ.setdefault("PLAIDARRAY_INSTALLED_KERNELS", "0")
os.environ.setdefault("PLAIDARRAY_FUSE_AFTER_MS", "0")

import numpy as np  # noqa: E402

import plaidarray as xp  # noqa: E402
from plaidarray.backend.llvm_cpu import kernels, parallel  # noqa: E402

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)  # the float64 reductions stay float64
except ImportError:
    jax = jnp = None


@dataclass(frozen=True)
class Workload:
    name: str
    fn: Callable  # fn(namespace, *arrays)
    shapes: tuple[tuple[int, ...], ...]
    dtype: type = np.float32
    #: Bytes one evaluation must move at least (inputs read, output written), for GB/s.
    traffic: int = 0


def _chain(m, x, y):
    return m.exp(x) * m.sin(y) + x * 2


def _softmax(m, x):
    e = m.exp(x - m.max(x, axis=1, keepdims=True))
    return e / m.sum(e, axis=1, keepdims=True)


def _mlp(m, x, w1, b1, w2, b2):
    return m.matmul(m.maximum(m.matmul(x, w1) + b1, 0.0), w2) + b2


def _leaky_relu(m, x):
    return m.where(x > 0, x, x * 0.01)


def _outer_add(m, x, y):
    return m.reshape(x, (-1, 1)) + m.reshape(y, (1, -1))


def _chain30(m, x, y):
    """30 elementwise ops: ten rounds of multiply, add, sine."""
    for i in range(10):
        x = m.sin(x * (1.0 + i / 100) + y)
    return x


def _reduction(name: str, axis: int) -> Callable:
    return lambda m, x: getattr(m, name)(x, axis=axis)


WORKLOADS = [
    *(Workload(f"exp(x)*sin(y)+x*2, {n:.0e} f32", _chain, ((n,), (n,)), traffic=3 * 4 * n)
      for n in (1_000, 100_000, 10_000_000)),
    Workload("softmax (4096,1024) f32", _softmax, ((4096, 1024),), traffic=2 * 4 * 4096 * 1024),
    *(Workload(f"{name} axis {axis} (4096,4096) f64", _reduction(name, axis), ((4096, 4096),), np.float64,
               traffic=8 * 4096 * 4096)
      for name in ("sum", "mean") for axis in (0, 1)),
    *(Workload(f"matmul {n} f32", lambda m, a, b: m.matmul(a, b), ((n, n), (n, n))) for n in (256, 1024)),
    Workload("mlp relu(x@W1+b1)@W2+b2 (512x1024x1024x256) f32", _mlp,
             ((512, 1024), (1024, 1024), (1024,), (1024, 256), (256,))),
    Workload("a+b, 8 elements f32 (dispatch)", lambda m, a, b: a + b, ((8,), (8,))),
    Workload("where leaky-relu (2048,2048) f32", _leaky_relu, ((2048, 2048),), traffic=2 * 4 * 2048 * 2048),
    Workload("outer add (2048,)+(2048,) f32", _outer_add, ((2048,), (2048,)), traffic=4 * 2048 * 2050),
    Workload("30-op chain (1000,) f32, cached call", _chain30, ((1000,), (1000,))),
    Workload("stable argsort 1e+06 f64", lambda m, x: m.argsort(x, stable=True), ((1_000_000,),), np.float64),
    Workload("stable sort of rows (1024,1024) f32", lambda m, x: m.sort(x, axis=1, stable=True), ((1024, 1024),)),
    Workload("argmax 1e+06 f64", lambda m, x: m.argmax(x), ((1_000_000,),), np.float64, traffic=8 * 1_000_000),
    Workload("argmin axis 0 (1024,1024) f32", lambda m, x: m.argmin(x, axis=0), ((1024, 1024),),
             traffic=4 * 1024 * 1024),
]


def _median_seconds(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _batch_size(call: Callable[[], object]) -> int:
    """Calls per timed batch: enough for about two milliseconds."""
    start = time.perf_counter()
    call()
    return max(1, int(2e-3 / max(time.perf_counter() - start, 1e-7)))


def _batch_seconds(call: Callable[[], object], batch: int) -> float:
    """The time of one call, from a batch of ``batch`` calls (results dropped at once)."""
    start = time.perf_counter()
    for _ in range(batch):
        call()
    return (time.perf_counter() - start) / batch


def _runners(w: Workload, data: list[np.ndarray]) -> dict[str, Callable[[], object]]:
    plaid_args = [xp.asarray(a) for a in data]
    eager, jitted = functools.partial(w.fn, xp), xp.jit(functools.partial(w.fn, xp))
    runners = {
        "plaidarray": lambda: np.asarray(eager(*plaid_args)),
        "plaidarray.jit": lambda: np.asarray(jitted(*plaid_args)),
        "NumPy": lambda: w.fn(np, *data),
    }
    if jax is not None:
        compiled = jax.jit(lambda *args: w.fn(jnp, *args))
        jax_args = [jnp.asarray(a) for a in data]
        runners["JAX jit"] = lambda: compiled(*jax_args).block_until_ready()
    return runners


def _check(w: Workload, results: dict[str, np.ndarray]) -> None:
    reference = results["NumPy"]
    tolerance = 1e-3 if w.dtype == np.float32 else 1e-9
    for name, value in results.items():
        if not np.allclose(np.asarray(value), reference, rtol=tolerance, atol=tolerance):
            raise AssertionError(f"{w.name}: {name} disagrees with NumPy")


#: Seconds each library runs its workload, untimed, before each timed batch. The core's
#: clock ramps up under sustained load (over about 10 ms on the shared VMs here: a call
#: after a pause takes up to twice as long), and the worker threads of the library timed
#: before (OpenBLAS, XLA) spin for about 0.1 s after its last call, taking the second
#: core of a small machine from the library being timed.
WARM_UP_SECONDS = 0.15


def _warm_up(call: Callable[[], object]) -> None:
    start = time.perf_counter()
    while time.perf_counter() - start < WARM_UP_SECONDS:
        call()


def run_workload(w: Workload, repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s).astype(w.dtype) for s in w.shapes]
    runners = _runners(w, data)
    _check(w, {name: run() for name, run in runners.items()})  # also compiles
    batches = {name: _batch_size(run) for name, run in runners.items()}
    kernels.finish_upgrades()  # kernels are timed in their full code, not their first tier
    samples: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeat):
        for name, run in runners.items():
            _warm_up(run)
            samples[name].append(_batch_seconds(run, batches[name]))
    return {name: statistics.median(times) for name, times in samples.items()}


def first_call_seconds(n: int, dtype: type) -> float:
    """The first call of the 30-op chain on ``n`` elements of ``dtype``: a compile for a
    dtype never seen, a binding of the compiled chain for a new size (a small graph is
    shape-generic from its first compile)."""
    rng = np.random.default_rng(1)
    x, y = (xp.asarray(rng.standard_normal(n).astype(dtype)) for _ in range(2))
    start = time.perf_counter()
    np.asarray(_chain30(xp, x, y))
    return time.perf_counter() - start


#: The first-call rows: (name, elements, dtype), after the workloads (which ran the chain
#: on 1000 float32).
FIRST_CALLS = (("30-op chain (1000,) f64, first compile", 1000, np.float64),
               ("30-op chain (999,) f32, first call of a new size", 999, np.float32))


def machine_reference(repeat: int) -> tuple[float, float]:
    """(copy bandwidth in GB/s counting read + write, NumPy sgemm GFLOP/s)."""
    src = np.ones(64 * 2**20 // 4, np.float32)
    dst = np.empty_like(src)
    copy = _median_seconds(lambda: np.copyto(dst, src), repeat)
    a = np.ones((2048, 2048), np.float32)
    gemm = _median_seconds(lambda: a @ a, repeat)
    return 2 * src.nbytes / copy / 1e9, 2 * 2048**3 / gemm / 1e9


def _format_time(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="calls per median (default 9)")
    parser.add_argument("--only", default="", help="run the workloads whose name contains this")
    args = parser.parse_args()

    bandwidth, sgemm = machine_reference(args.repeat)
    print(f"machine: {os.cpu_count()} cores, plaidarray threads {parallel.num_threads()}; "
          f"copy bandwidth {bandwidth:.1f} GB/s; NumPy sgemm (2048) {sgemm:.0f} GFLOP/s; "
          f"JAX {jax.__version__ if jax else 'not installed'}\n")
    np.asarray(xp.asarray(np.ones(3)) + 1.0)  # LLVM's start-up, paid once per process
    libraries = ["plaidarray", "plaidarray.jit", "NumPy"] + (["JAX jit"] if jax else [])
    ratios = {"eager vs NumPy": ("NumPy", "plaidarray")}
    if jax:
        ratios["jit vs JAX jit"] = ("JAX jit", "plaidarray.jit")
    columns = ["workload", *libraries, *ratios, "plaidarray.jit GB/s"]
    print("| " + " | ".join(columns) + " |")
    print("|---" + "|---:" * (len(columns) - 1) + "|")
    for w in WORKLOADS:
        if args.only in w.name:
            t = run_workload(w, args.repeat)
            cells = [_format_time(t[k]) for k in libraries]
            cells += [f"{t[other] / t[ours]:.2f}x" for other, ours in ratios.values()]
            cells.append(f"{w.traffic / t['plaidarray.jit'] / 1e9:.1f}" if w.traffic else "")
            print(f"| {w.name} | " + " | ".join(cells) + " |")
    blank = [""] * (len(columns) - 2)
    for name, n, dtype in FIRST_CALLS:
        if args.only in name:
            print(f"| {name} | " + " | ".join([_format_time(first_call_seconds(n, dtype)), *blank]) + " |")


if __name__ == "__main__":
    main()
