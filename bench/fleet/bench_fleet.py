#!/usr/bin/env python3
"""Prints figures for a fleet of simulated GPU nodes against one test API server (no assertions).

Each of N nodes (default 200) runs what the validator DaemonSet runs on a node: the node signal
(`gpu-validator metrics --node-condition --node-label --startup-taint`, for the whole run) and
the cuda then plugin validation (`gpu-validator run --components cuda`, then `plugin`) against
tests/apiserver/server.py with its simulated kubelet (pods run after --running-ms, exit after
--exit-ms, are stopped --terminate-ms after a graceful delete).  Node starts are spread over
--spread seconds, as a DaemonSet rollout does.

The same fleet on the same timeline is then driven by upstream nvidia-operator-validator's
pattern: create the workload pod, GET it every 5 s until it has finished, delete it (and a GET
of the Node before the plugin pod).  Upstream has no node signal, so its verdict is the plugin
pod seen finished.

Printed per mode: API requests per node by verb, time to verdict p50/p99 (from the node's start
to plugin-ready and, for gpu-validator, to the Node condition GPUValidated=True seen by a
watch), and the API server's CPU time.

Usage: bench/fleet/bench_fleet.py [--build build] [--nodes 200] [--spread 10] [--running-ms 2000]
                                  [--exit-ms 6000] [--exit-jitter-ms 4000] [--terminate-ms 500] [--poll-s 5]
"""
import argparse
import collections
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tests", "apiserver"))
from client import TestApiServer  # noqa: E402

NS = "gpu-operator"
COND = "GPUValidated"
IMAGE = "registry.local/gpu-validator:bench"


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def verb(r):
    if r["method"] == "GET":
        if r["watch"]:
            return "watch"
        last = r["path"].rstrip("/").split("/")[-1]
        return "list" if last in ("pods", "nodes", "events") else "get"
    return {"POST": "create", "PATCH": "patch", "PUT": "update", "DELETE": "delete"}[r["method"]]


class NodeWatcher:
    """One watch on all Nodes: when each Node's condition GPUValidated first reads True."""

    def __init__(self, api):
        self.api, self.seen, self.stop = api, {}, False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.api.port, timeout=3600)
        conn.request("GET", "/api/v1/nodes?watch=true&timeoutSeconds=3600",
                     headers={"Authorization": "Bearer " + self.api.token, "User-Agent": "bench-watcher"})
        resp = conn.getresponse()
        for line in resp:
            if self.stop:
                break
            ev = json.loads(line)
            node = ev.get("object") or {}
            name = (node.get("metadata") or {}).get("name")
            for c in (node.get("status") or {}).get("conditions") or []:
                if c.get("type") == COND and c.get("status") == "True" and name not in self.seen:
                    self.seen[name] = time.monotonic()


def setup_nodes(api, build, work, n):
    gv = os.path.join(build, "src", "cli", "gpu-validator")
    template = os.path.join(work, "template")
    subprocess.run([gv, "run", "--mock", "--mock-dir", template, "--components", "driver,toolkit"], check=True,
                   capture_output=True)
    dirs = []
    for i in range(n):
        d = os.path.join(work, "node-%03d" % i)
        shutil.copytree(template, d, symlinks=True)
        dirs.append(os.path.join(d, "validations"))
        api.node("node-%03d" % i, labels={"nvidia.com/gpu.present": "true"}, capacity={"nvidia.com/gpu": "1"},
                 allocatable={"nvidia.com/gpu": "1"})
    return gv, dirs


def env_for(api, node):
    e = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NODE_NAME", "OPERATOR_NAMESPACE")}
    e.update(NODE_NAME=node, OPERATOR_NAMESPACE=NS, KUBECONFIG=api.kubeconfig, VALIDATOR_IMAGE=IMAGE)
    return e


