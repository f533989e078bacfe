#!/usr/bin/env bash
# The GPU tier on a GPU machine without network (docs/gpu.md): installs plaidarray from the
# working tree with the wheels carried beside it, runs the GPU tier's tests on the simulated
# device and on the GPU, then the GPU benchmark's quick rows; a short table last.
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
echo
echo "## gpu_check ($card), $(( $(date +%s) - start )) s"
echo "GPU tier tests: exit $tests"
echo "$bench"
exit "$tests"
