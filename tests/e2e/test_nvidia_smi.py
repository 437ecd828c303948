"""End-to-end tests of our nvidia-smi (mock/smi, docs/nvidia-smi.md).

Expected values come from `gpu-validator mock profiles --report` (the profile
library's own view, independent of nvidia-smi's code), the real captures in
shared/cases/nvidia-smi/, and third-party parsers from npm (tests/e2e/js:
node-nvidia-smi for -q -x; a CSV reader for --query-gpu).
"""
import json
import os
import re
import shutil
import subprocess
import unittest
import xml.etree.ElementTree as ET

import gvtest

JS_DIR = os.path.join(gvtest.SOURCE, "tests", "e2e", "js")
CAPTURES = os.path.join(gvtest.SHARED, "cases", "nvidia-smi")
NODE = "e2e-smi-node"

FIELDS = ["index", "name", "uuid", "pci.bus_id", "pci.sub_device_id", "driver_version", "memory.total",
          "memory.used", "memory.free", "utilization.gpu", "utilization.memory", "temperature.gpu", "power.draw",
          "power.limit", "clocks.gr", "clocks.mem", "fan.speed", "compute_cap", "mig.mode.current",
          "persistence_mode"]

# Which CSV fields a profile's `unsupported` names make unavailable.
UNSUPPORTED_FIELDS = {
    "temperature": {"temperature.gpu"},
    "power_usage": {"power.draw"},
    "power_limit": {"power.limit"},
    "clocks": {"clocks.gr", "clocks.mem"},
    "utilization": {"utilization.gpu", "utilization.memory"},
    "fan": {"fan.speed"},
    "persistence": {"persistence_mode"},
    "mig": {"mig.mode.current"},
}

GPU_LINE = re.compile(r"^GPU (\d+): (.+) \(UUID: (GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\)$")
MIG_LINE = re.compile(r"^  MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\)$")


def builtin_profiles():
    p = gvtest.run(["mock", "profiles"], check=0)
    return [l for l in p.stdout.split() if l]


def profile_json(name, gpus=None, node=NODE):
    args = ["mock", "profiles", "--report", name, "--node-name", node]
    if gpus:
        args += ["--gpus", str(gpus)]
    return json.loads(gvtest.run(args, check=0).stdout)


def expected_csv(prof, gpu):
    """The CSV cells for FIELDS computed from the profile JSON (None = unavailable)."""
    unsup = set()
    for u in gpu["unsupported"]:
        unsup |= UNSUPPORTED_FIELDS.get(u, set())
    if not gpu["mig_capable"]:
        unsup.add("mig.mode.current")
    total, res, used = gpu["memory_total_mib"], gpu["memory_reserved_mib"], gpu["memory_used_mib"]
    v = {
        "index": str(gpu["index"]),
        "name": gpu["name"],
        "uuid": gpu["uuid"],
        "pci.bus_id": gpu["pci_bus_id"],
        "pci.sub_device_id": "0x%08X" % gpu["pci_subsystem_id"],
        "driver_version": prof["driver_version"],
        "memory.total": f"{total} MiB",
        "memory.used": f"{used} MiB",
        "memory.free": f"{total - res - used} MiB",
        "utilization.gpu": f"{gpu['utilization_gpu']} %",
        "utilization.memory": f"{gpu['utilization_memory']} %",
        "temperature.gpu": str(gpu["temperature_c"]),
        "power.draw": "%.2f W" % (gpu["power_usage_mw"] / 1000),
        "power.limit": "%.2f W" % (gpu["power_limit_mw"] / 1000),
        "clocks.gr": f"{gpu['clock_graphics_mhz']} MHz",
        "clocks.mem": f"{gpu['clock_mem_mhz']} MHz",
        "fan.speed": f"{gpu['fan_speed']} %",
        "compute_cap": f"{gpu['cuda_cc_major']}.{gpu['cuda_cc_minor']}",
        "mig.mode.current": "Enabled" if gpu["mig_mode_current"] else "Disabled",
        "persistence_mode": "Enabled" if gpu["persistence_mode"] else "Disabled",
    }
    for f in unsup:
        v[f] = None
    return v


def element_paths(root):
    out = set()

    def walk(e, prefix):
        p = prefix + "/" + e.tag
        out.add(p)
        for c in e:
            walk(c, p)
    walk(root, "")
    return out


def capture_paths():
    paths = set()
    for f in sorted(os.listdir(CAPTURES)):
        if f.startswith("xml__"):
            paths |= element_paths(ET.parse(os.path.join(CAPTURES, f)).getroot())
    return paths


def dtd_version(driver_version):
    """The DTD version of a driver branch, as in the captures: v11 (510, 515), v12 (535), v13 (580 and later)."""
    branch = int(driver_version.split(".")[0])
    return 11 if branch < 535 else 12 if branch < 580 else 13


def node_modules_or_skip(test):
    if os.path.isdir(os.path.join(JS_DIR, "node_modules", "node-nvidia-smi")) and shutil.which("node"):
        return
    msg = "tests/e2e/js/node_modules missing (run: npm ci --prefix tests/e2e/js)"
    if os.environ.get("CI") == "true":
        test.fail(msg)
    test.skipTest(msg)


