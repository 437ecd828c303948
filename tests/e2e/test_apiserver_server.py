"""The test API server's own behaviours that the real clients of test_apiserver_conformance.py
do not reach: watch selector transitions, bookmarks only when asked, 410 for compacted
versions and continue tokens, strategic merge patch directives and merge keys, optimistic
concurrency, the Event namespace rule and its switch, the fault set (connection reset
mid-body, invalid JSON, huge and non-Status bodies, node deletion through the control API),
request body limit, Warning headers, RBAC denials, ResourceSlices across versions (conversion,
validation, watches, versions not served).  Standard library only."""
import http.client
import json
import os
import sys
import tempfile
import threading
import time

import gvtest

sys.path.insert(0, os.path.join(gvtest.SOURCE, "tests", "apiserver"))
from client import TestApiServer  # noqa: E402
import patch as patches  # noqa: E402

NS = "gpu-operator"
TOKEN = "gv-server-token"
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"


def pod(name, labels=None, node="node-a", **spec):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {"app": "x"}},
         "spec": {"nodeName": node, "containers": [{"name": "c", "image": "img:1"}]}}
    p["spec"].update(spec)
    return p


class Server(gvtest.TempDirTestCase):
    extra = ()

    def setUp(self):
        super().setUp()
        self.api = TestApiServer(token=TOKEN, namespace=NS, bookmark_ms=200, extra_args=list(self.extra)).start()
        self.addCleanup(self.api.stop)
        self.api.node("node-a")

    def call(self, method, path, body=None, ctype="application/json", raw=None):
        """-> (status, headers, decoded body or text)."""
        c = http.client.HTTPConnection("127.0.0.1", self.api.port, timeout=10)
        data = raw if raw is not None else (None if body is None else json.dumps(body))
        hdrs = {"Authorization": "Bearer " + TOKEN}
        if data is not None:
            hdrs["Content-Type"] = ctype
        c.request(method, path, body=data, headers=hdrs)
        r = c.getresponse()
        text = r.read().decode(errors="replace")
        c.close()
        try:
            return r.status, r.headers, json.loads(text)
        except ValueError:
            return r.status, r.headers, text

    def watch(self, path, seconds):
        """Events of a watch on @path for @seconds (a background reader)."""
        out = []

        def reader():
            c = http.client.HTTPConnection("127.0.0.1", self.api.port, timeout=seconds + 5)
            c.request("GET", path + ("&" if "?" in path else "?") + "watch=true&timeoutSeconds=%d" % seconds,
                      headers={"Authorization": "Bearer " + TOKEN})
            for line in c.getresponse():
                out.append(json.loads(line))
            c.close()
        t = threading.Thread(target=reader, daemon=True)
        t.start()
        return t, out


