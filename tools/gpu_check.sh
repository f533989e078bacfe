#!/usr/bin/env bash
# The GPU tier on a GPU machine without network (docs/gpu.md): installs plaidarray from the
# working tree with the wheels carried beside it, runs the GPU tier's tests on the simulated
# device and on the GPU, array-api-tests with the GPU as default device where the suite was
# carried, and (API_SECONDS > 0) tests/api with the GPU as default device, these three side
# by side on the machine's cores; then the GPU benchmark (benchmarks/gpu.py), a short table last.
#
#   bash tools/gpu_check.sh [WHEELS_DIR]     # default .gpu_wheels: xdsl, immutabledict,
#                                            # ordered-set, array-api-compat wheels; for
#                                            # the suite ndindex, pytest-json-report,
#                                            # pytest-metadata; for the benchmark's fits
#                                            # scikit-learn (cp312), joblib, threadpoolctl
# Each step's whole log goes to LOGS (default $OUT where the device tool sets it, else /tmp).
# The steps before the benchmark took about 2 minutes on an H200 (2026-12-04); nothing here
# needs the network.
set -uo pipefail
cd "$(dirname "$0")/.."
wheels=${1:-.gpu_wheels}
py=${PYTHON:-python3}  # the GPU image's python3 is the one that holds PyTorch, JAX and CuPy
logs=${LOGS:-${OUT:-/tmp}}
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # JAX's rows share the card with plaidarray's
export PYTHONUNBUFFERED=1
start=$(date +%s)
if [ -d "$wheels" ]; then
    $py -m pip install -q --no-index --no-deps "$wheels"/*.whl
fi
PLAIDARRAY_BUILD_KERNELS=0 $py -m pip install -q --no-index --no-deps --no-build-isolation -e . \
    || { echo "gpu_check: plaidarray did not install"; exit 1; }
nvidia-smi -L || true
card=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
xdist=$($py -c "import xdist" 2>/dev/null && echo 1)
workers() { [ -n "$xdist" ] && echo "-n $1"; }
timeout "${TESTS_SECONDS:-240}" $py -m pytest -q -p no:cacheprovider $(workers 6) tests/unit/backend/nvptx \
    >"$logs/gpu_tier.log" 2>&1 &
tier=$!
# array-api-tests with GPU 0 as default device, where the suite was carried (it is not on
# PyPI: ARRAY_API_TESTS_DIR, default .gpu_suite, a checkout with its array-api submodule) and
# its test dependencies are installed (hypothesis; ndindex, pytest-json-report: wheels in WHEELS_DIR).
suite=${ARRAY_API_TESTS_DIR:-.gpu_suite}
if [ -d "$suite/array_api_tests" ] && $py -c "import hypothesis, pytest_jsonreport, ndindex" 2>/dev/null; then
    PLAIDARRAY_DEVICE=cuda timeout 150 $py array-api-tests/run.py "$suite" --version 2025.12 \
        --examples 5 $(workers 4) -q -p no:warnings --tb=line >"$logs/conformance.log" 2>&1 &
else
    echo "array-api-tests: not run (no suite at $suite, or hypothesis/pytest-json-report/ndindex missing)" \
        >"$logs/conformance.log"
fi
# tests/api with GPU 0 as default device (-v: the names of failures outlive the timeout)
if [ "${API_SECONDS:-0}" -gt 0 ]; then
    PLAIDARRAY_DEVICE=cuda timeout "$API_SECONDS" $py -m pytest -v -p no:cacheprovider $(workers 6) tests/api \
        --ignore tests/api/test_fft.py --deselect tests/api/test_devices.py >"$logs/api.log" 2>&1 &
fi
wait $tier
tests=$?
wait
# The benchmark last, its rows printed as they finish: a timeout (BENCH_SECONDS, default 300)
# keeps those done. `benchmarks.gpu --dry-run` (a test above) ran each row at tiny sizes first.
timeout "${BENCH_SECONDS:-300}" $py -m benchmarks.gpu --torch-compile >"$logs/benchmark.log" 2>&1
echo
echo "## gpu_check ($card), $(( $(date +%s) - start )) s"
echo "GPU tier tests: exit $tests; $(tail -1 "$logs/gpu_tier.log")"
echo "conformance: $(tail -1 "$logs/conformance.log")"
if [ -f "$logs/api.log" ]; then
    echo "tests/api on the GPU: $(grep -c ' PASSED' "$logs/api.log") passed, $(grep -c ' FAILED' "$logs/api.log") failed"
    grep ' FAILED' "$logs/api.log" | sed 's/^.* FAILED /FAILED /' | sort -u | head -30
fi
cat "$logs/benchmark.log"
exit "$tests"