class MockRootCase(gvtest.TempDirTestCase):
    """Installs a mock root per profile; runs its nvidia-smi with an empty environment."""

    def install(self, profile, gpus=2, node=NODE):
        root = self.path("root-" + re.sub(r"[^a-z0-9]", "_", profile))
        gvtest.run(["mock", "install", "--root", root, "--profile", profile, "--gpus", str(gpus),
                    "--node-name", node, "--device-nodes=files"], check=0)
        return root

    def smi(self, root, *args, env=None):
        e = {"PATH": "/usr/bin:/bin"}
        e.update(env or {})
        return subprocess.run([os.path.join(root, "usr", "bin", "nvidia-smi")] + list(args), env=e,
                              capture_output=True, text=True, timeout=60)

    def csv_rows(self, out, fields):
        lines = out.strip().split("\n")
        header = lines[0].split(", ")
        self.assertEqual(len(header), len(fields))
        return header, [l.split(", ") for l in lines[1:]]


class TestEveryProfile(MockRootCase):
    def test_csv_values_equal_profile(self):
        for name in builtin_profiles():
            with self.subTest(profile=name):
                root = self.install(name)
                prof = profile_json(name, gpus=2)
                p = self.smi(root, "--query-gpu=" + ",".join(FIELDS), "--format=csv")
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                header, rows = self.csv_rows(p.stdout, FIELDS)
                self.assertIn("memory.total [MiB]", header)
                self.assertIn("utilization.gpu [%]", header)
                self.assertIn("power.draw [W]", header)
                self.assertIn("clocks.current.graphics [MHz]", header)
                self.assertEqual(len(rows), 2)
                for gpu, row in zip(prof["gpus"], rows):
                    want = expected_csv(prof, gpu)
                    got = dict(zip(FIELDS, row))
                    for f in FIELDS:
                        self.assertEqual(got[f], want[f] if want[f] is not None else "[N/A]", f"{name} {f}")

    def test_xml_values_equal_profile_and_names_exist_in_captures(self):
        real = capture_paths()
        for name in builtin_profiles():
            with self.subTest(profile=name):
                root = self.install(name)
                prof = profile_json(name, gpus=2)
                p = self.smi(root, "-q", "-x")
                self.assertEqual(p.returncode, 0, p.stdout)
                lines = p.stdout.split("\n")
                self.assertEqual(lines[0], '<?xml version="1.0" ?>')
                self.assertEqual(lines[1], '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v%d.dtd">'
                                 % dtd_version(prof["driver_version"]))
                for l in lines:
                    self.assertFalse(l.startswith(" "), f"space indentation: {l!r}")
                doc = ET.fromstring(p.stdout)
                missing = element_paths(doc) - real
                self.assertEqual(missing, set(), "element paths not in any real capture")
                self.assertEqual(doc.findtext("driver_version"), prof["driver_version"])
                self.assertEqual(doc.findtext("attached_gpus"), "2")
                gpus = doc.findall("gpu")
                self.assertEqual(len(gpus), 2)
                for g, want in zip(gpus, prof["gpus"]):
                    self.assertEqual(g.get("id"), want["pci_bus_id"])
                    self.assertEqual(g.findtext("product_name"), want["name"])
                    self.assertEqual(g.findtext("uuid"), want["uuid"])
                    self.assertEqual(g.findtext("pci/pci_bus_id"), want["pci_bus_id"])
                    self.assertEqual(g.findtext("pci/pci_sub_system_id"), "%08X" % want["pci_subsystem_id"])
                    self.assertEqual(g.findtext("fb_memory_usage/total"), f"{want['memory_total_mib']} MiB")
                    self.assertEqual(g.findtext("minor_number"), str(want["minor_number"]))
                    if "temperature" not in want["unsupported"]:
                        self.assertEqual(g.findtext("temperature/gpu_temp"), f"{want['temperature_c']} C")
                    else:
                        self.assertEqual(g.findtext("temperature/gpu_temp"), "N/A")

    def test_xml_parsed_by_node_nvidia_smi(self):
        node_modules_or_skip(self)
        for name in builtin_profiles():
            with self.subTest(profile=name):
                root = self.install(name)
                prof = profile_json(name, gpus=2)
                env = {"PATH": os.path.join(root, "usr", "bin") + ":" + os.environ.get("PATH", "/usr/bin:/bin")}
                p = subprocess.run(["node", os.path.join(JS_DIR, "parse-xml.js")], env=env, capture_output=True,
                                   text=True, timeout=60, cwd=JS_DIR)
                self.assertEqual(p.returncode, 0, p.stderr)
                data = json.loads(p.stdout)["nvidia_smi_log"]
                gpus = data["gpu"] if isinstance(data["gpu"], list) else [data["gpu"]]
                self.assertEqual([g["uuid"] for g in gpus], [g["uuid"] for g in prof["gpus"]])
                self.assertEqual([g["product_name"] for g in gpus], [g["name"] for g in prof["gpus"]])
                self.assertEqual(gpus[0]["$"]["id"], prof["gpus"][0]["pci_bus_id"])
                self.assertEqual(data["driver_version"], prof["driver_version"])

    def test_csv_parsed_by_node_script(self):
        node_modules_or_skip(self)
        name = builtin_profiles()[0]
        root = self.install(name)
        prof = profile_json(name, gpus=2)
        p = self.smi(root, "--query-gpu=" + ",".join(FIELDS), "--format=csv")
        self.assertEqual(p.returncode, 0)
        n = subprocess.run(["node", os.path.join(JS_DIR, "parse-csv.js")], input=p.stdout, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(n.returncode, 0, n.stderr)
        rows = json.loads(n.stdout)
        for gpu, row in zip(prof["gpus"], rows):
            want = expected_csv(prof, gpu)
            self.assertEqual(row["memory.total"], want["memory.total"])
            self.assertEqual(row["clocks.current.graphics"], want["clocks.gr"])
            self.assertEqual(row["fan.speed"], want["fan.speed"])
            self.assertEqual(row["uuid"], gpu["uuid"])

    def test_list_lines_match_real_format(self):
        for f in sorted(os.listdir(CAPTURES)):
            if f.startswith("L__"):
                for l in open(os.path.join(CAPTURES, f)).read().splitlines():
                    self.assertTrue(GPU_LINE.match(l) or MIG_LINE.match(l), f"regex does not fit capture {f}: {l!r}")
        for name in builtin_profiles():
            with self.subTest(profile=name):
                root = self.install(name)
                prof = profile_json(name, gpus=2)
                p = self.smi(root, "-L")
                self.assertEqual(p.returncode, 0)
                lines = p.stdout.strip().split("\n")
                self.assertEqual(len(lines), 2)
                for l, gpu in zip(lines, prof["gpus"]):
                    m = GPU_LINE.match(l)
                    self.assertIsNotNone(m, l)
                    self.assertEqual((int(m.group(1)), m.group(2), m.group(3)), (gpu["index"], gpu["name"], gpu["uuid"]))

    def test_default_table_is_91_wide(self):
        root = self.install("l40s")
        p = self.smi(root)
        self.assertEqual(p.returncode, 0)
        lines = p.stdout.split("\n")
        self.assertRegex(lines[0], r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}       $")
        for l in lines[1:]:
            if l:
                self.assertEqual(len(l), 91, repr(l))
        self.assertIn("|   0  NVIDIA L40S", p.stdout)


class TestBuildTree(gvtest.TempDirTestCase):
    """The build tree's nvidia-smi finds build/mock/nvml/libnvidia-ml.so.1 by itself."""

    def smi(self, *args, **env):
        e = {"PATH": "/usr/bin:/bin"}
        e.update({k: str(v) for k, v in env.items()})
        return subprocess.run([gvtest.NVIDIA_SMI] + list(args), env=e, capture_output=True, text=True, timeout=60)

    def mig_profile(self):
        text = open(os.path.join(gvtest.SOURCE, "mock", "profiles", "h100-sxm5-80gb.yaml")).read()
        text = re.sub(r"(?m)^gpu_count: \d+$", "gpu_count: 2", text)
        text = text.replace("    mode: disabled", "    mode: enabled")
        text = text.replace("    devices: []", "    devices: [{profile: 3g.40gb}, {profile: 2g.20gb}, "
                                                "{profile: 1g.10gb}, {profile: 1g.10gb}]")
        path = self.path("mig.yaml")
        open(path, "w").write(text)
        return path

    def test_mig_children_in_list_and_tables(self):
        cfg = self.mig_profile()
        prof = json.loads(gvtest.run(["mock", "profiles", "--report", cfg], check=0).stdout)
        p = self.smi("-L", MOCK_NVML_CONFIG=cfg)
        self.assertEqual(p.returncode, 0, p.stdout)
        lines = p.stdout.strip().split("\n")
        self.assertEqual(len(lines), 2 + 8)
        migs = [MIG_LINE.match(l) for l in lines[1:5]]
        self.assertTrue(all(migs), lines)
        want = prof["gpus"][0]["mig_devices"]
        self.assertEqual([m.group(1) for m in migs], [w["profile"] for w in want])
        self.assertEqual([m.group(3) for m in migs], [w["uuid"] for w in want])
        self.assertEqual(lines[1][:len("  MIG 3g.40gb     Device  0:")], "  MIG 3g.40gb     Device  0:")
        t = self.smi(MOCK_NVML_CONFIG=cfg)
        self.assertIn("| MIG devices:", t.stdout)
        self.assertIn("|     N/A      Default |", t.stdout)  # GPU-Util under MIG
        self.assertIn("|              Enabled |", t.stdout)
        for l in t.stdout.split("\n")[1:]:
            if l:
                self.assertEqual(len(l), 91, repr(l))
        x = self.smi("-q", "-x", MOCK_NVML_CONFIG=cfg)
        doc = ET.fromstring(x.stdout)
        self.assertEqual(element_paths(doc) - capture_paths(), set())
        self.assertEqual(len(doc.findall("gpu/mig_devices/mig_device")), 8)
        c = self.smi("--query-gpu=mig.mode.current,utilization.gpu", "--format=csv,noheader", MOCK_NVML_CONFIG=cfg)
        self.assertEqual(c.stdout.split("\n")[0].split(", ")[0], "Enabled")

    def test_select_by_index_uuid_busid_and_list(self):
        prof = profile_json("a100-sxm4-40gb", node="sel-node")
        g = prof["gpus"]
        env = {"NODE_NAME": "sel-node", "MOCK_NVML_CONFIG": ""}
        for sel, want in [("1", [1]), (g[2]["uuid"], [2]), (g[3]["pci_bus_id"], [3]), ("0,2", [0, 2]),
                          (f"{g[1]['uuid']},5", [1, 5])]:
            p = self.smi("--query-gpu=index,uuid", "--format=csv,noheader", "-i", sel, **env)
            self.assertEqual(p.returncode, 0, p.stdout)
            rows = [l.split(", ") for l in p.stdout.strip().split("\n")]
            self.assertEqual([int(r[0]) for r in rows], want, sel)
            self.assertEqual([r[1] for r in rows], [g[i]["uuid"] for i in want])
        p = self.smi("-L", "-i", "42", **env)
        self.assertEqual(p.returncode, 6)
        self.assertIn("No devices were found", p.stdout)

    def test_unknown_field_is_an_error_like_real(self):
        p = self.smi("--query-gpu=name,not.a.field", "--format=csv")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout.split("\n")[0], 'Field "not.a.field" is not a valid field to query.')
        p = self.smi("--query-gpu=name", "--format=json")
        self.assertEqual(p.returncode, 2)
        p = self.smi("--bogus-option")
        self.assertEqual(p.returncode, 2)

    def test_noheader_nounits(self):
        p = self.smi("--query-gpu=memory.total,power.draw,utilization.gpu", "--format=csv,noheader,nounits", "-i", "0")
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r"^\d+, \d+\.\d\d, \d+\n$")

    def test_version_and_help(self):
        p = self.smi("--version")
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r"(?m)^DRIVER version\s+: \d+\.\d+")
        self.assertRegex(p.stdout, r"(?m)^CUDA Version\s+: \d+\.\d+$")
        h = self.smi("-h")
        self.assertEqual(h.returncode, 0)
        self.assertIn("--query-gpu", h.stdout)

    def test_q_text_layout(self):
        p = self.smi("-q", "-i", "0")
        self.assertEqual(p.returncode, 0)
        self.assertTrue(p.stdout.startswith("\n==============NVSMI LOG==============\n\n"))
        self.assertRegex(p.stdout, r"(?m)^Attached GPUs {42}: 8$")
        self.assertRegex(p.stdout, r"(?m)^GPU 00000000:[0-9A-F]{2}:00\.0$")
        self.assertRegex(p.stdout, r"(?m)^    Product Name {39}: NVIDIA A100-SXM4-40GB$")
        self.assertRegex(p.stdout, r"(?m)^        Total {42}: 40960 MiB$")

    # ---- init faults: real wording on stdout and NVML-numbered exit codes ----

    def test_exit_codes_under_init_faults(self):
        cases = [
            ("driver-not-loaded", 9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                                     "Make sure that the latest NVIDIA driver is installed and running."),
            ("no-permission", 4, "Failed to initialize NVML: Insufficient Permissions"),
            ("lib-rm-version-mismatch", 18, "Failed to initialize NVML: Driver/library version mismatch"),
        ]
        for fault, code, text in cases:
            for args in (["-L"], [], ["--query-gpu=name", "--format=csv"], ["-q", "-x"]):
                with self.subTest(fault=fault, args=args):
                    p = self.smi(*args, MOCK_NVML_INIT_ERROR=fault)
                    self.assertEqual(p.returncode, code, p.stdout)
                    self.assertEqual(p.stdout.split("\n")[0], text)

    def test_library_not_found_exit_12(self):
        lone = self.path("bin", "nvidia-smi")
        os.makedirs(os.path.dirname(lone))
        shutil.copy(gvtest.NVIDIA_SMI, lone)
        p = subprocess.run([lone, "-L"], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
        if p.returncode == 0:
            self.skipTest("a system libnvidia-ml.so.1 is installed")
        self.assertEqual(p.returncode, 12, p.stdout)
        self.assertIn("couldn't find libnvidia-ml.so library", p.stdout)

    def test_gpu_lost_exit_15(self):
        p = self.smi("-L", MOCK_NVML_LOST_GPUS="1")
        self.assertEqual(p.returncode, 15, p.stdout)
        lines = p.stdout.strip().split("\n")
        self.assertEqual(len(lines), 8)
        # Named by its bus id, as the real nvidia-smi does (NVML's PCI info answers for a lost GPU).
        bus = self.smi("--query-gpu=pci.bus_id", "--format=csv,noheader", "-i", "1").stdout.strip()
        self.assertRegex(bus, r"^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.0$")
        self.assertEqual(lines[1], f"Unable to determine the device handle for GPU{bus[4:]}: GPU is lost.  "
                                   "Reboot the system to recover this GPU")
        # Selected by its bus id, the lost GPU is still found and named.
        p = self.smi("-L", "-i", bus, MOCK_NVML_LOST_GPUS="1")
        self.assertEqual(p.returncode, 15, p.stdout)
        self.assertEqual(p.stdout.strip(), lines[1])
        self.assertTrue(GPU_LINE.match(lines[0]) and GPU_LINE.match(lines[2]))
        for args in ([], ["--query-gpu=index", "--format=csv,noheader"], ["-q"]):
            p = self.smi(*args, MOCK_NVML_LOST_GPUS="1")
            self.assertEqual(p.returncode, 15, args)
            self.assertIn("GPU is lost", p.stdout)

    # ---- FR16 ----

    def fr16_profile(self):
        text = open(os.path.join(gvtest.SOURCE, "mock", "profiles", "l40s.yaml")).read()
        text = re.sub(r"(?m)^gpu_count: \d+$", "gpu_count: 2", text)
        text = re.sub(r"(?m)^  temperature_c: \d+$", "  temperature_c: N/A", text)
        text = re.sub(r"(?m)^  utilization: .*$", "  utilization: N/A", text)
        path = self.path("fr16.yaml")
        open(path, "w").write(text)
        return path

    def test_fr16_na_exactly_where_not_supported(self):
        cfg = self.fr16_profile()
        prof = json.loads(gvtest.run(["mock", "profiles", "--report", cfg], check=0).stdout)
        self.assertIn("temperature", prof["gpus"][0]["unsupported"])
        self.assertIn("utilization", prof["gpus"][0]["unsupported"])
        p = self.smi("--query-gpu=" + ",".join(FIELDS), "--format=csv", MOCK_NVML_CONFIG=cfg)
        self.assertEqual(p.returncode, 0, p.stdout)
        rows = [l.split(", ") for l in p.stdout.strip().split("\n")[1:]]
        for gpu, row in zip(prof["gpus"], rows):
            want = expected_csv(prof, gpu)
            na = {f for f, v in zip(FIELDS, row) if v == "[N/A]"}
            self.assertEqual(na, {f for f in FIELDS if want[f] is None})
            self.assertTrue({"temperature.gpu", "utilization.gpu", "utilization.memory"} <= na)
            for f, v in zip(FIELDS, row):
                if f not in na:
                    self.assertFalse(v.startswith("["), f"{f}={v}")
                    self.assertEqual(v, want[f])

    def test_fr16_csv_parser_treats_bracketed_cells_per_field(self):
        node_modules_or_skip(self)
        cfg = self.fr16_profile()
        p = self.smi("--query-gpu=name,temperature.gpu,utilization.gpu,memory.total", "--format=csv",
                     MOCK_NVML_CONFIG=cfg)
        sample = p.stdout + "NVIDIA X, [Not Supported], [Unknown Error], 100 MiB\n"
        n = subprocess.run(["node", os.path.join(JS_DIR, "parse-csv.js")], input=sample, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(n.returncode, 0, n.stderr)
        rows = json.loads(n.stdout)
        self.assertEqual(len(rows), 3)
        for r in rows:
            self.assertIsNone(r["temperature.gpu"])
            self.assertIsNone(r["utilization.gpu"])
            self.assertIsNotNone(r["name"])
            self.assertIsNotNone(r["memory.total"])

    def test_fr16_table_and_xml_show_na(self):
        cfg = self.fr16_profile()
        t = self.smi(MOCK_NVML_CONFIG=cfg)
        self.assertRegex(t.stdout, r"\| N/A   N/A    P8")
        x = ET.fromstring(self.smi("-q", "-x", MOCK_NVML_CONFIG=cfg).stdout)
        self.assertEqual(x.findtext("gpu/temperature/gpu_temp"), "N/A")
        self.assertEqual(x.findtext("gpu/utilization/gpu_util"), "N/A")
        self.assertNotEqual(x.findtext("gpu/fb_memory_usage/total"), "N/A")


# Our profile for each real capture of the same model, with MIG enabled like the capture
# (`-q -x` must cover >= 90 % of a real capture's element paths).
COVERAGE = [
    ("xml__a100-sxm4-40gb_mig-enabled_510.47.03.xml", "a100-sxm4-40gb", "[{profile: 3g.20gb}, {profile: 3g.20gb}]"),
    ("xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml", "a100-sxm4-80gb", "[{profile: 3g.40gb}, {profile: 3g.40gb}]"),
    ("xml__tesla-t4_515.105.01.xml", "t4", None),
    ("xml__k8s-test-infra_qx-h100.xml", "h100-sxm5-80gb", None),
    ("xml__k8s-test-infra_qx-l40s.xml", "l40s", None),
]
# The floor each reaches today (percent, rounded down): a regression fails the test.  Our profile runs on the
# capture's driver version (the driver branch picks the element names).  The T4 capture has a process running.
COVERAGE_FLOOR = {
    "xml__a100-sxm4-40gb_mig-enabled_510.47.03.xml": 100,
    "xml__a100-sxm4-80gb_mig-enabled_535.54.03.xml": 100,
    "xml__tesla-t4_515.105.01.xml": 96,
    "xml__k8s-test-infra_qx-h100.xml": 100,
    "xml__k8s-test-infra_qx-l40s.xml": 100,
}


def profile_on_driver(test, name, driver_version, mig=None):
    """A copy of built-in profile @name with one GPU on @driver_version (MIG devices @mig, a YAML list)."""
    text = open(os.path.join(gvtest.SOURCE, "mock", "profiles", name + ".yaml")).read()
    text = re.sub(r"(?m)^gpu_count: \d+$", "gpu_count: 1", text)
    text, n = re.subn(r'(?m)^(  version: )"[^"]*"', r'\g<1>"%s"' % driver_version, text, count=1)
    test.assertEqual(n, 1, "driver version of " + name)
    if mig:
        text = text.replace("    mode: disabled", "    mode: enabled")
        text = text.replace("    devices: []", "    devices: " + mig)
    path = test.path("%s-%s.yaml" % (name, driver_version))
    open(path, "w").write(text)
    return path


def smi_on(cfg, *args):
    return subprocess.run([gvtest.NVIDIA_SMI] + list(args), capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "MOCK_NVML_CONFIG": cfg})


def capture_and_ours(test, capture, name, mig):
    """The first GPU of @capture and ours for it: built-in profile @name on the capture's driver (MIG
    devices @mig), with as many GPUs as the captured GPU's minor number needs, `-q -x`'s GPU of that
    minor number."""
    root = ET.parse(os.path.join(CAPTURES, capture)).getroot()
    real = root.find("gpu")
    minor = int(real.findtext("minor_number"))
    cfg = profile_on_driver(test, name, root.findtext("driver_version"), mig)
    text = open(cfg).read().replace("gpu_count: 1", "gpu_count: %d" % (minor + 1))
    open(cfg, "w").write(text)
    p = smi_on(cfg, "-q", "-x")
    test.assertEqual(p.returncode, 0, p.stdout)
    ours = [g for g in ET.fromstring(p.stdout).findall("gpu") if g.findtext("minor_number") == str(minor)]
    test.assertEqual(len(ours), 1, "our GPU with minor number %d" % minor)
    return real, ours[0]


class TestCaptureCoverage(gvtest.TempDirTestCase):
    """The share of a real capture's `-q -x` element paths that ours prints for the same model and driver."""

    def test_coverage_of_real_capture_paths(self):
        figures = []
        for capture, name, mig in COVERAGE:
            with self.subTest(capture=capture):
                tree = ET.parse(os.path.join(CAPTURES, capture)).getroot()
                real = element_paths(tree)
                p = smi_on(profile_on_driver(self, name, tree.findtext("driver_version"), mig), "-q", "-x")
                self.assertEqual(p.returncode, 0, p.stdout)
                ours = element_paths(ET.fromstring(p.stdout))
                share = 100.0 * len(ours & real) / len(real)
                figures.append("%s: %d of %d (%.1f %%)" % (capture, len(ours & real), len(real), share))
                self.assertGreaterEqual(share, COVERAGE_FLOOR[capture])
                # The DTD version of the capture's branch.
                want = open(os.path.join(CAPTURES, capture)).read().split("\n")[1]
                self.assertEqual(p.stdout.split("\n")[1], want.strip())
        # The figures, as TAP comments (docs/nvidia-smi.md quotes them).
        print("# -q -x coverage of real captures:\n#   " + "\n#   ".join(figures))


# Rows whose value is a fact of the GPU, its board or the driver (not a reading that changes second to second, such
# as gpu_temp_tlimit, the margin to T.Limit, which moves with the temperature), read
# through the NVML calls of mock/nvml/libnvml-smi.c and the row remapper (docs/mock-nvml.md); a section is compared
# leaf by leaf.  Our GPU with the capture's minor number answers for the capture's GPU.
STATIC_ROWS = ["gsp_firmware_version", "gpu_module_id", "platformInfo/module_id", "pci/pci_base_class",
               "pci/pci_sub_class", "addressing_mode", "c2c_mode", "pdi", "remapped_rows",
               "temperature/gpu_temp_max_tlimit_threshold", "temperature/gpu_temp_slow_tlimit_threshold",
               "temperature/gpu_temp_max_gpu_tlimit_threshold", "temperature/gpu_temp_max_mem_tlimit_threshold",
               "cc_protected_memory_usage", "gpu_recovery_action", "gpu_reset_status",
               "clocks_event_reasons_counters/clocks_event_reasons_counters_hw_therm_slowdown",
               "clocks_event_reasons_counters/clocks_event_reasons_counters_hw_power_brake",
               "applications_clocks", "default_applications_clocks",
               "ecc_errors/volatile/sram_uncorrectable_parity", "ecc_errors/volatile/sram_uncorrectable_secded",
               "ecc_errors/aggregate/sram_uncorrectable_parity", "ecc_errors/aggregate/sram_uncorrectable_secded",
               "ecc_errors/aggregate/sram_threshold_exceeded", "ecc_errors/aggregate_uncorrectable_sram_sources",
               "ecc_errors/channel_repair_pending", "ecc_errors/tpc_repair_pending", "ecc_errors/unrepairable_memory",
               "ecc_errors/volatile", "mig_devices/mig_device/ecc_error_count", "capabilities"]


def leaf_values(e, prefix=""):
    """{path: text} of the leaves under @e (@e itself when it is one)."""
    if len(e) == 0:
        return {prefix or e.tag: (e.text or "").strip()}
    out = {}
    for c in e:
        out.update(leaf_values(c, (prefix or e.tag) + "/" + c.tag))
    return out


class TestCaptureStaticValues(gvtest.TempDirTestCase):
    """Per capture, the values of the static rows (GSP firmware, module id, PCI class, addressing and C2C mode, PDI,
    remapped rows, T.Limit thresholds, CC protected memory, recovery action and reset status, HW slowdown counters, applications clocks, SRAM ECC split and repair status, volatile ECC counts of the GPU and a MIG device, capabilities) are the capture's: the real value where it has one, N/A exactly where it prints N/A."""

    def test_static_rows_match_the_capture(self):
        for capture, name, mig in COVERAGE:
            with self.subTest(capture=capture):
                real, ours = capture_and_ours(self, capture, name, mig)
                compared = 0
                for path in STATIC_ROWS:
                    e = real.find(path)
                    if e is None:
                        continue
                    o = ours.find(path)
                    self.assertIsNotNone(o, path)
                    self.assertEqual(leaf_values(o, path), leaf_values(e, path), path)
                    compared += 1
                self.assertGreaterEqual(compared, 3, "static rows in " + capture)


class TestDriverBranchGating(gvtest.TempDirTestCase):
    """The profile's driver branch picks the element names and labels, as in the captures of each branch."""

    def xml(self, name, version):
        p = smi_on(profile_on_driver(self, name, version), "-q", "-x")
        self.assertEqual(p.returncode, 0, p.stdout)
        return p.stdout, ET.fromstring(p.stdout).find("gpu")

    def test_535_and_580_print_different_names(self):
        text535, g535 = self.xml("h100-sxm5-80gb", "535.54.03")
        text580, g580 = self.xml("h100-sxm5-80gb", "580.105.08")
        self.assertIn('"nvsmi_device_v12.dtd"', text535)
        self.assertIn('"nvsmi_device_v13.dtd"', text580)
        # 535 names (xml__a100-sxm4-80gb_mig-enabled_535.54.03, xml__rtx-4090_535.86.05)
        for path in ["gpu_module_id", "gpu_reset_status/reset_required", "gpu_power_readings/power_draw",
                     "module_power_readings/power_draw", "voltage/graphics_volt",
                     "ecc_errors/volatile/sram_uncorrectable"]:
            self.assertIsNotNone(g535.find(path), path)
            self.assertIsNone(g580.find(path), path)
        # 580 names and N/A rows (xml__k8s-test-infra_qx-h100, 580.105.08)
        for path in ["platformInfo/module_id", "dram_encryption_mode/current_dram_encryption", "power_smoothing",
                     "power_profiles/power_profile_requested_profiles", "fabric/health/summary",
                     "gpu_virtualization_mode/vgpu_heterogeneous_mode", "gpu_power_readings/average_power_draw",
                     "module_power_readings/instant_power_draw", "pci/pci_base_class", "capabilities/egm",
                     "ecc_errors/volatile/sram_uncorrectable_parity", "clocks_event_reasons_counters"]:
            self.assertIsNotNone(g580.find(path), path)
            self.assertIsNone(g535.find(path), path)
        # Hopper is past Ada: the T.Limit threshold names on both branches.
        for g in (g535, g580):
            self.assertIsNotNone(g.find("temperature/gpu_temp_slow_tlimit_threshold"))
            self.assertIsNone(g.find("temperature/gpu_temp_slow_threshold"))
        self.assertEqual(g580.findtext("dram_encryption_mode/current_dram_encryption"), "N/A")

    def test_gpu_and_point_release_gates(self):
        """k8s-test-infra's hardware captures: an A100 on 570.148 has the 570 layout; a T4 (Turing) on 595.91
        keeps sram_uncorrectable where Ampere and later split it; 580.173 adds rows 580.105 lacks."""
        _, a100 = self.xml("a100-sxm4-40gb", "570.148.08")
        for path in ["platformInfo/module_id", "ecc_errors/volatile/sram_uncorrectable_parity", "power_smoothing",
                     "gpu_power_readings/average_power_draw", "fabric/health/bandwidth"]:
            self.assertIsNotNone(a100.find(path), path)
        for path in ["gpu_module_id", "clocks_event_reasons_counters", "fabric/health/summary", "pdi",
                     "ecc_errors/volatile/sram_uncorrectable", "gpu_power_readings/power_draw"]:
            self.assertIsNone(a100.find(path), path)
        _, t4 = self.xml("t4", "595.91.07")
        self.assertIsNotNone(t4.find("ecc_errors/volatile/sram_uncorrectable"))
        self.assertIsNone(t4.find("ecc_errors/volatile/sram_uncorrectable_parity"))
        self.assertIsNone(t4.find("ecc_errors/channel_repair_pending"))
        _, h105 = self.xml("h100-sxm5-80gb", "580.105.08")
        _, h173 = self.xml("h100-sxm5-80gb", "580.173.02")
        for path in ["ecc_errors/unrepairable_memory", "fabric/health/partition_assigned"]:
            self.assertIsNone(h105.find(path), path)
            self.assertIsNotNone(h173.find(path), path)

    def test_pre_535_names_and_labels(self):
        text, g = self.xml("t4", "515.105.01")
        self.assertIn('"nvsmi_device_v11.dtd"', text)
        self.assertIsNotNone(g.find("clocks_throttle_reasons/clocks_throttle_reason_gpu_idle"))
        self.assertIsNone(g.find("clocks_event_reasons"))
        self.assertIsNotNone(g.find("power_readings/enforced_power_limit"))
        self.assertEqual(g.findtext("power_readings/power_limit"), g.findtext("power_readings/max_power_limit"))
        self.assertIsNone(g.find("gpu_power_readings"))
        # Turing: the plain threshold names; before 535 no T.Limit reading at all.
        self.assertIsNotNone(g.find("temperature/gpu_temp_slow_threshold"))
        self.assertIsNone(g.find("temperature/gpu_temp_tlimit"))
        # Before 535 the board part number is written as gpu_part_number (xml__tesla-t4_515.105.01).
        self.assertIsNone(g.find("board_part_number"))
        self.assertIsNotNone(g.find("gpu_part_number"))
        q = smi_on(profile_on_driver(self, "t4", "515.105.01"), "-q").stdout
        self.assertIn("\n    Clocks Throttle Reasons\n", q)
        self.assertIn("\n    Power Readings\n", q)
        self.assertNotIn("Clocks Event Reasons", q)
        q580 = smi_on(profile_on_driver(self, "t4", "580.105.08"), "-q").stdout
        self.assertIn("\n    Clocks Event Reasons\n", q580)
        self.assertIn("\n    GPU Power Readings\n", q580)


class TestEveryRealQueryField(gvtest.TempDirTestCase):
    """--query-gpu accepts every field the real 590/595 tools were queried for (their whole --help-query-gpu)."""

    CSVS = ["csv__query-gpu_h100-80gb-hbm3_mig-enabled_590.48.01.csv", "csv__query-gpu_l40s_under-load_595.80.csv"]

    def test_real_headers_byte_for_byte(self):
        cfg = profile_on_driver(self, "h100-sxm5-80gb", "590.48.01")
        for capture in self.CSVS:
            with self.subTest(capture=capture):
                header = open(os.path.join(CAPTURES, capture)).readline().rstrip("\n")
                names = [re.sub(r" \[.*\]$", "", h) for h in header.split(", ")]
                p = smi_on(cfg, "--query-gpu=" + ",".join(names), "--format=csv")
                self.assertEqual(p.returncode, 0, p.stdout[:300])
                lines = p.stdout.split("\n")
                self.assertEqual(lines[0], header)
                self.assertEqual(len(lines[1].split(", ")), len(names))
                # Values where the profile knows them; [N/A] where the mock has no value.
                row = dict(zip(names, lines[1].split(", ")))
                self.assertEqual(row["pcie.link.width.current"], "16")
                self.assertEqual(row["clocks_event_reasons.gpu_idle"], "Active")
                self.assertRegex(row["clocks_event_reasons.active"], r"^0x[0-9A-F]{16}$")
                self.assertEqual(row["kmd_version"] if "kmd_version" in row else "590.48.01", "590.48.01")
                self.assertEqual(row["power_smoothing.primary_power_floor"]
                                 if "power_smoothing.primary_power_floor" in row else "[N/A]", "[N/A]")
                n = smi_on(cfg, "--query-gpu=" + ",".join(names), "--format=csv,nounits").stdout.split("\n")
                self.assertEqual(n[0], ", ".join(names))

    def test_help_query_gpu_lists_every_field(self):
        p = subprocess.run([gvtest.NVIDIA_SMI, "--help-query-gpu"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        listed = re.findall(r'^"([^"]+)"', p.stdout, re.M)
        for capture in self.CSVS:
            header = open(os.path.join(CAPTURES, capture)).readline().rstrip("\n")
            names = [re.sub(r" \[.*\]$", "", h) for h in header.split(", ")]
            # every real name, in the real relative order
            self.assertEqual([n for n in listed if n in names], names)
        self.assertIn('"clocks_event_reasons.active" or "clocks_throttle_reasons.active"', p.stdout)
        # each listed name is accepted
        cfg = profile_on_driver(self, "t4", "580.105.08")
        q = smi_on(cfg, "--query-gpu=" + ",".join(listed), "--format=csv,noheader")
        self.assertEqual(q.returncode, 0, q.stdout[:300])
        self.assertEqual(len(q.stdout.rstrip("\n").split(", ")), len(listed))


if __name__ == "__main__":
    unittest.main()
