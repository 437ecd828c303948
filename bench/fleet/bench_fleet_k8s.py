#!/usr/bin/env python3
"""Prints figures for a fleet of KWOK nodes against a real kube-apiserver (no assertions).

A control plane from tools/k8s.sh (etcd, kube-apiserver, kube-controller-manager from
k8s.io/kubernetes) with KWOK (sigs.k8s.io/kwok) as the kubelet of N fake Nodes: node leases
and status, and pod phases by stages written here (Running --running-ms after creation,
Succeeded --exit-ms to --exit-ms + --exit-jitter-ms later, removed --terminate-ms after a
graceful delete).  Each node runs our real binaries, as the validator DaemonSet does: the node
signal (`gpu-validator metrics --node-condition --node-label --startup-taint`) from the node's
start to the end of the run, and the cuda then plugin validation (`gpu-validator run
--components cuda`, then `plugin`, with POD_NAME set as the chart sets it).

The fleet runs three times on the same timeline: our validations alone (the part to compare
with upstream), our validations with the node signal, and upstream nvidia-operator-validator's
pattern as its source has it (cmd/nvidia-validator/main.go: per component a new client, so a new
TLS connection; GET of the nvidia-operator-validator DaemonSet, LIST of earlier pods, CREATE, GET
of the pod at once and every 5 s until it succeeded; the plugin first GETs its Node twice; the
pod is left behind and deleted by the next run, grace 0: that DELETE is made at the end here so
both patterns end with the same objects).

The same conditions for both patterns: node starts at --rate nodes a second (default 5, spread
N/rate seconds) so that the 2-core machine is not saturated; all node-side client work (our
processes, upstream's per-component connections, the node signals) runs in one worker process
per phase at nice --nice (default 19), so kube-apiserver, etcd and KWOK come first, as on a real
cluster where the nodes' validators do not share the control plane's CPUs; each node's processes
run as their own user (uid 100000 + node number, when run as root), so per-user limits such as
fs.inotify.max_user_instances apply per node, as on separate machines.

Figures per mode: API requests per node by verb (kube-apiserver's own audit log: one user for
our validations, one for our node signals, one for upstream's pattern), kube-apiserver CPU
seconds over the phase, gross and net of its background rate (node leases, controllers: measured
in 15 s of quiet after each phase, as etcd's background writes are), peak RSS (its process,
sampled every 0.5 s), etcd writes (etcd_mvcc_put_total + etcd_mvcc_delete_total, net of the
background), time to plugin-ready and to the Node condition GPUValidated=True (p50/p99, from the
node's start).

Usage: bench/fleet/bench_fleet_k8s.py [--build build] [--nodes 100] [--rate 5] [--nice 19]
                                      [--running-ms 2000] [--exit-ms 6000] [--exit-jitter-ms 4000]
                                      [--terminate-ms 500] [--poll-s 5] [--version 1.37]
"""
import argparse
import base64
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
UID_BASE = 100000  # node i runs as uid UID_BASE + i (when root)
SELF_POD = "gpu-validator-bench"  # POD_NAME of our processes (the chart sets it)
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


def proc_cpu(pid):
    """CPU seconds (user + system) of process @pid."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Sampler:
    """kube-apiserver's CPU seconds and peak RSS over a phase (RSS read every 0.5 s)."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop_ev = pid, 0, threading.Event()
        self.cpu0 = proc_cpu(pid)
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

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
        return proc_cpu(self.pid) - self.cpu0, self.peak


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
    """A kubeconfig of @user with its certificates inline, readable by every node's user (the
    state's pki folder is the owner's only)."""
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


def as_node_user(i, cmd):
    """Run @cmd as node @i's own user (uid UID_BASE + i) when we are root: per-user limits such as
    the 128 inotify instances of fs.inotify.max_user_instances then hold per node, as on
    separate machines, instead of every node signal sharing root's."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return cmd
    uid = UID_BASE + i
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *cmd]


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
            "KWOK to make every node Ready", timeout=300, interval=1)


def make_node_dirs(gv, work, n):
    """A mock node folder per node (driver and toolkit validated), owned by the node's user."""
    template = os.path.join(work, "template")
    shutil.rmtree(template, ignore_errors=True)
    subprocess.run([gv, "run", "--mock", "--mock-dir", template, "--components", "driver,toolkit"], check=True,
                   capture_output=True)
    dirs = []
    for i in range(n):
        d = os.path.join(work, "node-%04d" % i)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(template, d, symlinks=True)
        if os.geteuid() == 0:
            for root, subdirs, files in os.walk(d):
                for x in [root] + [os.path.join(root, y) for y in subdirs + files]:
                    os.lchown(x, UID_BASE + i, UID_BASE + i)
        dirs.append(os.path.join(d, "validations"))
    os.chmod(work, 0o711)
    return dirs


