#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small fake Kubernetes API server for gpu-validator's tests.

Standard library only.  Listens on 127.0.0.1 only.  Stores pods
(namespaced), nodes and events in memory and serves the subset of the core/v1
API the validator uses: GET/LIST (labelSelector equality, fieldSelector
spec.nodeName / metadata.name), POST, PUT, PATCH (merge, strategic treated
as merge, JSON patch), DELETE (optional graceful delay), watches
(chunked newline-delimited JSON, bookmarks, 410 for compacted versions),
pods/log.  A control API under /_test/ scripts behaviour; see README.md.
"""

import argparse
import base64
import copy
import json
import os
import random
import shutil
import socket
import ssl
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def now_iso():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def status_obj(code, reason, message, details=None):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
         "message": message, "reason": reason, "code": code}
    if details:
        s["details"] = details
    return s


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def json_pointer_parts(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError("bad JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def json_patch(doc, ops):
    """RFC 6902 add/replace/remove/test."""
    doc = copy.deepcopy(doc)
    for op in ops:
        parts = json_pointer_parts(op["path"])
        if not parts:
            raise ValueError("cannot patch the root")
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent.setdefault(p, {})
        last = parts[-1]
        kind = op["op"]
        if kind in ("add", "replace"):
            if isinstance(parent, list):
                if last == "-":
                    parent.append(op["value"])
                elif kind == "add":
                    parent.insert(int(last), op["value"])
                else:
                    parent[int(last)] = op["value"]
            else:
                if kind == "replace" and last not in parent:
                    raise ValueError("replace of a missing member %s" % op["path"])
                parent[last] = op["value"]
        elif kind == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                del parent[last]
        elif kind == "test":
            cur = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if cur != op.get("value"):
                raise ValueError("test failed at %s" % op["path"])
        else:
            raise ValueError("unsupported op %r" % kind)
    return doc


def field_value(obj, field):
    cur = obj
    for p in field.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p)
    return "" if cur is None else str(cur)


def parse_selector(sel):
    """Equality-based selector: a=b, a==b, a!=b; returns list of (key, op, value)."""
    out = []
    if not sel:
        return out
    for term in sel.split(","):
        term = term.strip()
        if not term:
            continue
        if "!=" in term:
            k, v = term.split("!=", 1)
            out.append((k.strip(), "!=", v.strip()))
        elif "==" in term:
            k, v = term.split("==", 1)
            out.append((k.strip(), "=", v.strip()))
        elif "=" in term:
            k, v = term.split("=", 1)
            out.append((k.strip(), "=", v.strip()))
        else:
            out.append((term, "exists", ""))
    return out


def label_match(obj, terms):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for k, op, v in terms:
        if op == "=" and labels.get(k) != v:
            return False
        if op == "!=" and labels.get(k) == v:
            return False
        if op == "exists" and k not in labels:
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


QUALIFIED_NAME_MAX = 63


def is_qualified_name(v):
    """apimachinery IsQualifiedName: [prefix/]name, name 1-63 of [A-Za-z0-9._-], alphanumeric at both ends."""
    if not v:
        return False
    name = v.split("/", 1)[-1] if "/" in v else v
    prefix = v.split("/", 1)[0] if "/" in v else None
    if prefix is not None and (not prefix or len(prefix) > 253):
        return False
    if not (1 <= len(name) <= QUALIFIED_NAME_MAX) or not name[0].isalnum() or not name[-1].isalnum():
        return False
    return all(c.isalnum() or c in "._-" for c in name)


def invalid_message(kind, name, errors):
    """kube-apiserver's 422 message: 'Kind "name" is invalid: e1' or '...: [e1, e2]'."""
    body = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return '%s "%s" is invalid: %s' % (kind, name, body)


