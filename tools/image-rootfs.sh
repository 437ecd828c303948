#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tools/image-rootfs.sh [--build-dir DIR] OUTDIR
#
# Assembles, in OUTDIR, the file tree of the container image that deploy/Dockerfile builds,
# without a container engine: `meson install --destdir OUTDIR` of a build folder (gpu-validator,
# our nvidia-smi, the mock libnvidia-ml.so.1 under <prefix>/lib/gpu-validator/, the GPU
# profiles), plus every shared library those ELF files need, copied from this machine with the
# dynamic loader (found with ldd), /bin/sh, sleep and rm (the GPU Operator's manifests start the
# validator with `sh -c nvidia-validator` and remove markers with `rm -f`; the chart's mock pool
# runs `exec sleep infinity`), the CA
# bundle (libcurl's TLS), and the passwd/group entries of root and the non-root user 65532.
# deploy/Dockerfile runs it in its build stage and copies OUTDIR into an empty (scratch) image;
# tests/e2e/test_deploy.py runs the binaries from the tree with the tree's own loader (and chroot
# when root) to prove it is complete.
#
# The build folder defaults to ./build (tools/build.sh); it must be built already.
# Exit codes: 0 done, 1 a step failed, 2 usage.
set -eu

build_dir=build
while [ $# -gt 0 ]; do
    case "$1" in
        --build-dir) [ $# -ge 2 ] || { echo "usage: $0 [--build-dir DIR] OUTDIR" >&2; exit 2; }
                     build_dir=$2; shift 2 ;;
        --build-dir=*) build_dir=${1#--build-dir=}; shift ;;
        -h|--help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "$0: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--build-dir DIR] OUTDIR" >&2; exit 2; }
out=$1
src=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$build_dir/build.ninja" ] || { echo "$0: $build_dir is not a meson build folder (run tools/build.sh)" >&2; exit 1; }
[ -x "$build_dir/src/cli/gpu-validator" ] || { echo "$0: $build_dir/src/cli/gpu-validator is not built" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$out" in /) echo "$0: refusing to write into /" >&2; exit 1 ;; esac

# 1. The installed files, as the Dockerfile's build stage installs them.
meson install -C "$build_dir" --no-rebuild --quiet --destdir "$out" >/dev/null

prefix=$(meson introspect --buildoptions "$build_dir" |
    python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
bindir="$out$prefix/bin"
libexec="$out$prefix/lib/gpu-validator"
[ -x "$bindir/gpu-validator" ] || { echo "$0: meson install gave no $prefix/bin/gpu-validator" >&2; exit 1; }

# The mock library and nvidia-smi live beside each other in <prefix>/lib/gpu-validator, where
# `gpu-validator mock install` looks for them; copy any that the build does not install yet.
mkdir -p "$libexec"
if [ ! -e "$libexec/libnvidia-ml.so.1" ]; then
    cp -L "$build_dir/mock/nvml/libnvidia-ml.so.1" "$libexec/libnvidia-ml.so.1"
fi
if [ ! -e "$libexec/nvidia-smi" ]; then
    cp -L "$build_dir/mock/smi/nvidia-smi" "$libexec/nvidia-smi"
fi
# The name the GPU Operator's own validator DaemonSet runs (`sh -c nvidia-validator`).
ln -sf gpu-validator "$bindir/nvidia-validator"
mkdir -p "$out$prefix/share/gpu-validator/profiles"
cp "$src"/mock/profiles/*.yaml "$out$prefix/share/gpu-validator/profiles/"

# 2. /bin/sh and sleep for the chart's `sh -c "...; exec sleep infinity"` containers; rm for the
#    GPU Operator's own validator DaemonSet, whose preStop is `sh -c "rm -f /run/nvidia/validations/*-ready"`.
mkdir -p "$out/bin"
cp -L "$(command -v sh)" "$out/bin/sh"
cp -L "$(command -v sleep)" "$out/bin/sleep"
cp -L "$(command -v rm)" "$out/bin/rm"

# 3. Shared libraries of every ELF file in the tree, at the paths the host has them, and the loader.
copy_lib() {
    # $1: absolute path of a library on this machine
    [ -e "$out$1" ] && return 0
    mkdir -p "$out$(dirname "$1")"
    cp -L "$1" "$out$1"
}
is_elf() {
    [ -f "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "177ELF" ]
}
find "$out" -type f | sort | while read -r f; do
    is_elf "$f" || continue
    ldd "$f" 2>/dev/null | while read -r line; do
        case "$line" in
            *"=> not found"*) echo "$0: $f: $line" >&2; exit 1 ;;
            *"=> /"*) lib=${line#*=> }; copy_lib "${lib%% (*}" ;;
            /*) copy_lib "${line%% (*}" ;;
        esac
    done
done
# The loader under the path the binaries name (PT_INTERP), e.g. /lib64/ld-linux-x86-64.so.2.
interp=$(ldd "$bindir/gpu-validator" | sed -n 's|^[[:space:]]*\(/[^ ]*ld-linux[^ ]*\) .*|\1|p' | head -n 1)
[ -n "$interp" ] || { echo "$0: cannot find the dynamic loader of gpu-validator" >&2; exit 1; }
copy_lib "$interp"

# 4. The CA bundle at the path Debian's libcurl and OpenSSL read by default (for API servers
# whose certificate a public CA signed; in-cluster the service account's ca.crt is used).
ca=/etc/ssl/certs/ca-certificates.crt
if [ -f "$ca" ]; then
    mkdir -p "$out$(dirname "$ca")"
    cp -L "$ca" "$out$ca"
fi

# 5. A few files a container expects: users (root, and 65532 for the non-root components),
# scratch folders, and the folders the chart mounts into.
mkdir -p "$out/etc" "$out/tmp" "$out/run/nvidia/validations" "$out/run/nvidia/driver" "$out/host" \
    "$out/host-dev-char" "$out/etc/gpu-validator"
chmod 1777 "$out/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/bin/sh\n' >"$out/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$out/etc/group"

echo "image tree in $out: $prefix/bin/gpu-validator, $prefix/lib/gpu-validator/, loader $interp"
