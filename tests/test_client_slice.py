"""A fast slice of real clients on plaidarray, run in CI: the plaidarray cases of
scikit-learn's array-API utilities and of GaussianMixture (which relies on writes through
views), and SciPy's array-API functions against NumPy. The full runs, and
array-api-extra's, are ``clients/run.py`` (docs/clients.md); scikit-learn comes with the
``test`` extra."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
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
    pytest.importorskip("sklearn")
    arguments = ["-p", "sklearn_plugin", "-k", "plaidarray and not float32", "--pyargs", *SKLEARN_SLICE]
    assert _passed(arguments, tmp_path) >= 20  # the slice did run plaidarray cases


def test_scipy_functions_match_numpy_on_plaidarray(tmp_path):
    assert _passed(["-k", "plaidarray", str(CLIENTS / "scipy_functions.py")], tmp_path) >= 50
