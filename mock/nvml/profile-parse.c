/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading a profile: the top level of both schemas (driver, faults, gpu /
 * device_defaults, devices), duplicate-key checks, and the file, memory and
 * text entry points of profile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "abi/nvml/nvml-abi.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/nvml/profile-internal.h"

/* ------------------------------------------------------------------ */
/* top level                                                           */

static int parse_cuda_version(pctx_t *c, yaml_node_t *v, const char *prefix, const char *key, int *out)
{
        const char *s = mp_scalar(v);
        unsigned a, b = 0;
        int n = -1;
        if (s && sscanf(s, "%u.%u%n", &a, &b, &n) == 2 && n > 0 && !s[n] && a < 100 && b < 100) {
                *out = (int) (a * 1000 + b * 10);
                return 0;
        }
        unsigned x;
        int r = mp_get_uint(c, v, prefix, key, 99990, &x);
        if (r < 0) {
                gv_error_free(c->err);
                return mp_perr(c, v, prefix, key, "expected a CUDA version like \"12.4\" or 12040");
        }
        *out = x < 100 ? (int) (x * 1000) : (int) x;
        return 0;
}

typedef struct top {
        gv_mock_profile_t *p;
        yaml_node_t *gpu;      /* `gpu` or `device_defaults` */
        yaml_node_t *devices;  /* `devices` */
        yaml_node_t *root;
        yaml_node_t *driver;   /* `driver` or `system` */
        yaml_node_t *nvlink;   /* nvml-mock top-level nvlink */
        unsigned gpu_count;    /* 0 = not given */
        yaml_node_t *gpu_count_node;
} top_t;

static int driver_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_profile_t *p = data;
        if (KEY_IS(key, "version") || KEY_IS(key, "driver_version")) {
                int r = mp_get_str(c, v, prefix, key, &p->driver_version);
                if (r >= 0 && strlen(p->driver_version) >= 32)
                        return mp_perr(c, v, prefix, key, "longer than 31 characters");
                return r;
        }
        if (KEY_IS(key, "nvml_version"))
                return mp_get_str(c, v, prefix, key, &p->nvml_version);
        if (KEY_IS(key, "cuda_version"))
                return parse_cuda_version(c, v, prefix, key, &p->cuda_driver_version);
        if (KEY_IS(key, "cuda_version_major") || KEY_IS(key, "cuda_version_minor"))
                return 0; /* redundant with cuda_version */
        return mp_unknown_key(c, v, prefix, key);
}

static int faults_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        gv_mock_faults_t *f = data;
        int r;
        if (KEY_IS(key, "init_error")) {
                const char *s = mp_scalar(v);
                if (!s || gv_mock_parse_return_name(s, &f->init_error) < 0)
                        return mp_perr(c, v, prefix, key,
                                       "expected none, driver-not-loaded, no-permission, lib-rm-version-mismatch or an NVML return number");
                return 0;
        }
        if (KEY_IS(key, "lost_gpus")) {
                if ((r = mp_want_seq(c, v, prefix, key)) < 0)
                        return r;
                for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
                        unsigned g;
                        if ((r = mp_get_uint(c, mp_ynode(c, *it), prefix, key, GV_MOCK_MAX_GPUS - 1, &g)) < 0)
                                return r;
                        f->lost_gpus |= 1ULL << g;
                }
                return 0;
        }
        if (KEY_IS(key, "fabric_in_progress"))
                return mp_get_bool(c, v, prefix, key, &f->fabric_in_progress);
        if (KEY_IS(key, "xid_control_file"))
                return mp_get_str(c, v, prefix, key, &f->xid_control_file);
        if (KEY_IS(key, "xids")) {
                if ((r = mp_want_seq(c, v, prefix, key)) < 0)
                        return r;
                size_t n = (size_t) (v->data.sequence.items.top - v->data.sequence.items.start);
                if (n > 1024)
                        return mp_perr(c, v, prefix, key, "at most 1024 scheduled Xids");
                free(f->xids);
                f->n_xids = 0;
                f->xids = n ? calloc(n, sizeof(*f->xids)) : NULL;
                if (n && !f->xids)
                        return gv_error_oom(c->err);
                for (size_t i = 0; i < n; i++) {
                        _cleanup_free_ char *ip = NULL;
                        if (asprintf(&ip, "%s%s%s[%zu]", prefix, *prefix ? "." : "", key, i) < 0)
                                return gv_error_oom(c->err);
                        yaml_node_t *item = mp_ynode(c, v->data.sequence.items.start[i]);
                        if ((r = mp_want_map(c, item, ip, "")) < 0)
                                return r;
                        gv_mock_xid_t *x = &f->xids[f->n_xids++];
                        yaml_node_t *g = mp_map_get(c, item, "gpu"), *xid = mp_map_get(c, item, "xid"),
                                    *after = mp_map_get(c, item, "after_ms");
                        if (!g)
                                return mp_perr(c, item, ip, "gpu", "required field missing");
                        if (!xid)
                                return mp_perr(c, item, ip, "xid", "required field missing");
                        if ((r = mp_get_uint(c, g, ip, "gpu", GV_MOCK_MAX_GPUS - 1, &x->gpu)) < 0 ||
                            (r = mp_get_ull(c, xid, ip, "xid", UINT_MAX, &x->xid)) < 0 ||
                            (after && (r = mp_get_uint(c, after, ip, "after_ms", 86400000u, &x->after_ms)) < 0))
                                return r;
                        for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top; p++) {
                                const char *k = mp_scalar(mp_ynode(c, p->key));
                                if (!k || !(KEY_IS(k, "gpu") || KEY_IS(k, "xid") || KEY_IS(k, "after_ms")))
                                        return mp_perr(c, mp_ynode(c, p->key), ip, k ? k : "", "unknown field");
                        }
                }
                return 0;
        }
        return mp_unknown_key(c, v, prefix, key);
}

