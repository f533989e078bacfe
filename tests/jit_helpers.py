"""Helpers for the jit, control-flow, persistent-cache and CLI tests.

``isolated_cache_dir`` points ``PLAIDARRAY_CACHE_DIR`` at a temporary directory for the
whole session, so tests never write the user's compile cache. It is autouse: importing
it into a test module (or into conftest.py, to cover every test) activates it.

``run_child`` runs Python code in a fresh interpreter (empty in-memory caches, as a
second process of a user would have) and returns the JSON object it prints last.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session", autouse=True)
def isolated_cache_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("plaidarray-cache")
    saved = os.environ.get("PLAIDARRAY_CACHE_DIR")
    os.environ["PLAIDARRAY_CACHE_DIR"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("PLAIDARRAY_CACHE_DIR", None)
    else:
        os.environ["PLAIDARRAY_CACHE_DIR"] = saved


def child_env(cache_dir: Path | str, **extra: str) -> dict[str, str]:
    """The environment of a child process using ``cache_dir`` and this checkout."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "PLAIDARRAY_CACHE_DIR": str(cache_dir), **extra}
    env.pop("PLAIDARRAY_DUMP", None)
    return env


def start_child(code: str, cache_dir: Path | str, **extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], env=child_env(cache_dir, **extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_child(process: subprocess.Popen, timeout: float = 120) -> dict:
    """The child's last line of output, as JSON; a child still running after ``timeout``
    is killed (left running, it would slow every later test down)."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    assert process.returncode == 0, f"child failed ({process.returncode}):\n{err}"
    return json.loads(out.strip().splitlines()[-1])


def run_child(code: str, cache_dir: Path | str, **extra: str) -> dict:
    return finish_child(start_child(code, cache_dir, **extra))
