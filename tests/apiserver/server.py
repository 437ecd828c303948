#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A fake Kubernetes API server for gpu-validator's tests that answers like kube-apiserver.

Standard library only.  Listens on 127.0.0.1 only.  Serves core/v1 pods (with log and status),
nodes (with status), events and namespaces, and resource.k8s.io ResourceSlices (v1, v1beta2,
v1beta1, converted from one stored shape) from memory, with discovery and OpenAPI v3
(discovery.py), decoding and validation (kube_validation.py), the three patch types
(patch.py), optimistic concurrency, list paging, watches, graceful deletion by a simulated
kubelet, and an optional RBAC mode (rbac.py).  A control API under /_test/ scripts behaviour;
README.md says what is served, docs/kubernetes.md what of kube-apiserver is modelled.
"""

import argparse
import base64
import bisect
import copy
import json
import os
import random
import shutil
import socket
import ssl
import string
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import discovery  # noqa: E402
import kube_validation as kv  # noqa: E402
import patch as patches  # noqa: E402
import rbac  # noqa: E402

MAX_BODY = 3 * 1024 * 1024   # kube-apiserver's MaxRequestBodyBytes
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# Checks that can be switched off (--relax CHECK, or settings {"relax": [...]}) for tests of
# behaviour the product has not caught up with yet.  All are on by default.
RELAXABLE = ("node-event-namespace", "validation", "unknown-fields", "namespaces")


def truthy(v):
    """A boolean query parameter as Go's strconv.ParseBool reads it."""
    return v in ("1", "t", "T", "true", "TRUE", "True")


def now_iso(offset_s=0):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + offset_s))


def status_obj(code, reason, message, details=None):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
         "message": message, "reason": reason, "code": code}
    if details:
        s["details"] = details
    return s


def field_value(obj, field):
    cur = obj
    for p in field.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p)
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return "" if cur is None else str(cur)


# Field selectors kube-apiserver supports per resource (pkg/registry/core/*/strategy.go
# ToSelectableFields); anything else is 400 "field label not supported".
FIELD_LABELS = {
    "pods": {"metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
             "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
             "status.nominatedNodeName"},
    "nodes": {"metadata.name", "spec.unschedulable"},
    "events": {"metadata.name", "metadata.namespace", "involvedObject.kind", "involvedObject.namespace",
               "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion",
               "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent",
               "source", "type"},
    "namespaces": {"metadata.name", "status.phase"},
    # pkg/registry/resource/resourceslice/strategy.go ToSelectableFields (cluster-scoped: no
    # metadata.namespace)
    "resourceslices": {"metadata.name", "spec.nodeName", "spec.driver"},
}


def slice_as(obj, version):
    """A stored ResourceSlice (resource.k8s.io/v1 shape) as @version shows it: v1beta1 keeps a
    device's fields other than its name under `basic`; v1beta2 has the v1 shape."""
    o = copy.deepcopy(obj)
    o["apiVersion"] = "%s/%s" % (discovery.RESOURCE_GROUP, version)
    if version == "v1beta1":
        for d in (o.get("spec") or {}).get("devices") or []:
            if isinstance(d, dict):
                basic = {k: d.pop(k) for k in [k for k in d if k != "name"]}
                d["basic"] = basic
    return o


def slice_from(obj, version):
    """A ResourceSlice sent in @version, in the stored (v1) shape (in place; returns it)."""
    if version == "v1beta1" and isinstance(obj, dict) and isinstance(obj.get("spec"), dict):
        for d in obj["spec"].get("devices") or []:
            if isinstance(d, dict) and isinstance(d.get("basic"), dict):
                d.update(d.pop("basic"))
    if isinstance(obj, dict) and "apiVersion" in obj:
        obj["apiVersion"] = "%s/v1" % discovery.RESOURCE_GROUP
    return obj


class SelectorError(ValueError):
    pass


def _split_terms(sel):
    terms, depth, cur = [], 0, ""
    for ch in sel:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    terms.append(cur)
    return [t.strip() for t in terms if t.strip()]


def parse_selector(sel):
    """Label selector syntax: a=b, a==b, a!=b, a, !a, a in (x,y), a notin (x,y); -> [(key, op, value)]."""
    out = []
    for term in _split_terms(sel or ""):
        low = " " + term + " "
        if " notin " in low or " in " in low:
            op = "notin" if " notin " in low else "in"
            k, rest = term.split(" " + op + " ", 1) if (" " + op + " ") in term else (None, None)
            if k is None or not rest.strip().startswith("(") or not rest.strip().endswith(")"):
                raise SelectorError("unable to parse requirement: %s" % term)
            vals = {v.strip() for v in rest.strip()[1:-1].split(",") if v.strip()}
            out.append((k.strip(), op, vals))
        elif "!=" in term:
            k, v = term.split("!=", 1)
            out.append((k.strip(), "!=", v.strip()))
        elif "==" in term:
            k, v = term.split("==", 1)
            out.append((k.strip(), "=", v.strip()))
        elif "=" in term:
            k, v = term.split("=", 1)
            out.append((k.strip(), "=", v.strip()))
        elif term.startswith("!"):
            out.append((term[1:].strip(), "!exists", ""))
        else:
            out.append((term, "exists", ""))
    return out


def label_match(obj, terms):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for k, op, v in terms:
        have = labels.get(k)
        if op == "=" and have != v:
            return False
        if op == "!=" and have == v:
            return False
        if op == "exists" and k not in labels:
            return False
        if op == "!exists" and k in labels:
            return False
        if op == "in" and have not in v:
            return False
        if op == "notin" and have in v:
            return False
    return True


def field_match(obj, terms):
    for k, op, v in terms:
        cur = field_value(obj, k)
        if op == "=" and cur != v:
            return False
        if op == "!=" and cur == v:
            return False
    return True


def trigger_of(resource, obj):
    """The value a watch cache indexes changes by: spec.nodeName for pods, else none."""
    return ((obj.get("spec") or {}).get("nodeName") or "") if resource == "pods" else None


def qos_class(spec):
    """Guaranteed, Burstable or BestEffort (pkg/apis/core/helper/qos)."""
    cs = [c for f in ("initContainers", "containers") for c in spec.get(f) or [] if isinstance(c, dict)]
    res = [c.get("resources") or {} for c in cs]
    if not any(r.get("requests") or r.get("limits") for r in res):
        return "BestEffort"
    for r in res:
        lim, req = r.get("limits") or {}, dict(r.get("limits") or {}, **(r.get("requests") or {}))
        if any(k not in lim or str(req.get(k)) != str(lim[k]) for k in ("cpu", "memory")):
            return "Burstable"
    return "Guaranteed"


