# SPDX-License-Identifier: Apache-2.0
"""A scripted kubelet for one node of a real kube-apiserver (standard library only): it watches
the pods bound to the node and writes their status as a kubelet would, after scripted delays and
with scripted outcomes, so tests can drive the validation pods through every phase.  It talks
to the API server as the admin (ControlPlane.request); the pod status goes through the real
`pods/status` validation.

    kl = TestKubelet(cp, "gv-node-1", runningAfterMs=100, exitAfterMs=200).start()
    ...
    kl.stop()

Keys (the same as tests/apiserver's simulated kubelet):
  runningAfterMs (100)   then init containers terminated (exit initExitCode), containers running,
                         phase Running
  exitAfterMs (200)      then containers terminated with exitCode: Succeeded (0) or Failed
  exitCode, initExitCode (0)  a non-zero initExitCode leaves the pod Pending with the init
                         container in CrashLoopBackOff
  waitingReason          containers stay waiting with this reason (ErrImagePull, ImagePullBackOff)
  admissionError, admissionMessage   the pod goes Failed with reason UnexpectedAdmissionError
  sidecarName            a container of that name never exits (a sidecar injected by admission)
  terminateAfterMs (100) after a graceful delete, the containers stop and the pod is removed
                         (DELETE with gracePeriodSeconds=0, as the kubelet does)
  exitJitterMs (0)       each pod's exit comes up to this much later
Logs: the kubelet serves `GET /containerLogs/NS/POD/CONTAINER` (with `tailLines`) over HTTPS on a
free port, published as the Node's `status.daemonEndpoints.kubeletEndpoint.Port`, so `pods/log`
goes through kube-apiserver to it as to a real kubelet; set_log() says what a container printed.
What a real kubelet does and this one does not: run anything, pull images, report node status
(the test sets the Node's status itself)."""