class ResourceSlices(Server):
    BASE = "/apis/resource.k8s.io/%s/resourceslices"

    def slice(self, name, node="node-a", driver="gpu.nvidia.com", version="v1", **spec):
        dev = {"name": "gpu-0", "attributes": {"uuid": {"string": "GPU-a"}}, "capacity": {"memory": {"value": "1Gi"}}}
        if version == "v1beta1":
            dev = {"name": "gpu-0", "basic": {k: v for k, v in dev.items() if k != "name"}}
        body = {"apiVersion": "resource.k8s.io/" + version, "kind": "ResourceSlice", "metadata": {"name": name},
                "spec": dict({"driver": driver, "nodeName": node, "devices": [dev],
                              "pool": {"name": node, "generation": 0, "resourceSliceCount": 1}}, **spec)}
        return self.call("POST", self.BASE % version, body)

    def test_one_stored_object_in_three_versions(self):
        s, _, made = self.slice("beta", version="v1beta1")
        self.assertEqual(s, 201, made)
        self.assertEqual(made["apiVersion"], "resource.k8s.io/v1beta1")
        self.assertIn("basic", made["spec"]["devices"][0])
        for v in ("v1", "v1beta2"):
            s, _, got = self.call("GET", (self.BASE % v) + "/beta")
            self.assertEqual(s, 200)
            self.assertEqual(got["apiVersion"], "resource.k8s.io/" + v)
            self.assertEqual(got["spec"]["devices"][0]["attributes"]["uuid"], {"string": "GPU-a"})
            self.assertNotIn("basic", got["spec"]["devices"][0])
            self.assertNotIn("status", got, "a ResourceSlice has no status")
        # a merge patch applies to the version's own shape
        s, _, p = self.call("PATCH", (self.BASE % "v1beta1") + "/beta",
                            {"spec": {"devices": [{"name": "gpu-0", "basic": {"attributes": {"uuid": {"string": "GPU-b"}}}}]}},
                            MERGE)
        self.assertEqual(s, 200, p)
        s, _, got = self.call("GET", (self.BASE % "v1") + "/beta")
        self.assertEqual(got["spec"]["devices"][0]["attributes"]["uuid"], {"string": "GPU-b"})
        s, _, gone = self.call("DELETE", (self.BASE % "v1") + "/beta")
        self.assertEqual(s, 200)
        s, _, nf = self.call("GET", (self.BASE % "v1") + "/beta")
        self.assertEqual((s, nf["message"], nf["details"]["group"]),
                         (404, 'resourceslices.resource.k8s.io "beta" not found', "resource.k8s.io"))

    def test_validation_and_conflicts(self):
        s, _, st = self.slice("bad", driver="", nodeName="", allNodes=False, pool={"name": "", "resourceSliceCount": 0})
        self.assertEqual(s, 422, st)
        fields = sorted(c["field"] for c in st["details"]["causes"])
        self.assertEqual(fields, ["spec", "spec.driver", "spec.pool.name", "spec.pool.resourceSliceCount"])
        s, _, st = self.slice("two", allNodes=True)
        self.assertEqual(s, 422)
        self.assertIn("exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
                      st["message"])
        self.assertEqual(self.slice("ok")[0], 201)
        s, _, st = self.slice("ok")
        self.assertEqual((s, st["reason"], st["message"]), (409, "AlreadyExists",
                                                           'resourceslices.resource.k8s.io "ok" already exists'))
        s, _, st = self.call("GET", (self.BASE % "v1") + "?fieldSelector=spec.pool.name%3Dx")
        self.assertEqual((s, st["message"]), (400, "field label not supported: spec.pool.name"))

    def test_watch_with_node_selector_and_versions_not_served(self):
        t, out = self.watch((self.BASE % "v1beta1") + "?fieldSelector=spec.nodeName%3Dnode-a&resourceVersion=0", 2)
        time.sleep(0.3)
        self.slice("a")
        self.slice("b", node="node-b")
        t.join()
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"], e["object"]["apiVersion"]) for e in out],
                         [("ADDED", "a", "resource.k8s.io/v1beta1")])
        self.api.settings(resourceVersions=["v1beta2"])
        self.assertEqual(self.call("GET", self.BASE % "v1")[0], 404)
        self.assertEqual(self.call("GET", self.BASE % "v1beta2")[0], 200)
        s, _, groups = self.call("GET", "/apis")
        self.assertEqual(groups["groups"][0]["versions"], [{"groupVersion": "resource.k8s.io/v1beta2",
                                                            "version": "v1beta2"}])
        self.api.settings(resourceVersions=[])
        self.assertEqual(self.call("GET", "/apis")[2]["groups"], [])
        self.assertEqual(self.call("GET", "/apis/resource.k8s.io")[0], 404)
        self.assertEqual(self.call("GET", self.BASE % "v1beta2")[0], 404)
        with self.assertRaises(RuntimeError):
            self.api.settings(resourceVersions=["v1alpha3"])


