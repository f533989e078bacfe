"""A fast slice of a real client's own array-API tests, run on plaidarray in CI: the
plaidarray cases of scikit-learn's array-API utilities and of GaussianMixture (which
relies on writes through views). The full runs, and array-api-extra's, are
``clients/run.py`` (docs/clients.md); scikit-learn comes with the ``test`` extra."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
SLICE = ("sklearn.utils.tests.test_array_api", "sklearn.mixture.tests.test_gaussian_mixture")


def test_scikit_learn_slice_passes_on_plaidarray(tmp_path):
    pytest.importorskip("sklearn")
    env = dict(os.environ, SCIPY_ARRAY_API="1", PLAIDARRAY_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CLIENTS), str(CLIENTS.parent), env.get("PYTHONPATH")]))
    # Its own directory, so that neither this suite's conftest nor its settings apply.
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "sklearn_plugin",
                          "--tb=short", "-k", "plaidarray and not float32", "--pyargs", *SLICE],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:]
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) >= 20, summary  # the slice did run plaidarray cases
