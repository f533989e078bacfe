"""ruff and mypy, configured in pyproject.toml, are clean: CI runs them through the test
suite (the README's test command installs both with the test extra)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from jit_helpers import REPO

ROOT = REPO


@pytest.mark.parametrize("arguments", [["ruff", "check", "--no-cache", "."], ["mypy", "--cache-dir", "{tmp}"]],
                         ids=["ruff", "mypy"])
def test_the_tree_is_clean(arguments, tmp_path):
    command = [sys.executable, "-m", *(a.format(tmp=tmp_path) for a in arguments)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
