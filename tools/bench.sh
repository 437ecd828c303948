#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the quick benchmarks of bench/ against a built tree and prints their
# figures (nothing is asserted about time).  The long ones are left out:
# bench/fleet (200 simulated nodes, minutes) and the soaks in bench/soak;
# run those alone as their headers say.
#
#   tools/bench.sh [BUILD_DIR]        (default: build; it is built first)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/build.ninja" ]; then
  echo "tools/bench.sh: $build is not a meson build folder (run: meson setup $build)" >&2
  exit 2
fi
ninja -C "$build" >/dev/null || { ninja -C "$build"; exit 1; }

status=0
run() { # title, command...
  echo "== $1"
  shift
  "$@" || { echo "   (exit $?)"; status=1; }
}
run "marker store: publish -> wait latency (bench/markers)" "$build/bench/markers/bench-markers-wait" 1000
run "mock libnvidia-ml: init + enumerate + shutdown (bench/nvml)" \
  "$build/bench/nvml/bench-mock-nvml" "$build/mock/nvml/libnvidia-ml.so.1" 200
run "mock libnvidia-ml: every device query, 64 GPUs (bench/nvml)" \
  env MOCK_NVML_NUM_DEVICES=64 "$build/bench/nvml/bench-mock-nvml-sweep" \
  "$build/mock/nvml/libnvidia-ml.so.1" mock/nvml/nvml-api.txt 20
run "mock libnvidia-ml: every device query, 64 GPUs x 7 MIG devices (bench/nvml)" \
  env MOCK_NVML_CONFIG=bench/nvml/a100-64x7-mig.yaml "$build/bench/nvml/bench-mock-nvml-sweep" \
  "$build/mock/nvml/libnvidia-ml.so.1" mock/nvml/nvml-api.txt 5
run "nvidia-smi on the mock, 8 and 64 GPUs (bench/smi)" python3 bench/smi/bench-smi.py "$build"
run "cuda-check on the mock libcuda, 8 and 64 GPUs (bench/cuda)" python3 bench/cuda/bench_cuda_check.py "$build" 5
run "gpu-validator run --mock, the whole chain (bench/run)" python3 bench/run/bench_run.py "$build"
run "metrics exporter: 1000 scrapes (bench/metrics)" python3 bench/metrics/bench_metrics.py "$build"
run "re-validation after a driver-container restart (bench/revalidate)" python3 bench/revalidate/bench_revalidate.py "$build"
exit $status
