"""The GPU benchmark's rows (``benchmarks/gpu.py``) at ``--dry-run``: every workload, the
copy and the scikit-learn fits run at tiny sizes on the device ``cuda`` (the simulated GPU
here, the card on a GPU machine), plaidarray's jit and eager results checked against
NumPy's. A GPU machine lends a few minutes: a row that fails there is a row lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from jit_helpers import child_env

REPO = Path(__file__).resolve().parents[4]


def test_every_benchmark_row_runs_and_agrees_with_numpy(tmp_path):
    done = subprocess.run([sys.executable, "-m", "benchmarks.gpu", "--dry-run"], capture_output=True, text=True,
                          timeout=600, cwd=REPO, env=child_env(tmp_path, PLAIDARRAY_SIMULATED_GPUS="1"))
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    names = [row.split(" | ")[0][2:] for row in rows[1:]]
    from benchmarks.gpu import COPY_ROW, WORKLOADS  # noqa: PLC0415  (the repository's root is on the path in tests)

    assert names[0] == COPY_ROW
    assert [name for name in names if name in WORKLOADS] == sorted(WORKLOADS, key=lambda n: WORKLOADS[n].calls is not None)
