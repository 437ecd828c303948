#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds every fuzz target with clang + libFuzzer (+ ASan/UBSan) and runs each
# one in turn for FUZZ_SECONDS seconds, starting from its checked-in corpus.
# New inputs go to a scratch folder, never into the checked-in corpus; crashes
# are written to $FUZZ_OUT/<target>/ (turn each into a corpus file + a fix).
# Prints one line of figures per target (executions, cov:, ft:, corpus size)
# and ends with "N passed, N failed" (a target that crashed counts failed).
#
#   FUZZ_SECONDS=60 tools/fuzz.sh            # or: make fuzz FUZZ_SECONDS=60
#   FUZZ_TARGETS="fuzz-profile fuzz-smi-query" tools/fuzz.sh
#   FUZZ_RUNS=10000000 FUZZ_SECONDS=900 tools/fuzz.sh  # stop at 10 M executions or 900 s
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_RUNS=${FUZZ_RUNS:--1}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
FUZZ_OUT=${FUZZ_OUT:-$FUZZ_BUILD/fuzz-out}
FUZZ_JOBS_NICE=${FUZZ_NICE:-10}

if [ ! -d "$FUZZ_BUILD" ]; then
  CC=clang meson setup "$FUZZ_BUILD" -Dfuzzing=true -Dbuildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false >/dev/null || exit 1
fi
ninja -C "$FUZZ_BUILD" >/dev/null || { ninja -C "$FUZZ_BUILD"; exit 1; }

# target -> seed corpus (the folder its corpus test reads in ordinary builds)
declare -A corpus=(
  [fuzz-marker-parse]=tests/fuzz/markers/corpus-marker-parse
  [fuzz-profile]=tests/fuzz/mock-nvml/corpus
  [fuzz-smi-query]=tests/fuzz/mock-smi/corpus
  [fuzz-cdi-spec]=tests/fuzz/components/corpus-cdi
  [fuzz-kubeconfig]=tests/fuzz/k8s/corpus-kubeconfig
  [fuzz-watch-stream]=tests/fuzz/k8s/corpus-watch
  [fuzz-workload-yaml]=tests/fuzz/workload/corpus-yaml
  [fuzz-workload-override]=tests/fuzz/workload/corpus-override
  [fuzz-signal-values]=tests/fuzz/nodesignal/corpus-signal
  [fuzz-listen-addr]=tests/fuzz/metrics/corpus-listen
  [fuzz-revalidations]=tests/fuzz/metrics/corpus-revalidations
  [fuzz-cli-values]=tests/fuzz/cli/corpus-values
  [fuzz-env-print]=tests/fuzz/cli/corpus-env
  [fuzz-driver-ctr-ready]=tests/fuzz/components/corpus-driver-ctr-ready
  [fuzz-dra-slices]=tests/fuzz/components/corpus-dra-slices
  [fuzz-ptx]=tests/fuzz/mock-cuda/corpus-ptx
  [fuzz-state]=tests/fuzz/mock-nvml/corpus-state
  [fuzz-pod-progress]=tests/fuzz/nodesignal/corpus-pod
  [fuzz-retry-after]=tests/fuzz/k8s/corpus-retry
  [fuzz-rfc3339]=tests/fuzz/metrics/corpus-rfc3339
  [fuzz-visible-devices]=tests/fuzz/cudacheck/corpus-visible
)
targets=${FUZZ_TARGETS:-$(printf '%s\n' "${!corpus[@]}" | sort)}

passed=0 failed=0
for t in $targets; do
  exe=$(find "$FUZZ_BUILD/tests/fuzz" -type f -executable -name "$t" | head -n1)
  if [ -z "$exe" ] || [ -z "${corpus[$t]:-}" ]; then
    echo "$t: no such fuzz target (or no corpus in tools/fuzz.sh)"; failed=$((failed + 1)); continue
  fi
  out=$FUZZ_OUT/$t
  rm -rf "$out"; mkdir -p "$out/corpus" "$out/crashes"
  log=$out/fuzz.log
  nice -n "$FUZZ_JOBS_NICE" "$exe" -max_total_time="$FUZZ_SECONDS" -runs="$FUZZ_RUNS" -print_final_stats=1 \
    -artifact_prefix="$out/crashes/" "$out/corpus" "${corpus[$t]}" >"$log" 2>&1
  rc=$?
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -n1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
  crashes=$(find "$out/crashes" -type f | wc -l)
  printf '%-24s runs=%s cov=%s ft=%s corp=%s seconds=%s crashes=%s\n' \
    "$t" "${runs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${secs:-$FUZZ_SECONDS}" "$crashes"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed=$((failed + 1))
    grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer)|runtime error' "$log" | sed 's/^/  /'
    find "$out/crashes" -type f | sed 's/^/  crash: /'
  else
    passed=$((passed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
