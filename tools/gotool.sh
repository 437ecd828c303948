#!/usr/bin/env bash
# Builds the pinned Go test tools (Kubernetes components, etcd, KWOK, NVIDIA's Go tools, ...)
# into a cache outside the clone, keyed by what pins them, so a second run on the same machine
# starts in seconds.
#
# Each set is a Go module under tools/go/SET: go.mod and go.sum pin every version (fetched
# from the Go module proxy), and the file `binaries` lists "NAME PACKAGE" lines to build. An
# optional file `ldflags` adds linker flags (e.g. -X for the version a binary reports); a file
# `cgo` builds the set with CGO_ENABLED=1 (go-nvml's dlopen of libnvidia-ml.so.1 needs cgo).
#
# Usage:
#   tools/gotool.sh build SET...      build the sets (if not cached); prints each bin folder
#   tools/gotool.sh bin SET NAME      print the path of one binary (building the set if needed)
#   tools/gotool.sh list              the sets and their cache keys
#
# Examples:
#   tools/gotool.sh build k8s-1.37
#   "$(tools/gotool.sh bin k8s-1.37 kube-apiserver)" --version
#
# Environment: GV_CACHE (default /var/cache/gpu-validator, or ~/.cache/gpu-validator when that
# cannot be written). Build output goes to stderr; stdout carries only the paths.
# Exit codes: 0 ok, 1 a build failed, 2 usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

cache_root() {
  local c=${GV_CACHE:-}
  if [ -z "$c" ]; then
    c=/var/cache/gpu-validator
    if ! mkdir -p "$c" 2>/dev/null || [ ! -w "$c" ]; then c=${XDG_CACHE_HOME:-$HOME/.cache}/gpu-validator; fi
  fi
  mkdir -p "$c/go"
  printf '%s\n' "$c"
}

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# The cache key: the set's files and the Go version, so a change to any pin rebuilds.
set_key() {
  local dir=$here/go/$1
  { go env GOVERSION; cd "$dir" && find . -type f ! -name '*.md' | LC_ALL=C sort | xargs sha256sum; } |
    sha256sum | cut -c1-12
}

set_dir() { printf '%s/go/%s-%s\n' "$(cache_root)" "$1" "$(set_key "$1")"; }

build_set() {
  local set=$1 dir=$here/go/$1 out tmp start
  [ -f "$dir/binaries" ] || { echo "gotool: no set '$set' (tools/go/$set/binaries)" >&2; exit 2; }
  out=$(set_dir "$set")
  if [ -f "$out/.complete" ]; then printf '%s/bin\n' "$out"; return 0; fi
  exec 9>"$out.lock"
  flock 9
  if [ ! -f "$out/.complete" ]; then
    tmp=$out.tmp.$$
    rm -rf "$tmp"; mkdir -p "$tmp/bin"
    start=$(date +%s)
    echo "gotool: building $set (cold build; cached in $out)" >&2
    local name pkg pkgs=() ldflags='-s -w' cgo=${CGO_ENABLED:-0}
    if [ -f "$dir/cgo" ]; then cgo=1; fi
    if [ -f "$dir/ldflags" ]; then ldflags="$ldflags $(grep -v '^#' "$dir/ldflags" | tr '\n' ' ')"; fi
    while read -r name pkg; do
      case $name in ''|'#'*) continue ;; esac
      pkgs+=("$pkg")
    done <"$dir/binaries"
    if ! (cd "$dir" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=$cgo \
          go build -trimpath -ldflags="$ldflags" -o "$tmp/bin/" "${pkgs[@]}") >&2; then
      rm -rf "$tmp"; echo "gotool: build of $set failed" >&2; exit 1
    fi
    # go build names a binary after its package's last element; rename to the listed names.
    while read -r name pkg; do
      case $name in ''|'#'*) continue ;; esac
      local built=$tmp/bin/${pkg##*/}
      if [ "$built" != "$tmp/bin/$name" ]; then mv "$built" "$tmp/bin/$name"; fi
    done <"$dir/binaries"
    echo "$(( $(date +%s) - start ))" >"$tmp/build-seconds"
    touch "$tmp/.complete"
    rm -rf "$out"; mv "$tmp" "$out"
    echo "gotool: built $set in $(cat "$out/build-seconds") s" >&2
  fi
  exec 9>&-
  printf '%s/bin\n' "$out"
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
  build) [ $# -ge 1 ] || usage; for s in "$@"; do build_set "$s"; done ;;
  bin) [ $# -eq 2 ] || usage; d=$(build_set "$1"); [ -x "$d/$2" ] || { echo "gotool: set $1 has no binary $2" >&2; exit 2; }; printf '%s/%s\n' "$d" "$2" ;;
  list) for d in "$here"/go/*/; do s=$(basename "$d"); printf '%s\t%s\n' "$s" "$(set_dir "$s")"; done ;;
  -h|--help|help) usage ;;
  *) usage ;;
esac
