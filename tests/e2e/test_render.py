"""`gpu-validator render cuda|plugin`: the final validation pod from the
compiled-in template, an override file and the run-time values."""
import json
import os

import gvtest

UPSTREAM = os.path.join(gvtest.SHARED, "cases", "upstream-gpu-operator")
FR11 = os.path.join(gvtest.SOURCE, "tests", "unit", "workload", "data", "fr11.yaml")
_OURS = ["VALIDATOR_IMAGE", "VALIDATOR_IMAGE_PULL_POLICY", "VALIDATOR_IMAGE_PULL_SECRETS",
         "VALIDATOR_RUNTIME_CLASS", "WORKLOAD_TEMPLATE"]


def env(**extra):
    e = gvtest.clean_env()
    for k in _OURS:
        e.pop(k, None)
    e.update({k: str(v) for k, v in extra.items()})
    return e


RUNTIME = ["--node-name", "gpu-node-1", "--namespace", "gpu-operator", "--image", "nvcr.io/nvidia/gpu-validator:v1"]


def render_json(test, *args, environ=None):
    p = gvtest.run(["render", *args, "-o", "json"], env=environ or env(), check=0)
    test.assertEqual(p.stderr, "")
    return json.loads(p.stdout)


def container(pod, lst, name):
    for c in pod["spec"].get(lst, []):
        if c["name"] == name:
            return c
    raise AssertionError(f"no {lst} entry named {name}")


