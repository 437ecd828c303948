#!/usr/bin/env bash
# Installs what gpu-validator needs to build and test on Debian 12 (bookworm) or later.
# Run as root (or with sudo). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

packages=(
  # build
  gcc meson ninja-build pkg-config
  # libraries (Debian packages made for the job)
  libyaml-dev libjson-c-dev libcurl4-openssl-dev libmicrohttpd-dev libcmocka-dev
  # zstd-compressed PTX in fatbins (the mock libcuda)
  libzstd-dev
  # tests: e2e runner (pytest), fuzzing, metrics linter, TLS for the test API server, npm test tools
  python3 python3-pytest clang libclang-rt-14-dev openssl prometheus nodejs npm
  # the official Kubernetes Python client: conformance of the test API server (tests/e2e)
  python3-kubernetes
  # static analysis (tools/static-analysis.sh)
  cppcheck clang-tidy
  # the Promela model of the marker protocol, and a third sh for the quoting test
  spin busybox
  # a third-party NVML client built offline against the mock (tests/e2e/test_nvml_wrapper.py)
  cargo librust-nvml-wrapper-dev
  # the container image: build (tools/image.sh) and smoke test (tools/image-smoke.py)
  podman runc skopeo mmdebstrap python3-yaml
  # peak RSS in the benchmarks (bench/run, bench/smi): GNU time
  time
  # the real-client suite (tests/clients): nvtop (Debian's contrib component, added below) in tmux
  nvtop tmux
  # the mock cluster's node (tools/mock-cluster.sh): CNI plugins, kube-proxy's iptables, the pause
  # image's catatonit, the workload image's busybox, curl for health checks
  containernetworking-plugins iptables catatonit curl
  # NVIDIA's nvcc from PyPI in a virtual environment (tools/nvcc.sh): the mock libcuda's test kernels
  python3-venv
)
# nvtop is in Debian's contrib component: add it (a sources file of our own) when no source has it.
if ! grep -rqsE '^(Components:.*\bcontrib\b|deb .* contrib)' /etc/apt/sources.list /etc/apt/sources.list.d/ &&
   [ -r /etc/os-release ]; then
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$codename" | $SUDO tee /etc/apt/sources.list.d/gpu-validator-contrib.sources >/dev/null
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm may come from elsewhere (nvm, NodeSource): a working npm is enough.
if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -r -a missing <<<"${missing[*]:-}"
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Test-only npm tools (exact versions from the lock files).
for d in tests/e2e/js deploy/tools; do
  if [ -f "$d/package.json" ]; then
    if [ -f "$d/package-lock.json" ]; then
      npm ci --prefix "$d" --no-audit --no-fund --loglevel=error >/dev/null
    else
      npm install --prefix "$d" --no-audit --no-fund --loglevel=error >/dev/null
    fi
  fi
done
# NVIDIA's CUDA compiler from PyPI (pinned; cached outside the clone): a test tool only. Without
# it the nvcc-built kernel tests report themselves skipped, so a registry outage is not fatal.
tools/nvcc.sh install >/dev/null || echo "setup: nvcc from PyPI not installed; the mock libcuda's kernel tests will be skipped" >&2

echo "setup: ok"
