"""cuda and plugin on Kubernetes: the real `gpu-validator run --components cuda|plugin`
against the test API server (tests/apiserver), with a valid driver-ready/toolkit-ready
chain from a mock driver root.  Field reports FR07-FR11 and FR17; see
docs/workload-lifecycle.md."""
import os
import subprocess
import threading
import time

import gvtest
from chartapi import ChartApiTestCase

NODE = "gpu-node-a"
IMAGE = "registry.local/gpu-validator:test"
FR11 = os.path.join(gvtest.SOURCE, "tests", "unit", "workload", "data", "fr11.yaml")
SELECTOR = {"cuda": "app=nvidia-cuda-validator", "plugin": "app=nvidia-device-plugin-validator"}
_OURS = ["VALIDATOR_IMAGE", "VALIDATOR_IMAGE_PULL_POLICY", "VALIDATOR_IMAGE_PULL_SECRETS",
         "VALIDATOR_RUNTIME_CLASS", "WORKLOAD_TEMPLATE", "POD_TIMEOUT_SECONDS", "CAPACITY_WAIT_SECONDS",
         "VALIDATOR_POD_NAME", "VALIDATOR_POD_UID", "POD_NAME", "POD_UID", "KUBERNETES_SERVICE_PORT"]


def pod_gets(requests):
    """Non-watch GETs of one pod object (polling), not counting pods/log."""
    out = []
    for r in requests:
        parts = r["path"].strip("/").split("/")
        if r["method"] == "GET" and not r["watch"] and len(parts) == 6 and parts[4] == "pods":
            out.append(r["path"])
    return out


class Poller:
    """A test-side helper thread: calls fn() every 50 ms until it returns True or stop()."""

    def __init__(self, fn, limit_s=60):
        self.fn, self.limit_s = fn, limit_s
        self.done = threading.Event()
        self.error = None
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        end = time.time() + self.limit_s
        while not self.done.is_set() and time.time() < end:
            try:
                if self.fn():
                    return
            except Exception as e:  # noqa: BLE001 - reported by the test
                self.error = e
            time.sleep(0.05)

    def stop(self):
        self.done.set()
        self.t.join(5)


