# SPDX-License-Identifier: Apache-2.0
"""Helper for tests that drive tests/apiserver/server.py (standard library only).

    from client import TestApiServer
    with TestApiServer(token="s3cret") as api:
        api.kubelet(enabled=True, exitAfterMs=200)
        api.node("n1", labels={"a": "b"}, capacity={"nvidia.com/gpu": "1"})
        ... run the binary with --kubeconfig api.kubeconfig ...
        assert all(r["auth"] == "ok" for r in api.requests())
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


class TestApiServer:
    def __init__(self, token="gv-test-token", tls=False, namespace="gpu-operator", bookmark_ms=1000,
                 extra_args=(), workdir=None, rbac=None, rbac_user=None):
        """@rbac: a JSON file of RBAC objects (RBAC mode for @token as @rbac_user); the test's own
        api() calls then use a second, admin token that RBAC does not restrict."""
        self.token = token
        self.rbac = rbac
        self.rbac_user = rbac_user
        self.admin_token = token + "-admin" if rbac and token else None
        self.tls = tls
        self.namespace = namespace
        self.bookmark_ms = bookmark_ms
        self.extra_args = list(extra_args)
        self._own_dir = workdir is None
        self.dir = workdir or tempfile.mkdtemp(prefix="gv-api-")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.proc = None
        self.port = None

    # -- lifetime -------------------------------------------------------------
    def start(self, timeout=15.0):
        port_file = os.path.join(self.dir, "port")
        args = [sys.executable, os.path.join(HERE, "server.py"), "--port", "0",
                "--write-port-file", port_file, "--write-kubeconfig", self.kubeconfig,
                "--namespace", self.namespace, "--bookmark-ms", str(self.bookmark_ms),
                "--parent-pid", str(os.getpid())]
        if self.token:
            args += ["--token", self.token]
        if self.tls:
            args.append("--tls")
        if self.rbac:
            args += ["--rbac", self.rbac, "--admin-token", self.admin_token]
            if self.rbac_user:
                args += ["--rbac-user", self.rbac_user]
        args += self.extra_args
        self.proc = subprocess.Popen(args)
        end = time.time() + timeout
        while time.time() < end:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    self.port = int(f.read().strip())
                return self
            if self.proc.poll() is not None:
                raise RuntimeError("test apiserver exited with %d" % self.proc.returncode)
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("test apiserver did not start within %.0f s" % timeout)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- HTTP ---------------------------------------------------------------------
    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http", self.port)

    def _call(self, method, path, body=None, auth=False, content_type="application/json"):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        if auth and self.token:
            req.add_header("Authorization", "Bearer " + (self.admin_token or self.token))
        ctx = None
        if self.tls:
            import ssl
            ctx = ssl._create_unverified_context()  # test helper only: the server's fresh self-signed cert
        try:
            with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
                text = r.read().decode()
                return json.loads(text) if text.strip().startswith(("{", "[")) else text
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            raise RuntimeError("%s %s: %d %s" % (method, path, e.code, text)) from None

    def control(self, method, path, body=None):
        return self._call(method, "/_test/" + path.lstrip("/"), body)

    def api(self, method, path, body=None, content_type="application/json"):
        """Call the Kubernetes API itself with the server's token."""
        return self._call(method, path, body, auth=True, content_type=content_type)

    # -- control shortcuts ---------------------------------------------------------
    def reset(self):
        return self.control("POST", "reset")

    def fault(self, **rule):
        """e.g. fault(type="status", code=429, retryAfter=1, count=2, path="/pods")."""
        return self.control("POST", "faults", rule)

    def clear_faults(self):
        return self.control("DELETE", "faults")

    def set_token(self, token):
        return self.control("POST", "token", {"token": token})

    def requests(self):
        return self.control("GET", "requests")["requests"]

    def clear_requests(self):
        return self.control("DELETE", "requests")

    def compact(self):
        return self.control("POST", "compact")

    def drop_watches(self):
        return self.control("POST", "drop-watches")

    def settings(self, **kw):
        """deleteDelayMs, goneAs ("event" or "http"), bookmarkMs, relax (list of checks to switch off)."""
        return self.control("POST", "settings", kw)

    def kubelet(self, **kw):
        """enabled, nodeName, runningAfterMs, exitAfterMs, exitCode, initExitCode, sidecar,
        sidecarName, admissionError, admissionMessage, waitingReason, terminateAfterMs, exitJitterMs."""
        return self.control("POST", "kubelet", kw)

    def node(self, name, labels=None, capacity=None, allocatable=None):
        body = {}
        if labels is not None:
            body["labels"] = labels
        if capacity is not None:
            body["capacity"] = capacity
        if allocatable is not None:
            body["allocatable"] = allocatable
        return self.control("PUT", "nodes/" + name, body)

    def pod_status(self, ns, name, status):
        return self.control("POST", "pods/%s/%s/status" % (ns, name), status)

    def delete_pod_as_someone_else(self, ns, name):
        return self.control("DELETE", "pods/%s/%s" % (ns, name))

    def set_log(self, ns, pod, container, text):
        return self.control("POST", "logs/%s/%s/%s" % (ns, pod, container), {"text": text})

    def pods(self, ns=None, label_selector=None):
        path = "/api/v1/namespaces/%s/pods" % (ns or self.namespace)
        if label_selector:
            path += "?labelSelector=" + urllib.request.quote(label_selector)
        return self.api("GET", path)["items"]

    # -- resource.k8s.io --------------------------------------------------------------
    @staticmethod
    def gpu_devices(uuids, migs=()):
        """ResourceSlice devices (v1 shape) as NVIDIA's DRA driver publishes them: one "gpu-N"
        per UUID (attributes type=gpu, uuid, index), and for each (parent UUID, MIG UUID) in
        @migs a "gpu-N-mig-..." device (type=mig, uuid, parentUUID)."""
        devs = [{"name": "gpu-%d" % i, "attributes": {"type": {"string": "gpu"}, "uuid": {"string": u},
                                                       "index": {"int": i}},
                 "capacity": {"memory": {"value": "80Gi"}}} for i, u in enumerate(uuids)]
        for j, (parent, mig) in enumerate(migs):
            devs.append({"name": "gpu-mig-%d" % j, "attributes": {"type": {"string": "mig"}, "uuid": {"string": mig},
                                                                 "parentUUID": {"string": parent}}})
        return devs

    def resource_slice(self, name, node, devices, driver="gpu.nvidia.com", pool=None, generation=1, count=1,
                       version="v1"):
        """Create a ResourceSlice (devices in the v1 shape; sent as @version, v1beta1 wrapping each
        device's fields in `basic`) with the admin token."""
        if version == "v1beta1":
            devices = [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}} for d in devices]
        body = {"apiVersion": "resource.k8s.io/" + version, "kind": "ResourceSlice", "metadata": {"name": name},
                "spec": {"driver": driver, "nodeName": node, "devices": list(devices),
                         "pool": {"name": pool or node, "generation": generation, "resourceSliceCount": count}}}
        return self.api("POST", "/apis/resource.k8s.io/%s/resourceslices" % version, body)