static int top_cb(pctx_t *c, const char *prefix, const char *key, yaml_node_t *v, void *data)
{
        top_t *t = data;
        gv_mock_profile_t *p = t->p;
        if (KEY_IS(key, "schema") || KEY_IS(key, "version") || KEY_IS(key, "description"))
                return 0;
        if (KEY_IS(key, "name"))
                return mp_get_str(c, v, prefix, key, &p->name);
        if (KEY_IS(key, "node_name"))
                return mp_get_str(c, v, prefix, key, &p->node_name);
        if (KEY_IS(key, "driver") || KEY_IS(key, "system")) {
                t->driver = v;
                int r = mp_want_map(c, v, prefix, key);
                return r < 0 ? r : mp_for_each_pair(c, v, key, driver_cb, p);
        }
        if (KEY_IS(key, "gpu_count")) {
                t->gpu_count_node = v;
                /* Decimal digits only, so that -1 and 99999999999999999999 get the same plain answer. */
                const char *s = mp_scalar(v);
                size_t len = s ? strlen(s) : 0;
                unsigned long n = 0;
                bool ok = len > 0 && len <= 3 && strspn(s, "0123456789") == len &&
                          v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                if (ok)
                        n = strtoul(s, NULL, 10);
                if (!ok || n < GV_MOCK_MIN_GPUS || n > GV_MOCK_MAX_GPUS) {
                        if (s && len <= 32)
                                return mp_perr(c, v, prefix, key, "%s: expected %u to %u", s, GV_MOCK_MIN_GPUS,
                                               GV_MOCK_MAX_GPUS);
                        return mp_perr(c, v, prefix, key, "expected %u to %u", GV_MOCK_MIN_GPUS, GV_MOCK_MAX_GPUS);
                }
                t->gpu_count = (unsigned) n;
                return 0;
        }
        if (KEY_IS(key, "gpu") || KEY_IS(key, "device_defaults")) {
                t->gpu = v;
                return mp_want_map(c, v, prefix, key);
        }
        if (KEY_IS(key, "devices")) {
                t->devices = v;
                return mp_want_seq(c, v, prefix, key);
        }
        if (KEY_IS(key, "faults")) {
                int r = mp_want_map(c, v, prefix, key);
                return r < 0 ? r : mp_for_each_pair(c, v, key, faults_cb, &p->faults);
        }
        if (KEY_IS(key, "nvlink") && c->lenient) {
                t->nvlink = v;
                return 0;
        }
        return mp_unknown_key(c, v, prefix, key);
}

