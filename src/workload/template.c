/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Override files (parse, validate with file:line:field), the template of
 * each kind, and the run-time fill-in.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "workload.h"

#define OVERRIDE_MAX_BYTES ((size_t) 1024 * 1024)

struct gv_workload_overrides {
        gv_doc_t *doc;
        json_object *section[GV_WORKLOAD__MAX]; /* borrowed from doc; NULL: none */
        bool manifest[GV_WORKLOAD__MAX];         /* section is a whole Pod that replaces the default */
};

static const char *const kind_names[GV_WORKLOAD__MAX] = { "cuda", "plugin" };
static const char *const app_labels[GV_WORKLOAD__MAX] = { "nvidia-cuda-validator", "nvidia-device-plugin-validator" };

const char *gv_workload_kind_name(gv_workload_kind_t kind)
{
        return kind < GV_WORKLOAD__MAX ? kind_names[kind] : "?";
}

int gv_workload_kind_from_name(const char *name, gv_workload_kind_t *out)
{
        for (int k = 0; k < GV_WORKLOAD__MAX; k++)
                if (name && strcmp(name, kind_names[k]) == 0) {
                        *out = (gv_workload_kind_t) k;
                        return 0;
                }
        return -EINVAL;
}

const char *gv_workload_app_label(gv_workload_kind_t kind)
{
        return kind < GV_WORKLOAD__MAX ? app_labels[kind] : "";
}

static bool is_placeholder(json_object *v)
{
        if (!json_object_is_type(v, json_type_string))
                return false;
        const char *s = json_object_get_string(v);
        return strcmp(s, GV_WORKLOAD_PLACEHOLDER) == 0 || strcmp(s, GV_WORKLOAD_PLACEHOLDER_SHORT) == 0;
}

static bool is_placeholder_str(const char *s)
{
        return strcmp(s, GV_WORKLOAD_PLACEHOLDER) == 0 || strcmp(s, GV_WORKLOAD_PLACEHOLDER_SHORT) == 0;
}

/* ======================================================================
 * Validation of override files
 * ====================================================================== */

struct vctx {
        const gv_doc_t *doc;
        gv_error_t **err;
        bool manifest;           /* a whole Pod (no $patch, containers required) */
        int kind;                /* the section's kind, or -1 when the manifest may serve either */
};

/* Report "NAME:LINE: PATH: message" with the line of @node, else @fallback. */
static int __attribute__((format(printf, 5, 6)))
vfail(struct vctx *c, json_object *node, json_object *fallback, const char *path, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        unsigned line = gv_doc_line(c->doc, node);
        if (!line)
                line = gv_doc_line(c->doc, fallback);
        if (line)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "%s:%u: %s: %s", gv_doc_name(c->doc), line,
                                    path, msg ? msg : fmt);
        return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "%s: %s: %s", gv_doc_name(c->doc), path,
                            msg ? msg : fmt);
}

static const char *type_word(json_object *v)
{
        switch (json_object_get_type(v)) {
        case json_type_null:
                return "null";
        case json_type_boolean:
                return "a boolean";
        case json_type_int:
        case json_type_double:
                return "a number";
        case json_type_string:
                return "a string";
        case json_type_array:
                return "a list";
        default:
                return "a mapping";
        }
}

/* @v must be null (a merge patch removes the field) or of type @t. */
static int expect(struct vctx *c, json_object *v, json_object *parent, const char *path, json_type t)
{
        static const char *const want[] = {
                [json_type_boolean] = "a boolean (true or false)", [json_type_int] = "a whole number",
                [json_type_string] = "a string",                   [json_type_array] = "a list",
                [json_type_object] = "a mapping",
        };
        if (!v || json_object_is_type(v, t))
                return 0;
        if (t == json_type_string && (json_object_is_type(v, json_type_boolean) ||
                                      json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
                return vfail(c, v, parent, path, "expected a string, got %s (quote it: \"%s\")", type_word(v),
                             json_object_get_string(v));
        return vfail(c, v, parent, path, "expected %s, got %s", want[t], type_word(v));
}

static int expect_enum(struct vctx *c, json_object *v, json_object *parent, const char *path,
                       const char *const *allowed, size_t n)
{
        int r = expect(c, v, parent, path, json_type_string);
        if (r < 0 || !v || is_placeholder(v))
                return r;
        const char *s = json_object_get_string(v);
        for (size_t i = 0; i < n; i++)
                if (strcmp(s, allowed[i]) == 0)
                        return 0;
        _cleanup_free_ char *list = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&list, &len);
        for (size_t i = 0; f && i < n; i++)
                fprintf(f, "%s%s", i ? ", " : "", allowed[i]);
        /* A list cut short by a failed flush is not shown: the generic words are. */
        if (gv_memstream_close(f, &list) < 0)
                list = NULL;
        return vfail(c, v, parent, path, "'%s' is not one of %s", s, list ? list : "the allowed values");
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(s, list[i]) == 0)
                        return true;
        return false;
}

static int check_known_keys(struct vctx *c, json_object *obj, const char *path, const char *const *known, size_t n)
{
        json_object_object_foreach(obj, k, v) {
                if (!in_list(k, known, n))
                        return vfail(c, v, obj, path, "unknown field '%s'", k);
        }
        return 0;
}

/* A mapping whose values are strings (or null). */
static int check_string_map(struct vctx *c, json_object *v, json_object *parent, const char *path)
{
        int r = expect(c, v, parent, path, json_type_object);
        if (r < 0 || !v)
                return r;
        json_object_object_foreach(v, k, val) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s.%s", path, k) < 0)
                        return gv_error_set(c->err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                if ((r = expect(c, val, v, p, json_type_string)) < 0)
                        return r;
        }
        return 0;
}

