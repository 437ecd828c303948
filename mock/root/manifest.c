/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one manifest module of mock driver roots:
 * <root>/.gpu-validator-mock.json read, written and probed (docs/mock-driver-root.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "base/cleanup-json.h"
#include "gv-version.h"
#include "mock/root/root-internal.h"

#define MANIFEST_KIND "gpu-validator-mock-root"
#define MANIFEST_VERSION 1
#define MAX_MANIFEST_BYTES ((size_t) 4 * 1024 * 1024)

static const char *const etype_names[] = { "dir", "file", "link", "char" };

void mr_manifest_free(manifest_t *m)
{
        free(m->profile);
        free(m->profile_source);
        free(m->node_name);
        free(m->driver_version);
        free(m->cdi_spec);
        free(m->previous_cdi_spec);
        free(m->workload);
        mr_elist_free(&m->entries);
        *m = (manifest_t){ 0 };
}

static char *jstr(json_object *o, const char *key)
{
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return strdup(json_object_get_string(v));
}

/* The "entries" array of @o into @l; -EINVAL naming @path when an entry lacks a path or a known type. */
static int read_entries(json_object *o, const char *path, elist_t *l, gv_error_t **err)
{
        json_object *v;
        if (!json_object_object_get_ex(o, "entries", &v) || !json_object_is_type(v, json_type_array))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: entries: expected an array", path);
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                _cleanup_free_ char *p = jstr(e, "path");
                _cleanup_free_ char *t = jstr(e, "type");
                int type = -1;
                for (int k = 0; t && k < (int) GV_ARRAY_SIZE(etype_names); k++)
                        if (strcmp(t, etype_names[k]) == 0)
                                type = k;
                if (!p || !*p || type < 0)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: entries[%zu]: expected path and type",
                                            path, i);
                if (mr_elist_add(l, p, (etype_t) type) < 0)
                        return gv_error_oom(err);
        }
        return 0;
}

/* The fields of the manifest object @o (read from @path) into @m; -EINVAL (CONFIG) naming the bad one. */
static int manifest_from_json(json_object *o, const char *path, manifest_t *m, gv_error_t **err)
{
        json_object *v;
        _cleanup_free_ char *kind = jstr(o, "kind");
        _cleanup_free_ char *nodes = jstr(o, "device_nodes");
        _cleanup_free_ char *state = jstr(o, "state");
        if (!kind || strcmp(kind, MANIFEST_KIND) != 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: kind: expected \"%s\"", path, MANIFEST_KIND);
        m->profile = jstr(o, "profile");
        m->profile_source = jstr(o, "profile_source");
        m->node_name = jstr(o, "node_name");
        m->driver_version = jstr(o, "driver_version");
        m->cdi_spec = jstr(o, "cdi_spec");
        m->previous_cdi_spec = jstr(o, "previous_cdi_spec");
        m->workload = jstr(o, "workload");
        if (state && strcmp(state, "installing") != 0 && strcmp(state, "complete") != 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: state: expected \"installing\" or "
                                    "\"complete\"", path);
        m->installing = state && strcmp(state, "installing") == 0;
        if (json_object_object_get_ex(o, "gpu_count", &v))
                m->gpu_count = (unsigned) json_object_get_int(v);
        if (json_object_object_get_ex(o, "root_created", &v))
                m->root_created = json_object_get_boolean(v);
        if (json_object_object_get_ex(o, "dev_char_links", &v))
                m->dev_char_links = json_object_get_boolean(v);
        m->device_nodes = nodes && strcmp(nodes, "char") == 0    ? GV_MOCK_NODES_CHAR
                          : nodes && strcmp(nodes, "files") == 0 ? GV_MOCK_NODES_FILES
                                                                 : GV_MOCK_NODES_DEFAULT;
        return read_entries(o, path, &m->entries, err);
}

/* Read <root>/.gpu-validator-mock.json.  -ENOENT when absent; -EINVAL (CONFIG) when malformed. */
int mr_manifest_read(const char *root, manifest_t *out, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_path_join(root, GV_MOCK_MANIFEST_NAME);
        if (!path)
                return gv_error_oom(err);
        _cleanup_free_ char *text = NULL;
        int r = gv_read_file_at(AT_FDCWD, path, true, MAX_MANIFEST_BYTES, &text, NULL, err);
        if (r < 0)
                return r;
        _cleanup_json_ json_object *o = json_tokener_parse(text);
        if (!o)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: not valid JSON", path);
        manifest_t m = { 0 };
        if ((r = manifest_from_json(o, path, &m, err)) < 0) {
                mr_manifest_free(&m);
                return r;
        }
        *out = m;
        return 0;
}

