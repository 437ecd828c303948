# SPDX-License-Identifier: Apache-2.0
"""Object validation of the test API server, after kube-apiserver's (k8s.io/kubernetes
pkg/apis/core/validation, apimachinery pkg/util/validation): the rules for the fields that
gpu-validator and its tests send.  Standard library only.

Two stages, as on the real server:
1. decoding (`decode_check`): the JSON must fit the type -- unknown fields (strict decoding: 400
   `strict decoding error: unknown field "spec.foo"`, or a `Warning` header), wrong JSON types,
   bad quantities and timestamps (400 BadRequest);
2. validation (`validate_*`): a list of field errors, answered as 422 Invalid with kube-apiserver's
   message shape `Pod "x" is invalid: spec.containers: Required value`.

The field schemas below are the core/v1 fields as of Kubernetes 1.35 for the parts we send in
detail; parts we never send are accepted as any JSON ("any") and not validated.
"""

import re
from decimal import Decimal, InvalidOperation

ANY, STR, INT, BOOL, MAP, TIME, QTY = "any", "str", "int", "bool", "map", "time", "qty"

OWNER_REF = {"apiVersion": STR, "kind": STR, "name": STR, "uid": STR, "controller": BOOL,
             "blockOwnerDeletion": BOOL}
OBJECT_META = {"name": STR, "generateName": STR, "namespace": STR, "selfLink": STR, "uid": STR,
               "resourceVersion": STR, "generation": INT, "creationTimestamp": TIME, "deletionTimestamp": TIME,
               "deletionGracePeriodSeconds": INT, "labels": MAP, "annotations": MAP,
               "ownerReferences": [OWNER_REF], "finalizers": [STR], "managedFields": [ANY]}
RESOURCES = {"limits": {"*": QTY}, "requests": {"*": QTY}, "claims": [ANY]}
VOLUME_MOUNT = {"name": STR, "readOnly": BOOL, "recursiveReadOnly": STR, "mountPath": STR, "subPath": STR,
                "mountPropagation": STR, "subPathExpr": STR}
CONTAINER_SC = {"capabilities": {"add": [STR], "drop": [STR]}, "privileged": BOOL, "seLinuxOptions": ANY,
                "windowsOptions": ANY, "runAsUser": INT, "runAsGroup": INT, "runAsNonRoot": BOOL,
                "readOnlyRootFilesystem": BOOL, "allowPrivilegeEscalation": BOOL, "procMount": STR,
                "seccompProfile": ANY, "appArmorProfile": ANY}
CONTAINER = {"name": STR, "image": STR, "command": [STR], "args": [STR], "workingDir": STR,
             "ports": [{"name": STR, "hostPort": INT, "containerPort": INT, "protocol": STR, "hostIP": STR}],
             "envFrom": [ANY], "env": [{"name": STR, "value": STR, "valueFrom": ANY}], "resources": RESOURCES,
             "resizePolicy": [ANY], "restartPolicy": STR, "restartPolicyRules": [ANY],
             "volumeMounts": [VOLUME_MOUNT], "volumeDevices": [ANY], "livenessProbe": ANY, "readinessProbe": ANY,
             "startupProbe": ANY, "lifecycle": ANY, "terminationMessagePath": STR, "terminationMessagePolicy": STR,
             "imagePullPolicy": STR, "securityContext": CONTAINER_SC, "stdin": BOOL, "stdinOnce": BOOL,
             "tty": BOOL}
VOLUME = {"name": STR, "hostPath": {"path": STR, "type": STR}, "emptyDir": {"medium": STR, "sizeLimit": QTY},
          "configMap": {"name": STR, "items": [ANY], "defaultMode": INT, "optional": BOOL},
          "secret": {"secretName": STR, "items": [ANY], "defaultMode": INT, "optional": BOOL},
          "projected": ANY, "downwardAPI": ANY, "persistentVolumeClaim": ANY, "csi": ANY, "ephemeral": ANY,
          "image": ANY, "nfs": ANY}
