# SPDX-License-Identifier: Apache-2.0
"""A real control plane for Python tests (standard library only): etcd, kube-apiserver and
kube-controller-manager from tools/k8s.sh, shared by every test of a process (pytest session or
TAP module), with an admin client and helpers for namespaces, nodes, ServiceAccount tokens and
kubeconfigs.

    from cluster import ControlPlane
    cp = ControlPlane.shared()                 # reuses $GV_K8S_STATE when it runs, else starts one
    ns = cp.namespace("gv-cuda")               # a fresh namespace (deleted by cp.cleanup(ns))
    cp.node("gv-node-1", capacity={"nvidia.com/gpu": "1"})
    tok = cp.token(ns, "gpu-validator")        # a TokenRequest token of that ServiceAccount
    kc = cp.kubeconfig(path, token=tok, namespace=ns)

When $GV_K8S_STATE names a running control plane (tools/k8s.sh up DIR; CI starts one for the
whole test run), it is used and left running; otherwise one is started in a temporary folder,
stopped when the process exits (and by tools/k8s.sh's watchdog if the process dies).
$GV_K8S_VERSION picks the Kubernetes of a started one (tools/go/k8s-VERSION)."""

import atexit
import base64
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("GV_SOURCE_DIR", os.path.join(HERE, "..", ".."))
K8S_SH = os.path.join(SOURCE, "tools", "k8s.sh")
TEST_CONTROLLERS = "*,-node-lifecycle-controller"


class ApiError(RuntimeError):
    """A non-2xx answer: .code (HTTP status) and .status (the Status object, or the text)."""

    def __init__(self, method, path, code, status):
        self.code, self.status = code, status
        msg = status.get("message") if isinstance(status, dict) else status
        super().__init__(f"{method} {path}: {code}: {msg}")


def _read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("export ") and "=" in line:
                k, v = line[len("export "):].split("=", 1)
                env[k] = v
    return env


def _running(state):
    return bool(state) and os.path.exists(os.path.join(state, "env")) and subprocess.run(
        [K8S_SH, "status", state], capture_output=True).returncode == 0


