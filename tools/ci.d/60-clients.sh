#!/usr/bin/env bash
# The real-client suite (tests/clients/run.py): NVIDIA's device plugin and gpu-feature-discovery,
# nvidia-ctk, go-nvml, nvidia-ml-py, pynvml, nvml-wrapper's examples, nvitop, gpustat and nvtop, each
# at its pinned newest version, on the default, 64-GPU and MIG mixed layouts; it also checks that
# docs/real-clients.md is its output. TAP on stdout, log on stderr. The clients are cached outside
# the clone (tools/gotool.sh sets, a venv, a cargo build folder): a cold run installs and builds them.
set -uo pipefail
cd "$(dirname "$0")/../.."
# test-all.sh builds build-test; a developer tree has build/.
if [ -z "${GV_BIN:-}" ]; then
  GV_BIN=$PWD/build-test/src/cli/gpu-validator
  [ -x "$GV_BIN" ] || GV_BIN=$PWD/build/src/cli/gpu-validator
fi
export GV_BIN
exec python3 tests/clients/run.py --build build/ci
