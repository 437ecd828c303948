#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Concurrency soak (not run in CI): two validators re-validate one status
folder round after round while the three kinds of consumer read it:

  * `gpu-validator wait toolkit --timeout 1 --print-env` (the new consumer):
    when it says ready, what it prints must be driver-ready's complete
    variables;
  * upstream's shell script: `[ -f "$v/toolkit-ready" ] && cat` it -- a
    present marker must never read partial (no GENERATION, another boot);
  * readers of the whole folder: `gpu-validator status --json` (a toolkit
    row "ready" needs a driver row "ready") and `gpu-validator env`
    (exit 0 means complete `export` lines that sh accepts).

After each round, with the writers at rest, the chain invariant is checked
independently (tests/e2e/chain.py) and both validators must have exited 0
(or 1 for dependency-not-ready: the other one was re-validating the parent).
Prints rounds, consumer reads, violations and one example of each kind.

  python3 bench/soak/soak_concurrency.py [--build build] [--rounds 1000]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    ap.add_argument("--rounds", type=int, default=1000)
    return ap.parse_args()


args = parse_args()
os.environ.setdefault("GV_BUILD_DIR", os.path.abspath(args.build))
import chain  # noqa: E402
import gvtest  # noqa: E402

ENV = gvtest.clean_env()


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.reads = {}
        self.ready = {}
        self.violations = 0
        self.examples = {}
        self.kinds = {}
        self.environment = {}  # failures of the machine, not of gpu-validator

    def read(self, kind, ready):
        with self.lock:
            self.reads[kind] = self.reads.get(kind, 0) + 1
            self.ready[kind] = self.ready.get(kind, 0) + bool(ready)

    def violation(self, kind, text):
        with self.lock:
            self.violations += 1
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            self.examples.setdefault(kind, text)

    def env_failure(self, kind, text):
        with self.lock:
            n, ex = self.environment.get(kind, (0, text))
            self.environment[kind] = (n + 1, ex)


def complete_marker(text, boot):
    kv = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            kv[k] = v.strip("'")
    return kv.get("BOOT_ID") == boot and len(kv.get("GENERATION", "")) == 32


def consumer_wait(node, t, stop):
    while not stop.is_set():
        p = subprocess.run([gvtest.GV, "wait", "toolkit", "--timeout", "1", "--print-env", *node.store_args()],
                           capture_output=True, text=True, env=ENV)
        t.read("wait", p.returncode == 0)
        if p.returncode == 0:
            if "export NVIDIA_DRIVER_ROOT=" not in p.stdout or "export DRIVER_VERSION=" not in p.stdout:
                t.violation("wait ready with incomplete --print-env", p.stdout[-300:])
        elif "Too many open files" in p.stderr or "No space left on device" in p.stderr:
            # The machine's inotify limits (max_user_instances/watches), shared
            # with every other process of the user: said clearly, exit 1.
            t.env_failure("wait could not set up inotify (machine limit)", p.stderr.strip()[-200:])
        elif p.returncode != 3:
            t.violation("wait error", f"exit {p.returncode}: {p.stderr.strip()[-300:]}")


def consumer_test_f(node, t, stop, boot):
    script = 'v=$1; if [ -f "$v/toolkit-ready" ]; then cat "$v/toolkit-ready" 2>/dev/null || echo GONE; fi'
    while not stop.is_set():
        p = subprocess.run(["sh", "-c", script, "sh", node.status], capture_output=True, text=True)
        present = p.stdout != ""
        t.read("[ -f ]", present and p.stdout.strip() != "GONE")
        # Removed between [ -f ] and cat is a plain race of the script; a
        # marker that reads partial is ours.
        if present and p.stdout.strip() != "GONE" and not complete_marker(p.stdout, boot):
            t.violation("[ -f ] saw a partial toolkit-ready", repr(p.stdout[:300]))