TOLERATION = {"key": STR, "operator": STR, "value": STR, "effect": STR, "tolerationSeconds": INT}
POD_SPEC = {"volumes": [VOLUME], "initContainers": [CONTAINER], "containers": [CONTAINER],
            "ephemeralContainers": [ANY], "restartPolicy": STR, "terminationGracePeriodSeconds": INT,
            "activeDeadlineSeconds": INT, "dnsPolicy": STR, "nodeSelector": MAP, "serviceAccountName": STR,
            "serviceAccount": STR, "automountServiceAccountToken": BOOL, "nodeName": STR, "hostNetwork": BOOL,
            "hostPID": BOOL, "hostIPC": BOOL, "shareProcessNamespace": BOOL, "securityContext": ANY,
            "imagePullSecrets": [{"name": STR}], "hostname": STR, "subdomain": STR, "affinity": ANY,
            "schedulerName": STR, "tolerations": [TOLERATION], "hostAliases": [ANY], "priorityClassName": STR,
            "priority": INT, "dnsConfig": ANY, "readinessGates": [ANY], "runtimeClassName": STR,
            "enableServiceLinks": BOOL, "preemptionPolicy": STR, "overhead": {"*": QTY},
            "topologySpreadConstraints": [ANY], "setHostnameAsFQDN": BOOL, "os": ANY, "hostUsers": BOOL,
            "schedulingGates": [ANY], "resourceClaims": [ANY], "resources": RESOURCES, "hostnameOverride": STR}
CONDITION = {"type": STR, "status": STR, "lastProbeTime": TIME, "lastHeartbeatTime": TIME,
             "lastTransitionTime": TIME, "reason": STR, "message": STR, "observedGeneration": INT}
POD = {"kind": STR, "apiVersion": STR, "metadata": OBJECT_META, "spec": POD_SPEC, "status": ANY}
TAINT = {"key": STR, "value": STR, "effect": STR, "timeAdded": TIME}
NODE = {"kind": STR, "apiVersion": STR, "metadata": OBJECT_META,
        "spec": {"podCIDR": STR, "podCIDRs": [STR], "providerID": STR, "unschedulable": BOOL, "taints": [TAINT],
                 "configSource": ANY, "externalID": STR},
        "status": {"capacity": {"*": QTY}, "allocatable": {"*": QTY}, "phase": STR, "conditions": [CONDITION],
                   "addresses": [{"type": STR, "address": STR}], "daemonEndpoints": ANY, "nodeInfo": ANY,
                   "images": [ANY], "volumesInUse": [STR], "volumesAttached": [ANY], "config": ANY,
                   "runtimeHandlers": [ANY], "features": ANY, "declaredFeatures": [STR]}}
EVENT = {"kind": STR, "apiVersion": STR, "metadata": OBJECT_META,
         "involvedObject": {"kind": STR, "namespace": STR, "name": STR, "uid": STR, "apiVersion": STR,
                            "resourceVersion": STR, "fieldPath": STR},
         "reason": STR, "message": STR, "source": {"component": STR, "host": STR}, "firstTimestamp": TIME,
         "lastTimestamp": TIME, "count": INT, "type": STR, "eventTime": TIME, "series": ANY, "action": STR,
         "related": ANY, "reportingComponent": STR, "reportingInstance": STR}
NAMESPACE = {"kind": STR, "apiVersion": STR, "metadata": OBJECT_META, "spec": {"finalizers": [STR]},
             "status": ANY}
# resource.k8s.io ResourceSlice in its v1 (and v1beta2) shape; v1beta1 objects are converted to it
# first (their devices[].basic holds what v1 has on the device itself).
DEVICE_ATTRIBUTE = {"int": INT, "bool": BOOL, "string": STR, "version": STR}
DEVICE = {"name": STR, "attributes": {"*": DEVICE_ATTRIBUTE}, "capacity": {"*": {"value": QTY, "requestPolicy": ANY}},
          "consumesCounters": ANY, "nodeName": STR, "nodeSelector": ANY, "allNodes": BOOL, "taints": ANY,
          "bindsToNode": BOOL, "bindingConditions": [STR], "bindingFailureConditions": [STR],
          "allowMultipleAllocations": BOOL}
RESOURCE_SLICE = {"kind": STR, "apiVersion": STR, "metadata": OBJECT_META,
                  "spec": {"driver": STR, "pool": {"name": STR, "generation": INT, "resourceSliceCount": INT},
                           "nodeName": STR, "nodeSelector": ANY, "allNodes": BOOL, "perDeviceNodeSelection": BOOL,
                           "devices": [DEVICE], "sharedCounters": ANY}}
