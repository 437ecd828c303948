# SPDX-License-Identifier: Apache-2.0
"""Discovery documents of the test API server: /version, /api, /api/v1, /apis and OpenAPI v3.

Shapes follow kube-apiserver (Kubernetes API reference: "API discovery", "OpenAPI v3").  Only
core/v1 pods, pods/log, pods/status, nodes, nodes/status, events and namespaces, and
resource.k8s.io resourceslices (in the versions the store serves: v1, v1beta2, v1beta1 by
default, none to model a cluster without Dynamic Resource Allocation) are served, so only they
are listed.  The OpenAPI v3 document covers core/v1 only.  The OpenAPI v3 document declares, per path, the query parameters that
kubectl looks for (fieldValidation, dryRun) and the x-kubernetes-group-version-kind of each
operation: kubectl then leaves schema validation to the server (`fieldValidation=Strict`), as it
does with a real one.  The schemas are deliberately loose (type object): this server validates
objects itself (kube_validation.py).
"""

import hashlib
import json

VERSION = {"major": "1", "minor": "35", "emulationMajor": "1", "emulationMinor": "35",
           "minCompatibilityMajor": "1", "minCompatibilityMinor": "34",
           "gitVersion": "v1.35.0-gv-test", "gitCommit": "0000000000000000000000000000000000000000",
           "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25.0",
           "compiler": "gc", "platform": "linux/amd64"}

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

# name -> (kind, namespaced, verbs, short names)
RESOURCES = {
    "pods": ("Pod", True, ALL_VERBS, ["po"]),
    "pods/log": ("Pod", True, ["get"], []),
    "pods/status": ("Pod", True, ["get", "patch", "update"], []),
    "nodes": ("Node", False, ALL_VERBS, ["no"]),
    "nodes/status": ("Node", False, ["get", "patch", "update"], []),
    "events": ("Event", True, ALL_VERBS, ["ev"]),
    "namespaces": ("Namespace", False, ["create", "delete", "get", "list", "patch", "update", "watch"], ["ns"]),
    "namespaces/status": ("Namespace", False, ["get", "patch", "update"], []),
}

KINDS = {"pods": "Pod", "nodes": "Node", "events": "Event", "namespaces": "Namespace"}
NAMESPACED = {"pods": True, "nodes": False, "events": True, "namespaces": False}


# API groups: resource -> (group, kind, verbs).  Each is served in the versions the store lists
# (settings "resourceVersions"); a version not served answers 404 like kube-apiserver.
GROUP_RESOURCES = {"resourceslices": ("resource.k8s.io", "ResourceSlice", ALL_VERBS)}
RESOURCE_GROUP = "resource.k8s.io"
# kube-apiserver 1.34+ serves resource.k8s.io v1 (GA), v1beta2 and v1beta1; v1 is preferred.
RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1")


def kind_of(resource):
    """The kind of a core or group resource."""
    return KINDS[resource] if resource in KINDS else GROUP_RESOURCES[resource][1]


def namespaced(resource):
    return NAMESPACED.get(resource, False)


def _group_versions(versions):
    return [{"groupVersion": "%s/%s" % (RESOURCE_GROUP, v), "version": v} for v in versions]


def api_group(versions):
    """/apis/resource.k8s.io: APIGroup, or None when no version is served."""
    if not versions:
        return None
    gv = _group_versions(versions)
    return {"kind": "APIGroup", "apiVersion": "v1", "name": RESOURCE_GROUP, "versions": gv, "preferredVersion": gv[0]}


def group_resource_list(version):
    out = []
    for name, (group, kind, verbs) in GROUP_RESOURCES.items():
        out.append({"name": name, "singularName": kind.lower(), "namespaced": False, "kind": kind, "verbs": verbs,
                    "storageVersionHash": hashlib.sha256(("%s/%s" % (group, name)).encode()).hexdigest()[:11]})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "%s/%s" % (RESOURCE_GROUP, version),
            "resources": out}


