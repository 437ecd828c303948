#!/usr/bin/env python3
"""The real-client suite: NVIDIA's and the community's NVML clients, at pinned newest versions
installed by name from their registries, against the mock libnvidia-ml.so.1 (docs/real-clients.md,
which this program writes).

Usage:
  tests/clients/run.py [--build DIR] [--write-docs] [--only CLIENT[,CLIENT]]

Prints TAP on stdout (one case per client, layout and check; the log on stderr) and writes the
result document to DIR/real-clients.md (DIR: --build, default build/ci). The last case compares it
with docs/real-clients.md; --write-docs writes docs/real-clients.md instead (run it after a change
of the mock or of a client pin, and commit the result).

Clients (their pins: tools/go/*/go.mod, tests/clients/requirements.txt, tests/clients/rust/Cargo.lock,
Debian's nvtop): k8s-device-plugin and its gpu-feature-discovery, nvidia-ctk, go-nvml (our
nvml-walk), nvidia-ml-py, pynvml, nvml-wrapper's examples, nvitop, gpustat, nvtop. Each runs on
three layouts: the default profile (a100-sxm4-40gb, 8 GPUs), 64 GPUs, and MIG mixed (GPU 0 with
3g.20gb, 2g.10gb and two 1g.5gb, GPU 1 with 7g.40gb, GPUs 2-7 without MIG).

Needs root (mount namespaces for the device plugin, gpu-feature-discovery and nvidia-ctk), a
build tree (GV_BIN or build/src/cli/gpu-validator), the network for cold installs (PyPI,
crates.io, the Go module proxy); everything installed is cached outside the clone (GV_CACHE,
default /var/cache/gpu-validator). Exit 0 when every case passed, 1 otherwise.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
NODE = "node-1"
IN_CI = os.environ.get("CI") == "true"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def cache_root():
    c = os.environ.get("GV_CACHE") or "/var/cache/gpu-validator"
    try:
        os.makedirs(c, exist_ok=True)
        if not os.access(c, os.W_OK):
            raise PermissionError(c)
    except OSError:
        c = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "gpu-validator")
        os.makedirs(c, exist_ok=True)
    return c


def run(cmd, timeout=120, env=None, check=False, **kw):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e, **kw)
    if check and p.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p


def key_of(*paths, extra=""):
    h = hashlib.sha256(extra.encode())
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:12]


# ---------------------------------------------------------------------------------------------
# Preparing the clients (cached)


def prepare_venv():
    """The Python clients in a virtual environment keyed by requirements.txt and the Python version."""
    req = os.path.join(HERE, "requirements.txt")
    d = os.path.join(cache_root(), "py", "clients-" + key_of(req, extra=sys.version))
    py = os.path.join(d, "bin", "python")
    if os.path.exists(os.path.join(d, ".complete")):
        return py
    shutil.rmtree(d, ignore_errors=True)
    run([sys.executable, "-m", "venv", d], timeout=300, check=True)
    run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check", "-r", req],
        timeout=600, check=True)
    open(os.path.join(d, ".complete"), "w").close()
    return py


def go_bin(gset, name):
    p = run([os.path.join(SOURCE, "tools", "gotool.sh"), "bin", gset, name], timeout=1800, check=True)
    return p.stdout.strip()


def prepare_rust():
    """nvml-wrapper's examples, built from the pinned crate with its own Cargo.lock, outside the clone."""
    man = os.path.join(HERE, "rust", "Cargo.toml")
    d = os.path.join(cache_root(), "rust", "nvml-wrapper-" + key_of(man, os.path.join(HERE, "rust", "Cargo.lock")))
    examples = os.path.join(d, "target", "release", "examples")
    if os.path.exists(os.path.join(d, ".complete")):
        return examples
    env = {"CARGO_TARGET_DIR": os.path.join(d, "pin-target")}
    meta = json.loads(run(["cargo", "metadata", "--locked", "--format-version", "1", "--manifest-path", man],
                          timeout=600, env=env, check=True).stdout)
    crate = [p for p in meta["packages"] if p["name"] == "nvml-wrapper"][0]
    src = os.path.join(d, "src")
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(os.path.dirname(crate["manifest_path"]), src)
    run(["cargo", "build", "--release", "--examples", "--locked", "--manifest-path", os.path.join(src, "Cargo.toml")],
        timeout=1200, env={"CARGO_TARGET_DIR": os.path.join(d, "target")}, check=True)
    open(os.path.join(d, ".complete"), "w").close()
    return examples


def versions(venv_py):
    """{client: (version, where from)} read from the pins and the installed clients."""
    def go_require(gset, module):
        text = open(os.path.join(SOURCE, "tools", "go", gset, "go.mod")).read()
        return re.search(re.escape(module) + r"\s+(v\S+)", text).group(1)
    req = dict(re.findall(r"(?m)^([\w.-]+)==(\S+)", open(os.path.join(HERE, "requirements.txt")).read()))
    lock = open(os.path.join(HERE, "rust", "Cargo.lock")).read()
    wrapper = re.search(r'name = "nvml-wrapper"\nversion = "([^"]+)"', lock).group(1)
    nvtop = run(["dpkg-query", "-W", "-f=${Version}", "nvtop"]).stdout.strip() or "not installed"
    return [
        ("k8s-device-plugin", go_require("nvidia-device-plugin", "github.com/NVIDIA/k8s-device-plugin"),
         "Go module `github.com/NVIDIA/k8s-device-plugin` (tools/go/nvidia-device-plugin)"),
        ("gpu-feature-discovery", go_require("nvidia-device-plugin", "github.com/NVIDIA/k8s-device-plugin"),
         "the same module, `cmd/gpu-feature-discovery`"),
        ("nvidia-ctk", go_require("nvidia-container-toolkit", "github.com/NVIDIA/nvidia-container-toolkit"),
         "Go module `github.com/NVIDIA/nvidia-container-toolkit` (tools/go/nvidia-container-toolkit)"),
        ("go-nvml", go_require("nvml-clients", "github.com/NVIDIA/go-nvml"),
         "Go module `github.com/NVIDIA/go-nvml`, our `nvml-walk` (tools/go/nvml-clients)"),
        ("nvidia-ml-py", req["nvidia-ml-py"], "PyPI (tests/clients/requirements.txt)"),
        ("pynvml", req["pynvml"], "PyPI (`pynvml_utils.nvidia_smi`)"),
        ("nvml-wrapper", wrapper, "crates.io (tests/clients/rust/Cargo.lock); its `examples/`"),
        ("nvitop", req["nvitop"], "PyPI"),
        ("gpustat", req["gpustat"], "PyPI"),
        ("nvtop", nvtop, "Debian 12 `contrib` (tools/setup-debian.sh)"),
    ]


