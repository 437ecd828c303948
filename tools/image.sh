#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# tools/image.sh build|smoke|name
#
#   build  Builds the container image from deploy/Dockerfile with podman and tags it
#          localhost/gpu-validator:<version> (the chart's default image).  The Dockerfile's base
#          images (debian:<suite>) are made with mmdebstrap (--variant=minbase) and `podman import`
#          when they are not in local storage, so no registry is needed.  Writes, under
#          build/image/: gpu-validator-<version>.tar (docker-archive, for `kind load
#          image-archive`, `ctr -n k8s.io images import`, `docker load`) and
#          gpu-validator-<version>.oci.tar (OCI archive).  Removes the build stage's leftover images.
#   smoke  Runs the built image as the rendered chart does (tools/image-smoke.py: read-only root,
#          no network), printing TAP.
#   name   Prints the image's name.
#
# Installs podman, runc, skopeo and mmdebstrap (apt-get) when missing.  The machine's container
# configuration is not changed: tools/containers/containers.conf and storage.conf are passed with
# CONTAINERS_CONF and CONTAINERS_STORAGE_CONF.  Runs as root (podman's rootful storage).
# Environment: GV_DEBIAN_MIRROR (default http://deb.debian.org/debian) for mmdebstrap.
# Exit codes: 0 done, 1 a step failed, 2 usage.  docs/deploy.md, "The image".
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"

export CONTAINERS_CONF="$src/tools/containers/containers.conf"
export CONTAINERS_STORAGE_CONF="$src/tools/containers/storage.conf"
out_dir="$src/build/image"
dockerfile="$src/deploy/Dockerfile"
mirror=${GV_DEBIAN_MIRROR:-http://deb.debian.org/debian}

usage() { sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; }
log() { echo "image: $*" >&2; }

version() {
    sed -n "s/^[[:space:]]*version:[[:space:]]*'\([^']*\)'.*/\1/p" meson.build | head -n 1
}
image_name() { echo "localhost/gpu-validator:$(version)"; }

need_tools() {
    local missing=() p
    for p in podman runc skopeo mmdebstrap; do
        command -v "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    log "installing ${missing[*]}"
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends podman runc skopeo mmdebstrap >/dev/null
}

# Makes debian:<suite> (docker.io/library/debian:<suite>, the name FROM resolves to) with
# mmdebstrap when local storage has no such image.  Only debian:<suite> bases are made.
base_image() {
    local ref=$1 suite tmp
    case "$ref" in
        debian:*) suite=${ref#debian:} ;;
        *) log "$ref: not in local storage and not a debian:<suite> image tools/image.sh can make"; return 1 ;;
    esac
    podman image exists "docker.io/library/$ref" && return 0
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/gv-base.XXXXXX")
    log "making $ref with mmdebstrap (minbase, $mirror)"
    # merged-usr as Debian's own images; no copied resolv.conf/hostname (the engine provides
    # them at run time) and no apt lists (the Dockerfile runs apt-get update).
    # shellcheck disable=SC2016 # $1 is the hooks' own argument (the new root), for mmdebstrap to expand
    if ! mmdebstrap --quiet --variant=minbase --mode=root \
            --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
            --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
            --customize-hook='rm -rf "$1"/var/lib/apt/lists/*' \
            "$suite" "$tmp/rootfs.tar" "$mirror" >"$tmp/log" 2>&1; then
        cat "$tmp/log" >&2
        rm -rf "$tmp"
        return 1
    fi
    podman import --quiet --change 'CMD ["bash"]' "$tmp/rootfs.tar" "docker.io/library/$ref" >/dev/null
    rm -rf "$tmp"
}

cmd_build() {
    need_tools
    local name ver ref before after id size
    ver=$(version)
    [ -n "$ver" ] || { log "cannot read the version from meson.build"; return 1; }
    name=$(image_name)
    # Base images: every FROM that is neither scratch nor an earlier stage.
    local stages=()
    local _ ref as stage
    while read -r _ ref as stage; do
        if [ "$ref" != scratch ] && ! printf '%s\n' "${stages[@]:-}" | grep -qx "$ref"; then
            base_image "$ref"
        fi
        case "$as" in AS|as) stages+=("$stage") ;; esac
    done < <(grep -E '^FROM[[:space:]]' "$dockerfile")

    before=$(podman images -q --filter dangling=true --no-trunc | sort)
    log "podman build -f deploy/Dockerfile -t $name"
    mkdir -p "$out_dir"
    # --network host: the build stage's apt-get reaches the mirror through the host's own network,
    # so podman sets up no bridge, no CNI firewall rules and no NAT on the machine.
    # the build context has no .git: `gpu-validator --version` names the commit given here
    commit=$(git -C "$src" describe --always --dirty --abbrev=12 --match=NONE 2>/dev/null || echo unknown)
    if ! podman build --network host --layers=false --build-arg "GV_COMMIT=$commit" -f "$dockerfile" -t "$name" "$src" \
            >"$out_dir/build.log" 2>&1; then
        tail -n 40 "$out_dir/build.log" >&2
        log "podman build failed; the whole output is in build/image/build.log"
        return 1
    fi
    # The build stage's images, and an image this tag replaced: only those this build left.
    after=$(podman images -q --filter dangling=true --no-trunc | sort)
    for id in $(comm -13 <(echo "$before") <(echo "$after")); do
        podman rmi --force "$id" >/dev/null 2>&1 || true
    done

    rm -f "$out_dir/gpu-validator-$ver.tar" "$out_dir/gpu-validator-$ver.oci.tar"
    skopeo copy --quiet "containers-storage:$name" "docker-archive:$out_dir/gpu-validator-$ver.tar:$name"
    skopeo copy --quiet "containers-storage:$name" "oci-archive:$out_dir/gpu-validator-$ver.oci.tar:$name"
    size=$(podman image inspect --format '{{.Size}}' "$name")
    log "$name: $((size / 1000)) kB uncompressed"
    log "archives: build/image/gpu-validator-$ver.tar (docker-archive), build/image/gpu-validator-$ver.oci.tar (OCI)"
}

case "${1:-}" in
    build) cmd_build ;;
    smoke) shift; exec python3 "$src/tools/image-smoke.py" --image "$(image_name)" "$@" ;;
    name) image_name ;;
    -h|--help) usage ;;
    *) usage >&2; exit 2 ;;
esac