def run_ours(api, gv, dirs, offsets):
    n = len(dirs)
    signals = []
    for i, vdir in enumerate(dirs):
        node = "node-%03d" % i
        signals.append(subprocess.Popen(
            [gv, "metrics", "--listen", "127.0.0.1:0", "--output-dir", vdir, "--node-name", node,
             "--kubeconfig", api.kubeconfig, "--node-condition", "--node-label", "nvidia.com/gpu.validated=true",
             "--startup-taint", "nvidia.com/gpu.not-validated:NoSchedule"],
            env=env_for(api, node), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(2)  # every node signal has read its Node
    watcher = NodeWatcher(api)
    time.sleep(0.5)
    t0 = time.monotonic()
    ready, failures = {}, []

    def node_thread(i):
        node = "node-%03d" % i
        time.sleep(max(0.0, t0 + offsets[i] - time.monotonic()))
        for comp in ("cuda", "plugin"):
            p = subprocess.run([gv, "run", "--components", comp, "--output-dir", dirs[i]], env=env_for(api, node),
                               capture_output=True, text=True)
            if p.returncode != 0:
                failures.append((node, comp, p.stderr.strip().splitlines()[-1:] or [""]))
                return
        ready[node] = time.monotonic() - (t0 + offsets[i])

    threads = [threading.Thread(target=node_thread, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    end = time.monotonic() + 30
    while len(watcher.seen) < n - len(failures) and time.monotonic() < end:
        time.sleep(0.1)
    verdict = {k: v - (t0 + offsets[int(k.split("-")[1])]) for k, v in watcher.seen.items()}
    watcher.stop = True
    for s in signals:
        s.terminate()
    for s in signals:
        s.wait()
    return ready, verdict, failures


def run_upstream(api, gv, n, offsets, poll_s):
    pods = {}
    for comp in ("cuda", "plugin"):
        pods[comp] = json.loads(subprocess.run([gv, "render", comp, "--node-name", "NODE", "--namespace", NS,
                                                "--image", IMAGE, "-o", "json"], check=True,
                                               capture_output=True, text=True).stdout)
    t0 = time.monotonic()
    ready, failures = {}, []

    def call(conn, method, path, body=None):
        hdrs = {"Authorization": "Bearer " + api.token, "User-Agent": "upstream-pattern"}
        data = None
        if body is not None:
            data = json.dumps(body)
            hdrs["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=hdrs)
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")

    def node_thread(i):
        node = "node-%03d" % i
        time.sleep(max(0.0, t0 + offsets[i] - time.monotonic()))
        conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=60)
        for comp in ("cuda", "plugin"):
            if comp == "plugin":
                call(conn, "GET", "/api/v1/nodes/" + node)  # allocatable nvidia.com/gpu
            pod = json.loads(json.dumps(pods[comp]).replace('"NODE"', json.dumps(node)))
            pod["metadata"].pop("ownerReferences", None)
            code, made = call(conn, "POST", "/api/v1/namespaces/%s/pods" % NS, pod)
            if code != 201:
                failures.append((node, comp, made.get("message")))
                return
            path = "/api/v1/namespaces/%s/pods/%s" % (NS, made["metadata"]["name"])
            while True:
                time.sleep(poll_s)
                code, cur = call(conn, "GET", path)
                phase = (cur.get("status") or {}).get("phase") if code == 200 else None
                if phase in ("Succeeded", "Failed"):
                    break
            call(conn, "DELETE", path)
            if phase != "Succeeded":
                failures.append((node, comp, phase))
                return
        ready[node] = time.monotonic() - (t0 + offsets[i])

    threads = [threading.Thread(target=node_thread, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ready, failures


def report(title, api, n, cpu, wall, ready, verdict, failures):
    reqs = [r for r in api.requests() if r.get("userAgent") != "bench-watcher"]
    by_verb = collections.Counter(verb(r) for r in reqs)
    print(f"\n{title}")
    print(f"  nodes {n}, failed {len(failures)}, wall {wall:.1f} s, API server CPU {cpu:.1f} s "
          f"({cpu / wall * 100:.0f}% of a core)")
    print("  requests per node: total %.1f; %s" % (len(reqs) / n, ", ".join(
        "%s %.2f" % (v, by_verb[v] / n) for v in ("get", "list", "watch", "create", "patch", "delete", "update")
        if by_verb[v])))
    r = list(ready.values())
    print(f"  time to plugin-ready: p50 {pct(r, 50):.2f} s, p99 {pct(r, 99):.2f} s")
    if verdict is not None:
        v = list(verdict.values())
        print(f"  time to Node {COND}=True: p50 {pct(v, 50):.2f} s, p99 {pct(v, 99):.2f} s ({len(v)} nodes)")
    for f in failures[:5]:
        print("  failure:", f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SOURCE, "build"))
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--spread", type=float, default=10.0, help="node starts spread over this many seconds")
    ap.add_argument("--running-ms", type=int, default=2000)
    ap.add_argument("--exit-ms", type=int, default=6000)
    ap.add_argument("--exit-jitter-ms", type=int, default=4000, help="each pod exits up to this much later")
    ap.add_argument("--terminate-ms", type=int, default=500)
    ap.add_argument("--poll-s", type=float, default=5.0)
    args = ap.parse_args()
    offsets = [args.spread * i / max(1, args.nodes - 1) for i in range(args.nodes)]
    work = tempfile.mkdtemp(prefix="gv-fleet-")
    api = TestApiServer(token="gv-fleet", namespace=NS, workdir=work,
                        extra_args=["--max-lifetime", "3600"]).start()
    try:
        kubelet = dict(enabled=True, runningAfterMs=args.running_ms, exitAfterMs=args.exit_ms,
                       exitJitterMs=args.exit_jitter_ms, terminateAfterMs=args.terminate_ms)
        print(f"fleet: {args.nodes} nodes, starts spread over {args.spread:.0f} s; kubelet: running after "
              f"{args.running_ms} ms, exit {args.exit_ms}-{args.exit_ms + args.exit_jitter_ms} ms later, "
              f"graceful stop {args.terminate_ms} ms")
        gv, dirs = setup_nodes(api, args.build, work, args.nodes)
        api.kubelet(**kubelet)
        api.clear_requests()
        c0, w0 = cpu_seconds(api.proc.pid), time.monotonic()
        ready, verdict, failures = run_ours(api, gv, dirs, offsets)
        report("gpu-validator (watch, node signal)", api, args.nodes, cpu_seconds(api.proc.pid) - c0,
               time.monotonic() - w0, ready, verdict, failures)

        api.reset()
        for i in range(args.nodes):
            api.node("node-%03d" % i, capacity={"nvidia.com/gpu": "1"}, allocatable={"nvidia.com/gpu": "1"})
        api.kubelet(**kubelet)
        api.clear_requests()
        c0, w0 = cpu_seconds(api.proc.pid), time.monotonic()
        ready, failures = run_upstream(api, gv, args.nodes, offsets, args.poll_s)
        report(f"upstream pattern (GET every {args.poll_s:g} s)", api, args.nodes, cpu_seconds(api.proc.pid) - c0,
               time.monotonic() - w0, ready, None, failures)
    finally:
        api.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
