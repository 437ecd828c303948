#!/usr/bin/env python3
"""Prints figures for the validation chain (no assertions):
- `run --mock` wall time for driver + toolkit (median and p90 over N runs);
- peak RSS of `run`, `wait` and `status`.
Usage: bench/run/bench_run.py [BUILD_DIR] [RUNS]"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
gv = os.path.join(build, "src", "cli", "gpu-validator")


def peak_rss_kib(cmd):
    """Peak RSS of one command in KiB, by GNU time (Debian's `time`), or "n/a" without it.
    A child forked from Python would carry Python's own RSS into its ru_maxrss (about 10 MiB)."""
    if not os.access("/usr/bin/time", os.X_OK):
        return "n/a"
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lines = out.read().strip().splitlines()
        return lines[-1] if lines and lines[-1].isdigit() else "n/a"


def main():
    work = tempfile.mkdtemp(prefix="gv-bench-")
    try:
        base = ["run", "--mock", "--mock-dir", work]
        subprocess.run([gv, *base], check=True, capture_output=True)  # warm-up, installs the root
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([gv, *base], check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        times.sort()
        print(f"run --mock (driver+toolkit, 8 mock GPUs): median {statistics.median(times)*1000:.1f} ms, "
              f"p90 {times[int(0.9 * (len(times) - 1))]*1000:.1f} ms over {runs} runs")
        status_dir = os.path.join(work, "validations")
        for name, cmd in (("run --mock", [gv, *base]),
                          ("wait toolkit", [gv, "wait", "toolkit", "--timeout", "5", "--output-dir", status_dir]),
                          ("status", [gv, "status", "--output-dir", status_dir])):
            print(f"peak RSS {name}: {peak_rss_kib(cmd)} KiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
