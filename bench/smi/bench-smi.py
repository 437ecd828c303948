#!/usr/bin/env python3
"""Wall time of our nvidia-smi (-L and --query-gpu) on the mock library with 8 and 64 GPUs.

Prints figures only; no assertions.  Usage:
  bench-smi.py [BUILD_DIR] [--runs N]
BUILD_DIR defaults to ./build; it must hold mock/smi/nvidia-smi and mock/nvml/libnvidia-ml.so.1.
"""
import os
import statistics
import subprocess
import sys
import time

QUERY = ("--query-gpu=index,name,uuid,pci.bus_id,pci.sub_device_id,driver_version,memory.total,memory.used,"
         "memory.free,utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit,clocks.gr,"
         "clocks.mem,fan.speed,compute_cap,mig.mode.current,persistence_mode")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    runs = 20
    if "--runs" in sys.argv:
        runs = int(sys.argv[sys.argv.index("--runs") + 1])
        args = [a for a in args if a != str(runs)]
    build = args[0] if args else "build"
    smi = os.path.join(build, "mock", "smi", "nvidia-smi")
    if not os.access(smi, os.X_OK):
        sys.exit(f"{smi}: not built")
    print(f"nvidia-smi wall time over {runs} runs (mock NVML, profile a100-sxm4-40gb)")
    print(f"{'gpus':>5} {'command':<14} {'median ms':>10} {'p90 ms':>8} {'max ms':>8}")
    for gpus in (8, 64):
        env = {"PATH": "/usr/bin:/bin", "MOCK_NVML_NUM_DEVICES": str(gpus)}
        for label, cmd in (("-L", ["-L"]), ("--query-gpu", [QUERY, "--format=csv"]), ("table", []),
                           ("-q -x", ["-q", "-x"])):
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                p = subprocess.run([smi] + cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times.append((time.perf_counter() - t0) * 1000)
                if p.returncode != 0:
                    sys.exit(f"nvidia-smi {' '.join(cmd)} exited {p.returncode}")
            times.sort()
            p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
            print(f"{gpus:>5} {label:<14} {statistics.median(times):>10.2f} {p90:>8.2f} {times[-1]:>8.2f}")


if __name__ == "__main__":
    main()
