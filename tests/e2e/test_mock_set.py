"""End-to-end tests of `gpu-validator mock set` (the mock GPUs change while
clients run): a client process keeps the root's mock libnvidia-ml.so.1
loaded (initialised once, handles and an Xid event set made at the start, as
the device plugin's health check does) while `mock set` changes temperature,
utilisation, memory, processes and faults; the client's next call sees each
change, and Xid events reach its nvmlEventSetWait."""
import json
import os
import subprocess
import sys

import gvtest

# A long-lived NVML client: one command a line on stdin, one JSON answer a line on stdout.
CLIENT = r'''
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
assert lib.nvmlInit_v2() == 0
n = ctypes.c_uint()
assert lib.nvmlDeviceGetCount_v2(ctypes.byref(n)) == 0
handles = []
for i in range(n.value):
    h = ctypes.c_void_p()
    assert lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) == 0
    handles.append(h)
class Event(ctypes.Structure):
    _fields_ = [("device", ctypes.c_void_p), ("eventType", ctypes.c_ulonglong), ("eventData", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]
es = ctypes.c_void_p()
assert lib.nvmlEventSetCreate(ctypes.byref(es)) == 0
for h in handles:  # nvmlEventTypeXidCriticalError, as the device plugin's health check
    assert lib.nvmlDeviceRegisterEvents(h, ctypes.c_ulonglong(0x8), es) == 0
U, ULL = ctypes.c_uint, ctypes.c_ulonglong
def q(fn, *args, out=U):
    v = out()
    rc = getattr(lib, fn)(*args, ctypes.byref(v))
    return [rc, v.value]
print("ready", flush=True)
for line in sys.stdin:
    cmd, *a = line.split()
    if cmd == "count":
        res = [len(handles)]
    elif cmd == "wait":
        ev = Event()
        rc = lib.nvmlEventSetWait_v2(es, ctypes.byref(ev), U(int(a[0])))
        gpu = next((i for i, h in enumerate(handles) if h.value == ev.device), -1) if rc == 0 else -1
        res = [rc, gpu, ev.eventType if rc == 0 else 0, ev.eventData if rc == 0 else 0]
    else:
        h = handles[int(a[0])]
        if cmd == "temp":
            res = q("nvmlDeviceGetTemperature", h, U(0))
        elif cmd == "util":
            u = (U * 2)()
            res = [lib.nvmlDeviceGetUtilizationRates(h, u), u[0], u[1]]
        elif cmd == "mem":
            m = (ULL * 3)()
            res = [lib.nvmlDeviceGetMemoryInfo(h, m), m[2] // (1024 * 1024)]
        elif cmd == "power":
            res = q("nvmlDeviceGetPowerUsage", h)
        elif cmd == "procs":
            c = U(0)
            rc = lib.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(c), None)
            res = [rc, c.value]
        elif cmd == "ecc":  # corrected volatile, uncorrected volatile, uncorrected aggregate
            res = [q("nvmlDeviceGetTotalEccErrors", h, U(t), U(k), out=ULL) for t, k in ((0, 0), (1, 0), (1, 1))]
            r = [U() for _ in range(4)]
            res.append([lib.nvmlDeviceGetRemappedRows(h, *[ctypes.byref(x) for x in r])] + [x.value for x in r])
        elif cmd == "reasons":
            res = q("nvmlDeviceGetCurrentClocksEventReasons", h, out=ULL) + q("nvmlDeviceGetClockInfo", h, U(1))[1:]
        elif cmd == "nvlink":
            res = q("nvmlDeviceGetNvLinkState", h, U(0))
        elif cmd == "name":
            b = ctypes.create_string_buffer(96)
            res = [lib.nvmlDeviceGetName(h, b, U(96))]
        elif cmd == "uuid":
            b = ctypes.create_string_buffer(96)
            res = [lib.nvmlDeviceGetUUID(h, b, U(96)), b.value.decode()]
        elif cmd == "handle":
            x = ctypes.c_void_p()
            res = [lib.nvmlDeviceGetHandleByIndex_v2(U(int(a[0])), ctypes.byref(x))]
    print(json.dumps(res), flush=True)
'''

