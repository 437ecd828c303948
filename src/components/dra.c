/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DRA mode of the plugin component: the slice census (pure) and the bounded
 * wait for the NVIDIA DRA driver's ResourceSlices.  See dra.h and
 * docs/components.md ("plugin").
 */
#include "dra.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "components-internal.h"
#include "markers/markers.h"

#define COMPONENT "plugin"
/* Backoff between two looks at the ResourceSlices: first step and cap, seconds. */
#define DRA_BACKOFF_FIRST_S 1u
#define DRA_BACKOFF_CAP_S 15u

static json_object *jget(json_object *o, const char *key)
{
        json_object *v = NULL;
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

static const char *jstr(json_object *o, const char *key)
{
        json_object *v = jget(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static bool streq(const char *a, const char *b)
{
        return a && b && strcmp(a, b) == 0;
}

bool gv_dra_node_enabled(json_object *node)
{
        return streq(jstr(jget(jget(node, "metadata"), "labels"), GV_DRA_DEPLOY_LABEL), "true");
}

void gv_dra_census_clear(gv_dra_census_t *c)
{
        if (!c)
                return;
        free(c->incomplete_pool);
        for (size_t i = 0; c->uuids && c->uuids[i]; i++)
                free(c->uuids[i]);
        free(c->uuids);
        free(c->names);
        memset(c, 0, sizeof(*c));
}

/* The string value of device attribute @name ("uuid"), short or qualified by @driver; NULL when absent. */
static const char *attr_string(json_object *dev, const char *driver, const char *name)
{
        json_object *attrs = jget(dev, "attributes");
        if (!attrs)
                attrs = jget(jget(dev, "basic"), "attributes"); /* v1beta1 */
        json_object *a = jget(attrs, name);
        if (!a && driver) {
                char q[256];
                if ((size_t) snprintf(q, sizeof(q), "%s/%s", driver, name) < sizeof(q))
                        a = jget(attrs, q);
        }
        return jstr(a, "string");
}

/* Add @uuid to c->uuids unless it is there; -ENOMEM. */
static int add_uuid(gv_dra_census_t *c, const char *uuid)
{
        for (size_t i = 0; i < c->n_uuids; i++)
                if (strcmp(c->uuids[i], uuid) == 0)
                        return 0;
        char **v = realloc(c->uuids, (c->n_uuids + 2) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->uuids = v;
        if (!(v[c->n_uuids] = strdup(uuid)))
                return -ENOMEM;
        v[++c->n_uuids] = NULL;
        return 0;
}

/* A slice's pool: name (may be ""), generation (0 when absent), resourceSliceCount (0 when absent). */
typedef struct pool_ref {
        const char *name;
        int64_t generation;
        int64_t count;
} pool_ref_t;

static pool_ref_t pool_of(json_object *spec)
{
        json_object *pool = jget(spec, "pool");
        json_object *g = jget(pool, "generation"), *n = jget(pool, "resourceSliceCount");
        const char *name = jstr(pool, "name");
        return (pool_ref_t) { .name = name ? name : "",
                              .generation = g && json_object_is_type(g, json_type_int) ? json_object_get_int64(g) : 0,
                              .count = n && json_object_is_type(n, json_type_int) ? json_object_get_int64(n) : 0 };
}

/* Whether @item is a slice of @driver for @node; *spec receives its spec. */
static bool ours(json_object *item, const char *node, const char *driver, json_object **spec)
{
        *spec = jget(item, "spec");
        return streq(jstr(*spec, "driver"), driver) && streq(jstr(*spec, "nodeName"), node);
}

/* Count the devices of one counted slice (@spec of item @i) into @c. */
static int count_devices(gv_dra_census_t *c, json_object *spec, const char *driver, size_t i, gv_error_t **err)
{
        json_object *devs = jget(spec, "devices");
        if (!devs)
                return 0;
        if (!json_object_is_type(devs, json_type_array))
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES,
                                    "ResourceSliceList item %zu: spec.devices is not a list", i);
        size_t n = json_object_array_length(devs);
        for (size_t d = 0; d < n; d++) {
                json_object *dev = json_object_array_get_idx(devs, d);
                if (!dev || !json_object_is_type(dev, json_type_object))
                        return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES,
                                            "ResourceSliceList item %zu: spec.devices[%zu] is not an object", i, d);
                c->devices++;
                const char *type = attr_string(dev, driver, "type");
                const char *uuid = NULL;
                if (!type || strcmp(type, "gpu") == 0) {
                        c->gpus++;
                        uuid = attr_string(dev, driver, "uuid");
                } else if (strcmp(type, "mig") == 0) {
                        c->migs++;
                        uuid = attr_string(dev, driver, "parentUUID");
                }
                if (uuid && *uuid && add_uuid(c, uuid) < 0)
                        return gv_error_oom(err);
        }
        return 0;
}

/* One of our slices: its pool and its index in the list. */
typedef struct pool_entry {
        pool_ref_t pool;
        size_t idx;
} pool_entry_t;

/* By pool name, then newest generation first. */
static int entry_cmp(const void *a, const void *b)
{
        const pool_entry_t *x = a, *y = b;
        int c = strcmp(x->pool.name, y->pool.name);
        if (c)
                return c;
        return x->pool.generation < y->pool.generation ? 1 : x->pool.generation > y->pool.generation ? -1 : 0;
}

/*
 * Mark in @current[] the items of @items that are our slices of the newest
 * generation of their pool, and note in c->incomplete_pool the first pool
 * whose newest generation has fewer slices than its resourceSliceCount.
 * O(n log n).  -ENOMEM.
 */
static int mark_current(gv_dra_census_t *c, json_object *items, const char *node, const char *driver, bool *current)
{
        size_t n = json_object_array_length(items), m = 0;
        _cleanup_free_ pool_entry_t *e = calloc(n ? n : 1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *spec;
                if (ours(json_object_array_get_idx(items, i), node, driver, &spec))
                        e[m++] = (pool_entry_t) { .pool = pool_of(spec), .idx = i };
        }
        qsort(e, m, sizeof(*e), entry_cmp);
        for (size_t g = 0; g < m;) {
                size_t have = 0;
                int64_t declared = 0;
                size_t k = g;
                for (; k < m && strcmp(e[k].pool.name, e[g].pool.name) == 0; k++) {
                        if (e[k].pool.generation != e[g].pool.generation)
                                continue;
                        current[e[k].idx] = true;
                        have++;
                        if (e[k].pool.count > declared)
                                declared = e[k].pool.count;
                }
                if ((int64_t) have < declared && !c->incomplete_pool &&
                    asprintf(&c->incomplete_pool, "pool %s generation %lld: %zu of %lld slices", e[g].pool.name,
                             (long long) e[g].pool.generation, have, (long long) declared) < 0) {
                        c->incomplete_pool = NULL;
                        return -ENOMEM;
                }
                g = k;
        }
        return 0;
}

/*
 * Append ",<name>" (or "<name>") to the stream of names.  A name that is not
 * a DNS subdomain (what kube-apiserver allows) shows as "?": the names go into
 * a marker value.
 */
static void add_name(FILE *f, json_object *item)
{
        const char *name = jstr(jget(item, "metadata"), "name");
        bool ok = name && *name && strlen(name) <= 253 &&
                  strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789.-") == strlen(name);
        fprintf(f, "%s%s", ftell(f) ? "," : "", ok ? name : "?");
}

int gv_dra_census(json_object *list, const char *node, const char *driver, gv_dra_census_t *out, gv_error_t **err)
{
        if (!list || !json_object_is_type(list, json_type_object))
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "ResourceSliceList is not a JSON object");
        json_object *items = jget(list, "items");
        if (items && !json_object_is_type(items, json_type_array))
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "ResourceSliceList: items is not a list");
        size_t n = items ? json_object_array_length(items) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *item = json_object_array_get_idx(items, i);
                if (!item || !json_object_is_type(item, json_type_object))
                        return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES,
                                            "ResourceSliceList item %zu is not an object", i);
        }
        gv_dra_census_t c = { 0 };
        _cleanup_free_ bool *current = calloc(n ? n : 1, sizeof(*current));
        _cleanup_free_ char *names = NULL;
        size_t names_len = 0;
        FILE *f = current ? open_memstream(&names, &names_len) : NULL;
        if (!f)
                return gv_error_oom(err);
        int r = items && mark_current(&c, items, node, driver, current) < 0 ? gv_error_oom(err) : 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                json_object *item = json_object_array_get_idx(items, i), *spec;
                if (!ours(item, node, driver, &spec)) {
                        c.foreign++;
                } else if (!current[i]) {
                        c.stale++;
                } else {
                        c.slices++;
                        add_name(f, item);
                        r = count_devices(&c, spec, driver, i, err);
                }
        }
        int fr = fclose(f);
        if (r >= 0 && fr != 0)
                r = gv_error_oom(err);
        if (r < 0) {
                gv_dra_census_clear(&c);
                return r;
        }
        c.names = TAKE_PTR(names);
        *out = c;
        return 0;
}

