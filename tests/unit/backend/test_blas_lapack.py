"""Where llvm-cpu's kernels find BLAS and LAPACK (``backend/llvm_cpu/blas_lapack.py``):
SciPy's bundled OpenBLAS symbols, taken without importing SciPy where its wheel has them,
else the Cython API's capsules; both the same routines, so the same bits."""

from __future__ import annotations

import os

import pytest
from jit_helpers import run_child

import plaidarray as xp
from plaidarray.backend.llvm_cpu import blas_lapack

pytestmark = pytest.mark.skipif("llvm-cpu" not in xp.backends(), reason="the compiled backend is not installed")

#: A child's matrix product, Cholesky factor and solve of fixed matrices (their bytes'
#: digest), and whether it imported SciPy; ``CAPSULES`` switches the direct symbols off.
PROGRAM = """
import hashlib, json, sys
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm_cpu import blas_lapack
if {capsules}:
    blas_lapack._extension = lambda name: None
rng = np.random.default_rng(7)
g = rng.standard_normal((9, 9))
a = xp.asarray(g @ g.T + 9 * np.eye(9))
results = [xp.asarray(g) @ xp.asarray(g.T), xp.linalg.cholesky(a), xp.linalg.solve(a, xp.asarray(g[:, :3]))]
digest = hashlib.sha256(b"".join(np.asarray(r).tobytes() for r in results)).hexdigest()
expected = [g @ g.T, np.linalg.cholesky(g @ g.T + 9 * np.eye(9))]
ok = all(np.allclose(np.asarray(r), e, rtol=1e-12) for r, e in zip(results, expected))
print(json.dumps({{"digest": digest, "ok": ok, "scipy": "scipy" in sys.modules}}))
"""


def _direct_symbols() -> bool:
    extension = blas_lapack._extension("scipy.linalg.cython_blas")
    return extension is not None and hasattr(extension, "scipy_dgemm_")


@pytest.mark.skipif(not _direct_symbols(), reason="SciPy does not link its bundled OpenBLAS (scipy_-prefixed symbols)")
def test_the_bundled_openblas_symbols_compute_the_capsules_bits_without_importing_scipy(tmp_path):
    direct = run_child(PROGRAM.format(capsules=False), tmp_path / "direct")
    capsules = run_child(PROGRAM.format(capsules=True), tmp_path / "capsules")
    assert direct["ok"] and capsules["ok"]
    assert direct["digest"] == capsules["digest"]
    assert (direct["scipy"], capsules["scipy"]) == (False, True)


def test_a_routine_scipy_does_not_have_is_an_error():
    with pytest.raises(NotImplementedError, match="no routine 'dnosuch'"):
        blas_lapack.routine_address("lapack_dnosuch")


#: Whether a child's import loads both extension modules' files before any product needs
#: them, on the loading thread (``preload.py``), and nothing else of SciPy.
LOADED_AT_IMPORT = """
import json, sys, threading
import plaidarray
from plaidarray.backend.llvm_cpu import blas_lapack
loaders = [t for t in threading.enumerate() if t.name == "plaidarray-preload"]
for t in loaders:
    t.join(60)
print(json.dumps({"loaders": len(loaders), "loaded": blas_lapack._loaded_extension.cache_info().currsize,
                  "scipy": "scipy" in sys.modules}))
"""


def test_the_import_loads_blas_and_lapack_in_the_background(tmp_path):
    found = run_child(LOADED_AT_IMPORT, tmp_path)
    assert found["loaded"] == len(blas_lapack.LIBRARIES)
    assert found["loaders"] <= 1 and not found["scipy"]


#: A child process whose load is slow (0.3 s) and which forks at once: the fork waits for
#: it, so the forked child finds it done (the platform's loader's lock not held).
FORK_WAITS = """
import json, os, time
import plaidarray
from plaidarray.backend.llvm_cpu import backend, blas_lapack, preload
done = []
blas_lapack.load_extensions = lambda: (time.sleep(0.3), done.append(True))
preload.start(backend.compiler)
pid = os.fork()
if pid == 0:
    os._exit(0 if done else 1)
_, status = os.waitpid(pid, 0)
print(json.dumps({"loaded_before_the_fork": os.waitstatus_to_exitcode(status) == 0}))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_fork_waits_for_the_background_load(tmp_path):
    assert run_child(FORK_WAITS, tmp_path)["loaded_before_the_fork"]
