"""End-to-end tests of `gpu-validator metrics`, the read-only Prometheus exporter.

Each test starts the real binary on 127.0.0.1 (port 0: the kernel picks a
free one; the port is read from the "serving http://..." log line) with a
temporary status folder, a fake boot id file and a fake sysfs tree, writes
marker files itself (the format of src/markers/markers.h), scrapes, and
checks every series against what the folder holds.
"""
import ctypes
import ctypes.util
import http.client
import os
import re
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
import unittest

import gvtest

NODE = "node-e2e"
BOOT_A = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
BOOT_B = "ffffffff-4f50-6172-8394-a5b6c7d8e9f0"

MARKERS = ["driver-ready", "host-driver-ready", "nvidia-fs-ready", "gdrcopy-ready", "nvidia-peermem-ready",
           "toolkit-ready", "cuda-ready", "plugin-ready",
           # GPUDirect and sandbox
           "mofed-ready", "cc-manager-ready", "vfio-pci-ready", "vgpu-manager-ready", "host-vgpu-manager-ready",
           "vgpu-devices-ready"]
COMPANIONS = {"host-driver-ready", "host-vgpu-manager-ready"}
PARENT = {"nvidia-fs-ready": "driver-ready", "gdrcopy-ready": "driver-ready", "nvidia-peermem-ready": "driver-ready",
          "toolkit-ready": "driver-ready", "cuda-ready": "toolkit-ready", "plugin-ready": "cuda-ready",
          "vgpu-devices-ready": "vgpu-manager-ready"}
STATES = ["ready", "missing", "stale", "inconsistent", "foreign"]
UPSTREAM_READY = {"driver-ready": "gpu_operator_node_driver_ready", "toolkit-ready": "gpu_operator_node_toolkit_ready",
                  "cuda-ready": "gpu_operator_node_cuda_ready", "plugin-ready": "gpu_operator_node_plugin_ready"}
CHAIN = ["driver-ready", "toolkit-ready", "cuda-ready", "plugin-ready"]
# Fixed VALIDATED_AT per marker so timestamps can be checked exactly.
VALIDATED_AT = {m: ("2026-03-01T12:%02d:00Z" % i, 1772366400 + 60 * i) for i, m in enumerate(MARKERS)}


def component(marker):
    return marker[:-len("-ready")]


def generation_key(marker):
    return component(marker).upper().replace("-", "_") + "_GENERATION"


