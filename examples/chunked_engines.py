"""plaidarray chunks on Dask and on Cubed: one computation, three engines.

    python examples/chunked_engines.py [--size 4000000] [--chunks 16]

The computation is a normalised sum, ``sum(tanh(x) * 2 + x * x) / n``, over a chunked
vector. Each engine runs it with plaidarray computing the chunks:

1. Dask, with a ``distributed.LocalCluster`` of two worker processes: ``map_blocks`` with a
   function jitted by ``plaidarray.jit`` (workers compile it once between them, through the
   persistent cache) and a Dask reduction over the partial sums.
2. Cubed on its local ``processes`` executor, plaidarray as its backend array API
   (``CUBED_BACKEND_ARRAY_API_MODULE=plaidarray``, set before Cubed is imported).
3. Cubed on that Dask cluster (Cubed's ``dask`` executor given the scheduler's address).

Each result is checked against NumPy on the whole vector, and the script prints one JSON
line with them (the tests run it).
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

os.environ.setdefault("CUBED_BACKEND_ARRAY_API_MODULE", "plaidarray")

import plaidarray as xp  # noqa: E402 - after Cubed's backend is chosen


@xp.jit
def partial_sum(block):
    """One chunk's share: compiled once per chunk shape, on every worker."""
    return xp.reshape(xp.sum(xp.tanh(block) * 2.0 + block * block), (1,))


def on_dask(x: np.ndarray, chunks: int, client) -> float:
    import dask.array as da

    blocks = da.from_array(x, chunks=x.size // chunks)
    partials = blocks.map_blocks(lambda b: np.asarray(partial_sum(xp.asarray(b))), chunks=(1,), dtype=x.dtype)
    return float(partials.sum().compute()) / x.size


def on_cubed(x: np.ndarray, chunks: int, executor) -> float:
    import cubed
    import cubed.array_api as cxp

    spec = cubed.Spec(allowed_mem="1GB")
    a = cubed.from_array(x, chunks=x.size // chunks, spec=spec)
    total = cxp.sum(cxp.tanh(a) * 2.0 + a * a)
    return float(np.asarray(total.compute(executor=executor))) / x.size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4_000_000)
    parser.add_argument("--chunks", type=int, default=16)
    args = parser.parse_args()

    from cubed.runtime.create import create_executor
    from distributed import Client, LocalCluster

    x = np.random.default_rng(0).standard_normal(args.size)
    expected = float(np.sum(np.tanh(x) * 2.0 + x * x)) / x.size
    results = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        results["dask"] = on_dask(x, args.chunks, client)
        results["cubed-processes"] = on_cubed(x, args.chunks, create_executor("processes", {"max_workers": 2}))
        on_cluster = create_executor("dask", {"compute_kwargs": {"address": cluster.scheduler_address}})
        results["cubed-on-dask"] = on_cubed(x, args.chunks, on_cluster)
    for engine, value in results.items():
        if not np.isclose(value, expected, rtol=1e-10):
            raise SystemExit(f"{engine}: {value} differs from NumPy's {expected}")
    print(json.dumps({"numpy": expected, **results}))


if __name__ == "__main__":
    main()