def default_pod(pod):
    """The defaults kube-apiserver gives a new Pod (pkg/apis/core/v1/defaults.go) and what
    ServiceAccount admission adds: the default account and, unless automountServiceAccountToken
    is false, the projected token volume mounted into every container."""
    spec = pod.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("priority", 0)
    pod["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}  # PrepareForCreate resets status
    sa = spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec["serviceAccount"] = sa
    for field in ("initContainers", "containers"):
        for c in spec.get(field) or []:
            if not isinstance(c, dict):
                continue
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            image = c.get("image") or ""
            tagged = ":" in image.rsplit("/", 1)[-1] or "@" in image
            c.setdefault("imagePullPolicy", "Always" if not tagged or image.endswith(":latest") else "IfNotPresent")
            c.setdefault("resources", {})
    if spec.get("automountServiceAccountToken") is False:
        return
    vol = "kube-api-access-" + "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(5))
    spec.setdefault("volumes", []).append({"name": vol, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                       "fieldPath": "metadata.namespace"}}]}}]}})
    for field in ("initContainers", "containers"):
        for c in spec.get(field) or []:
            if isinstance(c, dict) and not any(m.get("mountPath") == "/var/run/secrets/kubernetes.io/serviceaccount"
                                               for m in c.get("volumeMounts") or [] if isinstance(m, dict)):
                c.setdefault("volumeMounts", []).append({"name": vol, "readOnly": True,
                                                         "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})


class Store:
    """All state, guarded by one condition variable."""

    def __init__(self, args):
        self.lock = threading.RLock()
        self.cv = threading.Condition(self.lock)
        # Open watches: [condition on the store's lock, resource, trigger value or None].  A
        # change wakes only the watches it may concern, as kube-apiserver's watch cache
        # dispatches pod events by spec.nodeName (its NodeNameTriggerFunc).
        self.watchers = []
        self.args = args
        with self.cv:
            self.reset()

    def reset(self):
        self.rv = 100
        self.objects = {"pods": {}, "nodes": {}, "events": {}, "namespaces": {}, "resourceslices": {}}
        self.resource_versions = list(discovery.RESOURCE_VERSIONS)  # resource.k8s.io versions served
        self.history = []          # (rv, type, resource, obj, previous obj or None)
        self.last = {}             # (resource, key) -> the object as last emitted
        self.floor = 0             # versions <= floor are compacted: 410
        self.faults = []
        self.requests = []
        self.token = self.args.token
        self.delete_delay_ms = 0
        self.gone_as = "event"     # or "http"
        self.bookmark_ms = self.args.bookmark_ms
        self.drop_generation = getattr(self, "drop_generation", 0)
        self.watch_count = getattr(self, "watch_count", 0)
        self.logs = {}             # (ns, pod, container) -> text
        self.kubelet = {"enabled": False}
        self.timers = []
        self.relax = set(self.args.relax or [])
        self.rbac = None
        if self.args.rbac:
            self.rbac = rbac.Authorizer.from_file(self.args.rbac, self.args.rbac_user)
        for ns in DEFAULT_NAMESPACES + ((self.args.namespace,) if self.args.namespace else ()):
            self.ensure_namespace(ns)

    def strict(self, check):
        """Whether a kube-apiserver check is on (all are, unless relaxed for a test)."""
        return check not in self.relax

    def ensure_namespace(self, name):
        if ("", name) not in self.objects["namespaces"]:
            self.put("namespaces", {"kind": "Namespace", "apiVersion": "v1",
                                    "metadata": {"name": name, "uid": str(uuid.uuid4()),
                                                 "creationTimestamp": now_iso(),
                                                 "labels": {"kubernetes.io/metadata.name": name}},
                                    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}, "ADDED")

    def namespace_exists(self, name):
        return not self.strict("namespaces") or ("", name) in self.objects["namespaces"]

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def emit(self, etype, resource, obj):
        key = (resource, self.key(resource, obj["metadata"].get("namespace"), obj["metadata"]["name"]))
        snap = copy.deepcopy(obj)
        prev = self.last.get(key)
        if etype == "DELETED":
            self.last.pop(key, None)
        else:
            self.last[key] = snap
        self.history.append((int(obj["metadata"]["resourceVersion"]), etype, resource, snap, prev))
        if len(self.history) > 10000:
            self.floor = self.history[5000][0]
            self.history = self.history[5000:]
        self.cv.notify_all()
        triggers = {trigger_of(resource, o) for o in (snap, prev) if o is not None}
        for cond, wres, trig in self.watchers:
            if wres == resource and (trig is None or trig in triggers):
                cond.notify()

    def wake_watchers(self):
        for cond, _, _ in self.watchers:
            cond.notify()

    def key(self, resource, ns, name):
        return (ns or "", name)

    def put(self, resource, obj, etype):
        md = obj["metadata"]
        md["resourceVersion"] = self.next_rv()
        self.objects[resource][self.key(resource, md.get("namespace"), md["name"])] = obj
        self.emit(etype, resource, obj)
        return obj

    def remove(self, resource, ns, name):
        obj = self.objects[resource].pop(self.key(resource, ns, name), None)
        if obj is None:
            return None
        obj["metadata"]["resourceVersion"] = self.next_rv()
        self.emit("DELETED", resource, obj)
        return obj

    # -- graceful deletion ----------------------------------------------------------
    def delete_pod(self, pod, grace_s):
        """Delete @pod as kube-apiserver does: at once when unbound, terminal or grace 0; else
        set deletionTimestamp and let the simulated kubelet stop the containers and remove it."""
        md, ns, name = pod["metadata"], pod["metadata"].get("namespace", ""), pod["metadata"]["name"]
        phase = (pod.get("status") or {}).get("phase")
        if grace_s is None:
            grace_s = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        if not (pod.get("spec") or {}).get("nodeName") or phase in ("Succeeded", "Failed"):
            grace_s = 0
        if grace_s <= 0 and self.delete_delay_ms <= 0:
            return self.remove("pods", ns, name)
        if md.get("deletionTimestamp") and grace_s >= md.get("deletionGracePeriodSeconds", grace_s):
            return pod  # already terminating with a shorter grace
        grace_s = max(grace_s, 1)
        md["deletionTimestamp"] = now_iso(grace_s)
        md["deletionGracePeriodSeconds"] = grace_s
        self.put("pods", pod, "MODIFIED")
        uid = md["uid"]
        kill_ms = self.delete_delay_ms or int(self.kubelet.get("terminateAfterMs", 100))

        def kubelet_kill():
            p = self.objects["pods"].get((ns, name))
            if p is None or p["metadata"]["uid"] != uid:
                return
            for s in (p.get("status") or {}).get("containerStatuses") or []:
                if "running" in (s.get("state") or {}):
                    s["ready"] = False
                    s["state"] = {"terminated": {"exitCode": 137, "reason": "Error", "finishedAt": now_iso()}}
            self.remove("pods", ns, name)
        self.schedule(min(kill_ms, grace_s * 1000), kubelet_kill)
        return pod

    def schedule(self, delay_ms, fn):
        t = threading.Timer(delay_ms / 1000.0, self._run_locked, args=(fn,))
        t.daemon = True
        self.timers.append(t)
        t.start()

    def _run_locked(self, fn):
        with self.cv:
            fn()

    # -- kubelet simulation ---------------------------------------------
    def kubelet_admit(self, pod):
        """What admission does before the pod is stored: bind it, inject a sidecar."""
        k = self.kubelet
        if not k.get("enabled"):
            return
        spec = pod.setdefault("spec", {})
        if k.get("nodeName") and not spec.get("nodeName"):
            spec["nodeName"] = k["nodeName"]
        if k.get("sidecar"):
            spec.setdefault("containers", []).append(
                {"name": k.get("sidecarName", "istio-proxy"), "image": "proxy:latest"})

    def kubelet_start(self, pod):
        k = self.kubelet
        if not k.get("enabled"):
            return
        ns, name, uid = pod["metadata"].get("namespace", ""), pod["metadata"]["name"], pod["metadata"]["uid"]

        def current():
            p = self.objects["pods"].get((ns, name))
            if p is None or p["metadata"]["uid"] != uid or p["metadata"].get("deletionTimestamp"):
                return None
            return p

        def cname(c):
            return c["name"]

        def running():
            p = current()
            if p is None:
                return
            spec = p.get("spec", {})
            st = p.setdefault("status", {})
            if k.get("admissionError"):
                st.update({"phase": "Failed", "reason": "UnexpectedAdmissionError",
                           "message": k.get("admissionMessage",
                                            "Allocate failed due to requested number of devices unavailable "
                                            "for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected")})
                self.put("pods", p, "MODIFIED")
                return
            if k.get("waitingReason"):
                st["phase"] = "Pending"
                cs = spec.get("initContainers") or spec.get("containers") or []
                key = "initContainerStatuses" if spec.get("initContainers") else "containerStatuses"
                st[key] = [{"name": cname(c), "ready": False, "restartCount": 0, "image": c.get("image", ""), "imageID": "",
                            "state": {"waiting": {"reason": k["waitingReason"],
                                                  "message": "scripted by the test API server"}}} for c in cs]
                self.put("pods", p, "MODIFIED")
                return
            init_exit = int(k.get("initExitCode", 0))
            st["startTime"] = now_iso()
            st["initContainerStatuses"] = [
                {"name": cname(c), "ready": init_exit == 0, "restartCount": 0, "image": c.get("image", ""), "imageID": "",
                 "state": {"terminated": {"exitCode": init_exit, "reason": "Completed" if init_exit == 0 else "Error"}}}
                for c in spec.get("initContainers", [])]
            if init_exit != 0 and spec.get("initContainers"):
                # restartPolicy OnFailure: the init container restarts and backs off.
                st["phase"] = "Pending"
                for s in st["initContainerStatuses"]:
                    s["lastState"] = s.pop("state")
                    s["state"] = {"waiting": {"reason": "CrashLoopBackOff",
                                              "message": "back-off restarting failed container"}}
                    s["restartCount"] = 1
                st["containerStatuses"] = [
                    {"name": cname(c), "ready": False, "restartCount": 0, "image": c.get("image", ""), "imageID": "",
                     "state": {"waiting": {"reason": "PodInitializing"}}} for c in spec.get("containers", [])]
                self.put("pods", p, "MODIFIED")
                return
            st["phase"] = "Running"
            st["containerStatuses"] = [
                {"name": cname(c), "ready": True, "restartCount": 0, "image": c.get("image", ""), "imageID": "",
                 "state": {"running": {"startedAt": now_iso()}}} for c in spec.get("containers", [])]
            self.put("pods", p, "MODIFIED")
            jitter = random.randint(0, int(k.get("exitJitterMs", 0)))
            self.schedule(int(k.get("exitAfterMs", 200)) + jitter, finished)

        def finished():
            p = current()
            if p is None:
                return
            st = p["status"]
            code = int(k.get("exitCode", 0))
            sidecar = k.get("sidecarName", "istio-proxy") if k.get("sidecar") else None
            for s in st.get("containerStatuses", []):
                if s["name"] == sidecar:
                    continue
                s["ready"] = False
                s["state"] = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                             "finishedAt": now_iso()}}
            if not sidecar:
                st["phase"] = "Succeeded" if code == 0 else "Failed"
            self.put("pods", p, "MODIFIED")

        self.schedule(int(k.get("runningAfterMs", 100)), running)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gv-test-apiserver/1"

    def log_message(self, fmt, *args):  # quiet; the request log is in /_test/requests
        if self.server.args.verbose:
            sys.stderr.write("apiserver: " + (fmt % args) + "\n")

    # -- plumbing -----------------------------------------------------------
    @property
    def store(self):
        return self.server.store

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            return data
        return self.rfile.read(n) if n else b""

    def send_json(self, code, obj, extra_headers=None):
        data = (json.dumps(obj) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.last_status = code

    def send_text(self, code, text):
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.last_status = code

    def send_status(self, code, reason, message, extra_headers=None):
        self.send_json(code, status_obj(code, reason, message), extra_headers)

    def drop(self):
        self.close_connection = True
        self.last_status = 0
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def dispatch(self, method):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        path = u.path
        self.last_status = None
        self.warnings = []
        self.admin = False
        try:
            body = self.read_body()
        except ValueError:
            self.close_connection = True
            self.send_status(400, "BadRequest", "malformed request body framing")
            return
        try:
            if path.startswith("/_test/"):
                self.control(method, path, q, body)
                return
            entry = {"t": time.time(), "method": method, "path": path, "query": u.query,
                     "watch": truthy(q.get("watch")),
                     "contentType": self.headers.get("Content-Type", ""),
                     "userAgent": self.headers.get("User-Agent", "")}
            auth = self.headers.get("Authorization")
            with self.store.cv:
                token = self.store.token
                entry["auth"] = "none" if not auth else (
                    "ok" if token is not None and auth == "Bearer " + token else
                    "admin" if self.server.args.admin_token and auth == "Bearer " + self.server.args.admin_token
                    else "bad")
                self.store.requests.append(entry)
                fault = self.take_fault(method, path, q)
            self.admin = entry["auth"] == "admin"
            if fault and self.inject(fault, entry):
                return
            if token is not None and entry["auth"] not in ("ok", "admin"):
                entry["status"] = 401
                self.send_status(401, "Unauthorized", "Unauthorized")
                return
            if len(body) > MAX_BODY:
                entry["status"] = 413
                self.send_status(413, "RequestEntityTooLarge", "Request entity too large: limit is %d" % MAX_BODY)
                return
            self.api(method, path, q, body)
            entry["status"] = self.last_status
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # noqa: BLE001 - a test server reports all
            if self.last_status is None:
                self.send_status(500, "InternalError", "test apiserver: %s: %s" % (type(e).__name__, e))

    def take_fault(self, method, path, q):
        for f in self.store.faults:
            if f.get("count", 1) <= 0:
                continue
            if f.get("method") and f["method"] != method:
                continue
            if f.get("path") and f["path"] not in path:
                continue
            if "watch" in f and bool(f["watch"]) != (truthy(q.get("watch"))):
                continue
            f["count"] = f.get("count", 1) - 1
            return dict(f)
        return None

    # -- fault injection ----------------------------------------------------------
    def inject(self, fault, entry):
        """Play @fault; True when it answered (or dropped) the request."""
        if fault.get("delayMs"):
            time.sleep(fault["delayMs"] / 1000.0)
        kind = fault.get("type")
        code = int(fault.get("code", 500 if kind != "invalid-json" and kind != "huge" else 200))
        entry["status"] = code
        if kind == "drop":
            entry["status"] = 0
            self.drop()
        elif kind == "status":
            hdrs = {}
            if fault.get("retryAfter") is not None:
                hdrs["Retry-After"] = str(fault["retryAfter"])
            self.send_status(code, fault.get("reason", "InternalError" if code >= 500 else "TooManyRequests"),
                             fault.get("message", "injected fault"), hdrs)
        elif kind == "reset":
            # Headers and half the body promised by Content-Length, then a TCP reset.
            body = json.dumps(status_obj(200, "", "x" * 512)).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.reset_connection()
            entry["status"] = 0
        elif kind == "invalid-json":
            self.send_raw(code, "application/json", fault.get("body", '{"kind": "Pod", "metadata": {').encode())
        elif kind == "huge":
            self.send_huge_body(fault, code, truthy(self.query_of_request().get("watch")))
        elif kind == "concurrentWrite":
            self.concurrent_write(fault)
            return False
        elif kind == "non-status":
            # An error body that is not a Status (a proxy's HTML page).
            self.send_raw(code, fault.get("contentType", "text/html"),
                          fault.get("body", "<html><body><h1>502 Bad Gateway</h1></body></html>\n").encode())
        else:
            return False
        return True

    def query_of_request(self):
        return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))

    def send_huge_body(self, fault, code, watch):
        """Fault "huge": an answer of exactly `bytes` bytes (default 64 MiB) of valid JSON, streamed.
        A plain request gets one List with a long padding string; a watch gets one ADDED event
        line of that size, chunked: the client must stop at its own bound, not buffer it all."""
        size = int(fault.get("bytes", 64 * 1024 * 1024))
        if watch:
            head = (b'{"type":"ADDED","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"huge",'
                    b'"resourceVersion":"1"},"padding":"')
            tail = b'"}}\n'
        else:
            head = b'{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[],"padding":"'
            tail = b'"}\n'
        pad = max(0, size - len(head) - len(tail))
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        if watch:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(head) + pad + len(tail)))
        self.end_headers()
        self.last_status = code
        block = b"x" * 65536
        out = self.write_chunk if watch else self.wfile.write
        try:
            out(head)
            while pad > 0:
                n = min(pad, len(block))
                out(block[:n])
                pad -= n
            out(tail)
            if watch:
                self.write_chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def concurrent_write(self, fault):
        """Fault "concurrentWrite": just before this request is served, someone else (the kubelet's
        heartbeat) writes node `node`: `condition` is upserted by type into its status.conditions
        and its resourceVersion moves on; then the request runs as usual."""
        st = self.store
        with st.cv:
            node = st.objects["nodes"].get(("", fault.get("node", "")))
            if node is None:
                return
            cond = fault.get("condition")
            if cond:
                conds = node.setdefault("status", {}).setdefault("conditions", [])
                for i, c in enumerate(conds):
                    if c.get("type") == cond.get("type"):
                        conds[i] = copy.deepcopy(cond)
                        break
                else:
                    conds.append(copy.deepcopy(cond))
            st.put("nodes", node, "MODIFIED")

    def reset_connection(self):
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    def send_raw(self, code, ctype, data):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.last_status = code

    # -- routing ---------------------------------------------------------------------
    def route(self, path):
        """-> (resource, namespace, name, subresource) or None."""
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        self.version = "v1"
        self.group = ""
        if parts[:2] == ["apis", discovery.RESOURCE_GROUP] and len(parts) >= 4:
            if parts[2] not in self.store.resource_versions or parts[3] not in discovery.GROUP_RESOURCES \
                    or len(parts) > 5:
                return None
            self.version, self.group = parts[2], discovery.RESOURCE_GROUP
            return parts[3], None, parts[4] if len(parts) > 4 else None, None
        if parts[:2] != ["api", "v1"]:
            return None
        parts = parts[2:]
        ns = None
        if len(parts) >= 3 and parts[0] == "namespaces" and parts[2] in discovery.KINDS:
            ns = parts[1]
            parts = parts[2:]
        if not parts or parts[0] not in discovery.KINDS or len(parts) > 3:
            return None
        resource = parts[0]
        name = parts[1] if len(parts) > 1 else None
        sub = parts[2] if len(parts) > 2 else None
        if discovery.NAMESPACED[resource] and ns is None and name is not None:
            return None
        if not discovery.NAMESPACED[resource] and ns is not None:
            return None
        if sub is not None and (resource + "/" + sub) not in discovery.RESOURCES:
            return None
        return resource, ns, name, sub

    def kind_of(self, resource):
        return discovery.kind_of(resource)

    def api_version(self):
        """The apiVersion of this request's objects: "v1" or "resource.k8s.io/<version>"."""
        return "%s/%s" % (self.group, self.version) if self.group else "v1"

    def present(self, resource, obj):
        """@obj as this request's version shows it (group resources are stored in one shape)."""
        if obj is None or resource not in discovery.GROUP_RESOURCES:
            return obj
        return slice_as(obj, self.version)

    def intake(self, resource, obj):
        """@obj sent in this request's version, in the stored shape."""
        if resource in discovery.GROUP_RESOURCES:
            return slice_from(obj, self.version)
        return obj

    def qualified(self, resource):
        """The resource as kube-apiserver's messages name it: "pods", "resourceslices.resource.k8s.io"."""
        return resource + "." + discovery.GROUP_RESOURCES[resource][0] if resource in discovery.GROUP_RESOURCES \
            else resource

    def details(self, resource, name):
        d = {"name": name, "kind": resource}
        if resource in discovery.GROUP_RESOURCES:
            d["group"] = discovery.GROUP_RESOURCES[resource][0]
        return d

    def not_found(self, resource, name):
        self.send_json(404, status_obj(404, "NotFound", '%s "%s" not found' % (self.qualified(resource), name),
                                       self.details(resource, name)))

    def send_obj(self, code, obj):
        hdrs = {}
        if self.warnings:
            hdrs["Warning"] = ", ".join('299 - "%s"' % w.replace('"', '\\"') for w in self.warnings)
        self.send_json(code, obj, hdrs)

    def api(self, method, path, q, body):
        st = self.store
        if path != "/" and path.endswith("/"):
            path = path.rstrip("/")  # kube-apiserver serves /version/ as /version
        doc = discovery.lookup(path, "127.0.0.1:%d" % self.server.server_address[1], st.resource_versions)
        if method == "GET" and doc is not None:
            self.send_json(200, doc)
            return
        if method == "GET" and path == "/openapi/v3/api/v1":
            self.send_raw(200, "application/json", discovery.openapi_v3_core_text().encode())
            return
        r = self.route(path)
        if r is None:
            self.send_status(404, "NotFound", "the server could not find the requested resource")
            return
        resource, ns, name, sub = r
        if st.rbac is not None and not self.admin:
            verb = rbac.verb_of(method, name, q)
            if not st.rbac.allowed(verb, resource, sub, ns, name, self.group):
                self.send_json(403, st.rbac.forbidden(verb, resource, sub, ns, name, self.group))
                return
        if method == "GET" and name is None:
            if truthy(q.get("watch")):
                self.watch(resource, ns, q)
            else:
                self.list(resource, ns, q)
            return
        if method == "GET" and sub == "log":
            self.pod_log(ns, name, q)
            return
        handler = {"GET": self.get, "POST": self.create, "PUT": self.update, "PATCH": self.patch,
                   "DELETE": self.delete}.get(method)
        if handler is None or (method == "POST") != (name is None):
            self.send_status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            return
        with st.cv:
            handler(resource, ns, name, sub, q, body)

    def pod_log(self, ns, name, q):
        st = self.store
        with st.cv:
            pod = st.objects["pods"].get((ns, name))
            if pod is None:
                self.not_found("pods", name)
                return
            containers = [c["name"] for c in pod.get("spec", {}).get("containers", [])]
            c = q.get("container") or (containers[0] if len(containers) == 1 else None)
            if c is None:
                self.send_status(400, "BadRequest",
                                 "a container name must be specified for pod %s, choose one of: [%s]"
                                 % (name, " ".join(containers)))
                return
            if c not in containers and c not in [x["name"] for x in pod["spec"].get("initContainers") or []]:
                self.send_status(400, "BadRequest", "container %s is not valid for pod %s" % (c, name))
                return
            text = st.logs.get((ns, name, c), "")
        tail = q.get("tailLines")
        if tail:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[-int(tail):]) if int(tail) > 0 else ""
        self.send_text(200, text)

    # -- decoding and validation -------------------------------------------------
    def decode(self, body):
        """The JSON body, or None after answering 400 as kube-apiserver does."""
        try:
            return json.loads(body or b"null")
        except ValueError as e:
            self.send_status(400, "BadRequest", "the body of the request was in an unknown format: %s" % e)
            return None

    def check(self, resource, obj, q, old=None):
        """Decode and validate @obj; False after answering 400/422."""
        st = self.store
        kind = self.kind_of(resource)
        try:
            unknown = kv.decode_check(resource, obj)
        except kv.DecodeError as e:
            self.send_status(400, "BadRequest", str(e))
            return False
        mode = q.get("fieldValidation") or "Warn"
        if mode not in ("Strict", "Warn", "Ignore"):
            self.send_status(400, "BadRequest", 'fieldValidation parameter unsupported: "%s". Must be one of '
                             '["Ignore", "Warn", "Strict"]' % mode)
            return False
        if unknown and st.strict("unknown-fields"):
            msgs = ['unknown field "%s"' % u for u in unknown]
            if mode == "Strict":
                self.send_status(400, "BadRequest", "strict decoding error: " + ", ".join(msgs))
                return False
            if mode == "Warn":
                self.warnings += msgs
        if not st.strict("validation"):
            return True
        if resource == "events":
            errs = kv.validate_event(obj, st.strict("node-event-namespace"))
        elif resource == "pods" and old is not None:
            errs = kv.validate_pod_update(obj, old)
        else:
            errs = kv.VALIDATORS[resource](obj)
        if errs:
            self.send_json(422, kv.invalid_status(kind, (obj.get("metadata") or {}).get("name") or "", errs))
            return False
        return True

    def conflict(self, resource, name, detail="the object has been modified; please apply your changes to the "
                                              "latest version and try again"):
        self.send_json(409, status_obj(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s'
                                       % (self.qualified(resource), name, detail), self.details(resource, name)))

    # -- verbs -----------------------------------------------------------------------
    def get(self, resource, ns, name, sub, q, body):
        cur = self.store.objects[resource].get((ns or "", name))
        if cur is None:
            self.not_found(resource, name)
        else:
            self.send_json(200, self.present(resource, cur))

    def create(self, resource, ns, name, sub, q, body):
        st = self.store
        obj = self.decode(body)
        if obj is None:
            return
        if not isinstance(obj, dict):
            self.send_status(400, "BadRequest", "the body of the request was in an unknown format")
            return
        obj = self.intake(resource, obj)
        md = obj.setdefault("metadata", {}) if isinstance(obj.get("metadata", {}), dict) else None
        if md is None:
            self.check(resource, obj, q)
            return
        if ns is not None:
            if md.get("namespace") and md["namespace"] != ns:
                self.send_status(400, "BadRequest", "the namespace of the provided object does not match the "
                                 "namespace sent on the request")
                return
            md["namespace"] = ns
            if not st.namespace_exists(ns):
                self.not_found("namespaces", ns)
                return
        if not md.get("name") and md.get("generateName"):
            md["name"] = md["generateName"] + "".join(
                random.choice(string.ascii_lowercase + string.digits) for _ in range(5))
        for f in ("resourceVersion", "uid", "creationTimestamp", "deletionTimestamp", "selfLink"):
            md.pop(f, None)
        obj.setdefault("kind", self.kind_of(resource))
        obj.setdefault("apiVersion", self.intake(resource, {"apiVersion": self.api_version()})["apiVersion"])
        if resource == "pods":
            default_pod(obj)
        if resource not in ("events", "resourceslices"):  # spec and status are structs: always there
            obj.setdefault("spec", {})
            obj.setdefault("status", {})
        elif resource == "resourceslices":  # a ResourceSlice has no status
            obj.setdefault("spec", {})
        if not self.check(resource, obj, q):
            return
        if (md.get("namespace", ""), md["name"]) in st.objects[resource]:
            self.send_json(409, status_obj(409, "AlreadyExists", '%s "%s" already exists'
                                           % (self.qualified(resource), md["name"]),
                                           self.details(resource, md["name"])))
            return
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = now_iso()
        if q.get("dryRun") == "All":
            md["resourceVersion"] = ""
            self.send_obj(201, self.present(resource, obj))
            return
        if resource == "pods":
            st.kubelet_admit(obj)
        st.put(resource, obj, "ADDED")
        if resource == "pods":
            st.kubelet_start(obj)
        self.send_obj(201, self.present(resource, obj))

    def delete(self, resource, ns, name, sub, q, body):
        st = self.store
        cur = st.objects[resource].get((ns or "", name))
        if cur is None:
            self.not_found(resource, name)
            return
        opts = self.decode(body) if body else {}
        if opts is None:
            return
        pre = (opts or {}).get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != cur["metadata"]["uid"]:
            self.conflict(resource, name, "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                          % (pre["uid"], cur["metadata"]["uid"]))
            return
        if pre.get("resourceVersion") and pre["resourceVersion"] != cur["metadata"]["resourceVersion"]:
            self.conflict(resource, name, "Precondition failed: ResourceVersion in precondition: %s, "
                          "ResourceVersion in object meta: %s" % (pre["resourceVersion"],
                                                                  cur["metadata"]["resourceVersion"]))
            return
        grace = opts.get("gracePeriodSeconds") if isinstance(opts, dict) else None
        if q.get("gracePeriodSeconds", "").lstrip("-").isdigit():
            grace = int(q["gracePeriodSeconds"])
        if q.get("dryRun") == "All" or (opts or {}).get("dryRun") == ["All"]:
            self.send_json(200, self.present(resource, cur))
            return
        if resource == "pods":
            self.send_json(200, st.delete_pod(cur, grace))
            return
        if resource == "namespaces":
            for res in ("pods", "events"):
                for (ons, oname) in [k for k in st.objects[res] if k[0] == name]:
                    st.remove(res, ons, oname)
        self.send_json(200, self.present(resource, st.remove(resource, ns, name)))

    def update(self, resource, ns, name, sub, q, body):
        data = self.decode(body)
        if data is None:
            return
        if not isinstance(data, dict) or not isinstance(data.get("metadata", {}), dict):
            self.send_status(400, "BadRequest", "the body of the request was in an unknown format")
            return
        data = self.intake(resource, data)
        md = data.get("metadata") or {}
        if md.get("name") and md["name"] != name:
            self.send_status(400, "BadRequest", "the name of the object (%s) does not match the name on the URL (%s)"
                             % (md["name"], name))
            return
        self.replace(resource, ns, name, sub, q, data, md.get("resourceVersion"))

    def patch(self, resource, ns, name, sub, q, body):
        st = self.store
        cur = st.objects[resource].get((ns or "", name))
        if cur is None:
            self.not_found(resource, name)
            return
        data = self.decode(body)
        if data is None:
            return
        ct = self.headers.get("Content-Type", "").split(";")[0].strip()
        cur = self.present(resource, cur)  # the patch applies to the object as this version shows it
        try:
            if ct == "application/merge-patch+json":
                if not isinstance(data, dict):
                    raise patches.PatchError("a merge patch must be a JSON object")
                new = patches.merge_patch(cur, data)
            elif ct == "application/strategic-merge-patch+json":
                new = patches.strategic_merge_patch(cur, data)
            elif ct == "application/json-patch+json":
                if not isinstance(data, list):
                    self.send_status(400, "BadRequest", "json: cannot unmarshal %s into Go value of type "
                                     "jsonpatch.Patch" % ("object" if isinstance(data, dict) else "value"))
                    return
                new = patches.json_patch(cur, data)
            elif ct == "application/apply-patch+yaml":
                self.send_status(415, "UnsupportedMediaType", "server-side apply is not served by the test API "
                                 "server")
                return
            else:
                self.send_json(415, status_obj(415, "UnsupportedMediaType", 'the body of the request was in an '
                                               'unknown format - accepted media types include: '
                                               'application/json-patch+json, application/merge-patch+json, '
                                               'application/strategic-merge-patch+json'))
                return
        except patches.PatchError as e:
            self.send_status(422, "Invalid", str(e))
            return
        if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
            self.send_status(422, "Invalid", "the patch removes metadata")
            return
        new = self.intake(resource, new)
        self.replace(resource, ns, name, sub, q, new, new["metadata"].get("resourceVersion"))

    def replace(self, resource, ns, name, sub, q, new, want_rv):
        """Store @new in place of the current object: the shared end of PUT and PATCH."""
        st = self.store
        cur = st.objects[resource].get((ns or "", name))
        if cur is None:
            self.not_found(resource, name)
            return
        if want_rv and want_rv != cur["metadata"]["resourceVersion"]:
            self.conflict(resource, name)
            return
        md = new.setdefault("metadata", {})
        if md.get("uid") and md["uid"] != cur["metadata"]["uid"]:
            self.conflict(resource, name, "Precondition failed: UID in precondition: %s, UID in object meta: %s"
                          % (md["uid"], cur["metadata"]["uid"]))
            return
        new.setdefault("kind", self.kind_of(resource))
        new.setdefault("apiVersion", cur.get("apiVersion", "v1"))
        if sub == "status":
            # The status subresource changes only status (metav1 ResetObjectMetaForStatus).
            status = new.get("status")
            new = copy.deepcopy(cur)
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status
        elif "status" in cur:
            new["status"] = copy.deepcopy(cur["status"])
        else:
            new.pop("status", None)
        if resource not in ("events", "resourceslices"):
            new.setdefault("spec", {})
            new.setdefault("status", {})
        for f in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                  "deletionGracePeriodSeconds"):
            if f in cur["metadata"]:
                new["metadata"][f] = cur["metadata"][f]
            else:
                new["metadata"].pop(f, None)
        if not self.check(resource, new, q, old=cur if resource == "pods" and sub is None else None):
            return
        if q.get("dryRun") == "All":
            self.send_obj(200, self.present(resource, new))
            return
        if new == dict(cur, metadata=dict(cur["metadata"], resourceVersion=new["metadata"].get("resourceVersion"))):
            self.send_obj(200, self.present(resource, cur))  # a no-op write keeps the version, sends no event
            return
        st.objects[resource][(ns or "", name)] = new
        st.put(resource, new, "MODIFIED")
        self.send_obj(200, self.present(resource, new))

    # -- list and watch --------------------------------------------------------------
    def selectors(self, resource, q):
        """(label terms, field terms), or None after answering 400."""
        try:
            lt = parse_selector(q.get("labelSelector"))
            ft = parse_selector(q.get("fieldSelector"))
        except SelectorError as e:
            self.send_status(400, "BadRequest", str(e))
            return None
        for k, op, _ in ft:
            if op not in ("=", "!="):
                self.send_status(400, "BadRequest", "invalid field selector: %s" % q.get("fieldSelector"))
                return None
            if k not in FIELD_LABELS[resource]:
                self.send_status(400, "BadRequest", 'field label not supported: %s' % k)
                return None
        return lt, ft

    def matches(self, obj, ns, lt, ft):
        if ns is not None and (obj.get("metadata") or {}).get("namespace") != ns:
            return False
        return obj is not None and label_match(obj, lt) and field_match(obj, ft)

    def list(self, resource, ns, q):
        st = self.store
        sel = self.selectors(resource, q)
        if sel is None:
            return
        limit = int(q["limit"]) if q.get("limit", "").isdigit() and int(q["limit"]) > 0 else None
        start = None
        with st.cv:
            if q.get("continue"):
                try:
                    tok = json.loads(base64.urlsafe_b64decode(q["continue"] + "==").decode())
                    start, token_rv = tok["start"], int(tok["rv"])
                except (ValueError, KeyError, TypeError):
                    self.send_status(400, "BadRequest", "continue key is not valid: incorrect encoded start "
                                     "resourceVersion (version meta.k8s.io/v1)")
                    return
                if token_rv <= st.floor:
                    self.send_status(410, "Expired", "The provided continue parameter is too old to display a "
                                     "consistent list result. You can start a new list without the continue "
                                     "parameter.")
                    return
            rv = str(st.rv)
            items = []
            for (ons, oname), obj in sorted(st.objects[resource].items()):
                if start is not None and "%s/%s" % (ons, oname) <= start:
                    continue
                if self.matches(obj, ns, *sel):
                    items.append(self.present(resource, copy.deepcopy(obj)))
        meta = {"resourceVersion": rv}
        if limit is not None and len(items) > limit:
            last = items[limit - 1]["metadata"]
            tok = {"v": "meta.k8s.io/v1", "rv": int(rv),
                   "start": "%s/%s" % (last.get("namespace", "") if discovery.namespaced(resource) else "",
                                       last["name"])}
            meta["continue"] = base64.urlsafe_b64encode(json.dumps(tok).encode()).decode().rstrip("=")
            meta["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        self.send_json(200, {"kind": self.kind_of(resource) + "List", "apiVersion": self.api_version(),
                             "metadata": meta, "items": items})

    def write_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def write_event(self, etype, obj):
        self.write_chunk((json.dumps({"type": etype, "object": obj}) + "\n").encode())

    def transition(self, etype, obj, prev, ns, sel):
        """What a watcher with selectors sees of a change (kube-apiserver's cacher): a change into
        the selection is ADDED, out of it DELETED."""
        now_in = etype != "DELETED" and self.matches(obj, ns, *sel)
        was_in = prev is not None and self.matches(prev, ns, *sel)
        if etype == "DELETED":
            return "DELETED" if self.matches(obj, ns, *sel) or was_in else None
        if etype == "ADDED":
            return "ADDED" if now_in else None
        if now_in and was_in:
            return "MODIFIED"
        if now_in:
            return "ADDED"
        if was_in:
            return "DELETED"
        return None

    def watch(self, resource, ns, q):
        st = self.store
        sel = self.selectors(resource, q)
        if sel is None:
            return
        rv_s = q.get("resourceVersion", "")
        timeout = float(q.get("timeoutSeconds") or 1800)
        bookmarks = truthy(q.get("allowWatchBookmarks"))
        initial_end = truthy(q.get("sendInitialEvents"))
        end = time.time() + timeout
        with st.cv:
            if rv_s not in ("", "0") and not rv_s.isdigit():
                self.send_status(400, "BadRequest", 'invalid resource version: strconv.ParseUint: parsing "%s": '
                                 'invalid syntax' % rv_s)
                return
            rv = int(rv_s) if rv_s.isdigit() else 0
            gone = rv_s not in ("", "0") and not initial_end and rv < st.floor
            if gone and st.gone_as == "http":
                self.send_status(410, "Expired", "too old resource version: %d (%d)" % (rv, st.floor + 1))
                return
            initial = []
            if rv_s in ("", "0") or initial_end:
                initial = [self.present(resource, copy.deepcopy(o)) for _, o in sorted(st.objects[resource].items())
                           if self.matches(o, ns, *sel)]
                rv = st.rv
            gen = st.drop_generation
            st.watch_count += 1
            trig = None
            if resource == "pods":
                trig = next((v for k, op, v in sel[1] if k == "spec.nodeName" and op == "="), None)
            waiter = [threading.Condition(st.lock), resource, trig]
            st.watchers.append(waiter)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.last_status = 200
        try:
            if gone:
                self.write_event("ERROR", status_obj(410, "Expired", "too old resource version: %d (%d)"
                                                     % (rv, st.floor + 1)))
                self.write_chunk(b"")
                return
            for o in initial:
                self.write_event("ADDED", o)
            if initial_end and bookmarks:
                self.write_event("BOOKMARK", {"kind": self.kind_of(resource), "apiVersion": self.api_version(), "metadata": {
                    "resourceVersion": str(rv), "annotations": {"k8s.io/initial-events-end": "true"}}})
            self.stream(resource, ns, sel, rv, end, bookmarks, gen, waiter[0])
        finally:
            with st.cv:
                st.watch_count -= 1
                st.watchers.remove(waiter)
            self.close_connection = True

    def stream(self, resource, ns, sel, rv, end, bookmarks, gen, cond):
        st = self.store
        last_bookmark = time.time()
        while True:
            out = []
            with st.cv:
                while True:
                    if st.drop_generation != gen:
                        self.drop()
                        return
                    start = bisect.bisect_right(st.history, rv, key=lambda h: h[0])
                    pending = [h for h in st.history[start:] if h[2] == resource]
                    now = time.time()
                    if pending or now >= end or (bookmarks and now - last_bookmark >= st.bookmark_ms / 1000.0):
                        break
                    # Woken by a change that may concern this watch; else at the deadline or next bookmark.
                    wake = end - now
                    if bookmarks:
                        wake = min(wake, last_bookmark + st.bookmark_ms / 1000.0 - now)
                    cond.wait(max(0.001, min(wake, 1.0)))
                for hrv, t, _, o, prev in pending:
                    rv = max(rv, hrv)
                    seen = self.transition(t, o, prev, ns, sel)
                    if seen:
                        out.append((seen, self.present(resource, o)))
                rv = max(rv, st.rv)  # everything up to here was looked at
            for t, o in out:
                self.write_event(t, o)
            if time.time() >= end:
                self.write_chunk(b"")
                return
            if bookmarks and time.time() - last_bookmark >= st.bookmark_ms / 1000.0:
                last_bookmark = time.time()
                self.write_event("BOOKMARK", {"kind": self.kind_of(resource), "apiVersion": self.api_version(),
                                              "metadata": {"resourceVersion": str(rv)}})

    # -- the control API ---------------------------------------------------------------
    def control(self, method, path, q, body):
        st = self.store
        try:
            data = json.loads(body) if body else {}
        except ValueError as e:
            self.send_status(400, "BadRequest", "invalid JSON: %s" % e)
            return
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")][1:]
        with st.cv:
            if parts == ["healthz"]:
                self.send_json(200, {"ok": True, "rv": st.rv, "watches": st.watch_count})
            elif parts == ["reset"]:
                st.reset()
                st.drop_generation += 1
                st.cv.notify_all()
                st.wake_watchers()
                self.send_json(200, {"ok": True})
            elif parts == ["faults"] and method == "POST":
                rules = data.get("rules", [data]) if isinstance(data, dict) else data
                st.faults.extend(rules)
                self.send_json(200, {"ok": True, "faults": len(st.faults)})
            elif parts == ["faults"] and method == "DELETE":
                st.faults = []
                self.send_json(200, {"ok": True})
            elif parts == ["token"]:
                st.token = data.get("token")
                self.send_json(200, {"ok": True})
            elif parts == ["requests"] and method == "GET":
                self.send_json(200, {"requests": st.requests})
            elif parts == ["requests"] and method == "DELETE":
                st.requests = []
                self.send_json(200, {"ok": True})
            elif parts == ["compact"]:
                st.floor = st.rv
                st.history = []
                self.send_json(200, {"ok": True, "floor": st.floor})
            elif parts == ["drop-watches"]:
                st.drop_generation += 1
                st.cv.notify_all()
                st.wake_watchers()
                self.send_json(200, {"ok": True})
            elif parts == ["settings"]:
                if "deleteDelayMs" in data:
                    st.delete_delay_ms = int(data["deleteDelayMs"])
                if "goneAs" in data:
                    st.gone_as = data["goneAs"]
                if "bookmarkMs" in data:
                    st.bookmark_ms = int(data["bookmarkMs"])
                if "resourceVersions" in data:
                    bad = [v for v in data["resourceVersions"] if v not in discovery.RESOURCE_VERSIONS]
                    if bad:
                        self.send_status(400, "BadRequest", "unknown resource.k8s.io versions %s; known: %s"
                                         % (bad, discovery.RESOURCE_VERSIONS))
                        return
                    st.resource_versions = [v for v in discovery.RESOURCE_VERSIONS if v in data["resourceVersions"]]
                if "relax" in data:
                    bad = [c for c in data["relax"] if c not in RELAXABLE]
                    if bad:
                        self.send_status(400, "BadRequest", "unknown checks %s; known: %s" % (bad, RELAXABLE))
                        return
                    st.relax = set(data["relax"])
                self.send_json(200, {"ok": True})
            elif parts == ["kubelet"]:
                st.kubelet = dict(data)
                self.send_json(200, {"ok": True})
            elif len(parts) == 4 and parts[0] == "pods" and parts[3] == "status":
                p = st.objects["pods"].get((parts[1], parts[2]))
                if p is None:
                    self.send_status(404, "NotFound", "no such pod")
                    return
                p["status"] = patches.merge_patch(p.get("status", {}), data) if not q.get("replace") else data
                st.put("pods", p, "MODIFIED")
                self.send_json(200, p)
            elif len(parts) == 3 and parts[0] == "pods" and method == "DELETE":
                obj = st.remove("pods", parts[1], parts[2])
                if obj is None:
                    self.send_status(404, "NotFound", "no such pod")
                else:
                    self.send_json(200, obj)
            elif len(parts) == 2 and parts[0] == "nodes" and method in ("PUT", "POST"):
                name = parts[1]
                cur = st.objects["nodes"].get(("", name))
                etype = "MODIFIED"
                if cur is None:
                    etype = "ADDED"
                    cur = {"kind": "Node", "apiVersion": "v1",
                           "metadata": {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": now_iso(),
                                        "labels": {}},
                           "spec": {}, "status": {"capacity": {}, "allocatable": {}, "conditions": []}}
                if "labels" in data:
                    cur["metadata"]["labels"] = patches.merge_patch(cur["metadata"].get("labels", {}), data["labels"])
                for f in ("capacity", "allocatable"):
                    if f in data:
                        cur["status"][f] = patches.merge_patch(cur["status"].get(f, {}), data[f])
                st.put("nodes", cur, etype)
                self.send_json(200, cur)
            elif len(parts) == 2 and parts[0] == "nodes" and method == "DELETE":
                obj = st.remove("nodes", None, parts[1])
                if obj is None:
                    self.send_status(404, "NotFound", "no such node")
                else:
                    self.send_json(200, obj)
            elif len(parts) == 2 and parts[0] == "namespaces" and method in ("PUT", "POST"):
                st.ensure_namespace(parts[1])
                self.send_json(200, st.objects["namespaces"][("", parts[1])])
            elif len(parts) == 4 and parts[0] == "logs":
                st.logs[(parts[1], parts[2], parts[3])] = data.get("text", "") if isinstance(data, dict) else ""
                self.send_json(200, {"ok": True})
            else:
                self.send_status(404, "NotFound", "unknown control endpoint %s %s" % (method, path))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # a fleet of clients connects at once
    allow_reuse_address = True


