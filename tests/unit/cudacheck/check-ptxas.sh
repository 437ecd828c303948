#!/usr/bin/env bash
# cuda-check's embedded PTX through NVIDIA's ptxas (from PyPI, tools/nvcc.sh) for every real GPU
# architecture that ptxas knows (nvcc --list-gpu-code): what a driver's JIT does with it on each GPU.
# Usage: check-ptxas.sh PRINT_PTX NVCC_HOME (TAP on stdout; skipped without nvcc).
set -uo pipefail
print_ptx=$1 home=${2:-}
if [ -z "$home" ] || [ ! -x "$home/bin/ptxas" ]; then
  echo "1..0 # SKIP nvcc is not installed (tools/nvcc.sh install)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$print_ptx" >"$work/cuda-check.ptx" || { echo "1..1"; echo "not ok 1 - print the PTX"; exit 1; }
mapfile -t archs < <("$home/bin/nvcc" --list-gpu-code | grep -E '^sm_[0-9]+$')
echo "1..${#archs[@]}"
n=0 failed=0
for a in "${archs[@]}"; do
  n=$((n + 1))
  if out=$("$home/bin/ptxas" -arch="$a" "$work/cuda-check.ptx" -o "$work/$a.cubin" 2>&1); then
    echo "ok $n - ptxas -arch=$a"
  else
    echo "not ok $n - ptxas -arch=$a: $out"
    failed=$((failed + 1))
  fi
done
[ "$failed" -eq 0 ]
