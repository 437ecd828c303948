"""Shared helpers for the end-to-end tests: paths to the built binaries,
temporary status folders and mock driver roots, and running the CLI."""
import os
import shutil
import subprocess
import tempfile
import unittest

BUILD = os.environ.get("GV_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
SOURCE = os.environ.get("GV_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("GV_SHARED_DIR", os.path.join(SOURCE, "..", "shared"))
GV = os.environ.get("GV_BIN", os.path.join(BUILD, "src", "cli", "gpu-validator"))
NVIDIA_SMI = os.environ.get("GV_NVIDIA_SMI", os.path.join(BUILD, "mock", "smi", "nvidia-smi"))
MOCK_NVML = os.environ.get("GV_MOCK_NVML", os.path.join(BUILD, "mock", "nvml", "libnvidia-ml.so.1"))

# Variables of the upstream validator that must not leak from the caller's
# environment into a test.
_UPSTREAM_VARS = [
    "COMPONENT", "NODE_NAME", "OPERATOR_NAMESPACE", "WITH_WAIT", "WITH_WORKLOAD", "OUTPUT_DIR",
    "SLEEP_INTERVAL_SECONDS", "HOST_ROOT", "DRIVER_INSTALL_DIR", "DRIVER_INSTALL_DIR_CTR_PATH",
    "DISABLE_DEV_CHAR_SYMLINK_CREATION", "DRIVER_VALIDATION_SKIP_GPU_INIT", "METRICS_PORT",
    "MOCK_NVML_CONFIG", "MOCK_NVML_DEBUG", "KUBECONFIG", "KUBERNETES_SERVICE_HOST",
]


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in _UPSTREAM_VARS and not k.startswith("MOCK_NVML_")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(args, env=None, timeout=120, check=None, input=None):
    """Run gpu-validator with @args; returns CompletedProcess (text)."""
    cmd = [GV] + list(args)
    p = subprocess.run(cmd, env=env if env is not None else clean_env(), capture_output=True, text=True,
                       timeout=timeout, input=input)
    if check is not None and p.returncode != check:
        raise AssertionError(f"{cmd} exited {p.returncode}, expected {check}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def read_marker(path):
    """Parse a KEY=value marker the way `sh -c '. file; env'` would, via sh itself."""
    out = subprocess.run(["sh", "-c", 'set -a; . "$1"; env -0', "sh", path], capture_output=True, check=True,
                         env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}).stdout
    env = {}
    for item in out.split(b"\0"):
        if b"=" in item:
            k, v = item.split(b"=", 1)
            env[k.decode()] = v.decode()
    return env


class TempDirTestCase(unittest.TestCase):
    """A test case with self.tmp, a fresh folder removed afterwards."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gv-e2e-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

# The mock library's fault switch for nvmlInit (docs/mock-nvml.md).
MOCK_FAULT_INIT_VAR = "MOCK_NVML_INIT_ERROR"
