"""The plugin component in DRA mode: on a node labelled
nvidia.com/gpu.deploy.dra-driver=true the real `gpu-validator run --components plugin` checks
that the NVIDIA DRA driver (gpu.nvidia.com) published this node's GPUs in ResourceSlices,
against the real kube-apiserver (tests/k8s, as the chart's ServiceAccount) and a driver-ready from
a mock driver root (8 GPUs).  ResourceSlices are created in every version the server serves
(v1, v1beta2, v1beta1); on a Kubernetes without them (1.30: only v1alpha2, another shape) only
the tests of a server without DRA run.  See docs/components.md ("plugin")."""
import os
import subprocess
import time

import gvtest
from chartapi import ChartApiTestCase

NODE = "gpu-node-dra"
DRA = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.deploy.dra-driver": "true"}
_OURS = ["CAPACITY_WAIT_SECONDS", "VALIDATOR_POD_NAME", "VALIDATOR_POD_UID", "POD_NAME", "POD_UID",
         "KUBERNETES_SERVICE_PORT", "WITH_WORKLOAD"]


class DraTest(ChartApiTestCase):
    NODE, UNSET = NODE, _OURS
    BASE_ENV = {"VALIDATOR_IMAGE": "registry.local/gpu-validator:test", "WITH_WORKLOAD": "false"}

    NO_DRA_TESTS = ("test_api_server_without_resource_api_is_a_clear_error_at_once",)

    def setUp(self):
        super().setUp()
        if not self.api.cp.served("resource.k8s.io/v1") and self._testMethodName not in self.NO_DRA_TESTS:
            self.skipTest(f"Kubernetes {self.api.cp.version} serves no resource.k8s.io/v1 ResourceSlices")
        self.uuids = gvtest.read_marker(self.marker("driver-ready"))["GPU_UUIDS"].split(",")
        self.assertEqual(len(self.uuids), 8)
        # plugin's parent: cuda-ready, published without a pod (WITH_WORKLOAD=false, no API call)
        gvtest.run(self.args("cuda"), env=self.env(WITH_WORKLOAD="false"), check=0)

    # -- helpers ------------------------------------------------------------------------
    def plugin(self, *extra, timeout=90, **env):
        t0 = time.monotonic()
        p = gvtest.run(self.args("plugin", *extra), env=self.env(**env), timeout=timeout)
        p.elapsed = time.monotonic() - t0
        return p

    def out(self, p):
        return p.stdout + p.stderr

    def slice_requests(self):
        """The validator's requests to resource.k8s.io (not the test's own: those are made as admin
        in RBAC mode, and without helm, when there is no RBAC, by Python's urllib)."""
        return [r for r in self.api.requests() if r["path"].startswith("/apis/resource.k8s.io/")
                and self.ours(r)]

    @staticmethod
    def ours(r):
        return r["auth"] != "admin" and r["userAgent"].startswith("gpu-validator/")

    def assert_no_marker(self):
        self.assertFalse(os.path.exists(self.marker("plugin-ready")))

    # -- DRA mode ---------------------------------------------------------------------------
    def test_slice_publishing_every_gpu_passes_and_is_recorded(self):
        self.api.node(NODE, labels=DRA, capacity={}, allocatable={"cpu": "8"})
        self.api.resource_slice(NODE + "-gpu.nvidia.com-abcde", NODE, self.api.gpu_devices(self.uuids))
        p = self.plugin(CAPACITY_WAIT_SECONDS="30")
        self.assertEqual(p.returncode, 0, self.out(p))
        self.assertLess(p.elapsed, 10, "no wait for nvidia.com/gpu capacity in DRA mode")
        m = gvtest.read_marker(self.marker("plugin-ready"))
        self.assertEqual(m["MODE"], "dra")
        self.assertEqual(m["DRA_DRIVER"], "gpu.nvidia.com")
        self.assertEqual(m["RESOURCE_API"], "resource.k8s.io/v1")
        self.assertEqual(m["RESOURCE_SLICES"], NODE + "-gpu.nvidia.com-abcde")
        self.assertEqual(m["DRA_GPUS"], "8")
        self.assertNotIn("SKIPPED", m)
        self.assertNotIn("DEVICE_PLUGIN_DEVICES", m)
        self.assertIn("DRA mode", p.stdout)
        # one list, as a real client asks: both field selectors kube-apiserver supports for slices
        reqs = self.slice_requests()
        self.assertEqual(len(reqs), 1, reqs)
        self.assertEqual(reqs[0]["path"], "/apis/resource.k8s.io/v1/resourceslices")
        self.assertIn("fieldSelector=spec.nodeName%3D" + NODE + "%2Cspec.driver%3Dgpu.nvidia.com", reqs[0]["query"])
        self.assertEqual(reqs[0]["status"], 200)
        self.assertEqual([r for r in self.api.requests() if r["method"] == "POST" and self.ours(r)], [],
                         "no validation pod")
        st = gvtest.run(["status", "--output-dir", self.vdir], env=self.env())
        self.assertRegex(st.stdout, r"plugin-ready\s+ready\s+\S+\s+DRA \(8 GPU\(s\) in ResourceSlices " + NODE)
        w = gvtest.run(["wait", "plugin", "--output-dir", self.vdir, "--timeout", "2"], env=self.env())
        self.assertEqual(w.returncode, 0, self.out(w))

    def test_without_the_drivers_slice_fails_at_the_bound_naming_what_was_found(self):
        self.api.node(NODE, labels=DRA, capacity={}, allocatable={})
        # a slice on this node from another driver, and one of gpu.nvidia.com for another node
        self.api.resource_slice("nic-slice", NODE, [{"name": "nic-0"}], driver="dra.net.example.com")
        self.api.resource_slice("other-node-gpus", "gpu-node-b", self.api.gpu_devices(self.uuids))
        p = self.plugin(CAPACITY_WAIT_SECONDS="3")
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertGreater(p.elapsed, 2.5)
        self.assertLess(p.elapsed, 15, "fails at about the bound")
        self.assertIn("dra-driver-not-ready", p.stdout)
        self.assertIn("no ResourceSlice of driver gpu.nvidia.com for it after 3 s", p.stdout)
        self.assertIn("nic-slice (driver dra.net.example.com)", p.stdout)
        self.assertNotIn("other-node-gpus", p.stdout)
        self.assert_no_marker()
        lists = [r for r in self.slice_requests() if "spec.driver" in r["query"]]
        self.assertGreaterEqual(len(lists), 2, "looked again with backoff")
        self.assertLessEqual(len(lists), 4, "a capped backoff, not a busy poll")

    def test_slice_appearing_while_waiting_passes(self):
        self.api.node(NODE, labels=DRA, capacity={}, allocatable={})
        proc = subprocess.Popen([gvtest.GV] + self.args("plugin"), env=self.env(CAPACITY_WAIT_SECONDS="60"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        self.assertIsNone(proc.poll())
        self.api.resource_slice("late-slice", NODE, self.api.gpu_devices(self.uuids))
        out, err = proc.communicate(timeout=40)
        self.assertEqual(proc.returncode, 0, out + err)
        self.assertEqual(gvtest.read_marker(self.marker("plugin-ready"))["RESOURCE_SLICES"], "late-slice")

    def test_slice_listing_fewer_gpus_than_nvml_names_the_missing(self):
        self.api.node(NODE, labels=DRA, capacity={}, allocatable={})
        self.api.resource_slice("part", NODE, self.api.gpu_devices(self.uuids[:6]))
        p = self.plugin(CAPACITY_WAIT_SECONDS="2")
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertIn("dra-gpus-missing", p.stdout)
        self.assertIn("publish 6 GPU(s) but NVML sees 8", p.stdout)
        self.assertIn(self.uuids[6] + "," + self.uuids[7], p.stdout)
        self.assertNotIn(self.uuids[0], p.stdout)
        self.assert_no_marker()

    def test_gpus_split_over_slices_and_mig_devices_count(self):
        # two slices of one pool; the last two GPUs are in MIG mode (published as MIG devices)
        self.api.node(NODE, labels=DRA, capacity={}, allocatable={})
        migs = [(self.uuids[6], "MIG-aaaa"), (self.uuids[6], "MIG-bbbb"), (self.uuids[7], "MIG-cccc")]
        self.api.resource_slice("s-0", NODE, self.api.gpu_devices(self.uuids[:3]), count=2)
        devs = self.api.gpu_devices(self.uuids[3:6], migs)
        self.api.resource_slice("s-1", NODE, [dict(d, name="b-" + d["name"]) for d in devs], count=2)
        p = self.plugin(CAPACITY_WAIT_SECONDS="5")
        self.assertEqual(p.returncode, 0, self.out(p))
        m = gvtest.read_marker(self.marker("plugin-ready"))
        self.assertEqual(m["RESOURCE_SLICES"], "s-0,s-1")
        self.assertEqual(m["DRA_GPUS"], "8")

    def test_incomplete_pool_is_not_ready(self):
        self.api.node(NODE, labels=DRA, capacity={}, allocatable={})
        self.api.resource_slice("s-0", NODE, self.api.gpu_devices(self.uuids), count=2)
        p = self.plugin(CAPACITY_WAIT_SECONDS="2")
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertIn("dra-driver-not-ready", p.stdout)
        self.assertIn("pool " + NODE + " generation 1: 1 of 2 slices", p.stdout)

    def test_older_pool_generation_does_not_count(self):
        self.api.node(NODE, labels=DRA, capacity={}, allocatable={})
        self.api.resource_slice("old", NODE, self.api.gpu_devices(self.uuids), generation=1)
        self.api.resource_slice("new", NODE, self.api.gpu_devices(self.uuids[:7]), generation=2)
        p = self.plugin(CAPACITY_WAIT_SECONDS="1")
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertIn("dra-gpus-missing", p.stdout)
        self.assertIn("(new) publish 7 GPU(s)", p.stdout)

    def test_api_server_without_resource_api_is_a_clear_error_at_once(self):
        self.api.settings(resourceVersions=[])
        self.api.node(NODE, labels=DRA, capacity={}, allocatable={})
        p = self.plugin(CAPACITY_WAIT_SECONDS="30")
        self.assertEqual(p.returncode, 2, self.out(p))
        self.assertLess(p.elapsed, 10, "not worth waiting for")
        self.assertIn("serves no ResourceSlices", p.stdout)
        self.assertIn("resource.k8s.io/{v1,v1beta2,v1beta1}", p.stdout)
        self.assertIn("Dynamic Resource Allocation", p.stdout)
        self.assertEqual([(r["path"], r["status"]) for r in self.slice_requests()],
                         [("/apis/resource.k8s.io/%s/resourceslices" % v, 404) for v in ("v1", "v1beta2", "v1beta1")])
        self.assert_no_marker()

    def test_older_api_server_serving_v1beta1_only(self):
        self.api.settings(resourceVersions=["v1beta1"])
        self.api.node(NODE, labels=DRA, capacity={}, allocatable={})
        self.api.resource_slice("beta", NODE, self.api.gpu_devices(self.uuids), version="v1beta1")
        p = self.plugin(CAPACITY_WAIT_SECONDS="5")
        self.assertEqual(p.returncode, 0, self.out(p))
        m = gvtest.read_marker(self.marker("plugin-ready"))
        self.assertEqual(m["RESOURCE_API"], "resource.k8s.io/v1beta1")
        self.assertEqual(m["DRA_GPUS"], "8")

    def test_dra_label_wins_over_device_plugin_false(self):
        self.api.node(NODE, labels=dict(DRA, **{"nvidia.com/gpu.deploy.device-plugin": "false"}), capacity={},
                      allocatable={})
        p = self.plugin(CAPACITY_WAIT_SECONDS="1")
        self.assertEqual(p.returncode, 1, self.out(p))
        self.assertIn("dra-driver-not-ready", p.stdout)
        self.assert_no_marker()

    def test_label_off_keeps_the_device_plugin_path(self):
        # kin labels alone (dcgm-dra, dra-validator) and a false dra-driver label do not switch the mode
        labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.deploy.dra-driver": "false",
                  "nvidia.com/gpu.deploy.dcgm-dra": "true", "nvidia.com/gpu.deploy.dra-validator": "true"}
        self.api.node(NODE, labels=labels, capacity={"nvidia.com/gpu": "8"}, allocatable={"nvidia.com/gpu": "8"})
        self.api.resource_slice("s", NODE, self.api.gpu_devices(self.uuids[:1]))
        p = self.plugin(CAPACITY_WAIT_SECONDS="5")
        self.assertEqual(p.returncode, 0, self.out(p))
        m = gvtest.read_marker(self.marker("plugin-ready"))
        self.assertEqual(m["MODE"], "device-plugin")
        self.assertEqual(m["DEVICE_PLUGIN_DEVICES"], "8")
        self.assertNotIn("RESOURCE_SLICES", m)
        self.assertEqual(self.slice_requests(), [], "no ResourceSlice list outside DRA mode")
        # and without capacity it still waits for nvidia.com/gpu, not for slices
        self.api.node(NODE, capacity={"nvidia.com/gpu": "0"}, allocatable={"nvidia.com/gpu": "0"})
        p = self.plugin(CAPACITY_WAIT_SECONDS="1")
        self.assertEqual(p.returncode, 3, self.out(p))
        self.assertIn("no GPU advertised on node " + NODE, p.stdout)