# ---------------------------------------------------------------------------------------------
# Layouts


MIG_DEVICES = ('devices:\n  - index: 0\n    mig: {mode: enabled, devices: ["3g.20gb", "2g.10gb", "1g.5gb", "1g.5gb"]}\n'
               '  - index: 1\n    mig: {mode: enabled, devices: ["7g.40gb"]}\n')

LAYOUTS = [
    ("default", "`a100-sxm4-40gb`, the default profile: 8 GPUs"),
    ("64 GPUs", "`a100-sxm4-40gb --gpus 64`"),
    ("MIG mixed", "`a100-sxm4-40gb` with GPU 0 in `3g.20gb`, `2g.10gb`, `1g.5gb`, `1g.5gb` and GPU 1 in "
                  "`7g.40gb` (MIG mode enabled), GPUs 2-7 without MIG: 8 GPUs"),
]


class Layout:
    def __init__(self, suite, name):
        self.suite, self.name = suite, name
        self.args = ["--profile", "a100-sxm4-40gb"]
        if name == "64 GPUs":
            self.args += ["--gpus", "64"]
        if name == "MIG mixed":
            text = open(os.path.join(SOURCE, "mock", "profiles", "a100-sxm4-40gb.yaml")).read()
            path = os.path.join(suite.work, "a100-mig-mixed.yaml")
            with open(path, "w") as f:
                f.write(text + MIG_DEVICES)
            self.args = ["--profile", path]
        rep = run([suite.gv, "mock", "profiles", "--report", self.args[1], "--node-name", NODE] + self.args[2:],
                  check=True).stdout
        self.report = json.loads(rep)
        self.gpus = self.report["gpus"]
        self.mig = any(g["mig_mode_current"] for g in self.gpus)

    def root(self, tag):
        """A fresh mock root of this layout (character device nodes: nvidia-ctk keeps only those)."""
        r = os.path.join(self.suite.work, "root-%s-%s" % (re.sub(r"\W", "", self.name), tag))
        shutil.rmtree(r, ignore_errors=True)
        run([self.suite.gv, "mock", "install", "--root", r, "--node-name", NODE, "--device-nodes=char"] + self.args,
            check=True)
        return r

    def expected_resources(self):
        """{resource: count} the device plugin should register (mixed strategy on the MIG layout)."""
        res = {}
        for g in self.gpus:
            if g["mig_mode_current"]:
                for m in g["mig_devices"]:
                    k = "nvidia.com/mig-" + m["profile"]
                    res[k] = res.get(k, 0) + 1
            else:
                res["nvidia.com/gpu"] = res.get("nvidia.com/gpu", 0) + 1
        return res


def lib_env(root):
    return {"LD_LIBRARY_PATH": os.path.join(root, "usr", "lib64")}


def mock_set(suite, root, *args):
    run([suite.gv, "mock", "set", "--root", root] + list(args), check=True)


def in_namespace(root, script, timeout, mig):
    """@script (sh) in a private mount namespace where the root's sysfs PCI folder and, for MIG, its
    /proc/driver stand at the host paths, and /var/lib is an empty tmpfs (the kubelet's folder)."""
    pre = ["mount -t tmpfs tmpfs /var/lib", "mkdir -p /var/lib/kubelet/device-plugins",
           "mount --bind '%s/sys/bus/pci' /sys/bus/pci" % root]
    if mig:
        pre.append("mount --bind '%s/proc/driver' /proc/driver" % root)
    return run(["unshare", "-m", "--propagation", "private", "sh", "-ec", " && ".join(pre) + "\n" + script],
               timeout=timeout)


# ---------------------------------------------------------------------------------------------
# The clients: each returns [(check, ok, detail)] for one layout; detail goes to the document.


