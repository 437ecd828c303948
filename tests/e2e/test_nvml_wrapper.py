"""A third-party NVML client on the mock: a small program of ours (tests/rust/nvml-wrapper-sweep) built offline
against Debian's nvml-wrapper crate (librust-nvml-wrapper-dev, /usr/share/cargo/registry) calls every getter the
crate offers on every built-in profile and on a MIG layout.  No missing symbol, no panic, and the values the
profile sets come back as the profile says.  The build is cached in the build folder (first build ~20 s)."""
import json
import os
import shutil
import subprocess
import unittest

from gvtest import BUILD, MOCK_NVML, SOURCE, clean_env, run

CARGO = "/usr/bin/cargo"
REGISTRY = "/usr/share/cargo/registry"
CRATE = os.path.join(REGISTRY, "nvml-wrapper-0.9.0")
PROJECT = os.path.join(SOURCE, "tests", "rust", "nvml-wrapper-sweep")
WORK = os.path.join(BUILD, "nvml-wrapper-sweep")
BIN = os.path.join(WORK, "target", "debug", "nvml-wrapper-sweep")
PROFILES = sorted(f[:-5] for f in os.listdir(os.path.join(SOURCE, "mock", "profiles")) if f.endswith(".yaml"))
NODE = "nvml-wrapper-node"
MIB = 1 << 20
# Model facts of mock/nvml/model-facts.c from real captures: HBM temperature (NVML_FI_DEV_MEMORY_TEMP, C; the GDDR
# boards print N/A) and the models whose captures print accounting_mode_buffer_size 4000.
MEMORY_TEMP = {"NVIDIA A100-SXM4-40GB": 34, "NVIDIA A100-SXM4-80GB": 44, "NVIDIA H100 80GB HBM3": 37, "NVIDIA H200": 38,
               "NVIDIA B200": 39, "NVIDIA GB200": 27, "NVIDIA GB300": 38}
ACCOUNTING_BUFFER = {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200",
                     "NVIDIA B200", "NVIDIA GB200", "NVIDIA GB300", "NVIDIA L40S", "Tesla T4"}


