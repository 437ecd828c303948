/* SPDX-License-Identifier: Apache-2.0 */
/* Typed core/v1 calls (Kubernetes API reference: Pod, Node, Event, pods/log). */
#include "k8s.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"


static int need(const char *what, const char *v, gv_error_t **err)
{
        if (!v || !*v)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "Kubernetes call without %s", what);
        return 0;
}

/* "/api/v1/namespaces/<ns>/<resource>[/<name>[/<sub>]]" with escaped segments. */
static char *ns_path(const char *ns, const char *resource, const char *name, const char *sub)
{
        _cleanup_free_ char *ens = gv_k8s_escape(ns);
        _cleanup_free_ char *ename = name ? gv_k8s_escape(name) : NULL;
        if (!ens || (name && !ename))
                return NULL;
        char *p = NULL;
        if (asprintf(&p, "/api/v1/namespaces/%s/%s%s%s%s%s", ens, resource, ename ? "/" : "", ename ? ename : "",
                     sub ? "/" : "", sub ? sub : "") < 0)
                return NULL;
        return p;
}

/* *out = the path of pod @ns/@name[/@sub] (heap); -EINVAL when either is empty, -ENOMEM. */
static int pod_path(const char *ns, const char *name, const char *sub, char **out, gv_error_t **err)
{
        int r;
        if ((r = need("namespace", ns, err)) < 0 || (r = need("pod name", name, err)) < 0)
                return r;
        if (!(*out = ns_path(ns, "pods", name, sub)))
                return gv_error_oom(err);
        return 0;
}

static char *node_path(const char *name, const char *sub)
{
        _cleanup_free_ char *en = gv_k8s_escape(name);
        char *p = NULL;
        if (!en || asprintf(&p, "/api/v1/nodes/%s%s%s", en, sub ? "/" : "", sub ? sub : "") < 0)
                return NULL;
        return p;
}

int gv_k8s_pod_get(gv_k8s_client_t *c, const char *ns, const char *name, json_object **out, gv_error_t **err)
{
        _cleanup_free_ char *p = NULL;
        int r = pod_path(ns, name, NULL, &p, err);
        if (r < 0)
                return r;
        return gv_k8s_get(c, p, out, err);
}

int gv_k8s_pod_list(gv_k8s_client_t *c, const char *ns, const char *label_selector, const char *node_name,
                    json_object **out, gv_error_t **err)
{
        int r;
        if ((r = need("namespace", ns, err)) < 0)
                return r;
        _cleanup_free_ char *base = ns_path(ns, "pods", NULL, NULL), *fs = NULL;
        if (!base)
                return gv_error_oom(err);
        if (node_name && *node_name && asprintf(&fs, "spec.nodeName=%s", node_name) < 0)
                return gv_error_oom(err);
        _cleanup_free_ char *p = gv_k8s_build_path(base, "labelSelector", label_selector, "fieldSelector", fs, NULL);
        if (!p)
                return gv_error_oom(err);
        return gv_k8s_get(c, p, out, err);
}

int gv_k8s_pod_create(gv_k8s_client_t *c, const char *ns, json_object *pod, json_object **out, gv_error_t **err)
{
        int r;
        if ((r = need("namespace", ns, err)) < 0)
                return r;
        _cleanup_free_ char *p = ns_path(ns, "pods", NULL, NULL);
        if (!p)
                return gv_error_oom(err);
        return gv_k8s_post(c, p, pod, out, err);
}

int gv_k8s_pod_delete(gv_k8s_client_t *c, const char *ns, const char *name, int grace_period_s, gv_error_t **err)
{
        _cleanup_free_ char *p = NULL;
        int r = pod_path(ns, name, NULL, &p, err);
        if (r < 0)
                return r;
        _cleanup_json_ json_object *opts = NULL;
        if (grace_period_s >= 0) {
                opts = json_object_new_object();
                if (!opts || json_object_object_add(opts, "kind", json_object_new_string("DeleteOptions")) < 0 ||
                    json_object_object_add(opts, "apiVersion", json_object_new_string("v1")) < 0 ||
                    json_object_object_add(opts, "gracePeriodSeconds", json_object_new_int(grace_period_s)) < 0)
                        return gv_error_oom(err);
        }
        return gv_k8s_delete(c, p, opts, NULL, err);
}

int gv_k8s_pod_watch(gv_k8s_client_t *c, const char *ns, const char *label_selector, const char *node_name,
                     const char *resource_version, unsigned timeout_s, gv_k8s_watch_fn cb, void *userdata,
                     gv_error_t **err)
{
        int r;
        if ((r = need("namespace", ns, err)) < 0)
                return r;
        _cleanup_free_ char *p = ns_path(ns, "pods", NULL, NULL), *fs = NULL;
        if (!p || (node_name && *node_name && asprintf(&fs, "spec.nodeName=%s", node_name) < 0))
                return gv_error_oom(err);
        gv_k8s_watch_spec_t spec = { .path = p, .label_selector = label_selector, .field_selector = fs,
                                     .resource_version = resource_version, .timeout_s = timeout_s };
        return gv_k8s_watch(c, &spec, cb, userdata, err);
}

int gv_k8s_pod_log(gv_k8s_client_t *c, const char *ns, const char *name, const char *container,
                   unsigned tail_lines, char **out, gv_error_t **err)
{
        _cleanup_free_ char *base = NULL;
        int r = pod_path(ns, name, "log", &base, err);
        if (r < 0)
                return r;
        char tl[24] = "";
        if (tail_lines)
                snprintf(tl, sizeof(tl), "%u", tail_lines);
        _cleanup_free_ char *p = gv_k8s_build_path(base, "container", container, "tailLines", tl, NULL);
        if (!p)
                return gv_error_oom(err);
        _cleanup_json_ json_object *j = NULL;
        r = gv_k8s_get(c, p, &j, err);
        if (r < 0)
                return r;
        char *s = strdup(j ? json_object_get_string(j) : "");
        if (!s)
                return gv_error_oom(err);
        *out = s;
        return 0;
}

