/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Override files: parse, and check every field against what the API server
 * accepts, naming file:line:field (docs/workload-lifecycle.md).
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
#include "template-internal.h"

#define OVERRIDE_MAX_BYTES ((size_t) 1024 * 1024)

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
        va_list ap;
        va_start(ap, fmt);
        int r = gv_error_setv(c->err, EINVAL, GV_REASON_CONFIG, fmt, ap);
        va_end(ap);
        unsigned line = gv_doc_line(c->doc, node);
        if (!line)
                line = gv_doc_line(c->doc, fallback);
        if (line)
                gv_error_prefix(c->err, "%s:%u: %s", gv_doc_name(c->doc), line, path);
        else
                gv_error_prefix(c->err, "%s: %s", gv_doc_name(c->doc), path);
        return r;
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
        if (r < 0 || !v || gv_workload_is_placeholder(v))
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

static int check_known_keys(struct vctx *c, json_object *obj, const char *path, const char *const *known, size_t n)
{
        json_object_object_foreach(obj, k, v) {
                if (!gv_workload_in_list(k, known, n))
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
                        return gv_error_oom(c->err);
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
                        return gv_error_oom(c->err);
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
                        return gv_error_oom(c->err);
                if (!json_object_is_type(e, json_type_object))
                        return vfail(c, e, v, p, "expected a mapping, got %s", type_word(e));
                if (need_name) {
                        if (!json_object_object_get_ex(e, "name", &name) || !name)
                                return vfail(c, e, v, p, "has no name");
                        _cleanup_free_ char *np = NULL;
                        if (asprintf(&np, "%s.name", p) < 0)
                                return gv_error_oom(c->err);
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
                return gv_error_oom(c->err)

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
                        if (r == 0 && v && !gv_workload_is_placeholder(v))
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
                    (!app || strcmp(json_object_get_string(app), gv_workload_app_label((gv_workload_kind_t) c->kind)) != 0))
                        return vfail(c, app, labels, "metadata.labels.app",
                                     "must be %s (the validator selects its %s pods by it)", gv_workload_app_label((gv_workload_kind_t) c->kind),
                                     gv_workload_kind_name((gv_workload_kind_t) c->kind));
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
                        if (r == 0 && v && !gv_workload_is_placeholder(v))
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
                if (!gv_workload_in_list(k, known, GV_ARRAY_SIZE(known)))
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
                if (strcmp(json_object_get_string(app), gv_workload_app_label((gv_workload_kind_t) k)) == 0) {
                        *kind = k;
                        return 0;
                }
        return vfail(c, app, labels, "metadata.labels.app", "expected %s or %s (it says which pod this manifest is for)",
                     gv_workload_app_label(GV_WORKLOAD_CUDA), gv_workload_app_label(GV_WORKLOAD_PLUGIN));
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
                return gv_error_oom(err);
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