class Folder:
    """A status folder the test writes markers into, the way the marker store does."""

    def __init__(self, path):
        self.path = path
        self.gens = {}

    def write(self, marker, boot=BOOT_A, parent_gen=None, **facts):
        gen = secrets.token_hex(16)
        lines = ["VALIDATOR_VERSION=e2e", f"GENERATION={gen}", f"BOOT_ID={boot}",
                 f"VALIDATED_AT={VALIDATED_AT[marker][0]}"]
        parent = PARENT.get(marker)
        if parent:
            pg = parent_gen if parent_gen is not None else self.gens.get(parent, "0" * 32)
            lines.append(f"{generation_key(parent)}={pg}")
        lines += [f"{k}={v}" for k, v in facts.items()]
        tmp = os.path.join(self.path, ".e2e-writing")
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.rename(tmp, os.path.join(self.path, marker))
        self.gens[marker] = gen
        return gen

    def chain(self, boot=BOOT_A, **driver_facts):
        self.write("driver-ready", boot=boot, **driver_facts)
        self.write("toolkit-ready", boot=boot)
        self.write("cuda-ready", boot=boot, VALIDATION_DURATION_SECONDS="12.5")
        self.write("plugin-ready", boot=boot, DEVICE_PLUGIN_DEVICES="2")

    def touch(self, marker):
        with open(os.path.join(self.path, marker), "w"):
            pass

    def remove(self, marker):
        os.unlink(os.path.join(self.path, marker))

    def snapshot(self):
        """name -> (inode, size, mtime_ns, mode) of every entry."""
        out = {}
        for name in sorted(os.listdir(self.path)):
            st = os.lstat(os.path.join(self.path, name))
            out[name] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)
        return out


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """Exposition text -> ({(name, ((label, value), ...)): float}, {name: type})."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
            continue
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        assert m, f"bad sample line: {line!r}"
        labels = tuple(sorted(_LABEL.findall(m.group(2) or "")))
        key = (m.group(1), labels)
        assert key not in samples, f"duplicate series {key}"
        samples[key] = float(m.group(3))
    return samples, types


def series(name, **labels):
    labels = dict(labels)
    labels.setdefault("node", NODE)
    return (name, tuple(sorted(labels.items())))


def expected(states, validated=(), durations=None, nvml=None, pci=0, plugin_devices=0):
    """The complete set of series for marker @states (marker -> state); absent markers are missing."""
    st = {m: states.get(m, "missing") for m in MARKERS}
    e = {}
    for m, name in UPSTREAM_READY.items():
        e[series(name)] = 1.0 if st[m] == "ready" else 0.0
    e[series("gpu_operator_node_driver_validation")] = 1.0 if st["driver-ready"] == "ready" else 0.0
    e[series("gpu_operator_node_driver_validation_last_success_ts_seconds")] = \
        float(VALIDATED_AT["driver-ready"][1]) if "driver-ready" in validated else 0.0
    e[series("gpu_operator_node_device_plugin_devices_total")] = \
        float(plugin_devices) if st["plugin-ready"] == "ready" else 0.0
    e[series("gpu_operator_nvidia_pci_devices_total")] = float(pci)
    for m in MARKERS:
        for s in STATES:
            e[series("gpu_validator_marker_state", marker=m, state=s)] = 1.0 if st[m] == s else 0.0
        if m in COMPANIONS:
            continue
        e[series("gpu_validator_component_ready", component=component(m))] = 1.0 if st[m] == "ready" else 0.0
        if m in validated:
            e[series("gpu_validator_last_success_timestamp_seconds", component=component(m))] = \
                float(VALIDATED_AT[m][1])
        if durations and m in durations:
            e[series("gpu_validator_validation_duration_seconds", component=component(m))] = durations[m]
    if nvml is not None:
        e[series("gpu_validator_gpus", source="nvml")] = float(nvml)
    e[series("gpu_validator_gpus", source="pci")] = float(pci)
    return e


class Exporter:
    """A running `gpu-validator metrics`."""

    def __init__(self, args, env=None, listen="127.0.0.1:0"):
        cmd = [gvtest.GV, "metrics"] + (["--listen", listen] if listen else []) + list(args)
        self.proc = subprocess.Popen(cmd, env=env if env is not None else gvtest.clean_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.log = []
        self.port = None
        ready = threading.Event()

        def reader():
            for line in self.proc.stderr:
                self.log.append(line)
                m = re.search(r"serving http://(\S+):(\d+)/metrics", line)
                if m:
                    self.port = int(m.group(2))
                    ready.set()
            ready.set()

        self.thread = threading.Thread(target=reader, daemon=True)
        self.thread.start()
        ready.wait(20)
        if self.port is None:
            self.stop()
            raise AssertionError("exporter did not start:\n" + "".join(self.log))

    def wait_log(self, text, timeout=10.0):
        """Whether a stderr line holding @text arrives within @timeout s (the reader is a thread)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in self.log):
                return True
            time.sleep(0.02)
        return False

    def request(self, method="GET", path="/metrics"):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            c.request(method, path)
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read().decode()
        finally:
            c.close()

    def scrape(self):
        status, headers, body = self.request()
        assert status == 200, (status, body)
        return body

    def samples(self):
        return parse(self.scrape())[0]

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.thread.join(5)
        return rc


