/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run-time fill: the node, namespace, image, pull secrets, runtime
 * class, tolerations, owner and GPU resource written into a template's
 * placeholders (gv_workload_fill(), gv_workload_pod()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "template-internal.h"

/* ======================================================================
 * Run-time fill
 * ====================================================================== */

static const char *nz(const char *s)
{
        return s && *s ? s : NULL;
}

static json_object *ensure_object(json_object *parent, const char *key)
{
        json_object *o = NULL;
        if (json_object_object_get_ex(parent, key, &o) && json_object_is_type(o, json_type_object))
                return o;
        o = json_object_new_object();
        if (!o || json_object_object_add(parent, key, o) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static int set_string(json_object *obj, const char *key, const char *value)
{
        json_object *s = json_object_new_string(value);
        if (!s || json_object_object_add(obj, key, s) < 0) {
                json_object_put(s);
                return -ENOMEM;
        }
        return 0;
}

/* A runtime value, its placeholder for render, or an error naming its variable. */
static int need_value(const gv_workload_runtime_t *rt, const char *value, const char *placeholder, const char *what,
                      const char **out, gv_error_t **err)
{
        if (nz(value)) {
                *out = value;
                return 0;
        }
        if (rt->placeholders) {
                *out = placeholder;
                return 0;
        }
        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "the %s is not set", what);
}

static bool absent_or_placeholder(json_object *obj, const char *key)
{
        json_object *v = NULL;
        return !json_object_object_get_ex(obj, key, &v) || !v || gv_workload_is_placeholder(v);
}

/* Rename placeholder keys of resources.limits / resources.requests to @gpu. */
static int fill_resource_keys(json_object *ctr, const gv_workload_runtime_t *rt, bool *has_nvidia, gv_error_t **err)
{
        json_object *res = NULL;
        if (!json_object_object_get_ex(ctr, "resources", &res) || !json_object_is_type(res, json_type_object))
                return 0;
        static const char *const lists[] = { "limits", "requests" };
        for (size_t i = 0; i < GV_ARRAY_SIZE(lists); i++) {
                json_object *m = NULL;
                if (!json_object_object_get_ex(res, lists[i], &m) || !json_object_is_type(m, json_type_object))
                        continue;
                static const char *const phs[] = { GV_WORKLOAD_PLACEHOLDER, GV_WORKLOAD_PLACEHOLDER_SHORT };
                for (size_t j = 0; j < GV_ARRAY_SIZE(phs); j++) {
                        const char *ph = phs[j];
                        json_object *q = NULL;
                        if (!json_object_object_get_ex(m, ph, &q))
                                continue;
                        const char *gpu = NULL;
                        int r = need_value(rt, rt->gpu_resource, "<gpu-resource>", "GPU resource name", &gpu, err);
                        if (r < 0)
                                return r;
                        if (json_object_object_add(m, gpu, json_object_get(q)) < 0) {
                                json_object_put(q);
                                return gv_error_oom(err);
                        }
                        json_object_object_del(m, ph);
                }
                json_object_object_foreach(m, k, v) {
                        (void) v;
                        if (strncmp(k, "nvidia.com/", 11) == 0 || strcmp(k, "<gpu-resource>") == 0)
                                *has_nvidia = true;
                }
        }
        return 0;
}

static int add_gpu_limit(json_object *ctr, const gv_workload_runtime_t *rt, gv_error_t **err)
{
        const char *gpu = NULL;
        int r = need_value(rt, rt->gpu_resource, "<gpu-resource>", "GPU resource name", &gpu, err);
        if (r < 0)
                return r;
        json_object *res = ensure_object(ctr, "resources");
        json_object *lim = res ? ensure_object(res, "limits") : NULL;
        json_object *one = json_object_new_int(1);
        if (!lim || !one || json_object_object_add(lim, gpu, one) < 0) {
                json_object_put(one);
                return gv_error_oom(err);
        }
        return 0;
}

static int fill_pull_secrets(json_object *spec, const char *list, gv_error_t **err)
{
        _cleanup_json_ json_object *arr = json_object_new_array();
        if (!arr)
                return gv_error_oom(err);
        for (const char *p = list; *p;) {
                size_t n = strcspn(p, ",");
                const char *s = p, *e = p + n;
                while (s < e && (*s == ' ' || *s == '\t'))
                        s++;
                while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
                        e--;
                if (e > s) {
                        /* json-c: a failed add leaves the value with the caller; a successful one takes it. */
                        _cleanup_json_ json_object *ent = json_object_new_object();
                        _cleanup_json_ json_object *name = json_object_new_string_len(s, (int) (e - s));
                        if (!ent || !name || json_object_object_add(ent, "name", name) < 0)
                                return gv_error_oom(err);
                        name = NULL; /* owned by ent now */
                        if (json_object_array_add(arr, ent) < 0)
                                return gv_error_oom(err);
                        ent = NULL; /* owned by arr now */
                }
                p += n;
                if (*p == ',')
                        p++;
        }
        if (json_object_array_length(arr) == 0)
                return 0;
        if (json_object_object_add(spec, "imagePullSecrets", arr) < 0)
                return gv_error_oom(err);
        arr = NULL; /* owned by spec now */
        return 0;
}

static int fill_tolerations(json_object *spec, json_object *extra, gv_error_t **err)
{
        if (!json_object_is_type(extra, json_type_array) || json_object_array_length(extra) == 0)
                return 0;
        json_object *list = NULL;
        if (!json_object_object_get_ex(spec, "tolerations", &list) || !json_object_is_type(list, json_type_array)) {
                list = json_object_new_array();
                if (!list || json_object_object_add(spec, "tolerations", list) < 0) {
                        json_object_put(list);
                        return gv_error_oom(err);
                }
        }
        size_t n = json_object_array_length(extra);
        for (size_t i = 0; i < n; i++) {
                json_object *t = json_object_array_get_idx(extra, i);
                bool have = false;
                size_t m = json_object_array_length(list);
                for (size_t j = 0; j < m && !have; j++)
                        have = json_object_equal(t, json_object_array_get_idx(list, j));
                if (have || !t)
                        continue;
                json_object *copy = NULL;
                if (json_object_deep_copy(t, &copy, NULL) < 0 || json_object_array_add(list, copy) < 0) {
                        json_object_put(copy);
                        return gv_error_oom(err);
                }
        }
        return 0;
}

static int set_owner(json_object *meta, const char *name, const char *uid, gv_error_t **err)
{
        json_object *refs = json_object_new_array(), *ref = json_object_new_object();
        if (!refs || !ref || json_object_array_add(refs, ref) < 0) {
                json_object_put(ref);
                json_object_put(refs);
                return gv_error_oom(err);
        }
        if (json_object_object_add(meta, "ownerReferences", refs) < 0) {
                json_object_put(refs);
                return gv_error_oom(err);
        }
        json_object *f = json_object_new_boolean(false), *b = json_object_new_boolean(false);
        if (set_string(ref, "apiVersion", "v1") < 0 || set_string(ref, "kind", "Pod") < 0 ||
            set_string(ref, "name", name) < 0 || set_string(ref, "uid", uid) < 0 || !f || !b ||
            json_object_object_add(ref, "controller", f) < 0 ||
            json_object_object_add(ref, "blockOwnerDeletion", b) < 0) {
                return gv_error_oom(err);
        }
        return 0;
}

/* Find a placeholder left anywhere (value or key); *path gets its field path (heap). */
/* NOLINTNEXTLINE(misc-no-recursion): recursion over a JSON tree whose depth the parsers bounded */
static bool find_placeholder(json_object *o, const char *path, char **where)
{
        if (gv_workload_is_placeholder(o)) {
                *where = strdup(path);
                return true;
        }
        if (json_object_is_type(o, json_type_object)) {
                json_object_object_foreach(o, k, v) {
                        _cleanup_free_ char *p = NULL;
                        if (asprintf(&p, "%s%s%s", path, *path ? "." : "", k) < 0)
                                return false;
                        if (gv_workload_is_placeholder_str(k)) {
                                *where = TAKE_PTR(p);
                                return true;
                        }
                        if (find_placeholder(v, p, where))
                                return true;
                }
        } else if (json_object_is_type(o, json_type_array)) {
                size_t n = json_object_array_length(o);
                for (size_t i = 0; i < n; i++) {
                        _cleanup_free_ char *p = NULL;
                        if (asprintf(&p, "%s[%zu]", path, i) < 0)
                                return false;
                        if (find_placeholder(json_object_array_get_idx(o, i), p, where))
                                return true;
                }
        }
        return false;
}

/* Fields the validator owns: apiVersion, kind, namespace, labels, nodeName, the name, the owner. */
static int fill_metadata(json_object *pod, gv_workload_kind_t kind, const gv_workload_runtime_t *rt, const char *node,
                         const char *ns, gv_error_t **err)
{
        json_object *meta = ensure_object(pod, "metadata"), *spec = ensure_object(pod, "spec");
        json_object *labels = meta ? ensure_object(meta, "labels") : NULL;
        /* render's "<node-name>" stays readable in the label too */
        _cleanup_free_ char *node_label = nz(rt->node_name) ? gv_workload_node_label_value(node) : strdup(node);
        if (!labels || !spec || !node_label)
                return gv_error_oom(err);
        const char *app = gv_workload_app_label(kind);
        if ((absent_or_placeholder(pod, "apiVersion") && set_string(pod, "apiVersion", "v1") < 0) ||
            (absent_or_placeholder(pod, "kind") && set_string(pod, "kind", "Pod") < 0) ||
            set_string(meta, "namespace", ns) < 0 || set_string(labels, "app", app) < 0 ||
            set_string(labels, GV_WORKLOAD_NODE_LABEL, node_label) < 0 || set_string(spec, "nodeName", node) < 0)
                return gv_error_oom(err);
        if (absent_or_placeholder(meta, "name") && absent_or_placeholder(meta, "generateName")) {
                _cleanup_free_ char *gen = NULL;
                json_object_object_del(meta, "name");
                if (asprintf(&gen, "%s-", app) < 0 || set_string(meta, "generateName", gen) < 0)
                        return gv_error_oom(err);
        }
        if (nz(rt->owner_name) && nz(rt->owner_uid))
                return set_owner(meta, rt->owner_name, rt->owner_uid, err);
        if (rt->placeholders)
                return set_owner(meta, nz(rt->owner_name) ? rt->owner_name : "<validator-pod-name>",
                                 nz(rt->owner_uid) ? rt->owner_uid : "<validator-pod-uid>", err);
        json_object_object_del(meta, "ownerReferences");
        return 0;
}

/* One container: image, pull policy, GPU resource keys (*has_nvidia when one is an nvidia.com resource). */
static int fill_container(json_object *ctr, const gv_workload_runtime_t *rt, bool *has_nvidia, gv_error_t **err)
{
        int r;
        if (absent_or_placeholder(ctr, "image")) {
                const char *img = NULL;
                if ((r = need_value(rt, rt->image, "<image>", "validator image (VALIDATOR_IMAGE)", &img, err)) < 0)
                        return r;
                if (set_string(ctr, "image", img) < 0)
                        return gv_error_oom(err);
        }
        if (absent_or_placeholder(ctr, "imagePullPolicy") &&
            set_string(ctr, "imagePullPolicy", nz(rt->image_pull_policy) ? rt->image_pull_policy : "IfNotPresent") < 0)
                return gv_error_oom(err);
        return fill_resource_keys(ctr, rt, has_nvidia, err);
}

/* Every init and main container; the plugin pod gets a GPU limit on its first when none asks for one. */
static int fill_containers(json_object *spec, gv_workload_kind_t kind, const gv_workload_runtime_t *rt,
                           gv_error_t **err)
{
        static const char *const lists[] = { "initContainers", "containers" };
        bool has_nvidia = false;
        json_object *first = NULL;
        int r;
        for (size_t l = 0; l < GV_ARRAY_SIZE(lists); l++) {
                json_object *arr = NULL;
                if (!json_object_object_get_ex(spec, lists[l], &arr) || !json_object_is_type(arr, json_type_array))
                        continue;
                size_t n = json_object_array_length(arr);
                for (size_t i = 0; i < n; i++) {
                        json_object *ctr = json_object_array_get_idx(arr, i);
                        if (!json_object_is_type(ctr, json_type_object))
                                continue;
                        if (!first)
                                first = ctr;
                        if ((r = fill_container(ctr, rt, &has_nvidia, err)) < 0)
                                return r;
                }
        }
        if (kind == GV_WORKLOAD_PLUGIN && !has_nvidia && first && (r = add_gpu_limit(first, rt, err)) < 0)
                return r;
        return 0;
}

/* Pod-level settings: pull secrets, runtime class, service account, tolerations (the template's value wins). */
static int fill_pod_settings(json_object *spec, const gv_workload_runtime_t *rt, gv_error_t **err)
{
        int r;
        json_object *secrets = NULL;
        if ((!json_object_object_get_ex(spec, "imagePullSecrets", &secrets) || !secrets) &&
            nz(rt->image_pull_secrets) && (r = fill_pull_secrets(spec, rt->image_pull_secrets, err)) < 0)
                return r;
        if (absent_or_placeholder(spec, "runtimeClassName")) {
                if (nz(rt->runtime_class)) {
                        if (set_string(spec, "runtimeClassName", rt->runtime_class) < 0)
                                return gv_error_oom(err);
                } else {
                        json_object_object_del(spec, "runtimeClassName");
                }
        }
        /* The validation pods run as the validator's own service account (the chart's,
         * or the operator's nvidia-operator-validator), so the name always exists. */
        json_object *sa = NULL;
        if (json_object_object_get_ex(spec, "serviceAccountName", &sa) && gv_workload_is_placeholder(sa) &&
            set_string(spec, "serviceAccountName",
                       nz(rt->service_account) ? rt->service_account : "nvidia-operator-validator") < 0)
                return gv_error_oom(err);
        return fill_tolerations(spec, rt->tolerations, err);
}

int gv_workload_fill(json_object *pod, gv_workload_kind_t kind, const gv_workload_runtime_t *rt, gv_error_t **err)
{
        static const char *const pull[] = { "Always", "IfNotPresent", "Never" };
        const char *node = NULL, *ns = NULL;
        int r;

        if (kind >= GV_WORKLOAD__MAX || !json_object_is_type(pod, json_type_object) || !rt)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "fill: bad arguments");
        if ((r = need_value(rt, rt->node_name, "<node-name>", "node name (NODE_NAME)", &node, err)) < 0 ||
            (r = need_value(rt, rt->namespace, "<namespace>", "namespace (OPERATOR_NAMESPACE)", &ns, err)) < 0)
                return r;
        if (nz(rt->image_pull_policy) && !gv_workload_in_list(rt->image_pull_policy, pull, GV_ARRAY_SIZE(pull)))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "VALIDATOR_IMAGE_PULL_POLICY=%s: expected Always, IfNotPresent or Never",
                                    rt->image_pull_policy);
        if ((r = fill_metadata(pod, kind, rt, node, ns, err)) < 0)
                return r;
        json_object *spec = ensure_object(pod, "spec");
        if ((r = fill_containers(spec, kind, rt, err)) < 0 || (r = fill_pod_settings(spec, rt, err)) < 0)
                return r;

        _cleanup_free_ char *where = NULL;
        if (find_placeholder(pod, "", &where))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "%s: the validator fills no value there; replace the placeholder",
                                    where ? where : "(somewhere)");
        return 0;
}

int gv_workload_pod(gv_workload_kind_t kind, const gv_workload_overrides_t *ov, const gv_workload_runtime_t *rt,
                    json_object **out, gv_error_t **err)
{
        _cleanup_json_ json_object *pod = NULL;
        int r = gv_workload_template(kind, ov, &pod, err);
        if (r < 0 || (r = gv_workload_fill(pod, kind, rt, err)) < 0)
                return r;
        *out = TAKE_PTR(pod);
        return 0;
}