static int check_required(pctx_t *c, top_t *t)
{
        gv_mock_profile_t *p = t->p;
        const char *drv = c->lenient ? "system" : "driver";
        if (!t->driver)
                return mp_perr(c, t->root, drv, "", "required field missing");
        if (!p->driver_version)
                return mp_perr(c, t->driver, drv, c->lenient ? "driver_version" : "version", "required field missing");
        if (!p->cuda_driver_version) {
                if (c->lenient) {
                        yaml_node_t *ma = mp_map_get(c, t->driver, "cuda_version_major");
                        yaml_node_t *mi = mp_map_get(c, t->driver, "cuda_version_minor");
                        unsigned a = 0, b = 0;
                        if (ma && mi && mp_get_uint(c, ma, drv, "cuda_version_major", 99, &a) >= 0 &&
                            mp_get_uint(c, mi, drv, "cuda_version_minor", 99, &b) >= 0) {
                                p->cuda_driver_version = (int) (a * 1000 + b * 10);
                                return 0;
                        }
                        gv_error_free(c->err);
                }
                return mp_perr(c, t->driver, drv, "cuda_version", "required field missing");
        }
        return 0;
}

/*
 * GPU @i's serial when the profile gives one serial for every GPU (@base, from
 * `gpu:`): a numeric base counts up (1650000000000, ...001, ...002), any other
 * base gets "-<i>" appended; GPU 0 keeps the base.  Deterministic and distinct
 * per index.  Replaces d->serial; leaves it alone when @base is NULL.
 * Returns 0 or -ENOMEM.
 */
int mp_derive_serial(gv_mock_device_t *d, const char *base, unsigned i)
{
        if (!base || i == 0)
                return 0;
        size_t len = strlen(base);
        char *s = NULL;
        int r;
        errno = 0;
        unsigned long long v = len > 0 && len <= 19 && strspn(base, "0123456789") == len ? strtoull(base, NULL, 10)
                                                                                           : ULLONG_MAX;
        if (v <= ULLONG_MAX - GV_MOCK_MAX_GPUS)
                r = asprintf(&s, "%0*llu", (int) len, v + i);
        else
                r = asprintf(&s, "%s-%u", base, i);
        if (r < 0)
                return -ENOMEM;
        replace_str(&d->serial, s);
        return 0;
}

/* The GPU template (`gpu` or `device_defaults`) that every GPU starts from: p->device_template. */
static int parse_template(pctx_t *c, const top_t *t, const char *gname, gv_mock_profile_t *p)
{
        gv_mock_device_t *tmpl = calloc(1, sizeof(*tmpl));
        if (!tmpl)
                return gv_error_oom(c->err);
        p->device_template = tmpl;
        mp_device_defaults(tmpl);
        int r;
        if (t->nvlink) {
                yaml_node_t *l = mp_map_get(c, t->nvlink, "links_per_gpu");
                if (l && (r = mp_get_uint(c, l, "nvlink", "links_per_gpu", NVML_NVLINK_MAX_LINKS, &tmpl->nvlink_count)) < 0)
                        return r;
        }
        r = mp_for_each_pair(c, t->gpu, gname, mp_device_cb, tmpl);
        if (r < 0)
                return r;
        if (!tmpl->name)
                return mp_perr(c, t->gpu, gname, "name", "required field missing");
        if (!tmpl->memory_total_mib)
                return mp_perr(c, t->gpu, gname, c->lenient ? "memory.total_bytes" : "memory_mib", "required field missing");
        if (tmpl->uuid || tmpl->pci_bus_id)
                return mp_perr(c, t->gpu, gname, tmpl->uuid ? "uuid" : "pci_bus_id",
                               "set per GPU under devices, not for every GPU");
        if (!mp_map_get(c, t->gpu, "mig") && !tmpl->n_mig_profiles) {
                tmpl->mig_capable = false;
                tmpl->unsupported |= GV_MOCK_FIELD_MIG;
        }
        if (!mp_map_get(c, t->gpu, "fabric") && tmpl->fabric_state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED)
                tmpl->unsupported |= GV_MOCK_FIELD_FABRIC;
        if (!mp_map_get(c, t->gpu, "nvlink") && !tmpl->nvlink_count)
                tmpl->unsupported |= GV_MOCK_FIELD_NVLINK;
        return 0;
}

/*
 * The GPU index of each of the @n_over entries of `devices` (idx[i]; an
 * entry's `index`, else its position), each at most once; *max_index is one
 * past the highest.
 */
