#!/usr/bin/env python3
"""Prints figures for a fleet of KWOK nodes against a real kube-apiserver (no assertions).

A control plane from tools/k8s.sh (etcd, kube-apiserver, kube-controller-manager from
k8s.io/kubernetes) with KWOK (sigs.k8s.io/kwok) as the kubelet of N fake Nodes: node leases
and status, and pod phases by stages written here (Running --running-ms after creation,
Succeeded --exit-ms to --exit-ms + --exit-jitter-ms later, removed --terminate-ms after a
graceful delete).  Each node runs our real binaries, as the validator DaemonSet does: the node
signal (`gpu-validator metrics --node-condition --node-label --startup-taint`) for the whole run
and the cuda then plugin validation (`gpu-validator run --components cuda`, then `plugin`).
Node starts are spread over --spread seconds (default N/20: 20 nodes a second at every size).

The fleet runs three times on the same timeline: our validations alone (the part to compare
with upstream), our validations with the node signal, and upstream nvidia-operator-validator's
pattern: create the workload pod, GET it every 5 s until it has finished, delete it (and a GET
of the Node before the plugin pod).

Figures per mode: API requests per node by verb (kube-apiserver's own audit log: one user for
our validations, one for our node signals, one for upstream's pattern), kube-apiserver CPU seconds and peak RSS (its process; RSS sampled every
0.5 s), etcd writes (etcd_mvcc_put_total + etcd_mvcc_delete_total), time to plugin-ready and
to the Node condition GPUValidated=True (p50/p99, from the node's start).  etcd's background
writes (KWOK's node leases, controllers), measured in 15 s of quiet after each phase, are
told apart.

Usage: bench/fleet/bench_fleet_k8s.py [--build build] [--nodes 100] [--spread S] [--running-ms 2000]
                                      [--exit-ms 6000] [--exit-jitter-ms 4000] [--terminate-ms 500]
                                      [--poll-s 5] [--version 1.37]
"""
import argparse
import collections
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tests", "k8s"))
from cluster import K8S_SH, ControlPlane  # noqa: E402

sys.path.insert(0, HERE)
from bench_fleet import pct  # noqa: E402

NS = "gpu-operator"
COND = "GPUValidated"
IMAGE = "registry.local/gpu-validator:bench"
RUN_AS = 65534  # nobody
USERS = {"ours": "gv-fleet-ours", "signal": "gv-fleet-signal", "upstream": "gv-fleet-upstream"}


