#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Compare our nvidia-smi with NVIDIA's on a machine with a real GPU and driver.
#
#   tools/compare-nvidia-smi.sh [OUR_NVIDIA_SMI] [REAL_NVIDIA_SMI]
#
# OUR_NVIDIA_SMI defaults to build/mock/smi/nvidia-smi, REAL_NVIDIA_SMI to the
# nvidia-smi on PATH.  Ours must load the real libnvidia-ml.so.1: its own
# candidates (../lib64, ../lib, ../lib/x86_64-linux-gnu beside it, then the
# system search) find the driver's library as long as no mock library sits
# beside it, so the script copies it into a scratch folder first.
#
# Compared: the `-L` lines exactly; every --query-gpu field below per GPU,
# exactly for static values and within tolerances for values that move from
# second to second (power, temperature, utilisation, clocks, memory used/free).
# Exit 0 when everything agrees, 1 on a difference, 2 when it cannot run.
set -u

OURS=${1:-build/mock/smi/nvidia-smi}
REAL=${2:-$(command -v nvidia-smi || true)}
[ -x "$OURS" ] || { echo "our nvidia-smi not found at $OURS" >&2; exit 2; }
if [ -z "$REAL" ] || [ ! -x "$REAL" ]; then echo "no real nvidia-smi on PATH" >&2; exit 2; fi

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
mkdir -p "$SCRATCH/bin"
cp "$OURS" "$SCRATCH/bin/nvidia-smi"
OURS="$SCRATCH/bin/nvidia-smi"

FIELDS="index,name,uuid,pci.bus_id,pci.sub_device_id,driver_version,memory.total,memory.used,memory.free,\
utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit,clocks.gr,clocks.mem,fan.speed,\
compute_cap,mig.mode.current,persistence_mode"

fail=0

# ---- -L ----
"$REAL" -L >"$SCRATCH/real-L.txt" 2>&1; rc_real=$?
"$OURS" -L >"$SCRATCH/ours-L.txt" 2>&1; rc_ours=$?
if [ "$rc_real" != "$rc_ours" ]; then
        echo "-L: exit codes differ: real $rc_real, ours $rc_ours"; fail=1
fi
if ! diff -u "$SCRATCH/real-L.txt" "$SCRATCH/ours-L.txt" >"$SCRATCH/L.diff"; then
        echo "-L: output differs:"; cat "$SCRATCH/L.diff"; fail=1
else
        echo "-L: identical ($(wc -l <"$SCRATCH/real-L.txt") lines)"
fi

# ---- --query-gpu, header and values ----
"$REAL" --query-gpu="$FIELDS" --format=csv >"$SCRATCH/real.csv" 2>&1 || { echo "real --query-gpu failed:"; cat "$SCRATCH/real.csv"; exit 2; }
"$OURS" --query-gpu="$FIELDS" --format=csv >"$SCRATCH/ours.csv" 2>&1 || { echo "our --query-gpu failed:"; cat "$SCRATCH/ours.csv"; fail=1; }

python3 - "$SCRATCH/real.csv" "$SCRATCH/ours.csv" <<'PY' || fail=1
import re
import sys

# Absolute tolerance per field for values that change second to second; everything else exact.
TOLERANCE = {
    "memory.used": 256.0,        # MiB
    "memory.free": 256.0,        # MiB
    "utilization.gpu": 25.0,     # %
    "utilization.memory": 25.0,  # %
    "temperature.gpu": 5.0,      # C
    "power.draw": 50.0,          # W
    "clocks.current.graphics": 600.0,  # MHz (idle/boost transitions)
    "clocks.current.memory": 600.0,    # MHz
    "fan.speed": 15.0,           # %
}

def load(path):
    lines = [l for l in open(path).read().splitlines() if l.strip()]
    header = lines[0].split(", ")
    return header, [l.split(", ") for l in lines[1:]]

def number(cell):
    m = re.match(r"^(-?\d+(?:\.\d+)?)", cell)
    return float(m.group(1)) if m else None

rh, rrows = load(sys.argv[1])
oh, orows = load(sys.argv[2])
bad = 0
if rh != oh:
    print("--query-gpu header differs:\n  real: %s\n  ours: %s" % (", ".join(rh), ", ".join(oh)))
    bad = 1
if len(rrows) != len(orows):
    print(f"--query-gpu: real has {len(rrows)} rows, ours {len(orows)}")
    bad = 1
for gpu, (r, o) in enumerate(zip(rrows, orows)):
    for h, rv, ov in zip(rh, r, o):
        name = h.split(" [")[0]
        if rv == ov:
            continue
        tol = TOLERANCE.get(name)
        rn, on = number(rv), number(ov)
        # Units must agree even when the number may move.
        same_unit = re.sub(r"^-?[\d.]+", "", rv) == re.sub(r"^-?[\d.]+", "", ov)
        if tol is not None and rn is not None and on is not None and same_unit and abs(rn - on) <= tol:
            continue
        print(f"GPU {gpu} {name}: real {rv!r}, ours {ov!r}" + (f" (tolerance {tol})" if tol else ""))
        bad = 1
print("--query-gpu: %s (%d GPUs x %d fields)" % ("agree" if not bad else "DIFFER", len(rrows), len(rh)))
sys.exit(bad)
PY

# ---- -q -x parses and names the same GPUs ----
if "$OURS" -q -x >"$SCRATCH/ours.xml" 2>/dev/null && "$REAL" -q -x >"$SCRATCH/real.xml" 2>/dev/null; then
        python3 - "$SCRATCH/real.xml" "$SCRATCH/ours.xml" <<'PY' || fail=1
import sys
import xml.etree.ElementTree as ET
r, o = ET.parse(sys.argv[1]).getroot(), ET.parse(sys.argv[2]).getroot()
def ids(x):
    return [(g.get("id"), g.findtext("uuid"), g.findtext("product_name")) for g in x.findall("gpu")]
if ids(r) != ids(o):
    print("-q -x: GPUs differ:", ids(r), ids(o))
    sys.exit(1)
def paths(e, p=""):
    s = {p + "/" + e.tag}
    for c in e:
        s |= paths(c, p + "/" + e.tag)
    return s
extra = paths(o) - paths(r)
if extra:
    print("-q -x: elements the real output lacks:", sorted(extra))
    sys.exit(1)
print("-q -x: same GPUs; every element of ours exists in the real document")
PY
fi

if [ "$fail" = 0 ]; then echo "OK: our nvidia-smi agrees with $REAL"; else echo "DIFFERENCES found (see above)"; fi
exit "$fail"
