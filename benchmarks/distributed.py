"""A chunked workload on Dask and on Cubed, with NumPy chunks and with plaidarray chunks.

    python -m benchmarks.distributed [--size 1e8] [--chunks 64] [--repeat 3] [--engine dask]

The same engine runs the same task graph; only the library computing each chunk differs:

- ``chain``: an elementwise chain over every chunk (``sin(x) * 2 + sqrt(|x|) * 0.5 - x * x``),
  results kept on the workers. NumPy makes a temporary per op; plaidarray fuses the chain
  into one kernel that reads and writes each chunk once.
- ``reduction``: the sum of the chain: each chunk's partial sum, then the total.
- ``matmul``: a blocked matrix product (``--matrix`` square, 4 x 4 blocks), each output
  block the product of a block row and a block column (BLAS in both libraries).

Dask runs a ``distributed.LocalCluster`` of two worker processes with one thread each
(the machine's two cores); Cubed its ``threads`` executor (its default; ``--cubed-executor
processes`` for the other, which starts two fresh processes for every computation, so every
round pays their imports and loads the kernels from the disk cache), two workers, with the
backend array API chosen by ``CUBED_BACKEND_ARRAY_API_MODULE``. Each (engine, library) runs in a fresh
process on an empty ``PLAIDARRAY_CACHE_DIR``: its first round is cold (plaidarray
compiles), the others warm. The two libraries' processes take turns, ``--pairs`` times;
medians over them. float32 throughout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOADS = ("chain", "reduction", "matmul")
RECORD = "RESULT "


def chain(ns, x):
    return ns.sin(x) * 2.0 + ns.sqrt(ns.abs(x)) * 0.5 - x * x


# --- Dask ---------------------------------------------------------------------------

def _dask_chain_block(library: str, block):
    import numpy as np

    ns = _namespace(library)
    return np.asarray(chain(ns, ns.asarray(block)))


def _dask_sum_block(library: str, block):
    import numpy as np

    ns = _namespace(library)
    return np.asarray(ns.sum(chain(ns, ns.asarray(block)))).reshape(1)


def _dask_matmul_blocks(library: str, a, b):
    import numpy as np

    ns = _namespace(library)
    return np.asarray(ns.matmul(ns.asarray(a), ns.asarray(b)))


def run_dask(library: str, size: int, chunks: int, matrix: int, repeat: int) -> None:
    import functools

    import dask.array as da
    from distributed import Client, LocalCluster, wait

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster):
        x = da.random.default_rng(0).standard_normal(size, chunks=size // chunks, dtype="float32").persist()
        m = da.random.default_rng(1).standard_normal((matrix, matrix), chunks=matrix // 4, dtype="float32").persist()
        wait([x, m])
        graphs = {
            "chain": lambda: wait(x.map_blocks(functools.partial(_dask_chain_block, library),
                                               dtype="float32").persist()),
            "reduction": lambda: float(x.map_blocks(functools.partial(_dask_sum_block, library),
                                                    chunks=(1,), dtype="float32").sum().compute()),
            "matmul": lambda: wait(da.blockwise(functools.partial(_dask_matmul_blocks, library), "ik", m, "ij",
                                                m, "jk", concatenate=True, dtype="float32").persist()),
        }
        _time_rounds(graphs, repeat)


# --- Cubed --------------------------------------------------------------------------

def run_cubed(library: str, size: int, chunks: int, matrix: int, repeat: int, executor_name: str) -> None:
    import cubed
    import cubed.array_api as cxp
    import cubed.random
    from cubed.runtime.create import create_executor

    spec = cubed.Spec(work_dir=tempfile.mkdtemp(prefix="cubed-"), allowed_mem="2GB")
    executor = create_executor(executor_name, {"max_workers": 2})
    x = cubed.random.random((size,), chunks=size // chunks, spec=spec)
    x = cxp.astype(x, cxp.float32)
    m = cxp.astype(cubed.random.random((matrix, matrix), chunks=matrix // 4, spec=spec), cxp.float32)
    graphs = {
        "chain": lambda: cubed.to_zarr(chain(cxp, x), tempfile.mkdtemp(prefix="zarr-"), executor=executor),
        "reduction": lambda: float(cxp.sum(chain(cxp, x)).compute(executor=executor)),
        "matmul": lambda: cubed.to_zarr(cxp.matmul(m, m), tempfile.mkdtemp(prefix="zarr-"), executor=executor),
    }
    _time_rounds(graphs, repeat)


# --- the child process and the harness -----------------------------------------------

def _namespace(library: str):
    import importlib

    return importlib.import_module({"numpy": "numpy", "plaidarray": "plaidarray"}[library])


def _time_rounds(graphs: dict, repeat: int) -> None:
    for round_ in range(1 + repeat):
        for name, run in graphs.items():
            start = time.perf_counter()
            run()
            print(RECORD + json.dumps({"workload": name, "round": round_, "seconds": time.perf_counter() - start}),
                  flush=True)


def child(engine: str, library: str, size: int, chunks: int, matrix: int, repeat: int, executor: str) -> None:
    if engine == "dask":
        run_dask(library, size, chunks, matrix, repeat)
    else:
        run_cubed(library, size, chunks, matrix, repeat, executor)


def spawn(engine: str, library: str, args: argparse.Namespace) -> list[dict]:
    env = {**os.environ, "PLAIDARRAY_CACHE_DIR": tempfile.mkdtemp(prefix="plaidarray-cache-")}
    if engine == "cubed":
        env["CUBED_BACKEND_ARRAY_API_MODULE"] = library
    command = [sys.executable, "-m", "benchmarks.distributed", "--child", engine, library,
               "--size", str(args.size), "--chunks", str(args.chunks), "--matrix", str(args.matrix),
               "--repeat", str(args.repeat), "--cubed-executor", args.cubed_executor]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout)
    if done.returncode:
        print(f"{engine}/{library} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
        return []
    return [json.loads(line[len(RECORD):]) for line in done.stdout.splitlines() if line.startswith(RECORD)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=1e8, help="elements of the chunked vector (default 1e8)")
    parser.add_argument("--chunks", type=int, default=64)
    parser.add_argument("--matrix", type=int, default=4096, help="side of the square matrix (default 4096)")
    parser.add_argument("--repeat", type=int, default=3, help="warm rounds after the cold one")
    parser.add_argument("--pairs", type=int, default=2, help="processes per library, in turns (default 2)")
    parser.add_argument("--engine", choices=("dask", "cubed", "both"), default="both")
    parser.add_argument("--cubed-executor", choices=("threads", "processes"), default="threads",
                        help="Cubed's executor, two workers (default threads)")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--child", nargs=2, metavar=("ENGINE", "LIBRARY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.size = int(args.size)
    if args.child:
        return child(*args.child, args.size, args.chunks, args.matrix, args.repeat, args.cubed_executor)
    engines = ("dask", "cubed") if args.engine == "both" else (args.engine,)
    print("| engine | workload | NumPy chunks cold | plaidarray chunks cold | NumPy chunks warm | "
          "plaidarray chunks warm | NumPy / plaidarray (warm) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for engine in engines:
        records: dict[str, list[dict]] = {"numpy": [], "plaidarray": []}
        for _ in range(args.pairs):  # processes of the two libraries in turns
            for library in records:
                records[library] += spawn(engine, library, args)
        for workload in WORKLOADS:
            row = {}
            for library, rows in records.items():
                cold = [r["seconds"] for r in rows if r["workload"] == workload and r["round"] == 0]
                warm = [r["seconds"] for r in rows if r["workload"] == workload and r["round"] > 0]
                row[library] = (statistics.median(cold), statistics.median(warm)) if cold and warm else (None, None)
            (nc, nw), (pc, pw) = row["numpy"], row["plaidarray"]
            cells = [f"{v:.2f} s" if v is not None else "failed" for v in (nc, pc, nw, pw)]
            ratio = f"{nw / pw:.2f}x" if nw and pw else "-"
            print(f"| {engine} | {workload} | " + " | ".join(cells) + f" | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
