#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# tools/mock-cluster.sh up|down|status|env|kubectl|exec|mock|restart|images|check [options]
#
# A real single-node Kubernetes with N mock GPUs on this machine, no Docker: the control plane
# (tools/k8s.sh: etcd, kube-apiserver, kube-controller-manager, kube-scheduler), containerd 2.x
# (CDI), runc, NVIDIA's container runtime in CDI mode, the CNI plugins, kube-proxy and a kubelet
# for one node, all built from their own code (tools/go/*), with a mock driver root laid by
# `gpu-validator mock install` at /run/nvidia/driver and its CDI spec in /var/run/cdi *as the
# node sees them*.  The node lives in its own network and mount namespaces with its own root
# folder, so nothing touches the machine's /run/nvidia, /dev/char, /etc/cdi or network.
#
#   up [--gpus N] [--profile P] [--node NAME]   start it (builds the Go sets and images if needed)
#   down                                        stop everything and remove the state folder
#   status                                      exit 0 when every process runs and the node is Ready
#   env                                         print `export` lines (KUBECONFIG, GV_MOCK_*)
#   kubectl ARGS...                             kubectl in the cluster's network namespace
#   exec CMD...                                 a command in the node's namespaces (its / and net)
#   images                                      build the images only (build/image/*.tar)
#   mock ARGS...                                `gpu-validator mock ARGS` in a container of the node
#                                               (e.g. mock set --root /run/nvidia/driver --gpu 2 ...)
#   restart containerd|kubelet                  start a daemon again (after killing it)
#   check                                       print what `down` must leave as it was (mounts,
#                                               cgroups, links, netns, processes, paths)
#
# Examples:
#   tools/mock-cluster.sh up --gpus 8 --profile a100-sxm4-40gb
#   tools/mock-cluster.sh kubectl get node -o jsonpath='{.items[0].status.allocatable}'
#   tools/mock-cluster.sh exec ls /run/nvidia/driver/dev
#   tools/mock-cluster.sh down
#
# State: $GV_MOCK_CLUSTER_STATE, default build/mock-cluster in the checkout.  Runs as root.
# Exit codes: 0 ok, 1 a step failed (the log named says why), 2 usage, 3 (status) not running.
# docs/mock-cluster.md explains the layout and the figures.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
here=$src/tools

S=${GV_MOCK_CLUSTER_STATE:-$src/build/mock-cluster}
R=$S/root                       # the node's root folder ("/" for kubelet, containerd, pods)
NODE_IP=10.244.0.1              # on the bridge cni0, inside the cluster's network namespace
POD_CIDR=10.244.0.0/24
SVC_CIDR=10.96.0.0/16
K8S_SH=${GV_K8S_SH:-$here/k8s.sh}

