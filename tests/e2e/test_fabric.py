"""End-to-end tests of the driver check's NVSwitch fabric readiness and
expected GPU count (gpu-operator #1043, #2511): the real
gpu-validator on a mock driver root whose profile (nvml-mock.yaml beside the
mock library, read at each nvmlInit) says what the fabric state is."""
import os
import subprocess
import time

import chain
import gvtest

PROFILE = "h100-sxm5-80gb"  # an HGX profile: every GPU reports fabric info


class FabricTestCase(gvtest.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.node = chain.Node(self.tmp)
        self.node.install_mock("driver", gpus=2, profile=PROFILE)
        self.profile = os.path.join(self.node.driver, "usr", "lib64", "nvml-mock.yaml")

    def set_fabric(self, state, status="0"):
        """Rewrite every GPU's fabric state and status in the installed profile."""
        with open(self.profile) as f:
            lines = f.read().split("\n")
        out, in_fabric = [], False
        for line in lines:
            s = line.strip()
            if s == "fabric:":
                in_fabric = True
            elif in_fabric and s.startswith("state:"):
                line = line[:line.index("state:")] + "state: " + state
            elif in_fabric and s.startswith("status:"):
                line = line[:line.index("status:")] + "status: " + status
                in_fabric = False
            out.append(line)
        tmp = self.profile + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(out))
        os.replace(tmp, self.profile)

    def smi(self, *args):
        env = gvtest.clean_env(LD_LIBRARY_PATH=os.path.join(self.node.driver, "usr", "lib64"))
        return subprocess.run([os.path.join(self.node.driver, "usr", "bin", "nvidia-smi"), *args], env=env,
                              capture_output=True, text=True, timeout=60)

    def bus_ids(self):
        p = self.smi("--query-gpu=pci.bus_id", "--format=csv,noheader")
        self.assertEqual(p.returncode, 0, p.stderr)
        return [b.strip() for b in p.stdout.split("\n") if b.strip()]


class TestFabric(FabricTestCase):
    def test_completed_passes(self):
        p = self.node.run("driver", check=0)
        self.assertTrue(self.node.exists("driver-ready"), p.stderr)

    def test_in_progress_times_out_with_each_gpu_named(self):
        self.set_fabric("in_progress")
        p = self.node.run("driver", "--wait", "--max-wait", "2", "--sleep-interval", "1", check=3)
        out = p.stdout + p.stderr
        self.assertIn("fabric-not-ready", out)
        for i, bus in enumerate(self.bus_ids()):
            self.assertIn(f"GPU {i} (bus id {bus}): state IN_PROGRESS, status N/A", out)
        self.assertFalse(self.node.exists("driver-ready"))

    def test_in_progress_then_completed_runner_retries_and_passes(self):
        self.set_fabric("in_progress")
        log = self.path("stderr.log")
        with open(log, "w") as errf:
            proc = subprocess.Popen([gvtest.GV, "run", "--components", "driver",
                                     *self.node.args("--wait", "--max-wait", "60", "--sleep-interval", "1")],
                                    env=gvtest.clean_env(), stdout=subprocess.DEVNULL, stderr=errf, text=True)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with open(log) as f:
                    if "fabric-not-ready: attempt 1" in f.read():
                        break
                time.sleep(0.05)
            else:
                self.fail("no failed attempt was logged")
            self.assertIsNone(proc.poll(), "the run ended instead of retrying")
            self.set_fabric("completed")  # the fabric manager finished training
            self.assertEqual(proc.wait(timeout=60), 0)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertTrue(self.node.exists("driver-ready"))
        self.assertEqual(self.node.read("driver-ready")["GPU_COUNT"], "2")

    def test_completed_with_error_status_fails(self):
        self.set_fabric("completed", "NVML_ERROR_UNKNOWN")
        p = self.node.run("driver", check=1)
        out = p.stdout + p.stderr
        self.assertIn("fabric-not-ready", out)
        self.assertIn("state COMPLETED, status Unknown Error (NVML_ERROR_UNKNOWN, 999): fabric training failed", out)
        self.assertFalse(self.node.exists("driver-ready"))

    def test_nvidia_smi_q_shows_fabric_state_and_status(self):
        """Labels as the real tool prints them (shared/cases/nvidia-smi/q__...h100...590.48.01.txt)."""
        p = self.smi("-q", "-i", "0")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"\n    Fabric\n        State +: Completed\n        Status +: Success\n"
                                   r"        CliqueId +: 0\n        ClusterUUID +: [0-9a-f-]{36}\n")
        self.set_fabric("in_progress")
        p = self.smi("-q", "-i", "0")
        self.assertRegex(p.stdout, r"\n    Fabric\n        State +: In Progress\n        Status +: N/A\n")


class TestExpectedGpus(FabricTestCase):
    def pci_fn(self, sysfs, addr, cls="0x030200", physfn=None):
        d = os.path.join(sysfs, "bus", "pci", "devices", addr)
        os.makedirs(d)
        for name, value in (("vendor", "0x10de"), ("class", cls)):
            with open(os.path.join(d, name), "w") as f:
                f.write(value + "\n")
        if physfn:
            os.symlink("../" + physfn, os.path.join(d, "physfn"))

    def test_gpu_missing_from_nvml_but_on_pci(self):
        sysfs = self.path("sys")
        for bus in self.bus_ids():  # "00000000:07:00.0" -> sysfs's "0000:07:00.0"
            self.pci_fn(sysfs, bus[4:].lower())
        self.pci_fn(sysfs, "0000:87:00.0")  # fell off: PCI shows it, NVML does not
        self.pci_fn(sysfs, "0000:87:00.1", cls="0x040300")  # its audio function
        self.pci_fn(sysfs, "0000:87:00.4", physfn="0000:87:00.0")  # a VF
        p = self.node.run("driver", "--sysfs-root", sysfs, check=1)
        out = p.stdout + p.stderr
        self.assertIn("gpu-missing", out)
        self.assertIn("NVML sees 2 GPU(s), 3 expected (PCI bus)", out)
        self.assertIn("not seen by NVML: 0000:87:00.0", out)
        self.assertNotIn("87:00.4", out)
        self.assertFalse(self.node.exists("driver-ready"))
        # without the sysfs root, a mock root's PCI bus is not counted
        self.node.run("driver", check=0)

    def test_expected_gpus_higher_than_nvml(self):
        p = self.node.run("driver", "--expected-gpus", "3", check=1)
        out = p.stdout + p.stderr
        self.assertIn("gpu-missing", out)
        self.assertIn("NVML sees 2 GPU(s), 3 expected (--expected-gpus / EXPECTED_GPU_COUNT)", out)
        self.assertFalse(self.node.exists("driver-ready"))
        p = self.node.run("driver", env=gvtest.clean_env(EXPECTED_GPU_COUNT=3), check=1)
        self.assertIn("3 expected", p.stdout + p.stderr)
        self.node.run("driver", "--expected-gpus", "2", check=0)
        self.assertTrue(self.node.exists("driver-ready"))