def consumer_readers(node, t, stop):
    while not stop.is_set():
        p = subprocess.run([gvtest.GV, "status", "--json", *node.store_args()], capture_output=True, text=True,
                           env=ENV)
        if p.returncode != 0:
            t.violation("status error", f"exit {p.returncode}: {p.stderr.strip()[-300:]}")
        else:
            try:
                doc = json.loads(p.stdout)
            except ValueError as e:
                t.violation("status --json unparsable", f"{e}: {p.stdout[:200]!r}")
                continue
            rows = doc.get("markers", doc) if isinstance(doc, dict) else doc
            states = {}
            if isinstance(rows, list):
                for r in rows:
                    if isinstance(r, dict):
                        states[r.get("marker") or r.get("name")] = r.get("state")
            tk = states.get("toolkit-ready")
            t.read("status", tk == "ready")
            if tk == "ready" and states.get("driver-ready") != "ready":
                # status reads the rows one by one, without the writers' lock:
                # a table is not a snapshot of the folder.
                t.violation("status --json: toolkit-ready 'ready' next to driver-ready not ready (rows are not "
                            "one snapshot)", json.dumps(states))
        p = subprocess.run([gvtest.GV, "env", *node.store_args()], capture_output=True, text=True, env=ENV)
        t.read("env", p.returncode == 0)
        if p.returncode == 0:
            q = subprocess.run(["sh", "-c", 'eval "$1" && printf %s "$NVIDIA_DRIVER_ROOT"', "sh", p.stdout],
                               capture_output=True, text=True)
            if q.returncode != 0 or not q.stdout:
                t.violation("env exit 0 with output sh cannot use", p.stdout[-300:])
        elif p.returncode != 1:
            t.violation("env error", f"exit {p.returncode}: {p.stderr.strip()[-300:]}")


def main():
    base = tempfile.mkdtemp(prefix="gv-soak-conc-")
    t = Tally()
    stop = threading.Event()
    t0 = time.monotonic()
    rounds = failed_runs = lost_races = 0
    try:
        node = chain.Node(base)
        node.install_mock("driver", gpus=2)
        cmd = [gvtest.GV, "run", "--components", "driver,toolkit", *node.args()]
        threads = [threading.Thread(target=consumer_wait, args=(node, t, stop)),
                   threading.Thread(target=consumer_test_f, args=(node, t, stop, node.boot)),
                   threading.Thread(target=consumer_readers, args=(node, t, stop))]
        for th in threads:
            th.start()
        try:
            for rnd in range(args.rounds):
                procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                          env=ENV) for _ in range(2)]
                for p in procs:
                    _, err = p.communicate()
                    if p.returncode == 1 and "dependency-not-ready" in err:
                        # The other validator was re-validating the parent at
                        # that moment: without --wait a run says so and exits 1
                        # (upstream's WITH_WAIT retries).  Counted, not a violation.
                        lost_races += 1
                    elif p.returncode != 0:
                        failed_runs += 1
                        t.violation("a concurrent validator failed", f"round {rnd}: exit {p.returncode}: "
                                    f"{err.strip()[-300:]}")
                rounds += 1
                problems = chain.invariant_violations(node.status, node.boot)
                if problems:
                    t.violation("chain invariant at rest", f"round {rnd}: {problems}")
        finally:
            stop.set()
            for th in threads:
                th.join()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"concurrency soak: rounds={rounds} validator-runs={2 * rounds} failed-runs={failed_runs} "
          f"dependency-not-ready-while-the-other-revalidated={lost_races} "
          f"seconds={time.monotonic() - t0:.0f}")
    for kind in sorted(t.reads):
        print(f"  consumer {kind:7} reads={t.reads[kind]} ready={t.ready[kind]}")
    print(f"violations={t.violations}")
    for kind, ex in t.examples.items():
        print(f"  {t.kinds[kind]} x {kind}; example: {ex}")
    for kind, (n, ex) in t.environment.items():
        print(f"  not counted: {n} x {kind}; example: {ex}")
    return 1 if t.violations else 0


if __name__ == "__main__":
    sys.exit(main())
