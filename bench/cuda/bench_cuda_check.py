#!/usr/bin/env python3
"""`gpu-validator cuda-check` on the mock libcuda (mock/cuda), through the real CUDA code path:
roots from `gpu-validator mock install` (a100-sxm4-40gb, 8 and 64 GPUs), the check loading the root's
libcuda.so.1 by soname as in a validation pod.  Prints, per layout and vector size, the wall time of the
whole check (median and max over the runs), the mean per-GPU time cuda-check reports (context, JIT,
allocation, copies, kernel) and its kernel time, and the peak RSS (each run under GNU time,
Debian's `time`; n/a without it).  The 64 GPUs x 4 Mi elements case (~10 s a run) runs RUNS/5 times.  Figures only; no assertions.
With --baseline OLD_BUILD_DIR (a build of another tree, e.g. the commit before a change), each case
runs the two builds' gpu-validator and mock libraries alternately in the same run, and prints both.
--gpus N runs only the layouts of N GPUs (default: 8 and 64).
Usage: bench/cuda/bench_cuda_check.py [BUILD_DIR] [RUNS] [--baseline OLD_BUILD_DIR] [--gpus N]
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

OK_LINE = re.compile(r"^GPU \d+: .*: vector add of (\d+) elements .* OK \(([\d.]+) ms, kernel ([\d.]+) ms\)")


def one_run(gv, cmd, env, timed, out, tally):
    """Runs cuda-check once and adds its figures to tally (walls, per_gpu, kernel, rss)."""
    t0 = time.perf_counter()
    p = subprocess.run(timed + [gv] + cmd, env=env, capture_output=True, text=True)
    tally[0].append((time.perf_counter() - t0) * 1000)
    if p.returncode != 0:
        sys.exit(f"{gv}: cuda-check exited {p.returncode}: {p.stdout[-300:]}{p.stderr[-300:]}")
    for m in filter(None, map(OK_LINE.match, p.stdout.splitlines())):
        tally[1].append(float(m.group(2)))
        tally[2].append(float(m.group(3)))
    if timed:
        with open(out, encoding="utf-8") as f:
            tally[3].append(int(f.read().split()[-1]))


def main():
    args = list(sys.argv[1:])
    baseline, layouts = None, (8, 64)
    if "--baseline" in args:
        i = args.index("--baseline")
        baseline = args[i + 1]
        del args[i:i + 2]
    if "--gpus" in args:
        i = args.index("--gpus")
        layouts = (int(args[i + 1]),)
        del args[i:i + 2]
    build = args[0] if args else "build"
    runs = int(args[1]) if len(args) > 1 else 5
    builds = [("", build)] + ([("baseline ", baseline)] if baseline else [])
    for _, b in builds:
        if not os.access(os.path.join(b, "src", "cli", "gpu-validator"), os.X_OK):
            sys.exit(f"{b}: gpu-validator not built")
    work = tempfile.mkdtemp(prefix="gv-bench-cuda-")
    try:
        print(f"cuda-check on the mock libcuda (a100-sxm4-40gb), {runs} runs each")
        print(f"{'build':>9} {'gpus':>5} {'elements':>9} {'median ms':>10} {'max ms':>8} {'ms a GPU':>9} "
              f"{'kernel ms':>10} {'peak RSS KiB':>13}")
        for gpus in layouts:
            roots = {}
            for label, b in builds:
                gv = os.path.join(b, "src", "cli", "gpu-validator")
                roots[label] = (gv, os.path.join(work, f"root-{gpus}-{len(roots)}"))
                subprocess.run([gv, "mock", "install", "--root", roots[label][1], "--profile", "a100-sxm4-40gb",
                                "--gpus", str(gpus), "--device-nodes=files"], check=True, capture_output=True)
            for elements in (65536, 4194304):
                cmd = ["cuda-check", "--require-cuda", "--expect-devices", str(gpus), "--elements", str(elements)]
                out = os.path.join(work, "rss")
                timed = ["/usr/bin/time", "-f", "%M", "-o", out] if os.access("/usr/bin/time", os.X_OK) else []
                tallies = {label: ([], [], [], []) for label, _ in builds}
                # 64 GPUs x 4 Mi elements takes ~10 s a run on 2 cores: once in a fifth of the runs
                for _ in range(max(1, runs // 5) if gpus * elements > 8 * 4194304 else runs):
                    for label, _ in builds:  # alternating, so both see the same load
                        gv, root = roots[label]
                        env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": os.path.join(root, "usr", "lib64")}
                        one_run(gv, cmd, env, timed, out, tallies[label])
                for label, _ in builds:
                    walls, per_gpu, kernel, rss = tallies[label]
                    print(f"{label or 'this':>9} {gpus:>5} {elements:>9} {statistics.median(walls):>10.1f} "
                          f"{max(walls):>8.1f} {statistics.mean(per_gpu):>9.2f} {statistics.mean(kernel):>10.2f} "
                          f"{max(rss) if rss else 'n/a':>13}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
