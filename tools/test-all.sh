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

python3 tools/count-results.py build-test build-asan build-test/static-analysis.tap build/image/smoke.tap || status=1
exit $status