def api_versions(server_address):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def api_group_list(versions=RESOURCE_VERSIONS):
    g = api_group(versions)
    groups = [{k: g[k] for k in ("name", "versions", "preferredVersion")}] if g else []
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_resource_list():
    out = []
    for name, (kind, namespaced, verbs, short) in RESOURCES.items():
        r = {"name": name, "singularName": "" if "/" in name else kind.lower(), "namespaced": namespaced,
             "kind": kind, "verbs": verbs}
        if short:
            r["shortNames"] = short
        if "/" not in name:
            r["storageVersionHash"] = hashlib.sha256(name.encode()).hexdigest()[:11]
        out.append(r)
    return {"kind": "APIResourceList", "groupVersion": "v1", "resources": out}


def _params(names):
    return [{"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}} for n in names]


def _op(verb, kind, action, op_id):
    return {"operationId": op_id, "tags": ["core_v1"],
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": kind},
            "responses": {"200": {"description": "OK", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/io.k8s.api.core.v1.%s" % kind}}}}},
            "parameters": _params(["dryRun", "fieldManager"] + (["fieldValidation"] if verb in
                                                                ("post", "put", "patch") else []))}


def openapi_v3_core():
    """The OpenAPI v3 document of core/v1 (as /openapi/v3/api/v1 serves it)."""
    paths = {}
    for res, kind in KINDS.items():
        base = "/api/v1/namespaces/{namespace}/" + res if NAMESPACED[res] else "/api/v1/" + res
        path_params = ([{"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}}]
                       if NAMESPACED[res] else [])
        paths[base] = {"get": _op("get", kind, "list", "list%s" % kind),
                       "post": _op("post", kind, "post", "create%s" % kind),
                       "parameters": path_params + _params(["pretty", "fieldValidation", "dryRun", "fieldManager"])}
        one = {"get": _op("get", kind, "get", "read%s" % kind),
               "put": _op("put", kind, "put", "replace%s" % kind),
               "patch": _op("patch", kind, "patch", "patch%s" % kind),
               "delete": _op("delete", kind, "delete", "delete%s" % kind),
               "parameters": path_params + [{"name": "name", "in": "path", "required": True,
                                             "schema": {"type": "string"}}]
               + _params(["pretty", "fieldValidation", "dryRun", "fieldManager", "force"])}
        paths[base + "/{name}"] = one
        if res in ("pods", "nodes", "namespaces"):
            st = {"get": _op("get", kind, "get", "read%sStatus" % kind),
                  "put": _op("put", kind, "put", "replace%sStatus" % kind),
                  "patch": _op("patch", kind, "patch", "patch%sStatus" % kind),
                  "parameters": one["parameters"]}
            paths[base + "/{name}/status"] = st
    schemas = {}
    for kind in KINDS.values():
        schemas["io.k8s.api.core.v1.%s" % kind] = {
            "type": "object", "description": "core/v1 %s (validated by the test API server itself)" % kind,
            "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": kind}]}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": VERSION["gitVersion"]},
            "paths": paths, "components": {"schemas": schemas}}


_CORE_DOC = json.dumps(openapi_v3_core(), sort_keys=True)
_CORE_HASH = hashlib.sha512(_CORE_DOC.encode()).hexdigest()[:64].upper()


def openapi_v3_root():
    return {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=" + _CORE_HASH}}}


def openapi_v3_core_text():
    return _CORE_DOC


def lookup(path, server_address, versions=RESOURCE_VERSIONS):
    """The discovery document for @path, or None when it is not a discovery path.  @versions: the
    resource.k8s.io versions served."""
    if path == "/version":
        return VERSION
    if path == "/api":
        return api_versions(server_address)
    if path == "/api/v1":
        return api_resource_list()
    if path == "/apis":
        return api_group_list(versions)
    if path == "/apis/" + RESOURCE_GROUP:
        return api_group(versions)
    for v in versions:
        if path == "/apis/%s/%s" % (RESOURCE_GROUP, v):
            return group_resource_list(v)
    if path == "/openapi/v3":
        return openapi_v3_root()
    return None