/* Write @m as <root>/.gpu-validator-mock.json, atomically. */
int mr_manifest_write(const char *root, const manifest_t *m, gv_error_t **err)
{
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o)
                return gv_error_oom(err);
        json_object_object_add(o, "kind", json_object_new_string(MANIFEST_KIND));
        json_object_object_add(o, "version", json_object_new_int(MANIFEST_VERSION));
        json_object_object_add(o, "created_by", json_object_new_string("gpu-validator " GV_VERSION));
        json_object_object_add(o, "state", json_object_new_string(m->installing ? "installing" : "complete"));
        json_object_object_add(o, "profile", json_object_new_string(m->profile ? m->profile : ""));
        json_object_object_add(o, "profile_source", json_object_new_string(m->profile_source ? m->profile_source : ""));
        json_object_object_add(o, "gpu_count", json_object_new_int((int) m->gpu_count));
        json_object_object_add(o, "node_name", json_object_new_string(m->node_name ? m->node_name : ""));
        json_object_object_add(o, "driver_version", json_object_new_string(m->driver_version ? m->driver_version : ""));
        json_object_object_add(o, "device_nodes", json_object_new_string(gv_mock_nodes_name(m->device_nodes)));
        json_object_object_add(o, "root_created", json_object_new_boolean(m->root_created));
        if (m->dev_char_links)
                json_object_object_add(o, "dev_char_links", json_object_new_boolean(true));
        json_object_object_add(o, "cdi_spec", json_object_new_string(m->cdi_spec ? m->cdi_spec : ""));
        if (m->previous_cdi_spec && *m->previous_cdi_spec)
                json_object_object_add(o, "previous_cdi_spec", json_object_new_string(m->previous_cdi_spec));
        if (m->workload && *m->workload) /* only for `mock install --workload` and its flags */
                json_object_object_add(o, "workload", json_object_new_string(m->workload));
        json_object *arr = json_object_new_array();
        for (size_t i = 0; i < m->entries.n; i++) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "path", json_object_new_string(m->entries.v[i].path));
                json_object_object_add(e, "type", json_object_new_string(etype_names[m->entries.v[i].type]));
                json_object_array_add(arr, e);
        }
        json_object_object_add(o, "entries", arr);
        const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                   JSON_C_TO_STRING_NOSLASHESCAPE);
        _cleanup_free_ char *data = NULL;
        if (asprintf(&data, "%s\n", text) < 0)
                return gv_error_oom(err);
        _cleanup_close_ int dfd = open(root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        if (dfd < 0)
                return mr_io_error(err, errno, "open", root);
        return gv_atomic_write_at(dfd, GV_MOCK_MANIFEST_NAME, data, strlen(data), 0644, err);
}

bool gv_mock_root_detect(const char *root, gv_mock_root_info_t *info)
{
        *info = (gv_mock_root_info_t){ 0 };
        if (!root)
                return false;
        _cleanup_(mr_manifest_free) manifest_t m = { 0 };
        _cleanup_error_ gv_error_t *err = NULL;
        if (mr_manifest_read(root, &m, &err) < 0)
                return false;
        if (m.installing) /* an install that was stopped: not a usable root until install finishes */
                return false;
        info->is_mock = true;
        info->device_nodes = m.device_nodes;
        info->gpu_count = m.gpu_count;
        snprintf(info->driver_version, sizeof(info->driver_version), "%s", m.driver_version ? m.driver_version : "");
        snprintf(info->profile, sizeof(info->profile), "%s", m.profile ? m.profile : "");
        return true;
}

/* The driver component's reader (gv_mock_manifest_probe()): at most this much, as it has always read. */
#define MAX_PROBE_BYTES ((size_t) 64 * 1024)

/* Parse @len bytes of @text as one JSON object (*out, a new reference); -EINVAL naming @path otherwise. */
static int parse_object(const char *path, const char *text, size_t len, json_object **out, gv_error_t **err)
{
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return gv_error_oom(err);
        _cleanup_json_ json_object *obj = json_tokener_parse_ex(tok, text, (int) len);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        json_tokener_free(tok);
        if (!obj || jerr != json_tokener_success || !json_object_is_type(obj, json_type_object))
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s: not a JSON object (%s)", path,
                                    json_tokener_error_desc(jerr));
        *out = TAKE_PTR(obj);
        return 0;
}

int gv_mock_manifest_probe(const char *root, bool *files_ok, bool *dev_char_links, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_path_join(root, GV_MOCK_MANIFEST_NAME);
        if (!path)
                return gv_error_oom(err);
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_error_ gv_error_t *e = NULL;
        int r = gv_read_file_at(AT_FDCWD, path, true, MAX_PROBE_BYTES, &text, &len, &e);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return gv_error_set(err, r, GV_REASON_CONFIG, "mock manifest: %s", e ? e->msg : strerror(-r));
        _cleanup_json_ json_object *obj = NULL;
        if ((r = parse_object(path, text, len, &obj, err)) < 0)
                return r;
        json_object *dn = NULL;
        bool files = false;
        if (json_object_object_get_ex(obj, "device_nodes", &dn)) {
                const char *v = json_object_is_type(dn, json_type_string) ? json_object_get_string(dn) : NULL;
                files = v && strcmp(v, "files") == 0;
                if (!files && (!v || strcmp(v, "char") != 0))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s: \"device_nodes\" must be \"char\" or \"files\"", path);
        }
        json_object *dl = NULL;
        *files_ok = files;
        *dev_char_links = json_object_object_get_ex(obj, "dev_char_links", &dl) &&
                          json_object_is_type(dl, json_type_boolean) && json_object_get_boolean(dl);
        return 1;
}