static int index_devices(pctx_t *c, const top_t *t, size_t n_over, unsigned *idx, unsigned *max_index)
{
        uint64_t seen = 0;
        int r;
        *max_index = 0;
        for (size_t i = 0; i < n_over; i++) {
                yaml_node_t *item = mp_ynode(c, t->devices->data.sequence.items.start[i]);
                _cleanup_free_ char *ip = NULL;
                if (asprintf(&ip, "devices[%zu]", i) < 0)
                        return gv_error_oom(c->err);
                if ((r = mp_want_map(c, item, ip, "")) < 0)
                        return r;
                yaml_node_t *in = mp_map_get(c, item, "index");
                idx[i] = (unsigned) i;
                if (in && (r = mp_get_uint(c, in, ip, "index", GV_MOCK_MAX_GPUS - 1, &idx[i])) < 0)
                        return r;
                if (seen & (1ULL << idx[i]))
                        return mp_perr(c, in ? in : item, ip, "index", "GPU %u is listed twice", idx[i]);
                seen |= 1ULL << idx[i];
                if (idx[i] + 1 > *max_index)
                        *max_index = idx[i] + 1;
        }
        return 0;
}

/* p->devices: @count copies of the template, then the @n_over `devices` entries applied to GPU idx[i]. */
static int make_devices(pctx_t *c, const top_t *t, gv_mock_profile_t *p, unsigned count, const unsigned *idx,
                        size_t n_over)
{
        const gv_mock_device_t *tmpl = p->device_template;
        /* count >= 1 (max_index >= 1 whenever devices lists any); the analyser cannot see that across files */
        p->devices = calloc(count ? count : 1, sizeof(*p->devices));
        if (!p->devices)
                return gv_error_oom(c->err);
        for (unsigned i = 0; i < count; i++) {
                if (mp_device_copy(&p->devices[i], tmpl) < 0)
                        return gv_error_oom(c->err);
                p->device_count = i + 1;
                p->devices[i].index = i;
                if (mp_derive_serial(&p->devices[i], tmpl->serial, i) < 0) /* devices[] may set its own */
                        return gv_error_oom(c->err);
        }
        for (size_t i = 0; i < n_over; i++) {
                yaml_node_t *item = mp_ynode(c, t->devices->data.sequence.items.start[i]);
                _cleanup_free_ char *ip = NULL;
                if (asprintf(&ip, "devices[%zu]", i) < 0)
                        return gv_error_oom(c->err);
                int r = mp_for_each_pair(c, item, ip, mp_device_cb, &p->devices[idx[i]]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_root(pctx_t *c, gv_mock_profile_t *p)
{
        yaml_node_t *root = yaml_document_get_root_node(c->doc);
        if (!root)
                return gv_error_set(c->err, EINVAL, GV_REASON_CONFIG, "%s:1: (root): empty document", c->source);
        if (root->type != YAML_MAPPING_NODE)
                return mp_perr(c, root, "(root)", "", "expected a mapping");
        c->lenient = mp_map_get(c, root, "system") || mp_map_get(c, root, "device_defaults");
        top_t t = { .p = p, .root = root };
        int r = mp_for_each_pair(c, root, "", top_cb, &t);
        if (r < 0)
                return r;
        r = check_required(c, &t);
        if (r < 0)
                return r;
        const char *gname = c->lenient ? "device_defaults" : "gpu";
        if (!t.gpu)
                return mp_perr(c, root, gname, "", "required field missing");
        if ((r = parse_template(c, &t, gname, p)) < 0)
                return r;

        /* device count and per-device overrides */
        size_t n_over = t.devices ? (size_t) (t.devices->data.sequence.items.top - t.devices->data.sequence.items.start)
                                  : 0;
        unsigned idx[GV_MOCK_MAX_GPUS] = { 0 };
        unsigned max_index = 0;
        if (n_over > GV_MOCK_MAX_GPUS)
                return mp_perr(c, t.devices, "devices", "", "more than %u entries", GV_MOCK_MAX_GPUS);
        if ((r = index_devices(c, &t, n_over, idx, &max_index)) < 0)
                return r;
        unsigned count = t.gpu_count ? t.gpu_count : (n_over ? max_index : 8);
        if (t.gpu_count && max_index > t.gpu_count)
                return mp_perr(c, t.gpu_count_node, "gpu_count", "", "%u, but devices lists GPU %u", t.gpu_count,
                               max_index - 1);
        return make_devices(c, &t, p, count, idx, n_over);
}

/* A key of a mapping, for sorting: its text and the node that holds it. */
typedef struct keyref {
        const char *text;
        const yaml_node_t *node;
} keyref_t;

static int keyref_cmp(const void *a, const void *b)
{
        const keyref_t *x = a, *y = b;
        int c = strcmp(x->text, y->text);
        if (c)
                return c;
        size_t i = x->node->start_mark.index, j = y->node->start_mark.index;
        return i < j ? -1 : i > j ? 1 : 0;
}

/*
 * Refuses a mapping that names a key twice (YAML and JSON alike: libyaml
 * keeps both pairs, and the parsers would take the last one silently).
 * Every mapping of the document is checked once, sorted, so a large mapping
 * costs n log n.  Error: "<source>:<line>: <key>: duplicate key (first on
 * line N)" naming the second occurrence; -EINVAL, GV_REASON_CONFIG.
 */
static int check_duplicate_keys(const char *source, yaml_document_t *doc, gv_error_t **err)
{
        for (yaml_node_t *n = doc->nodes.start; n < doc->nodes.top; n++) {
                if (n->type != YAML_MAPPING_NODE)
                        continue;
                size_t count = (size_t) (n->data.mapping.pairs.top - n->data.mapping.pairs.start);
                if (count < 2)
                        continue;
                _cleanup_free_ keyref_t *keys = calloc(count, sizeof(*keys));
                if (!keys)
                        return gv_error_oom(err);
                size_t k = 0;
                for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
                        const yaml_node_t *kn = yaml_document_get_node(doc, p->key);
                        if (kn && kn->type == YAML_SCALAR_NODE)
                                keys[k++] = (keyref_t){ (const char *) kn->data.scalar.value, kn };
                }
                if (k > 1)
                        qsort(keys, k, sizeof(*keys), keyref_cmp);
                for (size_t i = 1; i < k; i++)
                        if (strcmp(keys[i - 1].text, keys[i].text) == 0) {
                                _cleanup_free_ char *shown = NULL;
                                size_t len = strlen(keys[i].text);
                                /* keys are shown as given; control characters as '?' */
                                shown = strndup(keys[i].text, len > 64 ? 64 : len);
                                if (!shown)
                                        return gv_error_oom(err);
                                for (char *q = shown; *q; q++)
                                        if ((unsigned char) *q < 0x20 || *q == 0x7f)
                                                *q = '?';
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s:%lu: %s%s: duplicate key (first on line %lu); give each key once",
                                                    source, mp_yline(keys[i].node), shown, len > 64 ? "..." : "",
                                                    mp_yline(keys[i - 1].node));
                        }
        }
        return 0;
}

int mp_load_text(const char *source, const char *text, size_t len, gv_mock_profile_t **out, gv_error_t **err)
{
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!yaml_parser_initialize(&parser))
                return gv_error_oom(err);
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, len);
        if (!yaml_parser_load(&parser, &doc)) {
                int r = gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s:%lu: (yaml): %s%s%s", source,
                                     (unsigned long) (parser.problem_mark.line + 1),
                                     parser.problem ? parser.problem : "syntax error",
                                     parser.context ? " " : "", parser.context ? parser.context : "");
                yaml_parser_delete(&parser);
                return r;
        }
        yaml_parser_delete(&parser);
        int dr = check_duplicate_keys(source, &doc, err);
        if (dr < 0) {
                yaml_document_delete(&doc);
                return dr;
        }

        _cleanup_(gv_mock_profile_free) gv_mock_profile_t *p = calloc(1, sizeof(*p));
        if (!p) {
                yaml_document_delete(&doc);
                return gv_error_oom(err);
        }
        p->source = strdup(source);
        pctx_t c = { .source = source, .doc = &doc, .err = err };
        int r = p->source ? parse_root(&c, p) : gv_error_oom(c.err);
        yaml_document_delete(&doc);
        if (r < 0)
                return r;
        *out = TAKE_PTR(p);
        return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
        size_t a = strlen(s), b = strlen(suffix);
        return a > b && strcmp(s + a - b, suffix) == 0;
}

bool gv_mock_profile_is_path(const char *name)
{
        return name && (strchr(name, '/') || ends_with(name, ".yaml") || ends_with(name, ".yml") ||
                        ends_with(name, ".json"));
}

int gv_mock_profile_load_memory(const char *source, const char *text, size_t len, gv_mock_profile_t **out,
                                gv_error_t **err)
{
        if (!text || !out)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_mock_profile_load_memory: NULL argument");
        return mp_load_text(source ? source : "(memory)", text, len, out, err);
}

int gv_mock_profile_load_file(const char *path, gv_mock_profile_t **out, gv_error_t **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if (!path || !out)
                return gv_error_set(err, EINVAL, GV_REASON_INTERNAL, "gv_mock_profile_load_file: NULL argument");
        int r = gv_read_file_at(AT_FDCWD, path, false, MAX_PROFILE_BYTES, &text, &len, err);
        if (r < 0)
                return gv_error_prefix(err, "mock NVML profile");
        return mp_load_text(path, text, len, out, err);
}