int gv_dra_census_text(const char *data, size_t len, const char *node, const char *driver, gv_dra_census_t *out,
                       gv_error_t **err)
{
        if (len > GV_DRA_MAX_TEXT_BYTES)
                return gv_error_set(err, EFBIG, GV_REASON_KUBERNETES, "ResourceSliceList larger than %zu bytes",
                                    GV_DRA_MAX_TEXT_BYTES);
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return gv_error_oom(err);
        _cleanup_json_ json_object *list = json_tokener_parse_ex(tok, data, (int) len);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        bool whole = jerr == json_tokener_success && json_tokener_get_parse_end(tok) == len;
        json_tokener_free(tok);
        if (!list || !whole)
                return gv_error_set(err, EBADMSG, GV_REASON_KUBERNETES, "ResourceSliceList is not JSON: %s",
                                    jerr == json_tokener_success ? "trailing data or incomplete"
                                                                 : json_tokener_error_desc(jerr));
        return gv_dra_census(list, node, driver, out, err);
}

int gv_dra_missing(const gv_dra_census_t *c, const char *nvml_uuids, char **missing, gv_error_t **err)
{
        _cleanup_free_ char *copy = strdup(nvml_uuids ? nvml_uuids : "");
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f = copy ? open_memstream(&buf, &len) : NULL;
        if (!f)
                return gv_error_oom(err);
        int count = 0;
        char *save = NULL;
        for (char *u = strtok_r(copy, ",", &save); u; u = strtok_r(NULL, ",", &save)) {
                bool found = false;
                for (size_t i = 0; i < c->n_uuids && !found; i++)
                        found = strcmp(c->uuids[i], u) == 0;
                if (!found) {
                        fprintf(f, "%s%s", count ? "," : "", u);
                        count++;
                }
        }
        if (fclose(f) != 0)
                return gv_error_oom(err);
        *missing = TAKE_PTR(buf);
        return count;
}