static int check_string_list(struct vctx *c, json_object *v, json_object *parent, const char *path)
{
        int r = expect(c, v, parent, path, json_type_array);
        if (r < 0 || !v)
                return r;
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s[%zu]", path, i) < 0)
                        return gv_error_set(c->err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                if (!e)
                        return vfail(c, e, v, p, "expected a string, got null");
                if ((r = expect(c, e, v, p, json_type_string)) < 0)
                        return r;
        }
        return 0;
}

/* A list of mappings, each with a non-empty string `name` (when @need_name). */
typedef int (*entry_check_fn)(struct vctx *c, json_object *entry, json_object *list, const char *path);

static int check_list_of_maps(struct vctx *c, json_object *v, json_object *parent, const char *path, bool need_name,
                              entry_check_fn check)
{
        int r = expect(c, v, parent, path, json_type_array);
        if (r < 0 || !v)
                return r;
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i), *name = NULL;
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s[%zu]", path, i) < 0)
                        return gv_error_set(c->err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                if (!json_object_is_type(e, json_type_object))
                        return vfail(c, e, v, p, "expected a mapping, got %s", type_word(e));
                if (need_name) {
                        if (!json_object_object_get_ex(e, "name", &name) || !name)
                                return vfail(c, e, v, p, "has no name");
                        _cleanup_free_ char *np = NULL;
                        if (asprintf(&np, "%s.name", p) < 0)
                                return gv_error_set(c->err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        if ((r = expect(c, name, e, np, json_type_string)) < 0)
                                return r;
                        if (!*json_object_get_string(name))
                                return vfail(c, name, e, np, "must not be empty");
                }
                if (check && (r = check(c, e, v, p)) < 0)
                        return r;
        }
        return 0;
}

/* Helper: path of a child field. */
#define CHILD(var, path, key)                                                                         \
        _cleanup_free_ char *var = NULL;                                                              \
        if (asprintf(&(var), "%s.%s", (path), (key)) < 0)                                             \
                return gv_error_set(c->err, ENOMEM, GV_REASON_INTERNAL, "out of memory")

static int check_quantity_map(struct vctx *c, json_object *v, json_object *parent, const char *path)
{
        int r = expect(c, v, parent, path, json_type_object);
        if (r < 0 || !v)
                return r;
        json_object_object_foreach(v, k, q) {
                CHILD(p, path, k);
                if (q && !json_object_is_type(q, json_type_string) && !json_object_is_type(q, json_type_int) &&
                    !json_object_is_type(q, json_type_double))
                        return vfail(c, q, v, p, "expected a quantity (\"500m\", \"1Gi\", 2), got %s", type_word(q));
        }
        return 0;
}

static int check_resources(struct vctx *c, json_object *v, json_object *parent, const char *path)
{
        int r = expect(c, v, parent, path, json_type_object);
        if (r < 0 || !v)
                return r;
        json_object_object_foreach(v, k, val) {
                CHILD(p, path, k);
                if (strcmp(k, "limits") == 0 || strcmp(k, "requests") == 0) {
                        if ((r = check_quantity_map(c, val, v, p)) < 0)
                                return r;
                } else if (strcmp(k, "claims") == 0) {
                        if ((r = check_list_of_maps(c, val, v, p, true, NULL)) < 0)
                                return r;
                } else {
                        return vfail(c, val, v, path, "unknown field '%s' (expected limits or requests)", k);
                }
        }
        return 0;
}