class Inotify:
    """Write-kind events in a folder, through libc's inotify (Python's standard library has no binding)."""
    MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200  # MODIFY ATTRIB CLOSE_WRITE MOVED_FROM MOVED_TO CREATE DELETE
    NAMES = {0x2: "modify", 0x4: "attrib", 0x8: "close-write", 0x40: "moved-from", 0x80: "moved-to",
             0x100: "create", 0x200: "delete"}

    def __init__(self, path):
        self.libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if self.libc.inotify_add_watch(self.fd, os.fsencode(path), self.MASK) < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch")

    def events(self):
        """Drain pending events: [(kind, name)]."""
        out = []
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            i = 0
            while i < len(buf):
                _, mask, _, n = struct.unpack_from("iIII", buf, i)
                name = buf[i + 16:i + 16 + n].rstrip(b"\0").decode()
                i += 16 + n
                kinds = [v for k, v in self.NAMES.items() if mask & k]
                out += [(k, name) for k in kinds]

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class MetricsTestCase(gvtest.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.dir = self.path("validations")
        os.mkdir(self.dir)
        self.folder = Folder(self.dir)
        self.boot = self.path("boot_id")
        with open(self.boot, "w") as f:
            f.write(BOOT_A + "\n")
        self.sysfs = self.path("sys")
        os.makedirs(os.path.join(self.sysfs, "bus", "pci", "devices"))

    def start(self, *extra, env=None, listen="127.0.0.1:0"):
        args = ["--output-dir", self.dir, "--node-name", NODE, "--boot-id-file", self.boot,
                "--sysfs-root", self.sysfs] + list(extra)
        exp = Exporter(args, env=env, listen=listen)
        self.addCleanup(exp.stop)
        return exp

    def assertSeries(self, got, want):
        got = dict(got)
        got.pop(series("gpu_validator_build_info", version=gvtest_version()), None)
        # the two time stamps of upstream's exporter: present always, checked in TestUpstreamTimestamps
        for name in ("gpu_operator_node_metrics_ready_ts_seconds",
                     "gpu_operator_node_device_plugin_validation_last_success_ts_seconds"):
            self.assertIn(series(name), got)
            got.pop(series(name))
        missing = {k: v for k, v in want.items() if k not in got}
        extra = {k: v for k, v in got.items() if k not in want}
        wrong = {k: (got[k], v) for k, v in want.items() if k in got and got[k] != v}
        self.assertEqual((missing, extra, wrong), ({}, {}, {}), "series differ (missing, extra, (got, want))")


_VERSION = []


def gvtest_version():
    if not _VERSION:
        out = gvtest.run(["--version"], check=0).stdout.split()
        _VERSION.append(out[1])  # "gpu-validator VERSION (commit C)"
    return _VERSION[0]


class TestUpstreamTimestamps(MetricsTestCase):
    """gpu_operator_node_metrics_ready_ts_seconds and ..._device_plugin_validation_last_success_ts_seconds,
    with upstream's meaning (cmd/nvidia-validator/metrics.go): the exporter's start, and the last time
    GPUs were seen advertised on the node (0 before)."""

    def value(self, exp, name):
        return exp.samples()[series(name)]

    def test_metrics_ready_is_the_start_time(self):
        t0 = int(time.time())
        exp = self.start()
        t1 = time.time()
        v = self.value(exp, "gpu_operator_node_metrics_ready_ts_seconds")
        self.assertTrue(t0 <= v <= t1, (t0, v, t1))
        time.sleep(1.1)
        self.folder.chain()  # a change re-renders the page; the start time stays
        self.assertEqual(self.value(exp, "gpu_operator_node_metrics_ready_ts_seconds"), v)

    def test_plugin_last_success_follows_advertised_gpus(self):
        name = "gpu_operator_node_device_plugin_validation_last_success_ts_seconds"
        exp = self.start()
        self.assertEqual(self.value(exp, name), 0)
        self.folder.write("driver-ready")
        self.folder.write("toolkit-ready")
        self.folder.write("cuda-ready")
        self.folder.write("plugin-ready", DEVICE_PLUGIN_DEVICES="0")  # no GPU advertised: not a success
        self.assertEqual(self.value(exp, name), 0)
        t0 = int(time.time())
        self.folder.write("plugin-ready", DEVICE_PLUGIN_DEVICES="4")
        seen = self.value(exp, name)
        self.assertTrue(t0 <= seen <= time.time(), (t0, seen))
        time.sleep(1.1)
        self.folder.remove("plugin-ready")  # gone: the last time they were seen stays
        self.assertEqual(self.value(exp, name), seen)


class TestStates(MetricsTestCase):
    """Every metric and label against the folder, in each marker state."""

    def test_missing(self):
        exp = self.start()
        self.assertSeries(exp.samples(), expected({}))

    def test_folder_absent_then_created(self):
        shutil.rmtree(self.dir)
        exp = self.start()
        self.assertSeries(exp.samples(), expected({}))
        os.mkdir(self.dir)
        self.folder.chain(GPU_COUNT="2")
        self.assertSeries(exp.samples(), expected({m: "ready" for m in CHAIN}, validated=CHAIN,
                                                  durations={"cuda-ready": 12.5}, nvml=2, plugin_devices=2))
        self.assertTrue(exp.wait_log("does not exist yet"), "".join(exp.log))

    def test_ready(self):
        self.folder.chain(GPU_COUNT="2")
        exp = self.start()
        self.assertSeries(exp.samples(), expected({m: "ready" for m in CHAIN}, validated=CHAIN,
                                                  durations={"cuda-ready": 12.5}, nvml=2, plugin_devices=2))

    def test_stale_other_boot(self):
        self.folder.chain(boot=BOOT_B, GPU_COUNT="2")
        exp = self.start()
        # driver-ready from another boot is stale; its dependants are inconsistent with it
        self.assertSeries(exp.samples(), expected({"driver-ready": "stale", "toolkit-ready": "stale",
                                                   "cuda-ready": "stale", "plugin-ready": "stale"},
                                                  validated=CHAIN, durations={"cuda-ready": 12.5}))

    def test_stale_via_boot_id_file(self):
        self.folder.chain(GPU_COUNT="2")
        other = self.path("boot_id_b")
        with open(other, "w") as f:
            f.write(BOOT_B + "\n")
        self.boot = other
        exp = self.start()
        self.assertSeries(exp.samples(), expected({m: "stale" for m in CHAIN}, validated=CHAIN,
                                                  durations={"cuda-ready": 12.5}))

    def test_inconsistent_generation(self):
        self.folder.chain(GPU_COUNT="2")
        self.folder.write("toolkit-ready", parent_gen="f" * 32)  # not driver-ready's generation
        self.folder.write("cuda-ready", VALIDATION_DURATION_SECONDS="12.5")
        self.folder.write("plugin-ready", DEVICE_PLUGIN_DEVICES="2")
        exp = self.start()
        self.assertSeries(exp.samples(), expected(
            {"driver-ready": "ready", "toolkit-ready": "inconsistent", "cuda-ready": "inconsistent",
             "plugin-ready": "inconsistent"}, validated=CHAIN, durations={"cuda-ready": 12.5}, nvml=2))

    def test_foreign_touch(self):
        self.folder.write("driver-ready", GPU_COUNT="1")
        self.folder.touch("toolkit-ready")
        self.folder.touch("gdrcopy-ready")
        exp = self.start()
        self.assertSeries(exp.samples(), expected(
            {"driver-ready": "ready", "toolkit-ready": "foreign", "gdrcopy-ready": "foreign"},
            validated=["driver-ready"], nvml=1))

    def test_fr18_invalidation_reverts_every_gauge(self):
        """FR18: all ready, then one marker invalidated: the node-level signal drops at the next scrape."""
        self.folder.chain(GPU_COUNT="2")
        exp = self.start()
        s = exp.samples()
        self.assertTrue(all(s[series(n)] == 1 for n in UPSTREAM_READY.values()))
        self.folder.remove("driver-ready")
        self.assertSeries(exp.samples(), expected(
            {"toolkit-ready": "inconsistent", "cuda-ready": "inconsistent", "plugin-ready": "inconsistent"},
            validated=CHAIN[1:], durations={"cuda-ready": 12.5}))
        self.assertTrue(exp.wait_log("driver-ready: ready -> missing"), "".join(exp.log))

    def test_pci_fake_sysfs(self):
        dev = os.path.join(self.sysfs, "bus", "pci", "devices")
        for bdf, vendor, cls in [("0000:01:00.0", "0x10de", "0x030000"), ("0000:01:00.1", "0x10de", "0x040300"),
                                 ("0000:01:00.2", "0x10de", "0x0c0330"), ("0000:01:00.3", "0x10de", "0x0c8000"),
                                 ("0000:02:00.0", "0x10de", "0x060400"), ("0000:3b:00.0", "0x10de", "0x030200"),
                                 ("0000:00:02.0", "0x8086", "0x030000")]:
            os.mkdir(os.path.join(dev, bdf))
            for name, value in (("vendor", vendor), ("class", cls)):
                with open(os.path.join(dev, bdf, name), "w") as f:
                    f.write(value + "\n")
        exp = self.start()
        self.assertSeries(exp.samples(), expected({}, pci=2))


class TestLive(MetricsTestCase):
    def test_changes_reflected_in_next_scrape(self):
        """No sleep between a change and the scrape: inotify marks the page dirty before write() returns."""
        self.folder.write("driver-ready", GPU_COUNT="1")
        exp = self.start()
        key = series("gpu_validator_marker_state", marker="toolkit-ready", state="ready")
        for i in range(30):
            kind = i % 3
            if kind == 0:
                self.folder.write("toolkit-ready")
                want = "ready"
            elif kind == 1:
                self.folder.touch("toolkit-ready")
                want = "foreign"
            else:
                self.folder.remove("toolkit-ready")
                want = "missing"
            s = exp.samples()
            for st in STATES:
                self.assertEqual(s[series("gpu_validator_marker_state", marker="toolkit-ready", state=st)],
                                 1.0 if st == want else 0.0, f"iteration {i}: expected {want}")
        self.assertIn(key, s)

    def test_cache_serves_unchanged_page(self):
        self.folder.chain(GPU_COUNT="2")
        exp = self.start()
        first = exp.scrape()
        for _ in range(20):
            self.assertEqual(exp.scrape(), first)
        exp.stop()
        m = [line for line in exp.log if "stopped after" in line]
        self.assertTrue(m, "".join(exp.log))
        scrapes, renders = map(int, re.search(r"stopped after (\d+) scrapes \((\d+) renders\)", m[0]).groups())
        self.assertEqual(scrapes, 21)
        self.assertEqual(renders, 1, "an unchanged folder must not be re-read on every scrape")


class TestReadOnly(MetricsTestCase):
    def assertNoEvents(self, watch, what):
        ev = watch.events()
        self.assertEqual(ev, [], f"the exporter changed the status folder during {what}: {ev}")

    def test_scrapes_never_write(self):
        """While the test changes markers under it, every change in the folder is the test's own."""
        watch = Inotify(self.dir)
        self.addCleanup(watch.close)
        self.folder.chain(GPU_COUNT="2")
        exp = self.start()
        exp.scrape()
        watch.events()  # the test's own writes (and a writer lock the store may create on open, see below)
        before = self.folder.snapshot()
        for _ in range(5):
            exp.scrape()
        self.assertNoEvents(watch, "scrapes of an unchanged folder")
        self.assertEqual(self.folder.snapshot(), before)

        actions = [lambda: self.folder.write("toolkit-ready", parent_gen="e" * 32),
                   lambda: self.folder.touch("gdrcopy-ready"),
                   lambda: self.folder.remove("plugin-ready"),
                   lambda: self.folder.write("driver-ready", boot=BOOT_B),
                   lambda: shutil.rmtree(self.dir) or os.mkdir(self.dir),
                   lambda: self.folder.chain(GPU_COUNT="3")]
        for i, act in enumerate(actions):
            act()
            time.sleep(0.05)
            watch.events()  # ours
            before = self.folder.snapshot()
            for _ in range(3):
                exp.scrape()
            if i != 4:  # the watch is gone with the folder removed and re-created
                self.assertNoEvents(watch, f"scrapes after action {i}")
            if i == 4:
                watch.close()
                watch = Inotify(self.dir)
                self.addCleanup(watch.close)
            self.assertEqual(self.folder.snapshot(), before, f"folder changed by scrapes after action {i}")
        self.assertEqual(exp.stop(), 0)

    def test_marker_files_untouched_from_start(self):
        """From before the exporter starts: no marker is created, removed or rewritten by it."""
        self.folder.chain(GPU_COUNT="2")
        self.folder.touch("gdrcopy-ready")
        watch = Inotify(self.dir)
        self.addCleanup(watch.close)
        before = {k: v for k, v in self.folder.snapshot().items() if not k.startswith(".")}
        exp = self.start()
        for _ in range(5):
            exp.scrape()
        self.assertEqual(exp.stop(), 0)
        after = {k: v for k, v in self.folder.snapshot().items() if not k.startswith(".")}
        self.assertEqual(after, before)
        marker_events = [e for e in watch.events() if not e[1].startswith(".")]
        self.assertEqual(marker_events, [])

    def test_writes_nothing_at_all(self):
        """Strict: not even the store's writer lock, nor a stray temp file of a crashed writer.

        The marker store's gv_store_open() creates .gpu-validator.lock and removes stray
        .<marker>.tmp-* files; a read-only open (gv_store_options_t.read_only) has been asked
        for.  Until it exists, exactly those two effects are reported as a skip; any other
        change fails.
        """
        self.folder.chain(GPU_COUNT="2")
        stray = ".toolkit-ready.tmp-e2e"
        with open(os.path.join(self.dir, stray), "w") as f:
            f.write("half")
        watch = Inotify(self.dir)
        self.addCleanup(watch.close)
        before = self.folder.snapshot()
        exp = self.start()
        for _ in range(3):
            exp.scrape()
        self.assertEqual(exp.stop(), 0)
        events = watch.events()
        after = self.folder.snapshot()
        known = {".gpu-validator.lock", stray}
        self.assertEqual([e for e in events if e[1] not in known], [])
        self.assertEqual({k: v for k, v in after.items() if k not in known},
                         {k: v for k, v in before.items() if k not in known})
        if events or after != before:
            self.skipTest("known gap: the marker store's open writes its lock file / removes stray temp files "
                          f"(needs a read-only open): {sorted(set(events))}")


class TestPromtool(MetricsTestCase):
    def promtool(self):
        p = shutil.which("promtool")
        if not p:
            if os.environ.get("CI") == "true":
                self.fail("promtool is required in CI (Debian package prometheus)")
            self.skipTest("promtool not installed (Debian package prometheus)")
        return p

    def check(self, text):
        p = subprocess.run([self.promtool(), "check", "metrics"], input=text, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, f"promtool:\n{p.stdout}{p.stderr}\n--- scrape ---\n{text}")

    def test_promtool_every_state(self):
        promtool = self.promtool()
        self.assertTrue(promtool)
        exp = self.start()
        self.check(exp.scrape())  # all missing
        self.folder.chain(GPU_COUNT="2")
        self.check(exp.scrape())  # ready, with timestamps, durations and both GPU sources
        self.folder.write("toolkit-ready", parent_gen="1" * 32)
        self.folder.touch("gdrcopy-ready")
        self.check(exp.scrape())  # inconsistent and foreign

    def test_promtool_odd_node_name(self):
        self.promtool()
        exp = Exporter(["--output-dir", self.dir, "--node-name", 'we"ird\\node', "--boot-id-file", self.boot,
                        "--sysfs-root", self.sysfs])
        self.addCleanup(exp.stop)
        text = exp.scrape()
        self.assertIn('gpu_operator_node_driver_ready{node="we\\"ird\\\\node"} 0', text)
        self.check(text)


class TestHttpAndCli(MetricsTestCase):
    def test_endpoints(self):
        exp = self.start()
        status, headers, body = exp.request()
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8")
        _, types = parse(body)
        self.assertEqual(types["gpu_operator_node_driver_ready"], "gauge")
        self.assertEqual(types["gpu_operator_nvidia_pci_devices_total"], "untyped")
        status, _, body = exp.request("HEAD")
        self.assertEqual((status, body), (200, ""))
        self.assertEqual(exp.request(path="/healthz")[::2], (200, "ok\n"))
        self.assertEqual(exp.request(path="/")[0], 404)
        self.assertEqual(exp.request(path="/metrics/x")[0], 404)
        status, headers, _ = exp.request("POST")
        self.assertEqual(status, 405)
        self.assertEqual(headers.get("Allow"), "GET, HEAD")

    def test_sigterm_and_sigint_exit_zero(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            exp = self.start()
            exp.scrape()
            t0 = time.monotonic()
            self.assertEqual(exp.stop(sig), 0, "".join(exp.log))
            self.assertLess(time.monotonic() - t0, 3)

    def test_metrics_port_env(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        env = gvtest.clean_env(METRICS_PORT=port, NODE_NAME=NODE, OUTPUT_DIR=self.dir)
        exp = Exporter(["--boot-id-file", self.boot, "--sysfs-root", self.sysfs], env=env, listen=None)
        self.addCleanup(exp.stop)
        self.assertEqual(exp.port, port)
        self.assertSeries(exp.samples(), expected({}))

    def test_ipv6_loopback(self):
        if not socket.has_ipv6:
            self.skipTest("no IPv6")
        try:
            socket.create_server(("::1", 0), family=socket.AF_INET6).close()
        except OSError as e:
            self.skipTest(f"no IPv6 loopback: {e}")
        exp = self.start(listen="[::1]:0")
        c = http.client.HTTPConnection("::1", exp.port, timeout=10)
        c.request("GET", "/healthz")
        self.assertEqual(c.getresponse().status, 200)
        c.close()

    def test_usage_errors(self):
        base = ["metrics", "--output-dir", self.dir, "--boot-id-file", self.boot]
        p = gvtest.run(base + ["--listen", "127.0.0.1:0"], check=2)
        self.assertIn("NODE_NAME", p.stderr)
        p = gvtest.run(base + ["--node-name", NODE, "--listen", "8000"], check=2)
        self.assertIn(":8000", p.stderr)
        p = gvtest.run(base + ["--node-name", NODE, "--listen", "::1:80"], check=2)
        self.assertIn("brackets", p.stderr)
        gvtest.run(base + ["--node-name", NODE], env=gvtest.clean_env(METRICS_PORT="http"), check=2)
        gvtest.run(base + ["--node-name", NODE], env=gvtest.clean_env(METRICS_PORT="70000"), check=2)
        gvtest.run(base + ["--node-name", NODE, "extra"], check=2)
        p = gvtest.run(["metrics", "--help"], check=0)
        self.assertIn("--listen", p.stdout)

    def test_port_in_use(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        self.addCleanup(s.close)
        port = s.getsockname()[1]
        p = gvtest.run(["metrics", "--output-dir", self.dir, "--node-name", NODE, "--listen", f"127.0.0.1:{port}"],
                       check=2, timeout=20)
        self.assertIn("in use", p.stderr)


if __name__ == "__main__":
    unittest.main()