class WorkloadPodsTest(ChartApiTestCase):
    NODE, UNSET, BASE_ENV = NODE, _OURS, {"VALIDATOR_IMAGE": IMAGE}

    # -- helpers ------------------------------------------------------------------------
    def cuda_ready(self):
        """plugin's parent: cuda-ready, published without a pod (WITH_WORKLOAD=false, no API call)."""
        if not os.path.exists(self.marker("cuda-ready")):
            gvtest.run(self.args("cuda"), env=self.env(WITH_WORKLOAD="false"), check=0)

    def gv(self, component, *extra, timeout=90, **env):
        if component == "plugin":
            self.cuda_ready()
        t0 = time.monotonic()
        p = gvtest.run(self.args(component, *extra), env=self.env(**env), timeout=timeout)
        p.elapsed = time.monotonic() - t0
        return p

    def gv_background(self, component, *extra, **env):
        if component == "plugin":
            self.cuda_ready()
        return subprocess.Popen([gvtest.GV] + self.args(component, *extra), env=self.env(**env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def out(self, p):
        return p.stdout + p.stderr

    def gpu_node(self, **kw):
        kw.setdefault("labels", {"nvidia.com/gpu.present": "true"})
        kw.setdefault("capacity", {"nvidia.com/gpu": "1"})
        kw.setdefault("allocatable", {"nvidia.com/gpu": "1"})
        self.api.node(NODE, **kw)

    def pods(self, component):
        return self.api.pods(self.NS, SELECTOR[component])

    def assert_gone(self, component, msg=None):
        """The pods of @component are gone.  A bound pod is deleted gracefully, as on a real
        cluster: it keeps a deletionTimestamp until the simulated kubelet has stopped it."""
        end = time.monotonic() + 5
        while self.pods(component) and time.monotonic() < end:
            time.sleep(0.05)
        self.assertEqual(self.pods(component), [], msg)

    def posts(self):
        return [r for r in self.api.requests() if r["method"] == "POST" and r["path"].endswith("/pods")]

    def assert_no_polling(self):
        reqs = self.api.requests()
        self.assertEqual(pod_gets(reqs), [], "the pod must be watched, not polled")
        self.assertTrue(any(r["watch"] and "/pods" in r["path"] for r in reqs), "no pod watch seen")
        self.assertTrue(all(r["auth"] == "ok" for r in reqs if r["auth"] != "admin"))  # admin: the test's own
        self.assertEqual([r for r in reqs if r.get("status") == 403], [], "within the chart's RBAC rules")

    def capture_pod(self, component):
        """Start a thread that records the first validation pod it sees (test-side)."""
        seen = {}

        def look():
            items = self.pods(component)
            if items:
                seen["pod"] = items[0]
                return True
            return False
        return seen, Poller(look)

    # -- cuda ------------------------------------------------------------------------------
    def test_cuda_success_watched_and_deleted(self):
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=100, exitAfterMs=200)
        p = self.gv("cuda")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertIn("CUDA validation pod", p.stdout)
        self.assertTrue(os.path.exists(self.marker("cuda-ready")))
        self.assert_gone("cuda", "the pod is deleted afterwards")
        self.assertEqual(len(self.posts()), 1)
        self.assert_no_polling()

    def request_pattern(self):
        """The components' requests as (verb, what) pairs, in order (the proxy's log)."""
        out = []
        for r in self.api.requests():
            parts = r["path"].strip("/").split("/")[2:]  # after api/v1: namespaces/NS/pods[/NAME]
            what = "/".join(p for i, p in enumerate(parts) if i % 2 == 0 or (i == 3 and parts[0] == "namespaces"))
            named = len(parts) % 2 == 0 if parts[:1] != ["namespaces"] else len(parts) == 4
            verb = {"POST": "create", "DELETE": "delete", "PATCH": "patch", "PUT": "update"}.get(r["method"])
            if verb is None:
                verb = "watch" if r["watch"] else ("get" if named else "list")
            out.append((verb, what))
        return out

    def test_request_pattern_of_cuda_and_plugin(self):
        """docs/kubernetes.md, "Requests per validation": per pod one LIST of earlier pods, the
        CREATE, one WATCH from the created version (no LIST of its own, no GET polling), the
        DELETE; the validator's own pod read once; the plugin's Node listed once (no watch needed
        when the capacity is there)."""
        self.api.api("POST", "/api/v1/namespaces/%s/pods" % self.NS, {
            "metadata": {"name": "gpu-validator-self"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
        self.gpu_node()
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=300, exitAfterMs=300)
        self.cuda_ready()
        for comp, head in (("cuda", []), ("plugin", [("list", "nodes")])):
            self.api.clear_requests()
            p = self.gv(comp, POD_NAME="gpu-validator-self")
            self.assertEqual(p.returncode, 0, self.out(p))
            name = self.posts()[0]
            pods = "namespaces/pods"
            self.assertEqual(self.request_pattern(), head + [
                ("get", "namespaces/pods/gpu-validator-self"), ("list", pods), ("create", pods), ("watch", pods),
                ("delete", "namespaces/pods/" + [r for r in self.api.requests() if r["method"] == "DELETE"][0]
                 ["path"].rsplit("/", 1)[1])], (comp, name))

    def test_one_connection_per_component_run(self):
        """A run talks to the API server over one HTTP/2 connection (one TLS handshake): the
        watch takes the connection the requests before it used, and the DELETE after it too.
        A byte relay in front of the real server counts the connections."""
        from proxy import TcpRelay
        relay = TcpRelay(self.api.cp).start()
        self.addCleanup(relay.stop)
        kc = self.api.cp.kubeconfig(self.path("kubeconfig-relay"), token=self.api.token, namespace=self.NS,
                                    server=relay.url)
        self.gpu_node()
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=300, exitAfterMs=300)
        self.cuda_ready()
        for comp in ("cuda", "plugin"):
            before = relay.connections
            p = self.gv(comp, KUBECONFIG=kc)
            self.assertEqual(p.returncode, 0, self.out(p))
            self.assertEqual(relay.connections - before, 1, comp)

    def test_watch_cut_mid_run_resumes(self):
        """The pod's watch stream is cut (the fault proxy) while the pod runs: the client resumes
        from its last version, sees the pod finish, and creates nothing twice."""
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=1500, exitAfterMs=1500)
        cut = []

        def cut_once():
            if any(r["watch"] for r in self.api.requests()):
                time.sleep(0.3)
                self.api.drop_watches()
                cut.append(1)
                return True
            return False
        poller = Poller(cut_once)
        p = self.gv("cuda")
        poller.stop()
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertEqual(cut, [1])
        self.assertEqual(len(self.posts()), 1)
        watches = [r for r in self.api.requests() if r["watch"]]
        self.assertGreaterEqual(len(watches), 2, "the watch was opened again")
        self.assert_gone("cuda")

    def test_watch_expired_lists_again(self):
        """The pod watch answers 410 Expired (an ERROR event, as after etcd compaction): the client
        lists again and goes on watching; the pod is judged once."""
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=300, exitAfterMs=300)
        self.api.compact()
        p = self.gv("cuda")
        self.assertEqual(p.returncode, 0, self.out(p))
        reqs = self.api.requests()
        self.assertEqual([r["status"] for r in reqs if r["watch"]][:1], [410])
        self.assertGreaterEqual(len([r for r in reqs if r["watch"]]), 2)
        lists = [r for r in reqs if r["method"] == "GET" and not r["watch"] and r["path"].endswith("/pods")]
        self.assertGreaterEqual(len(lists), 2, "a LIST after the 410")
        self.assertEqual(len(self.posts()), 1)

    def test_cuda_without_workload_publishes_without_pod(self):
        p = self.gv("cuda", WITH_WORKLOAD="false", KUBECONFIG="/nonexistent")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertTrue(os.path.exists(self.marker("cuda-ready")))
        self.assertEqual(self.api.requests(), [])

    def test_cuda_needs_node_and_namespace(self):
        env = self.env()
        del env["OPERATOR_NAMESPACE"]
        p = gvtest.run(self.args("cuda"), env=env)
        self.assertEqual(p.returncode, 2, self.out(p))
        self.assertIn("OPERATOR_NAMESPACE", self.out(p))
        env = self.env()
        del env["NODE_NAME"]
        p = gvtest.run(self.args("cuda"), env=env)
        self.assertEqual(p.returncode, 2, self.out(p))
        self.assertIn("NODE_NAME", self.out(p))

    def test_earlier_pods_deleted_and_awaited_first(self):
        labels = {"app": "nvidia-cuda-validator", "nvidia.com/gpu-validator.node": NODE}
        for name in ("old-1", "old-2"):
            self.api.api("POST", "/api/v1/namespaces/%s/pods" % self.NS, {
                "metadata": {"name": name, "labels": labels},
                "spec": {"nodeName": NODE, "containers": [{"name": "c", "image": "x"}]}})
        other = {"app": "nvidia-cuda-validator", "nvidia.com/gpu-validator.node": "other-node"}
        self.api.api("POST", "/api/v1/namespaces/%s/pods" % self.NS, {
            "metadata": {"name": "elsewhere", "labels": other},
            "spec": {"nodeName": "other-node", "containers": [{"name": "c", "image": "x"}]}})
        self.api.settings(deleteDelayMs=400)
        self.api.clear_requests()
        self.api.kubelet(enabled=True, nodeName=NODE)
        p = self.gv("cuda")
        self.assertEqual(p.returncode, 0, self.out(p))
        reqs = self.api.requests()
        order = [(r["method"], r["path"].rsplit("/", 1)[-1]) for r in reqs if r["method"] in ("DELETE", "POST")]
        self.assertEqual(sorted(order[:2]), [("DELETE", "old-1"), ("DELETE", "old-2")])
        self.assertEqual(order[2], ("POST", "pods"))
        # ours is deleted too, gracefully (still terminating for deleteDelayMs)
        names = [x["metadata"]["name"] for x in self.api.pods(self.NS) if not x["metadata"].get("deletionTimestamp")]
        self.assertEqual(names, ["elsewhere"], "only this node's pods are deleted")

    def test_image_pull_error_named_with_image(self):
        self.api.kubelet(enabled=True, nodeName=NODE, waitingReason="ImagePullBackOff")
        p = self.gv("cuda")
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertIn("ImagePullBackOff", p.stdout)
        self.assertIn(IMAGE, p.stdout)
        self.assertIn("workload-failed", p.stdout)
        self.assertLess(p.elapsed, 20)
        self.assert_gone("cuda")
        self.assertFalse(os.path.exists(self.marker("cuda-ready")))

    def test_init_container_failure_with_log_lines(self):
        self.gpu_node()  # pods/log goes through the Node's kubelet endpoint
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=1000, initExitCode=3)

        def set_log():
            items = self.pods("cuda")
            if not items:
                return False
            name = items[0]["metadata"]["name"]
            self.api.set_log(self.NS, name, "cuda-validation",
                             "".join("line %d\n" % i for i in range(1, 40)) + "cudaErrorNoDevice: no CUDA device\n")
            return True
        poller = Poller(set_log)
        p = self.gv("cuda")
        poller.stop()
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertIn("init container cuda-validation exited with code 3", p.stdout)
        self.assertIn("cudaErrorNoDevice: no CUDA device", p.stdout)
        self.assertNotIn("line 5\n", p.stdout, "only the last lines (tailLines)")
        self.assertIn("line 39", p.stdout)
        self.assertTrue(any("tailLines=" in r["query"] and r["path"].endswith("/log") for r in self.api.requests()))
        self.assert_gone("cuda")

    def test_pod_timeout_bound(self):
        # the kubelet never starts the pod: it stays Pending (it still stops it when deleted)
        self.api.kubelet(enabled=False, nodeName=NODE)
        p = self.gv("cuda", "--pod-timeout", "2")
        self.assertEqual(p.returncode, 3, self.out(p))
        self.assertIn("2 s", p.stdout)
        self.assertLess(p.elapsed, 15)
        self.assert_gone("cuda")

    def test_tolerations_and_owner_from_validator_pod(self):
        # ServiceAccount admission: the account a pod names must exist.
        self.api.api("POST", "/api/v1/namespaces/%s/serviceaccounts" % self.NS, {"metadata": {"name": "gv-gpu-validator"}})
        self.api.api("POST", "/api/v1/namespaces/%s/pods" % self.NS, {
            "metadata": {"name": "nvidia-operator-validator-xyz", "labels": {"app": "nvidia-operator-validator"}},
            "spec": {"nodeName": NODE, "containers": [{"name": "c", "image": "x"}],
                     "serviceAccountName": "gv-gpu-validator",
                     "tolerations": [{"key": "example.com/custom-taint", "operator": "Exists",
                                      "effect": "NoExecute"}]}})
        uid = self.api.api("GET", "/api/v1/namespaces/%s/pods/nvidia-operator-validator-xyz" % self.NS)["metadata"]["uid"]
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=800)
        seen, poller = self.capture_pod("cuda")
        p = self.gv("cuda", POD_NAME="nvidia-operator-validator-xyz")
        poller.stop()
        self.assertEqual(p.returncode, 0, self.out(p))
        pod = seen["pod"]
        self.assertIn("example.com/custom-taint", [t.get("key") for t in pod["spec"]["tolerations"]])
        owner = pod["metadata"]["ownerReferences"][0]
        self.assertEqual((owner["kind"], owner["name"], owner["uid"]), ("Pod", "nvidia-operator-validator-xyz", uid))
        # Runs as the validator's own service account (the chart's), which exists.
        self.assertEqual(pod["spec"]["serviceAccountName"], "gv-gpu-validator")

    def test_fr11_override_file_reaches_the_created_pod(self):
        # RuntimeClass admission: the RuntimeClass a pod names must exist.
        self.api.cluster_object({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                                 "metadata": {"name": "nvidia-cdi"}, "handler": "nvidia-cdi"})
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=800)
        seen, poller = self.capture_pod("cuda")
        p = self.gv("cuda", WORKLOAD_TEMPLATE=FR11)
        poller.stop()
        self.assertEqual(p.returncode, 0, self.out(p))
        pod = seen["pod"]
        meta, spec = pod["metadata"], pod["spec"]
        self.assertEqual(meta["labels"]["team"], "ml-platform")
        self.assertEqual(meta["annotations"]["example.com/owner"], "gpu-team")
        self.assertEqual(spec["priorityClassName"], "system-node-critical")
        self.assertEqual(spec["runtimeClassName"], "nvidia-cdi")
        self.assertEqual(spec["nodeSelector"], {"nvidia.com/gpu.present": "true"})
        self.assertEqual(spec["imagePullSecrets"], [{"name": "regcred"}])
        self.assertEqual(spec["securityContext"], {"runAsUser": 0})
        self.assertEqual(spec["nodeName"], NODE)
        self.assertIn("example.com/dedicated", [t.get("key") for t in spec["tolerations"]])
        init = spec["initContainers"][0]
        main = [c for c in spec["containers"] if c["name"] == "nvidia-cuda-validator"][0]
        self.assertEqual(init["image"], "registry.example.com/nvidia/gpu-validator:v1.2")
        self.assertEqual(main["image"], "registry.example.com/nvidia/gpu-validator:v1.2")
        self.assertEqual(init["resources"], {"requests": {"cpu": "200m", "memory": "256Mi"},
                                             "limits": {"cpu": "2", "memory": "2Gi"}})
        self.assertEqual(main["resources"]["limits"], {"cpu": "50m", "memory": "32Mi"})
        self.assertEqual(init["securityContext"]["seLinuxOptions"], {"level": "s0"})

    def test_bad_override_file_is_a_config_error(self):
        bad = self.path("bad.yaml")
        with open(bad, "w") as f:
            f.write("cuda:\n  spec:\n    nodeName: elsewhere\n")
        p = self.gv("cuda", WORKLOAD_TEMPLATE=bad)
        self.assertEqual(p.returncode, 2, self.out(p))
        self.assertIn("bad.yaml", p.stdout)
        self.assertEqual(self.posts(), [])

    # -- FR09 / FR10 --------------------------------------------------------------------------
    def test_fr09_sidecar_never_exits_success_and_deleted(self):
        self.gpu_node()
        self.api.kubelet(enabled=True, nodeName=NODE, sidecar=True, sidecarName="istio-proxy")
        p = self.gv("plugin")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertTrue(os.path.exists(self.marker("plugin-ready")))
        self.assert_gone("plugin", "the pod with its sidecar is deleted afterwards")
        self.assertLess(p.elapsed, 20)
        self.assert_no_polling()

    def test_fr10_deleted_externally_recreated_then_success(self):
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=1500, exitAfterMs=200)
        deleted = []

        def delete_first():
            items = self.pods("cuda")
            if items:
                name = items[0]["metadata"]["name"]
                self.api.delete_pod_as_someone_else(self.NS, name)
                deleted.append(name)
                return True
            return False
        poller = Poller(delete_first)
        p = self.gv("cuda")
        poller.stop()
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertEqual(len(deleted), 1)
        self.assertIn("deleted by someone else", p.stderr + p.stdout)
        self.assertEqual(len(self.posts()), 2)
        self.assertTrue(os.path.exists(self.marker("cuda-ready")))
        self.assert_gone("cuda")
        self.assert_no_polling()

    def test_fr10_deleted_every_time_bounded_failure(self):
        # no kubelet: pods stay Pending; a "controller" deletes every one it sees
        deleted = set()

        def delete_all():
            for item in self.pods("cuda"):
                name = item["metadata"]["name"]
                if name not in deleted:
                    deleted.add(name)
                    try:
                        self.api.delete_pod_as_someone_else(self.NS, name)
                    except RuntimeError:
                        pass
            return False
        poller = Poller(delete_all)
        t0 = time.monotonic()
        p = self.gv("cuda")
        poller.stop()
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertLess(time.monotonic() - t0, 40)
        self.assertIn("deleted by someone else; giving up after 3 re-creations", p.stdout)
        self.assertEqual(len(self.posts()), 4)
        self.assertNotIn("Sanitizer", p.stderr)
        self.assertFalse(os.path.exists(self.marker("cuda-ready")))

    # -- plugin: FR07, FR08, FR17 -------------------------------------------------------------
    def test_plugin_success_publishes_device_count(self):
        self.gpu_node(capacity={"nvidia.com/gpu": "4"}, allocatable={"nvidia.com/gpu": "4"})
        self.api.kubelet(enabled=True, nodeName=NODE)
        p = self.gv("plugin")
        self.assertEqual(p.returncode, 0, self.out(p))
        m = gvtest.read_marker(self.marker("plugin-ready"))
        self.assertEqual(m["DEVICE_PLUGIN_DEVICES"], "4")
        self.assert_gone("plugin")
        self.assert_no_polling()
        node_gets = [r for r in self.api.requests() if r["method"] == "GET" and not r["watch"]
                     and r["path"] == "/api/v1/nodes/" + NODE]
        self.assertEqual(node_gets, [], "the node is watched, not polled")

    def test_plugin_requests_mig_resource_first(self):
        res = {"nvidia.com/gpu": "1", "nvidia.com/mig-1g.5gb": "7"}
        self.gpu_node(capacity=res, allocatable=res)
        self.api.kubelet(enabled=True, nodeName=NODE, runningAfterMs=800)
        seen, poller = self.capture_pod("plugin")
        p = self.gv("plugin")
        poller.stop()
        self.assertEqual(p.returncode, 0, self.out(p))
        limits = seen["pod"]["spec"]["initContainers"][0]["resources"]["limits"]
        self.assertIn("nvidia.com/mig-1g.5gb", limits)
        self.assertNotIn("nvidia.com/gpu", limits)
        self.assertEqual(gvtest.read_marker(self.marker("plugin-ready"))["DEVICE_PLUGIN_DEVICES"], "8")

    def test_fr07_all_gpus_allocated_admission_error(self):
        self.gpu_node()
        self.api.kubelet(enabled=True, nodeName=NODE, admissionError=True)
        p = self.gv("plugin")
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertLess(p.elapsed, 10, "detected within seconds")
        self.assertIn("UnexpectedAdmissionError", p.stdout)
        self.assertIn("no free GPU", p.stdout)
        self.assert_gone("plugin", "the failed pod is deleted")
        self.assertFalse(os.path.exists(self.marker("plugin-ready")))
        self.assertEqual(len(self.posts()), 1)

    def test_fr07_bounded_retries_with_wait(self):
        self.gpu_node()
        self.api.kubelet(enabled=True, nodeName=NODE, admissionError=True)
        p = self.gv("plugin", "--wait", "--max-wait", "4", "--sleep-interval", "1", timeout=60)
        self.assertEqual(p.returncode, 3, self.out(p))
        self.assertLess(p.elapsed, 20)
        self.assertIn("UnexpectedAdmissionError", p.stdout)
        self.assertGreaterEqual(len(self.posts()), 2)
        self.assert_gone("plugin")

    def test_fr07_without_workload_capacity_is_enough(self):
        self.gpu_node()
        self.api.kubelet(enabled=True, nodeName=NODE, admissionError=True)
        p = self.gv("plugin", WITH_WORKLOAD="false")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertEqual(self.posts(), [], "no pod at all")
        self.assertEqual(gvtest.read_marker(self.marker("plugin-ready"))["DEVICE_PLUGIN_DEVICES"], "1")

    def test_fr08_device_plugin_disabled_skips_on_purpose_and_records_it(self):
        # the device plugin not deployed here: skipped on purpose, recorded, and the chain treats it as complete
        self.gpu_node(labels={"nvidia.com/gpu.deploy.device-plugin": "false"}, capacity={}, allocatable={})
        p = self.gv("plugin", CAPACITY_WAIT_SECONDS="30")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertIn("skipped", p.stdout)
        self.assertIn("nvidia.com/gpu.deploy.device-plugin=false", self.out(p))
        m = gvtest.read_marker(self.marker("plugin-ready"))
        self.assertEqual(m["SKIPPED"], "true")
        self.assertIn("nvidia.com/gpu.deploy.device-plugin=false", m["SKIP_REASON"])
        self.assertEqual(m["CUDA_GENERATION"], gvtest.read_marker(self.marker("cuda-ready"))["GENERATION"])
        self.assertLess(p.elapsed, 10)
        self.assertEqual(self.posts(), [])
        w = gvtest.run(["wait", "plugin", "--output-dir", self.vdir, "--timeout", "2"], env=self.env())
        self.assertEqual(w.returncode, 0, self.out(w))
        st = gvtest.run(["status", "--output-dir", self.vdir], env=self.env())
        self.assertRegex(st.stdout, r"plugin-ready\s+ready\s+\S+\s+SKIPPED \(")

    # -- node labels of the sandbox and GPUDirect components ----------------------------------
    def sandbox(self, component, *extra, **env):
        sysfs = self.path("sys")
        os.makedirs(os.path.join(sysfs, "bus/pci/devices"), exist_ok=True)
        return self.gv(component, "--sysfs-root", sysfs, *extra, **env)

    def test_workload_config_label_wins_over_default(self):
        self.gpu_node(labels={"nvidia.com/gpu.workload.config": "container"})
        p = self.sandbox("vfio-pci", DEFAULT_GPU_WORKLOAD_CONFIG="vm-passthrough")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertIn("workload config is container (label)", p.stdout)
        with open(self.marker("workload-type")) as f:
            self.assertEqual(f.read(), "container\n")
        self.assertFalse(os.path.exists(self.marker("vfio-pci-ready")))

    def test_invalid_workload_config_label_uses_default(self):
        self.gpu_node(labels={"nvidia.com/gpu.workload.config": "vm-bogus"})
        p = self.sandbox("vfio-pci", DEFAULT_GPU_WORKLOAD_CONFIG="vm-vgpu")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertIn("vm-bogus", p.stderr)
        self.assertIn("workload config is vm-vgpu (DEFAULT_GPU_WORKLOAD_CONFIG)", p.stdout)

    def test_cc_manager_not_capable_writes_marker_at_once(self):
        self.gpu_node(labels={"nvidia.com/cc.capable": "false"})
        p = self.sandbox("cc-manager")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertEqual(gvtest.read_marker(self.marker("cc-manager-ready"))["CC_CAPABLE"], "false")

    def test_mofed_without_mellanox_label_skips(self):
        self.gpu_node(labels={"feature.node.kubernetes.io/pci-15b3.present": "false"})
        p = self.sandbox("mofed", GPU_DIRECT_RDMA_ENABLED="true")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertIn("pci-15b3.present=true", p.stdout)
        self.assertFalse(os.path.exists(self.marker("mofed-ready")))

    def test_fr17_capacity_wait_bound(self):
        self.gpu_node(capacity={}, allocatable={"cpu": "8"})
        p = self.gv("plugin", CAPACITY_WAIT_SECONDS="3")
        self.assertEqual(p.returncode, 3, self.out(p))
        self.assertGreater(p.elapsed, 2.5)
        self.assertLess(p.elapsed, 12, "fails at about the bound")
        self.assertIn("no GPU advertised on node " + NODE + " after 3 s", p.stdout)
        self.assertIn("CAPACITY_WAIT_SECONDS", p.stdout)
        p = self.gv("plugin", "--capacity-wait", "1")
        self.assertEqual(p.returncode, 3, self.out(p))
        self.assertIn("after 1 s", p.stdout)

    def test_capacity_appears_while_watching(self):
        self.gpu_node(capacity={}, allocatable={})
        proc = self.gv_background("plugin", CAPACITY_WAIT_SECONDS="60", WITH_WORKLOAD="false")
        time.sleep(1.0)
        self.gpu_node(capacity={"nvidia.com/gpu": "2"}, allocatable={"nvidia.com/gpu": "2"})
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, out + err)
        self.assertEqual(gvtest.read_marker(self.marker("plugin-ready"))["DEVICE_PLUGIN_DEVICES"], "2")

    def test_node_deleted_ends_capacity_wait_at_once(self):
        """The Node is deleted while the plugin waits for GPU capacity: the wait ends at once with
        a clear verdict, not after the whole bound."""
        self.gpu_node(capacity={}, allocatable={})
        proc = self.gv_background("plugin", CAPACITY_WAIT_SECONDS="60", WITH_WORKLOAD="false")
        time.sleep(1.0)
        t0 = time.monotonic()
        self.api.control("DELETE", "/nodes/" + NODE)
        out, err = proc.communicate(timeout=50)
        self.assertLess(time.monotonic() - t0, 10, out + err)
        self.assertNotEqual(proc.returncode, 0, out + err)
        self.assertIn("node %s was deleted while waiting for GPU capacity" % NODE, out + err)
        self.assertFalse(os.path.exists(self.marker("plugin-ready")))

    def test_node_missing_is_named(self):
        p = self.gv("plugin", CAPACITY_WAIT_SECONDS="30")
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertIn("node %s not found" % NODE, p.stdout)
        self.assertLess(p.elapsed, 10)

    # -- the API server unreachable -------------------------------------------------------------
    def test_api_server_unreachable_clear_bounded_error(self):
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there now
        kc = self.path("kubeconfig")
        with open(kc, "w") as f:
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: t\n  cluster:\n"
                    "    server: http://127.0.0.1:%d\ncontexts:\n- name: t\n  context: {cluster: t, user: t}\n"
                    "users:\n- name: t\n  user: {token: x}\n" % port)
        p = self.gv("cuda", KUBECONFIG=kc, timeout=120)
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertIn("127.0.0.1:%d" % port, p.stdout)
        self.assertIn("kubernetes-api", p.stdout)
        self.assertLess(p.elapsed, 90)
        self.assertFalse(os.path.exists(self.marker("cuda-ready")))


if __name__ == "__main__":
    import unittest
    unittest.main()
