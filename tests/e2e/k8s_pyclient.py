"""Scenarios of the official Kubernetes Python client (Debian python3-kubernetes) against the
test API server, run by test_apiserver_conformance.py under a Python that has the client:
`k8s_pyclient.py SCENARIO` with KUBECONFIG, GV_NS and GV_POD_CUDA/GV_POD_PLUGIN (rendered pods,
JSON) in the environment.  Exits non-zero with a message when the client and the server
disagree."""
import json
import os
import sys
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

NS = os.environ.get("GV_NS", "gpu-operator")
SMP = "application/strategic-merge-patch+json"


def api(content_type=None):
    config.load_kube_config(os.environ["KUBECONFIG"])
    c = client.ApiClient()
    if content_type:
        # This client version sends every patch as application/json-patch+json; a default
        # header wins over the one it picks.
        c.set_default_header("Content-Type", content_type)
    return client.CoreV1Api(c)


def expect_status(code, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except ApiException as e:
        assert e.status == code, "expected %d, got %d: %s" % (code, e.status, e.body)
        body = json.loads(e.body)
        assert body["kind"] == "Status" and body["code"] == code, body
        return body
    raise AssertionError("expected HTTP %d from %s" % (code, fn.__name__))


def version_get_list():
    v = client.VersionApi(api().api_client).get_code()
    assert v.major == "1" and v.git_version.startswith("v1."), v
    core = api()
    nodes = core.list_node()
    assert [n.metadata.name for n in nodes.items] == ["node-a"], nodes
    node = core.read_node("node-a")
    assert node.status.capacity["nvidia.com/gpu"] == "1"
    assert any(n.metadata.name == NS for n in core.list_namespace().items)
    body = expect_status(404, core.read_namespaced_pod, "nope", NS)
    assert body["reason"] == "NotFound" and body["details"]["kind"] == "pods", body


def create_watch_delete():
    core = api()
    created = core.create_namespaced_pod(NS, json.loads(os.environ["GV_POD_CUDA"]))
    name = created.metadata.name
    assert created.status.phase == "Pending"
    seen = []
    w = watch.Watch()
    deleted_at = None
    for ev in w.stream(core.list_namespaced_pod, NS, field_selector="metadata.name=" + name, timeout_seconds=20):
        pod = ev["object"]
        seen.append((ev["type"], pod.status.phase, pod.metadata.deletion_timestamp is not None))
        if ev["type"] == "MODIFIED" and pod.status.phase == "Running" and deleted_at is None:
            deleted = core.delete_namespaced_pod(name, NS, body=client.V1DeleteOptions(grace_period_seconds=5))
            assert deleted.metadata.deletion_timestamp is not None, deleted.metadata
            assert deleted.metadata.deletion_grace_period_seconds == 5
            deleted_at = time.monotonic()
        if ev["type"] == "DELETED":
            w.stop()
    types = [s[0] for s in seen]
    assert types[0] == "ADDED" and types[-1] == "DELETED", seen
    assert any(t == "MODIFIED" and term for t, _, term in seen), "graceful: a MODIFIED with deletionTimestamp: %s" % seen
    expect_status(404, core.read_namespaced_pod, name, NS)
    plugin = core.create_namespaced_pod(NS, json.loads(os.environ["GV_POD_PLUGIN"]), dry_run="All")
    assert plugin.metadata.name.startswith("nvidia-device-plugin-validator-")
    assert core.list_namespaced_pod(NS).items == [], "a dry run stores nothing"


def patch_node_status():
    smp = api(SMP)
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ok",
             "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    smp.patch_node_status("node-a", {"status": {"conditions": [ready]}})
    node = smp.patch_node_status("node-a", {"status": {"conditions": [
        {"type": "GPUValidated", "status": "True", "reason": "Validated", "message": "all passed"}]}})
    conds = {c.type: c.status for c in node.status.conditions}
    assert conds == {"Ready": "True", "GPUValidated": "True"}, conds
    rv = node.metadata.resource_version
    smp.patch_node("node-a", {"metadata": {"labels": {"nvidia.com/gpu.validated": "true"}, "resourceVersion": rv}})
    body = expect_status(409, smp.patch_node, "node-a", {"metadata": {"labels": {"x": "y"}, "resourceVersion": rv}})
    assert body["reason"] == "Conflict" and "the object has been modified" in body["message"], body
    # As this client sends it by default: a JSON patch.
    jp = api()
    node = jp.patch_node("node-a", [{"op": "add", "path": "/spec/taints",
                                     "value": [{"key": "nvidia.com/gpu.not-validated", "effect": "NoSchedule"}]}])
    assert node.spec.taints[0].key == "nvidia.com/gpu.not-validated"
    body = expect_status(422, jp.patch_node, "node-a", [{"op": "add", "path": "/spec/taints/-",
                                                         "value": {"key": "bad key!", "effect": "NoSchedule"}}])
    assert "spec.taints[1].key" in body["message"], body


def events_and_errors():
    core = api()
    node = core.read_node("node-a")
    ev = client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="node-a.gv", namespace="default"),
        involved_object=client.V1ObjectReference(kind="Node", name="node-a", uid=node.metadata.uid, api_version="v1"),
        reason="GPUValidated", message="all passed", type="Normal",
        source=client.V1EventSource(component="gpu-validator", host="node-a"), count=1)
    made = core.create_namespaced_event("default", ev)
    assert made.metadata.uid and made.reason == "GPUValidated"
    ev.metadata = client.V1ObjectMeta(name="node-a.gv", namespace=NS)
    body = expect_status(422, core.create_namespaced_event, NS, ev)
    assert body["reason"] == "Invalid" and body["details"]["causes"][0]["field"] == "involvedObject.namespace", body
    listed = core.list_namespaced_event("default", field_selector="involvedObject.name=node-a")
    assert [e.metadata.name for e in listed.items] == ["node-a.gv"], listed
    pod = json.loads(os.environ["GV_POD_CUDA"])
    pod["spec"]["containers"] = []
    body = expect_status(422, core.create_namespaced_pod, NS, pod)
    assert "spec.containers: Required value" in body["message"], body
    created = core.create_namespaced_pod(NS, json.loads(os.environ["GV_POD_PLUGIN"]))
    body = expect_status(409, core.delete_namespaced_pod, created.metadata.name, NS,
                         body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-the-uid")))
    assert "Precondition failed: UID in precondition: not-the-uid" in body["message"], body


def resource_slices():
    """resource.k8s.io through the dynamic client (this client version has no typed
    ResourceSlice API): discovery finds the group and its preferred version, create, list with
    the field selectors the validator sends, v1beta1's shape, and the 400 of an unsupported
    field."""
    from kubernetes import dynamic
    dyn = dynamic.DynamicClient(api().api_client)
    rs = dyn.resources.get(api_version="resource.k8s.io/v1", kind="ResourceSlice")
    assert rs.name == "resourceslices" and not rs.namespaced, rs
    preferred = dyn.resources.get(group="resource.k8s.io", kind="ResourceSlice", preferred=True)
    assert preferred.group_version == "resource.k8s.io/v1", preferred
    dev = {"name": "gpu-0", "attributes": {"type": {"string": "gpu"}, "uuid": {"string": "GPU-a"}}}
    for name, node, drv in (("a-gpu", "node-a", "gpu.nvidia.com"), ("a-nic", "node-a", "dra.net.example.com"),
                            ("b-gpu", "node-b", "gpu.nvidia.com")):
        made = rs.create(body={"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                               "metadata": {"name": name},
                               "spec": {"driver": drv, "nodeName": node, "devices": [dev],
                                        "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}})
        assert made.metadata.name == name and made.metadata.resourceVersion, made
    got = rs.get(field_selector="spec.nodeName=node-a,spec.driver=gpu.nvidia.com")
    assert got.kind == "ResourceSliceList" and [i.metadata.name for i in got.items] == ["a-gpu"], got
    assert got.items[0].spec.devices[0].attributes.uuid.string == "GPU-a", got
    assert sorted(i.metadata.name for i in rs.get(field_selector="spec.nodeName=node-a").items) == ["a-gpu", "a-nic"]
    beta = dyn.resources.get(api_version="resource.k8s.io/v1beta1", kind="ResourceSlice")
    one = beta.get(name="a-gpu")
    assert one.apiVersion == "resource.k8s.io/v1beta1", one
    assert one.spec.devices[0].basic.attributes.uuid.string == "GPU-a", one
    try:
        rs.get(field_selector="spec.pool.name=node-a")
    except dynamic.exceptions.BadRequestError as e:
        body = e.body.decode() if isinstance(e.body, bytes) else e.body
        assert "field label not supported: spec.pool.name" in body, body
    else:
        raise AssertionError("an unsupported field selector must be a 400")


SCENARIOS = {f.__name__: f for f in (version_get_list, create_watch_delete, patch_node_status, events_and_errors,
                                     resource_slices)}

if __name__ == "__main__":
    SCENARIOS[sys.argv[1]]()
    print("ok", sys.argv[1])
