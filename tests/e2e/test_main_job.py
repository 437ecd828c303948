"""The README's main job: `gpu-validator run --mock` on a machine without a GPU."""
import os
import re
import shutil
import subprocess
import tempfile

import chain
import gvtest


class TestRunMock(gvtest.TempDirTestCase):
    def test_run_mock_validates_driver_and_toolkit(self):
        work = self.path("mock")
        p = gvtest.run(["run", "--mock", "--mock-dir", work], check=0)
        out = p.stdout
        self.assertIn(os.path.join(work, "driver-root"), out)
        self.assertRegex(out, r"(?m)^driver\s+ok\s+\d+\.\d+s")
        self.assertRegex(out, r"(?m)^toolkit\s+ok\s+\d+\.\d+s")
        self.assertRegex(out, r"(?m)^driver-ready\s+ready")
        self.assertRegex(out, r"(?m)^toolkit-ready\s+ready")
        self.assertIn("8 GPUs", out)
        status = os.path.join(work, "validations")
        d = gvtest.read_marker(os.path.join(status, "driver-ready"))
        self.assertEqual(d["GPU_COUNT"], "8")
        self.assertEqual(d["IS_HOST_DRIVER"], "false")
        self.assertEqual(d["NVIDIA_DRIVER_ROOT"], os.path.join(work, "driver-root"))
        t = gvtest.read_marker(os.path.join(status, "toolkit-ready"))
        self.assertEqual(t["DRIVER_GENERATION"], d["GENERATION"])
        self.assertEqual(chain.invariant_violations(status, d["BOOT_ID"]), [])
        # wait agrees, and the root's own nvidia-smi works with no environment at all.
        gvtest.run(["wait", "toolkit", "--timeout", "5", "--output-dir", status], check=0)
        smi = subprocess.run(["env", "-i", os.path.join(work, "driver-root", "usr", "bin", "nvidia-smi"), "-L"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(smi.returncode, 0, smi.stdout + smi.stderr)
        self.assertEqual(len(re.findall(r"(?m)^GPU \d+: NVIDIA A100-SXM4-40GB \(UUID: GPU-", smi.stdout)), 8)

    def test_run_mock_twice_and_other_profile(self):
        work = self.path("mock")
        gvtest.run(["run", "--mock", "--mock-dir", work], check=0)
        p = gvtest.run(["run", "--mock=h100-sxm5-80gb", "--gpus", "2", "--mock-dir", work], check=0)
        self.assertIn("2 GPUs", p.stdout)
        self.assertIn("NVIDIA H100 80GB HBM3", p.stdout)

    def test_run_mock_relative_work_folder(self):
        p = subprocess.run([gvtest.GV, "run", "--mock", "--mock-dir", "rel"], cwd=self.tmp, capture_output=True,
                           text=True, timeout=120, env=gvtest.clean_env())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        d = gvtest.read_marker(self.path("rel", "validations", "driver-ready"))
        self.assertEqual(d["NVIDIA_DRIVER_ROOT"], os.path.realpath(self.path("rel", "driver-root")))

    def test_run_mock_refuses_a_work_folder_others_can_write(self):
        work = self.path("shared")
        os.makedirs(work)
        os.chmod(work, 0o777)
        p = gvtest.run(["run", "--mock", "--mock-dir", work], check=2)
        self.assertIn("writable by other users", p.stderr)
        self.assertEqual(os.listdir(work), [])
        link = self.path("link")
        os.symlink(self.path("elsewhere"), link)
        os.makedirs(self.path("elsewhere"))
        p = gvtest.run(["run", "--mock", "--mock-dir", link], check=2)
        self.assertIn("symbolic link", p.stderr)
        self.assertEqual(os.listdir(self.path("elsewhere")), [])

    def test_run_mock_bad_profile_is_a_configuration_error(self):
        bad = self.path("bad.yaml")
        with open(bad, "w") as f:
            f.write("gpu:\n  name: [unterminated\n")
        p = gvtest.run(["run", "--mock=" + bad, "--mock-dir", self.path("mock")], check=2)
        self.assertIn("bad.yaml", p.stderr)

    def test_run_mock_as_an_ordinary_user(self):
        if os.getuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root to switch to an ordinary user")
        work = tempfile.mkdtemp(prefix="gv-user-")
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        os.chmod(work, 0o777)
        # The checkout may sit below a folder the user cannot enter (a 0700 home or mktemp -d):
        # copy what runs into the installed layout, bin/ and lib/gpu-validator/ (docs/mock-driver-root.md).
        prefix = os.path.join(work, "prefix")
        os.makedirs(os.path.join(prefix, "bin"))
        os.makedirs(os.path.join(prefix, "lib", "gpu-validator"))
        gv = os.path.join(prefix, "bin", "gpu-validator")
        shutil.copy(gvtest.GV, gv)
        for src, name in ((gvtest.MOCK_NVML, "libnvidia-ml.so.1"), (gvtest.NVIDIA_SMI, "nvidia-smi")):
            shutil.copy(os.path.realpath(src), os.path.join(prefix, "lib", "gpu-validator", name))
        for d, _, _ in os.walk(prefix):
            os.chmod(d, 0o755)
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", gv,
                            "run", "--mock", "--mock-dir", os.path.join(work, "m")],
                           capture_output=True, text=True, timeout=120, env=gvtest.clean_env(HOME=work))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("device nodes: files", p.stdout)
        self.assertTrue(os.path.exists(os.path.join(work, "m", "validations", "toolkit-ready")))
