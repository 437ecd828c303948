"""A node laid out in a temporary folder for end-to-end tests of the chain:
a host root, a driver install dir, a status folder, a CDI folder, with a mock
driver root installed where a test wants it."""
import os
import subprocess

import gvtest


class Node:
    """Paths of one fake node under @base."""

    def __init__(self, base):
        self.base = base
        self.host = os.path.join(base, "host")           # HOST_ROOT
        self.driver = os.path.join(base, "driver")       # DRIVER_INSTALL_DIR
        self.status = os.path.join(base, "validations")  # OUTPUT_DIR
        self.cdi = os.path.join(base, "cdi")
        self.devchar = os.path.join(base, "dev-char")
        self.boot_id = os.path.join(base, "boot_id")
        for d in (self.host, self.driver, self.status, self.cdi):
            os.makedirs(d, exist_ok=True)
        self.set_boot_id("6f1c7d52-0c7e-4e8e-9d4a-1b1d2f3a4b5c")

    def _ensure_runtime(self):
        """The toolkit check looks at host paths under the host root: give this
        host a containerd configured with the NVIDIA runtime (after any mock
        install into the host root, which wants an empty folder)."""
        if os.path.exists(os.path.join(self.host, "etc", "containerd", "config.toml")):
            return
        os.makedirs(os.path.join(self.host, "etc", "containerd"), exist_ok=True)
        with open(os.path.join(self.host, "etc", "containerd", "config.toml"), "w") as f:
            f.write('[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
                    '  BinaryName = "/usr/bin/nvidia-container-runtime"\n')
        os.makedirs(os.path.join(self.host, "usr", "bin"), exist_ok=True)
        rt = os.path.join(self.host, "usr", "bin", "nvidia-container-runtime")
        with open(rt, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(rt, 0o755)

    def set_boot_id(self, value):
        with open(self.boot_id, "w") as f:
            f.write(value + "\n")
        self.boot = value

    def install_mock(self, root, gpus=2, profile="a100-sxm4-40gb", extra=()):
        """`gpu-validator mock install` into @root ("host" or "driver" or a path)."""
        root = {"host": self.host, "driver": self.driver}.get(root, root)
        return gvtest.run(["mock", "install", "--profile", profile, "--root", root, "--gpus", str(gpus),
                           "--cdi-dir", self.cdi, "--device-nodes", "files", "--node-name", "node-a",
                           *extra], check=0)

    def args(self, *extra):
        """Validation options that keep the run inside this fake node."""
        self._ensure_runtime()
        return ["--output-dir", self.status, "--boot-id-file", self.boot_id, "--host-root", self.host,
                "--driver-install-dir", self.driver, "--driver-install-dir-ctr-path", self.driver,
                "--cdi-dir", "/etc/cdi", "--dev-char-dir", self.devchar, "--dev-node-wait", "1",
                "--runtime-config", "/etc/containerd/config.toml", *extra]

    def run(self, components="driver,toolkit", *extra, env=None, check=None, timeout=120):
        return gvtest.run(["run", "--components", components, *self.args(*extra)], env=env, check=check,
                          timeout=timeout)

    def store_args(self):
        return ["--output-dir", self.status, "--boot-id-file", self.boot_id]

    def marker(self, name):
        return os.path.join(self.status, name)

    def exists(self, name):
        return os.path.lexists(self.marker(name))

    def present(self):
        return sorted(n for n in os.listdir(self.status) if n.endswith("-ready") and not n.startswith("."))

    def read(self, name):
        return gvtest.read_marker(self.marker(name))


PARENT = {
    "toolkit-ready": ("driver-ready", "DRIVER_GENERATION"),
    "cuda-ready": ("toolkit-ready", "TOOLKIT_GENERATION"),
    "plugin-ready": ("cuda-ready", "CUDA_GENERATION"),
    "nvidia-fs-ready": ("driver-ready", "DRIVER_GENERATION"),
    "gdrcopy-ready": ("driver-ready", "DRIVER_GENERATION"),
    "nvidia-peermem-ready": ("driver-ready", "DRIVER_GENERATION"),
    "vgpu-devices-ready": ("vgpu-manager-ready", "VGPU_MANAGER_GENERATION"),
}


def parse_plain(path):
    """Parse a marker without a shell (fast path for many checks): KEY=value with
    sh single quoting as gpu-validator writes it."""
    with open(path, "rb") as f:
        text = f.read().decode()
    out, i, n = {}, 0, len(text)
    while i < n:
        j = text.find("=", i)
        if j < 0:
            break
        key = text[i:j]
        i = j + 1
        val = []
        while i < n and text[i] != "\n":
            if text[i] == "'":
                k = text.index("'", i + 1)
                val.append(text[i + 1:k])
                i = k + 1
            elif text.startswith("\\'", i):
                val.append("'")
                i += 2
            else:
                val.append(text[i])
                i += 1
        out[key.strip()] = "".join(val)
        i += 1
    return out


def invariant_violations(status_dir, boot_id):
    """The chain invariant, checked independently of gpu-validator's code:
    every present marker has valid content for this boot, and its parent is
    present with the generation it records.  Returns a list of problems."""
    problems = []
    names = [n for n in os.listdir(status_dir) if n.endswith("-ready") and not n.startswith(".")]
    content = {}
    for n in names:
        p = os.path.join(status_dir, n)
        if os.path.islink(p) or not os.path.isfile(p):
            problems.append(f"{n}: not a regular file")
            continue
        try:
            content[n] = parse_plain(p)
        except (ValueError, UnicodeDecodeError) as e:
            problems.append(f"{n}: unparsable ({e})")
    for n, kv in content.items():
        if kv.get("BOOT_ID") != boot_id:
            problems.append(f"{n}: BOOT_ID {kv.get('BOOT_ID')!r} is not this boot")
        if len(kv.get("GENERATION", "")) != 32:
            problems.append(f"{n}: no GENERATION")
        if n in PARENT:
            parent, key = PARENT[n]
            if parent not in content:
                problems.append(f"{n} present without {parent}")
            elif content[parent].get("GENERATION") != kv.get(key):
                problems.append(f"{n}: {key}={kv.get(key)} but {parent} has {content[parent].get('GENERATION')}")
    return problems


def sh(script, env=None, timeout=60):
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, timeout=timeout)
