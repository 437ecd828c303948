#!/usr/bin/env python3
"""`gpu-validator cuda-check` on the mock libcuda (mock/cuda), through the real CUDA code path:
roots from `gpu-validator mock install` (a100-sxm4-40gb, 8 and 64 GPUs), the check loading the root's
libcuda.so.1 by soname as in a validation pod.  Prints, per layout and vector size, the wall time of the
whole check (median and max over the runs), the mean per-GPU time cuda-check reports (context, JIT,
allocation, copies, kernel) and its kernel time, and the peak RSS (each run under GNU time,
Debian's `time`; n/a without it).  The 64 GPUs x 4 Mi elements case (~10 s a run) runs RUNS/5 times.  Figures only; no assertions.
Usage: bench/cuda/bench_cuda_check.py [BUILD_DIR] [RUNS]
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


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    gv = os.path.join(build, "src", "cli", "gpu-validator")
    if not os.access(gv, os.X_OK):
        sys.exit(f"{gv}: not built")
    work = tempfile.mkdtemp(prefix="gv-bench-cuda-")
    try:
        print(f"cuda-check on the mock libcuda (a100-sxm4-40gb), {runs} runs each")
        print(f"{'gpus':>5} {'elements':>9} {'median ms':>10} {'max ms':>8} {'ms a GPU':>9} {'kernel ms':>10} "
              f"{'peak RSS KiB':>13}")
        for gpus in (8, 64):
            root = os.path.join(work, f"root-{gpus}")
            subprocess.run([gv, "mock", "install", "--root", root, "--profile", "a100-sxm4-40gb", "--gpus",
                            str(gpus), "--device-nodes=files"], check=True, capture_output=True)
            env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": os.path.join(root, "usr", "lib64")}
            for elements in (65536, 4194304):
                cmd = [gv, "cuda-check", "--require-cuda", "--expect-devices", str(gpus), "--elements",
                       str(elements)]
                walls, per_gpu, kernel, rss = [], [], [], []
                out = os.path.join(work, "rss")
                timed = ["/usr/bin/time", "-f", "%M", "-o", out] if os.access("/usr/bin/time", os.X_OK) else []
                # 64 GPUs x 4 Mi elements takes ~10 s a run on 2 cores: once in a fifth of the runs
                for _ in range(max(1, runs // 5) if gpus * elements > 8 * 4194304 else runs):
                    t0 = time.perf_counter()
                    p = subprocess.run(timed + cmd, env=env, capture_output=True, text=True)
                    walls.append((time.perf_counter() - t0) * 1000)
                    if p.returncode != 0:
                        sys.exit(f"cuda-check exited {p.returncode}: {p.stdout[-300:]}{p.stderr[-300:]}")
                    for m in filter(None, map(OK_LINE.match, p.stdout.splitlines())):
                        per_gpu.append(float(m.group(2)))
                        kernel.append(float(m.group(3)))
                    if timed:
                        with open(out, encoding="utf-8") as f:
                            rss.append(int(f.read().split()[-1]))
                print(f"{gpus:>5} {elements:>9} {statistics.median(walls):>10.1f} {max(walls):>8.1f} "
                      f"{statistics.mean(per_gpu):>9.2f} {statistics.mean(kernel):>10.2f} {max(rss) if rss else 'n/a':>13}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
