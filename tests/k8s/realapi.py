# SPDX-License-Identifier: Apache-2.0
"""The e2e tests' view of a real kube-apiserver, with the interface of tests/apiserver's
TestApiServer client, so one test body runs against the real server:

    api = RealApi(rbac_objects=docs, service_account="rel-gpu-validator").start()
    api.namespace            # a fresh namespace (the operator's) with the chart's RBAC applied
    api.kubeconfig           # the components' kubeconfig: the fault proxy, the ServiceAccount's
                             # TokenRequest token (least privilege by the real RBAC authorizer)
    api.node("n1", capacity={"nvidia.com/gpu": "1"})
    api.kubelet(enabled=True, nodeName="n1", exitAfterMs=200)   # tests/k8s/kubelet.py
    api.requests()           # the components' requests (the proxy's log)
    api.reset(); api.stop()

What the real server cannot do on demand comes from the fault proxy (fault(), drop_watches(),
compact() as a 410 on the next watch, settings(resourceVersions=[...]) as 404 for the other
resource.k8s.io versions); pod logs come from the test kubelet's log endpoint (set_log())."""

import json
import os
import sys
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cluster import ApiError, ControlPlane  # noqa: E402
from kubelet import TestKubelet  # noqa: E402
from proxy import FaultProxy  # noqa: E402

RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1")
RENDER_NS = "gv-render-ns"  # the namespace the chart is rendered for (chartapi.chart_api)