# ---- the worker: every node-side client of one phase, at the same niceness -----------------

def worker_ours(job, t0, ready, failures):
    """Our processes on every node: the node signal (with job["signal"]) and cuda then plugin."""
    gv, offsets, dirs = job["gv"], job["offsets"], job["dirs"]

    def env_for(node, kubeconfig):
        e = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "NODE_NAME", "OPERATOR_NAMESPACE")}
        e.update(NODE_NAME=node, OPERATOR_NAMESPACE=NS, KUBECONFIG=kubeconfig, VALIDATOR_IMAGE=IMAGE,
                 POD_NAME=SELF_POD)
        return e

    signals = []  # filled as nodes start; stopped by worker_main at the end of the phase

    def start_signal(i):
        signals.append(subprocess.Popen(as_node_user(i, [
            gv, "metrics", "--listen", "127.0.0.1:0", "--output-dir", dirs[i], "--node-name", node_name(i),
            "--kubeconfig", job["signal"], "--node-condition", "--node-label", "nvidia.com/gpu.validated=true",
            "--startup-taint", "nvidia.com/gpu.not-validated:NoSchedule"]),
            env=env_for(node_name(i), job["signal"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def node_thread(i):
        time.sleep(max(0.0, t0 + offsets[i] - time.monotonic()))
        if job["signal"]:  # the validator pod starts on the node: its node signal with its validations
            start_signal(i)
        for comp in ("cuda", "plugin"):
            p = subprocess.run(as_node_user(i, [gv, "run", "--components", comp, "--output-dir", dirs[i]]),
                               env=env_for(node_name(i), job["kubeconfig"]), capture_output=True, text=True)
            if p.returncode != 0:
                failures.append((node_name(i), comp, (p.stdout + p.stderr).strip().splitlines()[:2]))
                return
        ready[node_name(i)] = time.monotonic() - (t0 + offsets[i])
    return signals, node_thread


def worker_upstream(job, t0, ready, failures):
    """Upstream's pattern on every node (cmd/nvidia-validator/main.go), one TLS connection per
    component as its one process per component makes."""
    pods = job["pods"]
    ctx = ssl.create_default_context(cafile=job["ca"])
    ctx.load_cert_chain(job["cert"], job["key"])
    host, port = job["server"].rsplit("/", 1)[1].split(":")
    poll_s, offsets = job["poll_s"], job["offsets"]
    labels = {"cuda": "app%3Dnvidia-cuda-validator", "plugin": "app%3Dnvidia-device-plugin-validator"}

    def call(conn, method, path, body=None):
        hdrs = {"User-Agent": "upstream-pattern", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body)
            hdrs["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=hdrs)
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")

    def component(node, comp):
        conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=60)
        try:
            if comp == "plugin":
                call(conn, "GET", "/api/v1/nodes/" + node)  # validateGPUResource(): capacity
            call(conn, "GET", f"/apis/apps/v1/namespaces/{NS}/daemonsets/nvidia-operator-validator")
            if comp == "plugin":
                call(conn, "GET", "/api/v1/nodes/" + node)  # getGPUResourceName(): allocatable
            base = f"/api/v1/namespaces/{NS}/pods"
            _, old = call(conn, "GET", f"{base}?labelSelector={labels[comp]}&fieldSelector=spec.nodeName%3D{node}")
            for item in (old or {}).get("items") or []:
                call(conn, "DELETE", f"{base}/{item['metadata']['name']}", {"gracePeriodSeconds": 0})
            pod = json.loads(json.dumps(pods[comp]).replace('"NODE"', json.dumps(node)))
            pod["metadata"].pop("ownerReferences", None)
            code, made = call(conn, "POST", base, pod)
            if code != 201:
                return f"create: {code} {made.get('message')}"
            path = f"{base}/{made['metadata']['name']}"
            while True:  # waitForPod(): GET at once, then every 5 s until Succeeded
                code, cur = call(conn, "GET", path)
                phase = (cur.get("status") or {}).get("phase") if code == 200 else None
                if phase in ("Succeeded", "Failed"):
                    break
                time.sleep(poll_s)
            return path if phase == "Succeeded" else f"phase {phase}"
        finally:
            conn.close()

    def node_thread(i):
        node = node_name(i)
        time.sleep(max(0.0, t0 + offsets[i] - time.monotonic()))
        made = []
        for comp in ("cuda", "plugin"):
            got = component(node, comp)
            if not got.startswith("/"):
                failures.append((node, comp, got))
                return
            made.append(got)
        ready[node] = time.monotonic() - (t0 + offsets[i])
        # The next run's clean-up (upstream leaves its pods; its next LIST finds them and deletes
        # them with grace 0), made here so that both patterns end with the same objects.
        conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=60)
        for path in made:
            call(conn, "DELETE", path, {"gracePeriodSeconds": 0})
        conn.close()
    return [], node_thread


def worker_main():
    """`--worker`: the job (JSON) on stdin; prints {"ready", "failures"} when every node is done,
    then waits for a line on stdin before it stops the node signals."""
    job = json.loads(sys.stdin.readline())
    os.nice(job["nice"])
    ready, failures = {}, []
    t0 = job["t0"]
    make = worker_ours if job["mode"] != "upstream" else worker_upstream
    signals, node_thread = make(job, t0, ready, failures)
    threads = [threading.Thread(target=node_thread, args=(i,)) for i in range(job["nodes"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"ready": ready, "failures": failures}), flush=True)
    sys.stdin.readline()
    for s in signals:
        s.terminate()
    for s in signals:
        s.wait()


def run_phase(job, cp, signal):
    """Start the worker for @job; -> (ready, verdict or None, failures)."""
    job = dict(job, t0=time.monotonic() + (3 + job["nodes"] / 100 if signal else 1.0))
    w = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    w.stdin.write(json.dumps(job) + "\n")
    w.stdin.flush()
    watcher = NodeWatcher(cp) if signal else None
    out = json.loads(w.stdout.readline())
    ready, failures = out["ready"], out["failures"]
    verdict = None
    if watcher:
        end = time.monotonic() + 60
        while len(watcher.seen) < job["nodes"] - len(failures) and time.monotonic() < end:
            time.sleep(0.1)
        watcher.stop = True
        verdict = {k: v - (job["t0"] + job["offsets"][int(k.rsplit("-", 1)[1])]) for k, v in watcher.seen.items()}
    w.stdin.write("stop\n")
    w.stdin.flush()
    w.wait()
    return ready, verdict, failures


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


def report(title, n, m, by_verb, signal, ready, verdict, failures):
    print(f"\n{title}")
    print(f"  nodes {n}, failed {len(failures)}, wall {m['wall']:.1f} s, load average {os.getloadavg()[0]:.1f}; "
          f"peak RSS {m['rss'] / 2**20:.0f} MiB")
    print(f"  kube-apiserver CPU {m['cpu']:.1f} s ({m['cpu'] / n * 1000:.0f} ms per node); background "
          f"{m['cpu_rate'] * 1000:.0f} ms/s in quiet; net of it {m['cpu_net']:.1f} s "
          f"({m['cpu_net'] / n * 1000:.0f} ms per node)")
    print(f"  etcd writes {m['writes']:.0f}, of which about {m['writes_bg']:.0f} background (leases, controllers at "
          f"the quiet rate); the rest {(m['writes'] - m['writes_bg']) / n:.1f} per node")
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


def measure(cp, api_pid, run):
    """Run the phase @run() and measure kube-apiserver and etcd over it, then their background
    rates in 15 s of quiet; -> (run()'s result, figures)."""
    s, w0, e0 = Sampler(api_pid), time.monotonic(), etcd_writes(cp)
    result = run()
    wall, writes = time.monotonic() - w0, etcd_writes(cp) - e0
    cpu, rss = s.stop()
    c_idle, e_idle = proc_cpu(api_pid), etcd_writes(cp)
    time.sleep(15)
    cpu_rate = (proc_cpu(api_pid) - c_idle) / 15.0
    writes_bg = (etcd_writes(cp) - e_idle) / 15.0 * wall
    return result, {"wall": wall, "cpu": cpu, "rss": rss, "cpu_rate": cpu_rate, "cpu_net": cpu - cpu_rate * wall,
                    "writes": writes, "writes_bg": writes_bg}


def setup_cluster(cp, state, work):
    """Users and their kubeconfigs, the operator namespace, the validator's own pod (POD_NAME),
    upstream's DaemonSet (its pods' tolerations and owner); -> {mode: kubeconfig}."""
    kc = {}
    for mode, user in USERS.items():
        subprocess.run([K8S_SH, "kubeconfig", state, user, user, "system:masters"], check=True, capture_output=True)
        kc[mode] = embedded_kubeconfig(cp, state, user, work)
    cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    cp.wait(lambda: cp.request("GET", f"/api/v1/namespaces/{NS}/serviceaccounts/default")[0] == 200, "SA")
    cp.api("POST", f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "nvidia-operator-validator"}})
    # Not bound to a node (no scheduler runs): it stays Pending, KWOK leaves it alone.
    cp.api("POST", f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": SELF_POD}, "spec": {
        "containers": [{"name": "c", "image": IMAGE}],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}})
    # Selects no node: the DaemonSet controller makes no pods of it.
    sel = {"app": "nvidia-operator-validator"}
    cp.api("POST", f"/apis/apps/v1/namespaces/{NS}/daemonsets", {
        "metadata": {"name": "nvidia-operator-validator"},
        "spec": {"selector": {"matchLabels": sel}, "template": {"metadata": {"labels": sel}, "spec": {
            "nodeSelector": {"gpu-validator.bench/none": "true"}, "containers": [{"name": "c", "image": IMAGE}],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}}})
    return kc


def main():
    if sys.argv[1:] == ["--worker"]:
        worker_main()
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SOURCE, "build"))
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--rate", type=float, default=5.0, help="node starts a second (spread N/rate)")
    ap.add_argument("--nice", type=int, default=19, help="niceness of every node-side client")
    ap.add_argument("--running-ms", type=int, default=2000)
    ap.add_argument("--exit-ms", type=int, default=6000)
    ap.add_argument("--exit-jitter-ms", type=int, default=4000, help="each pod exits up to this much later")
    ap.add_argument("--terminate-ms", type=int, default=500)
    ap.add_argument("--poll-s", type=float, default=5.0)
    ap.add_argument("--version", default=os.environ.get("GV_K8S_VERSION", "1.37"))
    ap.add_argument("--phases", default="validation,ours,upstream",
                    help="which phases, in order: validation (ours alone), ours (with the node signal), upstream")
    args = ap.parse_args()
    n = args.nodes
    spread = n / args.rate
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
        kc = setup_cluster(cp, state, work)
        with open(os.path.join(state, "kube-apiserver.pid")) as f:
            api_pid = int(f.read())
        print(f"fleet on kube-apiserver {cp.version} with KWOK: {n} nodes, {args.rate:g} node starts a second "
              f"(spread over {spread:.0f} s); pods running after {args.running_ms} ms, exit {args.exit_ms}-"
              f"{args.exit_ms + args.exit_jitter_ms} ms later, removed {args.terminate_ms} ms after a graceful delete; "
              f"node-side clients at nice {args.nice}, one user per node")
        sys.stdout.flush()
        pods = {c: json.loads(subprocess.run([gv, "render", c, "--node-name", "NODE", "--namespace", NS, "--image",
                                              IMAGE, "-o", "json"], check=True, capture_output=True, text=True).stdout)
                for c in ("cuda", "plugin")}
        base = {"nodes": n, "offsets": offsets, "nice": args.nice, "gv": gv, "poll_s": args.poll_s, "pods": pods,
                "server": cp.server, "ca": cp.ca, "cert": os.path.join(state, "pki", USERS["upstream"] + ".crt"),
                "key": os.path.join(state, "pki", USERS["upstream"] + ".key")}
        titles = {"validation": "gpu-validator, validations only (cuda and plugin pods, watched)",
                  "ours": "gpu-validator with the node signal (condition, label, taint, Events)",
                  "upstream": f"upstream's pattern (its source's requests; GET every {args.poll_s:g} s)"}
        for mode in args.phases.split(","):
            make_nodes(cp, n)
            job = dict(base, mode=mode, signal=kc["signal"] if mode == "ours" else None,
                       kubeconfig=kc["ours"],
                       dirs=make_node_dirs(gv, work, n) if mode != "upstream" else None)
            time.sleep(2)
            _, since = audit_counts(audit, "", 0)
            (ready, verdict, failures), m = measure(cp, api_pid, lambda: run_phase(job, cp, mode == "ours"))
            time.sleep(1)  # the last audit events are written
            by_verb, _ = audit_counts(audit, USERS["ours" if mode == "validation" else mode], since)
            signal = audit_counts(audit, USERS["signal"], since)[0] if mode == "ours" else None
            report(titles[mode], n, m, by_verb, signal, ready, verdict, failures)
    finally:
        cp.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
