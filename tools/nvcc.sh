#!/usr/bin/env bash
# NVIDIA's CUDA compiler (nvcc, ptxas) from PyPI, pinned, as a test tool: it builds the test kernels
# of the mock libcuda (tests/unit/mock-cuda) and checks cuda-check's PTX with ptxas
# (tests/unit/cudacheck).  The product links none of it.  Installed once into a virtual environment
# in the cache outside the clone, keyed by the pinned versions.
#
# Usage:
#   tools/nvcc.sh install      install (if not cached); prints the folder that holds bin/nvcc
#   tools/nvcc.sh path         print that folder if installed, else nothing (exit 1)
#
# Environment: GV_CACHE (default /var/cache/gpu-validator, or ~/.cache/gpu-validator when that
# cannot be written).  Exit codes: 0 ok, 1 not installed / install failed, 2 usage.
set -euo pipefail

# The pins: nvcc and ptxas, NVVM (cicc), and the headers nvcc includes (crt, the runtime's).
version=13.5.37
pins=(nvidia-cuda-nvcc==$version nvidia-nvvm==$version nvidia-cuda-crt==$version nvidia-cuda-runtime==$version)

cache_root() {
  local c=${GV_CACHE:-}
  if [ -z "$c" ]; then
    c=/var/cache/gpu-validator
    if ! mkdir -p "$c" 2>/dev/null || [ ! -w "$c" ]; then c=${XDG_CACHE_HOME:-$HOME/.cache}/gpu-validator; fi
  fi
  mkdir -p "$c"
  printf '%s\n' "$c"
}

venv=$(cache_root)/nvcc-$version
find_home() { # the folder with bin/nvcc inside the environment
  local n
  n=$(find "$venv/venv/lib" -path '*/nvidia/cu*/bin/nvcc' -type f 2>/dev/null | head -n 1)
  [ -n "$n" ] && dirname "$(dirname "$n")"
}

case "${1:-}" in
  path)
    home=$(find_home) || exit 1
    [ -x "$home/bin/nvcc" ] || exit 1
    printf '%s\n' "$home"
    ;;
  install)
    if ! home=$(find_home) || [ ! -x "$home/bin/nvcc" ]; then
      exec 9>"$venv.lock"
      flock 9
      if ! home=$(find_home); then
        rm -rf "$venv/venv"
        python3 -m venv "$venv/venv" >&2
        "$venv/venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}" >&2
        home=$(find_home) || { echo "nvcc.sh: nvcc missing after install" >&2; exit 1; }
      fi
    fi
    printf '%s\n' "$home"
    ;;
  *)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