class ControlPlane:
    """A running control plane: .server, .ca, .admin_token, .kubeconfig (admin, client
    certificate), .state, .version, .env (the variables of `tools/k8s.sh env`)."""

    _shared = None
    _lock = threading.Lock()

    def __init__(self, state, owned):
        self.state, self.owned = state, owned
        self.env = _read_env(os.path.join(state, "env"))
        self.server = self.env["GV_K8S_SERVER"]
        self.ca = self.env["GV_K8S_CA"]
        self.admin_token = self.env["GV_K8S_ADMIN_TOKEN"]
        self.kubeconfig_admin = self.env["KUBECONFIG"]
        self.version = self.env.get("GV_K8S_VERSION", "")
        self.ssl = ssl.create_default_context(cafile=self.ca)

    # -- lifetime ---------------------------------------------------------------------------
    @classmethod
    def start(cls, state=None, components=None):
        """Start a control plane in @state (a fresh temporary folder by default), owned by this
        process; -> ControlPlane.  Raises RuntimeError with the script's diagnostics."""
        made = state is None
        state = state or tempfile.mkdtemp(prefix="gv-k8s-")
        env = dict(os.environ, GV_K8S_PARENT_PID=str(os.getpid()))
        # Test nodes have no kubelet heartbeats: the node lifecycle controller would mark them
        # unreachable (a NoExecute taint) after its grace period, in the middle of a test.
        env.setdefault("GV_K8S_CONTROLLERS", TEST_CONTROLLERS)
        if components is not None:
            env["GV_K8S_COMPONENTS"] = components
        p = subprocess.run([K8S_SH, "up", state], capture_output=True, text=True, env=env, timeout=1800)
        if p.returncode != 0:
            if made:
                shutil.rmtree(state, ignore_errors=True)
            raise RuntimeError(f"tools/k8s.sh up {state} exited {p.returncode}:\n{p.stderr[-4000:]}")
        return cls(state, owned=True)

    @classmethod
    def shared(cls):
        """The process's control plane: $GV_K8S_STATE's when it runs, else one started now and
        stopped at exit."""
        with cls._lock:
            if cls._shared is None:
                state = os.environ.get("GV_K8S_STATE")
                if state and _running(state):
                    cls._shared = cls(state, owned=False)
                else:
                    try:
                        cls._shared = cls.start()
                    except (RuntimeError, OSError) as e:
                        # Go (or openssl) missing on a developer's machine: skip; under CI: fail.
                        if os.environ.get("CI", "").lower() == "true" or shutil.which("go"):
                            raise
                        import unittest
                        raise unittest.SkipTest(f"no Kubernetes control plane (Go is missing): {e}") from None
                    atexit.register(cls._shared.stop)
            return cls._shared

    def stop(self):
        if self.owned and os.path.isdir(self.state):
            subprocess.run([K8S_SH, "down", self.state], capture_output=True, timeout=120)

    # -- requests ---------------------------------------------------------------------------
    def request(self, method, path, body=None, token=None, content_type=None, query=None, timeout=30):
        """One request as the admin (or with @token: as that user; token="" sends none);
        -> (HTTP status, decoded JSON or text).  Never raises for an HTTP status."""
        url = self.server + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode() if not isinstance(body, (bytes, str)) else (
                body.encode() if isinstance(body, str) else body)
            headers["Content-Type"] = content_type or (
                "application/merge-patch+json" if method == "PATCH" else "application/json")
        tok = self.admin_token if token is None else token
        if tok:
            headers["Authorization"] = "Bearer " + tok
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, context=self.ssl, timeout=timeout) as r:
                code, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            code, raw = e.code, e.read()
        try:
            return code, json.loads(raw) if raw else None
        except ValueError:
            return code, raw.decode(errors="replace")

    def api(self, method, path, body=None, ok=(200, 201, 202), **kw):
        """request() that raises ApiError unless the status is in @ok; -> the decoded body."""
        code, obj = self.request(method, path, body, **kw)
        if code not in ok:
            raise ApiError(method, path, code, obj)
        return obj

    def served(self, group_version, resource=None):
        """Whether the server serves @group_version (e.g. "resource.k8s.io/v1"), and @resource in
        it when given (discovery)."""
        code, got = self.request("GET", "/apis/" + group_version if "/" in group_version else "/api/" + group_version)
        if code != 200:
            return False
        return resource is None or any(r.get("name") == resource for r in got.get("resources") or [])

    # -- objects ------------------------------------------------------------------------------
    def namespace(self, prefix="gv-e2e", labels=None):
        """Create a fresh namespace named @prefix-<random> with @labels; waits until its default
        ServiceAccount exists (pods need it); -> the name."""
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        self.api("POST", "/api/v1/namespaces", {"metadata": {"name": name, "labels": labels or {}}})
        self.wait(lambda: self.request("GET", f"/api/v1/namespaces/{name}/serviceaccounts/default")[0] == 200,
                  f"ServiceAccount {name}/default", timeout=30)
        return name

    def cleanup(self, namespace=None, nodes=(), cluster_objects=()):
        """Delete @namespace (not waiting), the @nodes and @cluster_objects (API paths)."""
        for n in nodes:
            self.request("DELETE", f"/api/v1/nodes/{n}")
        for path in cluster_objects:
            self.request("DELETE", path)
        if namespace:
            self.request("DELETE", f"/api/v1/namespaces/{namespace}")

    def node(self, name, labels=None, capacity=None, allocatable=None, ready=True, annotations=None):
        """Create (or update) Node @name with @labels and a status of @capacity/@allocatable
        (by default 8 CPUs, 32 GiB) and a Ready condition; -> the Node."""
        base = {"cpu": "8", "memory": "32Gi", "pods": "110"}
        cap = dict(base, **(capacity or {}))
        alloc = dict(base, **(allocatable if allocatable is not None else capacity or {}))
        code, _ = self.request("GET", f"/api/v1/nodes/{name}")
        meta = {"name": name, "labels": dict({"kubernetes.io/hostname": name}, **(labels or {})),
                "annotations": annotations or {}}
        if code == 404:
            self.api("POST", "/api/v1/nodes", {"metadata": meta, "spec": {}})
        else:
            self.api("PATCH", f"/api/v1/nodes/{name}", {"metadata": {"labels": labels or {}}})
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status = {"capacity": cap, "allocatable": alloc,
                  "conditions": [{"type": "Ready", "status": "True" if ready else "False", "reason": "KubeletReady",
                                  "message": "test node", "lastHeartbeatTime": now, "lastTransitionTime": now}],
                  "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]}
        return self.api("PATCH", f"/api/v1/nodes/{name}/status", {"status": status},
                        content_type="application/strategic-merge-patch+json")

    def set_node_resources(self, name, capacity, allocatable=None):
        """Replace the Node's capacity and allocatable (a JSON merge patch of status)."""
        base = {"cpu": "8", "memory": "32Gi", "pods": "110"}
        self.api("PATCH", f"/api/v1/nodes/{name}/status", {"status": {"capacity": None, "allocatable": None}})
        return self.api("PATCH", f"/api/v1/nodes/{name}/status",
                        {"status": {"capacity": dict(base, **capacity),
                                    "allocatable": dict(base, **(allocatable if allocatable is not None else capacity))}})

    def apply(self, obj):
        """Create @obj (a dict with apiVersion/kind/metadata), or replace it when it exists."""
        path = self.collection_path(obj)
        code, got = self.request("POST", path, obj)
        if code == 409:
            cur = self.api("GET", f"{path}/{obj['metadata']['name']}")
            obj = dict(obj, metadata=dict(obj["metadata"], resourceVersion=cur["metadata"]["resourceVersion"]))
            return self.api("PUT", f"{path}/{obj['metadata']['name']}", obj)
        if code not in (200, 201):
            raise ApiError("POST", path, code, got)
        return got

    _PLURAL = {"ServiceAccount": "serviceaccounts", "Role": "roles", "RoleBinding": "rolebindings",
               "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
               "ConfigMap": "configmaps", "Pod": "pods", "Namespace": "namespaces", "Node": "nodes",
               "DaemonSet": "daemonsets", "Service": "services", "Secret": "secrets", "Event": "events",
               "ResourceSlice": "resourceslices", "PriorityClass": "priorityclasses",
               "RuntimeClass": "runtimeclasses", "MutatingAdmissionPolicy": "mutatingadmissionpolicies",
               "MutatingAdmissionPolicyBinding": "mutatingadmissionpolicybindings",
               "CustomResourceDefinition": "customresourcedefinitions",
               "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
               "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings"}
    _CLUSTER = {"ClusterRole", "ClusterRoleBinding", "Namespace", "Node", "ResourceSlice", "PriorityClass",
                "RuntimeClass", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
                "CustomResourceDefinition", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}

    def collection_path(self, obj):
        gv, kind = obj["apiVersion"], obj["kind"]
        if kind not in self._PLURAL:
            raise ValueError(f"collection_path: add {kind} to ControlPlane._PLURAL")
        prefix = "/api/v1" if gv == "v1" else "/apis/" + gv
        plural = self._PLURAL[kind]
        if kind in self._CLUSTER:
            return f"{prefix}/{plural}"
        return f"{prefix}/namespaces/{obj['metadata'].get('namespace', 'default')}/{plural}"

    def token(self, namespace, service_account, seconds=3600, audiences=None):
        """A TokenRequest token of ServiceAccount @namespace/@service_account (created when
        missing), as a kubelet projects it into a pod; -> the JWT."""
        code, _ = self.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}")
        if code == 404:
            self.api("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts",
                     {"metadata": {"name": service_account}})
        spec = {"expirationSeconds": seconds}
        if audiences:
            spec["audiences"] = audiences
        tr = self.api("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
        return tr["status"]["token"]

    def pod_token(self, namespace, service_account, pod, seconds=3600):
        """A TokenRequest token of @service_account bound to Pod @pod (as the kubelet projects it
        into the pod): kube-apiserver adds the pod's node to the user's extra info."""
        p = self.api("GET", f"/api/v1/namespaces/{namespace}/pods/{pod}")
        tr = self.api("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                       "spec": {"expirationSeconds": seconds, "boundObjectRef": {
                           "kind": "Pod", "apiVersion": "v1", "name": pod, "uid": p["metadata"]["uid"]}}})
        return tr["status"]["token"]

    def kubeconfig(self, path, token=None, namespace="default", server=None, ca=True):
        """Write a kubeconfig for @server (default: the API server itself) with @token (default:
        the admin token) and the cluster CA (unless @ca is False or the server is http://)."""
        server = server or self.server
        lines = ["apiVersion: v1", "kind: Config", "current-context: t", "clusters:", "- name: t",
                 "  cluster:", f"    server: {server}"]
        if ca and server.startswith("https://"):
            with open(self.ca, "rb") as f:
                lines.append("    certificate-authority-data: " + base64.b64encode(f.read()).decode())
        lines += ["contexts:", "- name: t", f"  context: {{cluster: t, user: u, namespace: {namespace}}}",
                  "users:", "- name: u", f"  user: {{token: {json.dumps(token or self.admin_token)}}}"]
        with open(path + ".tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(path + ".tmp", path)
        return path

    def pods(self, namespace, selector=None):
        q = {"labelSelector": selector} if selector else None
        return self.api("GET", f"/api/v1/namespaces/{namespace}/pods", query=q)["items"]

    def events(self, namespace):
        return self.api("GET", f"/api/v1/namespaces/{namespace}/events")["items"]

    @staticmethod
    def wait(fn, what, timeout=30, interval=0.1):
        """Call @fn until it returns a true value (-> that value); AssertionError naming @what
        after @timeout seconds."""
        end = time.monotonic() + timeout
        while True:
            v = fn()
            if v:
                return v
            if time.monotonic() > end:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            time.sleep(interval)

