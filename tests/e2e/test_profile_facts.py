"""The static facts of the built-in profiles against real captures (issue 10 item 6).

Each case installs a mock root for one built-in profile, runs its nvidia-smi -q -x and compares
one element of the first GPU with what a real nvidia-smi -q -x of the same model prints. Captures
in shared/cases/nvidia-smi/ are read at test time; facts from NVIDIA/k8s-test-infra's hardware
captures (tests/e2e/go/assertions/nvidiasmi/testdata/hardware/, commit 3b2b865d91b1) are quoted
here with their file, since that folder is not part of shared/.
"""
import os
import subprocess
import xml.etree.ElementTree as ET

import gvtest

CAPTURES = os.path.join(gvtest.SHARED, "cases", "nvidia-smi")
K8S_TEST_INFRA = "NVIDIA/k8s-test-infra@3b2b865d91b1:tests/e2e/go/assertions/nvidiasmi/testdata/hardware/"

# (profile, element path under <gpu>, capture file in shared/ or a quoted value with its source)
FROM_SHARED = [
    ("t4", "product_brand", "xml__tesla-t4_515.105.01.xml"),
    ("a100-sxm4-40gb", "display_mode", "xml__a100-sxm4-40gb_mig-enabled_510.47.03.xml"),
    ("a100-sxm4-80gb", "display_mode", "xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml"),
    ("h100-sxm5-80gb", "max_clocks/video_clock", "xml__k8s-test-infra_qx-h100.xml"),
    ("a100-sxm4-80gb", "gpu_power_readings/current_power_limit", "xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml"),
    ("a100-sxm4-80gb", "gpu_power_readings/default_power_limit", "xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml"),
    ("a100-sxm4-80gb", "gpu_power_readings/min_power_limit", "xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml"),
    ("a100-sxm4-80gb", "gpu_power_readings/max_power_limit", "xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml"),
]
QUOTED = [
    ("b200", "max_clocks/video_clock", "1965 MHz", "qx-b200.xml"),
    ("b200", "max_clocks/graphics_clock", "1965 MHz", "qx-b200.xml"),
    ("b200", "gpu_power_readings/max_power_limit", "1000.00 W", "qx-b200.xml"),
]


class TestProfileFacts(gvtest.TempDirTestCase):
    def smi_xml(self, profile):
        root = self.path("root-" + profile)
        gvtest.run(["mock", "install", "--root", root, "--profile", profile, "--gpus", "1",
                    "--device-nodes=files"], check=0)
        p = subprocess.run([os.path.join(root, "usr", "bin", "nvidia-smi"), "-q", "-x"],
                           env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return ET.fromstring(p.stdout).find("gpu")

    def test_facts_equal_shared_captures(self):
        for profile, path, capture in FROM_SHARED:
            with self.subTest(profile=profile, path=path):
                real = ET.parse(os.path.join(CAPTURES, capture)).getroot().find("gpu").findtext(path)
                self.assertIsNotNone(real, f"{capture} has no {path}")
                self.assertEqual(self.smi_xml(profile).findtext(path), real.strip(), f"{profile} {path} vs {capture}")

    def test_facts_equal_k8s_test_infra_captures(self):
        for profile, path, real, capture in QUOTED:
            with self.subTest(profile=profile, path=path):
                self.assertEqual(self.smi_xml(profile).findtext(path), real,
                                 f"{profile} {path} vs {K8S_TEST_INFRA}{capture}")