class RealApi:
    def __init__(self, rbac_objects=None, service_account=None, namespace_prefix="gv-e2e", tmpdir=None,
                 namespace_labels=None):
        """@rbac_objects: the chart's rendered objects (ServiceAccount, Role(Binding),
        ClusterRole(Binding)), applied into the namespace; @service_account: the one whose token
        the components use (without: the admin's)."""
        self.rbac_objects = rbac_objects or []
        self.service_account = service_account
        self.prefix = namespace_prefix
        self.namespace_labels = namespace_labels
        self.dir = tmpdir
        self.cp = None
        self.proxy = None
        self.kubelets = {}
        self.nodes = set()
        self.slices = set()
        self.cluster_objects = []
        self.terminate_ms = None

    # -- lifetime ---------------------------------------------------------------------------
    def start(self):
        import tempfile
        self.cp = ControlPlane.shared()
        self.dir = self.dir or tempfile.mkdtemp(prefix="gv-realapi-")
        self.namespace = self.cp.namespace(self.prefix, labels=self.namespace_labels)
        # The validation pods run as the validator's own ServiceAccount, or upstream's default name.
        self.cp.api("POST", f"/api/v1/namespaces/{self.namespace}/serviceaccounts",
                    {"metadata": {"name": "nvidia-operator-validator"}})
        for obj in self.rbac_objects:
            # The chart's access objects, its user name moved to our namespace (the policy names it).
            obj = json.loads(json.dumps(obj).replace(f"system:serviceaccount:{RENDER_NS}:",
                                                     f"system:serviceaccount:{self.namespace}:"))
            if obj["kind"] not in ("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
                                   "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
                continue
            # Objects rendered into the release's namespace move to ours; others (the Events Role
            # in default) stay where the chart puts them.
            if obj["kind"] in ("ServiceAccount", "Role", "RoleBinding") and \
                    obj["metadata"].get("namespace", RENDER_NS) == RENDER_NS:
                obj["metadata"]["namespace"] = self.namespace
                if obj["kind"] != "ServiceAccount":
                    self.cluster_objects.append(self.cp.collection_path(obj) + "/" + obj["metadata"]["name"])
            elif obj["kind"] in ("Role", "RoleBinding"):
                self.cluster_objects.append(self.cp.collection_path(obj) + "/" + obj["metadata"]["name"])
            for s in obj.get("subjects") or []:
                if s.get("kind") == "ServiceAccount":
                    s["namespace"] = self.namespace
            self.cp.apply(obj)
            if obj["kind"].startswith(("Cluster", "ValidatingAdmission")):
                self.cluster_objects.append(self.cp.collection_path(obj) + "/" + obj["metadata"]["name"])
        self.token = (self.cp.token(self.namespace, self.service_account) if self.service_account
                      else self.cp.admin_token)
        self.user = (f"system:serviceaccount:{self.namespace}:{self.service_account}" if self.service_account
                     else "gv-admin")
        self.proxy = FaultProxy(self.cp).start()
        self.kubeconfig = self.cp.kubeconfig(os.path.join(self.dir, "kubeconfig"), token=self.token,
                                             namespace=self.namespace, server=self.proxy.url)
        self.kubeconfig_direct = self.cp.kubeconfig(os.path.join(self.dir, "kubeconfig-direct"), token=self.token,
                                                    namespace=self.namespace)
        return self

    def stop(self):
        self.reset()
        if self.proxy:
            self.proxy.stop()
        self.cp.cleanup(self.namespace, cluster_objects=self.cluster_objects)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def reset(self):
        """Forget the test's state: kubelets stopped, its pods, nodes and ResourceSlices deleted,
        faults and the request log cleared."""
        for k in self.kubelets.values():
            k.stop()
        self.kubelets.clear()
        self.terminate_ms = None
        self.cp.request("DELETE", f"/api/v1/namespaces/{self.namespace}/pods", {"gracePeriodSeconds": 0})
        for n in list(self.nodes):
            self.cp.request("DELETE", f"/api/v1/nodes/{n}")
        for s in list(self.slices):
            self.cp.request("DELETE", s)
        self.nodes.clear()
        self.slices.clear()
        if self.proxy:
            self.proxy.clear_faults()
            self.proxy.clear_requests()

    # -- the TestApiServer interface ---------------------------------------------------------------
    def api(self, method, path, body=None, content_type=None):
        """The Kubernetes API as the admin; RuntimeError on a non-2xx answer."""
        try:
            return self.cp.api(method, path, body, content_type=content_type)
        except ApiError as e:
            raise RuntimeError(str(e)) from None

    def node(self, name, labels=None, capacity=None, allocatable=None):
        self.nodes.add(name)
        code, _ = self.cp.request("GET", f"/api/v1/nodes/{name}")
        if code == 404:
            return self.cp.node(name, labels=labels, capacity=capacity or {}, allocatable=allocatable)
        if labels:
            self.cp.api("PATCH", f"/api/v1/nodes/{name}", {"metadata": {"labels": labels}})
        if capacity is not None or allocatable is not None:
            return self.cp.set_node_resources(name, capacity or {}, allocatable)
        return self.cp.api("GET", f"/api/v1/nodes/{name}")

    def delete_node(self, name):
        self.cp.request("DELETE", f"/api/v1/nodes/{name}")

    def kubelet(self, enabled=True, nodeName=None, sidecar=False, **script):
        """Start (or re-script) the test kubelet of @nodeName (tests/k8s/kubelet.py).  @sidecar:
        a MutatingAdmissionPolicy injects a container `sidecarName` (istio-proxy) into every pod
        created in the namespace, as a service mesh's webhook does, and the kubelet keeps it
        running."""
        if not nodeName:
            raise ValueError("the test kubelet needs nodeName")
        if sidecar:
            script.setdefault("sidecarName", "istio-proxy")
            self.inject_sidecar(script["sidecarName"])
        if self.terminate_ms is not None:
            script.setdefault("terminateAfterMs", self.terminate_ms)
        if not enabled:
            script["runningAfterMs"] = 10 ** 9
        old = self.kubelets.pop(nodeName, None)
        if old:
            old.stop()
        self.kubelets[nodeName] = TestKubelet(self.cp, nodeName, **script).start()
        return self.kubelets[nodeName]

    def inject_sidecar(self, name):
        """A MutatingAdmissionPolicy (and binding) adding container @name to every pod created in
        the namespace; waits until the API server applies it (a dry-run create shows it)."""
        if not self.cp.served("admissionregistration.k8s.io/v1", "mutatingadmissionpolicies"):
            raise unittest.SkipTest(f"Kubernetes {self.cp.version} has no MutatingAdmissionPolicy (1.34 and later)")
        pol = f"gv-sidecar-{self.namespace}"
        self.cluster_object({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": pol},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                             "operations": ["CREATE"], "resources": ["pods"]}]},
                     "matchConditions": [{"name": "namespace", "expression": f'request.namespace == "{self.namespace}"'}],
                     "failurePolicy": "Fail", "reinvocationPolicy": "Never",
                     "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": (
                         '[JSONPatch{op: "add", path: "/spec/containers/-", value: Object.spec.containers{'
                         f'name: "{name}", image: "proxy:latest"}}}}]')}}]}})
        self.cluster_object({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
                             "metadata": {"name": pol}, "spec": {"policyName": pol}})
        probe = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sidecar-probe"},
                 "spec": {"containers": [{"name": "c", "image": "x"}]}}

        def injected():
            code, got = self.cp.request("POST", f"/api/v1/namespaces/{self.namespace}/pods", probe,
                                        query={"dryRun": "All"})
            return code == 201 and len(got["spec"]["containers"]) == 2
        self.cp.wait(injected, "the sidecar MutatingAdmissionPolicy to apply", timeout=30)

    def settings(self, deleteDelayMs=None, resourceVersions=None, **other):
        if other:
            raise unittest.SkipTest(f"settings {sorted(other)} exist only on tests/apiserver")
        if deleteDelayMs is not None:
            self.terminate_ms = deleteDelayMs
            for k in self.kubelets.values():
                k.k["terminateAfterMs"] = deleteDelayMs
        if resourceVersions is not None:
            for v in RESOURCE_VERSIONS:
                if v not in resourceVersions:
                    self.proxy.fault(type="status", code=404, reason="NotFound", count=10 ** 6,
                                     path=f"/apis/resource.k8s.io/{v}/", message="the server could not find the "
                                     "requested resource (this version is not served: test proxy)")

    def requests(self):
        out = []
        for r in self.proxy.requests():
            r["auth"] = "bad" if r["status"] == 401 else ("ok" if r["auth"] == "token" else "none")
            out.append(r)
        return out

    def clear_requests(self):
        self.proxy.clear_requests()

    def fault(self, **rule):
        if rule.get("type") == "concurrentWrite":
            node, cond = rule.pop("node"), rule.pop("condition")
            rule["type"] = "delay"
            rule["before"] = lambda: self.cp.api(
                "PATCH", f"/api/v1/nodes/{node}/status", {"status": {"conditions": [cond]}},
                content_type="application/strategic-merge-patch+json")
        self.proxy.fault(**rule)

    def clear_faults(self):
        self.proxy.clear_faults()

    def drop_watches(self):
        self.proxy.drop_watches()

    def compact(self):
        """The next watch gets 410 Expired (a real server compacts on its own schedule)."""
        self.proxy.fault(type="gone", watch=True, count=1)

    def delete_pod_as_someone_else(self, ns, name):
        return self.api("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", {"gracePeriodSeconds": 0})

    def control(self, method, path, body=None):
        parts = path.strip("/").split("/")
        if method == "DELETE" and parts[0] == "nodes":
            return self.delete_node(parts[1])
        if method == "POST" and parts[0] == "pods" and parts[3].startswith("status"):
            # a kubelet's status write (merge patch: lists such as containerStatuses are replaced)
            return self.api("PATCH", f"/api/v1/namespaces/{parts[1]}/pods/{parts[2]}/status", {"status": body},
                            content_type="application/merge-patch+json")
        if method == "DELETE" and parts[0] == "pods":
            return self.delete_pod_as_someone_else(parts[1], parts[2])
        raise unittest.SkipTest(f"control {method} {path} exists only on tests/apiserver")

    def cluster_object(self, obj):
        """Create (or replace) a cluster-scoped object, deleted by stop()."""
        self.cp.apply(obj)
        path = self.cp.collection_path(obj) + "/" + obj["metadata"]["name"]
        if path not in self.cluster_objects:
            self.cluster_objects.append(path)

    def set_log(self, ns, pod, container, text):
        """What the pod's container printed, served by the test kubelet of the pod's Node."""
        node = self.api("GET", f"/api/v1/namespaces/{ns}/pods/{pod}")["spec"].get("nodeName")
        if node not in self.kubelets:
            raise RuntimeError(f"set_log: no test kubelet for node {node!r} of pod {ns}/{pod}")
        self.kubelets[node].set_log(ns, pod, container, text)

    def pods(self, ns=None, label_selector=None):
        return self.cp.pods(ns or self.namespace, label_selector)

    gpu_devices = staticmethod(lambda uuids, migs=(): _gpu_devices(uuids, migs))

    def resource_slice(self, name, node, devices, driver="gpu.nvidia.com", pool=None, generation=1, count=1,
                       version="v1"):
        if version == "v1beta1":
            devices = [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}} for d in devices]
        body = {"apiVersion": "resource.k8s.io/" + version, "kind": "ResourceSlice", "metadata": {"name": name},
                "spec": {"driver": driver, "nodeName": node, "devices": list(devices),
                         "pool": {"name": pool or node, "generation": generation, "resourceSliceCount": count}}}
        path = "/apis/resource.k8s.io/%s/resourceslices" % version
        self.slices.add(f"{path}/{name}")
        return self.api("POST", path, body)


def _gpu_devices(uuids, migs=()):
    """ResourceSlice devices (v1 shape) as NVIDIA's DRA driver publishes them."""
    devs = [{"name": "gpu-%d" % i, "attributes": {"type": {"string": "gpu"}, "uuid": {"string": u},
                                                   "index": {"int": i}},
             "capacity": {"memory": {"value": "80Gi"}}} for i, u in enumerate(uuids)]
    for j, (parent, mig) in enumerate(migs):
        devs.append({"name": "gpu-mig-%d" % j, "attributes": {"type": {"string": "mig"}, "uuid": {"string": mig},
                                                             "parentUUID": {"string": parent}}})
    return devs


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:6]}"