static int check_container(struct vctx *c, json_object *ctr, json_object *list, const char *path)
{
        (void) list;
        /* core/v1 Container fields */
        static const char *const known[] = {
                "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
                "resizePolicy", "restartPolicy", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
                "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy",
                "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty", "$patch",
        };
        static const char *const pull[] = { "Always", "IfNotPresent", "Never" };
        int r;
        if ((r = check_known_keys(c, ctr, path, known, GV_ARRAY_SIZE(known))) < 0)
                return r;
        json_object_object_foreach(ctr, k, v) {
                CHILD(p, path, k);
                if (strcmp(k, "image") == 0 || strcmp(k, "workingDir") == 0)
                        r = expect(c, v, ctr, p, json_type_string);
                else if (strcmp(k, "imagePullPolicy") == 0)
                        r = expect_enum(c, v, ctr, p, pull, GV_ARRAY_SIZE(pull));
                else if (strcmp(k, "command") == 0 || strcmp(k, "args") == 0)
                        r = check_string_list(c, v, ctr, p);
                else if (strcmp(k, "env") == 0)
                        r = check_list_of_maps(c, v, ctr, p, true, NULL);
                else if (strcmp(k, "volumeMounts") == 0 || strcmp(k, "ports") == 0 || strcmp(k, "envFrom") == 0)
                        r = check_list_of_maps(c, v, ctr, p, false, NULL);
                else if (strcmp(k, "resources") == 0)
                        r = check_resources(c, v, ctr, p);
                else if (strcmp(k, "securityContext") == 0 || strcmp(k, "lifecycle") == 0)
                        r = expect(c, v, ctr, p, json_type_object);
                else if (strcmp(k, "$patch") == 0) {
                        if (c->manifest)
                                r = vfail(c, v, ctr, p, "only allowed in a merge patch section");
                        else if (!json_object_is_type(v, json_type_string) ||
                                 strcmp(json_object_get_string(v), "delete") != 0)
                                r = vfail(c, v, ctr, p, "the only directive is `$patch: delete`");
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int check_toleration(struct vctx *c, json_object *t, json_object *list, const char *path)
{
        (void) list;
        static const char *const known[] = { "key", "operator", "value", "effect", "tolerationSeconds" };
        static const char *const ops[] = { "Exists", "Equal" };
        static const char *const effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", "" };
        int r;
        if ((r = check_known_keys(c, t, path, known, GV_ARRAY_SIZE(known))) < 0)
                return r;
        json_object_object_foreach(t, k, v) {
                CHILD(p, path, k);
                if (strcmp(k, "operator") == 0)
                        r = expect_enum(c, v, t, p, ops, GV_ARRAY_SIZE(ops));
                else if (strcmp(k, "effect") == 0)
                        r = expect_enum(c, v, t, p, effects, GV_ARRAY_SIZE(effects));
                else if (strcmp(k, "tolerationSeconds") == 0)
                        r = expect(c, v, t, p, json_type_int);
                else
                        r = expect(c, v, t, p, json_type_string);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int check_metadata(struct vctx *c, json_object *meta, json_object *parent)
{
        /* ObjectMeta fields */
        static const char *const known[] = {
                "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
                "ownerReferences", "finalizers", "managedFields",
        };
        int r = expect(c, meta, parent, "metadata", json_type_object);
        if (r < 0 || !meta)
                return r;
        if ((r = check_known_keys(c, meta, "metadata", known, GV_ARRAY_SIZE(known))) < 0)
                return r;
        json_object_object_foreach(meta, k, v) {
                CHILD(p, "metadata", k);
                if (strcmp(k, "labels") == 0 || strcmp(k, "annotations") == 0) {
                        r = check_string_map(c, v, meta, p);
                } else if (strcmp(k, "name") == 0 || strcmp(k, "generateName") == 0) {
                        r = expect(c, v, meta, p, json_type_string);
                } else if (strcmp(k, "namespace") == 0) {
                        r = expect(c, v, meta, p, json_type_string);
                        if (r == 0 && v && !is_placeholder(v))
                                r = vfail(c, v, meta, p,
                                          "set by the validator (its own namespace, OPERATOR_NAMESPACE); "
                                          "remove it or use " GV_WORKLOAD_PLACEHOLDER);
                } else if (strcmp(k, "ownerReferences") == 0) {
                        if (v)
                                r = vfail(c, v, meta, p, "set by the validator (the validator pod owns it); remove it");
                } else if (strcmp(k, "finalizers") == 0) {
                        r = check_string_list(c, v, meta, p);
                }
                if (r < 0)
                        return r;
        }
        /* Labels the validator selects its pods by. */
        json_object *labels = NULL, *app = NULL, *node = NULL;
        if (json_object_object_get_ex(meta, "labels", &labels) && labels) {
                if (json_object_object_get_ex(labels, GV_WORKLOAD_NODE_LABEL, &node) && node)
                        return vfail(c, node, labels, "metadata.labels." GV_WORKLOAD_NODE_LABEL,
                                     "set by the validator (the node name); remove it");
                if (json_object_object_get_ex(labels, "app", &app) && c->kind >= 0 &&
                    (!app || strcmp(json_object_get_string(app), app_labels[c->kind]) != 0))
                        return vfail(c, app, labels, "metadata.labels.app",
                                     "must be %s (the validator selects its %s pods by it)", app_labels[c->kind],
                                     kind_names[c->kind]);
        }
        return 0;
}

static int check_spec(struct vctx *c, json_object *spec, json_object *parent)
{
        /* core/v1 PodSpec fields */
        static const char *const known[] = {
                "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
                "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
                "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork",
                "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
                "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName",
                "priority", "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks",
                "preemptionPolicy", "overhead", "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers",
                "schedulingGates", "resourceClaims", "resources",
        };
        static const char *const restart[] = { "Always", "OnFailure", "Never" };
        int r = expect(c, spec, parent, "spec", json_type_object);
        if (r < 0 || !spec)
                return r;
        if ((r = check_known_keys(c, spec, "spec", known, GV_ARRAY_SIZE(known))) < 0)
                return r;
        json_object_object_foreach(spec, k, v) {
                CHILD(p, "spec", k);
                if (strcmp(k, "containers") == 0 || strcmp(k, "initContainers") == 0)
                        r = check_list_of_maps(c, v, spec, p, true, check_container);
                else if (strcmp(k, "tolerations") == 0)
                        r = check_list_of_maps(c, v, spec, p, false, check_toleration);
                else if (strcmp(k, "imagePullSecrets") == 0 || strcmp(k, "volumes") == 0)
                        r = check_list_of_maps(c, v, spec, p, true, NULL);
                else if (strcmp(k, "nodeSelector") == 0)
                        r = check_string_map(c, v, spec, p);
                else if (strcmp(k, "restartPolicy") == 0)
                        r = expect_enum(c, v, spec, p, restart, GV_ARRAY_SIZE(restart));
                else if (strcmp(k, "priorityClassName") == 0 || strcmp(k, "runtimeClassName") == 0 ||
                         strcmp(k, "serviceAccountName") == 0 || strcmp(k, "schedulerName") == 0 ||
                         strcmp(k, "dnsPolicy") == 0 || strcmp(k, "serviceAccount") == 0)
                        r = expect(c, v, spec, p, json_type_string);
                else if (strcmp(k, "securityContext") == 0 || strcmp(k, "affinity") == 0 ||
                         strcmp(k, "overhead") == 0 || strcmp(k, "dnsConfig") == 0)
                        r = expect(c, v, spec, p, json_type_object);
                else if (strcmp(k, "priority") == 0 || strcmp(k, "terminationGracePeriodSeconds") == 0 ||
                         strcmp(k, "activeDeadlineSeconds") == 0)
                        r = expect(c, v, spec, p, json_type_int);
                else if (strcmp(k, "hostNetwork") == 0 || strcmp(k, "hostPID") == 0 || strcmp(k, "hostIPC") == 0 ||
                         strcmp(k, "automountServiceAccountToken") == 0 || strcmp(k, "enableServiceLinks") == 0)
                        r = expect(c, v, spec, p, json_type_boolean);
                else if (strcmp(k, "nodeName") == 0) {
                        r = expect(c, v, spec, p, json_type_string);
                        if (r == 0 && v && !is_placeholder(v))
                                r = vfail(c, v, spec, p, "set by the validator (its own node); remove it");
                }
                if (r < 0)
                        return r;
        }
        if (c->manifest) {
                json_object *ctrs = NULL;
                if (!json_object_object_get_ex(spec, "containers", &ctrs) || !ctrs ||
                    json_object_array_length(ctrs) == 0)
                        return vfail(c, ctrs, spec, "spec.containers", "a Pod manifest needs at least one container");
        }
        return 0;
}

/* A Pod merge patch or manifest: apiVersion, kind, metadata, spec. */
static int check_pod(struct vctx *c, json_object *pod, json_object *parent, const char *section)
{
        static const char *const known[] = { "apiVersion", "kind", "metadata", "spec" };
        int r;
        if (!json_object_is_type(pod, json_type_object))
                return vfail(c, pod, parent, section, "expected a mapping (a Pod merge patch or a Pod manifest), got %s",
                             type_word(pod));
        json_object_object_foreach(pod, k, v) {
                if (!in_list(k, known, GV_ARRAY_SIZE(known)))
                        return vfail(c, v, pod, section, "unknown field '%s' (expected metadata or spec%s)", k,
                                     c->manifest ? ", apiVersion, kind" : "");
                if (strcmp(k, "apiVersion") == 0 && (!json_object_is_type(v, json_type_string) ||
                                                     strcmp(json_object_get_string(v), "v1") != 0))
                        return vfail(c, v, pod, "apiVersion", "expected v1");
                if (strcmp(k, "kind") == 0 && (!json_object_is_type(v, json_type_string) ||
                                               strcmp(json_object_get_string(v), "Pod") != 0))
                        return vfail(c, v, pod, "kind", "expected Pod");
        }
        json_object *meta = NULL, *spec = NULL;
        json_object_object_get_ex(pod, "metadata", &meta);
        json_object_object_get_ex(pod, "spec", &spec);
        if ((r = check_metadata(c, meta, pod)) < 0 || (r = check_spec(c, spec, pod)) < 0)
                return r;
        if (c->manifest && !spec)
                return vfail(c, pod, parent, "spec", "a Pod manifest needs a spec");
        return 0;
}

static bool looks_like_manifest(json_object *o)
{
        return json_object_is_type(o, json_type_object) &&
               (json_object_object_get_ex(o, "apiVersion", NULL) || json_object_object_get_ex(o, "kind", NULL));
}

/* The kind a whole-file manifest serves by its app label: -1 for both. */
static int manifest_kind(struct vctx *c, json_object *pod, int *kind)
{
        json_object *meta = NULL, *labels = NULL, *app = NULL;
        *kind = -1;
        if (!json_object_object_get_ex(pod, "metadata", &meta) || !json_object_is_type(meta, json_type_object) ||
            !json_object_object_get_ex(meta, "labels", &labels) || !json_object_is_type(labels, json_type_object) ||
            !json_object_object_get_ex(labels, "app", &app) || !json_object_is_type(app, json_type_string))
                return 0;
        for (int k = 0; k < GV_WORKLOAD__MAX; k++)
                if (strcmp(json_object_get_string(app), app_labels[k]) == 0) {
                        *kind = k;
                        return 0;
                }
        return vfail(c, app, labels, "metadata.labels.app", "expected %s or %s (it says which pod this manifest is for)",
                     app_labels[0], app_labels[1]);
}

int gv_workload_overrides_parse(const char *data, size_t len, const char *name, gv_workload_overrides_t **out,
                                gv_error_t **err)
{
        gv_doc_t *doc = NULL;
        int r = gv_yaml_parse(data, len, name, &doc, err);
        if (r < 0)
                return r;
        gv_workload_overrides_t *ov = calloc(1, sizeof(*ov));
        if (!ov) {
                gv_doc_free(doc);
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        ov->doc = doc;
        json_object *root = gv_doc_root(doc);
        struct vctx c = { .doc = doc, .err = err, .kind = -1 };

        if (!root) {
                /* An empty file changes nothing. */
        } else if (!json_object_is_type(root, json_type_object)) {
                r = vfail(&c, root, NULL, "(top level)",
                          "expected a mapping with cuda: and plugin: sections, or a Pod manifest; got %s",
                          type_word(root));
        } else if (looks_like_manifest(root)) {
                c.manifest = true;
                int kind;
                if ((r = manifest_kind(&c, root, &kind)) == 0) {
                        c.kind = kind;
                        r = check_pod(&c, root, NULL, "(top level)");
                }
                for (int k = 0; r == 0 && k < GV_WORKLOAD__MAX; k++)
                        if (kind < 0 || kind == k) {
                                ov->section[k] = root;
                                ov->manifest[k] = true;
                        }
        } else {
                json_object_object_foreach(root, key, val) {
                        gv_workload_kind_t kind;
                        if (gv_workload_kind_from_name(key, &kind) < 0) {
                                r = vfail(&c, val, root, key,
                                          "unknown section (expected cuda or plugin, or a whole Pod manifest with "
                                          "apiVersion: v1 and kind: Pod)");
                                break;
                        }
                        if (!val)
                                continue; /* "cuda:" with nothing under it */
                        c.kind = (int) kind;
                        c.manifest = looks_like_manifest(val);
                        if ((r = check_pod(&c, val, root, key)) < 0) {
                                break;
                        }
                        ov->section[kind] = val;
                        ov->manifest[kind] = c.manifest;
                }
        }
        if (r < 0) {
                gv_workload_overrides_free(ov);
                return r;
        }
        *out = ov;
        return 0;
}

int gv_workload_overrides_load(const char *path, gv_workload_overrides_t **out, gv_error_t **err)
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r = gv_read_file_at(AT_FDCWD, path, false, OVERRIDE_MAX_BYTES, &data, &len, err);
        if (r < 0) {
                gv_error_set_reason(err, GV_REASON_CONFIG);
                return gv_error_prefix(err, "workload template %s", path);
        }
        return gv_workload_overrides_parse(data, len, path, out, err);
}

void gv_workload_overrides_free(gv_workload_overrides_t *ov)
{
        if (!ov)
                return;
        gv_doc_free(ov->doc);
        free(ov);
}

/* ======================================================================
 * Templates
 * ====================================================================== */

/* The template after the override: containers present, named, names unique. */
static int check_final(json_object *pod, const char *who, gv_error_t **err)
{
        json_object *spec = NULL, *ctrs = NULL;
        if (!json_object_object_get_ex(pod, "spec", &spec) || !json_object_is_type(spec, json_type_object))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: spec: the pod has no spec", who);
        if (!json_object_object_get_ex(spec, "containers", &ctrs) || !json_object_is_type(ctrs, json_type_array) ||
            json_object_array_length(ctrs) == 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: spec.containers: the pod has no containers",
                                    who);
        _cleanup_strv_free_ char **init = NULL, **main_names = NULL;
        int r = gv_workload_container_names(pod, &init, &main_names, err);
        if (r < 0)
                return gv_error_prefix(err, "%s", who);
        for (char **a = init; a && *a; a++) {
                for (char **b = a + 1; *b; b++)
                        if (strcmp(*a, *b) == 0)
                                goto dup;
                for (char **b = main_names; b && *b; b++)
                        if (strcmp(*a, *b) == 0)
                                goto dup;
                continue;
        dup:
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: spec: two containers are named '%s'", who, *a);
        }
        for (char **a = main_names; a && *a; a++)
                for (char **b = a + 1; *b; b++)
                        if (strcmp(*a, *b) == 0)
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s: spec: two containers are named '%s'", who, *a);
        return 0;
}

/*
 * A Kubernetes quantity (resource.Quantity: a decimal number with an
 * optional binary suffix Ki..Ei, decimal suffix n u m k M G T P E, or
 * exponent e/E) as a number of base units; false when @q is not one.
 */
static bool quantity_value(json_object *q, long double *out)
{
        if (json_object_is_type(q, json_type_int) || json_object_is_type(q, json_type_double)) {
                *out = (long double) json_object_get_double(q);
                return true;
        }
        if (!json_object_is_type(q, json_type_string))
                return false;
        const char *s = json_object_get_string(q);
        size_t n = strspn(s, "+-0123456789.");
        if (n == 0)
                return false;
        _cleanup_free_ char *num = strndup(s, n);
        if (!num)
                return false;
        char *end = NULL;
        long double v = strtold(num, &end);
        if (!end || *end)
                return false;
        static const struct {
                const char *suffix;
                long double factor;
        } units[] = {
                { "", 1.0L },     { "n", 1e-9L },   { "u", 1e-6L },    { "m", 1e-3L },    { "k", 1e3L },
                { "M", 1e6L },    { "G", 1e9L },    { "T", 1e12L },    { "P", 1e15L },    { "E", 1e18L },
                { "Ki", 1024.0L }, { "Mi", 1048576.0L }, { "Gi", 1073741824.0L }, { "Ti", 1099511627776.0L },
                { "Pi", 1125899906842624.0L }, { "Ei", 1152921504606846976.0L },
        };
        const char *suf = s + n;
        for (size_t i = 0; i < GV_ARRAY_SIZE(units); i++)
                if (strcmp(suf, units[i].suffix) == 0) {
                        *out = v * units[i].factor;
                        return true;
                }
        if ((*suf == 'e' || *suf == 'E') && suf[1]) {
                char *e2 = NULL;
                long x = strtol(suf + 1, &e2, 10);
                if (*e2 || x < -30 || x > 30)
                        return false;
                long double f = 1.0L;
                for (long i = 0; i < (x < 0 ? -x : x); i++)
                        f *= 10.0L;
                *out = x < 0 ? v / f : v * f;
                return true;
        }
        return false;
}

/* The member @key of @o (NULL when @o is not a mapping or lacks it). */
static json_object *member(json_object *o, const char *key)
{
        json_object *v = NULL;
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

/* The line in @ov's file that set resources.{limits,requests}[@res] of container @name in @list, or 0. */
static unsigned override_line(const gv_workload_overrides_t *ov, json_object *section, const char *list,
                              const char *name, const char *res)
{
        if (!ov || !section)
                return 0;
        json_object *ctrs = member(member(section, "spec"), list);
        if (!ctrs || !json_object_is_type(ctrs, json_type_array))
                return 0;
        for (size_t i = 0; i < json_object_array_length(ctrs); i++) {
                json_object *c = json_object_array_get_idx(ctrs, i), *n = member(c, "name");
                if (!n || !json_object_is_type(n, json_type_string) || strcmp(json_object_get_string(n), name) != 0)
                        continue;
                json_object *r = member(c, "resources");
                unsigned line = gv_doc_line(ov->doc, member(member(r, "limits"), res));
                if (!line)
                        line = gv_doc_line(ov->doc, member(member(r, "requests"), res));
                if (!line)
                        line = gv_doc_line(ov->doc, c);
                return line;
        }
        return 0;
}

/*
 * No request above its limit (kube-apiserver, ValidateResourceRequirements:
 * "must be less than or equal to <resource> limit of <limit>"), so that
 * render never emits a pod the API server refuses; the error names the
 * override file's line that set the limit (or the request).
 */
static int check_requests_within_limits(json_object *pod, const gv_workload_overrides_t *ov, json_object *section,
                                        const char *kind, const char *who, gv_error_t **err)
{
        static const char *const lists[] = { "initContainers", "containers" };
        for (size_t l = 0; l < GV_ARRAY_SIZE(lists); l++) {
                json_object *ctrs = member(member(pod, "spec"), lists[l]);
                if (!ctrs || !json_object_is_type(ctrs, json_type_array))
                        continue;
                for (size_t i = 0; i < json_object_array_length(ctrs); i++) {
                        json_object *c = json_object_array_get_idx(ctrs, i), *res = member(c, "resources");
                        json_object *req = member(res, "requests"), *lim = member(res, "limits");
                        if (!req || !lim || !json_object_is_type(req, json_type_object))
                                continue;
                        json_object_object_foreach(req, k, q) {
                                json_object *cap = member(lim, k);
                                long double vq, vl;
                                if (!cap || !quantity_value(q, &vq) || !quantity_value(cap, &vl) || vq <= vl)
                                        continue;
                                json_object *n = member(c, "name");
                                unsigned line = override_line(ov, section, lists[l],
                                                              n ? json_object_get_string(n) : "", k);
                                _cleanup_free_ char *where = NULL;
                                int w = line && ov ? asprintf(&where, "%s:%u: %s template", gv_doc_name(ov->doc), line, kind)
                                             : asprintf(&where, "%s", who);
                                if (w < 0) {
                                        where = NULL;
                                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                                }
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s: spec.%s[%zu].resources.requests: Invalid value: \"%s\": "
                                                    "must be less than or equal to %s limit of %s",
                                                    where, lists[l], i, json_object_get_string(q), k,
                                                    json_object_get_string(cap));
                        }
                }
        }
        return 0;
}

int gv_workload_template(gv_workload_kind_t kind, const gv_workload_overrides_t *ov, json_object **out,
                         gv_error_t **err)
{
        if (kind >= GV_WORKLOAD__MAX)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "unknown workload kind %d", (int) kind);
        json_object *section = ov ? ov->section[kind] : NULL;
        json_object *pod = NULL;
        int r;

        if (section && ov->manifest[kind]) {
                /* A whole manifest replaces the default; nulls are dropped as a merge into {} does. */
                pod = gv_json_merge_patch(NULL, section);
                if (!pod)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        } else {
                gv_doc_t *doc = NULL;
                const char *y = gv_workload_default_yaml(kind);
                if ((r = gv_yaml_parse(y, strlen(y), "default template", &doc, err)) < 0) {
                        gv_error_set_reason(err, GV_REASON_INTERNAL); /* our own template: a bug */
                        return r;
                }
                pod = json_object_get(gv_doc_root(doc));
                gv_doc_free(doc);
                if (section && gv_workload_merge(pod, section, err) < 0) {
                        json_object_put(pod);
                        return gv_error_prefix(err, "%s: %s", gv_doc_name(ov->doc), kind_names[kind]);
                }
        }
        _cleanup_free_ char *who = NULL;
        if (asprintf(&who, "%s%s%s template", ov && section ? gv_doc_name(ov->doc) : "",
                     ov && section ? ": " : "", kind_names[kind]) < 0) {
                json_object_put(pod);
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        if ((r = check_final(pod, who, err)) < 0 ||
            (r = check_requests_within_limits(pod, ov, section, kind_names[kind], who, err)) < 0) {
                json_object_put(pod);
                return r;
        }
        *out = pod;
        return 0;
}

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
        return !json_object_object_get_ex(obj, key, &v) || !v || is_placeholder(v);
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
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
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
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        return 0;
}

static int fill_pull_secrets(json_object *spec, const char *list, gv_error_t **err)
{
        json_object *arr = json_object_new_array();
        if (!arr)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        for (const char *p = list; *p;) {
                size_t n = strcspn(p, ",");
                const char *s = p, *e = p + n;
                while (s < e && (*s == ' ' || *s == '\t'))
                        s++;
                while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
                        e--;
                if (e > s) {
                        json_object *ent = json_object_new_object();
                        json_object *name = json_object_new_string_len(s, (int) (e - s));
                        if (!ent || !name || json_object_object_add(ent, "name", name) < 0 ||
                            json_object_array_add(arr, ent) < 0) {
                                json_object_put(name);
                                json_object_put(ent);
                                json_object_put(arr);
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        }
                }
                p += n;
                if (*p == ',')
                        p++;
        }
        if (json_object_array_length(arr) == 0) {
                json_object_put(arr);
                return 0;
        }
        if (json_object_object_add(spec, "imagePullSecrets", arr) < 0) {
                json_object_put(arr);
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
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
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
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
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
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
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        if (json_object_object_add(meta, "ownerReferences", refs) < 0) {
                json_object_put(refs);
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        json_object *f = json_object_new_boolean(false), *b = json_object_new_boolean(false);
        if (set_string(ref, "apiVersion", "v1") < 0 || set_string(ref, "kind", "Pod") < 0 ||
            set_string(ref, "name", name) < 0 || set_string(ref, "uid", uid) < 0 || !f || !b ||
            json_object_object_add(ref, "controller", f) < 0 ||
            json_object_object_add(ref, "blockOwnerDeletion", b) < 0) {
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        return 0;
}

/* Find a placeholder left anywhere (value or key); *path gets its field path (heap). */
/* NOLINTNEXTLINE(misc-no-recursion): recursion over a JSON tree whose depth the parsers bounded */
static bool find_placeholder(json_object *o, const char *path, char **where)
{
        if (is_placeholder(o)) {
                *where = strdup(path);
                return true;
        }
        if (json_object_is_type(o, json_type_object)) {
                json_object_object_foreach(o, k, v) {
                        _cleanup_free_ char *p = NULL;
                        if (asprintf(&p, "%s%s%s", path, *path ? "." : "", k) < 0)
                                return false;
                        if (is_placeholder_str(k)) {
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

/* NOLINTNEXTLINE(readability-function-size,readability-function-cognitive-complexity): one placeholder kind per block; to be split in the architecture refactor */
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
        if (nz(rt->image_pull_policy) && !in_list(rt->image_pull_policy, pull, GV_ARRAY_SIZE(pull)))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                    "VALIDATOR_IMAGE_PULL_POLICY=%s: expected Always, IfNotPresent or Never",
                                    rt->image_pull_policy);

        json_object *meta = ensure_object(pod, "metadata"), *spec = ensure_object(pod, "spec");
        json_object *labels = meta ? ensure_object(meta, "labels") : NULL;
        /* render's "<node-name>" stays readable in the label too */
        _cleanup_free_ char *node_label = nz(rt->node_name) ? gv_workload_node_label_value(node) : strdup(node);
        if (!labels || !spec || !node_label)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");

        /* Fields the validator owns. */
        if ((absent_or_placeholder(pod, "apiVersion") && set_string(pod, "apiVersion", "v1") < 0) ||
            (absent_or_placeholder(pod, "kind") && set_string(pod, "kind", "Pod") < 0) ||
            set_string(meta, "namespace", ns) < 0 || set_string(labels, "app", app_labels[kind]) < 0 ||
            set_string(labels, GV_WORKLOAD_NODE_LABEL, node_label) < 0 || set_string(spec, "nodeName", node) < 0)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        if (absent_or_placeholder(meta, "name") && absent_or_placeholder(meta, "generateName")) {
                _cleanup_free_ char *gen = NULL;
                json_object_object_del(meta, "name");
                if (asprintf(&gen, "%s-", app_labels[kind]) < 0 || set_string(meta, "generateName", gen) < 0)
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        if (nz(rt->owner_name) && nz(rt->owner_uid))
                r = set_owner(meta, rt->owner_name, rt->owner_uid, err);
        else if (rt->placeholders)
                r = set_owner(meta, nz(rt->owner_name) ? rt->owner_name : "<validator-pod-name>",
                              nz(rt->owner_uid) ? rt->owner_uid : "<validator-pod-uid>", err);
        else
                json_object_object_del(meta, "ownerReferences");
        if (r < 0)
                return r;

        /* Containers: image, pull policy, GPU resource. */
        static const char *const lists[] = { "initContainers", "containers" };
        bool has_nvidia = false;
        json_object *first = NULL;
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
                        if (absent_or_placeholder(ctr, "image")) {
                                const char *img = NULL;
                                if ((r = need_value(rt, rt->image, "<image>", "validator image (VALIDATOR_IMAGE)",
                                                    &img, err)) < 0)
                                        return r;
                                if (set_string(ctr, "image", img) < 0)
                                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        }
                        if (absent_or_placeholder(ctr, "imagePullPolicy") &&
                            set_string(ctr, "imagePullPolicy",
                                       nz(rt->image_pull_policy) ? rt->image_pull_policy : "IfNotPresent") < 0)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                        if ((r = fill_resource_keys(ctr, rt, &has_nvidia, err)) < 0)
                                return r;
                }
        }
        if (kind == GV_WORKLOAD_PLUGIN && !has_nvidia && first && (r = add_gpu_limit(first, rt, err)) < 0)
                return r;

        /* Pod-level image settings: the template's explicit value wins. */
        json_object *secrets = NULL;
        if ((!json_object_object_get_ex(spec, "imagePullSecrets", &secrets) || !secrets) &&
            nz(rt->image_pull_secrets) && (r = fill_pull_secrets(spec, rt->image_pull_secrets, err)) < 0)
                return r;
        if (absent_or_placeholder(spec, "runtimeClassName")) {
                if (nz(rt->runtime_class)) {
                        if (set_string(spec, "runtimeClassName", rt->runtime_class) < 0)
                                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
                } else {
                        json_object_object_del(spec, "runtimeClassName");
                }
        }
        /* The validation pods run as the validator's own service account (the chart's,
         * or the operator's nvidia-operator-validator), so the name always exists. */
        json_object *sa = NULL;
        if (json_object_object_get_ex(spec, "serviceAccountName", &sa) && is_placeholder(sa) &&
            set_string(spec, "serviceAccountName",
                       nz(rt->service_account) ? rt->service_account : "nvidia-operator-validator") < 0)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        if ((r = fill_tolerations(spec, rt->tolerations, err)) < 0)
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
        json_object *pod = NULL;
        int r = gv_workload_template(kind, ov, &pod, err);
        if (r < 0)
                return r;
        if ((r = gv_workload_fill(pod, kind, rt, err)) < 0) {
                json_object_put(pod);
                return r;
        }
        *out = pod;
        return 0;
}

/* ======================================================================
 * What the lifecycle needs
 * ====================================================================== */

static int names_of(json_object *spec, const char *key, char ***out, gv_error_t **err)
{
        json_object *arr = NULL;
        size_t n = 0;
        if (json_object_object_get_ex(spec, key, &arr) && arr) {
                if (!json_object_is_type(arr, json_type_array))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "spec.%s: expected a list", key);
                n = json_object_array_length(arr);
        }
        _cleanup_strv_free_ char **v = calloc(n + 1, sizeof(char *));
        if (!v)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(arr, i), *name = NULL;
                if (!json_object_object_get_ex(c, "name", &name) || !json_object_is_type(name, json_type_string) ||
                    !*json_object_get_string(name))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "spec.%s[%zu]: has no name", key, i);
                if (!(v[i] = strdup(json_object_get_string(name))))
                        return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        }
        *out = TAKE_PTR(v);
        return 0;
}

int gv_workload_container_names(json_object *pod, char ***init_names, char ***names, gv_error_t **err)
{
        json_object *spec = NULL;
        _cleanup_strv_free_ char **a = NULL, **b = NULL;
        int r;
        if (!json_object_object_get_ex(pod, "spec", &spec) || !json_object_is_type(spec, json_type_object))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "spec: expected a mapping");
        if ((r = names_of(spec, "initContainers", &a, err)) < 0 || (r = names_of(spec, "containers", &b, err)) < 0)
                return r;
        if (init_names)
                *init_names = TAKE_PTR(a);
        if (names)
                *names = TAKE_PTR(b);
        return 0;
}

static bool is_label_value(const char *s)
{
        size_t n = strlen(s);
        if (n == 0)
                return true;
        if (n > 63)
                return false;
        for (size_t i = 0; i < n; i++) {
                char ch = s[i];
                bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
                if (!alnum && ((i == 0 || i == n - 1) || (ch != '-' && ch != '_' && ch != '.')))
                        return false;
        }
        return true;
}

char *gv_workload_node_label_value(const char *node_name)
{
        char *out = NULL;
        if (!node_name)
                node_name = "";
        if (is_label_value(node_name))
                return strdup(node_name);
        uint32_t h = 2166136261u; /* FNV-1a, 32 bit */
        for (const unsigned char *p = (const unsigned char *) node_name; *p; p++)
                h = (h ^ *p) * 16777619u;
        /* Keep the leading characters that are valid in a label value. */
        char head[55];
        size_t n = 0;
        for (const char *p = node_name; *p && n < 54; p++) {
                char ch = *p;
                bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                          ((ch == '-' || ch == '_' || ch == '.') && n > 0);
                if (ok)
                        head[n++] = ch;
        }
        head[n] = '\0';
        if (asprintf(&out, "%s%s%08x", head, n ? "-" : "", h) < 0)
                return NULL;
        return out;
}

char *gv_workload_label_selector(gv_workload_kind_t kind, const char *node_name)
{
        _cleanup_free_ char *v = gv_workload_node_label_value(node_name);
        char *out = NULL;
        if (!v || kind >= GV_WORKLOAD__MAX)
                return NULL;
        if (asprintf(&out, "app=%s,%s=%s", app_labels[kind], GV_WORKLOAD_NODE_LABEL, v) < 0)
                return NULL;
        return out;
}

static long long quantity_units(json_object *q)
{
        if (json_object_is_type(q, json_type_int))
                return json_object_get_int64(q);
        if (!json_object_is_type(q, json_type_string))
                return 0;
        const char *s = json_object_get_string(q);
        char *end = NULL;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end)
                return 0;
        return v;
}

int gv_workload_pick_gpu_resource(json_object *resources, char **out, gv_error_t **err)
{
        const char *mig = NULL, *gpu = NULL, *other = NULL;
        if (json_object_is_type(resources, json_type_object)) {
                json_object_object_foreach(resources, k, q) {
                        if (quantity_units(q) < 1)
                                continue;
                        if (strncmp(k, "nvidia.com/mig-", 15) == 0) {
                                if (!mig || strcmp(k, mig) < 0)
                                        mig = k;
                        } else if (strcmp(k, "nvidia.com/gpu") == 0) {
                                gpu = k;
                        } else if (strncmp(k, "nvidia.com/gpu", 14) == 0) {
                                if (!other || strcmp(k, other) < 0)
                                        other = k;
                        }
                }
        }
        const char *pick = mig ? mig : gpu ? gpu : other;
        if (!pick)
                return gv_error_set(err, ENOENT, GV_REASON_WORKLOAD,
                                    "the node has no allocatable nvidia.com/gpu or nvidia.com/mig-* resource");
        char *s = strdup(pick);
        if (!s)
                return gv_error_set(err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        *out = s;
        return 0;
}