SCHEMAS = {"pods": ("Pod", POD), "nodes": ("Node", NODE), "events": ("Event", EVENT),
           "namespaces": ("Namespace", NAMESPACE), "resourceslices": ("ResourceSlice", RESOURCE_SLICE)}

GO_TYPE = {STR: "string", INT: "int64", BOOL: "bool", TIME: "v1.Time", QTY: "resource.Quantity", MAP: "map"}
QTY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")


class DecodeError(ValueError):
    """The body cannot be decoded into the type: 400 BadRequest."""


def _jtype(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def decode_check(resource, obj):
    """-> list of unknown-field paths; raises DecodeError for a value the type cannot hold."""
    kind, schema = SCHEMAS[resource]
    if not isinstance(obj, dict):
        raise DecodeError("%s in version \"v1\" cannot be handled as a %s: json: cannot unmarshal %s into Go "
                          "value of type struct" % (kind, kind, _jtype(obj)))
    unknown = []
    _walk(kind, schema, obj, "", unknown)
    return unknown


def _fail(kind, path, value, want):
    raise DecodeError("%s in version \"v1\" cannot be handled as a %s: json: cannot unmarshal %s into Go struct "
                      "field %s of type %s" % (kind, kind, _jtype(value), path or kind, GO_TYPE.get(want, want)))


def _walk(kind, schema, value, path, unknown):
    if value is None or schema == ANY:
        return
    if isinstance(schema, list):
        if not isinstance(value, list):
            _fail(kind, path, value, "[]" + ("object" if isinstance(schema[0], dict) else str(schema[0])))
        for i, x in enumerate(value):
            _walk(kind, schema[0], x, "%s[%d]" % (path, i), unknown)
        return
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            _fail(kind, path, value, "struct")
        for k, v in value.items():
            sub = "%s.%s" % (path, k) if path else k
            if "*" in schema:
                _walk(kind, schema["*"], v, "%s[%s]" % (path, k), unknown)
            elif k in schema:
                _walk(kind, schema[k], v, sub, unknown)
            else:
                unknown.append(sub)
        return
    if schema == MAP:
        if not isinstance(value, dict):
            _fail(kind, path, value, "map[string]string")
        for k, v in value.items():
            if not isinstance(v, str):
                _fail(kind, "%s[%s]" % (path, k), v, STR)
    elif schema in (STR, TIME):
        if not isinstance(value, str):
            _fail(kind, path, value, schema)
        if schema == TIME and value and not TIME_RE.match(value):
            raise DecodeError("%s in version \"v1\" cannot be handled as a %s: parsing time \"%s\" as "
                              "\"2006-01-02T15:04:05Z07:00\": cannot parse \"%s\" as \"2006\"" % (kind, kind, value, value))
    elif schema == INT:
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(kind, path, value, INT)
    elif schema == BOOL:
        if not isinstance(value, bool):
            _fail(kind, path, value, BOOL)
    elif schema == QTY:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            _fail(kind, path, value, QTY)
        if parse_quantity(str(value)) is None:
            raise DecodeError("%s in version \"v1\" cannot be handled as a %s: quantities must match the regular "
                              "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" % (kind, kind))


# -- quantities -------------------------------------------------------------------------
_SUFFIX = {"": 1, "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": 10 ** 3, "M": 10 ** 6,
           "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18, "Ki": 2 ** 10, "Mi": 2 ** 20,
           "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}


def parse_quantity(s):
    """A Kubernetes quantity ("100m", "1Gi", "2", "1e3") as a Decimal, or None."""
    m = QTY_RE.match(s.strip()) if isinstance(s, str) else None
    if not m:
        return None
    num, suf = m.groups()
    try:
        n = Decimal(num)
    except InvalidOperation:
        return None
    if suf in _SUFFIX:
        return n * Decimal(_SUFFIX[suf])
    if suf[:1] in "eE":
        try:
            return n * (Decimal(10) ** int(suf[1:]))
        except ValueError:
            return None
    return None


# -- field errors -------------------------------------------------------------------------
class FieldError:
    REASONS = {"Required value": "FieldValueRequired", "Invalid value": "FieldValueInvalid",
               "Duplicate value": "FieldValueDuplicate", "Unsupported value": "FieldValueNotSupported",
               "Not found": "FieldValueNotFound", "Forbidden": "FieldValueForbidden", "Too long": "FieldValueTooLong",
               "Too many": "FieldValueTooMany"}

    def __init__(self, kind, field, value=None, detail=""):
        self.kind, self.field, self.value, self.detail = kind, field, value, detail

    def body(self):
        if self.kind in ("Required value", "Forbidden", "Too long"):
            return self.kind + (": " + self.detail if self.detail else "")
        v = self.value
        shown = '"%s"' % str(v).replace("\\", "\\\\").replace('"', '\\"') if isinstance(v, str) else \
            ("null" if v is None else str(v))
        return "%s: %s%s" % (self.kind, shown, (": " + self.detail) if self.detail else "")

    def __str__(self):
        return "%s: %s" % (self.field, self.body())

    def cause(self):
        return {"reason": self.REASONS[self.kind], "message": self.body(), "field": self.field}


def required(f, detail=""):
    return FieldError("Required value", f, detail=detail)


def invalid(f, v, detail=""):
    return FieldError("Invalid value", f, v, detail)


DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = DNS1123_LABEL + r"(\." + DNS1123_LABEL + r")*"
QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE = r"(" + QUALIFIED_NAME + r")?"
MSG_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '%s')" % DNS1123_LABEL)
MSG_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '%s')" % DNS1123_SUBDOMAIN)
MSG_QNAME = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'%s')" % QUALIFIED_NAME)
MSG_LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                   "'12345', regex used for validation is '%s')" % LABEL_VALUE)


