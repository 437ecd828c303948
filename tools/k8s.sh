#!/usr/bin/env bash
# A real Kubernetes control plane for tests and local work: etcd, kube-apiserver and
# kube-controller-manager (optionally kube-scheduler and KWOK) built from Kubernetes' own code
# (tools/go/k8s-VERSION, tools/gotool.sh), on 127.0.0.1 with free ports, client certificates
# and static tokens, the RBAC (and Node) authorizer and the default admission plugins
# (PodSecurity included, plus NodeRestriction). Everything lives under one state folder.
#
# Usage:
#   tools/k8s.sh up [DIR]        start (building the Go set if needed); prints the env lines
#   tools/k8s.sh env [DIR]       print `export` lines for a running control plane (see below)
#   tools/k8s.sh status [DIR]    exit 0 when every component is up and /readyz answers ok
#   tools/k8s.sh down [DIR]      stop the components and remove DIR (--keep: keep DIR)
#   tools/k8s.sh kubeconfig DIR NAME CN [ORG]
#                                mint a client certificate (CN, O) from the cluster CA and
#                                write DIR/NAME.kubeconfig (e.g. a kubelet: system:node:N system:nodes)
#
# DIR defaults to $GV_K8S_STATE, else /tmp/gv-k8s-$UID.  Examples:
#   eval "$(tools/k8s.sh up /tmp/k)"; kubectl get ns; tools/k8s.sh down /tmp/k
#   GV_K8S_VERSION=1.30 tools/k8s.sh up /tmp/k130
#   tools/k8s.sh kubeconfig /tmp/k kubelet-n1 system:node:n1 system:nodes
#
# Settings (environment, read by `up`):
#   GV_K8S_VERSION     the Go set tools/go/k8s-VERSION (default 1.37)
#   GV_K8S_COMPONENTS  what starts besides etcd and kube-apiserver, space-separated:
#                      kube-controller-manager (default), kube-scheduler, kwok (the kubelet of
#                      every Node annotated kwok.x-k8s.io/node=fake; stages: GV_K8S_KWOK_CONFIG)
#   GV_K8S_CONTROLLERS kube-controller-manager --controllers (default '*')
#   GV_K8S_PARENT_PID  stop everything (down) when this process is gone
#   GV_K8S_MAX_LIFETIME stop everything after this many seconds (default 0: never)
#   GV_K8S_APISERVER_ARGS extra kube-apiserver flags (space-separated)
#   GV_K8S_KWOK_CONFIG KWOK's Stage/KwokConfiguration YAML (component kwok; default KWOK's own)
#   GV_K8S_KWOK_LEASE_SECONDS  the fake nodes' lease duration (default 40; renewed every quarter)
#
# `env` prints (and `up` writes to DIR/env) these variables:
#   KUBECONFIG           DIR/admin.kubeconfig (client certificate, O=system:masters)
#   GV_K8S_STATE         DIR
#   GV_K8S_SERVER        https://127.0.0.1:PORT
#   GV_K8S_CA            DIR/pki/ca.crt (CA of the serving and client certificates)
#   GV_K8S_CA_KEY        DIR/pki/ca.key
#   GV_K8S_ADMIN_TOKEN   a static token of user `gv-admin` in group system:masters
#   GV_K8S_ETCD          http://127.0.0.1:PORT (etcd client URL, no auth: loopback only)
#   GV_K8S_VERSION       e.g. 1.37; GV_K8S_BIN the folder of the Go set's binaries
#   GV_K8S_SA_KEY        DIR/pki/sa.key (service-account signing key, for a kubelet or KCM)
# Files: DIR/pki/ (ca, apiserver, admin, component certs, sa.key/sa.pub), DIR/etcd/,
# DIR/logs/NAME.log, DIR/NAME.pid, DIR/NAME.kubeconfig, DIR/tokens.csv.
#
# Exit codes: 0 ok, 1 a component failed (its log's tail goes to stderr), 2 usage,
# 3 (status) not running.  Diagnostics go to stderr; stdout carries only the env lines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