/* ---------------------------------------------------------------------- */
/* The bounded wait (I/O)                                                  */
/* ---------------------------------------------------------------------- */

/* The GPUs the driver validation saw: driver-ready's GPU_UUIDS (heap, may be NULL) and GPU_COUNT. */
typedef struct nvml_view {
        char *uuids;
        unsigned count;
} nvml_view_t;

static int nvml_view(gv_store_t *store, nvml_view_t *v, gv_error_t **err)
{
        gv_marker_info_t info = { 0 };
        int r = gv_store_inspect(store, GV_MARKER_DRIVER, &info, err);
        if (r < 0)
                return gv_error_prefix(err, "read driver-ready");
        const char *u = gv_kvlist_get(&info.content, "GPU_UUIDS");
        const char *n = gv_kvlist_get(&info.content, "GPU_COUNT");
        v->count = n ? (unsigned) strtoul(n, NULL, 10) : 0;
        bool have = u && *u;
        v->uuids = have ? strdup(u) : NULL;
        gv_marker_info_clear(&info); /* u and n point into it */
        if (have && !v->uuids)
                return gv_error_oom(err);
        if (v->uuids && !v->count) { /* count the list when GPU_COUNT is absent */
                v->count = 1;
                for (const char *p = strchr(v->uuids, ','); p; p = strchr(p + 1, ','))
                        v->count++;
        }
        return 0;
}

/* One look at the slices. */
typedef struct dra_look {
        const char *version;    /* the resource.k8s.io version that answered (static) */
        gv_dra_census_t census;
        char *missing;          /* heap: NVML UUIDs not published */
        int n_missing;
        unsigned published;     /* GPUs published: distinct UUIDs, else whole-GPU devices */
} dra_look_t;

static void look_clear(dra_look_t *l)
{
        gv_dra_census_clear(&l->census);
        free(l->missing);
        l->missing = NULL;
        l->n_missing = 0;
        l->published = 0;
}