def _full(rx, s):
    return re.fullmatch(rx, s) is not None


def dns1123_label(s):
    out = []
    if len(s) > 63:
        out.append("must be no more than 63 characters")
    if not _full(DNS1123_LABEL, s):
        out.append(MSG_LABEL)
    return out


def dns1123_subdomain(s):
    out = []
    if len(s) > 253:
        out.append("must be no more than 253 characters")
    if not _full(DNS1123_SUBDOMAIN, s):
        out.append(MSG_SUBDOMAIN)
    return out


def qualified_name(s):
    parts = s.split("/")
    if len(parts) > 2 or not s:
        return ["a qualified name " + MSG_QNAME.split(" ", 1)[1]]
    out = []
    if len(parts) == 2:
        prefix, name = parts
        if not prefix:
            out.append("prefix part must be non-empty")
        else:
            out += ["prefix part " + m for m in dns1123_subdomain(prefix)]
    else:
        name = parts[0]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > 63:
        out.append("name part must be no more than 63 characters")
    if name and not _full(QUALIFIED_NAME, name):
        out.append(MSG_QNAME)
    return out


def label_value(s):
    out = []
    if len(s) > 63:
        out.append("must be no more than 63 characters")
    if not _full(LABEL_VALUE, s):
        out.append(MSG_LABEL_VALUE)
    return out


def validate_meta(md, namespaced, name_fn, path="metadata"):
    errs = []
    name, gen = md.get("name") or "", md.get("generateName") or ""
    if not name and not gen:
        errs.append(required(path + ".name", "name or generateName is required"))
    if name:
        errs += [invalid(path + ".name", name, m) for m in name_fn(name)]
    if gen:
        errs += [invalid(path + ".generateName", gen, m) for m in name_fn(gen.rstrip("-") or "a")]
    if namespaced and not md.get("namespace"):
        errs.append(required(path + ".namespace"))
    for k, v in (md.get("labels") or {}).items():
        errs += [invalid(path + ".labels", k, m) for m in qualified_name(k)]
        errs += [invalid(path + ".labels", v, m) for m in label_value(v)]
    total = 0
    for k, v in (md.get("annotations") or {}).items():
        errs += [invalid(path + ".annotations", k, m) for m in qualified_name(k.lower())]
        total += len(k) + len(v)
    if total > 256 * 1024:
        errs.append(FieldError("Too long", path + ".annotations", detail="must have at most 262144 bytes"))
    return errs


def _overcommit_allowed(name):
    native = "/" not in name or name.startswith("kubernetes.io/")
    return native and not name.startswith("hugepages-")


