#!/usr/bin/env bash
# Version skew: the Kubernetes e2e tests that apply to an older server, against
# kube-apiserver 1.30.4 (tools/go/k8s-1.30, two years older than 1.37; users report 1.30.4),
# built from k8s.io/kubernetes with the same Go.  TAP on stdout, the log on stderr
# (tools/ci.d/README.md).  Uses the plain build (build-test); one control plane for all modules.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${GV_SKEW_BUILD:-build-test}
modules=(test_workload_pods test_node_signal test_dra test_kube_policy)
if ! command -v go >/dev/null 2>&1 || [ ! -x "$build/src/cli/gpu-validator" ]; then
  echo "1..1"; echo "not ok 1 - k8s skew: go or $build is missing"; exit 1
fi
state=$PWD/build/k8s-1.30
tools/k8s.sh down "$state" >&2 2>/dev/null
if ! GV_K8S_VERSION=1.30 GV_K8S_PARENT_PID=$$ GV_K8S_CONTROLLERS='*,-node-lifecycle-controller' \
     tools/k8s.sh up "$state" >/dev/null; then
  echo "1..1"; echo "not ok 1 - k8s skew: tools/k8s.sh up (GV_K8S_VERSION=1.30) failed"; exit 1
fi
export GV_K8S_STATE=$state GV_SOURCE_DIR=$PWD GV_BUILD_DIR=$PWD/$build GV_BIN=$PWD/$build/src/cli/gpu-validator
export GV_NVIDIA_SMI=$PWD/$build/mock/smi/nvidia-smi GV_MOCK_NVML=$PWD/$build/mock/nvml/libnvidia-ml.so.1
n=0 status=0
out=$(mktemp)
run_module() { # MODULE: TAP lines of its tests on stdout
  if [ -f tests/e2e/taprunner.py ]; then
    python3 tests/e2e/taprunner.py "tests/e2e/$1.py"
  else # pytest: its -rA summary lines as TAP
    local rc=0
    python3 -m pytest -q -rA -p no:cacheprovider "tests/e2e/$1.py" >"$out.py" 2>&1 || rc=$?
    cat "$out.py" >&2
    sed -nE 's/^PASSED (.*)$/ok 0 - \1/p; s/^(FAILED|ERROR) ([^ ]*).*$/not ok 0 - \2/p; s/^SKIPPED \[[0-9]+\] (.*)$/ok 0 - \1 # SKIP/p' "$out.py"
    rm -f "$out.py"
    return $rc
  fi
}
for m in "${modules[@]}"; do
  run_module "$m" >"$out" || status=1
  # renumber each module's TAP lines into one plan, named after the module and the version
  while IFS= read -r line; do
    case $line in
      "ok "*|"not ok "*)
        n=$((n + 1))
        printf '%s\n' "$line" | sed -E "s/^(not ok|ok) [0-9]+ - /\1 $n - k8s-1.30 $m: /" ;;
      "#"*) printf '%s\n' "$line" >&2 ;;
    esac
  done <"$out"
done
rm -f "$out"
tools/k8s.sh down "$state" >&2
echo "1..$n"
exit $status
