"""plaidarray on Dask: ``map_blocks`` with a jitted function and with plain ``xp``
functions on a real ``distributed.LocalCluster`` (two worker processes, loopback only),
values checked against NumPy; the workers share compiled code through the persistent
cache, one compiling while the other waits and loads."""

from __future__ import annotations

import numpy as np
import pytest

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
    counts = list(client.run(_compile_counts).values())
    assert sum(c for c, _ in counts) == 2, counts  # each kernel compiled by one worker...
    assert all(c + d == 2 for c, d in counts), counts  # ...and loaded by the other


def test_workers_run_kernels_on_their_task_threads(client):
    assert set(client.run(_threads).values()) == {1}  # the nanny sets OMP_NUM_THREADS=1