usage() { awk 'NR > 3 && /^#/ { sub(/^# ?/, ""); print; next } NR > 3 { exit }' "$0"; }
log() { printf 'mock-cluster: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
now() { date +%s.%N; }

cg_name() { printf 'gv-mock-%s\n' "$(printf '%s' "$S" | sha256sum | cut -c1-8)"; }
# Every cgroup v1 hierarchy (and the v2 one beside it) mounted on this machine.
cg_roots() { awk '$9 == "cgroup" || $9 == "cgroup2" { print $5 }' /proc/self/mountinfo; }

# --- tools and images ---------------------------------------------------------------------
go_sets() {
    local d
    for d in k8s-1.37 containerd-2.4 nvidia-device-plugin nvidia-container-toolkit; do
        "$here/gotool.sh" build "$d" >/dev/null || die "building the Go set $d failed"
    done
    K8S_BIN=$(dirname "$("$here/gotool.sh" bin k8s-1.37 kubelet)")
    CTRD_BIN=$(dirname "$("$here/gotool.sh" bin containerd-2.4 containerd)")
    DP_BIN=$(dirname "$("$here/gotool.sh" bin nvidia-device-plugin nvidia-device-plugin)")
    TK_BIN=$(dirname "$("$here/gotool.sh" bin nvidia-container-toolkit nvidia-container-runtime)")
}

version() { sed -n "s/^[[:space:]]*version:[[:space:]]*'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1; }

# The image archives `up` imports: ours (tools/image.sh), and three made here from files of this
# machine with podman: a pause image (catatonit -P, as podman's own infra image), a minimal
# workload image (busybox and glibc: what a CUDA base image gives a mounted nvidia-smi), and
# NVIDIA's device plugin (the binary from tools/go/nvidia-device-plugin, busybox for its
# entrypoint script).
cmd_images() {
    "$here/mock-cluster-images.sh" "$@"
}

# --- namespaces, node root, cgroups -----------------------------------------------------------
# The node's view: / is $R; /usr is the machine's (read-only); /etc an overlay of the machine's
# (writes land in $S/etc-upper); /dev a tmpfs with the usual nodes; /proc, /sys the machine's;
# /run, /var, /tmp, /opt folders of $R.  Kernel tunables kubelet insists on are shown to it
# with the values it wants (bind-mounted files), so it never writes the machine's sysctls.
make_node() {
    local cg
    mkdir -p "$S"/{ns,etc-upper,etc-work,logs,pids} "$R"/{usr,etc,dev,proc,sys,run,var,tmp,opt/gv,root}
    chmod 1777 "$R/tmp"
    ln -sfn usr/bin "$R/bin"; ln -sfn usr/lib "$R/lib"; ln -sfn usr/lib64 "$R/lib64"; ln -sfn usr/sbin "$R/sbin"
    ln -sfn ../run "$R/var/run"
    mkdir -p "$R"/var/lib/{kubelet,containerd,kube-proxy,cni} "$R"/var/log "$R"/run/nvidia "$R"/var/run/cdi \
        "$R"/opt/gv/{k8s,containerd,device-plugin,toolkit} "$S/sysctl" "$R"/run/nvidia/driver
    printf '1\n' >"$S/sysctl/overcommit_memory"; printf '10\n' >"$S/sysctl/panic"
    printf '1\n' >"$S/sysctl/panic_on_oops"

    # Persistent namespaces, bound to files of a private mount (so they are not propagated).
    mount --bind "$S/ns" "$S/ns"; mount --make-private "$S/ns"
    touch "$S/ns/net" "$S/ns/mnt"
    unshare --net="$S/ns/net" true
    nsenter --net="$S/ns/net" sh -c "ip link set lo up && ip link add cni0 type bridge &&
        ip addr add $NODE_IP/24 dev cni0 && ip link set cni0 up"
    unshare --mount="$S/ns/mnt" --propagation private bash -euc '
        S=$1 R=$2; shift 2
        mount --bind "$R" "$R"
        mount --bind /usr "$R/usr"; mount -o remount,bind,ro "$R/usr"
        mount -t overlay overlay -o "lowerdir=/etc,upperdir=$S/etc-upper,workdir=$S/etc-work" "$R/etc"
        mount -t proc proc "$R/proc"
        mount --rbind /sys "$R/sys"
        mount -t tmpfs -o mode=755,nosuid tmpfs "$R/dev"
        for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0 kmsg:1:11; do
            IFS=: read -r name maj min <<<"$n"; mknod -m 666 "$R/dev/$name" c "$maj" "$min"
        done
        chmod 600 "$R/dev/kmsg"
        mkdir -p "$R/dev/pts" "$R/dev/shm" "$R/dev/mqueue" "$R/dev/char"
        mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$R/dev/pts"
        ln -s pts/ptmx "$R/dev/ptmx"
        mount -t tmpfs -o mode=1777,nosuid,nodev shm "$R/dev/shm"
        mount -t mqueue mqueue "$R/dev/mqueue"
        ln -s /proc/self/fd "$R/dev/fd"; ln -s /proc/self/fd/0 "$R/dev/stdin"
        ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"
        for t in overcommit_memory:vm panic:kernel panic_on_oops:kernel; do
            f=${t%%:*} d=${t#*:}; mount --bind "$S/sysctl/$f" "$R/proc/sys/$d/$f"
        done
        while [ $# -ge 2 ]; do mount --bind "$1" "$R/$2"; mount -o remount,bind,ro "$R/$2"; shift 2; done
        cd "$R"; mkdir -p .oldroot; pivot_root . .oldroot; umount -l /.oldroot; rmdir /.oldroot
        mount --make-rshared /
    ' sh "$S" "$R" "$K8S_BIN" opt/gv/k8s "$CTRD_BIN" opt/gv/containerd "$DP_BIN" opt/gv/device-plugin \
        "$TK_BIN" opt/gv/toolkit

    # One cgroup per hierarchy: node/ holds the daemons, kubelet puts the pods beside it.
    cg=$(cg_name)
    local root
    while read -r root; do
        mkdir -p "$root/$cg/node"
        if [ -f "$root/cpuset.cpus" ]; then
            cat "$root/cpuset.cpus" >"$root/$cg/cpuset.cpus"; cat "$root/cpuset.mems" >"$root/$cg/cpuset.mems"
            cat "$root/cpuset.cpus" >"$root/$cg/node/cpuset.cpus"; cat "$root/cpuset.mems" >"$root/$cg/node/cpuset.mems"
        fi
    done < <(cg_roots)
}

# node_run NAME CMD...: start a daemon in the node's namespaces and cgroup, detached; its pid in
# $S/pids/NAME, its output in $S/logs/NAME.log.
node_run() {
    local name=$1; shift
    local cg; cg=$(cg_name)
    setsid bash -c '
        for r in $(awk '"'"'$9 == "cgroup" || $9 == "cgroup2" { print $5 }'"'"' /proc/self/mountinfo); do
            echo $$ >"$r/'"$cg"'/node/cgroup.procs"
        done
        exec nsenter --net="$0/ns/net" --mount="$0/ns/mnt" -- env -i \
            PATH=/opt/gv/toolkit:/opt/gv/containerd:/opt/gv/k8s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            HOME=/root "$@"' "$S" "$@" </dev/null >"$S/logs/$name.log" 2>&1 &
    echo $! >"$S/pids/$name"
}

# node_exec CMD...: run a command in the node's namespaces (foreground).
node_exec() {
    nsenter --net="$S/ns/net" --mount="$S/ns/mnt" -- env -i \
        PATH=/opt/gv/toolkit:/opt/gv/containerd:/opt/gv/k8s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root KUBECONFIG=/var/lib/kubelet/admin.kubeconfig "$@"
}

alive() { [ -f "$S/pids/$1" ] && kill -0 "$(cat "$S/pids/$1")" 2>/dev/null; }

wait_until() { # NAME SECONDS CMD...: until CMD succeeds while daemon NAME lives
    local name=$1 secs=$2 i; shift 2
    for ((i = 0; i < secs * 5; i++)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        if [ -n "$name" ] && ! alive "$name"; then
            log "$name exited while starting; the end of $S/logs/$name.log:"; tail -n 30 "$S/logs/$name.log" >&2
            return 1
        fi
        sleep 0.2
    done
    log "not ready after $secs s: $*${name:+; the end of $S/logs/$name.log:}"
    [ -z "$name" ] || tail -n 30 "$S/logs/$name.log" >&2
    return 1
}

# --- configuration files ------------------------------------------------------------------------
write_node_config() {
    local e=$S/etc-upper
    mkdir -p "$e/containerd" "$e/cni/net.d" "$e/nvidia-container-runtime"
    # containerd 2.x: CDI specs from /etc/cdi and /var/run/cdi; NVIDIA's runtime (CDI mode) is
    # the default, as the GPU Operator's toolkit makes it; runc as the plain runtime beside it.
    cat >"$e/containerd/config.toml" <<'EOF'
version = 3
root = '/var/lib/containerd'
state = '/run/containerd'
disabled_plugins = ['io.containerd.snapshotter.v1.btrfs', 'io.containerd.snapshotter.v1.zfs',
  'io.containerd.snapshotter.v1.devmapper', 'io.containerd.snapshotter.v1.erofs',
  'io.containerd.snapshotter.v1.blockfile', 'io.containerd.internal.v1.tracing']

[grpc]
  address = '/run/containerd/containerd.sock'

[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = 'localhost/gv-pause:1'

[plugins.'io.containerd.cri.v1.runtime']
  cdi_spec_dirs = ['/etc/cdi', '/var/run/cdi']
  # This machine's root lacks CAP_SYS_RESOURCE, so no process may lower its oom_score_adj:
  # runc's init dies writing the sandbox's -998 ("can't get final child's PID from pipe").
  # Clamp the pods' value to containerd's own (what rootless setups do).
  restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'nvidia'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = '/usr/sbin/runc'
        SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]
        BinaryName = '/opt/gv/toolkit/nvidia-container-runtime'
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['/usr/lib/cni']
    conf_dir = '/etc/cni/net.d'

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = '127.0.0.1'
EOF
    cat >"$e/cni/net.d/10-gv-bridge.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "gv-mock",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "/var/lib/cni/networks",
              "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
    # NVIDIA's runtime in CDI mode: NVIDIA_VISIBLE_DEVICES (what the device plugin's envvar
    # strategy sets) becomes nvidia.com/gpu=<id> from the specs in /etc/cdi and /var/run/cdi.
    cat >"$e/nvidia-container-runtime/config.toml" <<'EOF'
[nvidia-container-runtime]
mode = "cdi"
runtimes = ["/usr/sbin/runc"]
log-level = "info"
debug = "/var/log/nvidia-container-runtime.log"

[nvidia-container-runtime.modes.cdi]
default-kind = "nvidia.com/gpu"
spec-dirs = ["/etc/cdi", "/var/run/cdi"]
annotation-prefixes = ["cdi.k8s.io/"]
EOF
}

# kubeconfig_embedded NAME SERVER OUT: a kubeconfig with the CA and NAME's client certificate
# inline (tools/k8s.sh minted them under $S/k8s/pki), readable wherever it is copied.
kubeconfig_embedded() {
    local name=$1 server=$2 out=$3 p=$S/k8s/pki
    cat >"$out.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gv-mock
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 "$p/ca.crt")
users:
- name: $name
  user:
    client-certificate-data: $(base64 -w0 "$p/$name.crt")
    client-key-data: $(base64 -w0 "$p/$name.key")
contexts:
- name: gv-mock
  context: {cluster: gv-mock, user: $name}
current-context: gv-mock
EOF
    chmod 600 "$out.tmp"; mv "$out.tmp" "$out"
}

# kubelet 1.37 on this machine's cgroup v1 hierarchy: failCgroupV1: false (1.35 and later refuse
# v1 otherwise), the cgroupfs driver (no systemd here), pods under our own cgroup root,
# protectKernelDefaults (the node's /proc/sys shows the values it wants; it must never write
# the machine's), no swap check, webhook authn/authz against the API server.
write_kubelet_config() {
    local k=$R/var/lib/kubelet server=$1
    mkdir -p "$k/pki"
    cp "$S/k8s/pki/ca.crt" "$k/pki/ca.crt"
    kubeconfig_embedded kubelet "$server" "$k/kubeconfig"
    kubeconfig_embedded admin "$server" "$k/admin.kubeconfig"
    cat >"$k/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$(cg_name)
cgroupsPerQOS: true
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
failSwapOn: false
protectKernelDefaults: true
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: /var/lib/kubelet/pki/ca.crt}
authorization: {mode: Webhook}
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
rotateCertificates: false
serverTLSBootstrap: false
nodeStatusUpdateFrequency: 10s
syncFrequency: 10s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
serializeImagePulls: false
EOF
    kubeconfig_embedded kube-proxy "$server" "$R/var/lib/kube-proxy/kubeconfig"
    cat >"$R/var/lib/kube-proxy/config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: /var/lib/kube-proxy/kubeconfig}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE
bindAddress: $NODE_IP
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

# --- up ---------------------------------------------------------------------------------------------
k8s_env() { sed -n "s/^export $1=//p" "$S/k8s/env"; }

start_control_plane() {
    local cg; cg=$(cg_name)
    # tools/k8s.sh inside the cluster's network namespace: the API server listens on the node's
    # address too (pods reach it through the `kubernetes` Service, 10.96.0.1, via kube-proxy).
    setsid bash -c '
        for r in $(awk '"'"'$9 == "cgroup" || $9 == "cgroup2" { print $5 }'"'"' /proc/self/mountinfo); do
            echo $$ >"$r/'"$cg"'/node/cgroup.procs"
        done
        exec nsenter --net="$0/ns/net" -- env GV_K8S_COMPONENTS="kube-controller-manager kube-scheduler" \
            GV_K8S_APISERVER_ARGS="--bind-address=0.0.0.0 --advertise-address='"$NODE_IP"' --endpoint-reconciler-type=lease --kubelet-preferred-address-types=InternalIP" \
            "$1" up "$0/k8s"' "$S" "$K8S_SH" </dev/null >"$S/logs/k8s-up.log" 2>&1 ||
        { tail -n 30 "$S/logs/k8s-up.log" >&2; die "tools/k8s.sh up failed (log: $S/logs/k8s-up.log)"; }
    local n
    for n in kubelet kube-proxy; do :; done
    "$K8S_SH" kubeconfig "$S/k8s" kubelet "system:node:$NODE" system:nodes >/dev/null
    "$K8S_SH" kubeconfig "$S/k8s" kube-proxy system:kube-proxy >/dev/null
}

start_containerd() {
    node_run containerd containerd --config /etc/containerd/config.toml --log-level info
    wait_until containerd 60 node_exec ctr --address /run/containerd/containerd.sock version || return 1
    local img
    for img in "$IMAGES"/gpu-validator-"$(version)".tar "$IMAGES"/gv-pause-1.tar "$IMAGES"/gv-workload-1.tar \
               "$IMAGES"/nvidia-device-plugin-*.tar; do
        # The archive is read by the host's shell and fed through stdin: the node cannot see build/.
        node_exec ctr -n k8s.io images import - <"$img" >/dev/null 2>"$S/logs/ctr-import.log" ||
            die "importing $img into containerd failed"
    done
}

start_kubelet() {
    node_run kube-proxy kube-proxy --config=/var/lib/kube-proxy/config.yaml
    start_kubelet_only
}

start_kubelet_only() {
    node_run kubelet kubelet --config=/var/lib/kubelet/config.yaml --kubeconfig=/var/lib/kubelet/kubeconfig \
        --hostname-override="$NODE" --node-ip="$NODE_IP" --root-dir=/var/lib/kubelet \
        --cert-dir=/var/lib/kubelet/pki --v=2 \
        --node-labels="nvidia.com/gpu.present=true,nvidia.com/gpu.deploy.operator-validator=true,nvidia.com/gpu.deploy.device-plugin=true,gpu-validator/mock=true"
}

# The mock driver root, where the GPU Operator's driver container would put a driver, laid by our
# image's `gpu-validator mock install` in a container of the node (as the chart's mock pool does).
lay_mock_root() {
    node_mock install --profile "$PROFILE" --gpus "$GPUS" --root /run/nvidia/driver \
        --cdi-dir /var/run/cdi --device-nodes char --node-name "$NODE" >"$S/logs/mock-install.log" 2>&1 ||
        { cat "$S/logs/mock-install.log" >&2; die "gpu-validator mock install failed"; }
}

# node_mock ARGS...: `gpu-validator mock ARGS` from our image in a container of the node, with the
# node's /run/nvidia and /var/run/cdi (paths as the node sees them, e.g. --root /run/nvidia/driver).
node_mock() {
    node_exec ctr -n k8s.io run --rm --privileged --net-host \
        --mount type=rbind,src=/run/nvidia,dst=/run/nvidia,options=rbind:rw:rshared \
        --mount type=rbind,src=/var/run/cdi,dst=/var/run/cdi,options=rbind:rw \
        "localhost/gpu-validator:$(version)" "gv-mock-$$-$RANDOM" gpu-validator mock "$@" 2> >(grep -v DEPRECATION >&2 || true)
}

# restart NAME: (re)start one of the node's daemons (after a fault test killed it).
cmd_restart() {
    load_settings
    case ${1:-} in
        containerd) alive containerd && die "containerd is running"
            node_run containerd containerd --config /etc/containerd/config.toml --log-level info
            wait_until containerd 60 node_exec ctr --address /run/containerd/containerd.sock version ;;
        kubelet) alive kubelet && die "kubelet is running"
            start_kubelet_only
            wait_until kubelet 60 node_exec curl -sf http://127.0.0.1:10248/healthz ;;
        *) usage >&2; exit 2 ;;
    esac
}

mark() { printf '%s %s\n' "$1" "$(now)" >>"$S/timings"; }

cmd_up() {
    GPUS=8 PROFILE=a100-sxm4-40gb NODE=gv-mock-node
    while [ $# -gt 0 ]; do
        case $1 in
            --gpus) GPUS=$2; shift 2 ;;
            --profile) PROFILE=$2; shift 2 ;;
            --node) NODE=$2; shift 2 ;;
            *) usage >&2; exit 2 ;;
        esac
    done
    [ "$(id -u)" -eq 0 ] || die "run as root (namespaces, mounts, cgroups)"
    if [ -e "$S/ns/net" ]; then
        cmd_status >/dev/null 2>&1 && { log "already up ($S)"; return 0; }
        die "$S holds a cluster that is not healthy; run: tools/mock-cluster.sh down"
    fi
    [ -x "$K8S_SH" ] || die "$K8S_SH is missing (the control plane: tools/k8s.sh)"
    local t0; t0=$(now)
    rm -rf "$S"; mkdir -p "$S"; printf 'up %s\n' "$t0" >"$S/timings"
    printf 'NODE=%s\nGPUS=%s\nPROFILE=%s\n' "$NODE" "$GPUS" "$PROFILE" >"$S/settings"
    # Any failure from here (set -e, die) leaves through this trap: nothing half-made stays.
    trap 'if [ "$BASHPID" = "$$" ] && [ "${UP_DONE:-}" != 1 ]; then
              log "up failed; cleaning up (logs kept in $S-logs)"; cmd_down; fi' EXIT
    go_sets; mark tools
    IMAGES=$src/build/image
    "$here/mock-cluster-images.sh"; mark images
    write_node_config
    make_node; mark namespaces
    start_containerd; mark containerd
    start_control_plane; mark control-plane
    local server; server=$(k8s_env GV_K8S_SERVER)
    write_kubelet_config "$server"
    lay_mock_root; mark mock-root
    start_kubelet
    wait_until kubelet 120 node_ready; mark node-ready
    UP_DONE=1
    log "up: node $NODE Ready with $GPUS mock GPUs ($PROFILE) in $(elapsed "$t0") s; state $S"
    log "kubectl: tools/mock-cluster.sh kubectl get nodes"
}

elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

kubectl_in() { nsenter --net="$S/ns/net" -- env KUBECONFIG="$S/k8s/admin.kubeconfig" "$K8S_BIN/kubectl" "$@"; }

node_ready() {
    [ "$(kubectl_in get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

load_settings() {
    [ -f "$S/settings" ] || { log "no cluster in $S"; return 3; }
    # shellcheck disable=SC1091
    . "$S/settings"
    K8S_BIN=$(sed -n 's/^export GV_K8S_BIN=//p' "$S/k8s/env" 2>/dev/null)
    [ -n "$K8S_BIN" ] || K8S_BIN=$(dirname "$("$here/gotool.sh" bin k8s-1.37 kubectl)")
}

cmd_status() {
    load_settings || return 3
    local n ok=0
    for n in containerd kubelet kube-proxy; do
        alive "$n" || { log "$n is not running"; ok=3; }
    done
    nsenter --net="$S/ns/net" -- "$K8S_SH" status "$S/k8s" 2>/dev/null || { log "the control plane is not healthy"; ok=3; }
    [ "$ok" = 0 ] && node_ready || { log "node $NODE is not Ready"; return 3; }
    log "up: $S (node $NODE, $GPUS × $PROFILE)"
}

cmd_env() {
    load_settings || return 3
    printf 'export GV_MOCK_CLUSTER_STATE=%s\n' "$S"
    printf 'export GV_MOCK_NETNS=%s\n' "$S/ns/net"
    printf 'export GV_MOCK_NODE=%s\n' "$NODE"
    printf 'export GV_MOCK_KUBECTL=%s\n' "$K8S_BIN/kubectl"
    printf 'export KUBECONFIG=%s\n' "$S/k8s/admin.kubeconfig"
}

# --- down ---------------------------------------------------------------------------------------------
# kill_cgroups SIGNAL: signal every task of our cgroup tree (all hierarchies).
kill_cgroups() {
    local root f pid cg; cg=$(cg_name)
    while read -r root; do
        [ -d "$root/$cg" ] || continue
        while read -r f; do
            while read -r pid; do kill "-$1" "$pid" 2>/dev/null || true; done <"$f"
        done < <(find "$root/$cg" -name cgroup.procs)
    done < <(cg_roots)
}

cgroup_tasks() {
    local root cg; cg=$(cg_name)
    while read -r root; do
        [ -d "$root/$cg" ] && find "$root/$cg" -name cgroup.procs -exec cat {} + 2>/dev/null
    done < <(cg_roots) | sort -u
}

# Processes in our namespaces that are not in our cgroups (a shim moved elsewhere, say).
ns_tasks() {
    local ino p
    for f in net mnt; do
        [ -e "$S/ns/$f" ] || continue
        ino=$(stat -L -c %i "$S/ns/$f" 2>/dev/null) || continue
        for p in /proc/[0-9]*; do
            [ "$(stat -L -c %i "$p/ns/$f" 2>/dev/null)" = "$ino" ] && echo "${p#/proc/}"
        done
    done | sort -u
}

cmd_down() {
    [ -d "$S" ] || return 0
    [ "$(id -u)" -eq 0 ] || die "run as root"
    local n i pid cg root; cg=$(cg_name)
    # Gracefully first: the kubelet, then containerd, then the control plane.
    for n in kubelet kube-proxy containerd; do
        if alive "$n"; then
            pid=$(cat "$S/pids/$n"); kill -TERM "$pid" 2>/dev/null || true
            for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
    done
    if [ -f "$S/k8s/env" ] && [ -e "$S/ns/net" ]; then
        nsenter --net="$S/ns/net" -- "$K8S_SH" down "$S/k8s" 2>/dev/null || true
    fi
    # Whatever is left (containers, shims): freeze, kill, thaw, until the tree is empty.
    for ((i = 0; i < 50; i++)); do
        [ -z "$(cgroup_tasks)$(ns_tasks)" ] && break
        for root in $(cg_roots); do
            [ -f "$root/$cg/freezer.state" ] && echo FROZEN >"$root/$cg/freezer.state" 2>/dev/null || true
        done
        kill_cgroups KILL
        for pid in $(ns_tasks); do kill -KILL "$pid" 2>/dev/null || true; done
        for root in $(cg_roots); do
            [ -f "$root/$cg/freezer.state" ] && echo THAWED >"$root/$cg/freezer.state" 2>/dev/null || true
        done
        sleep 0.1
    done
    [ -z "$(cgroup_tasks)$(ns_tasks)" ] || log "warning: processes left: $(cgroup_tasks) $(ns_tasks)"
    # The namespaces die with their last reference: the files bound here.
    for n in mnt net; do
        mountpoint -q "$S/ns/$n" 2>/dev/null && { umount "$S/ns/$n" 2>/dev/null || umount -l "$S/ns/$n"; }
    done
    mountpoint -q "$S/ns" 2>/dev/null && { umount "$S/ns" 2>/dev/null || umount -l "$S/ns"; }
    # Cgroups, deepest first (a cgroup goes once its tasks are gone).
    for root in $(cg_roots); do
        [ -d "$root/$cg" ] || continue
        for ((i = 0; i < 50; i++)); do
            find "$root/$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
            [ -d "$root/$cg" ] || break
            sleep 0.1
        done
        [ ! -d "$root/$cg" ] || log "warning: cgroup $root/$cg is still there"
    done
    # The logs outlive the cluster, beside it (a build output, like the images): build/mock-cluster-logs.
    if [ -d "$S/logs" ]; then
        rm -rf "$S-logs"; cp -a "$S/logs" "$S-logs" 2>/dev/null || true
        cp "$S/timings" "$S-logs/timings" 2>/dev/null || true
    fi
    if grep -q " $S/" /proc/self/mountinfo; then
        log "warning: mounts left under $S; not removing it"; grep " $S/" /proc/self/mountinfo >&2; return 1
    fi
    rm -rf "$S"
}

# What `down` must leave as it was: printed sorted, compared before `up` and after `down`.
cmd_check() {
    echo "# mounts"; awk '{ print $5, $9 }' /proc/self/mountinfo | grep -E "gv-mock|$S|/run/nvidia|/dev/char|/cdi|kubelet|containerd|netns" || true
    echo "# cgroups"; for root in $(cg_roots); do find "$root" -maxdepth 1 -type d -name 'gv-mock-*'; done
    echo "# host network links"; ip -o link show | awk -F': ' '{ print $2 }' | sort
    echo "# host iptables rules (KUBE-, CNI-)"; { iptables-save 2>/dev/null || true; } | grep -E 'KUBE-|CNI-' || true
    echo "# kernel tunables"; for k in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops \
        net/ipv4/ip_forward net/netfilter/nf_conntrack_max; do echo "$k=$(cat /proc/sys/$k 2>/dev/null)"; done
    echo "# paths"; for p in /run/nvidia /dev/char /etc/cdi /var/run/cdi /var/lib/kubelet /var/lib/containerd \
        /run/containerd /etc/containerd /etc/cni /var/lib/cni /opt/cni /run/netns /etc/nvidia-container-runtime; do
        if [ -e "$p" ]; then echo "$p: $(find "$p" -maxdepth 2 2>/dev/null | wc -l) entries"; else echo "$p: absent"; fi
    done
    # Ours only (other work on this machine runs its own etcd and API servers): node daemons
    # nothing else here runs, and anything whose command line names the state folder.
    # A killed daemon whose parent is the machine's init stays a zombie until init reaps it: it
    # holds no memory, files, mounts or cgroup, so only live processes count here.
    echo "# processes of the cluster"
    local p state
    for p in /proc/[0-9]*; do
        state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "$p/status" 2>/dev/null)
        [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ] || continue
        case "$(cat "$p/comm" 2>/dev/null)" in
            kubelet|containerd|containerd-shim*|kube-proxy|catatonit|nvidia-device-p*) echo "$(cat "$p/comm")" ;;
            *) tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -q -- "$S" && cat "$p/comm" ;;
        esac
    done | sort | uniq -c
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
cmd=$1; shift
case $cmd in
    up) cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    env) cmd_env ;;
    kubectl) load_settings; kubectl_in "$@" ;;
    exec) load_settings >/dev/null; node_exec "$@" ;;
    images) cmd_images "$@" ;;
    mock) load_settings; node_mock "$@" ;;
    restart) cmd_restart "$@" ;;
    check) cmd_check ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
esac
