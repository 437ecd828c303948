/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Templates: defaults (FR09), override files (FR11, upstream manifests,
 * validation with file:line:field), run-time fill, lifecycle helpers.
 */
#include <fcntl.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "workload/workload.h"

/* ---- helpers ---- */

/* Follow a path like "spec.initContainers[0].resources.limits.cpu"; keys may contain '/' but not '.'. */
static json_object *at(json_object *o, const char *path)
{
        _cleanup_free_ char *copy = strdup(path);
        char *save = NULL;
        for (char *part = strtok_r(copy, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
                char *br = strchr(part, '[');
                long idx = -1;
                if (br) {
                        idx = strtol(br + 1, NULL, 10);
                        *br = '\0';
                }
                json_object *next = NULL;
                if (!json_object_object_get_ex(o, part, &next))
                        return NULL;
                o = next;
                if (idx >= 0) {
                        if (!json_object_is_type(o, json_type_array) || (size_t) idx >= json_object_array_length(o))
                                return NULL;
                        o = json_object_array_get_idx(o, (size_t) idx);
                }
        }
        return o;
}

/* A key of a map found by path (for keys that contain dots, like label keys). */
static const char *key_in(json_object *o, const char *path, const char *key)
{
        json_object *m = at(o, path), *v = NULL;
        if (!json_object_object_get_ex(m, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

static const char *str_at(json_object *o, const char *path)
{
        json_object *v = at(o, path);
        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

#define assert_str_at(o, path, want)                                                             \
        do {                                                                                     \
                const char *got_ = str_at((o), (path));                                          \
                if (!got_ || strcmp(got_, (want)) != 0)                                          \
                        fail_msg("%s: got %s, want %s", (path), got_ ? got_ : "(none)", (want)); \
        } while (0)

static gv_workload_overrides_t *ov_ok(const char *text)
{
        gv_workload_overrides_t *ov = NULL;
        gv_error_t *err = NULL;
        if (gv_workload_overrides_parse(text, strlen(text), "ov.yaml", &ov, &err) < 0)
                fail_msg("override refused: %s", err->msg);
        return ov;
}

static char *ov_err(const char *text)
{
        gv_workload_overrides_t *ov = NULL;
        gv_error_t *err = NULL;
        assert_true(gv_workload_overrides_parse(text, strlen(text), "ov.yaml", &ov, &err) < 0);
        assert_null(ov);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        char *m = strdup(err->msg);
        gv_error_free(&err);
        return m;
}

static const gv_workload_runtime_t runtime = {
        .node_name = "gpu-node-1",
        .namespace = "gpu-operator",
        .image = "nvcr.io/nvidia/gpu-validator:v0.1.0",
        .owner_name = "nvidia-operator-validator-abcde",
        .owner_uid = "1234-5678",
        .gpu_resource = "nvidia.com/gpu",
};

static json_object *render(gv_workload_kind_t kind, const gv_workload_overrides_t *ov,
                           const gv_workload_runtime_t *rt)
{
        json_object *pod = NULL;
        gv_error_t *err = NULL;
        if (gv_workload_pod(kind, ov, rt ? rt : &runtime, &pod, &err) < 0)
                fail_msg("render failed: %s", err->msg);
        return pod;
}

static char *render_err(gv_workload_kind_t kind, const gv_workload_overrides_t *ov, const gv_workload_runtime_t *rt)
{
        json_object *pod = NULL;
        gv_error_t *err = NULL;
        assert_true(gv_workload_pod(kind, ov, rt, &pod, &err) < 0);
        assert_null(pod);
        char *m = strdup(err->msg);
        gv_error_free(&err);
        return m;
}

static char *shared_file(const char *rel)
{
        const char *dir = getenv("GV_SHARED_DIR");
        char *p = NULL;
        if (asprintf(&p, "%s/%s", dir ? dir : "../shared", rel) < 0)
                return NULL;
        return p;
}

static char *source_file(const char *rel)
{
        const char *dir = getenv("GV_SOURCE_DIR");
        char *p = NULL;
        if (asprintf(&p, "%s/%s", dir ? dir : ".", rel) < 0)
                return NULL;
        return p;
}

/* ---- defaults ---- */

static void test_defaults_shape(void **state)
{
        (void) state;
        json_object *cuda = render(GV_WORKLOAD_CUDA, NULL, NULL);
        assert_str_at(cuda, "apiVersion", "v1");
        assert_str_at(cuda, "kind", "Pod");
        assert_str_at(cuda, "metadata.generateName", "nvidia-cuda-validator-");
        assert_str_at(cuda, "metadata.namespace", "gpu-operator");
        assert_str_at(cuda, "metadata.labels.app", "nvidia-cuda-validator");
        assert_string_equal(key_in(cuda, "metadata.labels", GV_WORKLOAD_NODE_LABEL), "gpu-node-1");
        assert_string_equal(key_in(cuda, "metadata.annotations", "linkerd.io/inject"), "disabled");
        assert_string_equal(key_in(cuda, "metadata.annotations", "nvidia.cdi.k8s.io/container.cuda-validation"),
                            "management.nvidia.com/gpu=all");
        assert_str_at(cuda, "spec.restartPolicy", "Never");
        assert_str_at(cuda, "spec.nodeName", "gpu-node-1");
        assert_str_at(cuda, "spec.serviceAccountName", "nvidia-operator-validator");
        assert_str_at(cuda, "spec.initContainers[0].name", "cuda-validation");
        assert_str_at(cuda, "spec.containers[0].name", "nvidia-cuda-validator");
        for (const char *const *c = (const char *const[]){ "spec.initContainers[0]", "spec.containers[0]", NULL }; *c;
             c++) {
                _cleanup_free_ char *img = NULL, *pol = NULL, *rc = NULL, *rm = NULL, *lc = NULL, *lm = NULL;
                assert_true(asprintf(&img, "%s.image", *c) > 0 && asprintf(&pol, "%s.imagePullPolicy", *c) > 0 &&
                            asprintf(&rc, "%s.resources.requests.cpu", *c) > 0 &&
                            asprintf(&rm, "%s.resources.requests.memory", *c) > 0 &&
                            asprintf(&lc, "%s.resources.limits.cpu", *c) > 0 &&
                            asprintf(&lm, "%s.resources.limits.memory", *c) > 0);
                assert_str_at(cuda, img, "nvcr.io/nvidia/gpu-validator:v0.1.0");
                assert_str_at(cuda, pol, "IfNotPresent");
                assert_non_null(str_at(cuda, rc));
                assert_non_null(str_at(cuda, rm));
                assert_non_null(str_at(cuda, lc));
                assert_non_null(str_at(cuda, lm));
        }
        json_object *owner = at(cuda, "metadata.ownerReferences[0]");
        assert_str_at(owner, "apiVersion", "v1");
        assert_str_at(owner, "kind", "Pod");
        assert_str_at(owner, "name", "nvidia-operator-validator-abcde");
        assert_str_at(owner, "uid", "1234-5678");
        assert_false(json_object_get_boolean(at(owner, "controller")));
        assert_false(json_object_get_boolean(at(owner, "blockOwnerDeletion")));
        json_object_put(cuda);

        json_object *plugin = render(GV_WORKLOAD_PLUGIN, NULL, NULL);
        assert_str_at(plugin, "metadata.labels.app", "nvidia-device-plugin-validator");
        assert_str_at(plugin, "spec.initContainers[0].name", "plugin-validation");
        json_object *gpu = NULL;
        assert_true(json_object_object_get_ex(at(plugin, "spec.initContainers[0].resources.limits"), "nvidia.com/gpu",
                                              &gpu));
        assert_int_equal(json_object_get_int(gpu), 1);
        json_object_put(plugin);
}

static void test_fr09_default_disables_istio(void **state)
{
        (void) state;
        for (int k = 0; k < GV_WORKLOAD__MAX; k++) {
                json_object *pod = render((gv_workload_kind_t) k, NULL, NULL);
                assert_string_equal(key_in(pod, "metadata.annotations", "sidecar.istio.io/inject"), "false");
                assert_string_equal(key_in(pod, "metadata.labels", "sidecar.istio.io/inject"), "false");
                json_object_put(pod);
        }
}

static void test_fr09_user_template_changes_istio(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = ov_ok("cuda:\n"
                                            "  metadata:\n"
                                            "    labels:\n"
                                            "      sidecar.istio.io/inject: \"true\"\n"
                                            "    annotations:\n"
                                            "      sidecar.istio.io/inject: null\n"
                                            "      proxy.istio.io/config: '{ \"holdApplicationUntilProxyStarts\": true }'\n");
        json_object *pod = render(GV_WORKLOAD_CUDA, ov, NULL);
        assert_string_equal(key_in(pod, "metadata.labels", "sidecar.istio.io/inject"), "true");
        assert_null(key_in(pod, "metadata.annotations", "sidecar.istio.io/inject"));
        assert_non_null(key_in(pod, "metadata.annotations", "proxy.istio.io/config"));
        json_object_put(pod);
        /* the plugin pod keeps its default */
        pod = render(GV_WORKLOAD_PLUGIN, ov, NULL);
        assert_string_equal(key_in(pod, "metadata.labels", "sidecar.istio.io/inject"), "false");
        json_object_put(pod);
        gv_workload_overrides_free(ov);
}

/* ---- FR11 ---- */

static gv_workload_overrides_t *load_fr11(void)
{
        _cleanup_free_ char *path = source_file("tests/unit/workload/data/fr11.yaml");
        gv_workload_overrides_t *ov = NULL;
        gv_error_t *err = NULL;
        if (gv_workload_overrides_load(path, &ov, &err) < 0)
                fail_msg("%s", err->msg);
        return ov;
}

static void test_fr11_all_fields_land_in_cuda_pod(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = load_fr11();
        gv_workload_runtime_t rt = runtime;
        rt.image_pull_secrets = "from-env";
        rt.runtime_class = "from-env";
        json_object *pod = render(GV_WORKLOAD_CUDA, ov, &rt);
        assert_str_at(pod, "metadata.labels.team", "ml-platform");
        assert_string_equal(key_in(pod, "metadata.annotations", "example.com/owner"), "gpu-team");
        assert_str_at(pod, "spec.priorityClassName", "system-node-critical");
        assert_str_at(pod, "spec.runtimeClassName", "nvidia-cdi");
        assert_string_equal(key_in(pod, "spec.nodeSelector", "nvidia.com/gpu.present"), "true");
        assert_str_at(pod, "spec.imagePullSecrets[0].name", "regcred");
        assert_int_equal(json_object_array_length(at(pod, "spec.imagePullSecrets")), 1);
        assert_int_equal(json_object_get_int(at(pod, "spec.securityContext.runAsUser")), 0);
        assert_str_at(pod, "spec.tolerations[0].key", "example.com/dedicated");
        assert_str_at(pod, "spec.tolerations[0].effect", "NoSchedule");
        assert_str_at(pod, "spec.initContainers[0].image", "registry.example.com/nvidia/gpu-validator:v1.2");
        assert_str_at(pod, "spec.containers[0].image", "registry.example.com/nvidia/gpu-validator:v1.2");
        assert_str_at(pod, "spec.initContainers[0].resources.requests.cpu", "200m");
        assert_str_at(pod, "spec.initContainers[0].resources.limits.memory", "2Gi");
        assert_str_at(pod, "spec.initContainers[0].securityContext.seLinuxOptions.level", "s0");
        assert_str_at(pod, "spec.containers[0].resources.limits.cpu", "50m");
        assert_str_at(pod, "spec.containers[0].resources.requests.cpu", "10m"); /* default kept */
        /* the rest of the default container survives the merge */
        assert_str_at(pod, "spec.initContainers[0].command[0]", "gpu-validator");
        assert_str_at(pod, "spec.initContainers[0].env[0].name", "NVIDIA_VISIBLE_DEVICES");
        assert_str_at(pod, "metadata.labels.app", "nvidia-cuda-validator");
        json_object_put(pod);
        gv_workload_overrides_free(ov);
}

static void test_fr11_plugin_section(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = load_fr11();
        gv_workload_runtime_t rt = runtime;
        rt.gpu_resource = "nvidia.com/mig-1g.10gb";
        json_object *pod = render(GV_WORKLOAD_PLUGIN, ov, &rt);
        assert_str_at(pod, "metadata.labels.team", "ml-platform");
        assert_str_at(pod, "spec.initContainers[0].image", "registry.example.com/nvidia/gpu-validator:v1.2");
        assert_str_at(pod, "spec.containers[0].image", "nvcr.io/nvidia/gpu-validator:v0.1.0");
        assert_str_at(pod, "spec.initContainers[0].resources.limits.memory", "2Gi");
        json_object *lim = at(pod, "spec.initContainers[0].resources.limits"), *q = NULL;
        assert_true(json_object_object_get_ex(lim, "nvidia.com/mig-1g.10gb", &q));
        assert_false(json_object_object_get_ex(lim, GV_WORKLOAD_PLACEHOLDER, NULL));
        json_object_put(pod);
        gv_workload_overrides_free(ov);
}

static void test_fr11_render_yaml_roundtrip(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = load_fr11();
        json_object *pod = render(GV_WORKLOAD_CUDA, ov, NULL);
        _cleanup_free_ char *y = NULL;
        gv_error_t *err = NULL;
        assert_int_equal(gv_yaml_emit(pod, &y, &err), 0);
        /* "true" in nodeSelector stays a string once written as YAML */
        assert_non_null(strstr(y, "nvidia.com/gpu.present: \"true\""));
        gv_doc_t *doc = NULL;
        assert_int_equal(gv_yaml_parse(y, strlen(y), "out", &doc, &err), 0);
        assert_true(json_object_equal(pod, gv_doc_root(doc)));
        gv_doc_free(doc);
        json_object_put(pod);
        gv_workload_overrides_free(ov);
}

/* ---- upstream manifests ---- */

static void test_upstream_manifest_whole_file(void **state)
{
        (void) state;
        static const struct {
                gv_workload_kind_t kind;
                const char *file;
        } cases[] = {
                { GV_WORKLOAD_CUDA, "cases/upstream-gpu-operator/validator_manifests_cuda-workload-validation.yaml" },
                { GV_WORKLOAD_PLUGIN,
                  "cases/upstream-gpu-operator/validator_manifests_plugin-workload-validation.yaml" },
        };
        for (size_t i = 0; i < 2; i++) {
                _cleanup_free_ char *path = shared_file(cases[i].file);
                gv_workload_overrides_t *ov = NULL;
                gv_error_t *err = NULL;
                if (gv_workload_overrides_load(path, &ov, &err) < 0)
                        fail_msg("%s", err->msg);
                json_object *pod = render(cases[i].kind, ov, NULL);
                /* upstream's file as it is, with the placeholders filled */
                assert_str_at(pod, "metadata.namespace", "gpu-operator");
                assert_str_at(pod, "spec.restartPolicy", "OnFailure");
                assert_str_at(pod, "spec.initContainers[0].image", "nvcr.io/nvidia/gpu-validator:v0.1.0");
                assert_str_at(pod, "spec.containers[0].image", "nvcr.io/nvidia/gpu-validator:v0.1.0");
                assert_str_at(pod, "spec.initContainers[0].args[0]", "vectorAdd");
                assert_str_at(pod, "spec.nodeName", "gpu-node-1");
                assert_string_equal(key_in(pod, "metadata.labels", GV_WORKLOAD_NODE_LABEL), "gpu-node-1");
                if (cases[i].kind == GV_WORKLOAD_PLUGIN) {
                        json_object *q = NULL;
                        assert_true(json_object_object_get_ex(at(pod, "spec.initContainers[0].resources.limits"),
                                                              "nvidia.com/gpu", &q));
                        assert_int_equal(json_object_get_int(q), 1);
                }
                json_object_put(pod);
                /* the other kind gets its defaults: the manifest's app label names its pod */
                pod = render(cases[i].kind == GV_WORKLOAD_CUDA ? GV_WORKLOAD_PLUGIN : GV_WORKLOAD_CUDA, ov, NULL);
                assert_str_at(pod, "spec.restartPolicy", "Never");
                json_object_put(pod);
                gv_workload_overrides_free(ov);
        }
}

static void test_upstream_manifest_as_section(void **state)
{
        (void) state;
        _cleanup_free_ char *path =
                shared_file("cases/upstream-gpu-operator/validator_manifests_cuda-workload-validation.yaml");
        _cleanup_free_ char *text = NULL;
        gv_error_t *err = NULL;
        assert_int_equal(gv_read_file_at(AT_FDCWD, path, false, 1 << 20, &text, NULL, &err), 0);
        /* indent the manifest under "cuda:" */
        _cleanup_free_ char *doc = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&doc, &len);
        fputs("cuda:\n", f);
        for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                fprintf(f, "  %s\n", line);
        fclose(f);
        gv_workload_overrides_t *ov = ov_ok(doc);
        json_object *pod = render(GV_WORKLOAD_CUDA, ov, NULL);
        assert_str_at(pod, "spec.restartPolicy", "OnFailure");
        assert_str_at(pod, "spec.initContainers[0].args[0]", "vectorAdd");
        assert_str_at(pod, "metadata.namespace", "gpu-operator");
        json_object_put(pod);
        gv_workload_overrides_free(ov);
}

static void test_manifest_without_app_label_serves_both(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = ov_ok("apiVersion: v1\nkind: Pod\nmetadata: {}\n"
                                            "spec:\n  containers:\n  - name: only\n    image: busybox\n");
        for (int k = 0; k < GV_WORKLOAD__MAX; k++) {
                json_object *pod = render((gv_workload_kind_t) k, ov, NULL);
                assert_str_at(pod, "spec.containers[0].image", "busybox");
                assert_str_at(pod, "metadata.labels.app", gv_workload_app_label((gv_workload_kind_t) k));
                assert_str_at(pod, "metadata.generateName",
                              k == GV_WORKLOAD_CUDA ? "nvidia-cuda-validator-" : "nvidia-device-plugin-validator-");
                json_object_put(pod);
        }
        /* the plugin pod still requests one GPU */
        json_object *pod = render(GV_WORKLOAD_PLUGIN, ov, NULL);
        json_object *q = NULL;
        assert_true(json_object_object_get_ex(at(pod, "spec.containers[0].resources.limits"), "nvidia.com/gpu", &q));
        json_object_put(pod);
        gv_workload_overrides_free(ov);
}

/* ---- validation of bad overrides: file:line: field: problem ---- */

static void test_bad_overrides_report_file_line_field(void **state)
{
        (void) state;
        static const struct {
                const char *text, *want;
        } cases[] = {
                { "cuda:\n  metadata:\n    labels:\n      tier: 3\n",
                  "ov.yaml:4: metadata.labels.tier: expected a string, got a number (quote it: \"3\")" },
                { "cuda:\n  spec:\n    containers:\n    - name: nvidia-cuda-validator\n      resources: 2Gi\n",
                  "ov.yaml:5: spec.containers[0].resources: expected a mapping, got a string" },
                { "plugin:\n  spec:\n    initContainers:\n    - image: x\n",
                  "ov.yaml:4: spec.initContainers[0]: has no name" },
                { "cuda:\n  spec:\n    containers: {name: x}\n",
                  "ov.yaml:3: spec.containers: expected a list, got a mapping" },
                { "cuda:\n  spec:\n    tolerations:\n      key: a\n",
                  "ov.yaml:3: spec.tolerations: expected a list, got a mapping" },
                { "cuda:\n  spec:\n    tolerations:\n    - key: a\n      operator: Maybe\n",
                  "ov.yaml:5: spec.tolerations[0].operator: 'Maybe' is not one of Exists, Equal" },
                { "cuda: {}\ngpu:\n  spec: {}\n",
                  "ov.yaml:2: gpu: unknown section (expected cuda or plugin, or a whole Pod manifest with "
                  "apiVersion: v1 and kind: Pod)" },
                { "cuda:\n  sepc: {}\n", "ov.yaml:2: cuda: unknown field 'sepc' (expected metadata or spec)" },
                { "cuda:\n  spec:\n    containers:\n    - name: x\n      resource: {}\n",
                  "ov.yaml:5: spec.containers[0]: unknown field 'resource'" },
                { "cuda:\n  spec:\n    nodeName: other\n",
                  "ov.yaml:3: spec.nodeName: set by the validator (its own node); remove it" },
                { "cuda:\n  metadata:\n    labels:\n      app: mine\n",
                  "ov.yaml:4: metadata.labels.app: must be nvidia-cuda-validator (the validator selects its cuda "
                  "pods by it)" },
                { "cuda:\n  spec:\n    containers:\n    - name: x\n      $patch: replace\n",
                  "ov.yaml:5: spec.containers[0].$patch: the only directive is `$patch: delete`" },
                { "cuda:\n  spec:\n    nodeSelector:\n      gpu: true\n",
                  "ov.yaml:4: spec.nodeSelector.gpu: expected a string, got a boolean (quote it: \"true\")" },
                { "cuda:\n  spec:\n    containers:\n    - name: x\n      resources:\n        limits:\n"
                  "          cpu: [1]\n",
                  "ov.yaml:7: spec.containers[0].resources.limits.cpu: expected a quantity (\"500m\", \"1Gi\", 2), "
                  "got a list" },
                { "- cuda\n", "ov.yaml:1: (top level): expected a mapping with cuda: and plugin: sections, or a Pod "
                              "manifest; got a list" },
                { "apiVersion: v1\nkind: Pod\nspec:\n  containers: []\n",
                  "ov.yaml:4: spec.containers: a Pod manifest needs at least one container" },
                { "apiVersion: v1\nkind: Deployment\n", "ov.yaml:2: kind: expected Pod" },
                { "cuda:\n  spec:\n    containers:\n    - name: \"\"\n",
                  "ov.yaml:4: spec.containers[0].name: must not be empty" },
                { "cuda:\n  spec:\n    imagePullSecrets: regcred\n",
                  "ov.yaml:3: spec.imagePullSecrets: expected a list, got a string" },
                { "cuda:\n  spec: [\n", NULL /* a syntax error: checked below */ },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                _cleanup_free_ char *m = ov_err(cases[i].text);
                if (cases[i].want && strcmp(m, cases[i].want) != 0)
                        fail_msg("case %zu:\n got: %s\nwant: %s", i, m, cases[i].want);
                if (!cases[i].want)
                        assert_true(strncmp(m, "ov.yaml:", 8) == 0);
        }
}

static void test_final_template_checked(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = ov_ok("cuda:\n  spec:\n    containers:\n"
                                            "    - name: nvidia-cuda-validator\n      $patch: delete\n");
        _cleanup_free_ char *m = render_err(GV_WORKLOAD_CUDA, ov, &runtime);
        assert_string_equal(m, "ov.yaml: cuda template: spec.containers: the pod has no containers");
        gv_workload_overrides_free(ov);

        ov = ov_ok("cuda:\n  spec:\n    containers:\n    - name: cuda-validation\n      image: x\n");
        _cleanup_free_ char *m2 = render_err(GV_WORKLOAD_CUDA, ov, &runtime);
        assert_string_equal(m2, "ov.yaml: cuda template: spec: two containers are named 'cuda-validation'");
        gv_workload_overrides_free(ov);
}

static void test_overrides_load_missing_file(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = NULL;
        gv_error_t *err = NULL;
        assert_true(gv_workload_overrides_load("/nonexistent/ov.yaml", &ov, &err) < 0);
        assert_int_equal(err->reason, GV_REASON_CONFIG);
        assert_non_null(strstr(err->msg, "/nonexistent/ov.yaml"));
        gv_error_free(&err);
}

/* ---- fill ---- */

static void test_fill_precedence(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = ov_ok("cuda:\n  spec:\n    containers:\n    - name: nvidia-cuda-validator\n"
                                            "      image: mine:1\n      imagePullPolicy: Always\n");
        gv_workload_runtime_t rt = runtime;
        rt.image_pull_policy = "Never";
        rt.image_pull_secrets = " a, b ,,c ";
        rt.runtime_class = "nvidia";
        rt.tolerations = json_tokener_parse("[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":"
                                            "\"NoSchedule\"},{\"operator\":\"Exists\"}]");
        json_object *pod = render(GV_WORKLOAD_CUDA, ov, &rt);
        /* the template's explicit values win over the environment ... */
        assert_str_at(pod, "spec.containers[0].image", "mine:1");
        assert_str_at(pod, "spec.containers[0].imagePullPolicy", "Always");
        /* ... which fills what the template leaves open */
        assert_str_at(pod, "spec.initContainers[0].image", "nvcr.io/nvidia/gpu-validator:v0.1.0");
        assert_str_at(pod, "spec.initContainers[0].imagePullPolicy", "Never");
        assert_int_equal(json_object_array_length(at(pod, "spec.imagePullSecrets")), 3);
        assert_str_at(pod, "spec.imagePullSecrets[0].name", "a");
        assert_str_at(pod, "spec.imagePullSecrets[1].name", "b");
        assert_str_at(pod, "spec.imagePullSecrets[2].name", "c");
        assert_str_at(pod, "spec.runtimeClassName", "nvidia");
        /* tolerations: the template's plus the validator's, without duplicates */
        assert_int_equal(json_object_array_length(at(pod, "spec.tolerations")), 2);
        assert_str_at(pod, "spec.tolerations[1].operator", "Exists");
        json_object_put(pod);
        json_object_put(rt.tolerations);
        gv_workload_overrides_free(ov);
}

static void test_fill_owned_fields_win(void **state)
{
        (void) state;
        /* an upstream-style manifest with placeholders for what the validator owns */
        gv_workload_overrides_t *ov = ov_ok("apiVersion: v1\nkind: Pod\nmetadata:\n  name: fixed\n"
                                            "  namespace: FILLED_BY_VALIDATOR\n  labels: {app: nvidia-cuda-validator}\n"
                                            "spec:\n  nodeName: FILLED_BY_THE_VALIDATOR\n  runtimeClassName: "
                                            "FILLED_BY_THE_VALIDATOR\n  containers:\n  - name: c\n");
        json_object *pod = render(GV_WORKLOAD_CUDA, ov, NULL);
        assert_str_at(pod, "metadata.name", "fixed");
        assert_null(at(pod, "metadata.generateName"));
        assert_str_at(pod, "metadata.namespace", "gpu-operator");
        assert_str_at(pod, "spec.nodeName", "gpu-node-1");
        assert_null(at(pod, "spec.runtimeClassName")); /* no VALIDATOR_RUNTIME_CLASS: the placeholder goes */
        json_object_put(pod);
        gv_workload_overrides_free(ov);
}

static void test_fill_missing_values(void **state)
{
        (void) state;
        gv_workload_runtime_t rt = { .placeholders = false, .namespace = "ns", .image = "img" };
        _cleanup_free_ char *m = render_err(GV_WORKLOAD_CUDA, NULL, &rt);
        assert_string_equal(m, "the node name (NODE_NAME) is not set");
        rt.node_name = "n";
        rt.image = NULL;
        _cleanup_free_ char *m2 = render_err(GV_WORKLOAD_CUDA, NULL, &rt);
        assert_string_equal(m2, "the validator image (VALIDATOR_IMAGE) is not set");
        rt.image = "img";
        _cleanup_free_ char *m3 = render_err(GV_WORKLOAD_PLUGIN, NULL, &rt);
        assert_string_equal(m3, "the GPU resource name is not set");
        rt.image_pull_policy = "Sometimes";
        _cleanup_free_ char *m4 = render_err(GV_WORKLOAD_CUDA, NULL, &rt);
        assert_non_null(strstr(m4, "VALIDATOR_IMAGE_PULL_POLICY=Sometimes"));

        /* without an owner, a strict fill leaves ownerReferences out */
        rt.image_pull_policy = NULL;
        json_object *pod = render(GV_WORKLOAD_CUDA, NULL, &rt);
        assert_null(at(pod, "metadata.ownerReferences"));
        json_object_put(pod);

        /* render's placeholders */
        gv_workload_runtime_t ph = { .placeholders = true };
        pod = render(GV_WORKLOAD_PLUGIN, NULL, &ph);
        assert_str_at(pod, "spec.nodeName", "<node-name>");
        assert_str_at(pod, "metadata.namespace", "<namespace>");
        assert_str_at(pod, "spec.containers[0].image", "<image>");
        assert_str_at(pod, "metadata.ownerReferences[0].name", "<validator-pod-name>");
        assert_true(json_object_object_get_ex(at(pod, "spec.initContainers[0].resources.limits"), "<gpu-resource>",
                                              NULL));
        json_object_put(pod);
}

static void test_fill_refuses_unknown_placeholder(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = ov_ok("cuda:\n  spec:\n    containers:\n    - name: nvidia-cuda-validator\n"
                                            "      env:\n      - name: X\n        value: FILLED_BY_THE_VALIDATOR\n");
        _cleanup_free_ char *m = render_err(GV_WORKLOAD_CUDA, ov, &runtime);
        assert_string_equal(m, "spec.containers[0].env[0].value: the validator fills no value there; replace the "
                               "placeholder");
        gv_workload_overrides_free(ov);
}

static void test_no_fill_template_keeps_placeholders(void **state)
{
        (void) state;
        json_object *t = NULL;
        gv_error_t *err = NULL;
        assert_int_equal(gv_workload_template(GV_WORKLOAD_CUDA, NULL, &t, &err), 0);
        assert_str_at(t, "spec.containers[0].image", GV_WORKLOAD_PLACEHOLDER);
        /* the template's own YAML, rendered and read back as an override, changes nothing */
        _cleanup_free_ char *y = NULL;
        assert_int_equal(gv_yaml_emit(t, &y, &err), 0);
        gv_workload_overrides_t *ov = ov_ok(y);
        json_object *a = render(GV_WORKLOAD_CUDA, ov, NULL), *b = render(GV_WORKLOAD_CUDA, NULL, NULL);
        assert_true(json_object_equal(a, b));
        json_object_put(a);
        json_object_put(b);
        json_object_put(t);
        gv_workload_overrides_free(ov);
}

/* ---- what the lifecycle needs ---- */

static void test_container_names(void **state)
{
        (void) state;
        gv_workload_overrides_t *ov = ov_ok("plugin:\n  spec:\n    containers:\n    - name: extra\n      image: x\n");
        json_object *pod = render(GV_WORKLOAD_PLUGIN, ov, NULL);
        _cleanup_strv_free_ char **init = NULL, **names = NULL;
        gv_error_t *err = NULL;
        assert_int_equal(gv_workload_container_names(pod, &init, &names, &err), 0);
        assert_string_equal(init[0], "plugin-validation");
        assert_null(init[1]);
        assert_string_equal(names[0], "nvidia-device-plugin-validator");
        assert_string_equal(names[1], "extra");
        assert_null(names[2]);
        json_object_put(pod);
        gv_workload_overrides_free(ov);
}

static void test_label_selector(void **state)
{
        (void) state;
        _cleanup_free_ char *s = gv_workload_label_selector(GV_WORKLOAD_CUDA, "gpu-node-1");
        assert_string_equal(s, "app=nvidia-cuda-validator,nvidia.com/gpu-validator.node=gpu-node-1");
        _cleanup_free_ char *p = gv_workload_label_selector(GV_WORKLOAD_PLUGIN, "n");
        assert_string_equal(p, "app=nvidia-device-plugin-validator,nvidia.com/gpu-validator.node=n");
        /* node names longer than a label value allows are compacted, deterministically */
        const char *longname = "ip-10-0-0-1.eu-west-1.compute.internal.a-very-long-cluster-domain.example.com";
        _cleanup_free_ char *v1 = gv_workload_node_label_value(longname);
        _cleanup_free_ char *v2 = gv_workload_node_label_value(longname);
        assert_string_equal(v1, v2);
        assert_true(strlen(v1) <= 63);
        assert_true(strncmp(v1, longname, 54) == 0);
        _cleanup_free_ char *v3 = gv_workload_node_label_value("ip-10-0-0-1.eu-west-1.compute.internal.a-very-long-cluster-domain.example.org");
        assert_string_not_equal(v1, v3);
}

static void test_pick_gpu_resource(void **state)
{
        (void) state;
        static const struct {
                const char *alloc, *want;
        } cases[] = {
                { "{\"cpu\":\"8\",\"nvidia.com/gpu\":\"2\"}", "nvidia.com/gpu" },
                { "{\"nvidia.com/gpu\":\"0\",\"nvidia.com/mig-2g.20gb\":\"1\",\"nvidia.com/mig-1g.10gb\":\"3\"}",
                  "nvidia.com/mig-1g.10gb" },
                { "{\"nvidia.com/gpu\":\"4\",\"nvidia.com/mig-1g.10gb\":\"0\",\"nvidia.com/mig-3g.40gb\":2}",
                  "nvidia.com/mig-3g.40gb" },
                { "{\"nvidia.com/gpu.shared\":\"8\"}", "nvidia.com/gpu.shared" },
                { "{\"nvidia.com/gpu\":\"0\"}", NULL },
                { "{}", NULL },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_object *a = json_tokener_parse(cases[i].alloc);
                char *out = NULL;
                gv_error_t *err = NULL;
                int r = gv_workload_pick_gpu_resource(a, &out, &err);
                if (cases[i].want) {
                        assert_int_equal(r, 0);
                        assert_string_equal(out, cases[i].want);
                } else {
                        assert_int_equal(r, -ENOENT);
                        assert_int_equal(err->reason, GV_REASON_WORKLOAD);
                        gv_error_free(&err);
                }
                free(out);
                json_object_put(a);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults_shape),
                cmocka_unit_test(test_fr09_default_disables_istio),
                cmocka_unit_test(test_fr09_user_template_changes_istio),
                cmocka_unit_test(test_fr11_all_fields_land_in_cuda_pod),
                cmocka_unit_test(test_fr11_plugin_section),
                cmocka_unit_test(test_fr11_render_yaml_roundtrip),
                cmocka_unit_test(test_upstream_manifest_whole_file),
                cmocka_unit_test(test_upstream_manifest_as_section),
                cmocka_unit_test(test_manifest_without_app_label_serves_both),
                cmocka_unit_test(test_bad_overrides_report_file_line_field),
                cmocka_unit_test(test_final_template_checked),
                cmocka_unit_test(test_overrides_load_missing_file),
                cmocka_unit_test(test_fill_precedence),
                cmocka_unit_test(test_fill_owned_fields_win),
                cmocka_unit_test(test_fill_missing_values),
                cmocka_unit_test(test_fill_refuses_unknown_placeholder),
                cmocka_unit_test(test_no_fill_template_keeps_placeholders),
                cmocka_unit_test(test_container_names),
                cmocka_unit_test(test_label_selector),
                cmocka_unit_test(test_pick_gpu_resource),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
