"""The static facts of the built-in profiles against real captures of the same models.

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
    # The Grace-Blackwell built-ins, GPU 0 of each 4-GPU capture.
    ("gb200", "product_name", "NVIDIA GB200", "qx-gb200.xml"),
    ("gb200", "product_architecture", "Blackwell", "qx-gb200.xml"),
    ("gb200", "pci/pci_device_id", "294110DE", "qx-gb200.xml"),
    ("gb200", "pci/pci_sub_system_id", "204610DE", "qx-gb200.xml"),
    ("gb200", "pci/pci_bus_id", "00000000:29:00.0", "qx-gb200.xml"),
    ("gb200", "vbios_version", "97.00.B9.00.69", "qx-gb200.xml"),
    ("gb200", "board_part_number", "900-2G548-A801-000", "qx-gb200.xml"),
    ("gb200", "fb_memory_usage/total", "189471 MiB", "qx-gb200.xml"),
    ("gb200", "fb_memory_usage/reserved", "742 MiB", "qx-gb200.xml"),
    ("gb200", "gpu_power_readings/current_power_limit", "1200.00 W", "qx-gb200.xml"),
    ("gb200", "gpu_power_readings/min_power_limit", "200.00 W", "qx-gb200.xml"),
    ("gb200", "gpu_power_readings/max_power_limit", "1200.00 W", "qx-gb200.xml"),
    ("gb200", "clocks/video_clock", "600 MHz", "qx-gb200.xml"),
    ("gb200", "max_clocks/graphics_clock", "2062 MHz", "qx-gb200.xml"),
    ("gb200", "max_clocks/mem_clock", "3996 MHz", "qx-gb200.xml"),
    ("gb200", "max_clocks/video_clock", "1890 MHz", "qx-gb200.xml"),
    ("gb200", "temperature/gpu_temp", "27 C", "qx-gb200.xml"),
    ("gb200", "mig_mode/current_mig", "Disabled", "qx-gb200.xml"),
    ("gb200", "fabric/state", "Completed", "qx-gb200.xml"),
    ("gb200", "fabric/cliqueId", "2", "qx-gb200.xml"),
    ("gb300", "product_name", "NVIDIA GB300", "qx-gb300.xml"),
    ("gb300", "product_architecture", "Blackwell", "qx-gb300.xml"),
    ("gb300", "pci/pci_device_id", "31C210DE", "qx-gb300.xml"),
    ("gb300", "pci/pci_sub_system_id", "21F110DE", "qx-gb300.xml"),
    ("gb300", "pci/pci_bus_id", "00000008:06:00.0", "qx-gb300.xml"),
    ("gb300", "vbios_version", "97.10.4A.00.1A", "qx-gb300.xml"),
    ("gb300", "board_part_number", "900-2G548-0081-000", "qx-gb300.xml"),
    ("gb300", "fb_memory_usage/total", "284208 MiB", "qx-gb300.xml"),
    ("gb300", "fb_memory_usage/reserved", "947 MiB", "qx-gb300.xml"),
    ("gb300", "gpu_power_readings/current_power_limit", "1400.00 W", "qx-gb300.xml"),
    ("gb300", "gpu_power_readings/min_power_limit", "200.00 W", "qx-gb300.xml"),
    ("gb300", "gpu_power_readings/max_power_limit", "1400.00 W", "qx-gb300.xml"),
    ("gb300", "clocks/video_clock", "600 MHz", "qx-gb300.xml"),
    ("gb300", "max_clocks/graphics_clock", "2070 MHz", "qx-gb300.xml"),
    ("gb300", "max_clocks/mem_clock", "3996 MHz", "qx-gb300.xml"),
    ("gb300", "max_clocks/video_clock", "1912 MHz", "qx-gb300.xml"),
    ("gb300", "temperature/gpu_temp", "38 C", "qx-gb300.xml"),
    ("gb300", "mig_mode/current_mig", "Disabled", "qx-gb300.xml"),
    ("gb300", "fabric/state", "Completed", "qx-gb300.xml"),
    ("gb300", "fabric/cliqueId", "32766", "qx-gb300.xml"),
]


class TestProfileFacts(gvtest.TempDirTestCase):
    def smi_xml(self, profile):
        if not hasattr(self, "_xml"):
            self._xml = {}
        if profile not in self._xml:
            self._xml[profile] = self.install_and_query(profile)
        return self._xml[profile]

    def install_and_query(self, profile):
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
