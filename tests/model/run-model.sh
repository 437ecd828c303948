#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Checks tests/model/markers.pml with spin: the protocol must hold the
# invariant, and each seeded bug must be caught.  Prints TAP.
set -u
model=$(cd "$(dirname "$0")" && pwd)/markers.pml
spin=${SPIN:-spin}
cc=${CC:-cc}
if ! command -v "$spin" >/dev/null 2>&1; then
        echo "1..0 # SKIP spin not installed"
        exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/gv-model-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
cp "$model" . || exit 1

# $1 name, $2 spin define ("" for the real protocol), $3 want errors (0 or 1)
n=0 failed=0
check() {
        n=$((n + 1))
        rm -f pan pan.* ./*.trail
        if ! "$spin" $2 -a markers.pml >spin.log 2>&1 ||
           ! "$cc" -O2 -DSAFETY -DNOREDUCE -o pan pan.c >cc.log 2>&1; then
                echo "not ok $n - $1: spin/cc failed"; sed 's/^/# /' spin.log cc.log; failed=1; return
        fi
        ./pan -m200000 -E >pan.log 2>&1
        errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -n1)
        if [ -z "$errors" ]; then
                echo "not ok $n - $1: no verdict"; sed 's/^/# /' pan.log; failed=1
        elif [ "$3" = 0 ] && [ "$errors" = 0 ]; then
                echo "ok $n - $1: invariant holds ($(grep -o '[0-9]* states, stored' pan.log))"
        elif [ "$3" = 1 ] && [ "$errors" != 0 ]; then
                echo "ok $n - $1: violation found as expected"
        else
                echo "not ok $n - $1: errors=$errors"; sed 's/^/# /' pan.log; failed=1
        fi
}
echo "1..4"
check "protocol" "" 0
check "bug: own marker removed first" "-DBUG_OWN_FIRST" 1
check "bug: no writer lock" "-DBUG_NO_LOCK" 1
check "bug: publish without parent check" "-DBUG_NO_CHECK" 1
exit $failed