help_text() { sed -n '2,/^set -e/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }
usage() { help_text >&2; exit 2; }
die() { echo "k8s.sh: $*" >&2; exit 1; }

state_dir() { printf '%s\n' "${1:-${GV_K8S_STATE:-/tmp/gv-k8s-$(id -u)}}"; }

free_ports() { # N: print N distinct free TCP ports on 127.0.0.1
  python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# --- certificates -----------------------------------------------------------------------
pki_ca() { # DIR
  local p=$1/pki
  mkdir -p "$p"; chmod 700 "$p"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=gpu-validator-test-ca" \
    -keyout "$p/ca.key" -out "$p/ca.crt" 2>/dev/null
  openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
  openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
}

pki_cert() { # DIR NAME CN ORG SERVER(0|1)
  local p=$1/pki name=$2 cn=$3 org=${4:-} server=${5:-0} subj ext
  subj="/CN=$cn"; [ -z "$org" ] || subj="/O=$org$subj"
  ext=$p/$name.ext
  if [ "$server" = 1 ]; then
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth,clientAuth" \
      "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" >"$ext"
  else
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=digitalSignature,keyEncipherment" \
      "extendedKeyUsage=clientAuth" >"$ext"
  fi
  openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$p/$name.key" -out "$p/$name.csr" 2>/dev/null
  openssl x509 -req -in "$p/$name.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial \
    -days 3650 -extfile "$ext" -out "$p/$name.crt" 2>/dev/null
  rm -f "$p/$name.csr" "$ext"
}

write_kubeconfig() { # DIR NAME SERVER  (uses pki/NAME.crt/.key)
  local d=$1 name=$2 server=$3 f=$1/$2.kubeconfig
  cat >"$f.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gv-test
  cluster:
    server: $server
    certificate-authority: $d/pki/ca.crt
users:
- name: $name
  user:
    client-certificate: $d/pki/$name.crt
    client-key: $d/pki/$name.key
contexts:
- name: gv-test
  context: {cluster: gv-test, user: $name, namespace: default}
current-context: gv-test
EOF
  mv "$f.tmp" "$f"
}

# --- processes --------------------------------------------------------------------------
start_bg() { # DIR NAME CMD...: start detached, pid in DIR/NAME.pid, log in DIR/logs/NAME.log
  local d=$1 name=$2; shift 2
  setsid "$@" </dev/null >"$d/logs/$name.log" 2>&1 &
  echo $! >"$d/$name.pid"
}

alive() { local f=$1/$2.pid; [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }

fail_with_log() { # DIR NAME MESSAGE
  echo "k8s.sh: $3; the end of $1/logs/$2.log:" >&2
  tail -n 25 "$1/logs/$2.log" >&2 || true
  stop_all "$1"
  exit 1
}

wait_for() { # DIR NAME SECONDS CMD...: until CMD succeeds, the component stays alive
  local d=$1 name=$2 secs=$3 i; shift 3
  for ((i = 0; i < secs * 5; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    alive "$d" "$name" || fail_with_log "$d" "$name" "$name exited while starting"
    sleep 0.2
  done
  fail_with_log "$d" "$name" "$name not ready after $secs s"
}

stop_all() { # DIR: TERM every component, then KILL what is left after 10 s
  local d=$1 n pid i pids=()
  for n in watchdog kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
    [ -f "$d/$n.pid" ] || continue
    pid=$(cat "$d/$n.pid")
    rm -f "$d/$n.pid"
    kill -0 "$pid" 2>/dev/null || continue
    kill -TERM "$pid" 2>/dev/null || true
    pids+=("$pid")
  done
  for pid in "${pids[@]}"; do
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
}

env_lines() { # DIR
  local d=$1
  [ -f "$d/env" ] || { echo "k8s.sh: no control plane in $d (no $d/env; run: tools/k8s.sh up $d)" >&2; exit 3; }
  cat "$d/env"
}

# --- up ---------------------------------------------------------------------------------
cmd_up() {
  local d ver set bin etcd_port peer_port api_port kcm_port sched_port kwok_port server comps
  d=$(state_dir "${1:-}")
  if [ -f "$d/env" ] && cmd_status "$d" >/dev/null 2>&1; then env_lines "$d"; return 0; fi
  [ ! -e "$d" ] || [ -z "$(ls -A "$d" 2>/dev/null)" ] || [ -f "$d/.gv-k8s" ] ||
    die "$d exists and is not a control-plane folder; pick another (GV_K8S_STATE or an argument)"
  command -v openssl >/dev/null || die "openssl is missing (Debian package openssl)"
  ver=${GV_K8S_VERSION:-1.37}; set=k8s-$ver
  [ -f "$here/go/$set/binaries" ] || die "no Go set tools/go/$set (GV_K8S_VERSION=$ver)"
  bin=$(dirname "$("$here/gotool.sh" bin "$set" kube-apiserver)") || die "building $set failed"
  local etcd_bin=$bin/etcd
  # A set without its own etcd (an older Kubernetes) uses the newest set's.
  [ -x "$etcd_bin" ] || etcd_bin=$("$here/gotool.sh" bin k8s-1.37 etcd) || die "no etcd"
  comps=${GV_K8S_COMPONENTS-kube-controller-manager}

  stop_all "$d" 2>/dev/null || true
  rm -rf "$d"; mkdir -p "$d/logs" "$d/etcd"; chmod 700 "$d" "$d/etcd"; touch "$d/.gv-k8s"
  read -r etcd_port peer_port api_port kcm_port sched_port kwok_port <<<"$(free_ports 6)"
  server=https://127.0.0.1:$api_port

  pki_ca "$d"
  pki_cert "$d" apiserver kube-apiserver "" 1
  pki_cert "$d" admin gv-admin system:masters
  pki_cert "$d" apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  pki_cert "$d" kube-controller-manager system:kube-controller-manager
  pki_cert "$d" kube-scheduler system:kube-scheduler
  local n
  for n in admin kube-controller-manager kube-scheduler; do write_kubeconfig "$d" "$n" "$server"; done
  local admin_token
  admin_token=$(openssl rand -hex 16)
  printf '%s,gv-admin,gv-admin,"system:masters"\n' "$admin_token" >"$d/tokens.csv"
  chmod 600 "$d/tokens.csv"

  start_bg "$d" etcd "$etcd_bin" --name default --data-dir "$d/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "default=http://127.0.0.1:$peer_port" --unsafe-no-fsync --log-level warn
  wait_for "$d" etcd 30 curl -sf "http://127.0.0.1:$etcd_port/health"

  # Serve every resource.k8s.io version this Kubernetes has (beta and alpha ones are off by
  # default): v1, v1beta2, v1beta1 from 1.34 on; only v1alpha2 before 1.31 (v1alpha3 in 1.31).
  local runtime
  case $ver in
    1.2*|1.30) runtime="--runtime-config=resource.k8s.io/v1alpha2=true" ;;
    1.31) runtime="--runtime-config=resource.k8s.io/v1alpha3=true" ;;
    *) runtime="--runtime-config=resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true" ;;
  esac
  # shellcheck disable=SC2086
  start_bg "$d" kube-apiserver "$bin/kube-apiserver" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --tls-cert-file="$d/pki/apiserver.crt" --tls-private-key-file="$d/pki/apiserver.key" \
    --client-ca-file="$d/pki/ca.crt" --token-auth-file="$d/tokens.csv" \
    --kubelet-client-certificate="$d/pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$d/pki/apiserver-kubelet-client.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$d/pki/sa.pub" --service-account-signing-key-file="$d/pki/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --allow-privileged=true \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --endpoint-reconciler-type=none $runtime --profiling=false ${GV_K8S_APISERVER_ARGS:-}
  wait_for "$d" kube-apiserver 120 curl -sf --cacert "$d/pki/ca.crt" -H "Authorization: Bearer $admin_token" "$server/readyz"

  local c
  for c in $comps; do
    case $c in
      kube-controller-manager)
        start_bg "$d" "$c" "$bin/kube-controller-manager" --kubeconfig="$d/$c.kubeconfig" \
          --authentication-kubeconfig="$d/$c.kubeconfig" --authorization-kubeconfig="$d/$c.kubeconfig" \
          --bind-address=127.0.0.1 --secure-port="$kcm_port" --leader-elect=false \
          --controllers="${GV_K8S_CONTROLLERS:-*}" --use-service-account-credentials=true \
          --service-account-private-key-file="$d/pki/sa.key" --root-ca-file="$d/pki/ca.crt" \
          --cluster-signing-cert-file="$d/pki/ca.crt" --cluster-signing-key-file="$d/pki/ca.key" \
          --service-cluster-ip-range=10.96.0.0/16
        wait_for "$d" "$c" 60 curl -sfk "https://127.0.0.1:$kcm_port/healthz" ;;
      kube-scheduler)
        [ -x "$bin/kube-scheduler" ] || die "the set $set has no kube-scheduler"
        start_bg "$d" "$c" "$bin/kube-scheduler" --kubeconfig="$d/$c.kubeconfig" \
          --authentication-kubeconfig="$d/$c.kubeconfig" --authorization-kubeconfig="$d/$c.kubeconfig" \
          --bind-address=127.0.0.1 --secure-port="$sched_port" --leader-elect=false
        wait_for "$d" "$c" 60 curl -sfk "https://127.0.0.1:$sched_port/healthz" ;;
      kwok)
        # KWOK (tools/go/kwok) plays the kubelet of every Node annotated kwok.x-k8s.io/node=fake:
        # node leases and status, pod phases by the stages in GV_K8S_KWOK_CONFIG (YAML, kind
        # Stage/KwokConfiguration; default: KWOK's own stages).
        local kwok_bin kw_args=()
        kwok_bin=$("$here/gotool.sh" bin kwok kwok) || die "building the kwok set failed"
        pki_cert "$d" kwok kwok system:masters
        write_kubeconfig "$d" kwok "$server"
        [ -z "${GV_K8S_KWOK_CONFIG:-}" ] || kw_args+=(--config="$GV_K8S_KWOK_CONFIG")
        start_bg "$d" "$c" "$kwok_bin" --kubeconfig="$d/kwok.kubeconfig" --manage-all-nodes=false \
          --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake --node-ip=127.0.0.1 \
          --node-lease-duration-seconds="${GV_K8S_KWOK_LEASE_SECONDS:-40}" --server-address=127.0.0.1:"$kwok_port" "${kw_args[@]}"
        wait_for "$d" "$c" 60 curl -sf "http://127.0.0.1:$kwok_port/healthz" ;;
      '') ;;
      *) die "unknown component '$c' in GV_K8S_COMPONENTS" ;;
    esac
  done
  printf '%s\n' "$comps" >"$d/components"
  # The default ServiceAccount of `default` (the controller makes it; wait so pods can be created).
  if [[ " $comps " == *" kube-controller-manager "* ]]; then
    wait_for "$d" kube-controller-manager 60 curl -sf --cacert "$d/pki/ca.crt" \
      -H "Authorization: Bearer $admin_token" "$server/api/v1/namespaces/default/serviceaccounts/default"
  fi

  {
    echo "export KUBECONFIG=$d/admin.kubeconfig"
    echo "export GV_K8S_STATE=$d"
    echo "export GV_K8S_SERVER=$server"
    echo "export GV_K8S_CA=$d/pki/ca.crt"
    echo "export GV_K8S_CA_KEY=$d/pki/ca.key"
    echo "export GV_K8S_SA_KEY=$d/pki/sa.key"
    echo "export GV_K8S_ADMIN_TOKEN=$admin_token"
    echo "export GV_K8S_ETCD=http://127.0.0.1:$etcd_port"
    echo "export GV_K8S_VERSION=$ver"
    echo "export GV_K8S_BIN=$bin"
  } >"$d/env.tmp"
  chmod 600 "$d/env.tmp"; mv "$d/env.tmp" "$d/env"

  if [ -n "${GV_K8S_PARENT_PID:-}${GV_K8S_MAX_LIFETIME:-}" ]; then
    local parent=${GV_K8S_PARENT_PID:-} life=${GV_K8S_MAX_LIFETIME:-0}
    setsid bash -c '
      d=$1 parent=$2 life=$3 self=$4 start=$(date +%s)
      while :; do
        if [ -n "$parent" ] && ! kill -0 "$parent" 2>/dev/null; then break; fi
        if [ "$life" -gt 0 ] && [ $(( $(date +%s) - start )) -ge "$life" ]; then break; fi
        [ -f "$d/env" ] || exit 0
        sleep 1
      done
      rm -f "$d/watchdog.pid"; "$self" down "$d"' watchdog "$d" "$parent" "$life" "$here/k8s.sh" \
      </dev/null >>"$d/logs/watchdog.log" 2>&1 &
    echo $! >"$d/watchdog.pid"
  fi
  cat "$d/env"
}

