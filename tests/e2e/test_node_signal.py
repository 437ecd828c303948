"""End-to-end tests of the node-level signal of `gpu-validator metrics` (FR18): the Node
condition, label and start-up taint follow the markers both ways, an Event records each
failure and recovery, nothing is written when the Node already agrees, failed API calls are
retried with backoff while /metrics keeps being served.

Each test starts the test Kubernetes API server (tests/apiserver, 127.0.0.1 only) and the real
binary against a temporary status folder, writes marker files itself (test_metrics.Folder),
and reads the Node, the Events and the server's request log."""
import os
import re
import shutil
import signal
import tempfile
import time

import gvtest
from test_metrics import BOOT_A, BOOT_B, Exporter, Folder, series

from chartapi import chart_api

NODE = "node-e2e"  # test_metrics.series() labels samples with this node
COND = "GPUValidated"
LABEL = "nvidia.com/gpu.validated"
TAINT_KEY = "nvidia.com/gpu.not-validated"
STARTUP_TAINT = {"key": TAINT_KEY, "effect": "NoSchedule"}
OTHER_TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}
READY = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
         "lastHeartbeatTime": "2026-03-01T00:00:00Z", "lastTransitionTime": "2026-03-01T00:00:00Z"}
WRITES = ("POST", "PUT", "PATCH", "DELETE")
MERGE = "application/merge-patch+json"