def validate_resources(res, path):
    errs = []
    limits, requests = res.get("limits") or {}, res.get("requests") or {}
    for name, q in list(limits.items()) + list(requests.items()):
        if (parse_quantity(str(q)) or 0) < 0:
            errs.append(invalid("%s[%s]" % (path, name), str(q), "must be greater than or equal to 0"))
    for name, q in requests.items():
        want = parse_quantity(str(q))
        if name in limits:
            lim = parse_quantity(str(limits[name]))
            if want != lim and not _overcommit_allowed(name):
                errs.append(invalid(path + ".requests", str(q), "must be equal to %s limit of %s" % (name, limits[name])))
            elif want is not None and lim is not None and want > lim:
                errs.append(invalid(path + ".requests", str(q),
                                    "must be less than or equal to %s limit of %s" % (name, limits[name])))
        elif not _overcommit_allowed(name):
            errs.append(required(path + ".limits", "Limit must be set for non overcommitable resources"))
    return errs


RESTART = ["Always", "OnFailure", "Never"]
PULL = ["Always", "IfNotPresent", "Never"]
PROPAGATION = ["None", "HostToContainer", "Bidirectional"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def not_supported(f, v, values):
    return FieldError("Unsupported value", f, v, "supported values: " + ", ".join('"%s"' % x for x in values))


def validate_container(c, path, volumes, init):
    errs = []
    name = c.get("name") or ""
    if not name:
        errs.append(required(path + ".name"))
    else:
        errs += [invalid(path + ".name", name, m) for m in dns1123_label(name)]
    if not c.get("image"):
        errs.append(required(path + ".image"))
    if c.get("imagePullPolicy") and c["imagePullPolicy"] not in PULL:
        errs.append(not_supported(path + ".imagePullPolicy", c["imagePullPolicy"], PULL))
    if c.get("restartPolicy") is not None:
        if not init:
            errs.append(FieldError("Forbidden", path + ".restartPolicy",
                                   detail="may not be set for non-init containers"))
        elif c["restartPolicy"] != "Always":
            errs.append(not_supported(path + ".restartPolicy", c["restartPolicy"], ["Always"]))
    errs += validate_resources(c.get("resources") or {}, path + ".resources")
    seen_env = set()
    for i, e in enumerate(c.get("env") or []):
        if not e.get("name"):
            errs.append(required("%s.env[%d].name" % (path, i)))
        seen_env.add(e.get("name"))
    privileged = bool((c.get("securityContext") or {}).get("privileged"))
    seen_mounts = set()
    for i, m in enumerate(c.get("volumeMounts") or []):
        mp = "%s.volumeMounts[%d]" % (path, i)
        if not m.get("name"):
            errs.append(required(mp + ".name"))
        elif m["name"] not in volumes:
            errs.append(FieldError("Not found", mp + ".name", m["name"]))
        if not m.get("mountPath"):
            errs.append(required(mp + ".mountPath"))
        elif m["mountPath"] in seen_mounts:
            errs.append(invalid(mp + ".mountPath", m["mountPath"], "must be unique"))
        seen_mounts.add(m.get("mountPath"))
        prop = m.get("mountPropagation")
        if prop is not None:
            if prop not in PROPAGATION:
                errs.append(not_supported(path + ".volumeMounts.mountPropagation", prop, PROPAGATION))
            elif prop == "Bidirectional" and not privileged:
                errs.append(FieldError("Forbidden", path + ".volumeMounts.mountPropagation",
                                       detail="Bidirectional mount propagation is available only to privileged "
                                              "containers"))
    return errs


def validate_pod(pod):
    md = pod.get("metadata") or {}
    errs = validate_meta(md, True, dns1123_subdomain)
    spec = pod.get("spec") or {}
    volumes = set()
    for i, v in enumerate(spec.get("volumes") or []):
        n = v.get("name") or ""
        if not n:
            errs.append(required("spec.volumes[%d].name" % i))
        else:
            errs += [invalid("spec.volumes[%d].name" % i, n, m) for m in dns1123_label(n)]
            if n in volumes:
                errs.append(FieldError("Duplicate value", "spec.volumes[%d].name" % i, n))
        sources = [k for k in v if k != "name"]
        if not sources:
            errs.append(required("spec.volumes[%d]" % i, "must specify a volume type"))
        elif len(sources) > 1:
            errs.append(FieldError("Forbidden", "spec.volumes[%d].%s" % (i, sources[1]),
                                   detail="may not specify more than 1 volume type"))
        if "hostPath" in v and not (v["hostPath"] or {}).get("path"):
            errs.append(required("spec.volumes[%d].hostPath.path" % i))
        volumes.add(n)
    containers = spec.get("containers") or []
    if not containers:
        errs.append(required("spec.containers"))
    names = set()
    for field, init in (("initContainers", True), ("containers", False)):
        for i, c in enumerate(spec.get(field) or []):
            p = "spec.%s[%d]" % (field, i)
            errs += validate_container(c, p, volumes, init)
            if c.get("name") and c["name"] in names:
                errs.append(FieldError("Duplicate value", p + ".name", c["name"]))
            names.add(c.get("name"))
    rp = spec.get("restartPolicy")
    if rp is not None and rp not in RESTART:
        errs.append(not_supported("spec.restartPolicy", rp, RESTART))
    for k, v in (spec.get("nodeSelector") or {}).items():
        errs += [invalid("spec.nodeSelector", k, m) for m in qualified_name(k)]
        errs += [invalid("spec.nodeSelector", v, m) for m in label_value(v)]
    for i, t in enumerate(spec.get("tolerations") or []):
        p = "spec.tolerations[%d]" % i
        op = t.get("operator") or "Equal"
        if op not in ("Equal", "Exists"):
            errs.append(not_supported(p + ".operator", op, ["Equal", "Exists"]))
        if not t.get("key") and op != "Exists":
            errs.append(invalid(p + ".operator", op, "operator must be Exists when `key` is empty, which means "
                                                     "\"match all values and all keys\""))
        if t.get("effect") and t["effect"] not in EFFECTS:
            errs.append(not_supported(p + ".effect", t["effect"], EFFECTS))
    for f in ("terminationGracePeriodSeconds", "activeDeadlineSeconds"):
        if isinstance(spec.get(f), int) and spec[f] < (1 if f == "activeDeadlineSeconds" else 0):
            errs.append(invalid("spec." + f, spec[f], "must be greater than or equal to 0"))
    return errs


POD_MUTABLE = ("must be a valid pod spec update: pod updates may not change fields other than "
               "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
               "`spec.tolerations` (only additions to existing tolerations),"
               "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


def validate_pod_update(new, old):
    errs = validate_pod(new)

    def strip(spec):
        s = dict(spec or {})
        for f in ("containers", "initContainers"):
            s[f] = [dict(c, image=None) for c in s.get(f) or []]
        for f in ("activeDeadlineSeconds", "tolerations"):
            s.pop(f, None)
        return s
    if strip(new.get("spec")) != strip(old.get("spec")):
        errs.append(FieldError("Forbidden", "spec", detail=POD_MUTABLE))
    return errs


def validate_node(node):
    errs = validate_meta(node.get("metadata") or {}, False, dns1123_subdomain)
    seen = set()
    for i, t in enumerate((node.get("spec") or {}).get("taints") or []):
        p = "spec.taints[%d]" % i
        key = t.get("key") or ""
        if not key:
            errs.append(required(p + ".key"))
        else:
            errs += [invalid(p + ".key", key, m) for m in qualified_name(key)]
        if t.get("value"):
            errs += [invalid(p + ".value", t["value"], m) for m in label_value(t["value"])]
        eff = t.get("effect") or ""
        if not eff:
            errs.append(required(p + ".effect"))
        elif eff not in EFFECTS:
            errs.append(not_supported(p + ".effect", eff, EFFECTS))
        if (key, eff) in seen:
            errs.append(FieldError("Duplicate value", p, "%s:%s" % (key, eff),
                                   "taints must be unique by key and effect pair"))
        seen.add((key, eff))
    for i, c in enumerate((node.get("status") or {}).get("conditions") or []):
        if not c.get("type"):
            errs.append(required("status.conditions[%d].type" % i))
    return errs


def validate_event(ev, strict_node_namespace=True):
    """core/v1 Event rules (legacyValidateEvent of pkg/apis/core/validation/events.go)."""
    md = ev.get("metadata") or {}
    errs = validate_meta(md, True, dns1123_subdomain)
    ns = md.get("namespace") or ""
    io = ev.get("involvedObject") or {}
    io_ns = io.get("namespace") or ""
    if not ev.get("eventTime"):
        if not io_ns:
            if ns not in ("", "default") and strict_node_namespace:
                errs.append(invalid("involvedObject.namespace", io_ns, "does not match event.namespace"))
        elif ns != io_ns:
            errs.append(invalid("involvedObject.namespace", io_ns, "does not match event.namespace"))
    else:
        if not io_ns and ns not in ("default", "kube-system") and strict_node_namespace:
            errs.append(invalid("involvedObject.namespace", io_ns, "does not match event.namespace"))
        rc = ev.get("reportingComponent") or ""
        if not rc:
            errs.append(required("reportingComponent"))
        else:
            errs += [invalid("reportingComponent", rc, m) for m in qualified_name(rc)]
        ri = ev.get("reportingInstance") or ""
        if not ri:
            errs.append(required("reportingInstance"))
        elif len(ri) > 128:
            errs.append(invalid("reportingInstance", "", "can have at most 128 characters"))
        for f, limit in (("action", 128), ("reason", 128)):
            if not ev.get(f):
                errs.append(required(f))
            elif len(ev[f]) > limit:
                errs.append(invalid(f, "", "can have at most %d characters" % limit))
        if len(ev.get("message") or "") > 1024:
            errs.append(invalid("message", "", "can have at most 1024 characters"))
    if ns:
        errs += [invalid("namespace", ns, m) for m in dns1123_subdomain(ns)]
    return errs


def validate_namespace(obj):
    return validate_meta(obj.get("metadata") or {}, False, dns1123_label)


RESOURCE_SLICE_MAX_DEVICES = 128  # resource.k8s.io ResourceSliceMaxDevices


def validate_resource_slice(obj):
    """The rules of pkg/apis/resource/validation ValidateResourceSlice that matter here: a driver
    name, a pool with a name and a positive slice count, exactly one node selection, at most 128
    devices with DNS-label names unique in the slice."""
    errs = validate_meta(obj.get("metadata") or {}, False, dns1123_subdomain)
    spec = obj.get("spec") or {}
    drv = spec.get("driver") or ""
    if not drv:
        errs.append(required("spec.driver"))
    else:
        errs += [invalid("spec.driver", drv, m) for m in dns1123_subdomain(drv)]
    pool = spec.get("pool") or {}
    if not pool.get("name"):
        errs.append(required("spec.pool.name"))
    if (pool.get("generation") or 0) < 0:
        errs.append(invalid("spec.pool.generation", pool.get("generation"), "must be greater than or equal to 0"))
    if (pool.get("resourceSliceCount") or 0) <= 0:
        errs.append(invalid("spec.pool.resourceSliceCount", pool.get("resourceSliceCount") or 0,
                            "must be greater than zero"))
    chosen = [f for f in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection") if spec.get(f)]
    if len(chosen) != 1:
        errs.append(FieldError("Required value" if not chosen else "Invalid value", "spec",
                               None if not chosen else "{%s}" % ", ".join("`%s`" % c for c in chosen),
                               "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` "
                               "is required"))
    devices = spec.get("devices") or []
    if len(devices) > RESOURCE_SLICE_MAX_DEVICES:
        errs.append(FieldError("Too many", "spec.devices", len(devices),
                               "must have at most %d items" % RESOURCE_SLICE_MAX_DEVICES))
    seen = set()
    for i, d in enumerate(devices):
        name = d.get("name") or ""
        if not name:
            errs.append(required("spec.devices[%d].name" % i))
        else:
            errs += [invalid("spec.devices[%d].name" % i, name, m) for m in dns1123_label(name)]
            if name in seen:
                errs.append(FieldError("Duplicate value", "spec.devices[%d].name" % i, name))
            seen.add(name)
    return errs


VALIDATORS = {"pods": validate_pod, "nodes": validate_node, "namespaces": validate_namespace,
              "resourceslices": validate_resource_slice}


def invalid_status(kind, name, errs):
    """The body kube-apiserver answers with 422 for field errors."""
    msg = str(errs[0]) if len(errs) == 1 else "[" + ", ".join(str(e) for e in errs) + "]"
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": '%s "%s" is invalid: %s' % (kind, name, msg), "reason": "Invalid",
            "details": {"name": name, "kind": kind, "causes": [e.cause() for e in errs]}, "code": 422}