def sanitizer_env(lib):
    """A sanitizer build's mock library needs the runtimes loaded first in the (uninstrumented) Python."""
    p = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True)
    libs = [subprocess.run(["cc", f"-print-file-name={name}.so"], capture_output=True, text=True).stdout.strip()
            for name in ("libasan", "libubsan") if name + ".so" in p.stdout]
    # Python's own allocations at exit are not the library's leaks.
    return {"LD_PRELOAD": " ".join(libs), "ASAN_OPTIONS": "detect_leaks=0"} if libs else {}


SUCCESS, INSUFFICIENT_SIZE, TIMEOUT, GPU_IS_LOST = 0, 7, 10, 15


class MockSetTestCase(gvtest.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.root = self.path("root")
        gvtest.run(["mock", "install", "--root", self.root, "--gpus", "4", "--device-nodes=files"], check=0)
        self.libdir = os.path.join(self.root, "usr", "lib64")
        self.state = os.path.join(self.libdir, "nvml-mock.state")
        lib = os.path.join(self.libdir, "libnvidia-ml.so.1")
        env = gvtest.clean_env(**sanitizer_env(lib), **self.client_env_for_test())
        self.client = subprocess.Popen([sys.executable, "-c", CLIENT, lib], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True, env=env)
        self.addCleanup(self.stop_client)
        self.assertEqual(self.client.stdout.readline().strip(), "ready")

    def client_env_for_test(self):
        """Extra environment of the NVML client (none: a plain host)."""
        return {}

    def stop_client(self):
        self.client.stdin.close()
        self.client.wait(timeout=30)
        self.client.stdout.close()

    def ask(self, *words):
        self.client.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.client.stdin.flush()
        line = self.client.stdout.readline()
        self.assertTrue(line, "the NVML client died")
        return json.loads(line)

    def mock_set(self, *args, check=0):
        return gvtest.run(["mock", "set", "--root", self.root, *args], check=check)


class TestChangesWhileLoaded(MockSetTestCase):
    def test_temperature_utilisation_memory_power_processes(self):
        self.assertEqual(self.ask("temp", 1), [SUCCESS, 33])
        self.assertEqual(self.ask("procs", 1), [SUCCESS, 0])
        self.mock_set("--gpu", "1", "temperature_c=85", "utilization_gpu=70", "utilization_memory=20",
                      "memory_used_mib=2048", "power_usage_w=250", "process=4242:1024:python", "process=4343:10")
        self.assertEqual(self.ask("temp", 1), [SUCCESS, 85])
        self.assertEqual(self.ask("util", 1), [SUCCESS, 70, 20])
        self.assertEqual(self.ask("power", 1), [SUCCESS, 250000])
        self.assertEqual(self.ask("procs", 1), [INSUFFICIENT_SIZE, 2])  # a count query with no buffer
        used = self.ask("mem", 1)
        self.assertEqual(used[0], SUCCESS)
        self.assertGreaterEqual(used[1], 2048)  # v1 counts the reserved memory as used
        self.assertEqual(self.ask("temp", 0), [SUCCESS, 33], "only --gpu 1 changes")
        self.mock_set("--gpu", "1", "processes=clear")
        self.assertEqual(self.ask("procs", 1), [SUCCESS, 0])
        self.assertEqual(self.ask("temp", 1), [SUCCESS, 85], "later calls keep the earlier changes")

    def test_select_by_uuid_and_all(self):
        p = subprocess.run([os.path.join(self.root, "usr", "bin", "nvidia-smi"), "--query-gpu=uuid",
                            "--format=csv,noheader"], capture_output=True, text=True,
                           env=gvtest.clean_env(LD_LIBRARY_PATH=self.libdir), timeout=60)
        uuids = p.stdout.split()
        self.assertEqual(len(uuids), 4, p.stderr)
        self.mock_set("--gpu", uuids[2], "temperature_c=61")
        self.assertEqual([self.ask("temp", i)[1] for i in range(4)], [33, 33, 61, 33])
        self.mock_set("temperature_c=44")
        self.assertEqual([self.ask("temp", i)[1] for i in range(4)], [44] * 4)

    def test_mock_nvidia_smi_sees_the_change(self):
        self.mock_set("--gpu", "3", "temperature_c=77")
        p = subprocess.run([os.path.join(self.root, "usr", "bin", "nvidia-smi"), "--query-gpu=temperature.gpu",
                            "--format=csv,noheader"], capture_output=True, text=True,
                           env=gvtest.clean_env(LD_LIBRARY_PATH=self.libdir), timeout=60)
        self.assertEqual(p.stdout.split(), ["33", "33", "33", "77"], p.stderr)


class TestFaults(MockSetTestCase):
    def test_ecc_burst_raises_counters_and_delivers_xid_48(self):
        self.assertEqual(self.ask("wait", 50)[0], TIMEOUT)
        before = self.ask("ecc", 2)
        self.assertEqual([c[1] for c in before[:3]], [0, 0, 0])
        self.mock_set("--gpu", "2", "fault=ecc-burst")
        self.assertEqual(self.ask("wait", 2000), [SUCCESS, 2, 0x8, 48])
        self.assertEqual(self.ask("wait", 2000), [SUCCESS, 2, 0x8, 63])
        after = self.ask("ecc", 2)
        self.assertEqual([c[1] for c in after[:3]], [10, 1, 1])
        self.assertEqual(after[3], [SUCCESS, 0, 1, 1, 0])  # rc, corrected rows, uncorrected rows, pending, failure
        self.mock_set("--gpu", "2", "fault=ecc-burst")  # counters keep rising
        self.assertEqual([c[1] for c in self.ask("ecc", 2)[:3]], [20, 2, 2])
        self.assertEqual(self.ask("ecc", 1)[0], [SUCCESS, 0])

    def test_fell_off_the_bus_gives_xid_79_then_gpu_is_lost(self):
        self.assertEqual(self.ask("name", 3), [SUCCESS])
        self.mock_set("--gpu", "3", "fault=fell-off-the-bus")
        self.assertEqual(self.ask("wait", 2000), [SUCCESS, 3, 0x8, 79])
        self.assertEqual(self.ask("name", 3), [GPU_IS_LOST])
        self.assertEqual(self.ask("temp", 3)[0], GPU_IS_LOST)
        self.assertEqual(self.ask("handle", 3), [GPU_IS_LOST])
        self.assertEqual(self.ask("name", 2), [SUCCESS])

    def test_thermal_and_power_slowdown_set_clock_event_reasons(self):
        self.assertEqual(self.ask("reasons", 0), [SUCCESS, 0x1, 210])  # idle
        self.mock_set("--gpu", "0", "fault=thermal-slowdown")
        rc, reasons, sm = self.ask("reasons", 0)
        self.assertEqual(rc, SUCCESS)
        self.assertEqual(reasons & 0x68, 0x68)  # SwThermal, HwThermal, HwSlowdown
        self.assertEqual(sm, 705)  # half the A100's 1410 MHz
        self.mock_set("--gpu", "1", "fault=power-slowdown")
        rc, reasons, sm = self.ask("reasons", 1)
        self.assertEqual(reasons & 0x8C, 0x8C)  # SwPowerCap, HwSlowdown, HwPowerBrake
        self.assertEqual(self.ask("power", 1), [SUCCESS, 400000])  # at the A100's power limit

    def test_nvlink_down(self):
        self.assertEqual(self.ask("nvlink", 1), [SUCCESS, 1])
        self.mock_set("--gpu", "1", "fault=nvlink-down")
        self.assertEqual(self.ask("nvlink", 1), [SUCCESS, 0])
        self.assertEqual(self.ask("nvlink", 0), [SUCCESS, 1])
        self.mock_set("--gpu", "1", "nvlink=up")
        self.assertEqual(self.ask("nvlink", 1), [SUCCESS, 1])

    def test_seed_draws_are_random_but_repeatable(self):
        texts = []
        for seed in ("7", "7", "8"):
            self.mock_set("--clear")
            self.mock_set("--seed", seed, "fault=ecc-burst", "fault=thermal-slowdown")
            with open(self.state) as f:
                texts.append(f.read())
        self.assertEqual(texts[0], texts[1])
        self.assertNotEqual(texts[0], texts[2])
        self.mock_set("--clear")
        self.mock_set("fault=ecc-burst")
        self.assertIn("0 ecc_corrected=10\n", open(self.state).read())


class TestClearAndBadInput(MockSetTestCase):
    def test_clear_goes_back_to_the_profile(self):
        self.mock_set("--gpu", "1", "temperature_c=90", "lost=true")
        self.mock_set("--gpu", "2", "temperature_c=91")
        self.assertEqual(self.ask("name", 1), [GPU_IS_LOST])
        self.mock_set("--gpu", "2", "--clear")
        self.assertEqual(self.ask("temp", 2), [SUCCESS, 33])
        self.assertEqual(self.ask("name", 1), [GPU_IS_LOST], "--clear with --gpu keeps the other GPUs")
        self.mock_set("--clear")
        self.assertFalse(os.path.exists(self.state))
        self.assertEqual(self.ask("name", 1), [SUCCESS])
        self.assertEqual(self.ask("temp", 1), [SUCCESS, 33])

    def test_bad_values_name_key_and_value_and_write_nothing(self):
        self.mock_set("--gpu", "0", "temperature_c=50")
        with open(self.state) as f:
            before = f.read()
        cases = [
            (["temperature_c=abc"], "temperature_c=abc"),
            (["temperature_c=201"], "temperature_c=201"),
            (["utilization_gpu=-1"], "utilization_gpu=-1"),
            (["memory_used_mib=999999999"], "memory_used_mib=999999999"),
            (["nvlink=sideways"], "nvlink=sideways"),
            (["process=0:10"], "process=0:10"),
            (["colour=blue"], "colour=blue"),
            (["fault=meltdown"], "fault=meltdown"),
            (["temperature_c"], "temperature_c: expected KEY=VALUE"),
            (["temperature_c=60", "utilization_gpu=200"], "utilization_gpu=200"),
            (["--gpu", "4", "temperature_c=60"], "--gpu 4"),
            (["--gpu", "GPU-00000000-0000-0000-0000-000000000000", "temperature_c=60"], "--gpu GPU-0000"),
            (["--seed", "x", "fault=ecc-burst"], "--seed x"),
            ([], "nothing to change"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                p = self.mock_set(*args, check=2)
                self.assertIn(needle, p.stderr)
                with open(self.state) as f:
                    self.assertEqual(f.read(), before, "a refused setting leaves the state as it was")
        self.assertEqual(self.ask("temp", 0), [SUCCESS, 50])

    def test_not_a_mock_root(self):
        p = gvtest.run(["mock", "set", "--root", self.tmp, "temperature_c=60"], check=2)
        self.assertIn("not a mock driver root", p.stderr)

    def test_help_lists_set(self):
        self.assertIn("  set ", gvtest.run(["mock", "--help"], check=0).stdout)
        out = gvtest.run(["mock", "set", "--help"], check=0).stdout
        for word in ("fault=NAME", "ecc-burst", "fell-off-the-bus", "--seed", "--clear", "temperature_c"):
            self.assertIn(word, out)


class TestContainerView(MockSetTestCase):
    """A container the runtime gave GPUs 1 and 3 (their /dev/nvidia<minor> and nvidiactl, as NVIDIA's
    toolkit or a CDI spec does) enumerates those two only, as NVML does on a real node, renumbered
    0 and 1; `mock set`, which counts the node's GPUs, still reaches them (found on a real node:
    a pod given one GPU listed all eight)."""

    def client_env_for_test(self):
        dev = self.path("dev")
        os.makedirs(dev)
        for n in ("nvidiactl", "nvidia1", "nvidia3", "nvidia-uvm"):
            open(os.path.join(dev, n), "w").close()
        return {"MOCK_NVML_DEV_DIR": dev}

    def node_uuids(self):
        out = gvtest.run(["mock", "profiles", "--report", os.path.join(self.libdir, "nvml-mock.yaml")], check=0).stdout
        return [g["uuid"] for g in json.loads(out)["gpus"]]

    def test_only_the_given_gpus_renumbered(self):
        uuids = self.node_uuids()
        self.assertEqual(self.ask("count"), [2])
        self.assertEqual(self.ask("uuid", 0), [SUCCESS, uuids[1]])
        self.assertEqual(self.ask("uuid", 1), [SUCCESS, uuids[3]])

    def test_mock_set_and_xids_follow_the_node_index(self):
        self.mock_set("--gpu", "3", "fault=fell-off-the-bus")
        self.assertEqual(self.ask("wait", 2000), [SUCCESS, 1, 0x8, 79])
        self.assertEqual(self.ask("name", 1), [GPU_IS_LOST])
        self.assertEqual(self.ask("name", 0), [SUCCESS])
        self.mock_set("--gpu", "2", "temperature_c=91")  # a GPU this container does not see
        self.assertNotEqual(self.ask("temp", 0)[1], 91)

    def test_mock_nvidia_smi_lists_the_given_gpus(self):
        uuids = self.node_uuids()
        smi = os.path.join(self.root, "usr", "bin", "nvidia-smi")
        env = gvtest.clean_env(MOCK_NVML_DEV_DIR=self.path("dev"))
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, env=env, timeout=30).stdout
        self.assertEqual([line.split("UUID: ")[1].rstrip(")") for line in out.splitlines()], [uuids[1], uuids[3]])
        self.assertTrue(out.startswith("GPU 0: "), out)
        # No nvidiactl there (a plain host, a privileged container without injected GPUs): every GPU.
        env = gvtest.clean_env(MOCK_NVML_DEV_DIR=self.path("nowhere"))
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, env=env, timeout=30).stdout
        self.assertEqual(len(out.splitlines()), 4)


class TestContainerViewMig(gvtest.TempDirTestCase):
    """A container given one MIG device (its GPU's node and the GPU and compute instance access
    capabilities in nvidia-caps, as the CDI spec lists them) sees that MIG device alone."""

    def test_only_the_given_mig_device(self):
        prof = json.loads(gvtest.run(["mock", "profiles", "--json", "a100-sxm4-40gb", "--gpus", "2"], check=0).stdout)
        mig = prof["devices"][0]["mig"]
        mig.update(mode="enabled", pending_mode="enabled", devices=["1g.5gb", "1g.5gb", "2g.10gb"])
        pf = self.path("mig.json")
        with open(pf, "w") as f:
            json.dump(prof, f)
        root = self.path("root")
        gvtest.run(["mock", "install", "--root", root, "--profile", pf, "--device-nodes=files"], check=0)
        smi = os.path.join(root, "usr", "bin", "nvidia-smi")
        full = subprocess.run([smi, "-L"], capture_output=True, text=True, env=gvtest.clean_env(), timeout=30).stdout
        migs = [line.split("UUID: ")[1].rstrip(")") for line in full.splitlines() if "MIG" in line]
        self.assertEqual(len(migs), 3, full)
        dev = self.path("dev")
        os.makedirs(os.path.join(dev, "nvidia-caps"))
        # MIG device 1 is GPU instance 2, compute instance 0: capabilities 3 + 2 * 9 = 21 and 22.
        for n in ("nvidiactl", "nvidia0", "nvidia-caps/nvidia-cap21", "nvidia-caps/nvidia-cap22"):
            open(os.path.join(dev, n), "w").close()
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, env=gvtest.clean_env(MOCK_NVML_DEV_DIR=dev),
                             timeout=30).stdout
        lines = out.splitlines()
        self.assertEqual(len(lines), 2, out)
        self.assertTrue(lines[0].startswith("GPU 0: "), out)
        self.assertIn(f"Device  0: (UUID: {migs[1]})", lines[1])
