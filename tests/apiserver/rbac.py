# SPDX-License-Identifier: Apache-2.0
"""The optional RBAC mode of the test API server: every API request is authorised against the
Roles, ClusterRoles, RoleBindings and ClusterRoleBindings of a JSON list of objects (e.g. the
output of `helm template` of deploy/helm/gpu-validator turned into JSON), as kube-apiserver's
RBAC authorizer does (Kubernetes docs: "Using RBAC Authorization").

The user is the one the bearer token stands for (`--rbac-user`, e.g.
`system:serviceaccount:gpu-operator:gpu-validator`); its groups are `system:authenticated` and,
for a service account, `system:serviceaccounts` and `system:serviceaccounts:NS`.  The
discovery paths (/api, /apis, /version, /openapi/*, /healthz) are allowed for every
authenticated user, as the default `system:discovery` and `system:public-info-viewer` roles do.
A denial is a 403 Status with kube-apiserver's message.
"""

import json

DISCOVERY_PREFIXES = ("/api", "/apis", "/version", "/openapi", "/healthz", "/livez", "/readyz")


def verb_of(method, name, query):
    """The RBAC verb of a request (k8s.io/apiserver pkg/endpoints/request RequestInfo)."""
    watch = query.get("watch") in ("1", "t", "T", "true", "TRUE", "True")
    if method == "GET":
        if watch:
            return "watch"
        return "get" if name else "list"
    return {"POST": "create", "PUT": "update", "PATCH": "patch",
            "DELETE": "delete" if name else "deletecollection"}.get(method, method.lower())


class Authorizer:
    def __init__(self, objects, user):
        self.user = user
        self.groups = ["system:authenticated"]
        if user.startswith("system:serviceaccount:"):
            ns = user.split(":")[2]
            self.groups += ["system:serviceaccounts", "system:serviceaccounts:" + ns]
        self.roles = {}          # (namespace, name) -> rules
        self.cluster_roles = {}  # name -> rules
        self.bindings = []       # (namespace or None, roleRef, subjects)
        for o in objects:
            if not isinstance(o, dict):
                continue
            kind, md = o.get("kind"), o.get("metadata") or {}
            if kind == "Role":
                self.roles[(md.get("namespace") or "default", md.get("name"))] = o.get("rules") or []
            elif kind == "ClusterRole":
                self.cluster_roles[md.get("name")] = o.get("rules") or []
            elif kind == "RoleBinding":
                self.bindings.append((md.get("namespace") or "default", o.get("roleRef") or {},
                                      o.get("subjects") or []))
            elif kind == "ClusterRoleBinding":
                self.bindings.append((None, o.get("roleRef") or {}, o.get("subjects") or []))

    @classmethod
    def from_file(cls, path, user):
        with open(path) as f:
            data = json.load(f)
        if isinstance(data, dict):
            data = data.get("items", [data])
        return cls(data, user)

    def _subject_matches(self, s, binding_ns):
        kind, name = s.get("kind"), s.get("name")
        if kind == "User":
            return name == self.user
        if kind == "Group":
            return name in self.groups
        if kind == "ServiceAccount":
            return self.user == "system:serviceaccount:%s:%s" % (s.get("namespace") or binding_ns, name)
        return False

    def _rules(self, ns):
        """The rules that apply to the user in namespace @ns (None: cluster scope)."""
        for bns, ref, subjects in self.bindings:
            if bns is not None and bns != ns:
                continue
            if not any(self._subject_matches(s, bns) for s in subjects):
                continue
            if ref.get("kind") == "ClusterRole":
                yield from self.cluster_roles.get(ref.get("name"), [])
            elif ref.get("kind") == "Role" and bns is not None:
                yield from self.roles.get((bns, ref.get("name")), [])

    @staticmethod
    def _has(lst, value):
        lst = lst or []
        return "*" in lst or value in lst

    def allowed(self, verb, resource, sub, ns, name, group=""):
        res = resource + ("/" + sub if sub else "")
        for rule in self._rules(ns):
            if not self._has(rule.get("apiGroups"), group):
                continue
            if not (self._has(rule.get("resources"), res) or (sub and "*/" + sub in (rule.get("resources") or []))):
                continue
            if not self._has(rule.get("verbs"), verb):
                continue
            names = rule.get("resourceNames")
            if names and (name is None or name not in names):
                continue
            return True
        return False

    def allowed_path(self, path):
        return path in ("/api", "/apis", "/version") or path.startswith(DISCOVERY_PREFIXES)

    def forbidden(self, verb, resource, sub, ns, name, group=""):
        """The 403 Status kube-apiserver answers with."""
        res = resource + ("/" + sub if sub else "")
        qualified = resource + "." + group if group else resource
        what = '%s "%s"' % (qualified, name) if name else qualified
        where = 'in the namespace "%s"' % ns if ns else "at the cluster scope"
        msg = '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s" %s' % (
            what, self.user, verb, res, group, where)
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": msg,
                "reason": "Forbidden",
                "details": dict({"name": name, "kind": resource} if name else {"kind": resource},
                                **({"group": group} if group else {})),
                "code": 403}