/* Whether @l shows every GPU of @v published by complete slices. */
static bool look_ok(const dra_look_t *l, const nvml_view_t *v)
{
        if (l->census.slices == 0 || l->census.incomplete_pool)
                return false;
        if (v->uuids && l->census.n_uuids > 0)
                return l->n_missing == 0;
        return l->published >= (v->count ? v->count : 1);
}

/* List and count once into @l (cleared first).  Errors of the list or the census. */
static int look(const gv_config_t *cfg, gv_k8s_client_t *client, const nvml_view_t *v, dra_look_t *l,
                gv_error_t **err)
{
        look_clear(l);
        _cleanup_json_ json_object *list = NULL;
        int r = gv_k8s_resource_slice_list(client, cfg->kube.node_name, GV_DRA_DRIVER, &l->version, &list, err);
        if (r < 0)
                return r;
        if ((r = gv_dra_census(list, cfg->kube.node_name, GV_DRA_DRIVER, &l->census, err)) < 0)
                return r;
        l->published = l->census.n_uuids ? (unsigned) l->census.n_uuids : l->census.gpus;
        if (v->uuids && (l->n_missing = gv_dra_missing(&l->census, v->uuids, &l->missing, err)) < 0)
                return l->n_missing;
        return 0;
}

/* "a (driver d), b (driver e)" of every ResourceSlice on the node, or "none" (heap; NULL when out of memory). */
static char *describe_node_slices(const gv_config_t *cfg, gv_k8s_client_t *client, const char *version)
{
        _cleanup_json_ json_object *list = NULL;
        gv_error_t *e = NULL;
        const char *ver = version;
        int r = gv_k8s_resource_slice_list(client, cfg->kube.node_name, NULL, &ver, &list, &e);
        if (r < 0) {
                char *s = NULL;
                if (asprintf(&s, "unknown (%s)", e ? e->msg : "list failed") < 0)
                        s = NULL;
                gv_error_free(&e);
                return s;
        }
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        json_object *items = jget(list, "items");
        size_t n = items && json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *it = json_object_array_get_idx(items, i);
                const char *name = jstr(jget(it, "metadata"), "name"), *drv = jstr(jget(it, "spec"), "driver");
                fprintf(f, "%s%s (driver %s)", i ? ", " : "", name ? name : "?", drv ? drv : "?");
        }
        if (!n)
                fputs("none", f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* The failure after the bound: what the last look found. */
static int dra_failure(const gv_config_t *cfg, gv_k8s_client_t *client, const nvml_view_t *v, const dra_look_t *l,
                       gv_error_t **err)
{
        const gv_dra_census_t *c = &l->census;
        if (c->slices == 0) {
                _cleanup_free_ char *found = describe_node_slices(cfg, client, l->version);
                return gv_error_set(err, ETIMEDOUT, GV_REASON_DRA_DRIVER_NOT_READY,
                                    "node %s is in DRA mode (" GV_DRA_DEPLOY_LABEL "=true) but no ResourceSlice of "
                                    "driver " GV_DRA_DRIVER " for it after %u s (resource.k8s.io/%s; %u stale; "
                                    "ResourceSlices on this node: %s); is the NVIDIA DRA driver's kubelet plugin "
                                    "running there? (bound: CAPACITY_WAIT_SECONDS / --capacity-wait)",
                                    cfg->kube.node_name, cfg->workload.capacity_wait_s, l->version ? l->version : "?", c->stale,
                                    found ? found : "unknown");
        }
        if (c->incomplete_pool)
                return gv_error_set(err, ETIMEDOUT, GV_REASON_DRA_DRIVER_NOT_READY,
                                    "the ResourceSlices of driver " GV_DRA_DRIVER " for node %s are incomplete after "
                                    "%u s: %s (found: %s)",
                                    cfg->kube.node_name, cfg->workload.capacity_wait_s, c->incomplete_pool, c->names);
        if (v->uuids && c->n_uuids > 0)
                return gv_error_set(err, ETIMEDOUT, GV_REASON_DRA_GPUS_MISSING,
                                    "the ResourceSlices of driver " GV_DRA_DRIVER " for node %s (%s) publish %u GPU(s) "
                                    "but NVML sees %u; missing after %u s: %s",
                                    cfg->kube.node_name, c->names, l->published, v->count, cfg->workload.capacity_wait_s,
                                    l->missing ? l->missing : "");
        return gv_error_set(err, ETIMEDOUT, GV_REASON_DRA_GPUS_MISSING,
                            "the ResourceSlices of driver " GV_DRA_DRIVER " for node %s (%s) publish %u GPU(s) "
                            "(%u device(s), no GPU UUID attribute) but %u expected (driver-ready GPU_COUNT) after %u s",
                            cfg->kube.node_name, c->names, l->published, c->devices, v->count ? v->count : 1,
                            cfg->workload.capacity_wait_s);
}

static double jitter(void)
{
        uint32_t u = 0;
        if (getrandom(&u, sizeof(u), GRND_NONBLOCK) != (ssize_t) sizeof(u))
                return 0.5;
        return u / 4294967296.0;
}

/* The facts and summary of a passed look. */
static int dra_success(const dra_look_t *l, gv_result_t *res, gv_error_t **err)
{
        char api[64], gpus[32];
        snprintf(api, sizeof(api), "resource.k8s.io/%s", l->version);
        snprintf(gpus, sizeof(gpus), "%u", l->published);
        int r;
        if ((r = gv_kvlist_set(&res->facts, "MODE", "dra", err)) < 0 ||
            (r = gv_kvlist_set(&res->facts, "DRA_DRIVER", GV_DRA_DRIVER, err)) < 0 ||
            (r = gv_kvlist_set(&res->facts, "RESOURCE_API", api, err)) < 0 ||
            (r = gv_kvlist_set(&res->facts, "RESOURCE_SLICES", l->census.names, err)) < 0 ||
            (r = gv_kvlist_set(&res->facts, "DRA_GPUS", gpus, err)) < 0)
                return r;
        if (asprintf(&res->summary, "DRA mode: %u GPU(s) published by driver " GV_DRA_DRIVER " in %u ResourceSlice(s) "
                     "(%s, %s); no device plugin",
                     l->published, l->census.slices, l->census.names, api) < 0) {
                res->summary = NULL;
                return gv_error_oom(err);
        }
        return 0;
}

int gv_dra_validate(const gv_config_t *cfg, gv_k8s_client_t *client, gv_store_t *store, gv_result_t *res,
                    gv_error_t **err)
{
        nvml_view_t v = { 0 };
        int r = nvml_view(store, &v, err);
        if (r < 0)
                return r;
        gv_cfg_logf(cfg, GV_LOG_INFO, COMPONENT, GV_REASON_NONE,
                    "node %s is in DRA mode (" GV_DRA_DEPLOY_LABEL "=true): waiting up to %u s for the "
                    "ResourceSlices of driver " GV_DRA_DRIVER " to publish its %u GPU(s) (CAPACITY_WAIT_SECONDS)",
                    cfg->kube.node_name, cfg->workload.capacity_wait_s, v.count);
        int64_t deadline = gv_now_ms() + (int64_t) cfg->workload.capacity_wait_s * 1000;
        dra_look_t l = { 0 };
        for (unsigned attempt = 1;; attempt++) {
                r = look(cfg, client, &v, &l, err);
                if (r == -ENOENT && !l.version) {
                        gv_error_set_reason(err, GV_REASON_CONFIG);
                        gv_error_prefix(err, "node %s is in DRA mode (" GV_DRA_DEPLOY_LABEL "=true)", cfg->kube.node_name);
                        break;
                }
                if (r < 0) {
                        gv_error_prefix(err, "list ResourceSlices of node %s", cfg->kube.node_name);
                        break;
                }
                if (look_ok(&l, &v)) {
                        r = dra_success(&l, res, err);
                        break;
                }
                int64_t left = deadline - gv_now_ms();
                if (left <= 0) {
                        r = dra_failure(cfg, client, &v, &l, err);
                        break;
                }
                int64_t step = (int64_t) (gv_backoff_delay_s(attempt, DRA_BACKOFF_FIRST_S, DRA_BACKOFF_CAP_S,
                                                             jitter()) * 1000);
                if (gv_sleep_ms(step < left ? step : left, cfg->stop) < 0) {
                        r = gv_error_set(err, EINTR, GV_REASON_INTERRUPTED,
                                         "stopped while waiting for the ResourceSlices of node %s", cfg->kube.node_name);
                        break;
                }
        }
        look_clear(&l);
        free(v.uuids);
        return r < 0 ? r : 0;
}
