#!/usr/bin/env bash
# Sets up (Debian packages, npm test tools), builds with -Werror, and runs every test:
# a release-like build and an ASan+UBSan build, the static analysis (tools/static-analysis.sh),
# then the container image (tools/image.sh build, smoke). Ends with 'N passed, N failed'.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${SKIP_SETUP:-}" != 1 ]; then
  tools/setup-debian.sh || { echo "0 passed, 1 failed"; exit 1; }
fi

status=0
mkdir -p build
# The pinned Go test tools (tools/go/*: Kubernetes, etcd, ...) build in the background into the
# cache outside the clone (tools/gotool.sh) while the C builds and tests run; a test that needs
# one waits on the same cache lock. Warm runs find them built.
if [ -z "${GV_NO_GO_TOOLS:-}" ] && command -v go >/dev/null 2>&1 && ls tools/go/*/binaries >/dev/null 2>&1; then
  # A set with a file `no-ci` (a benchmark's tool) is built only when something asks for it.
  sets=$(for d in tools/go/*/binaries; do [ -e "$(dirname "$d")/no-ci" ] || basename "$(dirname "$d")"; done)
  # k8s-1.37 first: the control plane below waits for it before the first tests.
  sets="k8s-1.37 $(printf '%s\n' $sets | grep -vx 'k8s-1.37' | tr '\n' ' ')"
  # shellcheck disable=SC2086
  (tools/gotool.sh build $sets >/dev/null 2>build/gotool.log || echo "gotool: failed" >>build/gotool.log) &
fi

# One real control plane (etcd, kube-apiserver, kube-controller-manager from the k8s Go set,
# tools/k8s.sh) for every Kubernetes e2e test of both builds: started in the background (it waits
# for its Go set), awaited before the first tests, stopped at the end (or by its watchdog when
# this script dies).  Tests find it through GV_K8S_STATE (tests/k8s/cluster.py); without it
# each test module starts its own.
k8s_pid=
if [ -z "${GV_NO_GO_TOOLS:-}" ] && command -v go >/dev/null 2>&1; then
  export GV_K8S_STATE=$PWD/build/k8s
  tools/k8s.sh down "$GV_K8S_STATE" 2>/dev/null
  (GV_K8S_PARENT_PID=$$ GV_K8S_CONTROLLERS='*,-node-lifecycle-controller' \
     tools/k8s.sh up "$GV_K8S_STATE" >/dev/null 2>build/k8s-up.log) &
  k8s_pid=$!
fi

build() { # folder, extra meson options...
  local dir=$1; shift
  if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" -Dwerror=true "$@" >/dev/null || return 1
  else
    meson setup "$dir" -Dwerror=true "$@" >/dev/null || return 1
  fi
  ninja -C "$dir" >/dev/null || { ninja -C "$dir"; return 1; }
}

for cfg in "build-test" "build-asan -Db_sanitize=address,undefined -Db_lundef=false"; do
  read -r -a args <<<"$cfg"
  dir=${args[0]}
  if build "${args[@]}"; then
    if [ -n "$k8s_pid" ]; then
      wait "$k8s_pid" || { echo "== control plane failed (build/k8s-up.log):"; tail -n 20 build/k8s-up.log; }
      k8s_pid=
    fi
    echo "== tests in $dir"
    meson test -C "$dir" --num-processes 2 --print-errorlogs >"$dir/test-output.txt" 2>&1 || status=1
    tail -n 12 "$dir/test-output.txt"
  else
    echo "== build of $dir failed"
    status=1
    rm -f "$dir/meson-logs/testlog.json"
  fi
done

# Static analysis (cppcheck, clang-tidy) of src/ and mock/, counted as tests.
echo "== static analysis"
tools/static-analysis.sh build-test >build-test/static-analysis.tap 2>&1 || status=1
grep -E '^(not )?ok' build-test/static-analysis.tap

# The container image from deploy/Dockerfile (podman), run as the chart runs it (read-only root, no
# network); the smoke test's TAP counts with the rest.  The archives stay in build/image/.
echo "== container image"
mkdir -p build/image
rm -f build/image/smoke.tap
if tools/image.sh build; then
  tools/image.sh smoke >build/image/smoke.tap 2>&1 || status=1
  grep -v '^ok' build/image/smoke.tap | tail -n 20
else
  echo "not ok 1 - tools/image.sh build" >build/image/smoke.tap
  status=1
fi

# Suites outside meson (tools/ci.d/NAME.sh, run in name order): each writes TAP on stdout and
# its log on stderr; counted with the rest.
mkdir -p build/ci
ci_taps=()
for suite in tools/ci.d/*.sh; do
  [ -e "$suite" ] || continue
  name=$(basename "$suite" .sh)
  echo "== $name"
  start=$(date +%s)
  "$suite" >"build/ci/$name.tap" 2>"build/ci/$name.log" || status=1
  grep -E '^not ok' "build/ci/$name.tap" | head -n 20
  echo "   $(grep -cE '^ok' "build/ci/$name.tap") ok in $(( $(date +%s) - start )) s"
  ci_taps+=("build/ci/$name.tap")
done
[ -z "${GV_K8S_STATE:-}" ] || tools/k8s.sh down "$GV_K8S_STATE"
wait

python3 tools/count-results.py build-test build-asan build-test/static-analysis.tap build/image/smoke.tap "${ci_taps[@]}" || status=1
exit $status