int gv_k8s_node_get(gv_k8s_client_t *c, const char *name, json_object **out, gv_error_t **err)
{
        int r;
        if ((r = need("node name", name, err)) < 0)
                return r;
        _cleanup_free_ char *p = node_path(name, NULL);
        if (!p)
                return gv_error_oom(err);
        return gv_k8s_get(c, p, out, err);
}

int gv_k8s_node_watch(gv_k8s_client_t *c, const char *name, const char *resource_version, unsigned timeout_s,
                      gv_k8s_watch_fn cb, void *userdata, gv_error_t **err)
{
        int r;
        if ((r = need("node name", name, err)) < 0)
                return r;
        _cleanup_free_ char *fs = NULL;
        if (asprintf(&fs, "metadata.name=%s", name) < 0)
                return gv_error_oom(err);
        gv_k8s_watch_spec_t spec = { .path = "/api/v1/nodes", .field_selector = fs,
                                     .resource_version = resource_version, .timeout_s = timeout_s };
        return gv_k8s_watch(c, &spec, cb, userdata, err);
}

int gv_k8s_node_patch(gv_k8s_client_t *c, const char *name, bool status, json_object *patch, json_object **out,
                      gv_error_t **err)
{
        int r;
        if ((r = need("node name", name, err)) < 0)
                return r;
        _cleanup_free_ char *p = node_path(name, status ? "status" : NULL);
        if (!p)
                return gv_error_oom(err);
        return gv_k8s_patch(c, p, GV_K8S_PATCH_MERGE, patch, out, err);
}

static const char *get_path_str(json_object *o, const char *a, const char *b)
{
        json_object *x = NULL, *y = NULL;
        if (!o || !json_object_object_get_ex(o, a, &x))
                return NULL;
        if (!b)
                return json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
        if (!json_object_object_get_ex(x, b, &y) || !json_object_is_type(y, json_type_string))
                return NULL;
        return json_object_get_string(y);
}

/* Add "key": "value" (a copy) to @o when @v is not NULL; false when out of memory. */
static bool put_str(json_object *o, const char *k, const char *v)
{
        if (!v)
                return true;
        json_object *s = json_object_new_string(v);
        if (!s || json_object_object_add(o, k, s) < 0) {
                json_object_put(s);
                return false;
        }
        return true;
}

/* A new object added to @parent under @key (borrowed), or NULL when out of memory. */
static json_object *put_obj(json_object *parent, const char *key)
{
        json_object *o = json_object_new_object();
        if (!o || json_object_object_add(parent, key, o) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

int gv_k8s_event_create(gv_k8s_client_t *c, const char *ns, json_object *involved, const gv_k8s_event_t *e,
                        gv_error_t **err)
{
        int r;
        if ((r = need("event reason", e->reason, err)) < 0 || (r = need("event action", e->action, err)) < 0)
                return r;
        const char *iname = get_path_str(involved, "metadata", "name");
        const char *ins = get_path_str(involved, "metadata", "namespace");
        if (!ns || !*ns)
                ns = ins && *ins ? ins : "default";
        const char *component = e->component ? e->component : "gpu-validator";
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        char when[32], micro[48];
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        strftime(micro, sizeof(micro), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(micro + strlen(micro), sizeof(micro) - strlen(micro), ".%06ldZ", ts.tv_nsec / 1000);
        _cleanup_free_ char *name = NULL, *p = ns_path(ns, "events", NULL, NULL);
        if (!p || asprintf(&name, "%s.%llx%05lx", iname ? iname : "gpu-validator", (unsigned long long) ts.tv_sec,
                           (unsigned long) (ts.tv_nsec / 1000) & 0xfffff) < 0)
                return gv_error_oom(err);
        _cleanup_json_ json_object *ev = json_object_new_object();
        json_object *md = ev ? put_obj(ev, "metadata") : NULL;
        json_object *io = ev ? put_obj(ev, "involvedObject") : NULL;
        json_object *src = ev ? put_obj(ev, "source") : NULL;
        bool ok = md && io && src && put_str(ev, "apiVersion", "v1") && put_str(ev, "kind", "Event") &&
                  put_str(md, "name", name) && put_str(md, "namespace", ns) &&
                  put_str(io, "kind", get_path_str(involved, "kind", NULL)) && put_str(io, "name", iname) &&
                  put_str(io, "namespace", ins && *ins ? ins : NULL) &&
                  put_str(io, "uid", get_path_str(involved, "metadata", "uid")) &&
                  put_str(io, "apiVersion", get_path_str(involved, "apiVersion", NULL)) &&
                  put_str(ev, "type", e->type ? e->type : "Normal") && put_str(ev, "reason", e->reason) &&
                  put_str(ev, "message", e->message ? e->message : "") && put_str(ev, "action", e->action) &&
                  put_str(ev, "eventTime", micro) && put_str(ev, "reportingComponent", component) &&
                  put_str(ev, "reportingInstance", e->instance ? e->instance : component) &&
                  put_str(src, "component", component) && put_str(ev, "firstTimestamp", when) &&
                  put_str(ev, "lastTimestamp", when) && json_object_object_add(ev, "count", json_object_new_int(1)) == 0;
        if (!ok)
                return gv_error_oom(err);
        return gv_k8s_post(c, p, ev, NULL, err);
}
