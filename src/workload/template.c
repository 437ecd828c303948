/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kinds, the template of each kind (the default, merged with the
 * override file's section), and what the lifecycle needs of a pod.  The
 * override checks are in overrides.c, the run-time fill in fill.c.
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
                                        return gv_error_oom(err);
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
        _cleanup_json_ json_object *pod = NULL;
        int r;

        if (section && ov->manifest[kind]) {
                /* A whole manifest replaces the default; nulls are dropped as a merge into {} does. */
                pod = gv_json_merge_patch(NULL, section);
                if (!pod)
                        return gv_error_oom(err);
        } else {
                gv_doc_t *doc = NULL;
                const char *y = gv_workload_default_yaml(kind);
                if ((r = gv_yaml_parse(y, strlen(y), "default template", &doc, err)) < 0) {
                        gv_error_set_reason(err, GV_REASON_INTERNAL); /* our own template: a bug */
                        return r;
                }
                pod = json_object_get(gv_doc_root(doc));
                gv_doc_free(doc);
                if (section && gv_workload_merge(pod, section, err) < 0)
                        return gv_error_prefix(err, "%s: %s", gv_doc_name(ov->doc), kind_names[kind]);
        }
        _cleanup_free_ char *who = NULL;
        if (asprintf(&who, "%s%s%s template", ov && section ? gv_doc_name(ov->doc) : "",
                     ov && section ? ": " : "", kind_names[kind]) < 0)
                return gv_error_oom(err);
        if ((r = check_final(pod, who, err)) < 0 ||
            (r = check_requests_within_limits(pod, ov, section, kind_names[kind], who, err)) < 0)
                return r;
        *out = TAKE_PTR(pod);
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
                return gv_error_oom(err);
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(arr, i), *name = NULL;
                if (!json_object_object_get_ex(c, "name", &name) || !json_object_is_type(name, json_type_string) ||
                    !*json_object_get_string(name))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "spec.%s[%zu]: has no name", key, i);
                if (!(v[i] = strdup(json_object_get_string(name))))
                        return gv_error_oom(err);
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
                return gv_error_oom(err);
        *out = s;
        return 0;
}
