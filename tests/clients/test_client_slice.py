"""A fast slice of real clients on plaidarray, run in CI: the plaidarray cases of
scikit-learn's array-API utilities and of GaussianMixture (which relies on writes through
views), SciPy's array-API functions against NumPy, and a slice of SciPy's own tests with a
test for each cause of issue 27. The full runs, and array-api-extra's, are
``clients/run.py`` (docs/clients.md); scikit-learn and SciPy come with the ``test`` extra."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jit_helpers import REPO

CLIENTS = REPO / "clients"
SKLEARN_SLICE = ("sklearn.utils.tests.test_array_api", "sklearn.mixture.tests.test_gaussian_mixture")


def _passed(arguments: list[str], workdir: Path) -> int:
    """Run pytest on ``arguments`` in a process of its own, in ``workdir`` (so that neither
    this suite's conftest nor its settings apply), with the clients' plugins importable;
    the number of tests that passed, after checking that none failed."""
    env = dict(os.environ, SCIPY_ARRAY_API="1", PLAIDARRAY_CACHE_DIR=str(workdir / "cache"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CLIENTS), str(CLIENTS.parent), env.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", *arguments],
                         cwd=workdir, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    passed = re.search(r"(\d+) passed", run.stdout)
    assert passed, run.stdout[-500:]
    return int(passed.group(1))


def test_scikit_learn_slice_passes_on_plaidarray(tmp_path):
    import sklearn  # noqa: F401  (the test extra installs it: missing, this fails)
    arguments = ["-p", "sklearn_plugin", "-k", "plaidarray and not float32", "--pyargs", *SKLEARN_SLICE]
    assert _passed(arguments, tmp_path) >= 20  # the slice did run plaidarray cases


#: SciPy test files (under site-packages/scipy) and the plaidarray cases of each that the
#: slice runs: one or two tests per cause of issue 27 (writes through a transposed view in
#: oaconvolve, np.asarray(output) filled by ndimage and read by sosfilt's Cython, a 2-D index
#: array in bootstrap, linspace of integers, format specs on 0-d arrays).
SCIPY_SUITE_SLICE = {
    "signal/tests/test_signaltools.py": "TestOAConvolve and test_real_manylens and 80 or TestSOSFilt and test_rank1"
                                        " or TestCorrelateReal and test_rank1_full",
    "ndimage/tests/test_filters.py": "test_correlate14 or test_correlate01_overlap or TestVectorizedFilter and not test_input_validation",
    "stats/tests/test_resampling.py": "TestBootstrap and (test_bootstrap_resample or test_jackknife_resample)",
    "integrate/tests/test_quadrature.py": "TestQMCQuad and test_sign",
}


@pytest.mark.slow  # a minute: the slow run (tools/slow_tests.sh)
def test_scipy_suite_slice_passes_on_plaidarray(tmp_path):
    import scipy

    package = Path(scipy.__file__).parent
    passed = 0
    for path, selection in SCIPY_SUITE_SLICE.items():
        arguments = ["-p", "scipy_plugin", "-m", "array_api_backends", f"--rootdir={package.parent}",
                     "-k", f"plaidarray and ({selection})", str(package / path)]
        passed += _passed(arguments, tmp_path)
    assert passed >= 100


def test_scipy_functions_match_numpy_on_plaidarray(tmp_path):
    assert _passed(["-k", "plaidarray", str(CLIENTS / "scipy_functions.py")], tmp_path) >= 50
