#!/usr/bin/env python3
"""Prints figures for re-validation in place (`gpu-validator watch`); asserts nothing.

On a mock node (driver root with file device nodes, a status folder), after the chain
driver -> toolkit has passed, each trial restarts a simulated driver container: .driver-ctr-ready
and the /dev/nvidia* nodes are removed, stay away DOWN seconds, then come back.  Measured:
- restart (the flag's removal) -> a `[ -f toolkit-ready ]` consumer (polling every 0.2 ms) sees not-ready;
- driver back -> that consumer sees ready again, and -> `gpu-validator wait toolkit` (started
  when the driver comes back) returns 0;
beside upstream's behaviour on the same timeline (validated once, no watcher: the markers stay
until the pod restarts, so not-ready is never seen).
Then a GPU falls off the bus (`gpu-validator mock set --gpu 1 fault=fell-off-the-bus`: Xid 79, then
NVML answers GPU_IS_LOST; no file of the driver changes) and comes back (`mock set --clear`), under
the default --gpu-health-interval (1 s).  Measured from the start of `mock set`:
- to `[ -f toolkit-ready ]` seeing not-ready (the probe's interval bounds it);
- to the re-run's driver check naming the GPU (its `driver: gpu-lost` log line);
- from the start of `mock set --clear` to toolkit-ready back.
The watcher runs with --revalidate-backoff 0 --revalidate-min-interval 0 (the fastest settings);
the chart's defaults add their delays (first re-run 2 s after the change, at most one every 10 s).
Usage: bench/revalidate/bench_revalidate.py [BUILD_DIR] [TRIALS] [DOWN_SECONDS]"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
trials = int(sys.argv[2]) if len(sys.argv) > 2 else 20
down_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3
gv = os.path.join(build, "src", "cli", "gpu-validator")
POLL_S = 0.0002


class Node:
    def __init__(self, base):
        self.base = base
        self.status, self.driver, self.host = (os.path.join(base, d) for d in ("validations", "driver", "host"))
        self.parked = os.path.join(base, "parked")
        for d in (self.status, self.driver, self.parked):
            os.makedirs(d)
        self.boot = os.path.join(base, "boot_id")
        with open(self.boot, "w") as f:
            f.write("6f1c7d52-0c7e-4e8e-9d4a-1b1d2f3a4b5c\n")
        subprocess.run([gv, "mock", "install", "--root", self.driver, "--gpus", "2", "--device-nodes", "files",
                        "--cdi-dir", os.path.join(base, "cdi")], check=True, capture_output=True)
        os.makedirs(os.path.join(self.host, "etc", "containerd"))
        with open(os.path.join(self.host, "etc", "containerd", "config.toml"), "w") as f:
            f.write('[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
                    '  BinaryName = "/usr/bin/nvidia-container-runtime"\n')
        os.makedirs(os.path.join(self.host, "usr", "bin"))
        rt = os.path.join(self.host, "usr", "bin", "nvidia-container-runtime")
        with open(rt, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(rt, 0o755)
        self.flag = os.path.join(self.status, ".driver-ctr-ready")
        self.toolkit = os.path.join(self.status, "toolkit-ready")
        self.devdir = os.path.join(self.driver, "dev")
        self.driver_up()

    def args(self):
        return ["--components", "driver,toolkit", "--output-dir", self.status, "--boot-id-file", self.boot,
                "--host-root", self.host, "--driver-install-dir", self.driver, "--driver-install-dir-ctr-path",
                self.driver, "--cdi-dir", "/etc/cdi", "--dev-char-dir", os.path.join(self.base, "dev-char"),
                "--dev-node-wait", "1", "--runtime-config", "/etc/containerd/config.toml"]

    def driver_down(self):
        os.unlink(self.flag)
        for n in os.listdir(self.devdir):
            if n.startswith("nvidia"):
                os.rename(os.path.join(self.devdir, n), os.path.join(self.parked, n))

    def driver_up(self):
        for n in os.listdir(self.parked):
            os.rename(os.path.join(self.parked, n), os.path.join(self.devdir, n))
        tmp = self.flag + ".tmp"
        with open(tmp, "w") as f:
            f.write("GDS_ENABLED: false\n")
        os.rename(tmp, self.flag)


def until(cond, timeout):
    """Seconds until cond() is true (polling every POLL_S), or None after @timeout."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if cond():
            return time.perf_counter() - t0
        time.sleep(POLL_S)
    return None