def stages(args):
    """KWOK Stages: pods Pending -> Running -> Succeeded with the bench's delays; graceful delete;
    nodes Ready (once) and a status heartbeat every 5 min (leases: KWOK itself)."""
    now = "{{ $now := Now }}"
    ctr = ("{{ range .spec.%s }}\n      - image: {{ .image | Quote }}\n        name: {{ .name | Quote }}\n"
           "        ready: %s\n        restartCount: 0\n        state: %s\n      {{ end }}")
    term = "{terminated: {exitCode: 0, finishedAt: {{ $now | Quote }}, reason: Completed, startedAt: {{ $now | Quote }}}}"
    run = "{running: {startedAt: {{ $now | Quote }}}}"
    ready_true = '{lastHeartbeatTime: {{ $now | Quote }}, lastTransitionTime: {{ $now | Quote }}, message: ok, ' \
                 'reason: KubeletReady, status: "True", type: Ready}'

    def stage(name, kind, exprs, body, delay=None, jitter=None):
        sel = "\n".join(f"    - {{key: '{k}', operator: {op}{', values: ' + json.dumps(v) if v else ''}}}"
                        for k, op, v in exprs)
        d = ""
        if delay is not None:
            d = f"  delay: {{durationMilliseconds: {delay}" + (f", jitterDurationMilliseconds: {jitter}" if jitter else "") + "}\n"
        return (f"apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata:\n  name: {name}\nspec:\n"
                f"  resourceRef: {{apiGroup: v1, kind: {kind}}}\n  selector:\n    matchExpressions:\n{sel}\n{d}"
                f"  next:\n{body}")

    def status(text):
        return "    statusTemplate: |\n" + "".join("      " + line + "\n" for line in text.split("\n"))

    out = [
        stage("pod-ready", "Pod", [(".metadata.deletionTimestamp", "DoesNotExist", None), (".status.phase", "In", ["Pending"])],
              status(f"{now}\ncontainerStatuses:\n{ctr % ('containers', 'true', run)}\n"
                     f"initContainerStatuses:\n{ctr % ('initContainers', 'true', term)}\n"
                     "hostIP: 127.0.0.1\npodIP: 10.0.0.2\nphase: Running\nstartTime: {{ $now | Quote }}"),
              args.running_ms),
        stage("pod-complete", "Pod", [(".metadata.deletionTimestamp", "DoesNotExist", None), (".status.phase", "In", ["Running"])],
              status(f"{now}\ncontainerStatuses:\n{ctr % ('containers', 'false', term)}\nphase: Succeeded"),
              args.exit_ms, args.exit_ms + args.exit_jitter_ms),
        stage("pod-delete", "Pod", [(".metadata.deletionTimestamp", "Exists", None)], "    delete: true\n",
              args.terminate_ms),
        stage("node-initialize", "Node", [('.status.conditions.[] | select( .type == "Ready" ) | .status', "NotIn", ["True"])],
              status(f"{now}\nconditions:\n- {ready_true}\naddresses:\n- {{address: 127.0.0.1, type: InternalIP}}\n"
                     "nodeInfo: {kubeletVersion: kwok, architecture: amd64, operatingSystem: linux}\nphase: Running")),
        stage("node-heartbeat", "Node", [('.status.conditions.[] | select( .type == "Ready" ) | .status', "In", ["True"])],
              status(f"{now}\nconditions:\n- {ready_true}"), 300000, 310000),
    ]
    return "---\n".join(out)


AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [%s]
- level: None
""" % ", ".join(USERS.values())


class Sampler:
    """kube-apiserver's CPU seconds and peak RSS over a phase (RSS read every 0.5 s)."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop_ev = pid, 0, threading.Event()
        self.cpu0 = self.cpu()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def cpu(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def run(self):
        while not self.stop_ev.is_set():
            self.peak = max(self.peak, self.rss())
            self.stop_ev.wait(0.5)

    def stop(self):
        self.stop_ev.set()
        self.t.join()
        return self.cpu() - self.cpu0, self.peak


def etcd_writes(cp):
    with urllib.request.urlopen(cp.env["GV_K8S_ETCD"] + "/metrics", timeout=10) as r:
        text = r.read().decode()
    n = 0.0
    for line in text.splitlines():
        if line.startswith(("etcd_mvcc_put_total ", "etcd_mvcc_delete_total ")):
            n += float(line.split()[1])
    return n


class NodeWatcher:
    """Watches all Nodes (admin): when each Node's condition GPUValidated first reads True.
    List-then-watch; an ERROR event (410) or a closed stream lists again."""

    def __init__(self, cp):
        self.cp, self.seen, self.stop = cp, {}, False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def note(self, node):
        name = (node.get("metadata") or {}).get("name")
        for c in (node.get("status") or {}).get("conditions") or []:
            if c.get("type") == COND and c.get("status") == "True" and name not in self.seen:
                self.seen[name] = time.monotonic()

    def run(self):
        while not self.stop:
            try:
                lst = self.cp.api("GET", "/api/v1/nodes")
                for node in lst["items"]:
                    self.note(node)
                req = urllib.request.Request(
                    self.cp.server + "/api/v1/nodes?watch=1&timeoutSeconds=600&resourceVersion="
                    + lst["metadata"]["resourceVersion"], headers={"Authorization": "Bearer " + self.cp.admin_token})
                with urllib.request.urlopen(req, context=self.cp.ssl, timeout=660) as resp:
                    for line in resp:
                        if self.stop:
                            return
                        ev = json.loads(line)
                        if ev.get("type") == "ERROR":
                            break
                        self.note(ev.get("object") or {})
            except (OSError, ValueError, RuntimeError):
                time.sleep(0.5)


def node_name(i):
    return "kwok-node-%04d" % i


def embedded_kubeconfig(cp, state, user, work):
    """A kubeconfig of @user with its certificates inline, readable by RUN_AS (the state's pki
    folder is the owner's only)."""
    import base64

    def b64(name):
        with open(os.path.join(state, "pki", name), "rb") as f:
            return base64.b64encode(f.read()).decode()
    path = os.path.join(work, user + ".kubeconfig")
    with open(path, "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
current-context: c
clusters:
- name: c
  cluster: {{server: {cp.server}, certificate-authority-data: {b64("ca.crt")}}}
users:
- name: u
  user: {{client-certificate-data: {b64(user + ".crt")}, client-key-data: {b64(user + ".key")}}}
contexts:
- name: c
  context: {{cluster: c, user: u}}
""")
    os.chmod(path, 0o644)
    return path


def as_bench_user(cmd):
    """Run the node's binaries as RUN_AS when we are root: their inotify instances (one per
    node signal) then count against that user's limit (fs.inotify.max_user_instances, 128 by
    default), not against every root process's on the machine; past it they poll."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return cmd
    return ["setpriv", f"--reuid={RUN_AS}", f"--regid={RUN_AS}", "--clear-groups", *cmd]