def validate_event_create(ev, ns):
    """What kube-apiserver checks when a core/v1 Event is created (pkg/apis/core/validation,
    ValidateEventCreate -> legacyValidateEvent): a list of 'field: ...' errors, empty when valid.
    An Event without eventTime must be in its involved object's namespace ("" or "default" for
    a cluster-scoped object such as a Node); one with eventTime about a cluster-scoped object
    must be in "default" or "kube-system" and name reportingComponent (a qualified name),
    reportingInstance (<= 128), action (<= 128) and reason."""
    errs = []
    io = ev.get("involvedObject") or {}
    ions = io.get("namespace") or ""
    if not ev.get("eventTime"):
        if not ions:
            if ns not in ("", "default"):
                errs.append('involvedObject.namespace: Invalid value: "%s": does not match event.namespace' % ions)
        elif ns != ions:
            errs.append('involvedObject.namespace: Invalid value: "%s": does not match event.namespace' % ions)
    else:
        if not ions and ns not in ("default", "kube-system"):
            errs.append('involvedObject.namespace: Invalid value: "%s": does not match event.namespace' % ions)
        rc = ev.get("reportingComponent") or ""
        if not rc:
            errs.append("reportingComponent: Required value")
        elif not is_qualified_name(rc):
            errs.append('reportingComponent: Invalid value: "%s": must be a qualified name' % rc)
        ri = ev.get("reportingInstance") or ""
        if not ri:
            errs.append("reportingInstance: Required value")
        elif len(ri) > 128:
            errs.append('reportingInstance: Invalid value: "": can have at most 128 characters')
        act = ev.get("action") or ""
        if not act:
            errs.append("action: Required value")
        elif len(act) > 128:
            errs.append('action: Invalid value: "": can have at most 128 characters')
        if not ev.get("reason"):
            errs.append("reason: Required value")
    return errs


def patch_precondition_conflict(cur, data):
    """Optimistic concurrency of PATCH (kube-apiserver): a metadata.resourceVersion or
    metadata.uid in the patch must match the object, else 409 Conflict.  The message, or None."""
    md = (data or {}).get("metadata") if isinstance(data, dict) else None
    if not isinstance(md, dict):
        return None
    want_rv, want_uid = md.get("resourceVersion"), md.get("uid")
    if want_uid and want_uid != cur["metadata"].get("uid"):
        return "Precondition failed: UID in precondition: %s, UID in object meta: %s" % (
            want_uid, cur["metadata"].get("uid"))
    if want_rv and want_rv != cur["metadata"].get("resourceVersion"):
        return "the object has been modified; please apply your changes to the latest version and try again"
    return None


def upsert_condition(obj, cond):
    """Set status.conditions[type=cond.type] to @cond (as the kubelet's heartbeat does)."""
    conds = obj.setdefault("status", {}).setdefault("conditions", [])
    for i, c in enumerate(conds):
        if c.get("type") == cond.get("type"):
            conds[i] = copy.deepcopy(cond)
            return
    conds.append(copy.deepcopy(cond))