import json
import os
import random
import ssl
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _LogHandler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        parts = u.path.strip("/").split("/")
        text = None
        if len(parts) == 4 and parts[0] == "containerLogs":
            text = self.server.kubelet.logs.get(tuple(parts[1:]))
        if text is None:
            body, code = b"container not found", 404
        else:
            tail = urllib.parse.parse_qs(u.query).get("tailLines")
            lines = text.splitlines(keepends=True)
            if tail:
                lines = lines[-int(tail[0]):]
            body, code = "".join(lines).encode(), 200
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TestKubelet:
    def __init__(self, cp, node, **script):
        self.cp, self.node = cp, node
        self.k = dict(script)
        self.stop_ev = threading.Event()
        self.seen = set()        # pod uids started
        self.killing = set()     # pod uids being terminated
        self.timers = []
        self.lock = threading.RLock()
        self.errors = []
        self.thread = None
        self.logs = {}           # (namespace, pod, container) -> text
        self.httpd = None

    # -- lifetime ---------------------------------------------------------------------------
    def start(self):
        self._serve_logs()
        self.thread = threading.Thread(target=self._loop, daemon=True, name=f"kubelet-{self.node}")
        self.thread.start()
        return self

    def set_log(self, namespace, pod, container, text):
        self.logs[(namespace, pod, container)] = text

    def _serve_logs(self):
        """The kubelet's log endpoint (HTTPS: kube-apiserver speaks only HTTPS to kubelets; it is
        started without --kubelet-certificate-authority, so any serving certificate does)."""
        pki = os.path.join(self.cp.state, "pki")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(pki, "apiserver.crt"), os.path.join(pki, "apiserver.key"))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _LogHandler)
        self.httpd.daemon_threads = True
        self.httpd.kubelet = self
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.cp.request("PATCH", f"/api/v1/nodes/{self.node}/status", {"status": {
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.httpd.server_address[1]}},
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]}},
            content_type="application/merge-patch+json")

    def configure(self, **script):
        """Replace the script for pods seen from now on."""
        with self.lock:
            self.k = dict(script)

    def stop(self):
        self.stop_ev.set()
        with self.lock:
            for t in self.timers:
                t.cancel()
        stream = getattr(self, "stream", None)
        if stream is not None:  # end the watch's blocking read now
            try:
                import socket
                stream.fp.raw._sock.shutdown(socket.SHUT_RDWR)
            except (AttributeError, OSError):
                pass
        if self.thread:
            self.thread.join(5)
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- the watch ----------------------------------------------------------------------------
    def _loop(self):
        sel = "spec.nodeName=" + self.node
        rv = None
        while not self.stop_ev.is_set():
            try:
                if rv is None:
                    lst = self.cp.api("GET", "/api/v1/pods", query={"fieldSelector": sel})
                    for p in lst["items"]:
                        self._event("ADDED", p)
                    rv = lst["metadata"]["resourceVersion"]
                rv = self._watch(sel, rv)
            except Exception as e:  # noqa: BLE001 - kept for the test to see; retried
                self.errors.append(repr(e))
                rv = None
                self.stop_ev.wait(0.2)

    def _watch(self, sel, rv):
        q = urllib.parse.urlencode({"watch": "1", "fieldSelector": sel, "resourceVersion": rv,
                                    "allowWatchBookmarks": "true", "timeoutSeconds": "30"})
        req = urllib.request.Request(f"{self.cp.server}/api/v1/pods?{q}",
                                     headers={"Authorization": "Bearer " + self.cp.admin_token})
        with urllib.request.urlopen(req, context=self.cp.ssl, timeout=35) as r:
            self.stream = r
            for line in r:
                if self.stop_ev.is_set():
                    return rv
                ev = json.loads(line)
                obj = ev.get("object") or {}
                if ev["type"] == "ERROR":
                    return None  # 410: list again
                rv = obj.get("metadata", {}).get("resourceVersion", rv)
                if ev["type"] != "BOOKMARK":
                    self._event(ev["type"], obj)
        return rv

    def _event(self, typ, pod):
        if typ == "DELETED":
            return
        md = pod["metadata"]
        uid = md["uid"]
        with self.lock:
            k = dict(self.k)
            if md.get("deletionTimestamp"):
                if uid not in self.killing:
                    self.killing.add(uid)
                    grace = md.get("deletionGracePeriodSeconds", 30)
                    self._after(min(int(k.get("terminateAfterMs", 100)), grace * 1000), self._kill, pod)
                return
            if uid in self.seen or (pod.get("status") or {}).get("phase") not in (None, "Pending"):
                return
            self.seen.add(uid)
        self._after(int(k.get("runningAfterMs", 100)), self._running, pod, k)

    def _after(self, ms, fn, *args):
        def run():
            if not self.stop_ev.is_set():
                try:
                    fn(*args)
                except Exception as e:  # noqa: BLE001
                    self.errors.append(repr(e))
        t = threading.Timer(ms / 1000.0, run)
        t.daemon = True
        with self.lock:
            self.timers.append(t)
        t.start()

    # -- status writes --------------------------------------------------------------------------
    def _status(self, pod, status):
        md = pod["metadata"]
        path = f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}/status"
        code, obj = self.cp.request("PATCH", path, {"metadata": {"uid": md["uid"]}, "status": status},
                                    content_type="application/merge-patch+json")
        if code == 404:
            return None
        if code >= 300:
            self.errors.append(f"PATCH {path}: {code}: {obj}")
            return None
        return obj

    def _alive(self, pod):
        md = pod["metadata"]
        code, cur = self.cp.request("GET", f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}")
        if code != 200 or cur["metadata"]["uid"] != md["uid"] or cur["metadata"].get("deletionTimestamp"):
            return None
        return cur

    @staticmethod
    def _cs(c, state, ready=False, restarts=0):
        return {"name": c["name"], "ready": ready, "restartCount": restarts, "image": c.get("image", ""),
                "imageID": "", "state": state}

    def _running(self, pod, k):
        pod = self._alive(pod)
        if pod is None:
            return
        spec = pod["spec"]
        inits, ctrs = spec.get("initContainers") or [], spec.get("containers") or []
        if k.get("admissionError"):
            self._status(pod, {"phase": "Failed", "reason": "UnexpectedAdmissionError", "message": k.get(
                "admissionMessage", "Allocate failed due to requested number of devices unavailable for "
                "nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected")})
            return
        waiting = k.get("waitingReason")
        if waiting:
            st = {"phase": "Pending"}
            cs = inits or ctrs
            key = "initContainerStatuses" if inits else "containerStatuses"
            st[key] = [self._cs(c, {"waiting": {"reason": waiting, "message": "scripted by the test kubelet"}})
                       for c in cs]
            self._status(pod, st)
            return
        init_exit = int(k.get("initExitCode", 0))
        now = now_iso()
        st = {"startTime": now, "hostIP": "127.0.0.1", "podIP": "10.244.0.10"}
        if init_exit and inits:
            st["phase"] = "Pending"
            st["initContainerStatuses"] = [dict(self._cs(c, {"waiting": {
                "reason": "CrashLoopBackOff", "message": "back-off restarting failed container"}}, restarts=1),
                lastState={"terminated": {"exitCode": init_exit, "reason": "Error", "startedAt": now,
                                          "finishedAt": now}}) for c in inits]
            st["containerStatuses"] = [self._cs(c, {"waiting": {"reason": "PodInitializing"}}) for c in ctrs]
            self._status(pod, st)
            return
        st["phase"] = "Running"
        st["initContainerStatuses"] = [self._cs(c, {"terminated": {
            "exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}}, ready=True) for c in inits]
        st["containerStatuses"] = [self._cs(c, {"running": {"startedAt": now}}, ready=True) for c in ctrs]
        st["conditions"] = [{"type": t, "status": "True", "lastTransitionTime": now}
                            for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
        if self._status(pod, st) is None:
            return
        jitter = random.randint(0, int(k.get("exitJitterMs", 0)))
        self._after(int(k.get("exitAfterMs", 200)) + jitter, self._finished, pod, k)

    def _finished(self, pod, k):
        pod = self._alive(pod)
        if pod is None:
            return
        code, sidecar, now = int(k.get("exitCode", 0)), k.get("sidecarName"), now_iso()
        statuses = []
        for s in pod["status"].get("containerStatuses") or []:
            if s["name"] != sidecar:
                s = dict(s, ready=False, state={"terminated": {
                    "exitCode": code, "reason": "Completed" if code == 0 else "Error",
                    "startedAt": (s.get("state", {}).get("running") or {}).get("startedAt", now), "finishedAt": now}})
            statuses.append(s)
        st = {"containerStatuses": statuses}
        if not sidecar:
            st["phase"] = "Succeeded" if code == 0 else "Failed"
            st["conditions"] = [{"type": t, "status": "False", "lastTransitionTime": now, "reason": "PodCompleted"}
                                for t in ("Ready", "ContainersReady")]
        self._status(pod, st)

    def _kill(self, pod):
        md = pod["metadata"]
        code, cur = self.cp.request("GET", f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}")
        if code != 200 or cur["metadata"]["uid"] != md["uid"]:
            return
        now = now_iso()
        statuses = [dict(s, ready=False, state={"terminated": {"exitCode": 137, "reason": "Error",
                                                                 "startedAt": now, "finishedAt": now}})
                    if "running" in (s.get("state") or {}) else s
                    for s in (cur.get("status") or {}).get("containerStatuses") or []]
        if statuses:
            self._status(cur, {"containerStatuses": statuses})
        self.cp.request("DELETE", f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}",
                        {"gracePeriodSeconds": 0, "preconditions": {"uid": md["uid"]}})
