#!/usr/bin/env bash
# Configures (or reconfigures) and builds ./build. Extra arguments go to meson setup.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f build/build.ninja ]; then
  meson setup --reconfigure build "$@" >/dev/null
else
  meson setup build "$@" >/dev/null
fi
ninja -C build >/dev/null || ninja -C build
echo "build: ok (binaries in build/src/cli/gpu-validator, build/mock/smi/nvidia-smi, build/mock/nvml/libnvidia-ml.so.1)"
