#!/usr/bin/env bash
# The GPU tier on a GPU machine without network (docs/gpu.md): installs plaidarray from the
# working tree with the wheels carried beside it, runs the GPU tier's tests on the simulated
# device and on the GPU, array-api-tests with the GPU as default device where the suite was
# carried, then the GPU benchmark's quick rows; a short table last.
#
#   bash tools/gpu_check.sh [WHEELS_DIR]     # default .gpu_wheels: xdsl, immutabledict,
#                                            # ordered-set, array-api-compat wheels
# Under 8 minutes on an H100; nothing here needs the network.
set -uo pipefail
cd "$(dirname "$0")/.."
wheels=${1:-.gpu_wheels}
start=$(date +%s)
if [ -d "$wheels" ]; then
    python -m pip install -q --no-index --no-deps "$wheels"/*.whl
fi
PLAIDARRAY_BUILD_KERNELS=0 python -m pip install -q --no-index --no-deps --no-build-isolation -e . \
    || { echo "gpu_check: plaidarray did not install"; exit 1; }
nvidia-smi -L || true
card=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
python -m pytest -q -p no:cacheprovider tests/unit/backend/nvptx 2>&1 | tail -15
tests=${PIPESTATUS[0]}
bench=$(timeout 240 python -m benchmarks.gpu --quick 2>&1 | tail -8)
# array-api-tests with GPU 0 as default device, where the suite was carried (it is not on
# PyPI: ARRAY_API_TESTS_DIR, default .gpu_suite, a checkout with its array-api submodule) and
# its test dependencies are installed (hypothesis, pytest-json-report: wheels in WHEELS_DIR).
suite=${ARRAY_API_TESTS_DIR:-.gpu_suite}
if [ -d "$suite/array_api_tests" ] && python -c "import hypothesis, pytest_jsonreport" 2>/dev/null; then
    workers=$(python -c "import xdist" 2>/dev/null && echo "-n 8")  # each new graph waits for ptxas
    conformance=$(PLAIDARRAY_DEVICE=cuda timeout 150 python array-api-tests/run.py "$suite" --version 2025.12 \
        --examples 5 $workers -q -p no:warnings --tb=line 2>&1 | tail -1)
else
    conformance="array-api-tests: not run (no suite at $suite, or hypothesis/pytest-json-report missing)"
fi
echo
echo "## gpu_check ($card), $(( $(date +%s) - start )) s"
echo "GPU tier tests: exit $tests"
echo "$conformance"
echo "$bench"
exit "$tests"