class Watches(Server):
    def test_selector_transitions_are_added_and_deleted(self):
        self.call("POST", f"/api/v1/namespaces/{NS}/pods", pod("p1", {"app": "x"}))
        t, out = self.watch(f"/api/v1/namespaces/{NS}/pods?labelSelector=app%3Dy&resourceVersion=0", 2)
        time.sleep(0.3)
        for app in ("y", "z", "y"):
            s, _, _ = self.call("PATCH", f"/api/v1/namespaces/{NS}/pods/p1", {"metadata": {"labels": {"app": app}}},
                                MERGE)
            self.assertEqual(s, 200)
        t.join()
        self.assertEqual([e["type"] for e in out], ["ADDED", "DELETED", "ADDED"])
        self.assertEqual(out[1]["object"]["metadata"]["labels"]["app"], "z", "DELETED carries the new state")

    def test_bookmarks_only_when_asked(self):
        t1, plain = self.watch("/api/v1/nodes?resourceVersion=0", 1)
        t2, asked = self.watch("/api/v1/nodes?resourceVersion=0&allowWatchBookmarks=true", 1)
        t1.join()
        t2.join()
        self.assertEqual([e["type"] for e in plain], ["ADDED"])
        self.assertIn("BOOKMARK", [e["type"] for e in asked])

    def test_too_old_versions_are_gone(self):
        s, _, lst = self.call("GET", "/api/v1/nodes")
        old = lst["metadata"]["resourceVersion"]
        self.api.compact()
        t, out = self.watch("/api/v1/nodes?resourceVersion=" + str(int(old) - 1), 1)
        t.join()
        self.assertEqual(out[0]["type"], "ERROR")
        self.assertEqual(out[0]["object"]["code"], 410)
        for i in range(3):
            self.call("POST", f"/api/v1/namespaces/{NS}/pods", pod(f"q{i}"))
        s, _, page = self.call("GET", f"/api/v1/namespaces/{NS}/pods?limit=2")
        self.assertEqual((len(page["items"]), page["metadata"]["remainingItemCount"]), (2, 1))
        s, _, rest = self.call("GET", f"/api/v1/namespaces/{NS}/pods?limit=2&continue=" + page["metadata"]["continue"])
        self.assertEqual([p["metadata"]["name"] for p in rest["items"]], ["q2"])
        self.api.compact()
        s, _, body = self.call("GET", f"/api/v1/namespaces/{NS}/pods?limit=2&continue=" + page["metadata"]["continue"])
        self.assertEqual((s, body["reason"]), (410, "Expired"))


