"""plaidarray on Dask and Cubed. Dask: ``map_blocks`` with a jitted function and with
plain ``xp`` functions on a real ``distributed.LocalCluster`` (two worker processes,
loopback only); the workers share compiled code through the persistent cache, one
compiling while the other waits and loads. Cubed: plaidarray as its backend array API on
its processes executor. Values are checked against NumPy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from jit_helpers import child_env

import plaidarray as xp

pytest.importorskip("distributed", reason="Dask's distributed scheduler is in the distributed extra")
da = pytest.importorskip("dask.array", reason="Dask is in the distributed extra")
from distributed import Client, LocalCluster  # noqa: E402


@xp.jit
def _kernel(block):
    return xp.tanh(block * 2.0) + 1.0


def _compile_counts() -> tuple[int, int]:
    info = xp.cache_info()
    return info.compiles, info.disk_hits


def _threads() -> int:
    from plaidarray.backend.llvm_cpu import parallel

    return parallel.num_threads()


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def test_map_blocks_with_a_jitted_function_and_with_xp_functions(client):
    x = np.random.default_rng(0).standard_normal(6000)
    blocks = da.from_array(x, chunks=500)
    np.testing.assert_allclose(np.asarray(blocks.map_blocks(_kernel, dtype=np.float64).compute()),
                               np.tanh(x * 2.0) + 1.0, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(blocks.map_blocks(xp.exp).compute()), np.exp(x), rtol=1e-12)
    assert blocks.map_blocks(xp.exp).dtype == np.float64  # inferred by calling xp.exp on NumPy
    sums = blocks.map_blocks(xp.cumulative_sum).compute()  # any function takes NumPy chunks
    np.testing.assert_allclose(np.asarray(sums), np.concatenate([np.cumsum(c) for c in np.split(x, 12)]), rtol=1e-12)
    counts = list(client.run(_compile_counts).values())
    assert sum(c for c, _ in counts) == 3, counts  # each kernel compiled by one worker...
    assert all(c + d == 3 for c, d in counts), counts  # ...and loaded by the other


def test_workers_run_kernels_on_their_task_threads(client):
    assert set(client.run(_threads).values()) == {1}  # the nanny sets OMP_NUM_THREADS=1


#: A child process: Cubed with plaidarray as its backend array API on the processes
#: executor (two worker processes), a reduction, an elementwise chain and a matmul over
#: chunks, and a chunk function compiled by ``plaidarray.jit`` (Cubed's compile_function).
CUBED = """
import json, sys
import numpy as np
import cubed, cubed.array_api as cxp
import plaidarray
from cubed.runtime.create import create_executor
assert cubed.backend_array_api.namespace is plaidarray
spec = cubed.Spec(work_dir=sys.argv[1], allowed_mem="500MB")
executor = create_executor("processes", {"max_workers": 2})
x = np.random.default_rng(0).standard_normal((40, 30))
a = cxp.asarray(x, chunks=(10, 10), spec=spec)
out = {
    "var": float(np.asarray(cxp.var(a).compute(executor=executor))),
    "chain": np.asarray(cxp.sum(cxp.sin(a) * 2.0 + cxp.abs(a), axis=0).compute(executor=executor)).tolist(),
    "matmul": np.asarray(cxp.matmul(a, cxp.matrix_transpose(a)).compute(executor=executor)).tolist(),
    "jitted": np.asarray(cxp.add(a, a).compute(executor=executor, compile_function=plaidarray.jit)).tolist(),
}
print(json.dumps(out))
"""


def test_cubed_with_plaidarray_as_backend_on_the_processes_executor(tmp_path):
    pytest.importorskip("cubed", reason="Cubed is in the distributed extra")
    env = child_env(tmp_path / "cache", CUBED_BACKEND_ARRAY_API_MODULE="plaidarray")
    done = subprocess.run([sys.executable, "-c", CUBED, str(tmp_path / "work")], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    x = np.random.default_rng(0).standard_normal((40, 30))
    np.testing.assert_allclose(got["var"], np.var(x), rtol=1e-12)
    np.testing.assert_allclose(got["chain"], np.sum(np.sin(x) * 2.0 + np.abs(x), axis=0), rtol=1e-12)
    np.testing.assert_allclose(got["matmul"], x @ x.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got["jitted"], x + x)


def test_the_example_runs_on_dask_cubed_and_cubed_on_dask(tmp_path):
    """examples/chunked_engines.py (docs/distributed.md): its own cluster, whose workers
    inherit Cubed's backend choice; it checks each engine's result against NumPy itself."""
    pytest.importorskip("cubed", reason="Cubed is in the distributed extra")
    script = Path(__file__).resolve().parents[1] / "examples" / "chunked_engines.py"
    done = subprocess.run([sys.executable, str(script), "--size", "100000", "--chunks", "4"], cwd=tmp_path,
                          env=child_env(tmp_path / "cache"), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(results) == {"numpy", "dask", "cubed-processes", "cubed-on-dask"}
    x = np.random.default_rng(0).standard_normal(100000)
    assert results["numpy"] == pytest.approx(float(np.sum(np.tanh(x) * 2.0 + x * x)) / x.size, rel=1e-12)
