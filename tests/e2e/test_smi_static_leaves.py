"""Every static leaf of each real `nvidia-smi -q -x` capture against our nvidia-smi.

For each capture in shared/cases/nvidia-smi/ whose board has a built-in profile, our profile of that
board runs on the capture's driver version (which picks the driver branch's elements), with the
capture's MIG layout, and our GPU with the capture's minor number is compared leaf by leaf with the
capture's first GPU. A leaf is compared unless it is a reading that changes from second to second
(READINGS) or a fact of the one node the capture came from (PER_NODE: serials, bus ids, the VM the
capture ran in, ...), the leaves that differ on purpose. The agreement of the compared leaves must
stay at or above AGREEMENT_FLOOR; a leaf the capture has and ours lacks counts as a disagreement.
The figures and the leaves that still differ are printed as TAP comments (docs/nvidia-smi.md).
"""
import os
import unittest
import re

import gvtest
from test_nvidia_smi import CAPTURES, capture_and_ours

AGREEMENT_FLOOR = 95.0
# Today's agreement per capture, rounded down (a regression below it fails too); docs/nvidia-smi.md lists the
# leaves that still differ and why.
TODAY_FLOOR = {
    "xml__a100-sxm4-40gb_mig-enabled_510.47.03.xml": 99.0,
    "xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml": 98.0,
    "xml__tesla-t4_515.105.01.xml": 100.0,
    "xml__k8s-test-infra_qx-h100.xml": 99.0,
    "xml__k8s-test-infra_qx-l40s.xml": 99.0,
}

# Our profile and MIG layout for each capture, as the capture shows them (GI sizes from its MIG devices).
STATIC_CAPTURES = [
    ("xml__a100-sxm4-40gb_mig-enabled_510.47.03.xml", "a100-sxm4-40gb", "[{profile: 3g.20gb}, {profile: 3g.20gb}]"),
    ("xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml", "a100-sxm4-80gb",
     "[{profile: 1g.20gb}, {profile: 1g.20gb}, {profile: 1g.20gb}, {profile: 1g.20gb}]"),
    ("xml__tesla-t4_515.105.01.xml", "t4", None),
    ("xml__k8s-test-infra_qx-h100.xml", "h100-sxm5-80gb", None),
    ("xml__k8s-test-infra_qx-l40s.xml", "l40s", None),
]
# Boards of the shared captures without a built-in profile: not compared.
NO_PROFILE = ["xml__2x-rtx-a5000_590.44.01.xml", "xml__rtx-4090_535.86.05.xml"]

# Readings that move from second to second (or with the load): not static.
READINGS = [r"/fb_memory_usage/(used|free)$", r"/bar1_memory_usage/(used|free)$",
            r"^/temperature/(gpu_temp|memory_temp|gpu_temp_tlimit)$",
            r"^/(power_readings|gpu_power_readings|module_power_readings|gpu_memory_power_readings)/"
            r"(power_draw|average_power_draw|instant_power_draw|power_state)$",
            r"^/clocks/", r"^/voltage/", r"^/utilization/", r"^/encoder_stats/", r"^/fbc_stats/",
            r"^/pci/(tx_util|rx_util|replay_counter|replay_rollover_counter)$", r"^/performance_state$",
            r"^/(clocks_event_reasons|clocks_throttle_reasons)/", r"^/clocks_event_reasons_counters/",
            r"^/fan_speed$", r"^/processes/", r"^/accounted_processes/",
            r"^/pci/pci_gpu_link_info/pcie_gen/current_link_gen$"]