class Writes(Server):
    def test_strategic_merge_keys_and_directives(self):
        node = {"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Other", "status": "True"}]}}
        self.call("PATCH", "/api/v1/nodes/node-a/status", node, MERGE)
        s, _, n = self.call("PATCH", "/api/v1/nodes/node-a/status", {"status": {"conditions": [
            {"type": "GPUValidated", "status": "True"}, {"type": "Other", "$patch": "delete"}]}}, SMP)
        self.assertEqual(s, 200, n)
        self.assertEqual([c["type"] for c in n["status"]["conditions"]], ["Ready", "GPUValidated"])
        base = pod("p", containers=[{"name": "a", "image": "i:1", "env": [{"name": "X", "value": "1"}]},
                                    {"name": "b", "image": "i:1"}])
        out = patches.strategic_merge_patch(base, {"spec": {"containers": [
            {"name": "a", "env": [{"name": "Y", "value": "2"}]}]}})
        self.assertEqual([c["name"] for c in out["spec"]["containers"]], ["a", "b"])
        self.assertEqual([e["name"] for e in out["spec"]["containers"][0]["env"]], ["X", "Y"])
        out = patches.strategic_merge_patch(base, {"spec": {"containers": [{"name": "z", "image": "i:2"},
                                                                           {"$patch": "replace"}]}})
        self.assertEqual([c["name"] for c in out["spec"]["containers"]], ["z"])
        out = patches.strategic_merge_patch({"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}},
                                            {"spec": {"taints": [{"key": "b", "effect": "NoSchedule"}]}})
        self.assertEqual(out["spec"]["taints"], [{"key": "b", "effect": "NoSchedule"}],
                         "NodeSpec.taints has no patch strategy: replaced")

    def test_optimistic_concurrency(self):
        s, _, n = self.call("GET", "/api/v1/nodes/node-a")
        rv = n["metadata"]["resourceVersion"]
        s, _, _ = self.call("PATCH", "/api/v1/nodes/node-a", {"metadata": {"labels": {"a": "b"}, "resourceVersion": rv}},
                            MERGE)
        self.assertEqual(s, 200)
        for method, body, ctype in (("PATCH", {"metadata": {"resourceVersion": rv}}, MERGE),
                                    ("PUT", n, "application/json")):
            s, _, st = self.call(method, "/api/v1/nodes/node-a", body, ctype)
            self.assertEqual((s, st["reason"]), (409, "Conflict"), method)
        s, _, st = self.call("DELETE", "/api/v1/nodes/node-a", {"preconditions": {"uid": "other"}})
        self.assertEqual(s, 409)
        self.assertIn("Precondition failed: UID in precondition: other", st["message"])

    def test_validation_messages(self):
        bad = pod("Bad_Name", {"k": "v" * 64}, containers=[])
        s, _, st = self.call("POST", f"/api/v1/namespaces/{NS}/pods", bad)
        self.assertEqual((s, st["reason"]), (422, "Invalid"))
        self.assertTrue(st["message"].startswith('Pod "Bad_Name" is invalid: [metadata.name: Invalid value: '
                                                 '"Bad_Name": a lowercase RFC 1123 subdomain'), st["message"])
        fields = [c["field"] for c in st["details"]["causes"]]
        self.assertEqual(fields, ["metadata.name", "metadata.labels", "spec.containers"])
        dup = pod("d", containers=[{"name": "c", "image": "i"}, {"name": "c", "image": "i"}])
        s, _, st = self.call("POST", f"/api/v1/namespaces/{NS}/pods", dup)
        self.assertIn('spec.containers[1].name: Duplicate value: "c"', st["message"])
        gpu = pod("g", containers=[{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": "1"}}}])
        s, _, st = self.call("POST", f"/api/v1/namespaces/{NS}/pods", gpu)
        self.assertIn("Limit must be set for non overcommitable resources", st["message"])
        s, hdrs, _ = self.call("POST", f"/api/v1/namespaces/{NS}/pods", dict(pod("w"), extra=1))
        self.assertEqual(s, 201)
        self.assertIn('unknown field \\"extra\\"', hdrs.get("Warning", ""))
        s, _, st = self.call("POST", f"/api/v1/namespaces/{NS}/pods?fieldValidation=Strict", dict(pod("w2"), extra=1))
        self.assertEqual((s, st["message"]), (400, 'strict decoding error: unknown field "extra"'))
        s, _, st = self.call("POST", "/api/v1/namespaces/missing/pods", pod("m"))
        self.assertEqual((s, st["message"]), (404, 'namespaces "missing" not found'))
        s, _, st = self.call("POST", f"/api/v1/namespaces/{NS}/pods", raw="{not json")
        self.assertEqual((s, st["kind"]), (400, "Status"))
        s, _, st = self.call("POST", f"/api/v1/namespaces/{NS}/pods", raw="x" * (3 * 1024 * 1024 + 1))
        self.assertEqual(s, 413)

    def test_node_event_namespace_rule(self):
        ev = {"metadata": {"name": "node-a.1"}, "involvedObject": {"kind": "Node", "name": "node-a"},
              "reason": "R", "message": "m"}
        s, _, st = self.call("POST", f"/api/v1/namespaces/{NS}/events", ev)
        self.assertEqual(s, 422)
        self.assertIn('involvedObject.namespace: Invalid value: "": does not match event.namespace', st["message"])
        s, _, _ = self.call("POST", "/api/v1/namespaces/default/events", ev)
        self.assertEqual(s, 201)
        ev2 = dict(ev, metadata={"name": "node-a.2"}, eventTime="2026-01-01T00:00:00.000000Z")
        s, _, st = self.call("POST", "/api/v1/namespaces/default/events", ev2)
        self.assertIn("reportingComponent: Required value", st["message"])
        self.api.settings(relax=["node-event-namespace"])
        s, _, _ = self.call("POST", f"/api/v1/namespaces/{NS}/events", ev)
        self.assertEqual(s, 201, "the switch for tests of today's product")

    def test_graceful_deletion_of_bound_pods(self):
        self.api.kubelet(enabled=True, exitAfterMs=60000, terminateAfterMs=300)
        self.call("POST", f"/api/v1/namespaces/{NS}/pods", pod("b"))
        self.call("POST", f"/api/v1/namespaces/{NS}/pods", pod("u", node=None))
        s, _, gone = self.call("DELETE", f"/api/v1/namespaces/{NS}/pods/u")
        self.assertEqual(self.call("GET", f"/api/v1/namespaces/{NS}/pods/u")[0], 404, "unbound: at once")
        s, _, term = self.call("DELETE", f"/api/v1/namespaces/{NS}/pods/b")
        self.assertEqual(term["metadata"]["deletionGracePeriodSeconds"], 30)
        self.assertEqual(self.call("GET", f"/api/v1/namespaces/{NS}/pods/b")[0], 200, "bound: terminating")
        time.sleep(0.8)
        self.assertEqual(self.call("GET", f"/api/v1/namespaces/{NS}/pods/b")[0], 404, "stopped by the kubelet")


class Faults(Server):
    def test_reset_invalid_huge_non_status(self):
        self.api.fault(type="reset", path="/nodes/node-a")
        c = http.client.HTTPConnection("127.0.0.1", self.api.port, timeout=5)
        c.request("GET", "/api/v1/nodes/node-a", headers={"Authorization": "Bearer " + TOKEN})
        r = c.getresponse()
        with self.assertRaises((http.client.IncompleteRead, ConnectionResetError)):
            r.read()
        c.close()
        self.api.fault(type="invalid-json", path="/nodes/node-a")
        s, _, body = self.call("GET", "/api/v1/nodes/node-a")
        self.assertEqual(s, 200)
        self.assertIsInstance(body, str)
        self.api.fault(type="non-status", code=502, path="/nodes/node-a")
        s, hdrs, body = self.call("GET", "/api/v1/nodes/node-a")
        self.assertEqual((s, hdrs["Content-Type"]), (502, "text/html"))
        self.api.fault(type="huge", bytes=5 * 1024 * 1024, path="/nodes/node-a")
        s, hdrs, body = self.call("GET", "/api/v1/nodes/node-a")
        # Valid JSON of exactly the size asked for: a List with a long padding string.
        self.assertEqual(body["kind"], "List")
        self.assertEqual(len(json.dumps(body, separators=(",", ":"))) + 1, 5 * 1024 * 1024)

    def test_node_deletion_through_control(self):
        t, out = self.watch("/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a", 1)
        time.sleep(0.2)
        self.api.control("DELETE", "nodes/node-a")
        t.join()
        self.assertEqual([e["type"] for e in out], ["ADDED", "DELETED"])
        self.assertEqual(self.call("GET", "/api/v1/nodes/node-a")[0], 404)


class Rbac(Server):
    def setUp(self):
        rules = [
            {"kind": "ClusterRole", "metadata": {"name": "r"},
             "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]},
            {"kind": "ClusterRoleBinding", "metadata": {"name": "r"}, "roleRef": {"kind": "ClusterRole", "name": "r"},
             "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": NS}]},
            {"kind": "Role", "metadata": {"name": "p", "namespace": NS},
             "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]},
            {"kind": "RoleBinding", "metadata": {"name": "p", "namespace": NS}, "roleRef": {"kind": "Role", "name": "p"},
             "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": NS}]}]
        fd, path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(rules, f)
        self.addCleanup(os.unlink, path)
        self.extra = ("--rbac", path, "--rbac-user", f"system:serviceaccount:{NS}:sa")
        super().setUp()

    def test_denials_name_user_verb_resource_scope(self):
        self.assertEqual(self.call("GET", "/api/v1/nodes/node-a")[0], 200)
        self.assertEqual(self.call("POST", f"/api/v1/namespaces/{NS}/pods", pod("p"))[0], 201)
        s, _, st = self.call("PATCH", "/api/v1/nodes/node-a/status", {"status": {}}, MERGE)
        self.assertEqual((s, st["reason"]), (403, "Forbidden"))
        self.assertEqual(st["message"], f'nodes "node-a" is forbidden: User "system:serviceaccount:{NS}:sa" cannot '
                                        'patch resource "nodes/status" in API group "" at the cluster scope')
        s, _, st = self.call("GET", f"/api/v1/namespaces/{NS}/pods")
        self.assertEqual(st["message"], f'pods is forbidden: User "system:serviceaccount:{NS}:sa" cannot list '
                                        f'resource "pods" in API group "" in the namespace "{NS}"')
        self.assertEqual(self.call("GET", "/version")[0], 200, "discovery is open to every authenticated user")


if __name__ == "__main__":
    import unittest
    unittest.main()
