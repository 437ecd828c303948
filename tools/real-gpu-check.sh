#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The real-GPU checks of the validation-chain and mock-backend issues, as one
# short script for a machine with an NVIDIA GPU and driver (for example the
# device machine some sessions are lent). Results go to $OUT (or ./real-gpu-out).
#
#   1. build (plain, no sanitizers) if needed;
#   2. `gpu-validator run --components driver` against the real driver, with a
#      temporary status folder; the marker and the timing are saved;
#   3. tools/compare-nvidia-smi.sh: our nvidia-smi beside NVIDIA's;
#   4. `gpu-validator cuda-check` on every GPU.
# Exit status: the number of steps that failed.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/real-gpu-out}
mkdir -p "$OUT"
fail=0

if [ ! -x build/src/cli/gpu-validator ]; then
  ./tools/build.sh >"$OUT/build.log" 2>&1 || { echo "build failed (see build.log)"; exit 10; }
fi
GV=build/src/cli/gpu-validator
status=$(mktemp -d)

{ nvidia-smi -L; uname -r; cat /proc/driver/nvidia/version; } >"$OUT/machine.txt" 2>&1

start=$(date +%s.%N)
$GV run --components driver --output-dir "$status" --dev-char-dir "$status/dev-char" >"$OUT/run-driver.txt" 2>&1 || fail=$((fail+1))
end=$(date +%s.%N)
echo "wall seconds: $(echo "$end - $start" | bc 2>/dev/null || echo "$start $end")" >>"$OUT/run-driver.txt"
cp "$status/driver-ready" "$OUT/driver-ready" 2>/dev/null

./tools/compare-nvidia-smi.sh build/mock/smi/nvidia-smi >"$OUT/compare-nvidia-smi.txt" 2>&1 || fail=$((fail+1))
$GV cuda-check >"$OUT/cuda-check.txt" 2>&1 || fail=$((fail+1))

rm -rf "$status"
echo "real-gpu-check: $fail step(s) failed; results in $OUT"
exit $fail