# Facts of the capture's node, not of the board and driver: differ on purpose.
PER_NODE = [r"^/serial$", r"^/uuid$", r"^/board_id$", r"^/pci/(pci_bus|pci_device|pci_domain|pci_bus_id)$",
            r"^/gpu_virtualization_mode/virtualization_mode$",  # captured in a VM (Pass-Through)
            r"^/persistence_mode$",  # the administrator's setting
            r"^/display_attached$",  # a display (or a virtual one) on that host
            r"^/pci/pci_gpu_link_info/link_widths/current_link_width$",  # the slot it sits in
            r"^/pci/pci_gpu_link_info/pcie_gen/max_host_link_gen$",  # the host's root port
            r"^/inforom_bbx_flush/",  # when that board last flushed its black box
            r"^/mig_devices/mig_device/gpu_instance_id$",  # the order its GIs were created in
            r"^/pdi$", r"^/gpu_module_id$", r"^/platformInfo/module_id$",  # the slot on the baseboard
            ]


def leaves(e, prefix=""):
    """[(path with indexes, path without, text)] of the leaves under @e, siblings numbered."""
    out, seen = [], {}
    for c in e:
        i = seen.get(c.tag, 0)
        seen[c.tag] = i + 1
        path, plain = "%s/%s[%d]" % (prefix, c.tag, i), re.sub(r"\[\d+\]", "", "%s/%s" % (prefix, c.tag))
        if len(c) == 0:
            out.append((path, plain, (c.text or "").strip()))
        else:
            out.extend((p, re.sub(r"\[\d+\]", "", p), t) for p, _, t in leaves(c, path))
    return out


def classify(plain):
    if any(re.search(r, plain) for r in READINGS):
        return "reading"
    if any(re.search(r, plain) for r in PER_NODE):
        return "per-node"
    return "static"


class TestStaticLeafAgreement(gvtest.TempDirTestCase):
    def test_static_leaves_agree(self):
        figures = []
        for capture, name, mig in STATIC_CAPTURES:
            with self.subTest(capture=capture):
                real, ours = capture_and_ours(self, capture, name, mig)
                mine = {p: t for p, _, t in leaves(ours)}
                counts = {"reading": 0, "per-node": 0}
                same, differ = 0, []
                for path, plain, text in leaves(real):
                    kind = classify(plain)
                    if kind != "static":
                        counts[kind] += 1
                        continue
                    if mine.get(path) == text:
                        same += 1
                    else:
                        differ.append("%s: real %r, ours %r" % (path, text, mine.get(path, "(missing)")))
                total = same + len(differ)
                share = 100.0 * same / total
                figures.append("%s: %d of %d static leaves agree (%.1f %%); %d readings and %d per-node leaves "
                               "not compared" % (capture, same, total, share, counts["reading"], counts["per-node"]))
                figures.extend("    differs: " + d for d in differ)
                self.assertGreaterEqual(share, max(AGREEMENT_FLOOR, TODAY_FLOOR[capture]), "\n".join(differ))
        print("# static leaves of the real captures:\n#   " + "\n#   ".join(figures))

    def test_captures_without_a_profile_are_listed(self):
        """Every shared -q -x capture is either compared or named here (a new capture must be placed)."""
        xml = sorted(f for f in os.listdir(CAPTURES) if f.startswith("xml__"))
        self.assertEqual(xml, sorted([c for c, _, _ in STATIC_CAPTURES] + NO_PROFILE))

    def test_classification_keeps_identity_and_board_facts_static(self):
        """The lists must not swallow the board's facts: product, part numbers, VBIOS, memory total, limits."""
        for plain in ["/product_name", "/vbios_version", "/board_part_number", "/fb_memory_usage/total",
                      "/fb_memory_usage/reserved", "/supported_clocks/supported_mem_clock/value",
                      "/display_mode", "/power_smoothing", "/sparse_operation_mode",
                      "/pci/pci_gpu_link_info/pcie_gen/max_link_gen", "/bar1_memory_usage/total"]:
            self.assertEqual(classify(plain), "static", plain)
        for plain in ["/serial", "/uuid", "/pci/pci_bus_id", "/temperature/gpu_temp", "/clocks/graphics_clock"]:
            self.assertNotEqual(classify(plain), "static", plain)


if __name__ == "__main__":
    unittest.main()
