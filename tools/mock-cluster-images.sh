#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# tools/mock-cluster-images.sh [--force]
#
# Builds with podman, from files of this machine, the images tools/mock-cluster.sh imports into
# the node's containerd, as docker-archives under build/image/:
#   gpu-validator-<version>.tar   ours (tools/image.sh build), rebuilt when a file it is made of
#                                 (meson.build, abi/ src/ mock/ deploy/Dockerfile, ...) is newer
#   gv-pause-1.tar                localhost/gv-pause:1, the pod sandbox: Debian's static catatonit
#                                 run as `catatonit -P` (what podman's own infra image runs)
#   gv-workload-1.tar             localhost/gv-workload:1, a minimal workload: busybox and glibc,
#                                 what a CUDA base image gives the nvidia-smi the runtime mounts
#   nvidia-device-plugin-<v>.tar  localhost/nvidia-device-plugin:<v>, NVIDIA's device plugin
#                                 (tools/go/nvidia-device-plugin) with busybox for its entrypoint
# Each of the three small images is rebuilt when missing or older than its inputs; the images
# are removed from podman's storage again (only the archives stay).  --force rebuilds all.
# Needs podman, skopeo, catatonit, busybox (tools/setup-debian.sh).  Exit codes: 0 ok, 1 failed.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$src/build/image
export CONTAINERS_CONF="$src/tools/containers/containers.conf"
export CONTAINERS_STORAGE_CONF="$src/tools/containers/storage.conf"
force=0
[ "${1:-}" != --force ] || force=1

log() { printf 'mock-cluster-images: %s\n' "$*" >&2; }

stale() { # ARCHIVE INPUT...: true when the archive is missing or older than an input
    local a=$1 f; shift
    [ "$force" = 1 ] && return 0
    [ -f "$a" ] || return 0
    for f in "$@"; do [ "$f" -nt "$a" ] && return 0; done
    [ -n "$(find "$@" -newer "$a" -print -quit 2>/dev/null)" ]
}

# rootfs_libc DIR: glibc's loader and libraries busybox (and a cgo binary) load.
rootfs_libc() {
    local d=$1 lib
    mkdir -p "$d/lib/x86_64-linux-gnu" "$d/lib64" "$d/bin" "$d/tmp" "$d/etc"
    for lib in libc.so.6 libresolv.so.2 libm.so.6; do
        cp -L "/lib/x86_64-linux-gnu/$lib" "$d/lib/x86_64-linux-gnu/"
    done
    cp -L /lib64/ld-linux-x86-64.so.2 "$d/lib64/"
    cp -L /bin/busybox "$d/bin/busybox"
    local app
    for app in sh cat ls grep sleep echo rm test "[" env mkdir lsmod mount true false; do
        ln -sf busybox "$d/bin/$app"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$d/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$d/etc/group"
    chmod 1777 "$d/tmp"
}

# build NAME TAG CONTEXT CONTAINERFILE-TEXT: podman build, archive, remove from storage.
build() {
    local name=$1 tag=$2 ctx=$3 text=$4 ref="localhost/$1:$2"
    printf '%s\n' "$text" >"$ctx/Containerfile"
    podman build --network host --layers=false -q -f "$ctx/Containerfile" -t "$ref" "$ctx" >/dev/null
    rm -f "$out/$name-$tag.tar"
    skopeo copy --quiet "containers-storage:$ref" "docker-archive:$out/$name-$tag.tar:$ref"
    podman rmi -f "$ref" >/dev/null 2>&1 || true
    log "$ref -> build/image/$name-$tag.tar"
}

mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gv-mcimg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Ours.
ver=$(sed -n "s/^[[:space:]]*version:[[:space:]]*'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1)
if stale "$out/gpu-validator-$ver.tar" "$src/meson.build" "$src/meson_options.txt" "$src/base" "$src/abi" "$src/src" \
        "$src/mock" "$src/deploy/Dockerfile" "$src/tools/image-rootfs.sh" "$src/tools/image.sh"; then
    "$src/tools/image.sh" build
fi

# The pause image.
if stale "$out/gv-pause-1.tar" /usr/bin/catatonit "$0"; then
    mkdir -p "$tmp/pause"; cp -L /usr/bin/catatonit "$tmp/pause/catatonit"
    build gv-pause 1 "$tmp/pause" 'FROM scratch
COPY catatonit /catatonit
ENTRYPOINT ["/catatonit", "-P"]'
fi

# The workload image.
if stale "$out/gv-workload-1.tar" /bin/busybox "$0"; then
    rootfs_libc "$tmp/workload/rootfs"
    build gv-workload 1 "$tmp/workload" 'FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
CMD ["sh"]'
fi

# NVIDIA's device plugin.
dp=$("$src/tools/gotool.sh" bin nvidia-device-plugin nvidia-device-plugin)
dpv=$(sed -n 's/.*internal\/info.version=\(v[0-9.]*\).*/\1/p' "$src/tools/go/nvidia-device-plugin/ldflags")
if stale "$out/nvidia-device-plugin-$dpv.tar" "$dp" /bin/busybox "$0"; then
    rootfs_libc "$tmp/dp/rootfs"
    mkdir -p "$tmp/dp/rootfs/usr/bin"; cp -L "$dp" "$tmp/dp/rootfs/usr/bin/nvidia-device-plugin"
    build nvidia-device-plugin "$dpv" "$tmp/dp" 'FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
ENTRYPOINT ["nvidia-device-plugin"]'
fi
