"""Where llvm-cpu's kernels find BLAS and LAPACK (``backend/llvm_cpu/blas_lapack.py``):
SciPy's bundled OpenBLAS symbols, taken without importing SciPy where its wheel has them,
else the Cython API's capsules; both the same routines, so the same bits."""

from __future__ import annotations


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
