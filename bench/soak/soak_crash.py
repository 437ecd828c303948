#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Crash-consistency soak (not run in CI): SIGKILL `gpu-validator run`,
`run --mock` and `mock install` at random moments, and after every kill
check what a node would see:

  * the chain invariant (docs/markers.md), checked independently of
    gpu-validator's code by tests/e2e/chain.py:invariant_violations();
  * what a consumer concludes: `gpu-validator wait toolkit --timeout 0`
    (ready or not) and upstream's `[ -f $OUTPUT_DIR/toolkit-ready ]` script.
    A violation is a consumer that would proceed (`[ -f ]` true, or wait
    exit 0) while the chain it trusts is broken;
  * recovery: the next un-killed command on the same folder succeeds.

Prints trials, violations per mode and one example of each kind of
violation.  Usage:

  python3 bench/soak/soak_crash.py [--build build] [--trials 10000] [--seed N]
                                   [--modes run,run-mock,mock-install]

Trials are split evenly over the modes.  Exit status 1 when a violation was
found (a known defect still counts and is named as such).
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--modes", default="run,run-mock,mock-install")
    return ap.parse_args()


args = parse_args()
os.environ.setdefault("GV_BUILD_DIR", os.path.abspath(args.build))
import chain  # noqa: E402  (after GV_BUILD_DIR is set)
import gvtest  # noqa: E402

ENV = gvtest.clean_env()


class Tally:
    def __init__(self, mode):
        self.mode = mode
        self.trials = 0
        self.killed = 0        # the kill landed while the command ran
        self.finished = 0      # the command ended before the kill
        self.violations = 0
        self.examples = {}     # kind -> first example
        self.kinds = {}        # kind -> count
        self.wait_ready = 0
        self.f_ready = 0
        self.env_failures = 0  # consumer checks the machine could not run

    def violation(self, kind, text):
        self.violations += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.examples.setdefault(kind, text)