def figures(name, xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return f"{name}: never"
    return (f"{name}: p50 {statistics.median(xs) * 1000:.1f} ms, p90 {xs[int(0.9 * (len(xs) - 1))] * 1000:.1f} ms, "
            f"max {xs[-1] * 1000:.1f} ms ({len(xs)} trials)")


def watcher_trials(node):
    env = {k: v for k, v in os.environ.items() if k not in ("COMPONENT", "OUTPUT_DIR")}
    w = subprocess.Popen([gv, "watch", *node.args(), "--revalidate-backoff", "0", "--revalidate-max-backoff", "1",
                          "--revalidate-min-interval", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=env)
    gone, back, back_wait = [], [], []
    try:
        if until(lambda: os.path.exists(node.toolkit), 30) is None:
            raise SystemExit("the watcher did not validate the mock node")
        for _ in range(trials):
            time.sleep(0.2)
            t0 = time.perf_counter()
            node.driver_down()
            g = until(lambda: not os.path.exists(node.toolkit), 5)
            gone.append(g if g is None else time.perf_counter() - t0)
            time.sleep(down_s)
            node.driver_up()
            t1 = time.perf_counter()
            waiter = subprocess.Popen([gv, "wait", "toolkit", "--timeout", "30", "--output-dir", node.status,
                                       "--boot-id-file", node.boot], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            b = until(lambda: os.path.exists(node.toolkit), 30)
            back.append(b if b is None else time.perf_counter() - t1)
            rc = waiter.wait(timeout=60)
            back_wait.append(time.perf_counter() - t1 if rc == 0 else None)
            until(lambda: os.path.exists(node.toolkit), 30)
    finally:
        w.terminate()
        w.wait(timeout=10)
    return gone, back, back_wait


def gpu_lost_trials(node, n):
    env = {k: v for k, v in os.environ.items() if k not in ("COMPONENT", "OUTPUT_DIR") and not k.startswith("MOCK_NVML")}
    log = os.path.join(node.base, "watch.err")
    with open(log, "w") as err:
        w = subprocess.Popen([gv, "watch", *node.args(), "--revalidate-backoff", "0", "--revalidate-max-backoff", "1",
                              "--revalidate-min-interval", "0"], stdout=subprocess.DEVNULL, stderr=err, env=env)
    gone, named, back = [], [], []

    def mock_set(*args):
        subprocess.run([gv, "mock", "set", "--root", node.driver, *args], check=True, capture_output=True)

    def names():
        with open(log) as f:
            return sum(1 for ln in f if "driver: gpu-lost" in ln)
    try:
        if until(lambda: os.path.exists(node.toolkit), 30) is None:
            raise SystemExit("the watcher did not validate the mock node")
        for _ in range(n):
            time.sleep(0.2)
            before = names()
            t0 = time.perf_counter()
            mock_set("--gpu", "1", "fault=fell-off-the-bus")
            g = until(lambda: not os.path.exists(node.toolkit), 10)
            gone.append(g if g is None else time.perf_counter() - t0)
            m = until(lambda: names() > before, 10)
            named.append(m if m is None else time.perf_counter() - t0)
            t1 = time.perf_counter()
            mock_set("--clear")
            b = until(lambda: os.path.exists(node.toolkit), 30)
            back.append(b if b is None else time.perf_counter() - t1)
    finally:
        w.terminate()
        w.wait(timeout=10)
    return gone, named, back


def upstream_trials(node, observe_s=2.0):
    """Validated once and never again (upstream: the main container sleeps): after the same restart,
    does a consumer ever see not-ready?"""
    subprocess.run([gv, "run", *node.args()], check=True, capture_output=True)
    node.driver_down()
    seen = until(lambda: not os.path.exists(node.toolkit), observe_s)
    node.driver_up()
    return seen, observe_s


def main():
    work = tempfile.mkdtemp(prefix="gv-bench-reval-")
    try:
        node = Node(os.path.join(work, "a"))
        gone, back, back_wait = watcher_trials(node)
        print(f"driver-container restart (flag and 6 device nodes removed, back after {down_s:.1f} s), "
              f"gpu-validator watch, fastest settings:")
        print("  " + figures("restart -> [ -f toolkit-ready ] sees not-ready", gone))
        print("  " + figures("driver back -> [ -f toolkit-ready ] sees ready again", back))
        print("  " + figures("driver back -> `gpu-validator wait toolkit` returns 0", back_wait))
        gone, named, back = gpu_lost_trials(Node(os.path.join(work, "c")), min(trials, 10))
        print("GPU 1 falls off the bus (`mock set fault=fell-off-the-bus`) and comes back (`mock set --clear`), "
              "gpu-validator watch, GPU probe every 1 s (default), fastest re-run settings:")
        print("  " + figures("mock set -> [ -f toolkit-ready ] sees not-ready", gone))
        print("  " + figures("mock set -> the re-run's driver check names the GPU", named))
        print("  " + figures("mock set --clear -> [ -f toolkit-ready ] sees ready again", back))
        seen, obs = upstream_trials(Node(os.path.join(work, "b")))
        print("upstream (validated once, main container sleeps): "
              + (f"not-ready seen after {seen * 1000:.1f} ms" if seen is not None else
                 f"not-ready never seen in {obs:.1f} s: the markers stay until the pod restarts"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