class Store:
    """All state, guarded by one condition variable."""

    def __init__(self, args):
        self.cv = threading.Condition()
        self.args = args
        self.reset()

    def reset(self):
        self.rv = 100
        self.objects = {"pods": {}, "nodes": {}, "events": {}}
        self.history = []          # (rv, type, resource, obj)
        self.floor = 0             # versions <= floor are compacted: 410
        self.faults = []
        self.requests = []
        self.token = self.args.token
        self.delete_delay_ms = 0
        self.gone_as = "event"     # or "http"
        self.bookmark_ms = self.args.bookmark_ms
        self.drop_generation = 0
        self.watch_count = 0
        self.logs = {}             # (ns, pod, container) -> text
        self.kubelet = {"enabled": False}
        self.timers = []

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def emit(self, etype, resource, obj):
        self.history.append((int(obj["metadata"]["resourceVersion"]), etype, resource, copy.deepcopy(obj)))
        if len(self.history) > 10000:
            self.floor = self.history[5000][0]
            self.history = self.history[5000:]
        self.cv.notify_all()

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
                st[key] = [{"name": cname(c), "ready": False, "restartCount": 0, "image": c.get("image", ""),
                            "state": {"waiting": {"reason": k["waitingReason"],
                                                  "message": "scripted by the test API server"}}} for c in cs]
                self.put("pods", p, "MODIFIED")
                return
            init_exit = int(k.get("initExitCode", 0))
            st["startTime"] = now_iso()
            st["initContainerStatuses"] = [
                {"name": cname(c), "ready": init_exit == 0, "restartCount": 0, "image": c.get("image", ""),
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
                    {"name": cname(c), "ready": False, "restartCount": 0, "image": c.get("image", ""),
                     "state": {"waiting": {"reason": "PodInitializing"}}} for c in spec.get("containers", [])]
                self.put("pods", p, "MODIFIED")
                return
            st["phase"] = "Running"
            st["containerStatuses"] = [
                {"name": cname(c), "ready": True, "restartCount": 0, "image": c.get("image", ""),
                 "state": {"running": {"startedAt": now_iso()}}} for c in spec.get("containers", [])]
            self.put("pods", p, "MODIFIED")
            self.schedule(int(k.get("exitAfterMs", 200)), finished)

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
        body = self.read_body()
        try:
            if path.startswith("/_test/"):
                self.control(method, path, q, body)
                return
            entry = {"t": time.time(), "method": method, "path": path, "query": u.query,
                     "watch": q.get("watch") in ("1", "true"),
                     "contentType": self.headers.get("Content-Type", ""),
                     "userAgent": self.headers.get("User-Agent", "")}
            auth = self.headers.get("Authorization")
            with self.store.cv:
                token = self.store.token
                entry["auth"] = "none" if not auth else (
                    "ok" if token is not None and auth == "Bearer " + token else "bad")
                self.store.requests.append(entry)
                fault = self.take_fault(method, path, q)
            if fault:
                if fault.get("delayMs"):
                    time.sleep(fault["delayMs"] / 1000.0)
                if fault.get("type") == "drop":
                    entry["status"] = 0
                    self.drop()
                    return
                if fault.get("type") == "concurrentWrite":
                    self.concurrent_write(fault)
                elif fault.get("type") == "huge":
                    entry["status"] = 200
                    self.send_huge_body(fault, q.get("watch") in ("1", "true"))
                    return
                if fault.get("type") == "status":
                    hdrs = {}
                    if fault.get("retryAfter") is not None:
                        hdrs["Retry-After"] = str(fault["retryAfter"])
                    code = int(fault.get("code", 500))
                    entry["status"] = code
                    self.send_status(code, fault.get("reason", "InternalError" if code >= 500 else "TooManyRequests"),
                                     fault.get("message", "injected fault"), hdrs)
                    return
            if token is not None and entry["auth"] != "ok":
                entry["status"] = 401
                self.send_status(401, "Unauthorized", "Unauthorized")
                return
            self.api(method, path, q, body)
            entry["status"] = self.last_status
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # noqa: BLE001 - a test server reports all
            if self.last_status is None:
                self.send_status(500, "InternalError", "test apiserver: %s: %s" % (type(e).__name__, e))

    def control_delete_node(self, name):
        """DELETE /_test/nodes/NAME: the Node goes away at once (a DELETED event), as when a
        cluster admin or the cloud controller removes it.  Called with the store locked."""
        obj = self.store.remove("nodes", None, name)
        if obj is None:
            self.send_status(404, "NotFound", 'nodes "%s" not found' % name)
        else:
            self.send_json(200, obj)

    def concurrent_write(self, fault):
        """Fault "concurrentWrite": just before this request is served, someone else (e.g. the
        kubelet's heartbeat) writes node `node`: `condition` is upserted by type into its
        status.conditions and its resourceVersion moves on; then the request runs as usual."""
        st = self.store
        with st.cv:
            node = st.objects["nodes"].get(("", fault.get("node", "")))
            if node is None:
                return
            if fault.get("condition"):
                upsert_condition(node, fault["condition"])
            st.put("nodes", node, "MODIFIED")

    def send_huge_body(self, fault, watch):
        """Fault "huge": a 200 answer of `bytes` bytes (default 50 MB), streamed.
        A plain request gets one JSON List with a long padding string; a watch
        gets one ADDED event line of that size (issue 9 defect 13)."""
        size = int(fault.get("bytes", 50 * 1000 * 1000))
        if watch:
            head = b'{"type":"ADDED","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"huge",' \
                   b'"resourceVersion":"1"},"padding":"'
            tail = b'"}}\n'
        else:
            head = b'{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[],"padding":"'
            tail = b'"}\n'
        pad = max(0, size - len(head) - len(tail))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if watch:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(head) + pad + len(tail)))
        self.end_headers()
        self.last_status = 200
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

    def take_fault(self, method, path, q):
        for f in self.store.faults:
            if f.get("count", 1) <= 0:
                continue
            if f.get("method") and f["method"] != method:
                continue
            if f.get("path") and f["path"] not in path:
                continue
            if "watch" in f and bool(f["watch"]) != (q.get("watch") in ("1", "true")):
                continue
            f["count"] = f.get("count", 1) - 1
            return dict(f)
        return None

    # -- the API ----------------------------------------------------------------
    def route(self, path):
        """-> (resource, namespace, name, subresource) or None."""
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        if parts[:2] != ["api", "v1"]:
            return None
        parts = parts[2:]
        ns = None
        if len(parts) >= 2 and parts[0] == "namespaces" and len(parts) >= 3:
            ns = parts[1]
            parts = parts[2:]
        if not parts or parts[0] not in ("pods", "nodes", "events"):
            return None
        resource = parts[0]
        name = parts[1] if len(parts) > 1 else None
        sub = parts[2] if len(parts) > 2 else None
        if resource in ("pods", "events") and ns is None and name is not None:
            return None
        return resource, ns, name, sub

    def kind_of(self, resource):
        return {"pods": "Pod", "nodes": "Node", "events": "Event"}[resource]

    def api(self, method, path, q, body):
        r = self.route(path)
        if r is None:
            self.send_status(404, "NotFound", "the server could not find the requested resource")
            return
        resource, ns, name, sub = r
        st = self.store
        if method == "GET" and name is None:
            if q.get("watch") in ("1", "true"):
                self.watch(resource, ns, q)
            else:
                self.list(resource, ns, q)
            return
        if method == "GET" and sub == "log":
            with st.cv:
                pod = st.objects["pods"].get((ns, name))
                if pod is None:
                    self.send_status(404, "NotFound", 'pods "%s" not found' % name)
                    return
                containers = [c["name"] for c in pod.get("spec", {}).get("containers", [])]
                c = q.get("container") or (containers[0] if len(containers) == 1 else None)
                if c is None:
                    self.send_status(400, "BadRequest",
                                     "a container name must be specified for pod %s, choose one of: %s" % (name, containers))
                    return
                text = st.logs.get((ns, name, c), "")
            tail = q.get("tailLines")
            if tail:
                lines = text.splitlines(keepends=True)
                text = "".join(lines[-int(tail):]) if int(tail) > 0 else ""
            self.send_text(200, text)
            return
        with st.cv:
            key = (ns or "", name)
            cur = st.objects[resource].get(key) if name else None
            if method == "GET":
                if cur is None:
                    self.send_status(404, "NotFound", '%s "%s" not found' % (resource, name))
                else:
                    self.send_json(200, cur)
                return
            if method == "POST" and name is None:
                try:
                    obj = json.loads(body or b"{}")
                except ValueError as e:
                    self.send_status(400, "BadRequest", "invalid JSON: %s" % e)
                    return
                md = obj.setdefault("metadata", {})
                if not md.get("name"):
                    if md.get("generateName"):
                        md["name"] = md["generateName"] + "".join(
                            random.choice(string.ascii_lowercase + string.digits) for _ in range(5))
                    else:
                        self.send_status(422, "Invalid", "%s: metadata.name: Required value" % self.kind_of(resource))
                        return
                if ns is not None:
                    if md.get("namespace") and md["namespace"] != ns:
                        self.send_status(400, "BadRequest", "the namespace of the object does not match the namespace on the request")
                        return
                    md["namespace"] = ns
                if (md.get("namespace", ""), md["name"]) in st.objects[resource]:
                    self.send_json(409, status_obj(409, "AlreadyExists", '%s "%s" already exists' % (resource, md["name"]),
                                                   {"name": md["name"], "kind": resource}))
                    return
                if resource == "events":
                    errs = validate_event_create(obj, md.get("namespace", ""))
                    if errs:
                        self.send_json(422, status_obj(422, "Invalid", invalid_message("Event", md["name"], errs),
                                                       {"name": md["name"], "kind": "Event"}))
                        return
                md["uid"] = str(uuid.uuid4())
                md["creationTimestamp"] = now_iso()
                obj.setdefault("kind", self.kind_of(resource))
                obj.setdefault("apiVersion", "v1")
                if resource == "pods":
                    obj.setdefault("status", {}).setdefault("phase", "Pending")
                    st.kubelet_admit(obj)
                st.put(resource, obj, "ADDED")
                if resource == "pods":
                    st.kubelet_start(obj)
                self.send_json(201, obj)
                return
            if cur is None:
                self.send_status(404, "NotFound", '%s "%s" not found' % (resource, name))
                return
            if method == "DELETE":
                grace = st.delete_delay_ms
                try:
                    opts = json.loads(body) if body else {}
                    if opts.get("gracePeriodSeconds") == 0:
                        grace = 0
                except ValueError:
                    pass
                if grace > 0 and resource == "pods":
                    if not cur["metadata"].get("deletionTimestamp"):
                        cur["metadata"]["deletionTimestamp"] = now_iso()
                        cur["metadata"]["deletionGracePeriodSeconds"] = max(1, grace // 1000)
                        st.put(resource, cur, "MODIFIED")
                        uid = cur["metadata"]["uid"]

                        def finish():
                            p = st.objects["pods"].get(key)
                            if p is not None and p["metadata"]["uid"] == uid:
                                st.remove("pods", ns, name)
                        st.schedule(grace, finish)
                    self.send_json(200, cur)
                else:
                    obj = st.remove(resource, ns, name)
                    self.send_json(200, obj)
                return
            if method in ("PATCH", "PUT"):
                try:
                    data = json.loads(body or b"null")
                except ValueError as e:
                    self.send_status(400, "BadRequest", "invalid JSON: %s" % e)
                    return
                ct = self.headers.get("Content-Type", "").split(";")[0].strip()
                if method == "PUT":
                    want = (data.get("metadata") or {}).get("resourceVersion")
                    if want and want != cur["metadata"]["resourceVersion"]:
                        self.send_status(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been '
                                         'modified; please apply your changes to the latest version and try again'
                                         % (resource, name))
                        return
                    new = data
                    new["metadata"] = dict(data.get("metadata") or {}, name=name, uid=cur["metadata"]["uid"],
                                           creationTimestamp=cur["metadata"].get("creationTimestamp"))
                    if ns is not None:
                        new["metadata"]["namespace"] = ns
                elif ct in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
                    conflict = patch_precondition_conflict(cur, data)
                    if conflict:
                        self.send_status(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s'
                                         % (resource, name, conflict))
                        return
                    if sub == "status":
                        data = {"status": data.get("status")} if isinstance(data, dict) and "status" in data else {}
                    new = merge_patch(cur, data)
                elif ct == "application/json-patch+json":
                    try:
                        new = json_patch(cur, data)
                    except (ValueError, KeyError, IndexError, TypeError) as e:
                        self.send_status(422, "Invalid", "json patch: %s" % e)
                        return
                else:
                    self.send_status(415, "UnsupportedMediaType", "the body of the request was in an unknown format")
                    return
                if sub is None and method == "PATCH" and "status" in cur:
                    new["status"] = cur["status"]  # the main resource ignores status changes
                new["metadata"]["name"] = name
                st.put(resource, new, "MODIFIED")
                self.send_json(200, new)
                return
        self.send_status(405, "MethodNotAllowed", "method %s not allowed here" % method)

    def select(self, resource, ns, q):
        lt = parse_selector(q.get("labelSelector"))
        ft = parse_selector(q.get("fieldSelector"))
        for (ons, _), obj in sorted(self.store.objects[resource].items()):
            if ns is not None and ons != ns:
                continue
            if label_match(obj, lt) and field_match(obj, ft):
                yield obj

    def list(self, resource, ns, q):
        st = self.store
        with st.cv:
            items = [copy.deepcopy(o) for o in self.select(resource, ns, q)]
            rv = str(st.rv)
        self.send_json(200, {"kind": self.kind_of(resource) + "List", "apiVersion": "v1",
                             "metadata": {"resourceVersion": rv}, "items": items})

    def write_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def watch(self, resource, ns, q):
        st = self.store
        lt = parse_selector(q.get("labelSelector"))
        ft = parse_selector(q.get("fieldSelector"))
        rv_s = q.get("resourceVersion", "")
        timeout = float(q.get("timeoutSeconds") or 1800)
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        end = time.time() + timeout
        with st.cv:
            rv = int(rv_s) if rv_s.isdigit() else 0
            gone = rv_s not in ("", "0") and rv < st.floor
            if gone and st.gone_as == "http":
                self.send_status(410, "Expired", "too old resource version: %d (%d)" % (rv, st.floor + 1))
                return
            initial = []
            if rv_s in ("", "0"):
                initial = [("ADDED", copy.deepcopy(o)) for o in self.select(resource, ns, q)]
                rv = st.rv
            gen = st.drop_generation
            st.watch_count += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.last_status = 200
        try:
            if gone:
                ev = {"type": "ERROR", "object": status_obj(410, "Expired", "too old resource version: %d (%d)"
                                                            % (rv, st.floor + 1))}
                self.write_chunk((json.dumps(ev) + "\n").encode())
                self.write_chunk(b"")
                return
            for t, o in initial:
                self.write_chunk((json.dumps({"type": t, "object": o}) + "\n").encode())
            last_bookmark = time.time()
            while True:
                out = []
                with st.cv:
                    while True:
                        if st.drop_generation != gen:
                            self.drop()
                            return
                        pending = [h for h in st.history if h[0] > rv and h[2] == resource]
                        now = time.time()
                        if pending or now >= end or (bookmarks and now - last_bookmark >= st.bookmark_ms / 1000.0):
                            break
                        st.cv.wait(0.05)
                    for hrv, t, _, o in pending:
                        rv = max(rv, hrv)
                        if ns is not None and o["metadata"].get("namespace") != ns:
                            continue
                        if label_match(o, lt) and field_match(o, ft):
                            out.append({"type": t, "object": o})
                    rv = max(rv, st.rv)  # everything up to here was looked at
                for ev in out:
                    self.write_chunk((json.dumps(ev) + "\n").encode())
                if time.time() >= end:
                    self.write_chunk(b"")
                    return
                if bookmarks and time.time() - last_bookmark >= st.bookmark_ms / 1000.0:
                    last_bookmark = time.time()
                    bm = {"type": "BOOKMARK", "object": {"kind": self.kind_of(resource), "apiVersion": "v1",
                                                         "metadata": {"resourceVersion": str(rv)}}}
                    self.write_chunk((json.dumps(bm) + "\n").encode())
        finally:
            with st.cv:
                st.watch_count -= 1
            self.close_connection = True

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
                self.send_json(200, {"ok": True})
            elif parts == ["settings"]:
                if "deleteDelayMs" in data:
                    st.delete_delay_ms = int(data["deleteDelayMs"])
                if "goneAs" in data:
                    st.gone_as = data["goneAs"]
                if "bookmarkMs" in data:
                    st.bookmark_ms = int(data["bookmarkMs"])
                self.send_json(200, {"ok": True})
            elif parts == ["kubelet"]:
                st.kubelet = dict(data)
                self.send_json(200, {"ok": True})
            elif len(parts) == 4 and parts[0] == "pods" and parts[3] == "status":
                p = st.objects["pods"].get((parts[1], parts[2]))
                if p is None:
                    self.send_status(404, "NotFound", "no such pod")
                    return
                p["status"] = merge_patch(p.get("status", {}), data) if not q.get("replace") else data
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
                           "status": {"capacity": {}, "allocatable": {}, "conditions": []}}
                if "labels" in data:
                    cur["metadata"]["labels"] = merge_patch(cur["metadata"].get("labels", {}), data["labels"])
                for f in ("capacity", "allocatable"):
                    if f in data:
                        cur["status"][f] = merge_patch(cur["status"].get(f, {}), data[f])
                st.put("nodes", cur, etype)
                self.send_json(200, cur)
            elif len(parts) == 2 and parts[0] == "nodes" and method == "DELETE":
                self.control_delete_node(parts[1])
            elif len(parts) == 4 and parts[0] == "logs":
                st.logs[(parts[1], parts[2], parts[3])] = data.get("text", "") if isinstance(data, dict) else ""
                self.send_json(200, {"ok": True})
            else:
                self.send_status(404, "NotFound", "unknown control endpoint %s %s" % (method, path))


class Server(ThreadingHTTPServer):
    daemon_threads = True
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
