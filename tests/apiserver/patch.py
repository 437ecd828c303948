# SPDX-License-Identifier: Apache-2.0
"""The three patch types of kube-apiserver: JSON merge patch (RFC 7386), JSON patch (RFC 6902)
and strategic merge patch with the merge keys of the core/v1 types we serve.

Strategic merge patch (Kubernetes docs: "Update API Objects in Place Using kubectl patch",
and the patchStrategy/patchMergeKey tags of k8s.io/api/core/v1/types.go): a list whose Go field
has `patchStrategy:"merge"` is merged element by element on its merge key; every other list is
replaced whole (NodeSpec.taints and PodSpec.tolerations carry no strategy: replaced, as on a real
server).  Directives: `$patch: delete` (in a map: remove it; in a list element: remove the
element with that key), `$patch: replace` (in a map: replace it; as a list element: replace
the list), `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>` (accepted, order kept
as it is), `$retainKeys` (keep only these keys).
"""

import copy

# Merge keys by path of field names from the object root ("*" = any list element).  Only the
# fields with patchStrategy merge in k8s.io/api/core/v1 that our resources use.
_POD_SPEC = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "volumes": "name", "imagePullSecrets": "name", "hostAliases": "ip",
}
_CONTAINER = {"env": "name", "ports": "containerPort", "volumeMounts": "mountPath", "volumeDevices": "devicePath"}
MERGE_KEYS = {
    ("metadata", "ownerReferences"): "uid",
    ("status", "conditions"): "type",          # PodStatus, NodeStatus, NamespaceStatus
    ("status", "addresses"): "type",           # NodeStatus
}
for _f, _k in _POD_SPEC.items():
    MERGE_KEYS[("spec", _f)] = _k
for _c in ("containers", "initContainers", "ephemeralContainers"):
    for _f, _k in _CONTAINER.items():
        MERGE_KEYS[("spec", _c, "*", _f)] = _k
# Lists of scalars with patchStrategy merge: merged as sets.
SET_LISTS = {("metadata", "finalizers"), ("spec", "finalizers")}


class PatchError(ValueError):
    """A patch that cannot be applied (kube-apiserver answers 422 or 400)."""


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
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


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError("bad JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            cur = cur[int(p)]
        elif isinstance(cur, dict):
            cur = cur[p]
        else:
            raise PatchError("path segment %r into a scalar" % p)
    return cur


def json_patch(doc, ops):
    """RFC 6902: add, remove, replace, move, copy, test."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(doc)
    try:
        for op in ops:
            kind, parts = op["op"], _pointer(op["path"])
            if not parts:
                raise PatchError("cannot patch the root")
            if kind in ("move", "copy"):
                src = _pointer(op["from"])
                value = copy.deepcopy(_walk(doc, src))
                if kind == "move":
                    _remove(doc, src)
                _add(doc, parts, value)
            elif kind == "add":
                _add(doc, parts, op["value"])
            elif kind == "replace":
                _remove(doc, parts)
                _add(doc, parts, op["value"])
            elif kind == "remove":
                _remove(doc, parts)
            elif kind == "test":
                if _walk(doc, parts) != op.get("value"):
                    raise PatchError("testing value %s failed" % op["path"])
            else:
                raise PatchError("Unexpected kind: %s" % kind)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        if isinstance(e, PatchError):
            raise
        raise PatchError("%s: %s" % (type(e).__name__, e)) from None
    return doc


def _add(doc, parts, value):
    parent, last = _walk(doc, parts[:-1]), parts[-1]
    if isinstance(parent, list):
        if last == "-":
            parent.append(value)
        else:
            i = int(last)
            if i < 0 or i > len(parent):
                raise PatchError("add operation index %d out of bounds" % i)
            parent.insert(i, value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise PatchError("add into a scalar")


def _remove(doc, parts):
    parent, last = _walk(doc, parts[:-1]), parts[-1]
    if isinstance(parent, list):
        del parent[int(last)]
    else:
        if last not in parent:
            raise PatchError("remove operation does not apply: doc is missing path: /%s" % "/".join(parts))
        del parent[last]


def strategic_merge_patch(target, patch):
    """Apply a strategic merge patch to the object @target (not changed); returns the result."""
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object")
    return _smp_map(copy.deepcopy(target) if isinstance(target, dict) else {}, patch, ())


def _key_for(path):
    for pattern, key in MERGE_KEYS.items():
        if len(pattern) == len(path) and all(p == "*" or p == q for p, q in zip(pattern, path)):
            return key
    return None


def _smp_map(target, patch, path):
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    if directive is not None:
        raise PatchError("Unknown patch type: %s" % directive)
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k in ("$retainKeys",):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(target.get(field), list) and isinstance(v, list):
                target[field] = [x for x in target[field] if x not in v]
            continue
        if v is None:
            target.pop(k, None)
            continue
        sub = path + (k,)
        cur = target.get(k)
        if isinstance(v, dict):
            res = _smp_map(cur if isinstance(cur, dict) else {}, v, sub)
            if res is None:
                target.pop(k, None)
            else:
                target[k] = res
        elif isinstance(v, list):
            target[k] = _smp_list(cur if isinstance(cur, list) else [], v, sub)
        else:
            target[k] = v
    if isinstance(retain, list):
        for k in list(target):
            if k not in retain:
                del target[k]
    return target


def _smp_list(target, patch, path):
    if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in patch):
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and x.get("$patch") == "replace")]
    if path in SET_LISTS:
        out = list(target)
        for x in patch:
            if x not in out:
                out.append(x)
        return out
    key = _key_for(path)
    if key is None:
        return [copy.deepcopy(x) for x in patch]
    out = list(target)
    for x in patch:
        if not isinstance(x, dict):
            raise PatchError("%s: a list with merge key %r holds a non-object" % (".".join(path), key))
        if key not in x:
            raise PatchError("map: %s does not contain declared merge key: %s" % (x, key))
        idx = next((i for i, y in enumerate(out) if isinstance(y, dict) and y.get(key) == x[key]), None)
        if x.get("$patch") == "delete":
            if idx is not None:
                del out[idx]
            continue
        if idx is None:
            out.append(_smp_map({}, x, path + ("*",)))
        else:
            out[idx] = _smp_map(out[idx], x, path + ("*",))
    return out