cmd_status() {
  local d c
  d=$(state_dir "${1:-}")
  [ -f "$d/env" ] || { echo "not running (no $d/env)" >&2; return 3; }
  for c in etcd kube-apiserver $(cat "$d/components" 2>/dev/null); do
    alive "$d" "$c" || { echo "$c is not running" >&2; return 3; }
  done
  # shellcheck disable=SC1091
  (. "$d/env"; curl -sf --cacert "$GV_K8S_CA" -H "Authorization: Bearer $GV_K8S_ADMIN_TOKEN" "$GV_K8S_SERVER/readyz" >/dev/null) ||
    { echo "kube-apiserver /readyz is not ok" >&2; return 3; }
  echo "running: $d" >&2
}

cmd_down() {
  local keep=0 d
  if [ "${1:-}" = --keep ]; then keep=1; shift; fi
  d=$(state_dir "${1:-}")
  [ -d "$d" ] || return 0
  [ -f "$d/.gv-k8s" ] || die "$d is not a control-plane folder"
  # The watchdog ends by itself once env is gone; stop it first so it does not race us.
  rm -f "$d/env"
  stop_all "$d"
  [ "$keep" = 1 ] || rm -rf "$d"
}

cmd_kubeconfig() {
  [ $# -ge 3 ] || usage
  local d=$1 name=$2 cn=$3 org=${4:-}
  [ -f "$d/env" ] || die "no control plane in $d"
  # shellcheck disable=SC1091
  server=$(. "$d/env"; echo "$GV_K8S_SERVER")
  pki_cert "$d" "$name" "$cn" "$org"
  write_kubeconfig "$d" "$name" "$server"
  printf '%s\n' "$d/$name.kubeconfig"
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
  up) cmd_up "$@" ;;
  env) env_lines "$(state_dir "${1:-}")" ;;
  status) cmd_status "$@" ;;
  down) cmd_down "$@" ;;
  kubeconfig) cmd_kubeconfig "$@" ;;
  -h|--help|help) help_text ;;
  *) usage ;;
esac