def wait_for(what, pred, timeout=20.0, interval=0.05):
    """Poll @pred until it returns something true; bounded by @timeout seconds."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


class NodeSignalTestCase(gvtest.TempDirTestCase):
    """The real kube-apiserver (tests/k8s), a namespace per class, as the chart's ServiceAccount
    with the chart's rules (node status on); the Node is made anew for each test."""

    @classmethod
    def setUpClass(cls):
        cls.rbac_dir = tempfile.mkdtemp(prefix="gv-rbac-")
        cls.api, _ = chart_api(cls.rbac_dir, sets=("nodeStatus.enabled=true",))
        cls.NS = cls.api.namespace

    @classmethod
    def tearDownClass(cls):
        cls.api.stop()
        shutil.rmtree(cls.rbac_dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.dir = self.path("validations")
        os.mkdir(self.dir)
        self.folder = Folder(self.dir)
        self.boot = self.path("boot_id")
        self.set_boot(BOOT_A)
        self.sysfs = self.path("sys")
        os.makedirs(os.path.join(self.sysfs, "bus", "pci", "devices"))
        self.api.reset()
        self.api.node(NODE, labels={"kubernetes.io/hostname": NODE})
        self.api.api("PATCH", f"/api/v1/nodes/{NODE}", {"spec": {"taints": [STARTUP_TAINT, OTHER_TAINT]}}, MERGE)
        self.api.api("PATCH", f"/api/v1/nodes/{NODE}/status", {"status": {"conditions": [READY]}}, MERGE)
        self.exporters = []

    def tearDown(self):
        for e in self.exporters:
            e.stop()
        super().tearDown()

    def set_boot(self, boot):
        with open(self.boot, "w") as f:
            f.write(boot + "\n")

    def start(self, *signal_args, env=None, kubeconfig=None):
        args = ["--output-dir", self.dir, "--node-name", NODE, "--boot-id-file", self.boot, "--sysfs-root", self.sysfs,
                "--kubeconfig", kubeconfig or self.api.kubeconfig, *signal_args]
        e = Exporter(args, env=env if env is not None else gvtest.clean_env(OPERATOR_NAMESPACE=self.NS))
        self.exporters.append(e)
        return e

    def stop(self, e):
        rc = e.stop()
        self.exporters.remove(e)
        self.assertEqual(rc, 0, "".join(e.log))
        return rc

    # -- reading the API server ------------------------------------------------
    def node(self):
        return self.api.api("GET", f"/api/v1/nodes/{NODE}")

    def condition(self, node=None, ctype=COND):
        node = node or self.node()
        found = [c for c in node.get("status", {}).get("conditions", []) if c["type"] == ctype]
        return found[0] if found else None

    def events(self):
        """The Events about the Node: kube-apiserver takes them only in namespace default (or
        kube-system), never in the operator's namespace (the test server answers 422 there too)."""
        self.assertEqual(self.api.api("GET", f"/api/v1/namespaces/{self.NS}/events")["items"], [])
        uid = self.node()["metadata"]["uid"]  # this test's Node: default is shared by every test
        return [e for e in self.api.api("GET", "/api/v1/namespaces/default/events")["items"]
                if e["involvedObject"].get("uid") == uid]

    def writes(self):
        return [r for r in self.api.requests() if r["method"] in WRITES and not r["path"].startswith("/_test")]

    def wait_condition(self, status, reason=None, ctype=COND):
        def ok():
            c = self.condition(ctype=ctype)
            return c if c and c["status"] == status and (reason is None or c["reason"] == reason) else None
        return wait_for(f"condition {ctype}={status} ({reason})", ok)

    def wait_events(self, n):
        return wait_for(f"{n} events", lambda: (lambda ev: ev if len(ev) >= n else None)(self.events()))

    def taints(self, node=None):
        return (node or self.node()).get("spec", {}).get("taints") or []

    def full_args(self):
        return ["--node-condition", "--node-label", f"{LABEL}=true", "--startup-taint", f"{TAINT_KEY}:NoSchedule"]


class FollowMarkers(NodeSignalTestCase):
    def test_fr18_both_ways(self):
        """FR18: condition, label, taint and events follow the markers, and agree with the metrics."""
        e = self.start(*self.full_args())
        # Nothing validated yet: False, pending; the start-up taint stays; no label, no event.
        c = self.wait_condition("False", "Validating")
        self.assertEqual(c["message"], "validating driver: driver-ready is missing (not present)")
        node = self.node()
        self.assertNotIn(LABEL, node["metadata"]["labels"])
        self.assertEqual(self.taints(node), [STARTUP_TAINT, OTHER_TAINT])
        self.assertEqual(self.condition(node, "Ready"), READY)
        self.assertEqual(self.events(), [])

        # Validated: True, label set, start-up taint lifted (the other kept), one Normal event.
        self.folder.chain()
        c = self.wait_condition("True", "ValidationSucceeded")
        self.assertEqual(c["message"], "driver, toolkit, cuda and plugin validated")
        self.assertTrue(c["lastTransitionTime"] and c["lastHeartbeatTime"])
        node = wait_for("taint lifted", lambda: (lambda n: n if self.taints(n) == [OTHER_TAINT] else None)(self.node()))
        self.assertEqual(node["metadata"]["labels"][LABEL], "true")
        self.assertEqual(node["metadata"]["labels"]["kubernetes.io/hostname"], NODE)
        self.assertEqual(self.condition(node, "Ready"), READY)
        ev = self.wait_events(1)
        self.assertEqual(ev[0]["reason"], "GPUValidationSucceeded")
        self.assertEqual(ev[0]["type"], "Normal")
        self.assertEqual(ev[0]["involvedObject"]["kind"], "Node")
        self.assertEqual(ev[0]["involvedObject"]["name"], NODE)
        self.assertEqual(ev[0]["involvedObject"]["uid"], node["metadata"]["uid"])
        self.assertEqual(ev[0]["source"]["component"], "gpu-validator")
        # A new-style core/v1 Event (what kube-apiserver validates with eventTime set).
        self.assertEqual(ev[0]["metadata"]["namespace"], "default")
        self.assertRegex(ev[0]["eventTime"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
        self.assertEqual(ev[0]["reportingComponent"], "gpu-validator")
        self.assertEqual(ev[0]["reportingInstance"], f"gpu-validator-{NODE}")
        self.assertEqual(ev[0]["action"], "Validate")
        self.assertNotIn("namespace", ev[0]["involvedObject"])
        s = e.samples()
        self.assertEqual(s[series("gpu_validator_component_ready", component="plugin")], 1.0)
        transition = c["lastTransitionTime"]

        # Invalidated (toolkit-ready removed): False with the failing component, label gone,
        # taint back, a Warning event naming the component and the reason.
        time.sleep(1.1)  # lastTransitionTime has second resolution
        self.folder.remove("toolkit-ready")
        c = self.wait_condition("False", "ToolkitMissing")
        self.assertEqual(c["message"], "toolkit not validated: toolkit-ready is missing (not present)")
        self.assertNotEqual(c["lastTransitionTime"], transition)
        node = wait_for("taint back", lambda: (lambda n: n if len(self.taints(n)) == 2 else None)(self.node()))
        self.assertNotIn(LABEL, node["metadata"]["labels"])
        self.assertIn(STARTUP_TAINT, self.taints(node))
        self.assertIn(OTHER_TAINT, self.taints(node))
        self.assertEqual(self.condition(node, "Ready"), READY)
        ev = self.wait_events(2)
        failed = [x for x in ev if x["reason"] == "GPUValidationFailed"]
        self.assertEqual(len(failed), 1, ev)
        self.assertEqual(failed[0]["type"], "Warning")
        self.assertIn("component toolkit", failed[0]["message"])
        self.assertIn("ToolkitMissing", failed[0]["message"])
        s = e.samples()  # the metrics agree
        self.assertEqual(s[series("gpu_validator_component_ready", component="toolkit")], 0.0)
        self.assertEqual(s[series("gpu_validator_component_ready", component="plugin")], 0.0)
        self.assertEqual(s[series("gpu_validator_marker_state", marker="toolkit-ready", state="missing")], 1.0)

        # Re-validated: True again, a recovery event naming what it was.
        self.folder.write("toolkit-ready")
        self.folder.write("cuda-ready")
        self.folder.write("plugin-ready")
        self.wait_condition("True", "ValidationSucceeded")
        node = wait_for("taint lifted again",
                        lambda: (lambda n: n if self.taints(n) == [OTHER_TAINT] else None)(self.node()))
        self.assertEqual(node["metadata"]["labels"][LABEL], "true")
        ev = self.wait_events(3)
        rec = [x for x in ev if x["reason"] == "GPUValidationRecovered"]
        self.assertEqual(len(rec), 1, ev)
        self.assertIn("was ToolkitMissing", rec[0]["message"])
        time.sleep(0.5)
        self.assertEqual(len(self.events()), 3)
        # Every write carried the Node's resourceVersion (optimistic concurrency) and a merge patch.
        for r in self.writes():
            if r["method"] == "PATCH":
                self.assertEqual(r["contentType"].split(";")[0], MERGE)
        self.stop(e)

    def test_progress_from_pod_start(self):
        """Run from pod start (the chart's native sidecar), the signal reads its own
        pod: the Node says Validating with the component in progress, then the failing component and
        its reason (the last line of the init container's termination message), then True; the
        start-up taint goes only on success, and the first success is GPUValidationSucceeded."""
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "validator-x"},
               "spec": {"initContainers": [{"name": "node-status", "image": "v", "restartPolicy": "Always"}]
                        + [{"name": f"{c}-validation", "image": "v"} for c in ("driver", "toolkit", "cuda", "plugin")],
                        "containers": [{"name": "nvidia-operator-validator", "image": "v"}]}}
        self.api.api("POST", f"/api/v1/namespaces/{self.NS}/pods", pod)

        def statuses(*entries):
            self.api.control("POST", f"/pods/{self.NS}/validator-x/status?replace=1",
                             {"phase": "Pending", "initContainerStatuses":
                              [{"name": "node-status", "restartCount": 0, "state": {"running": {}}}] + list(entries)})

        done = {"state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        statuses({"name": "driver-validation", "restartCount": 0, "state": {"running": {}}},
                 {"name": "toolkit-validation", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}})
        e = self.start(*self.full_args(), env=gvtest.clean_env(OPERATOR_NAMESPACE=self.NS, POD_NAME="validator-x"))
        c = self.wait_condition("False", "Validating")
        self.assertEqual(c["message"], "validating driver (in progress): driver-ready is missing (not present)")
        self.assertIn(STARTUP_TAINT, self.taints())

        # The driver passed, the toolkit check fails and backs off: named with its reason.
        self.folder.write("driver-ready")
        statuses(dict(done, name="driver-validation"),
                 {"name": "toolkit-validation", "restartCount": 2, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                  "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                                               "message": "toolkit: looking\nerror: no CDI spec names GPU 0\n"}}})
        c = self.wait_condition("False", "ToolkitValidationFailed", )
        self.assertEqual(c["message"], "toolkit validation failed (exit code 1, 2 restarts): error: no CDI spec names GPU 0")
        self.assertIn(STARTUP_TAINT, self.taints())
        self.assertEqual(self.events(), [])

        # Everything validated: True, the taint lifted, a first-success event.
        self.folder.chain()
        self.wait_condition("True", "ValidationSucceeded")
        wait_for("taint lifted", lambda: self.taints() == [OTHER_TAINT])
        self.assertEqual([x["reason"] for x in self.wait_events(1)], ["GPUValidationSucceeded"])
        # The pod is read only while not validated.
        n = len([r for r in self.api.requests() if r["path"].endswith("/pods/validator-x")])
        time.sleep(6)
        self.assertEqual(len([r for r in self.api.requests() if r["path"].endswith("/pods/validator-x")]), n)
        self.stop(e)

    def test_progress_polls_only_the_pod(self):
        """While validating, the signal re-reads its own pod every 5 s for the init containers'
        progress; when the pod says nothing new, that is all it sends: no GET of the Node, no
        patch (docs/kubernetes.md, "Requests per node").  A change in the pod is still followed."""
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "validator-p"},
               "spec": {"initContainers": [{"name": f"{c}-validation", "image": "v"} for c in ("driver", "toolkit")],
                        "containers": [{"name": "nvidia-operator-validator", "image": "v"}]}}
        self.api.api("POST", f"/api/v1/namespaces/{self.NS}/pods", pod)

        def statuses(*entries):
            self.api.control("POST", f"/pods/{self.NS}/validator-p/status?replace=1",
                             {"phase": "Pending", "initContainerStatuses": list(entries)})
        waiting = {"name": "toolkit-validation", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}
        statuses({"name": "driver-validation", "restartCount": 0, "state": {"running": {}}}, waiting)
        e = self.start(*self.full_args(), env=gvtest.clean_env(OPERATOR_NAMESPACE=self.NS, POD_NAME="validator-p"))
        c = self.wait_condition("False", "Validating")
        self.assertEqual(c["message"], "validating driver (in progress): driver-ready is missing (not present)")
        time.sleep(1)
        self.api.clear_requests()
        time.sleep(11)  # two progress reads (every 5 s) with nothing new
        sent = [(r["method"], r["path"].rsplit("/", 2)[-2]) for r in self.api.requests()]
        self.assertGreaterEqual(sent.count(("GET", "pods")), 2, sent)
        self.assertEqual([x for x in sent if x != ("GET", "pods")], [], "only the pod read")
        # The pod says the toolkit runs now: followed at the next read.
        self.folder.write("driver-ready")
        c = self.wait_condition("False", "Validating")
        statuses({"name": "driver-validation", "restartCount": 0,
                  "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                 dict(waiting, state={"running": {}}))
        c = wait_for("the toolkit in progress", lambda: (lambda x: x if x and "toolkit" in x["message"] else None)(
            self.condition()), timeout=10)
        self.assertEqual(c["message"], "validating toolkit (in progress): toolkit-ready is missing (not present)")
        self.stop(e)

    def test_idempotent(self):
        """No write when nothing changed: neither on an unrelated change nor after a restart."""
        self.folder.chain()
        e = self.start(*self.full_args())
        self.wait_condition("True")
        self.wait_events(1)
        wait_for("taint lifted", lambda: self.taints() == [OTHER_TAINT])
        time.sleep(0.5)
        self.api.clear_requests()
        # Folder activity that leaves every state as it was.
        os.utime(os.path.join(self.dir, "driver-ready"))
        with open(os.path.join(self.dir, "workload-type"), "w") as f:
            f.write("container\n")
        time.sleep(1.5)
        self.assertEqual(self.writes(), [])
        self.stop(e)

        # A restart converges with one read and no write, and no second event.
        self.api.clear_requests()
        e = self.start(*self.full_args())
        wait_for("the Node read", lambda: [r for r in self.api.requests()
                                           if r["method"] == "GET" and r["path"] == f"/api/v1/nodes/{NODE}"])
        time.sleep(1.0)
        self.assertEqual(self.writes(), [])
        self.assertEqual(len(self.events()), 1)
        self.stop(e)

    def test_reboot_makes_markers_stale(self):
        """A Node left True by the last boot: stale markers turn it False (DriverStale) at start."""
        self.folder.chain()
        e = self.start(*self.full_args())
        self.wait_condition("True")
        self.wait_events(1)
        self.stop(e)
        self.set_boot(BOOT_B)
        e = self.start(*self.full_args())
        c = self.wait_condition("False", "DriverStale")
        self.assertIn("driver-ready is stale", c["message"])
        ev = self.wait_events(2)
        self.assertEqual(sorted(x["reason"] for x in ev), ["GPUValidationFailed", "GPUValidationSucceeded"])
        wait_for("taint back", lambda: STARTUP_TAINT in self.taints())
        self.stop(e)

    def test_env_custom_condition_label_last_component(self):
        """NODE_CONDITION, NODE_LABEL, LAST_COMPONENT as the chart passes them; no taint."""
        env = gvtest.clean_env(OPERATOR_NAMESPACE=self.NS, NODE_CONDITION="example.com/GPUToolkitValidated",
                               NODE_LABEL="example.com/toolkit=ok", LAST_COMPONENT="toolkit",
                               KUBECONFIG=self.api.kubeconfig)
        args = ["--output-dir", self.dir, "--node-name", NODE, "--boot-id-file", self.boot, "--sysfs-root", self.sysfs]
        e = Exporter(args, env=env)
        self.exporters.append(e)
        ctype = "example.com/GPUToolkitValidated"
        self.wait_condition("False", "Validating", ctype=ctype)
        self.folder.write("driver-ready")
        self.folder.write("toolkit-ready")
        c = self.wait_condition("True", "ValidationSucceeded", ctype=ctype)
        self.assertEqual(c["message"], "driver and toolkit validated")
        self.assertIsNone(self.condition(ctype=COND))
        node = wait_for("label", lambda: (lambda n: n if n["metadata"]["labels"].get("example.com/toolkit") else None)(
            self.node()))
        self.assertEqual(node["metadata"]["labels"]["example.com/toolkit"], "ok")
        self.assertEqual(self.taints(node), [STARTUP_TAINT, OTHER_TAINT])  # no taint managed
        self.folder.remove("driver-ready")
        c = self.wait_condition("False", "DriverMissing", ctype=ctype)
        wait_for("label removed", lambda: "example.com/toolkit" not in self.node()["metadata"]["labels"])
        ev = self.wait_events(2)
        self.assertEqual([x["reason"] for x in sorted(ev, key=lambda x: x["metadata"]["name"])],
                         ["GPUValidationSucceeded", "GPUValidationFailed"])
        self.stop(e)

    def test_label_only(self):
        """A label alone: set and removed, events from the process's memory."""
        e = self.start("--node-label", f"{LABEL}=yes")
        self.folder.chain()
        wait_for("label", lambda: self.node()["metadata"]["labels"].get(LABEL) == "yes")
        self.assertIsNone(self.condition())
        self.folder.remove("driver-ready")
        wait_for("label removed", lambda: LABEL not in self.node()["metadata"]["labels"])
        ev = self.wait_events(2)
        self.assertEqual(sorted(x["reason"] for x in ev), ["GPUValidationFailed", "GPUValidationSucceeded"])
        self.stop(e)


class Failures(NodeSignalTestCase):
    def test_patch_failures_retried_metrics_served(self):
        """503s on every PATCH for a while: retried with backoff, scrapes answered meanwhile."""
        self.folder.chain()
        self.api.clear_requests()
        self.api.fault(type="status", code=503, count=7, method="PATCH", path=f"/api/v1/nodes/{NODE}")
        e = self.start(*self.full_args())
        t0 = time.monotonic()
        wait_for("a failed try logged", lambda: any("trying again in" in l for l in e.log))
        s = e.samples()  # served while the API server fails
        self.assertEqual(s[series("gpu_validator_component_ready", component="plugin")], 1.0)
        self.wait_condition("True")
        wait_for("taint lifted", lambda: self.taints() == [OTHER_TAINT])
        self.assertLess(time.monotonic() - t0, 30)
        patches = [r for r in self.api.requests() if r["method"] == "PATCH"]
        self.assertEqual([r["status"] for r in patches[:7]], [503] * 7)
        self.assertTrue(all(r["status"] == 200 for r in patches[7:]), patches)
        self.assertEqual(len(self.wait_events(1)), 1)
        self.stop(e)

    def test_conflict_rereads_node(self):
        """A 409 Conflict on a patch re-reads the Node and patches again."""
        self.folder.chain()
        self.api.fault(type="status", code=409, reason="Conflict", count=1, method="PATCH",
                       path=f"/api/v1/nodes/{NODE}", message="the object has been modified")
        e = self.start(*self.full_args())
        self.wait_condition("True")
        wait_for("taint lifted", lambda: self.taints() == [OTHER_TAINT])
        log = [r for r in self.api.requests() if r["path"].startswith(f"/api/v1/nodes/{NODE}")]
        i = next(i for i, r in enumerate(log) if r["status"] == 409)
        self.assertEqual((log[i + 1]["method"], log[i + 1]["path"]), ("GET", f"/api/v1/nodes/{NODE}"), log)
        self.assertEqual(len(self.wait_events(1)), 1)
        self.stop(e)

    def test_stale_resource_version_conflict(self):
        """The kubelet's heartbeat lands between the signal's GET and its PATCH: the API server
        answers 409 (stale resourceVersion), the signal reads the Node again, and the kubelet's
        newer Ready condition survives (a merge patch replaces the whole conditions list)."""
        self.folder.chain()
        ready2 = dict(READY, lastHeartbeatTime="2026-03-01T00:00:40Z", message="kubelet heartbeat 2")
        self.api.fault(type="concurrentWrite", node=NODE, condition=ready2, count=1, method="PATCH",
                       path=f"/api/v1/nodes/{NODE}/status")
        e = self.start(*self.full_args())
        self.wait_condition("True")
        wait_for("taint lifted", lambda: self.taints() == [OTHER_TAINT])
        log = [r for r in self.api.requests() if r["path"].startswith(f"/api/v1/nodes/{NODE}")]
        i = next(i for i, r in enumerate(log) if r["status"] == 409)
        self.assertEqual(log[i]["method"], "PATCH")
        self.assertEqual((log[i + 1]["method"], log[i + 1]["path"]), ("GET", f"/api/v1/nodes/{NODE}"), log)
        self.assertEqual(self.condition(ctype="Ready"), ready2)
        self.assertEqual(len(self.wait_events(1)), 1)
        self.stop(e)

    def test_api_server_unreachable(self):
        """No API server at all: /metrics is served, tries are logged, SIGTERM still stops at once."""
        with open(self.api.kubeconfig) as f:
            text = f.read()
        dead = self.path("dead-kubeconfig")
        with open(dead, "w") as f:
            f.write(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:1", text))
        self.folder.chain()
        e = self.start(*self.full_args(), kubeconfig=dead)
        wait_for("a failed try logged", lambda: any("trying again in" in l for l in e.log))
        for _ in range(3):
            s = e.samples()
            self.assertEqual(s[series("gpu_validator_component_ready", component="plugin")], 1.0)
        t0 = time.monotonic()
        self.stop(e)
        self.assertLess(time.monotonic() - t0, 5)


class Usage(gvtest.TempDirTestCase):
    def check(self, *args, env=None, expect="", rc=2):
        p = gvtest.run(["metrics", "--listen", "127.0.0.1:0", "--node-name", "n1", "--output-dir", self.tmp, *args],
                       env=env, timeout=30)
        self.assertEqual(p.returncode, rc, p.stderr)
        self.assertIn(expect, p.stderr)

    def test_bad_values(self):
        self.check("--startup-taint", "nvidia.com/gpu.not-validated:Sometimes", expect="effect 'Sometimes'")
        self.check("--startup-taint", "no-effect", expect="no effect")
        self.check("--startup-taint", "bad key!:NoSchedule", expect="not a qualified name")
        self.check("--node-label", "novalue", expect="expected KEY=VALUE")
        self.check("--node-label", "k=bad value", expect="not a valid label value")
        self.check("--node-condition=not valid", expect="not a condition type")
        self.check("--node-condition", "--last-component", "host-driver", expect="not a component")
        self.check("--node-condition", "--kubeconfig", self.path("missing"), expect="Kubernetes configuration")
        self.check(env=gvtest.clean_env(STARTUP_TAINT="x:Never"), expect="effect 'Never'")

    def test_help_lists_flags(self):
        p = gvtest.run(["metrics", "--help"], check=0)
        for flag in ("--node-condition", "--node-label", "--startup-taint", "--last-component", "--kubeconfig",
                     "NODE_CONDITION", "NODE_LABEL", "STARTUP_TAINT", "LAST_COMPONENT", "KUBECONFIG",
                     "GPUValidationFailed", "GPUValidationRecovered"):
            self.assertIn(flag, p.stdout)

    def test_off_without_flags(self):
        """Without the signal's flags the exporter never reads a Kubernetes configuration."""
        e = Exporter(["--output-dir", self.tmp, "--node-name", "n1"], env=gvtest.clean_env(KUBECONFIG=self.path("missing")))
        try:
            self.assertEqual(e.request()[0], 200)
            self.assertFalse(any("node-signal" in l for l in e.log))
        finally:
            self.assertEqual(e.stop(signal.SIGTERM), 0)
