"""End-to-end tests of `gpu-validator watch` (gpu-operator #2685): after the
chain has passed, a driver container restart (.driver-ctr-ready and the device nodes removed, then
recreated) or a lost device node takes the markers away within a second and a re-validation in
place brings them back, with the chain invariant held at every instant a reader looks."""
import os
import shutil
import signal
import subprocess
import threading
import time

import chain
import gvtest

FLAG = ".driver-ctr-ready"
FAST = ["--revalidate-backoff", "0", "--revalidate-max-backoff", "1", "--revalidate-min-interval", "0"]


def read_or_none(path):
    """(inode, content) of a marker, or None when it is absent (or went while being read)."""
    try:
        st = os.lstat(path)
        return st.st_ino, chain.parse_plain(path)
    except FileNotFoundError:
        return None


class Reader(threading.Thread):
    """A consumer reading the chain over and over, downstream first (toolkit, driver, toolkit
    again).  A violation is provable only when toolkit-ready was the same file before and after
    driver-ready was read (the protocol removes toolkit-ready before driver-ready changes): then
    driver-ready must be there with the generation toolkit-ready records.  Also records when a
    consumer (`[ -f toolkit-ready ]`) saw ready and not ready."""

    def __init__(self, status):
        super().__init__(daemon=True)
        self.status = status
        self.stop = threading.Event()
        self.violations = []
        self.samples = 0
        self.lock = threading.Lock()
        self.transitions = []  # (monotonic time, ready) on each change of toolkit-ready's presence

    def run(self):
        last = None
        tk_path = os.path.join(self.status, "toolkit-ready")
        drv_path = os.path.join(self.status, "driver-ready")
        while not self.stop.is_set():
            t1 = read_or_none(tk_path)
            d = read_or_none(drv_path)
            t2 = read_or_none(tk_path)
            now = time.monotonic()
            ready = t2 is not None
            with self.lock:
                self.samples += 1
                if ready != last:
                    self.transitions.append((now, ready))
                    last = ready
                if t1 is not None and t2 is not None and t1 == t2:
                    gen = t1[1].get("DRIVER_GENERATION")
                    if d is None:
                        self.violations.append("toolkit-ready present without driver-ready")
                    elif d[1].get("GENERATION") != gen:
                        self.violations.append(f"toolkit-ready records {gen}, driver-ready has {d[1].get('GENERATION')}")
            time.sleep(0.0005)

    def seen(self, t0, ready, timeout=5.0):
        """Seconds from @t0 until this reader first saw @ready (waits up to @timeout for it), or None."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            d = self.first_change_after(t0, ready)
            if d is not None:
                return d
            time.sleep(0.005)
        return None

    def first_change_after(self, t0, ready):
        with self.lock:
            for t, r in self.transitions:
                if t >= t0 and r == ready:
                    return t - t0
        return None


class WatchTestCase(gvtest.TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.node = chain.Node(self.tmp)
        self.node.install_mock("driver", gpus=2)
        self.flag = os.path.join(self.node.status, FLAG)
        self.devdir = os.path.join(self.node.driver, "dev")
        self.parked = self.path("parked-dev")
        os.mkdir(self.parked)
        with open(self.flag, "w") as f:
            f.write("GDS_ENABLED: false\n")
        self.proc = None

    def start(self, *extra):
        args = [gvtest.GV, "watch", "--components", "driver,toolkit", *self.node.args(*FAST), *extra]
        self.out = open(self.path("watch.out"), "w+")
        self.err = open(self.path("watch.err"), "w+")
        self.addCleanup(self.out.close)
        self.addCleanup(self.err.close)
        self.proc = subprocess.Popen(args, env=gvtest.clean_env(), stdout=self.out, stderr=self.err)
        self.addCleanup(self.kill)
        self.wait_for(lambda: self.node.exists("toolkit-ready"), 30, "first validation")
        self.wait_for(lambda: "all validations are successful" in self.stdout(), 5, "the success line")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stdout(self):
        self.out.flush()
        with open(self.out.name) as f:
            return f.read()

    def logs(self):
        with open(self.err.name) as f:
            return f.read()

    def wait_for(self, cond, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return
            if self.proc and self.proc.poll() is not None:
                self.fail(f"watch exited {self.proc.returncode} while waiting for {what}:\n{self.logs()}")
            time.sleep(0.005)
        self.fail(f"timed out waiting for {what}\nstderr:\n{self.logs()}")

    def counters(self):
        p = os.path.join(self.node.status, ".gpu-validator-revalidations")
        return chain.parse_plain(p) if os.path.exists(p) else {}

    def park_nodes(self):
        for n in os.listdir(self.devdir):
            if n.startswith("nvidia"):
                os.rename(os.path.join(self.devdir, n), os.path.join(self.parked, n))

    def unpark_nodes(self):
        for n in os.listdir(self.parked):
            os.rename(os.path.join(self.parked, n), os.path.join(self.devdir, n))

    def reader(self):
        r = Reader(self.node.status)
        r.start()
        self.addCleanup(r.join)
        self.addCleanup(r.stop.set)
        return r


class TestDriverContainerRestart(WatchTestCase):
    def test_markers_go_within_a_second_and_come_back_after_revalidation(self):
        self.start()
        before = self.node.read("driver-ready")["GENERATION"]
        r = self.reader()
        time.sleep(0.05)
        # the driver container dies: its flag and its device nodes go
        t0 = time.monotonic()
        os.unlink(self.flag)
        self.park_nodes()
        self.wait_for(lambda: not self.node.exists("toolkit-ready") and not self.node.exists("driver-ready"), 1.0,
                      "markers removed within 1 s")
        gone = r.seen(t0, False)
        self.assertIsNotNone(gone)
        self.assertLess(gone, 1.0)
        # while the driver is away, re-validation fails and nothing is published
        time.sleep(1.5)
        self.assertEqual(self.node.present(), [])
        # the driver container is back
        t1 = time.monotonic()
        self.unpark_nodes()
        with open(self.flag, "w") as f:
            f.write("GDS_ENABLED: false\n")
        self.wait_for(lambda: self.node.exists("toolkit-ready"), 20, "markers back after re-validation")
        self.assertIsNotNone(r.seen(t1, True))
        time.sleep(0.05)
        r.stop.set()
        r.join()
        self.assertGreater(r.samples, 100)
        self.assertEqual(r.violations, [])
        self.assertEqual(chain.invariant_violations(self.node.status, self.node.boot), [])
        after = self.node.read("driver-ready")["GENERATION"]
        self.assertNotEqual(before, after)
        self.assertEqual(self.node.read("toolkit-ready")["DRIVER_GENERATION"], after)
        self.assertEqual(self.counters().get("DRIVER_CONTAINER_RESTART"), "1")
        # the line is printed once the re-run chain returns, just after its last marker
        self.wait_for(lambda: self.stdout().count("all validations are successful") == 2, 10,
                      "the second 'all validations are successful'")
        self.assertIn("driver-container-restart: .driver-ctr-ready removed", self.logs())
        self.assertIsNone(self.proc.poll())  # still running: no pod restart

    def test_quick_restart_replacing_the_flag_is_seen(self):
        self.start()
        before = self.node.read("driver-ready")["GENERATION"]
        tmp = self.flag + ".new"
        with open(tmp, "w") as f:
            f.write("GDS_ENABLED: false\n")
        os.rename(tmp, self.flag)  # a new flag file at once: never absent
        self.wait_for(lambda: self.counters().get("DRIVER_CONTAINER_RESTART") == "1", 1.0, "the restart counted")
        self.wait_for(lambda: self.node.exists("toolkit-ready") and
                      self.node.read("driver-ready")["GENERATION"] != before, 20, "re-validated")


class TestDeviceNode(WatchTestCase):
    def test_lost_device_node_invalidates_and_revalidates(self):
        self.start()
        r = self.reader()
        t0 = time.monotonic()
        os.rename(os.path.join(self.devdir, "nvidia1"), os.path.join(self.parked, "nvidia1"))
        self.wait_for(lambda: not self.node.exists("toolkit-ready"), 1.0, "markers removed within 1 s")
        gone = r.seen(t0, False)
        self.assertIsNotNone(gone)
        self.assertLess(gone, 1.0)
        self.wait_for(lambda: self.counters().get("DEVICE_NODE_REMOVED") == "1", 2, "the re-validation counted")
        self.wait_for(lambda: "device-node-removed: nvidia1" in self.logs(), 2, "the log line naming the node")
        self.unpark_nodes()
        self.wait_for(lambda: self.node.exists("toolkit-ready"), 20, "markers back")
        r.stop.set()
        r.join()
        self.assertEqual(r.violations, [])

    def test_a_new_node_is_no_change(self):
        self.start()
        g = self.node.read("driver-ready")["GENERATION"]
        shutil.copy(os.path.join(self.devdir, "nvidia0"), os.path.join(self.devdir, "nvidia7"))
        time.sleep(1.0)
        self.assertEqual(self.node.read("driver-ready")["GENERATION"], g)
        self.assertTrue(self.node.exists("toolkit-ready"))
        self.assertEqual(self.counters(), {})


class TestGpuLost(WatchTestCase):
    """A GPU falls off the bus (Xid 79, then NVML answers GPU_IS_LOST) while the node files stay as
    they were: the watcher's GPU health probe (NVML event set + per-GPU probe) removes the markers
    downstream first, the re-run's driver check names the GPU (index, UUID, bus id, Xid), and the
    chain is validated again once the fault is cleared."""

    def mock_set(self, *args):
        gvtest.run(["mock", "set", "--root", self.node.driver, *args], check=0)

    def test_lost_gpu_invalidates_names_it_and_recovers(self):
        # re-runs 3 s after the change, then 6 s later: the recovery below can only come from the
        # probe seeing the GPU answer again, not from the backoff
        self.start("--revalidate-backoff", "3", "--revalidate-max-backoff", "60")
        uuids = self.node.read("driver-ready")["GPU_UUIDS"].split(",")
        before = self.node.read("driver-ready")["GENERATION"]
        r = self.reader()
        time.sleep(0.05)
        t0 = time.monotonic()
        self.mock_set("--gpu", "1", "fault=fell-off-the-bus")
        # the default probe interval is 1 s: the markers go within about a second, downstream first
        self.wait_for(lambda: not self.node.exists("toolkit-ready") and not self.node.exists("driver-ready"), 3.0,
                      "markers removed after the GPU was lost")
        gone = r.seen(t0, False)
        self.assertIsNotNone(gone)
        self.assertLess(gone, 3.0)
        self.wait_for(lambda: self.counters().get("GPU_LOST") == "1", 3, "the re-validation counted as gpu-lost")
        # the watcher's line and the re-run's driver check both name the GPU: index, UUID, bus id, Xid
        self.wait_for(lambda: f"gpu-lost: GPU 1 ({uuids[1]}" in self.logs(), 3, "the watcher naming the GPU")
        def driver_lines():
            return [ln for ln in self.logs().splitlines() if "driver: gpu-lost" in ln and "is lost" in ln]
        self.wait_for(driver_lines, 10, "the driver check's failure naming the GPU")
        line = driver_lines()[-1]
        self.assertIn(f"GPU 1 ({uuids[1]}, ", line)
        self.assertIn("bus id 00000000:", line)
        self.assertIn("Xid 79", line)
        # the attempt failed and published nothing
        self.assertEqual(self.node.present(), [])
        # the fault is cleared: the probe (every second) sees the GPU answer again and brings the
        # next attempt forward (the backoff would wait another 4.8 s at least)
        t1 = time.monotonic()
        self.mock_set("--clear")
        self.wait_for(lambda: self.node.exists("toolkit-ready"), 2.5, "markers back once the GPU answers again")
        self.assertIsNotNone(r.seen(t1, True))
        self.assertIn("GPU health: every GPU answers again", self.logs())
        time.sleep(0.05)
        r.stop.set()
        r.join()
        self.assertEqual(r.violations, [])
        self.assertEqual(chain.invariant_violations(self.node.status, self.node.boot), [])
        self.assertNotEqual(self.node.read("driver-ready")["GENERATION"], before)
        self.assertEqual(self.counters().get("GPU_LOST"), "1")
        self.assertEqual(self.counters().get("XID"), "0")
        self.assertIsNone(self.proc.poll())

    def test_critical_xid_revalidates_application_xid_does_not(self):
        self.start()
        xid_file = os.path.join(self.node.driver, "usr", "lib64", "nvml-mock.xid")
        g = self.node.read("driver-ready")["GENERATION"]
        with open(xid_file, "a") as f:
            f.write("0 13\n")  # graphics engine exception: an application error (skipped, as the device plugin)
        time.sleep(2.5)
        self.assertEqual(self.node.read("driver-ready")["GENERATION"], g)
        self.assertEqual(self.counters(), {})
        with open(xid_file, "a") as f:
            f.write("0 48\n")  # double bit ECC error: the GPU is re-validated
        self.wait_for(lambda: self.counters().get("XID") == "1", 4, "the re-validation counted as xid")
        self.assertIn("xid: GPU 0 (", self.logs())
        self.assertIn("Xid 48", self.logs())
        self.wait_for(lambda: self.node.exists("toolkit-ready") and
                      self.node.read("driver-ready")["GENERATION"] != g, 20, "re-validated")

    def test_probe_off_sees_nothing(self):
        self.start("--gpu-health-interval", "0")
        g = self.node.read("driver-ready")["GENERATION"]
        self.mock_set("--gpu", "1", "lost=true")
        time.sleep(2.5)
        self.assertEqual(self.node.read("driver-ready")["GENERATION"], g)
        self.assertEqual(self.counters(), {})


class TestGeneration(WatchTestCase):
    def test_driver_ready_republished_by_someone_else_revalidates_downstream(self):
        self.start()
        # another validator republishes driver-ready (and so drops toolkit-ready); its own GPUDirect
        # followers may then lose the race with the watcher's re-run, so its exit code is not checked
        self.node.run("driver")
        self.wait_for(lambda: self.counters().get("GENERATION_CHANGED") == "1", 2, "the change counted")
        self.wait_for(lambda: self.node.exists("toolkit-ready"), 20, "toolkit-ready back")
        self.assertEqual(chain.invariant_violations(self.node.status, self.node.boot), [])


class TestMetrics(WatchTestCase):
    def test_exporter_counts_the_restart_by_reason(self):
        import test_metrics  # the module, so that its test classes do not run here again
        self.start()
        exp = test_metrics.Exporter(["--output-dir", self.node.status, "--node-name", "node-a",
                                     "--boot-id-file", self.node.boot_id])
        self.addCleanup(exp.stop)
        self.assertNotIn("gpu_validator_revalidations_total", exp.request()[2])  # no re-validation yet
        os.unlink(self.flag)
        self.wait_for(lambda: self.counters().get("DRIVER_CONTAINER_RESTART") == "1", 2, "the restart counted")
        with open(self.flag, "w") as f:
            f.write("GDS_ENABLED: false\n")
        self.wait_for(lambda: self.node.exists("toolkit-ready"), 20, "re-validated")
        page = exp.request()[2]
        for reason, n in (("driver-container-restart", 1), ("device-node-removed", 0),
                          ("driver-root-changed", 0), ("generation-changed", 0), ("gpu-lost", 0), ("xid", 0)):
            self.assertIn(f'gpu_validator_revalidations_total{{node="node-a",reason="{reason}"}} {n}\n', page)
        self.assertIn('gpu_operator_node_toolkit_ready{node="node-a"} 1\n', page)


class TestNodeSignal(WatchTestCase):
    """The node signal (in `gpu-validator metrics`) follows the markers the watcher removes and
    republishes: nothing of the signal is duplicated in the watcher."""

    def test_condition_follows_a_driver_container_restart(self):
        import test_node_signal as ns  # the module, so that its test classes do not run here again
        import test_metrics
        from chartapi import chart_api  # the real kube-apiserver, as the chart's ServiceAccount
        api, _ = chart_api(self.path(), sets=("nodeStatus.enabled=true",))
        self.addCleanup(api.stop)
        api.node(ns.NODE, labels={"kubernetes.io/hostname": ns.NODE})
        node_uid = api.api("GET", f"/api/v1/nodes/{ns.NODE}")["metadata"]["uid"]
        self.start()

        def condition():
            node = api.api("GET", f"/api/v1/nodes/{ns.NODE}")
            found = [c for c in node.get("status", {}).get("conditions", []) if c["type"] == ns.COND]
            return found[0] if found else None

        def wait_condition(status, reason):
            return ns.wait_for(f"{status} ({reason})", lambda: (lambda c: c if c and c["status"] == status and
                                                                  c["reason"] == reason else None)(condition()))

        exp = test_metrics.Exporter(["--output-dir", self.node.status, "--node-name", ns.NODE, "--boot-id-file",
                                     self.node.boot_id, "--kubeconfig", api.kubeconfig, "--node-condition",
                                     "--last-component", "toolkit"],
                                    env=gvtest.clean_env(OPERATOR_NAMESPACE=api.namespace))
        self.addCleanup(exp.stop)
        first = wait_condition("True", "ValidationSucceeded")
        time.sleep(1.1)  # lastTransitionTime has second resolution
        os.unlink(self.flag)
        self.park_nodes()
        down = wait_condition("False", "DriverMissing")
        self.assertNotEqual(down["lastTransitionTime"], first["lastTransitionTime"])
        self.unpark_nodes()
        with open(self.flag, "w") as f:
            f.write("GDS_ENABLED: false\n")
        wait_condition("True", "ValidationSucceeded")
        reasons = ns.wait_for("the recovery event", lambda: (lambda r: r if "GPUValidationRecovered" in r else None)(
            [e["reason"] for e in api.api("GET", "/api/v1/namespaces/default/events")["items"]
             if e["involvedObject"].get("uid") == node_uid]))
        self.assertIn("GPUValidationFailed", reasons)


class TestLifecycle(WatchTestCase):
    def test_sigterm_ends_with_0_and_keeps_valid_markers(self):
        self.start()
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(timeout=5), 0)
        self.assertEqual(self.node.present(), ["driver-ready", "toolkit-ready"])

    def test_prestop_cleanup_then_sigterm_publishes_nothing(self):
        """The chart's preStop runs `cleanup`, then SIGTERM comes: the watcher's first re-run waits
        the first backoff, so the terminating pod neither publishes again nor counts."""
        self.start("--revalidate-backoff", "2", "--revalidate-max-backoff", "5")
        gvtest.run(["cleanup", *self.node.store_args()], check=0)
        time.sleep(0.5)
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(timeout=5), 0)
        self.assertEqual(self.node.present(), [])
        self.assertEqual(self.counters(), {})

    def test_already_valid_chain_is_not_revalidated_at_start(self):
        self.node.run("driver,toolkit", check=0)
        g = self.node.read("driver-ready")["GENERATION"]
        self.start()
        self.assertEqual(self.node.read("driver-ready")["GENERATION"], g)

    def test_bad_settings_are_usage_errors(self):
        for args in (["--revalidate-backoff", "601"], ["--revalidate-max-backoff", "0"],
                     ["--revalidate-backoff", "9", "--revalidate-max-backoff", "3"], ["--revalidate-min-interval", "x"]):
            p = gvtest.run(["watch", "--components", "driver", *self.node.store_args(), *args])
            self.assertEqual(p.returncode, 2, args)
        p = gvtest.run(["watch", "--components", "driver", *self.node.store_args()],
                       env=gvtest.clean_env(REVALIDATE_BACKOFF_SECONDS="-1"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("REVALIDATE_BACKOFF_SECONDS", p.stderr)


if __name__ == "__main__":
    import unittest
    unittest.main()