def make_cert(tmpdir):
    """A self-signed certificate for 127.0.0.1/localhost, or None without openssl."""
    openssl = shutil.which("openssl")
    if not openssl:
        return None
    crt, key = os.path.join(tmpdir, "tls.crt"), os.path.join(tmpdir, "tls.key")
    r = subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
                        "-days", "2", "-subj", "/CN=gv-test-apiserver",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-addext", "basicConstraints=critical,CA:TRUE"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.stderr.write("apiserver: openssl failed: %s\n" % r.stderr.decode(errors="replace"))
        return None
    return crt, key


def write_kubeconfig(path, server, token, ca_pem, namespace):
    lines = ["apiVersion: v1", "kind: Config", "current-context: test",
             "clusters:", "- name: test", "  cluster:", "    server: %s" % server]
    if ca_pem:
        lines.append("    certificate-authority-data: %s" % base64.b64encode(ca_pem).decode())
    lines += ["contexts:", "- name: test", "  context:", "    cluster: test", "    user: test"]
    if namespace:
        lines.append("    namespace: %s" % namespace)
    lines += ["users:", "- name: test", "  user:"]
    lines.append("    token: %s" % token if token else "    {}")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    ap.add_argument("--write-port-file", help="write the port here once listening")
    ap.add_argument("--write-kubeconfig", help="write a kubeconfig pointing at this server")
    ap.add_argument("--token", default=None, help="require 'Authorization: Bearer TOKEN'")
    ap.add_argument("--namespace", default="gpu-operator", help="namespace of the kubeconfig context")
    ap.add_argument("--tls", action="store_true", help="serve HTTPS with a fresh self-signed certificate (needs openssl)")
    ap.add_argument("--bookmark-ms", type=int, default=1000, help="bookmark interval of watches")
    ap.add_argument("--parent-pid", type=int, default=0, help="exit when this process is gone")
    ap.add_argument("--max-lifetime", type=float, default=600.0, help="exit after this many seconds")
    ap.add_argument("--relax", action="append", choices=RELAXABLE, default=[],
                    help="switch a kube-apiserver check off (repeatable), for tests of behaviour the product "
                         "has not caught up with")
    ap.add_argument("--rbac", help="authorise every request against the RBAC objects in this JSON file "
                                   "(a list, e.g. helm template output as JSON)")
    ap.add_argument("--rbac-user", default="system:serviceaccount:gpu-operator:gpu-validator",
                    help="the user the token stands for in RBAC mode")
    ap.add_argument("--admin-token", default=None,
                    help="a second token, of a cluster admin (system:masters): not subject to --rbac; for the "
                         "test's own reads and writes")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    srv = Server(("127.0.0.1", args.port), Handler)
    srv.args = args
    srv.store = Store(args)
    scheme, ca_pem, tmpdir = "http", None, None
    if args.tls:
        tmpdir = tempfile.mkdtemp(prefix="gv-apiserver-")
        cert = make_cert(tmpdir)
        if cert is None:
            sys.stderr.write("apiserver: --tls needs openssl\n")
            return 77
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert[0], cert[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        with open(cert[0], "rb") as f:
            ca_pem = f.read()
        scheme = "https"
    port = srv.server_address[1]
    url = "%s://127.0.0.1:%d" % (scheme, port)
    if args.write_kubeconfig:
        write_kubeconfig(args.write_kubeconfig, url, args.token, ca_pem, args.namespace)
    if args.write_port_file:
        tmp = args.write_port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.write_port_file)

    started = time.time()

    def watchdog():
        while True:
            time.sleep(0.5)
            if args.parent_pid and args.parent_pid > 1:
                try:
                    os.kill(args.parent_pid, 0)
                except ProcessLookupError:
                    break
            if time.time() - started > args.max_lifetime:
                break
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
