"""The nvidia-smi commands people type (docs/nvidia-smi.md).

topo -m, mig -lgip/-lgi/-lci/-lcip, -q -d, --query-compute-apps, dmon/pmon -c,
-l/-lms, nvlink -s, -pm/-r (refused for a user who is not root, as the real
tool refuses them) and `mock set process=PID:MIB:NAME` (the name shown, the
memory counted in memory.used).  Layouts are the real tool's as NVIDIA's MIG
user guide and public transcripts show them: the header lines are compared
byte for byte, the rows by their column positions.  Expected values come from
`mock profiles --report` and the profile YAML, not from nvidia-smi's code.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import unittest

import gvtest

NODE = "e2e-smi-commands"
MIG4 = "[{profile: 3g.40gb}, {profile: 2g.20gb}, {profile: 1g.10gb}, {profile: 1g.10gb}]"

# The real tool's boxes (MIG user guide; R535 on: the GPU instance tables' Name column two wider).
LGIP_HEAD = {
    16: ["+-----------------------------------------------------------------------------+",
         "| GPU instance profiles:                                                      |",
         "| GPU   Name             ID    Instances   Memory     P2P    SM    DEC   ENC  |",
         "|                              Free/Total   GiB              CE    JPEG  OFA  |",
         "|=============================================================================|"],
    18: ["+-------------------------------------------------------------------------------+",
         "| GPU instance profiles:                                                        |",
         "| GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC  |",
         "|                                Free/Total   GiB              CE    JPEG  OFA  |",
         "|===============================================================================|"],
}
LGI_HEAD = {
    16: ["+-------------------------------------------------------+",
         "| GPU instances:                                        |",
         "| GPU   Name             Profile  Instance   Placement  |",
         "|                          ID       ID       Start:Size |",
         "|=======================================================|"],
    18: ["+---------------------------------------------------------+",
         "| GPU instances:                                          |",
         "| GPU   Name               Profile  Instance   Placement  |",
         "|                            ID       ID       Start:Size |",
         "|=========================================================|"],
}
LCI_HEAD = ["+--------------------------------------------------------------------+",
            "| Compute instances:                                                 |",
            "| GPU     GPU       Name             Profile   Instance   Placement  |",
            "|       Instance                       ID        ID       Start:Size |",
            "|         ID                                                         |",
            "|====================================================================|"]
LCIP_HEAD = ["+--------------------------------------------------------------------------------------+",
             "| Compute instance profiles:                                                           |",
             "| GPU     GPU       Name             Profile  Instances   Exclusive       Shared       |",
             "|       Instance                       ID     Free/Total     SM       DEC   ENC   OFA  |",
             "|         ID                                                          CE    JPEG       |",
             "|======================================================================================|"]

DMON_HEAD = ["# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk ",
             "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz "]
PMON_HEAD = ["# gpu         pid   type     sm    mem    enc    dec    jpg    ofa    command ",
             "# Idx           #    C/G      %      %      %      %      %      %    name "]

NOT_MODELLED = "not modelled by gpu-validator's nvidia-smi"
INVALID = "Invalid combination of input arguments"


def h100_profile(test, name, gpus=2, mig=None, driver=None):
    """A copy of the built-in h100-sxm5-80gb profile with @gpus GPUs, MIG devices @mig, driver @driver."""
    text = open(os.path.join(gvtest.SOURCE, "mock", "profiles", "h100-sxm5-80gb.yaml")).read()
    text = re.sub(r"(?m)^gpu_count: \d+$", "gpu_count: %d" % gpus, text)
    if driver:
        text, n = re.subn(r'(?m)^(  version: )"[^"]*"', r'\g<1>"%s"' % driver, text, count=1)
        test.assertEqual(n, 1)
    if mig is not None:
        text = text.replace("    mode: disabled", "    mode: enabled")
        text = text.replace("    devices: []", "    devices: " + mig)
    path = test.path(name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


class SmiCase(gvtest.TempDirTestCase):
    def smi(self, cfg, *args, env=None, user=None, timeout=60):
        e = {"PATH": "/usr/bin:/bin", "MOCK_NVML_CONFIG": cfg}
        e.update(env or {})
        cmd = [gvtest.NVIDIA_SMI] + list(args)
        if user is not None:
            cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
        return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)

    def report(self, cfg):
        return json.loads(gvtest.run(["mock", "profiles", "--report", cfg], check=0).stdout)

    def assertNotModelled(self, p, what):
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(what + ": " + NOT_MODELLED, p.stdout)
        self.assertNotIn(INVALID, p.stdout)


class TestTopoAndNvlink(SmiCase):
    def test_topo_matrix(self):
        cfg = h100_profile(self, "plain", gpus=4)
        links = 18  # an H100 SXM5's NVLinks, all through the NVSwitches
        p = self.smi(cfg, "topo", "-m")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lines = p.stdout.split("\n")
        self.assertEqual(lines[0], "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m")
        for i in range(4):
            cells = lines[1 + i].split("\t")
            self.assertEqual(cells[0], "GPU%d" % i)
            self.assertEqual(len(cells), 1 + 4 + 4, cells)  # name, 4 GPUs, CPU, NUMA, an empty cell, GPU NUMA ID
            for j in range(4):
                # SXM5 GPUs reach each other through NVSwitches: every pair bonded by all 18 links
                self.assertEqual(cells[1 + j], " X " if i == j else "NV%d" % links, cells)
            self.assertRegex(cells[5], r"^(\d+(-\d+)?)(,\d+(-\d+)?)*$|^N/A$")
            self.assertEqual(cells[8], "N/A")
        self.assertEqual(lines[5], "")
        self.assertEqual(lines[6], "Legend:")
        self.assertIn("  X    = Self", lines)
        self.assertIn("  NV#  = Connection traversing a bonded set of # NVLinks", lines)
        self.assertIn("  PIX  = Connection traversing at most a single PCIe bridge", lines)

    def test_topo_other_options_say_not_modelled(self):
        cfg = h100_profile(self, "plain")
        self.assertNotModelled(self.smi(cfg, "topo", "-p2p", "r"), "nvidia-smi topo -p2p")

    def test_nvlink_status_up_and_down(self):
        root = self.path("root")
        gvtest.run(["mock", "install", "--root", root, "--profile", "h100-sxm5-80gb", "--gpus", "2",
                    "--node-name", NODE, "--device-nodes=files"], check=0)
        smi = os.path.join(root, "usr", "bin", "nvidia-smi")
        env = {"PATH": "/usr/bin:/bin"}
        p = subprocess.run([smi, "nvlink", "-s"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lines = p.stdout.rstrip("\n").split("\n")
        self.assertRegex(lines[0], r"^GPU 0: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f-]{36}\)$")
        self.assertEqual(lines[1:19], ["\t Link %d: 26.562 GB/s" % l for l in range(18)])
        self.assertRegex(lines[19], r"^GPU 1: ")
        self.assertEqual(len(lines), 38)
        gvtest.run(["mock", "set", "--root", root, "--gpu", "1", "nvlink=down"], check=0)
        p = subprocess.run([smi, "nvlink", "-s", "-i", "1"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.stdout.rstrip("\n").split("\n")[1:],
                         ["\t Link %d: <inactive>" % l for l in range(18)])


class TestMigLists(SmiCase):
    def check_box(self, out, head):
        lines = out.rstrip("\n").split("\n")
        self.assertEqual(lines[:len(head)], head)
        self.assertTrue(all(len(l) == len(head[0]) for l in lines), [l for l in lines if len(l) != len(head[0])])
        return lines[len(head):]

    def test_lgip_before_and_from_535(self):
        for driver, w in (("525.85.12", 16), ("550.163.01", 18)):
            cfg = h100_profile(self, "mig-%s" % driver, gpus=1, mig="[]", driver=driver)
            p = self.smi(cfg, "mig", "-lgip")
            self.assertEqual(p.returncode, 0, p.stdout)
            rows = self.check_box(p.stdout, LGIP_HEAD[w])
            # each profile: its row, the CE/JPEG/OFA row, an edge
            names = [r[7:7 + w].rstrip() for r in rows[0::3]]
            self.assertEqual(names, ["MIG 1g.10gb", "MIG 1g.10gb+me", "MIG 1g.20gb", "MIG 2g.20gb", "MIG 3g.40gb",
                                     "MIG 4g.40gb", "MIG 7g.80gb"])
            free = [re.search(r"\s(\d+/\d+)\s", r[7 + w:]).group(1) for r in rows[0::3]]
            # MIG on and no instance: every profile's whole count is free
            self.assertEqual(free, ["7/7", "1/1", "4/4", "3/3", "2/2", "1/1", "1/1"])
            first = rows[0]
            self.assertEqual(first[:7 + w], "|   0  " + "MIG 1g.10gb".ljust(w))
            self.assertRegex(first[7 + w:], r"^\s+\d+\s{5}7/7 {8}9\.75 {7}No {5}16 {5}1 {5}0   \|$")
            self.assertEqual(rows[2], LGIP_HEAD[w][0])

    def test_lists_with_instances(self):
        cfg = h100_profile(self, "mig4", gpus=1, mig=MIG4)
        want = self.report(cfg)["gpus"][0]["mig_devices"]
        p = self.smi(cfg, "mig", "-lgip")
        rows = self.check_box(p.stdout, LGIP_HEAD[18])
        free = dict((r[7:25].rstrip(), re.search(r"\s(\d+)/\d+\s", r[25:]).group(1)) for r in rows[0::3])
        # 3g + 2g + 1g + 1g hold all seven compute slices
        self.assertEqual(set(free.values()), {"0"}, free)

        p = self.smi(cfg, "mig", "-lgi")
        self.assertEqual(p.returncode, 0, p.stdout)
        rows = self.check_box(p.stdout, LGI_HEAD[18])
        got = sorted((r[7:25].rstrip(), int(r[25:].split()[1])) for r in rows[0::2])
        self.assertEqual(got, sorted(("MIG " + d["profile"], d["gi_id"]) for d in want))
        for r in rows[0::2]:
            self.assertRegex(r, r"^\|   0  MIG \S+\s+\d+\s+\d+\s+\d:\d\s+\|$")

        p = self.smi(cfg, "mig", "-lci")
        self.assertEqual(p.returncode, 0, p.stdout)
        rows = self.check_box(p.stdout, LCI_HEAD)
        got = sorted(int(r.split()[2]) for r in rows[0::2])
        self.assertEqual(got, sorted(d["gi_id"] for d in want))

        p = self.smi(cfg, "mig", "-lcip")
        self.assertEqual(p.returncode, 0, p.stdout)
        rows = self.check_box(p.stdout, LCIP_HEAD)
        gi3 = next(d["gi_id"] for d in want if d["profile"] == "3g.40gb")
        p = self.smi(cfg, "mig", "-lcip", "-gi", str(gi3))
        rows = self.check_box(p.stdout, LCIP_HEAD)
        cells = [re.match(r"^\|   0\s+%d\s+MIG (\S+)\s+\d+([* ])\s+(\d+)/(\d+)\s" % gi3, r) for r in rows[0::3]]
        self.assertTrue(all(cells), rows)
        self.assertEqual([c.group(1) for c in cells], ["1c.3g.40gb", "2c.3g.40gb", "3g.40gb"])
        # the GPU instance's own compute profile is the default, starred
        self.assertEqual([c.group(2) for c in cells], [" ", " ", "*"])
        # the 3g compute instance holds the whole GPU instance: no room for 1c or 2c ones
        self.assertEqual([(c.group(3), c.group(4)) for c in cells], [("0", "3"), ("0", "1"), ("0", "1")])

    def test_not_mig_and_other_options(self):
        cfg = h100_profile(self, "plain")
        p = self.smi(cfg, "mig", "-lgi")
        self.assertEqual((p.returncode, p.stdout), (6, "No MIG-enabled devices found.\n"))
        self.assertNotModelled(self.smi(cfg, "mig", "-cgi", "9"), "nvidia-smi mig -cgi")


class TestQueries(SmiCase):
    def test_q_display_filter(self):
        cfg = h100_profile(self, "plain")
        p = self.smi(cfg, "-q", "-d", "MEMORY,UTILIZATION", "-i", "0")
        self.assertEqual(p.returncode, 0, p.stdout)
        top = [l.strip() for l in p.stdout.split("\n") if re.match(r"^    \S", l)]
        self.assertEqual(top[:2], ["FB Memory Usage", "BAR1 Memory Usage"])
        self.assertIn("Utilization", top)
        for gone in ("Product Name", "Temperature", "Clocks", "Processes", "ECC Mode"):
            self.assertFalse([l for l in top if l.startswith(gone)], (gone, top))
        self.assertIn("Attached GPUs", p.stdout)
        self.assertEqual(p.stdout.count("\nGPU 00000000:"), 1)
        p = self.smi(cfg, "-q", "-d", "temperature")
        self.assertEqual([l.strip() for l in p.stdout.split("\n") if re.match(r"^    \S", l)],
                         ["Temperature", "Temperature"])
        p = self.smi(cfg, "-q", "-d", "NO_SUCH")
        self.assertEqual(p.returncode, 2)
        self.assertIn(INVALID, p.stdout)

    def test_dmon_pmon_count(self):
        cfg = h100_profile(self, "plain")
        prof = self.report(cfg)
        p = self.smi(cfg, "dmon", "-c", "2")
        self.assertEqual(p.returncode, 0, p.stdout)
        lines = p.stdout.rstrip("\n").split("\n")
        self.assertEqual(lines[:2], DMON_HEAD)
        self.assertEqual(len(lines), 2 + 2 * 2)
        for k, line in enumerate(lines[2:]):
            g = prof["gpus"][k % 2]
            cells = line.split()
            self.assertEqual(len(line), len(DMON_HEAD[0]))
            self.assertEqual(cells[0], str(k % 2))
            self.assertEqual(int(cells[1]), round(g["power_usage_mw"] / 1000))
            self.assertEqual(int(cells[2]), g["temperature_c"])
            self.assertEqual(cells[3], "-")
            self.assertEqual(int(cells[4]), g["utilization_gpu"])
            self.assertEqual(int(cells[10]), g["clock_mem_mhz"])
            self.assertEqual(int(cells[11]), g["clock_graphics_mhz"])
        p = self.smi(cfg, "pmon", "-c", "1", "-i", "1")
        self.assertEqual(p.returncode, 0, p.stdout)
        lines = p.stdout.rstrip("\n").split("\n")
        self.assertEqual(lines[:2], PMON_HEAD)
        self.assertEqual(lines[2].split(), ["1", "-", "-", "-", "-", "-", "-", "-", "-", "-"])
        self.assertNotModelled(self.smi(cfg, "dmon", "-s", "pu", "-c", "1"), "nvidia-smi dmon -s")

    def test_loop_seconds_and_ms(self):
        cfg = h100_profile(self, "plain")
        temps = ["%d, %d\n" % (g["index"], g["temperature_c"]) for g in self.report(cfg)["gpus"]]
        for args, want, within in ((["-l", "1"], 3, 6), (["-lms", "100"], 5, 4)):
            proc = subprocess.Popen([gvtest.NVIDIA_SMI, "--query-gpu=index,temperature.gpu",
                                     "--format=csv,noheader"] + args, stdout=subprocess.PIPE, text=True,
                                    env={"PATH": "/usr/bin:/bin", "MOCK_NVML_CONFIG": cfg})
            try:
                start, lines = time.monotonic(), []
                while len(lines) < want * 2 and time.monotonic() - start < within:
                    lines.append(proc.stdout.readline())
                self.assertEqual(lines, temps * want, args)
                self.assertIsNone(proc.poll(), "still looping")
                proc.send_signal(signal.SIGINT)
                self.assertIn(proc.wait(timeout=10), (0, -signal.SIGINT), "Ctrl-C ends the loop")
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                proc.stdout.close()
        p = self.smi(cfg, "-l", "0")
        self.assertEqual(p.returncode, 2)


class TestProcessesAndChanges(SmiCase):
    def setUp(self):
        super().setUp()
        os.chmod(self.tmp, 0o755)  # readable by the user the -pm/-r tests drop to
        self.root = self.path("root")
        gvtest.run(["mock", "install", "--root", self.root, "--profile", "h100-sxm5-80gb", "--gpus", "2",
                    "--node-name", NODE, "--device-nodes=files"], check=0)
        self.smi_path = os.path.join(self.root, "usr", "bin", "nvidia-smi")

    def run_smi(self, *args, user=None):
        cmd = [self.smi_path] + list(args)
        if user is not None:
            cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
        return subprocess.run(cmd, env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)

    def used(self):
        p = self.run_smi("--query-gpu=memory.used,memory.free", "--format=csv,noheader,nounits")
        return [tuple(int(x) for x in l.split(", ")) for l in p.stdout.split("\n") if l]

    def test_process_name_and_memory(self):
        before = self.used()
        self.assertEqual(before[0][0], 0)
        gvtest.run(["mock", "set", "--root", self.root, "--gpu", "0", "process=4242:2048:trainer",
                    "process=4343:512"], check=0)
        p = self.run_smi("--query-compute-apps=pid,process_name,used_memory,gpu_bus_id", "--format=csv")
        self.assertEqual(p.returncode, 0, p.stdout)
        lines = p.stdout.rstrip("\n").split("\n")
        self.assertEqual(lines[0], "pid, process_name, used_memory [MiB], gpu_bus_id")
        self.assertEqual(lines[1], "4242, trainer, 2048 MiB, 00000000:07:00.0")
        self.assertTrue(lines[2].startswith("4343, "), lines)
        after = self.used()
        # a process's memory counts in the GPU's used memory, and leaves the free memory
        self.assertEqual(after[0], (before[0][0] + 2560, before[0][1] - 2560))
        self.assertEqual(after[1], before[1])
        table = self.run_smi().stdout
        self.assertRegex(table, r"\|    0   N/A  N/A            4242      C   trainer +2048MiB \|")
        self.assertIn("2560MiB /  81559MiB", table)
        xml = self.run_smi("-q", "-x").stdout
        self.assertIn("<process_name>trainer</process_name>", xml)
        p = self.run_smi("--query-compute-apps=pid,nosuch", "--format=csv")
        self.assertEqual((p.returncode, p.stdout), (2, 'Field "nosuch" is not a valid field to query.\n\n'))
        gvtest.run(["mock", "set", "--root", self.root, "--gpu", "0", "processes=clear"], check=0)
        self.assertEqual(self.used(), before)
        p = self.run_smi("--query-compute-apps=pid", "--format=csv,noheader")
        self.assertEqual(p.stdout, "")

    def test_process_memory_never_past_the_gpu(self):
        gvtest.run(["mock", "set", "--root", self.root, "--gpu", "1", "process=4242:900000:big"], check=0)
        used, free = self.used()[1]
        self.assertEqual(free, 0)
        self.assertEqual(used, 81559 - 480)

    @unittest.skipUnless(os.geteuid() == 0 and shutil.which("setpriv"), "needs root to drop to another user")
    def test_pm_and_reset_refused_for_a_user(self):
        p = self.run_smi("-pm", "0", user=65534)
        self.assertEqual(p.returncode, 4, p.stdout)
        self.assertEqual(p.stdout, "Unable to set persistence mode for GPU 00000000:07:00.0: Insufficient Permissions\n"
                                   "Terminating early due to previous errors.\n")
        p = self.run_smi("-r", "-i", "0", user=65534)
        self.assertEqual(p.returncode, 4, p.stdout)
        self.assertEqual(p.stdout, "The following GPUs could not be reset:\n"
                                   "  GPU 00000000:07:00.0: Insufficient Permissions\n")
        p = self.run_smi("-pm", "1", user=65534)  # nothing to change: the real tool says so to anyone
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("Persistence mode is already Enabled for GPU 00000000:07:00.0.", p.stdout)

    @unittest.skipUnless(os.geteuid() == 0, "as root")
    def test_reset_of_a_busy_gpu_as_root(self):
        gvtest.run(["mock", "set", "--root", self.root, "--gpu", "1", "process=4242:10:python3"], check=0)
        p = self.run_smi("-r", "-i", "1")
        self.assertEqual(p.returncode, 255, p.stdout)
        self.assertTrue(p.stdout.startswith("The following GPUs could not be reset:\n"
                                            "  GPU 00000000:0F:00.0: In use by another client\n\n"
                                            "1 device is currently being used by one or more other processes"),
                        p.stdout)
        p = self.run_smi("-r", "-i", "0")
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn(NOT_MODELLED, p.stdout)


class TestUnmodelledSaysSo(SmiCase):
    def test_each_says_not_modelled(self):
        cfg = h100_profile(self, "plain")
        for args, what in ((["-e", "0"], "-e"), (["-pl", "300"], "-pl"), (["vgpu"], "vgpu"),
                           (["--query-supported-clocks=gr", "--format=csv"], "--query-supported-clocks=gr"),
                           (["nvlink", "-e"], "nvidia-smi nvlink -e")):
            self.assertNotModelled(self.smi(cfg, *args), what)
        p = self.smi(cfg, "--no-such-option")
        self.assertEqual(p.returncode, 2)
        self.assertIn(INVALID, p.stdout)


if __name__ == "__main__":
    unittest.main()