def check_device_plugin(suite, lay):
    root = lay.root("dp")
    plugin, kubelet = suite.bins["nvidia-device-plugin"], suite.bins["standin-kubelet"]
    out = os.path.join(suite.work, "dp-%s" % re.sub(r"\W", "", lay.name))
    os.makedirs(out, exist_ok=True)
    lost, ecc = 2, 3  # GPUs without MIG in every layout
    strategy = "mixed" if lay.mig else "none"
    script = f"""
{kubelet} -duration 40s -wait 1s -preferred-timeout 10s >{out}/kubelet.jsonl 2>{out}/kubelet.err &
k=$!
sleep 0.3
LD_LIBRARY_PATH={root}/usr/lib64 {plugin} --driver-root={root} --mig-strategy={strategy} --pass-device-specs \
  >{out}/plugin.log 2>&1 &
p=$!
n=0; while [ $n -lt 300 ] && [ "$(grep -c '"event":"allocate"' {out}/kubelet.jsonl)" -lt {len(lay.expected_resources())} ]; do
  sleep 0.1; n=$((n+1)); done
{suite.gv} mock set --root {root} --gpu {lost} fault=fell-off-the-bus 2>/dev/null
{suite.gv} mock set --root {root} --gpu {ecc} fault=ecc-burst 2>/dev/null
sleep 3
kill $p; wait $p || true; kill $k; wait $k || true
"""
    p = in_namespace(root, script, 90, lay.mig)
    events = []
    for line in open(os.path.join(out, "kubelet.jsonl")).read().splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    if p.returncode != 0 or not events:
        return [("runs", False, "exit %d: %s %s" % (p.returncode, p.stderr[-500:],
                                                    open(os.path.join(out, "plugin.log")).read()[-800:]))]
    want = lay.expected_resources()
    registered = sorted(e["resource"] for e in events if e["event"] == "register")
    first, last = {}, {}
    for e in events:
        if e["event"] == "devices" and "devices" in e:
            first.setdefault(e["resource"], e["devices"])
            last[e["resource"]] = e["devices"]
    got = {r: len(first.get(r, [])) for r in registered}
    healthy = all(d["health"] == "Healthy" for r in first for d in first[r])
    res = [("registers " + ", ".join("`%s` %d" % (r, n) for r, n in sorted(want.items())),
            got == want and sorted(want) == registered,
            ", ".join("`%s` %d" % (r, n) for r, n in sorted(got.items())) + (", all Healthy" if healthy else ""))]
    res.append(("every device Healthy at registration", healthy and bool(first), "yes" if healthy else str(first)))
    pref = {e["resource"]: e for e in events if e["event"] == "preferred"}
    alloc = {e["resource"]: e for e in events if e["event"] == "allocate" and not e.get("error")}
    # 64 GPUs: go-gpuallocator's best-effort policy enumerates the ways to split the GPUs
    # and does not answer in the stand-in's 10 s; the kubelet then allocates without a preference.
    slow_ok = lay.name == "64 GPUs"
    parts, ok = [], sorted(alloc) == registered
    for r in registered:
        e, a = pref.get(r, {}), alloc.get(r)
        visible = bool(a) and a["envs"].get("NVIDIA_VISIBLE_DEVICES", "").split(",") == a["ids"]
        ok = ok and visible
        if e.get("error") == "" and e.get("ids"):
            parts.append("`%s`: preferred %d of %d, `NVIDIA_VISIBLE_DEVICES` %s" % (
                r, len(e["ids"]), got.get(r, 0), "set" if visible else "WRONG"))
        elif slow_ok and "DeadlineExceeded" in e.get("error", ""):
            parts.append("`%s`: no preferred allocation within 10 s (client limit, see above); Allocate of the first %d: "
                         "`NVIDIA_VISIBLE_DEVICES` %s" % (r, e.get("size", 0), "set" if visible else "WRONG"))
        else:
            ok = False
            parts.append("`%s`: %s" % (r, e.get("error", "no GetPreferredAllocation answer")[:200]))
    res.append(("GetPreferredAllocation and Allocate answer for every resource", ok, "; ".join(parts)))
    for gpu, fault, xid in ((lost, "fell-off-the-bus", "79"), (ecc, "ecc-burst", "48")):
        uuid = lay.gpus[gpu]["uuid"]
        states = {d["id"]: d["health"] for d in last.get("nvidia.com/gpu", [])}
        res.append(("Xid %s (`mock set --gpu %d fault=%s`) marks GPU %d Unhealthy" % (xid, gpu, fault, gpu, ),
                    states.get(uuid) == "Unhealthy", "GPU %d %s" % (gpu, states.get(uuid, "not listed"))))
    return res


