"""The chart and the validation pods judged by the real kube-apiserver (tests/k8s, one control
plane per process): every object `helm template` renders (default values and each file in the
chart's ci/) accepted by `kubectl apply --dry-run=server`; least privilege proven by the real
RBAC authorizer with the chart's ServiceAccount (a TokenRequest token) and its rendered rules;
the rendered validation pods and the validator's own pod against PodSecurity admission
(`privileged`, the GPU Operator's namespace, and `baseline`).  docs/kubernetes.md has the
tables these tests hold true."""
import json
import os
import subprocess
import sys
import unittest
import uuid

import gvtest
from chartapi import chart_api
from test_deploy import CHART, layer_tool, render, validator

sys.path.insert(0, os.path.join(gvtest.SOURCE, "tests", "k8s"))
from cluster import ControlPlane  # noqa: E402

NODE = "gv-policy-node"
PSA = "pod-security.kubernetes.io/enforce"
SERVICE_MONITOR_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "servicemonitors.monitoring.coreos.com"},
    "spec": {"group": "monitoring.coreos.com", "scope": "Namespaced",
             "names": {"kind": "ServiceMonitor", "listKind": "ServiceMonitorList", "plural": "servicemonitors",
                       "singular": "servicemonitor"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def rendered_pod(component, ns):
    p = gvtest.run(["render", component, "--node-name", NODE, "--namespace", ns, "--image", "registry.local/gv:1",
                    "--owner-name", "gpu-validator-abcde", "--owner-uid", str(uuid.uuid4()), "-o", "json"], check=0)
    return json.loads(p.stdout)


class ChartObjects(gvtest.TempDirTestCase):
    """kubectl apply --dry-run=server of every rendered object: the server's own schema,
    strict field validation, defaulting and admission."""

    def kubectl(self, kubeconfig, *args):
        env = dict(os.environ, KUBECONFIG=kubeconfig, HOME=self.tmp)
        return subprocess.run([layer_tool("kubectl"), *args], capture_output=True, text=True, env=env, timeout=120)

    def test_every_rendered_object_is_accepted(self):
        cp = ControlPlane.shared()
        ns = cp.namespace("gv-chart")
        self.addCleanup(cp.cleanup, ns)
        kc = cp.kubeconfig(self.path("kubeconfig"), namespace=ns)
        # ci/all-values.yaml turns the ServiceMonitor on: its CRD comes with the Prometheus
        # Operator, which this cluster lacks; a stand-in CRD of that group, version and kind
        # (any fields) lets the server take the object.  Its schema is not checked here.
        cp.apply(SERVICE_MONITOR_CRD)
        for values in (None, *sorted(os.listdir(os.path.join(CHART, "ci")))):
            with self.subTest(values=values or "defaults"):
                docs = render(values) if values else render()
                self.assertGreater(len(docs), 3)
                path = self.path("objects.json")
                for d in docs:  # rendered for namespace gpu-ops: apply into ours
                    if d["metadata"].get("namespace") == "gpu-ops":
                        d["metadata"]["namespace"] = ns
                    for s in d.get("subjects") or []:
                        if s.get("namespace") == "gpu-ops":
                            s["namespace"] = ns
                with open(path, "w") as f:
                    json.dump({"apiVersion": "v1", "kind": "List", "items": docs}, f)
                p = cp.wait(lambda: (lambda r: r if r.returncode == 0 or "no matches for kind" not in r.stderr
                                     else None)(self.kubectl(kc, "apply", "--dry-run=server", "--validate=strict",
                                                             "-f", path)), "the CRD to be served")
                self.assertEqual(p.returncode, 0, f"{values}: {p.stdout}{p.stderr}")
                kinds = sorted({d["kind"] for d in docs})
                for kind in kinds:
                    self.assertIn(kind.lower(), p.stdout.lower(), p.stdout)
                self.assertEqual(p.stdout.count("(server dry run)"), len(docs), p.stdout)


class LeastPrivilege(unittest.TestCase):
    """The validator's ServiceAccount (a TokenRequest token, as the kubelet projects it) with the
    chart's rendered rules (node status on): what every mode needs is allowed, the rest is 403
    from the real RBAC authorizer.  The e2e tests of each mode (test_workload_pods, test_dra,
    test_node_signal, test_revalidate) run as this account too."""

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="gv-lp-")
        cls.api, cls.docs = chart_api(cls.dir, sets=("nodeStatus.enabled=true",))
        if not cls.docs:
            raise unittest.SkipTest("helm is missing: no chart rules to test")
        cls.cp, cls.ns = cls.api.cp, cls.api.namespace
        cls.other = cls.cp.namespace("gv-lp-other")
        cls.cp.node(NODE)
        cls.cp.node(NODE + "-other")

    @classmethod
    def tearDownClass(cls):
        cls.cp.cleanup(cls.other, nodes=(NODE, NODE + "-other"))
        cls.api.stop()

    def as_sa(self, method, path, body=None, **kw):
        code, got = self.cp.request(method, path, body, token=self.api.token, **kw)
        return code, got

    def test_the_token_is_the_charts_service_account(self):
        code, got = self.as_sa("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                               {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
        self.assertEqual(code, 201, got)
        self.assertEqual(got["status"]["userInfo"]["username"], self.api.user)

    def test_every_request_of_every_mode_is_allowed(self):
        ns = self.ns
        pod = rendered_pod("cuda", ns)
        event = {"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "gv-", "namespace": "default"},
                 "involvedObject": {"kind": "Node", "name": NODE, "apiVersion": "v1"}, "reason": "GPUValidationSucceeded",
                 "message": "m", "type": "Normal", "source": {"component": "gpu-validator"}}
        dry = {"dryRun": "All"}
        allowed = [
            ("POST", f"/api/v1/namespaces/{ns}/pods", pod, dry),                       # cuda, plugin
            ("GET", f"/api/v1/namespaces/{ns}/pods", None, {"labelSelector": "app=x"}),
            ("GET", f"/api/v1/namespaces/{ns}/pods", None, {"watch": "1", "timeoutSeconds": "1"}),
            ("DELETE", f"/api/v1/namespaces/{ns}/pods/absent", None, None),
            ("GET", f"/api/v1/namespaces/{ns}/pods/absent/log", None, None),
            ("GET", f"/api/v1/nodes/{NODE}", None, None),                              # plugin capacity, labels
            ("GET", "/api/v1/nodes", None, {"fieldSelector": f"metadata.name={NODE}", "watch": "1",
                                            "timeoutSeconds": "1"}),
            ("PATCH", f"/api/v1/nodes/{NODE}", {"metadata": {"labels": {"nvidia.com/gpu.validated": "true"}}}, dry),
            ("PATCH", f"/api/v1/nodes/{NODE}/status", {"status": {"conditions": []}}, dry),   # node signal
            ("POST", "/api/v1/namespaces/default/events", event, dry),
            ("GET", "/apis/resource.k8s.io/v1/resourceslices", None, {"fieldSelector": f"spec.nodeName={NODE}"}),
            ("GET", "/apis/resource.k8s.io/v1beta2/resourceslices", None, None),       # DRA, older servers
            ("GET", "/apis/resource.k8s.io/v1beta1/resourceslices", None, None),
        ]
        for method, path, body, q in allowed:
            with self.subTest(f"{method} {path}"):
                code, got = self.as_sa(method, path, body, query=q)
                self.assertNotIn(code, (401, 403), f"{method} {path}: {got}")
                self.assertIn(code, (200, 201, 404), f"{method} {path}: {got}")

    def test_everything_else_is_refused(self):
        ns, other = self.ns, self.other
        refused = [
            ("GET", f"/api/v1/namespaces/{ns}/secrets", None),
            ("GET", "/api/v1/secrets", None),
            ("GET", f"/api/v1/namespaces/{ns}/configmaps", None),
            ("POST", f"/api/v1/namespaces/{other}/pods", rendered_pod("cuda", other)),
            ("GET", f"/api/v1/namespaces/{other}/pods", None),
            ("POST", f"/api/v1/namespaces/{ns}/events",
             {"metadata": {"generateName": "x"}, "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "r"}),
            ("POST", "/api/v1/namespaces/kube-system/events",
             {"metadata": {"generateName": "x"}, "involvedObject": {"kind": "Node", "name": NODE}, "reason": "r"}),
            ("DELETE", f"/api/v1/nodes/{NODE}", None),
            ("PUT", f"/api/v1/nodes/{NODE}", {"metadata": {"name": NODE}}),
            ("POST", "/api/v1/nodes", {"metadata": {"name": "gv-lp-new"}}),
            ("PATCH", f"/api/v1/namespaces/{ns}/pods/absent/status", {"status": {}}),
            ("POST", f"/api/v1/namespaces/{ns}/pods/absent/exec", None),
            ("POST", "/apis/resource.k8s.io/v1/resourceslices", {"metadata": {"name": "x"}}),
            ("GET", "/apis/resource.k8s.io/v1/resourceclaims", None),
            ("GET", "/apis/apps/v1/daemonsets", None),
            ("POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{self.api.service_account}/token", {}),
            ("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles", None),
        ]
        for method, path, body in refused:
            with self.subTest(f"{method} {path}"):
                code, got = self.as_sa(method, path, body, query={"dryRun": "All"} if method != "GET" else None)
                self.assertEqual(code, 403, f"{method} {path}: {code} {got}")
                self.assertEqual(got.get("reason"), "Forbidden", got)
                self.assertIn(self.api.user, got.get("message", ""))

    def pod_bound_token(self):
        """The token the kubelet projects into the validator's pod on NODE (bound to that pod)."""
        name = "validator-" + uuid.uuid4().hex[:6]
        self.cp.api("POST", f"/api/v1/namespaces/{self.ns}/pods", {
            "metadata": {"name": name}, "spec": {"nodeName": NODE, "serviceAccountName": self.api.service_account,
                                                 "containers": [{"name": "c", "image": "x"}]}})
        self.addCleanup(self.cp.request, "DELETE", f"/api/v1/namespaces/{self.ns}/pods/{name}",
                        {"gracePeriodSeconds": 0})
        return self.cp.pod_token(self.ns, self.api.service_account, name)

    def test_another_nodes_patch_is_refused_by_the_charts_policy(self):
        """RBAC cannot scope a ClusterRole to the node a pod runs on; the chart's
        ValidatingAdmissionPolicy does: with the pod-bound token, the Node the pod runs on may
        be patched (labels, status), another Node is 403."""
        tok = self.pod_bound_token()
        code, who = self.cp.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                    {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, token=tok)
        self.assertEqual(who["status"]["userInfo"]["extra"]["authentication.kubernetes.io/node-name"], [NODE])
        label = {"metadata": {"labels": {"nvidia.com/gpu.validated": "true"}}}
        for path in (f"/api/v1/nodes/{NODE}", f"/api/v1/nodes/{NODE}/status"):
            code, got = self.cp.request("PATCH", path, label, token=tok, query={"dryRun": "All"})
            self.assertEqual(code, 200, got)

        def refused():
            c, g = self.cp.request("PATCH", f"/api/v1/nodes/{NODE}-other", label, token=tok, query={"dryRun": "All"})
            return (c, g) if c == 403 else None
        code, got = self.cp.wait(refused, "the chart's ValidatingAdmissionPolicy to apply", timeout=30)
        self.assertEqual(got["reason"], "Forbidden", got)
        self.assertIn(f"may change only the Node its pod runs on ({NODE}), not {NODE}-other", got["message"])
        code, got = self.cp.request("PATCH", f"/api/v1/nodes/{NODE}-other/status", label, token=tok,
                                    query={"dryRun": "All"})
        self.assertEqual(code, 403, got)

    def test_a_token_not_bound_to_a_pod_is_left_to_rbac(self):
        """Without the pod's node in the token (not projected into a pod), only RBAC applies: the
        ClusterRole's node patch covers every Node.  docs/kubernetes.md says so."""
        code, got = self.as_sa("PATCH", f"/api/v1/nodes/{NODE}-other", {"metadata": {"labels": {"x": "y"}}},
                               query={"dryRun": "All"})
        self.assertEqual(code, 200, got)


class PodSecurity(unittest.TestCase):
    """The rendered cuda and plugin pods and the chart's validator pod against PodSecurity
    admission: the GPU Operator's namespace is `privileged`; `baseline` refuses them, naming
    each reason.  (A dry-run create: admission runs, nothing is stored.)"""

    @classmethod
    def setUpClass(cls):
        cls.cp = ControlPlane.shared()
        cls.ns = {level: cls.cp.namespace(f"gv-psa-{level}", labels={PSA: level}) for level in ("privileged", "baseline")}
        for ns in cls.ns.values():
            for sa in ("nvidia-operator-validator", "rel-gpu-validator"):
                cls.cp.api("POST", f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": sa}})

    @classmethod
    def tearDownClass(cls):
        for ns in cls.ns.values():
            cls.cp.cleanup(ns)

    def create(self, level, pod):
        ns = self.ns[level]
        pod = json.loads(json.dumps(pod))
        pod["metadata"]["namespace"] = ns
        pod["metadata"].pop("ownerReferences", None)
        return self.cp.request("POST", f"/api/v1/namespaces/{ns}/pods", pod, query={"dryRun": "All"})

    def validator_pod(self):
        ds = validator(render())
        tpl = ds["spec"]["template"]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "validator", "labels": tpl["metadata"]["labels"]},
                "spec": dict(tpl["spec"], nodeName=NODE)}

    def test_privileged_namespace_admits_every_pod(self):
        for name, pod in (("cuda", rendered_pod("cuda", "x")), ("plugin", rendered_pod("plugin", "x")),
                          ("validator", self.validator_pod())):
            with self.subTest(name):
                code, got = self.create("privileged", pod)
                self.assertEqual(code, 201, got)

    def assert_refused(self, pod, reasons):
        code, got = self.create("baseline", pod)
        self.assertEqual(code, 403, got)
        msg = got["message"]
        head = 'violates PodSecurity "baseline:latest": '
        self.assertIn(head, msg)
        found = [r.split(" (")[0].strip() for r in msg.split(head, 1)[1].split("), ")]
        self.assertEqual(sorted(found), sorted(reasons), msg)
        return msg

    def test_baseline_refuses_the_cuda_pod(self):
        """The CUDA check runs privileged (it opens /dev/nvidia* without a device plugin)."""
        msg = self.assert_refused(rendered_pod("cuda", "x"), ["privileged"])
        self.assertIn('containers "cuda-validation", "nvidia-cuda-validator" must not set securityContext.privileged=true',
                      msg)

    def test_baseline_admits_the_plugin_pod(self):
        """The plugin pod gets its GPU from the device plugin: nothing privileged, no host path."""
        code, got = self.create("baseline", rendered_pod("plugin", "x"))
        self.assertEqual(code, 201, got)
        for c in got["spec"].get("initContainers", []) + got["spec"]["containers"]:
            self.assertFalse((c.get("securityContext") or {}).get("privileged"), c["name"])

    def test_baseline_refuses_the_validator_pod(self):
        """The validator reads the driver root and writes the markers on the host."""
        msg = self.assert_refused(self.validator_pod(), ["hostPath volumes", "privileged"])
        self.assertIn('volumes "run-nvidia-validations"', msg)


if __name__ == "__main__":
    unittest.main()
