# SPDX-License-Identifier: Apache-2.0
"""The fixture of the C client's integration test (tests/unit/k8s/test-k8s-apiserver.c): the
real control plane (ControlPlane.shared(): $GV_K8S_STATE's when it runs, else one started for
this process), a fresh namespace, the fault proxy in front of the server, a passive test
kubelet for the test's first Node (it serves pod logs and finishes graceful deletes, as a
kubelet does), and a small HTTP control API for what the C test cannot do through the
Kubernetes API itself.  Standard library only.

    python3 tests/k8s/cfixture.py INFO_FILE      # ends when its stdin is closed (the test's pipe)

Once ready it writes INFO_FILE (JSON, atomically): namespace, node_a, node_b (Node names unique
to this fixture), server, proxy (http URL of the fault proxy), control (http URL of the control
API), kubeconfig (the admin's token through the proxy), kubeconfig_direct (https to the server,
its CA, the admin's token); or {"skip": reason} when no control plane can be had here (no Go
outside CI).

Control API (JSON in and out):
  POST   /reset                 the test's pods, Events, ResourceSlices and node_b gone, node_a
                                back to its first state; faults and the request log cleared
  GET    /requests              {"requests": the proxy's log}    DELETE /requests: cleared
  POST   /faults {rule}         a fault rule (tests/k8s/proxy.py)  DELETE /faults: cleared
  POST   /drop-watches          cut every open watch stream
  POST   /node {name, labels, capacity, allocatable}   create or update a Node and its status
  POST   /logs {pod, container, text}   what node_a's kubelet serves as that container's log
  POST   /token                 {"token", "sha"}: a new TokenRequest token of ServiceAccount
                                `reader` (may get and list Nodes), and its tokenSha in the log
  POST   /resource-versions {versions}   the other resource.k8s.io versions answer 404 (proxy)
"""

import json
import os
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from proxy import token_sha  # noqa: E402
from realapi import RESOURCE_VERSIONS, RealApi  # noqa: E402

SLICE_LABEL = "gpu-validator.test/c-fixture"


class Fixture:
    def __init__(self):
        self.api = RealApi(namespace_prefix="gv-c").start()
        self.ns = self.api.namespace
        self.node_a, self.node_b = self.ns + "-a", self.ns + "-b"
        self.api.node(self.node_a)
        self.kubelet = self.api.kubelet(enabled=False, nodeName=self.node_a, terminateAfterMs=100)
        cp = self.api.cp
        cp.api("POST", f"/api/v1/namespaces/{self.ns}/serviceaccounts", {"metadata": {"name": "reader"}})
        role = f"gv-c-nodes-{self.ns}"
        self.api.cluster_object({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                 "metadata": {"name": role},
                                 "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}]})
        self.api.cluster_object({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                                 "metadata": {"name": role},
                                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                             "name": role},
                                 "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": self.ns}]})

    def reset(self):
        cp, ns = self.api.cp, self.ns
        cp.request("DELETE", f"/api/v1/namespaces/{ns}/pods", {"gracePeriodSeconds": 0})
        cp.request("DELETE", f"/api/v1/namespaces/{ns}/events")
        for v in RESOURCE_VERSIONS:
            cp.request("DELETE", f"/apis/resource.k8s.io/{v}/resourceslices", query={"labelSelector": SLICE_LABEL})
        cp.request("DELETE", f"/api/v1/nodes/{self.node_b}")
        cp.api("PATCH", f"/api/v1/nodes/{self.node_a}", {"metadata": {"labels": None}})
        cp.api("PATCH", f"/api/v1/nodes/{self.node_a}", {"metadata": {"labels": {"kubernetes.io/hostname": self.node_a}}})
        cp.set_node_resources(self.node_a, {})
        cp.wait(lambda: not cp.pods(ns), "the test's pods to go", timeout=30)
        self.api.proxy.clear_faults()
        self.api.proxy.clear_requests()

    def control(self, method, path, body):
        """One control call; -> (HTTP status, JSON answer)."""
        key = (method, path)
        if key == ("POST", "/reset"):
            self.reset()
        elif key == ("GET", "/requests"):
            return 200, {"requests": self.api.proxy.requests()}
        elif key == ("DELETE", "/requests"):
            self.api.proxy.clear_requests()
        elif key == ("POST", "/faults"):
            self.api.proxy.fault(**body)
        elif key == ("DELETE", "/faults"):
            self.api.proxy.clear_faults()
        elif key == ("POST", "/drop-watches"):
            self.api.proxy.drop_watches()
        elif key == ("POST", "/node"):
            self.api.node(body["name"], labels=body.get("labels"), capacity=body.get("capacity", {}),
                          allocatable=body.get("allocatable"))
        elif key == ("POST", "/logs"):
            self.kubelet.set_log(self.ns, body["pod"], body["container"], body["text"])
        elif key == ("POST", "/token"):
            tok = self.api.cp.token(self.ns, "reader")
            return 200, {"token": tok, "sha": token_sha(tok)}
        elif key == ("POST", "/resource-versions"):
            self.api.proxy.clear_faults()
            self.api.settings(resourceVersions=body["versions"])
        else:
            return 404, {"message": f"no control {method} {path}"}
        return 200, {}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _serve(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n) or b"{}") if n else {}
        try:
            code, out = self.server.fixture.control(self.command, self.path, body)
        except Exception as e:  # noqa: BLE001 - told to the test
            code, out = 500, {"message": f"{type(e).__name__}: {e}"}
        data = json.dumps(out).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = _serve


def write_info(path, info):
    with open(path + ".tmp", "w") as f:
        json.dump(info, f)
    os.replace(path + ".tmp", path)


def main():
    info_path = sys.argv[1]
    try:
        fx = Fixture()
    except unittest.SkipTest as e:
        write_info(info_path, {"skip": str(e)})
        return 0
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.fixture = fx
    threading.Thread(target=httpd.serve_forever, daemon=True, name="c-fixture").start()
    api = fx.api
    write_info(info_path, {"namespace": fx.ns, "node_a": fx.node_a, "node_b": fx.node_b, "server": api.cp.server,
                           "proxy": api.proxy.url, "control": "http://127.0.0.1:%d" % httpd.server_address[1],
                           "kubeconfig": api.kubeconfig, "kubeconfig_direct": api.kubeconfig_direct})
    try:
        sys.stdin.read()  # until the test closes its end (or is gone)
    finally:
        httpd.shutdown()
        fx.reset()
        api.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