def check_gfd(suite, lay):
    root = lay.root("gfd")
    out = os.path.join(suite.work, "gfd-%s.txt" % re.sub(r"\W", "", lay.name))
    mt = os.path.join(suite.work, "machine-type")
    with open(mt, "w") as f:
        f.write("DGX A100 (mock)\n")
    strategy = "mixed" if lay.mig else "none"
    p = in_namespace(root, "LD_LIBRARY_PATH=%s/usr/lib64 %s --oneshot --no-timestamp --output-file=%s "
                     "--machine-type-file=%s --mig-strategy=%s --use-node-feature-api=false" % (root, suite.bins["gpu-feature-discovery"], out, mt,
                                                                   strategy), 120, lay.mig)
    if p.returncode != 0 or not os.path.exists(out):
        return [("writes labels", False, "exit %d: %s" % (p.returncode, p.stderr[-600:]))]
    labels = dict(l.split("=", 1) for l in open(out).read().splitlines() if "=" in l)
    g0 = lay.gpus[0]
    full = [g for g in lay.gpus if not g["mig_mode_current"]]
    want = {
        "nvidia.com/gpu.product": g0["name"].replace(" ", "-"),
        "nvidia.com/gpu.count": str(len(lay.gpus)),
        "nvidia.com/gpu.memory": str(g0["memory_total_mib"]),
        "nvidia.com/cuda.driver-version.full": lay.report["driver_version"],
        "nvidia.com/cuda.runtime-version.full": "%d.%d" % (lay.report["cuda_driver_version"] // 1000,
                                                           lay.report["cuda_driver_version"] % 1000 // 10),
        "nvidia.com/gpu.compute.major": str(g0["cuda_cc_major"]),
        "nvidia.com/mig.capable": "true",
    }
    if lay.mig:
        want["nvidia.com/mig.strategy"] = "mixed"
        for r, n in lay.expected_resources().items():
            if r.startswith("nvidia.com/mig-"):
                want[r + ".count"] = str(n)
        for g in lay.gpus:
            for m in g["mig_devices"]:
                want["nvidia.com/mig-%s.memory" % m["profile"]] = str(m["memory_mib"])
                want["nvidia.com/mig-%s.multiprocessors" % m["profile"]] = str(m["multiprocessor_count"])
    bad = {k: (labels.get(k), v) for k, v in want.items() if labels.get(k) != v}
    del full
    shown = [k for k in sorted(want) if not k.endswith(".multiprocessors")]
    return [("labels match the profile (%d checked)" % len(want), not bad,
             "%d labels; " % len(labels) + ", ".join("`%s=%s`" % (k.replace("nvidia.com/", ""), labels.get(k)) for k in shown)
             + ("; WRONG: %s" % bad if bad else ""))]


def load_yaml(path):
    import yaml  # the suite's venv (requirements.txt)
    with open(path) as f:
        return yaml.safe_load(f)


def cdi_view(spec, root):
    """{device name: sorted device-node paths}, common nodes, mount container paths of a CDI spec."""
    def nodes(edits):
        return sorted(n["path"] for n in (edits or {}).get("deviceNodes") or [])
    devs = {d["name"]: nodes(d.get("containerEdits")) for d in spec.get("devices", [])}
    common = spec.get("containerEdits") or {}
    mounts = sorted(m["containerPath"] for m in common.get("mounts") or [])
    hooks = sorted(" ".join(h["args"][1:2]) for h in common.get("hooks") or [])
    return devs, nodes(common), mounts, hooks


def check_ctk(suite, lay):
    root = lay.root("ctk")
    out = os.path.join(suite.work, "ctk-%s.yaml" % re.sub(r"\W", "", lay.name))
    p = in_namespace(root, "LD_LIBRARY_PATH=%s/usr/lib64 %s cdi generate --driver-root=%s --output=%s" % (
        root, suite.bins["nvidia-ctk"], root, out), 180, lay.mig)
    if p.returncode != 0:
        return [("`cdi generate` succeeds", False, "exit %d: %s" % (p.returncode, p.stderr[-600:]))]
    theirs = cdi_view(load_yaml(out), root)
    ours = cdi_view(load_yaml(os.path.join(root, "etc", "cdi", "nvidia-mock.yaml")), root)
    names = sorted(theirs[0])
    missing = [n for n in names if n not in ours[0]]
    nodes_differ = [n for n in names if n in ours[0] and theirs[0][n] != ours[0][n]]
    res = [("`cdi generate` succeeds", True, "exit 0, %d devices (`%s` ... `all`)" % (len(names), names[0])),
           ("our spec has each of its device names", not missing, "%d of %d%s" % (len(names) - len(missing), len(names),
                                                                                  ": missing %s" % missing if missing else "")),
           ("same device nodes per device", not nodes_differ, "%d of %d%s" % (len(names) - len(nodes_differ), len(names),
                                                                              ": differ %s" % nodes_differ[:5] if nodes_differ else ""))]
    only_t = sorted(set(theirs[1]) - set(ours[1]))
    only_o = sorted(set(ours[1]) - set(theirs[1]))
    res.append(("common device nodes (differences explained above)", not only_o,
                "both: %s; nvidia-ctk only: %s; ours only: %s" % (", ".join("`%s`" % n for n in sorted(set(theirs[1]) & set(ours[1]))),
                                                                  ", ".join("`%s`" % n for n in only_t) or "none",
                                                                  ", ".join("`%s`" % n for n in only_o) or "none")))
    res.append(("mounts (differences explained above)", "/usr/bin/nvidia-smi" in theirs[2] and "/usr/bin/nvidia-smi" in ours[2],
                "nvidia-ctk: %s; ours: %s; nvidia-ctk's hooks: %s" % (", ".join("`%s`" % m for m in theirs[2]),
                                                                      ", ".join("`%s`" % m for m in ours[2]),
                                                                      ", ".join("`%s`" % h for h in theirs[3]))))
    return res


# Floors of the nvidia-ml-py sweep: values today (a regression fails); FUNCTION_NOT_FOUND and crashes are 0.
SWEEP_FLOORS = {("default", "GPU 0"): 86, ("64 GPUs", "GPU 0"): 86, ("MIG mixed", "GPU 0"): 79,
                ("MIG mixed", "GPU 0's MIG device 0"): 57}


def check_nvidia_ml_py(suite, lay):
    root = lay.root("pyb")
    res = []
    targets = [("GPU 0", [])] + ([("GPU 0's MIG device 0", ["--mig"])] if lay.mig else [])
    for label, extra in targets:
        p = run([suite.py, os.path.join(HERE, "py_clients.py"), "sweep"] + extra, env=lib_env(root), timeout=120)
        if p.returncode != 0:
            res.append(("sweep of %s" % label, False, "exit %d (crash?): %s" % (p.returncode, p.stderr[-500:])))
            continue
        calls = json.loads(p.stdout)["calls"]
        counts = {}
        for v in calls.values():
            k = v if v in ("value", "NOT_SUPPORTED", "FUNCTION_NOT_FOUND") else "other"
            counts[k] = counts.get(k, 0) + 1
        floor = SWEEP_FLOORS[(lay.name, label)]
        others = sorted("%s %s" % (k.replace("nvmlDeviceGet", ""), v) for k, v in calls.items()
                        if v not in ("value", "NOT_SUPPORTED"))
        res.append(("%s: %d handle-only getters, 0 FUNCTION_NOT_FOUND, 0 crashes, >= %d values" % (label, len(calls), floor),
                    counts.get("FUNCTION_NOT_FOUND", 0) == 0 and counts.get("value", 0) >= floor,
                    "%d values, %d NOT_SUPPORTED, %d FUNCTION_NOT_FOUND, %d other%s" % (
                        counts.get("value", 0), counts.get("NOT_SUPPORTED", 0), counts.get("FUNCTION_NOT_FOUND", 0),
                        counts.get("other", 0), " (%s)" % ", ".join(others[:6]) if others else "")))
    return res


def check_pynvml(suite, lay):
    root = lay.root("pynvml")
    p = run([suite.py, os.path.join(HERE, "py_clients.py"), "smi"], env=lib_env(root), timeout=120)
    if p.returncode != 0:
        return [("nvidia_smi.DeviceQuery", False, "exit %d (crash?): %s" % (p.returncode, p.stderr[-500:]))]
    r = json.loads(p.stdout)
    fields = r["fields"]
    values = sum(1 for v in fields.values() if v == "value")
    na = sum(1 for v in fields.values() if v == "N/A")
    exc = sorted(set(v.split(":")[0] + " (" + k.split(".")[0] + ")" for k, v in fields.items() if v not in ("value", "N/A")))
    nf = [k for k, v in fields.items() if "Function Not Found" in v or "FUNCTION_NOT_FOUND" in v]
    ids = [g["uuid"] for g in r["gpus"]] == [g["uuid"] for g in lay.gpus]
    mem = all(int(g["fb_total"]) == lay.gpus[i]["memory_total_mib"] for i, g in enumerate(r["gpus"]))
    return [("`nvidia_smi.DeviceQuery` field by field: GPUs, UUIDs, memory as the profile; 0 FUNCTION_NOT_FOUND, 0 crashes",
             r["count"] == len(lay.gpus) and ids and mem and not nf,
             "%d GPUs; %d fields: %d values, %d N/A, %d raise in pynvml_utils: %s" % (
                 r["count"], len(fields), values, na, len(fields) - values - na, ", ".join(exc)))]


def check_go_nvml(suite, lay):
    root = lay.root("gonvml")
    p = run([suite.bins["nvml-walk"]], env=lib_env(root), timeout=300)
    if p.returncode != 0:
        return [("nvml-walk runs", False, "exit %d (a crash or a missing symbol): %s" % (p.returncode, p.stderr[-500:]))]
    r = json.loads(p.stdout)
    ident = r["count"] == len(lay.gpus) and all(
        g["uuid"] == e["uuid"] and g["name"] == e["name"] and g["memory_mib"] == e["memory_total_mib"]
        for g, e in zip(r["gpus"], lay.gpus))
    migs = [(m["uuid"], m["gpu_instance"], m["memory_mib"]) for g in r["gpus"] for m in g["mig"]]
    want_migs = [(m["uuid"], m["gi_id"], m["memory_mib"]) for g in lay.gpus for m in g["mig_devices"]]
    nf = sorted(k for t in (r["named"], r["sweep"]) for k, v in t.items() if "Function Not Found" in v)
    # The device plugin's and DCGM-exporter's calls that a real A100 answers: SUCCESS on every GPU
    # (Fabric: Hopper and later; retired pages: before Ampere; EventSet.Wait: Timeout without events).
    expected_other = {"GetGpuFabricInfo", "GetRetiredPages(DBE)", "EventSet.Wait"}
    # On a MIG-enabled GPU NVML gives no GPU-wide utilisation or row remapper counts (NOT_SUPPORTED, as
    # the A100 and H100 MIG captures print N/A).
    mig_na = {"GetUtilizationRates", "GetEncoderUtilization", "GetDecoderUtilization", "GetRemappedRows"}
    n_mig = sum(1 for g in lay.gpus if g["mig_mode_current"])
    failing = sorted(k for k, v in r["named"].items() if k not in expected_other and set(v) != {"SUCCESS"} and
                     not (k in mig_na and v.get("Not Supported") == n_mig and set(v) <= {"SUCCESS", "Not Supported"}))
    sweep_tot = {}
    for v in r["sweep"].values():
        for k, n in v.items():
            sweep_tot[k] = sweep_tot.get(k, 0) + n
    return [
        ("count, UUIDs, names, memory%s as the profile" % (", MIG devices" if lay.mig else ""),
         ident and migs == want_migs, "%d GPUs%s" % (r["count"], ", %d MIG devices" % len(migs) if lay.mig else "")),
        ("device plugin's and DCGM-exporter's %d getters answer" % len(r["named"]), not failing,
         "all SUCCESS but `GetGpuFabricInfo` NOT_SUPPORTED (Ampere), `GetRetiredPages` NOT_SUPPORTED (Ampere remaps rows), "
         "`EventSet.Wait` Timeout" + (", and on the %d MIG-enabled GPUs the utilisation and remapped rows "
                                       "NOT_SUPPORTED" % n_mig if n_mig else "")
         if not failing else "not SUCCESS: %s" % failing),
        ("sweep of %d no-argument Device getters: 0 FUNCTION_NOT_FOUND, 0 crashes" % len(r["sweep"]), not nf,
         ", ".join("%s %d" % (k, n) for k, n in sorted(sweep_tot.items(), key=lambda kv: -kv[1]))),
    ]


def check_nvml_wrapper(suite, lay):
    root = lay.root("rust")
    ex = suite.bins["nvml-wrapper-examples"]
    p = run([os.path.join(ex, "basic_usage")], env=lib_env(root), timeout=60)
    g0 = lay.gpus[0]
    cuda = lay.report["cuda_driver_version"]
    want = ["Your %s" % g0["name"], "sitting at %d °C" % g0["temperature_c"],
            "System CUDA version: %d.%d" % (cuda // 1000, cuda % 1000 // 10)]
    ok = p.returncode == 0 and all(w in p.stdout for w in want)
    res = [("`basic_usage` prints GPU 0 as the profile", ok,
            "exit %d: %s" % (p.returncode, "; ".join(w for w in want if w in p.stdout) or p.stdout[-300:] + p.stderr[-300:]))]
    ev = subprocess.Popen([os.path.join(ex, "event_loop")], env=dict(os.environ, **lib_env(root)),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.0)
    mock_set(suite, root, "--gpu", "0", "fault=fell-off-the-bus")
    time.sleep(1.0)  # the example waits for further events: stopped once the Xid had time to arrive
    ev.send_signal(signal.SIGINT)
    try:
        out, _ = ev.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        ev.kill()
        out, _ = ev.communicate()
    seen = "CriticalXidError" in out and "Value(79)" in out
    res.append(("`event_loop` gets Xid 79 of `mock set --gpu 0 fault=fell-off-the-bus`", seen,
                (re.search(r"CriticalXidError[^\n]*", out).group(0).split("{")[0] + "... Value(79)") if seen else out[-300:]))
    return res


def nvitop_rows(text):
    return re.findall(r"│\s+(\d+)\s+(A100-SXM4-40GB|ERROR: GPU is Lost)", text)


def check_nvitop(suite, lay):
    root = lay.root("nvitop")
    nvitop = os.path.join(os.path.dirname(suite.py), "nvitop")
    env = dict(lib_env(root), COLUMNS="160")
    res = []
    p = run([nvitop, "-1"], env=env, timeout=120)
    rows = nvitop_rows(p.stdout)
    temps = re.findall(r"│\s+N/A\s+(\d+)C\s+P0", p.stdout)
    migrows = re.findall(r"│\s+(\d+:\d+)\s+(\d+g\.\d+gb) @ GI/CI:\s*(\d+)/(\d+)", p.stdout)
    want_migs = [("%d:%d" % (g["index"], j), m["profile"]) for g in lay.gpus for j, m in enumerate(g["mig_devices"])]
    ok = p.returncode == 0 and len(rows) == len(lay.gpus) and temps == [str(g["temperature_c"]) for g in lay.gpus]
    if lay.mig:
        ok = ok and [(a, b) for a, b, _, _ in migrows] == want_migs
    res.append(("`nvitop -1`: a row per GPU with the profile's temperature%s" % (" and the MIG devices" if lay.mig else ""), ok,
                "exit %d, %d GPU rows at %sC%s" % (p.returncode, len(rows), "/".join(sorted(set(temps))),
                                                  ", MIG rows %s" % " ".join("`%s %s`" % (a, b) for a, b, _, _ in migrows) if lay.mig else "")))
    mock_set(suite, root, "--gpu", "2", "temperature_c=81", "utilization_gpu=90")
    p = run([nvitop, "-1"], env=env, timeout=120)
    m = re.search(r"│\s+N/A\s+81C\s+P0.*?│\s+90%", p.stdout)
    res.append(("after `mock set --gpu 2 temperature_c=81 utilization_gpu=90`", p.returncode == 0 and bool(m),
                "GPU 2 row: `81C`, `90%`" if m else "not shown: " + p.stdout[-400:]))
    mock_set(suite, root, "--gpu", "3", "fault=fell-off-the-bus")
    p = run([nvitop, "-1"], env=env, timeout=120)
    rows = nvitop_rows(p.stdout)
    lost = [i for i, n in rows if n.startswith("ERROR")]
    res.append(("after GPU 3 is lost (`fault=fell-off-the-bus`)", p.returncode == 0 and lost == ["3"] and len(rows) == len(lay.gpus),
                "exit %d, %d rows, GPU %s `ERROR: GPU is Lost`" % (p.returncode, len(rows), ",".join(lost) or "none")))
    return res


def check_gpustat(suite, lay):
    root = lay.root("gpustat")
    gpustat = os.path.join(os.path.dirname(suite.py), "gpustat")
    res = []

    def query():
        p = run([gpustat, "--json"], env=lib_env(root), timeout=120)
        try:
            return p.returncode, json.loads(p.stdout)["gpus"]
        except (ValueError, KeyError):
            return p.returncode, []
    rc, gpus = query()
    ok = rc == 0 and [(g["uuid"], g["name"], g["memory.total"], g["temperature.gpu"]) for g in gpus] == \
        [(g["uuid"], g["name"], g["memory_total_mib"], g["temperature_c"]) for g in lay.gpus]
    res.append(("`gpustat --json`: UUID, name, memory, temperature of each GPU as the profile", ok,
                "exit %d, %d GPUs, `%s`, %s MiB, %s °C" % (rc, len(gpus), gpus[0]["name"] if gpus else "-",
                                                          gpus[0]["memory.total"] if gpus else "-",
                                                          gpus[0]["temperature.gpu"] if gpus else "-")))
    mock_set(suite, root, "--gpu", "2", "temperature_c=81", "utilization_gpu=90", "memory_used_mib=20000")
    rc, gpus = query()
    g2 = gpus[2] if len(gpus) > 2 else {}
    ok = rc == 0 and (g2.get("temperature.gpu"), g2.get("utilization.gpu"), g2.get("memory.used")) == (81, 90, 20000)
    res.append(("after `mock set --gpu 2 temperature_c=81 utilization_gpu=90 memory_used_mib=20000`", ok,
                "GPU 2: %s °C, %s %%, %s MiB used" % (g2.get("temperature.gpu"), g2.get("utilization.gpu"), g2.get("memory.used"))))
    mock_set(suite, root, "--gpu", "3", "fault=fell-off-the-bus")
    rc, gpus = query()
    g3 = gpus[3] if len(gpus) > 3 else {}
    others = [g for i, g in enumerate(gpus) if i != 3 and g.get("name") == lay.gpus[i]["name"]]
    ok = rc == 0 and len(gpus) == len(lay.gpus) and "lost" in str(g3.get("name", "")).lower() and len(others) == len(lay.gpus) - 1
    res.append(("after GPU 3 is lost", ok, "exit %d, %d GPUs, GPU 3 `%s`" % (rc, len(gpus), g3.get("name"))))
    return res


def nvtop_frame(suite, root, tag):
    """One nvtop screen: nvtop in a detached tmux session (private server), captured after 3 s."""
    sock = "gv-clients-%d" % os.getpid()
    sess = "nvtop-" + tag
    cmd = "env LD_LIBRARY_PATH=%s/usr/lib64 TERM=xterm-256color nvtop -d 5" % root
    run(["tmux", "-L", sock, "new-session", "-d", "-s", sess, "-x", "220", "-y", "80", cmd], check=True)
    time.sleep(3)
    p = run(["tmux", "-L", sock, "capture-pane", "-p", "-t", sess])
    alive = run(["tmux", "-L", sock, "has-session", "-t", sess]).returncode == 0
    run(["tmux", "-L", sock, "kill-server"])
    return p.stdout, alive


def nvtop_devices(screen):
    """{index: (name, temperature)} of an nvtop screen: a line of "Device N [NAME]" headers, the next
    line their "TEMP NN°C" in the same order (tmux renders the degree sign of the line-drawing set as f)."""
    out = {}
    lines = screen.splitlines()
    for i, line in enumerate(lines):
        devs = re.findall(r"Device (\d+) \[([^\]]+)\]", line)
        if not devs:
            continue
        temps = re.findall(r"TEMP\s+(\d+|N/A)\S?C", lines[i + 1]) if i + 1 < len(lines) else []
        for k, (idx, name) in enumerate(devs):
            out[int(idx)] = (name, temps[k] if k < len(temps) else None)
    return out


def check_nvtop(suite, lay):
    if not shutil.which("nvtop"):
        return [("installed", False, "nvtop not on PATH (tools/setup-debian.sh installs Debian's)")]
    root = lay.root("nvtop")
    res = []
    screen, alive = nvtop_frame(suite, root, "a")
    devs = nvtop_devices(screen)
    ok = alive and devs and all(devs[i] == (lay.gpus[i]["name"], str(lay.gpus[i]["temperature_c"])) for i in devs) and \
        sorted(devs) == list(range(len(devs)))
    res.append(("one frame (tmux): each device shown with the profile's name and temperature", bool(ok),
                "%d devices on a 220x80 screen, `Device 0 [%s]`, TEMP %s°C" % (
                    len(devs), devs[0][0] if devs else "-", "/".join(sorted(set(t for _, t in devs.values()))))))
    mock_set(suite, root, "--gpu", "0", "temperature_c=81")
    mock_set(suite, root, "--gpu", "1", "fault=fell-off-the-bus")
    screen, alive = nvtop_frame(suite, root, "b")
    devs = nvtop_devices(screen)
    t0 = devs.get(0, (None, None))[1]
    # nvtop numbers the GPUs it could open: without the lost one, the last is Device N-2. On 64 GPUs
    # the screen shows the first ten only, so the count cannot be read there.
    whole = len(lay.gpus) <= 8
    ok = alive and t0 == "81" and (not whole or max(devs) == len(lay.gpus) - 2)
    res.append(("after `mock set --gpu 0 temperature_c=81` and GPU 1 lost", ok,
                "GPU 0 TEMP %s°C; %s" % (t0, "%d devices (the lost GPU left out, the rest renumbered)" % len(devs)
                                          if whole else "%d devices on the screen" % len(devs))))
    return res


CLIENTS = [
    ("k8s-device-plugin", check_device_plugin),
    ("gpu-feature-discovery", check_gfd),
    ("nvidia-ctk", check_ctk),
    ("go-nvml", check_go_nvml),
    ("nvidia-ml-py", check_nvidia_ml_py),
    ("pynvml", check_pynvml),
    ("nvml-wrapper", check_nvml_wrapper),
    ("nvitop", check_nvitop),
    ("gpustat", check_gpustat),
    ("nvtop", check_nvtop),
]

# What the document says under each client's table: how it is run, and what its results mean.
NOTES = {
    "k8s-device-plugin": """`nvidia-device-plugin --driver-root=<root> --mig-strategy=none|mixed --pass-device-specs` with
`LD_LIBRARY_PATH=<root>/usr/lib64`, and `standin-kubelet` (tools/go/nvml-clients: the kubelet's
device-plugin `Registration` service; it follows `ListAndWatch` and asks `GetPreferredAllocation` and
`Allocate` for up to 2 healthy devices of each resource, 1 s after the first list), both in a private
mount namespace with a tmpfs on `/var/lib` (the plugin's sockets live in
`/var/lib/kubelet/device-plugins`), the root's `sys/bus/pci` on `/sys/bus/pci` and, for MIG, its
`proc/driver` on `/proc/driver` (the plugin reads `/proc/driver/nvidia-caps/mig-minors`), as the
chart's patch mounts them. On 64 GPUs the plugin's `GetPreferredAllocation` does not answer within the
stand-in's 10 s: go-gpuallocator's best-effort policy (`iterateGPUPartitions`) enumerates the ways to split 64 GPUs into
groups (a limit of the client: real nodes have at most 8 or 16 GPUs), and the kubelet then allocates
without a preference, as the stand-in does. Then `mock set` injects the faults while it runs. When GPU 2 falls off the
bus the plugin's health check gets Xid 79 and, as the mock answers `GPU_IS_LOST` for the event's
device from then on, its `GetUUID` fails and the plugin marks every device of the resource Unhealthy
(`Failed to determine uuid for event ...; Marking all devices as unhealthy`): its documented
fallback. Xid 48 of an ECC burst on a GPU that stays present marks that GPU.""",
    "gpu-feature-discovery": """`gpu-feature-discovery --oneshot --no-timestamp --output-file=F --machine-type-file=M
--mig-strategy=none|mixed --use-node-feature-api=false` (the labels go to the file, not to NFD's
NodeFeature API, which needs an API server) in the same namespace as the plugin (from v0.17 it reads
each GPU's `resource` and `config` in sysfs through go-nvlib, so the root lays them out). The `mig-*` labels are checked for
every MIG profile of the layout (count, memory, multiprocessors).""",
    "nvidia-ctk": """`nvidia-ctk cdi generate --driver-root=<root> --output=F` in the same namespace, compared with the
spec `mock install` writes (`<root>/etc/cdi/nvidia-mock.yaml`): both name each GPU and MIG device by
index and by UUID, plus `all`, with the same nodes. Differences, all on purpose:
nvidia-ctk lists `/dev/nvidia-modeset` among the common nodes (the display driver's node, which the
root has and a compute container does not need); it mounts the versioned libraries
(`libnvidia-ml.so.<version>`, `libcuda.so.<version>`) and makes the `.so.1` links with its
`nvidia-cdi-hook create-symlinks` / `update-ldcache` hooks, where our spec mounts `libnvidia-ml.so.1`
and `libcuda.so.1` themselves where Debian/Ubuntu (`/usr/lib/x86_64-linux-gnu`) and RHEL (`/usr/lib64`)
loaders look, and the mock's folder (`/usr/local/nvidia/lib64`: its profile and `mock set` state), and
needs no hook (the validator runs without nvidia-ctk on the node); its
other hooks (`enable-cuda-compat`, `disable-device-node-modification`, `update-application-profile`,
per-GPU `apply-cuda-memory-limits`) are runtime policies of the toolkit, not facts of the driver root,
and so is its mount of `/var/run/nvidia-container-devices/void` (the toolkit's volume-mount device
list for `NVIDIA_VISIBLE_DEVICES=void`, which both specs set).""",
    "go-nvml": """`nvml-walk` (tools/go/nvml-clients) with `LD_LIBRARY_PATH=<root>/usr/lib64`: the getters NVIDIA's
device plugin (through go-nvlib and go-gpuallocator) and DCGM-exporter's default counters call, with
their arguments, on every GPU, MIG device, GPU and compute instance; then every method of go-nvml's
`Device` interface that takes no argument, by reflection, on every GPU and MIG device. go-nvml links
every function of its `nvml.h`: a library that lacks one fails to load the program.""",
    "nvidia-ml-py": """`py_clients.py sweep`: every `nvmlDeviceGet*` function of `pynvml.py` whose only argument without a
default is the device handle, called on GPU 0 (and on the MIG layout on GPU 0's first MIG device). The
floor is today's count of values (a lower count fails); "other" is `DeviceHandleFromMigDeviceHandle`
on a full GPU (INVALID_ARGUMENT) and, on a MIG device, the getters NVML refuses on one.""",
    "pynvml": """`py_clients.py smi`: pynvml 13's `pynvml_utils.nvidia_smi.DeviceQuery(FIELD)` for each `--query-gpu`
name of its table. pynvml 13 is a deprecated package: its `pynvml` module is nvidia-ml-py's, and
`pynvml_utils` raises on two groups of fields on any driver, real or mock: `name` (its brand table
stops at GeForce, 5; datacenter GPUs answer NVIDIA, 14: `KeyError: 14`) and
`clocks_throttle_reasons.*` (it names `nvmlClocksThrottleReasonUnknown`, which nvidia-ml-py 13 no
longer defines: `NameError`).""",
    "nvml-wrapper": """The crate's own `examples/` built from crates.io with its `Cargo.lock` (`cargo build --release
--examples --locked`): `basic_usage`, and `event_loop` while `mock set` makes GPU 0 fall off the bus
(it prints the Xid event and stops at `GpuLost`).""",
    "nvitop": """`nvitop -1` (`COLUMNS=160`), then again after `mock set` changes GPU 2 and after GPU 3 is lost.""",
    "gpustat": """`gpustat --json`, then again after `mock set` changes GPU 2 and after GPU 3 is lost.""",
    "nvtop": """Debian's `nvtop` (its NVML backend, loaded with `dlopen`) in a detached tmux session, 220x80, one
screen captured after 3 s (`tmux capture-pane`); again after GPU 0's temperature changed and GPU 1 fell
off the bus. A 220x80 screen shows the first GPUs of a 64-GPU layout. nvtop leaves a lost GPU out and
numbers the others it could open from 0 (so the device after it takes its number).""",
}


class Suite:
    def __init__(self, args):
        self.args = args
        self.gv = os.environ.get("GV_BIN") or os.path.join(SOURCE, "build", "src", "cli", "gpu-validator")
        self.work = tempfile.mkdtemp(prefix="gv-clients-")
        self.results = []  # (client, layout, check, ok, detail)
        self.n = 0
        self.bins = {}
        self.py = None
        self.cost = {}

    def tap(self, ok, text, detail=""):
        self.n += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, text), flush=True)
        if detail and not ok:
            for line in str(detail).splitlines()[:20]:
                print("#   " + line, flush=True)

    def prepare(self, only):
        """Builds or finds every client; a client that cannot be had fails its cases (skips outside CI)."""
        steps = [("python", lambda: setattr(self, "py", prepare_venv()))]
        for gset, names in (("nvidia-device-plugin", ["nvidia-device-plugin", "gpu-feature-discovery"]),
                            ("nvidia-container-toolkit", ["nvidia-ctk"]), ("nvml-clients", ["nvml-walk", "standin-kubelet"])):
            steps.append((gset, lambda gset=gset, names=names: self.bins.update({n: go_bin(gset, n) for n in names})))
        steps.append(("nvml-wrapper", lambda: self.bins.update({"nvml-wrapper-examples": prepare_rust()})))
        missing = []
        for name, f in steps:
            start = time.time()
            try:
                f()
            except Exception as e:  # reported as a case; the clients that need it fail below
                log("prepare %s: %s" % (name, e))
                missing.append(name)
            self.cost["prepare " + name] = time.time() - start
        return missing

    def run_all(self, only):
        layouts = [Layout(self, name) for name, _ in LAYOUTS]
        for client, fn in CLIENTS:
            if only and client not in only:
                continue
            for lay in layouts:
                start = time.time()
                try:
                    checks = fn(self, lay)
                except Exception as e:  # a client run that broke the harness: one failed case
                    checks = [("runs", False, "%s: %s" % (type(e).__name__, e))]
                self.cost["%s %s" % (client, lay.name)] = time.time() - start
                for check, ok, detail in checks:
                    self.results.append((client, lay.name, check, ok, detail))
                    self.tap(ok, "%s, %s: %s" % (client, lay.name, check), detail)
                log("%s %s: %.1f s" % (client, lay.name, time.time() - start))

    def document(self, vers):
        out = ["# Real NVML clients on the mock", "",
               "<!-- Generated by tests/clients/run.py --write-docs; tools/ci.d/60-clients.sh fails when this file",
               "     differs from what the suite writes. Do not edit by hand. -->", "",
               "NVIDIA's and the community's NVML clients, each at its newest release installed by name from its",
               "registry and pinned, run against the mock `libnvidia-ml.so.1` (docs/mock-nvml.md) of a root from",
               "`gpu-validator mock install` on three layouts, in CI (`tools/ci.d/60-clients.sh`, which runs",
               "`tests/clients/run.py`). Every table below is that run's output; the earlier hand-run results",
               "with older versions are in docs/real-clients-history.md.", "",
               "## Clients", "", "| client | version | from |", "|---|---|---|"]
        out += ["| %s | %s | %s |" % v for v in vers]
        out += ["", "## Layouts", "", "Each client gets fresh roots from `gpu-validator mock install --node-name node-1 "
                "--device-nodes=char`:", "", "| layout | profile |", "|---|---|"]
        out += ["| %s | %s |" % l for l in LAYOUTS]
        for client, _ in CLIENTS:
            rows = [r for r in self.results if r[0] == client]
            if not rows:
                continue
            ver = dict((c, v) for c, v, _ in vers).get(client, "")
            out += ["", "## %s %s" % (client, ver), "", NOTES[client], "", "| layout | check | result | |", "|---|---|---|---|"]
            for _, lay, check, ok, detail in rows:
                out.append("| %s | %s | %s | %s |" % (lay, check, str(detail).replace("|", "\\|").replace("\n", " "),
                                                    "pass" if ok else "**FAIL**"))
        return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SOURCE, "build", "ci"))
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = [c for c in args.only.split(",") if c]
    suite = Suite(args)
    t0 = time.time()
    if os.geteuid() != 0:
        print("1..0 # SKIP the real-client suite needs root (mount namespaces, character device nodes)")
        return 0 if not IN_CI else 1
    if not os.access(suite.gv, os.X_OK):
        print("not ok 1 - gpu-validator built\n#   no executable %s (build first; GV_BIN names another)\n1..1" % suite.gv)
        return 1
    missing = suite.prepare(only)
    suite.tap(not missing, "clients installed at their pins", "could not prepare: %s (see the log)" % missing)
    if missing and not IN_CI and not os.environ.get("GV_CLIENTS_REQUIRED"):
        print("# SKIP: clients unavailable here (no network?); CI=true makes this a failure")
        print("1..%d" % suite.n)
        return 0
    if suite.py and os.path.realpath(sys.executable) != os.path.realpath(suite.py):
        # The rest runs in the suite's venv (PyYAML for the CDI specs).
        os.environ["GV_CLIENTS_PREPARED"] = "1"
    import importlib.util
    if importlib.util.find_spec("yaml") is None and suite.py:
        site = run([suite.py, "-c", "import yaml, os; print(os.path.dirname(os.path.dirname(yaml.__file__)))"]).stdout.strip()
        sys.path.insert(0, site)
    suite.run_all(only)
    doc = suite.document(versions(suite.py))
    os.makedirs(args.build, exist_ok=True)
    with open(os.path.join(args.build, "real-clients.md"), "w") as f:
        f.write(doc)
    target = os.path.join(SOURCE, "docs", "real-clients.md")
    if args.write_docs:
        with open(target, "w") as f:
            f.write(doc)
        log("wrote " + target)
    elif not only:
        same = os.path.exists(target) and open(target).read() == doc
        suite.tap(same, "docs/real-clients.md is this run's output (tests/clients/run.py --write-docs)",
                  "differs from %s/real-clients.md" % args.build)
    for k, v in suite.cost.items():
        print("# cost %s: %.1f s" % (k, v))
    print("# total: %.0f s" % (time.time() - t0))
    print("1..%d" % suite.n)
    shutil.rmtree(suite.work, ignore_errors=True)
    return 0 if all(r[3] for r in suite.results) and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