def make_nodes(cp, n):
    for i in range(n):
        name = node_name(i)
        cp.request("DELETE", f"/api/v1/nodes/{name}")
        cp.api("POST", "/api/v1/nodes", {"metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                                                      "labels": {"nvidia.com/gpu.present": "true",
                                                                 "kubernetes.io/hostname": name}},
                                         "spec": {"taints": [{"key": "nvidia.com/gpu.not-validated",
                                                              "effect": "NoSchedule"}]}})
        res = {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "1"}
        cp.api("PATCH", f"/api/v1/nodes/{name}/status", {"status": {"capacity": res, "allocatable": res}})
    cp.wait(lambda: all(any(c["type"] == "Ready" and c["status"] == "True"
                            for c in (x.get("status") or {}).get("conditions") or [])
                        for x in cp.api("GET", "/api/v1/nodes")["items"] if x["metadata"]["name"].startswith("kwok-")),
            "KWOK to make every node Ready", timeout=120, interval=1)


def run_ours(cp, gv, kubeconfig, signal_kubeconfig, work, n, offsets):
    """Our validations on every node, with the node signal when @signal_kubeconfig is set."""
    template = os.path.join(work, "template")
    shutil.rmtree(template, ignore_errors=True)
    subprocess.run([gv, "run", "--mock", "--mock-dir", template, "--components", "driver,toolkit"], check=True,
                   capture_output=True)
    dirs = []
    for i in range(n):
        d = os.path.join(work, "node-%04d" % i)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(template, d, symlinks=True)
        dirs.append(os.path.join(d, "validations"))
    if os.geteuid() == 0:  # the node folders belong to RUN_AS (as_bench_user)
        os.chmod(work, 0o711)
        subprocess.run(["chown", "-R", f"{RUN_AS}:{RUN_AS}", *[os.path.dirname(d) for d in dirs]], check=True)

    def env_for(node):
        e = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NODE_NAME", "OPERATOR_NAMESPACE")}
        e.update(NODE_NAME=node, OPERATOR_NAMESPACE=NS, KUBECONFIG=kubeconfig, VALIDATOR_IMAGE=IMAGE)
        return e

    signals = [] if not signal_kubeconfig else [subprocess.Popen(as_bench_user(
        [gv, "metrics", "--listen", "127.0.0.1:0", "--output-dir", dirs[i], "--node-name", node_name(i),
         "--kubeconfig", signal_kubeconfig, "--node-condition", "--node-label", "nvidia.com/gpu.validated=true",
         "--startup-taint", "nvidia.com/gpu.not-validated:NoSchedule"]),
        env=env_for(node_name(i)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(n)]
    if signals:
        time.sleep(2 + n / 200)  # every node signal has read its Node
    watcher = NodeWatcher(cp)
    time.sleep(0.5)
    t0 = time.monotonic()
    ready, failures = {}, []

    def node_thread(i):
        time.sleep(max(0.0, t0 + offsets[i] - time.monotonic()))
        for comp in ("cuda", "plugin"):
            p = subprocess.run(as_bench_user([gv, "run", "--components", comp, "--output-dir", dirs[i]]),
                               env=env_for(node_name(i)),
                               capture_output=True, text=True)
            if p.returncode != 0:
                failures.append((node_name(i), comp, p.stdout.strip().splitlines()[:1]))
                return
        ready[node_name(i)] = time.monotonic() - (t0 + offsets[i])

    threads = [threading.Thread(target=node_thread, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    end = time.monotonic() + (60 if signals else 0)
    while len(watcher.seen) < n - len(failures) and time.monotonic() < end:
        time.sleep(0.1)
    verdict = {k: v - (t0 + offsets[int(k.rsplit("-", 1)[1])]) for k, v in watcher.seen.items()}
    watcher.stop = True
    for s in signals:
        s.terminate()
    for s in signals:
        s.wait()
    return ready, verdict, failures


def run_upstream(cp, gv, state, n, offsets, poll_s):
    pods = {c: json.loads(subprocess.run([gv, "render", c, "--node-name", "NODE", "--namespace", NS, "--image", IMAGE,
                                          "-o", "json"], check=True, capture_output=True, text=True).stdout)
            for c in ("cuda", "plugin")}
    ctx = ssl.create_default_context(cafile=cp.ca)
    ctx.load_cert_chain(os.path.join(state, "pki", USERS["upstream"] + ".crt"),
                        os.path.join(state, "pki", USERS["upstream"] + ".key"))
    host, port = cp.server.rsplit("/", 1)[1].split(":")
    t0 = time.monotonic()
    ready, failures = {}, []

    def call(conn, method, path, body=None):
        hdrs = {"User-Agent": "upstream-pattern", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body)
            hdrs["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=hdrs)
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")

    def node_thread(i):
        node = node_name(i)
        time.sleep(max(0.0, t0 + offsets[i] - time.monotonic()))
        conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=60)
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


def audit_counts(path, user, since_line):
    by_verb, lines = collections.Counter(), 0
    with open(path) as f:
        for lines, line in enumerate(f, 1):
            if lines <= since_line:
                continue
            ev = json.loads(line)
            if ev.get("user", {}).get("username") == user and ev.get("stage") == "ResponseComplete":
                by_verb[ev["verb"]] += 1
    return by_verb, lines


def per_node(by_verb, n):
    return "total %.1f; %s" % (sum(by_verb.values()) / n, ", ".join(
        "%s %.2f" % (v, by_verb[v] / n) for v in ("get", "list", "watch", "create", "patch", "update", "delete")
        if by_verb[v]))


def report(title, n, cpu, rss, writes, background, wall, by_verb, signal, ready, verdict, failures):
    print(f"\n{title}")
    print(f"  nodes {n}, failed {len(failures)}, wall {wall:.1f} s, load average {os.getloadavg()[0]:.1f}; "
          f"kube-apiserver CPU {cpu:.1f} s ({cpu / n * 1000:.0f} ms per node), peak RSS {rss / 2**20:.0f} MiB")
    print(f"  etcd writes {writes:.0f}, of which about {background:.0f} background (leases, controllers at the "
          f"quiet rate); the rest {(writes - background) / n:.1f} per node")
    print("  validation requests per node: " + per_node(by_verb, n))
    if signal is not None:
        print("  node-signal requests per node: " + per_node(signal, n))
    r = list(ready.values())
    print(f"  time to plugin-ready: p50 {pct(r, 50):.2f} s, p99 {pct(r, 99):.2f} s")
    if verdict is not None:
        v = list(verdict.values())
        print(f"  time to Node {COND}=True: p50 {pct(v, 50):.2f} s, p99 {pct(v, 99):.2f} s ({len(v)} nodes)")
    for f in failures[:5]:
        print("  failure:", f)
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SOURCE, "build"))
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--spread", type=float, default=None, help="node starts spread over this many seconds (N/20)")
    ap.add_argument("--running-ms", type=int, default=2000)
    ap.add_argument("--exit-ms", type=int, default=6000)
    ap.add_argument("--exit-jitter-ms", type=int, default=4000, help="each pod exits up to this much later")
    ap.add_argument("--terminate-ms", type=int, default=500)
    ap.add_argument("--poll-s", type=float, default=5.0)
    ap.add_argument("--version", default=os.environ.get("GV_K8S_VERSION", "1.37"))
    args = ap.parse_args()
    n = args.nodes
    spread = args.spread if args.spread is not None else n / 20.0
    offsets = [spread * i / max(1, n - 1) for i in range(n)]
    gv = os.path.join(args.build, "src", "cli", "gpu-validator")
    work = tempfile.mkdtemp(prefix="gv-fleet-k8s-")
    state = os.path.join(work, "k8s")
    with open(os.path.join(work, "stages.yaml"), "w") as f:
        f.write(stages(args))
    with open(os.path.join(work, "audit-policy.yaml"), "w") as f:
        f.write(AUDIT_POLICY)
    audit = os.path.join(work, "audit.log")
    os.environ.update(GV_K8S_KWOK_CONFIG=os.path.join(work, "stages.yaml"), GV_K8S_VERSION=args.version,
                      GV_K8S_APISERVER_ARGS=f"--audit-policy-file={work}/audit-policy.yaml --audit-log-path={audit} "
                      "--audit-log-format=json --audit-log-maxsize=0 --max-requests-inflight=800 "
                      "--max-mutating-requests-inflight=400")
    cp = ControlPlane.start(state, components="kube-controller-manager kwok")
    try:
        kc = {}
        for mode, user in USERS.items():
            subprocess.run([K8S_SH, "kubeconfig", state, user, user, "system:masters"], check=True, capture_output=True)
            kc[mode] = embedded_kubeconfig(cp, state, user, work)
        with open(os.path.join(state, "kube-apiserver.pid")) as f:
            api_pid = int(f.read())
        cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
        cp.wait(lambda: cp.request("GET", f"/api/v1/namespaces/{NS}/serviceaccounts/default")[0] == 200, "SA")
        cp.api("POST", f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "nvidia-operator-validator"}})
        print(f"fleet on kube-apiserver {cp.version} with KWOK: {n} nodes, starts spread over {spread:.0f} s; pods "
              f"running after {args.running_ms} ms, exit {args.exit_ms}-{args.exit_ms + args.exit_jitter_ms} ms "
              f"later, removed {args.terminate_ms} ms after a graceful delete")
        sys.stdout.flush()
        make_nodes(cp, n)
        for mode in ("validation", "ours", "upstream"):  # "signal": the node signal's user within "ours"
            if mode != "validation":
                make_nodes(cp, n)
            time.sleep(2)
            _, since = audit_counts(audit, "", 0)
            s, w0, e0 = Sampler(api_pid), time.monotonic(), etcd_writes(cp)
            if mode == "validation":
                ready, _, failures = run_ours(cp, gv, kc["ours"], None, work, n, offsets)
                verdict, title = None, "gpu-validator, validations only (cuda and plugin pods, watched)"
            elif mode == "ours":
                ready, verdict, failures = run_ours(cp, gv, kc[mode], kc["signal"], work, n, offsets)
                title = "gpu-validator with the node signal (condition, label, taint, Events)"
            else:
                (ready, failures), verdict = run_upstream(cp, gv, state, n, offsets, args.poll_s), None
                title = f"upstream pattern (GET every {args.poll_s:g} s)"
            wall, writes = time.monotonic() - w0, etcd_writes(cp) - e0
            # etcd's background writes (KWOK's node leases, controllers) in 15 s of quiet after
            # the phase, to tell the validation's own writes from them.
            e_idle = etcd_writes(cp)
            time.sleep(15)
            background = (etcd_writes(cp) - e_idle) / 15.0 * wall
            cpu, rss = s.stop()
            time.sleep(1)  # the last audit events are written
            by_verb, _ = audit_counts(audit, USERS["ours" if mode == "validation" else mode], since)
            signal = audit_counts(audit, USERS["signal"], since)[0] if mode == "ours" else None
            report(title, n, cpu, rss, writes, background, wall, by_verb, signal, ready, verdict, failures)
    finally:
        cp.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
