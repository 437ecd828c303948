#!/usr/bin/env python3
"""Wall time and peak RSS of our nvidia-smi on the mock library with 8 and 64 GPUs.

Peak RSS by GNU time (/usr/bin/time, Debian's `time`; n/a without it).
Commands: -L, --query-gpu with 20 common fields, --query-gpu with every field our nvidia-smi accepts,
the table, -q and -q -x.  "Every field": the names `nvidia-smi --help-query-gpu` lists, else those of
the field table in mock/smi/smi-fields.c, each kept only when `--query-gpu=<name>` alone exits 0.
Prints figures only; no assertions.  Usage:
  bench-smi.py [BUILD_DIR] [--runs N]
BUILD_DIR defaults to ./build; it must hold mock/smi/nvidia-smi and mock/nvml/libnvidia-ml.so.1.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

QUERY = ("--query-gpu=index,name,uuid,pci.bus_id,pci.sub_device_id,driver_version,memory.total,memory.used,"
         "memory.free,utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit,clocks.gr,"
         "clocks.mem,fan.speed,compute_cap,mig.mode.current,persistence_mode")
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, env):
    """Runs @cmd; returns (exit status, wall ms)."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode, (time.perf_counter() - t0) * 1000


def peak_rss_kib(cmd, env):
    """Peak RSS of @cmd in KiB, by GNU time (Debian's `time`): a child forked from this Python process
    would carry Python's own RSS into its ru_maxrss.  None without /usr/bin/time."""
    if not os.access("/usr/bin/time", os.X_OK):
        return None
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name] + cmd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        text = out.read().strip().splitlines()
        return int(text[-1]) if text and text[-1].isdigit() else None


def every_field(smi, env):
    """The --query-gpu names our nvidia-smi accepts (see the module doc)."""
    p = subprocess.run([smi, "--help-query-gpu"], env=env, capture_output=True, text=True)
    names = re.findall(r'^"([^"]+)"', p.stdout, re.M) if p.returncode == 0 else []
    if not names:
        with open(os.path.join(SOURCE, "mock", "smi", "smi-fields.c"), encoding="utf-8") as f:
            names = re.findall(r'\{\s*SMI_F_\w+,\s*"([^"]+)"', f.read())
    ok = []
    for n in dict.fromkeys(names):
        if subprocess.run([smi, f"--query-gpu={n}", "--format=csv"], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            ok.append(n)
    return ok


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
    fields = every_field(smi, {"PATH": "/usr/bin:/bin", "MOCK_NVML_NUM_DEVICES": "1"})
    every = "--query-gpu=" + ",".join(fields)
    print(f"nvidia-smi wall time over {runs} runs (mock NVML, profile a100-sxm4-40gb); "
          f"--query-gpu all = the {len(fields)} fields it accepts")
    print(f"{'gpus':>5} {'command':<18} {'median ms':>10} {'p90 ms':>8} {'max ms':>8} {'peak RSS KiB':>13}")
    for gpus in (8, 64):
        env = {"PATH": "/usr/bin:/bin", "MOCK_NVML_NUM_DEVICES": str(gpus)}
        for label, cmd in (("-L", ["-L"]), ("--query-gpu 20", [QUERY, "--format=csv"]),
                           (f"--query-gpu all", [every, "--format=csv"]), ("table", []), ("-q", ["-q"]),
                           ("-q -x", ["-q", "-x"])):
            times = []
            for _ in range(runs):
                rc, ms = run([smi] + cmd, env)
                if rc != 0:
                    sys.exit(f"nvidia-smi {' '.join(cmd)[:80]} exited {rc}")
                times.append(ms)
            rss = peak_rss_kib([smi] + cmd, env) or "n/a"
            times.sort()
            p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
            print(f"{gpus:>5} {label:<18} {statistics.median(times):>10.2f} {p90:>8.2f} {times[-1]:>8.2f} {rss:>13}")


if __name__ == "__main__":
    main()
