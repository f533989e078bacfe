#!/usr/bin/env bash
# The GPU tier on a GPU machine without network (docs/gpu.md): installs plaidarray from the
# working tree with the wheels carried beside it, runs the GPU tier's tests on the simulated
# device and on the GPU, array-api-tests with the GPU as default device where the suite was
# carried, then the GPU benchmark (benchmarks/gpu.py); a short table last.
#
#   bash tools/gpu_check.sh [WHEELS_DIR]     # default .gpu_wheels: xdsl, immutabledict,
#                                            # ordered-set, array-api-compat wheels; for
#                                            # the suite ndindex, pytest-json-report,
#                                            # pytest-metadata; for the benchmark's fits
#                                            # scikit-learn (cp312), joblib, threadpoolctl
# Its steps took about 2 minutes on an H200 (2026-12-04) before the benchmark had its matrix
# products, MLP, chains and scikit-learn rows; nothing here needs the network.
set -uo pipefail
cd "$(dirname "$0")/.."
wheels=${1:-.gpu_wheels}
py=${PYTHON:-python3}  # the GPU image's python3 is the one that holds PyTorch, JAX and CuPy
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX's rows share the card with plaidarray's
start=$(date +%s)
if [ -d "$wheels" ]; then
    $py -m pip install -q --no-index --no-deps "$wheels"/*.whl
fi
PLAIDARRAY_BUILD_KERNELS=0 $py -m pip install -q --no-index --no-deps --no-build-isolation -e . \
    || { echo "gpu_check: plaidarray did not install"; exit 1; }
nvidia-smi -L || true
card=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
workers=$($py -c "import xdist" 2>/dev/null && echo "-n 8")
$py -m pytest -q -p no:cacheprovider $workers tests/unit/backend/nvptx 2>&1 | tail -15
tests=${PIPESTATUS[0]}
# array-api-tests with GPU 0 as default device, where the suite was carried (it is not on
# PyPI: ARRAY_API_TESTS_DIR, default .gpu_suite, a checkout with its array-api submodule) and
# its test dependencies are installed (hypothesis; ndindex, pytest-json-report: wheels in WHEELS_DIR).
suite=${ARRAY_API_TESTS_DIR:-.gpu_suite}
if [ -d "$suite/array_api_tests" ] && $py -c "import hypothesis, pytest_jsonreport, ndindex" 2>/dev/null; then
    conformance=$(PLAIDARRAY_DEVICE=cuda timeout 150 $py array-api-tests/run.py "$suite" --version 2025.12 \
        --examples 5 $workers -q -p no:warnings --tb=line 2>&1 | tail -1)
else
    conformance="array-api-tests: not run (no suite at $suite, or hypothesis/pytest-json-report/ndindex missing)"
fi
# The benchmark last, its rows printed as they finish: a timeout (BENCH_SECONDS, default 300)
# keeps those done. `benchmarks.gpu --dry-run` (a test above) ran each row at tiny sizes first.
bench=$(timeout "${BENCH_SECONDS:-300}" $py -m benchmarks.gpu --torch-compile 2>&1 | tail -20)
echo
echo "## gpu_check ($card), $(( $(date +%s) - start )) s"
echo "GPU tier tests: exit $tests"
echo "$conformance"
echo "$bench"
exit "$tests"
