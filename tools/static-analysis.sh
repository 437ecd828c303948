#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Static analysis of base/, abi/, src/ and mock/: cppcheck, then clang-tidy (.clang-tidy),
# both from the compile commands of a meson build folder (default build/;
# `meson setup` writes compile_commands.json).  Zero findings is the bar.
# Prints TAP, one test per tool, so tools/count-results.py counts a failed
# analysis as a failed test; findings go to BUILD/static-analysis/*.txt and
# are shown as TAP comments.  Configuration: .clang-tidy and
# tools/static-analysis/cppcheck-suppressions.txt (a reason per suppression).
#
#   tools/static-analysis.sh [BUILD_DIR]      (JOBS=N for clang-tidy, default nproc)
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
build=${1:-build}
jobs=${JOBS:-$(nproc)}
out=$build/static-analysis
cc=$build/compile_commands.json

echo "1..2"
if [ ! -f "$cc" ]; then
  echo "not ok 1 - cppcheck # $cc missing (meson setup $build first)"
  echo "not ok 2 - clang-tidy # $cc missing"
  exit 1
fi
mkdir -p "$out/db"
# Only the translation units of base/, abi/, src/ and mock/ (not tests/ or bench/).
python3 - "$cc" "$out/db/compile_commands.json" "$src" <<'PY' || exit 1
import json, os, sys
cc, dest, src = sys.argv[1:]
keep = []
for e in json.load(open(cc)):
    path = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if os.path.relpath(path, src).split(os.sep)[0] in ("base", "abi", "src", "mock"):
        # -I folders made absolute: cppcheck 2.10 resolved the relative ones against another
        # folder than "directory" in a fresh build folder, missed the mock's internal headers
        # and took their macros (SCALAR_GETTER, GV_MOCK_ALIAS, ALIAS) for unknown ones.
        words = e["command"].split(" ")
        for i, w in enumerate(words):
            if w.startswith("-I") and not w.startswith("-I/"):
                words[i] = "-I" + os.path.normpath(os.path.join(e["directory"], w[2:]))
        e["command"] = " ".join(words)
        keep.append(e)
json.dump(keep, open(dest, "w"), indent=1)
PY

status=0
report() { # n, name, findings file, tool exit status
  local n=$1 name=$2 file=$3 rc=$4 count
  count=$(grep -cE ': (warning|error|style|portability|performance|information):' "$file")
  if [ "$rc" -eq 0 ] && [ "$count" -eq 0 ]; then
    echo "ok $n - $name: no findings"
  else
    echo "not ok $n - $name: $count finding(s), exit $rc (full list: $file)"
    grep -E ': (warning|error|style|portability|performance|information):' "$file" |
      sed -E "s|^$src/||; s|^([^ :]*/)?\.\./||; s/^/# /"
    [ "$count" -gt 0 ] || sed 's/^/# /' "$file" | tail -n 20
    status=1
  fi
}

if command -v cppcheck >/dev/null 2>&1; then
  cppcheck --project="$out/db/compile_commands.json" --enable=warning,portability,performance \
    --suppressions-list=tools/static-analysis/cppcheck-suppressions.txt --inline-suppr \
    --error-exitcode=1 --quiet -j "$jobs" \
    --template='{file}:{line}:{column}: {severity}: {message} [{id}]' >"$out/cppcheck.txt" 2>&1
  report 1 cppcheck "$out/cppcheck.txt" $?
else
  echo "not ok 1 - cppcheck not installed (tools/setup-debian.sh installs it)"; status=1
fi

if command -v clang-tidy >/dev/null 2>&1; then
  python3 -c 'import json,sys; [print(e["file"] if e["file"].startswith("/") else e["directory"] + "/" + e["file"]) for e in json.load(open(sys.argv[1]))]' \
    "$out/db/compile_commands.json" |
    xargs -P "$jobs" -n 4 clang-tidy -p "$out/db" --quiet >"$out/clang-tidy.txt" 2>"$out/clang-tidy.stderr"
  rc=$?
  # clang-tidy exits non-zero on a compile error as well: keep those lines.
  grep -E 'error:' "$out/clang-tidy.stderr" >>"$out/clang-tidy.txt"
  report 2 clang-tidy "$out/clang-tidy.txt" "$rc"
else
  echo "not ok 2 - clang-tidy not installed (tools/setup-debian.sh installs it)"; status=1
fi
exit $status
