#!/usr/bin/env bash
# The tests the README's test command leaves out, in the venv that command made:
# those marked slow (SciPy's suite slice, Cubed's clusters, every-length FFT, sums of
# 10^8 values, a thousand compiles for memory), then the whole fast tier on the Python
# twins of the C modules (the README's command runs a slice of it), then the API tier on
# the second CPU device (every array made on cpu:1: backend/devices.py). About 8 minutes
# on a 2-core machine. Client libraries' full suites are clients/run.py (docs/clients.md).
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pytest -q -rs -n auto --maxprocesses=4 -m slow
PLAIDARRAY_PURE_PYTHON=1 python -m pytest -q -rs -n auto --maxprocesses=4 -m "not slow"
PLAIDARRAY_CPU_DEVICES=2 PLAIDARRAY_DEVICE=cpu:1 python -m pytest -q -rs -n auto --maxprocesses=4 -m "not slow" tests/api