def kill_at_random(cmd, rng, span, env=ENV):
    """Start @cmd, SIGKILL it after a random delay in [0, 1.2 span]; returns
    (killed, returncode)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(rng.uniform(0, span * 1.2))
    rc = proc.poll()
    if rc is not None:
        return False, rc
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True, -signal.SIGKILL


def measure(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if p.returncode != 0:
        sys.exit(f"soak: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return max(time.monotonic() - t0, 0.005)


def consumers(t, status, boot_id_file, boot, trial):
    """The invariant plus what `wait` and `[ -f ]` conclude now."""
    problems = chain.invariant_violations(status, boot)
    if problems:
        t.violation("chain invariant", f"trial {trial}: {problems}")
    w = subprocess.run([gvtest.GV, "wait", "toolkit", "--timeout", "0", "--output-dir", status,
                        "--boot-id-file", boot_id_file], capture_output=True, env=ENV)
    f = subprocess.run(["sh", "-c", '[ -f "$1/toolkit-ready" ]', "sh", status])
    if w.returncode == 1 and b"Too many open files" in w.stderr:
        # The machine's inotify instance limit, shared with every process of
        # the user: wait says so and exits 1.  Not a verdict; counted apart.
        t.env_failures += 1
        t.examples.setdefault("not counted: wait could not set up inotify (machine limit)",
                              w.stderr.decode().strip()[-200:])
        return
    wait_ready, f_ready = w.returncode == 0, f.returncode == 0
    t.wait_ready += wait_ready
    t.f_ready += f_ready
    if w.returncode not in (0, 3):
        t.violation("wait error", f"trial {trial}: wait exited {w.returncode}: {w.stderr.decode().strip()}")
    # [ -f ] proceeds on the file alone: that is only safe while a present
    # toolkit-ready always has a consistent chain, which wait checks in full.
    if f_ready and not wait_ready:
        t.violation("[ -f ] proceeds on a chain wait rejects",
                    f"trial {trial}: toolkit-ready present, wait says: {w.stderr.decode().strip()[-300:]}")
    if wait_ready and not f_ready:
        t.violation("wait ready without toolkit-ready", f"trial {trial}")


def soak_run(t, n, rng, base):
    node = chain.Node(os.path.join(base, "run"))
    node.install_mock("driver", gpus=2)
    cmd = [gvtest.GV, "run", "--components", "driver,toolkit", *node.args()]
    span = measure(cmd)
    for trial in range(n):
        t.trials += 1
        killed, rc = kill_at_random(cmd, rng, span)
        t.killed += killed
        if not killed:
            t.finished += 1
            if rc != 0:
                t.violation("run failed after an earlier kill", f"trial {trial}: exit {rc}")
        consumers(t, node.status, node.boot_id, node.boot, trial)


def soak_run_mock(t, n, rng, base):
    work = os.path.join(base, "run-mock")
    boot_file = os.path.join(base, "boot_id-mock")
    boot = "0b8f2a34-3c55-4e27-8d0a-7a1f6c2e9d11"
    with open(boot_file, "w") as f:
        f.write(boot + "\n")
    cmd = [gvtest.GV, "run", "--mock", "--gpus", "2", "--mock-dir", work, "--boot-id-file", boot_file]
    span = measure(cmd)
    status = os.path.join(work, "validations")
    for trial in range(n):
        t.trials += 1
        killed, rc = kill_at_random(cmd, rng, span)
        t.killed += killed
        if not killed:
            t.finished += 1
            if rc != 0:
                t.violation("run --mock failed after an earlier kill (work folder not recovered)",
                            f"trial {trial}: exit {rc}")
        if os.path.isdir(status):
            consumers(t, status, boot_file, boot, trial)


def soak_mock_install(t, n, rng, base):
    root = os.path.join(base, "install", "root")
    cdi = os.path.join(base, "install", "cdi")
    cmd = [gvtest.GV, "mock", "install", "--profile", "a100-sxm4-40gb", "--gpus", "8", "--root", root,
           "--cdi-dir", cdi, "--device-nodes", "files", "--node-name", "node-a"]
    span = measure(cmd)
    for trial in range(n):
        t.trials += 1
        shutil.rmtree(os.path.join(base, "install"))
        killed, rc = kill_at_random(cmd, rng, span)
        t.killed += killed
        if not killed:
            t.finished += 1
            if rc != 0:
                t.violation("mock install failed", f"trial {trial}: exit {rc}")
            continue
        # Recovery: installing again over what the killed install left completes,
        # and remove then removes it.
        p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
        if p.returncode != 0:
            t.violation("killed mock install leaves a folder install cannot recover",
                        f"trial {trial}: install again exited {p.returncode}: {p.stderr.strip()[-300:]}")
            continue
        p = subprocess.run([gvtest.GV, "mock", "remove", "--root", root],
                           capture_output=True, text=True, env=ENV)
        if p.returncode != 0:
            t.violation("mock remove after a recovered install failed",
                        f"trial {trial}: exit {p.returncode}: {p.stderr.strip()[-300:]}")


def main():
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    modes = [m for m in args.modes.split(",") if m]
    runners = {"run": soak_run, "run-mock": soak_run_mock, "mock-install": soak_mock_install}
    for m in modes:
        if m not in runners:
            sys.exit(f"soak: unknown mode {m}")
    print(f"crash soak: seed {seed} (--seed to replay), {args.trials} trials over {', '.join(modes)}")
    base = tempfile.mkdtemp(prefix="gv-soak-crash-")
    tallies = []
    t0 = time.monotonic()
    try:
        for i, m in enumerate(modes):
            n = args.trials // len(modes) + (1 if i < args.trials % len(modes) else 0)
            t = Tally(m)
            tallies.append(t)
            runners[m](t, n, rng, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    total_v = 0
    for t in tallies:
        total_v += t.violations
        print(f"{t.mode:13} trials={t.trials} killed-mid-run={t.killed} finished-first={t.finished} "
              f"violations={t.violations} wait-ready={t.wait_ready} test-f-ready={t.f_ready} "
              f"consumer-checks-not-run={t.env_failures}")
        for kind, ex in t.examples.items():
            print(f"  {t.kinds.get(kind, t.env_failures)} x {kind}; example: {ex}")
    print(f"total: trials={sum(t.trials for t in tallies)} violations={total_v} "
          f"seconds={time.monotonic() - t0:.0f} seed={seed}")
    return 1 if total_v else 0


if __name__ == "__main__":
    sys.exit(main())