def build():
    """Copies the project into the build folder (cargo writes Cargo.lock beside the manifest) and builds it."""
    src = os.path.join(WORK, "src-copy")
    os.makedirs(os.path.join(src, "src"), exist_ok=True)
    for rel in ("Cargo.toml", os.path.join("src", "main.rs")):
        shutil.copyfile(os.path.join(PROJECT, rel), os.path.join(src, rel))
    home = os.path.join(WORK, "cargo-home")
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "{REGISTRY}"\n'
                '[net]\noffline = true\n')
    env = clean_env(CARGO_HOME=home, CARGO_TARGET_DIR=os.path.join(WORK, "target"))
    p = subprocess.run([CARGO, "build", "--offline", "--quiet", "--manifest-path", os.path.join(src, "Cargo.toml")],
                       env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError(f"cargo build failed:\n{p.stdout}{p.stderr}")


def sanitizer_preload():
    """A sanitizer build's mock library needs the runtimes loaded first in the (uninstrumented) Rust program."""
    p = subprocess.run(["readelf", "-d", MOCK_NVML], capture_output=True, text=True)
    libs = []
    for name in ("libasan", "libubsan"):
        if name + ".so" in p.stdout:
            path = subprocess.run(["cc", f"-print-file-name={name}.so"], capture_output=True, text=True).stdout.strip()
            libs.append(path)
    return " ".join(libs)


def sweep(config, gpus):
    """Runs the sweep on profile file @config with @gpus GPUs; returns {(device, getter): (ok, value)}."""
    env = clean_env(MOCK_NVML_CONFIG=config, MOCK_NVML_NUM_DEVICES=gpus, NODE_NAME=NODE)
    preload = sanitizer_preload()
    if preload:
        env["LD_PRELOAD"] = preload
    p = subprocess.run([BIN, MOCK_NVML], env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"sweep of {config} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    out = {}
    for line in p.stdout.splitlines():
        dev, getter, status, value = line.split("\t", 3)
        out[(dev, getter)] = (status == "ok", value)
    return out


def expected(config, gpus):
    p = run(["mock", "profiles", "--report", config, "--gpus", str(gpus), "--node-name", NODE], check=0)
    return json.loads(p.stdout)


@unittest.skipUnless(os.path.exists(CARGO) and os.path.isdir(CRATE),
                     "needs Debian's cargo and librust-nvml-wrapper-dev (tools/setup-debian.sh installs them)")
class NvmlWrapper(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build()

    def check_profile(self, config, gpus=2):
        got = sweep(config, gpus)
        want = expected(config, gpus)
        self.assertGreater(len(got), 100 * gpus)
        bad = [f"{d} {g}: {v}" for (d, g), (ok, v) in got.items() if not ok and ("FailedToLoadSymbol" in v or
                                                                                   v == "panic")]
        self.assertEqual(bad, [], "missing symbols or panics")
        self.assertEqual(got[("-", "device_count()")], (True, str(gpus)))
        self.assertEqual(got[("-", "sys_driver_version()")], (True, json.dumps(want["driver_version"])))
        self.assertEqual(got[("-", "sys_cuda_driver_version()")], (True, str(want["cuda_driver_version"])))
        answered = 0
        for g in want["gpus"]:
            d = str(g["index"])

            def eq(getter, value):
                self.assertIn((d, getter), got)
                self.assertEqual(got[(d, getter)], (True, value), f"{config} GPU {d} {getter}")

            eq("name()", json.dumps(g["name"]))
            eq("uuid()", json.dumps(g["uuid"]))
            eq("index()", d)
            eq("minor_number()", str(g["minor_number"]))
            for key, getter in (("serial", "serial()"), ("vbios_version", "vbios_version()"),
                                ("board_part_number", "board_part_number()")):
                if g[key] is not None:
                    eq(getter, json.dumps(g[key]))
            eq("cuda_compute_capability()",
               f"CudaComputeCapability {{ major: {g['cuda_cc_major']}, minor: {g['cuda_cc_minor']} }}")
            total = g["memory_total_mib"] * MIB
            self.assertTrue(got[(d, "memory_info()")][1].endswith(f"total: {total}, used: "
                                                                  f"{(g['memory_used_mib'] + g['memory_reserved_mib']) * MIB} }}"),
                            got[(d, "memory_info()")])
            self.assertIn(f'bus_id: "{g["pci_bus_id"]}"', got[(d, "pci_info()")][1])
            self.assertIn(f"pci_device_id: {g['pci_device_id'] << 16 | 0x10DE}", got[(d, "pci_info()")][1])
            eq("temperature(TemperatureSensor::Gpu)", str(g["temperature_c"]))
            eq("power_usage()", str(g["power_usage_mw"]))
            eq("power_management_limit()", str(g["power_limit_mw"]))
            eq("power_management_limit_default()", str(g["power_default_limit_mw"]))
            eq("enforced_power_limit()", str(g["power_limit_mw"]))
            eq("power_management_limit_constraints()", f"PowerManagementConstraints {{ min_limit: "
               f"{g['power_min_limit_mw']}, max_limit: {g['power_max_limit_mw']} }}")
            for clock, key in (("Graphics", "graphics"), ("SM", "sm"), ("Memory", "mem")):
                eq(f"clock_info({clock})", str(g[f"clock_{key}_mhz"]))
                eq(f"max_clock_info({clock})", str(g[f"max_clock_{key}_mhz"]))
            eq("clock_info(Video)", str(g["clock_video_mhz"]))
            eq("is_in_persistent_mode()", "true" if g["persistence_mode"] else "false")
            eq("is_ecc_enabled()", f"EccModeState {{ currently_enabled: {str(g['ecc_current']).lower()}, "
               f"pending_enabled: {str(g['ecc_current']).lower()} }}")
            if "fan" in g["unsupported"]:
                self.assertEqual(got[(d, "fan_speed(0)")], (False, "NotSupported"))
            else:
                eq("fan_speed(0)", str(g["fan_speed"]))
            if g["mig_mode_current"]:
                self.assertEqual(got[(d, "utilization_rates()")], (False, "NotSupported"))
            else:
                eq("utilization_rates()", f"Utilization {{ gpu: {g['utilization_gpu']}, "
                   f"memory: {g['utilization_memory']} }}")
            # what the device plugin and nvitop read: BAR1 and the PCIe link
            for getter in ("bar1_memory_info()", "max_pcie_link_gen()", "max_pcie_link_width()",
                           "running_compute_processes()", "running_graphics_processes()",
                           "running_compute_processes_v2()", "running_graphics_processes_v2()"):
                self.assertTrue(got[(d, getter)][0], f"{config} GPU {d} {getter}: {got[(d, getter)]}")
            if g["name"] in ACCOUNTING_BUFFER:
                eq("accounting_buffer_size()", "4000")
            else:
                self.assertEqual(got[(d, "accounting_buffer_size()")], (False, "NotSupported"))
            # the Linux getters of docs/real-clients-history.md: one IRQ per GPU (144, 145, ... in GPU order)
            eq("irq_num()", str(144 + g["index"]))
            if g["name"] != "NVIDIA H200":  # no infoROM version of the H200 in a capture: NOT_SUPPORTED
                self.assertEqual(got[(d, "config_checksum()")], got[("0", "config_checksum()")])
                self.assertTrue(got[(d, "config_checksum()")][0], f"{config} GPU {d} config_checksum")
            fields = got[(d, "field_values_for(ECC_CURRENT, POWER_INSTANT, MEMORY_TEMP)")]
            self.assertTrue(fields[1].endswith(f"Ok(Ok(U32({MEMORY_TEMP[g['name']]})))]" if g["name"] in MEMORY_TEMP
                                               else "Ok(Err(NotSupported))]"), f"{config} GPU {d} {fields}")
            answered += sum(1 for (dv, _), (ok, _) in got.items() if dv == d and ok)
        print(f"# {os.path.basename(config)}: {len(got)} calls, {answered} answered with a value")

    def test_every_builtin_profile(self):
        for name in PROFILES:
            with self.subTest(profile=name):
                self.check_profile(os.path.join(SOURCE, "mock", "profiles", name + ".yaml"))

    def test_process_utilization(self):
        """nvtop's per-process usage: one sample per process, the GPU's utilisation shared (2 processes, 37 %)."""
        path = os.path.join(WORK, "a100-processes.yaml")
        with open(os.path.join(SOURCE, "mock", "profiles", "a100-sxm4-40gb.yaml")) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text + "devices:\n  - index: 0\n    utilization: {gpu: 37, memory: 12}\n    processes:\n"
                    "      - {pid: 4242, name: python3, used_memory_mib: 1024}\n"
                    "      - {pid: 4343, name: python3, used_memory_mib: 512}\n")
        got = sweep(path, 2)
        ok, value = got[("0", "process_utilization_stats(None)")]
        self.assertTrue(ok, value)
        self.assertRegex(value, r"^\[ProcessUtilizationSample \{ pid: 4242, timestamp: [1-9][0-9]*, sm_util: 19, "
                                r"mem_util: 6, enc_util: 0, dec_util: 0 \}, ProcessUtilizationSample \{ pid: 4343, "
                                r"timestamp: [1-9][0-9]*, sm_util: 18, mem_util: 6, enc_util: 0, dec_util: 0 \}\]$")
        self.assertEqual(got[("1", "process_utilization_stats(None)")], (False, "NotFound"))  # GPU 1 runs nothing

    def test_mig_layout(self):
        path = os.path.join(WORK, "a100-mig.yaml")
        with open(os.path.join(SOURCE, "mock", "profiles", "a100-sxm4-40gb.yaml")) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text + 'devices:\n  - index: 0\n    mig: {mode: enabled, devices: ["3g.20gb", "2g.10gb", '
                    '"1g.5gb"]}\n')
        self.check_profile(path, gpus=2)