class RenderTest(gvtest.TempDirTestCase):

    def write(self, name, text):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_default_cuda_pod(self):
        pod = render_json(self, "cuda", *RUNTIME)
        self.assertEqual(pod["kind"], "Pod")
        meta, spec = pod["metadata"], pod["spec"]
        self.assertEqual(meta["namespace"], "gpu-operator")
        self.assertEqual(meta["labels"]["app"], "nvidia-cuda-validator")
        self.assertEqual(meta["labels"]["nvidia.com/gpu-validator.node"], "gpu-node-1")
        self.assertEqual(meta["annotations"]["sidecar.istio.io/inject"], "false")  # FR09
        self.assertEqual(meta["labels"]["sidecar.istio.io/inject"], "false")
        self.assertEqual(meta["annotations"]["linkerd.io/inject"], "disabled")
        self.assertEqual(spec["nodeName"], "gpu-node-1")
        self.assertEqual(spec["restartPolicy"], "Never")
        for c in spec["initContainers"] + spec["containers"]:
            self.assertEqual(c["image"], "nvcr.io/nvidia/gpu-validator:v1")
            self.assertEqual(c["imagePullPolicy"], "IfNotPresent")
            self.assertTrue({"cpu", "memory"} <= set(c["resources"]["requests"]))
            self.assertTrue({"cpu", "memory"} <= set(c["resources"]["limits"]))
        self.assertNotIn("FILLED_BY", json.dumps(pod))

    def test_default_plugin_pod_requests_one_gpu(self):
        pod = render_json(self, "plugin", *RUNTIME)
        self.assertEqual(pod["metadata"]["labels"]["app"], "nvidia-device-plugin-validator")
        init = container(pod, "initContainers", "plugin-validation")
        self.assertEqual(init["resources"]["limits"]["nvidia.com/gpu"], 1)
        pod = render_json(self, "plugin", *RUNTIME, "--resource", "nvidia.com/mig-1g.10gb")
        init = container(pod, "initContainers", "plugin-validation")
        self.assertEqual(init["resources"]["limits"]["nvidia.com/mig-1g.10gb"], 1)
        self.assertNotIn("nvidia.com/gpu", init["resources"]["limits"])

    def test_upstream_environment_variables(self):
        e = env(NODE_NAME="env-node", OPERATOR_NAMESPACE="env-ns", VALIDATOR_IMAGE="env/img:2",
                VALIDATOR_IMAGE_PULL_POLICY="Always", VALIDATOR_IMAGE_PULL_SECRETS="s1, s2",
                VALIDATOR_RUNTIME_CLASS="nvidia")
        pod = render_json(self, "cuda", environ=e)
        self.assertEqual(pod["spec"]["nodeName"], "env-node")
        self.assertEqual(pod["metadata"]["namespace"], "env-ns")
        self.assertEqual(pod["spec"]["containers"][0]["image"], "env/img:2")
        self.assertEqual(pod["spec"]["containers"][0]["imagePullPolicy"], "Always")
        self.assertEqual(pod["spec"]["imagePullSecrets"], [{"name": "s1"}, {"name": "s2"}])
        self.assertEqual(pod["spec"]["runtimeClassName"], "nvidia")
        # flags win over the environment
        pod = render_json(self, "cuda", "--node-name", "flag-node", environ=e)
        self.assertEqual(pod["spec"]["nodeName"], "flag-node")

    def test_placeholders_and_strict(self):
        pod = render_json(self, "cuda")
        self.assertEqual(pod["spec"]["nodeName"], "<node-name>")
        self.assertEqual(pod["metadata"]["namespace"], "<namespace>")
        p = gvtest.run(["render", "cuda", "--strict"], env=env())
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertIn("NODE_NAME", p.stderr)
        pod = render_json(self, "cuda", "--strict", *RUNTIME, "--owner-name", "v-1", "--owner-uid", "u-1")
        self.assertEqual(pod["metadata"]["ownerReferences"],
                         [{"apiVersion": "v1", "kind": "Pod", "name": "v-1", "uid": "u-1", "controller": False,
                           "blockOwnerDeletion": False}])

    def test_fr11_override_file(self):
        pod = render_json(self, "cuda", "--workload-template", FR11, *RUNTIME,
                          "--tolerations", '[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]')
        meta, spec = pod["metadata"], pod["spec"]
        self.assertEqual(meta["labels"]["team"], "ml-platform")
        self.assertEqual(meta["annotations"]["example.com/owner"], "gpu-team")
        self.assertEqual(spec["priorityClassName"], "system-node-critical")
        self.assertEqual(spec["runtimeClassName"], "nvidia-cdi")
        self.assertEqual(spec["nodeSelector"], {"nvidia.com/gpu.present": "true"})
        self.assertEqual(spec["imagePullSecrets"], [{"name": "regcred"}])
        self.assertEqual(spec["securityContext"], {"runAsUser": 0})
        keys = [t.get("key") for t in spec["tolerations"]]
        self.assertEqual(keys, ["example.com/dedicated", "nvidia.com/gpu"])
        init = container(pod, "initContainers", "cuda-validation")
        main = container(pod, "containers", "nvidia-cuda-validator")
        self.assertEqual(init["image"], "registry.example.com/nvidia/gpu-validator:v1.2")
        self.assertEqual(main["image"], "registry.example.com/nvidia/gpu-validator:v1.2")
        self.assertEqual(init["resources"], {"requests": {"cpu": "200m", "memory": "256Mi"},
                                             "limits": {"cpu": "2", "memory": "2Gi"}})
        self.assertEqual(main["resources"]["limits"], {"cpu": "50m", "memory": "32Mi"})
        self.assertEqual(init["securityContext"]["seLinuxOptions"], {"level": "s0"})
        # the same file through the environment variable
        pod2 = render_json(self, "cuda", *RUNTIME, "--tolerations",
                           '[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]',
                           environ=env(WORKLOAD_TEMPLATE=FR11))
        self.assertEqual(pod, pod2)

    def test_json_override_and_name_merge(self):
        path = self.write("ov.json", json.dumps({"plugin": {"spec": {
            "containers": [{"name": "nvidia-device-plugin-validator", "$patch": "delete"},
                           {"name": "done", "image": "busybox", "command": ["true"]}]}}}))
        pod = render_json(self, "plugin", "-f", path, *RUNTIME)
        self.assertEqual([c["name"] for c in pod["spec"]["containers"]], ["done"])
        self.assertEqual(pod["spec"]["containers"][0]["image"], "busybox")
        self.assertEqual([c["name"] for c in pod["spec"]["initContainers"]], ["plugin-validation"])

    def test_upstream_manifests_accepted_as_they_are(self):
        for kind, name in (("cuda", "cuda"), ("plugin", "plugin")):
            path = os.path.join(UPSTREAM, f"validator_manifests_{name}-workload-validation.yaml")
            pod = render_json(self, kind, "-f", path, *RUNTIME)
            self.assertNotIn("FILLED_BY", json.dumps(pod))
            self.assertEqual(pod["spec"]["restartPolicy"], "OnFailure")  # theirs, not our default
            self.assertEqual(pod["metadata"]["namespace"], "gpu-operator")
            self.assertEqual(pod["spec"]["initContainers"][0]["image"], "nvcr.io/nvidia/gpu-validator:v1")
        plugin = render_json(self, "plugin", "-f", path, *RUNTIME)
        self.assertEqual(plugin["spec"]["initContainers"][0]["resources"]["limits"], {"nvidia.com/gpu": 1})

    def test_yaml_output_reads_back_through_our_parser(self):
        # The template (before the run-time values) as YAML, used as an
        # override file, gives the same final pod as the original override.
        for kind in ("cuda", "plugin"):
            p = gvtest.run(["render", kind, "-f", FR11, "--no-fill"], env=env(), check=0)
            self.assertTrue(p.stdout.startswith("apiVersion: v1\n"))
            self.assertIn("FILLED_BY_THE_VALIDATOR", p.stdout)
            path = self.write(f"{kind}.yaml", p.stdout)
            want = render_json(self, kind, "-f", FR11, *RUNTIME)
            got = render_json(self, kind, "-f", path, *RUNTIME)
            self.assertEqual(got, want)
        # type-ambiguous strings are quoted in the YAML output
        p = gvtest.run(["render", "cuda", "-f", FR11, *RUNTIME], env=env(), check=0)
        self.assertIn('sidecar.istio.io/inject: "false"', p.stdout)
        self.assertIn('nvidia.com/gpu.present: "true"', p.stdout)
        self.assertIn('cpu: "2"', p.stdout)

    def test_bad_override_reports_file_line_field(self):
        path = self.write("bad.yaml", "cuda:\n  spec:\n    initContainers:\n    - name: cuda-validation\n"
                                      "      resources: 1Gi\n")
        p = gvtest.run(["render", "cuda", "-f", path], env=env())
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertIn(f"{path}:5: spec.initContainers[0].resources: expected a mapping", p.stderr)
        path = self.write("bad2.yaml", "cuda:\n  spec:\n    containers:\n    - image: x\n")
        p = gvtest.run(["render", "cuda", "-f", path], env=env())
        self.assertEqual(p.returncode, 2)
        self.assertIn(f"{path}:4: spec.containers[0]: has no name", p.stderr)
        path = self.write("bad3.yaml", "gpu: {}\n")
        p = gvtest.run(["render", "plugin", "-f", path], env=env())
        self.assertEqual(p.returncode, 2)
        self.assertIn(f"{path}:1: gpu: unknown section", p.stderr)
        path = self.write("bad4.yaml", "cuda: [\n")
        p = gvtest.run(["render", "cuda", "-f", path], env=env())
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn(f"{path}:", p.stderr)
        p = gvtest.run(["render", "cuda", "-f", self.path("missing.yaml")], env=env())
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn("missing.yaml", p.stderr)

    def test_requests_above_limits_refused_with_file_line(self):
        """An override that leaves a request above its limit (here a lower limit under the default
        request) is refused with file:line, as kube-apiserver would refuse the pod (422)."""
        path = self.write("low.yaml", "cuda:\n  spec:\n    containers:\n    - name: nvidia-cuda-validator\n"
                                      "      resources:\n        limits: {cpu: 5m}\n")
        p = gvtest.run(["render", "cuda", "-f", path, *RUNTIME], env=env())
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn(f"{path}:6: cuda template: spec.containers[0].resources.requests: Invalid value: \"10m\": "
                      "must be less than or equal to cpu limit of 5m", p.stderr)
        path = self.write("high.yaml", "plugin:\n  spec:\n    initContainers:\n    - name: plugin-validation\n"
                                       "      resources:\n        requests:\n          memory: 1.5Gi\n")
        p = gvtest.run(["render", "plugin", "-f", path, *RUNTIME], env=env())
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn(f"{path}:7: plugin template: spec.initContainers[0].resources.requests: Invalid value: "
                      "\"1.5Gi\": must be less than or equal to memory limit of 1Gi", p.stderr)
        # Equal is fine, and so are units that differ only in spelling (1000m == 1).
        path = self.write("ok.yaml", "cuda:\n  spec:\n    initContainers:\n    - name: cuda-validation\n"
                                     "      resources:\n        requests: {cpu: 1000m, memory: 1024Mi}\n")
        render_json(self, "cuda", "-f", path, *RUNTIME)

    def test_validation_pods_mount_no_token(self):
        """Validation pods need no API access: no service account token is mounted (least privilege)."""
        for kind in ("cuda", "plugin"):
            pod = render_json(self, kind, *RUNTIME)
            self.assertIs(pod["spec"]["automountServiceAccountToken"], False, kind)

    def test_usage(self):
        p = gvtest.run(["render", "--help"], env=env(), check=0)
        self.assertIn("--workload-template", p.stdout)
        for args in (["render"], ["render", "gpu"], ["render", "cuda", "-o", "xml"], ["render", "cuda", "plugin"],
                     ["render", "cuda", "--tolerations", "{}"], ["render", "cuda", "--bogus"]):
            p = gvtest.run(args, env=env())
            self.assertEqual(p.returncode, 2, args)
            self.assertEqual(p.stdout, "", args)
